"""GrFL, OBSCURE and SLKL at DEFAULT settings against their one-line baselines.

What a user types first, on the raw (unscaled) shared data sets, in one run:

==============================  ===============================================
ours (defaults)                  one-line scikit-learn baseline (defaults)
==============================  ===============================================
``InfiniteFeatureClassifier()``  ``make_pipeline(Nystroem(n_components=200), LinearSVC())``
``InfiniteFeatureRegressor()``   ``make_pipeline(Nystroem(n_components=200), RidgeCV())``
``PNormMKLClassifier()``         ``SVC()``
``LowRankKernelRegressor()``     ``make_pipeline(Nystroem(n_components=256), RidgeCV())``
``LowRankKernelClassifier()``    ``make_pipeline(Nystroem(n_components=256), RidgeClassifierCV())``
==============================  ===============================================

(SLKL's default is M = min(n, 256) columns, hence 256 Nystroem components.)
Printed: test accuracy (classification) or test MSE (regression) of both,
training time of both (median of ``--repeats`` runs, prediction excluded) and
the time ratio ours / baseline.  The issue-11 goal is a ratio of at most 10.

Every fit runs with ``--blas-threads`` BLAS threads (default 1, as every
kernlearn master does internally), so that on a shared machine the baseline
is not slowed down (or sped up) by threading the other side does not use.

Training sets larger than ``--max-train`` are subsampled (seeded) so that one
run stays within minutes; the test sets are used whole (at most 20,000 rows).

Usage::

    python benchmarks/defaults_kernel.py [--repeats 3] [--max-train 10000]
        [--datasets ijcnn1,a9a,...] [--methods grfl,obscure,slkl] [--blas-threads 1]
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import RidgeClassifierCV, RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC, LinearSVC
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table, timed  # noqa: E402

from kernlearn import (  # noqa: E402
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
    PNormMKLClassifier,
)
from kernlearn.datasets import DatasetNotFoundError, load_dataset  # noqa: E402

warnings.filterwarnings("ignore", category=ConvergenceWarning)

CLASSIFICATION = ("ijcnn1", "a9a", "mfeat", "pendigits", "digits", "usps", "letter")
REGRESSION = ("abalone", "housing", "cal_housing")


def _split(n, n_test, seed=0):
    p = np.random.default_rng(seed).permutation(n)
    return p[n_test:], p[:n_test]


def load(name, max_train, max_test=20_000):
    """``(Xtr, ytr, Xte, yte, task)`` of a shared data set, raw features."""
    if name == "digits":
        X, y = load_digits(return_X_y=True)
        tr, te = _split(len(y), len(y) // 3)
        parts = X[tr], y[tr], X[te], y[te]
    elif name == "mfeat":
        data = load_dataset("mfeat")
        X, y = data.data, data.target
        tr, te = _split(len(y), len(y) // 2)
        parts = X[tr], y[tr], X[te], y[te]
    else:
        data = load_dataset(name)
        if "data_test" in data:
            parts = data.data, data.target, data.data_test, data.target_test
        else:
            X, y = data.data, data.target
            X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=float)
            tr, te = _split(len(y), len(y) // 4)
            parts = X[tr], y[tr], X[te], y[te]
    Xtr, ytr, Xte, yte = parts
    Xtr = Xtr.toarray() if hasattr(Xtr, "toarray") else np.asarray(Xtr, dtype=float)
    Xte = Xte.toarray() if hasattr(Xte, "toarray") else np.asarray(Xte, dtype=float)
    rng = np.random.default_rng(1)
    if len(ytr) > max_train:
        keep = np.sort(rng.choice(len(ytr), max_train, replace=False))
        Xtr, ytr = Xtr[keep], ytr[keep]
    if len(yte) > max_test:
        keep = np.sort(rng.choice(len(yte), max_test, replace=False))
        Xte, yte = Xte[keep], yte[keep]
    task = "regression" if name in REGRESSION else "classification"
    return Xtr, ytr, Xte, yte, task


def pairs(task, methods):
    """(name, ours, baseline name, baseline) for a task."""
    out = []
    if task == "classification":
        if "grfl" in methods:
            out.append(("InfiniteFeatureClassifier()", lambda: InfiniteFeatureClassifier(
                random_state=0), "Nystroem(200)+LinearSVC", lambda: make_pipeline(
                Nystroem(n_components=200, random_state=0), LinearSVC())))
        if "obscure" in methods:
            out.append(("PNormMKLClassifier()", lambda: PNormMKLClassifier(
                random_state=0), "SVC()", SVC))
        if "slkl" in methods:
            out.append(("LowRankKernelClassifier()", lambda: LowRankKernelClassifier(
                random_state=0), "Nystroem(256)+RidgeClassifierCV",
                lambda: make_pipeline(Nystroem(n_components=256, random_state=0),
                                      RidgeClassifierCV())))
    else:
        if "grfl" in methods:
            out.append(("InfiniteFeatureRegressor()", lambda: InfiniteFeatureRegressor(
                random_state=0), "Nystroem(200)+RidgeCV", lambda: make_pipeline(
                Nystroem(n_components=200, random_state=0), RidgeCV())))
        if "slkl" in methods:
            out.append(("LowRankKernelRegressor()", lambda: LowRankKernelRegressor(
                random_state=0), "Nystroem(256)+RidgeCV", lambda: make_pipeline(
                Nystroem(n_components=256, random_state=0), RidgeCV())))
    return out


def score(est, X, y, task):
    pred = est.predict(X)
    if task == "regression":
        return float(np.mean((pred - y) ** 2))
    return float(np.mean(pred == y))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-train", type=int, default=10_000)
    parser.add_argument("--datasets", default=",".join(CLASSIFICATION + REGRESSION))
    parser.add_argument("--methods", default="grfl,obscure,slkl")
    parser.add_argument("--blas-threads", type=int, default=1)
    args = parser.parse_args(argv)
    with threadpool_limits(args.blas_threads):
        run(args)


def run(args):
    """Fit and print every (data set, method) pair of ``args``."""
    methods = args.methods.split(",")
    rows = []
    for name in args.datasets.split(","):
        try:
            Xtr, ytr, Xte, yte, task = load(name, args.max_train)
        except DatasetNotFoundError as exc:
            print(f"skip {name}: {exc}")
            continue
        metric = "MSE" if task == "regression" else "acc"
        for ours_name, ours, base_name, base in pairs(task, methods):
            # baseline and ours alternate within one run, same data
            est_b, t_b = timed(lambda: base().fit(Xtr, ytr), args.repeats)
            est_o, t_o = timed(lambda: ours().fit(Xtr, ytr), args.repeats)
            s_o, s_b = score(est_o, Xte, yte, task), score(est_b, Xte, yte, task)
            row = [name, f"{Xtr.shape[0]}x{Xtr.shape[1]}", ours_name, base_name,
                   metric, s_o, s_b, t_o, t_b, t_o / t_b]
            rows.append(row)
            print(" | ".join(f"{v:.4g}" if isinstance(v, float) else str(v)
                             for v in row), flush=True)
    print()
    print(markdown_table(
        ["data", "n x d", "ours", "baseline", "metric", "ours", "baseline",
         "ours (s)", "baseline (s)", "time ratio"], rows))


if __name__ == "__main__":
    main()
