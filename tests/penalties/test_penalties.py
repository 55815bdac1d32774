"""Penalties, each registered one: prox against its definition, dual norms and
conjugates against numerically computed suprema, the matrix (multi-task) forms.

Parametrised over ``PENALTIES`` (``conftest.py``): a new registered penalty is
tested here with no new test code.  References are computed by
``scipy.optimize.minimize``, never by restating a formula.
"""

import numpy as np
import pytest
from scipy.optimize import minimize

from kernlearn.penalties import (
    PENALTIES,
    GroupL1L2,
    L1Linf,
    L1Lq,
    SquaredGroupL1,
    get_penalty,
)
from kernlearn.penalties._base import BasePenalty
from kernlearn.penalties._prox import group_norms, squared_group_l1_scales
from .penalty_cases import INDPTR, degree, gauge


def _argmin(obj, starts):
    """Best of several Powell runs (the objectives are convex but not smooth)."""
    return min((minimize(obj, x0, method="Powell",
                         options={"xtol": 1e-10, "ftol": 1e-14, "maxiter": 200000})
                for x0 in starts), key=lambda r: r.fun)


@pytest.mark.parametrize("scale", [0.3, 2.0])
def test_prox_is_the_minimiser_of_its_definition(penalty, scale, rng):
    # prox(v) = argmin_x 0.5 ||x - v||^2 + step * penalty(x)
    v = rng.standard_normal(9) * scale
    step = 1.3

    def obj(x):
        return 0.5 * np.sum((x - v) ** 2) + step * penalty.value(x, INDPTR)

    got = penalty.prox(v, step, INDPTR)
    ref = _argmin(obj, [v, np.zeros_like(v), got])
    assert obj(got) <= ref.fun + 1e-9
    # strongly convex: the minimiser is unique, so it must also be close
    np.testing.assert_allclose(got, ref.x, atol=2e-4)


def test_matrix_prox_is_the_minimiser_of_matrix_value(penalty, rng):
    # GrFL's weight matrix (p, T): prox of the multi-task penalty, joint across
    # tasks by default, per task where a penalty says so
    indptr = np.array([0, 2, 3, 5])
    W = rng.standard_normal((5, 2))
    W[:2] *= 0.05  # one block below the threshold
    step = 0.9

    def obj(x):
        X = x.reshape(W.shape)
        return 0.5 * np.sum((X - W) ** 2) + step * penalty.matrix_value(X, indptr)

    got = penalty.matrix_prox(W, step, indptr)
    ref = _argmin(obj, [W.ravel(), np.zeros(W.size), got.ravel()])
    assert obj(got.ravel()) <= ref.fun + 1e-9
    np.testing.assert_allclose(got.ravel(), ref.x, atol=2e-4)


def _group_slices(dual):
    """Groups the dual norm is reported on: the groups, or single coordinates (l1)."""
    ip = INDPTR if len(dual) == len(INDPTR) - 1 else np.arange(INDPTR[-1] + 1)
    return [slice(a, b) for a, b in zip(ip[:-1], ip[1:])]


def test_dual_norm_is_the_sup_over_the_unit_ball(penalty, rng):
    # ||s_g||_* = sup { <s_g, x_g> : N(x_g) <= 1 } for x supported on group g,
    # with N the norm behind the penalty: the ratio <s, x> / N(x) never exceeds
    # it (Hoelder) and its numerical maximum reaches it.
    deg = degree(penalty, rng)
    for _ in range(3):
        s = rng.standard_normal(9)
        dual = penalty.dual_norm(s, INDPTR)
        for g, sl in enumerate(_group_slices(dual)):
            def neg_ratio(xg, sl=sl):
                x = np.zeros(9)
                x[sl] = xg
                n = gauge(penalty, x, deg)
                return -(s[sl] @ xg) / n if n > 0 else 0.0

            for _ in range(20):
                assert -neg_ratio(rng.standard_normal(sl.stop - sl.start)) <= dual[g] + 1e-12
            best = _argmin(neg_ratio, [s[sl], np.sign(s[sl]), rng.standard_normal(
                sl.stop - sl.start)])
            assert -best.fun == pytest.approx(dual[g], rel=1e-6)


def test_conjugate_is_the_numerical_sup(penalty, rng):
    # Omega*(s) = sup_w <w, s> - Omega(w), computed.  For a norm it is the
    # indicator of the dual ball of radius alpha: 0 inside, unbounded outside.
    # For a squared norm it is finite; where the penalty states it
    # (``conjugate``), the stated value must be that sup.
    deg = degree(penalty, rng)
    s = rng.standard_normal(9)
    dual = penalty.dual_norm(s, INDPTR)

    def sup(svec, starts):
        res = _argmin(lambda w: penalty.value(w, INDPTR) - w @ svec, starts)
        return -res.fun, res.x

    if deg == 1:
        inside = s * (0.9 * penalty.alpha / dual.max())
        val, _ = sup(inside, [np.zeros(9), inside, rng.standard_normal(9)])
        assert val == pytest.approx(0.0, abs=1e-9)
        # outside the ball: along the maximiser of the dual norm the gap grows
        outside = s * (1.1 * penalty.alpha / dual.max())
        g = int(np.argmax(dual))
        sl = _group_slices(dual)[g]
        x = np.zeros(9)
        x[sl] = outside[sl]
        vals = [t * x @ outside - penalty.value(t * x, INDPTR) for t in (1.0, 10.0, 100.0)]
        assert vals[0] < vals[1] < vals[2] and vals[2] > 10 * abs(vals[0])
        return
    val, w_star = sup(s, [np.zeros(9), s, rng.standard_normal(9)])
    for _ in range(50):  # Fenchel-Young at random points
        w = rng.standard_normal(9) * rng.uniform(0, 3)
        assert w @ s <= penalty.value(w, INDPTR) + val + 1e-9
    if hasattr(penalty, "conjugate"):
        assert penalty.conjugate(dual.max() ** 2) == pytest.approx(val, rel=1e-6)


@pytest.mark.parametrize("s", [0.01, 0.3, 1.0, 10.0])
def test_moreau_projection_matches_cvxpy(s, rng):
    # Algorithm 3 of paper 002 against a generic conic solver.
    cp = pytest.importorskip("cvxpy")
    g = rng.standard_normal(12)
    indptr = np.array([0, 2, 5, 6, 10, 12])
    c = squared_group_l1_scales(group_norms(g, indptr), s)
    ours = g * np.repeat(c, np.diff(indptr))
    x = cp.Variable(12)
    norms = [cp.norm(x[a:b]) for a, b in zip(indptr[:-1], indptr[1:])]
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - g) / (2 * s) + 0.5 * cp.square(sum(norms))))
    prob.solve(solver=cp.CLARABEL)
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
        for t, (a, b) in enumerate(zip(INDPTR[:-1], INDPTR[1:])):
            if gn[t] <= step * theta:
                assert wn[t] == 0
            else:
                assert g[a:b] @ w[a:b] == pytest.approx(gn[t] * wn[t], rel=1e-12)
    # a large step removes every group but the largest
    w = pen.prox(g, 100.0, INDPTR)
    assert np.flatnonzero(group_norms(w, INDPTR)).tolist() == [int(np.argmax(gn))]


@pytest.mark.parametrize("alpha", [0.5, 2.0])
def test_squared_group_l1_conjugate_matches_cvxpy(alpha, rng):
    # FGM's lower bound (Theorem 2) is -C sum l*(.) - Omega*(s): Omega* must be
    # the true conjugate of (alpha/2)(sum_t ||w_t||)^2, by a conic solver too.
    cp = pytest.importorskip("cvxpy")
    pen = SquaredGroupL1(alpha)
    for _ in range(3):
        s = rng.standard_normal(9)
        conj = pen.conjugate(pen.dual_norm(s, INDPTR).max() ** 2)
        w = cp.Variable(9)
        norms = [cp.norm(w[a:b]) for a, b in zip(INDPTR[:-1], INDPTR[1:])]
        prob = cp.Problem(cp.Maximize(s @ w - 0.5 * alpha * cp.square(sum(norms))))
        prob.solve(solver=cp.CLARABEL)
        assert conj == pytest.approx(prob.value, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("q, qd", [(1.0, np.inf), (1.5, 3.0), (2.0, 2.0), (3.0, 1.5),
                                   (np.inf, 1.0)])
def test_l1_lq_dual_exponent_and_prox_zeroes_inside_the_dual_ball(q, qd, rng):
    # the mixed norm alpha * sum ||w_g||_q has conjugate = indicator of
    # {max_g ||s_g||_q' <= alpha}: the prox zeroes group g iff ||v_g||_q' <= step alpha
    pen = L1Lq(1.0, q=q)
    assert pen.q_dual == qd
    indptr = np.array([0, 2, 6, 7])
    s = rng.normal(size=7)
    got = pen.dual_norm(s, indptr)
    v = s * np.repeat(np.array([0.5, 0.999, 1.5]) / got, np.diff(indptr))
    norms_out = pen._norms(pen.prox(v, 1.0, indptr), indptr, q)
    assert norms_out[0] == 0 and norms_out[1] == 0 and norms_out[2] > 0
    if q == np.inf:
        np.testing.assert_allclose(L1Linf(1.0).dual_norm(s, indptr), got)


def test_l1_linf_prox_zeroes_group_iff_dual_norm_small():
    pen = L1Linf(1.0)
    v = np.array([0.2, -0.3, 3.0, 0.1])
    out = pen.prox(v, 1.0, np.array([0, 2, 4]))
    np.testing.assert_array_equal(out[:2], 0.0)  # ||v_1||_1 = 0.5 <= 1
    assert np.abs(out[2:]).max() < 3.0


@pytest.mark.parametrize("indptr", [[0, 2, 4, 6], [0, 1, 4, 6]], ids=["equal", "unequal"])
def test_matrix_prox_fast_path_is_the_prox_of_the_row_blocks(indptr, rng):
    # equal groups take a reshaped fast path: it must equal the vector prox of W.ravel()
    indptr = np.array(indptr)
    W = rng.normal(size=(6, 3))
    W[indptr[0]:indptr[1]] *= 0.05
    for pen in (PENALTIES.resolve(n).set_params(alpha=0.7) for n in PENALTIES.names()):
        if type(pen).matrix_prox is not BasePenalty.matrix_prox:
            continue  # a per-task penalty (checked against matrix_value above)
        got = pen.matrix_prox(W, 1.3, indptr)
        ref = pen.prox(W.ravel(), 1.3, indptr * 3).reshape(W.shape)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)
    assert np.all(GroupL1L2(0.7).matrix_prox(W, 1.3, indptr)[indptr[0]:indptr[1]] == 0)


def test_registry_and_errors():
    assert isinstance(get_penalty("group_l1_l2", alpha=2.0), GroupL1L2)
    assert PENALTIES.resolve("l1_lq", q=3).q == 3
    with pytest.raises(ValueError, match="Unknown penalty"):
        get_penalty("l3")
    pen = GroupL1L2(1.0)
    pen.set_params(alpha=3.0)
    assert pen.get_params() == {"alpha": 3.0}
    with pytest.raises(ValueError, match="Invalid parameter"):
        pen.set_params(beta=1.0)
    with pytest.raises(ValueError, match="'q' parameter of L1Lq"):
        L1Lq(1.0, q=0.5).value(np.ones(3))
    with pytest.raises(ValueError, match="'q' parameter of L1Lq"):
        L1Lq(1.0, q=np.nan).prox(np.ones(3), 1.0)
