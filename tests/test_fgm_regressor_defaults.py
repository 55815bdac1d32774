"""FGMRegressor's default C="auto": C chosen by cross-validation, then a refit."""

import copy
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import FGMClassifier, FGMRegressor
from kernlearn.families import FeaturePool
from kernlearn.losses import get_loss, weighted
from kernlearn.methods import _fgm_select
from kernlearn.methods._fgm_select import C_GRID, CV_MASTER_TOL, fit_fgm_auto_C
from kernlearn.methods.fgm import FGMSettings, fit_fgm


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


# --- the one-constraint shortcut: FGM at every C as ridge regression ---------

def _iterative(monkeypatch):
    """Force every fold fit through FGM's cutting planes (the shortcut off)."""
    monkeypatch.setattr(_fgm_select, "_ridge_folds", lambda *a, **k: None)


def _fold_cases():
    rng = np.random.default_rng(11)
    X, y = _linear(rng, n=90, p=7, noise=0.4)
    y = (y - y.mean()) / y.std()
    w = rng.uniform(0.2, 3.0, 90)
    w[::9] = 0.0
    Xs = X.copy()
    Xs[rng.random(Xs.shape) < 0.6] = 0.0
    groups = [[0, 1], [2], [3, 4, 5], [5, 6]]  # overlapping: feature 5 twice
    return {
        "standardised": (X, y, FeaturePool(), None, X.std(0), True),
        "weights": (X, y, FeaturePool(), w, X.std(0), True),
        "rms scaling per fold": (X, y, FeaturePool(), w, None, True),
        "no scaling, no intercept": (X, y, FeaturePool(feature_scaling=False), None, None,
                                     False),
        "sparse": (sp.csc_matrix(Xs), y, FeaturePool(), w, np.abs(Xs).max(0), True),
        "groups": (X, y, FeaturePool(groups=groups), None, X.std(0), True),
    }


@pytest.mark.parametrize("case", list(_fold_cases()))
def test_ridge_folds_equal_the_cutting_planes(case):
    """Held-out losses and fold models of the shortcut = FGM's own fits (d <= B)."""
    X, y, pool, w, scale, intercept = _fold_cases()[case]
    s = FGMSettings(B=10, max_iter=15, tol=1e-2, fit_intercept=intercept,
                    master_tol=1e-12)
    loss = get_loss("square")
    folds = _fgm_select._weighted_folds(X.shape[0], w)
    ridge = _fgm_select._ridge_folds(X, y, pool, loss, s, w, scale, folds)
    assert ridge is not None and all(isinstance(r, _fgm_select._RidgeFold) for r in ridge)
    Cs = [1e-3, 0.0316, 1.0, 10.0, 31.6]
    for run, (tr, val) in zip(ridge, folds):
        cold = _fgm_select._Fold(X, y, pool, loss, s, w, scale, tr, val)
        want = [cold.loss_at(C) for C in Cs]
        np.testing.assert_allclose(run.losses_at(Cs), want, rtol=1e-8)
        # the fold model itself: FGM's coefficients on the columns of X
        for C in (0.01, 10.0):
            fit = fit_fgm(X[tr], y[tr], copy.deepcopy(pool), weighted(loss, None if w is None
                                                                      else w[tr]),
                          replace(s, C=C), sample_weight=None if w is None else w[tr],
                          column_scale=scale)
            W, b = run.path.at([C])
            feats, weights = cold.pool.column_indices(np.arange(cold.pool.n_candidates))
            coef = np.zeros(X.shape[1])
            np.add.at(coef, feats, weights * W[:, 0])
            np.testing.assert_allclose(coef, fit.coef[0], rtol=1e-7, atol=1e-9)
            assert b[0] == pytest.approx(fit.intercept[0], rel=1e-7, abs=1e-9)
            assert fit.n_iter == 1  # FGM itself stopped after the one constraint


def test_ridge_path_meets_the_optimality_conditions():
    """Gradient of 1/2||w||^2 + C/2 sum s_i (a_i'w + b - y_i)^2 is zero at the path."""
    rng = np.random.default_rng(12)
    A = rng.standard_normal((50, 6)) * [1, 10, 0.1, 1, 3, 1] + 4.0
    A[:, 5] = A[:, 0] + 1e-3 * rng.standard_normal(50)  # near-collinear pair
    y = A[:, :3] @ [1.0, -0.2, 3.0] + rng.standard_normal(50)
    s = rng.uniform(0.0, 2.0, 50)
    for intercept in (True, False):
        path = _fgm_select._RidgePath(A, y, s, intercept)
        Cs = np.array([1e-3, 0.1, 1.0, 100.0])
        W, b = path.at(Cs)
        for k, C in enumerate(Cs):
            r = A @ W[:, k] + b[k] - y
            grad_w = W[:, k] + C * A.T @ (s * r)
            scale = C * np.abs(A.T @ (s * y)).max()
            assert np.abs(grad_w).max() <= 1e-10 * scale
            if intercept:
                assert abs(C * s @ r) <= 1e-10 * C * np.abs(s * y).sum()
            else:
                assert b[k] == 0.0
            assert np.abs(W[:, k]).max() > 1e-4  # a real solution, not zero


@pytest.mark.parametrize("kind", ["d > B", "budget", "groups > B", "family", "loss"])
def test_shortcut_is_not_taken_where_fgm_is_not_ridge(kind, monkeypatch):
    """More candidates than B, a budget, a family: FGM's own cutting planes."""
    from kernlearn.families import PolynomialPool

    X, y = _linear(np.random.default_rng(13), n=60, p=8, noise=0.3)
    pool, s, loss = FeaturePool(), FGMSettings(B=10), get_loss("square")
    if kind == "d > B":
        s = FGMSettings(B=5)
    elif kind == "budget":
        s = FGMSettings(B=10, max_features=3)
    elif kind == "groups > B":
        pool, s = FeaturePool(groups=[[j] for j in range(8)]), FGMSettings(B=7)
    elif kind == "family":
        pool = PolynomialPool()
    else:
        loss = get_loss("squared_hinge")
    folds = _fgm_select._weighted_folds(60, None)
    assert _fgm_select._ridge_folds(X, y, pool, loss, s, None, X.std(0), folds) is None

    def refuse(*a, **k):
        raise AssertionError("the ridge shortcut was used")

    monkeypatch.setattr(_fgm_select._RidgePath, "__init__", refuse)
    res = fit_fgm_auto_C(X, y, pool, loss, s, column_scale=X.std(0),
                         grid=(0.1, 1.0), refine=None)
    assert res.C in (0.1, 1.0)


def test_shortcut_is_taken_when_every_candidate_fits_one_constraint(monkeypatch):
    X, y = _linear(np.random.default_rng(14), n=60, p=8, noise=0.3)

    def refuse(*a, **k):
        raise AssertionError("a fold ran the cutting planes")

    monkeypatch.setattr(_fgm_select._Fold, "loss_at", refuse)
    m = FGMRegressor(B=8).fit(X, y)
    assert m.C_ in m.cv_results_["C"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auto_C_selects_the_same_with_and_without_the_shortcut(seed, monkeypatch):
    """Same C_, curve (1e-8) and final model as FGM's cutting planes on every fold."""
    rng = np.random.default_rng(20 + seed)
    X, y = _linear(rng, n=[40, 100, 300][seed], p=[4, 8, 10][seed], noise=[0.1, 1.0, 3.0][seed])
    w = rng.uniform(0.5, 2.0, len(y)) if seed == 1 else None
    fast = FGMRegressor().fit(X, y, sample_weight=w)
    _iterative(monkeypatch)
    slow = FGMRegressor().fit(X, y, sample_weight=w)
    assert fast.C_ == slow.C_
    np.testing.assert_array_equal(fast.cv_results_["C"], slow.cv_results_["C"])
    np.testing.assert_allclose(fast.cv_results_["loss"], slow.cv_results_["loss"], rtol=1e-8)
    np.testing.assert_array_equal(fast.coef_, slow.coef_)
    assert fast.intercept_ == slow.intercept_


def test_fold_rows_are_the_permuted_thirds():
    """cv_folds: RandomState(FOLD_SEED) permutation, every third row held out once."""
    for n in (7, 100, 2500, _fgm_select._REMEMBER_ROWS + 1):
        folds = _fgm_select.cv_folds(n)
        perm = np.random.RandomState(_fgm_select.FOLD_SEED).permutation(n)
        want = [np.sort(perm[i::3]) for i in range(3)][: 1 if n >= 2000 else 3]
        assert len(folds) == len(want)
        for (tr, val), v in zip(folds, want):
            np.testing.assert_array_equal(val, v)
            np.testing.assert_array_equal(tr, np.setdiff1d(np.arange(n), v))
    with pytest.raises(ValueError):  # the remembered permutation cannot be changed
        _fgm_select._permutation(100, 0)[0] = 5


@pytest.mark.parametrize("n, n_zero", [(2, 0), (6, 4)])
def test_too_few_weighted_rows_for_three_folds_is_refused(n, n_zero):
    X, y = _linear(np.random.default_rng(15), n=n, p=3)
    w = np.r_[np.ones(n - n_zero), np.zeros(n_zero)]
    with pytest.raises(ValueError, match="at least 3 rows of positive weight, got 2"):
        FGMRegressor().fit(X, y, sample_weight=w)
    assert FGMRegressor(C=1.0).fit(X, y, sample_weight=w).C_ == 1.0
