"""Random Fourier and Gabor families against naive implementations; bad input."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.signal import correlate2d

import kernlearn.families._infinite as infinite_mod
from kernlearn.families import FAMILIES, GaborFeatures, RandomFourierFeatures
from kernlearn.families.gabor import gabor_filter


# ------------------------------------------------------------------ Fourier
def test_fourier_columns_are_cos_sin_pairs(rng, container):
    X = rng.normal(size=(30, 4))
    fam = RandomFourierFeatures(bandwidth=0.7).fit(container(X))
    params = fam.sample(5, rng)
    assert params.shape == (5, 5)
    Z = fam.columns(params, container(X))
    for j, row in enumerate(params):
        proj = X @ row[:4]
        np.testing.assert_allclose(Z[:, 2 * j], np.cos(proj), atol=1e-12)
        np.testing.assert_allclose(Z[:, 2 * j + 1], np.sin(proj), atol=1e-12)
    np.testing.assert_allclose(fam.transform(container(X), params), Z)


def test_fourier_features_approximate_the_gaussian_kernel(rng):
    # E_v[z_v(x)' z_v(x')] = exp(-||x - x'||^2 / (2 sigma^2))  (Rahimi & Recht)
    X = rng.normal(size=(6, 3))
    sigma = 1.3
    fam = RandomFourierFeatures(bandwidth=sigma).fit(X)
    Z = fam.columns(fam.sample(40000, rng), X)
    K_hat = Z @ Z.T / 40000
    d2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.testing.assert_allclose(K_hat, np.exp(-d2 / (2 * sigma**2)), atol=0.02)


def test_grfl_m_bandwidth_list_and_range(rng):
    X = rng.normal(size=(10, 3))
    fam = RandomFourierFeatures(bandwidth=[0.5, 2.0, 8.0]).fit(X)
    P = fam.sample(300, rng)
    widths, counts = np.unique(P[:, -1], return_counts=True)
    np.testing.assert_array_equal(widths, [0.5, 2.0, 8.0])
    np.testing.assert_array_equal(counts, [100, 100, 100])
    for w in widths:  # v ~ N(0, I / sigma^2)
        v = P[P[:, -1] == w, :-1]
        assert np.std(v) * w == pytest.approx(1.0, abs=0.15)
    fam = RandomFourierFeatures(bandwidth_range=(5, 100)).fit(X)
    s = fam.sample(500, rng)[:, -1]
    assert s.min() >= 5 and s.max() <= 100 and np.ptp(s) > 50


def test_correlations_match_naive_and_chunking(rng, monkeypatch):
    X = rng.normal(size=(50, 3))
    G = rng.normal(size=(50, 2))
    fam = RandomFourierFeatures(bandwidth=1.0).fit(X)
    params = fam.sample(7, rng)
    Z = fam.columns(params, X)
    norms = np.linalg.norm(Z, axis=0)
    want = ((Z / norms).T @ G).reshape(7, 2, 2)
    monkeypatch.setattr(infinite_mod, "_CHUNK_ENTRIES", 250)  # 2 candidates per chunk
    H, nrm = fam.correlations(params, X, G)
    np.testing.assert_allclose(H, want, atol=1e-12)
    np.testing.assert_allclose(nrm, norms.reshape(7, 2))


def test_price_returns_the_most_violating_sample(rng):
    X = rng.normal(size=(40, 2))
    g = rng.normal(size=40)
    fam = RandomFourierFeatures(bandwidth=1.0).fit(X)
    cand = fam.price(g, k=3, rng=np.random.default_rng(5), X=X, n_sample=50)
    params = fam.sample(50, np.random.default_rng(5))  # the same sample
    H, _ = fam.correlations(params, X, g)
    scores = np.sqrt((H**2).sum(axis=(1, 2)))
    np.testing.assert_allclose(cand.scores, np.sort(scores)[::-1][:3])
    np.testing.assert_allclose(cand.params[0], params[np.argmax(scores)])
    assert cand.group_size == 2 and len(cand) == 3


def test_fourier_accepts_sparse_input(rng):
    X = sp.random(30, 8, density=0.3, random_state=0, format="csr")
    fam = RandomFourierFeatures(bandwidth=1.0).fit(X)
    P = fam.sample(4, rng)
    np.testing.assert_allclose(fam.columns(P, X), fam.columns(P, X.toarray()))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(bandwidth=[]), "empty"),
        (dict(bandwidth=-1.0), "'bandwidth' parameter of RandomFourierFeatures"),
        (dict(bandwidth=[1.0, 0.0]), "> 0"),
        (dict(bandwidth=[1.0, np.nan]), "finite"),
        (dict(bandwidth=np.nan), "'bandwidth' parameter of RandomFourierFeatures"),
        (dict(bandwidth_range=(3.0, 1.0)), "low <= high"),
        (dict(bandwidth_range=(-1.0, 1.0)), "0 < low"),
        (dict(bandwidth_range=(1.0,)), "pair"),
    ],
)
def test_fourier_bad_bandwidths(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RandomFourierFeatures(**kwargs).fit(np.ones((3, 2)))


def test_fourier_bad_inputs(rng):
    X = rng.normal(size=(5, 3))
    X[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RandomFourierFeatures().fit(X)
    fam = RandomFourierFeatures().fit(np.ones((4, 3)))
    with pytest.raises(ValueError, match="3"):
        fam.columns(fam.sample(2, rng), np.ones((4, 5)))
    with pytest.raises(ValueError, match="fitted"):
        RandomFourierFeatures().sample(3)
    with pytest.raises(TypeError, match="bandwidth"):
        RandomFourierFeatures(bandwidth="wide").fit(np.ones((3, 2)))


# -------------------------------------------------------------------- Gabor
def test_gabor_filter_formula():
    F = gabor_filter(2.0, 1.0, 0.25, np.pi / 6, 5)
    y, z = 1, -2  # row offset +1, column offset -2 from the centre (2, 2)
    z0 = z * np.cos(np.pi / 6) + y * np.sin(np.pi / 6)
    y0 = -z * np.sin(np.pi / 6) + y * np.cos(np.pi / 6)
    want = np.exp(-z0**2 / 8 - y0**2 / 2) * np.cos(2 * np.pi * 0.25 * z0)
    assert F[2 + y, 2 + z] == pytest.approx(want)
    assert F[2, 2] == pytest.approx(1.0)


def test_gabor_features_sum_abs_responses_over_positions(rng):
    h, w, fs, stride = 10, 12, 5, 2
    imgs = rng.random((4, h, w))
    fam = GaborFeatures(image_shape=(h, w), filter_size=fs, stride=stride).fit(
        imgs.reshape(4, -1))
    params = fam.sample(3, rng)
    Z = fam.columns(params, imgs.reshape(4, -1))
    for j, prm in enumerate(params):
        F = gabor_filter(*prm, fs)
        for i in range(4):
            resp = correlate2d(imgs[i], F, mode="valid")[::stride, ::stride]
            assert Z[i, j] == pytest.approx(np.abs(resp).sum())
    # 3-D input (n, h, w) gives the same features
    np.testing.assert_allclose(fam.columns(params, imgs), Z)


def test_gabor_grid_is_the_81_filter_bank_and_samples_in_ranges(rng):
    fam = GaborFeatures(image_shape=(16, 16), sigma_range=(1, 3), freq_range=(0.1, 0.3))
    bank = fam.grid(3)
    assert bank.shape == (81, 4)
    assert len(np.unique(bank, axis=0)) == 81
    P = fam.fit(np.zeros((2, 256))).sample(200, rng)
    assert np.all((P[:, :2] >= 1) & (P[:, :2] <= 3))
    assert np.all((P[:, 2] >= 0.1) & (P[:, 2] <= 0.3))
    assert np.all((P[:, 3] >= 0) & (P[:, 3] <= np.pi))
    assert FAMILIES.resolve("gabor").__class__ is GaborFeatures


@pytest.mark.parametrize(
    "kwargs, X, match",
    [
        (dict(image_shape=(16, 16)), np.zeros((3, 250)), "image_shape"),
        (dict(image_shape=(4, 4), filter_size=7), np.zeros((3, 16)), "filter_size"),
        (dict(image_shape=(4,)), np.zeros((3, 16)), "pair"),
        (dict(image_shape=(4, 4), filter_size=3, sigma_range=(2, 1)), np.zeros((3, 16)),
         "sigma_range"),
        (dict(image_shape=(4, 4), filter_size=3, stride=0), np.zeros((3, 16)), "stride"),
    ],
)
def test_gabor_bad_inputs(kwargs, X, match):
    with pytest.raises(ValueError, match=match):
        GaborFeatures(**kwargs).fit(X)


def test_gabor_nan_and_wrong_shape_at_transform(rng):
    fam = GaborFeatures(image_shape=(6, 6), filter_size=3).fit(rng.random((3, 36)))
    X = rng.random((3, 36))
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fam.columns(fam.sample(2, rng), X)
    with pytest.raises(ValueError, match="image_shape"):
        fam.columns(fam.sample(2, rng), rng.random((3, 5, 5)))


def test_float32_ranking_columns_are_close_to_the_exact_ones():
    # pricing ranks candidates with float32 cos/sin and then scores the best
    # few in float64: the low-precision correlations must be that close
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5)) * 3
    G = rng.normal(size=(3000, 2))
    fam = RandomFourierFeatures(gamma=0.5).fit(X)
    params = fam.sample(40, np.random.default_rng(1))
    H, norms = fam.correlations(params, X, G)
    H32, norms32 = fam.correlations(params, X, G, low_precision=True)
    assert H32.dtype == np.float64 and fam.float32_columns
    np.testing.assert_allclose(norms32, norms, rtol=1e-5)
    np.testing.assert_allclose(H32, H, rtol=1e-3, atol=1e-4 * np.abs(H).max())
    assert not np.array_equal(H32, H)  # the float32 path did run
