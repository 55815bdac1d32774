"""Shared estimator helpers: input validation and sparse-format policy."""

import dataclasses
import functools
import numbers
import sys

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import LabelEncoder
from sklearn.utils._param_validation import Hidden, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data as _sklearn_validate_data

from ..families._infinite import plain_float_matrix
from .._row_futures import fit_futures
from ..partitioned import _is_dask_array, _is_dask_frame
from ..progress import close_bars_opened_since, open_bars
from ..utils._finite import (first_non_finite, missing_rows_message, non_finite_message,
                             refuse_non_finite_outputs)
from ..utils._input_kinds import (
    first_bad_weight,
    first_non_number,
    not_a_number_message,
    ragged_rows,
    refuse_unlike_array,
)
from ..utils._messages import plain_value
from ..utils._sparse import canonical_sparse
from ..utils._threads import interrupts_watched
from ..utils._params import param_names, validate_params_cached  # noqa: F401

# (re-exported: the estimators and tests import them from here)
from ._platt import (  # noqa: F401
    PLATT_XFAIL,
    ProbabilityMixin,
    _has_proba,
    class_weight_keys,
    platt_sigmoid,
)
from ._renamed import RenamedParameters, _refuse_both, renamed_parameter  # noqa: F401


#: The constraint of a renamed parameter's old name beside its own values: its
#: default, "deprecated", is no value to pass (hidden from the error messages,
#: which list what a user may pass).
OLD_NAME = Hidden(StrOptions({"deprecated"}))


def all_or_nothing(fit):
    """Make ``fit`` leave the estimator as it was when it does not finish.

    A fit sets its attributes one after another (the input's standardisation
    first, the model last).  Interrupted part way (Ctrl-C, a ``MemoryError``,
    any exception), a fresh estimator would keep the first ones and pass
    ``check_is_fitted`` without a model, and a fitted one would predict with
    the new standardisation and the old model: a silent wrong answer.  The
    attributes are put back as they were before the call instead, so the
    estimator is either unfitted or holds its previous, whole model.  The
    progress bars the fit opened are closed
    (:func:`~kernlearn.progress.close_bars_opened_since`), and the futures a
    fit on a Dask cluster made are released
    (:func:`~kernlearn._row_futures.fit_futures`): the exception a notebook
    keeps held them, and the cluster the fit's data.  A fit in another thread
    than the main one stops when the main thread is interrupted
    (:func:`~kernlearn.utils._threads.interrupts_watched`): a Ctrl-C while a
    threaded search waits for it.

    Parameters
    ----------
    fit : callable
        The estimator's ``fit`` method.

    Returns
    -------
    wrapper : callable
    """
    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        before, bars = dict(vars(self)), open_bars()
        try:
            with fit_futures(), interrupts_watched():
                return fit(self, *args, **kwargs)
        except BaseException:
            vars(self).clear()
            vars(self).update(before)
            close_bars_opened_since(bars)  # (their fit never reached their close)
            raise

    return wrapper


def check_two_classes(y, weighted=False):
    """Check classification targets and require at least two classes.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    weighted : bool, default=False
        Whether ``y`` holds the rows of positive weight only (the message then
        says so: "a single class" of a ``y`` holding two, the other's rows all
        of weight zero, read as a wrong count).

    Raises
    ------
    ValueError
        If ``y`` is not a classification target or holds a single class.
    """
    classes = np.unique(y) if _plain_labels(y) else None
    if classes is None or classes.size > round(0.5 * len(y)):
        # sklearn's own check (and its warning on as many classes as samples)
        try:
            check_classification_targets(y)
            classes = np.unique(y)
        except TypeError as exc:
            raise _unordered(y, "y", "labels", exc) from None
    if classes.size < 2:
        weight = " of positive weight" if weighted else ""
        raise ValueError(f"y contains a single class{weight} ({plain_value(classes[0])!r}); "
                         "a classifier needs more than one class"
                         + (" (the other classes' rows all weigh zero)." if weighted else "."))


def encode_labels(y):
    """``LabelEncoder``'s ``classes_`` and codes of ``y``.

    The classes keep the labels' dtype, as scikit-learn's classifiers do
    (text of dtype object stays object: ``LabelBinarizer`` made it a
    fixed-width ``"<U"`` array, in which a longer label assigned to a
    prediction was cut).  For plain labels (:func:`_plain_labels`) this is
    the same ``np.unique`` without its checks (a tenth of a 100-row fit).

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Class labels, validated.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        The sorted distinct labels.
    codes : ndarray of shape (n_samples,)
        The position of each label in ``classes``.
    """
    if _plain_labels(y):
        return np.unique(y, return_inverse=True)
    enc = LabelEncoder().fit(y)
    return enc.classes_, enc.transform(y)


def _unordered(values, name, what, exc):
    """The TypeError to raise for ``values`` whose sorting raised ``exc``.

    Values of mixed kinds (None among strings, numbers and strings) get one
    naming the argument and the cause: NumPy's own ("'<' not supported between
    instances of 'NoneType' and 'str'") named neither.  Values of one kind keep
    ``exc`` (scikit-learn's refusal of bytes labels, for one).
    """
    kinds = sorted({type(v).__name__ for v in np.asarray(values, dtype=object).ravel()})
    if len(kinds) < 2:
        return exc
    return TypeError(f"{name} mixes {what} of types {', '.join(kinds)}, which cannot be "
                     "ordered (a missing value?); use one kind: all numbers or all "
                     "strings.")


def _plain_labels(y):
    """Whether ``y`` is a non-empty 1-D array of integer, boolean or str labels.

    Such targets are always ``"binary"`` or ``"multiclass"`` for
    :func:`~sklearn.utils.multiclass.check_classification_targets`, whose
    general type inference costs a fixed fraction of a millisecond per fit;
    anything else (floats, objects, bytes, 2-D) goes through it.
    """
    return isinstance(y, np.ndarray) and y.ndim == 1 and y.size > 0 and y.dtype.kind in "biuU"


def validate_data(est, X="no_validation", y="no_validation", **kwargs):
    """scikit-learn's ``validate_data``, naming a DataFrame's non-numeric columns.

    On a ``pandas.DataFrame`` that cannot be made a float array, scikit-learn
    raised NumPy's message, naming no column ("could not convert string to
    float: 'x'"; for dates "The DType <class 'numpy.dtypes.Float64DType'>
    could not be promoted by ...").  A missing or infinite value of ``X``
    (dense, sparse or a DataFrame) is named by row and column (scikit-learn's
    "Input X contains NaN" named neither; it is looked for in the values, not
    in those words), a regressor's text target as such, and ``y`` goes through
    :func:`target_values` (pandas targets keep their label type; a missing
    label is named).  Other input it accepts is unchanged.

    NumPy input whose numbers are not what they seem (masked cells, dates,
    complex numbers, a structured array; :mod:`kernlearn.utils._input_kinds`)
    is refused naming the argument, as are a sparse ``y``, a cell that is not
    a number, rows of different lengths and a DataFrame's columns in another
    order than at fit.

    Dense arrays come back C-ordered (``order="C"`` unless given; a 2-D
    ``y`` too), so that the model does not depend on the input's memory
    layout; big-endian float32 is float32.  A ``dask.array``
    (where an estimator reads its data in memory, e.g. to predict) is
    computed first, so that one of sparse chunks arrives as the sparse
    matrix it holds (NumPy's conversion made it a 0-d object array, refused
    as "Expected 2D array, got scalar array" with the whole matrix printed).

    Parameters
    ----------
    est : BaseEstimator
        The estimator validating its data.
    X, y : object
        As for :func:`sklearn.utils.validation.validate_data`.
    **kwargs
        Its other arguments.

    Returns
    -------
    As :func:`sklearn.utils.validation.validate_data`.
    """
    # dense arrays in one memory layout: a Fortran-ordered copy of the same data
    # (a DataFrame's values, np.asfortranarray) gave a model that differed in the
    # last bits, and on tied choices by more (BLAS sums in another order)
    kwargs.setdefault("order", "C")
    if _is_dask_array(X) or _is_dask_frame(X):
        X = X.compute()  # (a Dask DataFrame: a pandas one, its column names checked)
    owner = type(est).__name__
    refuse_unlike_array(X, "X", owner)
    if (isinstance(X, np.ndarray) and X.dtype.kind == "f" and X.dtype.itemsize == 4
            and not X.dtype.isnative):
        # big-endian float32 ('>f4') is float32: scikit-learn's dtype list did not
        # match it and made it float64, another precision than the same numbers'
        X = X.astype(np.float32)
    if not (isinstance(y, str) and y == "no_validation") and y is not None:
        if sp.issparse(y):
            # (scikit-learn's words; with multi_output=True it let a sparse y through,
            # and the multi-output regressors failed inside: "setting an array
            # element with a sequence")
            raise TypeError("Sparse data was passed for y, but dense data is required. "
                            "Use '.toarray()' to convert to a dense numpy array.")
        refuse_unlike_array(y, "y", owner, dates=bool(kwargs.get("y_numeric")))
        y = target_values(y)
    if not kwargs.get("accept_sparse", False) and (sp.issparse(X) or _all_sparse_columns(X)):
        # (scikit-learn's "Use '.toarray()'" does not convert a DataFrame of sparse
        # columns, which it refused in the same words)
        raise TypeError(f"Sparse data was passed for X, but dense data is required by {owner}. "
                        "Convert it first: X.toarray() for a sparse matrix, "
                        "X.sparse.to_dense() for a DataFrame of sparse columns.")
    try:
        out = _sklearn_validate_data(est, X, y, **kwargs)
    except (ValueError, TypeError) as exc:
        bad = _non_numeric_columns(X)
        if bad:
            raise _non_numeric_error(est, bad) from exc
        # (found in the values, not in scikit-learn's wording, which may change)
        where = _first_non_finite(X) if _finite_checked_first(est, X, kwargs) else None
        if where is not None:
            found, row_label, column_name = where
            raise ValueError(non_finite_message(found, type(est).__name__, row_label,
                                                column_name)) from exc
        cell = first_non_number(X)  # (NumPy's "could not convert ..." named no cell)
        if cell is not None:
            # (NumPy's words and exception type kept: scikit-learn's checks look for them)
            raise type(exc)(not_a_number_message(cell, exc, type(est).__name__)) from exc
        moved = _reordered_error(est, X, kwargs)
        if moved is not None:
            raise moved from exc
        rows = ragged_rows(X)
        if rows is not None:
            raise ValueError(f"X has rows of different lengths ({rows}); "
                             f"{type(est).__name__} needs one value per feature in every "
                             "row.") from exc
        if (kwargs.get("y_numeric") and not kwargs.get("multi_output")
                and np.ndim(y) == 2 and np.shape(y)[1] > 1):
            # (scikit-learn's "y should be a 1d array" did not say what to do)
            raise ValueError(
                f"y has {np.shape(y)[1]} columns (outputs); {owner} fits one target "
                f"per row. Fit one model per output (sklearn's MultiOutputRegressor"
                f"({owner}(...))), or use a regressor that fits the outputs together "
                "(InfiniteFeatureRegressor, LowRankKernelRegressor).") from exc
        text = _text_target(y) if kwargs.get("y_numeric") else None
        if text is not None:
            raise ValueError(f"y holds text ({text!r}...); {type(est).__name__} is a "
                             "regressor and needs numbers (a classifier takes text "
                             "labels).") from exc
        raise
    if isinstance(out, tuple) and isinstance(out[1], np.ndarray) and out[1].ndim == 2:
        # targets of several outputs in one layout too: a DataFrame's (Fortran-
        # ordered) gave another model than the same array's (up to 2e-2 apart
        # for the random-feature regressor; order="C" above is X's only)
        out = out[0], np.ascontiguousarray(out[1])
    return out


def target_values(y):
    """``y`` as a NumPy array of its labels' own type, or unchanged.

    A pandas target of nullable booleans or integers (``boolean``, ``Int64``),
    or of categories, became floats in scikit-learn's validation, so a
    classifier fitted on ``True``/``False`` predicted ``0.0``/``1.0``; Python
    bools in an object array were refused as "Unknown label type".  Here they
    keep their type, and integers in an object array are integers.  A missing
    label (``None``, NaN, ``pd.NA``) is refused
    with its row (it was "Input contains NaN" or "boolean value of NA is
    ambiguous").  Plain NumPy arrays of numbers or strings pass unchanged.

    Parameters
    ----------
    y : array-like
        Targets.

    Returns
    -------
    ndarray or object
        The converted targets, or ``y`` itself.

    Raises
    ------
    ValueError
        A label is missing.
    """
    pandas_like = hasattr(y, "dtype") and hasattr(y, "to_numpy") and hasattr(y, "isna")
    if isinstance(y, np.ndarray) and y.dtype.kind == "f":
        # (a NaN label of a float array was scikit-learn's "Input y contains
        # NaN", without the row; a pandas Series of the same floats named it)
        _refuse_missing(y, np.isnan(y))
        _refuse_missing(y, np.isinf(y), "an infinite value")
        return y
    if hasattr(y, "columns") and hasattr(y, "isna"):  # a DataFrame of targets
        _refuse_missing(y, np.asarray(y.isna()))
        if y.shape[1] == 1:
            # one column (scikit-learn ravels it, with a warning): its labels keep
            # their type as a Series' do (True/False were predicted as 0.0/1.0)
            return target_values(y.iloc[:, 0]).reshape(-1, 1)
        return y
    if not pandas_like and not (isinstance(y, np.ndarray) and y.dtype == object):
        return y
    import pandas as pd

    _refuse_missing(y, np.asarray(pd.isna(y)))
    if pandas_like:
        dtype = y.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            dtype = dtype.categories.dtype
        numpy_dtype = getattr(dtype, "numpy_dtype", None)  # nullable boolean, Int64, Float64
        if numpy_dtype is not None and numpy_dtype.kind == "U":
            # (pyarrow text, as read_csv(dtype_backend="pyarrow") gives: labels of
            # dtype object, as pandas' own text and scikit-learn's classifiers
            # have them, not fixed-width "<U")
            numpy_dtype = None
        y = (y.to_numpy(dtype=numpy_dtype) if numpy_dtype is not None
             else np.asarray(y.to_numpy(dtype=dtype if isinstance(dtype, np.dtype) else None)))
    if y.dtype == object and y.size and all(isinstance(v, (bool, np.bool_)) for v in y.ravel()):
        y = y.astype(bool)
    elif y.dtype == object and y.size and all(
            isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
            for v in y.ravel()):
        # integers in an object array (a pandas column of dtype object) were
        # scikit-learn's "Unknown label type: unknown. Maybe you are trying to
        # fit a classifier ... on a regression target": they are integer labels
        try:
            y = y.astype(np.int64)
        except OverflowError:  # (beyond int64: left to scikit-learn)
            pass
    return y


def _refuse_missing(y, missing, what="a missing value", name="y"):
    """ValueError naming the first row of targets ``y`` that ``missing`` marks
    (an array of ``y``'s shape; a row of a 2-D ``y`` is missing in any column)
    as holding ``what`` (``name``: the argument, e.g. ``"task_index"``)."""
    if missing.any():
        rows = missing.reshape(len(missing), -1).any(axis=1) if missing.ndim else missing
        i = int(np.flatnonzero(rows)[0])
        # (pandas' index labels; a list's or tuple's index is a method: task ids
        # given as a list stopped on "'builtin_function_or_method' object is not
        # subscriptable")
        index = getattr(y, "index", None)
        label = plain_value(i if index is None or callable(index) else index[i])
        raise ValueError(missing_rows_message(i, int(rows.sum()), what, name, label))


def _all_sparse_columns(X):
    """Whether ``X`` is a DataFrame whose columns are all of a pandas sparse dtype
    (scikit-learn reads such a frame as a sparse matrix)."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns") or len(X.columns) == 0:
        return False
    return all(type(dt).__name__ == "SparseDtype" for dt in dtypes)


def _finite_checked_first(est, X, kwargs):
    """Whether a NaN or infinite value is what scikit-learn refuses ``X`` for
    before anything else (if ``X`` holds one).

    Its ``validate_data`` checks first that a DataFrame's columns are those of
    the fit and that sparse input is allowed: those refusals keep its words.
    """
    if kwargs.get("ensure_all_finite", True) is not True:  # (False, "allow-nan")
        return False
    if sp.issparse(X):
        return bool(kwargs.get("accept_sparse", False))
    fitted = getattr(est, "feature_names_in_", None)
    columns = getattr(X, "columns", None)
    return (kwargs.get("reset", True) or fitted is None or columns is None
            or not all(isinstance(c, str) for c in columns)
            or list(columns) == list(fitted))


def _reordered_columns(est, X, kwargs):
    """``"column 0 is 'b', was 'a' at fit"`` if DataFrame ``X`` at predict time
    has the fitted columns in another order, else None (scikit-learn's "Feature
    names must be in the same order as they were in fit" named none)."""
    fitted = getattr(est, "feature_names_in_", None)
    columns = getattr(X, "columns", None)
    if kwargs.get("reset", True) or fitted is None or columns is None:
        return None
    columns = list(columns)
    if (len(columns) != len(fitted) or sorted(map(str, columns)) != sorted(map(str, fitted))
            or columns == list(fitted)):
        return None
    j = next(k for k, (a, b) in enumerate(zip(columns, fitted)) if a != b)
    return f"column {j} is {plain_value(columns[j])!r}, was {plain_value(fitted[j])!r} at fit"


def _reordered_error(est, X, kwargs):
    """The error refusing DataFrame ``X`` whose columns are the fit's in another
    order (:func:`_reordered_columns`), or None."""
    moved = _reordered_columns(est, X, kwargs)
    if moved is None:
        return None
    return ValueError(f"X has the fit's feature names in another order ({moved}); "
                      "select the columns in the fit's order: X[model.feature_names_in_].")


def _first_non_finite(X):
    """Where the first NaN / missing or infinite value of ``X`` is, or None: the
    arguments of :func:`~kernlearn.utils._finite.non_finite_message` (the
    value's place, its row's index label and its column's name, for a
    DataFrame)."""
    columns = getattr(X, "columns", None)
    try:
        if columns is not None:
            A = np.column_stack([X.iloc[:, k].to_numpy(dtype=np.float64, na_value=np.nan)
                                 for k in range(X.shape[1])])
        elif sp.issparse(X):
            A = X
        else:
            A = np.asarray(X)  # (complex numbers: refused as such, first)
            pd = sys.modules.get("pandas")  # (pd.NA can only come with pandas loaded)
            if A.dtype == object and pd is not None:
                # pd.NA among numbers is a missing value (it was "not a number")
                A = np.where(pd.isna(A), np.nan, A)
            A = None if A.dtype.kind == "c" else A.astype(np.float64, copy=False)
        found = None if A is None or A.ndim != 2 else first_non_finite(A)
    except (ValueError, TypeError):
        return None
    if found is None:
        return None
    i, j = found[:2]
    if columns is None:
        return found, None, None
    return found, plain_value(X.index[i]), columns[j]


def _text_target(y):
    """The first text value of targets ``y`` that are not numbers, or None."""
    values = np.asarray(y, dtype=object).ravel()
    for v in values:
        if isinstance(v, str):
            try:
                float(v)
            except ValueError:
                return v
    return None


def _non_numeric_error(est, bad):
    """The error refusing the non-numeric columns ``bad`` (``"'name' (dtype)"``)."""
    return ValueError(f"X has non-numeric column(s) {', '.join(bad[:5])}"
                      + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
                      + f"; {type(est).__name__} needs numbers: encode or drop them.")


def _non_numeric_columns(X):
    """``"'name' (dtype)"`` of each column of DataFrame ``X`` that is not numbers."""
    if not (hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")):
        return []
    bad = []
    for k, (name, dtype) in enumerate(zip(X.columns, X.dtypes)):
        if getattr(dtype, "kind", "") in "mM":  # dates and durations: not measures
            bad.append(f"{name!r} ({dtype})")
            continue
        try:
            # missing values of nullable columns are NaN here (refused later,
            # and named, by the finiteness check)
            X.iloc[:, k].to_numpy(dtype=np.float64, na_value=np.nan)
        except (ValueError, TypeError):
            bad.append(f"{name!r} ({dtype})")
    return bad


def validate_fit_data(est, X, y, classification, y_numeric=False):
    """Validate ``X, y`` for ``fit``: finite, 2-D, CSR/CSC or dense, float.

    Sparse input is converted to CSC (column pricing) without densifying.

    Parameters
    ----------
    est : BaseEstimator
        The estimator (for ``n_features_in_`` bookkeeping).
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    classification : bool
        Check classification targets and require two or more classes.
    y_numeric : bool, default=False
        Require numeric targets (regression).

    Returns
    -------
    X : ndarray or scipy.sparse.csc_matrix
    y : ndarray
    """
    if not record_plain_fit_data(est, X, y, classification):
        X, y = validate_data(
            est, X, y, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32],
            y_numeric=y_numeric, ensure_min_samples=2,
        )
    if classification:
        check_two_classes(y)
    if sp.issparse(X):
        X = canonical_sparse(sp.csc_matrix(X))
        if X.nnz < 2**31:
            X.indices = X.indices.astype(np.int32, copy=False)
            X.indptr = X.indptr.astype(np.int32, copy=False)
    return X, y


def record_plain_fit_data(est, X, y, classification):
    """Record on ``est`` what ``validate_data`` records, if ``X, y`` need no checks.

    For input :func:`_plain_fit_data` accepts, ``validate_data`` would return
    ``X, y`` as they are; its fixed cost (a fifth of a small fit) is skipped
    and only its bookkeeping done (``n_features_in_``, no
    ``feature_names_in_``).

    Parameters
    ----------
    est : BaseEstimator
        The estimator being fitted.
    X : object
        Training inputs.
    y : object
        Targets.
    classification : bool
        Whether ``y`` holds class labels.

    Returns
    -------
    bool
        Whether ``X, y`` were plain (otherwise nothing was recorded).
    """
    if not _plain_fit_data(X, y, classification):
        return False
    if hasattr(est, "feature_names_in_"):
        del est.feature_names_in_
    est.n_features_in_ = X.shape[1]
    return True


def _plain_fit_data(X, y, classification):
    """Whether ``validate_data`` would accept ``X, y`` and return them as they are.

    True for a finite float64/float32 ``numpy.ndarray`` ``X`` with at least
    two rows and one column, and a C-contiguous 1-D ``y`` of as many numbers
    (or, for a classifier, labels): no conversion, copy or error is due.  A
    finite sum proves every entry finite (NaN and infinity propagate); a sum
    that overflows just takes the general path.
    """
    if not (type(y) is np.ndarray and y.ndim == 1 and y.flags.c_contiguous
            and y.dtype.kind in ("biufU" if classification else "biuf")):
        return False
    if not (plain_float_matrix(X) and X.shape[0] == y.shape[0] >= 2):
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        return y.dtype.kind != "f" or bool(np.isfinite(y.sum()))


def validate_predict_data(est, X):
    """Validate ``X`` at predict time against the fitted ``n_features_in_``."""
    if plain_predict_data(est, X, sparse=True):
        return canonical_sparse(X)  # (a dense X as it is)
    X = validate_data(
        est, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], reset=False
    )
    return canonical_sparse(X) if sp.issparse(X) else X


def finite_outputs(est, values, X=None, what="predictions"):
    """``values``, the outputs of ``est`` on finite ``X``, refused when one is NaN or infinite.

    Values of ``X`` near float64's limit overflow in the model's arithmetic
    (a low-rank regressor's prediction NaN, FGM's ``-inf``); the estimator's
    wording of :func:`kernlearn.utils._finite.refuse_non_finite_outputs`,
    whose parameters ``values``, ``X`` and ``what`` these are.

    Parameters
    ----------
    est : BaseEstimator
        The fitted estimator (its name and ``feature_names_in_``).
    values, X, what
        As for :func:`~kernlearn.utils._finite.refuse_non_finite_outputs`.

    Returns
    -------
    values : ndarray
        Unchanged.
    """
    return refuse_non_finite_outputs(values, X, type(est).__name__, what,
                                     getattr(est, "feature_names_in_", None))


def plain_predict_data(est, X, sparse=False):
    """Whether ``validate_data(est, X, reset=False)`` would return ``X`` as it is.

    True for a :func:`plain_float_matrix` of ``n_features_in_`` columns (with
    ``sparse``, CSR and CSC too) given to a model fitted without feature names:
    its fixed cost (most of a one-row ``predict``, 0.2 ms for a sparse row) is
    skipped; anything else takes the general path and its errors.
    """
    return (not hasattr(est, "feature_names_in_") and plain_float_matrix(X, sparse)
            and X.shape[1] == getattr(est, "n_features_in_", None))


def fit_sample_weight(sample_weight, n, y=None, class_weight=None):
    """Validated per-sample loss weights, class weights folded in.

    ``class_weight`` is turned into per-sample weights (scikit-learn's
    ``compute_sample_weight``: ``"balanced"`` gives class ``c`` the weight
    ``n / (n_classes * n_c)``, under ``sample_weight`` the classes' total
    weights over the rows of positive weight, as scikit-learn's
    ``compute_class_weight``) and multiplied into ``sample_weight``, so every
    estimator sees one weight vector and weighs each sample's loss by it.

    Parameters
    ----------
    sample_weight : array-like of shape (n,) or None
        Non-negative weights; ``None`` means unit weights.
    n : int
        Number of samples.
    y : array-like of shape (n,), optional
        Class labels (needed with ``class_weight``).
    class_weight : dict, "balanced" or None
        Class weights.

    Returns
    -------
    sample_weight : ndarray of shape (n,) or None
        ``None`` when neither weights nor class weights are given, so that the
        unweighted code path is unchanged.

    Raises
    ------
    ValueError
        On negative, NaN or infinite weights (or class weights), a wrong
        shape, weights that are all zero, or weights whose sum overflows.
    """
    from sklearn.utils.class_weight import compute_sample_weight
    from sklearn.utils.validation import _check_sample_weight

    if sample_weight is None and class_weight is None:
        return None
    refuse_unlike_array(sample_weight, "sample_weight", "the fit")
    try:
        sw = _check_sample_weight(sample_weight, np.empty((n, 0)), dtype=np.float64,
                                  ensure_non_negative=True)
    except (TypeError, ValueError) as exc:
        # (_check_sample_weight rejects NaN, infinity, negative and all-zero
        # weights, and text, naming no row)
        bad = first_bad_weight(sample_weight)
        if bad is None:
            raise
        raise type(exc)(f"sample_weight has {bad}; weights must be non-negative "
                        "finite numbers.") from exc
    if class_weight is not None:
        if isinstance(class_weight, dict):
            # a negative weight turns the loss into a reward: the fit ran and
            # returned a chance-level model (issue 23 probe)
            bad = {k: v for k, v in class_weight.items()
                   if not (isinstance(v, (int, float, np.number)) and np.isfinite(v)
                           and v >= 0)}
            if bad:
                k, v = next(iter(bad.items()))
                raise ValueError(f"class_weight must map classes to non-negative "
                                 f"finite numbers; class {k!r} has {v!r}.")
            _check_class_weight_keys(class_weight, y)
        if sample_weight is not None and isinstance(class_weight, str):
            sw = sw * _balanced_weights(y, sw)
        else:
            sw = sw * compute_sample_weight(class_weight, y)
        if not np.any(sw > 0):
            raise ValueError("class_weight and sample_weight give every sample a "
                             "zero weight; nothing to fit.")
    # the losses' weighted mean and the penalty 1 / (C sum w) divide by the
    # total: past float64 it overflowed into a zero penalty or an overflowing
    # weighted variance, refused as a fault of lam or of X (audit 116)
    with np.errstate(over="ignore"):
        total = np.sum(sw)
    if not np.isfinite(total):
        raise ValueError("sample_weight (times class_weight) sums to more than "
                         "float64 holds; divide them by a common factor.")
    return sw


def check_weighted_classes(y, sample_weight, dask_codes=None):
    """Refuse labels whose rows of positive weight all hold one class.

    A zero weight removes its row, so such a fit is a fit on one class, which
    :func:`check_two_classes` refuses (as ``SVC`` and the multitask
    classifiers do): the estimators fitted it, and ``PNormMKLClassifier``
    predicted the class of weight zero wherever its kernels' signs put it.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels (a ``dask.array`` is checked through ``dask_codes`` only).
    sample_weight : ndarray of shape (n_samples,) or None
        The weights of :func:`fit_sample_weight` (class weights folded in).
    dask_codes : tuple of (ndarray, dask.array.Array), optional
        The classes and lazy codes of a Dask ``y``
        (:func:`kernlearn._dask_master.class_codes`): the class totals of the
        weights are one ``bincount`` on the cluster.  Without them a Dask ``y``
        is not checked (an out-of-core FGM fit predicted a class weighed out).

    Returns
    -------
    absent : ndarray of int or None
        The positions among the sorted classes of those whose rows all weigh
        zero (a third class weighed out: fitted on the others, and never
        predicted, :func:`~kernlearn.estimators._decisions.below_others`);
        None when every class has a row of positive weight.
    """
    if sample_weight is None:
        return None
    if _is_dask_array(y):
        return None if dask_codes is None else _dask_absent_classes(*dask_codes,
                                                                    sample_weight)
    if np.all(sample_weight > 0):
        return None
    y = np.asarray(y)
    check_two_classes(y[sample_weight > 0], weighted=True)
    classes, codes = encode_labels(y)
    absent = np.flatnonzero(np.bincount(codes, weights=sample_weight,
                                        minlength=len(classes)) == 0)
    return absent if absent.size else None


def _dask_absent_classes(classes, codes, sample_weight):
    """:func:`check_weighted_classes` of a Dask ``y`` by its lazy ``codes``."""
    import dask.array as da

    w = sample_weight if _is_dask_array(sample_weight) else da.from_array(
        np.asarray(sample_weight, dtype=float), chunks=codes.chunks)
    totals = da.bincount(codes, weights=w.rechunk(codes.chunks),
                         minlength=len(classes)).compute()
    check_two_classes(classes[totals > 0], weighted=True)
    absent = np.flatnonzero(totals == 0)
    return absent if absent.size else None


def _check_class_weight_keys(class_weight, y):
    """Refuse a ``class_weight`` dict naming a label that is not a class of ``y``.

    Exactly when scikit-learn's ``compute_class_weight`` refuses it (a key
    matching no class while some class has no key; a class left out gets
    weight 1, and keys beyond classes that all have one are ignored), which
    names the classes left out ("The classes, [1, 2], are not in
    class_weight") rather than the key that matched nothing.
    """
    classes = np.unique(np.asarray(y).ravel())
    found = class_weight_keys(class_weight, classes)
    unknown = [k for k in class_weight if k not in found]
    if unknown and len(found) < len(classes):
        seen = ", ".join(map(repr, classes[:10].tolist())) + (
            ", ..." if len(classes) > 10 else "")
        raise ValueError(
            # (keys taken from np.unique(y) are NumPy scalars: named as plain labels)
            f"class_weight names {', '.join(repr(plain_value(k)) for k in unknown[:5])}, which "
            f"{'is not a class' if len(unknown) == 1 else 'are not classes'} of y "
            f"(the classes seen in y: {seen}); a class left out of class_weight "
            "has weight 1.")


def _balanced_weights(y, sw):
    """``class_weight="balanced"`` per sample under ``sw``: ``W / (k W_c)`` from the
    classes' total weights ``W_c`` over the rows of positive weight.

    As scikit-learn's ``compute_class_weight(..., sample_weight=)``: integer
    weights count as repeated rows and zero weights as removed rows (counting
    rows moved the class weights of every fit by rows it had removed).
    """
    from sklearn.utils.class_weight import compute_class_weight

    y, pos = np.asarray(y).ravel(), sw > 0
    classes = np.unique(y[pos])
    weights = compute_class_weight("balanced", classes=classes, y=y[pos],
                                   sample_weight=sw[pos])
    out = np.zeros(len(sw))
    out[pos] = weights[np.searchsorted(classes, y[pos])]
    return out


def standardize_fit(est, X, sample_weight=None, y=None, center=True):
    """The "preprocess" step of ``fit``: standardise ``X`` (and regression ``y``).

    Fits :func:`kernlearn.preprocessing.fit_standardization` with the
    estimator's ``standardize`` parameter and stores the map as plain fitted
    arrays (``x_mean_``: ``None`` when the columns are not centred, i.e. for
    sparse input or ``standardize=False``; ``x_scale_``: ``None`` for the
    identity), so model files hold nothing but arrays.  With ``y`` given
    (regressors) the targets are standardised per output into ``y_mean_`` /
    ``y_scale_``, centred only when the estimator fits an intercept (its
    ``fit_intercept``, true when it has none): a model without bias must not
    add the targets' mean back.

    Parameters
    ----------
    est : BaseEstimator
        An estimator with a boolean ``standardize`` parameter.
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Validated training inputs.
    sample_weight : ndarray of shape (n_samples,), optional
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs), optional
        Regression targets to standardise.
    center : bool, default=True
        ``False``: dense columns are scaled, not centred, as sparse ones are
        (the histogram kernels, which read non-negative features).

    Returns
    -------
    Xt : ndarray or sparse matrix
        Standardised inputs (``X`` itself when ``standardize=False``).
    yt : ndarray, only when ``y`` is given
        Standardised targets.
    """
    from ..preprocessing import fit_standardization

    if hasattr(X, "standardize"):
        # row partitions on a cluster: statistics reduced there, X stays there
        st, Xt = X.standardize(sample_weight, bool(est.standardize))
    else:
        st = fit_standardization(X, sample_weight, bool(est.standardize))
        if not center and st.mean is not None:
            # (the histogram kernels' columns: x / s, the map of sparse columns)
            st = dataclasses.replace(st, mean=None)
        Xt = st.transform(X)
    est.x_mean_, est.x_scale_ = st.mean, st.scale
    # the model's precision, kept at predict time (see input_standardization)
    dtype = getattr(X, "dtype", None)
    est._x_dtype = "float32" if dtype == np.float32 else "float64"
    if y is None:
        return Xt
    ts = fit_target_map(est, y, sample_weight, bool(est.standardize))
    est.y_mean_, est.y_scale_ = ts.mean, ts.scale
    return Xt, ts.transform(y)


def fit_target_map(est, y, sample_weight, standardize):
    """The targets' map of a regressor: per output, centred only with an intercept.

    A model without bias (``fit_intercept=False``) must not add the targets'
    mean back; its targets are still divided by their spread, so its penalty
    levels keep their meaning.  A Dask ``y`` gets the lazy map of the
    distributed path.

    Parameters
    ----------
    est : BaseEstimator
        The regressor (its ``fit_intercept``; true when it has none).
    y : ndarray or dask.array.Array
    sample_weight : ndarray or None
    standardize : bool

    Returns
    -------
    kernlearn.preprocessing.TargetStandardization
    """
    if _is_dask_array(y):
        from .._dask_master import dask_target_standardization as fit
    else:
        from ..preprocessing import fit_target_standardization as fit
    ts = fit(y, sample_weight, standardize)
    return ts if getattr(est, "fit_intercept", True) else ts.without_centring()


def input_standardization(est):
    """The fitted input map of :func:`standardize_fit` (apply it at predict time).

    The map computes in the fit's precision: a model fitted in float64 maps
    float32 input to float64, so that its outputs are those of the same
    numbers given as float64 (scikit-learn's convention; they differed by up
    to 2e-7).  A model fitted in float32 keeps float32 input in float32, as
    it computed at fit; a file saved before the fit's type was recorded
    counts as float64.

    Parameters
    ----------
    est : BaseEstimator
        A fitted estimator.

    Returns
    -------
    kernlearn.preprocessing.Standardization
    """
    from ..preprocessing import Standardization

    return Standardization(getattr(est, "x_mean_", None), getattr(est, "x_scale_", None),
                           getattr(est, "_x_dtype", "float64"))


def target_standardization(est):
    """The fitted target map of :func:`standardize_fit` (regressors).

    Parameters
    ----------
    est : BaseEstimator
        A fitted regressor.

    Returns
    -------
    kernlearn.preprocessing.TargetStandardization
    """
    from ..preprocessing import TargetStandardization

    return TargetStandardization(est.y_mean_, est.y_scale_)
