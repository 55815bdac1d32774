"""Dense linear algebra shared by the methods."""

import numpy as np
import scipy.linalg

#: below this size NumPy's batched LU inverse (one call for the whole batch) is
#: faster than a Python loop of Cholesky factorisations
_CHOLESKY_FROM = 64


def spd_inverse(A):
    r"""Inverses of symmetric positive definite matrices, from their Cholesky factors.

    LAPACK's ``potrf`` + ``potri`` take :math:`m^3` flops, half of the LU
    inverse's :math:`2m^3` (``numpy.linalg.inv``), which is what a batch of
    kernel-ridge systems inverted at every step of a search pays for.  A
    matrix whose factorisation fails (not positive definite in floating
    point) is inverted by LU instead, as before, and so are batches of
    matrices smaller than 64 x 64, where one batched LU call is cheaper than a
    loop of factorisations.

    Parameters
    ----------
    A : ndarray of shape (..., m, m)
        Symmetric matrices (only the upper triangle is read by the Cholesky path).

    Returns
    -------
    inv : ndarray of shape (..., m, m)
        Symmetric inverses.
    """
    A = np.asarray(A, dtype=float)
    if A.shape[-1] < _CHOLESKY_FROM:
        return np.linalg.inv(A)
    out = np.empty_like(A)
    flat, res = A.reshape(-1, *A.shape[-2:]), out.reshape(-1, *A.shape[-2:])
    for i, a in enumerate(flat):
        # a Fortran-ordered copy is factorised in place (overwrite_a)
        c, info = scipy.linalg.lapack.dpotrf(np.array(a, order="F"), lower=False,
                                             overwrite_a=True)
        if info == 0:
            c, info = scipy.linalg.lapack.dpotri(c, lower=False, overwrite_c=True)
        # potri fills the upper triangle only
        res[i] = c if info == 0 else np.linalg.inv(a)
    return np.triu(out) + np.swapaxes(np.triu(out, 1), -1, -2)


def spd_solve(A, B):
    r"""Solutions :math:`A^{-1}B` of symmetric positive definite systems, by Cholesky.

    LAPACK's ``potrf`` + ``potrs`` take half the flops of the LU solve of
    ``numpy.linalg.solve``, which the kernel ridge systems of the multitask
    fits pay at every evaluation.  As :func:`spd_inverse`: a matrix whose
    factorisation fails is solved by LU instead, and batches of matrices
    smaller than 64 x 64 in one batched LU call.

    Parameters
    ----------
    A : ndarray of shape (..., m, m)
        Symmetric matrices (only the upper triangle is read by the Cholesky path).
    B : ndarray of shape (..., m, r)
        Right-hand sides.

    Returns
    -------
    X : ndarray of shape (..., m, r)
    """
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    if A.shape[-1] < _CHOLESKY_FROM:
        return np.linalg.solve(A, B)
    out = np.empty(np.broadcast_shapes(A.shape[:-2], B.shape[:-2]) + B.shape[-2:])
    flat_a = np.broadcast_to(A, out.shape[:-2] + A.shape[-2:]).reshape(-1, *A.shape[-2:])
    flat_b = np.broadcast_to(B, out.shape).reshape(-1, *B.shape[-2:])
    res = out.reshape(-1, *B.shape[-2:])
    for i, (a, b) in enumerate(zip(flat_a, flat_b)):
        c, info = scipy.linalg.lapack.dpotrf(np.array(a, order="F"), lower=False,
                                             overwrite_a=True)
        if info == 0:
            x, info = scipy.linalg.lapack.dpotrs(c, b, lower=False)
        res[i] = x if info == 0 else np.linalg.solve(a, b)
    return out
