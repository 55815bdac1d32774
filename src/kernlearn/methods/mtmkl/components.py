r"""Shared components (an extension of paper 004): which block is which.

With ``shared=True`` every base kernel :math:`j` gets, next to its
task-specific block (weight vectors :math:`w_{tj}`, one per task), a *shared*
block whose weight vector :math:`w_{0j}` is common to all tasks, and each
task's bias becomes one free common bias plus a deviation :math:`d_t` carried
by a task-specific *constant* block (kernel :math:`s\mathbf 1\mathbf 1^\top`,
:func:`bias_scale`):

.. math:: f_t(x) = \sum_j\langle w_{0j} + w_{tj}, \phi_j(x)\rangle + b + d_t.

All blocks enter the same mixed norm; the solvers see them as one list.
:class:`BlockLayout` names the positions in that list, so that no code
counts "k task-specific, then the constant one, then k shared" by hand.
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["BlockLayout", "bias_scale"]


@dataclass(frozen=True)
class BlockLayout:
    """Positions of the task-specific, constant and shared blocks of a model.

    The solvers take the blocks as one list: the task-specific blocks of the
    base kernels, then (with shared components) the constant block of the
    bias deviations, then the shared blocks, one per base kernel.

    Attributes
    ----------
    n_kernels : int
        Number of base kernels k.
    shared : bool
        Whether the model has shared components (else only the k
        task-specific blocks of the paper's model).
    """

    n_kernels: int
    shared: bool = False

    @property
    def task_specific(self):
        """Positions of the task-specific blocks of the base kernels, ``(k,)``."""
        return np.arange(self.n_kernels)

    @property
    def constant(self):
        """Position of the constant block of the bias deviations (``None`` without)."""
        return self.n_kernels if self.shared else None

    @property
    def shared_blocks(self):
        """Positions of the shared blocks, one per base kernel (empty without)."""
        k = self.n_kernels
        return np.arange(k + 1, 2 * k + 1) if self.shared else np.arange(0)

    @property
    def n_blocks(self):
        """Length of the block list."""
        return 2 * self.n_kernels + 1 if self.shared else self.n_kernels

    @property
    def within_task(self):
        """Positions of the blocks acting within each task (task-specific, constant)."""
        return np.arange(self.n_kernels + 1 if self.shared else self.n_kernels)

    def shared_mask(self):
        """Boolean mask of the shared blocks over the block list.

        Returns
        -------
        mask : ndarray of bool of shape (n_blocks,)
        """
        mask = np.zeros(self.n_blocks, dtype=bool)
        mask[self.shared_blocks] = True
        return mask

    def arrange(self, task_specific, constant=None, shared=None):
        """The block list from its parts.

        Parameters
        ----------
        task_specific : list
            One entry per base kernel.
        constant : object, optional
            The constant block (required with shared components).
        shared : list, optional
            One entry per base kernel (required with shared components).

        Returns
        -------
        blocks : list
            ``task_specific``, then ``constant`` and ``shared`` with shared
            components.
        """
        if not self.shared:
            return list(task_specific)
        return [*task_specific, constant, *shared]


def bias_scale(y, task_rows, sample_weight=None):
    r"""Scale :math:`s` of the constant kernel that carries the bias deviations.

    With shared components each task's bias is :math:`b + d_t`, and
    :math:`d` is penalised through the constant kernel :math:`s\mathbf 1
    \mathbf 1^\top` (a penalty :math:`\|d\|^2/s` at full trace).  At
    :math:`s = 1` that pools the task levels as strongly as a unit-diagonal
    kernel's weights: right when the levels differ by less than the spread
    within tasks (School: the variance of the schools' means is 0.18 of the
    within-school variance), ruinous when they differ by far more (levels
    100 within-task deviations apart would be shrunk by several deviations,
    and every task's mean missed).  So :math:`s = \max(1, v_b / v_w)`: the
    variance of the task means over the mean within-task variance (training
    targets, weighted); levels far apart are then nearly free, as in the
    paper's model.

    Parameters
    ----------
    y : ndarray of shape (n,)
    task_rows : list of ndarray of int
    sample_weight : ndarray of shape (n,), optional

    Returns
    -------
    s : float
    """
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    means, within, sizes = [], [], []
    for r in task_rows:
        mu = np.average(y[r], weights=w[r])
        means.append(mu)
        within.append(np.average((y[r] - mu) ** 2, weights=w[r]))
        sizes.append(w[r].sum())
    sizes = np.asarray(sizes)
    v_b = np.average((np.asarray(means) - np.average(means, weights=sizes)) ** 2,
                     weights=sizes)
    v_w = np.average(within, weights=sizes)
    return float(max(1.0, v_b / v_w)) if v_w > 0 else 1.0
