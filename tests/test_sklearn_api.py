"""scikit-learn citizenship (issue 14): selectors, set_output, splitting, conventions."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import Bunch
from sklearn.utils import estimator_checks as ec

from kernlearn import (
    FGMClassifier,
    FGMRegressor,
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
)
from kernlearn.families import PolynomialPool

pd = pytest.importorskip("pandas")


def _cancer():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return X, y


# ----------------------------------------------------------------- selectors
def test_fgm_is_a_selector_in_input_order():
    X, y = _cancer()
    clf = FGMClassifier(B=3).fit(X, y)
    sel = clf.selected_features_
    # inclusion order differs from input order on this set: transform follows the input
    assert not np.all(np.diff(sel) > 0)
    idx = clf.get_support(indices=True)
    np.testing.assert_array_equal(idx, np.sort(sel))
    mask = clf.get_support()
    assert mask.dtype == bool and mask.sum() == sel.size and mask.shape == (X.shape[1],)
    Z = clf.transform(X)
    np.testing.assert_array_equal(Z, X.to_numpy()[:, idx])
    np.testing.assert_array_equal(clf.get_feature_names_out(), X.columns[idx])
    back = clf.inverse_transform(Z)
    np.testing.assert_array_equal(back[:, idx], Z)
    assert np.all(back[:, ~mask] == 0)


def test_fgm_set_output_pandas_and_pipeline_names():
    X, y = _cancer()
    pipe = make_pipeline(StandardScaler(), FGMClassifier(B=3)).set_output(transform="pandas")
    pipe.fit(X, y)
    Z = pipe[:-1].transform(X)
    out = pipe[-1].transform(Z)
    assert isinstance(out, pd.DataFrame)
    names = pipe.get_feature_names_out()
    assert list(out.columns) == list(names)
    assert set(names) <= set(X.columns) and len(names) == pipe[-1].selected_features_.size


def test_fgm_family_feature_names_name_generated_features():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 6))
    y = np.sign(X[:, 1] * X[:, 4] + 0.1 * rng.standard_normal(300))
    Xdf = pd.DataFrame(X, columns=list("abcdef"))
    clf = FGMClassifier(B=2, family=PolynomialPool()).fit(Xdf, y)
    names = clf.get_feature_names_out()
    assert "b*e" in names
    clf.set_output(transform="pandas")
    Z = clf.transform(Xdf)
    assert list(Z.columns) == list(names)
    np.testing.assert_allclose(Z["b*e"], X[:, 1] * X[:, 4])
    with pytest.raises(ValueError, match="generated features"):
        clf.get_support()


@pytest.mark.parametrize("est", [
    FGMClassifier(B=2, max_iter=3),
    FGMRegressor(B=2, max_iter=3),
    FGMRegressor(B=2, max_iter=3, family=PolynomialPool()),
    InfiniteFeatureClassifier(max_features=5, n_candidates=10, random_state=0),
    InfiniteFeatureRegressor(max_features=5, n_candidates=10, random_state=0),
], ids=lambda e: type(e).__name__ + ("+family" if getattr(e, "family", None) else ""))
def test_sklearn_set_output_checks(est):
    """scikit-learn's own pandas-output and feature-name checks."""
    name = type(est).__name__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ec.check_set_output_transform(name, est)
        ec.check_set_output_transform_pandas(name, est)
        ec.check_global_output_transform_pandas(name, est)
        ec.check_transformer_get_feature_names_out(name, est)
        ec.check_transformer_get_feature_names_out_pandas(name, est)


def test_learned_features_pandas_names():
    X, y = load_iris(return_X_y=True)
    clf = InfiniteFeatureClassifier(max_features=4, random_state=0).fit(X, y)
    clf.set_output(transform="pandas")
    Z = clf.transform(X)
    assert isinstance(Z, pd.DataFrame) and Z.shape[1] == clf.feature_scales_.size
    assert Z.columns[0] == "infinitefeatureclassifier0"


# ---------------------------------------------------------- n_columns clamp
@pytest.mark.parametrize("cls", [LowRankKernelRegressor, LowRankKernelClassifier])
def test_lowrank_clamps_n_columns_with_a_warning(cls):
    X, y = load_iris(return_X_y=True)
    X, y = X[::5], y[::5]  # 30 samples
    with pytest.warns(UserWarning, match="n_columns=64 > n_samples=30"):
        est = cls(n_columns=64, random_state=0).fit(X, y)
    assert est.column_indices_.size == 30
    ref = cls(n_columns=30, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.predict(X), ref.predict(X))


# ------------------------------------------------------------------ datasets
def test_load_dataset_returns_bunches():
    from conftest import real_data
    from kernlearn.datasets import _LOADERS, available_datasets

    names = available_datasets()
    if not names:
        real_data("wine")  # skips with the reason
    for name in names:
        if name in ("a9a", "ijcnn1", "usps", "brodatz"):  # slow or image sets: below
            continue
        b = real_data(name)
        assert isinstance(b, Bunch) and name in b.DESCR
        assert b.data.shape[0] == b.target.shape[0] > 0
    for name in set(names) & {"a9a", "ijcnn1", "usps"}:
        assert "data_test" in _LOADERS[name][1]


# ------------------------------------------------------- precomputed kernels
def _iris_grams():
    from kernlearn.kernels import pairwise_kernel

    X, y = load_iris(return_X_y=True)
    return [pairwise_kernel(X, X, "linear"), pairwise_kernel(X, X, "rbf", gamma=0.5)], y


def test_precomputed_kernels_index_samples_first():
    from kernlearn import PrecomputedKernels

    grams, _ = _iris_grams()
    K = PrecomputedKernels(grams)
    assert K.shape == (150, 150, 2) and len(K) == 150
    rows, cols = np.array([3, 0, 7]), np.arange(10, 20)
    sub = K[np.ix_(rows, cols)]
    assert sub.shape == (3, 10, 2)
    for j in range(2):
        np.testing.assert_array_equal(sub.kernels_first()[j], grams[j][np.ix_(rows, cols)])
    np.testing.assert_array_equal(K[rows].kernels_first()[1], grams[1][rows])
    np.testing.assert_array_equal(np.asarray(K[rows, ...])[..., 0], grams[0][rows])
    mask = np.zeros(150, bool)
    mask[::3] = True
    assert K[mask][:, mask].shape == (50, 50, 2)
    with pytest.raises(IndexError, match="grid"):
        K[rows, rows]
    with pytest.raises(IndexError, match="index arrays"):
        K[0]
    with pytest.raises(ValueError, match="NaN"):
        PrecomputedKernels([np.full((3, 3), np.nan)])


def test_precomputed_kernels_cross_validation_matches_manual_splits():
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from kernlearn import PNormMKLClassifier, PrecomputedKernels

    grams, y = _iris_grams()
    est = PNormMKLClassifier(kernels="precomputed", random_state=0)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(est, PrecomputedKernels(grams), y, cv=cv)
    manual = []
    for tr, te in cv.split(grams[0], y):
        fit = PNormMKLClassifier(kernels="precomputed", random_state=0).fit(
            [G[np.ix_(tr, tr)] for G in grams], y[tr])
        manual.append(fit.score([G[np.ix_(te, tr)] for G in grams], y[te]))
    np.testing.assert_allclose(scores, manual)
    assert scores.mean() > 0.8


def test_precomputed_kernels_grid_search_and_one_vs_rest():
    from sklearn.model_selection import GridSearchCV
    from sklearn.multiclass import OneVsRestClassifier

    from kernlearn import MultitaskMKLClassifier, PNormMKLClassifier, PrecomputedKernels

    grams, y = _iris_grams()
    K = PrecomputedKernels(grams)
    gs = GridSearchCV(PNormMKLClassifier(kernels="precomputed", random_state=0),
                      {"C": [1.0, 10.0]}, cv=3).fit(K, y)
    assert gs.best_score_ > 0.9
    tr, te = np.arange(0, 150, 2), np.arange(1, 150, 2)
    ovr = OneVsRestClassifier(MultitaskMKLClassifier(kernels="precomputed"))
    ovr.fit(K[np.ix_(tr, tr)], y[tr])
    pred = ovr.predict(K[np.ix_(te, tr)])
    assert pred.shape == (75,) and np.mean(pred == y[te]) > 0.85
    # the plain list / kernels-first array keeps working and agrees
    direct = PNormMKLClassifier(kernels="precomputed", random_state=0)
    a = direct.fit([G[np.ix_(tr, tr)] for G in grams], y[tr]).decision_function(
        np.stack([G[np.ix_(te, tr)] for G in grams]))
    b = direct.fit(K[np.ix_(tr, tr)], y[tr]).decision_function(K[np.ix_(te, tr)])
    np.testing.assert_allclose(a, b)


# ------------------------------------------------------ one width convention
def test_convert_width_is_the_gaussian_identity():
    from kernlearn.kernels import convert_width

    sigma, gamma = 1.7, convert_width(sigma=1.7)
    d2 = np.array([0.3, 2.0])
    np.testing.assert_allclose(np.exp(-gamma * d2), np.exp(-d2 / (2 * sigma**2)))
    assert convert_width(gamma=gamma) == pytest.approx(sigma)
    with pytest.raises(ValueError, match="exactly one"):
        convert_width()


def test_fourier_features_take_gamma_scale_and_sigma_alike():
    from kernlearn.families import RandomFourierFeatures
    from kernlearn.kernels import convert_width, scale_gamma

    X = 50.0 * np.random.default_rng(0).standard_normal((40, 3))
    g = scale_gamma(X)
    by_scale = RandomFourierFeatures().fit(X)
    by_gamma = RandomFourierFeatures(gamma=g).fit(X)
    by_sigma = RandomFourierFeatures(bandwidth=convert_width(gamma=g)).fit(X)
    P = [f.sample(20, np.random.default_rng(1)) for f in (by_scale, by_gamma, by_sigma)]
    np.testing.assert_allclose(P[0], P[1])
    np.testing.assert_allclose(P[0], P[2])
    # the sampled frequencies have variance 2 gamma (Fourier transform of exp(-gamma d^2))
    V = RandomFourierFeatures(gamma=0.02).fit(X).sample(20000, np.random.default_rng(2))
    assert np.var(V[:, :-1]) == pytest.approx(0.04, rel=0.05)
    with pytest.raises(TypeError, match="'scale'"):
        RandomFourierFeatures(gamma="mean").fit(X)


def test_kernel_specs_accept_gamma_scale():
    from kernlearn import MultitaskMKLRegressor, PNormMKLClassifier
    from kernlearn.kernels import KernelList, scale_gamma

    X, y = load_iris(return_X_y=True)
    kl = KernelList([("rbf", {"gamma": "scale"}), ("rbf", {"gamma": "scale"}, [0, 1])]).fit(X)
    assert kl.params_[0]["gamma"] == pytest.approx(scale_gamma(X))
    assert kl.params_[1]["gamma"] == pytest.approx(scale_gamma(X[:, :2]))
    clf = PNormMKLClassifier(kernels=[("rbf", {"gamma": "scale"}), "linear"], random_state=0)
    assert clf.fit(X, y).score(X, y) > 0.9
    reg = MultitaskMKLRegressor(kernels=[("rbf", {"gamma": "scale"}), "linear"])
    assert reg.fit(X[:, 1:], X[:, 0]).score(X[:, 1:], X[:, 0]) > 0.8
    with pytest.raises(ValueError, match="'scale'"):
        KernelList([("rbf", {"gamma": "wide"})]).fit(X)


def test_lowrank_gamma_scale_is_the_default_and_sklearns():
    from kernlearn.kernels import scale_gamma

    X, y = load_iris(return_X_y=True)
    X = X * 100.0  # unscaled inputs
    # gamma="scale" is computed on the data the kernel sees: the raw inputs
    # without standardisation, the standardised ones by default
    a = LowRankKernelClassifier(random_state=0, standardize=False).fit(X, y)
    from kernlearn.methods.slkl import AUTO_GAMMA_FACTORS

    # (the default width's "auto" factors, which a given gamma does not get)
    b = LowRankKernelClassifier(gamma=scale_gamma(X), random_state=0, standardize=False,
                                gamma_factors=AUTO_GAMMA_FACTORS).fit(X, y)
    assert a.gamma == "scale" and a.kernel_params_["gamma"] == pytest.approx(scale_gamma(X))
    c = LowRankKernelClassifier(random_state=0).fit(X, y)
    Xs = (X - X.mean(0)) / X.std(0)
    assert c.kernel_params_["gamma"] == pytest.approx(scale_gamma(Xs))
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X))
    assert a.score(X, y) > 0.9
