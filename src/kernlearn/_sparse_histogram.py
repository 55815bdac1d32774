"""The histogram kernels (intersection, additive chi-squared) of sparse rows.

Both kernels are sums of per-column terms that vanish where either row is zero
(:math:`\\min(|a|^\\beta, 0) = 0` for :math:`\\beta > 0`, and
:math:`2 a \\cdot 0 / (a + 0) = 0`), so a kernel value needs only the columns
where both rows store a value: a merge of the two rows' sorted index lists.
Evaluated this way the rows are never densified (the dense functions of
:mod:`kernlearn._histogram_kernels` form a ``block x n_Y x n_features`` array);
memory is the kernel matrix and a canonical float64 copy of the stored entries.

Both paths refuse NaN and infinite values (:func:`refuse_non_finite`): the
dense path's sums spread a NaN over a whole row of ``hik`` (``min(nan, 0)``
is NaN) and dropped it from ``additive_chi2`` (its ``0/0`` guard), which the
stored entries alone cannot reproduce, and neither is a kernel value.
"""

import numpy as np
import scipy.sparse as sp

from .utils._finite import first_non_finite
from .utils._numba_cache import njit_cached
from .utils._sparse import canonical_sparse

__all__ = ["refuse_non_finite", "sparse_histogram_kernel", "sparse_histogram_diag"]


def refuse_non_finite(X, side, kernel):
    """Refuse a NaN or infinite value of ``X`` (dense, or a sparse matrix's stored values).

    Parameters
    ----------
    X : ndarray or sparse matrix
    side : str
        ``"X"`` or ``"Y"``, for the message.
    kernel : str
        The kernel's name, for the message.

    Raises
    ------
    ValueError
        Naming the first such value and where it is.
    """
    found = first_non_finite(X)
    if found is not None:
        i, j, value, k = found
        raise ValueError(f"{kernel} kernel needs finite features: {side} has {value} at row "
                         f"{i}, column {j} ({k} non-finite value{'s' if k > 1 else ''}).")


@njit_cached
def _csr_histogram_rows(a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, chi2, start, stop, out):
    """``out[i - start, j]`` = the kernel of row ``i`` of A (``start <= i < stop``) and row ``j`` of B.

    Parameters
    ----------
    a_ptr, a_idx, a_val : ndarray (int64, int64, float64)
        CSR arrays of A, indices sorted and unique within a row.
    b_ptr, b_idx, b_val : ndarray (int64, int64, float64)
        CSR arrays of B, likewise.
    chi2 : bool
        Sum ``2 a b / (a + b)`` (additive chi-squared); else ``min(a, b)``
        (intersection: the values already ``|x|^beta``).
    start, stop : int
        The rows of A written.
    out : ndarray of shape (stop - start, n_B), float64
        Written.
    """
    m = b_ptr.shape[0] - 1
    for i in range(start, stop):
        a0, a1 = a_ptr[i], a_ptr[i + 1]
        for j in range(m):
            s = 0.0
            p, q = a0, b_ptr[j]
            q1 = b_ptr[j + 1]
            # merge the two sorted index lists: only shared columns add a term
            while p < a1 and q < q1:
                ca, cb = a_idx[p], b_idx[q]
                if ca < cb:
                    p += 1
                elif cb < ca:
                    q += 1
                else:
                    x, y = a_val[p], b_val[q]
                    if chi2:
                        den = x + y
                        # (both stored zeros: the dense path's 0/0 term is 0 too)
                        if den > 0:
                            s += 2.0 * x * y / den
                    else:
                        s += x if x < y else y
                    p += 1
                    q += 1
            out[i - start, j] = s


def _writeable(a, dtype):
    """``a`` as a writeable ``dtype`` array (copied only if needed).

    The compiled loop's one signature takes writeable arrays: a read-only
    one (a memory-mapped matrix, as joblib hands a worker large data) made
    numba compile another at run time, seconds per process.
    """
    a = a.astype(dtype, copy=False)
    return a if a.flags.writeable else a.copy()


def _canonical_csr(X, side, kernel):
    """``X`` as canonical CSR (float64 data, int64 indices), the caller's matrix unchanged."""
    X = canonical_sparse(sp.csr_matrix(canonical_sparse(X), dtype=np.float64))
    refuse_non_finite(X, side, kernel)
    return (_writeable(X.indptr, np.int64), _writeable(X.indices, np.int64),
            _writeable(X.data, np.float64), X.shape)


def _values(data, kernel, beta, negative_error):
    """The stored values each kernel compares (a new array: ``data`` may be the caller's)."""
    if kernel == "hik":
        return np.abs(data) ** beta
    # (the summed duplicates' signs: what the dense path would have seen)
    if (data < 0).any():
        raise ValueError(negative_error)
    return data


def sparse_histogram_kernel(X, Y, kernel, beta=1.0, block=256,
                            negative_error="additive_chi2 needs non-negative features"):
    """The ``hik`` or ``additive_chi2`` kernel of rows of which one side at least is sparse.

    Parameters
    ----------
    X : sparse matrix or ndarray of shape (n_X, n_features)
    Y : sparse matrix or ndarray of shape (n_Y, n_features)
        A dense side is read as CSR (its zeros not stored).
    kernel : {"hik", "additive_chi2"}
    beta : float, default=1.0
        ``hik``'s exponent (positive).
    block : int, default=256
        Rows of ``X`` evaluated per compiled call.
    negative_error : str, default="additive_chi2 needs non-negative features"
        The message of the error ``additive_chi2`` raises on negative values.

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)

    Raises
    ------
    ValueError
        ``additive_chi2`` of data with negative values (read from the stored
        entries, not densified); NaN or infinite values.
    """
    a_ptr, a_idx, a_val, (n, d) = _canonical_csr(X, "X", kernel)
    b_ptr, b_idx, b_val, (m, d_b) = _canonical_csr(Y, "Y", kernel)
    if d != d_b:
        raise ValueError(f"X has {d} features and Y has {d_b}; the kernel needs the same.")
    a_val, b_val = (_values(v, kernel, beta, negative_error) for v in (a_val, b_val))
    K = np.empty((n, m))
    # (a NumPy integer block, np.int32(64) from a parameter grid, typed the
    # row bounds int32 and compiled another signature at run time)
    block = int(block)
    for s in range(0, n, block):
        e = min(s + block, n)
        _csr_histogram_rows(a_ptr, a_idx, a_val, b_ptr, b_idx, b_val,
                            kernel == "additive_chi2", s, e, K[s:e])
    return K


def sparse_histogram_diag(X, kernel, beta=1.0):
    """``k(x, x)`` of each row: ``sum_k |x_k|^beta`` (``hik``), ``sum_k x_k`` (``additive_chi2``).

    Parameters
    ----------
    X : sparse matrix of shape (n, n_features)
    kernel : {"hik", "additive_chi2"}
    beta : float, default=1.0

    Returns
    -------
    diag : ndarray of shape (n,)
    """
    # (float64 first: int8's abs(-128) is -128, and float32 sums lose 1e-7)
    X = canonical_sparse(sp.csr_matrix(canonical_sparse(X), dtype=np.float64))
    if kernel == "hik":
        return np.asarray(abs(X).power(beta).sum(axis=1)).ravel()
    # (2 x x / (x + x) = x)
    return np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
