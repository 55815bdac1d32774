"""Audit 101: the further search of a refused support-Newton step (issue 24).

:func:`kernlearn.solvers.prox_newton._short_newton_step` tries the steps
``step, step/2, ...`` towards the Newton point and keeps the best one.  Model
plus squared group-l1 penalty is convex (a positive semi-definite quadratic
plus the square of a non-negative convex function), so along the segment its
value is convex, also where a group passes through zero (a kink); the search
may then stop at the first halving that does not lower the value.  These
tests check the returned point against that definition (the best of all the
halvings, evaluated one by one) and the search's bound.
"""

import numpy as np
import pytest

import kernlearn.solvers.prox_newton as pn
from kernlearn.solvers.prox_newton import (_MAX_SHORT_HALVINGS, _model_gradient,
                                           _model_value, _short_newton_step)

INDPTR = np.array([0, 3, 6, 9], dtype=np.int64)
ALPHA = 1.0


def _setup(rng, K=2):
    """A convex model with a repeated feature, a point and an overshooting step.

    The third group repeats the first group's features (FGM's re-selection).
    ``W`` carries weight in every group; the end ``Wn = W + L d``, with ``d``
    minus the unit gradient of model + penalty, overshoots the line's minimum
    by orders of magnitude, and the third group passes through zero at a step
    ``cross`` before the first halving below the value at ``W``.  Of the lengths ``L`` tried, the first is kept whose best
    halving is not the first one below the value at ``W`` (the search must go
    on past that one).
    """
    X = rng.standard_normal((60, 6))
    A = X[:, [0, 1, 2, 3, 4, 5, 0, 1, 2]]
    H = np.stack([A.T @ A * (1.0 + k) for k in range(K)])
    W0 = rng.standard_normal((9, K))
    g = rng.standard_normal((K, 9))
    W = W0 + 0.1 * rng.standard_normal((9, K))
    W[6:9] *= 1e-3  # the new group, with little weight yet
    Q = _model_gradient(H, g, W0, W)
    norms = [np.linalg.norm(W[a:e]) for a, e in zip(INDPTR[:-1], INDPTR[1:])]
    S = sum(norms)
    grad = Q.T.copy()
    for (a, e), nt in zip(zip(INDPTR[:-1], INDPTR[1:]), norms):
        grad[a:e] += ALPHA * S * W[a:e] / nt
    v = _model_value(H, g, W0, W, INDPTR, ALPHA)
    for L in 2000.0 * 1.2 ** np.arange(12):
        for cross in 10.0 ** -np.arange(2.0, 7.0, 0.5):
            Wn = W - L * grad / np.linalg.norm(grad)
            Wn[6:9] = W[6:9] * (1.0 - 1.0 / cross)
            steps, vals = _halvings(H, g, W0, W, Wn, 0.125)
            first_below = np.argmax(vals < v)
            if (vals[0] >= v and vals[first_below] < v and np.argmin(vals) > first_below
                    and steps[first_below] > cross):
                return H, g, W0, W, Wn, cross
    raise AssertionError("no length gives the regime")


def _halvings(H, g, W0, W, Wn, step, count=_MAX_SHORT_HALVINGS):
    steps = step * 0.5 ** np.arange(count)
    return steps, np.array([_model_value(H, g, W0, W + s * (Wn - W), INDPTR, ALPHA)
                            for s in steps])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_further_search_returns_the_best_halving(seed):
    """The point returned is the halving of lowest value (all 40 evaluated)."""
    rng = np.random.default_rng(seed)
    H, g, W0, W, Wn, cross = _setup(rng)
    v = _model_value(H, g, W0, W, INDPTR, ALPHA)
    steps, vals = _halvings(H, g, W0, W, Wn, 0.125)
    # the setup is the regime: the first three steps are refused, and the
    # best halving is not the first one below v (the search must go on)
    assert vals[0] >= v
    first_below = int(np.argmax(vals < v))
    best = int(np.argmin(vals))
    assert vals[best] < v and best > first_below
    # along the segment the value is convex, across the third group's zero
    assert steps[first_below] > cross
    fine = np.linspace(0.0, steps[first_below], 2001)
    line = np.array([_model_value(H, g, W0, W + s * (Wn - W), INDPTR, ALPHA) for s in fine])
    assert np.all(np.diff(line, 2) >= -1e-9 * np.abs(line).max())
    Wt, Qt, ok = _short_newton_step(H, g, W0, W, Wn, INDPTR, ALPHA, v, 0.125)
    assert ok
    np.testing.assert_allclose(Wt, W + steps[best] * (Wn - W), rtol=0, atol=1e-12)
    np.testing.assert_allclose(Qt, _model_gradient(H, g, W0, Wt), rtol=1e-12, atol=1e-9)


def test_further_search_refuses_an_ascent_direction_within_its_bound(monkeypatch, rng):
    """Uphill, or with a NaN value, every halving is refused: ``W`` back, at most 40 values."""
    H, g, W0, W, Wn, _ = _setup(rng)
    v = _model_value(H, g, W0, W, INDPTR, ALPHA)
    up = 2.0 * W - Wn  # the opposite direction: the value rises along it
    assert np.all(_halvings(H, g, W0, W, up, 0.125)[1] > v)
    evals = []

    def counted(*args):
        evals.append(1)
        return _model_gradient(*args)

    # the search's Python body, calling the compiled helpers but counted
    monkeypatch.setattr(pn, "_model_gradient", counted)
    search = _short_newton_step.py_func
    for end, value in ((up, v), (Wn, np.nan)):
        evals.clear()
        Wt, _, ok = search(H, g, W0, W, end, INDPTR, ALPHA, value, 0.125)
        assert not ok and Wt is W
        assert len(evals) == _MAX_SHORT_HALVINGS
    # found: it stops at the first halving past the line's minimum
    vals = _halvings(H, g, W0, W, Wn, 0.125)[1]
    evals.clear()
    search(H, g, W0, W, Wn, INDPTR, ALPHA, v, 0.125)
    assert len(evals) == int(np.argmin(vals)) + 2


def test_converged_master_is_within_its_tolerance_of_the_optimum(monkeypatch):
    """A master declared converged is within ``tol`` (relative) of its problem's optimum.

    With the square loss the quadratic model is the objective, so the
    predicted decrease of an exactly solved model is the distance to the
    optimum.  On main the confirmation of convergence kept the sweeps'
    stopping rule "a sweep gains under 1e-3 of ``tol``": on near noise-free
    data with a repeated feature a sweep gains less than that while the
    support-Newton steps still gain more, so the confirming solve stopped
    after one sweep and FGM's last master (1000 x 20, ``C=10``) ended 4.8e-8
    above its optimum at ``tol=1e-8``.
    """
    from sklearn.datasets import make_regression

    from kernlearn.estimators.fgm import FGMRegressor

    masters = []
    solve = pn.ProxNewton._solve

    def kept(self, problem, warm):
        res = solve(self, problem, warm)
        masters.append((self, problem, warm, res))
        return res

    monkeypatch.setattr(pn.ProxNewton, "_solve", kept)
    X, y = make_regression(n_samples=1000, n_features=20, n_informative=5, noise=1.0,
                           random_state=1)
    FGMRegressor(C=10.0).fit(X, y)
    master, problem, warm, res = masters[-1]
    assert res.converged and master.tol == 1e-8
    tight = solve(pn.ProxNewton(tol=1e-15, max_iter=200, max_sweeps=100_000, sweep_tol=1e-14),
                  problem, warm)
    F, F_opt = res.state.objective, tight.state.objective
    assert F_opt <= F and (F - F_opt) / F_opt <= master.tol
