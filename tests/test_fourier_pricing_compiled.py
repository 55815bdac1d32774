"""Fourier pricing's compiled sums against the NumPy path they replace.

On a dense ``X`` with few gradient columns, :class:`RandomFourierFeatures`
forms the correlations and squared norms of the candidates' cos/sin columns
in one compiled pass (``_cos_sin_sums``), exactly (float64), instead of the
float32 block, its product with ``G`` and an exact re-score of the best few.
These tests hold the two paths to the same numbers and GrFL to the same choices.
"""

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils import check_random_state

from kernlearn.families import GaborFeatures, RandomFourierFeatures, fourier
from kernlearn.families._infinite import InfiniteFamily
from kernlearn.losses import Square
from kernlearn.methods.grfl import GrFL
from kernlearn.penalties import GroupL1L2
from kernlearn.solvers.grfl_newton import GrFLNewton


@pytest.mark.parametrize("n", [1, 3, 4, 7, 50])  # the row blocks of four and their tail
@pytest.mark.parametrize("T", [1, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_cos_sin_sums_are_the_columns_products_and_norms(n, T, weighted):
    rng = np.random.default_rng(n + 10 * T)
    P = rng.normal(size=(n, 9)) * 4
    P[0, 0] = 3e6  # beyond the polynomial's range: the C library's cos/sin
    G = rng.normal(size=(n, T))
    w = rng.uniform(0.2, 2.0, size=n) if weighted else np.empty(0)
    HG, sq = np.full((9, 2, T), np.nan), np.full((9, 2), np.nan)
    fourier._cos_sin_sums(P, G, w, HG, sq)
    out, sq_ref = np.empty((n, 18)), np.zeros(18)
    fourier._cos_sin(P, out, w, sq_ref)
    # the same cos/sin, the norms summed in the same order: equal
    np.testing.assert_array_equal(sq.ravel(), sq_ref)
    np.testing.assert_allclose(HG.reshape(18, T), out.T @ G, rtol=1e-12, atol=1e-13 * n)
    # and the mathematics: cos/sin of the phases
    np.testing.assert_allclose(HG[:, 0, :], np.cos(P).T @ G, rtol=1e-12, atol=1e-12 * n)
    np.testing.assert_allclose(HG[:, 1, :], np.sin(P).T @ G, rtol=1e-12, atol=1e-12 * n)
    ww = w if weighted else np.ones(n)
    np.testing.assert_allclose(sq[:, 0] + sq[:, 1], ww.sum(), rtol=1e-13)


@pytest.mark.parametrize("T", [1, 2, fourier._FUSED_MAX_TASKS])
def test_dense_correlations_take_the_compiled_path_and_match_the_numpy_one(T, monkeypatch):
    rng = np.random.default_rng(T)
    X = rng.normal(size=(203, 6))
    G = rng.normal(size=(203, T))
    w = rng.uniform(0.5, 2.0, size=203)
    fam = RandomFourierFeatures(gamma=[0.1, 0.5]).fit(X)
    params = fam.sample(37, np.random.default_rng(1))
    calls = []
    compiled = fourier._cos_sin_sums
    monkeypatch.setattr(fourier, "_cos_sin_sums",
                        lambda *a: calls.append(a[0].shape) or compiled(*a))
    for weights in (None, w):
        HG, sq = fam.correlation_sums(params, X, G, weights)
        assert calls and calls[-1] == (203, 37)
        # the NumPy path: the float64 block of columns and its product
        HG_np, sq_np = InfiniteFamily._chunk_sums(fam, params, X, G, False, weights)
        np.testing.assert_allclose(HG, HG_np, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(sq, sq_np)
        # the normalised correlations, as pricing reads them; sparse X: NumPy path
        H, norms = fam.correlations(params, X, G, weights)
        n_calls = len(calls)
        H_sp, norms_sp = fam.correlations(params, sp.csr_matrix(X), G, weights)
        assert len(calls) == n_calls
        np.testing.assert_allclose(H, H_sp, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(norms, norms_sp, rtol=1e-13)
    # float32 ranking asked for: the float32 columns, not the compiled sums
    n_calls = len(calls)
    H32, _ = fam.correlations(params, X, G, low_precision=True)
    assert len(calls) == n_calls and not np.array_equal(H32, fam.correlations(params, X, G)[0])


def test_float32_ranking_only_where_the_compiled_sums_do_not_apply():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    fam = RandomFourierFeatures().fit(X)
    assert not fam.ranks_in_float32(X, 1)
    assert not fam.ranks_in_float32(X, fourier._FUSED_MAX_TASKS)
    assert fam.ranks_in_float32(X, fourier._FUSED_MAX_TASKS + 1)  # many tasks
    assert fam.ranks_in_float32(sp.csr_matrix(X), 1)  # sparse input
    # other families: their float32_columns, as before
    gabor = GaborFeatures(image_shape=(2, 2), filter_size=1).fit(X)
    assert gabor.ranks_in_float32(X, 1) is gabor.float32_columns


def _path(n=300, subsample=None, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    Y = (np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2])[:, None]
    fam = RandomFourierFeatures(gamma=[0.2, 0.5, 1.0]).fit(X)
    path = GrFL(fam, Square(), GroupL1L2(alpha=0.05), None, GrFLNewton(tol=1e-8),
                n_candidates=100, eps=1e-3, batch="auto", pricing_subsample=subsample)
    return path.start(X, Y, None, check_random_state(seed))


@pytest.mark.parametrize("subsample", [None, 120])
def test_exact_ranking_chooses_what_float32_ranking_and_re_scoring_choose(subsample):
    # from the same generator state, the compiled exact ranking and the float32
    # ranking with the exact re-score of its best few pick the same features
    # with the same (exact) violations, at every step of a path
    path = _path(subsample=subsample)
    path._budget = 30
    path._reserve(30)
    steps = 0
    while path.p // 2 < 24:
        n_best = path.batch_size(30 - path.p // 2)
        ref = copy.deepcopy(path)
        ref.family.ranks_in_float32 = lambda X, n_tasks: True  # the float32 path
        a, b = path._best_candidate(n_best), ref._best_candidate(n_best)
        np.testing.assert_array_equal(a.params, b.params)
        np.testing.assert_allclose(a.scores, b.scores, rtol=1e-12)
        np.testing.assert_allclose(a.extra["norms"], b.extra["norms"], rtol=1e-13)
        np.testing.assert_allclose(a.extra["H"], b.extra["H"], rtol=1e-11, atol=1e-13)
        # the rng consumed identically: the next draws agree
        assert path.rng.randint(2**31) == ref.rng.randint(2**31)
        path.master(a)
        steps += 1
    assert steps >= 5


@pytest.mark.parametrize("kwargs", [{"gamma": 0.3}, {"gamma": [0.1, 0.4, 2.0]},
                                    {"bandwidth_range": (0.5, 3.0)}])
def test_sample_draws_as_before(kwargs):
    # the directions as NumPy drew them: rng.standard_normal((k, d)) / sigma
    X = np.random.default_rng(0).normal(size=(20, 7))
    fam = RandomFourierFeatures(**kwargs).fit(X)
    params = fam.sample(50, np.random.default_rng(np.random.RandomState(1)))
    rng = np.random.default_rng(np.random.RandomState(1))
    if "bandwidth_range" in kwargs:
        sigma = rng.uniform(0.5, 3.0, size=50)
    else:
        sigma = fam.widths_[np.arange(50) % fam.widths_.size]
    np.testing.assert_array_equal(params[:, -1], sigma)
    np.testing.assert_array_equal(params[:, :-1], rng.standard_normal((50, 7)) / sigma[:, None])
