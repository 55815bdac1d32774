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
