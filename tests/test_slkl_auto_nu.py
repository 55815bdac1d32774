"""SLKL's nu="auto": leave-one-out error along a warm-started path of nu values."""

import numpy as np
import pytest

from kernlearn.methods.slkl import (
    NU_GRID,
    ColumnsOnDemand,
    CoordinateNewton,
    _loo_error,
    fit_slkl,
    slkl_problem,
)
from kernlearn.kernels import pairwise_kernel


def _columns(n=40, M=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, 2))
    Y = np.column_stack([np.sin(X[:, 0]), np.cos(X[:, 1])])
    Y = Y + 0.2 * rng.normal(size=(n, 2))
    K = pairwise_kernel(X, X, "rbf", gamma=0.5)
    S = rng.choice(n, M, replace=False)
    return K[:, S] / np.sqrt(np.diag(K)[S]), Y - Y.mean(0)


@pytest.mark.parametrize("gram", [True, False])
def test_loo_error_equals_brute_force_leave_one_out(gram):
    """Z_i / (A^-1)_ii is the residual of the fit without row i (kernel fixed)."""
    C, Y = _columns()
    cols = C if gram else ColumnsOnDemand(lambda j: C[:, j], C.shape)
    res = CoordinateNewton(tol=1e-8, max_iter=200, random_state=0).solve(
        slkl_problem(cols, Y, 0.02))
    state = res.state["slkl"]
    assert 0 < state.m0 < C.shape[1] and state.gram_mode == gram
    Kt = (C * res.state.mu) @ C.T
    n = len(Y)
    brute = 0.0
    for i in range(n):
        keep = np.arange(n) != i
        alpha = np.linalg.solve(np.eye(n - 1) + Kt[np.ix_(keep, keep)], Y[keep])
        brute += np.sum((Y[i] - Kt[i, keep] @ alpha) ** 2)
    assert _loo_error(state) == pytest.approx(brute, rel=1e-8)


def _brute_loo(C, Y, mu):
    Kt = (C * mu) @ C.T
    n = len(Y)
    total = 0.0
    for i in range(n):
        keep = np.arange(n) != i
        alpha = np.linalg.solve(np.eye(n - 1) + Kt[np.ix_(keep, keep)], Y[keep])
        total += np.sum((Y[i] - Kt[i, keep] @ alpha) ** 2)
    return total


@pytest.mark.parametrize("noise", [0.3, 1.0, 2.0])  # keeps a small value, 0.01, 0.1
def test_auto_keeps_the_path_value_of_smallest_loo_error(noise):
    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 3, (80, 2))
    Y = (np.sin(2 * X[:, 0]) * X[:, 1] + noise * rng.normal(size=80))[:, None]
    kw = dict(gamma=0.5, n_columns=30, tol=1e-10, max_iter=3000, seed=0)
    auto = fit_slkl(X, Y, nu="auto", **kw)
    tried = list(dict.fromkeys(auto.history["nu"]))
    assert tried == list(NU_GRID[: len(tried)])
    assert len(auto.history["objective"]) == auto.n_iter
    kept = tried[-1]
    K = pairwise_kernel(X, X[auto.column_indices], "rbf", gamma=0.5)
    Yc = Y - Y.mean(0)
    loo = {}
    for rel in NU_GRID:  # each value cold, to high accuracy
        res = fit_slkl(X, Y, nu=rel, **kw)
        np.testing.assert_array_equal(res.column_indices, auto.column_indices)
        loo[rel] = _brute_loo(K, Yc, res.mu)
    reached = [r for r in NU_GRID if r >= kept]
    # the kept value is the best the path reached; the path stopped at the first
    # value that did worse (or ran out of values)
    assert loo[kept] == min(loo[r] for r in reached)
    nxt = NU_GRID.index(kept) + 1
    if nxt < len(NU_GRID):
        assert loo[NU_GRID[nxt]] > loo[kept]
    cold = fit_slkl(X, Y, nu=kept, **kw)
    # warm-started and cold fits reach the same minimum of eq. (14) (the
    # minimiser itself is flat along nearly collinear columns)
    assert auto.objective == pytest.approx(cold.objective, rel=1e-8)
    assert auto.nu == pytest.approx(cold.nu)


@pytest.mark.parametrize("precompute", [True, False])
def test_dual_coefficients_reproduce_the_ridge_fit_at_large_n_small_nu(precompute):
    """Training predictions equal the kernel ridge fit B (I + B'B)^-1 B'y, B = C D^1/2.

    At many rows, smooth columns and small nu the weights reach ~1e5 and
    mu_m (c_m'z) must not be formed from c_m'z (~sqrt(nu), a difference of
    terms of order n): that lost every digit and gave the fit 4x its MSE.
    """
    rng = np.random.default_rng(0)
    n, g = 20000, 1 / 3
    X = rng.standard_t(3, size=(n, 3))  # heavy tails: a dense bulk, smooth columns
    X = (X - X.mean(0)) / X.std(0)
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.3 * rng.normal(size=n)
    Y = (y - y.mean())[:, None] / y.std()
    res = fit_slkl(X, Y, gamma=g, n_columns=128, nu=1e-5, precompute=precompute,
                   seed=0)
    assert res.mu.max() > 1e4  # the regime where the old extraction failed
    C = pairwise_kernel(X, X[res.column_indices], "rbf", gamma=g)
    B = C * np.sqrt(res.mu)
    exact = B @ np.linalg.solve(np.eye(len(res.mu)) + B.T @ B, B.T @ Y)
    fit = pairwise_kernel(X, X[res.center_indices], "rbf", gamma=g) @ res.dual_coef
    resid = np.mean((Y - exact) ** 2)
    assert np.mean((fit - exact) ** 2) < 1e-6 * resid
