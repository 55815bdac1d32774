"""The low-rank estimators on sparse rows never make them dense (issue 21).

Audit 113 measured 263 MB for a fit on 300 x 200,000 counts (480 MB dense):
:func:`kernlearn.families.nystrom.content_order` held the sampled rows dense on
their stored columns (and twice more in its last sort key) to order the rows
whose kernel values tie.  The order is unchanged (a stable sort of the tying
runs by their values is one lexicographic sort of all keys); only the rows
that tie are read.  Also audit 113's loose ends: the ``standardize``
documentation of the histogram kernels, ``pairwise_kernel`` of a Dask array.
"""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from peak_memory import peak_and_dense_mb
from kernlearn.families.nystrom import _values_within_ties, content_order


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
    peak_mb, dense_mb = peak_and_dense_mb(_MEMORY)
    assert peak_mb < dense_mb / 6, f"peak {peak_mb:.0f} MB, X dense {dense_mb:.0f} MB"


@pytest.mark.parametrize("chunks", ["dense", "csr", "unknown sizes"])
def test_pairwise_kernel_of_a_dask_array_as_in_memory(chunks):
    # audit 113: a Dask array stopped in NumPy with a message about another
    # thing (CSR chunks: "setting an array element with a sequence")
    da = pytest.importorskip("dask.array")
    from kernlearn.kernels import kernel_diag, pairwise_kernel

    rng = np.random.default_rng(6)
    D = rng.poisson(1.0, (30, 8)).astype(float)
    if chunks == "csr":
        X = da.from_array(sp.csr_matrix(D), chunks=(10, 8), asarray=False)
    else:
        X = da.from_array(D, chunks=(10, 8))
        if chunks == "unknown sizes":
            X = X[X[:, 0] >= 0]  # (all rows, chunk sizes unknown)
    for kernel in ("linear", "rbf", "hik", "additive_chi2"):
        want = pairwise_kernel(D, D, kernel)
        np.testing.assert_allclose(pairwise_kernel(X, X, kernel), want, rtol=1e-13)
        np.testing.assert_allclose(pairwise_kernel(X, kernel=kernel), want, rtol=1e-13)
        np.testing.assert_allclose(pairwise_kernel(D[:5], X, kernel), want[:5], rtol=1e-13)
        np.testing.assert_allclose(kernel_diag(X, kernel), np.diag(want), rtol=1e-13)


def _estimators():
    from kernlearn import (LowRankKernelClassifier, LowRankKernelRegressor,
                           MultitaskMKLRegressor, PNormMKLClassifier)

    return [(LowRankKernelRegressor, lambda k: {"kernel": k, "random_state": 0}, False),
            (LowRankKernelClassifier, lambda k: {"kernel": k, "random_state": 0}, True),
            (PNormMKLClassifier, lambda k: {"kernels": [k], "random_state": 0,
                                            "max_iter": 20}, True),
            (MultitaskMKLRegressor, lambda k: {"kernels": [k], "max_iter": 10}, False)]


def test_standardize_with_histogram_kernels_as_documented():
    # dense and sparse columns are scaled, never centred, for the histogram
    # kernels (since the thirty-sixth pass: dense ones were centred, hik warned
    # and additive_chi2 refused, while the sparse fit was silently another
    # model); each standardize docstring says so
    rng = np.random.default_rng(0)
    D = rng.poisson(1.0, (60, 12)).astype(float)
    y = D[:, :3].sum(axis=1)
    task = {"task_index": np.arange(60) % 2}
    for Est, params, cls in _estimators():
        doc = re.search(r"standardize : bool.*\n((?:        .*\n)+)", Est.__doc__).group(1)
        doc = " ".join(doc.split())
        if "histogram kernels;" not in doc:  # (the classifier refers to the regressor)
            assert "``hik``" in doc and "``additive_chi2``" in doc, Est.__name__
            assert "not centred" in doc or "never centred" in doc, Est.__name__
        t = (y > np.median(y)).astype(int) if cls else y
        kw = task if Est.__name__.startswith("Multitask") else {}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            dense = Est(**params("hik")).fit(D, t, **kw)
            sparse = Est(**params("hik")).fit(sp.csr_matrix(D), t, **kw)
            Est(**params("additive_chi2")).fit(D, t, **kw)
        out = "decision_function" if cls else "predict"
        a = getattr(dense, out)(D, **kw)
        b = getattr(sparse, out)(sp.csr_matrix(D), **kw)
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8 * np.abs(b).max(),
                                   err_msg=Est.__name__)
