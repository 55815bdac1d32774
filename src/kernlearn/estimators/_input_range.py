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

Their parameter ``out_of_bounds`` (scikit-learn's ``IsotonicRegression``
precedent) chooses: ``"clip"`` (as above), ``"raise"`` (a row that clipping
would change is refused, named), ``"extend"`` (the model's own function,
unclipped: a trend that goes on past the data) or ``"auto"`` (the default:
``"clip"``, except for a kernel that grows without bound beyond the data,
SLKL's ``"linear"`` and ``"poly"``, whose model is a trend and ``"extend"``s:
clipped, a linear kernel's model was flat beyond the range, test MSE 1.48
against 0.0008 on rows up to twice the range).  One function
decides, :func:`bounded_inputs`, called by the decision objects
(:mod:`kernlearn.estimators._decisions`, in memory and on Dask workers).
"""

import numpy as np
import scipy.sparse as sp

from .._partitioned_linear import block_column_range
from ..methods._kept_rows import positive_rows

#: ``out_of_bounds``'s values (the regressors' parameter constraint).
OUT_OF_BOUNDS = ("auto", "clip", "raise", "extend")

#: Kernels whose model grows without bound beyond the data (a trend, not a
#: fall-back to the intercept): ``out_of_bounds="auto"`` extends them.
UNBOUNDED_KERNELS = ("linear", "poly")

#: The parameter's entry in the regressors' docstrings.
OUT_OF_BOUNDS_DOC = """    out_of_bounds : {"auto", "clip", "raise", "extend"}, default="auto"
        What :meth:`predict` (and GrFL's ``transform``) does with an input
        beyond its column's training range (``x_range_``), where an RBF
        model falls back to its intercept and random Fourier features
        oscillate: ``"clip"`` predicts on the input clipped to the range
        (the model's value at the nearest edge);
        ``"raise"`` refuses it with a ``ValueError`` naming the first such
        row and column, its value and the range (exactly the rows ``"clip"``
        would change; on a ``dask.array``, when computed, the first such row
        in row order, counted over all of ``X``); ``"extend"`` uses the model's own function there
        (a trend that goes on past the data may be followed, or not).
        ``"auto"`` is ``"clip"``, except for a kernel whose model grows
        without bound beyond the data (``kernel="linear"`` or ``"poly"``),
        where it is ``"extend"``: clipped, such a model is flat beyond the
        range.  A
        column constant in training is ignored by a standardised model
        (``x_scale_`` ``inf``), so never clipped nor refused there; with
        ``standardize=False`` the model reads it, and it is clipped (or
        refused) as any other.  Without a range (``x_range_`` ``None``: a
        precomputed kernel, a model file written before it was recorded) no
        input is.  The parameter changes no fitted number.  A model file
        written without it loads with ``"auto"``.
"""


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
    keep = None if sample_weight is None else positive_rows(np.asarray(sample_weight))
    if keep is not None:  # (all rows of positive weight: read in place, not copied)
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


def out_of_bounds_mode(est):
    """``est.out_of_bounds``, checked and resolved (``"auto"`` if absent: the
    classifiers, and regressors pickled before the parameter).

    ``"auto"`` resolves to ``"extend"`` for a kernel of
    :data:`UNBOUNDED_KERNELS` (the fitted model's kernel) and to ``"clip"`` otherwise.

    Parameters
    ----------
    est : BaseEstimator

    Returns
    -------
    str
        ``"clip"``, ``"raise"`` or ``"extend"``.

    Raises
    ------
    ValueError
        For another value (set after the fit, which validates it).
    """
    mode = getattr(est, "out_of_bounds", "auto")
    if not (isinstance(mode, str) and mode in OUT_OF_BOUNDS):
        raise ValueError(f"The 'out_of_bounds' parameter of {type(est).__name__} must be "
                         f"one of {', '.join(map(repr, OUT_OF_BOUNDS))}; got {mode!r}.")
    if mode == "auto":
        # (the fitted model's kernel, where the estimator keeps it)
        kernel = est._model_kernel() if hasattr(est, "_model_kernel") else getattr(
            est, "kernel", None)
        return "extend" if isinstance(kernel, str) and kernel in UNBOUNDED_KERNELS else "clip"
    return mode


def bounded_inputs(X, Xt, st, x_range, mode="clip"):
    """Standardised inputs as ``out_of_bounds`` says: clipped, refused or as they are.

    The one place that decides (the decision objects call it, in memory and
    on Dask workers).  ``"raise"`` refuses exactly the rows ``"clip"`` would
    change (:func:`clip_to_input_range`'s comparison, on the standardised
    scale: a column constant in training, ignored by a standardised model, is
    neither), float32 input beyond the bounds' float32 roundings only (a
    training row given in float32 may round outward; such a row is
    predicted as it is).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The raw inputs (for the value named in the error).
    Xt : ndarray or sparse matrix of shape (n_samples, n_features)
        ``X`` mapped by ``st``.
    st : kernlearn.preprocessing.Standardization
        The fitted input map.
    x_range : ndarray of shape (2, n_features) or None
        The regressor's ``x_range_`` (``None``: inputs as they are).
    mode : {"clip", "raise", "extend"}, default="clip"

    Returns
    -------
    ndarray or sparse matrix
        ``Xt`` clipped (``"clip"``) or itself.

    Raises
    ------
    OutsideTrainingRange
        With ``mode="raise"``, for a value beyond its column's range.
    """
    if x_range is None or mode == "extend":
        return Xt
    if mode == "clip":
        # (the float64 bounds whatever X's precision: float32 input predicts as
        # the same values given in float64)
        return clip_to_input_range(x_range, Xt, st)
    bounds = x_range
    if X.dtype == np.float32:
        # a float64 model's training rows given in float32 may round outward
        # (an edge value by 3e-10): refused only beyond the bounds' own float32
        # roundings, so the training rows are not
        r32 = x_range.astype(np.float32).astype(np.float64)
        bounds = np.vstack([np.minimum(x_range[0], r32[0]), np.maximum(x_range[1], r32[1])])
    clipped = clip_to_input_range(bounds, Xt, st)
    if clipped is Xt:
        return Xt
    if sp.issparse(Xt):
        moved = (sp.csr_matrix(clipped) != sp.csr_matrix(Xt)).tocoo()
        rows, cols = moved.row, moved.col
    else:
        rows, cols = np.nonzero(clipped != Xt)
    if rows.size == 0:
        return Xt
    first = np.lexsort((cols, rows))[0]
    i, j = int(rows[first]), int(cols[first])
    found = (i, j, float(X[i, j]), float(x_range[0, j]), float(x_range[1, j]),
             int(np.unique(rows).size))
    raise OutsideTrainingRange(outside_range_message(found), found)


def outside_range_message(found, who="the model", names=None, start=0, number=None):
    """The sentence refusing a row beyond the training range (``out_of_bounds="raise"``).

    Parameters
    ----------
    found : tuple of (int, int, float, float, float, int)
        ``(row, column, value, low, high, count)``: the first such value's
        row (within the rows given) and column, the value, the column's
        training range and how many rows are beyond it.
    who : str, default="the model"
        The estimator's name.
    names : array-like of str, optional
        The columns' names.
    start : int, float or None, default=0
        The first row of the rows given in ``X`` (None or NaN: unknown, the
        row is named within its block).
    number : int, optional
        The row block's number (a Dask prediction's block).

    Returns
    -------
    str
    """
    i, j, value, low, high, count = found
    column = repr(str(names[j])) if names is not None and j < len(names) else j
    local = start is None or start != start  # (NaN: Dask's unknown chunk sizes)
    row = f"row {i} of row block {number}" if local else f"row {int(start) + i}"
    counted = "in all" if number is None else (
        "in that block" if local else f"in row block {number}")
    return (f"X has a value beyond its column's training range at {row}, column {column}: "
            f"{value!r}, outside [{low!r}, {high!r}] ({count} row(s) beyond it {counted}); "
            f"{who} has out_of_bounds='raise': use out_of_bounds='clip' to predict its "
            "value at the nearest edge, or 'extend' for the model's own function there.")


class OutsideTrainingRange(ValueError):
    """A value beyond its column's training range (``out_of_bounds="raise"``).

    The decision object raising it knows neither the estimator's name nor the
    row's position in the whole ``X`` (a Dask block's); the prediction that
    called it names them (:meth:`named`).

    Parameters
    ----------
    message : str
        The sentence.
    found : tuple, optional
        As :func:`outside_range_message` takes it.
    """

    def __init__(self, message, found=None):
        super().__init__(message)
        self.found = found

    def named(self, who, names=None, start=0, number=None):
        """The same error naming ``who``, the columns' ``names`` and the row in ``X``.

        Parameters
        ----------
        who, names, start, number
            As :func:`outside_range_message` takes them.

        Returns
        -------
        OutsideTrainingRange
        """
        if self.found is None:
            return self
        return OutsideTrainingRange(
            outside_range_message(self.found, who, names, start, number), self.found)
