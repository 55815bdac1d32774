"""SimpleMKL master (MKL-FGM, paper 002 sec. 5.1): the MKL problem (29) solved by
reduced gradient reaches the optimum of FGM's squared group-l1 problem (31)."""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn.losses import get_loss, weighted
from kernlearn.penalties import GroupL1L2, SquaredGroupL1
from kernlearn.penalties._prox import group_norms
from kernlearn.solvers import APG, APGState, Problem, ProxNewton, ProxNewtonState
from kernlearn.solvers.simplemkl import (
    SimpleMKL,
    SimpleMKLState,
    _SVM,
    descent_direction,
    mkl_dual,
)

from .solver_cases import C, INDPTR, make_problem, reference_objective

ALPHA = 0.5


def _problem(rng, loss="squared_hinge", n=30, fit_intercept=True, container=np.asarray,
             sample_weight=None):
    """Tiny FGM master: 7 columns in 3 groups, labels from a noisy linear model."""
    A = rng.standard_normal((n, INDPTR[-1]))
    A /= np.linalg.norm(A, axis=0)
    if loss == "square":
        y = A @ rng.standard_normal(INDPTR[-1]) + 0.3 * rng.standard_normal(n)
    else:
        y = np.sign(A @ rng.standard_normal(INDPTR[-1]) + 0.3 * rng.standard_normal(n))
    return Problem(container(A), y, weighted(get_loss(loss), sample_weight, C=C),
                   SquaredGroupL1(ALPHA), INDPTR, fit_intercept)


def _svm_dual_squared_hinge(problem, margin):
    """The l2-loss SVM dual of the MKL problem, written out (paper 002, eqs. 29, 35).

    With ``alpha_i = C xi_i`` (Theorem 4):
    ``sum alpha - alpha'alpha / (2C) - max_t ||X_t'(alpha * y)||^2 / (2 lambda)``.
    """
    A, y = np.asarray(problem.A), problem.y
    a = C * np.maximum(0.0, 1.0 - y * margin)
    z = A.T @ (a * y)
    zmax = max(np.sum(z[s:e] ** 2) for s, e in zip(INDPTR[:-1], INDPTR[1:]))
    return a.sum() - a @ a / (2 * C) - zmax / (2 * ALPHA), a


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic", "square"])
def test_reaches_the_cvxpy_optimum(loss, rng):
    problem = make_problem(Problem, loss, SquaredGroupL1(ALPHA), rng)
    res = SimpleMKL(tol=1e-7).solve(problem)
    assert res.converged
    ref = reference_objective(problem, loss)
    assert res.state.objective == pytest.approx(ref, rel=1e-6)
    assert res.state.objective >= ref - 1e-7 * abs(ref)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("loss", ["squared_hinge", "logistic", "square"])
def test_same_objective_as_apg_and_prox_newton(loss, fit_intercept, rng):
    problem = _problem(rng, loss, fit_intercept=fit_intercept)
    mkl = SimpleMKL().solve(problem)
    apg = APG(tol=1e-10, max_iter=20000).solve(problem)
    newton = ProxNewton(tol=1e-12).solve(problem)
    assert mkl.converged
    for other in (apg, newton):
        assert mkl.state.objective == pytest.approx(other.state.objective, rel=1e-4)
    # the same point, not only the same value (the problem is strictly convex
    # in the margins; the optimum here is unique)
    np.testing.assert_allclose(mkl.coef, newton.coef, atol=1e-2)


def test_mu_is_on_the_simplex_and_the_group_norm_share(rng):
    problem = _problem(rng, n=60)
    res = SimpleMKL(tol=1e-8).solve(problem)
    mu = res.state.mu
    assert mu.shape == (len(INDPTR) - 1,)
    assert np.all(mu >= 0) and mu.sum() == pytest.approx(1.0, abs=1e-12)
    norms = group_norms(res.coef, INDPTR)
    np.testing.assert_allclose(mu, norms / norms.sum(), atol=1e-4)
    # and the share of the independent Newton solution
    ref = group_norms(ProxNewton(tol=1e-12).solve(problem).coef, INDPTR)
    np.testing.assert_allclose(mu, ref / ref.sum(), atol=1e-3)
    # w_t = mu_t X_t'(alpha * y) / lambda (Theorem 4's primal-dual link)
    _, a = _svm_dual_squared_hinge(problem, res.state.margin)
    np.testing.assert_allclose(res.coef, np.repeat(mu, np.diff(INDPTR))
                               * (problem.A.T @ (a * problem.y)) / ALPHA, atol=1e-8)


@pytest.mark.parametrize("tol", [1e-4, 1e-6])
def test_duality_gap_at_the_returned_point_is_below_tol(tol, rng):
    problem = _problem(rng, n=50)
    res = SimpleMKL(tol=tol).solve(problem)
    assert res.converged
    F = res.state.objective
    dual, a = _svm_dual_squared_hinge(problem, res.state.margin)
    # the dual point is feasible: the intercept's condition sum alpha_i y_i = 0
    assert abs(a @ problem.y) <= 1e-8 * a.sum()
    assert dual <= F + 1e-10  # weak duality
    assert F - dual <= tol * F
    assert res.state.gap <= tol * res.history.last("J")
    # the module's generic (conjugate-based) dual is the same number
    assert mkl_dual(problem, res.state.margin) == pytest.approx(dual, rel=1e-10)


def test_gap_and_iterations_shrink_with_tol(rng):
    problem = _problem(rng, n=50)
    loose, tight = SimpleMKL(tol=1e-3).solve(problem), SimpleMKL(tol=1e-8).solve(problem)
    ref = ProxNewton(tol=1e-13).solve(problem).state.objective
    assert tight.n_iter >= loose.n_iter
    assert tight.state.objective - ref <= 1e-8 * ref
    assert loose.state.objective - ref <= 1e-3 * ref


def test_svm_training_is_exact_and_gradient_is_dJ_dmu(rng):
    """Step 1 of SimpleMKL: J(mu) is the SVM optimum, dJ/dmu_t = -||z_t||^2 / (2 lambda)."""
    cp = pytest.importorskip("cvxpy")
    problem = _problem(rng, n=40)
    A, y = problem.A, problem.y
    svm = _SVM(A, y, problem.loss, ALPHA, INDPTR, True)
    mu = np.array([0.2, 0.5, 0.3])
    sol = svm.train(mu, np.zeros(A.shape[1]), 0.0)
    w, b = cp.Variable(A.shape[1]), cp.Variable()
    reg = sum(cp.sum_squares(w[s:e]) / m for s, e, m in zip(INDPTR[:-1], INDPTR[1:], mu))
    fit = 0.5 * C * cp.sum_squares(cp.pos(1 - cp.multiply(y, A @ w + b)))
    prob = cp.Problem(cp.Minimize(fit + 0.5 * ALPHA * reg))
    prob.solve(solver=cp.CLARABEL)
    assert sol["J"] == pytest.approx(prob.value, rel=1e-7)
    np.testing.assert_allclose(sol["w"], w.value, atol=1e-5)
    grad = -sol["zn2"] / (2 * ALPHA)
    # envelope theorem: also -lambda/2 ||w_t||^2 / mu_t^2
    np.testing.assert_allclose(grad, -0.5 * ALPHA * group_norms(sol["w"], INDPTR) ** 2
                               / mu ** 2, rtol=1e-8)
    h = 1e-6
    for t in range(3):
        e = np.zeros(3)
        e[t] = h
        Jp = svm.train(mu + e, sol["w"], sol["b"])["J"]
        Jm = svm.train(mu - e, sol["w"], sol["b"])["J"]
        assert (Jp - Jm) / (2 * h) == pytest.approx(grad[t], rel=1e-5)


def test_descent_direction_is_a_feasible_descent(rng):
    mu = np.array([0.5, 0.0, 0.3, 0.2, 0.0])
    grad = np.array([-1.0, -0.5, -2.0, -0.8, -3.0])
    D, k = descent_direction(mu, grad)
    assert k == 0
    assert D.sum() == pytest.approx(0.0, abs=1e-15)
    # a zero weight whose gradient is above the reference stays at zero
    assert D[1] == 0.0
    # one whose gradient is below it may grow
    assert D[4] == pytest.approx(2.0)
    np.testing.assert_allclose(D[[2, 3]], [1.0, -0.2])  # grad_k - grad_t
    assert grad @ D < 0
    # at a stationary point (equal gradients on the support) no descent is left
    D0, _ = descent_direction(np.array([0.6, 0.4, 0.0]), np.array([-1.0, -1.0, -0.5]))
    assert not np.any(D0 < 0)


def test_warm_start_from_own_state(rng):
    problem = _problem(rng, n=60)
    cold = SimpleMKL(tol=1e-7).solve(problem)
    warm = SimpleMKL(tol=1e-7).solve(problem, cold.state)
    assert warm.converged and warm.n_iter <= cold.n_iter
    assert warm.state.objective <= cold.state.objective * (1 + 1e-9)
    # a warm point without mu starts from its group-norm shares
    from_coef = SimpleMKL(tol=1e-7).solve(problem, SimpleMKLState(cold.coef, cold.intercept))
    assert from_coef.converged and from_coef.n_iter <= cold.n_iter


def test_fgm_style_warm_start_with_a_new_zero_group(rng):
    """FGM adds a group at zero to the last optimum: its weight must grow from mu = 0."""
    problem = _problem(rng, n=60)
    first = Problem(problem.A[:, :4], problem.y, problem.loss, problem.penalty,
                    INDPTR[:3], True)
    prev = SimpleMKL(tol=1e-8).solve(first)
    start = SimpleMKLState(np.concatenate([prev.coef, np.zeros(3)]), prev.intercept)
    res = SimpleMKL(tol=1e-8).solve(problem, start)
    ref = ProxNewton(tol=1e-12).solve(problem)
    assert res.converged
    assert res.state.objective == pytest.approx(ref.state.objective, rel=1e-6)
    assert res.state.mu[2] > 0 and group_norms(ref.coef, INDPTR)[2] > 0


def test_sparse_columns_and_sample_weights(rng):
    sw = rng.uniform(0.0, 2.0, 30)
    dense = _problem(np.random.default_rng(1), sample_weight=sw)
    csr = _problem(np.random.default_rng(1), sample_weight=sw, container=sp.csr_matrix)
    a, b = SimpleMKL(tol=1e-8).solve(dense), SimpleMKL(tol=1e-8).solve(csr)
    ref = ProxNewton(tol=1e-12).solve(dense)
    assert a.state.objective == pytest.approx(ref.state.objective, rel=1e-7)
    assert b.state.objective == pytest.approx(a.state.objective, rel=1e-9)


def test_unconverged_solve_says_so(rng):
    problem = _problem(rng, n=60)
    res = SimpleMKL(tol=1e-12, max_iter=1).solve(problem)
    assert not res.converged and res.n_iter == 1
    assert res.state.gap > 1e-12 * res.history.last("J")


def test_all_margins_beyond_the_hinge(rng):
    """A separable problem with a tiny loss weight: the intercept's curvature vanishes."""
    A = np.array([[3.0, 0.0], [0.0, 3.0], [-3.0, 0.0], [0.0, -3.0]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    problem = Problem(A, y, weighted(get_loss("squared_hinge"), C=100.0), SquaredGroupL1(1.0),
                      np.array([0, 1, 2]))
    res = SimpleMKL(tol=1e-8).solve(problem)
    ref = ProxNewton(tol=1e-13).solve(problem)
    assert res.converged
    assert res.state.objective == pytest.approx(ref.state.objective, rel=1e-6)
    np.testing.assert_allclose(res.state.mu, [0.5, 0.5], atol=1e-6)


def test_refuses_what_it_cannot_solve(rng):
    problem = _problem(rng)
    with pytest.raises(ValueError, match="GroupL1L2"):
        SimpleMKL().solve(Problem(problem.A, problem.y, problem.loss, GroupL1L2(0.5), INDPTR))
    with pytest.raises(ValueError, match="hess_margin"):
        SimpleMKL().solve(Problem(problem.A, problem.y, get_loss("hinge"),
                                  SquaredGroupL1(0.5), INDPTR))
    with pytest.raises(ValueError, match="tol"):
        SimpleMKL(tol=0).solve(problem)
    with pytest.raises(ValueError, match="max_iter"):
        SimpleMKL(max_iter=0).solve(problem)
    with pytest.raises(ValueError, match="alpha"):
        SimpleMKL().solve(Problem(problem.A, problem.y, problem.loss, SquaredGroupL1(0.0),
                                  INDPTR))
    with pytest.raises(ValueError, match="mu"):
        SimpleMKL().solve(problem, SimpleMKLState(np.zeros(7), mu=np.array([1.0, -1.0, 1.0])))
    with pytest.raises(ValueError, match="coef"):
        SimpleMKL().solve(problem, SimpleMKLState(np.zeros(5)))
    with pytest.raises(TypeError, match="Problem"):
        SimpleMKL().solve(object())


def test_state_and_result_are_frozen(rng):
    res = SimpleMKL().solve(_problem(rng))
    with pytest.raises(AttributeError):
        res.state.mu = None
    assert res.state["mu"] is res.state.mu


def test_same_optimum_as_the_other_masters_warm_started_like_fgm(rng):
    """The masters take each other's warm points: SimpleMKL ends where they end."""
    problem = _problem(rng, n=60)
    apg = APG(tol=1e-10, max_iter=20000).solve(problem, APGState(np.zeros(7), 0.0))
    newton = ProxNewton(tol=1e-12).solve(problem, ProxNewtonState(apg.coef, apg.intercept))
    mkl = SimpleMKL(tol=1e-8).solve(problem, SimpleMKLState(newton.coef, newton.intercept))
    assert mkl.converged and mkl.n_iter <= 3
    assert mkl.state.objective == pytest.approx(newton.state.objective, rel=1e-8)


def test_stall_at_machine_precision_is_the_optimum(rng):
    """Below float resolution no step lowers J: the solve stops, marked ``stalled``,
    at the optimum (not at max_iter)."""
    problem = _problem(rng, n=60)
    res = SimpleMKL(tol=1e-15, max_iter=300).solve(problem)
    ref = ProxNewton(tol=1e-14).solve(problem).state.objective
    assert res.converged and res.n_iter < 300
    assert res.history.last("stalled") == 1
    assert res.state.objective == pytest.approx(ref, rel=1e-12)
    assert res.history.last("gap") <= 1e-7


def test_no_active_column_fits_the_intercept_alone(rng):
    # sum_i (1 - y_i b)^2 / 2 is least at b = mean(y) for labels in {-1, +1}
    y = rng.choice([-1.0, 1.0], 25)
    problem = Problem(np.zeros((25, 0)), y, weighted(get_loss("squared_hinge"), C=C),
                      SquaredGroupL1(ALPHA))
    res = SimpleMKL().solve(problem)
    assert res.converged and res.coef.shape == (0,)
    assert res.intercept == pytest.approx(y.mean(), abs=1e-12)
