"""Losses, each registered one: derivatives by finite differences, proxes and
conjugates by numerical optimisation, the FGM dual variables of Theorem 4.

Parametrised over ``LOSSES`` (plain and weighted, see ``conftest.py``): a new
registered loss is tested here with no new test code.  Where a loss is not
differentiable (the hinges' kinks) the one-sided differences disagree and that
point is not compared; most points must be compared.
"""

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

from kernlearn.losses import LOSSES, Square, SquaredHinge, get_loss
from .loss_cases import sample

EPS = 1e-6


def _one_sided(f, m, eps=EPS):
    """Right and left difference quotients of ``f`` at every margin entry."""
    base = f(m)
    right, left = np.empty(m.shape), np.empty(m.shape)
    for idx in np.ndindex(m.shape):
        up, dn = m.copy(), m.copy()
        up[idx] += eps
        dn[idx] -= eps
        right[idx] = (f(up) - base)[idx[0]] / eps
        left[idx] = (base - f(dn))[idx[0]] / eps
    return right, left


def _check_derivative(f, df, m, min_fraction=0.7):
    right, left = _one_sided(f, m)
    smooth = np.abs(right - left) <= 1e-4 * (1 + np.abs(right))
    assert smooth.mean() >= min_fraction, "too few differentiable points to compare"
    np.testing.assert_allclose(df(m)[smooth], (0.5 * (right + left))[smooth],
                               rtol=1e-4, atol=1e-6)


def test_grad_margin_matches_finite_differences(loss, rng):
    m, y = sample(loss, rng)
    _check_derivative(lambda z: loss.value(z, y), lambda z: loss.grad_margin(z, y), m)


def test_hess_margin_matches_finite_differences(loss, rng):
    if not callable(getattr(loss, "hess_margin", None)):
        pytest.skip(f"{loss!r} has no hess_margin")
    m, y = sample(loss, rng)
    _check_derivative(lambda z: loss.grad_margin(z, y), lambda z: loss.hess_margin(z, y), m)


def test_prox_matches_its_definition(loss, rng):
    # prox(z) = argmin_m step * loss(m, y) + (m - z)^2 / 2, row by row
    if not callable(getattr(loss, "prox", None)):
        pytest.skip(f"{loss!r} has no prox")
    m, y = sample(loss, rng)
    for step in (0.05, 1.0, 7.0):
        got = loss.prox(m, y, step)
        for i in range(len(m)):
            def obj(t, i=i):
                z = m.copy()
                z[i] = t
                return step * loss.value(z, y)[i] + 0.5 * (t - m[i]) ** 2
            ref = minimize_scalar(obj, bracket=(m[i] - 10, m[i] + 10), tol=1e-12)
            assert obj(got[i]) <= ref.fun + 1e-10
            assert got[i] == pytest.approx(ref.x, abs=1e-5)


def test_conjugate_at_grad_is_the_numerical_sup(loss, rng):
    # loss*(s) = sup_t <s, t> - loss(t) at s = loss'(m): the sup is computed,
    # never the formula restated; it is attained at t = m (Fenchel-Young).
    m, y = sample(loss, rng)
    conj = loss.conjugate_at_grad(m, y)
    g = loss.grad_margin(m, y)
    for i in range(6):
        def neg(t, i=i):
            z = m.copy()
            z[i] = np.reshape(t, m[i].shape)
            return -(np.sum(g[i] * z[i]) - loss.value(z, y)[i])
        starts = [m[i], m[i] + 1.0, m[i] - 2.0]
        best = min((minimize(neg, np.ravel(x0), method="Nelder-Mead",
                             options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000})
                    for x0 in starts), key=lambda r: r.fun)
        assert conj[i] == pytest.approx(-best.fun, abs=1e-6)


@pytest.mark.parametrize("name", [n for n in LOSSES.names()
                                  if callable(getattr(LOSSES.resolve(n), "dual_from_margin",
                                                      None))])
def test_dual_from_margin_is_minus_C_times_gradient(name, rng):
    # Theorem 4 of paper 002: alpha * y = -C * loss'(m) (residual for the square loss).
    loss = get_loss(name)
    m, y = sample(loss, rng)
    C = 3.7
    alpha = loss.dual_from_margin(m, y, C)
    lhs = alpha * y if loss.is_classification else alpha
    np.testing.assert_allclose(lhs, -C * loss.grad_margin(m, y), atol=1e-12)
    if loss.is_classification:
        assert np.all(alpha >= 0)


def test_squared_hinge_dual_is_C_times_training_error():
    loss = get_loss("squared_hinge")
    m = np.array([2.0, 0.5, -1.0])
    y = np.array([1.0, 1.0, 1.0])
    np.testing.assert_allclose(loss.dual_from_margin(m, y, 2.0), [0.0, 1.0, 4.0])


def test_loss_prox_table2_closed_forms():
    # paper 000, Table 2 on margins: squared hinge identity where y z >= 1,
    # else (z + s y)/(1 + s); square loss (z + s y)/(1 + s)
    z = np.array([2.0, 0.2, -1.0])
    y = np.array([1.0, 1.0, -1.0])
    np.testing.assert_allclose(SquaredHinge().prox(z, y, 0.5),
                               [2.0, (0.2 + 0.5) / 1.5, -1.0])
    np.testing.assert_allclose(Square().prox(z, y, 2.0), (z + 2.0 * y) / 3.0)


def test_unknown_loss_is_a_clear_error():
    with pytest.raises(ValueError, match="Unknown loss 'hingee'"):
        get_loss("hingee")
    with pytest.raises(TypeError):
        get_loss(None)
