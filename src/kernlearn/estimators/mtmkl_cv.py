"""Multitask MKL regression with C and the kernel weights chosen by validation.

:class:`MultitaskMKLRegressorCV` is :class:`MultitaskMKLRegressor` with
scikit-learn's ``*CV`` interface.  By default (``kernel_selection="loo"``)
the kernel weights and C are learned together by the closed-form
leave-one-out error of every task's kernel ridge
(:mod:`kernlearn.methods.mtmkl.selection`), not by the training objective.
With ``kernel_selection="objective"`` the kernel weights are the paper's
(the training objective at each C) and C comes from a grid ``Cs``: folds
stratified by task (every task in every training and validation fold), the
C of the best mean validation score, and a refit on all rows; with the
square loss and a within-task formulation, ``cv="loo"`` scores every C by
closed-form leave-one-out residuals (one fit per C instead of one per C and
fold).
"""

import hashlib
import numbers

import numpy as np
import scipy.sparse as sp
from scipy.stats import rankdata
from sklearn.base import _fit_context
from sklearn.utils._param_validation import StrOptions

from ..methods._slkl_options import positive_numbers
from ..methods.mtmkl import FactorStore
from ..methods.mtmkl._fold_starts import (
    keep_start,
    lead_start,
    mean_start,
    path_order,
    row_duals,
)
from ..methods.mtmkl.selection import loo_residuals
from ..solvers._base import single_blas_thread
from ..utils._messages import plain_value
from ._base import (
    _refuse_both,
    all_or_nothing,
    check_two_classes,
    check_weighted_classes,
    encode_labels,
    fit_sample_weight,
)
from ._decisions import class_labels
from ._mtmkl_folds import _FoldsMixin, _Stratified  # noqa: F401  (_Stratified: its tests)
from ._multitask import (
    _positive_rows,
    check_tasks_hold_both,
    split_tasks,
    warn_unused_formulation,
)
from ._renamed import inner_fits, warn_unused
from .mtmkl import (
    _LOO_SEARCH,
    _LOO_UNUSED,
    MultitaskMKLClassifier,
    MultitaskMKLRegressor,
    _check_binary,
    _fit_doc,
)

__all__ = ["MultitaskMKLClassifierCV", "MultitaskMKLRegressorCV"]

#: Folds of at most this many training rows keep their kernel blocks for
#: their C grid (one kernel over 2,000 rows of one task: 32 MB)
_BLOCK_ROWS = 2000


class _SelectionMixin(_FoldsMixin):
    """Grid, folds and results of the ``*CV`` multitask estimators."""

    def _grid(self, fitting=False):
        """The validated ``Cs``; at the start of ``fit`` (``fitting``) the settings
        the formulation does not read are named too (once, not per fold)."""
        if fitting:
            warn_unused_formulation(self)
        if len(self.Cs) == 0:
            raise ValueError(f"Cs must be a non-empty list of positive numbers, got "
                             f"{self.Cs!r}.")
        # each entry a number ('1', True and nested lists were read as numbers, a grid
        # of one value flattened; GridSearchCV would hand them to C and fail)
        return np.array(positive_numbers("Cs", self.Cs, "a non-empty list of positive "
                                         "numbers"))

    @staticmethod
    def _task_pos(task_index, n):
        """Task position of every row (zeros without ``task_index``)."""
        if task_index is None:
            return np.zeros(n, dtype=np.int64)
        return np.searchsorted(split_tasks(task_index, n)[0], np.asarray(task_index))

    def _record(self, Cs, scores):
        """``cv_results_``, ``best_score_``, ``n_splits_`` of a score table (C x split)."""
        mean = scores.mean(axis=1)
        if not np.isfinite(mean).all():
            raise ValueError("a validation score is not finite: " + str(mean))
        best = int(np.argmax(mean))
        rank = rankdata(-mean, method="min").astype(np.int32)  # as GridSearchCV's
        # (``params`` and ``best_index_`` as GridSearchCV's: a user's code that
        # reads a search's table reads this one)
        self.cv_results_ = {"param_C": np.asarray(Cs, dtype=float),
                            "params": [{"C": float(C)} for C in Cs],
                            "mean_test_score": mean,
                            "std_test_score": scores.std(axis=1), "rank_test_score": rank}
        for k in range(scores.shape[1]):
            self.cv_results_[f"split{k}_test_score"] = scores[:, k]
        self.n_splits_ = scores.shape[1]
        self.best_index_, self.best_score_ = best, float(mean[best])
        return best

    def _rows(self, X, rows, cols=None):
        if self._precomputed():
            grams = np.stack([np.asarray(G, dtype=float) for G in X])
            return grams[:, rows][:, :, rows if cols is None else cols]
        return X[rows]

    def _base_params(self):
        params = self.get_params()
        for name in ("Cs", "cv", "kernel_selection"):
            params.pop(name, None)
        # verbose=1 is the refit's bar and stop line: every validation fit's
        # own (26 alike "[MK-MTFL] stop" lines with the defaults) buried it
        params["verbose"] = params["verbose"] if params["verbose"] >= 2 else 0
        # both names are refused before the first validation fit, not by each
        if params["max_inner"] != "deprecated":
            _refuse_both(self, "max_inner", "inner_max_iter", params["max_inner"])
        return params

    @staticmethod
    def _validation_scores(score_table):
        """``score_table()`` (a score per C and fold) under :func:`inner_fits`:
        one per fit (26 with the defaults) of its renamed-parameter and
        convergence warnings buried the refit's own."""
        return inner_fits(score_table, "validation fits", "their scores may rank C wrongly")

    def _fold_fit(self, X, y, task_index, sw, C, train):
        """The base estimator at ``C`` fitted on the rows ``train``."""
        t = None if task_index is None else np.asarray(task_index)
        est = self._base(C)
        # (no _validate_params: the parameters are this estimator's, checked
        # by its fit, and C one of the checked Cs)
        est._grams_checked = True
        self._fit_base(est, self._rows(X, train), y[train],
                       None if t is None else t[train],
                       None if sw is None else sw[train])
        return est

    def _fold_score(self, X, y, task_index, sw, C, train, test):
        """Validation score of the base estimator at ``C`` fitted on ``train``."""
        t = None if task_index is None else np.asarray(task_index)
        return self._fold_fit(X, y, task_index, sw, C, train).score(
            self._rows(X, test, train), y[test],
            task_index=None if t is None else t[test],
            sample_weight=None if sw is None else sw[test])


class MultitaskMKLRegressorCV(_SelectionMixin, MultitaskMKLRegressor):
    """Multitask multiple kernel regression with C (and kernel weights) by validation.

    ``kernel_selection="loo"`` (the default): the kernel weights (one
    vector for all tasks) and ``C`` minimise the closed-form leave-one-out
    error of every task's kernel ridge: :class:`MultitaskMKLRegressor` with
    ``C="auto"``.  The training objective (``"objective"``) rewards kernels
    that interpolate each task's few rows (a narrow RBF takes most of the
    weight and predicts poorly); left-out residuals do not, so an
    interpolating kernel in the list gets no weight.  With ``shared="auto"``
    (the default) every linear kernel of the list also gets a component
    common to all tasks, whose weight the same criterion learns (zero when
    the tasks do not share a linear predictor, so the model is then the
    paper's): tasks with few rows borrow strength where they share
    structure.  This needs the square loss and ``formulation="mtfl"``
    (``p``, ``inner_max_iter``, ``max_iter``, ``tol`` and ``verbose`` are then
    not used, and a ``UserWarning`` names those set: the search is L-BFGS-B
    with its own cap of 200 iterations and a ``ConvergenceWarning`` when it
    runs out); ``cv="loo"`` reports the
    leave-one-out :math:`R^2` of the learned model (``best_score_``), a
    K-fold ``cv`` the validation scores of the whole procedure (weights and
    C learned again on every training fold), and ``Cs`` only start the
    search over C.

    ``kernel_selection="objective"``: the paper's kernel weights.  Fits
    :class:`MultitaskMKLRegressor` for every ``C`` of ``Cs`` on every
    training fold, scores it on the validation fold (the coefficient of
    determination over all validation rows, as
    :meth:`MultitaskMKLRegressor.score`, the tasks pooled in the targets'
    units, so a task in larger units weighs more in the choice of ``C``
    although each task is fitted on its own standardised targets; when some
    validation fold holds
    fewer than two rows, as ``cv=LeaveOneOut()``'s, where :math:`R^2` is
    undefined: the :math:`R^2` of all folds' validation predictions
    pooled, one score per ``C``), keeps the ``C`` of the best mean
    score (the first of equal ones) and refits on all rows.  With the same
    grid and folds this is exactly ``GridSearchCV(MultitaskMKLRegressor(...),
    {"C": Cs}, cv=folds)`` under metadata routing; the fits are cold (no
    warm start, so the two agree), and MK-MTSFL's kernel factors over the
    training rows of a fold are computed once for all ``C``.

    Parameters
    ----------
    kernels : list or "precomputed", default=None
        As in :class:`MultitaskMKLRegressor`.
    Cs : array-like of float, default=(0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
        Candidate loss weights ``C`` (``kernel_selection="loo"``: starting
        points of the search over C, at uniform kernel weights).
    kernel_selection : {"loo", "objective"}, default="loo"
        How the kernel weights are learned: by the leave-one-out error, or
        by the training objective of ``formulation`` (the paper's).
    cv : int, "loo", cross-validation generator, iterable or None, default="loo"
        An int: that many folds of :class:`~sklearn.model_selection.StratifiedKFold`
        stratified by task (in order, no shuffle; ``None``: 5, as
        scikit-learn's, not the default ``"loo"``; a task of fewer rows than
        folds is in as many validation folds as it has rows); a splitter: its
        ``split(X, task_positions)`` (one by groups is refused: pass the pairs
        of its ``split(X, y, groups)``); an iterable: ``(train, test)`` index
        pairs (a generator serves one fit: a list or a splitter can be
        refitted, cloned and saved).  Rows of zero sample weight are in no
        fold: an int or a splitter splits the others, as if they were
        removed (``TimeSeriesSplit`` orders the kept rows); a splitter whose
        folds do not depend on X (``PredefinedSplit``, a user's fixed folds)
        numbers the caller's rows, and its folds, as a list of pairs, lose
        them; every fold needs a row of positive weight.  ``"loo"``: closed-form leave-one-out residuals of each task's
        kernel ridge at the kernel weights learned on all rows (square loss,
        ``formulation`` ``"mtfl"``, ``"mkl"`` or ``"independent"``, no shared
        components; the kernel weights are not refitted per left-out row).
    formulation : {"mtfl", "mtsfl", "mkl", "independent"}, default="mtfl"
    p : float, default=2.0
    q : float, default=1.5
    loss : {"square", "epsilon_insensitive"}, default="square"
    epsilon : float, default=0.1
        SVR tube width, in standard deviations of the targets with
        ``standardize=True`` (see :class:`MultitaskMKLRegressor`).
    shared : bool or "auto", default="auto"
        Shared components (see :class:`MultitaskMKLRegressor`).  ``"auto"``:
        ``True`` with ``kernel_selection="loo"`` (on the linear kernels,
        weights learned by leave-one-out, zero when they do not help),
        ``False`` with ``"objective"`` (the paper's model).
    normalize : bool, default=True
    standardize : bool, default=True
    max_iter : int, default=100
    tol : float, default=1e-3
    inner_max_iter : int, default=5
    max_rank : int or None, default=300
    verbose : int, default=0
        As in :class:`MultitaskMKLRegressor`, for the refit on all rows; the
        validation fits report at 2 only.
    max_inner : int, optional
        Deprecated alias of ``inner_max_iter`` (FutureWarning when set;
        removed in 0.4).

    Attributes
    ----------
    C_ : float
        The chosen (or, ``kernel_selection="loo"``, learned) ``C``.
    best_score_ : float
        Its mean validation score.
    best_index_ : int
        Its row of ``cv_results_``.
    cv_results_ : dict of ndarray
        ``param_C``, ``params`` (a list of ``{"C": C}``),
        ``split{k}_test_score`` (one per fold; ``"loo"``, or a fold of fewer
        than two rows: one entry, the :math:`R^2` of the
        left-out predictions pooled), ``mean_test_score``,
        ``std_test_score``, ``rank_test_score``, as ``GridSearchCV``'s
        (``kernel_selection="loo"``: one candidate, the learned model).
    n_splits_ : int
        Number of folds (1 for ``"loo"``).
    kernel_weights_, shared_kernel_weights_, task_kernel_weights_, intercept_, \
tasks_, objective_, gap_, history_, n_iter_, converged_, shared_, kernels_, \
y_mean_, y_scale_, n_features_in_, feature_names_in_
        Of the refit at ``C_``, as in :class:`MultitaskMKLRegressor`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernlearn import MultitaskMKLRegressorCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(90, 3)); t = np.repeat([0, 1, 2], 30)
    >>> y = X[:, 0] * (t - 1) + 0.3 * rng.normal(size=90)
    >>> reg = MultitaskMKLRegressorCV(["linear"], Cs=[0.01, 1.0], cv=3,
    ...                               kernel_selection="objective")
    >>> float(reg.fit(X, y, task_index=t).C_)
    1.0
    >>> narrow = ("rbf", {"gamma": 1e4})  # interpolates: learns no weight
    >>> reg = MultitaskMKLRegressorCV(["linear", narrow]).fit(X, y, task_index=t)
    >>> reg.kernel_weights_.round(3).tolist()
    [1.0, 0.0]
    """

    _parameter_constraints = {
        **{k: v for k, v in MultitaskMKLRegressor._parameter_constraints.items()
           if k != "C"},
        "Cs": ["array-like"],
        "cv": ["cv_object", StrOptions({"loo"})],
        "kernel_selection": [StrOptions({"loo", "objective"})],
        "shared": ["boolean", StrOptions({"auto"})],
    }

    def __init__(self, kernels=None, *, Cs=(0.01, 0.1, 1.0, 10.0, 100.0, 1000.0),
                 kernel_selection="loo", cv="loo", formulation="mtfl", p=2.0, q=1.5,
                 loss="square", epsilon=0.1, shared="auto", normalize=True,
                 standardize=True, max_iter=100,
                 tol=1e-3, inner_max_iter=5, max_rank=300, verbose=0,
                 max_inner="deprecated"):
        self.kernels = kernels
        self.Cs = Cs
        self.kernel_selection = kernel_selection
        self.cv = cv
        self.formulation = formulation
        self.p = p
        self.q = q
        self.loss = loss
        self.epsilon = epsilon
        self.shared = shared
        self.normalize = normalize
        self.standardize = standardize
        self.max_iter = max_iter
        self.tol = tol
        self.inner_max_iter = inner_max_iter
        self.max_inner = max_inner
        self.max_rank = max_rank
        self.verbose = verbose

    def _shared(self):
        if isinstance(self.shared, str):  # "auto"
            return self.kernel_selection == "loo"
        return bool(self.shared)

    def _base(self, C):
        return MultitaskMKLRegressor(**{**self._base_params(), "shared": self._shared()},
                                     C=C)

    def _fit_base(self, est, X, y, task_index, sw):
        est._fit_regression(X, y, task_index, sw, C_grid=self._grid(),
                            factor_store=self._store)

    @all_or_nothing
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, task_index=None, sample_weight=None):
        Cs = self._grid(fitting=True)
        X_in = X
        Xv, yv = self._check_X(X, y, reset=True)
        n = len(yv)
        X = Xv if self._precomputed() or sp.issparse(Xv) else np.asarray(Xv)
        yv = np.asarray(yv)
        pos = self._task_pos(task_index, n)  # task positions: the folds' strata
        # checked before the folds index it (a wrong length was an IndexError)
        sw = fit_sample_weight(sample_weight, n)
        # the refit validates the caller's X again: its column names are kept
        X_refit = X if self._precomputed() else X_in
        # one factor store for every fit of this selection (the folds' and
        # the refit's kernel factors, keyed by content), dropped after it
        self._store = FactorStore()
        # the folds' and the refit's Gram matrices are (principal submatrices
        # of) the ones checked above: not checked for PSD again in every fit
        self._grams_checked = True
        try:
            if self.kernel_selection == "loo":
                return self._fit_loo(X, X_refit, yv, pos, task_index, sw, Cs)
            if isinstance(self.cv, str):  # "loo" (the constraints allow no other)
                scores = self._validation_scores(lambda: np.array(
                    [[self._loo_score(X, yv, task_index, sw, C)] for C in Cs]))
            else:
                # the folds once for all C: a generator of splits (which
                # scikit-learn's cv takes) was spent by the first C
                splits = self._splits(pos, sw, task_index)
                scores = self._validation_scores(
                    lambda: self._fold_table(X, yv, task_index, sw, Cs, splits))
            best = (self._record(Cs, scores) if isinstance(self.cv, str)
                    else self._record_folds(Cs, scores, splits))
            self.C_ = float(Cs[best])
            return self._fit_regression(X_refit, yv, task_index, sample_weight,
                                        C=self.C_, factor_store=self._store)
        finally:
            del self._store, self._grams_checked

    def _fold_table(self, X, y, task_index, sw, Cs, splits):
        """Validation scores, one row per C, one column per fold (or one, pooled).

        :math:`R^2` is undefined on a validation fold of one row (scikit-learn
        gives NaN, and the fit stopped with "a validation score is not
        finite: [nan]" under ``cv=LeaveOneOut()``).  When some fold holds
        fewer than two rows, each C is scored once, by the :math:`R^2` of the
        validation predictions of all folds pooled (as ``cv="loo"``'s).
        """
        if min(len(te) for _, te in splits) >= 2:
            return np.array([[self._fold_score(X, y, task_index, sw, C, tr, te)
                              for tr, te in splits] for C in Cs])
        t = None if task_index is None else np.asarray(task_index)
        test = np.concatenate([te for _, te in splits])
        w = np.ones(len(test)) if sw is None else sw[test]
        table = []
        for C in Cs:
            pred = np.concatenate([self._fold_fit(X, y, task_index, sw, C, tr).predict(
                self._rows(X, te, tr), task_index=None if t is None else t[te])
                for tr, te in splits])
            table.append([_pooled_r2(float(np.sum(w * (y[test] - pred) ** 2)), y[test], w)])
        return np.array(table)

    def _record_folds(self, Cs, scores, splits):
        """:meth:`_record`; ``n_splits_`` the number of folds (one pooled column or not)."""
        best = self._record(Cs, scores)
        self.n_splits_ = len(splits)
        return best

    def _check_loo(self):
        """Refuse what the leave-one-out search cannot fit; name what it does not use."""
        if self.loss != "square" or self.formulation != "mtfl":
            raise ValueError("kernel_selection='loo' needs loss='square' and "
                             "formulation='mtfl'; use kernel_selection='objective' "
                             "otherwise.")
        warn_unused(self, _LOO_UNUSED, 'kernel_selection="loo"',
                    _LOO_SEARCH + '; kernel_selection="objective" runs it')

    def _fit_loo(self, X, X_refit, y, pos, task_index, sw, Cs):
        """Kernel weights and C by leave-one-out (``kernel_selection="loo"``)."""
        self._check_loo()
        if isinstance(self.cv, str):
            self._fit_regression(X_refit, y, task_index, sw, C="auto", C_grid=Cs,
                                 factor_store=self._store)
            keep = slice(None) if self._train_rows is None else self._train_rows
            y_fit = np.asarray(y, dtype=float)[keep]
            w = np.ones(len(y_fit)) if sw is None else sw[keep]
            # each task's leave-one-out error in its units, not its standardised ones
            sse = float(self._model.history["loo_task_sse"] @ self.y_scale_ ** 2)
            scores = np.array([[_pooled_r2(sse, y_fit, w)]])
            self._record([self.C_], scores)
        else:
            splits = self._splits(pos, sw, task_index)
            scores = self._validation_scores(
                lambda: self._fold_table(X, y, task_index, sw, ["auto"], splits))
            self._fit_regression(X_refit, y, task_index, sw, C="auto", C_grid=Cs,
                                 factor_store=self._store)
            self._record_folds([self.C_], scores, splits)
        return self

    fit.__doc__ = _fit_doc(
        "Choose C by cross-validation, then refit on all rows.",
        "Targets.",
        "Non-negative weights of the samples' losses, in every fit and in\n"
        "            the validation scores.",
        "MultitaskMKLRegressorCV")

    def _loo_score(self, X, y, task_index, sw, C):
        if self.loss != "square" or self._shared() or self.formulation == "mtsfl":
            raise ValueError("cv='loo' needs loss='square', shared=False and "
                             "formulation 'mtfl', 'mkl' or 'independent'; use "
                             "K-fold cross-validation (cv=5) otherwise.")
        est = self._base(C)
        est._grams_checked = True
        est._validate_params()
        est._fit_regression(X, y, task_index, sw, factor_store=self._store)
        keep = (slice(None) if est._train_rows is None else est._train_rows)
        y_fit = np.asarray(y, dtype=float)[keep]
        w = np.ones(len(y_fit)) if sw is None else sw[keep]
        # the fit's targets are each task's standardised ones: so are its residuals
        pos = self._task_pos(None if task_index is None else np.asarray(task_index)[keep],
                             len(y_fit))
        with single_blas_thread():
            res = loo_residuals(est.kernels_, est._blocks, est._model,
                                (y_fit - est.y_mean_[pos]) / est.y_scale_[pos], C,
                                None if sw is None else w) * est.y_scale_[pos]
        # the pooled R^2 of the left-out predictions, as score()
        return _pooled_r2(np.sum(w * res ** 2), y_fit, w)


def _pooled_r2(sse, y, w):
    r""":math:`R^2 = 1 - SSE / SST` of targets ``y`` (weights ``w``), as ``score()``.

    On constant targets (:math:`SST = 0`) it is scikit-learn's ``r2_score``
    value: 1 for exact predictions, else 0.  It was :math:`-\infty` or NaN,
    and the fit stopped with "a validation score is not finite".
    """
    sst = float(np.sum(w * (y - np.average(y, weights=w)) ** 2))
    if sst > 0:
        return float(1.0 - sse / sst)
    return 1.0 if sse == 0 else 0.0


class MultitaskMKLClassifierCV(_SelectionMixin, MultitaskMKLClassifier):
    """Multitask multiple kernel classification with C chosen by cross-validation.

    :class:`MultitaskMKLClassifier` with scikit-learn's ``*CV`` interface,
    as :class:`MultitaskMKLRegressorCV` with ``kernel_selection="objective"``
    (the SVMs' hinge loss has no closed-form leave-one-out): fits the
    classifier for every ``C`` of ``Cs`` on every training fold, scores it
    on the validation fold (accuracy over all validation rows, as
    :meth:`MultitaskMKLClassifier.score`), keeps the ``C`` of the best mean
    score (the first of equal ones) and refits on all rows.  With the same
    grid and folds this is ``GridSearchCV(MultitaskMKLClassifier(...),
    {"C": Cs}, cv=folds)`` under metadata routing, with no routing needed,
    up to where each fit stops: each fold's kernel blocks are computed once
    for all ``C``; a fold's fits go from the middle ``C`` of the grid up, then
    down, each starting from the nearest ``C`` fitted (its SVM duals scaled,
    its kernel weights), the middle one of a fold after the first from the
    previous fold's fit at it, and the refit starts from its fold fits at ``C_``
    (their mean duals and kernel weights).  Every fit still stops on its own
    duality gap (``tol``), so the models are the cold fits' optimum within
    it, not the same iterate (the kernel weights can differ where the
    objective is flat in them).
    Binary only (every task the same two classes) and dense input only, as
    :class:`MultitaskMKLClassifier`; no ``probability`` (fit
    ``MultitaskMKLClassifier(C=clf.C_, probability=True)`` for Platt
    probabilities).

    Parameters
    ----------
    kernels : list or "precomputed", default=None
        As in :class:`MultitaskMKLClassifier`.
    Cs : array-like of float, default=(0.1, 1.0, 10.0)
        Candidate loss weights ``C``.  The default stops at 10: on
        overlapping classes the SVM duals at ``C`` = 100 and 1000 took nearly
        all of a fit's time (minutes where ``SVC()`` takes a tenth of a
        second) and were not chosen with a gain where they finished
        (BENCHMARKS.md); pass a wider grid to search them.
    cv : int, cross-validation generator, iterable or None, default=5
        An int: that many folds of :class:`~sklearn.model_selection.StratifiedKFold`
        stratified by task and class (in order, no shuffle: every task and
        its two classes in every fold, a class of a task with fewer rows than
        folds in as many as it has rows; ``None``: 5); a splitter: its ``split(X, strata)``
        with ``strata = 2 * task position + class`` (one by groups is refused:
        pass the pairs of its ``split(X, y, groups)``); an iterable:
        ``(train, test)`` index pairs (a generator serves one fit: a list or
        a splitter can be refitted, cloned and saved).  Rows of zero sample
        weight are in no fold, as in :class:`MultitaskMKLRegressorCV`.
    formulation : {"mtfl", "mtsfl", "mkl", "independent"}, default="mtfl"
    p : float, default=2.0
    q : float, default=1.5
    shared : bool, default=False
    normalize : bool, default=True
    standardize : bool, default=True
    max_iter : int, default=100
    tol : float, default=1e-3
    inner_max_iter : int, default=5
    max_rank : int or None, default=300
    verbose : int, default=0
        As in :class:`MultitaskMKLRegressorCV`.
    class_weight : dict, "balanced" or None, default=None
        As in :class:`MultitaskMKLClassifier`.
    max_inner : int, optional
        Deprecated alias of ``inner_max_iter`` (FutureWarning when set;
        removed in 0.4).

    Attributes
    ----------
    C_ : float
        The chosen ``C``.
    best_score_ : float
        Its mean validation accuracy.
    best_index_ : int
        Its row of ``cv_results_``.
    cv_results_ : dict of ndarray
        ``param_C``, ``params`` (a list of ``{"C": C}``), ``split{k}_test_score``,
        ``mean_test_score``,
        ``std_test_score``, ``rank_test_score``, as ``GridSearchCV``'s.
    n_splits_ : int
        Number of folds.
    classes_, kernel_weights_, shared_kernel_weights_, task_kernel_weights_, \
intercept_, tasks_, objective_, gap_, history_, n_iter_, converged_, shared_, \
kernels_, platt_, n_features_in_, feature_names_in_
        Of the refit at ``C_``, as in :class:`MultitaskMKLClassifier`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernlearn import MultitaskMKLClassifierCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 3)); t = np.repeat([0, 1, 2], 40)
    >>> y = (X[:, 0] * (t - 0.5) + 0.3 * rng.normal(size=120) > 0).astype(int)
    >>> clf = MultitaskMKLClassifierCV(["linear"], Cs=[0.01, 1.0], cv=3)
    >>> clf.fit(X, y, task_index=t).predict(X[:2], task_index=t[:2]).shape
    (2,)
    """

    _parameter_constraints = {
        **{k: v for k, v in MultitaskMKLClassifier._parameter_constraints.items()
           if k not in ("C", "probability")},
        "Cs": ["array-like"],
        "cv": ["cv_object"],
    }

    def __init__(self, kernels=None, *, Cs=(0.1, 1.0, 10.0), cv=5,
                 formulation="mtfl", p=2.0, q=1.5, shared=False, normalize=True,
                 standardize=True, max_iter=100, tol=1e-3, inner_max_iter=5,
                 max_rank=300, verbose=0, class_weight=None, max_inner="deprecated"):
        self.kernels = kernels
        self.Cs = Cs
        self.cv = cv
        self.formulation = formulation
        self.p = p
        self.q = q
        self.shared = shared
        self.normalize = normalize
        self.standardize = standardize
        self.max_iter = max_iter
        self.tol = tol
        self.inner_max_iter = inner_max_iter
        self.max_inner = max_inner
        self.max_rank = max_rank
        self.verbose = verbose
        self.class_weight = class_weight

    def _base(self, C):
        return MultitaskMKLClassifier(**self._base_params(), C=C)

    def _fit_base(self, est, X, y, task_index, sw):
        est._rows_checked = True  # (rows of the validated X and y)
        est._fit_classification(X, y, task_index, sw, factor_store=self._store)

    def _grid_table(self, X, y, task_index, sw, Cs, splits):
        """Validation scores ``(C, split)``, fold by fold.

        Every C of a fold is fitted with one store that keeps the fold's
        kernel blocks (up to :data:`_BLOCK_ROWS` training rows), packed, and
        its repeated rows, and each score reuses the fold's blocks between
        validation and training rows (:class:`_KeptCross`): all were computed
        again for every C.  The C of a fold are fitted from the
        grid's middle up, then down (:func:`path_order`), each starting from
        the nearest C fitted (its SVM duals scaled, its kernel weights;
        :func:`~kernlearn.methods.mtmkl.fit_multitask`);
        every fit still stops on its own duality gap, so the fold models are
        the cold ones' optimum within ``tol``.  A fold's first C starts from
        the previous fold's fit at that C (:meth:`_keep_start`: 3/5 of its
        rows are this fold's training rows too); it started at zero, and those
        cold solves were about 40 % of Turnout's search.  Each fit's duals
        (per row of ``X``) and kernel weights are kept for the refit's start
        (:meth:`_refit_start`).
        """
        scores = np.empty((len(Cs), len(splits)))
        self._fold_starts = [[] for _ in Cs]
        t = None if task_index is None else np.asarray(task_index)
        order, lead = path_order(Cs), None
        for k, (tr, te) in enumerate(splits):
            self._store = FactorStore(max_block_rows=_BLOCK_ROWS)
            # (the first C of a fold from the previous fold's fit at it)
            self._keep_start(self._store, lead, Cs[order[0]], task_index, np.asarray(tr),
                             y, sw)
            kept = {}  # (the fold's kernels between validation and training rows)
            # the validation rows a score predicts: those of positive weight
            Xte, yte, tte, wte = _positive_rows(
                self, self._rows(X, te, tr), y[te], None if t is None else t[te],
                None if sw is None else sw[te])
            rows = np.asarray(te) if wte is None or len(wte) == len(te) else \
                np.asarray(te)[sw[te] > 0]
            for i in order:
                est = self._fold_fit(X, y, task_index, sw, Cs[i], tr)
                est.kernels_ = _KeptCross(est.kernels_, kept)
                # one pass of decision values for the score and the next
                # fold's start (the score's accuracy, as score() computes it)
                f = est.decision_function(Xte, task_index=tte)
                scores[i, k] = float(np.average(yte == class_labels(f, est.classes_),
                                                weights=wte))
                self._fold_starts[i].append(row_duals(est._model, est._blocks, tr, len(y),
                                                      est._train_rows))
                if i == order[0] and k + 1 < len(splits):
                    lead = self._lead(self._fold_starts[i][-1], est, f, yte, Cs[i], rows)
        return scores

    def _lead(self, start, est, decision, yte, C, te):
        """The next fold's start from the fold fit ``est`` at ``C`` (its
        :func:`~kernlearn.methods.mtmkl._fold_starts.row_duals` ``start``),
        with the KKT duals of its validation rows ``te`` (:func:`lead_start`:
        their labels ``yte`` and its decision values there, ``decision``)."""
        if start is None:
            return None
        kept = getattr(self, "_kept", None)
        return lead_start(start, decision, np.where(yte == est.classes_[1], 1.0, -1.0),
                          C * (1.0 if kept is None else kept[te]), te)

    def _refit_start(self, best, task_index, y, sw):
        """The refit's store, holding its start at the chosen C (index ``best``):
        its fold fits' mean (:func:`mean_start`), made feasible."""
        store = FactorStore()
        starts = self._fold_starts.pop(best)
        del self._fold_starts
        self._keep_start(store, mean_start(starts), self.C_, task_index,
                         np.arange(len(y)), y, sw)
        return store

    def _keep_start(self, store, start, C, task_index, rows, y, sw):
        """Keep in ``store`` the start of a fit at ``C`` on the rows ``rows``
        (:func:`keep_start`, at the fit's sample and class weights): for
        MK-MTFL and per-task MKL without shared kernels only (the others keep
        no duals)."""
        if start is None or self.formulation not in ("mtfl", "mkl") or self.shared:
            return
        w = fit_sample_weight(None if sw is None else sw[rows], len(rows), y[rows],
                              self.class_weight)
        keep_start(store, start, C, rows, w, task_index)

    def _check_lone_classes(self, strata, sw, labels, task_index):
        """Refuse a task's only sample of a class (with an int ``cv``).

        It leaves some training fold without its class, whose fit stopped on
        "task 1 has samples of one class only" (the data had both): named
        here, with what to do.
        """
        counts = np.bincount(strata if sw is None else strata[sw > 0],
                             minlength=strata.max() + 1)
        if len(labels) == 2 and (self.cv is None or isinstance(self.cv, numbers.Integral)):
            lone = np.flatnonzero(counts == 1)
            if lone.size:
                tasks = split_tasks(task_index, len(strata))[0] if task_index is not None \
                    else [None]
                task = plain_value(tasks[lone[0] // 2])
                raise ValueError(
                    ("" if task_index is None else f"task {task!r} has ")
                    + f"one sample of class {plain_value(labels[min(lone[0] % 2, len(labels) - 1)])!r}"
                    + ("" if sw is None else " of positive weight")
                    + "; cross-validation needs two of each class"
                    + ("" if task_index is None else " in every task")
                    + ", so that every training fold holds both: add samples, or fit "
                    "MultitaskMKLClassifier with a chosen C.")

    @all_or_nothing
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, task_index=None, sample_weight=None):
        Cs = self._grid(fitting=True)
        X_in = X
        Xv, yv = self._check_X(X, y, reset=True)
        X = Xv if self._precomputed() or sp.issparse(Xv) else np.asarray(Xv)
        yv = np.asarray(yv)
        # (checked as the plain classifier's: labels of mixed types stopped on
        # NumPy's "'<' not supported between instances of 'int' and 'str'")
        check_two_classes(yv)
        labels, cls = encode_labels(yv)
        strata = 2 * self._task_pos(task_index, len(yv)) + (cls > 0)
        sw = fit_sample_weight(sample_weight, len(yv))  # checked before the folds index it
        # the rows the fits keep: of positive weight, class_weight's too (a third
        # class weighed out by class_weight is fitted by the plain classifier and
        # was by the folds: counted here, it was refused as "got 3 classes")
        kept = fit_sample_weight(sample_weight, len(yv), yv, self.class_weight)
        # (the folds' fits see the rows of positive weight only: refused as the
        # plain classifier refuses them, not as a fold's data nor "got 1 classes")
        check_weighted_classes(yv, kept)
        pos = None if kept is None or np.all(kept > 0) else kept > 0
        # (counted by the first fold's fit, more classes read "got 41 classes" of 60)
        _check_binary(np.unique(cls if pos is None else cls[pos]))
        if pos is not None and task_index is not None:
            ids, rows = split_tasks(np.asarray(task_index)[pos], int(pos.sum()))
            check_tasks_hold_both(2.0 * (cls[pos] > 0) - 1.0, rows, ids, weighted=True)
        self._check_lone_classes(strata, sw, labels, task_index)
        self._store, self._kept = FactorStore(), kept
        # the folds' and the refit's Gram matrices are (principal submatrices
        # of) the ones checked above: not checked for PSD again in every fit
        self._grams_checked = True
        try:
            splits = self._splits(strata, sw, task_index, strata // 2)
            scores = self._validation_scores(
                lambda: self._grid_table(X, yv, task_index, sw, Cs, splits))
            self.C_ = float(Cs[best := self._record(Cs, scores)])
            # (a store of its own: the refit's rows are no fold's)
            self._store = self._refit_start(best, task_index, yv, sw)
            # (the caller's X, validated again, so that its column names are kept)
            return self._fit_classification(X if self._precomputed() else X_in, yv,
                                            task_index, sample_weight, C=self.C_,
                                            factor_store=self._store)
        finally:
            for name in ("_store", "_grams_checked", "_fold_starts", "_kept"):
                self.__dict__.pop(name, None)

    fit.__doc__ = _fit_doc(
        "Choose C by cross-validation, then refit on all rows.",
        "Labels of two classes; every task must contain both (in every fold).",
        "Non-negative weights of the samples' losses (multiplied by\n"
        "            ``class_weight`` in the fits), in every fit and in the validation\n"
        "            scores (their accuracy weighted by ``sample_weight`` alone, as\n"
        "            ``GridSearchCV`` scores a model with ``class_weight``).",
        "MultitaskMKLClassifierCV")


class _KeptCross:
    """A fold fit's :class:`~kernlearn.methods.mtmkl.TaskKernels` whose blocks
    between new rows and training rows (:meth:`blocks` with ``X_a``) are
    computed once for the fold's C grid, in ``kept`` (shared by the fold's fits).

    Every C of a fold fits the same kernels on the same rows, and scores the
    same validation rows: their blocks were computed again for every C.  The
    key is the content of the training kernel (``cache_key``), of the new
    rows and of the row sets, so a block is only served for the same one.
    """

    def __init__(self, kernels, kept):
        self.kernels, self.kept = kernels, kept
        self._keys = self._rows = None

    def __getattr__(self, name):
        return getattr(self.kernels, name)

    def blocks(self, j, idx_a, mask_a, X_a=None, idx_b=None, mask_b=None):
        """:meth:`TaskKernels.blocks`, kept when ``X_a`` (new rows) is given."""
        args = (j, idx_a, mask_a, X_a, idx_b, mask_b)
        if X_a is None:
            return self.kernels.blocks(*args)
        if self._keys is None:
            self._keys = self.kernels.cache_keys()
        if self._keys[j] is None:
            return self.kernels.blocks(*args)
        if self._rows is None or self._rows[0] is not X_a:
            # (one digest of a block of new rows for all kernels and buckets; the
            # block itself is held, so another array is never taken for it)
            self._rows = (X_a, _digest([X_a.data, X_a.indices, X_a.indptr, X_a.shape]
                                       if sp.issparse(X_a) else [np.asarray(X_a, dtype=float)]))
        key = _digest([idx_a, mask_a, idx_b, mask_b], self._keys[j] + self._rows[1])
        if key not in self.kept:
            self.kept[key] = self.kernels.blocks(*args)
        return self.kept[key]


def _digest(arrays, prefix=b""):
    """SHA-1 of ``prefix`` and of the arrays' bytes and shapes (``None``: a mark)."""
    h = hashlib.sha1(prefix)
    for a in arrays:
        h.update(b"-" if a is None else np.ascontiguousarray(a).tobytes()
                 + repr(np.shape(a)).encode())
    return h.digest()


def _conformance_instances():
    """Fast instances for scikit-learn's estimator checks (tests/test_common.py)."""
    from ..kernels import linear_kernel, rbf_kernel

    kern = [linear_kernel, (rbf_kernel, {"gamma": 0.5})]
    # leaving out one of two repeated rows keeps the other: repeated rows and
    # integer weights give different leave-one-out errors, hence different
    # learned kernel weights and C (the model at given weights and C is the
    # same: the "objective" instances pass)
    loo = {name: "leave-one-out selection: a repeated row is not left out with "
           "its copy, so weights and repetitions select different kernel weights"
           for name in ("check_sample_weight_equivalence_on_dense_data",
                        "check_sample_weight_equivalence_on_sparse_data")}
    return [
        (MultitaskMKLRegressorCV(kernels=kern, Cs=(0.1, 1.0), cv=3, max_iter=5), loo),
        (MultitaskMKLRegressorCV(kernels=kern, Cs=(0.1, 1.0), cv="loo", max_iter=5), loo),
        (MultitaskMKLRegressorCV(kernels=kern, Cs=(0.1, 1.0), cv=3, max_iter=5,
                                 kernel_selection="objective"), {}),
        (MultitaskMKLRegressorCV(kernels=kern, Cs=(0.1, 1.0), cv="loo", max_iter=5,
                                 kernel_selection="objective"), {}),
        (MultitaskMKLClassifierCV(kernels=kern, Cs=(0.1, 1.0), cv=3, max_iter=5), {}),
    ]
