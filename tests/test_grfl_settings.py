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
def test_weights_times_c_are_the_model_of_the_weights_at_lambda_over_sqrt_c(Est):
    # weights are taken as given: c * w multiplies the loss by c and the
    # weighted column norms by sqrt(c), i.e. the levels are divided by sqrt(c);
    # the scale is moved into the levels, so c = 1e12 solves the same numbers
    X, y = _data(3)
    if Est is InfiniteFeatureClassifier:
        y = (y > np.median(y)).astype(int)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    est = Est(max_features=8, n_candidates=20, random_state=0, inner_tol=1e-8,
              inner_max_iter=3000, lambda_p=0.5)
    f = "decision_function" if Est is InfiniteFeatureClassifier else "predict"
    # (with c = 1e12 at lambda_p = 5e5, so that both fits solve a problem of
    # level 0.5 and stay quick)
    for c, lam in ((4.0, 0.5), (1e12, 5e5)):
        a = clone(est).set_params(lambda_p=lam / np.sqrt(c)).fit(X, y, sample_weight=w)
        b = clone(est).set_params(lambda_p=lam).fit(X, y, sample_weight=c * w)
        np.testing.assert_allclose(getattr(b, f)(X), getattr(a, f)(X), rtol=1e-6, atol=1e-8)
        assert np.isfinite(b.objective_)
        np.testing.assert_allclose(b.objective_, c * a.objective_, rtol=1e-8)
    # and the weights matter at a fixed level (they are not rescaled away)
    c4 = clone(est).fit(X, y, sample_weight=4.0 * w)
    assert not np.allclose(getattr(c4, f)(X), getattr(clone(est).fit(X, y, sample_weight=w), f)(X))


@pytest.mark.parametrize("standardize", [False, True])
def test_integer_weights_are_repeated_rows(standardize):
    # scikit-learn's rule at the same settings: weight k equals k copies of
    # the row (zero removes it); the columns' weighted norms and the weighted
    # default width are those of the repeated data
    X, y = _data(4, n=60)
    k = np.random.default_rng(1).integers(0, 4, size=len(y))
    est = InfiniteFeatureRegressor(max_features=5, n_candidates=10, inner_tol=1e-10,
                                   inner_max_iter=5000, standardize=standardize,
                                   random_state=0)
    a = clone(est).fit(X, y, sample_weight=k)
    b = clone(est).fit(np.repeat(X, k, 0), np.repeat(y, k))
    np.testing.assert_allclose(a.features_, b.features_)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(a.objective_, b.objective_, rtol=1e-8)


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
    # every master solved to inner_tol (path_iter=None): the compiled and the
    # generic inner solvers then agree, and so does pricing
    kw = dict(max_features=6, n_candidates=20, inner_tol=1e-9, inner_max_iter=5000,
              solver=solver, path_iter=None, random_state=0)
    a = InfiniteFeatureRegressor(penalty=_HalfGroupLasso(), **kw).fit(X, y)
    b = InfiniteFeatureRegressor(penalty="group_l1_l2", lambda_p=0.5, **kw).fit(X, y)
    np.testing.assert_allclose(a.features_, b.features_)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-6, atol=1e-8)
