"""Losses: gradients by finite differences, dual recovery, conjugates."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from kernlearn.losses import LOSSES, get_loss

SMOOTH = ["squared_hinge", "logistic", "square"]


def _targets(name, rng, n):
    if LOSSES.resolve(name).is_classification:
        return rng.choice([-1.0, 1.0], n)
    return rng.standard_normal(n)


@pytest.mark.parametrize("name", SMOOTH)
def test_grad_margin_matches_finite_differences(name, rng):
    loss = get_loss(name)
    m = rng.standard_normal(50) * 2
    y = _targets(name, rng, 50)
    eps = 1e-6
    fd = (loss.value(m + eps, y) - loss.value(m - eps, y)) / (2 * eps)
    np.testing.assert_allclose(loss.grad_margin(m, y), fd, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", SMOOTH)
def test_dual_from_margin_is_minus_C_times_gradient(name, rng):
    # Theorem 4 of paper 002: alpha * y = -C * loss'(m) (residual for the square loss).
    loss = get_loss(name)
    m = rng.standard_normal(40)
    y = _targets(name, rng, 40)
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


@pytest.mark.parametrize("name", SMOOTH)
def test_conjugate_at_grad_matches_numerical_conjugate(name, rng):
    loss = get_loss(name)
    for _ in range(5):
        m = rng.standard_normal(1)
        y = _targets(name, rng, 1)
        s = loss.grad_margin(m, y)[0]
        # loss*(s) = sup_t s t - loss(t)
        res = minimize_scalar(lambda t: -(s * t - loss.value(np.array([t]), y)[0]))
        assert loss.conjugate_at_grad(m, y)[0] == pytest.approx(-res.fun, abs=1e-6)


def test_unknown_loss_is_a_clear_error():
    with pytest.raises(ValueError, match="Unknown loss 'hingee'"):
        get_loss("hingee")
    with pytest.raises(TypeError):
        get_loss(None)
