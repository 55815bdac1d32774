"""Multitask multiple kernel learning (paper 004) as scikit-learn estimators.

Thin wrappers: validate inputs and the task ids, then call
:func:`kernlearn.methods.mtmkl.fit_multitask`.
"""

from functools import partial
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

from ..kernels import _check_gram_list, check_training_grams, linear_kernel, rbf_kernel
from ..methods._kept_rows import positive_rows
from ..methods.mtmkl import FORMULATIONS, TaskKernels, fit_multitask
from ..solvers._base import single_blas_thread
from ..utils._messages import plain_value
from ._dask_predict import dask_input_doc, decided
from ._decisions import TaskKernelModel, class_labels
from ._base import (
    OLD_NAME,
    all_or_nothing,
    ProbabilityMixin,
    _has_proba,
    check_two_classes,
    encode_labels,
    fit_sample_weight,
    plain_predict_data,
    renamed_parameter,
    validate_data,
)
from ._multitask import (
    TaskIndexRequests,
    _id_kind,
    check_task_fit,
    check_tasks_hold_both,
    fitted_classes_rows,
    routing_help,
    split_tasks,
    task_positions,
    task_score,
    task_score_doc,
    warn_unused_formulation,
)
from ._mtmkl_targets import _check_binary, _fitted_targets
from ._platt import PLATT_XFAIL, platt_attr_doc
from ._renamed import RenamedParameters, warn_unused

__all__ = ["MultitaskMKLClassifier", "MultitaskMKLRegressor", "MultitaskScorer"]

_DEFAULT_KERNELS = (("rbf", {"gamma": "mean"}), "linear")
# sparse rows are kept sparse (COO and the others become CSR): methods.mtmkl._sparse_rows
_SPARSE, _DTYPES = ["csr", "csc"], [np.float64, np.float32]


class MultitaskScorer:
    """A scikit-learn scorer that passes each sample's task id to the predictions.

    scikit-learn's scorers call ``predict(X)`` (or ``decision_function`` /
    ``predict_proba``) with no metadata, so a multitask model cannot know
    the task of each test row; this wrapper requests ``task_index`` through
    scikit-learn's metadata routing and gives it to the estimator's
    prediction methods.

    Parameters
    ----------
    scoring : str or callable, default="r2"
        A scorer name of :func:`sklearn.metrics.get_scorer` or a scorer
        ``scorer(estimator, X, y)``.

    Examples
    --------
    >>> import numpy as np, sklearn
    >>> from sklearn.model_selection import GridSearchCV, StratifiedKFold
    >>> from kernlearn import MultitaskMKLRegressor
    >>> from kernlearn.estimators.mtmkl import MultitaskScorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); t = np.repeat([0, 1, 2], 20)
    >>> y = X[:, 0] + t
    >>> folds = StratifiedKFold(3).split(X, t)  # every task in every fold
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = GridSearchCV(MultitaskMKLRegressor(["linear"]), {"C": [0.1, 1.0]},
    ...                           scoring=MultitaskScorer("neg_mean_absolute_error"),
    ...                           cv=folds).fit(X, y, task_index=t)
    >>> bool(np.isfinite(search.cv_results_["mean_test_score"]).all())
    True
    """

    def __init__(self, scoring="r2"):
        self.scoring = scoring

    def __call__(self, estimator, X, y_true, task_index=None):
        """Score ``estimator`` on ``X``, each row predicted for its own task.

        Parameters
        ----------
        estimator : estimator
            Fitted multitask estimator.
        X : array-like
            Test inputs.
        y_true : array-like of shape (n_samples,)
            True targets.
        task_index : array-like of shape (n_samples,), optional
            Task id of each test sample.

        Returns
        -------
        score : float
        """
        from sklearn.metrics import get_scorer

        scorer = get_scorer(self.scoring)
        # named as the estimator: scikit-learn's errors quote the class name ("... has
        # none of the following attributes: predict_proba"), which was _WithTasks
        named = type(type(estimator).__name__, (_WithTasks,), {})
        return scorer(named(estimator, task_index), X, y_true)

    def get_metadata_routing(self):
        """The routing request: ``task_index`` for ``score``.

        Returns
        -------
        request : sklearn.utils.metadata_routing.MetadataRequest
        """
        from sklearn.utils.metadata_routing import MetadataRequest

        request = MetadataRequest(owner=type(self).__name__)
        request.score.add_request(param="task_index", alias=True)
        return request

    def __repr__(self):
        return f"MultitaskScorer({self.scoring!r})"


class _WithTasks:
    """A fitted estimator whose prediction methods have ``task_index`` bound."""

    _BOUND = ("predict", "decision_function", "predict_proba")

    def __init__(self, estimator, task_index):
        self._estimator = estimator
        self._task_index = task_index

    def __getattr__(self, name):
        attr = getattr(self._estimator, name)
        if name not in self._BOUND:
            return attr

        def bound(X):
            return attr(X, task_index=self._task_index)

        bound.__name__ = name  # scikit-learn's scorers read the method's name
        return bound


class _BaseMultitaskMKL(TaskIndexRequests, RenamedParameters, BaseEstimator):
    """Shared validation, task bookkeeping and prediction."""

    _renamed_parameters = {"max_inner": "inner_max_iter"}
    _parameter_constraints = {
        "kernels": [list, tuple, StrOptions({"precomputed"}), None],
        "formulation": [StrOptions(set(FORMULATIONS))],
        "p": [Interval(Real, 2, None, closed="left")],
        "q": [Interval(Real, 1, 2, closed="both")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "normalize": ["boolean"],
        "standardize": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "inner_max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_inner": [Interval(Integral, 1, None, closed="left"), OLD_NAME],
        "max_rank": [Interval(Integral, 1, None, closed="left"), None],
        "verbose": ["verbose"],
    }

    def _precomputed(self):
        return isinstance(self.kernels, str) and self.kernels == "precomputed"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._precomputed()
        tags.input_tags.sparse = not self._precomputed()  # (rows: methods.mtmkl._sparse_rows)
        return tags

    def _validate_p_q(self):
        # the constraints name the ranges; these messages name the paper's sets
        if self.p < 2:
            raise ValueError(f"p must be >= 2 (MK-MTFL's lp norm), got {self.p}.")
        if not 1 <= self.q <= 2:
            raise ValueError(f"q must be in [1, 2] (MK-MTSFL), got {self.q}.")

    def _check_X(self, X, y, reset):
        if self._precomputed() if reset else self.kernels_.precomputed:  # (as fitted)
            if reset:
                # square, symmetric and PSD as every estimator's (an indefinite
                # matrix with a positive diagonal was fitted without a word)
                check = (_check_gram_list if getattr(self, "_grams_checked", False)
                         else check_training_grams)  # (the *CV's fits: checked once)
                grams = np.stack(check(X, "X"))
                self.n_features_in_ = grams.shape[1]
                y = column_or_1d(y, warn=True)
                check_consistent_length(grams[0], y)
                return grams, y
            grams = _check_gram_list(X, "X")
            for j, K in enumerate(grams[1:], 1):
                if K.shape != grams[0].shape:
                    raise ValueError(f"X[{j}] has shape {K.shape} but X[0] has "
                                     f"{grams[0].shape}: mismatched sizes (every Gram "
                                     "matrix must cover the same rows and columns).")
            grams = np.stack(grams)
            if grams.shape[0] != self.kernels_.n_kernels or \
                    grams.shape[2] != self.n_features_in_:
                raise ValueError(
                    f"X must be {self.kernels_.n_kernels} test Gram matrices of shape "
                    f"(n_test, {self.n_features_in_}), got {grams.shape}.")
            return grams, None
        if reset:
            if getattr(self, "_rows_checked", False):  # (CV folds of its checked X, y)
                self.n_features_in_ = X.shape[1]
                return X, y
            return validate_data(self, X, y, accept_sparse=_SPARSE, dtype=_DTYPES,
                                 ensure_min_samples=2, y_numeric=self._y_numeric)
        if plain_predict_data(self, X, sparse=True):
            return X, None
        return validate_data(self, X, accept_sparse=_SPARSE, dtype=_DTYPES, reset=False), None

    def _split_tasks(self, task_index, n):
        if task_index is None:
            self.tasks_ = np.array([0])
            return [np.arange(n)]
        self.tasks_, rows = split_tasks(task_index, n)
        # (a training fold of one task too: the others' validation rows unseen)
        check_task_fit(self, predict_needs_tasks=len(self.tasks_) > 1)
        small = [plain_value(self.tasks_[t]) for t, r in enumerate(rows) if len(r) < 2]
        if small:
            # rows of zero weight were dropped (_weighted_rows): say so, the
            # caller's data may hold more rows of the task
            weighted = getattr(self, "_train_rows", None) is not None
            raise ValueError("every task needs at least 2 samples"
                             + (" of positive weight" if weighted else "")
                             + f"; task(s) {small[:5]} have one.")
        return rows

    def _task_positions(self, task_index, n):
        if task_index is None:
            if len(self.tasks_) > 1:
                raise ValueError("this model was fitted on several tasks; pass "
                                 "task_index to name the task of each sample. "
                                 "In model selection: " + routing_help(self))
            return np.zeros(n, dtype=np.int64)
        out = getattr(self, "_weighed_out", None)
        if out is not None and _id_kind(out) == _id_kind(task_index):
            known = set(out.tolist())
            hit = [plain_value(v) for v in dict.fromkeys(np.asarray(task_index).tolist())
                   if v in known]
            if hit:
                raise ValueError(f"task(s) {hit[:5]} had only rows of zero sample weight "
                                 "in fit, so the model has no predictor for them (rows of "
                                 "zero weight are left out of the fit).")
        return task_positions(self.tasks_, task_index, n)

    def _weighted_rows(self, X, y, task_index, sample_weight, class_weight=None):
        """Validated weights; rows of zero weight are dropped (exactly as removed).

        A zero weight would make a sample's loss weight :math:`C w_i` vanish,
        which the kernel ridge and libsvm solves do not accept; without the
        row the problem is the same.
        """
        n = X.shape[1] if self._precomputed() else X.shape[0]
        sw = fit_sample_weight(sample_weight, n, y, class_weight)
        self._train_rows = self._weighed_out = None
        keep = positive_rows(sw)
        if keep is None:  # (no weights, or all positive: the inputs themselves)
            return X, y, task_index, sw
        self._train_rows = keep
        if task_index is not None:
            # tasks whose every row weighs nothing leave the fit with their
            # rows: named when predicted ("unseen in fit" of a task the fit was
            # given left the caller looking for a typo)
            ids, rows = split_tasks(task_index, n)
            out = [t for t, r in enumerate(rows) if not np.any(sw[r] > 0)]
            self._weighed_out = ids[out] if out else None
        X = X[:, keep][:, :, keep] if self._precomputed() else X[keep]
        task_index = None if task_index is None else np.asarray(task_index)[keep]
        return X, np.asarray(y)[keep], task_index, sw[keep]

    def _fit(self, X, y, task_index, loss, epsilon=0.1, sample_weight=None, shared=False,
             C=None, factor_store=None, C_grid=None, rows=None):
        self._validate_p_q()
        # the formulation and shared are checked once, by fit_multitask
        rows = self._split_tasks(task_index, len(y)) if rows is None else rows
        specs = "precomputed" if self._precomputed() else (
            list(_DEFAULT_KERNELS if self.kernels is None else self.kernels))
        # many small (batched) factorisations: BLAS threads only add
        # synchronisation (a 2085 x 110 QR: 0.13 s on one thread, 2-6 s on two
        # threads of the shared 2-core machine)
        with single_blas_thread():
            self.kernels_, self._blocks, model = fit_multitask(
                TaskKernels(specs, normalize=self.normalize,
                            standardize=self.standardize), X, y, rows,
                formulation=self.formulation, loss=loss,
                C=self.C if C is None else C, p=self.p,
                q=self.q, epsilon=epsilon, max_iter=self.max_iter, tol=self.tol,
                max_inner=renamed_parameter(self, "max_inner"),
                max_rank=self.max_rank,
                verbose=self.verbose, sample_weight=sample_weight, shared=shared,
                factor_store=factor_store, C_grid=C_grid)
        self._model = model
        self.C_ = float(model.C if model.C is not None else (self.C if C is None else C))
        self.shared_ = bool(shared)
        self.kernel_weights_ = model.kernel_weights
        self.task_kernel_weights_ = model.task_kernel_weights
        # the same meaning with and without shared blocks: zero weight each
        self.shared_kernel_weights_ = (model.shared_kernel_weights if shared
                                       else np.zeros_like(model.kernel_weights))
        self.intercept_ = model.intercept
        self.objective_ = model.objective
        self.gap_ = model.gap
        self.history_ = model.history
        self.n_iter_ = model.n_iter
        self.converged_ = model.converged
        return self

    def _output(self, X, task_index, post=None, dtype=float, units=(), width=None):
        """``post`` of the decision values of ``X`` (one per row, of its task): an
        object without scikit-learn (:mod:`._decisions`) sent to the workers for a
        Dask ``X`` (a lazy Dask array), called in memory otherwise; ``units``: a
        regressor's ``(y_scale, y_mean)`` per task."""
        check_is_fitted(self)
        decision = TaskKernelModel(self._model, self.kernels_, self._blocks,
                                   getattr(self, "_train_rows", None), *units)
        return decided(self, X, decision, lambda X: self._check_X(X, None, reset=False)[0],
                       post, width, dtype, task_index=task_index, positions=self._task_positions,
                       name_columns=not self.kernels_.precomputed)  # (as fitted)


_PARAMS_DOC = """
    Parameters
    ----------
    kernels : list or "precomputed", default=None
        Base kernels: names in :data:`kernlearn.kernels.KERNELS`, callables
        ``k(X, Y, **params)``, or tuples ``(kernel, params)`` /
        ``(kernel, params, columns)`` where ``columns`` selects the view of
        ``X`` the kernel sees (one kernel per input feature is
        ``[("rbf", {{"gamma": g}}, [f]) for f in range(n_features)]``).
        ``None`` means ``[("rbf", {{"gamma": "mean"}}), "linear"]``.
        ``"precomputed"``: ``fit`` takes a list of k training Gram matrices
        (n x n) and ``predict`` a list of k test-vs-train matrices (n_test x n),
        or the same wrapped in :class:`kernlearn.PrecomputedKernels` (samples
        first: scikit-learn's splitters can then index them).
        A kernel listed twice (equal once widths are resolved, on the same
        columns; or two equal Gram matrices) is refused: its copies would take
        a larger share of the kernel weights.
    formulation : {{"mtfl", "mtsfl", "mkl", "independent"}}, default="mtfl"
        ``"mtfl"``: MK-MTFL, kernel weights shared by all tasks, (l1, lp) norm
        (sec. 3); ``"mtsfl"``: MK-MTSFL, shared low-dimensional subspaces of
        few kernels' feature spaces, (l1, lq) Schatten norm (sec. 4; one
        kernel is MTSFL of Argyriou et al.); baselines ``"mkl"`` (one l1-MKL
        per task) and ``"independent"`` (one {machine} per task on the
        average kernel).
        ``"mtfl"`` holds each task's ``n_t x n_t`` block of every kernel and
        solves the tasks' ``n_t x n_t`` systems: memory grows as
        :math:`\\sum_t n_t^2` per kernel and time as :math:`\\sum_t n_t^3`
        (two tasks of 2,000 rows: a peak of about 0.5 GB over the input with
        the default kernels; of 5,000 rows: about 3 GB).  Predictions are
        made by blocks of rows.
    p : float, default=2.0
        MK-MTFL's norm across tasks, ``p >= 2``; larger p lets reliable tasks
        weigh more.  (``p``, ``q`` and ``max_rank`` set beside a formulation that
        does not read them are named by a warning.)
    q : float, default=1.5
        MK-MTSFL's norm across kernels, ``1 <= q <= 2``; smaller is sparser.
    C : float{auto}, default={C}
        Loss weight: :math:`C\\sum_{{t,i}}\\ell + \\tfrac12\\,\\mathrm{{regulariser}}`.{auto_doc}
    normalize : bool, default=True
        Scale each kernel to unit mean diagonal on the training data (the
        paper does not; without it kernels of larger scale dominate).
    standardize : bool, default=True
        Centre and scale each input column to unit variance (training
        statistics) before the kernels see it; ignored when precomputed.
        Sparse columns are scaled, not centred (never densified): the
        linear, polynomial and RBF kernels subtract their means themselves,
        so sparse ``X`` gives the model of ``X.toarray()``; callables see them
        uncentred (and are warned of).  The histogram kernels ``hik`` and
        ``additive_chi2`` see every column scaled, never centred, dense or
        sparse (the same model either way; the other kernels of the list see
        the centred columns); negative values of the data itself: ``hik``
        warns (``NegativeFeaturesWarning``), ``additive_chi2`` refuses.
        Without it, ``gamma="scale"`` of sparse columns is the mean of the
        columns' variances, of dense ones the variance of all entries (as
        in every estimator): another width, unless the columns are centred.
        On the School data this is the difference between an explained
        variance of -8 % and +14 % (unscaled school-level columns swamp the
        linear kernel).
    max_iter : int, default=100
        Mirror-descent (outer) iterations.
    tol : float, default=1e-3
        Stop when the duality gap is below ``tol`` times the objective (not
        with ``formulation="independent"``, fitted once and exactly: a
        warning names it when set).
    inner_max_iter : int, default=5
        MK-MTFL: alternations between the task solves and the closed-form
        task weights per evaluation of the mirror-descent objective (the
        inner loop; the paper uses 3-5; one when ``p = 2``).  Renamed from
        ``max_inner`` in 0.2.
    max_rank : int or None, default=300
        MK-MTSFL (and the shared blocks): rank cap of each kernel's
        eigendecomposition over all training points (leading eigenpairs;
        ``None`` keeps the full rank).
        The factors belong to the fit (the ``*CV`` estimators share them
        between the fits of their C grid on the same rows, then drop them;
        :class:`kernlearn.methods.mtmkl.FactorStore`).
    verbose : int, default=0
        Progress (:mod:`kernlearn.progress`): 1 draws a bar on a terminal (a
        widget in a notebook; nothing in a pipe or log file) and says why the
        fit stopped; 2 prints one line per mirror-descent iteration to
        standard output.
    max_inner : int, optional
        Deprecated alias of ``inner_max_iter`` (FutureWarning when set;
        removed in 0.4).
"""

_AUTO_DOC = """
        ``"auto"``: ``C`` and the kernel weights are learned together by the
        closed-form leave-one-out error of every task's kernel ridge (one
        weight vector for all tasks, MK-MTFL's model with ``p = 2``; needs
        the square loss and ``formulation="mtfl"``; with ``shared=True`` the
        weights of shared components on the linear kernels too), not by the
        training objective, which rewards kernels that interpolate each
        task's few rows; the learned value is ``C_``.  The search is L-BFGS-B with its
        own cap of 200 iterations (a ``ConvergenceWarning`` when it runs out):
        ``p``, ``max_iter``, ``tol``, ``inner_max_iter`` and ``verbose``, the
        mirror descent's, do not apply to it (a ``UserWarning`` names those
        set); ``n_iter_`` and ``converged_`` are the search's.
        :class:`MultitaskMKLRegressorCV` does this by default."""

# the mirror descent's settings, which the leave-one-out search does not run
_LOO_UNUSED = ("p", "max_iter", "tol", "inner_max_iter", "max_inner", "verbose")
_LOO_SEARCH = ("the leave-one-out search (L-BFGS-B, its own cap of 200 iterations) "
               "runs no mirror descent")

_ATTRS_DOC = """
    Attributes
    ----------
    kernel_weights_ : ndarray of shape (n_kernels,)
        Weights of the base kernels' task-specific blocks (in the paper's
        model, ``shared=False``, every block is task-specific and they sum to
        one): :math:`\\gamma` (MK-MTFL), the normalised traces
        :math:`\\mathrm{{tr}}\\,Q_j` (MK-MTSFL), the mean of the per-task weights
        (``"mkl"``) or uniform (``"independent"``).
    task_kernel_weights_ : ndarray of shape (n_tasks, n_kernels)
        MK-MTFL: the task weights :math:`\\lambda_{{jt}}` of Lemma 3.1 (all ones
        for ``p = 2``); ``"mkl"``: each task's own kernel weights
        :math:`\\gamma_t`; MK-MTSFL: trace of each kernel's learned
        part in the task's kernel relative to the base kernel's.
    shared_kernel_weights_ : ndarray of shape (n_kernels,)
        Weights of the shared blocks (zero with ``shared=False``; MK-MTSFL:
        normalised traces; MK-MTFL: their coordinates of :math:`\\gamma`);
        with ``kernel_weights_`` and the constant block of the bias
        deviations they sum to one.
    shared_ : bool
        Whether shared components were fitted (``shared``).
    C_ : float
        The loss weight of the fit (``C``, or the one learned with
        ``C="auto"``).
    intercept_ : ndarray of shape (n_tasks,)
        Biases :math:`b_t` (with shared components: the common bias plus each
        task's deviation).
    tasks_ : ndarray of shape (n_tasks,)
        Task ids seen in ``fit`` (``[0]`` without ``task_index``).
    objective_ : float
        Best objective value (the partial dual, equal to the primal optimum
        at convergence; ``C="auto"``: the leave-one-out sum of squared
        errors of the learned model).
    gap_ : float
        Duality gap at the end (0 with ``C="auto"``).
    history_ : dict of ndarray
        Per iteration ``objective``, ``best``, ``gap``, ``n_active``, ``time``;
        ``fit_time`` (``C="auto"``: ``loo_sse``, the leave-one-out sum of
        squared errors, ``loo_task_sse``, its share of each task, and
        ``fit_time``).
    n_iter_ : int
        Mirror-descent iterations run (``C="auto"``: L-BFGS-B iterations of
        the leave-one-out search).
    converged_ : bool
        Whether the gap fell below ``tol`` (MK-MTFL's gap near ``tol`` and at
        ``max_iter`` is that of its iterations' linearisations together;
        ``C="auto"``: whether the
        search stopped before its iteration cap).
    kernels_ : TaskKernels
        The fitted base kernels.
    n_features_in_ : int
        Number of input features (training samples when precomputed).
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the input columns, when ``X`` had string column names (a
        pandas DataFrame).

    References
    ----------
    Jawanpuria, Nath (2011), "Multi-task multiple kernel learning", SDM:
    Lemma 3.1, eq. (2.2), (3.3), sec. 4.  Argyriou, Evgeniou, Pontil (2008),
    "Convex multi-task feature learning", Mach. Learn. 73.
"""


def _fit_doc(summary, y, sample_weight, returns):
    """The ``fit`` docstring of the multitask MKL estimators (the CV one too)."""
    return f"""{summary}

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or list
            Training data, dense or sparse (CSR, CSC, COO: the kernels are
            evaluated on the sparse rows, never densified, the histogram
            kernels included), or
            (``kernels="precomputed"``) k training Gram matrices of shape
            (n_samples, n_samples).
        y : array-like of shape (n_samples,)
            {y}
        task_index : array-like of shape (n_samples,), optional
            Task id of each sample; ``None`` means one task.
        sample_weight : array-like of shape (n_samples,), optional
            {sample_weight}

        Returns
        -------
        self : {returns}
        """


_SCORE_X = """X : array-like of shape (n_samples, n_features), or list
            Inputs, or (precomputed) k test-vs-train Gram matrices."""


_TARGET_ATTRS = """    y_mean_, y_scale_ : ndarray of shape (n_tasks,)
        The targets' standardisation, weighted by ``sample_weight``: with
        the square loss, no shared components and ``standardize=True``, each
        task's own mean and standard deviation (every task is fitted on its
        own standardised targets, so that the model depends on no task's
        units); with ``loss="epsilon_insensitive"`` and ``standardize=True``,
        those of all rows pooled (the same in every entry); else 0 and 1.
        ``objective_``, ``gap_`` and ``history_`` refer to the standardised
        targets, ``intercept_`` and the predictions are in the units of ``y``.
"""


class MultitaskMKLRegressor(RegressorMixin, _BaseMultitaskMKL):
    __doc__ = (
        """Multitask multiple kernel regression: MK-MTFL and MK-MTSFL.

    Tasks are given by ``task_index`` (one task id per sample) at ``fit`` and
    ``predict``; every task has its own predictor
    :math:`f_t(x) = \\sum_i \\beta_{ti}\\tilde k_t(x_{ti}, x) + b_t` on a kernel
    :math:`\\tilde k_t` learned jointly from the base kernels.  The inner
    per-task problems are kernel ridge regressions (``loss="square"``,
    closed form, batched over tasks) or SVRs (``"epsilon_insensitive"``).
"""
        + _PARAMS_DOC.format(machine="kernel ridge regression", C="1.0", auto=' or "auto"',
                      auto_doc=_AUTO_DOC)
        + """    loss : {"square", "epsilon_insensitive"}, default="square"
        Inner loss: square (kernel ridge, MTSFL's loss) or SVR's.
    epsilon : float, default=0.1
        SVR tube width (``loss="epsilon_insensitive"``): in standard
        deviations of the targets (of all tasks pooled) with
        ``standardize=True`` (the SVR is then fitted on standardised targets,
        so that its model does not depend on the units of ``y``; the tasks'
        units relative to each other do count: give every task in the same
        units), in the units of ``y`` with ``standardize=False``.  The square
        loss without shared components fits each task on its own
        standardised targets (``y_scale_``), so its model depends on no
        task's units.
    shared : bool, default=False
        Shared components (an extension of the paper; ``formulation="mtfl"``
        or ``"mtsfl"``; ``False``, the default, is the paper's model).  Every
        kernel gets a second block whose weight vector is common to all
        tasks, and each task's bias becomes one common free bias plus a
        deviation on a constant kernel, so that :math:`f_t = g + h_t + b +
        d_t` with the shared :math:`g` and the task-specific :math:`h_t, d_t`
        regularised by the same mixed norm.  MK-MTSFL's trace budget (or
        MK-MTFL's kernel simplex) decides how much of each kernel is shared
        (``shared_kernel_weights_``), with no extra hyper-parameter.  With
        few points per task and a predictor common to the tasks this is what
        lets them borrow strength (the paper's models share only kernel
        weights or a subspace, so each task still fits its own
        coefficients); with unrelated tasks it can be worse than the paper's
        model, so it is an opt-in: compare the two by validation
        (:class:`MultitaskMKLRegressorCV` or ``GridSearchCV`` over
        ``shared``).  A common predictor needs the tasks in common units:
        give every task's targets in the same units (the targets are not
        standardised task by task with shared components).  Task levels far
        apart (by more than the spread within
        tasks) are left nearly free, as in the paper's model.  The tasks'
        inner problems are then coupled, through every kernel's factor over
        all training rows (time O(n^2)); with the SVR loss, one libsvm
        problem on the n x n kernel of all training rows.  With
        ``C="auto"`` the shared components are on the linear kernels of the
        list only (exact factors of rank at most their columns; none with
        ``kernels="precomputed"``), and their
        weights are learned by the leave-one-out error with the others (zero
        when the tasks do not share a linear predictor).
"""
        + _ATTRS_DOC.replace("    tasks_ : ndarray", _TARGET_ATTRS + "    tasks_ : ndarray", 1)
        + """
    Examples
    --------
    >>> import numpy as np
    >>> from kernlearn import MultitaskMKLRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); t = np.repeat([0, 1, 2], 20)
    >>> y = X[:, 0] + 0.1 * rng.normal(size=60)
    >>> reg = MultitaskMKLRegressor(kernels=["linear", ("rbf", {"gamma": 1.0})])
    >>> reg.fit(X, y, task_index=t).predict(X[:2], task_index=t[:2]).shape
    (2,)
"""
    )

    _y_numeric = True
    _parameter_constraints = {
        **_BaseMultitaskMKL._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "loss": [StrOptions({"square", "epsilon_insensitive"})],
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "shared": ["boolean"],
    }

    def __init__(self, kernels=None, *, formulation="mtfl", p=2.0, q=1.5, C=1.0,
                 loss="square", epsilon=0.1, shared=False, normalize=True,
                 standardize=True, max_iter=100, tol=1e-3, inner_max_iter=5,
                 max_rank=300, verbose=0, max_inner="deprecated"):
        self.kernels = kernels
        self.shared = shared
        self.formulation = formulation
        self.p = p
        self.q = q
        self.C = C
        self.loss = loss
        self.epsilon = epsilon
        self.normalize = normalize
        self.standardize = standardize
        self.max_iter = max_iter
        self.tol = tol
        self.inner_max_iter = inner_max_iter
        self.max_inner = max_inner
        self.max_rank = max_rank
        self.verbose = verbose

    @all_or_nothing
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, task_index=None, sample_weight=None):
        if isinstance(self.C, str):
            warn_unused(self, _LOO_UNUSED, 'C="auto"',
                        _LOO_SEARCH + "; pass a number as C to run it")
        warn_unused_formulation(self)
        return self._fit_regression(X, y, task_index, sample_weight)

    fit.__doc__ = _fit_doc(
        "Learn the shared kernel and the task predictors.",
        "Targets.",
        "Non-negative weights of the samples' losses (per-sample loss\n"
        "            weight :math:`C w_i`; the standardisation and kernel scales are\n"
        "            weighted too; zero-weight rows are left out).",
        "MultitaskMKLRegressor")

    def _fit_regression(self, X, y, task_index, sample_weight, C=None, factor_store=None,
                        C_grid=None):
        X, y = self._check_X(X, y, reset=True)
        y = np.asarray(y, dtype=float)
        X, y, task_index, sw = self._weighted_rows(X, y, task_index, sample_weight)
        if not np.isfinite(y).all():
            raise ValueError("y contains NaN or infinity.")
        ys, rows = _fitted_targets(self, y, task_index, sw)
        self._fit(X, ys, task_index, self.loss, self.epsilon, sw, self._shared(), C,
                  factor_store, C_grid, rows)
        self.intercept_ = self.intercept_ * self.y_scale_ + self.y_mean_
        return self

    def _shared(self):
        """Whether to fit shared components (the ``*CV`` estimator resolves "auto")."""
        return self.shared

    @dask_input_doc(lazy=True)
    def predict(self, X, task_index=None):
        """Predict each sample with its task's model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or list
            Inputs, or (precomputed) k test-vs-train Gram matrices.
        task_index : array-like of shape (n_samples,), optional
            Task id of each sample (required when fitted on several tasks).

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        if getattr(self, "y_scale_", None) is None:  # a model file of kernlearn <= 0.2
            return self._output(X, task_index)
        # (a model file written before per-task targets holds one pooled entry)
        n_tasks = len(self.tasks_)
        return self._output(X, task_index, units=(np.broadcast_to(self.y_scale_, n_tasks),
                                                  np.broadcast_to(self.y_mean_, n_tasks)))

    def score(self, X, y, task_index=None, sample_weight=None):
        return task_score(self, X, y, task_index, sample_weight)

    score.__doc__ = task_score_doc(
        "Coefficient of determination :math:`R^2` (over all samples, not per task)", _SCORE_X)


class MultitaskMKLClassifier(ProbabilityMixin, ClassifierMixin, _BaseMultitaskMKL):
    __doc__ = (
        """Multitask multiple kernel classification: MK-MTFL and MK-MTSFL with SVMs.

    Every task is a binary problem on the same two classes; tasks are given
    by ``task_index``.  The inner per-task problems are SVMs, as in the paper
    (libsvm's SMO, compiled, all tasks of a size at once).
    Binary only: more than two classes are refused (one-vs-rest tasks, as
    the paper's Caltech-101, are separate tasks of their own labels; or wrap
    it in :class:`~sklearn.multiclass.OneVsRestClassifier`).  Input may be
    sparse (never densified; see ``standardize``), as for
    :class:`MultitaskMKLRegressor`.
"""
        + _PARAMS_DOC.format(machine="SVM", C="10.0", auto="", auto_doc="")
        + """    shared : bool, default=False
        Shared components (an extension of the paper; ``formulation="mtfl"``
        or ``"mtsfl"``): every kernel gets a second block whose weight vector
        is common to all tasks, and each task's bias is one common bias plus
        a deviation on a constant kernel, all in the same mixed norm (see
        :class:`MultitaskMKLRegressor`).  The SVM of all tasks is then one
        libsvm problem on the n x n kernel of all training rows (O(n^2)
        memory), one more reason it is off by default; one-vs-rest tasks
        on the same images (the paper's Caltech-101) would repeat every row
        once per task.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes' losses (``"balanced"``: ``n / (n_classes *
        n_c)`` over all tasks' rows), multiplied into ``sample_weight``.
    probability : bool, default=False
        Fit Platt sigmoids on decision values from an internal 5-fold
        cross-validation (five extra fits, as ``SVC(probability=True)``) so
        that :meth:`predict_proba` exists (as with ``SVC``, :meth:`predict`
        follows the decision function and can differ from the most probable
        class on a few rows).
"""
        + _ATTRS_DOC.replace("    ----------\n", "    ----------\n    classes_ : ndarray of "
                             "shape (n_classes,)\n        The two class labels.\n"
                             + platt_attr_doc(logistic_loss=False), 1)
        + """    classes_ : ndarray of shape (2,)
        The two class labels.

    Examples
    --------
    >>> import numpy as np
    >>> from kernlearn import MultitaskMKLClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); t = np.repeat([0, 1], 30)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = MultitaskMKLClassifier(kernels=["linear"]).fit(X, y, task_index=t)
    >>> clf.predict(X[:3], task_index=t[:3]).shape
    (3,)
"""
    )

    _y_numeric = False
    _tasks_need_every_class = True  # (Platt's folds keep both classes in every task)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # one binary problem per task
        return tags

    _parameter_constraints = {
        **_BaseMultitaskMKL._parameter_constraints,
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "probability": ["boolean"],
        "shared": ["boolean"],
    }

    def __init__(self, kernels=None, *, formulation="mtfl", p=2.0, q=1.5, C=10.0,
                 shared=False, normalize=True, standardize=True, max_iter=100, tol=1e-3,
                 inner_max_iter=5, max_rank=300, verbose=0, class_weight=None,
                 probability=False, max_inner="deprecated"):
        self.shared = shared
        self.class_weight = class_weight
        self.probability = probability
        self.kernels = kernels
        self.formulation = formulation
        self.p = p
        self.q = q
        self.C = C
        self.normalize = normalize
        self.standardize = standardize
        self.max_iter = max_iter
        self.tol = tol
        self.inner_max_iter = inner_max_iter
        self.max_inner = max_inner
        self.max_rank = max_rank
        self.verbose = verbose

    @all_or_nothing
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, task_index=None, sample_weight=None):
        warn_unused_formulation(self)
        return self._fit_classification(X, y, task_index, sample_weight)

    def _fit_classification(self, X, y, task_index, sample_weight, C=None,
                            factor_store=None):
        X, y = self._check_X(X, y, reset=True)
        # every row, validated, for Platt's folds (the caller's X and y were
        # passed on: an array-like without indexing, or y of shape (n, 1),
        # stopped them on an internal TypeError / ValueError)
        X_all, y_all, t_all = X, y, task_index
        check_two_classes(y)
        X, y, task_index, sw = self._weighted_rows(X, y, task_index, sample_weight,
                                                   self.class_weight)
        check_two_classes(y, weighted=self._train_rows is not None)
        self.classes_, codes = encode_labels(y)
        _check_binary(self.classes_)
        signed = 2.0 * codes - 1.0
        rows = self._split_tasks(task_index, len(y))  # (once: the check's and the fit's)
        check_tasks_hold_both(signed, rows, self.tasks_,
                              weighted=self._train_rows is not None)
        self._fit(X, signed, task_index, "hinge", sample_weight=sw, shared=self.shared,
                  C=C, factor_store=factor_store, rows=rows)
        # (Platt's fold fits warn once in all: see _platt.inner_fits)
        *rows, task_kw = fitted_classes_rows(self, X_all, y_all, sample_weight, t_all)
        self._fit_platt(*rows, **task_kw)
        return self

    fit.__doc__ = _fit_doc(
        "Learn the shared kernel and the task classifiers.",
        "Labels of two classes; every task must contain both.",
        "Non-negative weights of the samples' losses (libsvm's per-sample\n"
        "            :math:`C w_i`), multiplied by ``class_weight``; zero-weight rows\n"
        "            are left out (a third label whose rows all weigh zero too: the\n"
        "            model, and its Platt sigmoid, are those of the two others).",
        "MultitaskMKLClassifier")

    @dask_input_doc(lazy=True)
    def decision_function(self, X, task_index=None):
        """Signed scores of ``classes_[1]``, each sample by its task's model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or list
            Inputs, or (precomputed) k test-vs-train Gram matrices.
        task_index : array-like of shape (n_samples,), optional
            Task id of each sample (required when fitted on several tasks).

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        return self._output(X, task_index)

    @dask_input_doc(lazy=True)
    def predict(self, X, task_index=None):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or list
            As in :meth:`decision_function`.
        task_index : array-like of shape (n_samples,), optional
            Task id of each sample.

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)  # (before classes_ is read)
        return self._output(X, task_index, partial(class_labels, classes=self.classes_),
                            self.classes_.dtype)

    @available_if(_has_proba)
    @dask_input_doc(lazy=True)
    def predict_proba(self, X, task_index=None):
        """Class probabilities (``probability=True``).

        Platt's sigmoid of the decision value, fitted on decision values
        from an internal cross-validation (one sigmoid for all tasks).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or list
            As in :meth:`decision_function`.
        task_index : array-like of shape (n_samples,), optional
            Task id of each sample.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
        """
        return self._output(X, task_index, self._proba_function(), width=2)

    def score(self, X, y, task_index=None, sample_weight=None):
        return task_score(self, X, y, task_index, sample_weight)

    score.__doc__ = task_score_doc("Accuracy", _SCORE_X)


def _conformance_instances():
    """Fast instances for scikit-learn's estimator checks (tests/test_common.py)."""
    kern = [linear_kernel, (rbf_kernel, {"gamma": 0.5})]
    return [
        (MultitaskMKLRegressor(kernels=kern, max_iter=5), {}),
        (MultitaskMKLRegressor(kernels=kern, formulation="mtsfl", max_iter=5), {}),
        (MultitaskMKLRegressor(kernels=kern, formulation="mtsfl", shared=True,
                               max_iter=5), {}),
        (MultitaskMKLRegressor(kernels=kern, shared=True, max_iter=5), {}),
        (MultitaskMKLClassifier(kernels=kern, max_iter=5), {}),
        # (its callables see sparse columns uncentred, as warned: another, worse
        # conditioned problem, whose weights and repeated rows part by 2e-4 after
        # 5 iterations; with the named kernels the sparse check passes)
        (MultitaskMKLClassifier(kernels=kern, formulation="mtsfl", shared=True,
                                max_iter=5),
         {"check_sample_weight_equivalence_on_sparse_data": "callables on sparse "
          "columns see them uncentred: an ill-conditioned shared MK-MTSFL stopped "
          "at max_iter=5"}),
        (MultitaskMKLClassifier(kernels=["linear", ("rbf", {"gamma": 0.5})],
                                formulation="mtsfl", shared=True, max_iter=5), {}),
        # (Platt's folds take the validated data: y of shape (n, 1) failed)
        (MultitaskMKLClassifier(kernels=kern, max_iter=5, probability=True), PLATT_XFAIL),
        # (gamma="scale" resolved with the sample weights, as every kernel list)
        (MultitaskMKLRegressor(kernels=["rbf", "linear"], max_iter=5), {}),
    ]
