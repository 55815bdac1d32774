"""Task ids (``task_index``) through scikit-learn's model selection.

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

import sys

import numpy as np
from sklearn import get_config

__all__ = ["TaskIndexRequests", "check_task_fit", "routing_help"]


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
             "e.g. scoring=MultitaskScorer('r2'))")
    return text + _cv_variant(est, "; or use {}.", ".")


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
    the validation rows are caught here, where an error stops the search: a
    scorer that calls ``predict(X)`` with no metadata (scikit-learn's own,
    ``scoring="r2"`` and the like; :class:`MultitaskScorer` and the default
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
    scorers = (scorer._scorers.values() if _MultimetricScorer
               and isinstance(scorer, _MultimetricScorer) else [scorer])
    blind = [sc for sc in scorers if _BaseScorer and isinstance(sc, _BaseScorer)]
    if blind:
        raise ValueError(f"scoring {blind[0]!r} calls {type(estimator).__name__}'s "
                         "predictions without task_index (scikit-learn's scorers "
                         "pass no metadata to predict); wrap it: scoring="
                         "MultitaskScorer('r2') (kernlearn.estimators.mtmkl).")
    t = (cv.get("score_params") or {}).get("task_index")
    if t is None and predict_needs_tasks and "score_params" in cv:
        # (a score not requesting task_index: every split scored NaN)
        raise ValueError(f"task_index is routed to {type(estimator).__name__}.fit but "
                         "not to its scoring, so every validation score would be NaN: "
                         "request it, .set_score_request(task_index=True), or score "
                         "with scoring=MultitaskScorer('r2') "
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
