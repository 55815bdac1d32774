"""Task ids in scikit-learn's model selection: what a multitask fit checks.

``task_index`` is metadata, not a column of ``X``: scikit-learn passes it on
only with its metadata routing turned on, and even then ``cross_val_predict``
passes it to ``fit`` only.  A model fitted on several tasks cannot predict
rows whose tasks it is not told, so such a split fails in ``predict`` or
``score``, which scikit-learn's searches turn into a NaN score (and then pick
the first candidate).  :func:`check_task_fit` stops the fit instead, with an
error naming the fix; the multitask MKL and GrFL estimators call it when
``fit`` receives ``task_index``.
"""

import sys

import numpy as np
from sklearn import get_config


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
    import kernlearn

    name = type(est).__name__
    text = ("Turn scikit-learn's metadata routing on, sklearn.set_config("
            "enable_metadata_routing=True): task_index is then routed to fit, predict "
            "and score")
    if est.get_metadata_routing().fit.requests.get("task_index") is not True:
        # (the GrFL estimators do not request it by default)
        text += (f" once requested ({name}(...).set_fit_request(task_index=True)"
                 ".set_score_request(task_index=True))")
    text += (" (and to scorers wrapped in kernlearn.estimators.mtmkl.MultitaskScorer, "
             "e.g. scoring=MultitaskScorer('r2'))")
    if name + "CV" in kernlearn._ESTIMATORS:
        text += f"; or use {name}CV"
    return text + "."


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
                             "cv=StratifiedKFold(k, shuffle=True).split(X, task_index) "
                             "(or MultitaskMKLRegressorCV).")
