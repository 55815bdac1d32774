"""Group penalties (sums of per-group norms)."""

import numpy as np

from ._base import BasePenalty
from ._prox import block_soft_scales, group_norms


class GroupL1L2(BasePenalty):
    r"""Group lasso :math:`\alpha \sum_t \|w_t\|_2`.

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength.
    """

    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def value(self, w, indptr=None):
        return self.alpha * float(group_norms(w, self._indptr(w, indptr)).sum())

    def prox_scales(self, norms, step):
        return block_soft_scales(norms, step * self.alpha)

    def dual_norm(self, scores, indptr=None):
        return group_norms(np.asarray(scores), self._indptr(scores, indptr))
