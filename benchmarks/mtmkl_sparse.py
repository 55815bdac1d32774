"""Multitask MKL on sparse X against the dense fit of the same numbers (issue 21).

Reuters' training documents (LaSVM's binary text task, 8,315 word columns,
44 stored entries a row) are split into ``--tasks`` tasks by row (row ``i`` is
task ``i mod T``), ``--rows`` of them fitted with ``MultitaskMKLClassifier``
on the default kernels plus a polynomial one; the test documents are predicted
with their tasks so assigned.  The fits of the CSR matrix and of its dense copy
alternate ``--repeats`` times (CPU time, ``time.process_time``, one BLAS
thread); one more fit of each runs under ``tracemalloc`` for its peak (the
input, made before, is not counted: its size is printed beside).  The medians,
their ratio, the two peaks and the largest difference of the decision values
are printed.

Usage::

    python benchmarks/mtmkl_sparse.py [--rows 2000] [--tasks 4] [--repeats 3]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import reuters_split

from kernlearn import MultitaskMKLClassifier
from kernlearn.datafiles import DatasetNotFoundError

KERNELS = [("rbf", {"gamma": "mean"}), "linear", ("poly", {"degree": 2})]


def _fit(X, y, t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (an iteration cap: the same in both)
        return MultitaskMKLClassifier(KERNELS).fit(X, y, task_index=t)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--tasks", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    try:
        X, y, Xt, yt = reuters_split()
    except DatasetNotFoundError as exc:
        print(f"skipped: {exc}")
        return
    X, y = X[: args.rows], y[: args.rows]
    t, tt = np.arange(X.shape[0]) % args.tasks, np.arange(Xt.shape[0]) % args.tasks
    Xd = X.toarray()
    print(f"reuters: {X.shape[0]} x {X.shape[1]} in {args.tasks} tasks; X sparse "
          f"{(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 1e6:.1f} MB, dense "
          f"{Xd.nbytes / 1e6:.0f} MB")
    times = {"sparse": [], "dense": []}
    for _ in range(args.repeats):
        for name, Xf in (("sparse", X), ("dense", Xd)):
            t0 = time.process_time()
            _fit(Xf, y, t)
            times[name].append(time.process_time() - t0)
    peaks, models = {}, {}
    for name, Xf in (("sparse", X), ("dense", Xd)):
        tracemalloc.start()
        models[name] = _fit(Xf, y, t)
        peaks[name] = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    f_s = models["sparse"].decision_function(Xt, task_index=tt)
    Xtd = Xt.toarray()
    acc = {n: float(np.mean(m.predict(Xt if n == "sparse" else Xtd, task_index=tt) == yt))
           for n, m in models.items()}
    f_d = models["dense"].decision_function(Xtd, task_index=tt)
    med = {n: float(np.median(v)) for n, v in times.items()}
    print(f"fit CPU s (median of {args.repeats}): sparse {med['sparse']:.2f}, dense "
          f"{med['dense']:.2f}, sparse/dense {med['sparse'] / med['dense']:.2f}")
    print(f"fit peak MB (tracemalloc, input not counted): sparse {peaks['sparse']:.1f}, "
          f"dense {peaks['dense']:.1f}")
    print(f"test accuracy: sparse {acc['sparse']:.4f}, dense {acc['dense']:.4f}; largest "
          f"decision difference {np.abs(f_s - f_d).max():.2e}; kernel weights "
          f"{np.round(models['sparse'].kernel_weights_, 4).tolist()}")


if __name__ == "__main__":
    main()
