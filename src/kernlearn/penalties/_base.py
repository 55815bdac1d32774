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

Multi-task weights
------------------
GrFL's penalties act on a weight matrix ``W`` of shape ``(p, T)`` (one column
per task) whose rows are grouped by feature.  :meth:`BasePenalty.matrix_value`,
:meth:`~BasePenalty.matrix_prox` and :meth:`~BasePenalty.matrix_dual_norm`
apply the penalty to each feature's block of rows *across* tasks (the joint
norms of paper 000, Table 1, rows 3-4); a penalty that acts on each task
separately overrides them (:class:`~kernlearn.penalties.PerTaskL1Lq`).

Optional methods
----------------
prox_scales(norms, step) -> ndarray
    For penalties whose prox only rescales each group of ``w``
    (``prox(w)_t = c_t w_t``), the scales ``c_t`` from the group norms.  The
    APG solver then updates cached margins without touching the data
    (paper 002, eq. 42).
"""

from numbers import Real

import numpy as np

from .._component import ComponentMixin
from ._prox import singleton_indptr


class BasePenalty(ComponentMixin):
    """Base class of all penalties; see the module docstring for the contract."""

    @staticmethod
    def _constraints():
        # (built on the first check, not on import: Dask workers import the
        # penalties, and no scikit-learn)
        from sklearn.utils._param_validation import Interval

        return {"alpha": [Interval(Real, 0, None, closed="left")]}

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

    # ------------------------------------------------ multi-task weights
    def matrix_value(self, W, indptr):
        """Penalty of a ``(p, T)`` weight matrix, groups = row blocks across tasks.

        Parameters
        ----------
        W : ndarray of shape (p, T)
            Weights, one column per task.
        indptr : ndarray of shape (n_groups + 1,)
            Row groups (one per feature).

        Returns
        -------
        value : float
        """
        return self.value(np.asarray(W).ravel(), np.asarray(indptr) * W.shape[1])

    def matrix_prox(self, W, step, indptr):
        """Prox of :meth:`matrix_value` at ``W``.

        Parameters
        ----------
        W : ndarray of shape (p, T)
            Point.
        step : float
            Step size.
        indptr : ndarray of shape (n_groups + 1,)
            Row groups.

        Returns
        -------
        X : ndarray of shape (p, T)
        """
        W = np.asarray(W)
        indptr = np.asarray(indptr)
        sizes = np.diff(indptr)
        rescales = type(self).prox is BasePenalty.prox  # prox = prox_scales per group
        if rescales and len(sizes) and np.all(sizes == sizes[0]):
            # equal groups (GrFL's features): one row of a reshaped view per
            # group, norms and scaling without index bookkeeping
            B = W.reshape(len(sizes), -1)
            c = self.prox_scales(np.sqrt(np.einsum("ij,ij->i", B, B)), step)
            return (B * c[:, None]).reshape(W.shape)
        return self.prox(W.ravel(), step, indptr * W.shape[1]).reshape(W.shape)

    def matrix_dual_norm(self, H, indptr):
        """Dual norm of :meth:`matrix_value` restricted to each row group.

        A group whose weights are all zero satisfies the optimality
        conditions iff this dual norm of its gradient block is at most
        ``alpha`` (paper 000, eqs. (3) and (7)): the pricing score.

        Parameters
        ----------
        H : ndarray of shape (p, T)
            Gradient correlations, one column per task.
        indptr : ndarray of shape (n_groups + 1,)
            Row groups.

        Returns
        -------
        norms : ndarray of shape (n_groups,)
        """
        H = np.asarray(H)
        ip = np.asarray(indptr) * H.shape[1]
        norms = self.dual_norm(H.ravel(), ip)
        if len(norms) == H.size and len(ip) - 1 != H.size:
            # a separable penalty (l1) scores coordinates: the dual norm of a
            # sum over the coordinates of a block is their largest score
            norms = np.maximum.reduceat(norms, ip[:-1]) if len(ip) > 1 else norms[:0]
        return norms
