"""GrFL's multitask fit (``task_index``) under scikit-learn's metadata routing:
cross_validate and a Pipeline pass each sample's task to fit, predict and score,
as for the multitask MKL estimators.

``InfiniteFeatureClassifier``/``InfiniteFeatureRegressor`` took ``task_index``
in fit but did not request it, so with routing on ``cross_validate(...,
params={"task_index": t})`` stopped with scikit-learn's "not explicitly set as
requested" error, and a string scorer would have scored NaN on every split.
"""

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, cross_val_score, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.estimators.mtmkl import MultitaskScorer

SMALL = dict(max_features=3, n_candidates=10, random_state=0)


def _tasks(seed=0, T=3, m=30):
    rng = np.random.default_rng(seed)
    t = np.repeat(np.arange(T) * 4 + 1, m)  # non-contiguous ids
    X = rng.normal(size=(T * m, 3))
    y = np.sin(X[:, 0]) * (1 + t / 4) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=T * m)
    return X, y, t


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _manual(est, X, y, t, folds, score=None):
    out = []
    for tr, te in folds:
        model = clone(est).fit(X[tr], y[tr], task_index=t[tr])
        out.append(model.score(X[te], y[te], task_index=t[te]) if score is None
                   else score(model, X[te], y[te], t[te]))
    return np.array(out)


def test_cross_validate_routes_task_index(routing):
    X, y, t = _tasks()
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, t))
    est = InfiniteFeatureRegressor(**SMALL)
    res = cross_validate(est, X, y, cv=folds, params={"task_index": t},
                         scoring={"r2": MultitaskScorer("r2"),
                                  "mae": MultitaskScorer("neg_mean_absolute_error")})

    def mae(model, Xte, yte, tte):
        return -np.mean(np.abs(yte - model.predict(Xte, task_index=tte)))

    np.testing.assert_allclose(res["test_r2"], _manual(est, X, y, t, folds), rtol=1e-12)
    np.testing.assert_allclose(res["test_mae"], _manual(est, X, y, t, folds, mae),
                               rtol=1e-12)
    # the default scoring is the estimator's score, which receives task ids too
    np.testing.assert_allclose(
        cross_val_score(est, X, y, cv=folds, params={"task_index": t}),
        res["test_r2"], rtol=1e-12)


def test_classifier_in_a_pipeline_routes_task_index(routing):
    X, y, t = _tasks()
    labels = np.where(y > np.array([np.median(y[t == k]) for k in t]), "hi", "lo")
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, t))
    pipe = make_pipeline(StandardScaler(), InfiniteFeatureClassifier(**SMALL))
    got = cross_val_score(pipe, X, labels, cv=folds, params={"task_index": t})
    np.testing.assert_allclose(got, _manual(pipe, X, labels, t, folds), rtol=1e-12)
    assert np.isfinite(got).all()


def test_a_scorer_string_is_an_error_not_nan(routing):
    # scikit-learn's scorers call predict(X) with no task ids: every split
    # would fail and score NaN; stopped at fit, naming the wrapper
    X, y, t = _tasks()
    folds = list(StratifiedKFold(3).split(X, t))
    with pytest.raises(ValueError, match=r"MultitaskScorer\('r2'\)"):
        cross_validate(InfiniteFeatureRegressor(**SMALL), X, y, cv=folds,
                       params={"task_index": t}, scoring="r2")
    # without task ids the model is one task: a string scorer works
    assert np.isfinite(cross_val_score(InfiniteFeatureRegressor(**SMALL), X, y, cv=folds,
                                       scoring="r2")).all()


def test_model_selection_without_routing_is_an_error():
    X, y, t = _tasks()
    folds = list(StratifiedKFold(3).split(X, t))
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        cross_val_score(InfiniteFeatureRegressor(**SMALL), X, y, cv=folds,
                        params={"task_index": t})
    est = InfiniteFeatureRegressor(**SMALL).fit(X, y, task_index=t)  # a direct fit: fine
    with pytest.raises(ValueError, match="pass task_index.*enable_metadata_routing"):
        est.predict(X)
