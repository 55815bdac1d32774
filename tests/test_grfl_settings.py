"""GrFL: warm starts keyed on every setting, weight scale, penalties without alpha."""

import numpy as np
import pytest
from sklearn.base import clone

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.penalties import BasePenalty
from kernlearn.penalties._prox import block_soft_scales, group_norms


def _data(seed=0, n=120):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.05 * rng.normal(size=n)
    return X, y


def test_warm_start_refits_after_a_changed_lambda_p():
    X, y = _data()
    est = InfiniteFeatureRegressor(max_features=10, n_candidates=20, lambda_p=1.0,
                                   warm_start=True, random_state=0).fit(X, y)
    est.set_params(lambda_p=0.03).fit(X, y)
    cold = clone(est).set_params(warm_start=False).fit(X, y)
    assert cold.objective_ < 0.6 * InfiniteFeatureRegressor(
        max_features=10, n_candidates=20, random_state=0).fit(X, y).objective_
    np.testing.assert_allclose(est.objective_, cold.objective_, rtol=1e-12)
    np.testing.assert_allclose(est.predict(X), cold.predict(X), rtol=1e-10, atol=1e-12)


def test_warm_start_refits_after_a_changed_loss():
    X, y = _data(1)
    yc = (y > np.median(y)).astype(int)
    est = InfiniteFeatureClassifier(max_features=8, n_candidates=20, warm_start=True,
                                    random_state=0).fit(X, yc)
    est.set_params(loss="logistic").fit(X, yc)
    cold = clone(est).set_params(warm_start=False).fit(X, yc)
    np.testing.assert_allclose(est.predict_proba(X), cold.predict_proba(X), rtol=1e-10)


def test_warm_start_still_continues_when_only_the_budget_grows():
    X, y = _data(2)
    est = InfiniteFeatureRegressor(max_features=4, n_candidates=20, warm_start=True,
                                   path_iter=None, random_state=0).fit(X, y)
    path = est._path.path
    est.set_params(max_features=8, verbose=0, time_budget=100.0).fit(X, y)
    assert est._path.path is path  # the same run, continued
    assert est.n_iter_ == 8


@pytest.mark.parametrize("Est", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_the_scale_of_sample_weights_does_not_change_the_model(Est):
    X, y = _data(3)
    if Est is InfiniteFeatureClassifier:
        y = (y > np.median(y)).astype(int)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    est = Est(max_features=8, n_candidates=20, random_state=0, inner_tol=1e-8,
              inner_max_iter=3000)
    f = "decision_function" if Est is InfiniteFeatureClassifier else "predict"
    ref = getattr(clone(est).fit(X, y), f)(X)
    big = getattr(clone(est).fit(X, y, sample_weight=np.full(len(y), 1e12)), f)(X)
    np.testing.assert_allclose(big, ref, rtol=1e-6, atol=1e-8)
    a = getattr(clone(est).fit(X, y, sample_weight=w), f)(X)
    b = getattr(clone(est).fit(X, y, sample_weight=1e12 * w), f)(X)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


def test_integer_weights_are_repeated_rows_at_the_rescaled_level():
    # weights k are rescaled to mean one over the rows with k > 0: with kbar
    # that mean, the objective is (1/kbar) times the repeated-row objective at
    # lambda * sqrt(kbar) on its unit-norm columns (their norms grow by
    # sqrt(kbar) under repetition)
    X, y = _data(4, n=60)
    k = np.random.default_rng(1).integers(0, 4, size=len(y))
    est = InfiniteFeatureRegressor(max_features=5, n_candidates=10, inner_tol=1e-10,
                                   inner_max_iter=5000, standardize=False, random_state=0)
    a = clone(est).fit(X, y, sample_weight=k)
    b = clone(est).set_params(lambda_p=est.lambda_p * np.sqrt(k[k > 0].mean())).fit(
        np.repeat(X, k, 0), np.repeat(y, k))
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-6, atol=1e-7)


class _HalfGroupLasso(BasePenalty):
    """0.5 * sum_g ||w_g||_2 with its level built in (no ``alpha``)."""

    def value(self, w, indptr=None):
        return 0.5 * float(group_norms(w, self._indptr(w, indptr)).sum())

    def prox_scales(self, norms, step):
        return block_soft_scales(norms, 0.5 * step)

    def dual_norm(self, scores, indptr=None):
        # dual norm of the whole penalty: 2 * ||h_g||_2 (the level is 1)
        return 2.0 * group_norms(np.asarray(scores), self._indptr(scores, indptr))


@pytest.mark.parametrize("solver", ["admm", "newton"])
def test_a_penalty_without_alpha_prices_against_its_own_level(solver):
    X, y = _data(5)
    kw = dict(max_features=6, n_candidates=20, inner_tol=1e-9, inner_max_iter=5000,
              solver=solver, random_state=0)
    a = InfiniteFeatureRegressor(penalty=_HalfGroupLasso(), **kw).fit(X, y)
    b = InfiniteFeatureRegressor(penalty="group_l1_l2", lambda_p=0.5, **kw).fit(X, y)
    np.testing.assert_allclose(a.features_, b.features_)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-6, atol=1e-8)
