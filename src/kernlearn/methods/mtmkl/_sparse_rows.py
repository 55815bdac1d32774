r"""The multitask kernels on sparse rows, ``X`` never densified.

:class:`~kernlearn.methods.mtmkl.TaskKernels` keeps a sparse training ``X``
as a CSR matrix and evaluates its kernels here.  ``standardize=True`` scales
the sparse columns without centring them (the library's rule:
:func:`~kernlearn.preprocessing.fit_standardization`), and the dot-product
kernels (linear, polynomial, RBF) subtract the columns' means themselves,
:math:`(x-c)^\top(x'-c) = x^\top x' - x^\top c - x'^\top c + c^\top c`
(:func:`~kernlearn.preprocessing.implicit_center`,
:func:`~kernlearn.preprocessing.centred_dots`), as every other estimator's
kernel list does: the model is that of the same numbers dense.  Kernel
blocks are dense (a task's ``m_t x m_t``, or new rows against the training
rows); only the rows' sparse products form them.  The histogram kernels and
callables see the scaled, uncentred columns (a callable is warned of, as in
:class:`~kernlearn.kernels.KernelList`); the histogram kernels sum over the
columns both rows store (:mod:`kernlearn._sparse_histogram`), rows never dense.
"""

import numpy as np
import scipy.sparse as sp
from scipy import linalg

from ...kernels import _dot_kernel, kernel_diag, pairwise_kernel
from ...preprocessing import (Standardization, canonical_sparse, centred_dots,
                              fit_standardization, implicit_center)
from ...widths import centred_row_stats

__all__ = ["sparse_block", "sparse_diag", "sparse_inputs", "sparse_linear_factor",
           "sparse_scaled", "task_blocks"]


def sparse_inputs(X, sample_weight, standardize):
    """The scaled training rows of a sparse ``X``, their column scales and centre.

    Parameters
    ----------
    X : sparse matrix of shape (n, n_features)
        Validated training inputs.
    sample_weight : ndarray of shape (n,) or None
        Row weights of the statistics.
    standardize : bool
        Scale the columns (and centre them implicitly).

    Returns
    -------
    X_ : csr_matrix of float64
        Scaled, canonical (duplicates summed, indices sorted).
    std : ndarray of shape (n_features,)
        The columns' scales (ones without ``standardize``).
    center : ndarray of shape (n_features,) or None
        The scaled columns' weighted means the dot-product kernels subtract.
    """
    X = canonical_sparse(sp.csr_matrix(X, dtype=np.float64))
    st = fit_standardization(X, sample_weight, standardize)
    std = np.ones(X.shape[1]) if st.scale is None else st.scale
    X_ = canonical_sparse(sp.csr_matrix(st.transform(X)))
    return X_, std, implicit_center(X_, sample_weight, standardize)


def sparse_scaled(kernels, X):
    """New sparse rows in the units of the fitted ``kernels`` (CSR, float64).

    A model fitted on dense ``X`` with ``standardize=True`` centred its
    columns, which sparse rows cannot be: refused, in the words of every
    estimator (:meth:`~kernlearn.preprocessing.Standardization.transform`);
    without ``standardize`` such a model gets the rows dense (its kernels
    are evaluated on dense training rows).

    Parameters
    ----------
    kernels : TaskKernels
        Fitted on rows (not precomputed).
    X : sparse matrix of shape (n_new, n_features)

    Returns
    -------
    csr_matrix of float64, or ndarray
        Dense for a model fitted on dense rows.
    """
    dense = not sp.issparse(kernels.X_)
    st = Standardization(mean=kernels.mean_ if dense and np.any(kernels.mean_) else None,
                         scale=kernels.std_, dtype=np.float64)
    Xs = sp.csr_matrix(st.transform(X), dtype=np.float64)
    return Xs.toarray() if dense else canonical_sparse(Xs)


def _view_center(kernels, j):
    """Kernel ``j``'s view of the fitted centre (``None``: not centred)."""
    c = getattr(kernels, "center_", None)
    return None if c is None else np.ravel(kernels._views(c[None, :], j))


def sparse_diag(kernels, Xj, j, params):
    """Diagonal of kernel ``j`` on its view ``Xj`` of sparse training rows (raw, unscaled).

    Parameters
    ----------
    kernels : TaskKernels
    Xj : sparse matrix of shape (n, d_j)
    j : int
    params : dict
        The kernel's resolved parameters.

    Returns
    -------
    diag : ndarray of shape (n,)
    """
    kernel = kernels.specs_[j][0]
    if kernel in ("linear", "poly"):
        # k(x, x) of the centred row: its centred squared norm
        return _dot_kernel(kernel, params, centred_row_stats(Xj, _view_center(kernels, j))[0])
    # (the histogram kernels' closed forms read the stored entries: Xj stays sparse)
    return kernel_diag(Xj, kernel, **params)


def sparse_block(kernels, j, A, B):
    """Kernel ``j`` (raw, unscaled) between two sets of rows of its view.

    Parameters
    ----------
    kernels : TaskKernels
    j : int
    A : sparse matrix or ndarray of shape (m_a, d_j)
    B : sparse matrix of shape (m_b, d_j)

    Returns
    -------
    K : ndarray of shape (m_a, m_b)
    """
    kernel, params, c = kernels.specs_[j][0], kernels.params_[j], _view_center(kernels, j)
    if kernel not in ("linear", "poly", "rbf"):
        return np.asarray(pairwise_kernel(A, B, kernel, **params), dtype=float)
    sq_a, u_a = centred_row_stats(A, c)
    sq_b, u_b = (sq_a, u_a) if B is A else centred_row_stats(B, c)
    D = centred_dots(A, B, c, u_a, u_b)  # (the centred rows' inner products)
    if kernel != "rbf":
        with np.errstate(over="ignore"):  # (inf: refused by the callers, named)
            return _dot_kernel(kernel, params, D)
    # |a - b|^2 = |a|^2 + |b|^2 - 2 a'b of the centred rows, as the dense path
    D *= -2.0
    D += sq_a[:, None]
    D += sq_b[None, :]
    np.maximum(D, 0.0, out=D)
    D *= -params["gamma"]
    return np.exp(D, out=D)


def task_blocks(kernels, j, Xa, idx_a, Xb, idx_b):
    """Kernel ``j`` (raw) between the padded row sets of each task of a bucket.

    One sparse product per task: the bucket's rows are never stacked into a
    dense ``(T_b, m, d)`` array as dense rows are.

    Parameters
    ----------
    kernels : TaskKernels
    j : int
    Xa, Xb : sparse matrix (or ndarray ``Xa``)
        Kernel ``j``'s views of the row sets.
    idx_a, idx_b : ndarray of shape (T_b, m_a), (T_b, m_b)
        Rows of ``Xa`` and of ``Xb`` of each task.

    Returns
    -------
    K : ndarray of shape (T_b, m_a, m_b)
    """
    K = np.empty((len(idx_a), idx_a.shape[1], idx_b.shape[1]))
    same = Xa is Xb and idx_a is idx_b
    for t in range(len(idx_a)):
        A = Xa[idx_a[t]]
        K[t] = sparse_block(kernels, j, A, A if same else Xb[idx_b[t]])
    return K


def sparse_linear_factor(kernels, j, max_rank=None, rtol=1e-10, max_side=4096):
    r"""Exact factor :math:`A` (:math:`K_j = AA^\top`) of linear kernel ``j`` of sparse rows.

    The dense rows' linear kernel is factored from its data view (a thin SVD,
    exact, truncated to ``max_rank``); the randomised subspace iteration of
    :func:`~kernlearn.methods.mtmkl.task_kernels.kernel_factor` only
    approximates its leading ``max_rank`` directions, and a sparse fit of
    more rows than about ``2 max_rank`` and more columns than ``max_rank``
    (text) was another model than the dense one (MK-MTSFL, 900 x 1,000:
    predictions 30 % apart).  The same leading eigenpairs come from the
    smaller of the two Gram matrices: :math:`K_j` (``n x n``) when the view
    has at least as many columns as rows, else :math:`A^\top A` of the
    implicitly centred view (``d x d``), :math:`A = (X_j - 1c^\top)\sqrt{s_j}`.

    Parameters
    ----------
    kernels : TaskKernels
        Fitted on sparse rows.
    j : int
        A linear kernel.
    max_rank : int, optional
    rtol : float, default=1e-10
        Relative eigenvalue cut-off, as for the dense view's squared singular values.
    max_side : int, default=4096
        Largest Gram matrix side formed (128 MB); ``None`` is returned beyond.

    Returns
    -------
    A : ndarray of shape (n, r), or None
        ``None`` when both sides exceed ``max_side``.
    """
    Xj = kernels._views(kernels.X_, j)
    n, d = Xj.shape
    if min(n, d) > max_side:
        return None
    s, c = float(kernels.scales_[j]), _view_center(kernels, j)
    side = min(n, d)
    r = side if max_rank is None else min(int(max_rank), side)
    # (the leading r eigenpairs alone: LAPACK's evr skips the others' vectors,
    # 2.8 s instead of 4.6 s for 300 of 3,000)
    top = {} if r >= side else {"subset_by_index": [side - r, side - 1], "driver": "evr"}
    if n <= d:
        w, V = linalg.eigh(kernels.full(j), **top)
    else:
        # A'A = s (X'X - c u' - u c' + n c c'), u = X'1: the centred columns' products
        G = np.asarray((Xj.T @ Xj).todense(), dtype=np.float64)
        if c is not None:
            u = np.asarray(Xj.sum(axis=0), dtype=np.float64).ravel()
            G -= np.outer(c, u) + np.outer(u, c) - n * np.outer(c, c)
        w, W = linalg.eigh(s * G, **top)
        # A w_i = sigma_i u_i: the factor's columns without the n x n side
        V = np.asarray(Xj @ W, dtype=np.float64)
        if c is not None:
            V -= (c @ W)[None, :]
        V *= np.sqrt(s)
    w, V = w[::-1], V[:, ::-1]
    keep = w > rtol * max(w[0], 0.0) if w.size else w > 0
    if n <= d:
        return V[:, keep] * np.sqrt(w[keep])
    return V[:, keep]
