"""Multitask MKL regression with C chosen by task-aware cross-validation.

:class:`MultitaskMKLRegressorCV` is :class:`MultitaskMKLRegressor` with
scikit-learn's ``*CV`` interface: a grid ``Cs``, folds stratified by task
(every task in every training and validation fold), the C of the best mean
validation score, and a refit on all rows.  With the square loss and a
within-task formulation, ``cv="loo"`` scores every C by closed-form
leave-one-out residuals (:mod:`kernlearn.methods.mtmkl.selection`): one fit
per C instead of one per C and fold.
"""

import numpy as np
from sklearn.base import _fit_context
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import StrOptions
from scipy.stats import rankdata

from ..methods.mtmkl.selection import loo_residuals
from ..solvers._base import single_blas_thread
from ._base import fit_sample_weight, split_tasks
from .mtmkl import MultitaskMKLRegressor, _fit_doc

__all__ = ["MultitaskMKLRegressorCV"]


class MultitaskMKLRegressorCV(MultitaskMKLRegressor):
    """Multitask multiple kernel regression with C chosen by validation.

    Fits :class:`MultitaskMKLRegressor` for every ``C`` of ``Cs`` on every
    training fold, scores it on the validation fold (the coefficient of
    determination over all validation rows, as
    :meth:`MultitaskMKLRegressor.score`), keeps the ``C`` of the best mean
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
        Candidate loss weights ``C``.
    cv : int, "loo", cross-validation generator or iterable, default=5
        An int: that many folds of :class:`~sklearn.model_selection.StratifiedKFold`
        stratified by task (in order, no shuffle); a splitter: its
        ``split(X, task_positions)``; an iterable: ``(train, test)`` index
        pairs.  ``"loo"``: closed-form leave-one-out residuals of each task's
        kernel ridge at the kernel weights learned on all rows (square loss,
        ``formulation`` ``"mtfl"``, ``"mkl"`` or ``"independent"``, no shared
        components; the kernel weights are not refitted per left-out row).
    formulation : {"mtfl", "mtsfl", "mkl", "independent"}, default="mtfl"
    p : float, default=2.0
    q : float, default=1.5
    loss : {"square", "epsilon_insensitive"}, default="square"
    epsilon : float, default=0.1
    shared : bool, default=False
    normalize : bool, default=True
    standardize : bool, default=True
    max_iter : int, default=100
    tol : float, default=1e-3
    inner_max_iter : int, default=5
    max_rank : int or None, default=300
    verbose : int, default=0
        As in :class:`MultitaskMKLRegressor`.
    max_inner : int, optional
        Deprecated alias of ``inner_max_iter`` (FutureWarning when set;
        removed in 0.4).

    Attributes
    ----------
    C_ : float
        The chosen ``C``.
    best_score_ : float
        Its mean validation score.
    cv_results_ : dict of ndarray
        ``param_C``, ``split{k}_test_score`` (one per fold; ``"loo"``: one
        entry, the leave-one-out score), ``mean_test_score``,
        ``std_test_score``, ``rank_test_score``, as ``GridSearchCV``'s.
    n_splits_ : int
        Number of folds (1 for ``"loo"``).
    kernel_weights_, shared_kernel_weights_, task_kernel_weights_, intercept_, \
tasks_, objective_, gap_, history_, n_iter_, converged_, shared_, kernels_, \
n_features_in_
        Of the refit at ``C_``, as in :class:`MultitaskMKLRegressor`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernlearn import MultitaskMKLRegressorCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(90, 3)); t = np.repeat([0, 1, 2], 30)
    >>> y = X[:, 0] * (t - 1) + 0.3 * rng.normal(size=90)
    >>> reg = MultitaskMKLRegressorCV(["linear"], Cs=[0.01, 1.0], cv=3)
    >>> float(reg.fit(X, y, task_index=t).C_)
    1.0
    """

    _parameter_constraints = {
        **{k: v for k, v in MultitaskMKLRegressor._parameter_constraints.items()
           if k != "C"},
        "Cs": ["array-like"],
        "cv": ["cv_object", StrOptions({"loo"})],
    }

    def __init__(self, kernels=None, *, Cs=(0.01, 0.1, 1.0, 10.0, 100.0, 1000.0),
                 cv=5, formulation="mtfl", p=2.0, q=1.5, loss="square", epsilon=0.1,
                 shared=False, normalize=True, standardize=True, max_iter=100,
                 tol=1e-3, inner_max_iter=5, max_rank=300, verbose=0,
                 max_inner="deprecated"):
        self.kernels = kernels
        self.Cs = Cs
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

    def _regressor(self, C):
        params = self.get_params()
        for name in ("Cs", "cv"):
            params.pop(name)
        return MultitaskMKLRegressor(**params, C=C)

    def _rows(self, X, rows, cols=None):
        if self._precomputed():
            grams = np.stack([np.asarray(G, dtype=float) for G in X])
            return grams[:, rows][:, :, rows if cols is None else cols]
        return X[rows]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, task_index=None, sample_weight=None):
        Cs = np.asarray(self.Cs, dtype=float).ravel()
        if Cs.size == 0 or not np.all(np.isfinite(Cs) & (Cs > 0)):
            raise ValueError(f"Cs must be a non-empty list of positive numbers, got "
                             f"{self.Cs!r}.")
        Xv, yv = self._check_X(X, y, reset=True)
        n = len(yv)
        if self._precomputed():
            X = Xv
        else:
            X = np.asarray(Xv)
        yv = np.asarray(yv)
        pos = np.zeros(n, dtype=np.int64)  # task positions: the folds' strata
        if task_index is not None:
            pos = np.searchsorted(split_tasks(task_index, n)[0], np.asarray(task_index))
        # checked before the folds index it (a wrong length was an IndexError)
        sw = fit_sample_weight(sample_weight, n)
        if isinstance(self.cv, str):  # "loo" (the constraints allow no other)
            scores = np.array([[self._loo_score(X, yv, task_index, sw, C)] for C in Cs])
        else:
            splits = list(check_cv(self.cv, pos, classifier=True).split(
                np.zeros((n, 1)), pos))
            scores = np.array([[self._fold_score(X, yv, task_index, sw, C, tr, te)
                                for tr, te in splits] for C in Cs])
        mean = scores.mean(axis=1)
        if not np.isfinite(mean).all():
            raise ValueError("a validation score is not finite: " + str(mean))
        best = int(np.argmax(mean))
        rank = rankdata(-mean, method="min").astype(np.int32)  # as GridSearchCV's
        self.cv_results_ = {"param_C": Cs, "mean_test_score": mean,
                            "std_test_score": scores.std(axis=1), "rank_test_score": rank}
        for k in range(scores.shape[1]):
            self.cv_results_[f"split{k}_test_score"] = scores[:, k]
        self.n_splits_ = scores.shape[1]
        self.C_, self.best_score_ = float(Cs[best]), float(mean[best])
        return self._fit_regression(X if self._precomputed() else Xv, yv, task_index,
                                    sample_weight, C=self.C_)

    fit.__doc__ = _fit_doc(
        "Choose C by cross-validation, then refit on all rows.",
        "Targets.",
        "Non-negative weights of the samples' losses, in every fit and in\n"
        "            the validation scores.",
        "MultitaskMKLRegressorCV")

    def _fold_score(self, X, y, task_index, sw, C, train, test):
        t = None if task_index is None else np.asarray(task_index)
        est = self._regressor(C).fit(
            self._rows(X, train), y[train],
            task_index=None if t is None else t[train],
            sample_weight=None if sw is None else sw[train])
        return est.score(self._rows(X, test, train), y[test],
                         task_index=None if t is None else t[test],
                         sample_weight=None if sw is None else sw[test])

    def _loo_score(self, X, y, task_index, sw, C):
        if self.loss != "square" or self.shared or self.formulation == "mtsfl":
            raise ValueError("cv='loo' needs loss='square', shared=False and "
                             "formulation 'mtfl', 'mkl' or 'independent'; use "
                             "K-fold cross-validation (cv=5) otherwise.")
        est = self._regressor(C).fit(X, y, task_index=task_index, sample_weight=sw)
        keep = (slice(None) if est._train_rows is None else est._train_rows)
        y_fit = np.asarray(y, dtype=float)[keep]
        w = np.ones(len(y_fit)) if sw is None else sw[keep]
        with single_blas_thread():
            res = loo_residuals(est.kernels_, est._blocks, est._model, y_fit, C,
                                None if sw is None else w)
        # the pooled R^2 of the left-out predictions, as score()
        dev = y_fit - np.average(y_fit, weights=w)
        return float(1.0 - np.sum(w * res ** 2) / np.sum(w * dev ** 2))


def _conformance_instances():
    """Fast instances for scikit-learn's estimator checks (tests/test_common.py)."""
    from ..kernels import linear_kernel, rbf_kernel

    kern = [linear_kernel, (rbf_kernel, {"gamma": 0.5})]
    return [
        (MultitaskMKLRegressorCV(kernels=kern, Cs=(0.1, 1.0), cv=3, max_iter=5), {}),
        (MultitaskMKLRegressorCV(kernels=kern, Cs=(0.1, 1.0), cv="loo", max_iter=5), {}),
    ]
