"""Probabilities of the classifiers: native logistic ones or Platt scaling."""

from contextvars import ContextVar
from functools import partial, update_wrapper
from types import MethodType

import numpy as np

from ..gram import PrecomputedKernels
from ..methods._platt import platt_sigmoid
from ..utils._messages import plain_value
from ._renamed import inner_fits


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
    from scipy.special import expit, log_expit

    scores = np.asarray(scores, dtype=float)
    p = expit(scores)
    if p.ndim == 1 or p.shape[1] == 1:
        p = p.reshape(-1, 1)
        return np.hstack([1 - p, p])
    total = p.sum(axis=1, keepdims=True)
    gone = total[:, 0] == 0
    if np.any(gone):
        # every class's sigmoid underflowed (margins all below about -745, far
        # from the training data): 0/0 gave a row of NaN.  The same ratios in
        # log space: the largest margin most probable, as predict says
        L = log_expit(scores[gone])
        p[gone] = np.exp(L - L.max(axis=1, keepdims=True))
        total[gone] = p[gone].sum(axis=1, keepdims=True)
    return p / total


def platt_proba(scores, platt):
    """Class probabilities from decision values through fitted Platt sigmoids.

    Parameters
    ----------
    scores : ndarray of shape (n_samples,) or (n_samples, n_outputs)
    platt : ndarray of shape (n_outputs, 2)
        Slope and offset of each output's sigmoid.

    Returns
    -------
    proba : ndarray of shape (n_samples, n_classes)
    """
    from scipy.special import expit

    S = np.asarray(scores, dtype=float).reshape(len(scores), -1)
    P = expit(-(S * platt[:, 0] + platt[:, 1]))
    if P.shape[1] == 1:
        return np.hstack([1.0 - P, P])
    total = P.sum(axis=1, keepdims=True)
    # all sigmoids zero: no information, uniform (as CalibratedClassifierCV)
    return np.where(total > 0, P / np.where(total > 0, total, 1.0), 1.0 / P.shape[1])


def logistic_log_proba(scores):
    """:func:`logistic_proba` in log space: finite where it underflows to 0.

    Parameters
    ----------
    scores : ndarray of shape (n_samples,) or (n_samples, n_outputs)

    Returns
    -------
    log_proba : ndarray of shape (n_samples, n_classes)
    """
    from scipy.special import log_expit, logsumexp

    scores = np.asarray(scores, dtype=float)
    if scores.ndim == 1 or scores.shape[1] == 1:
        s = scores.reshape(-1, 1)
        return np.hstack([log_expit(-s), log_expit(s)])
    L = log_expit(scores)
    return L - logsumexp(L, axis=1, keepdims=True)


def platt_log_proba(scores, platt):
    """:func:`platt_proba` in log space: finite where it underflows to 0.

    Parameters
    ----------
    scores : ndarray of shape (n_samples,) or (n_samples, n_outputs)
    platt : ndarray of shape (n_outputs, 2)
        Slope and offset of each output's sigmoid.

    Returns
    -------
    log_proba : ndarray of shape (n_samples, n_classes)
    """
    from scipy.special import expit, log_expit, logsumexp

    S = np.asarray(scores, dtype=float).reshape(len(scores), -1)
    Z = -(S * platt[:, 0] + platt[:, 1])
    if Z.shape[1] == 1:
        return np.hstack([log_expit(-Z), log_expit(Z)])
    L = log_expit(Z)
    out = L - logsumexp(L, axis=1, keepdims=True)
    # (the rows platt_proba makes uniform, its sigmoids' sum being zero: the
    # same here, so that exp(log_proba) is the probabilities)
    gone = expit(Z).sum(axis=1) == 0
    out[gone] = -np.log(Z.shape[1])
    return out


def _classes_kept_proba(scores, proba, absent, log=False):
    """``proba(scores)`` with the classes ``absent`` (weighed out of the fit) at
    probability 0 and the others renormalised, as ``LogisticRegression`` gives
    such a class (its logistic-loss model without intercept gave it up to a
    half).  ``log``: log probabilities (``-inf`` for those classes)."""
    P = proba(scores)
    P[:, absent] = -np.inf if log else 0.0
    return _renormalised(P, log)


def task_classes_proba(values, proba, log=False):
    """``proba`` of one-vs-rest within tasks, a class absent from a row's task at 0.

    Parameters
    ----------
    values : ndarray of shape (n_samples, 2 * n_classes)
        Each row's decision values in its task, then 1 where its task fitted the
        class and 0 where the class had no row there (``LearnedFeatures``).
    proba : callable
        Scores -> probabilities (or log probabilities), as for a model without tasks.
    log : bool, default=False
        Log probabilities (``-inf`` for the absent classes).

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        The task's classes renormalised, as :func:`_classes_kept_proba` renormalises
        the classes of the whole fit.
    """
    k = values.shape[1] // 2
    P = proba(values[:, :k])
    P[values[:, k:] <= 0] = -np.inf if log else 0.0
    return _renormalised(P, log)


def _renormalised(P, log):
    """Probabilities (``log``: their logarithms) of each row made to sum to one."""
    if log:
        from scipy.special import logsumexp

        return P - logsumexp(P, axis=1, keepdims=True)
    return P / P.sum(axis=1, keepdims=True)


# predict_log_proba runs predict_proba's own path (in memory, per task, over a
# Dask array's blocks or an out-of-core source's) with the log-space functions
# in place of the probabilities': a context variable, which threads predicting
# at once each see on their own
_LOG_SPACE = ContextVar("kernlearn_log_proba", default=False)


def _has_proba(est, method="predict_proba"):
    """``available_if`` check of :class:`ProbabilityMixin`.

    A fitted model has probabilities as fitted, not as its parameters now say:
    ``set_params(probability=True)`` after a fit without it gave the logistic
    sigmoids of squared-hinge margins (uncalibrated numbers, no error).  An
    unfitted estimator (and a model file of an older version) goes by its
    parameters.  ``method`` is the method asked for, which the message names
    (``predict_log_proba`` is refused as ``predict_proba`` is).
    """
    fitted = getattr(est, "_proba_source", None)
    wanted = getattr(est, "loss", None) == "logistic" or getattr(est, "probability", False)
    if fitted is not None and fitted != "none":
        return True
    if fitted is not None and wanted:
        raise AttributeError(
            f"{method} is not available: this model was fitted with "
            "probability=False" + (" and a loss other than 'logistic'"
                                   if hasattr(est, "loss") else "")
            + "; its parameters changed since, so fit it again to get probabilities.")
    if fitted is None and wanted:
        return True
    if not hasattr(est, "probability"):
        # (MultitaskMKLClassifierCV: told to set a parameter it does not have)
        raise AttributeError(
            f"{method} is not available: {type(est).__name__} has no "
            "probability parameter; fit the plain estimator at the chosen "
            "parameters with probability=True for Platt probabilities (e.g. "
            "MultitaskMKLClassifier(C=model.C_, probability=True)).")
    # (a model fitted without probabilities and not asked for them since was
    # told "its parameters changed since")
    raise AttributeError(
        f"{method} is not available: set probability=True (Platt scaling "
        "fitted by internal cross-validation)"
        + (" or loss='logistic'" if hasattr(est, "loss") else "")
        + (" and fit again." if fitted is not None else ".")
    )


class _if_probabilities:
    """``sklearn.utils._available_if.available_if(_has_proba)`` for a method of
    :class:`ProbabilityMixin`: the method of a model with probabilities, else
    the ``AttributeError`` of :func:`_has_proba` (so ``hasattr`` says False).

    Written out because this module is unpickled on Dask workers (it holds the
    probability functions shipped to them), which must not import scikit-learn.
    """

    def __init__(self, fn):
        self.fn = fn
        update_wrapper(self, fn)

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        _has_proba(obj, self.fn.__name__)  # (raises the AttributeError naming what is missing)
        return MethodType(self.fn, obj)


# Platt scaling's internal cross-validation splits the weighted rows and their
# repetitions into different folds, so its sigmoids (not the decision
# function) differ; scikit-learn's SVC(probability=True) is in the same case.
PLATT_XFAIL = {
    name: "Platt scaling's internal cross-validation folds differ between "
    "weighted and repeated rows (as for SVC(probability=True))"
    for name in ("check_sample_weight_equivalence_on_dense_data",
                 "check_sample_weight_equivalence_on_sparse_data")
}


def platt_attr_doc(logistic_loss):
    """The ``platt_`` entry of a Platt-scaling classifier's "Attributes" (its
    one source: the estimators' docstrings append it).

    Parameters
    ----------
    logistic_loss : bool
        Whether the estimator has ``loss="logistic"`` (native probabilities,
        no sigmoids).

    Returns
    -------
    str
        The numpydoc entry, indented as in a class docstring.
    """
    return ("    platt_ : ndarray of shape (n_sigmoids, 2) or None\n"
            "        Slope and offset of the Platt sigmoids behind :meth:`predict_proba`,\n"
            "        one row for two classes, else one per class; None unless\n"
            "        ``probability=True``"
            + (' and the loss is not ``"logistic"``' if logistic_loss else "") + ".\n")


def class_weight_keys(class_weight, classes):
    """The keys of a ``class_weight`` dict that name one of ``classes``.

    scikit-learn's lookup: a class is found as an int, or as text (label
    ``"1"`` by key ``1``), so a key is compared with the classes that way,
    not by equality (``1 != "1"``).
    """
    found = []
    for c in classes:
        try:
            c = int(c)
        except (TypeError, ValueError):
            c = str(c)
        if c in class_weight:
            found.append(c)
    return found


def _seen_rows(model, task_index, test):
    """Which ``test`` rows of a Platt fold are of a task its ``model`` was fitted on.

    Parameters
    ----------
    model : estimator
        A fold's fitted model (``tasks_``: the tasks it was fitted on, or None).
    task_index : array-like of shape (n_samples,) or None
        The tasks of all rows.
    test : ndarray of int
        The fold's test rows.

    Returns
    -------
    ndarray of bool of shape (len(test),) or None
        None when every test row's task is known (or there are no tasks).
    """
    tasks = getattr(model, "tasks_", None)
    if task_index is None or tasks is None:
        return None
    seen = np.isin(np.asarray(task_index)[test], tasks)
    return None if seen.all() else seen


class ProbabilityMixin:
    """``predict_proba`` for every classifier: native or Platt scaling.

    Logistic-loss models (``loss="logistic"``) give their own probabilities.
    Otherwise ``probability=True`` fits, as scikit-learn's ``SVC`` does, one
    Platt sigmoid per class on decision values predicted by an internal
    5-fold stratified cross-validation (``random_state`` seeds the folds,
    seed 0 when it is None or the estimator has none; rows of zero weight are
    in none, as if removed; as many folds as the smallest class has rows when
    that is fewer than five; with tasks, stratified by task and class, for
    the estimators whose tasks need every class or two of their own:
    the smallest count is a task's, of a class it holds), and
    multiclass probabilities are the per-class sigmoids normalised to sum to
    one (as in ``CalibratedClassifierCV``).  The cross-validation costs five
    extra fits; with ``probability=False`` ``predict_proba`` does not exist,
    so duck typing (soft voting, ``hasattr``) sees the truth.

    Estimators with extra per-sample fit and decision arguments (e.g.
    ``task_index``) pass them to ``_fit_platt`` as keywords, which the folds
    split with the rows.
    """

    _platt_folds = 5

    def _fit_platt(self, X, y, sample_weight=None, **row_args):
        """Fit the Platt sigmoids when needed; call at the end of ``fit``."""
        self.platt_ = None
        # (where predict_proba comes from in this fit, see _has_proba; "platt"
        # once the sigmoids exist, so that a fit stopped on them has none)
        native = getattr(self, "loss", None) == "logistic"
        self._proba_source = "native" if native else "none"
        if native or not getattr(self, "probability", False):
            return
        # (imported here: a fit without Platt scaling, the default, needs neither,
        # and sklearn.model_selection costs a new process's first fit 0.01 s)
        from sklearn.base import clone
        from sklearn.model_selection import StratifiedKFold
        y = np.asarray(y)
        classes, yi = np.unique(y, return_inverse=True)
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        # rows of zero weight are removed rows: in no fold and not in the
        # sigmoids' fit (they were split with the others, so the probabilities
        # differed from those of the fit without them)
        # (so are the rows of a class given weight 0 by class_weight: the model is
        # fitted without them, and the sigmoids were fitted on them, giving such a
        # class a probability of a third where LogisticRegression gives it 0)
        cw = getattr(self, "class_weight", None)
        weighed_out = ([c for c, w in cw.items() if w == 0] if isinstance(cw, dict) else [])
        kept = np.ones(len(y), dtype=bool) if sw is None else sw > 0
        if weighed_out:
            kept &= ~np.isin(y, np.asarray(weighed_out, dtype=y.dtype))
        keep = np.flatnonzero(kept)
        # strata: the classes, within each task when there are tasks (a task's
        # only samples of a class could all fall out of a training fold, and the
        # multitask classifier refused that fold: "task 1 has samples of one
        # class only", which the data did not have)
        tasks = row_args.get("task_index")
        names, tpos = (None, np.zeros(len(y), dtype=int)) if tasks is None \
            else np.unique(np.asarray(tasks), return_inverse=True)
        # (the estimators whose every task needs every class, or two classes of
        # its own (GrFL's, which refuses a task of one class): the others' strata
        # are the classes)
        every = tasks is not None and getattr(self, "_tasks_need_every_class", False)
        per_task = every or (tasks is not None
                             and getattr(self, "_tasks_need_two_classes", False))
        strata = tpos.ravel() * len(classes) + yi if per_task else yi
        # no more folds than the smallest stratum has rows: scikit-learn's
        # splitter warns of fewer, which hiding took warnings.catch_warnings,
        # the process's filters (fits in threads overlapping in it left its
        # ignore filter for good)
        # (every class's count, those of zero weight only too: a class whose rows
        # all weigh zero was in no fold, which stopped on "a cross-validation
        # fold lost a class", naming neither the class nor its weights)
        counts = np.bincount(strata[keep],
                             minlength=len(classes) * (len(names) if per_task else 1))
        # (but a task whose rows all weigh zero, which leaves the fit: none of its
        # strata are in a fold)
        counted = (np.repeat(counts.reshape(-1, len(classes)).sum(axis=1) > 0, len(classes))
                   if per_task else np.ones(counts.size, dtype=bool))
        if per_task and not every:
            counted &= counts > 0  # (a class a task lacks has no stratum there)
        # a class weighed out of a multiclass fit (_absent_classes): in no fold's
        # count, its rows in every training fold at their weight zero, so the
        # folds' models know it as the model does (never predicted; probability
        # 0); this was refused as "class 2 has none"
        absent = getattr(self, "_absent_classes", None)
        absent_rows = np.empty(0, dtype=int)
        if absent is not None and not every:
            counted[np.isin(np.arange(counts.size) % len(classes), absent)] = False
            absent_rows = np.flatnonzero(np.isin(yi, absent))
        n_folds = min(self._platt_folds, int(counts[counted].min()))
        if n_folds < 2:
            k = int(np.flatnonzero(counted & (counts < 2))[0])
            label = plain_value(classes[k % len(classes)])
            where = (f" (class {label!r} has {'none' if counts[k] == 0 else 'one'})"
                     if not per_task else
                     # (GrFL's tasks need two classes, not all: a task may lack one)
                     f" in every task{'' if every else ' holding it'} "
                     f"(task {plain_value(names[k // len(classes)])!r} has "
                     f"{'none' if counts[k] == 0 else 'one'} of class {label!r})")
            raise ValueError("probability=True needs at least 2 samples of every class"
                             + ("" if sw is None and not weighed_out
                                else " of positive weight") + where
                             + " (Platt scaling is fitted by cross-validation).")
        rs = getattr(self, "random_state", None)
        folds = StratifiedKFold(n_folds, shuffle=True, random_state=0 if rs is None else rs)
        inner = clone(self).set_params(probability=False)
        if weighed_out:
            # (a binary multitask fit leaves out the rows of a label weighed out
            # of it, fitted_classes_rows: its key names no class of the folds'
            # labels, which their fits refused)
            # (by scikit-learn's lookup, which found the fit's weights: a key 1
            # weighs the label "1", which equality dropped from the folds)
            present = class_weight_keys(cw, classes)
            own = {c: w for c, w in cw.items() if c in present}
            if len(own) < len(cw):
                inner.set_params(class_weight=own or None)
        if 0 < getattr(inner, "verbose", 0) < 2:
            # verbose=1 is the model's own bar and stop line: the folds' five
            # came after it, so the last stop line read was a fold's
            inner.set_params(verbose=0)
        scores = np.zeros((len(y), 1 if len(classes) == 2 else len(classes)))
        splits = list(folds.split(np.zeros((keep.size, 1)), strata[keep]))
        scored = np.ones(len(y), dtype=bool)

        def fold_fits():
            for train, test in splits:
                train, test = np.sort(np.concatenate([keep[train], absent_rows])), keep[test]
                X_tr, y_tr = self._split_rows(X, y, train)
                X_te, _ = self._split_rows(X, y, test, train)
                kw = {k: np.asarray(v)[train] for k, v in row_args.items() if v is not None}
                if sw is not None:
                    kw["sample_weight"] = sw[train]
                model = clone(inner).fit(X_tr, y_tr, **kw)
                if len(np.unique(y_tr)) != len(classes):
                    raise ValueError("a cross-validation fold lost a class; Platt scaling "
                                     "needs every class in every training fold.")
                # (a task whose rows all fell in the test fold, the folds being stratified
                # by class: its rows get no score and no say in the sigmoids; the fit
                # stopped on "task_index has tasks unseen in fit")
                seen = _seen_rows(model, row_args.get("task_index"), test)
                if seen is not None:
                    scored[test[~seen]] = False
                    test = test[seen]
                    X_te, _ = self._split_rows(X, y, test, train)
                kw_te = {k: np.asarray(v)[test] for k, v in row_args.items()
                         if v is not None}
                d = np.asarray(model.decision_function(X_te, **kw_te))
                scores[test] = d.reshape(len(test), -1)

        # (the fold fits repeat the model's own warnings: a renamed parameter
        # said five more times, a stop at max_iter six times in all)
        inner_fits(fold_fits, "cross-validation fits of the Platt sigmoids",
                   "the probabilities rest on them", n_fits=len(splits))
        targets = [yi == 1] if len(classes) == 2 else [yi == k for k in range(len(classes))]
        keep = keep[scored[keep]]
        self.platt_ = np.array([platt_sigmoid(scores[keep, k], t[keep],
                                              None if sw is None else sw[keep])
                                for k, t in enumerate(targets)])
        self._proba_source = "platt"

    @_if_probabilities
    def predict_log_proba(self, X, **row_args):
        """Logarithm of the class probabilities of :meth:`predict_proba`.

        Computed in log space from the same decision values, so it is finite
        where a probability underflows to 0 (a row far from the training
        data), where ``np.log(predict_proba(X))`` (scikit-learn's ``SVC`` and
        ``LogisticRegression``) gives ``-inf``; elsewhere its exponential is
        :meth:`predict_proba` to rounding.

        Parameters
        ----------
        X : array-like, sparse matrix, list or Dask array
            As in :meth:`predict_proba`.
        **row_args
            ``task_index`` of the estimators with tasks, as in :meth:`predict_proba`.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            A lazy Dask array for a Dask ``X``, as :meth:`predict_proba` gives.
        """
        token = _LOG_SPACE.set(True)
        try:
            return self.predict_proba(X, **row_args)
        finally:
            _LOG_SPACE.reset(token)

    def _split_rows(self, X, y, rows, cols=None):
        """Training rows ``rows`` (test rows against training ``cols``).

        scikit-learn's ``_safe_split``: kernel (pairwise) inputs are cut on
        both axes; a list of precomputed Gram matrices (estimators with
        ``kernels="precomputed"``) is cut on both axes of every matrix.
        """
        from sklearn.utils.metaestimators import _safe_split

        precomputed = getattr(self, "_precomputed", None)
        if callable(precomputed) and precomputed():
            # (PrecomputedKernels is samples first: iterating it gave no matrix,
            # and probability=True stopped on "need at least one array to stack")
            grams = (X.kernels_first() if isinstance(X, PrecomputedKernels)
                     else np.stack([np.asarray(K) for K in X]))
            cols = rows if cols is None else cols
            return list(grams[:, rows][:, :, cols]), np.asarray(y)[rows]
        return _safe_split(self, X, y, rows, cols)

    def _proba(self, scores):
        """Native logistic probabilities or Platt's, from decision values.

        As fitted (Platt's sigmoids exist or not), not as the parameters now
        say: ``set_params(loss="logistic")`` after a fit changed the fitted
        model's probabilities (and the reverse raised a TypeError).
        """
        return self._proba_function()(scores)

    def _proba_function(self):
        """:meth:`_proba` as a function of the scores alone, without the estimator.

        What a map over a Dask array's blocks ships to the workers: the bound
        method carried the whole estimator, and unpickling it imported
        scikit-learn on every worker.
        """
        log = _LOG_SPACE.get()  # (predict_log_proba)
        if getattr(self, "platt_", None) is None:
            proba = logistic_log_proba if log else logistic_proba
        else:
            proba = partial(platt_log_proba if log else platt_proba, platt=self.platt_)
        absent = getattr(self, "_absent_classes", None)
        return proba if absent is None else partial(
            _classes_kept_proba, proba=proba, absent=absent, log=log)
