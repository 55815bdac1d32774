"""The penalty contract: regularisers on a weight vector split into groups.

Groups are contiguous blocks given by ``indptr`` (see
:mod:`kernlearn.penalties._prox`); ``indptr=None`` means singleton groups.

Required methods
----------------
value(w, indptr) -> float
prox(w, step, indptr) -> ndarray
    ``argmin_x 0.5 ||x - w||^2 + step * value(x)``.
dual_norm(scores, indptr) -> ndarray
    Per-group dual norm of the scores; pricing compares it with ``alpha`` to
    measure how much a candidate group violates the optimality conditions.

Optional methods
----------------
prox_scales(norms, step) -> ndarray
    For penalties whose prox only rescales each group of ``w``
    (``prox(w)_t = c_t w_t``), the scales ``c_t`` from the group norms.  The
    APG solver then updates cached margins without touching the data
    (paper 002, eq. 42).
"""

import numpy as np

from .._component import ComponentMixin
from ._prox import singleton_indptr


class BasePenalty(ComponentMixin):
    """Base class of all penalties; see the module docstring for the contract."""

    @staticmethod
    def _indptr(w, indptr):
        return singleton_indptr(len(w)) if indptr is None else np.asarray(indptr)

    def value(self, w, indptr=None):  # pragma: no cover - contract
        """Penalty value.

        Parameters
        ----------
        w : ndarray of shape (p,)
            Weights.
        indptr : ndarray of shape (n_groups + 1,), optional
            Group boundaries.

        Returns
        -------
        value : float
        """
        raise NotImplementedError

    def prox(self, w, step, indptr=None):
        """Proximal operator ``argmin_x 0.5||x - w||^2 + step * value(x)``.

        Parameters
        ----------
        w : ndarray of shape (p,)
            Point.
        step : float
            Step size.
        indptr : ndarray of shape (n_groups + 1,), optional
            Group boundaries.

        Returns
        -------
        x : ndarray of shape (p,)
        """
        from ._prox import expand, group_norms

        ip = self._indptr(w, indptr)
        return w * expand(self.prox_scales(group_norms(w, ip), step), ip)

    def dual_norm(self, scores, indptr=None):  # pragma: no cover - contract
        """Per-group dual norm of ``scores``.

        Parameters
        ----------
        scores : ndarray of shape (p,)
            Correlations of candidate columns with the loss gradient.
        indptr : ndarray of shape (n_groups + 1,), optional
            Group boundaries.

        Returns
        -------
        norms : ndarray of shape (n_groups,)
        """
        raise NotImplementedError
