"""MK-MTFL's SVM / SVR evaluations without the assembled effective kernel, and the
certificate of the mirror descent at ``max_iter``.

The SMO computes the rows of ``sum_j d_j K_j`` it reads from the packed base
kernels (:func:`kernlearn.methods.mtmkl._smo._row`) instead of the kernel being
assembled whole at every evaluation, and the quadratic forms ``beta' K_j beta``
run over the nonzero duals only: both must give the results of the assembled
computation bit for bit.
"""

import warnings

import numpy as np
import pytest
from bench_scripts import load_script
from sklearn.exceptions import ConvergenceWarning

from kernlearn import MultitaskMKLClassifier, MultitaskMKLClassifierCV
from kernlearn.methods.mtmkl import _smo
from kernlearn.methods.mtmkl.mtfl import (
    _packed_quadratic,
    _task_major,
    _unpack_effective,
)
from kernlearn.solvers.mirror_descent import simplex_mirror_descent


def packed_bucket(rng, sizes, k, zeros=True):
    """Base kernels ``(k, T, m, m)`` (zero on padding), their packed task-major
    copy, and random effective weights ``(T, k)``, some exactly zero."""
    T, m = len(sizes), max(sizes)
    grams = np.zeros((k, T, m, m))
    for t, mt in enumerate(sizes):
        Z = rng.normal(size=(mt, 3))
        for j in range(k):
            A = Z * rng.uniform(0.2, 2.0, size=3) if j % 2 else Z[:, :1] + 0.3 * j
            grams[j, t, :mt, :mt] = (np.exp(-0.5 * ((A[:, None] - A[None]) ** 2).sum(-1))
                                     if j % 2 == 0 else A @ A.T)
    W = rng.uniform(0.0, 3.0, size=(T, k))
    if zeros:
        W[rng.random((T, k)) < 0.3] = 0.0
        W[0, 0] = 0.0
    return grams, _task_major([grams])[0], W


def test_rows_filled_on_demand_are_the_assembled_kernel_rounded():
    rng = np.random.default_rng(0)
    sizes = [23, 17, 20]
    _, Gp, W = packed_bucket(rng, sizes, 4)
    m = max(sizes)
    full = np.empty((len(sizes), m, m))
    _unpack_effective(W, Gp, full)
    for t, mt in enumerate(sizes):
        K = np.full((m, m), np.nan, np.float32)
        have = np.zeros(m, bool)
        for i in rng.permutation(mt):  # (any order: each row on its own)
            _smo._row(K, have, W[t], Gp[t], m, mt, i, np.arange(m))
        np.testing.assert_array_equal(K[:mt, :mt], full[t, :mt, :mt].astype(np.float32))
        assert have[:mt].all() and not have[mt:].any()
        # and once present, a row is not computed again
        K[2, 0] = -7.0
        _smo._row(K, have, W[t], Gp[t], m, mt, 2, np.arange(m))
        assert K[2, 0] == -7.0


@pytest.mark.parametrize("regression", [False, True])
def test_smo_on_packed_kernels_equals_the_assembled_kernel(regression):
    rng = np.random.default_rng(1)
    sizes = np.array([40, 33, 38])
    _, Gp, W = packed_bucket(rng, sizes, 3)
    T, m = len(sizes), sizes.max()
    mask = np.arange(m)[None] < sizes[:, None]
    y = np.where(mask, rng.normal(size=(T, m)), 0.0)
    if not regression:
        y = np.where(mask, np.where(y > 0, 1.0, -1.0), 0.0)
    K = np.empty((T, m, m))
    _unpack_effective(W, Gp, K)
    C = np.where(mask, rng.uniform(0.5, 10.0, size=(T, m)), 0.0)
    cold = _smo.smo_buckets(K, y, sizes, C, regression, 0.1, tol=1e-8,
                            return_face_steps=True)
    lazy = _smo.smo_buckets(None, y, sizes, C, regression, 0.1, tol=1e-8,
                            return_face_steps=True, packed=(W, Gp))
    for a, b in zip(cold, lazy):
        np.testing.assert_array_equal(a, b)
    assert cold[0].any() and cold[2].sum() > 0  # (a real solve)
    # warm: the duals at other weights, as the mirror descent's next evaluation
    W2 = W * rng.uniform(0.8, 1.2, size=W.shape)
    K2 = np.empty_like(K)
    _unpack_effective(W2, Gp, K2)
    warm = _smo.smo_buckets(K2, y, sizes, C, regression, 0.1, tol=1e-8, beta0=cold[0])
    warm_lazy = _smo.smo_buckets(None, y, sizes, C, regression, 0.1, tol=1e-8,
                                 beta0=cold[0], packed=(W2, Gp))
    for a, b in zip(warm, warm_lazy):
        np.testing.assert_array_equal(a, b)
    # through solve_inner as MK-MTFL calls it; the square loss needs K itself
    from kernlearn.methods.mtmkl import solve_inner

    loss = "epsilon_insensitive" if regression else "hinge"
    np.testing.assert_array_equal(
        solve_inner(loss, K, y, mask, C, 0.1)[0],
        solve_inner(loss, None, y, mask, C, 0.1, packed=(W, Gp))[0])
    with pytest.raises(ValueError, match="square loss"):
        solve_inner("square", None, y, mask, 1.0, packed=(W, Gp))


def test_quadratic_forms_over_the_nonzero_duals():
    rng = np.random.default_rng(2)
    sizes = [30, 26, 29]
    grams, Gp, _ = packed_bucket(rng, sizes, 3)
    T, m = len(sizes), max(sizes)
    beta = rng.normal(size=(T, m))
    beta[rng.random((T, m)) < 0.6] = 0.0  # most duals zero, as an SVM's
    for t, mt in enumerate(sizes):
        beta[t, mt:] = 0.0
    S = np.empty((3, T))
    _packed_quadratic(Gp, beta, S)
    dense = np.einsum("ta,jtab,tb->jt", beta, grams, beta)
    np.testing.assert_allclose(S, dense, rtol=1e-12, atol=1e-12)
    # the full sum in the order of the packed rows (the previous loop, zero
    # terms included): the same numbers, bit for bit
    ref = np.empty_like(S)
    for t in range(T):
        for j in range(3):
            acc, q = 0.0, 0
            for a in range(m):
                ba = beta[t, a]
                acc += Gp[t, j, q] * ba * ba
                q += 1
                row = 0.0
                for b in range(a + 1, m):
                    row += Gp[t, j, q] * beta[t, b]
                    q += 1
                acc += 2.0 * ba * row
            ref[j, t] = acc
    np.testing.assert_array_equal(S, ref)


def three_tasks(seed=3, n=70):
    rng = np.random.default_rng(seed)
    t = np.repeat([0, 1, 2], n)
    X = rng.normal(size=(3 * n, 3))
    y = np.where(X[:, 0] * (t - 0.8) + 0.5 * X[:, 1] + 0.7 * rng.normal(size=3 * n) > 0,
                 "yes", "no")
    return X, y, t


def test_cross_validation_equals_the_fits_on_assembled_kernels(monkeypatch):
    """``MultitaskMKLClassifierCV()`` (its grid, folds and refit) is the same, bit for
    bit, as when every evaluation assembles the effective kernel."""
    X, y, t = three_tasks()
    ours = MultitaskMKLClassifierCV(cv=3, max_iter=30).fit(X, y, task_index=t)
    real = _smo.smo_buckets
    calls = []

    def assembled(K, y_, sizes, C, regression=False, epsilon=0.1, tol=1e-5, beta0=None,
                  return_face_steps=False, packed=None):
        if packed is not None:
            W, Gp, first = packed[:3]  # (a fourth entry: the same kernels unpacked)
            # (no repeated rows in these inputs: no dual merged, the same problem)
            assert (first == np.arange(first.shape[1])).all()
            K = np.empty((len(sizes), y_.shape[1], y_.shape[1]))
            _unpack_effective(np.ascontiguousarray(W), Gp, K)
            calls.append(len(sizes))
        return real(K, y_, sizes, C, regression, epsilon, tol, beta0, return_face_steps)

    monkeypatch.setattr(_smo, "smo_buckets", assembled)
    ref = MultitaskMKLClassifierCV(cv=3, max_iter=30).fit(X, y, task_index=t)
    assert calls  # (the reference did go through the assembled kernels)
    assert ours.C_ == ref.C_
    for key, val in ref.cv_results_.items():
        np.testing.assert_array_equal(ours.cv_results_[key], val)
    for name in ("kernel_weights_", "task_kernel_weights_", "intercept_"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(ref, name))
    np.testing.assert_array_equal(ours.decision_function(X + 0.1, task_index=t),
                                  ref.decision_function(X + 0.1, task_index=t))
    assert ours.n_iter_ == ref.n_iter_


def test_cutting_plane_bound_is_a_valid_and_tighter_lower_bound():
    from kernlearn.solvers.mirror_descent import cutting_plane_bound

    rng = np.random.default_rng(4)
    H = rng.normal(size=(3, 3))
    H = H @ H.T + np.eye(3)
    c = np.array([0.2, 0.5, 0.3])

    def f(x):
        return 1.0 + 0.5 * (x - c) @ H @ (x - c)

    pts = rng.dirichlet(np.ones(3), size=12)
    a = np.array([f(x) - (H @ (x - c)) @ x for x in pts])
    G = np.array([H @ (x - c) for x in pts])
    bound = cutting_plane_bound(a, G)
    single = max(ai + gi.min() for ai, gi in zip(a, G))  # the loop's best one
    assert single <= bound + 1e-12
    # below the minimum over the simplex (1.0 at c, inside)
    assert bound <= 1.0 + 1e-12
    assert bound > single + 1e-3  # (strictly better here)
    # one point on the simplex: its own linearisation's bound; nothing from NaN
    assert cutting_plane_bound(a[:1], G[:1]) == pytest.approx(a[0] + G[0].min())
    assert cutting_plane_bound(np.array([np.nan]), G[:1]) == -np.inf


def test_mirror_descent_at_max_iter_is_certified_by_all_its_linearisations():
    """An optimum inside the simplex: the iterates circle it and the gap of the
    best single linearisation stays above ``tol`` at ``max_iter`` (2.8e-3),
    while the values have settled; all linearisations together certify it.
    Before, the fit reported ``converged=False`` (and MK-MTFL warned); since the
    twenty-fourth pass that bound is also measured once the single gap is within
    ten times ``tol``, and the loop stops there."""
    def oracle(x, it):
        g = np.zeros_like(x)
        g[:, 0] = x[:, 0] - 0.8
        v = 1.0 + 0.5 * (x[:, 0] - 0.8) ** 2
        return v, v + g.min(1) - (g * x).sum(1), g

    res = simplex_mirror_descent(oracle, 1, 2, max_iter=100, tol=1e-3)
    hist = res.history.as_dict()
    assert res.n_iter < 100
    assert res.converged
    assert hist["gap"][-1] <= 1e-3 * hist["best"][-1]  # the certified gap recorded
    assert res.gap <= 1e-3 * res.objective
    assert res.lower[0] <= 1.0 <= res.value[0]  # still a bound on the minimum
    # a gap the linearisations cannot close stays unconverged
    res = simplex_mirror_descent(oracle, 1, 2, max_iter=10, tol=1e-6)
    assert not res.converged


@pytest.fixture(scope="module")
def mb():
    yield from load_script("multitask_breadth")


def test_default_set_fold_fit_converges_without_warning(mb):
    """The fit that made ``MultitaskMKLClassifierCV()`` warn on the Default set
    (multitask_breadth, seed 0, fold 0, C = 1): 100 iterations, a relative gap
    of 1.3e-3 by the single linearisations, 1.1e-4 by all of them; now it stops
    at 12 when its last linearisations certify ``tol``."""
    from sklearn.model_selection import StratifiedKFold

    from kernlearn.datasets import DatasetNotFoundError

    try:
        X, y, tasks, task, _ = mb.load("default")
    except (mb.unseen_sets.MissingPackageError, DatasetNotFoundError) as exc:
        pytest.skip(f"default: {exc}")
    (X, y, t), _ = mb.split(X, y, tasks, task, 2000, 0)
    strata = 2 * np.unique(t, return_inverse=True)[1] + (y == np.unique(y)[1])
    train = next(StratifiedKFold(5).split(X, strata))[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = MultitaskMKLClassifier(C=1.0).fit(X[train], y[train], task_index=t[train])
    # (stopped once the gap of its last cuts met tol: 12 iterations, 100 before)
    assert est.n_iter_ < 100 and est.converged_
    assert est.gap_ <= 1e-3 * est.objective_


# --- twenty-seventh pass: the solver's rows read from unpacked base kernels, the
# face step's gradient update read along rows; the same numbers, bit for bit


def test_unpacked_rows_are_the_packed_rows_bit_for_bit():
    from kernlearn.methods.mtmkl.mtfl import square_blocks

    rng = np.random.default_rng(5)
    sizes = [29, 31]
    m = max(sizes)
    for k in (1, 3):
        grams, Gp, W = packed_bucket(rng, sizes, k)
        Gs = square_blocks([Gp])[0]
        np.testing.assert_array_equal(Gs, grams.transpose(1, 0, 2, 3))
        for t, mt in enumerate(sizes):
            # merged repeated rows: variable v reads row kr[v] (increasing)
            nv = mt - 6
            kr = np.arange(m)
            kr[:nv] = np.sort(rng.choice(mt, nv, replace=False))
            K1, K2 = (np.full((m, m), np.nan, np.float32) for _ in range(2))
            h1, h2 = np.zeros(m, bool), np.zeros(m, bool)
            acc = np.empty(m)
            for i in rng.permutation(nv):
                _smo._row(K1, h1, W[t], Gp[t], m, nv, i, kr)
                _smo._square_row(K2, h2, W[t], Gs[t], nv, i, kr, acc)
            np.testing.assert_array_equal(K2[:nv, :nv], K1[:nv, :nv])
            assert h2[:nv].all() and not h2[nv:].any()
            K2[1, 0] = -7.0  # (a present row is not computed again)
            _smo._square_row(K2, h2, W[t], Gs[t], nv, 1, kr, acc)
            assert K2[1, 0] == -7.0


@pytest.mark.parametrize("regression", [False, True])
def test_solver_on_unpacked_kernels_is_the_packed_solver_bit_for_bit(regression):
    from test_mtmkl_smo_speed import _repeated_bucket

    from kernlearn.methods.mtmkl.mtfl import square_blocks

    _, Gp, W, _, labels, targets, Cs, sizes = _repeated_bucket(seed=3)
    y = targets if regression else labels
    first = _smo.repeated_rows(Gp, y, sizes)
    assert (first != np.arange(y.shape[1])).any()  # (merged rows on the path)
    Gs = square_blocks([Gp])[0]
    for C in (Cs, 0.3 * Cs):
        cold = _smo.smo_buckets(None, y, sizes, C, regression, 0.1, tol=1e-8,
                                return_face_steps=True, packed=(W, Gp, first))
        sq = _smo.smo_buckets(None, y, sizes, C, regression, 0.1, tol=1e-8,
                              return_face_steps=True, packed=(W, Gp, first, Gs))
        assert cold[4].sum() > 0 and cold[2].sum() > 0  # (face steps and pair updates)
        for a, b in zip(cold, sq):
            np.testing.assert_array_equal(a, b)
        # warm, at moved weights (the mirror descent's next evaluation)
        W2 = W * np.random.default_rng(1).uniform(0.8, 1.2, size=W.shape)
        warm = [_smo.smo_buckets(None, y, sizes, C, regression, 0.1, tol=1e-8,
                                 beta0=cold[0], packed=packed)
                for packed in ((W2, Gp, first), (W2, Gp, first, Gs))]
        for a, b in zip(*warm):
            np.testing.assert_array_equal(a, b)


def test_unpacked_blocks_past_their_budget_are_not_made(monkeypatch):
    from kernlearn.methods.mtmkl import mtfl

    rng = np.random.default_rng(6)
    _, Gp_small, _ = packed_bucket(rng, [12, 10], 2)
    _, Gp_big, _ = packed_bucket(rng, [40, 38], 2)
    monkeypatch.setattr(mtfl, "_SQUARE_BYTES", 2 * 2 * 40 * 40 * 8 - 1)
    small, big = mtfl.square_blocks([Gp_small, Gp_big])
    assert small.shape == (2, 2, 12, 12) and big is None
    # the bound is on all buckets together (many buckets each under it)
    monkeypatch.setattr(mtfl, "_SQUARE_BYTES", 2 * 2 * 12 * 12 * 8 + 100)
    first, second = mtfl.square_blocks([Gp_small, Gp_small])
    assert first is not None and second is None


def test_cross_validation_reads_unpacked_kernels_once_per_fold(monkeypatch):
    """``MultitaskMKLClassifierCV`` unpacks each fold's kernels once for its C
    grid, hands them to every SVM solve, and its model is the one without
    them, bit for bit."""
    from kernlearn.methods.mtmkl import fit as fit_mod

    X, y, t = three_tasks(seed=4)
    made, seen = [], []
    real_sq, real_smo = fit_mod.square_blocks, _smo.smo_buckets

    def counted(grams_tm):
        made.append(len(grams_tm))
        return real_sq(grams_tm)

    def spy(*args, packed=None, **kw):
        seen.append(packed is not None and len(packed) == 4 and packed[3] is not None)
        return real_smo(*args, packed=packed, **kw)

    monkeypatch.setattr(fit_mod, "square_blocks", counted)
    monkeypatch.setattr(_smo, "smo_buckets", spy)
    ours = MultitaskMKLClassifierCV(cv=3, max_iter=30).fit(X, y, task_index=t)
    assert len(made) == 3 + 1  # (once per fold for its 3 C, once for the refit)
    assert seen and all(seen)
    monkeypatch.setattr(fit_mod, "square_blocks", lambda g: [None] * len(g))
    seen.clear()
    ref = MultitaskMKLClassifierCV(cv=3, max_iter=30).fit(X, y, task_index=t)
    assert seen and not any(seen)
    assert ours.C_ == ref.C_
    for key, val in ref.cv_results_.items():
        np.testing.assert_array_equal(ours.cv_results_[key], val)
    np.testing.assert_array_equal(ours.decision_function(X + 0.1, task_index=t),
                                  ref.decision_function(X + 0.1, task_index=t))
    np.testing.assert_array_equal(ours.kernel_weights_, ref.kernel_weights_)


@pytest.mark.parametrize("regression", [False, True])
def test_violator_from_the_update_pass_is_the_own_scan_bit_for_bit(regression,
                                                                   monkeypatch):
    """The maximal violator taken from the previous pair update's gradient pass
    is the one a scan of its own finds: the same path (pair updates, face
    steps, shrinking), duals and biases, bit for bit, cold and warm."""
    from test_mtmkl_smo_speed import _survey_bucket

    K, labels, targets, sizes = _survey_bucket(m=300)
    y = targets if regression else labels
    K2 = 0.8 * K + 0.2 * K * K
    runs = []
    for fused in (True, False):
        monkeypatch.setattr(_smo, "_FUSED_SCAN", fused)
        cold = _smo.smo_buckets(K, y, sizes, 10.0, regression, 0.1, tol=1e-8,
                                return_face_steps=True)
        warm = _smo.smo_buckets(K2, y, sizes, 10.0, regression, 0.1, tol=1e-8,
                                beta0=cold[0], return_face_steps=True)
        runs.append((cold, warm))
    # (past libsvm's shrinking period, min(rows, 1000) pair updates, with face steps)
    assert runs[0][0][2].max() > sizes.max() and runs[0][0][4].min() > 0
    for one, other in zip(*runs):
        for a, b in zip(one, other):
            np.testing.assert_array_equal(a, b)
