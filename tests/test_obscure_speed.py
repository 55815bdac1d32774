"""OBSCURE's fast paths (issue 24 item 5): compiled Gram rows, the row cache's
eviction order and the dual candidate of the recent updates; each agrees with
the plain computation and keeps the certificate valid."""

import numpy as np
import pytest
import scipy.sparse as sp

import kernlearn.methods._obscure_dual as dual_mod
from kernlearn import PNormMKLClassifier
from kernlearn.kernels import KernelList
from kernlearn.losses import Hinge, MulticlassHinge
from kernlearn.methods._obscure_steps import _row_plan, _RowCache
from kernlearn.methods.obscure import KernelProblem, OnlineBatch, dual_bound
from kernlearn.penalties import SquaredGroupNorm2p

SPECS = [("rbf", {"gamma": 0.3}), "linear", ("rbf", {"gamma": 2.0}, [0, 2]),
         ("linear", {}, [1, 3]), "constant"]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("normalize", [True, False])
def test_compiled_rows_equal_the_kernel_lists_rows(sparse, normalize):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 6))
    X[3] = 0.0  # a zero point: its normalised linear row is zero
    if sparse:
        X = sp.csr_matrix(X * (rng.random(X.shape) < 0.5))
    kl = KernelList(SPECS, normalize=normalize, precompute=False).fit(X)
    cache = _RowCache(kl)
    assert cache.plan is not None
    ids, free = np.array([5, 3, 100, 7, 199]), np.array([9, 0, 4, 2, 150])
    cache._compute(ids, free)
    ref = kl.rows(ids)
    got = cache.rows[:, free, :].astype(float)
    # single precision: relative to each kernel's scale
    scale = np.abs(ref).max(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(got / scale, ref / scale, rtol=0, atol=2e-7)
    # untouched slots stay untouched (rows are written only where asked)
    before = cache.rows[:, 1].copy()
    cache._compute(np.array([11]), np.array([8]))
    np.testing.assert_array_equal(cache.rows[:, 1], before)


def test_other_kernels_use_the_lists_own_rows():
    X = np.random.default_rng(1).normal(size=(60, 4))
    kl = KernelList(["rbf", ("poly", {"degree": 2})], precompute=False).fit(X)
    assert _row_plan(kl) is None
    cache = _RowCache(kl)
    cache._compute(np.array([1, 2]), np.array([0, 5]))
    np.testing.assert_array_equal(cache.rows[:, [0, 5]],
                                  kl.rows([1, 2]).astype(np.float32))


def _noisy(n=500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] + 1.2 * rng.normal(size=n) > 0).astype(int)
    return X, y


def test_eviction_order_free_idle_used_awaited():
    X, _ = _noisy(40)
    cache = _RowCache(KernelList(["rbf"], cache_size=4 * 40 * 8 / 2**20,
                                 precompute=False).fit(X))
    assert cache.capacity == 8
    cache.new_epoch(10.0, np.isin(np.arange(40), [1, 2, 3]))
    # slots: 0 free; 1, 6, 7 idle (no loss, unused this epoch); 2-3 used this
    # epoch; 4-5 awaited (a loss at the epoch's start, not visited yet)
    cache.owner[:] = [-1, 9, 1, 12, 2, 3, 20, 21]
    cache.stamp[:] = [-1.0, 5.0, 12.0, 11.0, 8.0, 4.0, 3.0, 2.0]
    order = np.argsort(cache._eviction_key(15.0), kind="stable")
    assert order[0] == 0                  # fresh memory first
    assert list(order[1:4]) == [7, 6, 1]  # idle rows, least recently used first
    assert list(order[4:6]) == [3, 2]     # used this epoch, oldest first
    assert list(order[6:]) == [5, 4]      # awaited rows last


def test_eviction_by_next_use_computes_fewer_rows_same_iterates(monkeypatch):
    # a cache smaller than the set of samples that update: plain LRU evicts
    # the rows still awaited in the epoch, the next-use order keeps them
    X, y = _noisy()
    n = len(y)
    mib = 4.0 * 4 * n * 120 / 2**20  # 120 rows of the 4 default kernels
    kw = {"cache_size": mib, "tol": None, "max_iter": 8, "random_state": 0}
    ours = PNormMKLClassifier(**kw).fit(X, y)
    assert len(ours.support_) > 2 * 120
    monkeypatch.setattr(_RowCache, "_eviction_key", lambda self, clock: self.stamp)
    lru = PNormMKLClassifier(**kw).fit(X, y)
    assert ours.n_rows_computed_ < 0.9 * lru.n_rows_computed_
    # where the rows come from does not change the iterates
    np.testing.assert_allclose(ours.decision_function(X), lru.decision_function(X),
                               rtol=1e-9, atol=1e-12)


def _problem(M, n=120, seed=3):
    X, y = _noisy(n, seed)
    if M > 1:
        y = y + (X[:, 2] > 0.7)
    kl = KernelList([("rbf", {"gamma": 0.5}), "linear"], precompute=True).fit(X)
    target = np.where(y == 1, 1.0, -1.0) if M == 1 else y
    loss = Hinge() if M == 1 else MulticlassHinge()
    lam = 1.0 / len(y)
    problem = KernelProblem(kl, target, loss, SquaredGroupNorm2p(alpha=lam, p=1.5),
                            n_classes=None if M == 1 else M)
    return kl, target, problem, lam


@pytest.mark.parametrize("M", [1, 3])
def test_recent_updates_candidate_is_consistent_valid_and_tighter(M, monkeypatch):
    kl, target, problem, lam = _problem(M)
    K = kl.gram()
    seen = []
    real = dual_mod._RecentUpdates.candidate

    def spy(self, A, G):
        out = real(self, A, G)
        if out is not None:
            seen.append((A.copy(), G.copy(), out))
        return out

    monkeypatch.setattr(dual_mod._RecentUpdates, "candidate", spy)
    res = OnlineBatch(tol=None, max_iter=40, random_state=0).solve(problem)
    assert len(seen) >= 4
    best = res.history.as_dict()["dual"].max()
    # a long run's objective bounds every dual value from above
    long = OnlineBatch(tol=None, max_iter=400, random_state=1).solve(problem)
    p_ub = long.state.objective
    block = lambda ids: (ids, K[:, ids][:, :, ids])
    gains = []
    for A, G, (dA, dG, dN) in seen:
        # the scores and norms of the candidate are those of its coefficients
        np.testing.assert_allclose(dG, np.einsum("jnm,mc->cjn", K, dA), atol=1e-9)
        np.testing.assert_allclose(dN, np.einsum("nc,cjn->j", dA, dG), rtol=1e-12)
        d_recent = dual_bound(dA, dN, target, lam, 3.0, None, dG, kl.kdiag_, block)
        N = np.einsum("nc,cjn->j", A, G)
        d_all = dual_bound(A, N, target, lam, 3.0, None, G, kl.kdiag_, block)
        assert d_recent <= p_ub + 1e-9  # weak duality
        gains.append(d_recent - d_all)
    # after the first epochs the recent updates give the tighter bound
    assert np.median(gains[len(gains) // 2:]) > 0
    assert best <= p_ub + 1e-9



@pytest.mark.parametrize("M", [1, 4])
def test_compiled_loss_flags_equal_the_numpy_margins(M):
    from kernlearn.methods._obscure_steps import _incurs_loss
    from kernlearn.penalties.squared import conj_mirror_scales

    rng = np.random.default_rng(5)
    n, F, q, scale = 80, 3, 3.0, 8.0
    G = rng.normal(size=(M, F, n))
    N = rng.uniform(0.1, 2.0, size=F)
    y = rng.integers(0, M, size=n) if M > 1 else rng.choice([-1, 1], size=n)
    ids = rng.permutation(n)[:50].astype(np.int64)
    got = _incurs_loss(ids, G, N, q, scale, y.astype(np.int64), M > 1, np.zeros(F))
    m = scale * np.einsum("cjw,j->wc", G[:, :, ids], conj_mirror_scales(np.sqrt(N), q))
    if M > 1:
        own = m[np.arange(len(ids)), y[ids]].copy()
        m[np.arange(len(ids)), y[ids]] = -np.inf
        want = 1.0 - own + m.max(axis=1) > 0.0
    else:
        want = 1.0 - y[ids] * m[:, 0] > 0.0
    assert 0 < want.sum() < len(ids)
    np.testing.assert_array_equal(got, want)
