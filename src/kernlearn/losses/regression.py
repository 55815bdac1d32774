"""Regression losses on margins."""

import numpy as np

from ._base import BaseLoss


class Square(BaseLoss):
    r"""Square loss :math:`\tfrac12 (y - m)^2`.

    Used by :class:`~kernlearn.FGMRegressor`; the FGM dual variable is the
    residual ``C (y - m)``.
    """

    lipschitz = 1.0
    is_classification = False

    def value(self, m, y):
        r = y - m
        return 0.5 * r * r

    def grad_margin(self, m, y):
        return m - y

    def hess_margin(self, m, y):
        """Second derivative: one everywhere."""
        return np.ones_like(m)

    def dual_from_margin(self, m, y, C):
        """Residual dual variables ``C (y - m)``."""
        return C * (y - m)

    def prox(self, z, y, step):
        r"""Elementwise prox :math:`\arg\min_m \tfrac{\text{step}}{2}(y - m)^2 + \tfrac12 (m - z)^2`.

        Closed form :math:`m = (z + \text{step}\, y) / (1 + \text{step})`
        (paper 000, Table 2, written on margins).

        Parameters
        ----------
        z : ndarray of shape (n_samples,)
            Point.
        y : ndarray of shape (n_samples,)
            Targets.
        step : float or ndarray
            Positive step.

        Returns
        -------
        m : ndarray of shape (n_samples,)

        References
        ----------
        Rakotomamonjy, Flamary, Yger (2013), Mach. Learn. 91, Table 2.
        """
        return (z + step * y) / (1.0 + step)
