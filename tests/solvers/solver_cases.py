"""Tiny problems for every solver and their reference optima (cvxpy, or a long
proximal-gradient run with the penalty's own prox for a penalty cvxpy is not
told about)."""

import numpy as np
import pytest

from kernlearn.losses import get_loss, weighted
from kernlearn.penalties import (
    L1,
    GroupL1L2,
    L1Linf,
    L1Lq,
    PerTaskL1Lq,
    SquaredGroupL1,
    SquaredGroupNorm2p,
)
from kernlearn.penalties._base import BasePenalty
from kernlearn.solvers import DirtyProblem, Problem

LOSSES = ["squared_hinge", "logistic", "square"]
INDPTR = np.array([0, 3, 4, 7])
C = 0.7


def _group_norms(cp, w, indptr, q=2):
    return [cp.norm(w[a:b], q) for a, b in zip(indptr[:-1], indptr[1:])]


# cvxpy expression of each penalty on a vector variable w with groups indptr
CVXPY_PENALTIES = {
    L1: lambda cp, pen, w, ip: pen.alpha * cp.norm1(w),
    GroupL1L2: lambda cp, pen, w, ip: pen.alpha * sum(_group_norms(cp, w, ip)),
    SquaredGroupL1: lambda cp, pen, w, ip: 0.5 * pen.alpha * cp.square(
        sum(_group_norms(cp, w, ip))),
    SquaredGroupNorm2p: lambda cp, pen, w, ip: 0.5 * pen.alpha * cp.square(
        cp.pnorm(cp.hstack(_group_norms(cp, w, ip)), pen.p)),
    L1Linf: lambda cp, pen, w, ip: pen.alpha * sum(_group_norms(cp, w, ip, "inf")),
    L1Lq: lambda cp, pen, w, ip: pen.alpha * sum(_group_norms(cp, w, ip, pen.q)),
    PerTaskL1Lq: lambda cp, pen, w, ip: pen.alpha * sum(_group_norms(cp, w, ip, pen.q)),
}


def _cvxpy_datafit(cp, name, m, y):
    if name == "squared_hinge":
        return 0.5 * cp.sum_squares(cp.pos(1 - cp.multiply(y, m)))
    if name == "logistic":
        return cp.sum(cp.logistic(-cp.multiply(y, m)))
    return 0.5 * cp.sum_squares(y - m)


def targets(name, rng, shape):
    """Targets for loss ``name``: labels in {-1, +1}, or real values."""
    if name == "square":
        return rng.standard_normal(shape)
    return rng.choice([-1.0, 1.0], size=shape)


def make_problem(problem_type, loss_name, penalty, rng, n=30):
    """A tiny problem of ``problem_type``: FGM's (7 columns, 3 groups, one
    output, ``C = 0.7``) or GrFL's (2 tasks sharing rows, no shared part)."""
    A = rng.standard_normal((n, INDPTR[-1]))
    A /= np.linalg.norm(A, axis=0)
    if problem_type is Problem:
        y = targets(loss_name, rng, n)
        return Problem(A, y, weighted(get_loss(loss_name), C=C), penalty, INDPTR)
    return DirtyProblem(A, targets(loss_name, rng, (n, 2)), get_loss(loss_name), penalty,
                        None, indptr=INDPTR)


def reference_objective(problem, loss_name):
    """Optimal objective of ``problem`` by cvxpy (or proximal gradient)."""
    pen = problem.penalties[0]
    build = CVXPY_PENALTIES.get(type(pen))
    if build is None:
        return _prox_gradient_reference(problem)
    cp = pytest.importorskip("cvxpy")
    if isinstance(problem, Problem):
        A, y = problem.A, problem.y
        w, b = cp.Variable(A.shape[1]), cp.Variable()
        obj = C * _cvxpy_datafit(cp, loss_name, A @ w + b, y) + build(cp, pen, w, INDPTR)
    else:
        A, Y = problem.Phi, problem.Ys
        T = Y.shape[1]
        W, b = cp.Variable((A.shape[1], T)), cp.Variable(T)
        fit = sum(_cvxpy_datafit(cp, loss_name, A @ W[:, t] + b[t], Y[:, t]) for t in range(T))
        if type(pen).matrix_value is BasePenalty.matrix_value:
            # joint across tasks: the groups are the row blocks of W
            reg = build(cp, pen, cp.vec(W, order="C"), INDPTR * T)
        else:  # the penalty acts on each task's weights
            reg = sum(build(cp, pen, W[:, t], INDPTR) for t in range(T))
        obj = fit + reg
    prob = cp.Problem(cp.Minimize(obj))
    try:
        prob.solve(solver=cp.CLARABEL)
    except cp.error.SolverError:
        prob.solve(solver=cp.SCS, eps=1e-10, max_iters=200_000)
    return prob.value


def _prox_gradient_reference(problem, n_iter=50_000):
    """Plain proximal gradient with step 1/L (no acceleration, no line search)."""
    if isinstance(problem, Problem):
        A, y, loss, pen = problem.A, problem.y, problem.loss, problem.penalty
        L = loss.lipschitz * np.linalg.norm(np.column_stack([A, np.ones(len(y))]), 2) ** 2
        w, b = np.zeros(A.shape[1]), 0.0
        for _ in range(n_iter):
            g = loss.grad_margin(A @ w + b, y)
            w = pen.prox(w - A.T @ g / L, 1.0 / L, INDPTR)
            b -= g.sum() / L
        return float(loss.value(A @ w + b, y).sum()) + pen.value(w, INDPTR)
    P = problem
    W, ws, b = P.zeros()
    s = 1.0 / P.lipschitz()
    for _ in range(n_iter):
        gW, _, gb = P.gradients(P.margins(W, ws, b))
        W, _ = P.prox(W - s * gW, ws, s, s)
        b = b - s * gb
    return P.objective(W, ws, b)
