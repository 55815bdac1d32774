"""Prediction-cost benchmark: CPU time per ``predict`` call against the anchors.

A grid search scores every candidate on its validation fold and a served model
predicts one or a few rows per call, so both pay any fixed per-call cost of
``predict`` / ``decision_function`` / ``predict_proba`` (input checks,
re-building arrays, dispatch).  This script fits each kernlearn estimator at its
defaults (plus a fixed ``random_state``) and the one-line scikit-learn anchor of
``benchmarks/small_fits.py`` on the same ``--train`` (1000 x 20 by default)
data, binary and 5-class for the classifiers, and prints the median CPU
milliseconds per call of:

* ``predict`` on 1, 10, 1,000 and 100,000 rows (``--rows``);
* ``predict_proba`` on 1 row of the same estimator fitted with
  ``probability=True`` (classifiers); the anchor is its own ``predict_proba``
  where it has one (``SVC(probability=True)``), else
  ``CalibratedClassifierCV(anchor, ensemble=False)``, the line a user would
  type for Platt probabilities of a ``LinearSVC`` or ``RidgeClassifier``
  pipeline (one model and one sigmoid per class, as ours and ``SVC``).

Protocol: one thread (``OMP_NUM_THREADS=1`` and friends, set before numpy
loads); each estimator and its anchor are timed in a round of their own: one
warm-up call each, then the two sides in turn, ``max(3, --calls // rows)``
calls each (at least 3, and ``--calls`` = 2000 calls of one row by default);
the median ``time.process_time`` of a call is reported (one thread, so CPU time
is the call's own time).  Test rows (100,000, or more if ``--rows`` asks) come
from the generator of the training data, standardised with the training
columns' statistics.

``--sparse DENSITY`` gives every estimator and anchor the same rows as
scipy CSR matrices, each entry kept with probability ``DENSITY`` (the others
zero), for the estimators that take sparse ``X`` (FGM, GrFL
``InfiniteFeature*``).

``--save-outputs FILE`` stores every fitted estimator's ``predict``,
``decision_function`` and ``predict_proba`` on 1,000 test rows as ``.npz``;
``--check-outputs FILE`` compares the current ones against such a file
(exactly, and reports the largest relative difference) and exits non-zero on a
difference, so a speed change can be shown not to change results.

Usage::

    python benchmarks/predict_cost.py [--estimators FGMClassifier,...]
        [--train 1000x20] [--rows 1,10,1000,100000] [--calls 2000] [--sparse 0.3]
        [--save-outputs before.npz | --check-outputs before.npz]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.calibration import CalibratedClassifierCV  # noqa: E402
from sklearn.datasets import make_classification, make_regression  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402
from small_fits import PAIRS, chosen_estimators, ours  # noqa: E402

N_TEST = 100_000
HEADER = ["estimator", "classes", "call", "rows", "ours ms", "anchor", "anchor ms", "ratio"]


def make_data(task, n, d, n_test, n_classes=2, seed=0, density=None):
    """Train ``(X, y)`` and ``n_test`` test rows, standardised with the train statistics
    (with ``density``: CSR matrices, each entry kept with that probability)."""
    if task == "clf":
        X, y = make_classification(
            n_samples=n + n_test, n_features=d, n_informative=max(2, d // 2),
            n_redundant=0, n_classes=n_classes, random_state=seed,
        )
    else:
        X, y = make_regression(
            n_samples=n + n_test, n_features=d, n_informative=max(2, d // 2),
            noise=1.0, random_state=seed,
        )
    mean, std = X[:n].mean(0), X[:n].std(0)
    X = (X - mean) / std
    if density is not None:
        X = sp.csr_matrix(X * (np.random.default_rng(seed).random(X.shape) < density))
    return X[:n], y[:n], X[n:]


def proba_anchor(anchor):
    """The anchor's own probability model if it has one, else its Platt calibration."""
    est = clone(anchor)
    if "probability" in est.get_params():
        return est.set_params(probability=True)
    return CalibratedClassifierCV(est, ensemble=False)


def median_calls(methods, X, calls):
    """Median CPU seconds per call of each bound method on ``X``, called in turn."""
    for method in methods:
        method(X)
    times = [[] for _ in methods]
    for _ in range(calls):
        for k, method in enumerate(methods):
            t0 = time.process_time()
            method(X)
            times[k].append(time.process_time() - t0)
    return [statistics.median(t) for t in times]


def outputs(est, X):
    """``predict``, ``decision_function`` and ``predict_proba`` of ``est`` where it has them."""
    out = {"predict": np.asarray(est.predict(X))}
    for method in ("decision_function", "predict_proba"):
        if hasattr(est, method):
            out[method] = np.asarray(getattr(est, method)(X))
    return out


def compare(value, ref):
    """Largest relative difference of two output arrays (inf on a shape or label change)."""
    if value.shape != ref.shape or value.dtype.kind != ref.dtype.kind:
        return np.inf
    if value.dtype.kind not in "fc":
        return 0.0 if np.array_equal(value, ref) else np.inf
    scale = np.maximum(np.abs(ref), 1e-300)
    return float(np.max(np.abs(value - ref) / scale)) if value.size else 0.0


def main(argv=None):
    """Run the benchmark; return the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--estimators", default=",".join(PAIRS))
    parser.add_argument("--train", default="1000x20")
    parser.add_argument("--rows", default="1,10,1000,100000")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--sparse", type=float, default=None, metavar="DENSITY")
    parser.add_argument("--save-outputs")
    parser.add_argument("--check-outputs")
    args = parser.parse_args(argv)
    if args.calls < 1:
        parser.error("--calls must be at least 1")
    n, d = (int(v) for v in args.train.split("x"))
    row_counts = [int(r) for r in args.rows.split(",")]
    names = chosen_estimators(parser, args.estimators)
    reference = dict(np.load(args.check_outputs)) if args.check_outputs else None
    saved, rows, mismatches = {}, [], []
    warnings.simplefilter("ignore")  # unconverged anchors would flood the table

    def emit(row):
        rows.append(row)
        print(markdown_table(HEADER, [row]).splitlines()[-1], flush=True)

    for name in names:
        task, label, anchor = PAIRS[name]
        for n_classes in ([2, 5] if task == "clf" else [None]):
            # as many test rows whatever --rows asks: the same data on every run
            X, y, X_test = make_data(task, n, d, max(row_counts + [N_TEST]), n_classes or 2,
                                      density=args.sparse)
            est, ref = ours(name).fit(X, y), anchor().fit(X, y)
            for m in row_counts:
                # one round per estimator and batch size, the two sides in turn
                t_ours, t_ref = median_calls([est.predict, ref.predict], X_test[:m],
                                             max(3, args.calls // m))
                emit([name, n_classes or "-", "predict", m, 1e3 * t_ours, label,
                      1e3 * t_ref, t_ours / t_ref])
            fitted = {"": est}
            if task == "clf":
                est_p = ours(name, probability=True).fit(X, y)
                ref_p = proba_anchor(anchor()).fit(X, y)
                t_ours, t_ref = median_calls([est_p.predict_proba, ref_p.predict_proba],
                                             X_test[:1], args.calls)
                emit([name, n_classes, "predict_proba", 1, 1e3 * t_ours,
                      type(ref_p).__name__,
                      1e3 * t_ref, t_ours / t_ref])
                fitted["probability"] = est_p
            for variant, model in fitted.items():
                for key, value in outputs(model, X_test[:1000]).items():
                    tag = f"{name}/{n_classes or 0}/{variant}/{key}"
                    saved[tag] = value
                    if reference is not None:
                        diff = compare(value, reference[tag])
                        if diff != 0.0:
                            mismatches.append(f"{tag} (max rel. diff {diff:.2g})")
    print()
    print(markdown_table(HEADER, rows))
    if args.save_outputs:
        np.savez(args.save_outputs, **saved)
    if reference is not None:
        print("outputs differ from the reference:" if mismatches
              else "outputs bit-identical to the reference", *mismatches, sep="\n")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
