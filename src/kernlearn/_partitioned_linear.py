r"""Row-partitioned linear models: per-partition sums, reduced on a cluster.

A linear model on a block of columns :math:`\\Phi` (``p`` active columns,
``T`` tasks, intercepts) reads its rows only through sums over row
partitions :math:`P`: margins :math:`m_P = \\Phi_P V + b` (kept per
partition), the loss :math:`\\sum_P \\ell(m_P, y_P)`, the gradient
:math:`\\sum_P \\Phi_P'\\ell'(m_P)`, the generalised Hessian
:math:`\\sum_P [\\Phi_P\\ 1]'\\mathrm{diag}(\\ell''_P)[\\Phi_P\\ 1]`
(``(p+1)^2`` per task, refreshed only where the curvature moved), the Gram
columns of appended columns and column moments of the inputs.

``block_*`` functions compute one partition's term (a :class:`RowBlock`:
its inputs, targets and active columns); they are mapped over the partitions
by :class:`~kernlearn.partitioned.RowFutures` (:meth:`~kernlearn.partitioned.RowFutures.map`)
and their results reduced on the cluster
(:meth:`~kernlearn.partitioned.RowFutures.reduce`), so the client receives
``p``-, ``p^2``- or ``n_features``-sized sums, never ``n``-sized arrays.

Used by GrFL on Dask arrays (:mod:`kernlearn.methods._grfl_dask`); nothing
here is specific to GrFL.
"""

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from .partitioned import _sum_all
from .utils._sparse import _sparse_centred_squares
from .solvers.grfl_newton import hessian_block

__all__ = [
    "HessianBlock",
    "hessian_of",
    "abs_max",
    "block_smooth_terms",
    "max_all",
    "sum_smooth_terms",
    "RowBlock",
    "block_column_moments",
    "block_curvature",
    "block_gradient",
    "block_gram_columns",
    "block_hessian",
    "block_hessian_extend",
    "block_hessian_refresh",
    "block_loss",
    "block_loss_gradients",
    "block_margins",
    "block_reserve",
]


# ------------------------------------------------------------------ reductions
def max_all(parts):
    """Largest of a list of numbers (a reduction)."""
    return max(parts)


def hessian_of(block):
    """The Hessians of a :class:`HessianBlock` (mapped before reducing, so that
    the block's ``n_rows``-sized curvatures stay where they are)."""
    return block.H


# ------------------------------------------------------------ the row blocks
@dataclass(frozen=True)
class RowBlock:
    """One row partition of a linear model's data, on a worker.

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_matrix of shape (n_rows, n_features)
        The partition's (standardised) inputs.
    Y : ndarray of shape (n_rows, T), optional
        Its targets.
    Phi : ndarray of shape (n_rows, capacity), optional
        Buffer of the active columns on these rows (column-major); only the
        first ``p`` columns belong to this block.  Appending writes the next
        columns of the same buffer, which leaves every earlier block (with a
        smaller ``p``) unchanged.
    p : int, default=0
        Active columns.
    """

    X: object
    Y: np.ndarray = None
    Phi: np.ndarray = None
    p: int = 0

    @property
    def active(self):
        """The active columns ``Phi[:, :p]`` (no copy)."""
        return self.Phi[:, : self.p]


@dataclass(frozen=True)
class HessianBlock:
    """A partition's part of the generalised Hessians and its curvatures.

    Parameters
    ----------
    H : ndarray of shape (T, p + 1, p + 1)
        :math:`[\\Phi_P\\ 1]'\\mathrm{diag}(d_t)[\\Phi_P\\ 1]` per task (intercept last).
    D : ndarray of shape (n_rows, T)
        The curvatures ``H`` was computed at.
    p : int
        Active columns ``H`` covers.
    """

    H: np.ndarray
    D: np.ndarray
    p: int


def block_column_range(X):
    """Each column's minimum and maximum in a block (sparse: its implicit zeros count).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_rows, n_features)

    Returns
    -------
    bounds : ndarray of shape (2, n_features) or None
        ``None`` for a block without rows (:func:`combined_ranges` skips it).
    """
    if X.shape[0] == 0:
        return None
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        lo = np.asarray(X.min(axis=0).toarray()).ravel()
        hi = np.asarray(X.max(axis=0).toarray()).ravel()
    else:
        lo, hi = np.min(X, axis=0), np.max(X, axis=0)
    return np.vstack([lo, hi]).astype(np.float64)


def combined_ranges(bounds):
    """The range of several blocks from theirs (:func:`block_column_range`).

    Parameters
    ----------
    bounds : list of ndarray of shape (2, n_features) or None

    Returns
    -------
    bounds : ndarray of shape (2, n_features) or None
    """
    bounds = [b for b in bounds if b is not None]
    if not bounds:
        return None
    stacked = np.stack(bounds)
    return np.vstack([stacked[:, 0].min(axis=0), stacked[:, 1].max(axis=0)])


def block_column_moments(X, mean=None):
    """Per-column sums of a block: rows, :math:`\\sum x`, :math:`\\sum (x - mean)^2`.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_rows, n_features)
    mean : ndarray of shape (n_features,), optional
        Centre of the squares (default 0; sparse blocks: their implicit zeros
        count, without densifying).

    Returns
    -------
    moments : ndarray of shape (2 * n_features + 2,)
        ``[n_rows, colsum, colsq, n_nonfinite]`` (sums add up over blocks).
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        data = np.asarray(X.data, dtype=float)
        s1 = np.bincount(X.indices, weights=data, minlength=X.shape[1])
        s2 = (np.bincount(X.indices, weights=np.square(data), minlength=X.shape[1])
              if mean is None else _sparse_centred_squares(X, np.ones(X.shape[0]), mean))
    else:
        data = np.asarray(X, dtype=float)
        s1 = np.ones(len(data)) @ data if len(data) else np.zeros(X.shape[1])
        with np.errstate(over="ignore", invalid="ignore"):
            c = data if mean is None else data - mean
            s2 = np.einsum("ij,ij->j", c, c)
    bad = data.size - np.count_nonzero(np.isfinite(data))
    return np.concatenate([[X.shape[0]], s1, s2, [bad]])


def block_margins(B, V, b):
    """Margins ``Phi V + b`` of a block's rows.

    Parameters
    ----------
    B : RowBlock
    V : ndarray of shape (p, T)
        Weights of the active columns per task.
    b : ndarray of shape (T,)
        Biases.

    Returns
    -------
    M : ndarray of shape (n_rows, T)
    """
    return B.active @ V + b


def block_loss(M, B, loss):
    """:math:`\\sum_{i,t} \\ell(m_{it}, y_{it})` over a block's rows.

    Parameters
    ----------
    M : ndarray of shape (n_rows, T)
    B : RowBlock
    loss : BaseLoss

    Returns
    -------
    value : float
    """
    return float(loss.value(M, B.Y).sum())


def block_loss_gradients(M, B, loss):
    """:math:`\\ell'(m, y)` on a block's rows (shape of ``M``)."""
    return loss.grad_margin(M, B.Y)


def block_gradient(M, B, loss):
    """Gradient of the loss in the active weights and the biases, from one block.

    Parameters
    ----------
    M : ndarray of shape (n_rows, T)
    B : RowBlock
    loss : BaseLoss

    Returns
    -------
    gW : ndarray of shape (p, T)
        :math:`\\Phi_P'\\ell'`.
    gb : ndarray of shape (T,)
        :math:`\\mathbf 1'\\ell'`.
    """
    G = loss.grad_margin(M, B.Y)
    return B.active.T @ G, np.ones(G.shape[0]) @ G


def block_smooth_terms(M, B, loss, rows=None):
    """Loss, gradient and largest curvature at margins ``M``, in one pass over a block.

    Parameters
    ----------
    M : ndarray of shape (n_rows, T)
    B : RowBlock
    loss : BaseLoss
    rows : ndarray of int, optional
        Local rows whose loss gradients :math:`\\ell'` are also returned.

    Returns
    -------
    terms : tuple
        ``(loss value, gW, gb, max |l''|)``, then ``l'`` on ``rows`` if given
        (reduce with :func:`sum_smooth_terms`).
    """
    out = (block_loss(M, B, loss),) + block_gradient(M, B, loss) + (
        abs_max(loss.hess_margin(M, B.Y)),)
    return out if rows is None else out + (loss.grad_margin(M[rows], B.Y[rows]),)


def sum_smooth_terms(parts):
    """Reduction of :func:`block_smooth_terms`: sums, the maximum curvature, the
    selected rows' gradients stacked in partition order."""
    out = tuple(_sum_all([q[k] for q in parts]) for k in range(3)) + (
        max(q[3] for q in parts),)
    if len(parts[0]) > 4:
        out += (np.concatenate([q[4] for q in parts]),)
    return out


def block_curvature(M, B, loss):
    """Generalised second derivatives :math:`\\ell''(m, y)` on a block's rows."""
    return loss.hess_margin(M, B.Y)


def abs_max(D):
    """Largest absolute entry of an array (0 if empty)."""
    return float(np.abs(D).max(initial=0.0))


def block_hessian(B, D):
    """The block's Hessians at curvature ``D`` (one per task), from scratch.

    Parameters
    ----------
    B : RowBlock
    D : ndarray of shape (n_rows, T)

    Returns
    -------
    HessianBlock
    """
    H = np.stack([hessian_block(B.active, D[:, t]) for t in range(D.shape[1])])
    return HessianBlock(H, D.copy(), B.p)


def block_hessian_extend(B, old):
    """``old`` extended to the block's new active columns, at ``old``'s curvature.

    Parameters
    ----------
    B : RowBlock
        With ``B.p >= old.p`` (columns appended since ``old``).
    old : HessianBlock

    Returns
    -------
    HessianBlock
    """
    q, p, T = old.p, B.p, old.H.shape[0]
    if q == p:
        return old
    new, keep = np.r_[np.arange(q, p), p], np.r_[np.arange(q), p]
    H = np.empty((T, p + 1, p + 1))
    for t in range(T):
        H[t][np.ix_(keep, keep)] = old.H[t]
        C = hessian_block(B.active, old.D[:, t], cols=new)
        H[t][:, new] = C
        H[t][new, :] = C.T
    return HessianBlock(H, old.D, p)


def block_hessian_refresh(B, old, D, threshold):
    """Move ``old`` to curvature ``D``: rank updates on the rows that changed.

    The rule of the in-memory solver: rows whose curvature moved by more than
    ``threshold`` are updated (the block is rebuilt when over a third moved).

    Parameters
    ----------
    B : RowBlock
    old : HessianBlock
    D : ndarray of shape (n_rows, T)
    threshold : float

    Returns
    -------
    HessianBlock
    """
    H, Dh = old.H.copy(), old.D.copy()
    for t in range(D.shape[1]):
        d_new, d_old = D[:, t], Dh[:, t]
        idx = np.flatnonzero(np.abs(d_new - d_old) > threshold)
        if not idx.size:
            continue
        if idx.size > len(d_new) // 3:
            H[t] = hessian_block(B.active, d_new)
        else:
            H[t] += hessian_block(B.active[idx], d_new[idx] - d_old[idx])
        d_old[idx] = d_new[idx]
    return HessianBlock(H, Dh, old.p)


def block_reserve(B, capacity):
    """``B`` with room for ``capacity`` active columns (copied into a new buffer if needed).

    Parameters
    ----------
    B : RowBlock
    capacity : int

    Returns
    -------
    RowBlock
    """
    if B.Phi is not None and B.Phi.shape[1] >= capacity:
        return B
    Phi = np.empty((B.X.shape[0], capacity), order="F")
    if B.p:
        Phi[:, : B.p] = B.active
    return replace(B, Phi=Phi)


def block_gram_columns(B, p0):
    """Gram entries and column sums of the columns ``p0:p`` appended last.

    Parameters
    ----------
    B : RowBlock
    p0 : int
        First new column.

    Returns
    -------
    cross : ndarray of shape (p, p - p0)
        :math:`\\Phi_{:, :p}'\\Phi_{:, p_0:p}` on the block's rows.
    sums : ndarray of shape (p - p0,)
    """
    new = B.Phi[:, p0 : B.p]
    return B.active.T @ new, np.ones(len(new)) @ new


