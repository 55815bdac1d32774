"""SLKL's fit pipeline: standardised inputs and targets, result object, bad input."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils import check_random_state

from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor
from kernlearn.kernels import pairwise_kernel, scale_gamma
from kernlearn.methods.slkl import CODES_NU_GRID, SLKLResult, fit_slkl


def _data(n=150, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    labels = np.digitize(X[:, 0] + X[:, 2], [-0.7, 0.0, 0.7])
    return X, y, labels


def _affine(X, seed=1):
    rng = np.random.default_rng(seed)
    a = 10.0 ** rng.uniform(-3, 4, X.shape[1])  # positive, spread over 7 decades
    b = rng.uniform(-1e3, 1e3, X.shape[1])
    return a, b


@pytest.mark.parametrize("kind", ["regressor", "multi-output", "classifier"])
def test_same_predictions_on_affine_maps_of_dense_input(kind):
    X, y, labels = _data()
    a, b = _affine(X)
    Xt = np.random.default_rng(2).normal(size=(40, X.shape[1]))
    if kind == "classifier":
        make, target = LowRankKernelClassifier, labels
    else:
        make = LowRankKernelRegressor
        target = y if kind == "regressor" else np.column_stack([y, 1e4 * X[:, 3]])
    est = make(n_columns=60, random_state=0)
    f = (est.decision_function if kind == "classifier" else est.predict)
    ref = (est.fit(X, target), f(Xt))[1]
    other = make(n_columns=60, random_state=0).fit(a * X + b, target)
    g = (other.decision_function if kind == "classifier" else other.predict)(a * Xt + b)
    # (the SLKL solver stops at tol: rounding in the mapped inputs moves the
    # stopping point by ~1e-7 of the outputs on some BLAS builds)
    np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())
    # without standardisation the map does change the model (the test can fail)
    raw = make(n_columns=60, random_state=0, standardize=False).fit(a * X + b, target)
    h = (raw.decision_function if kind == "classifier" else raw.predict)(a * Xt + b)
    assert not np.allclose(h, ref, rtol=1e-3)


@pytest.mark.parametrize("make", [LowRankKernelRegressor, LowRankKernelClassifier])
def test_same_predictions_on_column_scaling_of_sparse_input(make):
    X = sp.random(160, 30, density=0.2, random_state=3, format="csr")
    Xt = sp.random(30, 30, density=0.2, random_state=4, format="csr")
    a = 10.0 ** np.random.default_rng(5).uniform(-3, 4, 30)
    y = np.asarray(X[:, :5].sum(axis=1)).ravel()
    target = y if make is LowRankKernelRegressor else (y > np.median(y)).astype(int)
    f = "predict" if make is LowRankKernelRegressor else "decision_function"
    ref = getattr(make(n_columns=50, random_state=0).fit(X, target), f)(Xt)
    scaled = make(n_columns=50, random_state=0).fit(X @ sp.diags(a), target)
    got = getattr(scaled, f)(Xt @ sp.diags(a))
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-9 * np.abs(ref).max())
    assert sp.issparse(scaled.centers_) and scaled.x_mean_ is None


def test_sparse_input_is_never_densified():
    # 300 x 2,000,000: dense it would take 4.8 GB
    n, d = 300, 2_000_000
    rng = np.random.default_rng(0)
    cols = rng.integers(0, d, size=(n, 20))
    indptr = np.arange(0, n * 20 + 1, 20)
    X = sp.csr_matrix((rng.uniform(1, 5, n * 20), cols.ravel(), indptr), shape=(n, d))
    X.sum_duplicates()
    y = np.asarray(X[:, cols[:, 0]].sum(axis=1)).ravel()[:n] + rng.normal(size=n)
    tracemalloc.start()
    try:
        est = LowRankKernelRegressor(n_columns=50, max_iter=5, random_state=0).fit(X, y)
        est.predict(X[:50])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert est.x_scale_.shape == (d,)
    assert peak < 250e6, f"peak {peak / 1e6:.0f} MB"


def _manual(X, Y, sw=None):
    """Standardise by hand (weighted population moments)."""
    w = np.ones(len(X)) if sw is None else sw
    mx = w @ X / w.sum()
    sx = np.sqrt(w @ (X - mx) ** 2 / w.sum())
    my = w @ Y / w.sum()
    sy = np.sqrt(w @ (Y - my) ** 2 / w.sum())
    return (X - mx) / sx, (Y - my) / sy, mx, sx, my, sy


@pytest.mark.parametrize("weighted", [False, True])
def test_learned_quantities_equal_manual_scale_fit_unscale(weighted):
    X, y, _ = _data(seed=3)
    X = X * [1e-3, 1.0, 50.0, 1e4] + [5.0, -2.0, 1e3, 0.0]
    Y = np.column_stack([y, 100 * y + X[:, 1]])
    sw = np.random.default_rng(4).uniform(0, 3, len(X)) if weighted else None
    Xs, Ys, mx, sx, my, sy = _manual(X, Y, sw)
    kw = dict(n_columns=50, nu=0.02, random_state=7)
    est = LowRankKernelRegressor(**kw).fit(X, Y, sample_weight=sw)
    ref = LowRankKernelRegressor(standardize=False, **kw).fit(Xs, Ys, sample_weight=sw)
    np.testing.assert_allclose(est.x_mean_, mx, rtol=1e-10)
    np.testing.assert_allclose(est.x_scale_, sx, rtol=1e-10)
    np.testing.assert_allclose(est.mu_, ref.mu_, rtol=1e-7, atol=1e-10)
    np.testing.assert_array_equal(est.center_indices_, ref.center_indices_)
    np.testing.assert_allclose(est.centers_, X[est.center_indices_])  # raw scale
    np.testing.assert_allclose(est.dual_coef_, ref.dual_coef_ * sy, rtol=1e-7,
                               atol=1e-10 * np.abs(est.dual_coef_).max())
    np.testing.assert_allclose(est.intercept_, ref.intercept_ * sy + my, rtol=1e-9)
    assert est.kernel_params_["gamma"] == pytest.approx(ref.kernel_params_["gamma"])
    # the documented prediction: k(T(x), T(centres)) @ dual_coef_ + intercept_,
    # centre m's kernel of width gamma * center_factors_[m]
    Xt = np.random.default_rng(5).normal(size=(20, 4)) * sx + mx
    assert set(est.center_factors_) == {1.0, 0.1}  # gamma_factors="auto": both widths used
    D = (((Xt - mx) / sx)[:, None, :] - ((est.centers_ - mx) / sx)[None]) ** 2
    K = np.exp(-D.sum(-1) * est.kernel_params_["gamma"] * est.center_factors_)
    np.testing.assert_allclose(est.predict(Xt), K @ est.dual_coef_ + est.intercept_,
                               rtol=1e-9)
    np.testing.assert_allclose(est.predict(Xt), ref.predict((Xt - mx) / sx) * sy + my,
                               rtol=1e-6, atol=1e-8 * np.abs(my).max())


def test_default_width_is_computed_on_standardised_data():
    X, y, _ = _data(d=5)
    X = X * [1e-4, 1.0, 1e2, 1e4, 1e6]
    est = LowRankKernelRegressor(n_columns=30, max_iter=3, random_state=0).fit(X, y)
    Xs = (X - X.mean(0)) / X.std(0)
    assert est.kernel_params_["gamma"] == pytest.approx(scale_gamma(Xs), rel=1e-10)
    assert est.kernel_params_["gamma"] == pytest.approx(1 / 5, rel=1e-10)


@pytest.mark.parametrize("make", [LowRankKernelRegressor, LowRankKernelClassifier])
def test_result_object_carries_everything_the_estimator_exposes(make):
    X, y, labels = _data(seed=6)
    target = y if make is LowRankKernelRegressor else labels
    est = make(n_columns=40, random_state=3).fit(X, target)
    seed = check_random_state(3).randint(np.iinfo(np.int32).max)
    # the estimator's own map, so both fits see the same numbers bit for bit
    Xs = (X - est.x_mean_) / est.x_scale_
    if make is LowRankKernelRegressor:
        ym, ys = est.y_mean_[0], est.y_scale_[0]
        res = fit_slkl(Xs, ((y - ym) / ys)[:, None], n_columns=40, nu="auto", seed=seed)
        scale, shift = ys, ym
    else:
        codes = np.where(labels[:, None] == est.classes_, 1.0, -1.0)
        # shared mu; the classifier's nu="auto" is the path CODES_NU_GRID
        res = fit_slkl(Xs, codes, n_columns=40, nu=CODES_NU_GRID, seed=seed)
        scale, shift = 1.0, 0.0
    assert isinstance(res, SLKLResult)
    with pytest.raises(AttributeError):  # frozen
        res.mu = None
    for name in ("mu", "nu", "m0", "n_iter", "objective", "column_indices",
                 "center_indices"):
        np.testing.assert_allclose(getattr(est, name + "_"), getattr(res, name),
                                   rtol=1e-8, atol=1e-12, err_msg=name)
    assert est.converged_ == res.converged and res.stop_reason
    assert est.kernel_params_ == pytest.approx(res.kernel_params)
    np.testing.assert_allclose(est.dual_coef_, res.dual_coef * scale, rtol=1e-8,
                               atol=1e-12)
    np.testing.assert_allclose(est.intercept_, res.intercept * scale + shift, rtol=1e-8,
                               atol=1e-12)
    np.testing.assert_allclose(est.history_["objective"], res.history["objective"],
                               rtol=1e-8)


def test_fit_intercept_false_scales_the_targets_without_centring():
    X, y, _ = _data(seed=8)
    y = y + 3.0
    est = LowRankKernelRegressor(fit_intercept=False, n_columns=40, random_state=0)
    est.fit(X, y)
    np.testing.assert_array_equal(est.intercept_, 0.0)
    assert est.y_mean_ == pytest.approx(0.0) and est.y_scale_ == pytest.approx(y.std())
    # the model has no bias: far from every centre it predicts 0, not the mean
    # (inputs not clipped to the training range, as in a model file without it)
    est.x_range_ = None
    far = np.full((1, X.shape[1]), 1e3)
    assert abs(est.predict(far)[0]) < 1e-12


# ---------------------------------------------------------- clear bad-input errors
def test_string_targets_on_the_regressor_get_a_clear_error():
    X, y, _ = _data(n=40)
    for bad in (np.array(["a", "b"] * 20), np.array(["a", "b"] * 20, dtype=object)):
        with pytest.raises(ValueError, match="numeric targets.*LowRankKernelClassifier"):
            LowRankKernelRegressor().fit(X, bad)
    # numbers written as strings are numbers
    est = LowRankKernelRegressor(n_columns=10, random_state=0).fit(X, y.astype(str))
    np.testing.assert_allclose(
        est.predict(X),
        LowRankKernelRegressor(n_columns=10, random_state=0).fit(X, y).predict(X),
        rtol=1e-12)


@pytest.mark.parametrize("standardize", [True, False])
def test_huge_inputs_get_an_error_that_names_the_cause(standardize):
    X, y, _ = _data(n=40)
    est = LowRankKernelRegressor(standardize=standardize)
    match = "too large to standardise" if standardize else "gamma='scale' cannot be computed.*overflows"
    with pytest.raises(ValueError, match=match) as info:
        est.fit(X * 1e300, y)
    assert "must be positive" not in str(info.value)
    # with a width given, the default width is not needed and not computed
    LowRankKernelRegressor(standardize=False, kernel="linear", n_columns=10,
                           max_iter=2).fit(X * 1e100, y)


def test_huge_targets_get_a_clear_error():
    X, y, _ = _data(n=40)
    with pytest.raises(ValueError, match="y is too large"):
        LowRankKernelRegressor().fit(X, y * 1e300)


@pytest.mark.parametrize("make", [LowRankKernelRegressor, LowRankKernelClassifier])
def test_precomputed_gram_is_used_as_given(make):
    X, y, labels = _data(n=80, seed=9)
    K = pairwise_kernel(X, X, "rbf", gamma=0.3)
    Kt = pairwise_kernel(X[:20] + 0.1, X, "rbf", gamma=0.3)
    target = y if make is LowRankKernelRegressor else labels
    f = "predict" if make is LowRankKernelRegressor else "decision_function"
    a = make(kernel="precomputed", n_columns=30, nu=0.01, random_state=0).fit(K, target)
    b = make(kernel="precomputed", n_columns=30, nu=0.01, random_state=0,
             standardize=False).fit(K, target)
    assert a.x_mean_ is None and a.x_scale_ is None
    np.testing.assert_allclose(getattr(a, f)(Kt), getattr(b, f)(Kt), rtol=1e-8,
                               atol=1e-10)
