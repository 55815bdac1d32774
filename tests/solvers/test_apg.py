"""APG master solver against cvxpy, warm starts and cached products."""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn.losses import get_loss, weighted
from kernlearn.penalties import L1, GroupL1L2, SquaredGroupL1
from kernlearn.solvers import APG, APGState, Problem, check_compatible
from kernlearn.solvers.apg import _GroupBlocks

INDPTR = np.array([0, 3, 5, 8])


def _problem(rng, n=40, p=8):
    A = rng.standard_normal((n, p))
    y = np.sign(A @ rng.standard_normal(p) + 0.3 * rng.standard_normal(n))
    return A, y


def _solve(solver, A, y, loss, pen, C=1.0, indptr=INDPTR, warm=None):
    return solver.solve(Problem(A, y, weighted(loss, C=C), pen, indptr), warm)


def _cvx_objective(loss, A, y, C, w, b):
    m = A @ w + b
    if loss == "squared_hinge":
        return C * 0.5 * cp.sum_squares(cp.pos(1 - cp.multiply(y, m)))
    if loss == "logistic":
        return C * cp.sum(cp.logistic(-cp.multiply(y, m)))
    return C * 0.5 * cp.sum_squares(y - m)


def _cvx_penalty(pen, w):
    norms = [cp.norm(w[a:b]) for a, b in zip(INDPTR[:-1], INDPTR[1:])]
    if isinstance(pen, SquaredGroupL1):
        return 0.5 * pen.alpha * cp.square(sum(norms))
    if isinstance(pen, GroupL1L2):
        return pen.alpha * sum(norms)
    return pen.alpha * cp.norm1(w)


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic", "square"])
@pytest.mark.parametrize("pen", [SquaredGroupL1(1.0), GroupL1L2(2.0), L1(2.0)], ids=repr)
def test_apg_matches_cvxpy(loss, pen, rng):
    # tight tolerance; the l1 case uses the uncached path (prox is not groupwise)
    A, y = _problem(rng)
    C = 0.7
    res = _solve(APG(tol=1e-12, max_iter=5000), A, y, get_loss(loss), pen, C)
    w, b = cp.Variable(A.shape[1]), cp.Variable()
    prob = cp.Problem(cp.Minimize(_cvx_objective(loss, A, y, C, w, b) + _cvx_penalty(pen, w)))
    prob.solve(solver=cp.CLARABEL)
    ours = res.state.objective
    assert abs(ours - prob.value) / abs(prob.value) < 1e-6
    assert ours <= prob.value * (1 + 1e-6)


def test_objective_history_is_monotone_with_restart(rng):
    A, y = _problem(rng, 80, 8)
    res = _solve(APG(tol=1e-10, max_iter=3000), A, y, get_loss("logistic"),
                 SquaredGroupL1(1.0), C=2.0)
    obj = res.history.as_dict()["objective"]
    assert np.all(np.diff(obj) <= 1e-9 * np.abs(obj[:-1]))
    assert res.converged


def test_warm_start_is_no_worse(rng):
    A, y = _problem(rng, 60, 8)
    loss, pen = get_loss("squared_hinge"), SquaredGroupL1(1.0)
    cold = _solve(APG(tol=1e-8), A, y, loss, pen)
    warm = _solve(APG(tol=1e-8), A, y, loss, pen, warm=cold.state)
    assert warm.n_iter <= cold.n_iter
    assert warm.state.objective <= cold.state.objective * (1 + 1e-8)


def test_sparse_and_dense_agree(rng):
    A, y = _problem(rng)
    A[np.abs(A) < 0.8] = 0
    loss, pen = get_loss("squared_hinge"), SquaredGroupL1(1.0)
    d = _solve(APG(tol=1e-10, max_iter=5000), A, y, loss, pen)
    s = _solve(APG(tol=1e-10, max_iter=5000), sp.csc_matrix(A), y, loss, pen)
    np.testing.assert_allclose(d.coef, s.coef, atol=1e-6)


def group_products(A, x, indptr):
    # the per-group products [A_1 x_1, ..., A_T x_T] as APG forms them
    return _GroupBlocks(A, indptr).products(x)


def test_group_products(rng):
    A = rng.standard_normal((5, 8))
    x = rng.standard_normal(8)
    Z = group_products(A, x, INDPTR)
    for t, (a, b) in enumerate(zip(INDPTR[:-1], INDPTR[1:])):
        np.testing.assert_allclose(Z[:, t], A[:, a:b] @ x[a:b])
    np.testing.assert_allclose(group_products(sp.csr_matrix(A), x, INDPTR), Z)


def test_check_compatible_names_missing_method():
    class NoProx:
        def value(self, w, indptr=None):
            return 0.0

    with pytest.raises(ValueError, match=r"penalty method\(s\) \['prox'\]"):
        check_compatible(APG(), get_loss("square"), NoProx())


def test_apg_with_more_than_256_groups_matches_cvxpy(rng):
    # Beyond _GroupBlocks._MAX_LOOP groups the per-group products go through a
    # sparse block-diagonal product instead of a loop; same problem, same answer.
    n, T = 30, _GroupBlocks._MAX_LOOP + 44
    sizes = 1 + (np.arange(T) % 2)
    indptr = np.r_[0, np.cumsum(sizes)]
    A = rng.standard_normal((n, indptr[-1]))
    A /= np.linalg.norm(A, axis=0)
    y = np.sign(A[:, :5].sum(axis=1) + 0.1)
    x = rng.standard_normal(indptr[-1])
    for M in (A, sp.csc_matrix(A)):
        Z = group_products(M, x, indptr)
        ref = np.column_stack([A[:, a:b] @ x[a:b] for a, b in zip(indptr[:-1], indptr[1:])])
        np.testing.assert_allclose(Z, ref, atol=1e-12)
    pen, loss, C = SquaredGroupL1(1.0), get_loss("squared_hinge"), 5.0
    res = _solve(APG(tol=1e-12, max_iter=20000), A, y, loss, pen, C, indptr)
    w, b = cp.Variable(A.shape[1]), cp.Variable()
    norms = [cp.norm(w[a:e]) for a, e in zip(indptr[:-1], indptr[1:])]
    prob = cp.Problem(cp.Minimize(_cvx_objective("squared_hinge", A, y, C, w, b)
                                  + 0.5 * cp.square(sum(norms))))
    prob.solve(solver=cp.CLARABEL)
    assert abs(res.state.objective - prob.value) / prob.value < 1e-6
    assert res.state.objective <= prob.value * (1 + 1e-6)


def test_warm_start_from_another_problem_reaches_the_same_optimum(rng):
    # Warm-starting from a solution on other data is only a starting point.
    A, y = _problem(rng, 60, 8)
    A2, y2 = _problem(rng, 60, 8)
    loss, pen = get_loss("logistic"), SquaredGroupL1(1.0)
    other = _solve(APG(tol=1e-10, max_iter=5000), A, y, loss, pen)
    cold = _solve(APG(tol=1e-10, max_iter=5000), A2, y2, loss, pen)
    warm = _solve(APG(tol=1e-10, max_iter=5000), A2, y2, loss, pen,
                  warm=APGState(other.coef, other.intercept, tau=other.state.tau))
    assert warm.state.objective == pytest.approx(cold.state.objective, rel=1e-8)
    np.testing.assert_allclose(warm.coef, cold.coef, atol=1e-5)
