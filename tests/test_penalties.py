"""Penalties: prox operators against their definition, dual norms."""

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize

from kernlearn.penalties import L1, GroupL1L2, SquaredGroupL1, get_penalty
from kernlearn.penalties._prox import (
    group_norms,
    project_l1_ball,
    project_simplex,
    squared_group_l1_scales,
)

INDPTR = np.array([0, 3, 4, 7, 9])


def _prox_by_definition(pen, w, step, indptr):
    obj = lambda x: 0.5 * np.sum((x - w) ** 2) + step * pen.value(x, indptr)
    best = None
    for x0 in (w, np.zeros_like(w)):
        res = minimize(obj, x0, method="Powell", options={"xtol": 1e-10, "ftol": 1e-14,
                                                          "maxiter": 200000})
        if best is None or res.fun < best.fun:
            best = res
    return best


@pytest.mark.parametrize("pen", [L1(0.7), GroupL1L2(0.9), SquaredGroupL1(1.3)], ids=repr)
def test_prox_is_the_minimiser_of_its_definition(pen, rng):
    w = rng.standard_normal(9) * 2
    step = 0.4
    x = pen.prox(w, step, INDPTR)
    f = lambda z: 0.5 * np.sum((z - w) ** 2) + step * pen.value(z, INDPTR)
    ref = _prox_by_definition(pen, w, step, INDPTR)
    assert f(x) <= ref.fun + 1e-9
    # strongly convex: the minimiser is unique, so it must also be close
    np.testing.assert_allclose(x, ref.x, atol=2e-3)


@pytest.mark.parametrize("s", [0.01, 0.3, 1.0, 10.0])
def test_moreau_projection_matches_cvxpy(s, rng):
    # Algorithm 3 of paper 002 against a generic conic solver.
    g = rng.standard_normal(12)
    indptr = np.array([0, 2, 5, 6, 10, 12])
    c = squared_group_l1_scales(group_norms(g, indptr), s)
    ours = g * np.repeat(c, np.diff(indptr))
    x = cp.Variable(12)
    norms = [cp.norm(x[a:b]) for a, b in zip(indptr[:-1], indptr[1:])]
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - g) / (2 * s) + 0.5 * cp.square(sum(norms))))
    prob.solve()
    val = lambda z: np.sum((z - g) ** 2) / (2 * s) + 0.5 * group_norms(z, indptr).sum() ** 2
    assert val(ours) <= prob.value + 1e-7
    np.testing.assert_allclose(ours, x.value, atol=1e-4)


def test_squared_group_l1_prox_only_rescales_groups(rng):
    g = rng.standard_normal(9)
    c = squared_group_l1_scales(group_norms(g, INDPTR), 0.5)
    assert np.all((c >= 0) & (c <= 1))


@pytest.mark.parametrize("pen", [L1(2.0), GroupL1L2(2.0), SquaredGroupL1(2.0)], ids=repr)
def test_fenchel_young_inequality_with_dual_norm(pen, rng):
    # <w, s> <= Omega(w) + Omega*(s); for norms alpha*||.||, Omega* is the indicator
    # of dual_norm <= alpha, so check the Hoelder form <w, s> <= ||w|| * dual(s).
    for _ in range(20):
        w, s = rng.standard_normal(9), rng.standard_normal(9)
        dual = pen.dual_norm(s, INDPTR).max()
        primal = group_norms(w, INDPTR)
        primal = primal.sum() if not isinstance(pen, L1) else np.abs(w).sum()
        assert w @ s <= primal * dual + 1e-12


def test_projections():
    v = np.array([0.5, 2.0, -1.0, 0.3])
    p = project_simplex(v, 1.0)
    assert p.sum() == pytest.approx(1.0) and np.all(p >= 0)
    q = project_l1_ball(v, 1.0)
    assert np.abs(q).sum() == pytest.approx(1.0)
    np.testing.assert_allclose(project_l1_ball(v * 0.1, 1.0), v * 0.1)


def test_registry_and_errors():
    assert isinstance(get_penalty("l1", alpha=2.0), L1)
    with pytest.raises(ValueError, match="Unknown penalty"):
        get_penalty("l3")
    pen = GroupL1L2(1.0)
    pen.set_params(alpha=3.0)
    assert pen.get_params() == {"alpha": 3.0}
    with pytest.raises(ValueError, match="Invalid parameter"):
        pen.set_params(beta=1.0)
