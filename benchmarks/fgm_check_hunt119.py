"""FGM's optimality check after Newton masters: false warnings, false "converged".

Part 1 (``warnings``): FGM at its defaults but for ``C`` (1e-3 to 1e12) on
suite sets (at most 300 rows), binary, multiclass shared and one-vs-rest,
with and without sample weights, and regressors with one and two outputs:
counts the fits that warn (``ConvergenceWarning``) and names each.

Part 2 (``huge``): tiny separable problems at ``C = 1e10`` against cvxpy's
hard-margin optimum over all ``B``-subsets of the columns (the ``C -> inf``
limit, an upper bound at any finite ``C``; positive row weights do not move
it): counts the fits that say converged above the bound.

Run: ``OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fgm_check_hunt119.py warnings|huge``.
"""

import itertools
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from kernlearn import FGMClassifier, FGMRegressor

SUITE = Path("/work/shared/datasets/suite")
CLF = ["iris", "diabetes", "kc1", "vehicle", "glass", "ionosphere", "yeast", "wdbc",
       "banknote-authentication", "heart-statlog"]
REG = ["wine", "breastcancer", "housing", "yacht", "servo", "machine", "autompg", "concreteslump"]
CS = [1e-3, 1e-1, 1.0, 1e3, 1e6, 1e9, 1e12]


def _suite(name, n=300, seed=0):
    df = pd.read_csv(SUITE / f"{name}.csv.xz")
    df = df.sample(min(n, len(df)), random_state=seed)
    return df.iloc[:, :-1].to_numpy(float), df["target"].to_numpy()


def _fit(est, X, y, **kw):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        est.fit(X, y, **kw)
    return est, [str(w.message) for w in seen if issubclass(w.category, ConvergenceWarning)]


def hunt_warnings():
    tried = warned = 0
    for name in CLF + REG:
        if not (SUITE / f"{name}.csv.xz").exists():
            print(f"skip {name}: not in {SUITE}")
            continue
        X, y = _suite(name)
        rng = np.random.default_rng(0)
        w = rng.uniform(0.2, 3.0, len(y))
        for C in CS:
            if name in REG:
                settings = [("reg", FGMRegressor(C=C), y),
                            ("reg-2d", FGMRegressor(C=C), np.column_stack([y, y ** 2 / (1 + np.abs(y))]))]
            else:
                settings = [("shared", FGMClassifier(C=C, multiclass="shared"), y),
                            ("ovr", FGMClassifier(C=C, multiclass="ovr"), y)]
            for label, est, target in settings:
                for sw in (None, w):
                    tried += 1
                    try:
                        m, said = _fit(est, X, target, sample_weight=sw)
                    except Exception as e:
                        print(f"ERROR {name} {label} C={C:g} weights={sw is not None}: {e!r}"[:200])
                        continue
                    if said:
                        warned += 1
                        print(f"WARN {name} {label} C={C:g} weights={sw is not None} "
                              f"converged_={m.converged_}: {said[0][:160]}")
    print(f"warnings: {tried} fits, {warned} warned")


def _blobs(seed, n, p, k):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = rng.integers(0, k, n)
    X[:, 0] += 3 * np.cos(2 * np.pi * y / k)
    X[:, 1] += 3 * np.sin(2 * np.pi * y / k)
    return X, y


def _hard_margin(X, y, B):
    import cvxpy as cp

    n, p = X.shape
    classes = np.unique(y)
    Y = np.where(y[:, None] == classes, 1.0, -1.0)
    if len(classes) == 2:
        Y = Y[:, 1:]
    subsets = list(itertools.combinations(range(p), B))
    V = [cp.Variable((B, Y.shape[1])) for _ in subsets]
    b = cp.Variable(Y.shape[1])
    M = sum(X[:, list(s)] @ v for s, v in zip(subsets, V)) + np.ones((n, 1)) @ b[None, :]
    prob = cp.Problem(cp.Minimize(sum(cp.norm(v, "fro") for v in V)), [cp.multiply(Y, M) >= 1])
    prob.solve(solver="CLARABEL")
    return 0.5 * prob.value ** 2 if prob.status == "optimal" else np.nan


def hunt_huge(n_seeds=12):
    tried = false_conv = warned = 0
    for seed in range(n_seeds):
        for k, B, p in ((2, 1, 4), (2, 2, 5), (3, 2, 5), (4, 1, 5)):
            X, y = _blobs(seed, 60, p, k)
            best = _hard_margin(X, y, B)
            if not np.isfinite(best):
                continue
            w = np.random.default_rng(seed).uniform(0.2, 3.0, len(y))
            for sw in (None, w):
                tried += 1
                m, said = _fit(FGMClassifier(C=1e10, B=B, multiclass="shared",
                                             standardize=False), X, y, sample_weight=sw)
                obj = m.history_["objective"][-1] / (1.0 if sw is None else 1.0)
                # (the objective at C = 1e10 is the penalty plus C times the hinge: the
                # penalty alone is at most the hard-margin optimum at the optimum)
                excess = obj / best - 1
                if said:
                    warned += 1
                if m.converged_ and excess > 1e-3:
                    false_conv += 1
                    print(f"FALSE CONVERGED seed {seed} k={k} B={B} weights={sw is not None}: "
                          f"{obj:.6g} against {best:.6g} ({excess:+.2e})")
                elif said or excess > 1e-3:
                    print(f"seed {seed} k={k} B={B} weights={sw is not None}: {obj:.6g} against "
                          f"{best:.6g} ({excess:+.2e}) converged_={m.converged_} "
                          f"{said[0][:120] if said else ''}")
    print(f"huge C: {tried} fits, {false_conv} said converged above the bound, {warned} warned")


if __name__ == "__main__":
    {"warnings": hunt_warnings, "huge": hunt_huge}[sys.argv[1]]()
