"""FGMRegressor's default C="auto": C chosen by cross-validation, then a refit."""

import numpy as np
import pytest

from kernlearn import FGMClassifier, FGMRegressor
from kernlearn.families import FeaturePool
from kernlearn.losses import get_loss
from kernlearn.methods._fgm_select import C_GRID, CV_MASTER_TOL, fit_fgm_auto_C
from kernlearn.methods.fgm import FGMSettings


def _linear(rng, n=120, p=8, noise=0.0):
    X = rng.standard_normal((n, p)) * rng.uniform(0.5, 20, p) + rng.uniform(-5, 5, p)
    w = np.zeros(p)
    w[:3] = [2.0, -1.5, 1.0]
    y = (X - X.mean(0)) / X.std(0) @ w + noise * rng.standard_normal(n)
    return X, y


def test_default_is_auto_and_numeric_C_is_kept():
    assert FGMRegressor().C == "auto"
    X, y = _linear(np.random.default_rng(0))
    m = FGMRegressor(C=2.5).fit(X, y)
    assert m.C_ == 2.5 and m.cv_results_ is None


def test_noise_target_gets_small_C_clean_linear_target_large_C():
    rng = np.random.default_rng(1)
    X, y_clean = _linear(rng, noise=0.01)
    y_noise = rng.standard_normal(len(y_clean))  # unrelated to X
    clean = FGMRegressor().fit(X, y_clean)
    noise = FGMRegressor().fit(X, y_noise)
    assert clean.C_ >= 10.0
    assert noise.C_ <= 0.01
    # the small C shrinks a noise fit towards the mean
    assert np.std(noise.predict(X)) < 0.75 * np.std(FGMRegressor(C=1.0).fit(X, y_noise)
                                                     .predict(X))


def test_chosen_C_is_the_cv_minimum_and_the_refit_is_a_fit_at_C_():
    X, y = _linear(np.random.default_rng(2), noise=1.0)
    m = FGMRegressor().fit(X, y)
    cv = m.cv_results_
    assert set(C_GRID) <= set(cv["C"].tolist())
    assert np.all(np.diff(cv["C"]) > 0) and np.all(np.isfinite(cv["loss"]))
    assert m.C_ == cv["C"][np.argmin(cv["loss"])]
    fixed = FGMRegressor(C=m.C_).fit(X, y)
    np.testing.assert_allclose(m.predict(X), fixed.predict(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(m.selected_features_, fixed.selected_features_)


def _settings():
    return FGMSettings(B=10, max_iter=15, tol=1e-2)


def test_cv_loss_is_the_summed_held_out_square_loss():
    """The curve, recomputed by hand: fits on the training rows, loss on the rest."""
    rng = np.random.default_rng(3)
    X, y = _linear(rng, n=60, noise=0.5)
    X = (X - X.mean(0)) / X.std(0)
    perm = rng.permutation(60)
    folds = [(np.sort(np.setdiff1d(np.arange(60), v)), np.sort(v))
             for v in (perm[:20], perm[20:40], perm[40:])]
    res = fit_fgm_auto_C(X, y, FeaturePool(feature_scaling=False), get_loss("square"),
                         _settings(), folds=folds)
    for C, loss in zip(res.cv["C"], res.cv["loss"]):
        want = 0.0
        for tr, val in folds:
            est = FGMRegressor(C=C, standardize=False, inner_tol=CV_MASTER_TOL)
            r = y[val] - est.fit(X[tr], y[tr]).predict(X[val])
            want += 0.5 * np.sum(r ** 2)
        assert loss == pytest.approx(want, rel=1e-8)


def test_sample_weights_reach_the_folds_fits_and_held_out_losses():
    """Integer weights == rows repeated within the same fold, curve and choice."""
    rng = np.random.default_rng(4)
    X, y = _linear(rng, n=45, noise=0.7)
    w = rng.integers(1, 4, size=45).astype(float)
    folds = [(np.setdiff1d(np.arange(45), np.arange(k, 45, 3)), np.arange(k, 45, 3))
             for k in range(3)]
    rep = np.repeat(np.arange(45), w.astype(int))
    pos = [np.flatnonzero(np.isin(rep, idx)) for idx in (f[1] for f in folds)]
    folds_rep = [(np.setdiff1d(np.arange(len(rep)), v), v) for v in pos]
    kw = dict(grid=(0.01, 0.1, 1.0, 10.0))
    a = fit_fgm_auto_C(X, y, FeaturePool(feature_scaling=False), get_loss("square"),
                       _settings(), sample_weight=w, folds=folds, **kw)
    b = fit_fgm_auto_C(X[rep], y[rep], FeaturePool(feature_scaling=False),
                       get_loss("square"), _settings(), folds=folds_rep, **kw)
    np.testing.assert_allclose(a.cv["loss"], b.cv["loss"], rtol=1e-6)
    assert a.C == b.C
    u = fit_fgm_auto_C(X, y, FeaturePool(feature_scaling=False), get_loss("square"),
                       _settings(), folds=folds, **kw)
    assert not np.allclose(a.cv["loss"], u.cv["loss"], rtol=1e-3)


def test_zero_weight_rows_are_removed_rows():
    rng = np.random.default_rng(5)
    X, y = _linear(rng, n=80, noise=0.5)
    Xg = np.vstack([X, 100 * rng.standard_normal((15, X.shape[1]))])
    yg = np.concatenate([y, 1e3 * rng.standard_normal(15)])
    w = np.r_[np.ones(80), np.zeros(15)]
    a = FGMRegressor().fit(X, y)
    b = FGMRegressor().fit(Xg, yg, sample_weight=w)
    assert a.C_ == b.C_
    np.testing.assert_allclose(a.cv_results_["loss"], b.cv_results_["loss"], rtol=1e-8)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-8, atol=1e-10)


def test_budget_is_kept_with_auto_C():
    X, y = _linear(np.random.default_rng(6), p=12, noise=0.3)
    m = FGMRegressor(max_features=3).fit(X, y)
    assert m.C_ in m.cv_results_["C"]
    assert np.count_nonzero(m.coef_) == 3


def test_out_of_core_input_keeps_C_1_and_says_so():
    X, y = _linear(np.random.default_rng(7))
    with pytest.warns(UserWarning, match="in memory only"):
        m = FGMRegressor(memory_budget=10**6).fit(X, y)
    fixed = FGMRegressor(C=1.0, memory_budget=10**6).fit(X, y)
    assert m.C_ == 1.0 and m.cv_results_ is None
    np.testing.assert_allclose(m.predict(X), fixed.predict(X), rtol=1e-12)


@pytest.mark.parametrize("est", [FGMRegressor(C="best"), FGMClassifier(C="auto")])
def test_bad_C_is_refused(est):
    X, y = _linear(np.random.default_rng(8), n=30)
    if isinstance(est, FGMClassifier):
        y = (y > 0).astype(int)
    with pytest.raises(ValueError, match="'C' parameter"):
        est.fit(X, y)
