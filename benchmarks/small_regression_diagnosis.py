"""Why the two kernel regressors trail Nystroem + RidgeCV on small noisy sets.

Issue 21: on regression sets of ~110-280 training rows ``LowRankKernelRegressor``
(SLKL) and ``InfiniteFeatureRegressor`` (GrFL) reach up to 1.2-1.4x the test
MSE of their ``benchmarks/suite.py`` baselines (``StandardScaler`` +
``Nystroem(n_components=100 / 200)`` + ``RidgeCV()``).  This script takes the
suite's split of each set and seed and measures, as MSE ratios to the pair's
baseline, what each suspected cause would be worth:

SLKL (baseline ``Nystroem(100)``)
    ``default``; ``nu oracle``: the value of the default's ``nu`` path with the
    lowest test MSE (each value fitted alone): the best any rule choosing
    ``nu`` on that path could do; ``nu 5-fold``: the value an honest 5-fold
    cross-validation keeps (``mu`` learned again on every fold, unlike the
    leave-one-out error at fixed ``mu`` of ``nu="auto"``); ``uniform mu``:
    the same candidate columns at equal weights, ridge on them with
    ``RidgeCV``'s leave-one-out ``alpha`` (the kernel not learned; the
    columns' kernel ``sum_m c_m c_m'`` as in eq. 3); ``Nystroem 2 widths``:
    Nystroem features (whitened by ``K_mm^-1/2``) at the same two widths
    ``1/d`` and ``0.1/d``, 96 components each, + ``RidgeCV``.
GrFL (baseline ``Nystroem(200)``)
    ``default``; ``level x0.5`` / ``x2``: ``lambda_p`` fixed at half / twice the
    level the folds chose; ``draws``: the default at two other
    ``random_state`` values (range); ``fixed RFF``: 100 random Fourier features
    at each of the default family's three widths + ``RidgeCV`` (features not
    learned).
Both
    ``w/o worst row``: the ratio without the test row that adds most to the
    estimator's excess squared error, with that row's largest standardised
    input ``|z|`` (a far-out row alone can make a miss).

Measured in the fourteenth pass, on that pass's models (``--sets`` default,
seeds 0-2; BENCHMARKS.md "Small noisy regression sets: why SLKL and GrFL
trail"; the models have changed since, so today's ratios differ: run the
script for them): the ``nu`` chosen by leave-one-out is about as good as
honest 5-fold CV (which also misses tips and servo at seed 2), the oracle
leaves hitters at 1.07-1.13x, uniform weights over the same columns do about as
well as SLKL (hitters 1.01-1.22x), the whitened Nystroem features of the same
widths win there (0.88-1.11x); GrFL's chosen level is near the best of its
neighbours, and its misses move with the random draw (autompg seed 0: 1.17x,
other draws 0.99-1.02x).

Usage::

    python benchmarks/small_regression_diagnosis.py [--sets unseen:hitters,autompg]
        [--seeds 0,1,2] [--out diag.json] [--md diag.md]

Cost: under a minute of CPU for the default six sets at three seeds.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.kernel_approximation import Nystroem, RBFSampler  # noqa: E402
from sklearn.linear_model import RidgeCV  # noqa: E402
from sklearn.metrics.pairwise import rbf_kernel  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402
from sklearn.pipeline import make_pipeline, make_union  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table, parse_seeds  # noqa: E402
import suite  # noqa: E402

from kernlearn import InfiniteFeatureRegressor, LowRankKernelRegressor  # noqa: E402

DEFAULT_SETS = ("unseen:hitters,unseen:engel,unseen:tips,unseen:star98,"
                "autompg,servo")
#: ``RidgeCV`` alphas of the reference fits (wider than its default three)
ALPHAS = np.logspace(-6, 4, 41)


def mse(model, X, y):
    """Test mean squared error of a fitted ``model``."""
    return float(np.mean((y - model.predict(X)) ** 2))


def worst_row(base, ours, X_train, X_test, y_test):
    """Ratio of the test MSEs without the row of largest excess error, and its |z|."""
    eb = (y_test - base.predict(X_test)) ** 2
    eo = (y_test - ours.predict(X_test)) ** 2
    i = int(np.argmax(eo - eb))
    mean, sd = X_train.mean(0), X_train.std(0)
    z = np.abs((X_test[i] - mean) / np.where(sd > 0, sd, 1.0)).max()
    return float((eo.sum() - eo[i]) / (eb.sum() - eb[i])), float(z)


def slkl_rows(Xtr, ytr, Xte, yte, seed, base):
    """SLKL: default, nu oracle and 5-fold choice, uniform mu, Nystroem of 2 widths."""
    est = LowRankKernelRegressor(random_state=seed).fit(Xtr, ytr)
    nus = [float(v) for v in est.nu_path_["nu"]]
    test, cv = [], []
    for v in nus:  # each path value alone (cold), on the test rows and 5 folds
        test.append(mse(LowRankKernelRegressor(random_state=seed, nu=v).fit(Xtr, ytr),
                        Xte, yte))
        err = 0.0
        for tr, va in KFold(5, shuffle=True, random_state=seed).split(Xtr):
            m = LowRankKernelRegressor(random_state=seed, nu=v).fit(Xtr[tr], ytr[tr])
            err += mse(m, Xtr[va], ytr[va]) * len(va)
        cv.append(err)
    # the default's candidate columns (standardised inputs, column j at factor j % K)
    mean, sd = Xtr.mean(0), Xtr.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    Z, Zt = (Xtr - mean) / sd, (Xte - mean) / sd
    gamma, cols = est.kernel_params_["gamma"], est.column_indices_
    factors = [1.0, 0.1] + sorted(f for f in set(est.center_factors_) if f > 1.0)

    def columns(A):
        return np.hstack([rbf_kernel(A, Z[cols[k::len(factors)]], gamma=gamma * f)
                          for k, f in enumerate(factors)])

    uniform = RidgeCV(alphas=ALPHAS).fit(columns(Z), ytr)
    u = float(np.mean((yte - uniform.predict(columns(Zt))) ** 2))
    d, nc = Xtr.shape[1], min(96, len(ytr))
    nys = make_pipeline(StandardScaler(), make_union(
        Nystroem(gamma=1.0 / d, n_components=nc, random_state=seed),
        Nystroem(gamma=0.1 / d, n_components=nc, random_state=seed + 1)),
        RidgeCV(alphas=ALPHAS)).fit(Xtr, ytr)
    wo, z = worst_row(base, est, Xtr, Xte, yte)
    b = mse(base, Xte, yte)
    return {
        "default": mse(est, Xte, yte) / b, "nu": float(est.history_["nu"][-1]),
        "nu_path": nus, "nu_test": [t / b for t in test],
        "nu_oracle": min(test) / b, "nu_5fold": test[int(np.argmin(cv))] / b,
        "uniform_mu": u / b, "nystroem_2_widths": mse(nys, Xte, yte) / b,
        "without_worst_row": wo, "worst_row_z": z,
    }


def grfl_rows(Xtr, ytr, Xte, yte, seed, base):
    """GrFL: default, neighbouring levels, other draws, fixed random Fourier features."""
    b = mse(base, Xte, yte)
    est = InfiniteFeatureRegressor(random_state=seed).fit(Xtr, ytr)
    lam = float(est.lambda_p_)
    level = {f: mse(InfiniteFeatureRegressor(random_state=seed, lambda_p=lam * f)
                    .fit(Xtr, ytr), Xte, yte) / b for f in (0.5, 2.0)}
    draws = [mse(InfiniteFeatureRegressor(random_state=seed + k).fit(Xtr, ytr), Xte, yte) / b
             for k in (10, 20)]
    d = Xtr.shape[1]
    rff = make_pipeline(StandardScaler(), make_union(*[
        RBFSampler(gamma=f / d, n_components=100, random_state=seed + k)
        for k, f in enumerate((1 / 8, 1 / 2, 2))]), RidgeCV(alphas=ALPHAS)).fit(Xtr, ytr)
    wo, z = worst_row(base, est, Xtr, Xte, yte)
    return {
        "default": mse(est, Xte, yte) / b, "lambda_p": lam,
        "level_x0.5": level[0.5], "level_x2": level[2.0], "draws": draws,
        "fixed_rff": mse(rff, Xte, yte) / b,
        "without_worst_row": wo, "worst_row_z": z,
    }


def run(sets, seeds):
    """One record per set x seed: ``{"set", "seed", "n_train", "slkl", "grfl"}``."""
    out = []
    for spec in sets:
        try:  # absent data or package: the set is skipped with the reason, as in suite.py
            suite._cached_split(spec, "reg", 20000, seeds[0])
        except (suite.DatasetNotFoundError, suite.unseen_sets.MissingPackageError) as exc:
            print(f"skip {spec}: {exc}", flush=True)
            continue
        for seed in seeds:
            (Xtr, ytr, Xte, yte), task, _ = suite._cached_split(spec, "reg", 20000, seed)
            if task != "reg":
                raise ValueError(f"{spec} is not a regression set.")
            bases = {name: suite.make_baseline(name, seed).fit(Xtr, ytr)
                     for name in ("LowRankKernelRegressor", "InfiniteFeatureRegressor")}
            rec = {"set": spec, "seed": seed, "n_train": len(ytr),
                   "slkl": slkl_rows(Xtr, ytr, Xte, yte, seed,
                                     bases["LowRankKernelRegressor"]),
                   "grfl": grfl_rows(Xtr, ytr, Xte, yte, seed,
                                     bases["InfiniteFeatureRegressor"])}
            out.append(rec)
            print(f"{spec} seed {seed}: SLKL {rec['slkl']['default']:.3f}, "
                  f"GrFL {rec['grfl']['default']:.3f}", flush=True)
    return out


def tables(records):
    """Markdown tables of the SLKL and GrFL measurements."""
    f = "{:.3f}".format
    slkl = markdown_table(
        ["set", "seed", "n", "default", "nu", "nu oracle", "nu 5-fold", "uniform mu",
         "Nystroem 2 widths", "w/o worst row (|z|)"],
        [[r["set"], r["seed"], r["n_train"], f(s["default"]), f"{s['nu']:g}",
          f(s["nu_oracle"]), f(s["nu_5fold"]), f(s["uniform_mu"]),
          f(s["nystroem_2_widths"]), f"{f(s['without_worst_row'])} ({s['worst_row_z']:.1f})"]
         for r in records for s in [r["slkl"]]])
    grfl = markdown_table(
        ["set", "seed", "n", "default", "lambda_p", "level x0.5", "level x2", "draws",
         "fixed RFF", "w/o worst row (|z|)"],
        [[r["set"], r["seed"], r["n_train"], f(g["default"]), f"{g['lambda_p']:.2g}",
          f(g["level_x0.5"]), f(g["level_x2"]),
          f"{min(g['draws']):.2f}-{max(g['draws']):.2f}", f(g["fixed_rff"]),
          f"{f(g['without_worst_row'])} ({g['worst_row_z']:.1f})"]
         for r in records for g in [r["grfl"]]])
    return ("SLKL (MSE ratio to StandardScaler + Nystroem(100) + RidgeCV)\n\n" + slkl
            + "\n\nGrFL (MSE ratio to StandardScaler + Nystroem(200) + RidgeCV)\n\n" + grfl)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=DEFAULT_SETS,
                    help="comma-separated suite names, named:<name> or unseen:<name>")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--out", help="JSON file of every number")
    ap.add_argument("--md", help="markdown file of the tables")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")  # convergence notes of the reference fits
    records = run([s for s in args.sets.split(",") if s], parse_seeds(args.seeds))
    text = tables(records)
    print(text)
    if args.out:
        Path(args.out).write_text(json.dumps(records, indent=1))
    if args.md:
        Path(args.md).write_text(text + "\n")
    return records


if __name__ == "__main__":
    main()
