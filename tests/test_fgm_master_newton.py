"""FGM's Newton master: the Newton steps on the subproblem's support.

The block sweeps of :func:`kernlearn.solvers.prox_newton._subproblem` crawl
on correlated groups (hundreds of sweeps per subproblem at ``C=10``); a
Newton step on the groups carrying weight (:func:`_support_newton`) must be
the exact Newton step of the smooth restricted problem and must not change
the subproblem's minimiser.
"""

from itertools import pairwise

import numpy as np
import pytest

from kernlearn.solvers.prox_newton import (
    _model_gradient,
    _model_value,
    _subproblem,
    _support_newton,
)


def _subproblem_data(seed=0, K=3, n=80, zero_group=False):
    """A quadratic model over groups of correlated, partly repeated columns."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, 8))
    base[:, 4:] += 0.9 * base[:, :4]  # correlated columns across groups
    A = base[:, [0, 1, 2, 3, 4, 5, 1, 6, 7, 2]]  # columns 1 and 2 in two groups
    indptr = np.array([0, 3, 6, 10], dtype=np.int64)
    D = rng.uniform(0.0, 5.0, size=(K, n)) * (rng.uniform(size=(K, n)) < 0.6)
    H = np.einsum("ni,kn,nj->kij", A, D, A)
    g = 5.0 * rng.normal(size=(K, A.shape[1]))
    W0 = 0.1 * rng.normal(size=(A.shape[1], K))
    if zero_group:
        # the last group barely sees the loss: at the optimum it carries no
        # weight (its model gradient stays below alpha * S).  Scaling the
        # off-diagonal blocks by c in [0, 1] keeps H positive semi-definite.
        g[:, 6:] = 0.0
        W0[6:] = 0.0
        H[:, 6:, :6] *= 0.01
        H[:, :6, 6:] *= 0.01
    return H, g, W0, indptr


def _objective(H, g, W0, W, indptr, alpha):
    """Model plus penalty, written out directly (the reference)."""
    d = W - W0
    model = sum(g[k] @ d[:, k] + 0.5 * d[:, k] @ H[k] @ d[:, k] for k in range(len(g)))
    S = sum(np.linalg.norm(W[a:e]) for a, e in pairwise(indptr))
    return model + 0.5 * alpha * S ** 2


def test_support_newton_is_the_exact_newton_step():
    """Gradient and Hessian by finite differences of the objective give the same step."""
    H, g, W0, indptr = _subproblem_data(0)
    alpha = 2.0
    rng = np.random.default_rng(1)
    W = rng.normal(size=W0.shape)  # every group carries weight
    Q = _model_gradient(H, g, W0, W)
    step = _support_newton(H, W, Q, indptr, alpha)
    assert step[1]
    d = (step[0] - W).ravel()

    f = lambda v: _objective(H, g, W0, v.reshape(W.shape), indptr, alpha)
    x, h, m = W.ravel(), 1e-4, W.size
    E = np.eye(m) * h
    grad = np.array([(f(x + E[i]) - f(x - E[i])) / (2 * h) for i in range(m)])
    hess = np.array([[(f(x + E[i] + E[j]) - f(x + E[i] - E[j]) - f(x - E[i] + E[j])
                       + f(x - E[i] - E[j])) / (4 * h * h) for j in range(m)]
                     for i in range(m)])
    ref = -np.linalg.solve(hess, grad)
    assert np.allclose(d, ref, rtol=1e-4, atol=1e-6 * np.abs(ref).max())


def test_support_newton_keeps_groups_without_weight_at_zero():
    H, g, W0, indptr = _subproblem_data(0)
    W = np.random.default_rng(2).normal(size=W0.shape)
    W[3:6] = 0.0
    Wn, ok = _support_newton(H, W, _model_gradient(H, g, W0, W), indptr, 1.0)
    assert ok and np.all(Wn[3:6] == 0.0) and not np.allclose(Wn, W)
    W[:] = 0.0
    Wn, ok = _support_newton(H, W, g.copy(), indptr, 1.0)
    assert not ok and np.all(Wn == 0.0)


@pytest.mark.parametrize("zero_group", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_newton_steps_keep_the_subproblem_minimiser(seed, zero_group):
    """Sweeps with and without the Newton steps, solved tightly, end at one point."""
    H, g, W0, indptr = _subproblem_data(seed, zero_group=zero_group)
    W_cd, n_cd = _subproblem(H, g, W0, indptr, 1.0, 200_000, 1e-13, 0.0, False)
    W_nt, n_nt = _subproblem(H, g, W0, indptr, 1.0, 200_000, 1e-13, 0.0, True)
    v_cd = _model_value(H, g, W0, W_cd, indptr, 1.0)
    v_nt = _model_value(H, g, W0, W_nt, indptr, 1.0)
    assert abs(v_nt - v_cd) <= 1e-10 * abs(v_cd)
    assert np.allclose(W_nt, W_cd, atol=1e-6 * np.abs(W_cd).max())
    assert n_nt < n_cd
    # the weak group stays out either way
    norms = [np.linalg.norm(W_nt[a:e]) for a, e in pairwise(indptr)]
    assert (norms[-1] == 0.0) == zero_group
