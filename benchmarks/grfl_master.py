"""GrFL's restricted master: proximal Newton against ADMM (issue: fit time).

1. fits at defaults on ``make_classification`` data of 100 x 10, 1000 x 20 and
   5000 x 36 with each master, next to ``LinearSVC``;
2. ``ijcnn1`` and ``a9a`` (official splits): GrFL at defaults (its default
   budget: one feature per input column or per 10 rows, within 100-200; the
   table's last column is the count learned) with each master against
   ``Nystroem(n_components=100)`` +
   ``LinearSVC`` after a ``StandardScaler`` (``with_mean=False`` on sparse
   a9a): training time, its ratio to the anchor, test accuracy, and the
   masters' total iterations.

Times are medians of ``--repeats`` runs, in CPU seconds of this process with
one BLAS thread (the machine is shared; wall-clock counts others' work).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/grfl_master.py [--repeats 3]
        [--parts small,real] [--datasets ijcnn1,a9a] [--solvers admm,newton]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.kernel_approximation import Nystroem
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402

from kernlearn import InfiniteFeatureClassifier  # noqa: E402
from kernlearn.datasets import (
    DatasetNotFoundError, available_datasets, load_dataset)


def _median_fit(make, X, y, repeats):
    """Fitted model and median CPU seconds of ``repeats`` fits.

    CPU time of this process (one BLAS thread) rather than wall-clock: the
    machine is shared, and CPU time does not count other processes' work.
    """
    times, est = [], None
    for _ in range(repeats):
        t0 = time.process_time()
        est = make().fit(X, y)
        times.append(time.process_time() - t0)
    return est, float(np.median(times))


def run_small(args):
    rows = []
    for n, d in [(100, 10), (1000, 20), (5000, 36)]:
        X, y = make_classification(n, d, n_informative=min(d, 8), random_state=0)
        _, t_svc = _median_fit(LinearSVC, X, y, max(args.repeats, 5))
        for solver in args.solvers.split(","):
            est, t = _median_fit(
                lambda: InfiniteFeatureClassifier(solver=solver, random_state=0), X, y,
                args.repeats)
            rows.append((f"{n} x {d}", solver, f"{t:.3f}", f"{t / t_svc:.0f}",
                         int(np.sum(est.history_["master_iter"])), len(est.features_),
                         f"{est.objective_:.4f}"))
            print(rows[-1], flush=True)
    return markdown_table(["data", "master", "fit s", "/ LinearSVC", "master iters",
                           "features", "objective"], rows)


def run_real(args):
    rows = []
    for name in args.datasets.split(","):
        try:
            d = load_dataset(name)
        except DatasetNotFoundError as exc:
            print(f"skip {name}: {exc}")
            continue
        Xtr, ytr, Xte, yte = d.data, d.target, d.data_test, d.target_test
        if sp.issparse(Xtr):
            Xte = sp.csr_matrix(Xte)[:, : Xtr.shape[1]] if Xte.shape[1] >= Xtr.shape[1] \
                else sp.hstack([Xte, sp.csr_matrix((Xte.shape[0], Xtr.shape[1] - Xte.shape[1]))]).tocsr()
        anchor, t_a = _median_fit(lambda: make_pipeline(
            StandardScaler(with_mean=not sp.issparse(Xtr)),
            Nystroem(n_components=100, random_state=0), LinearSVC()), Xtr, ytr, args.repeats)
        acc_a = anchor.score(Xte, yte)
        rows.append((name, "Nystroem(100)+LinearSVC", f"{t_a:.2f}", "1.0", f"{acc_a:.4f}",
                     "-", "-"))
        print(rows[-1], flush=True)
        for solver in args.solvers.split(","):
            est, t = _median_fit(
                lambda: InfiniteFeatureClassifier(solver=solver, random_state=0), Xtr, ytr,
                args.repeats)
            rows.append((name, f"GrFL ({solver})", f"{t:.2f}", f"{t / t_a:.1f}",
                         f"{est.score(Xte, yte):.4f}",
                         int(np.sum(est.history_["master_iter"])), len(est.features_)))
            print(rows[-1], flush=True)
    return markdown_table(["data", "method", "fit s", "/ anchor", "test acc",
                           "master iters", "features"], rows)


def _warm_up(solvers):
    """Load the compiled kernels once, so that fits are timed in steady state."""
    X, y = make_classification(300, 5, random_state=0)
    for solver in solvers.split(","):
        InfiniteFeatureClassifier(solver=solver, max_features=3, random_state=0).fit(X, y)
        InfiniteFeatureClassifier(solver=solver, max_features=3, random_state=0).fit(
            sp.csr_matrix(X), y)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--parts", default="small,real")
    ap.add_argument("--datasets", default="ijcnn1,a9a")
    ap.add_argument("--solvers", default="admm,newton")
    args = ap.parse_args()
    present = available_datasets()
    for name in set(args.datasets.split(",")) - set(present):
        try:  # (an unknown name fails at once; an absent set is skipped in run_real)
            load_dataset(name)
        except ValueError as exc:
            ap.error(f"--datasets: {exc}")
        except DatasetNotFoundError:
            pass
    with threadpool_limits(1):
        _warm_up(args.solvers)
        if "small" in args.parts:
            print(run_small(args))
        if "real" in args.parts:
            print(run_real(args))


if __name__ == "__main__":
    main()
