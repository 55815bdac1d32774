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
    # The prox of (s/2)(sum_t ||w_t||)^2 keeps each group's direction and
    # shrinks its norm: w_t = (1 - s theta / ||g_t||)_+ g_t with
    # theta = sum_t ||w_t|| (the optimality condition of Algorithm 3).
    pen = SquaredGroupL1(1.0)
    for step in (0.05, 0.5, 5.0):
        g = rng.standard_normal(9) * rng.uniform(0.1, 3, 9)
        w = pen.prox(g, step, INDPTR)
        gn, wn = group_norms(g, INDPTR), group_norms(w, INDPTR)
        c = squared_group_l1_scales(gn, step)
        np.testing.assert_allclose(w, g * np.repeat(c, np.diff(INDPTR)), atol=1e-14)
        theta = wn.sum()
        np.testing.assert_allclose(c, np.maximum(0.0, 1.0 - step * theta / gn), atol=1e-12)
        # groups with ||g_t|| <= s theta are removed, the others keep their direction
        for t, (a, b) in enumerate(zip(INDPTR[:-1], INDPTR[1:])):
            if gn[t] <= step * theta:
                assert wn[t] == 0
            else:
                assert g[a:b] @ w[a:b] == pytest.approx(gn[t] * wn[t], rel=1e-12)
    # a large step removes every group but the largest
    w = pen.prox(g, 100.0, INDPTR)
    assert np.flatnonzero(group_norms(w, INDPTR)).tolist() == [int(np.argmax(gn))]


def _conjugate_by_cvxpy(pen, s, indptr):
    """sup_w <w, s> - Omega(w), solved by a conic solver."""
    w = cp.Variable(s.size)
    norms = [cp.norm(w[a:b]) for a, b in zip(indptr[:-1], indptr[1:])]
    prob = cp.Problem(cp.Maximize(s @ w - 0.5 * pen.alpha * cp.square(sum(norms))))
    prob.solve()
    return prob.value


@pytest.mark.parametrize("alpha", [0.5, 2.0])
def test_squared_group_l1_conjugate_is_the_fenchel_conjugate(alpha, rng):
    # FGM's lower bound (Theorem 2) is -C sum l*(.) - Omega*(s): Omega* must be
    # the true conjugate of (alpha/2)(sum_t ||w_t||)^2, i.e. max_t ||s_t||^2 / (2 alpha).
    pen = SquaredGroupL1(alpha)
    for _ in range(3):
        s = rng.standard_normal(9)
        dual = pen.dual_norm(s, INDPTR)
        conj = pen.conjugate(dual.max() ** 2)
        assert conj == pytest.approx(_conjugate_by_cvxpy(pen, s, INDPTR), rel=1e-5, abs=1e-7)
        # Fenchel-Young: <w, s> <= Omega(w) + Omega*(s) for every w ...
        for _ in range(50):
            w = rng.standard_normal(9) * rng.uniform(0, 3)
            assert w @ s <= pen.value(w, INDPTR) + conj + 1e-12
        # ... with equality at w = s_t / alpha on the group of largest dual norm.
        t = int(np.argmax(dual))
        w = np.zeros(9)
        w[INDPTR[t]:INDPTR[t + 1]] = s[INDPTR[t]:INDPTR[t + 1]] / alpha
        assert w @ s == pytest.approx(pen.value(w, INDPTR) + conj, rel=1e-12)


@pytest.mark.parametrize("pen", [L1(2.0), GroupL1L2(2.0), SquaredGroupL1(2.0)], ids=repr)
def test_fenchel_young_inequality_with_dual_norm(pen, rng):
    # The dual norm is the smallest bound of <w, s> over the primal unit ball:
    # Hoelder's inequality holds for every w and is attained.
    primal = (lambda w: np.abs(w).sum()) if isinstance(pen, L1) else (
        lambda w: group_norms(w, INDPTR).sum())
    for _ in range(5):
        s = rng.standard_normal(9)
        dual = pen.dual_norm(s, INDPTR).max()
        for _ in range(50):
            w = rng.standard_normal(9)
            assert w @ s <= primal(w) * dual + 1e-12
        # attained at the normalised s restricted to its largest (group) entry
        if isinstance(pen, L1):
            j = int(np.argmax(np.abs(s)))
            w = np.zeros(9)
            w[j] = np.sign(s[j])
        else:
            t = int(np.argmax(group_norms(s, INDPTR)))
            w = np.zeros(9)
            a, b = INDPTR[t], INDPTR[t + 1]
            w[a:b] = s[a:b] / np.linalg.norm(s[a:b])
        assert w @ s == pytest.approx(primal(w) * dual, rel=1e-12)
    if isinstance(pen, SquaredGroupL1):
        # Omega(w) = (alpha/2) primal(w)^2, so Omega*(s) = dual^2 / (2 alpha).
        s = rng.standard_normal(9)
        d = pen.dual_norm(s, INDPTR).max()
        assert pen.conjugate(d**2) == pytest.approx(d**2 / (2 * pen.alpha))
    else:
        # A norm's conjugate is the indicator of the dual ball of radius alpha:
        # the prox of a group whose dual norm is <= step * alpha is zero.
        s = rng.standard_normal(9)
        scale = 0.99 * pen.alpha / pen.dual_norm(s, INDPTR).max()
        np.testing.assert_array_equal(pen.prox(s * scale, 1.0, INDPTR), 0.0)


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
