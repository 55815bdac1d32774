"""The kernel regressors' training range, and predictions on inputs clipped to it.

An RBF kernel model's prediction falls back to its intercept (the training
mean) as an input moves away from every training row, and a random Fourier
feature oscillates there; neither is an estimate.  On a test row beyond the
training range of a column (an income 2.1 times the largest seen, say) both
miss by more than the edge of the fitted function would: on ``engel``
(``benchmarks/suite.py --unseen``) one such row made seed 0's MSE 1.16x
(``InfiniteFeatureRegressor``) and 1.41x (``LowRankKernelRegressor``) that of
the baseline, 0.56x and 0.77x on inputs clipped to the range (BENCHMARKS.md,
"Test rows beyond the training range").  The regressors therefore record
each column's training range (``x_range_``) and predict on inputs clipped
to it: the fitted function is extended by its value at the nearest edge of
the box.  Rows inside the range (every training row) are unchanged.
"""

import numpy as np
import scipy.sparse as sp

from .._partitioned_linear import block_column_range


def record_input_range(est, X, sample_weight=None):
    """Store ``est.x_range_``: each column's training minimum and maximum.

    Rows of zero weight are left out (a zero weight removes the row).  A
    ``dask.array`` fitted on its cluster (GrFL's rows there) has its range
    reduced on the cluster; a precomputed Gram matrix (pass ``None``) gets
    ``None``, and its predictions are not clipped.

    Parameters
    ----------
    est : BaseEstimator
        The regressor being fitted.
    X : ndarray, sparse matrix, DaskGrFLRows or None
        The validated raw training inputs.
    sample_weight : ndarray of shape (n_samples,), optional
    """
    est.x_range_ = None
    if hasattr(X, "column_range"):  # a dask.array's rows on its cluster (unweighted)
        est.x_range_ = X.column_range()
        return
    if not (isinstance(X, np.ndarray) or sp.issparse(X)) or X.shape[0] == 0:
        return
    if sample_weight is not None:
        keep = np.flatnonzero(np.asarray(sample_weight) > 0)
        if keep.size == 0:
            return
        X = X[keep]
    est.x_range_ = block_column_range(X)


def clip_to_input_range(x_range, Xt, st):
    """Standardised ``Xt`` with each column clipped to the map of ``x_range``.

    Clipping after the input map ``st`` (which refuses values too large for
    float64 first) equals clipping the raw inputs: the bounds go through the
    same map, so a training row's values stay exactly as they were.  Sparse
    input stays sparse in its format; a column that held no zero in training
    (its range excludes 0) has its implicit zeros replaced by the nearest
    edge.

    Parameters
    ----------
    x_range : ndarray of shape (2, n_features) or None
        A fitted regressor's ``x_range_`` (``None``: no clipping, as for model
        files written before it was recorded).
    Xt : ndarray or sparse matrix of shape (n_samples, n_features)
        Inputs mapped by ``st``.
    st : kernlearn.preprocessing.Standardization
        The fitted input map.

    Returns
    -------
    ndarray or sparse matrix
        ``Xt`` itself when no value is outside the range (dense) or no range.
    """
    rng = x_range
    if rng is None:
        return Xt
    if sp.issparse(Xt):
        lo, hi = st.transform(sp.csr_matrix(rng)).toarray().astype(Xt.dtype)
    else:
        lo, hi = np.asarray(st.transform(rng)).astype(Xt.dtype)
        if np.all((Xt >= lo) & (Xt <= hi)):
            return Xt
        return np.clip(Xt, lo, hi)
    fmt = Xt.format
    Xc = Xt.tocsc(copy=True)
    col = np.repeat(np.arange(Xc.shape[1]), np.diff(Xc.indptr))
    Xc.data = np.clip(Xc.data, lo[col], hi[col])
    edge = np.where(lo > 0, lo, np.where(hi < 0, hi, 0))
    rows, cols = [], []
    for j in np.flatnonzero(edge):  # implicit zeros outside the range
        missing = np.ones(Xc.shape[0], dtype=bool)
        missing[Xc.indices[Xc.indptr[j]:Xc.indptr[j + 1]]] = False
        r = np.flatnonzero(missing)
        rows.append(r)
        cols.append(np.full(r.size, j))
    if rows:
        r, c = np.concatenate(rows), np.concatenate(cols)
        Xc = Xc + sp.csc_matrix((edge[c], (r, c)), shape=Xc.shape, dtype=Xc.dtype)
    return Xc.asformat(fmt)
