"""Task ids (``task_index``): their validation, and their way through
scikit-learn's model selection.

:func:`split_tasks` checks a fit's task ids and groups its rows by task;
:func:`task_positions` maps a prediction's ids to the fitted tasks;
:func:`task_score` is ``score`` with the samples' tasks.
The multitask estimators (multitask MKL; GrFL's ``InfiniteFeatureClassifier``
and ``InfiniteFeatureRegressor`` with ``task_index``) need each sample's task
in ``fit`` and in every prediction.  Under scikit-learn's metadata routing
(``sklearn.set_config(enable_metadata_routing=True)``) they request
``task_index`` by default (:class:`TaskIndexRequests`), so ``cross_validate``,
``GridSearchCV`` and ``Pipeline`` pass it along;
:class:`~kernlearn.estimators.mtmkl.MultitaskScorer` gives it to a scorer's
predictions; and :func:`check_task_fit`, called by
``fit`` when it receives ``task_index``, stops a model selection whose every
score would be NaN (scikit-learn turns a failed ``predict`` into a NaN score
and goes on) and ``cross_val_predict``, which passes metadata to ``fit``
only.
"""

import numbers
import sys

import numpy as np
from sklearn import get_config
from sklearn.base import is_classifier

from ..utils._input_kinds import refuse_unlike_array
from ..utils._messages import plain_value
from ._base import _refuse_missing, _unordered
from ._renamed import warn_unused

__all__ = [
    "TaskIndexRequests",
    "check_task_fit",
    "routing_help",
    "split_tasks",
    "task_positions",
    "task_score",
    "task_score_doc",
]


def routing_help(est):
    """How to get ``task_index`` to ``est``'s predictions in model selection.

    Parameters
    ----------
    est : BaseEstimator
        A multitask estimator.

    Returns
    -------
    str
    """
    name = type(est).__name__
    text = ("Turn scikit-learn's metadata routing on, sklearn.set_config("
            "enable_metadata_routing=True): task_index is then routed to fit, predict "
            "and score")
    if est.get_metadata_routing().fit.requests.get("task_index") is not True:
        # (requested by default: a user's set_fit_request(task_index=False) undid it)
        text += (f" once requested ({name}(...).set_fit_request(task_index=True)"
                 ".set_score_request(task_index=True))")
    text += (" (and to scorers wrapped in kernlearn.estimators.mtmkl.MultitaskScorer, "
             f"e.g. scoring=MultitaskScorer({_default_scoring(est)!r}))")
    return text + _cv_variant(est, "; or use {}.", ".")


def _default_scoring(est):
    """The scorer name of ``est.score``: what a wrapped scoring should name when
    the user's own cannot be named (a regressor's ``r2`` is no classifier's)."""
    from sklearn.base import is_classifier

    return "accuracy" if is_classifier(est) else "r2"


def _wrapped_scoring(scorers, blind):
    """``scoring=`` text wrapping the user's ``blind`` scorers in ``MultitaskScorer``.

    ``scorers`` maps a key (``None`` for a single scoring) to a scorer; one of
    ``blind`` (scikit-learn's own) is named by its name in ``sklearn.metrics``
    (the same metric and settings), else wrapped as the object it is; the
    others are shown as they are.
    """
    from sklearn.metrics import get_scorer, get_scorer_names

    known = {repr(get_scorer(name)): name for name in reversed(get_scorer_names())}

    def wrap(sc):
        if not any(sc is b for b in blind):
            return repr(sc)
        name = known.get(repr(sc))
        return f"MultitaskScorer({name!r})" if name else f"MultitaskScorer({sc!r})"

    if list(scorers) == [None]:
        return wrap(scorers[None])
    return "{" + ", ".join(f"{key!r}: {wrap(sc)}" for key, sc in scorers.items()) + "}"


def _cv_variant(est, found, missing):
    """``found`` naming ``est``'s model-selection variant (``<name>CV``), if
    kernlearn has one, else ``missing``."""
    import kernlearn

    name = type(est).__name__ + "CV"
    return found.format(name) if name in kernlearn._ESTIMATORS else missing


class TaskIndexRequests:
    """Mixin: ``task_index`` requested by default wherever scikit-learn routes metadata.

    With ``set_config(enable_metadata_routing=True)``, ``GridSearchCV``,
    ``cross_validate`` and ``Pipeline`` then pass it to ``fit``, the
    predictions and ``score`` with no ``set_*_request`` call (which still
    overrides it, e.g. an alias).
    """

    __metadata_request__fit = {"task_index": True}
    __metadata_request__predict = {"task_index": True}
    __metadata_request__score = {"task_index": True}
    __metadata_request__decision_function = {"task_index": True}
    __metadata_request__predict_proba = {"task_index": True}
    __metadata_request__predict_log_proba = {"task_index": True}


def in_model_selection():
    """Whether a call comes from scikit-learn's model selection (frames up the stack)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("sklearn.model_selection"):
            return True
        frame = frame.f_back
    return False


def _caller_locals(function):
    """Locals of a calling scikit-learn model-selection ``function`` (or None)."""
    frame = sys._getframe(1)
    while frame is not None:
        if (frame.f_code.co_name == function and frame.f_globals.get(
                "__name__", "").startswith("sklearn.model_selection")):
            return frame.f_locals
        frame = frame.f_back
    return None


def check_task_fit(est, predict_needs_tasks):
    """Refuse a fit receiving ``task_index`` where its predictions cannot.

    Call it from ``fit`` when ``task_index`` is given.  Outside scikit-learn's
    model selection it does nothing.  Inside it refuses

    * ``cross_val_predict``, which routes metadata to ``fit`` only (its error
      was the one of ``predict``, which said to turn routing on: it was);
    * any model selection with metadata routing off (``task_index`` reaches
      ``fit`` only: every score NaN);
    * a split whose scoring receives no task ids: a scorer of scikit-learn's
      (it calls the predictions without metadata), or a routed ``score``
      that did not request them;
    * a split whose validation rows hold a task its training rows lack.

    Parameters
    ----------
    est : BaseEstimator
        The estimator being fitted.
    predict_needs_tasks : bool
        Whether its predictions need ``task_index`` (a model of several
        tasks, or one that always does).

    Raises
    ------
    ValueError
        Naming the problem and the fix.
    """
    name = type(est).__name__
    predicting = _caller_locals("_fit_and_predict")
    if predicting is not None and predict_needs_tasks:
        method = predicting.get("method", "predict")
        raise ValueError(
            f"task_index reached {name}.fit through scikit-learn's cross_val_predict, "
            f"which passes metadata to fit only, never to {method}: the held-out rows' "
            "tasks would be unknown (with routing on or off).  Predict each split "
            "yourself: for train, test in cv.split(X, y): est.fit(X[train], y[train], "
            f"task_index=t[train]).{method}(X[test], task_index=t[test]).")
    if not in_model_selection():
        return
    if not get_config()["enable_metadata_routing"]:
        # without routing, model selection passes task_index to fit only:
        # predict and score would fail on every split, and scikit-learn
        # would report NaN scores and pick the first candidate; a training
        # fold of one task (folds not stratified by task) would even score,
        # its one task's model predicting the other tasks' validation rows
        raise ValueError("task_index reached fit through scikit-learn's model "
                         "selection with metadata routing off, so predict and "
                         "score would not receive it (every score NaN). "
                         + routing_help(est))
    _check_cv_split(est, predict_needs_tasks)


def _check_cv_split(estimator, predict_needs_tasks):
    """Refuse, at fit, a scikit-learn cross-validation split that can only score NaN.

    scikit-learn turns an error of ``predict`` or ``score`` into a NaN score
    (and then picks the first candidate), so the ways task ids fail to serve
    the validation rows are caught here, where an error stops the search when
    every split fails (refused splits among scored ones are NaN with a
    ``FitFailedWarning`` that quotes the error, as for any failed fit): a
    scorer that calls ``predict(X)`` with no metadata (scikit-learn's own,
    ``scoring="r2"`` and the like;
    :class:`~kernlearn.estimators.mtmkl.MultitaskScorer` and the default
    scoring pass task ids), a scoring to which no task ids are routed, and a
    split whose validation rows hold a task absent from its training rows
    (folds not stratified by task).
    """
    cv = _caller_locals("_fit_and_score")
    if cv is None:
        return
    try:
        from sklearn.metrics._scorer import _BaseScorer, _MultimetricScorer
    except ImportError:  # a scikit-learn without these: no scorer check
        _BaseScorer = _MultimetricScorer = ()
    scorer = cv.get("scorer")
    scorers = (dict(scorer._scorers) if _MultimetricScorer
               and isinstance(scorer, _MultimetricScorer) else {None: scorer})
    blind = [sc for sc in scorers.values() if _BaseScorer and isinstance(sc, _BaseScorer)]
    if blind:
        # (named after the user's scoring: it once said MultitaskScorer('r2')
        # to a classifier scored by roc_auc)
        raise ValueError(f"scoring {blind[0]!r} calls {type(estimator).__name__}'s "
                         "predictions without task_index (scikit-learn's scorers "
                         "pass no metadata to predict); wrap it: scoring="
                         f"{_wrapped_scoring(scorers, blind)} "
                         "(MultitaskScorer is in kernlearn.estimators.mtmkl).")
    t = (cv.get("score_params") or {}).get("task_index")
    if t is None and predict_needs_tasks and "score_params" in cv:
        # (a score not requesting task_index: every split scored NaN)
        raise ValueError(f"task_index is routed to {type(estimator).__name__}.fit but "
                         "not to its scoring, so every validation score would be NaN: "
                         "request it, .set_score_request(task_index=True), or score "
                         f"with scoring=MultitaskScorer({_default_scoring(estimator)!r}) "
                         "(kernlearn.estimators.mtmkl).")
    train, test = cv.get("train"), cv.get("test")
    if t is not None and train is not None and test is not None:
        t = np.asarray(t)
        unseen = np.setdiff1d(t[test], t[train])
        if unseen.size:
            raise ValueError(f"a cross-validation split has task(s) {unseen[:5]} in "
                             "its validation rows only, which no model fitted on its "
                             "training rows can predict: use folds stratified by task, "
                             "cv=StratifiedKFold(k, shuffle=True).split(X, task_index)"
                             + _cv_variant(estimator, " (or {}).", "."))


def split_tasks(task_index, n):
    """Validate one task id per sample and group the rows by task.

    Parameters
    ----------
    task_index : array-like of shape (n,)
        Task id of each sample (any sortable values; True/False ids are not
        mixed with others, which NumPy would take for 1/0).
    n : int
        Number of samples.

    Returns
    -------
    tasks : ndarray
        Sorted distinct task ids.
    rows : list of ndarray of int
        Row indices of each task, in the order of ``tasks``.
    """
    # (a masked array's masked ids were read as the ids under the mask)
    refuse_unlike_array(task_index, "task_index", "the fit", dates=False)
    # (a list mixing True with numbers becomes numbers in np.asarray: looked at first)
    raw = list(task_index) if isinstance(task_index, (list, tuple)) else task_index
    bools, task_index = _bool_ids(raw), np.asarray(raw)
    _check_task_shape(raw, task_index, n)
    if bools == "some":
        # True == 1 and False == 0: the tasks True and 1 were merged into one
        raise ValueError("task_index mixes True/False with other task ids "
                         f"({_some_ids(raw)}); True would be the task 1 and False "
                         "the task 0: give every task id of one kind.")
    _refuse_missing_ids(raw, task_index)
    if task_index.dtype.kind == "f" and not np.all(np.isfinite(task_index)):
        raise ValueError("task_index contains NaN or infinity.")
    try:
        tasks, inv = np.unique(task_index, return_inverse=True)
    except TypeError as exc:
        raise _unordered(task_index, "task_index", "task ids", exc) from None
    return tasks, [np.flatnonzero(inv == t) for t in range(len(tasks))]


def warn_unused_formulation(est):
    """Name the multitask settings the chosen ``formulation`` (and ``loss``) do
    not read, when set away from their defaults (:func:`warn_unused`).

    ``p`` is MK-MTFL's, ``q`` MK-MTSFL's, ``max_rank`` MK-MTSFL's and the
    shared blocks', ``epsilon`` the SVR's, ``standardize`` a classifier's of
    rows (not of precomputed kernels): each changed nothing elsewhere,
    without a word (``q=1.1`` beside ``formulation="mtfl"``).  ``max_iter``
    caps the kernel weights' iterations ``"independent"`` does not run (nor
    does ``tol`` stop them), and
    ``inner_max_iter`` MK-MTFL's updates of its task weights at ``p != 2``.
    """
    form = est.formulation
    if form != "mtfl":
        warn_unused(est, ("p",), f"formulation={form!r}", "it is MK-MTFL's norm "
                    "(formulation='mtfl')")
    if form != "mtsfl":
        warn_unused(est, ("q",), f"formulation={form!r}", "it is MK-MTSFL's norm "
                    "(formulation='mtsfl')")
    if form in ("mkl", "independent") or (form == "mtfl" and est.shared is False):
        warn_unused(est, ("max_rank",), f"formulation={form!r}"
                    + (" and shared=False" if form == "mtfl" else ""),
                    "it caps MK-MTSFL's factorisations and the shared blocks'")
    if getattr(est, "loss", None) == "square":
        warn_unused(est, ("epsilon",), "loss='square'",
                    "it is the tube width of loss='epsilon_insensitive'")
    if est._precomputed() and is_classifier(est):
        # (a classifier's: Gram matrices have no columns to standardise and its
        # +-1 labels fixed units; a regressor's targets read it)
        warn_unused(est, ("standardize",), "kernels='precomputed' in a classifier",
                    "the Gram matrices are used as given")
    if isinstance(getattr(est, "C", None), str) or getattr(est, "kernel_selection",
                                                           None) == "loo":
        return  # (the leave-one-out search names the iteration caps itself)
    if form == "independent":
        # the average kernel is fitted once, exactly: no outer iterations to cap
        # and no duality gap to stop on (any tol gave the same model)
        warn_unused(est, ("max_iter", "tol"), f"formulation={form!r}",
                    "they cap and stop the kernel weights' iterations of 'mtfl', "
                    "'mtsfl' and 'mkl'")
    if form != "mtfl" or float(est.p) == 2.0:
        # the inner alternation updates MK-MTFL's lambda (Lemma 3.1, r = p/(p-2));
        # with p = 2 or one l1-MKL per task lambda is 1 and one pass is exact,
        # and MK-MTSFL has no lambda
        warn_unused(est, ("inner_max_iter", "max_inner"), f"formulation={form!r}"
                    + (" and p=2" if form == "mtfl" else ""),
                    "it caps MK-MTFL's lambda updates (formulation='mtfl', p != 2)")


def check_tasks_hold_both(signed, rows, tasks, weighted):
    """Refuse a task whose samples are of one class only.

    A task of one class has no unique model: its intercept runs off towards that
    class without end (a logistic bias near 1,300, a hinge's anywhere past the
    margin), as scikit-learn's classifiers refuse one class.  A task with no row
    (all weighed out) is left to the caller (it leaves ``tasks_``).

    Parameters
    ----------
    signed : ndarray of shape (n_samples,)
        Labels: coded -1 / +1, or any class codes (more than two classes: the
        message asks for two or more).
    rows : list of ndarray
        Each task's rows.
    tasks : ndarray of shape (n_tasks,)
        The task ids.
    weighted : bool
        Whether the rows are those of positive weight only (the message says so:
        a task holding both classes, one weighed out, read the refusal as wrong).
    """
    need = "both classes" if np.unique(signed).size <= 2 else "two classes or more"
    for t, r in enumerate(rows):
        if len(r) and np.unique(signed[r]).size < 2:
            raise ValueError(f"task {plain_value(tasks[t])!r} has samples of one class only"
                             + (" among its rows of positive weight" if weighted else "")
                             + f"; every task needs {need}.")


def standardize_task_targets(est, y, task_rows, sample_weight=None):
    """Standardise a 1-D ``y`` task by task, storing ``y_mean_`` / ``y_scale_`` (one per task).

    A 2-D ``y`` is standardised per output (one task each); tasks given by
    ``task_index`` shared one scale, so a task in other units than the rest
    (scores out of 1 beside scores out of 100) was left at a fraction of the
    others' spread: with ``penalty="per_task_l1_lq"`` its weights were all
    zero (R^2 -0.02 on the school set's tasks given a hundredth of their
    units, 0.26 with their own scales).  Each task is centred only when the
    estimator fits an intercept (:func:`~kernlearn.estimators._base.fit_target_map`).

    Parameters
    ----------
    est : BaseEstimator
        The regressor (its ``standardize`` and ``fit_intercept``).
    y : ndarray of shape (n_samples,)
        Finite targets.
    task_rows : list of ndarray of int
        The rows of each task (:func:`split_tasks`).
    sample_weight : ndarray of shape (n_samples,), optional
        Weights of the rows (each task's mean and spread weighted by them).

    Returns
    -------
    y : ndarray of shape (n_samples,)
        Standardised targets.
    """
    from ._base import fit_target_map

    out = np.empty(len(y))
    mean, scale = np.zeros(len(task_rows)), np.ones(len(task_rows))
    for t, rows in enumerate(task_rows):
        w = None if sample_weight is None else sample_weight[rows]
        ts = fit_target_map(est, y[rows], w, bool(est.standardize))
        mean[t], scale[t], out[rows] = ts.mean[0], ts.scale[0], ts.transform(y[rows])
    est.y_mean_, est.y_scale_ = mean, scale
    return out


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
    refuse_unlike_array(task_index, "task_index", "the prediction", dates=False)
    raw, task_index = task_index, np.asarray(task_index)
    _check_task_shape(raw, task_index, n)
    _refuse_missing_ids(raw, task_index)
    kinds = {_id_kind(tasks), _id_kind(task_index)}
    if kinds == {"True/False", "numbers"}:
        # True == 1 in NumPy: numbers 0/1 silently named a model's tasks False/True
        # (and True/False a model's tasks 0/1)
        raise ValueError(
            f"task_index holds {_id_kind(task_index)} ({_some_ids(task_index)}) but the "
            f"model's task ids are {_id_kind(tasks)} ({_some_ids(tasks)}): pass task_index "
            "of the same kind (task ids match by value and type, True is not 1).")
    try:
        pos = np.clip(np.searchsorted(tasks, task_index), 0, len(tasks) - 1)
        unseen = tasks[pos] != task_index
        unknown = np.setdiff1d(task_index, tasks).tolist() if np.any(unseen) else []
    except TypeError:
        # ids that cannot be ordered with the fitted ones (None among strings)
        # were NumPy's "'<' not supported between instances of ..."
        known = set(tasks.tolist())
        unknown = list(dict.fromkeys(v for v in task_index.tolist() if v not in known))
    if unknown:
        raise ValueError(f"task_index has tasks unseen in fit: {unknown[:5]}."
                         + _other_kind_of_ids(tasks, unknown))
    return pos


def _check_task_shape(raw, ids, n):
    """Refuse task ids that are not one per sample, naming a single value."""
    if ids.shape == (n,):
        return
    if ids.ndim == 0:
        # a column's name (task_index="school", as pandas users write) or one task
        # for all rows: both read as a single id
        raise ValueError(
            f"task_index is a single value ({raw!r}), not one task id per sample "
            f"({n} samples): pass a table's column itself, task_index=df[{raw!r}] "
            f"(dropped from X), not its name; rows all of one task: np.full({n}, "
            f"{raw!r}).")
    raise ValueError(f"task_index must have shape ({n},), got {ids.shape}.")


def _refuse_missing_ids(raw, ids):
    """Refuse a missing task id (None, NaN, ``pd.NA``) by its row (and index label
    of a pandas ``raw``): it was "task_index contains NaN or infinity", "tasks
    unseen in fit: [nan]" or "mixes task ids of types float, str"."""
    if isinstance(raw, (list, tuple)):
        # (NumPy reads a NaN among text as the text "nan": a task of that name)
        ids = np.asarray(raw, dtype=object)
    if ids.dtype.kind == "f":
        _refuse_missing(raw, np.isnan(ids), "a missing value (NaN)", name="task_index")
    elif ids.dtype == object:
        import pandas as pd

        _refuse_missing(raw, np.asarray(pd.isna(ids)), name="task_index")


def _bool_ids(ids):
    """Whether task ids are True/False values: ``"all"``, ``"some"`` or ``"none"``."""
    if isinstance(ids, list):
        flags = [isinstance(v, (bool, np.bool_)) for v in ids]
    else:
        ids = np.asarray(ids)
        if ids.dtype != object:
            return "all" if ids.dtype == bool and ids.size else "none"
        flags = [isinstance(v, (bool, np.bool_)) for v in ids.ravel().tolist()]
    return "all" if flags and all(flags) else "some" if any(flags) else "none"


def _id_kind(ids):
    """``"True/False"``, ``"numbers"``, or ``"other"`` (text, mixed) task ids."""
    bools, ids = _bool_ids(ids), np.asarray(ids)
    if bools != "none":
        return "True/False" if bools == "all" else "other"
    numeric = ids.dtype.kind in "iuf" or (ids.dtype == object and all(
        isinstance(v, numbers.Real) for v in ids.ravel().tolist()))
    return "numbers" if numeric else "other"


def _some_ids(ids):
    """Up to five distinct ids, as the user wrote them (for messages)."""
    # (keyed by type too: True and 1 are one dict key)
    seen = dict.fromkeys((type(v), v) for v in np.asarray(ids, dtype=object).tolist())
    return [plain_value(v) for _, v in seen][:5]


def _other_kind_of_ids(tasks, unknown):
    """A hint when new task ids are text and the fitted ones numbers, or the reverse.

    ``'1'`` is not the task ``1``: without the hint the message listed the
    caller's ids as unseen, which look exactly like the fitted ones.
    """
    def text(v):
        return isinstance(v, (str, np.str_))

    fitted = [plain_value(v) for v in np.asarray(tasks).tolist()]
    if not fitted or any(text(v) != text(fitted[0]) for v in fitted):
        return ""
    given = [v for v in unknown if v is not None]
    if not given or any(text(v) == text(fitted[0]) for v in given):
        return ""
    kind = "text" if text(fitted[0]) else "numbers"
    return (f" The model's task ids are {kind} ({fitted[:5]}): pass task_index of the "
            "same kind (task ids match by value and type, '1' is not 1).")


def task_score(est, X, y, task_index=None, sample_weight=None):
    """Accuracy (a classifier) or :math:`R^2` (a regressor, over all samples, not
    per task) of ``est.predict(X, task_index)`` against ``y``: scikit-learn's
    ``score`` for estimators whose predictions need the samples' tasks.

    Parameters
    ----------
    est : estimator
        A fitted classifier or regressor whose ``predict`` takes ``task_index``.
    X : array-like
        Inputs, as ``est.predict`` takes them.
    y : array-like of shape (n_samples,)
        True targets.
    task_index : array-like of shape (n_samples,), optional
        Task id of each sample.
    sample_weight : array-like of shape (n_samples,), optional
        Sample weights.

    Returns
    -------
    score : float
    """
    from sklearn.base import is_classifier
    from sklearn.metrics import accuracy_score, r2_score

    metric = accuracy_score if is_classifier(est) else r2_score
    X, y, task_index, sample_weight = _positive_rows(est, X, y, task_index, sample_weight)
    return float(metric(y, est.predict(X, task_index), sample_weight=sample_weight))


def _positive_rows(est, X, y, task_index, sample_weight):
    """The rows of positive weight of a scoring (all rows when none has zero weight).

    A row of zero weight adds nothing to a weighted accuracy or :math:`R^2`,
    so it is not predicted: a task whose every training row had zero weight
    was left out of the fit (as removed rows), and scoring the fit's own
    rows with the fit's own weights stopped on "task_index has tasks unseen
    in fit".
    """
    if sample_weight is None:
        return X, y, task_index, sample_weight
    sw = np.asarray(sample_weight)
    if sw.ndim != 1 or sw.dtype.kind not in "biuf" or not np.any(sw > 0) \
            or np.all(sw > 0):
        return X, y, task_index, sample_weight  # (the metric names what is wrong)
    from sklearn.utils import _safe_indexing

    keep = np.flatnonzero(sw > 0)
    if getattr(est, "_precomputed", lambda: False)() and (
            isinstance(X, (list, tuple)) or np.ndim(X) == 3):
        # k test-vs-train Gram matrices, a list or stacked (the rows of each:
        # indexing a stack picked kernels)
        X = [np.asarray(G)[keep] for G in X]
    else:
        X = _safe_indexing(X, keep)
    task_index = None if task_index is None else np.asarray(task_index)[keep]
    return X, _safe_indexing(y, keep), task_index, sw[keep]


def task_score_doc(what, x_doc):
    """The docstring of a ``score(X, y, task_index=None, sample_weight=None)``
    computing ``what`` (:func:`task_score`), with ``x_doc`` describing ``X``."""
    return f"""{what} of ``predict(X, task_index)`` against ``y`` (scikit-learn's
        ``score``, with the samples' tasks when the model was fitted with them).

        Parameters
        ----------
        {x_doc}
        y : array-like of shape (n_samples,)
            True targets.
        task_index : array-like of shape (n_samples,), optional
            Task id of each sample (required when fitted with ``task_index``).
        sample_weight : array-like of shape (n_samples,), optional
            Sample weights.

        Returns
        -------
        score : float
        """


def fitted_classes_rows(est, X, y, sample_weight, task_index):
    """``X, y, sample_weight`` and ``task_index`` (keyword) of the rows whose
    label is one of ``est.classes_``, for the Platt folds of a binary multitask fit.

    A third label whose rows all weigh zero (``sample_weight`` or
    ``class_weight={c: 0}``) leaves the binary fit (its rows are removed
    rows), which then has two classes; the Platt folds counted it as a third
    class "of positive weight" and refused ``probability=True`` ("class 2 has
    none") where the same fit without probabilities ran.  Its rows weigh
    nothing, so leaving them out of the folds too is exact.
    """
    y = np.asarray(y)
    rows = np.flatnonzero(np.isin(y, est.classes_))
    if rows.size == len(y):
        return X, y, sample_weight, {"task_index": task_index}
    X, y = est._split_rows(X, y, rows)
    sw = None if sample_weight is None else np.asarray(sample_weight)[rows]
    t = None if task_index is None else np.asarray(task_index)[rows]
    return X, y, sw, {"task_index": t}


def task_sample_weight(sample_weight, n, y, class_weight, task_rows):
    """:func:`~kernlearn.estimators._base.fit_sample_weight`, ``"balanced"`` task by task.

    With tasks of their own rows each task is its own loss: ``class_weight="balanced"``
    gives a row of class ``c`` in task ``t`` the weight ``n_t / (k_t n_{t,c})`` (scikit-learn's
    ``compute_sample_weight`` on the task's rows, ``k_t`` the classes present there; under
    ``sample_weight`` the classes' total weights of the task, as
    :func:`~kernlearn.estimators._base.fit_sample_weight` counts them), so a task's classes
    weigh as they would in a fit of that task alone.  Over all rows, a task holding a
    class on 5 % of its rows beside tasks that balance the pool would stay unbalanced.
    A dict ``class_weight`` is the same in every task; without tasks this is
    ``fit_sample_weight``.

    Parameters
    ----------
    sample_weight : array-like of shape (n,) or None
        Non-negative weights.
    n : int
        Number of samples.
    y : ndarray of shape (n,)
        Class labels.
    class_weight : dict, "balanced" or None
        Class weights.
    task_rows : list of ndarray or None
        Rows of each task (:func:`split_tasks`).

    Returns
    -------
    ndarray of shape (n,) or None
    """
    from ._base import fit_sample_weight

    if task_rows is None or not isinstance(class_weight, str):
        return fit_sample_weight(sample_weight, n, y, class_weight)
    sw = fit_sample_weight(sample_weight, n)  # (validated once, on all rows)
    base = np.ones(n) if sw is None else sw
    out = np.zeros(n)
    for rows in task_rows:
        if np.any(base[rows] > 0):  # (a task of zero weight only stays removed)
            out[rows] = fit_sample_weight(base[rows], len(rows), y[rows], class_weight)
    return out
