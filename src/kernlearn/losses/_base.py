"""The loss contract: datafits that work on margins, never on features.

A loss sees the margins ``m = f(x)`` of the current model and the targets
``y``.  Pricing multiplies ``grad_margin`` by candidate columns, so a new
loss is usable by every family without knowing about features.

Required methods
----------------
value(m, y) -> ndarray of per-sample losses
grad_margin(m, y) -> ndarray, derivative of each loss with respect to its margin

Optional methods
----------------
dual_from_margin(m, y, C) -> ndarray
    The non-negative dual variables ``alpha`` of the FGM dual (paper 002,
    Theorem 4), recovered from the training errors.
prox(z, y, step) -> ndarray
    ``argmin_m step * loss(m, y) + 0.5 * (m - z)**2`` elementwise (ADMM masters).
hess_margin(m, y) -> ndarray
    Second derivative of each loss in its margin (a generalised one where the
    loss is only once differentiable, as the squared hinge); the proximal
    Newton master builds its Hessian from it.

Attributes
----------
lipschitz : float
    Bound on the second derivative of the loss in the margin (smoothness).
"""

import numpy as np

from .._component import ComponentMixin


class BaseLoss(ComponentMixin):
    """Base class of all losses; see the module docstring for the contract."""

    lipschitz = np.inf
    is_classification = True

    def value(self, m, y):  # pragma: no cover - contract
        """Per-sample loss values.

        Parameters
        ----------
        m : ndarray of shape (n_samples,)
            Margins.
        y : ndarray of shape (n_samples,)
            Targets (``-1``/``+1`` for binary losses).

        Returns
        -------
        values : ndarray of shape (n_samples,)
        """
        raise NotImplementedError

    def grad_margin(self, m, y):  # pragma: no cover - contract
        """Derivative of each loss with respect to its margin.

        Parameters
        ----------
        m : ndarray of shape (n_samples,)
            Margins.
        y : ndarray of shape (n_samples,)
            Targets.

        Returns
        -------
        grad : ndarray of shape (n_samples,)
        """
        raise NotImplementedError

    def conjugate_at_grad(self, m, y):
        """Fenchel conjugate ``loss*(loss'(m))`` evaluated at the margins.

        By the Fenchel-Young equality ``loss*(loss'(m)) = m loss'(m) - loss(m)``,
        which is what duality gaps need when the dual point is recovered from
        the margins.

        Parameters
        ----------
        m : ndarray of shape (n_samples,)
            Margins.
        y : ndarray of shape (n_samples,)
            Targets.

        Returns
        -------
        conj : ndarray of shape (n_samples,)
        """
        return m * self.grad_margin(m, y) - self.value(m, y)
