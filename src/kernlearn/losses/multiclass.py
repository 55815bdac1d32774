"""Multiclass losses on margin matrices (one column of margins per class)."""

import numpy as np

from ._base import BaseLoss


def _check(m, y):
    m = np.asarray(m, dtype=float)
    y = np.asarray(y)
    if m.ndim != 2 or m.shape[1] < 2:
        raise ValueError(
            f"multiclass margins must have shape (n_samples, n_classes>=2), got {m.shape}."
        )
    if y.shape != (m.shape[0],) or not np.issubdtype(y.dtype, np.integer):
        raise ValueError("y must be integer class indices of shape (n_samples,).")
    if y.size and (y.min() < 0 or y.max() >= m.shape[1]):
        raise ValueError(f"class indices must lie in [0, {m.shape[1] - 1}].")
    return m, y


class MulticlassHinge(BaseLoss):
    r"""Crammer-Singer multiclass hinge loss, eq. (1) of the OBSCURE paper.

    With one margin per class, :math:`m_c = \bar w\cdot\bar\phi(x, c)`,

    .. math:: \ell(m, y) = \max_{c \neq y}\, |1 - m_y + m_c|_+ .

    A sub-gradient with respect to the margins is :math:`-e_y + e_{\hat y}`
    when the loss is positive, with :math:`\hat y = \arg\max_{c\ne y} m_c`,
    and zero otherwise; through the joint feature map this is
    :math:`z = -(\bar\phi(x, y) - \bar\phi(x, \hat y))`, the update used by
    Algorithms 1 and 2.

    Notes
    -----
    ``m`` has shape ``(n_samples, n_classes)`` and ``y`` holds integer class
    indices in ``[0, n_classes)``.  Ties in the arg max are broken towards the
    smallest class index.

    References
    ----------
    Crammer, Singer (2002), JMLR 2.  Orabona, Jie, Caputo (2012), JMLR 13,
    eq. (1).
    """

    n_outputs = "n_classes"

    @staticmethod
    def _runner_up(m, y):
        masked = m.copy()
        masked[np.arange(m.shape[0]), y] = -np.inf
        return np.argmax(masked, axis=1)

    def value(self, m, y):
        m, y = _check(m, y)
        r = np.arange(m.shape[0])
        yhat = self._runner_up(m, y)
        return np.maximum(0.0, 1.0 - m[r, y] + m[r, yhat])

    def grad_margin(self, m, y):
        m, y = _check(m, y)
        r = np.arange(m.shape[0])
        yhat = self._runner_up(m, y)
        active = (1.0 - m[r, y] + m[r, yhat]) > 0
        g = np.zeros_like(m)
        g[r[active], y[active]] = -1.0
        g[r[active], yhat[active]] = 1.0
        return g

    def conjugate_at_grad(self, m, y):
        """Fenchel-Young ``<m, g> - loss`` per sample, ``g = grad_margin(m, y)``."""
        return np.einsum(
            "ij,ij->i", np.asarray(m, dtype=float), self.grad_margin(m, y)
        ) - self.value(m, y)
