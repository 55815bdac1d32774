"""The exact factor of a sparse linear kernel (audit 111): its cost and its model.

MK-MTSFL (linear and RBF kernels, ``max_rank=300``) on a ``rows x cols``
sparse count matrix in 4 tasks, fitted three ways, alternated ``--repeats``
times (CPU time, one BLAS thread): sparse rows with the linear kernel's exact
factor (now), sparse rows with the randomised factor of its Gram matrix (the
merged code's, restored for the run by a patch), and the dense copy (the
anchor: the exact SVD of its data view).  Prints the medians, their ratios and
each sparse fit's largest prediction difference from the dense fit, relative to
the predictions' scale.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/mtmkl_sparse_factor.py --rows 3000 --cols 10000
"""

import argparse
import time
import warnings
from unittest import mock

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kernlearn import MultitaskMKLRegressor
from kernlearn.methods.mtmkl import TaskKernels


def _fit(X, y, t, old=False):
    est = MultitaskMKLRegressor(["linear", ("rbf", {"gamma": "mean"})], formulation="mtsfl",
                                max_iter=20)
    with warnings.catch_warnings(), mock.patch.object(
            TaskKernels, "_sparse_linear", lambda self, j: False) if old else _nothing():
        warnings.simplefilter("ignore")  # (the iteration cap: the same in all three)
        t0 = time.process_time()
        est.fit(X, y, task_index=t)
        return time.process_time() - t0, est


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--cols", type=int, default=10000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n, d = args.rows, args.cols
    X = sp.random(n, d, density=50 / d, random_state=0, format="csr",
                  data_rvs=lambda k: rng.poisson(2.0, k) + 1.0)
    t = np.arange(n) % 4
    y = X @ rng.normal(size=d) + rng.normal(size=n)
    Xd = X.toarray()
    times, preds = {"exact": [], "randomised": [], "dense": []}, {}
    with threadpool_limits(1):
        for _ in range(args.repeats):
            for name, Xf, old in (("exact", X, False), ("randomised", X, True),
                                  ("dense", Xd, False)):
                sec, est = _fit(Xf, y, t, old)
                times[name].append(sec)
                preds[name] = est.predict(Xf[:500], task_index=t[:500])
    med = {k: float(np.median(v)) for k, v in times.items()}
    scale = np.abs(preds["dense"]).max()
    print(f"MK-MTSFL, {n} x {d} sparse (50 entries a row), 4 tasks; CPU s, median of "
          f"{args.repeats}:")
    for name in ("exact", "randomised"):
        diff = np.abs(preds[name] - preds["dense"]).max() / scale
        print(f"  sparse, {name} factor: {med[name]:.2f} s ({med[name] / med['dense']:.2f} of "
              f"dense); predictions vs dense {diff:.1e}")
    print(f"  dense (anchor): {med['dense']:.2f} s")


if __name__ == "__main__":
    main()
