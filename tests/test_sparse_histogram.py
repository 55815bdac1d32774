"""The histogram kernels (hik, additive_chi2) of sparse rows, never densified.

The sparse path sums over the columns both rows store; it must give the dense
path's kernel (to 1e-12 relative) for any sparse layout the caller may hold
(empty rows, explicit zeros, unsorted duplicates, int64 indices, float32),
refuse negative values for additive_chi2 without densifying, and keep memory
at the kernel matrix's size (a subprocess measures it).
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose
from sklearn.metrics.pairwise import additive_chi2_kernel as sk_additive_chi2

from kernlearn.kernels import additive_chi2_kernel, hik_kernel, kernel_diag, pairwise_kernel

SRC = Path(__file__).resolve().parents[1] / "src"


def _counts(n, d, density, seed):
    rng = np.random.default_rng(seed)
    D = np.where(rng.random((n, d)) < density, rng.integers(1, 9, (n, d)) * rng.random((n, d)),
                 0.0)
    D[1] = 0.0  # an empty row
    return D


def _awkward(D, dtype=np.float64):
    """CSR of ``D`` with explicit zeros, each entry split in two unsorted halves, int64 indices."""
    r, c = np.nonzero(D)
    rng = np.random.default_rng(5)
    zr, zc = rng.integers(0, D.shape[0], 7), rng.integers(0, D.shape[1], 7)
    keep = D[zr, zc] == 0  # (explicit zeros where D is zero)
    rows = np.concatenate([r, r, zr[keep]])
    cols = np.concatenate([c, c, zc[keep]])
    vals = np.concatenate([D[r, c] / 4, 3 * D[r, c] / 4, np.zeros(keep.sum())])
    order = rng.permutation(len(rows))
    rows, cols, vals = rows[order], cols[order], vals[order]
    # (scipy's COO -> CSR would sum the duplicates: the raw arrays, rows grouped)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=D.shape[0]))])
    by_row = np.argsort(rows, kind="stable")
    A = sp.csr_matrix((vals[by_row].astype(dtype), cols[by_row].astype(np.int64),
                       indptr.astype(np.int64)), shape=D.shape)
    assert not A.has_canonical_format
    return A


KERNELS = [(hik_kernel, {}), (hik_kernel, {"beta": 0.5}), (additive_chi2_kernel, {})]


@pytest.mark.parametrize("kernel, params", KERNELS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_equals_dense(kernel, params, dtype):
    D, E = _counts(23, 40, 0.25, 0), _counts(17, 40, 0.4, 1)
    D, E = D.astype(dtype).astype(np.float64), E.astype(dtype).astype(np.float64)
    A, B = _awkward(D, dtype), _awkward(E, dtype)
    data_before, idx_before = A.data.copy(), A.indices.copy()
    want = kernel(D, E, **params)
    for X, Y in ((A, B), (A, E), (D, B), (A.tocsc(), B.tocoo())):
        assert_allclose(kernel(X, Y, **params), want, rtol=1e-12, atol=0)
    # blocks of rows are only a loop: any size gives the same kernel
    assert_allclose(kernel(A, B, block=4, **params), want, rtol=1e-12, atol=0)
    assert_allclose(kernel(A, A, **params), kernel(D, D, **params), rtol=1e-12, atol=0)
    # the caller's matrix is not canonicalised in place
    assert not A.has_canonical_format
    assert np.array_equal(A.data, data_before) and np.array_equal(A.indices, idx_before)


@pytest.mark.parametrize("kernel", ["hik", "additive_chi2"])
def test_sparse_diagonal_equals_dense(kernel, monkeypatch):
    D = _counts(19, 30, 0.3, 2)
    A = _awkward(D)
    want = kernel_diag(D, kernel)
    assert_allclose(want, np.diag(pairwise_kernel(D, D, kernel)),
                    rtol=1e-12)
    _no_densifying(monkeypatch)
    assert_allclose(kernel_diag(A, kernel), want, rtol=1e-12, atol=0)


def test_additive_chi2_matches_scikit_learn():
    # scikit-learn's additive chi2 is -sum (x - y)^2 / (x + y) = sum 4xy/(x+y) - x - y,
    # the library's sum 2xy/(x+y): ours = (sklearn's + sum x + sum y) / 2
    D, E = _counts(15, 25, 0.3, 3), _counts(11, 25, 0.5, 4)
    sk = sk_additive_chi2(D, E)
    ours = additive_chi2_kernel(sp.csr_matrix(D), sp.csr_matrix(E))
    assert_allclose(ours, (sk + D.sum(1)[:, None] + E.sum(1)[None, :]) / 2, rtol=1e-12,
                    atol=1e-12)


def _no_densifying(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("densified")

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)


def test_negative_values_refused_without_densifying(monkeypatch):
    D = _counts(9, 12, 0.5, 6)
    D[4, 3] = -0.5
    A = sp.csr_matrix(D)
    want_hik = hik_kernel(np.abs(D), np.abs(D))
    _no_densifying(monkeypatch)
    with pytest.raises(ValueError, match="additive_chi2 kernel needs non-negative features"):
        additive_chi2_kernel(A, A)
    with pytest.raises(ValueError, match="non-negative"):
        additive_chi2_kernel(sp.csr_matrix(np.abs(D)), A)
    # hik compares absolute values, as the dense path does
    assert_allclose(hik_kernel(A, A), want_hik, rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match="block must be a positive integer"):
        hik_kernel(A, A, block=0)


_MEMORY = textwrap.dedent("""
    import tracemalloc
    import numpy as np, scipy.sparse as sp
    from kernlearn.kernels import additive_chi2_kernel, hik_kernel, kernel_diag
    rng = np.random.default_rng(0)
    n, d = 300, 50_000
    X = sp.random(n, d, density=0.002, format="csr", random_state=1,
                  data_rvs=lambda k: rng.integers(1, 20, k).astype(float))
    hik_kernel(X[:3], X[:3])  # (loads the compiled code before measuring)
    tracemalloc.start()
    K1 = hik_kernel(X, X)
    K2 = additive_chi2_kernel(X, X)
    k = kernel_diag(X, "hik")
    print(tracemalloc.get_traced_memory()[1], n * d * 8)
""")


def test_memory_stays_far_below_the_dense_rows():
    run = subprocess.run([sys.executable, "-c", _MEMORY], capture_output=True, text=True,
                         env={"PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1",
                              "PATH": "/usr/bin:/bin"}, timeout=600)
    assert run.returncode == 0, run.stderr
    peak, dense = map(int, run.stdout.split())
    # two 300 x 300 kernels and the canonical copies of 30,000 entries: about 2 MB;
    # the dense rows alone are 120 MB
    assert peak < dense / 20, (peak, dense)
