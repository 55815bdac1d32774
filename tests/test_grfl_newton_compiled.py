"""GrFL's compiled Newton iteration against its NumPy reference, bit for bit.

The compiled path (:class:`~kernlearn.solvers.grfl_newton._CompiledOps`)
must take exactly the steps of the NumPy one: the inner solver's discrete
choices (sweeps, kept extrapolations) flip under a rounding change, and a
flipped master moves the whole GrFL path.  So these tests ask for equality,
not closeness.
"""

import numba
import numpy as np
import pytest

import kernlearn.solvers.grfl_newton as gn
from kernlearn.losses import Logistic, Square, SquaredHinge, WeightedLoss
from kernlearn.penalties import L1, GroupL1L2, L1Linf, PerTaskL1Lq
from kernlearn.solvers._dirty import (
    DirtyProblem,
    _power_iterations_numpy,
    top_eigenvalue_bound,
)
from kernlearn.solvers._dirty_kernels import _power_iterations
from kernlearn.solvers._grfl_newton_kernels import (
    _gradients_kkt,
    _kkt_residual,
    _loss_value,
    _pairwise_sum,
)
from kernlearn.solvers.admm import pad_state
from kernlearn.solvers.grfl_newton import GrFLNewton, _CompiledOps, _Hessians


@pytest.fixture
def rng():
    return np.random.default_rng(1)


@numba.njit
def _numba_dot(A, B):
    return np.dot(A, B)


def _same_blas():
    """Whether compiled code's products (numba calls SciPy's BLAS) are NumPy's
    bit for bit, which the compiled path's equality rests on (true of the
    wheels this project pins; not of every BLAS pairing)."""
    r = np.random.default_rng(0)
    A, B = np.asfortranarray(r.normal(size=(97, 41))), r.normal(size=(97, 3))
    return np.array_equal(A.T @ B, _numba_dot(A.T, B))


same_blas = pytest.mark.skipif(not _same_blas(), reason="NumPy and SciPy use BLAS "
                               "libraries that round differently")


def _data(rng, loss, n, p, T):
    """Unit-norm Fourier-like pairs (correlated, as GrFL's) in a column-major
    buffer, as GrFL holds them, and targets for ``loss``."""
    X = rng.normal(size=(n, 3))
    Om = rng.normal(size=(3, p // 2))
    Phi = np.empty((n, p), order="F")
    Phi[:, 0::2], Phi[:, 1::2] = np.cos(X @ Om), np.sin(X @ Om)
    Phi /= np.linalg.norm(Phi, axis=0)
    F = np.column_stack([np.sin(X[:, 0] + t) + X[:, 1] ** 2 for t in range(T)])
    F += 0.2 * rng.normal(size=(n, T))
    Y = F if isinstance(loss, Square) else np.where(F > np.median(F, axis=0), 1.0, -1.0)
    return Phi, Y


def _solve(solver, P, state, compiled):
    solver._compiled_path = compiled
    try:
        return solver.solve(P, state)
    finally:
        del solver._compiled_path


def _assert_same(a, b):
    for x, y in zip((*a.coef, a.intercept, a.state.margins),
                    (*b.coef, b.intercept, b.state.margins)):
        np.testing.assert_array_equal(x, y)
    assert a.state.objective == b.state.objective
    assert a.state.kkt == b.state.kkt
    assert (a.n_iter, a.converged) == (b.n_iter, b.converged)
    np.testing.assert_array_equal(a.history.as_dict()["sweeps"], b.history.as_dict()["sweeps"])


CASES = [
    (Square(), GroupL1L2(0.02), None, True, 1),
    (Square(), GroupL1L2(0.05), 0.08, True, 2),
    (Square(), L1Linf(0.05), None, False, 1),
    (SquaredHinge(), GroupL1L2(0.05), None, True, 1),
    (SquaredHinge(), L1(0.03), 0.1, True, 3),
    (SquaredHinge(), PerTaskL1Lq(0.05), None, False, 3),
]
IDS = ["square-l1l2", "square-l1l2-shared-2tasks", "square-l1linf-nobias", "sqhinge-l1l2",
       "sqhinge-l1-shared-3tasks", "sqhinge-pertask-nobias-3tasks"]


@same_blas
@pytest.mark.parametrize("loss, pen, lam_s, fit_b, T", CASES, ids=IDS)
@pytest.mark.parametrize("gram", [True, False], ids=["gram", "no-gram"])
def test_compiled_iteration_takes_the_numpy_steps(loss, pen, lam_s, fit_b, T, gram, rng,
                                                  monkeypatch):
    n, q, p = 70, 24, 40  # more columns than rows at the end, as GrFL meets them
    Phi, Y = _data(rng, loss, n, p, T)
    calls = {"step": 0}
    step = gn._newton_step

    def spy(*args):
        calls["step"] += 1
        return step(*args)

    monkeypatch.setattr(gn, "_newton_step", spy)

    def problem(k):
        return DirtyProblem(Phi[:, :k], Y, loss, pen, None if lam_s is None else L1(lam_s),
                            indptr=np.arange(0, k + 1, 2), fit_intercept=fit_b,
                            gram=Phi[:, :k].T @ Phi[:, :k] if gram else None)

    solver = GrFLNewton(tol=1e-6)
    P0 = problem(q)
    assert _CompiledOps.applies(P0, solver._inner_constants(P0))
    first = [_solve(solver, problem(q), None, c) for c in (True, False)]
    _assert_same(*first)
    assert calls["step"] >= 1  # (the compiled run did use the compiled step)
    # the warm start GrFL gives: columns appended, the Hessians and margins kept
    state = pad_state(first[0].state, p, T)
    calls["step"] = 0
    second = [_solve(solver, problem(p), state, c) for c in (True, False)]
    _assert_same(*second)
    assert calls["step"] >= 1
    assert second[0].converged and np.any(second[0].coef[0][q:] != 0)
    # its Hessians (appended by the compiled kernel) are the NumPy ones
    np.testing.assert_array_equal(second[0].state.hess["H"], second[1].state.hess["H"])


@same_blas
@pytest.mark.parametrize("dense", [True, False], ids=["dense-curvature", "sparse-curvature"])
def test_compiled_column_append_equals_the_numpy_one(dense, rng):
    n, q, p, T = 50, 10, 16, 2
    Phi, Y = _data(rng, SquaredHinge(), n, p, T)
    P_old = DirtyProblem(Phi[:, :q], Y, SquaredHinge(), GroupL1L2(0.1),
                         indptr=np.arange(0, q + 1, 2))
    D = (rng.random((n, T)) < (0.9 if dense else 0.3)) * 1.0
    old = _Hessians(P_old, 1e-3).start(D, None)
    state = type("S", (), {"hess": old.state()})()
    P = DirtyProblem(Phi[:, :p], Y, SquaredHinge(), GroupL1L2(0.1),
                     indptr=np.arange(0, p + 1, 2))
    got = _Hessians(P, 1e-3, compiled=True).start(D, state)
    want = _Hessians(P, 1e-3, compiled=False).start(D, state)
    assert got.compiled and not want.compiled
    np.testing.assert_array_equal(got.H, want.H)
    # and it is the Hessian: A' diag(d) A with A = [Phi 1]
    A = np.column_stack([Phi[:, :p], np.ones(n)])
    for t in range(T):
        np.testing.assert_allclose(got.H[t], A.T @ (D[:, t, None] * A), rtol=1e-12,
                                   atol=1e-12)


@same_blas
@pytest.mark.parametrize("change", ["up", "mixed", "many"])
def test_compiled_rank_updates_equal_the_numpy_ones(change, rng):
    # rows entering the margin (steps up: the S'S branch), entering and
    # leaving (signed steps: the general product), more than a third (rebuild)
    n, p, T = 60, 14, 2
    Phi, Y = _data(rng, SquaredHinge(), n, p, T)
    P = DirtyProblem(Phi, Y, SquaredHinge(), GroupL1L2(0.1), indptr=np.arange(0, p + 1, 2))
    D0 = (rng.random((n, T)) < 0.5) * 1.0
    D1 = D0.copy()
    rows = rng.choice(n, size=30 if change == "many" else 6, replace=False)
    D1[rows, 0] = 1.0 if change == "up" else 1.0 - D1[rows, 0]
    D1[rows[:2], 1] = 1.0 - D1[rows[:2], 1]
    got = _Hessians(P, 1e-3, compiled=True).start(D0, None)
    want = _Hessians(P, 1e-3, compiled=False).start(D0, None)
    got.update(D1)
    want.update(D1)
    assert got.compiled and got.version == want.version == 2
    np.testing.assert_array_equal(got.H, want.H)
    np.testing.assert_array_equal(got.Dh, want.Dh)
    A = np.column_stack([Phi, np.ones(n)])
    for t in range(T):
        np.testing.assert_allclose(got.H[t], A.T @ (D1[:, t, None] * A), rtol=1e-12,
                                   atol=1e-12)


def test_compiled_path_is_left_for_what_it_does_not_cover(rng):
    n, p, T = 40, 8, 2
    Phi, Y = _data(rng, SquaredHinge(), n, p, T)
    inner = GrFLNewton._inner_constants
    kw = {"indptr": np.arange(0, p + 1, 2)}
    common = DirtyProblem(Phi, Y, SquaredHinge(), GroupL1L2(0.1), **kw)
    assert _CompiledOps.applies(common, inner(common))
    others = [
        DirtyProblem(Phi, Y, Logistic(), GroupL1L2(0.1), **kw),  # no compiled loss
        DirtyProblem(Phi, Y, WeightedLoss(SquaredHinge(), np.ones(n)), GroupL1L2(0.1), **kw),
        DirtyProblem(Phi, Y[:, 0], SquaredHinge(), GroupL1L2(0.1),  # rows per task
                     task_rows=[np.arange(0, n, 2), np.arange(1, n, 2)], **kw),
        DirtyProblem(Phi, Y, SquaredHinge(), GroupL1L2(0.1), L1Linf(0.1), **kw),  # shared l-inf
    ]
    for P in others:
        assert not _CompiledOps.applies(P, inner(P))
        res = GrFLNewton(tol=1e-8).solve(P)  # the NumPy iteration, still solving it
        assert res.converged and P.kkt(*res.coef, res.intercept) <= 1e-8


@pytest.mark.parametrize("n", [0, 1, 3, 7, 8, 9, 15, 16, 17, 127, 128, 129, 130, 255, 256,
                               257, 1000, 1031, 4096, 10007, 65537])
def test_pairwise_sum_is_numpys_sum_bit_for_bit(n, rng):
    a = rng.normal(size=n) * np.exp(rng.normal(size=n) * 5)  # wide magnitudes
    assert _pairwise_sum(a, 0, n) == a.sum()
    if n > 10:  # a slice starting inside the array
        assert _pairwise_sum(a, 3, n - 7) == a[3:n - 4].sum()


@same_blas
@pytest.mark.parametrize("loss, code", [(Square(), 0), (SquaredHinge(), 1)],
                         ids=["square", "sqhinge"])
@pytest.mark.parametrize("T", [1, 2, 9])
def test_compiled_loss_gradients_and_kkt_are_the_problems(loss, code, T, rng):
    n, p = 203, 30
    Phi, Y = _data(rng, loss, n, p, T)
    P = DirtyProblem(Phi, Y, loss, GroupL1L2(0.2), L1(0.3), indptr=np.arange(0, p + 1, 2))
    W, ws, b = rng.normal(size=(p, T)), rng.normal(size=p), rng.normal(size=T)
    W[4:10] = 0.0
    M = P.margins(W, ws, b)
    assert _loss_value(M, P.Ys, code) == P.loss_value(M)
    gW, gws, gb = P.gradients(M)
    inner = GrFLNewton._inner_constants(P)
    indptr, kind, alpha, alpha_s, shared, fit_b = inner
    got = _gradients_kkt(Phi, np.ascontiguousarray(P.Ys), M, code, W, ws, 0.01, indptr, kind,
                         alpha, alpha_s, shared, fit_b)
    for x, y in zip(got[:3], (gW, gws, gb)):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(got[4], loss.hess_margin(M, P.Ys))
    assert got[3] == _kkt_residual(W, ws, gW, gws, gb, 0.01, indptr, kind, alpha, alpha_s,
                                   shared, fit_b)
    assert got[3] / P.reg_scale() == pytest.approx(P.kkt(W, ws, b, M, step=0.01), rel=1e-12)


@same_blas
@pytest.mark.parametrize("spectrum", ["dominant", "gap", "flat"])
def test_compiled_power_iterations_equal_the_numpy_ones(spectrum, rng):
    k = 60
    lam = np.full(k, 10.0)
    if spectrum == "dominant":
        lam[-1] = 300.0
    elif spectrum == "gap":
        lam[-1] = 100.0
    else:
        lam = np.linspace(1.0, 100.0, k)
    Q, _ = np.linalg.qr(rng.normal(size=(k, k)))
    G = np.ascontiguousarray((Q * lam) @ Q.T)
    v0 = np.ones(k) / np.sqrt(k)
    c_code, c_u, c_v = _power_iterations(G, v0, 1e-6, 40)
    n_code, n_u, n_v = _power_iterations_numpy(G, v0, 1e-6, 40)
    assert c_code == n_code and c_u == n_u
    np.testing.assert_array_equal(c_v, n_v)
    for compiled in (True, False):
        u, _ = top_eigenvalue_bound(G, compiled=compiled)
        assert lam.max() <= u <= lam.max() * (1 + 2e-6) + 1e-12
