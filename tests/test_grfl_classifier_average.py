"""InfiniteFeatureClassifier below CV_BELOW rows, with a budget of its choosing
(``max_features`` None or "auto") and no warm start: its model averages
FINAL_DRAWS paths on all rows (``_grfl_average``, ``fit_grfl(final_draws=...)``)."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from kernlearn import InfiniteFeatureClassifier
from kernlearn.estimators._base import input_standardization
from kernlearn.methods import _grfl_average
from kernlearn.methods._grfl_select import CV_BELOW


def _data(n=150, classes=3, seed=0):
    return make_classification(n, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=classes, n_clusters_per_class=1, flip_y=0.05,
                               random_state=seed)


def _objective(res, Z, Y):
    """Eq. (17) with the squared hinge: sum 1/2 max(0, 1 - y m)^2 over rows and
    one-vs-all tasks, plus lambda_p times each feature's group norm (its
    cos/sin weights of every task)."""
    M = Z @ res.coef.T + res.intercept
    loss = 0.5 * np.sum(np.maximum(0.0, 1.0 - Y * M) ** 2)
    groups = res.coef.reshape(res.coef.shape[0], -1, 2)
    return M, loss + res.lambda_p * np.sqrt((groups ** 2).sum(axis=(0, 2))).sum()


def test_multiclass_decision_is_the_draws_mean_and_objective_at_most_theirs(monkeypatch,
                                                                            averaged_draws):
    X, y = _data()
    assert X.shape[0] < CV_BELOW and _grfl_average.FINAL_DRAWS > 1
    clf = InfiniteFeatureClassifier(n_candidates=30, random_state=0).fit(X, y)
    draws = averaged_draws[-1][1]
    assert len(draws) == _grfl_average.FINAL_DRAWS
    assert len(clf.features_) == sum(len(d.features) for d in draws)
    Xs = input_standardization(clf).transform(X)
    Y = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
    margins = []
    for d in draws:
        Zd = d.family.columns(d.features, Xs) * d.feature_scales.ravel()
        Md, od = _objective(d, Zd, Y)
        # the formula reproduces each draw's own objective (the convention holds)
        assert od == pytest.approx(d.objective, rel=1e-8)
        margins.append(Md)
    # the estimator's decision values are the mean of the draws' (task by task)
    np.testing.assert_allclose(clf.decision_function(X), np.mean(margins, axis=0),
                               rtol=1e-9, atol=1e-10)
    Z = clf.transform(X)
    res = type(draws[0])(**{**draws[0].__dict__, "features": clf.features_,
                            "feature_scales": clf.feature_scales_, "coef": clf.column_coef_,
                            "intercept": clf.intercept_})
    _, direct = _objective(res, Z, Y)
    assert clf.objective_ == pytest.approx(direct, rel=1e-8)
    # Jensen: no worse than the draws on average (strictly: they differ)
    assert clf.objective_ < np.mean([d.objective for d in draws])
    assert not np.array_equal(draws[0].features, draws[1].features)


def test_the_first_draw_is_the_single_path_of_a_numeric_budget(monkeypatch):
    X, y = _data(120, 2, seed=1)
    kw = {"n_candidates": 30, "random_state": 0}
    three = InfiniteFeatureClassifier(**kw).fit(X, y)
    budget = three._budget
    one = InfiniteFeatureClassifier(max_features=budget, **kw).fit(X, y)
    # a numeric budget (and warm_start with the default one) gives one path,
    # the first of the averaged draws
    warm = InfiniteFeatureClassifier(warm_start=True, **kw).fit(X, y)
    k = len(one.features_)
    assert len(three.features_) > k
    np.testing.assert_array_equal(three.features_[:k], one.features_)
    np.testing.assert_allclose(three.column_coef_[:, :2 * k], one.column_coef_ / 3, rtol=1e-12)
    np.testing.assert_array_equal(warm.features_, one.features_)


def test_max_features_auto_averages_the_paths_after_the_folds(monkeypatch,
                                                              averaged_draws):
    X, y = _data(140, 2, seed=2)
    clf = InfiniteFeatureClassifier(max_features="auto", n_candidates=30,
                                    random_state=0).fit(X, y)
    draws = averaged_draws[-1][1]
    assert len(draws) == _grfl_average.FINAL_DRAWS
    # every draw runs to the folds' count; their union is the model's features
    assert all(d.max_features == clf.max_features_ for d in draws)
    assert all(len(d.features) <= clf.max_features_ for d in draws)
    np.testing.assert_array_equal(clf.features_, np.vstack([d.features for d in draws]))
    assert "validation_loss" in clf.history_


def test_no_averaging_from_cv_below_rows(monkeypatch, averaged_draws):
    X, y = _data(CV_BELOW + 20, 2, seed=3)
    kw = {"n_candidates": 20, "random_state": 0}
    a = InfiniteFeatureClassifier(**kw).fit(X, y)
    assert all(len(r) == 1 for _, r in averaged_draws)
    b = InfiniteFeatureClassifier(max_features=a._budget, **kw).fit(X, y)
    np.testing.assert_array_equal(a.features_, b.features_)
