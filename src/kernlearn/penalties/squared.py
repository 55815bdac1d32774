"""Squared group norms: FGM's squared group-l1 (and OBSCURE's (2,p) norm)."""

import numpy as np

from ._base import BasePenalty
from ._prox import group_norms, squared_group_l1_scales


class SquaredGroupL1(BasePenalty):
    r"""FGM's regulariser :math:`\tfrac{\alpha}{2}\big(\sum_t \|w_t\|_2\big)^2`.

    Its prox is the Moreau projection of Algorithm 3 (paper 002), which only
    rescales each group, so the APG line search can reuse cached products
    (eq. 42).  The dual norm is :math:`\max_t \|s_t\|_2` and the Fenchel
    conjugate is :math:`\tfrac{1}{2\alpha}\max_t\|s_t\|_2^2`.

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength (FGM uses 1 and puts ``C`` on the loss).

    References
    ----------
    Tan, Tsang, Wang (2014), JMLR 15, eq. (31) and Algorithm 3.
    """

    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def value(self, w, indptr=None):
        s = group_norms(w, self._indptr(w, indptr)).sum()
        return 0.5 * self.alpha * float(s) ** 2

    def prox_scales(self, norms, step):
        return squared_group_l1_scales(norms, step * self.alpha)

    def dual_norm(self, scores, indptr=None):
        return group_norms(np.asarray(scores), self._indptr(scores, indptr))

    def conjugate(self, dual_norm_sq):
        """Conjugate value ``dual_norm_sq / (2 alpha)`` from the squared dual norm."""
        return 0.5 * dual_norm_sq / self.alpha
