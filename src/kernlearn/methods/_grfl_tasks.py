"""GrFL with tasks of their own rows (``task_rows``): the weighted loss in the master's layout.

With ``task_rows`` the restricted master (:class:`~kernlearn.solvers._dirty.DirtyProblem`)
holds the tasks' margins concatenated task by task (its *margin layout*), not in the
order of the rows.  Sample weights are given per row; this module puts them where the
master, the model without features and the held-out rows read them, so that a weighted
fit with tasks is the same problem per row as the single-task route's (paper 000,
eq. (17) with :math:`w_i \\ell(m_i, y_i)` in each task's datafit): integer weights are
repeated rows, zero weights removed rows.  The pricing step and the columns' unit norms
keep reading the weights in row order (the columns live on the rows, not on the layout).
"""

import numpy as np

from ..losses import weighted
from ..losses._base import WeightedLoss
from ._grfl_master import intercept_only

__all__ = ["layout_weights", "task_intercepts", "task_weighted_loss"]


def layout_weights(sample_weight, task_rows):
    """Row weights in the master's margin layout.

    Parameters
    ----------
    sample_weight : ndarray of shape (n_samples,) or None
        Weights of the rows.
    task_rows : list of ndarray or None
        Rows of each task (``None``: every task on every row, the weights stay per row).

    Returns
    -------
    ndarray or None
        ``sample_weight[concatenate(task_rows)]``: entry ``j`` weighs the ``j``-th
        margin of the concatenated tasks (``None`` when unweighted).
    """
    if sample_weight is None or task_rows is None:
        return sample_weight
    if not task_rows:
        return sample_weight[:0]
    return sample_weight[np.concatenate(task_rows)]


def task_weighted_loss(loss, sample_weight, task_rows):
    """``loss`` weighted per row, with the weights where the master reads the margins.

    Parameters
    ----------
    loss : BaseLoss
        The unweighted loss.
    sample_weight : ndarray of shape (n_samples,) or None
        Weights of the rows.
    task_rows : list of ndarray or None
        Rows of each task.

    Returns
    -------
    BaseLoss
        :func:`~kernlearn.losses.weighted` of the weights in the margin layout
        (:func:`layout_weights`); ``loss`` itself when unweighted.
    """
    return weighted(loss, layout_weights(sample_weight, task_rows))


def task_intercepts(loss, Y, task_rows):
    """Each task's bias of the model without features (:func:`intercept_only`).

    Parameters
    ----------
    loss : BaseLoss
        The master's loss (weighted in the margin layout with ``task_rows``).
    Y : ndarray
        ``(n, T)`` targets (``task_rows`` ``None``) or ``(n,)`` with ``task_rows``.
    task_rows : list of ndarray or None
        Rows of each task.

    Returns
    -------
    ndarray of shape (T,)
    """
    if task_rows is None:
        return np.array([intercept_only(loss, Y[:, t]) for t in range(Y.shape[1])])
    ends = np.cumsum([len(r) for r in task_rows], dtype=int)
    # each task's slice of the layout carries its rows' weights (an unweighted loss
    # is the same on every slice)
    return np.array([intercept_only(loss.rows(slice(e - len(r), e))
                                    if isinstance(loss, WeightedLoss) else loss, Y[r])
                     for e, r in zip(ends, task_rows)])
