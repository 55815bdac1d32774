"""The low-rank estimators on sparse rows never make them dense (issue 21).

Audit 113 measured 263 MB for a fit on 300 x 200,000 counts (480 MB dense):
:func:`kernlearn.families.nystrom.content_order` held the sampled rows dense on
their stored columns (and twice more in its last sort key) to order the rows
whose kernel values tie.  The order is unchanged (a stable sort of the tying
runs by their values is one lexicographic sort of all keys); only the rows
that tie are read.  Also audit 113's loose ends: the ``standardize``
documentation of the histogram kernels, ``pairwise_kernel`` of a Dask array.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kernlearn.families.nystrom import _values_within_ties, content_order

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.mark.parametrize("sparse", [False, True])
def test_tying_runs_sorted_by_values_as_one_sort_of_all_keys(sparse):
    # content_order's last sort: rows whose other keys all tie are ordered by
    # their values (first column first), as one lexsort of all keys orders them

    rng = np.random.default_rng(3)
    D = rng.integers(0, 3, size=(300, 40)).astype(float) * (rng.random((300, 40)) < 0.1)
    D[::7] = D[1::7][: len(D[::7])]  # (equal rows: they keep their order)
    R = sp.csr_matrix(D) if sparse else D
    for n_keys in (1, 2):
        pos = rng.permutation(300)[:250]
        keys = rng.integers(0, 3, size=(n_keys, 250)).astype(float)  # (many ties)
        want = pos[np.lexsort(np.vstack([D[pos].T[::-1], keys]))]
        s = np.lexsort(keys)
        got = _values_within_ties(R, pos[s], keys[:, s])
        np.testing.assert_array_equal(got, want)


def test_sparse_order_equals_the_dense_order():
    # the same numbers, sparse or dense: the same order (the sparse rows' values
    # compared on the columns the tying rows store)
    rng = np.random.default_rng(4)
    D = np.zeros((120, 600))
    cols = rng.integers(0, 600, size=(40, 3))
    for r in range(120):
        D[r, cols[r % 40]] = rng.integers(1, 3, size=3)  # (rows repeat: ties)
    for kernel in ("linear", "hik", "rbf"):
        want = content_order(D, np.arange(120), kernel, {"gamma": 0.1} if kernel == "rbf"
                             else {})
        got = content_order(sp.csr_matrix(D), np.arange(120), kernel,
                            {"gamma": 0.1} if kernel == "rbf" else {})
        np.testing.assert_array_equal(got, want)


def test_dense_fit_unchanged_and_sparse_fit_as_dense():
    from kernlearn import LowRankKernelRegressor

    rng = np.random.default_rng(5)
    D = rng.integers(0, 3, size=(120, 6)).astype(float)
    y = D @ rng.normal(size=6) + 0.1 * rng.normal(size=120)
    with threadpool_limits(1):
        for kernel in ("linear", "hik"):
            est = LowRankKernelRegressor(kernel=kernel, standardize=False, random_state=0)
            a = est.fit(D, y).predict(D)
            b = est.fit(sp.csr_matrix(D), y).predict(sp.csr_matrix(D))
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12 * np.abs(a).max())


_MEMORY = """
import tracemalloc, warnings
import numpy as np, scipy.sparse as sp
from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor
n, d = 240, 50000  # dense: 96 MB
rng = np.random.default_rng(0)
X = sp.random(n, d, density=100 / d, random_state=0, format="csr",
              data_rvs=lambda k: rng.poisson(2.0, k) + 1.0)
y = np.asarray(X[:, :10000].sum(axis=1)).ravel()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fits = [lambda: LowRankKernelRegressor(kernel="hik", standardize=False).fit(X, y).predict(X),
            lambda: LowRankKernelRegressor(kernel="linear").fit(X, y).predict(X),
            lambda: LowRankKernelClassifier(kernel="linear", standardize=False).fit(
                X, (y > np.median(y)).astype(int)).decision_function(X)]
    LowRankKernelRegressor(kernel="hik", standardize=False).fit(X[:40], y[:40])  # (compiled)
    tracemalloc.start()
    for f in fits:
        f()
print(tracemalloc.get_traced_memory()[1] / 1e6, n * d * 8 / 1e6)
"""


def test_lowrank_estimators_never_make_sparse_x_dense():
    # audit 113: 263 MB for 480 MB of dense rows, in content_order (here 120 MB
    # for 96 MB before, 9 MB now)
    out = subprocess.run([sys.executable, "-c", _MEMORY], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(SRC),
                                          "OMP_NUM_THREADS": "1"})
    peak_mb, dense_mb = map(float, out.stdout.split()[-2:])
    assert peak_mb < dense_mb / 6, f"peak {peak_mb:.0f} MB, X dense {dense_mb:.0f} MB"
