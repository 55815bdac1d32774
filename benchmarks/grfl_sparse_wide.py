"""GrFL on wide sparse input (issue 24, item 1): fit time against its anchor.

``InfiniteFeatureClassifier()`` at defaults against its suite anchor,
``Nystroem(n_components=200)`` + ``LinearSVC()`` after a ``StandardScaler``
(``with_mean=False``: the sparse input stays sparse, as in
``benchmarks/grfl_master.py``; the suite's own split densifies its few
sparse sets, which a text set of thousands of words does not afford), on

* ``reuters``: the LaSVM Reuters text task (``../shared/datasets/reuters``,
  7,770 training rows x 8,315 words, the official test file), read as
  ``benchmarks/fgm_equal_k.py`` reads it;
* ``wide``: a synthetic ``--rows`` x ``--cols`` sparse matrix of word counts
  (about ``--density`` of the entries stored) of two topics, the label the
  topic (:func:`wide`), with 1,000 test rows.

``--estimator regressor``: ``InfiniteFeatureRegressor()`` at defaults (its folds
choose ``lambda_p``) against ``Nystroem(n_components=200)`` + ``RidgeCV()`` after the
same scaler, ``y`` the label as a number, scored by R^2.

Times are medians of ``--repeats`` fits (and of each fitted GrFL model's first
prediction of the test rows, and of their sums) in CPU seconds of this process, one
BLAS thread (``OMP_NUM_THREADS`` is pinned to 1 before NumPy loads); the
machine is shared and CPU time does not count others' work.  The system part of
fit plus first prediction is shown apart: on a virtual machine whose freed memory
returns to its host, the first touch of fresh memory (the completed features'
array) costs the process system time that varies from run to run.  Prints a table
with the ratio GrFL / anchor and both test accuracies.

Usage::

    python benchmarks/grfl_sparse_wide.py [--repeats 3] [--sets reuters,wide]
        [--rows 200] [--cols 20000] [--density 0.005] [--estimator regressor]
"""

import os

os.environ["OMP_NUM_THREADS"] = "1"  # (before NumPy: its BLAS reads it at load)

import argparse  # noqa: E402
import resource
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from sklearn.kernel_approximation import Nystroem  # noqa: E402
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table, reuters_split  # noqa: E402

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor  # noqa: E402
from kernlearn.datasets import DatasetNotFoundError  # noqa: E402

def reuters():
    """Reuters' official split, CSR (``_common.reuters_split``)."""
    return reuters_split()


def wide(rows=200, cols=20000, density=0.005, n_test=1000, seed=0):
    """Sparse word counts of two topics (``rows`` training, ``n_test`` test rows).

    Each row holds ``density * cols`` words: 70% drawn uniformly from the
    whole vocabulary, 30% from 200 words of its class's topic (built from
    coordinates: ``sp.random`` draws from all positions), the counts summed.
    """
    rng = np.random.default_rng(seed)
    n = rows + n_test
    words = max(1, int(round(density * cols)))
    topic_words = max(1, int(round(0.3 * words)))
    y = np.where(rng.random(n) < 0.5, 1, -1)
    topics = np.stack([rng.choice(cols, 200, replace=False) for _ in range(2)])
    background = rng.integers(0, cols, (n, words - topic_words))
    topical = topics[(y > 0).astype(int)[:, None], rng.integers(0, 200, (n, topic_words))]
    cols_of = np.hstack([background, topical])
    X = sp.csr_matrix((np.ones(cols_of.size), (np.repeat(np.arange(n), words),
                                               cols_of.ravel())), shape=(n, cols))
    X.sum_duplicates()
    return X[:rows], y[:rows], X[rows:], y[rows:]


def anchor():
    """The suite's anchor of ``InfiniteFeatureClassifier``, kept sparse."""
    return make_pipeline(StandardScaler(with_mean=False),
                         Nystroem(n_components=200, random_state=0), LinearSVC(random_state=0))


def regression_anchor():
    """The suite's anchor of ``InfiniteFeatureRegressor``, kept sparse."""
    return make_pipeline(StandardScaler(with_mean=False),
                         Nystroem(n_components=200, random_state=0), RidgeCV())


def _system_seconds():
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime


def median_fit(make, X, y, repeats, X_test=None):
    """The last fitted model, the median CPU seconds of ``repeats`` fits, of the
    fitted models' first ``decision_function(X_test)`` (``nan`` without ``X_test``;
    GrFL on sparse rows in their span completes its features there), of fit plus
    first prediction, and the median system seconds of the latter."""
    times, first, total, system, est = [], [], [], [], None
    for _ in range(repeats):
        est = None  # (the former model's memory freed before the fit, not during it)
        t0, s0 = time.process_time(), _system_seconds()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (LinearSVC's convergence warnings)
            est = make().fit(X, y)
        times.append(time.process_time() - t0)
        if X_test is not None:
            t1 = time.process_time()
            getattr(est, "decision_function", est.predict)(X_test)
            first.append(time.process_time() - t1)
        total.append(time.process_time() - t0)
        system.append(_system_seconds() - s0)
    med = (lambda v: float(np.median(v)) if v else np.nan)
    return est, med(times), med(first), med(total if first else []), med(system)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sets", default="reuters,wide")
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--cols", type=int, default=20000)
    ap.add_argument("--density", type=float, default=0.005)
    ap.add_argument("--estimator", choices=("classifier", "regressor"), default="classifier")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.sets.split(",")) - {"reuters", "wide"})
    if unknown:
        ap.error(f"--sets: unknown {unknown}; choose from reuters, wide")
    regress = args.estimator == "regressor"
    grfl = InfiniteFeatureRegressor if regress else InfiniteFeatureClassifier
    loaders = {"reuters": reuters,
               "wide": lambda: wide(args.rows, args.cols, args.density)}
    rows = []
    with threadpool_limits(1):
        # (compiled code loaded once, so that the fits are timed in steady state)
        Xw, yw, _, _ = wide(60, 200, 0.05)
        grfl(max_features=3, random_state=0).fit(Xw, yw)
        for name in args.sets.split(","):
            try:
                Xtr, ytr, Xte, yte = loaders[name]()
            except DatasetNotFoundError as exc:  # absent data: say so, run the rest
                print(f"skip {name}: {exc}", flush=True)
                continue
            if regress:  # (the label as a number)
                ytr, yte = ytr.astype(float), yte.astype(float)
            label = f"{name} {Xtr.shape[0]} x {Xtr.shape[1]} ({Xtr.nnz / Xtr.shape[0]:.0f}/row)"
            a, t_a, *_ = median_fit(regression_anchor if regress else anchor, Xtr, ytr,
                                    args.repeats)
            g, t_g, t_p, t_gp, s_gp = median_fit(
                lambda: grfl(random_state=0), Xtr, ytr, args.repeats, Xte)
            rows.append((label, f"{t_a:.3f}", f"{t_g:.2f}", f"{t_p:.3f}", f"{t_gp:.3f}",
                         f"{s_gp:.3f}", f"{t_g / t_a:.1f}", f"{a.score(Xte, yte):.4f}",
                         f"{g.score(Xte, yte):.4f}", len(g.features_)))
            print(rows[-1], flush=True)
    print(markdown_table(["set", "anchor s", "GrFL s", "GrFL first predict s",
                          "GrFL fit + first s", "of it system s", "GrFL / anchor",
                          "anchor R^2" if regress else "anchor acc",
                          "GrFL R^2" if regress else "GrFL acc", "features"], rows))


if __name__ == "__main__":
    main()
