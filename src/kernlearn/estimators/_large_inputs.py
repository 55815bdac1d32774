"""Inputs of the fits that read ``X`` by row blocks: Dask DataFrames, tables in memory.

FGM reads ``X`` by row blocks (out of core with ``memory_budget``, or on a
Dask cluster) and GrFL on a Dask cluster.  What reaches those paths is an
array, a matrix or a chunk source; this module turns the user's other
containers into one, with the checks an in-memory fit makes on them
(numeric columns, feature names), checks their targets
(:func:`validate_partitioned_fit`) and maps them (:func:`mapped_targets`).
"""

import numpy as np
import scipy.sparse as sp

from ..partitioned import _is_dask_array, _is_dask_frame, as_row_partitioned, is_out_of_core
from ..utils._finite import (block_first_non_finite, first_non_finite,
                             first_non_finite_of_blocks, non_finite_message)
from ..utils._input_kinds import block_floats, refuse_unlike_array
from ._base import (
    _non_numeric_error,
    _refuse_missing,
    _reordered_error,
    check_two_classes,
    validate_fit_data,
    validate_predict_data,
)

__all__ = ["dask_array_numbers", "dask_frame_values", "mapped_targets",
           "partitioned_fit_inputs", "partitioned_predict_input", "row_block_scores",
           "validate_partitioned_fit"]


def dask_frame_values(est, X, reset):
    """A Dask DataFrame's values as a ``dask.array``, its columns checked as a pandas one's.

    Only the columns and their types are read (the frame's empty pandas
    ``_meta``): the rows stay where they are.  At fit (``reset``) the column
    names are recorded as ``feature_names_in_`` (set after the fit's other
    checks, which clear it) and the partitions' lengths are computed (only the
    sizes reach the client); at predict time the names are checked against
    the fit's and the array stays lazy.

    Parameters
    ----------
    est : BaseEstimator
    X : dask.dataframe.DataFrame
    reset : bool
        Fit (True) or predict (False).

    Returns
    -------
    values : dask.array.Array of shape (n_samples, n_features)
    names : ndarray of str or None
        The names to record at fit (None at predict time or without string names).

    Raises
    ------
    ValueError
        For a column that is not numbers (text, categories, dates), or at
        predict time for the fit's columns in another order.
    """
    from sklearn.utils.validation import _check_feature_names, _get_feature_names

    meta = X._meta
    bad = [f"{name!r} ({dtype})" for name, dtype in meta.dtypes.items()
           if getattr(dtype, "kind", "O") not in "biuf"]
    if bad:
        raise _non_numeric_error(est, bad)
    names = None
    if reset:
        names = _get_feature_names(meta)
    else:
        moved = _reordered_error(est, meta, {"reset": False})
        if moved is not None:
            raise moved
        _check_feature_names(est, meta, reset=False)  # (missing or other names)
    if not all(isinstance(dtype, np.dtype) for dtype in meta.dtypes):
        # nullable columns (Int64, Float64, boolean) would be object arrays:
        # as floats, a missing value is NaN, refused with its row by the fit
        X = X.astype(np.float64)
    return _values(X, reset), names


def _values(X, lengths):
    """The ``dask.array`` of a Dask DataFrame's or Series' values (``lengths``: known)."""
    if not isinstance(X._meta.values, np.ndarray):
        # pandas' string, categorical and nullable values (text labels; numbers
        # are made floats by the caller) as the object array Dask makes of
        # them, without its warning that it does: hiding that took
        # warnings.catch_warnings, the process's filters (conversions in
        # threads overlapping in it left its ignore filter for good)
        X = X.astype(object)
    return X.to_dask_array(lengths=True) if lengths else X.to_dask_array()


def partitioned_fit_inputs(est, X, y, classification):
    """``X, y`` of a fit that reads ``X`` by row blocks, and the feature names to record.

    A Dask DataFrame becomes the ``dask.array`` of its values
    (:func:`dask_frame_values`; it was computed into the client, all of it,
    and its column names were lost), a Dask Series ``y`` that of its values
    (it stays on the cluster).  Data already in memory that is not an array
    (a pandas DataFrame, a list, a COO matrix), given with ``memory_budget``,
    is validated as in memory first (a DataFrame's names kept): reading it
    by blocks failed on an attribute it lacks (``'DataFrame' object has no
    attribute 'dtype'``).

    Parameters
    ----------
    est : BaseEstimator
    X, y : object
        The fit's arguments.
    classification : bool

    Returns
    -------
    X, y : object
        Arrays, matrices or chunk sources the row-block fit reads.
    names : ndarray of str or None
        ``feature_names_in_`` to set once the partitioned checks are done.
    """
    names = None
    if _is_dask_frame(y):
        y = _values(y, True)
    if _is_dask_frame(X):
        X, names = dask_frame_values(est, X, reset=True)
    elif _is_dask_array(X):
        X = dask_array_numbers(est, X)
    elif not (is_out_of_core(X) or _plain_numbers(X)):
        X, y = validate_fit_data(est, X, y, classification=classification,
                                 y_numeric=not classification)
        names = getattr(est, "feature_names_in_", None)
    return X, y, names


def partitioned_predict_input(est, X):
    """``X`` at predict time of a model that predicts by row blocks.

    The counterpart of :func:`partitioned_fit_inputs`: a Dask DataFrame's
    values (lazy, names checked), in-memory data that is not an array
    validated as in memory (names checked), anything else unchanged.
    """
    if _is_dask_frame(X):
        return dask_frame_values(est, X, reset=False)[0]
    if _is_dask_array(X):
        return dask_array_numbers(est, X)
    if is_out_of_core(X) or _plain_numbers(X):
        return X
    return validate_predict_data(est, X)


def _plain_numbers(X):
    """Whether ``X`` is read by blocks as it is: a NumPy array (or memory map) of
    real numbers, or a CSR/CSC matrix."""
    if isinstance(X, np.ndarray):
        return X.dtype.kind in "biuf"
    return sp.issparse(X) and X.format in ("csr", "csc")


def dask_array_numbers(est, X):
    """A ``dask.array`` as numbers, refused as in memory when they are not.

    Its type alone is checked (nothing is read): dates, complex numbers and
    structured arrays are refused with the in-memory fit's words (a complex
    array was fitted on its real parts by GrFL, and failed on a worker with
    NumPy's "Iterator operand 0 dtype could not be cast ..." in FGM), and text
    or objects are read as floats, as in memory (a cell that is not a number
    fails where it is read, naming its value, row and column: :func:`block_floats`).

    Parameters
    ----------
    est : BaseEstimator
    X : dask.array.Array

    Returns
    -------
    dask.array.Array
    """
    meta = getattr(X, "_meta", None)
    if not isinstance(meta, np.ndarray):  # (sparse chunks: numbers by construction)
        return X
    refuse_unlike_array(meta, "X", type(est).__name__)
    if meta.dtype.kind not in "USO":
        return X
    # (each block on its worker; a cell that is not a number named by row and column,
    # where X.astype(float) raised NumPy's "could not convert string to float" alone)
    return X.map_blocks(block_floats, type(est).__name__, dtype=np.float64,
                        meta=np.zeros((0,) * X.ndim))


class _NonFiniteBlock(Exception):
    """A row block held a NaN or infinite value (:func:`row_block_scores`)."""


def row_block_scores(est, X, scores):
    """``scores`` of ``X`` read by row blocks (FGM's ``memory_budget``, a chunk
    source), refused as an in-memory ``X`` is when it holds a NaN or infinity.

    FGM's scores read only the weighted columns (or add their exact zeros):
    unchecked, a NaN in another column gave a finite prediction where
    in-memory and Dask ``X`` are refused, and one in a weighted column was
    called "finite but too large" by the outputs' check.  Each block is
    checked once read (a finite sum proves its values finite); on a NaN or
    infinity, a second pass names the first over all of ``X``.

    Parameters
    ----------
    est : BaseEstimator
        The fitted estimator (``memory_budget``, its name).
    X : ndarray, sparse matrix, RowPartitioned or chunk source
        Checked for shape.
    scores : callable
        ``scores(block)``: the block's outputs.

    Returns
    -------
    ndarray
        The blocks' outputs, stacked.
    """
    rows = as_row_partitioned(X, est.memory_budget)

    def checked(block):
        values = block.data if sp.issparse(block) else block
        with np.errstate(over="ignore", invalid="ignore"):
            if not np.isfinite(values.sum()) and first_non_finite(block) is not None:
                raise _NonFiniteBlock
        return scores(block)

    try:
        return rows.map_stack(checked)
    except _NonFiniteBlock:
        found = first_non_finite_of_blocks(rows.map_stack(block_first_non_finite), rows.bounds)
        raise ValueError(non_finite_message(found, type(est).__name__)) from None


def validate_partitioned_fit(est, rows, y, classification):
    """Validate ``y`` against row-partitioned ``X`` (out of core or on a cluster).

    ``X`` is not read here: its finiteness is checked in the first pass over
    it (the column norms of the feature scaling).  ``y`` is brought into
    memory (it has ``n_samples`` entries).

    Parameters
    ----------
    est : BaseEstimator
        The estimator (``n_features_in_`` is set).
    rows : RowPartitioned
    y : array-like of shape (n_samples,)
    classification : bool
        Classification targets (two or more classes) or finite numbers.

    Returns
    -------
    rows : RowPartitioned
    y : ndarray of shape (n_samples,)
    """
    n, m = rows.shape
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.shape != (n,):
        raise ValueError(f"y has shape {y.shape}; X has {n} rows.")
    if n < 2 or m < 1:
        raise ValueError(f"X of shape {rows.shape}: need at least 2 samples and 1 feature.")
    if classification:
        check_two_classes(y)
    else:
        y = np.asarray(y, dtype=np.float64)
        # (named by its first row, as in memory: "y contains NaN or infinity" alone)
        _refuse_missing(y, np.isnan(y))
        _refuse_missing(y, np.isinf(y), "an infinite value")
    est.n_features_in_ = m
    if hasattr(est, "feature_names_in_"):
        del est.feature_names_in_
    return rows, y


def mapped_targets(ts, y, sample_weight):
    """``ts.transform(y)`` with a zero weight's target mapped to 0.

    A fit by row blocks keeps the rows of zero weight (it skips them): their
    targets, absent from the map, were mapped too, and one near 1e308
    overflowed with NumPy's bare warning (from a worker for a Dask ``y``).
    """
    if sample_weight is None or np.all(sample_weight > 0):
        return ts.transform(y)
    keep = np.asarray(sample_weight) > 0
    if _is_dask_array(y):
        import dask.array as da

        return ts.transform(da.where(da.from_array(keep, chunks=y.chunks[:1]), y, ts.mean[0]))
    return ts.transform(np.where(keep.reshape((-1,) + (1,) * (y.ndim - 1)), y,
                                 ts.mean[0] if y.ndim == 1 else ts.mean))
