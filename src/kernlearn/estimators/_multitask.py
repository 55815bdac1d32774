"""Task ids (``task_index``) through scikit-learn's model selection.

The multitask estimators (multitask MKL; GrFL's ``InfiniteFeatureClassifier``
and ``InfiniteFeatureRegressor`` with ``task_index``) need each sample's task
in ``fit`` and in every prediction.  Under scikit-learn's metadata routing
(``sklearn.set_config(enable_metadata_routing=True)``) they request
``task_index`` by default (:class:`TaskIndexRequests`), so ``cross_validate``,
``GridSearchCV`` and ``Pipeline`` pass it along;
:class:`~kernlearn.estimators.mtmkl.MultitaskScorer` gives it to a scorer's
predictions; and :func:`check_task_routing`, called by
``fit``, stops a model selection whose every score would be NaN (scikit-learn
turns a failed ``predict`` into a NaN score and goes on).
"""

import sys

import numpy as np
from sklearn import get_config

__all__ = ["TaskIndexRequests", "check_task_routing", "routing_help"]


def routing_help(alternative=None):
    """How to give task ids to model selection (a sentence of the errors).

    Parameters
    ----------
    alternative : str, optional
        An estimator that selects its own parameters with task ids, named last.

    Returns
    -------
    str
    """
    return ("Turn scikit-learn's metadata routing on, sklearn.set_config("
            "enable_metadata_routing=True): task_index is then routed to fit, predict and "
            "score (and to scorers wrapped in kernlearn.estimators.mtmkl.MultitaskScorer, "
            "e.g. scoring=MultitaskScorer('r2'))"
            + (f"; or use {alternative}." if alternative else "."))


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


def check_task_routing(estimator, alternative=None):
    """At ``fit`` with ``task_index``: refuse a model selection that can only score NaN.

    Without metadata routing, scikit-learn's model selection passes
    ``task_index`` to ``fit`` only: ``predict`` and ``score`` would fail on
    every split (NaN scores, the first candidate picked); a training fold
    of one task would even score, its one task's model predicting the other
    tasks' rows.  With routing, the split is checked (:func:`_check_cv_split`).
    Outside model selection nothing is checked.

    Parameters
    ----------
    estimator : estimator
        The multitask estimator being fitted.
    alternative : str, optional
        Named in the errors (:func:`routing_help`).

    Raises
    ------
    ValueError
        Routing off inside model selection, a scorer that passes no task ids,
        or a validation fold holding a task its training fold lacks.
    """
    if not get_config()["enable_metadata_routing"] and _in_model_selection():
        raise ValueError("task_index reached fit through scikit-learn's model "
                         "selection with metadata routing off, so predict and "
                         "score would not receive it (every score NaN). "
                         + routing_help(alternative))
    _check_cv_split(estimator, alternative)


def _in_model_selection():
    """Whether a call comes from scikit-learn's model selection (frames up the stack)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("sklearn.model_selection"):
            return True
        frame = frame.f_back
    return False


def _cv_split_locals():
    """Locals of a calling scikit-learn ``_fit_and_score`` (``None`` outside one)."""
    frame = sys._getframe(1)
    while frame is not None:
        if (frame.f_code.co_name == "_fit_and_score" and frame.f_globals.get(
                "__name__", "").startswith("sklearn.model_selection")):
            return frame.f_locals
        frame = frame.f_back
    return None


def _check_cv_split(estimator, alternative=None):
    """Refuse, at fit, a scikit-learn cross-validation split that can only score NaN.

    scikit-learn turns an error of ``predict`` or ``score`` into a NaN score
    (and then picks the first candidate), so the two ways task ids fail to
    serve the validation rows are caught here, where an error stops the
    search: a scorer that calls ``predict(X)`` with no metadata (scikit-learn's
    own, ``scoring="r2"`` and the like;
    :class:`~kernlearn.estimators.mtmkl.MultitaskScorer` and the default
    scoring pass task ids), and a split whose validation rows hold a
    task absent from its training rows (folds not stratified by task).
    """
    cv = _cv_split_locals()
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
    train, test = cv.get("train"), cv.get("test")
    if t is not None and train is not None and test is not None:
        t = np.asarray(t)
        unseen = np.setdiff1d(t[test], t[train])
        if unseen.size:
            raise ValueError(f"a cross-validation split has task(s) {unseen[:5]} in "
                             "its validation rows only, which no model fitted on its "
                             "training rows can predict: use folds stratified by task, "
                             "cv=StratifiedKFold(k, shuffle=True).split(X, task_index)"
                             + (f" (or {alternative})." if alternative else "."))
