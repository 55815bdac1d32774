"""Separable penalties."""

import numpy as np

from ._base import BasePenalty


class L1(BasePenalty):
    r"""Lasso penalty :math:`\alpha \|w\|_1`.

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength.
    """

    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def value(self, w, indptr=None):
        return self.alpha * float(np.abs(w).sum())

    def prox(self, w, step, indptr=None):
        return np.sign(w) * np.maximum(np.abs(w) - step * self.alpha, 0.0)

    def dual_norm(self, scores, indptr=None):
        return np.abs(scores)
