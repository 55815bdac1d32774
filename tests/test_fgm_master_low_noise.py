"""FGM's Newton master on near noise-free targets (issue 24).

When the loss dominates the penalty (large ``C``, targets the features fit
almost exactly) and a feature sits in several groups (FGM selects it again
in a later constraint), the subproblem of
:func:`kernlearn.solvers.prox_newton._subproblem` is flat along moving weight
between the copies: the block sweeps crawl (tens of thousands of sweeps), and
the Newton step on the support overshoots by orders of magnitude.  The
subproblem must still reach its minimiser, checked against the optimality
conditions of its definition and against cvxpy.
"""

from itertools import pairwise

import numpy as np
import pytest

from kernlearn.solvers.prox_newton import _model_gradient, _model_value, _subproblem

cp = pytest.importorskip("cvxpy")

ALPHA = 1.0


def _low_noise_master(seed):
    """A square-loss master at ``C=10`` whose new group repeats the old ones' features.

    Returns the model (``H``, ``g`` at ``W0``), ``W0`` (the previous master's
    optimum on the first two groups, the new third group at zero, as FGM
    warm-starts) and the groups.
    """
    rng = np.random.default_rng(seed)
    n, C = 300, 10.0
    X = rng.normal(size=(n, 10))
    y = X[:, :6] @ rng.uniform(1.0, 2.0, size=6) + 0.01 * rng.normal(size=n)
    # groups 0-4 | 5-9 | the new one: 0, 1, 2, 3, 5 again
    A = X[:, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 5]]
    A = A - A.mean(0)
    y = y - y.mean()
    indptr = np.array([0, 5, 10, 15], dtype=np.int64)
    H = C * (A.T @ A)[None]
    # the previous master: the first two groups only, solved tightly
    W = np.zeros((10, 1))
    W, _ = _subproblem(H[:, :10, :10], -C * (A[:, :10].T @ y)[None], W, indptr[:3],
                       ALPHA, 100_000, 1e-14, 0.0)
    W0 = np.vstack([W, np.zeros((5, 1))])
    g = C * (A.T @ (A @ W0[:, 0] - y))[None]
    return H, g, W0, indptr


def _kkt_residual(H, g, W0, W, indptr, alpha):
    """Largest violation of the subproblem's optimality conditions, relative to ``alpha S``.

    With ``Q`` the model's gradient and ``S`` the sum of the group norms, a
    group carrying weight satisfies ``Q_t = -alpha S W_t / ||W_t||`` and a
    group at zero ``||Q_t|| <= alpha S``.
    """
    Q = _model_gradient(H, g, W0, W)[0]
    norms = [np.linalg.norm(W[a:e]) for a, e in pairwise(indptr)]
    S = sum(norms)
    worst = 0.0
    for (a, e), nt in zip(pairwise(indptr), norms):
        if nt > 0.0:
            worst = max(worst, np.linalg.norm(Q[a:e] + alpha * S * W[a:e, 0] / nt))
        else:
            worst = max(worst, np.linalg.norm(Q[a:e]) - alpha * S)
    return worst / (alpha * S)


def _cvxpy_value(H, g, W0, indptr, alpha):
    p = H.shape[1]
    L = np.linalg.cholesky(H[0] + 1e-9 * np.eye(p))  # H is singular: repeated columns
    w = cp.Variable(p)
    d = w - W0[:, 0]
    S = sum(cp.norm(w[a:e]) for a, e in pairwise(indptr))
    prob = cp.Problem(cp.Minimize(g[0] @ d + 0.5 * cp.sum_squares(L.T @ d)
                                  + 0.5 * alpha * cp.square(S)))
    prob.solve(solver=cp.CLARABEL)
    return _model_value(H, g, W0, w.value.reshape(-1, 1), indptr, alpha)


@pytest.mark.parametrize("seed", [1, 2, 3])  # the old code crawls on these
def test_low_noise_subproblem_reaches_its_minimiser(seed):
    """At most 300 sweeps reach the optimum that the sweeps alone crawl towards."""
    H, g, W0, indptr = _low_noise_master(seed)
    W, sweeps = _subproblem(H, g, W0, indptr, ALPHA, 300, 1e-12, 0.0)
    assert sweeps < 300
    assert _kkt_residual(H, g, W0, W, indptr, ALPHA) < 1e-6
    # the objective is no worse than cvxpy's (to its accuracy)
    v, ref = _model_value(H, g, W0, W, indptr, ALPHA), _cvxpy_value(H, g, W0, indptr, ALPHA)
    assert v <= ref + 1e-7 * abs(ref)
    # the sweeps alone, over the same budget, are far from it: the regime is the crawl
    W_cd, n_cd = _subproblem(H, g, W0, indptr, ALPHA, 300, 1e-12, 0.0, False)
    assert n_cd == 300 and _kkt_residual(H, g, W0, W_cd, indptr, ALPHA) > 1e-3
