"""FGM with degree-2 polynomial and additive-kernel expansions, never materialised."""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import FGMClassifier
from kernlearn.families import AdditiveKernelExpansion, PolynomialPool
from kernlearn.kernels import additive_chi2_kernel, hik_kernel


def _materialised_poly(X):
    m = X.shape[1]
    cols, ids = [], []
    for j in range(m):
        for k in range(j, m):
            cols.append(X[:, j] * X[:, k])
            ids.append(j * m + k)
    cols += [X[:, j] for j in range(m)]
    ids += [m * m + j for j in range(m)]
    return np.column_stack(cols), np.array(ids)


@pytest.mark.parametrize("sparse", [False, True])
def test_polynomial_pricing_equals_brute_force(rng, sparse):
    X = rng.standard_normal((60, 9))
    X[np.abs(X) < 0.5] = 0
    u = rng.standard_normal(60)
    Phi, ids = _materialised_poly(X)
    norms = np.linalg.norm(Phi, axis=0)
    # unit root-mean-square columns: sqrt(n) / ||column||
    scores = np.abs(Phi.T @ u) * np.sqrt(len(u)) / np.where(norms > 0, norms, np.inf)
    expected = ids[np.argsort(-scores)[:6]]
    pool = PolynomialPool(block_size=4)
    Xin = sp.csc_matrix(X) if sparse else X
    cand = pool.fit(Xin).price(-u, 6, X=Xin)
    np.testing.assert_array_equal(np.sort(cand.params), np.sort(expected))
    np.testing.assert_allclose(np.sort(cand.scores), np.sort(scores)[-6:])
    cols = pool.columns(cand, Xin)
    cols = cols.toarray() if sp.issparse(cols) else cols
    np.testing.assert_allclose(np.abs(cols.T @ u), cand.scores, rtol=1e-10)


def test_fgm_finds_an_interaction(rng):
    X = rng.standard_normal((400, 15))
    y = np.sign(X[:, 2] * X[:, 7] + 0.05 * rng.standard_normal(400))
    clf = FGMClassifier(B=1, C=10.0, family=PolynomialPool(), max_iter=3).fit(X, y)
    assert clf.selected_features_[0] == 2 * 15 + 7
    assert clf.family_.describe(clf.selected_features_[:1]) == ["x2*x7"]
    assert clf.score(X, y) > 0.9  # measured 0.94 (5% label noise near the boundary)
    assert clf.transform(X).shape == (400, clf.selected_features_.size)
    assert sp.issparse(clf.column_coef_) and clf.column_coef_.shape == (1, 15 * 15 + 15)


def test_hik_expansion_reproduces_the_kernel_on_its_grid(rng):
    # Values on the encoding grid: phi(x)'phi(z) = min(x, z) exactly.
    X = rng.integers(0, 9, size=(30, 4)).astype(float)
    X[0] = 8.0  # every feature reaches the top level
    fam = AdditiveKernelExpansion("hik", n_bins=8).fit(X)
    Phi = fam.expand(X, np.arange(4))
    np.testing.assert_allclose(Phi @ Phi.T, hik_kernel(X, X), atol=1e-10)


def test_chi2_expansion_matches_vedaldi_zisserman_map(rng):
    from sklearn.kernel_approximation import AdditiveChi2Sampler

    X = rng.uniform(0.05, 1, size=(40, 5))
    fam = AdditiveKernelExpansion("additive_chi2", sample_steps=3).fit(X)
    Phi = fam.expand(X, np.arange(5))
    ref = AdditiveChi2Sampler(sample_steps=3).fit_transform(X)
    # Same map up to column order and the sign convention of the sine terms.
    np.testing.assert_allclose(Phi @ Phi.T, ref @ ref.T, atol=1e-12)
    K = additive_chi2_kernel(X, X)
    assert np.abs(Phi @ Phi.T - K).max() / K.max() < 0.1


def test_additive_group_selection_end_to_end(rng):
    X = rng.uniform(0, 1, size=(300, 20))
    y = np.where(np.abs(X[:, 4] - 0.5) + np.abs(X[:, 11] - 0.5) > 0.5, 1.0, -1.0)
    fam = AdditiveKernelExpansion("hik", n_bins=10)
    clf = FGMClassifier(B=2, C=10.0, family=fam, max_iter=2).fit(X, y)
    chosen = set((clf.selected_features_ // 10).tolist())
    assert {4, 11} <= chosen
    assert clf.score(X, y) > 0.85
    # pricing by chunks of input features equals one full pass
    u = rng.standard_normal(300)
    a = AdditiveKernelExpansion("hik", chunk_size=3).fit(X).price(-u, 5, X=X)
    b = AdditiveKernelExpansion("hik", chunk_size=64).fit(X).price(-u, 5, X=X)
    np.testing.assert_array_equal(a.params, b.params)


def test_family_errors(rng):
    X = rng.standard_normal((20, 3))
    with pytest.raises(ValueError, match="non-negative"):
        AdditiveKernelExpansion("additive_chi2").fit(X)
    with pytest.raises(ValueError, match="'kernel' parameter of AdditiveKernelExpansion must be"):
        AdditiveKernelExpansion("rbf").fit(X)
    y = np.sign(X[:, 0])
    with pytest.raises(ValueError, match="cannot be combined"):
        FGMClassifier(family=PolynomialPool(), groups=[[0]]).fit(X, y)


@pytest.mark.parametrize("include_linear", [False, True])
def test_polynomial_budget_larger_than_the_pool(rng, include_linear):
    # m = 4: 10 pairs j <= k (+ 4 linear terms). A budget of 50 must return each
    # valid candidate once with a finite score, and the worst-case sum over all
    # of them (sum d <= B lets d take every candidate).
    X = rng.standard_normal((30, 4))
    u = rng.standard_normal(30)
    pool = PolynomialPool(include_linear=include_linear).fit(X)
    cand = pool.price(-u, 50, X=X)
    n_valid = 10 + 4 * include_linear
    ids = np.asarray(cand.params)
    assert len(cand) == n_valid and np.unique(ids).size == n_valid
    j, k = np.divmod(ids[ids < 16], 4)
    assert np.all(j <= k)
    assert np.all(np.isfinite(cand.scores))
    Phi, all_ids = _materialised_poly(X)
    if not include_linear:
        Phi, all_ids = Phi[:, :10], all_ids[:10]
    assert set(ids.tolist()) == set(all_ids.tolist())
    # unit RMS times the map's weight relative to a cross pair (squares 1/sqrt 2,
    # linear terms sqrt(coef0 / gamma) = 1 here)
    jj, kk = np.divmod(all_ids, 4)
    rel = np.where((all_ids < 16) & (jj == kk), np.sqrt(0.5), 1.0)
    full = np.abs(Phi.T @ u) * np.sqrt(len(u)) / np.linalg.norm(Phi, axis=0) * rel
    np.testing.assert_allclose(cand.extra["sum_sq"], (full**2).sum())
    y = np.sign(X[:, 0] * X[:, 1] + 0.1)
    clf = FGMClassifier(B=50, C=1.0, family=PolynomialPool(include_linear=include_linear),
                        max_iter=3).fit(X, y)
    assert np.isfinite(clf.history_["final_lower_bound"][0])
    assert np.unique(clf.selected_features_).size == clf.selected_features_.size


@pytest.mark.parametrize("gamma, coef0", [(4.0, 1.0), (8.0, 0.5), (2.0, 0.0)])
def test_polynomial_map_is_the_kernel_map_of_sec_6_4(rng, gamma, coef0):
    # Without unit-norm scaling the columns are phi(x) of (gamma x'z + r)^2,
    # minus the constant coordinate r (the intercept): Phi Phi' + r^2 = K.
    X = rng.standard_normal((12, 5))
    pool = PolynomialPool(feature_scaling=False, gamma=gamma, coef0=coef0).fit(X)
    cand = pool.price(rng.standard_normal(12), 10**6, X=X)
    assert len(cand) == 15 + 5 * (coef0 > 0)
    Phi = pool.columns(cand, X)
    np.testing.assert_allclose(Phi @ Phi.T + coef0**2, (gamma * X @ X.T + coef0) ** 2,
                               rtol=1e-10, atol=1e-10)
    # pricing scores are |phi_c' u| of these very columns
    u = rng.standard_normal(12)
    cand = pool.price(-u, 7, X=X)
    np.testing.assert_allclose(np.abs(pool.columns(cand, X).T @ u), cand.scores)
    with pytest.raises(ValueError, match="gamma"):
        PolynomialPool(gamma=0.0).fit(X)
    with pytest.raises(ValueError, match="coef0"):
        PolynomialPool(coef0=-1.0).fit(X)


@pytest.mark.parametrize("sparse", [False, True])
def test_polynomial_gamma_and_coef0_act_under_scaling(rng, sparse):
    # Defect (issue 23 item 8): unit-RMS scaling erased gamma and coef0.  Under
    # scaling the map's relative weights remain: linear terms sqrt(r / gamma),
    # squares 1/sqrt(2), cross pairs 1, each on a unit-RMS column.
    X = rng.standard_normal((40, 5))
    X = sp.csr_matrix(X) if sparse else X
    m = 5
    ids = np.array([m * m + 2, 1 * m + 1, 1 * m + 3])  # x2, x1^2, x1*x3
    Xd = X.toarray() if sparse else X
    cols = np.c_[Xd[:, 2], Xd[:, 1] ** 2, Xd[:, 1] * Xd[:, 3]]
    rms = np.sqrt((cols**2).mean(0))
    for gamma, coef0 in [(1.0, 1.0), (4.0, 1.0), (1.0, 9.0)]:
        pool = PolynomialPool(gamma=gamma, coef0=coef0).fit(X)
        _, scales = pool.column_indices(ids)
        expected = np.array([np.sqrt(coef0 / gamma), np.sqrt(0.5), 1.0]) / rms
        np.testing.assert_allclose(scales, expected, rtol=1e-12)
    y = np.sign(Xd[:, 0] + 0.3 * Xd[:, 1] * Xd[:, 2] + 0.01)
    lin = FGMClassifier(B=3, family=PolynomialPool(gamma=1.0, coef0=100.0),
                        max_iter=2).fit(X, y)
    pairs = FGMClassifier(B=3, family=PolynomialPool(gamma=100.0, coef0=0.01),
                          max_iter=2).fit(X, y)
    n_lin = lambda clf: int(np.sum(clf.selected_features_ >= m * m))  # noqa: E731
    assert n_lin(lin) > n_lin(pairs)
