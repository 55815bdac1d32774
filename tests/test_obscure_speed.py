"""OBSCURE's fast paths (issue 24 item 5): compiled Gram rows, the row cache's
eviction order and the dual candidate of the recent updates; each agrees with
the plain computation and keeps the certificate valid."""

import numpy as np
import pytest
import scipy.sparse as sp

import kernlearn.methods._obscure_dual as dual_mod
import kernlearn.methods._obscure_steps as steps_mod
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
    got = cache.values(free, np.arange(200))
    # single precision: relative to each kernel's scale
    scale = np.abs(ref).max(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(got / scale, ref / scale, rtol=0, atol=2e-7)
    # untouched slots stay untouched (rows are written only where asked)
    before = cache.rows[:, 1].copy()
    cache._compute(np.array([11]), np.array([8]))
    np.testing.assert_array_equal(cache.rows[:, 1], before)


@pytest.mark.parametrize("sparse", [False, True])
def test_rbf_widths_two_powers_apart_are_derived_from_the_widest(sparse):
    # widths 0.25, 1, 2 (the default list's ratios) on all columns: one RBF
    # row stored, squared 2 and 3 times when read; 0.3 is no power of two
    # apart and the RBF on other columns has its own view: both stored
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 5))
    if sparse:
        X = sp.csr_matrix(X * (rng.random(X.shape) < 0.5))
    specs = [("rbf", {"gamma": 1.0}), ("rbf", {"gamma": 0.25}), "linear",
             ("rbf", {"gamma": 2.0}), ("rbf", {"gamma": 0.3}),
             ("rbf", {"gamma": 0.5}, [0, 1])]
    kl = KernelList(specs, precompute=False).fit(X)
    cache = _RowCache(kl)
    assert list(cache.nsq) == [2, 0, 0, 3, 0, 0]
    assert cache.src[0] == cache.src[1] == cache.src[3]
    assert cache.rows.shape[0] == 4  # of six kernels
    ids = np.array([5, 3, 100, 7, 149])
    cache._compute(ids, np.arange(len(ids)))
    got = cache.values(np.arange(len(ids)), np.arange(150))
    # the stored value's single-precision error, times 2**e for the derived
    np.testing.assert_allclose(got, kl.rows(ids), rtol=0, atol=6e-7)


def test_derived_rows_give_the_stored_rows_fit(monkeypatch):
    X, y = _noisy(300)
    y = y + (X[:, 2] > 0.7)  # three classes
    kw = {"tol": None, "max_iter": 10, "random_state": 0}
    derived = PNormMKLClassifier(**kw).fit(X, y)
    monkeypatch.setattr(steps_mod, "_MAX_SQUARINGS", 0)
    stored = PNormMKLClassifier(**kw).fit(X, y)
    # the kernels differ by the stored rows' rounding (below 1e-6)
    np.testing.assert_allclose(derived.decision_function(X),
                               stored.decision_function(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(derived.kernel_weights_, stored.kernel_weights_,
                               rtol=1e-5)


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
            # (the candidate lives in buffers reused by the next call)
            seen.append((A.copy(), G.copy(), tuple(x.copy() for x in out)))
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


def test_recent_updates_average_the_last_third_to_two_thirds_of_the_epochs():
    # A_e = r A_{e-1} + (1 - r) U_e (one shrinkage r per epoch): the candidate
    # from a snapshot e0 epochs in must be the weighted mean of U_{e0+1..e},
    # and the suffix it reads must stay between a third and two thirds of the
    # epochs (right after a new snapshot the older one is read)
    rng = np.random.default_rng(0)
    n, M, F, r = 5, 2, 3, 0.9
    K = rng.normal(size=(F, n, n))
    rec = dual_mod._RecentUpdates()
    A, G = np.zeros((n, M)), np.zeros((M, F, n))
    U = rng.normal(size=(200, n, M))
    for e in range(1, 200):
        A = r * A + (1 - r) * U[e]
        G = np.einsum("jnm,mc->cjn", K, A)
        rec.decay(r)
        out = rec.candidate(A, G)
        if e >= 2:
            e0 = next(s for s in range(e) if np.allclose(
                out[0], sum(r ** (e - t) * (1 - r) * U[t] for t in range(s + 1, e + 1))
                / (1 - r ** (e - s)), rtol=1e-9, atol=1e-12))
            assert 1 / 3 - 1e-12 <= (e - e0) / e <= 2 / 3 + 1e-12, (e, e0)
            np.testing.assert_allclose(out[1], np.einsum("jnm,mc->cjn", K, out[0]),
                                       atol=1e-9)
            np.testing.assert_allclose(out[2], np.einsum("nc,cjn->j", out[0], out[1]),
                                       rtol=1e-9)
        rec.end_epoch(A, G)



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


def _storage(rng, M, weighted=False, n=90):
    """A kernel list and a few epochs' iterate (coefficients, scores) on noisy labels.

    Noisy labels at C = 1: many dual variables at their bound 1, which the
    stochastic iterates overshoot, so the clipped candidates are exercised.
    """
    X = rng.normal(size=(n, 4))
    f = X[:, 0] + X[:, 1] ** 2 - 1 + 0.7 * rng.normal(size=n)
    y = (f > 0).astype(np.int64) if M == 1 else np.digitize(f, [-0.5, 0.5])
    kl = KernelList(SPECS[:4], precompute=False).fit(X)
    K = kl.gram()
    sw = rng.uniform(0.7, 1.4, size=n) if weighted else None
    lam, q = 1.0 / (n if sw is None else sw.sum()), 3.0
    target = np.where(y == 1, 1.0, -1.0) if M == 1 else y
    loss = Hinge() if M == 1 else MulticlassHinge()
    problem = KernelProblem(kl, target, loss, SquaredGroupNorm2p(alpha=lam, p=1.5),
                            sample_weight=sw, n_classes=None if M == 1 else M)
    A = OnlineBatch(tol=None, max_iter=3, random_state=0).solve(problem).coef
    G = np.einsum("jnm,mc->cjn", K, A)
    yint = np.where(y == 1, 1, -1) if M == 1 else y
    return kl, K, yint.astype(np.int64), A, G, lam, q, sw


@pytest.mark.parametrize("M", [1, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_compiled_epoch_end_equals_the_numpy_objective(M, weighted):
    from kernlearn.methods._obscure_steps import _end_epoch, _incurs_loss
    from kernlearn.methods.obscure import _objective

    rng = np.random.default_rng(2)
    _, K, y, A, G, lam, q, sw = _storage(rng, M, weighted)
    n, F = len(y), K.shape[0]
    scale = 0.37
    loss = Hinge() if M == 1 else MulticlassHinge()
    yy = y.astype(float) if M == 1 else y
    N_ref = np.einsum("nc,cjn->j", scale * A, scale * G)
    obj_ref, loss_ref, err_ref, wn_ref = _objective(scale * G, N_ref, 1.0, yy, loss,
                                                    sw, lam, q)
    flags_ref = _incurs_loss(np.arange(n), scale * G, N_ref, q, 1.0, y, M > 1,
                             np.zeros(F))
    A2, G2, N2, flags = A.copy(), G.copy(), np.zeros(F), np.zeros(n, dtype=bool)
    mloss, err, nq, nsup = _end_epoch(A2, G2, N2, scale, q, y, M > 1,
                                      np.zeros(0) if sw is None else sw, np.zeros(F),
                                      flags)
    np.testing.assert_allclose(A2, scale * A, rtol=1e-15)
    np.testing.assert_allclose(G2, scale * G, rtol=1e-15)
    np.testing.assert_allclose(N2, N_ref, rtol=1e-12)
    assert mloss == pytest.approx(loss_ref, rel=1e-12)
    assert err == pytest.approx(err_ref, rel=1e-12) and 0 < err < 1
    assert nq / q == pytest.approx(wn_ref, rel=1e-12)
    assert 0.5 * lam * (nq / q) ** 2 + mloss == pytest.approx(obj_ref, rel=1e-12)
    assert nsup == np.count_nonzero(np.any(A != 0, axis=1)) < n
    np.testing.assert_array_equal(flags, flags_ref)


@pytest.mark.parametrize("M", [1, 3])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("budget", [0.0, 2e3, 1e9])
def test_compiled_dual_bound_equals_the_numpy_bound(M, weighted, budget):
    # rows cached for two thirds of the samples: the exact block covers the
    # cached clipped samples within the budget, Cauchy-Schwarz the others
    rng = np.random.default_rng(3)
    kl, _, y, A, G, lam, q, sw = _storage(rng, M, weighted)
    n = len(y)
    cache = _RowCache(kl)
    ids = rng.permutation(n)[: 2 * n // 3].astype(np.int64)
    free = np.arange(len(ids))
    cache._compute(ids, free)
    cache.slot[ids], cache.owner[free] = free, ids
    N = np.einsum("nc,cjn->j", A, G)
    yy = y.astype(float) if M == 1 else y
    want = dual_bound(A, N, yy, lam, q, sw, G, kl.kdiag_, cache.gram_block,
                      exact_budget=budget)
    h_want = cache.last_block
    got = cache.dual_bound(A, N, y, M > 1, np.zeros(0) if sw is None else sw, lam, q,
                           G, kl.kdiag_, exact_budget=budget)
    assert got == pytest.approx(want, rel=1e-10, abs=1e-12)
    assert cache.last_block == h_want
    # the clipped candidates matter here: the scaled one alone is lower
    assert got > dual_bound(A, N, yy, lam, q, sw) + 1e-6
    assert (h_want > 0) == (budget > 0)


@pytest.mark.parametrize("q", [2.0, 2.5, 3.0, 4.0])
def test_compiled_mirror_map_equals_lemma_1(q):
    # a_j = (||theta^j|| / ||theta||_{2,q})^{q-2} / q and ||theta||_{2,q},
    # including zero groups (a_j = 0 for q > 2, 1/q for q = 2) and q = 3's
    # root-based branch
    from kernlearn.methods._obscure_steps import _mirror
    from kernlearn.penalties.squared import conj_mirror_scales, lp_norm

    rng = np.random.default_rng(5)
    for _ in range(200):
        N = rng.random(4) ** rng.integers(1, 8) * 10.0 ** rng.integers(-5, 5)
        N[rng.random(4) < 0.25] = 0.0
        if not N.any():
            continue
        alpha = np.zeros(4)
        nq = _mirror(N, q, alpha)
        tn = np.sqrt(N)
        assert nq == pytest.approx(lp_norm(tn, q), rel=1e-13)
        want = conj_mirror_scales(tn, q)
        np.testing.assert_allclose(alpha, want, rtol=1e-13, atol=0)
        if q > 2:
            assert np.all(alpha[N == 0] == 0)
    alpha = np.ones(4)
    assert _mirror(np.zeros(4), q, alpha) == 0.0 and not alpha.any()


@pytest.mark.parametrize("M", [1, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_lazy_objective_equals_the_numpy_objective(M, weighted):
    # the objective checked within an epoch (lazy scale not folded) is
    # objective (5) of the scaled iterate
    from kernlearn.methods._obscure_steps import _lazy_objective
    from kernlearn.methods.obscure import _objective

    rng = np.random.default_rng(4)
    _, K, y, A, G, lam, q, sw = _storage(rng, M, weighted)
    scale = 0.61
    loss = Hinge() if M == 1 else MulticlassHinge()
    yy = y.astype(float) if M == 1 else y
    N = np.einsum("nc,cjn->j", A, G)
    want = _objective(scale * G, scale**2 * N, 1.0, yy, loss, sw, lam, q)[0]
    got = _lazy_objective(G, N, scale, q, y, M > 1, np.zeros(0) if sw is None else sw,
                          np.zeros(K.shape[0]), lam, np.empty((G.shape[0], len(y))))
    assert got == pytest.approx(want, rel=1e-12)
    # a different scale gives a different objective (the scale is applied)
    other = _lazy_objective(G, N, 1.0, q, y, M > 1, np.zeros(0) if sw is None else sw,
                            np.zeros(K.shape[0]), lam, np.empty((G.shape[0], len(y))))
    assert abs(other - got) > 1e-6


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("M", [1, 3])
def test_iterates_kept_within_epochs_are_exact_and_returned(M, monkeypatch):
    # checks within every stage-2 epoch (gap gate opened): each iterate kept
    # there is offered with its exact objective, and the solve returns the
    # best one seen, which the history's 'best' column records
    import kernlearn.methods.obscure as obscure_mod

    kl, _, problem, _ = _problem(M)
    K = kl.gram()
    monkeypatch.setattr(obscure_mod, "_NEAR_GAP", 1e9)
    kept = []
    real = dual_mod._BestIterate.offer

    def spy(self, obj, dual, A, G, N, copy=True):
        if not copy:  # an iterate from within an epoch
            kept.append((obj, A.copy()))
        return real(self, obj, dual, A, G, N, copy)

    monkeypatch.setattr(dual_mod._BestIterate, "offer", spy)
    res = OnlineBatch(tol=0.01, max_iter=30, random_state=0).solve(problem)
    assert len(kept) >= 3

    def objective(coef):
        G = np.einsum("jnm,mc->cjn", K, coef)
        N = np.einsum("nc,cjn->j", coef, G)
        return OnlineBatch.objective(problem, G, N)[0]

    for obj, A in kept:
        assert obj == pytest.approx(objective(A), rel=1e-10)
    h = res.history.as_dict()
    f = objective(res.coef)
    assert f == pytest.approx(h["best"][-1], rel=1e-10)
    assert f <= min(h["objective"].min(), min(o for o, _ in kept)) * (1 + 1e-10)
