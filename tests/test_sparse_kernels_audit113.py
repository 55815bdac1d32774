"""Audit 113: the histogram kernels of sparse rows against the same numbers dense.

Each test names a case where the sparse path (:mod:`kernlearn._sparse_histogram`)
returned other numbers than the dense one without a word, or compiled at run
time: a ``hik`` exponent of zero or below, NaN and infinite values, negative
values hidden from ``additive_chi2``'s check by a NaN, the sparse diagonal of
int8 and float32 data, and read-only arrays (a memory-mapped matrix).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

from peak_memory import peak_and_dense_mb
from kernlearn.kernels import additive_chi2_kernel, hik_kernel, kernel_diag, pairwise_kernel


def _data(seed=0, n=7, d=9):
    rng = np.random.default_rng(seed)
    return np.where(rng.random((n, d)) < 0.4, rng.poisson(3.0, (n, d)) + 1.0, 0.0)


@pytest.mark.parametrize("beta", [0, 0.0, -1.0, float("nan"), float("inf")])
def test_hik_exponent_refused_dense_and_sparse(beta):
    # |0|^0 = 1: the dense kernel of beta=0 was the number of columns for every
    # pair, the sparse one the number of columns both rows store
    D = _data()
    for X in (D, sp.csr_matrix(D)):
        with pytest.raises(ValueError, match="beta must be a finite positive number"):
            hik_kernel(X, X, beta=beta)
        with pytest.raises(ValueError, match="beta must be a finite positive number"):
            pairwise_kernel(X, X, "hik", beta=beta)
        # (the diagonal: d dense for beta=0, scipy's NotImplementedError sparse)
        with pytest.raises(ValueError, match="beta must be a finite positive number"):
            kernel_diag(X, "hik", beta=beta)


@pytest.mark.parametrize("kernel", ["hik", "additive_chi2"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_values_refused_dense_and_sparse(kernel, bad):
    # dense hik spread a NaN over the whole row (min(nan, 0) is NaN), sparse
    # hik over the pairs storing its column only; both additive_chi2 paths
    # dropped it (their 0/0 guard)
    D = _data(1)
    D[2, 4] = bad
    S, E = sp.csr_matrix(D), _data(2)
    for X, Y, side in ((D, D, "X"), (S, S, "X"), (S, E, "X"), (E, S, "Y"),
                       (E, S.tocoo(), "Y")):
        with pytest.raises(ValueError, match=f"{kernel} kernel needs finite features: {side} "
                                             f"has {bad} at row 2, column 4"):
            pairwise_kernel(X, Y, kernel)


def test_negative_values_not_hidden_by_a_nan():
    # (data.min() is NaN with a NaN stored, and NaN < 0 is False: the sparse
    # additive_chi2 took the negative values the dense one refuses)
    D = _data(3)
    D[0, 0], D[1, 1] = -2.0, np.nan
    with pytest.raises(ValueError, match="needs finite features"):
        additive_chi2_kernel(sp.csr_matrix(D), sp.csr_matrix(np.abs(_data(4))))
    D[1, 1] = 1.0
    with pytest.raises(ValueError, match="needs non-negative features"):
        additive_chi2_kernel(sp.csr_matrix(D), sp.csr_matrix(np.abs(_data(4))))


def test_sparse_diagonal_of_int8_and_float32_as_dense():
    # int8: abs(-128) is -128 in int8, so the sparse hik diagonal was 256 too small
    D = np.array([[-128, 5, 0], [0, -128, 3], [7, 0, 0]], dtype=np.int8)
    want = np.abs(D.astype(float)).sum(axis=1)
    assert_allclose(kernel_diag(sp.csr_matrix(D), "hik"), want, rtol=1e-15)
    assert_allclose(kernel_diag(D, "hik"), want, rtol=1e-15)
    # float32: the diagonal summed in float32 (1e-7 off), the kernel in float64
    rng = np.random.default_rng(5)
    F = (rng.random((6, 400)) * 10).astype(np.float32)
    for kernel, params in (("hik", {"beta": 0.5}), ("additive_chi2", {})):
        want = kernel_diag(F.astype(np.float64), kernel, **params)
        got = kernel_diag(sp.csr_matrix(F), kernel, **params)
        assert_allclose(got, want, rtol=1e-13, atol=0)
        K = pairwise_kernel(sp.csr_matrix(F), sp.csr_matrix(F), kernel, **params)
        assert_allclose(got, np.diag(K), rtol=1e-13, atol=0)


def test_read_only_arrays_use_the_compiled_signature():
    # a memory-mapped matrix (joblib's workers) has read-only arrays: numba
    # compiled another signature at run time for them (0.23 s CPU per process
    # on a read-only install), once for each combination of read-only inputs
    from kernlearn._sparse_histogram import _csr_histogram_rows

    D = _data(6, 12, 15)
    A = sp.csr_matrix(D)
    want = hik_kernel(A, A)  # (the writeable signature, loaded or compiled)
    n_sig = len(_csr_histogram_rows.signatures)
    B = A.copy()
    B.indices, B.indptr = B.indices.astype(np.int64), B.indptr.astype(np.int64)
    for a in (B.data, B.indices, B.indptr):
        a.flags.writeable = False
    assert_allclose(hik_kernel(B, B), want, rtol=1e-15)
    assert_allclose(additive_chi2_kernel(B, A), additive_chi2_kernel(A, A), rtol=1e-15)
    assert len(_csr_histogram_rows.signatures) == n_sig, _csr_histogram_rows.signatures
    assert not B.data.flags.writeable  # (the caller's arrays untouched)


def test_numpy_integer_block_uses_the_compiled_signature():
    # (np.int32 + int is np.int32 under NumPy 2: the row bounds were typed
    # int32, uint8, ... and each compiled another signature)
    from kernlearn._sparse_histogram import _csr_histogram_rows

    A = sp.csr_matrix(_data(7, 11, 8))
    want = hik_kernel(A, A)
    n_sig = len(_csr_histogram_rows.signatures)
    for block in (np.int32(4), np.uint8(3), np.int16(5), np.int64(2)):
        assert_allclose(hik_kernel(A, A, block=block), want, rtol=1e-15)
        assert_allclose(additive_chi2_kernel(A, A, block=block),
                        additive_chi2_kernel(A, A), rtol=1e-15)
    assert len(_csr_histogram_rows.signatures) == n_sig, _csr_histogram_rows.signatures


_MEMORY = """
import tracemalloc, warnings
import numpy as np, scipy.sparse as sp
from kernlearn import MultitaskMKLRegressor, PNormMKLClassifier
n, d = 240, 50000  # dense: 96 MB
rng = np.random.default_rng(0)
X = sp.random(n, d, density=40 / d, random_state=0, format="csr",
              data_rvs=lambda k: rng.poisson(2.0, k) + 1.0)
t = np.arange(n) % 3
y = np.asarray(X[:, :5000].sum(axis=1)).ravel() + t
kern = ["hik", ("hik", {"beta": 0.5}), "additive_chi2"]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fits = [lambda: MultitaskMKLRegressor(kern, standardize=False, max_iter=10).fit(
                X, y, task_index=t).predict(X, task_index=t),
            lambda: PNormMKLClassifier(kern, standardize=False, max_iter=5, random_state=0).fit(
                X, (y > np.median(y)).astype(int)).decision_function(X)]
    fits[0]()  # (compiled code loaded first)
    tracemalloc.start()
    for f in fits:
        f()
print(tracemalloc.get_traced_memory()[1] / 1e6, n * d * 8 / 1e6)
"""


def test_estimators_with_histogram_kernels_never_make_sparse_x_dense():
    # the last pass's claim (audit 111 measured 185 and 567 MB for 8 MB of
    # dense rows when a task's rows were read dense): the peak is the kernel
    # blocks, far below X dense
    peak_mb, dense_mb = peak_and_dense_mb(_MEMORY)
    assert peak_mb < dense_mb / 4, f"peak {peak_mb:.0f} MB, X dense {dense_mb:.0f} MB"
