"""Shared estimator helpers: input validation and sparse-format policy."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data


def check_two_classes(y):
    """Check classification targets and require at least two classes.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.

    Raises
    ------
    ValueError
        If ``y`` is not a classification target or holds a single class.
    """
    check_classification_targets(y)
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError(
            f"y contains a single class ({classes[0]!r}); a classifier needs more "
            "than one class."
        )


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
    X, y = validate_data(
        est, X, y, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32],
        y_numeric=y_numeric, ensure_min_samples=2,
    )
    if classification:
        check_two_classes(y)
    if sp.issparse(X):
        X = sp.csc_matrix(X)
        if X.nnz < 2**31:
            X.indices = X.indices.astype(np.int32, copy=False)
            X.indptr = X.indptr.astype(np.int32, copy=False)
    return X, y


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
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinity.")
    est.n_features_in_ = m
    if hasattr(est, "feature_names_in_"):
        del est.feature_names_in_
    return rows, y


def validate_predict_data(est, X):
    """Validate ``X`` at predict time against the fitted ``n_features_in_``."""
    return validate_data(
        est, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], reset=False
    )


def split_tasks(task_index, n):
    """Validate one task id per sample and group the rows by task.

    Parameters
    ----------
    task_index : array-like of shape (n,)
        Task id of each sample (any sortable values).
    n : int
        Number of samples.

    Returns
    -------
    tasks : ndarray
        Sorted distinct task ids.
    rows : list of ndarray of int
        Row indices of each task, in the order of ``tasks``.
    """
    task_index = np.asarray(task_index)
    if task_index.shape != (n,):
        raise ValueError(f"task_index must have shape ({n},), got {task_index.shape}.")
    if task_index.dtype.kind == "f" and not np.all(np.isfinite(task_index)):
        raise ValueError("task_index contains NaN or infinity.")
    tasks, inv = np.unique(task_index, return_inverse=True)
    return tasks, [np.flatnonzero(inv == t) for t in range(len(tasks))]


def task_positions(tasks, task_index, n):
    """Positions in ``tasks`` of the task ids of new samples; unseen ids are an error.

    Parameters
    ----------
    tasks : ndarray
        Sorted task ids seen in ``fit``.
    task_index : array-like of shape (n,)
        Task id of each new sample.
    n : int
        Number of new samples.

    Returns
    -------
    pos : ndarray of int of shape (n,)
    """
    task_index = np.asarray(task_index)
    if task_index.shape != (n,):
        raise ValueError(f"task_index must have shape ({n},), got {task_index.shape}.")
    pos = np.clip(np.searchsorted(tasks, task_index), 0, len(tasks) - 1)
    if np.any(tasks[pos] != task_index):
        unknown = np.setdiff1d(task_index, tasks)
        raise ValueError(f"task_index has tasks unseen in fit: {unknown[:5]!r}.")
    return pos


def has_logistic_loss(est):
    """``available_if`` check: ``predict_proba`` needs the logistic loss.

    Parameters
    ----------
    est : estimator
        An estimator with a ``loss`` parameter.

    Returns
    -------
    True

    Raises
    ------
    AttributeError
        When ``est.loss`` is not ``"logistic"``.
    """
    if est.loss != "logistic":
        raise AttributeError(
            "predict_proba is only available with loss='logistic' "
            f"(this model uses loss={est.loss!r})."
        )
    return True


def logistic_proba(scores):
    """Class probabilities from logistic-loss margins.

    Binary: the sigmoid of the margin; one-vs-rest multiclass: the classes'
    sigmoids normalised to sum to one.

    Parameters
    ----------
    scores : ndarray of shape (n_samples,) or (n_samples, n_outputs)

    Returns
    -------
    proba : ndarray of shape (n_samples, n_classes)
    """
    from scipy.special import expit

    p = expit(np.asarray(scores, dtype=float))
    if p.ndim == 1 or p.shape[1] == 1:
        p = p.reshape(-1, 1)
        return np.hstack([1 - p, p])
    return p / p.sum(axis=1, keepdims=True)

