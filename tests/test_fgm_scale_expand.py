"""Sparse-preserving expansions and screened group pricing (issue 16, items 3-4)."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import FGMClassifier
from kernlearn.datasets import make_fgm_group_synthetic
from kernlearn.families import AdditiveKernelExpansion, FeaturePool, PolynomialPool


def _sparse_data(n=80, m=50, density=0.12, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, m, density=density, format="csr", random_state=seed,
                  data_rvs=rng.standard_normal)
    return X, rng.standard_normal(n)


def _materialised_scores(X, feature_scaling, gamma=1.0):
    """All pair scores from the explicit expansion (every x_j x_k column built)."""
    Xd = X.toarray()
    m = Xd.shape[1]
    j, k = np.triu_indices(m)
    P = Xd[:, j] * Xd[:, k]
    if feature_scaling:
        norms = np.linalg.norm(P, axis=0)
        # unit root-mean-square columns, sqrt(n) / ||column||, times the kernel
        # map's weight relative to a cross pair's (1/sqrt(2) on squares)
        scale = np.where(norms > 0, np.sqrt(len(Xd)) / np.where(norms > 0, norms, 1.0), 0.0)
        scale = scale * np.where(j == k, np.sqrt(0.5), 1.0)
    else:
        scale = np.where(j == k, 1.0, np.sqrt(2.0)) * gamma
    return j * m + k, P, scale


@pytest.mark.parametrize("feature_scaling", [True, False])
def test_sparse_poly2_pricing_equals_materialised_expansion(feature_scaling):
    X, u = _sparse_data()
    ids, P, scale = _materialised_scores(X, feature_scaling, gamma=2.0)
    brute = np.abs(P.T @ u) * scale
    pool = PolynomialPool(include_linear=False, feature_scaling=feature_scaling,
                          gamma=2.0).fit(X)
    cand = pool.price(-u, 30, X=X)
    top = np.sort(brute)[::-1][:30]
    np.testing.assert_allclose(cand.scores, top, rtol=1e-10)
    # each returned pair carries its materialised score (ties may permute ids)
    lookup = dict(zip(ids.tolist(), brute))
    np.testing.assert_allclose([lookup[i] for i in cand.params.tolist()], cand.scores,
                               rtol=1e-10)
    assert np.isclose(cand.extra["sum_sq"], (top**2).sum())
    # scored pairs = pairs with a stored product, far fewer than all m (m + 1) / 2
    assert pool.n_pair_evals_ == np.count_nonzero(np.linalg.norm(P, axis=0))


def test_sparse_poly2_columns_and_prediction_use_only_selected_pairs():
    X, u = _sparse_data()
    pool = PolynomialPool().fit(X)
    cand = pool.price(-u, 12, X=X)
    block = pool.columns(cand, X)
    assert sp.issparse(block)  # the master's active block stays sparse
    ids, P, scale = _materialised_scores(X, True)
    pos = {v: i for i, v in enumerate(ids.tolist())}
    cols = [pos[v] for v in cand.params.tolist()]
    np.testing.assert_allclose(block.toarray(), P[:, cols] * scale[cols], rtol=1e-12)
    # linear ids read column j itself
    m = X.shape[1]
    raw = pool.raw_columns(np.array([m * m + 3, 2 * m + 5, m * m + 0]), X).toarray()
    Xd = X.toarray()
    np.testing.assert_allclose(raw, np.c_[Xd[:, 3], Xd[:, 2] * Xd[:, 5], Xd[:, 0]])


def test_fgm_poly2_predicts_from_selected_pairs_only(monkeypatch):
    X, _ = _sparse_data(n=120, m=30, density=0.3, seed=1)
    Xd = X.toarray()
    y = np.where(Xd[:, 0] * Xd[:, 1] + 0.5 * Xd[:, 2] * Xd[:, 3] > 0, 1, -1)
    clf = FGMClassifier(B=2, C=10.0, family=PolynomialPool(), max_iter=4,
                        standardize=False).fit(X, y)
    seen = []
    real = PolynomialPool.raw_columns
    monkeypatch.setattr(PolynomialPool, "raw_columns",
                        lambda self, ids, Z: seen.append(len(ids)) or real(self, ids, Z))
    dec = clf.decision_function(X)
    assert seen == [clf.selected_features_.size] and 0 < seen[0] < 30 * 31 // 2
    # the same decision from the materialised expansion
    ids, P, _ = _materialised_scores(X, True)
    full = np.c_[P, Xd]
    all_ids = np.r_[ids, 30 * 30 + np.arange(30)]
    W = np.asarray(clf.column_coef_[:, all_ids].todense()).ravel()
    np.testing.assert_allclose(dec, full @ W + clf.intercept_[0], rtol=1e-10, atol=1e-12)
    assert clf.score(X, y) > 0.9


def test_sparse_poly2_pricing_never_allocates_a_dense_block():
    # 800 features: one dense block of the old path is 128 x 800 x 8 = 0.8 MB
    # (and several such arrays live at once); the sparse path needs O(m + k).
    X, u = _sparse_data(n=200, m=800, density=0.004, seed=2)
    block_bytes = 128 * 800 * 8
    sparse_pool = PolynomialPool().fit(X)
    dense_pool = PolynomialPool().fit(X.toarray())
    sparse_pool.price(-u, 10, X=X)  # compile the numba kernel outside the measurement

    def peak(fn):
        tracemalloc.start()
        fn()
        out = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return out

    p_sparse = peak(lambda: sparse_pool.price(-u, 10, X=X))
    p_dense = peak(lambda: dense_pool.price(-u, 10, X=X.toarray()))
    assert p_dense > block_bytes
    assert p_sparse < block_bytes / 4
    a, b = sparse_pool.price(-u, 10, X=X), dense_pool.price(-u, 10, X=X.toarray())
    np.testing.assert_allclose(a.scores, b.scores, rtol=1e-10)


@pytest.mark.parametrize("kernel", ["hik", "additive_chi2", "additive_gaussian"])
def test_additive_maps_of_sparse_input_equal_dense(kernel):
    X, u = _sparse_data(n=60, m=20, density=0.2, seed=3)
    if kernel != "additive_gaussian":
        X = abs(X)
    # chunk_size=1 forces several sparse blocks
    sparse = AdditiveKernelExpansion(kernel, n_bins=12, chunk_size=1).fit(X)
    dense = AdditiveKernelExpansion(kernel, n_bins=12).fit(X.toarray())
    np.testing.assert_allclose(sparse.scale_, dense.scale_, rtol=1e-10)
    a, b = sparse.price(-u, 4, X=X), dense.price(-u, 4, X=X.toarray())
    np.testing.assert_array_equal(a.params, b.params)
    np.testing.assert_allclose(a.scores, b.scores, rtol=1e-10)
    block = sparse.columns(a, X)
    np.testing.assert_allclose(block.toarray() if sp.issparse(block) else block,
                               dense.columns(b, X.toarray()), rtol=1e-10, atol=1e-12)
    # zeros map to zero for HIK and chi2: the expansion keeps the sparsity
    if kernel != "additive_gaussian":
        assert sp.issparse(block)
        assert block.nnz <= X[:, a.params].nnz * sparse.width_
    ids = np.array([5, 2 * sparse.width_ + 1, 7 * sparse.width_ + 3])
    raw = sparse.raw_columns(ids, X)
    np.testing.assert_allclose(raw.toarray() if sp.issparse(raw) else raw,
                               dense.raw_columns(ids, X.toarray()), rtol=1e-10, atol=1e-12)


def test_group_screening_equals_brute_force_and_skips_columns():
    X, _, _, groups = make_fgm_group_synthetic(300, 3000, random_state=0)
    rng = np.random.default_rng(1)
    u = rng.standard_normal(300)
    screened = FeaturePool(groups=groups).fit(X)
    brute = FeaturePool(groups=groups, screening=False).fit(X)
    screened.price(-u, 10, X=X)  # reference pricing: every column
    assert screened.n_column_evals_ == 3000
    for eps in (1e-3, 1e-2, 0.3):
        u2 = u + eps * rng.standard_normal(300)
        a, b = screened.price(-u2, 10, X=X), brute.price(-u2, 10, X=X)
        np.testing.assert_array_equal(a.params, b.params)
        np.testing.assert_allclose(a.scores, b.scores, rtol=1e-12)
        if eps <= 1e-2:
            assert screened.n_column_evals_ < 3000 // 2  # pruned groups were not computed
    # a large drift cannot be screened: everything scored, reference renewed
    assert screened.n_column_evals_ == 3000


def test_group_screening_reads_row_partitioned_data():
    # the screened columns come through the same map-reduce as full pricing,
    # so out-of-core (chunked) X gives the in-memory answer
    from kernlearn.partitioned import LocalRows

    X, _, _, groups = make_fgm_group_synthetic(300, 3000, random_state=0)
    rows = LocalRows.from_array(X, chunk_rows=70)
    rng = np.random.default_rng(1)
    u = rng.standard_normal(300)
    chunked = FeaturePool(groups=groups).fit(rows)
    brute = FeaturePool(groups=groups, screening=False).fit(X)
    chunked.price(-u, 10, X=rows)
    u2 = u + 1e-3 * rng.standard_normal(300)
    a, b = chunked.price(-u2, 10, X=rows), brute.price(-u2, 10, X=X)
    assert chunked.n_column_evals_ < 3000 // 2
    np.testing.assert_array_equal(a.params, b.params)
    np.testing.assert_allclose(a.scores, b.scores, rtol=1e-10)


def test_tree_screening_skips_pruned_subtrees_and_equals_brute_force():
    X, _, _, _ = make_fgm_group_synthetic(200, 160, n_informative_groups=4, random_state=2)
    rng = np.random.default_rng(3)
    X[:, :40] *= 3.0  # the first subtree dominates the scores
    # two roots of 40 and 120 features, each with leaves of 10 (Definition 1)
    groups = [np.arange(0, 40)] + [np.arange(s, s + 10) for s in range(0, 40, 10)]
    groups += [np.arange(40, 160)] + [np.arange(s, s + 10) for s in range(40, 160, 10)]
    u = X[:, :3].sum(1) + 0.1 * rng.standard_normal(200)
    kw = dict(groups=groups, tree=True, feature_scaling=False)
    screened, brute = FeaturePool(**kw).fit(X), FeaturePool(screening=False, **kw).fit(X)
    screened.price(-u, 2, X=X)
    u2 = u + 1e-4 * rng.standard_normal(200)
    a, b = screened.price(-u2, 2, X=X), brute.price(-u2, 2, X=X)
    np.testing.assert_array_equal(a.params, b.params)
    np.testing.assert_allclose(a.scores, b.scores, rtol=1e-12)
    # the 120-feature subtree is pruned without computing its X'u
    assert screened.n_column_evals_ == 40


def test_intersection_kernel_features_of_sparse_input_equal_dense():
    from kernlearn.families import IntersectionKernelFeatures

    X, u = _sparse_data(n=40, m=15, density=0.25, seed=4)
    sparse = IntersectionKernelFeatures(beta=0.7).fit(X)
    dense = IntersectionKernelFeatures(beta=0.7).fit(X.toarray())
    # c_k = u' K_k u with K_k = min(v_i, v_j), from its definition
    V = np.abs(X.toarray()) ** 0.7
    c = np.array([u @ np.minimum(V[:, [k]], V[:, k]) @ u for k in range(15)])
    np.testing.assert_allclose(sparse.kernel_scores(u), c, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sparse.scale_, dense.scale_, rtol=1e-12)
    np.testing.assert_allclose(sparse.levels_, dense.levels_)
    a, b = sparse.price(-u, 3), dense.price(-u, 3)
    np.testing.assert_array_equal(a.params, b.params)
    block = sparse.columns(a, X)
    np.testing.assert_allclose(block.toarray(), dense.columns(b, X.toarray()), atol=1e-12)
