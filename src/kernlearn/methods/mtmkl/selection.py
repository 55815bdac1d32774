r"""Closed-form leave-one-out residuals of the square loss (model selection).

For fixed kernel weights every task's inner problem is a kernel ridge
regression with a free bias: with :math:`D = \mathrm{diag}(1/(2Cw_i))`,
:math:`(K_t + D)\beta + b\mathbf 1 = y`, :math:`\mathbf 1^\top\beta = 0`, so
:math:`\beta = Py` with :math:`P` the top-left block of the inverse of the
bordered matrix, and the fitted values are :math:`\hat y = y - D\beta`, a
linear smoother with hat matrix :math:`H = I - DP`.  Removing a point from a
penalised least-squares fit with an unpenalised bias changes its residual by
the factor :math:`1/(1 - H_{ii})` (the leave-one-out lemma), so the
leave-one-out residual is

.. math:: y_i - f^{(-i)}(x_i) = \frac{D_{ii}\beta_i}{D_{ii}P_{ii}}
          = \frac{\beta_i}{P_{ii}},

one batched factorisation per bucket of tasks instead of :math:`m_t` refits.
The kernel weights themselves are those learned on all the rows: the
criterion scores the learned kernel's ridge fit, which an interpolating
kernel fails (its :math:`P_{ii}` is tiny against :math:`\beta_i`), but it is
not a refit of the kernel weights.
"""

import numpy as np

from .inner import per_bucket

__all__ = ["kernel_ridge_loo", "loo_residuals"]


def kernel_ridge_loo(K, y, mask, C):
    r"""Leave-one-out residuals of per-task kernel ridge with a free bias.

    Parameters
    ----------
    K : ndarray of shape (T_b, m, m)
        Kernels of a bucket of tasks (zero on padding).
    y : ndarray of shape (T_b, m)
        Targets (zero on padding).
    mask : ndarray of shape (T_b, m)
        Valid rows.
    C : float or ndarray of shape (T_b, m)
        Loss weight(s) :math:`C w_i` (:math:`C\sum_i w_i(y_i - f(x_i))^2 +
        \tfrac12\|f\|^2`).

    Returns
    -------
    residuals : ndarray of shape (T_b, m)
        :math:`y_i - f^{(-i)}(x_i)` (zero on padding).
    """
    m = mask.shape[1]
    e = mask.astype(float)
    A = K.copy()
    ar = np.arange(m)
    A[:, ar, ar] += np.where(mask, 0.5 / C, 1.0)  # padding: unit diagonal
    Ainv = np.linalg.inv(A)
    u = np.einsum("tij,tj->ti", Ainv, e)  # A^-1 1 (valid rows)
    s = (e * u).sum(1)
    # P = A^-1 - A^-1 1 1' A^-1 / (1' A^-1 1) on the valid rows
    diag_P = np.einsum("tii->ti", Ainv) - u * u / s[:, None]
    beta = np.einsum("tij,tj->ti", Ainv, y * e) - u * ((u * y * e).sum(1) / s)[:, None]
    return np.where(mask, beta / np.where(mask, diag_P, 1.0), 0.0)


def loo_residuals(kernels, blocks, model, y, C, sample_weight=None):
    r"""Leave-one-out residuals of a fitted within-task model at its kernel weights.

    Each task's kernel is the learned :math:`\sum_j W_{tj}K_{tj}`
    (``model.coef``, formulations ``"mtfl"``, ``"mkl"``, ``"independent"``
    without shared components); see :func:`kernel_ridge_loo`.

    Parameters
    ----------
    kernels : TaskKernels
        Fitted.
    blocks : TaskBuckets
        The training buckets.
    model : MultitaskModel
        Fitted with the square loss.
    y : ndarray of shape (n,)
        Training targets.
    C : float
        Loss weight of the fit.
    sample_weight : ndarray of shape (n,), optional
        Positive sample weights of the fit.

    Returns
    -------
    residuals : ndarray of shape (n,)
        :math:`y_i - f^{(-i)}(x_i)` of every training row.
    """
    if model.coef[0] != "blocks" or model.shared_coef is not None:
        raise ValueError("closed-form leave-one-out needs a within-task model "
                         "(formulation 'mtfl', 'mkl' or 'independent', no shared "
                         "components).")
    W = model.coef[1]
    y_b = blocks.gather(np.asarray(y, dtype=float))
    if sample_weight is not None:
        C = [np.where(mask, C * wb, C) for wb, (_, _, mask)
             in zip(blocks.gather(np.asarray(sample_weight, dtype=float)), blocks.buckets)]
    out = []
    for (tasks, idx, mask), yb, Cb in zip(blocks.buckets, y_b,
                                          per_bucket(C, len(y_b))):
        K = np.zeros(mask.shape + mask.shape[1:])
        for j in np.flatnonzero(W[tasks].max(0) > 0):
            K += W[tasks, j][:, None, None] * kernels.blocks(j, idx, mask)
        out.append(kernel_ridge_loo(K, yb, mask, Cb))
    return blocks.scatter(out, blocks.n_samples)
