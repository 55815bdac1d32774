"""Small-fit benchmark: the fixed per-fit cost of every estimator against its anchor.

A grid search pays an estimator's fixed per-fit cost (validation, engine
set-up, progress and warning machinery, history bookkeeping) on every
candidate, so on small data that cost decides the time.  This script fits each
kernlearn estimator at its defaults (plus a fixed ``random_state``) next to the
one-line scikit-learn estimator a user would type instead, on synthetic dense
standardised data of a few sizes, and prints the median fit times and their
ratio:

===============================  ==================================
ours (defaults)                  anchor
===============================  ==================================
``FGMClassifier()``              ``LinearSVC()``
``FGMRegressor()``               ``Lasso()``, ``LassoCV()``
``PNormMKLClassifier()``         ``SVC()``
``InfiniteFeatureClassifier()``  ``Nystroem(200) + LinearSVC()``
``InfiniteFeatureRegressor()``   ``Nystroem(200) + Ridge()``
``LowRankKernelClassifier()``    ``Nystroem(100) + RidgeClassifier()``
``LowRankKernelRegressor()``     ``Nystroem(100) + Ridge()``
===============================  ==================================

Protocol: one thread (``OMP_NUM_THREADS=1`` and friends, set before numpy
loads); each side is fitted once to warm up (compiled code loaded, caches
filled), then ``--repeats`` times (7 by default), the two sides in turn; the
median process CPU time of those fits is reported (``--clock wall`` for wall
time: on a shared machine it also counts other people's work).  An estimator
that chooses its own regularisation (``FGMRegressor``'s default ``C="auto"``)
is also timed against the cross-validated anchor (``LassoCV()``), in a round
of its own, on a second row.  Classification data: ``make_classification`` (binary, half
the columns informative); regression data: ``make_regression``; both with a
fixed seed and standardised columns.  Settings a user may choose for speed
(``EXTRA_SETTINGS``: the GrFL estimators' ``n_paths=1``) get rows of their own.

``--save-predictions FILE`` stores every estimator's test predictions (and
``decision_function`` where there is one) as ``.npz``; ``--check-predictions
FILE`` compares the current ones against such a file at ``rtol=1e-10`` and
exits non-zero on a difference, so a speed change can be shown not to change
results.

Usage::

    python benchmarks/small_fits.py [--sizes 100x10,1000x20,5000x36]
        [--estimators FGMClassifier,...] [--repeats 7] [--clock cpu|wall]
        [--save-predictions before.npz | --check-predictions before.npz]
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
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.kernel_approximation import Nystroem  # noqa: E402
from sklearn.linear_model import Lasso, LassoCV, Ridge, RidgeClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.svm import SVC, LinearSVC  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402

import kernlearn  # noqa: E402

# estimator -> (task, anchor label, anchor factory)
PAIRS = {
    "FGMClassifier": ("clf", "LinearSVC()", lambda: LinearSVC()),
    "FGMRegressor": ("reg", "Lasso()", lambda: Lasso()),
    "PNormMKLClassifier": ("clf", "SVC()", lambda: SVC()),
    "InfiniteFeatureClassifier": (
        "clf",
        "Nystroem(200)+LinearSVC()",
        lambda: make_pipeline(Nystroem(n_components=200, random_state=0), LinearSVC()),
    ),
    "InfiniteFeatureRegressor": (
        "reg",
        "Nystroem(200)+Ridge()",
        lambda: make_pipeline(Nystroem(n_components=200, random_state=0), Ridge()),
    ),
    "LowRankKernelClassifier": (
        "clf",
        "Nystroem(100)+RidgeClassifier()",
        lambda: make_pipeline(Nystroem(n_components=100, random_state=0), RidgeClassifier()),
    ),
    "LowRankKernelRegressor": (
        "reg",
        "Nystroem(100)+Ridge()",
        lambda: make_pipeline(Nystroem(n_components=100, random_state=0), Ridge()),
    ),
}


# estimator -> further (anchor label, anchor factory) pairs, each timed in its own round
EXTRA_ANCHORS = {
    # C="auto" cross-validates: the anchor that also chooses its penalty
    "FGMRegressor": [("LassoCV()", lambda: LassoCV())],
}


# estimator -> non-default settings also timed (against the first anchor), each
# in its own round: n_paths=1 is the one-path fit a grid search can ask for
EXTRA_SETTINGS = {
    "InfiniteFeatureClassifier": [{"n_paths": 1}],
    "InfiniteFeatureRegressor": [{"n_paths": 1}],
}


# process CPU time by default: on a shared machine wall time also counts
# other people's work (one thread, so CPU time is the fit's own time)
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def make_data(task, n, d, seed=0):
    """Standardised synthetic train data ``(X, y)`` and a test matrix."""
    if task == "clf":
        X, y = make_classification(
            n_samples=n + 50, n_features=d, n_informative=max(2, d // 2),
            n_redundant=0, random_state=seed,
        )
    else:
        X, y = make_regression(
            n_samples=n + 50, n_features=d, n_informative=max(2, d // 2),
            noise=1.0, random_state=seed,
        )
    X = (X - X.mean(0)) / X.std(0)
    return X[:n], y[:n], X[n:]


def ours(name, **params):
    """The kernlearn estimator at its defaults (but ``params``), seeded where it takes a seed."""
    est = getattr(kernlearn, name)(**params)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    return est


def median_fits(factories, X, y, repeats, clock=time.process_time):
    """Median seconds of ``repeats`` fits of each factory's estimator; the last fits.

    After one warm-up fit each, the estimators are fitted in turn, so that a
    change of load on a shared machine hits both sides alike.
    """
    for factory in factories:
        factory().fit(X, y)
    times = [[] for _ in factories]
    last = [None] * len(factories)
    for _ in range(repeats):
        for k, factory in enumerate(factories):
            est = factory()
            t0 = clock()
            est.fit(X, y)
            times[k].append(clock() - t0)
            last[k] = est
    return [statistics.median(t) for t in times], last


def outputs(est, X_test):
    """Predictions (and decision values where defined) of a fitted estimator."""
    out = {"predict": np.asarray(est.predict(X_test), dtype=float)}
    if hasattr(est, "decision_function"):
        out["decision"] = np.asarray(est.decision_function(X_test), dtype=float)
    return out


def chosen_estimators(parser, text):
    """The names of comma list ``text``, each a key of :data:`PAIRS` (else a
    usage error naming the unknown ones)."""
    names = text.split(",")
    unknown = sorted(set(names) - set(PAIRS))
    if unknown:
        parser.error(f"unknown estimators {unknown}; choose from {list(PAIRS)}")
    return names


def parse_sizes(parser, text):
    """The ``(rows, columns)`` pairs of comma list ``text`` such as
    ``"100x10,1000x20"`` (else a usage error)."""
    try:
        sizes = [tuple(int(v) for v in s.split("x")) for s in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or any(len(s) != 2 or min(s) < 1 for s in sizes):
        parser.error(f"--sizes {text!r}: expected rows x columns, e.g. 100x10,1000x20")
    return sizes


def main(argv=None):
    """Run the benchmark; return the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100x10,1000x20,5000x36")
    parser.add_argument("--estimators", default=",".join(PAIRS))
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    parser.add_argument("--save-predictions")
    parser.add_argument("--check-predictions")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    sizes = parse_sizes(parser, args.sizes)
    names = chosen_estimators(parser, args.estimators)
    reference = dict(np.load(args.check_predictions)) if args.check_predictions else None
    saved, rows, mismatches = {}, [], []
    warnings.simplefilter("ignore")  # unconverged anchors would flood the table
    for name in names:
        task, label, anchor = PAIRS[name]
        anchors = [(label, anchor)] + EXTRA_ANCHORS.get(name, [])
        for n, d in sizes:
            X, y, X_test = make_data(task, n, d)
            for lab, factory in anchors:
                # one round per anchor: a slow anchor fitted between our fits
                # would evict the caches our next fit then pays to refill
                (t_ours, t_anchor), (est, _) = median_fits(
                    [lambda: ours(name), factory], X, y, args.repeats,
                    CLOCKS[args.clock])
                rows.append([name, f"{n}x{d}", 1e3 * t_ours, lab, 1e3 * t_anchor,
                             t_ours / t_anchor])
                print(markdown_table(["estimator", "data", "ours ms", "anchor",
                                      "anchor ms", "ratio"], rows[-1:]).splitlines()[-1],
                      flush=True)
            for params in EXTRA_SETTINGS.get(name, []):
                (t_ours, t_anchor), _ = median_fits(
                    [lambda: ours(name, **params), anchor], X, y, args.repeats,
                    CLOCKS[args.clock])
                setting = ", ".join(f"{k}={v!r}" for k, v in params.items())
                rows.append([f"{name}({setting})", f"{n}x{d}", 1e3 * t_ours, label,
                             1e3 * t_anchor, t_ours / t_anchor])
                print(markdown_table(["estimator", "data", "ours ms", "anchor",
                                      "anchor ms", "ratio"], rows[-1:]).splitlines()[-1],
                      flush=True)
            for key, value in outputs(est, X_test).items():
                tag = f"{name}/{n}x{d}/{key}"
                saved[tag] = value
                if reference is None:
                    continue
                if tag not in reference:  # another size or estimator: nothing to compare
                    mismatches.append(f"{tag} (not in the reference)")
                elif not np.allclose(value, reference[tag], rtol=1e-10, atol=1e-13):
                    mismatches.append(tag)
    print()
    print(markdown_table(["estimator", "data", "ours ms", "anchor", "anchor ms", "ratio"],
                         rows))
    if args.save_predictions:
        np.savez(args.save_predictions, **saved)
    if reference is not None:
        print("predictions differ from the reference:" if mismatches
              else "predictions equal to the reference (rtol 1e-10)", *mismatches)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
