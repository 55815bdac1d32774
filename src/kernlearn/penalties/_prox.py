"""Proximal primitives shared by the penalties.

Groups are contiguous blocks of the weight vector described by ``indptr``
(as in CSR matrices): group ``t`` is ``w[indptr[t]:indptr[t + 1]]``.
``indptr=None`` means every coordinate is its own group.
"""

import numpy as np


def singleton_indptr(n):
    """``indptr`` of ``n`` groups of one coordinate each."""
    return np.arange(n + 1)


def group_norms(w, indptr):
    """Euclidean norm of each contiguous group.

    Parameters
    ----------
    w : ndarray of shape (p,)
        Weights.
    indptr : ndarray of shape (n_groups + 1,)
        Group boundaries.

    Returns
    -------
    norms : ndarray of shape (n_groups,)
    """
    if len(indptr) - 1 == len(w):
        return np.abs(w)
    sq = np.add.reduceat(w * w, indptr[:-1]) if len(w) else np.zeros(0)
    sq[np.diff(indptr) == 0] = 0.0
    return np.sqrt(sq)


def expand(per_group, indptr):
    """Repeat one value per group over the group's coordinates."""
    return np.repeat(per_group, np.diff(indptr))


def block_soft_scales(norms, thresh):
    """Scales ``max(0, 1 - thresh / ||g_t||)`` of block soft-thresholding."""
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(norms > thresh, 1.0 - thresh / np.where(norms > 0, norms, 1.0), 0.0)
    return c


def squared_group_l1_scales(norms, s):
    r"""Scales of the Moreau projection of :math:`\tfrac{1}{2}(\sum_t\|w_t\|)^2`.

    Solves :math:`\min_w \tfrac{1}{2s}\|w - g\|^2 + \tfrac12(\sum_t \|w_t\|)^2`
    (paper 002, problem (40) with :math:`s = 1/\tau`) by Algorithm 3: sort the
    group norms :math:`u`, find
    :math:`\rho = \max\{j : u_{(j)} - \tfrac{s}{1 + js}\sum_{i\le j} u_{(i)} > 0\}`,
    threshold :math:`\varsigma = \tfrac{s}{1+\rho s}\sum_{i\le\rho}u_{(i)}`, and
    return :math:`c_t = \max(u_t - \varsigma, 0)/u_t` so that
    :math:`S(g_t) = c_t g_t`.

    Parameters
    ----------
    norms : ndarray of shape (T,)
        Group norms :math:`u_t = \|g_t\|`.
    s : float
        Prox step (penalty weight times step size).

    Returns
    -------
    scales : ndarray of shape (T,)

    References
    ----------
    Tan, Tsang, Wang (2014), JMLR, "Towards ultrahigh dimensional feature
    selection for big data", Algorithm 3 and Proposition 3.
    """
    u = np.sort(norms)[::-1]
    if u.size == 0 or u[0] <= 0:
        return np.zeros_like(norms)
    j = np.arange(1, u.size + 1)
    csum = np.cumsum(u)
    cond = u - s / (1.0 + j * s) * csum > 0
    rho = j[cond][-1]
    thresh = s / (1.0 + rho * s) * csum[rho - 1]
    return block_soft_scales(norms, thresh)
