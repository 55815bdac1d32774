r"""Kernel ridge of tasks whose inputs repeat, solved on their distinct rows.

MK-MTFL with the square loss solves, at every evaluation of its mirror
descent, each task's :math:`(K + D)\beta + b\mathbf 1 = y`,
:math:`\mathbf 1^\top\beta = 0`, with :math:`D = \mathrm{diag}(1/(2C_i))` and
:math:`K` the effective kernel.  Rows whose every base kernel row is the same
(repeated inputs: Star's tasks of 700 rows have 140 distinct ones) have the
same row of :math:`K`: with :math:`g` such a group, :math:`c_g = \sum_{i\in g}
2C_i` and :math:`\bar y_g` the :math:`2C_i`-weighted mean of its targets,
:math:`\beta_i = 2C_i(y_i - f_g - b)` (:math:`f_g` the group's entry of
:math:`K\beta`), so the group's sum
:math:`u_g = \sum_{i\in g}\beta_i` solves the same kind of system on the
distinct rows, :math:`(K_u + \mathrm{diag}(1/c))u + b\mathbf 1 = \bar y`,
:math:`\mathbf 1^\top u = 0`, and

.. math:: \beta_i = 2C_i(y_i - \bar y_g) + \frac{2C_i}{c_g}u_g .

The same solution (to round-off), from an :math:`m_u\times m_u` system
instead of :math:`m\times m`; :math:`\beta_t^\top K_{tj}\beta_t =
u^\top K_{u,j}u` for every base kernel.  The model, its duals, biases and
kernel weights are those of the full solve.
"""

from dataclasses import dataclass

import numpy as np

from ._loo_eigen import _distinct_rows

__all__ = ["RidgeRepeats", "grouped_ridge", "input_groups", "ridge_repeats"]

#: tasks of fewer rows are solved whole (the bookkeeping would cost more)
_FROM_ROWS = 64
#: the distinct rows are used when they are at most this share of the rows
#: (a few repeats save little and would change the solves' rounding for it)
_MAX_SHARE = 0.9


@dataclass
class RidgeRepeats:
    """One bucket's kernel ridge on its tasks' distinct rows.

    Attributes
    ----------
    Gp : ndarray of shape (T_b, k, m_u (m_u + 1) / 2)
        Packed upper triangles of the base kernels on the distinct rows
        (:func:`~kernlearn.methods.mtmkl.mtfl._task_major`'s layout).
    y : ndarray of shape (T_b, m_u)
        :math:`\\bar y` of each distinct row (zero on padding).
    mask : ndarray of shape (T_b, m_u)
        Valid distinct rows.
    C : ndarray of shape (T_b, m_u)
        :math:`c_g / 2`, the loss weights of the reduced system (one on padding).
    group : ndarray of int of shape (T_b, m)
        Each row's distinct row.
    offset, ratio : ndarray of shape (T_b, m)
        :math:`2C_i(y_i - \\bar y_g)` and :math:`2C_i / c_g` (zero on padding).
    """

    Gp: np.ndarray
    y: np.ndarray
    mask: np.ndarray
    C: np.ndarray
    group: np.ndarray
    offset: np.ndarray
    ratio: np.ndarray

    def expand(self, u):
        """The duals of every row from the distinct rows' ``u`` (``(T_b, m_u)``)."""
        return self.offset + self.ratio * np.take_along_axis(u, self.group, axis=1)


def ridge_repeats(K, y, mask, C):
    """The distinct-row system of one bucket, or ``None`` where it saves little.

    Parameters
    ----------
    K : ndarray of shape (k, T_b, m, m)
        Base kernel blocks of the bucket's tasks (a task's rows first, then
        its padding).
    y : ndarray of shape (T_b, m)
        Targets, zero on padding.
    mask : ndarray of shape (T_b, m)
        Valid rows.
    C : float or ndarray of shape (T_b, m)
        Loss weights (:func:`~kernlearn.methods.mtmkl.inner.per_bucket`'s).

    Returns
    -------
    repeats : RidgeRepeats or None
        ``None`` when the tasks have fewer than 64 rows or their distinct rows
        are more than nine tenths of them.
    """
    T, m = mask.shape
    if m < _FROM_ROWS:
        return None
    sizes = mask.sum(1)
    for t, n in enumerate(sizes):
        # a lower bound first, the distinct rows of four columns of every kernel
        # (rows that differ there differ): where it is already too many, the
        # whole rows are not compared (Wage's tasks: 93 % distinct)
        few = np.concatenate([Kj[t, :n][:, [0, n // 3, 2 * n // 3, n - 1]] for Kj in K],
                             axis=1)
        if len(_distinct_rows(few)[0]) > _MAX_SHARE * m:
            return None
    # rows whose rows of every base kernel are the same, whatever their targets
    # (by a hash of the rows checked against them: the SVM's key search of
    # repeated_rows over the packed kernels took a third of Star's fit)
    first = np.tile(np.arange(m), (T, 1))
    for t, n in enumerate(sizes):
        uniq, inv = _distinct_rows(np.concatenate([Kj[t, :n, :n] for Kj in K], axis=1))
        first[t, :n] = uniq[inv]
    reps = [np.flatnonzero(mask[t] & (first[t] == np.arange(m))) for t in range(T)]
    m_u = max(len(r) for r in reps)
    if m_u > _MAX_SHARE * m:
        return None
    k = len(K)
    a, b = np.triu_indices(m_u)  # the packed layout of m_u rows
    Gu = np.zeros((T, k, len(a)))
    group = np.zeros((T, m), np.int64)
    for t, r in enumerate(reps):
        pos = np.zeros(m, np.int64)
        pos[r] = np.arange(len(r))
        group[t] = np.where(mask[t], pos[first[t]], 0)
        inside = b < len(r)  # (a <= b: both distinct rows of the task)
        ra, rb = r[a[inside]], r[b[inside]]  # (ra <= rb: r ascends)
        Gu[t][:, inside] = K[:, t, ra, rb]
    mask_u = np.arange(m_u)[None, :] < np.array([len(r) for r in reps])[:, None]
    return grouped_ridge(Gu, group, mask_u, y, mask, C)


def input_groups(maps, mask):
    """Each row's distinct row of a bucket from its tasks' distinct inputs, or
    ``None`` where :func:`ridge_repeats` would solve the whole rows.

    Parameters
    ----------
    maps : list of tuple
        Per task, :func:`~kernlearn.methods.mtmkl._loo_eigen.distinct_inputs`'
        valid positions, distinct inputs' positions and each row's distinct input.
    mask : ndarray of shape (T_b, m)
        Valid rows.

    Returns
    -------
    group : ndarray of int of shape (T_b, m)
        Each row's distinct row (zero on padding).
    mask_u : ndarray of shape (T_b, m_u)
        Valid distinct rows.
    """
    T, m = mask.shape
    sizes = np.array([len(u) for _, u, _ in maps])
    # (the thresholds of ridge_repeats: the same buckets take this route)
    if m < _FROM_ROWS or sizes.max() > _MAX_SHARE * m:
        return None
    group = np.zeros((T, m), np.int64)
    for t, (r, _, inv) in enumerate(maps):
        group[t, r] = inv
    return group, np.arange(sizes.max())[None, :] < sizes[:, None]


def grouped_ridge(Gu, group, mask_u, y, mask, C):
    """:class:`RidgeRepeats` of a bucket from its packed kernels on the distinct
    rows ``Gu`` (``(T_b, k, m_u (m_u + 1) / 2)``), each row's distinct row
    ``group`` and the valid distinct rows ``mask_u``; ``y``, ``mask``, ``C`` as
    in :func:`ridge_repeats`."""
    T, m_u = mask_u.shape
    w2 = np.where(mask, 2.0 * np.broadcast_to(C, mask.shape), 0.0)
    c, yw = np.zeros((T, m_u)), np.zeros((T, m_u))
    for t in range(T):
        c[t] = np.bincount(group[t], weights=w2[t], minlength=m_u)
        yw[t] = np.bincount(group[t], weights=w2[t] * y[t], minlength=m_u)
    c_safe = np.where(mask_u, c, 1.0)
    ybar = np.where(mask_u, yw / c_safe, 0.0)
    offset = w2 * (y - np.take_along_axis(ybar, group, axis=1))
    ratio = w2 / np.take_along_axis(c_safe, group, axis=1)
    return RidgeRepeats(Gu, ybar, mask_u, np.where(mask_u, c / 2.0, 1.0), group,
                        offset, ratio)
