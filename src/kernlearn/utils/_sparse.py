"""Column statistics of SciPy sparse matrices, without densifying them.

Standardisation (:mod:`kernlearn.preprocessing`) and the per-partition work
of the out-of-core and Dask fits (:mod:`kernlearn.methods._fgm_rows`,
:mod:`kernlearn._partitioned_linear`) share them.  This module imports only
NumPy and SciPy, so a Dask worker that runs those functions does not load
scikit-learn for them.
"""

import sys

import numpy as np
import scipy.sparse as sp

__all__ = [
    "DISTANCE_OFFSET",
    "canonical_sparse",
    "column_nonzeros",
    "dense_product",
    "distance_shift",
    "shift_rows",
    "squared_distances",
    "warn_far_sparse_offset",
]


def dense_product(A, B):
    """``A @ B`` as a dense ndarray, a product of two sparse matrices included.

    scikit-learn's ``safe_sparse_dot(A, B, dense_output=True)`` without
    importing scikit-learn: Dask workers evaluate kernels (the predictions'
    decision values) and never import it.  Where it is loaded (the client:
    every estimator's module imports it) its product of two sparse matrices
    straight into a dense one is used; elsewhere SciPy's sparse product,
    made dense.  Both sum each entry's terms in the order of the shared
    column (SciPy's and scikit-learn's loops over CSR rows): the same numbers
    to the last bit (tests/test_dask_predict_workers.py).

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (n, k)
    B : ndarray or sparse matrix of shape (k, m)

    Returns
    -------
    ndarray of shape (n, m)
    """
    if sp.issparse(A) and sp.issparse(B):
        extmath = sys.modules.get("sklearn.utils.extmath")
        if extmath is not None:
            return extmath.safe_sparse_dot(A, B, dense_output=True)
        return (A @ B).toarray()
    return A @ B


#: Squared norm of the data's mean over the rows' mean squared distance from it
#: beyond which the squared distances :math:`\|x\|^2 + \|y\|^2 - 2x^\top y`
#: lose more than about 1e-12 of their size to rounding (their error is about
#: the machine epsilon times :math:`\|x\|^2 + \|y\|^2`): past it, every
#: distance computation subtracts the mean from both sides first
#: (:func:`distance_shift`; distances do not change under a translation).
#: Ordinary data stay below it (standardised columns: 0; columns in [0, 1]:
#: about 3) and keep their numbers bit for bit; a column at 1e6 or 1e9 beside
#: a unit spread (a time stamp, ``standardize=False``) passes it.
DISTANCE_OFFSET = 1e4


def distance_shift(X):
    """The point the squared distances of ``X``'s rows subtract first, or ``None``.

    The one rule of every distance computation (RBF Gram matrices, their
    predictions, Nystrom columns, the multitask kernels): ``X``'s column
    means when their squared norm exceeds :data:`DISTANCE_OFFSET` times the
    rows' mean squared distance from them, else ``None`` (nothing shifted:
    ordinary data keep their numbers).  Columns at 1e9 with a spread of 1e-3
    left the expansion no digit: every kernel value was noise and the models
    fitted on them a constant.  A sparse ``X`` is never shifted (it would be
    densified): ``None``, and :func:`warn_far_sparse_offset` warns at fit.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The reference rows (the training rows of a kernel: the same shift at
        fit and at prediction).

    Returns
    -------
    ndarray of shape (n_features,) or None
    """
    if not (isinstance(X, np.ndarray) and X.ndim == 2 and X.shape[0] > 1
            and X.dtype.kind == "f" and X.size):
        return None
    # (an overflow decides nothing, silently: a row far out, often a removed
    # one of zero weight, is not the user's NumPy warning)
    with np.errstate(over="ignore", invalid="ignore"):
        m = X.mean(axis=0, dtype=np.float64)
        mm = float(m @ m)
    if not (np.isfinite(mm) and mm > 0):
        return None
    # (one pass first: the offset's rounding makes this spread small, never
    # large, so it clears ordinary data at the cost of one product)
    if mm <= DISTANCE_OFFSET * (float(np.vdot(X, X)) / X.shape[0] - mm):
        return None
    C = X - m
    return m if mm > DISTANCE_OFFSET * float(np.vdot(C, C)) / X.shape[0] else None


def warn_far_sparse_offset(X, name="X"):
    """Warn when sparse ``X``'s columns sit so far from zero that its distances lose digits.

    :func:`distance_shift`'s test on a sparse matrix, which is not shifted
    (that would densify it): its RBF kernel values are then rounding noise,
    and the fit says so rather than return a poor model without a word.

    Parameters
    ----------
    X : sparse matrix of shape (n_samples, n_features)
    name : str, default="X"
        What the warning calls the data.
    """
    if not sp.issparse(X) or X.shape[0] < 2:
        return
    m = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
    mm = float(m @ m)
    spread = float(_sparse_centred_squares(X, np.ones(X.shape[0]), m).sum()) / X.shape[0]
    if np.isfinite(mm) and mm > DISTANCE_OFFSET * spread:
        import warnings

        from ._warnings import user_stacklevel

        warnings.warn(
            f"sparse {name}'s columns sit far from zero relative to their spread (squared "
            f"mean {mm:.3g}, mean squared spread {spread:.3g}): its RBF distances lose their "
            "digits to rounding and a sparse matrix is not shifted; centre the columns "
            "(as a dense array) or standardise the inputs (standardize=True).",
            UserWarning, stacklevel=user_stacklevel())


def shift_rows(shift, *arrays):
    """The arrays less ``shift`` (new arrays), or as given when ``shift`` is ``None``.

    Parameters
    ----------
    shift : ndarray of shape (n_features,) or None
        From :func:`distance_shift`.
    *arrays : ndarray of shape (..., n_features)

    Returns
    -------
    tuple of ndarray
    """
    if shift is None:
        return arrays
    return tuple(np.asarray(A, dtype=np.float64) - shift for A in arrays)


def squared_distances(X, Y):
    """Squared Euclidean distances between the rows of ``X`` and of ``Y``.

    scikit-learn's ``euclidean_distances(X, Y, squared=True)``; where it is
    not loaded (a Dask worker evaluating an RBF kernel for a prediction,
    which never imports it) the same operations in the same order on float64
    inputs (``X is not Y``), so the same numbers: the product of the rows
    (:func:`dense_product`), less twice it the squared row norms (a sparse
    row's summed in the order of its stored values, as scikit-learn's
    compiled loop does), clipped at zero.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_X, n_features)
    Y : ndarray or sparse matrix of shape (n_Y, n_features)

    Returns
    -------
    ndarray of shape (n_X, n_Y)

    Notes
    -----
    Rows far from zero relative to their spread are first shifted by
    :func:`distance_shift` of ``Y`` (the training rows in the library's
    calls), so their distances keep their digits; ordinary rows are not.
    """
    shift = distance_shift(Y) if not sp.issparse(X) else None
    if shift is not None:
        X, Y = shift_rows(shift, X) * 2 if X is Y else shift_rows(shift, X, Y)
    if "sklearn.metrics.pairwise" in sys.modules or X is Y or not all(
            (sp.issparse(M) or isinstance(M, np.ndarray)) and M.dtype == np.float64
            for M in (X, Y)):
        from sklearn.metrics.pairwise import euclidean_distances

        return euclidean_distances(X, Y, squared=True)
    X, Y = (M.tocsr() if sp.issparse(M) else M for M in (X, Y))
    D = -2 * dense_product(X, Y.T)
    D += _row_squares(X)[:, None]
    D += _row_squares(Y)[None, :]
    np.maximum(D, 0, out=D)
    return D


def _row_squares(X):
    """Squared norms of the rows of a float64 array or CSR matrix, as scikit-learn's
    ``row_norms(X, squared=True)`` computes them (a sparse row's in order)."""
    if not sp.issparse(X):
        return np.einsum("ij,ij->i", X, X)
    squares, counts = X.data * X.data, np.diff(X.indptr)
    out, starts = np.zeros(X.shape[0]), X.indptr[:-1]
    # the k-th stored value of every row that has one, in turn: each row's sum
    # left to right (NumPy's sums of segments pair their terms: other roundings)
    for k in range(int(counts.max(initial=0))):
        rows = np.flatnonzero(counts > k)
        out[rows] += squares[starts[rows] + k]
    return out


def column_nonzeros(X):
    """Non-zero values in each column of sparse ``X``, whatever its storage holds.

    SciPy's ``getnnz`` counts stored entries: explicit zeros (a CSR matrix
    built from triplets, or whose values were set to 0 in place) and
    duplicates not yet summed.  The same matrix stored two ways had its
    columns counted differently, so
    :func:`kernlearn.preprocessing.measurement_columns` could call
    one of them a measurement in one storage and not in the other, and FGM
    fitted another model on the same numbers.

    Parameters
    ----------
    X : sparse matrix or array of shape (n_samples, n_features)

    Returns
    -------
    ndarray of int of shape (n_features,)
    """
    X = _canonical(X, sp.csr_matrix)
    return np.bincount(X.indices[X.data != 0], minlength=X.shape[1])


def canonical_sparse(X):
    """``X`` with duplicate entries summed and indices sorted, never changing the caller's matrix.

    SciPy keeps unsummed duplicates (a CSR matrix built from triplets with
    repeated coordinates) and unsorted indices; code that reads ``X.data``
    directly (squared norms, sorted values, compiled loops) then sees two
    halves where the user meant one value, and SciPy's own ``abs``, ``max``
    and ``sum_duplicates`` canonicalise the caller's matrix in place.  A CSR
    or CSC matrix already canonical is returned as it is, another one as a
    canonical copy; another sparse format (COO, DOK, LIL, BSR, DIA) becomes a
    new CSR matrix, its duplicates summed; anything not sparse (a dense array,
    a Dask array, row partitions) is returned as it is.

    Parameters
    ----------
    X : object

    Returns
    -------
    X : the same object, or a canonical CSR/CSC copy
    """
    if not sp.issparse(X):
        return X
    if X.format not in ("csr", "csc"):
        return X.tocsr()  # (a new matrix, duplicates summed)
    if X.has_canonical_format:
        return X
    X = X.copy()
    X.sum_duplicates()
    return X


def _canonical(X, container):
    """``container(X)`` (CSR or CSC) with duplicates summed, on a copy if it must change
    (never the caller's matrix)."""
    return canonical_sparse(container(X))


def _sparse_centred_squares(X, w, mean):
    """Weighted squares about ``mean`` of sparse columns, without densifying.

    :math:`\\sum_i w_i (x_{ij} - \\mu_j)^2`: the stored values' terms plus
    :math:`\\mu_j^2` times the weight of the rows not stored.  A second
    pass, as for dense columns: one-pass moments
    (:math:`E[x^2] - E[x]^2`) lose a column far from zero (a Unix time in a
    CSR matrix got a scale 150 times its spread, and every model fell to
    near chance on it).

    Parameters
    ----------
    X : sparse matrix of shape (n_samples, n_features)
    w : ndarray of shape (n_samples,)
        Row weights.
    mean : ndarray of shape (n_features,)

    Returns
    -------
    ndarray of shape (n_features,)
    """
    Xc = _canonical(X, sp.csc_matrix)
    mean = np.asarray(mean, dtype=np.float64)
    cols = np.repeat(np.arange(Xc.shape[1]), np.diff(Xc.indptr))
    ws = np.asarray(w, dtype=np.float64)[Xc.indices]
    with np.errstate(over="ignore", invalid="ignore"):
        d = Xc.data.astype(np.float64) - mean[cols]
        stored = np.bincount(cols, weights=ws * d * d, minlength=Xc.shape[1])
        w_stored = np.bincount(cols, weights=ws, minlength=Xc.shape[1])
        # weight of the rows not stored; exactly 0 when every row of positive
        # weight is stored (sum(w) - w_stored is rounding there, and times
        # mean^2 it would swamp the spread of a far-offset column)
        full = np.bincount(cols, weights=ws > 0, minlength=Xc.shape[1]) \
            == np.count_nonzero(np.asarray(w) > 0)
        w_zero = np.where(full, 0.0, np.sum(w) - w_stored)
        return stored + w_zero * mean**2
