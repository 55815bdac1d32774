"""Prediction-memory benchmark: peak of one ``predict`` call on many rows.

Each estimator named by ``--estimators`` is fitted at its defaults (plus
``random_state=0``) on ``--train`` rows of the data of
``benchmarks/predict_cost.py`` (binary for the classifiers) and predicts
``--rows`` test rows once; the peak of the memory NumPy allocated during the
call (``tracemalloc``, above what was allocated before it: the test rows
themselves are not counted) is printed in MB with the call's CPU seconds.
Without blocks of rows a prediction builds an ``n_test x n_columns`` array
(kernel values against landmarks, learned random features), 200,000 x 1,000
doubles = 1.6 GB.  With blocks (``kernlearn.utils._row_blocks``), the scores are
compared with those of one block of all the rows (the path before blocks): the
largest difference relative to the largest score, and whether any predicted
label changes.

With ``--sparse DENSITY`` the training and test rows are CSR matrices
(``benchmarks/predict_cost.py``'s ``--sparse``), for the estimators that take
sparse ``X`` (FGM, GrFL ``InfiniteFeature*``, SLKL ``LowRankKernel*``).

The multitask estimators (``MultitaskMKLClassifier``, ``MultitaskMKLRegressor``)
are fitted on ``TASKS`` tasks (row ``i``'s is ``i % TASKS``) and predict
with the test rows' ``task_index`` (on a cluster, a Dask array of the rows'
chunks generated there).

With ``--dask CHUNK`` the test rows are a ``dask.array`` generated on a
``LocalCluster`` of one worker process (one thread; ``--workers``), in row chunks of
``CHUNK``, never in the client; the peak is that of the client during
``predict`` and the gathering of its result (``np.asarray``; a lazy result is
computed then), with the wall seconds, and the predictions are compared with
the in-memory ones of the same rows (computed into the client afterwards).
``--transform`` (GrFL's ``InfiniteFeature*``) measures ``transform`` instead of
``predict``, gathered as above and, first, reduced to the learned columns'
means on the cluster (``.mean(axis=0).compute()``, or NumPy's of a NumPy
output).  ``--workers`` sets the cluster's worker processes (one thread
each), ``--repeats`` the timed calls (medians of the wall seconds and of the
CPU seconds of the client, the workers and the scheduler; the peak is the
largest), ``--out-of-bounds`` the kernel regressors' setting.
``--no-malloc-trim`` starts the workers without Dask's ``MALLOC_TRIM_THRESHOLD_``
(its default environment of worker processes: with it set, glibc maps every
allocation above 128 KiB afresh, and a prediction's temporaries cost 5-8x
their time in the client).

Usage::

    python benchmarks/predict_memory.py [--estimators LowRankKernelRegressor,...]
        [--train 2000x20] [--rows 200000] [--sparse 0.3]
        [--dask 32768 [--transform] [--no-malloc-trim] [--workers 2] [--repeats 5]
         [--out-of-bounds raise]]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402
from grfl_dask import _cluster_cpu  # noqa: E402
from predict_cost import make_data  # noqa: E402
from small_fits import PAIRS, ours  # noqa: E402

DEFAULT = ("LowRankKernelRegressor,LowRankKernelClassifier,"
           "InfiniteFeatureRegressor,InfiniteFeatureClassifier")
#: Multitask estimators (not in ``PAIRS``: no anchor) and their kind of targets.
MULTITASK = {"MultitaskMKLClassifier": "clf", "MultitaskMKLRegressor": "reg"}
#: Tasks of a multitask model's rows: row ``i``'s is ``i % TASKS``.
TASKS = 4
HEADER = ["estimator", "train", "test rows", "learned columns", "peak MB", "CPU s",
          "vs one block: max rel. diff", "labels equal"]


def chosen_estimators(parser, text):
    """The names of comma list ``text``, each a key of :data:`PAIRS` or
    :data:`MULTITASK` (else a usage error naming the unknown ones)."""
    names = text.split(",")
    unknown = sorted(set(names) - set(PAIRS) - set(MULTITASK))
    if unknown:
        parser.error(f"unknown estimators {unknown}; choose from "
                     f"{list(PAIRS) + list(MULTITASK)}")
    return names


def task_of(name):
    """``PAIRS``'s task ("clf" or "reg") of an estimator, or the multitask one's."""
    return MULTITASK[name] if name in MULTITASK else PAIRS[name][0]


def tasks(name, rows):
    """``{"task_index": ...}`` of ``rows`` rows for a multitask estimator, else ``{}``."""
    return {"task_index": np.arange(rows) % TASKS} if name in MULTITASK else {}


def learned_columns(est):
    """Columns a predicted row is scored on: landmarks, kept features' columns,
    FGM's selected inputs, or the training rows (a multitask model's kernels: all
    of them)."""
    if hasattr(est, "centers_"):
        return len(est.centers_)
    if hasattr(est, "feature_scales_"):
        return est.feature_scales_.size
    if hasattr(est, "selected_features_"):
        return est.selected_features_.size
    return "-"


def against_one_block(est, X, **kw):
    """Largest score difference (relative to the largest score) and whether the
    labels are equal, blocks of rows against one block of all of them."""
    try:
        from kernlearn.utils import _row_blocks
    except ImportError:  # a kernlearn before blocks of rows
        return ["-", "-"]
    score = getattr(est, "decision_function", est.predict)
    blocked, labels = score(X, **kw), est.predict(X, **kw)
    default, _row_blocks.PREDICT_ROWS = _row_blocks.PREDICT_ROWS, X.shape[0]
    try:
        whole, whole_labels = score(X, **kw), est.predict(X, **kw)
    finally:
        _row_blocks.PREDICT_ROWS = default
    diff = np.max(np.abs(blocked - whole)) / max(np.max(np.abs(whole)), 1e-300)
    return [f"{diff:.2g}", bool(np.array_equal(labels, whole_labels))]


def main(argv=None):
    """Run the benchmark; return the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--estimators", default=DEFAULT)
    parser.add_argument("--train", default="2000x20")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--sparse", type=float, default=None, metavar="DENSITY")
    parser.add_argument("--dask", type=int, default=None, metavar="CHUNK",
                        help="test rows on a local Dask cluster, in row chunks of CHUNK")
    parser.add_argument("--transform", action="store_true",
                        help="with --dask: GrFL's transform (its learned columns), gathered "
                             "and reduced to their column means on the cluster")
    parser.add_argument("--no-malloc-trim", action="store_true",
                        help="with --dask: workers without Dask's MALLOC_TRIM_THRESHOLD_")
    parser.add_argument("--workers", type=int, default=1,
                        help="with --dask: worker processes of the cluster (1 thread each)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="with --dask: calls timed (medians of wall and CPU seconds)")
    parser.add_argument("--out-of-bounds", default=None,
                        help="with --dask: the kernel regressors' out_of_bounds setting")
    args = parser.parse_args(argv)
    n, d = (int(v) for v in args.train.split("x"))
    warnings.simplefilter("ignore")
    if args.dask:
        return dask_rows_run(parser, args, n, d)
    rows = []
    for name in chosen_estimators(parser, args.estimators):
        X, y, X_test = make_data(task_of(name), n, d, args.rows, density=args.sparse)
        est = ours(name).fit(X, y, **tasks(name, n))
        kw = tasks(name, args.rows)
        est.predict(X_test[:10], **tasks(name, 10))  # warm-up: lazy imports and compilations
        tracemalloc.start()
        t0 = time.process_time()
        est.predict(X_test, **kw)
        seconds = time.process_time() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows.append([name, args.train, args.rows, learned_columns(est), peak / 1e6, seconds,
                     *against_one_block(est, X_test, **kw)])
        print(markdown_table(HEADER, [rows[-1]]).splitlines()[-1], flush=True)
    print()
    print(markdown_table(HEADER, rows))
    return 0


DASK_HEADER = ["estimator", "train", "test rows (MiB)", "chunk rows", "lazy result",
               "client peak MB", "wall s", "CPU s", "equal to in memory"]


def dask_rows_run(parser, args, n, d):
    """``--dask``: the client's peak while predicting rows that live on a cluster."""
    import dask
    import dask.array as da
    import distributed

    rows = []
    header = DASK_HEADER + (["column means: client peak MB", "wall s"] if args.transform
                            else [])
    key = "distributed.nanny.pre-spawn-environ"
    environ = dict(dask.config.get(key))
    if args.no_malloc_trim:
        environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    with dask.config.set({key: environ}), distributed.LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True,
            dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        cpu = _cluster_cpu(client)
        for name in chosen_estimators(parser, args.estimators):
            X, y, _ = make_data(task_of(name), n, d, 0)
            est = ours(name)
            if args.out_of_bounds and "out_of_bounds" in est.get_params():
                est.set_params(out_of_bounds=args.out_of_bounds)
            est.fit(X, y, **tasks(name, n))
            Xd = da.random.default_rng(1).standard_normal((args.rows, d),
                                                          chunks=(args.dask, d))
            # a multitask model's task ids: a Dask array generated on the cluster too
            kw = ({"task_index": da.arange(args.rows, chunks=args.dask) % TASKS}
                  if name in MULTITASK else {})
            method = est.transform if args.transform else est.predict
            small = {k: v[:10] for k, v in kw.items()}
            np.asarray(method(Xd[:10], **small))  # warm-up: imports on both sides
            if args.transform:  # the learned columns' means: the output left on the cluster
                means = _client_peak(lambda: _column_means(method(Xd)))
            walls, cpus, peak = [], [], 0
            for _ in range(max(args.repeats, 1)):
                tracemalloc.start()
                t0, c0 = time.perf_counter(), cpu()
                out = method(Xd, **kw)
                lazy = hasattr(out, "dask")
                out = np.asarray(out)
                walls.append(time.perf_counter() - t0)
                cpus.append(cpu() - c0)
                peak = max(peak, tracemalloc.get_traced_memory()[1])
                tracemalloc.stop()
            seconds, cpu_seconds = float(np.median(walls)), float(np.median(cpus))
            equal = bool(np.array_equal(out, method(
                Xd.compute(), **{k: v.compute() for k, v in kw.items()})))
            rows.append([name, args.train, f"{args.rows} ({args.rows * d * 8 / 2**20:.0f})",
                         args.dask, lazy, peak / 1e6, seconds, cpu_seconds, equal]
                        + (list(means) if args.transform else []))
            print(markdown_table(header, [rows[-1]]).splitlines()[-1], flush=True)
    print()
    print(markdown_table(header, rows))
    return 0


def _client_peak(fn):
    """The client's peak (MB, ``tracemalloc``) and wall seconds of ``fn()``."""
    tracemalloc.start()
    t0 = time.perf_counter()
    fn()
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6, seconds


def _column_means(Z):
    """Column means of ``transform``'s output: computed on the cluster when lazy."""
    return Z.mean(axis=0).compute() if hasattr(Z, "dask") else Z.mean(axis=0)


if __name__ == "__main__":
    sys.exit(main())
