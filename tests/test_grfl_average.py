"""The model on all rows after the folds chose ``lambda_p="auto"`` (below CV_BELOW
rows) averages FINAL_DRAWS paths at that level (``_grfl_average``)."""

import numpy as np
import pytest

from kernlearn import InfiniteFeatureRegressor
from kernlearn.methods import _grfl_average, grfl
from kernlearn.methods._grfl_select import CV_BELOW


def _problem(n=120, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.2 * rng.normal(size=n)
    return X, y


def _fit(monkeypatch, draws, X, y, **kw):
    monkeypatch.setattr(_grfl_average, "FINAL_DRAWS", draws)
    return InfiniteFeatureRegressor(n_candidates=30, random_state=0, **kw).fit(X, y)


def test_the_model_averages_the_draws_the_first_being_the_single_path(monkeypatch,
                                                                      averaged_draws):
    X, y = _problem()
    assert X.shape[0] < CV_BELOW and _grfl_average.FINAL_DRAWS > 1
    one = _fit(monkeypatch, 1, X, y)
    three = _fit(monkeypatch, 3, X, y)
    assert three.lambda_p_ == one.lambda_p_  # the folds are the same
    draws = averaged_draws[-1][1]
    assert len(draws) == 3
    # the first draw is the single path's model; the others are other draws
    k = len(one.features_)
    np.testing.assert_array_equal(three.features_[:k], one.features_)
    np.testing.assert_allclose(three.task_coef_[:, :2 * k], one.task_coef_ / 3, rtol=1e-12)
    assert len(three.features_) == sum(len(r.features) for r in draws)
    assert not np.array_equal(draws[1].features, draws[0].features)


def test_objective_of_the_average_is_eq17_and_at_most_the_draws_mean(monkeypatch,
                                                                      averaged_draws):
    X, y = _problem(90, 2)
    monkeypatch.setattr(_grfl_average, "FINAL_DRAWS", 3)
    Xs = (X - X.mean(0)) / X.std(0)
    ys = (y - y.mean()) / y.std()
    from kernlearn.losses import get_loss
    from kernlearn.penalties import get_penalty
    res = grfl.fit_grfl(Xs, ys[:, None], loss=get_loss("square"),
                        penalty=get_penalty("group_l1_l2"), lambda_p="auto",
                        max_features="auto", n_candidates=30, random_state=0)
    draws = averaged_draws[-1][1]
    # eq. (17) at the averaged weights, evaluated from the result alone:
    # sum 1/2 (y - m)^2 + lambda_p * sum of the features' group l2 norms
    Z = res.family.columns(res.features, Xs) * res.feature_scales.ravel()
    m = Z @ res.coef[0] + res.intercept[0]
    groups = res.coef[0].reshape(-1, 2)
    direct = 0.5 * np.sum((ys - m) ** 2) + res.lambda_p * np.linalg.norm(groups, axis=1).sum()
    # the same formula reproduces each draw's own objective (the convention
    # holds), and the average's predictions are the mean of the draws'
    margins = []
    for d in draws:
        Zd = d.family.columns(d.features, Xs) * d.feature_scales.ravel()
        md = Zd @ d.coef[0] + d.intercept[0]
        margins.append(md)
        od = (0.5 * np.sum((ys - md) ** 2)
              + d.lambda_p * np.linalg.norm(d.coef[0].reshape(-1, 2), axis=1).sum())
        assert od == pytest.approx(d.objective, rel=1e-8)
    np.testing.assert_allclose(m, np.mean(margins, axis=0), rtol=1e-10, atol=1e-12)
    assert res.objective == pytest.approx(direct, rel=1e-8)
    # Jensen: no worse than the draws on average (strictly: they differ)
    assert res.objective < np.mean([d.objective for d in draws])


def test_no_averaging_without_the_folds(monkeypatch):
    # a level given (the folds choose the count only) and one held-out part
    # (CV_BELOW rows or more): FINAL_DRAWS changes nothing
    X, y = _problem()
    a = _fit(monkeypatch, 1, X, y, lambda_p=0.4)
    b = _fit(monkeypatch, 3, X, y, lambda_p=0.4)
    np.testing.assert_array_equal(a.features_, b.features_)
    X, y = _problem(CV_BELOW + 10, 3)
    a = _fit(monkeypatch, 1, X, y)
    b = _fit(monkeypatch, 3, X, y)
    np.testing.assert_array_equal(a.features_, b.features_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
