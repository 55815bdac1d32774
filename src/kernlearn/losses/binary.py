"""Binary classification losses on margins, labels in {-1, +1}."""

import numpy as np
from scipy.special import expit

from ._base import BaseLoss


class SquaredHinge(BaseLoss):
    r"""Squared hinge loss :math:`\tfrac12 \max(0, 1 - y m)^2`.

    The dual variable of FGM (paper 002, Theorem 4) is
    :math:`\alpha_i = C \xi_i` with :math:`\xi_i = \max(0, 1 - y_i m_i)`.
    """

    lipschitz = 1.0

    def value(self, m, y):
        xi = np.maximum(0.0, 1.0 - y * m)
        return 0.5 * xi * xi

    def grad_margin(self, m, y):
        return -y * np.maximum(0.0, 1.0 - y * m)

    def hess_margin(self, m, y):
        """Generalised second derivative ``y^2 [1 - y m > 0]`` (Mangasarian, 2002)."""
        return np.where(y * m < 1.0, y * y, 0.0)

    def dual_from_margin(self, m, y, C):
        """FGM dual variables ``alpha = C * xi`` (paper 002, Theorem 4)."""
        return C * np.maximum(0.0, 1.0 - y * m)

    def prox(self, z, y, step):
        r"""Elementwise prox :math:`\arg\min_m \text{step}\,\ell(m, y) + \tfrac12 (m - z)^2`.

        Where the hinge is inactive (:math:`y z \ge 1`) the prox is the
        identity; otherwise :math:`m - z = \text{step}\, y (1 - y m)`, i.e.
        :math:`m = (z + \text{step}\, y) / (1 + \text{step}\, y^2)`
        (paper 000, Table 2, written on margins).

        Parameters
        ----------
        z : ndarray of shape (n_samples,)
            Point.
        y : ndarray of shape (n_samples,)
            Labels.
        step : float or ndarray
            Positive step (``1 / xi`` in the ADMM of paper 000).

        Returns
        -------
        m : ndarray of shape (n_samples,)

        References
        ----------
        Rakotomamonjy, Flamary, Yger (2013), Mach. Learn. 91, Table 2, eq. (22).
        """
        shrunk = (z + step * y) / (1.0 + step * y * y)
        return np.where(y * z >= 1.0, z, shrunk)


class Logistic(BaseLoss):
    r"""Logistic loss :math:`\log(1 + \exp(-y m))`.

    The FGM dual variable is :math:`\alpha_i = C e^{\xi_i}/(1 + e^{\xi_i})` with
    :math:`\xi_i = -y_i m_i` (paper 002, Theorem 4).
    """

    lipschitz = 0.25

    def value(self, m, y):
        return np.logaddexp(0.0, -y * m)

    def grad_margin(self, m, y):
        return -y * expit(-y * m)

    def hess_margin(self, m, y):
        """Second derivative ``y^2 sigma(y m) sigma(-y m)``."""
        s = expit(-y * m)
        return y * y * s * (1.0 - s)

    def dual_from_margin(self, m, y, C):
        """FGM dual variables ``alpha = C sigmoid(-y m)`` (paper 002, Theorem 4)."""
        return C * expit(-y * m)

    def prox(self, z, y, step, max_iter=50, tol=1e-12):
        r"""Elementwise prox :math:`\arg\min_m \text{step}\,\ell(m, y) + \tfrac12 (m - z)^2`.

        No closed form: the optimality condition
        :math:`h(m) = m - z - \text{step}\, y\, \sigma(-y m) = 0` has
        :math:`h' = 1 + \text{step}\, y^2 \sigma(1-\sigma) \ge 1` and its root
        lies between :math:`z` and :math:`z + \text{step}\, y`; safeguarded
        Newton steps inside that bracket converge in a few iterations.

        Parameters
        ----------
        z : ndarray of shape (n_samples,)
            Point.
        y : ndarray of shape (n_samples,)
            Labels.
        step : float or ndarray
            Positive step.
        max_iter : int, default=50
            Newton iterations cap.
        tol : float, default=1e-12
            Stop when all Newton updates are below ``tol``.

        Returns
        -------
        m : ndarray of shape (n_samples,)

        References
        ----------
        Rakotomamonjy, Flamary, Yger (2013), Mach. Learn. 91, eq. (22).
        """
        z = np.asarray(z, dtype=float)
        y = np.broadcast_to(np.asarray(y, dtype=float), z.shape)
        step = np.broadcast_to(np.asarray(step, dtype=float), z.shape)
        lo = np.minimum(z, z + step * y)
        hi = np.maximum(z, z + step * y)
        m = z + step * y * expit(-y * z)
        for _ in range(max_iter):
            s = expit(-y * m)
            h = m - z - step * y * s
            dh = 1.0 + step * y * y * s * (1.0 - s)
            # shrink the bracket with the sign of h (h is increasing)
            lo = np.where(h < 0, m, lo)
            hi = np.where(h > 0, m, hi)
            new = m - h / dh
            new = np.where((new <= lo) | (new >= hi), 0.5 * (lo + hi), new)
            done = np.max(np.abs(new - m), initial=0.0) <= tol
            m = new
            if done:
                break
        return m


class Hinge(BaseLoss):
    r"""Hinge loss :math:`\max(0, 1 - y m)` (non-smooth; ``grad_margin`` is a
    sub-gradient)."""

    def value(self, m, y):
        return np.maximum(0.0, 1.0 - y * m)

    def grad_margin(self, m, y):
        return np.where(y * m < 1.0, -y, 0.0)
