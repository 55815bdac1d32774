"""The proximal Newton master of FGM: block minimiser, agreement with cvxpy and APG."""

import numpy as np
import pytest
from scipy.optimize import minimize

from kernlearn.losses import get_loss, weighted
from kernlearn.penalties import SquaredGroupL1
from kernlearn.solvers import APG, Problem
from kernlearn.solvers.prox_newton import ProxNewton, block_minimiser

LOSSES = ["squared_hinge", "logistic", "square"]


def _solve(solver, A, y, loss, pen, C, indptr, fit_intercept=True, warm=None):
    return solver.solve(Problem(A, y, weighted(loss, C=C), pen, indptr, fit_intercept), warm)


def _block_objective(v, H, c, alpha, S):
    v = v.reshape(c.shape)
    quad = sum(c[k] @ v[k] + 0.5 * v[k] @ H[k] @ v[k] for k in range(len(c)))
    return quad + 0.5 * alpha * (S + np.linalg.norm(v)) ** 2


@pytest.mark.parametrize("S", [0.0, 0.7, 3.0, 50.0])
def test_block_minimiser_is_the_minimiser(S, rng):
    K, r = 2, 3
    H = np.stack([(lambda G: G @ G.T)(rng.standard_normal((r, r))) for _ in range(K)])
    H[1, :, :] *= 0.1  # different curvature per output; the second nearly flat
    c = rng.standard_normal((K, r)) * 3
    alpha = 1.3
    v = block_minimiser(H, c, alpha, S)
    best = min(
        (minimize(_block_objective, x0, args=(H, c, alpha, S), method="Nelder-Mead",
                  options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 40000})
         for x0 in (np.zeros(K * r), v.ravel() + 0.1, rng.standard_normal(K * r))),
        key=lambda res: res.fun,
    )
    assert _block_objective(v, H, c, alpha, S) <= best.fun + 1e-9
    if np.linalg.norm(c) <= alpha * S:
        assert np.all(v == 0)
    else:
        # Optimality: H_k v_k + c_k + alpha (S + ||v||) v_k / ||v|| = 0.
        nv = np.linalg.norm(v)
        for k in range(K):
            np.testing.assert_allclose(H[k] @ v[k] + c[k] + alpha * (S + nv) * v[k] / nv,
                                       0, atol=1e-8)


def test_block_minimiser_zero_iff_dual_norm_below_level(rng):
    H = np.eye(2)[None] * 2.0
    c = np.array([[0.3, 0.4]])  # ||c|| = 0.5
    assert np.all(block_minimiser(H, c, 1.0, 0.5) == 0)
    assert np.linalg.norm(block_minimiser(H, c, 1.0, 0.49)) > 0


def _problem(rng, n=80, p=9, K=1, dup=False):
    A = rng.standard_normal((n, p))
    W = rng.standard_normal((p, K))
    Y = np.sign(A @ W + 0.5 * rng.standard_normal((n, K)))
    indptr = np.array([0, 4, 7, 9])
    if dup:
        # Feature 0 and 5 re-selected in a third group, as FGM's worst case may do.
        A = np.hstack([A, A[:, [0, 5]]])
        indptr = np.array([0, 4, 9, 11])
    return A, Y, indptr


def _cvxpy_objective(A, Y, indptr, loss, C, fit_intercept):
    cp = pytest.importorskip("cvxpy")
    n, p = A.shape
    K = Y.shape[1]
    W = cp.Variable((p, K))
    b = cp.Variable(K) if fit_intercept else np.zeros(K)
    M = A @ W + (cp.reshape(b, (1, K), order="C") if fit_intercept else 0)
    if loss == "squared_hinge":
        data = 0.5 * cp.sum_squares(cp.pos(1 - cp.multiply(Y, M)))
    elif loss == "logistic":
        data = cp.sum(cp.logistic(-cp.multiply(Y, M)))
    else:
        data = 0.5 * cp.sum_squares(Y - M)
    norms = sum(cp.norm(W[a:e, :], "fro") for a, e in zip(indptr[:-1], indptr[1:]))
    prob = cp.Problem(cp.Minimize(C * data + 0.5 * cp.square(norms)))
    try:
        prob.solve()
    except cp.error.SolverError:
        prob.solve(solver=cp.SCS, eps=1e-10, max_iters=200_000)
    return prob.value


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("K", [1, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_prox_newton_matches_cvxpy(name, K, fit_intercept, rng):
    A, Y, indptr = _problem(rng, K=K)
    C = 0.7
    res = _solve(ProxNewton(), A, Y if K > 1 else Y[:, 0], get_loss(name), SquaredGroupL1(),
                 C, indptr, fit_intercept)
    ref = _cvxpy_objective(A, Y, indptr, name, C, fit_intercept)
    assert res.converged
    assert abs(res.state.objective - ref) / ref < 1e-6


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("dup", [False, True])
def test_prox_newton_agrees_with_apg(name, dup, rng):
    A, Y, indptr = _problem(rng, n=150, dup=dup)
    y = Y[:, 0]
    pn = _solve(ProxNewton(), A, y, get_loss(name), SquaredGroupL1(), 2.0, indptr)
    apg = _solve(APG(tol=1e-13, max_iter=200_000), A, y, get_loss(name), SquaredGroupL1(),
                 2.0, indptr)
    assert pn.converged and pn.n_iter < 30
    Fp, Fa = pn.state.objective, apg.state.objective
    assert Fp <= Fa * (1 + 1e-7)
    assert abs(Fp - Fa) / Fa < 1e-6
    # The margins it reports are those of its coefficients.
    np.testing.assert_allclose(pn.state.margin, A @ pn.coef + pn.intercept, atol=1e-10)


def test_prox_newton_objective_decreases_monotonically(rng):
    A, Y, indptr = _problem(rng, n=300, K=2, dup=True)
    res = _solve(ProxNewton(), A, Y, get_loss("squared_hinge"), SquaredGroupL1(), 5.0,
                 indptr)
    obj = res.history.as_dict()["objective"]
    assert np.all(np.diff(obj) <= 1e-12 * obj[:-1])


def test_prox_newton_warm_start_is_no_worse(rng):
    A, Y, indptr = _problem(rng, n=300)
    loss, pen = get_loss("logistic"), SquaredGroupL1()
    cold = _solve(ProxNewton(), A, Y[:, 0], loss, pen, 1.0, indptr)
    warm = _solve(ProxNewton(), A, Y[:, 0], loss, pen, 1.0, indptr, warm=cold.state)
    assert warm.n_iter <= 2
    assert warm.state.objective <= cold.state.objective * (1 + 1e-12)


def test_sparse_and_dense_hessians_agree(rng):
    import scipy.sparse as sp

    from kernlearn.solvers.prox_newton import _Hessians

    A = sp.random(300, 12, density=0.2, random_state=0, format="csc")
    D = np.abs(rng.standard_normal((300, 3)))
    D[rng.random((300, 3)) < 0.4] = 0.0  # squared hinge: inactive rows
    Hs, hbs, hbbs = _Hessians(A)(D)
    Hd, hbd, hbbd = _Hessians(A.toarray())(D)
    ref = np.einsum("ik,ij,il->kjl", D, A.toarray(), A.toarray())
    np.testing.assert_allclose(Hs, ref, atol=1e-12)
    np.testing.assert_allclose(Hd, ref, atol=1e-12)
    np.testing.assert_allclose(hbs, hbd, atol=1e-12)
    np.testing.assert_allclose(hbbs, hbbd)


def test_dense_hessians_follow_the_curvatures(rng):
    # The Hessians of an unchanged D are reused (square loss): a new D must
    # give new ones, and rows with zero curvature must not count.
    from kernlearn.solvers.prox_newton import _Hessians

    A = rng.standard_normal((200, 7))
    hess = _Hessians(np.asfortranarray(A))
    for _draw in range(2):
        D = np.abs(rng.standard_normal((200, 2)))
        D[rng.random((200, 2)) < 0.5] = 0.0
        for _ in range(2):  # the second call reads the stored Hessians
            H, hb, hbb = hess(D)
            np.testing.assert_allclose(H, np.einsum("ik,ij,il->kjl", D, A, A), rtol=1e-12)
            np.testing.assert_allclose(hb, D.T @ A, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(hbb, D.sum(0))
            assert np.array_equal(H, np.swapaxes(H, 1, 2))  # exactly symmetric


def test_prox_newton_refuses_a_penalty_it_does_not_solve(rng):
    # Its block minimiser is that of the squared group-l1 penalty: given the
    # group lasso it used to return the squared problem's solution (objective
    # 19.229 where APG reaches 19.155), so it must refuse, naming the penalty.
    from kernlearn.penalties import GroupL1L2

    A, Y, indptr = _problem(rng)
    with pytest.raises(ValueError, match="ProxNewton solves only .*SquaredGroupL1.*GroupL1L2"):
        _solve(ProxNewton(), A, Y[:, 0], get_loss("logistic"), GroupL1L2(1.0), 1.0, indptr)


def test_prox_newton_refuses_a_loss_without_hessian(rng):
    A, Y, indptr = _problem(rng)
    with pytest.raises(ValueError, match=r"loss method\(s\) \['hess_margin'\]"):
        _solve(ProxNewton(), A, Y[:, 0], get_loss("hinge"), SquaredGroupL1(), 1.0, indptr)


def _low_noise_problem(seed, K, name):
    """Near noise-free targets at ``C=10`` with a third group repeating features.

    The regime of issue 24 beyond the square loss of one output: the
    subproblem is flat along moving weight between the copies, and its
    support-Newton steps overshoot (searched further by
    ``_short_newton_step``).
    """
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((200, 8))
    M = X[:, :5] @ rng.uniform(1.0, 2.0, size=(5, K))
    noise = 0.01 * rng.standard_normal((200, K))
    Y = M + noise if name == "square" else np.sign(M - np.median(M, 0) + noise)
    A = X[:, [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 5]]
    return A, Y, np.array([0, 4, 8, 12])


@pytest.mark.parametrize("name, K", [("square", 3), ("logistic", 1), ("squared_hinge", 3)])
def test_low_noise_repeated_features_reach_cvxpy(name, K, monkeypatch):
    """Audit 101: the further search of a refused Newton step, beyond one output's square loss.

    The subproblem runs as Python (its compiled helpers as they are) so that
    the searches it keeps are counted: the regime must use them.
    """
    import kernlearn.solvers.prox_newton as pn

    A, Y, indptr = _low_noise_problem(0, K, name)
    kept = []
    search = pn._short_newton_step

    def counted(*args):
        out = search(*args)
        kept.append(out[2])
        return out

    monkeypatch.setattr(pn, "_short_newton_step", counted)
    monkeypatch.setattr(pn, "_subproblem", pn._subproblem.py_func)
    C = 10.0
    res = _solve(ProxNewton(), A, Y if K > 1 else Y[:, 0], get_loss(name), SquaredGroupL1(),
                 C, indptr)
    assert sum(kept) > 0
    ref = _cvxpy_objective(A, Y, indptr, name, C, True)
    assert res.converged
    assert res.state.objective <= ref * (1 + 1e-8)
    assert abs(res.state.objective - ref) / ref < 1e-7
