"""Model selection with task ids: scikit-learn's metadata routing (GridSearchCV,
cross_val_score, cross_validate, cross_val_predict, scorer strings), the clear
errors where task ids cannot reach predict, and the built-in
MultitaskMKLRegressorCV."""

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import (
    GridSearchCV,
    StratifiedKFold,
    cross_val_predict,
    cross_val_score,
    cross_validate,
)

from kernlearn import MultitaskMKLClassifier, MultitaskMKLRegressor
from kernlearn.estimators.mtmkl import MultitaskScorer

KERNELS = ["linear", ("rbf", {"gamma": 0.5})]


def _tasks(seed=0, T=4, m=24):
    # tasks with their own slopes and levels: C matters
    rng = np.random.default_rng(seed)
    t = np.repeat(np.arange(T) * 5 + 2, m)  # non-contiguous ids
    X = rng.normal(size=(T * m, 3))
    slope = rng.normal(size=T)[t // 5]
    y = slope * X[:, 0] + np.sin(2 * X[:, 1]) + t / 5 + 0.5 * rng.normal(size=T * m)
    return X, y, t


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def _manual_cv(est, X, y, t, folds, C, score=None):
    out = []
    for tr, te in folds:
        model = sklearn.base.clone(est).set_params(C=C).fit(X[tr], y[tr], task_index=t[tr])
        out.append(model.score(X[te], y[te], task_index=t[te]) if score is None
                   else score(model, X[te], y[te], t[te]))
    return np.array(out)


def test_model_selection_without_routing_is_an_error():
    # task_index reaches fit only: predict and score would fail on every
    # split (NaN scores, the first C picked); a clear error instead
    X, y, t = _tasks()
    est = MultitaskMKLRegressor(KERNELS, max_iter=10)
    folds = list(StratifiedKFold(3).split(X, t))
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        GridSearchCV(est, {"C": [0.1, 1.0]}, cv=folds).fit(X, y, task_index=t)
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        cross_val_score(est, X, y, cv=folds, params={"task_index": t})
    # a direct fit is unaffected, and predict without task ids says what to do
    est.fit(X, y, task_index=t)
    with pytest.raises(ValueError, match="pass task_index.*enable_metadata_routing"):
        est.predict(X)


def test_gridsearch_with_routing_equals_the_manual_cross_validation(routing):
    X, y, t = _tasks()
    est = MultitaskMKLRegressor(KERNELS, max_iter=20)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, t))
    Cs = [0.01, 0.1, 1.0, 10.0]
    search = GridSearchCV(est, {"C": Cs}, cv=folds).fit(X, y, task_index=t)
    manual = np.array([_manual_cv(est, X, y, t, folds, C) for C in Cs])
    scores = search.cv_results_["mean_test_score"]
    assert np.isfinite(scores).all()
    np.testing.assert_allclose(scores, manual.mean(1), rtol=1e-12)
    assert np.ptp(scores) > 0.01  # C matters here, so the choice is a real one
    assert search.best_params_["C"] == Cs[int(np.argmax(manual.mean(1)))]
    # the refit at the chosen C (GridSearchCV.predict takes no metadata:
    # predict with best_estimator_)
    ref = sklearn.base.clone(est).set_params(**search.best_params_).fit(X, y, task_index=t)
    np.testing.assert_array_equal(search.best_estimator_.predict(X, task_index=t),
                                  ref.predict(X, task_index=t))
    # cross_val_score and cross_validate route task_index too
    np.testing.assert_allclose(
        cross_val_score(est.set_params(C=1.0), X, y, cv=folds, params={"task_index": t}),
        manual[2], rtol=1e-12)


def test_scorer_strings_need_the_task_aware_wrapper(routing):
    X, y, t = _tasks()
    est = MultitaskMKLRegressor(KERNELS, max_iter=20, C=1.0)
    folds = list(StratifiedKFold(3).split(X, t))
    # a bare string calls predict(X) without task ids: an error, never NaN
    with pytest.raises(ValueError, match=r"MultitaskScorer\('r2'\)"):
        GridSearchCV(est, {"C": [0.1, 1.0]}, cv=folds, scoring="r2").fit(
            X, y, task_index=t)
    res = cross_validate(est, X, y, cv=folds, params={"task_index": t},
                         scoring={"r2": MultitaskScorer("r2"),
                                  "mse": MultitaskScorer("neg_mean_squared_error")})

    def mse(model, Xte, yte, tte):
        return -np.mean((yte - model.predict(Xte, task_index=tte)) ** 2)

    np.testing.assert_allclose(res["test_r2"], _manual_cv(est, X, y, t, folds, 1.0),
                               rtol=1e-12)
    np.testing.assert_allclose(res["test_mse"], _manual_cv(est, X, y, t, folds, 1.0, mse),
                               rtol=1e-12)
    # cross_val_predict routes metadata to fit only (scikit-learn 1.9): a clear
    # error from predict, not silent predictions for the wrong tasks
    with pytest.raises(ValueError, match="pass task_index"):
        cross_val_predict(est, X, y, cv=folds, params={"task_index": t})


def test_classifier_scorer_uses_the_task_decision_values(routing):
    X, y, t = _tasks()
    med = {k: np.median(y[t == k]) for k in np.unique(t)}  # both classes in every task
    labels = np.where(y > np.array([med[k] for k in t]), "hi", "lo")
    clf = MultitaskMKLClassifier(KERNELS, max_iter=10, C=1.0)
    folds = list(StratifiedKFold(3).split(X, t))
    got = cross_val_score(clf, X, labels, cv=folds, params={"task_index": t},
                          scoring=MultitaskScorer("roc_auc"))

    def auc(model, Xte, yte, tte):  # positive class: classes_[1] = "lo"
        return roc_auc_score(yte == "lo", model.decision_function(Xte, task_index=tte))

    np.testing.assert_allclose(got, _manual_cv(clf, X, labels, t, folds, 1.0, auc),
                               rtol=1e-12)
