"""Histogram kernels of sparse rows (issue 21): time and peak memory of a fit.

``MultitaskMKLClassifier(kernels=["hik", "additive_chi2"])`` on a ``rows x cols``
sparse count matrix in 4 tasks (``--per-row`` entries a row), fitted three
ways, alternated ``--repeats`` times (CPU time, one BLAS thread): sparse rows
with the kernels evaluated on the stored entries (now), sparse rows with the
kernel functions densifying each block of rows (the merged code's, restored for
the run by a patch), and the dense copy (the anchor).  Peak memory of one fit
each is read with ``tracemalloc`` in a separate run (it slows allocation).
Prints the medians, the ratios and each sparse fit's largest decision-function
difference from the dense fit, relative to its scale.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/sparse_hik.py --rows 200 --cols 5000
"""

import argparse
import contextlib
import time
import tracemalloc
import warnings
from unittest import mock

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kernlearn import MultitaskMKLClassifier
from kernlearn import _histogram_kernels as hk


def _densifying(X, Y, kernel, beta=1.0, block=256, negative_error=None):
    """The merged code's sparse path: each side made dense, then the dense kernel."""
    f = hk.hik_kernel if kernel == "hik" else hk.additive_chi2_kernel
    kw = {"beta": beta} if kernel == "hik" else {}
    return f(hk._dense(X), hk._dense(Y), block=block, **kw)


def _fit(X, y, t, old, trace=False):
    est = MultitaskMKLClassifier(kernels=["hik", "additive_chi2"], standardize=False)
    patch = mock.patch.object(hk, "sparse_histogram_kernel", _densifying) if old \
        else contextlib.nullcontext()
    with warnings.catch_warnings(), patch:
        warnings.simplefilter("ignore")
        if trace:
            tracemalloc.start()
        t0 = time.process_time()
        est.fit(X, y, task_index=t)
        sec = time.process_time() - t0
        peak = tracemalloc.get_traced_memory()[1] if trace else 0
        tracemalloc.stop()
        return sec, peak, est.decision_function(X, task_index=t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--cols", type=int, default=5000)
    ap.add_argument("--per-row", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n, d = args.rows, args.cols
    X = sp.random(n, d, density=args.per_row / d, random_state=0, format="csr",
                  data_rvs=lambda k: rng.poisson(2.0, k) + 1.0)
    t = np.arange(n) % 4
    y = (X @ rng.normal(size=d) > 0).astype(int)
    Xd = X.toarray()
    runs = (("sparse", X, False), ("sparse, densifying", X, True), ("dense", Xd, False))
    times, peaks, dec = {name: [] for name, _, _ in runs}, {}, {}
    with threadpool_limits(1):
        _fit(X[: n // 2], y[: n // 2], t[: n // 2], False)  # (compiled code loaded)
        for _ in range(args.repeats):
            for name, Xf, old in runs:
                sec, _, dec[name] = _fit(Xf, y, t, old)
                times[name].append(sec)
        for name, Xf, old in runs:
            peaks[name] = _fit(Xf, y, t, old, trace=True)[1]
    med = {k: float(np.median(v)) for k, v in times.items()}
    scale = np.abs(dec["dense"]).max()
    print(f"MultitaskMKLClassifier(kernels=['hik', 'additive_chi2']), {n} x {d} sparse "
          f"({args.per_row} entries a row, dense copy {Xd.nbytes / 2**20:.0f} MB), 4 tasks; "
          f"CPU s, median of {args.repeats}; peak traced memory of one fit:")
    for name, _, _ in runs:
        diff = np.abs(dec[name] - dec["dense"]).max() / scale
        print(f"  {name:20s} {med[name]:7.2f} s ({med[name] / med['dense']:.2f} of dense), "
              f"peak {peaks[name] / 2**20:7.1f} MB ({peaks[name] / peaks['dense']:.3f} of dense); "
              f"decisions vs dense {diff:.1e}")


if __name__ == "__main__":
    main()
