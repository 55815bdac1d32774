"""Compiled kernels of prediction: linear scores row by row, labels by running maximum.

Both read each row alone, in a fixed order, so a row's result does not depend on
the rows predicted with it (their number, the block's layout or address): a
prediction by row blocks of any size equals the in-memory one bit for bit.
"""

import numpy as np

from .utils._numba_cache import njit_cached

__all__ = ["dense_linear_scores", "running_argmax"]

# Rows per block: the block's gathered columns (20 columns: 10 KB) stay in the
# first-level cache while every output reads them (64 measured faster than 128
# or 256 on 100,000 x 20 rows); their rows padded by 8 so that the gather's
# writes, one per column, do not fall in the same cache set.
_BLOCK = 64
_PAD = 8


@njit_cached
def dense_linear_scores(X, cols, W, b, out):
    """``out[k, i] = sum_t X[i, cols[t]] * W[k, t] + b[k]``, summed in the order of ``t``.

    Each sum starts at 0 and adds one product after another (no fused
    multiply-add: numba compiles without fast-math), then the bias; blocks of
    rows are only a loop order (the products of a row's sum are vectorised
    across rows), so a row's value is the same in any block.

    Parameters
    ----------
    X : ndarray of shape (n, n_features), float32 or float64, C or F order
    cols : ndarray of int of shape (s,)
        The columns read.
    W : ndarray of shape (K, s), float64
    b : ndarray of shape (K,), float64
    out : ndarray of shape (K, n), float64
        Written (one output's scores per row).
    """
    n = X.shape[0]
    K, s = W.shape
    # (the same values either way: read X in its memory order)
    by_column = X.flags.f_contiguous and not X.flags.c_contiguous
    XT = np.empty((s, _BLOCK + _PAD))  # (the block's columns, transposed)
    acc = np.empty(_BLOCK)
    for i0 in range(0, n, _BLOCK):
        m = min(_BLOCK, n - i0)
        if by_column:
            for t in range(s):
                c = cols[t]
                for r in range(m):
                    XT[t, r] = X[i0 + r, c]
        else:
            for r in range(m):
                for t in range(s):
                    XT[t, r] = X[i0 + r, cols[t]]
        for k in range(K):
            for r in range(m):
                acc[r] = 0.0
            for t in range(s):
                w = W[k, t]
                for r in range(m):
                    acc[r] += XT[t, r] * w
            bk = b[k]
            for r in range(m):
                out[k, i0 + r] = acc[r] + bk


@njit_cached
def running_argmax(by_output, idx):
    """``idx[i]``: the first ``k`` of the largest ``by_output[k, i]`` (``argmax`` over ``k``).

    Parameters
    ----------
    by_output : ndarray of shape (K, n), float64, C order
    idx : ndarray of int of shape (n,)
        Written.

    Returns
    -------
    nan : bool
        Whether a value is NaN (``idx`` is then not ``argmax``'s: it picks the first NaN).
    """
    K, n = by_output.shape
    nan = False
    for i0 in range(0, n, _BLOCK):
        m = min(_BLOCK, n - i0)
        best = by_output[0, i0:i0 + m].copy()
        for r in range(m):
            idx[i0 + r] = 0
            nan |= best[r] != best[r]
        for k in range(1, K):
            for r in range(m):
                v = by_output[k, i0 + r]
                nan |= v != v
                if v > best[r]:
                    best[r] = v
                    idx[i0 + r] = k
    return nan
