"""The decision functions of fitted estimators, as small objects without scikit-learn.

A prediction on a Dask array runs on the workers
(:func:`~kernlearn.estimators._dask_predict.decided`), which never import
scikit-learn; an estimator cannot travel there (its module imports
scikit-learn, and so does unpickling it).  Each kernel, feature-learning and
multitask estimator builds here, from its fitted attributes, an object
holding the numbers its decision values need (the input standardisation, the
kernels or the learned features, the coefficients), and its in-memory
predictions call that same object on validated ``X``: both paths compute the
same numbers.
The maps from decision values to outputs (:func:`one_column_as_vector`,
:func:`class_labels`, and the probabilities of
:mod:`kernlearn.estimators._platt`) are functions of the values alone,
shipped likewise.

This module imports neither scikit-learn nor an estimator's module (the
workers import it): keep it so.
"""

from functools import partial

import numpy as np
import scipy.sparse as sp

from ..methods._decisions import decision_values, slkl_decision
from ..utils import _row_blocks
from ..utils._row_blocks import by_row_blocks
from ..utils._sparse import canonical_sparse
from ._input_range import bounded_inputs

__all__ = ["KernelExpansion", "LandmarkExpansion", "LearnedColumns", "LearnedFeatures",
           "TaskKernelModel",
           "applied", "block_numbers", "inputs_checked", "looked_up",
           "below_others", "chained", "class_labels", "evaluate_block",
           "one_column_as_vector"]

_FLOATS = (np.float64, np.float32)


def block_numbers(X):
    """A row block of ``X`` as the in-memory validation gives it to the model.

    What ``validate_data(accept_sparse=["csr", "csc"], dtype=[np.float64,
    np.float32])`` returns for a matrix of numbers (the blocks' type and
    shape were checked on ``X``'s metadata, their values by
    :func:`~kernlearn.utils._finite.checked_rows`): float64 or float32 kept,
    other numbers as float64; a sparse block in CSR or CSC, canonical.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_rows, n_features)

    Returns
    -------
    ndarray or scipy sparse matrix
    """
    if sp.issparse(X):
        X = X if X.format in ("csr", "csc") else X.tocsr()
        X = X if X.dtype in _FLOATS else X.astype(np.float64)
        return canonical_sparse(X)
    X = np.asarray(X)
    return X if X.dtype in _FLOATS else X.astype(np.float64)


def evaluate_block(block, decision, positions=None):
    """``decision`` of one row block of Dask ``X`` (the function mapped over them).

    Parameters
    ----------
    block : ndarray or scipy sparse matrix of shape (n_rows, n_features)
    decision : callable
        One of this module's objects.
    positions : ndarray of shape (n_rows, 1), optional
        The rows' task positions (a column of a Dask array split with ``X``).

    Returns
    -------
    ndarray
        The block's decision values.
    """
    return decision(block_numbers(block), None if positions is None else positions[:, 0])


def inputs_checked(block, decision, positions=None):
    """Refuse one row block's inputs as :func:`evaluate_block` would, computing
    nothing more (a regressor's training range, ``out_of_bounds="raise"``)."""
    decision.check_inputs(block_numbers(block))


def looked_up(block, keys, values):
    """``values[i]`` for each entry ``keys[i]`` of ``block`` (``keys`` sorted, holding
    every entry), as a column: the task positions of a block of Dask task ids."""
    return values[np.searchsorted(keys, block)][:, None]


def applied(block, fn):
    """``fn(block)``: the function mapped over the row blocks of Dask ``X`` by
    :func:`~kernlearn.estimators._dask_predict.map_row_blocks`, ``fn`` (FGM's
    scores) one key of the graph (here: the workers import this module)."""
    return fn(block)


def one_column_as_vector(D):
    """Decision values of one output as a vector (two classes, one target)."""
    return D[:, 0] if D.ndim == 2 and D.shape[1] == 1 else D


def class_labels(D, classes):
    """Predicted labels: ``classes[1]`` where one output is positive, else the
    class of the largest output."""
    D = one_column_as_vector(D)
    if D.ndim == 1:
        return classes[(D > 0).astype(int)]
    return classes[first_argmax(D)]


def first_argmax(D):
    """``np.argmax(D, axis=1)``; compiled, by column, when ``D`` is Fortran-ordered float64.

    NumPy's ``argmax`` along a row of a few outputs costs about 20 ns a row
    (one call per row: 2 ms of FGM's 5-class prediction of 100,000 rows, a
    third of its time); FGM's decision values are stored one output after
    another (:func:`kernlearn.partitioned.selected_linear_scores`), so a
    compiled running maximum over their columns
    (:func:`kernlearn._predict_kernels.running_argmax`) reads them in memory
    order: 0.5 ms.  The same indices (the first of equal maxima); a NaN
    sends the rows back to ``argmax``, which picks the first NaN.
    """
    if D.shape[1] < 2 or not D.T.flags.c_contiguous or D.dtype != np.float64:
        return np.argmax(D, axis=1)
    from .._predict_kernels import running_argmax

    idx = np.empty(D.shape[0], dtype=np.intp)
    return np.argmax(D, axis=1) if running_argmax(D.T, idx) else idx


def below_others(D, absent):
    """Decision values whose columns ``absent`` (classes weighed out of the fit:
    no row of positive weight) lie one below the row's lowest other value.

    Such a class stays in ``classes_`` (as scikit-learn's
    ``LogisticRegression`` keeps it) but is never predicted: the values its
    model gives are those of a fit that never saw it (a Crammer-Singer model
    without bias, a one-vs-rest model without intercept: 0 where the others
    were negative), and ``predict`` took it there.  Kept finite (one below)
    so that ``predict`` stays the arg max of ``decision_function``.
    """
    if D.ndim != 2 or D.shape[1] <= int(np.max(absent)):
        return D
    others = np.ones(D.shape[1], dtype=bool)
    others[absent] = False
    D = D.copy(order="K")
    D[:, absent] = (D[:, others].min(axis=1) - 1.0)[:, None]
    return D


def below_unfitted(D, fitted):
    """Decision values whose entries not ``fitted`` (a class with no row in the row's
    task: one-vs-rest within tasks) lie one below the row's lowest fitted value.

    Never predicted in that task, as :func:`below_others` keeps a class weighed out
    of the whole fit; finite, so that ``predict`` stays the arg max of
    ``decision_function``.

    Parameters
    ----------
    D : ndarray of shape (n_samples, n_classes)
        Each row's values in its task.
    fitted : ndarray of bool of shape (n_samples, n_classes)
        Which classes are fitted in each row's task (at least one per row).

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
    """
    if fitted.all():
        return D
    low = np.where(fitted, D, np.inf).min(axis=1)
    return np.where(fitted, D, (low - 1.0)[:, None])


def classes_kept(est, post):
    """``post`` after :func:`below_others` when ``est`` had classes weighed out
    of its fit (``_absent_classes``, set by
    :func:`~kernlearn.estimators._base.check_weighted_classes`); ``post``
    itself otherwise (every model fitted on every class: unchanged)."""
    absent = getattr(est, "_absent_classes", None)
    if absent is None:
        return post
    return partial(chained, steps=(partial(below_others, absent=absent), post))


def chained(D, steps):
    """``D`` through the functions ``steps`` in turn, None skipped (``post`` of a
    prediction)."""
    for step in steps:
        D = D if step is None else step(D)
    return D


def _refuse_rows_for_grams(precomputed, meta):
    """Refuse a Dask ``X`` of rows (its empty 2-D ``meta`` block) given to a model of
    precomputed kernels (it predicts F test Gram matrices), in the in-memory words."""
    if precomputed:
        from ..gram import check_gram_list  # (in the client: it imports scikit-learn)

        check_gram_list(meta, "X")


class _MapRefused(Exception):
    """A row block's standardisation raised (:meth:`_Standardized._by_blocks`)."""


class _Standardized:
    """The input standardisation of the fit (``None``: the inputs as given), then
    the inputs clipped to ``x_range``, refused beyond it or left, as
    ``out_of_bounds`` says (the kernel regressors' training range and
    parameter, :mod:`kernlearn.estimators._input_range`; ``None``: left)."""

    x_range, out_of_bounds = None, "clip"

    def _inputs(self, X):
        if self.standardization is None:
            return X
        return bounded_inputs(X, self.standardization.transform(X), self.standardization,
                              self.x_range, self.out_of_bounds)

    def _by_blocks(self, X, score):
        """``score(Xb, b)`` of the standardised rows ``Xb`` of ``X`` (its rows
        ``b``, a slice), by blocks (:func:`~kernlearn.utils._row_blocks.by_row_blocks`).

        Each block (8 blocks of sparse rows) is standardised (and clipped) on
        its own: the map is elementwise, so the values are those of the whole
        ``X`` mapped at once, without its ``n x d`` copy (and the clipping's
        temporaries).  An error of the map names a row and counts values over
        all of ``X``: on one, the whole ``X`` is mapped at once, which raises
        it so.  CSC input is mapped at once (a block of its rows is no cheap
        slice).
        """
        if self.standardization is None or (sp.issparse(X) and X.format != "csr"):
            Xt = self._inputs(X)
            return by_row_blocks(lambda b: score(Xt[b], b), Xt.shape[0])

        def group(g):  # rows g mapped at once, then scored by blocks as before
            try:
                Xg = self._inputs(X[g])
            except ValueError:
                raise _MapRefused from None
            return by_row_blocks(
                lambda b: score(Xg[b], slice(g.start + b.start, g.start + b.stop)),
                Xg.shape[0])

        # (a sparse block's map costs a few SciPy constructions, 0.3 ms: mapped
        # by 8 blocks at once; the blocks scored stay those of the whole X)
        rows = _row_blocks.PREDICT_ROWS * (8 if sp.issparse(X) else 1)
        try:
            return by_row_blocks(group, X.shape[0], rows)
        except _MapRefused:
            self._inputs(X)  # (raises the error, its row counted over all of X)
            raise AssertionError("a row block was refused, but not the whole X") from None

    @property
    def refuses_outside(self):
        """Whether an input beyond the training range is refused (``"raise"``)."""
        return (self.standardization is not None and self.x_range is not None
                and self.out_of_bounds == "raise")

    def check_inputs(self, X):
        """Raise as a prediction of ``X`` would for its inputs (nothing computed)."""
        self._inputs(X)

    def refuse_kind(self, meta):
        """Refuse sparse blocks at once (from ``X``'s empty meta block), before any
        is read, when the standardisation does (a model fitted on dense ``X``
        centres its columns): a lazy prediction raised it on ``compute()``."""
        if self.standardization is not None and sp.issparse(meta):
            self.standardization.transform(meta)


class KernelExpansion(_Standardized):
    """OBSCURE's decision values (:class:`~kernlearn.PNormMKLClassifier`).

    Parameters
    ----------
    standardization : kernlearn.preprocessing.Standardization or None
        None for precomputed kernels.
    kernel_list : KernelList or PrecomputedKernelList
        The fitted kernels, restricted to the support vectors.
    kernel_weights, dual_coef, support : ndarray
        As the estimator's attributes.
    """

    def __init__(self, standardization, kernel_list, kernel_weights, dual_coef, support):
        self.standardization, self.kernel_list = standardization, kernel_list
        self.kernel_weights, self.dual_coef, self.support = kernel_weights, dual_coef, support

    def refuse_kind(self, meta):
        """As :meth:`_Standardized.refuse_kind`; a model of precomputed kernels refuses
        rows (a 2-D ``X``) as in memory, at once (it failed on ``compute()``)."""
        super().refuse_kind(meta)
        _refuse_rows_for_grams(self.standardization is None, meta)

    def __call__(self, X, positions=None):
        return decision_values(self.kernel_list, self.kernel_weights, self.dual_coef,
                               self.support, self._inputs(X))


class LandmarkExpansion(_Standardized):
    """SLKL's decision values, by blocks of rows (:class:`~kernlearn.LowRankKernelRegressor`).

    Parameters
    ----------
    standardization : kernlearn.preprocessing.Standardization or None
    centers : ndarray or sparse matrix
        The centres on the standardised scale (training indices when precomputed).
    dual_coef, intercept, kernel, kernel_params, center_factors, center
        As :func:`~kernlearn.methods._decisions.slkl_decision`'s.
    x_range : ndarray of shape (2, n_features), optional
        The training range the inputs are clipped to (the regressor's ``x_range_``).
    out_of_bounds : {"clip", "raise", "extend"}, default="clip"
        What an input beyond it gets (the regressor's parameter).
    """

    def __init__(self, standardization, centers, dual_coef, intercept, kernel, kernel_params,
                 center_factors=None, center=None, x_range=None, out_of_bounds="clip"):
        self.standardization, self.centers, self.x_range = standardization, centers, x_range
        self.out_of_bounds = out_of_bounds
        self.dual_coef, self.intercept = dual_coef, intercept
        self.kernel, self.kernel_params = kernel, kernel_params
        self.center_factors, self.center = center_factors, center

    def __call__(self, X, positions=None):
        # by blocks of rows: the kernel values are n_new x n_centers otherwise
        return self._by_blocks(X, lambda Xb, b: slkl_decision(
            Xb, self.centers, self.dual_coef, self.intercept, self.kernel,
            self.kernel_params, self.center_factors, self.center))


class LearnedFeatures(_Standardized):
    """GrFL's decision values (:class:`~kernlearn.InfiniteFeatureClassifier`).

    Parameters
    ----------
    standardization : kernlearn.preprocessing.Standardization or None
    family : BaseFamily
        The fitted family of features.
    features : ndarray
        The kept features' parameters.
    feature_scales : ndarray
        Their columns' scales.
    coef : ndarray of shape (n_outputs, n_columns)
        One row per task or output.
    intercept : ndarray of shape (n_outputs,)
    x_range : ndarray of shape (2, n_features), optional
        The training range the inputs are clipped to (the regressor's ``x_range_``).
    out_of_bounds : {"clip", "raise", "extend"}, default="clip"
        What an input beyond it gets (the regressor's parameter).
    task_classes : ndarray of bool of shape (n_tasks, n_classes), optional
        One-vs-rest within tasks: the outputs are ``n_tasks * n_classes``, task by
        task, and a row gets its task's ``n_classes`` (those not fitted below the
        others, :func:`below_unfitted`).
    with_fitted : bool, default=False
        With ``task_classes``: each row's values followed by its task's fitted
        classes as 1/0 (what ``predict_proba`` zeroes).
    """

    task_classes, with_fitted = None, False  # (objects pickled before them)

    def __init__(self, standardization, family, features, feature_scales, coef, intercept,
                 x_range=None, out_of_bounds="clip", task_classes=None, with_fitted=False):
        self.standardization, self.family, self.x_range = standardization, family, x_range
        self.out_of_bounds = out_of_bounds
        self.task_classes, self.with_fitted = task_classes, with_fitted
        self.features, self.feature_scales = features, feature_scales
        self.coef, self.intercept = coef, intercept

    def columns(self, X):
        """The learned columns of standardised inputs (the estimator's ``transform``)."""
        if X.shape[0] == 0:
            # an empty row block of a Dask X (a filtered DataFrame's partition):
            # the families' input check refuses no rows, as in-memory X must be
            return np.zeros((0, self.feature_scales.size))
        return self.family.columns(self.features, X) * self.feature_scales.ravel()

    def __call__(self, X, positions=None):
        """Decision values, one column per output, or of each row's task
        (``positions``: a vector)."""
        fitted = self.task_classes

        def scores(Xb, b):  # rows b: their columns are n_rows x n_kept at once
            D = self.columns(Xb) @ self.coef.T + self.intercept
            if positions is None:
                return D
            rows, pos = np.arange(D.shape[0]), positions[b]
            if fitted is None:
                return D[rows, pos]
            # (one-vs-rest within tasks: the row's task's block of classes)
            D = below_unfitted(D.reshape(len(D), *fitted.shape)[rows, pos], fitted[pos])
            return np.hstack([D, fitted[pos]]) if self.with_fitted else D
        return self._by_blocks(X, scores)


class LearnedColumns:
    """GrFL's learned features of the inputs (the estimators' ``transform``).

    Parameters
    ----------
    features : LearnedFeatures
        The fitted model's decision object: its input map (standardisation,
        training range) and features.
    """

    def __init__(self, features):
        self.features = features

    @property
    def refuses_outside(self):
        """As the features' :attr:`_Standardized.refuses_outside`."""
        return self.features.refuses_outside

    def check_inputs(self, X):
        """As the features' :meth:`_Standardized.check_inputs`."""
        self.features.check_inputs(X)

    def refuse_kind(self, meta):
        """As the features' :meth:`_Standardized.refuse_kind`."""
        self.features.refuse_kind(meta)

    def __call__(self, X, positions=None):
        return self.features.columns(self.features._inputs(X))


class TaskKernelModel:
    """Multitask MKL's predictions, each row by its task's model (``MultitaskMKL*``).

    Parameters
    ----------
    model : kernlearn.methods.mtmkl.MultitaskModel
    kernels : kernlearn.methods.mtmkl.TaskKernels
        The fitted kernels (they standardise the inputs).
    buckets : kernlearn.methods.mtmkl.TaskBuckets
        The training rows by task.
    train_rows : ndarray of int, optional
        The training rows fitted (positive weight), kept of precomputed test Grams.
    y_scale, y_mean : ndarray of shape (n_tasks,), optional
        A regressor's target map per task: its predictions in the targets' units.
    """

    def __init__(self, model, kernels, buckets, train_rows=None, y_scale=None, y_mean=None):
        self.model, self.kernels, self.buckets = model, kernels, buckets
        self.train_rows, self.y_scale, self.y_mean = train_rows, y_scale, y_mean

    def refuse_kind(self, meta):
        """Refuse sparse blocks at once (from ``X``'s empty meta block) where the
        in-memory prediction refuses sparse ``X`` (a model fitted on dense ``X``
        centres its columns), in its words: a lazy prediction failed on
        ``compute()``.  A model fitted on sparse ``X`` predicts sparse chunks."""
        if sp.issparse(meta) and not self.kernels.precomputed:
            self.kernels._scaled(meta)  # (raises as in memory, or maps no row)
        _refuse_rows_for_grams(self.kernels.precomputed, meta)

    def __call__(self, X, positions):
        """Predictions of the rows ``X`` (or of stacked test Grams, kernels first),
        each of its task ``positions``."""
        from ..solvers._base import single_blas_thread  # (its package: fits' solvers)

        if self.kernels.precomputed and self.train_rows is not None:
            X = X[:, :, self.train_rows]  # the rows fitted (positive weight)
        with single_blas_thread():
            f = self.model.decision(self.kernels, self.buckets, X, positions)
        if self.y_scale is None:
            return f
        return f * self.y_scale[positions] + self.y_mean[positions]
