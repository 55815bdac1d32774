"""Entropic mirror descent (solvers/mirror_descent.py) against cvxpy, and the
named block layout of multitask MKL's shared components."""

import cvxpy as cp
import numpy as np
import pytest

from kernlearn.methods.mtmkl import BlockLayout
from kernlearn.solvers.mirror_descent import (
    schatten_entropic_step,
    simplex_mirror_descent,
    step_size,
)


def test_simplex_mirror_descent_reaches_the_cvxpy_minimum(rng):
    # two independent groups: f_g(x) = 1/2 x'Q_g x + c_g'x on the simplex;
    # lower bound from convexity: f(x) + min_i g_i - g'x
    d, G = 5, 2
    B = rng.normal(size=(G, d, d))
    Q = B @ B.transpose(0, 2, 1) + 0.1 * np.eye(d)
    c = rng.normal(size=(G, d))

    def oracle(x, it):
        g = np.einsum("gij,gj->gi", Q, x) + c
        val = 0.5 * np.einsum("gi,gi->g", x, g - c) + np.einsum("gi,gi->g", c, x)
        return val, val + g.min(1) - np.einsum("gi,gi->g", g, x), g

    seen = []
    res = simplex_mirror_descent(oracle, G, d, max_iter=20000, tol=1e-3,
                                 on_better=lambda better: seen.append(better.copy()))
    # O(1/sqrt(l)) convergence: a relative gap of 1e-3
    assert res.converged and res.gap <= 1e-3 * abs(res.objective)
    for g in range(G):
        z = cp.Variable(d, nonneg=True)
        prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(z, Q[g]) + c[g] @ z),
                          [cp.sum(z) == 1])
        prob.solve()
        assert res.value[g] >= prob.value - 1e-6  # a feasible point's value
        assert res.value[g] - prob.value <= res.value[g] - res.lower[g] + 1e-6
        assert res.lower[g] <= prob.value + 1e-6  # a true lower bound
    np.testing.assert_allclose(res.x.sum(1), 1.0)
    assert seen[0].all()  # the first iterate improves on +inf in every group
    h = res.history.as_dict()
    assert np.all(np.diff(h["best"]) <= 0) and len(h["best"]) == res.n_iter


def test_step_size_is_nemirovskis():
    assert np.isclose(step_size(4, 8, 0.5), np.sqrt(2 * np.log(8)) / (0.5 * 2))
    assert np.isfinite(step_size(1, 1, 0.0))  # a flat gradient: no division by 0


def test_schatten_step_stays_in_the_trace_norm_set(rng):
    # Q_j = Z diag(e^theta) Z' with sum_j (tr Q_j)^qbar <= 1, and a step along
    # a positive direction raises the trace share of that block
    qbar, r = 3.0, [3, 2]
    Z = [np.eye(k) for k in r]
    th = [np.full(k, -np.log(2) / qbar - np.log(k)) for k in r]
    grad = [np.zeros((3, 1)), rng.normal(size=(2, 2))]
    Z2, th2 = schatten_entropic_step(Z, th, grad, 1.0, qbar)
    tr = np.array([np.exp(t).sum() for t in th2])
    assert np.sum(tr ** qbar) <= 1 + 1e-9
    assert tr[1] > tr[0]
    for Zj in Z2:
        np.testing.assert_allclose(Zj.T @ Zj, np.eye(len(Zj)), atol=1e-12)


@pytest.mark.parametrize("shared", [False, True])
def test_block_layout_names_the_blocks(shared):
    lay = BlockLayout(3, shared)
    blocks = lay.arrange(["a", "b", "c"], "const", ["A", "B", "C"])
    assert [blocks[j] for j in lay.task_specific] == ["a", "b", "c"]
    assert len(blocks) == lay.n_blocks and lay.shared_mask().sum() == 3 * shared
    if shared:
        assert blocks[lay.constant] == "const"
        assert [blocks[j] for j in lay.shared_blocks] == ["A", "B", "C"]
        assert list(lay.within_task) == [0, 1, 2, 3]
        assert [blocks[j] for j in np.flatnonzero(lay.shared_mask())] == ["A", "B", "C"]
    else:
        assert lay.constant is None and lay.shared_blocks.size == 0
        assert list(lay.within_task) == [0, 1, 2]
