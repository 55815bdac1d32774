"""What FGM's optimality check after a Newton master costs, with and without sharing.

After a Newton master that says converged, FGM checks the restricted optimality
condition at the dual point of the master's margins; the next pricing needs the
same dual point.  This script fits FGM at its defaults with the check's dual
point handed to the next pricing and the blocks' Frobenius norms kept per
block (``shared``, the library's code) against the same fits with both
recomputed (``recompute``: the check's results discarded after each call, as
before), in one process, alternating, and prints median CPU times, their ratio
and whether the models are equal.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/fgm_check_cost37.py [--repeats 7]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.datasets import load_digits, make_classification, make_regression  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import kernlearn.methods.fgm as fgm  # noqa: E402
from kernlearn import FGMClassifier, FGMRegressor  # noqa: E402

_CHECK = fgm._master_not_optimal


def _recomputing(rows, st, fit_intercept, rtol=0.0):
    """The check, its dual point and block norms thrown away (the code before)."""
    out = _CHECK(rows, st, fit_intercept, rtol)
    st.dual, st.block_norms = None, []
    return out


def _cases():
    out = []
    for n, p in [(100, 10), (400, 8), (1000, 20)]:
        X, y = make_classification(n_samples=n, n_features=p, n_informative=p // 2,
                                   random_state=0)
        out.append((f"FGMClassifier {n}x{p}", FGMClassifier, StandardScaler().fit_transform(X),
                    y))
        X, y = make_regression(n_samples=n, n_features=p, noise=1.0, random_state=0)
        out.append((f"FGMRegressor {n}x{p}", FGMRegressor, StandardScaler().fit_transform(X),
                    y))
    X, y = load_digits(return_X_y=True)
    out.append(("FGMClassifier digits (10 classes, shared)", FGMClassifier, X, y))
    X, y = make_classification(n_samples=2000, n_features=200, n_informative=40,
                               random_state=1)
    out.append(("FGMClassifier 2000x200 B=2", lambda: FGMClassifier(B=2), X, y))
    return out


def _fit(make, X, y, mode):
    fgm._master_not_optimal = _CHECK if mode == "shared" else _recomputing
    try:
        t0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = make().fit(X, y)
        return time.process_time() - t0, m
    finally:
        fgm._master_not_optimal = _CHECK


def main(argv=None):
    """Run the comparison and print one row per case."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    print("| case | rounds | shared ms | recompute ms | shared / recompute | models equal |")
    print("|---|---|---|---|---|---|")
    for name, make, X, y in _cases():
        times = {"shared": [], "recompute": []}
        models = {}
        for mode in ("shared", "recompute"):  # warm-up
            models[mode] = _fit(make, X, y, mode)[1]
        for _ in range(args.repeats):
            for mode in ("shared", "recompute"):
                times[mode].append(_fit(make, X, y, mode)[0])
        a, b = (1e3 * statistics.median(times[k]) for k in ("shared", "recompute"))
        equal = np.array_equal(models["shared"].coef_, models["recompute"].coef_) and \
            np.array_equal(models["shared"].intercept_, models["recompute"].intercept_)
        rounds = len(models["shared"].history_["objective"])
        print(f"| {name} | {rounds} | {a:.3g} | {b:.3g} | {a / b:.3f} | {equal} |")


if __name__ == "__main__":
    main()
