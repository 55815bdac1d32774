"""Decision values of fitted OBSCURE and SLKL models, without scikit-learn.

The arithmetic of their predictions, apart from the fits' modules (which
import scikit-learn): a prediction on a Dask array evaluates it on the
workers, which never import scikit-learn
(:mod:`kernlearn.estimators._decisions`); the in-memory predictions call the
same functions.
"""

import numpy as np

from ..families.nystrom import kernel_block
from ..kernels import PrecomputedKernelList

__all__ = ["decision_values", "slkl_decision"]

#: Kernel values computed at once by :func:`decision_values` (8 MB of doubles).
_PREDICT_BLOCK = 1_000_000


def decision_values(klist, kernel_weights, dual_coef, support, X):
    r"""Scores :math:`f_c(x) = \sum_i c_{ci}\sum_j \beta_j K_j(x_i, x)`, by blocks.

    Parameters
    ----------
    klist : KernelList or PrecomputedKernelList
        The fitted list, restricted to the support vectors
        (:func:`~kernlearn.methods.obscure.fit_obscure`).
    kernel_weights : ndarray of shape (F,)
    dual_coef : ndarray of shape (n_outputs, n_support)
    support : ndarray of int
        The support vectors' training indices (columns kept of precomputed
        test Grams).
    X : ndarray, sparse matrix or list of Gram matrices
        Validated test inputs, or F test-vs-train Gram matrices (all training
        columns; the support's are kept).

    Returns
    -------
    scores : ndarray of shape (n_samples, n_outputs)
    """
    which = np.flatnonzero(kernel_weights > 0)
    if isinstance(klist, PrecomputedKernelList):
        K = klist.cross(X, support=support)
        scores = np.zeros((K.shape[1], dual_coef.shape[0]))
        for j in which:
            scores += kernel_weights[j] * (K[j] @ dual_coef.T)
        return scores
    scores = np.zeros((X.shape[0], dual_coef.shape[0]))
    n_sv = dual_coef.shape[1]
    # test rows in blocks: the F x block x n_support kernel values of one block
    # stay within _PREDICT_BLOCK doubles
    step = max(1, _PREDICT_BLOCK // max(klist.n_kernels * n_sv, 1))
    for s in range(0, X.shape[0] if n_sv else 0, step):
        K = klist.cross(X[s : s + step], which=which)
        # (one batched product: per kernel the BLAS call of K[j] @ dual_coef.T, one
        # NumPy call's fixed cost instead of F)
        P = np.matmul(K if which.size == K.shape[0] else K[which], dual_coef.T)
        for w, Pj in zip(kernel_weights[which], P):
            scores[s : s + step] += w * Pj
    return scores


def slkl_decision(X, centers, dual_coef, intercept, kernel, kernel_params,
                  center_factors=None, center=None):
    r"""Eqs. (16)-(17): :math:`f(x) = \sum_m k(x, x_m)\,\tilde\alpha_m/2 + b`.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Inputs on the scale of the fit (``K(X, X_train)`` when precomputed).
    centers : ndarray or sparse matrix of shape (n_centers, n_features)
        The centres on that scale (their training indices when precomputed).
    dual_coef : ndarray of shape (n_centers, n_outputs)
        :attr:`~kernlearn.methods.slkl.SLKLResult.dual_coef`.
    intercept : ndarray of shape (n_outputs,)
        :attr:`~kernlearn.methods.slkl.SLKLResult.intercept`.
    kernel : str or callable
        Base kernel.
    kernel_params : dict
        :attr:`~kernlearn.methods.slkl.SLKLResult.kernel_params`.
    center_factors : ndarray of shape (n_centers,), optional
        :attr:`~kernlearn.methods.slkl.SLKLResult.center_factors` (all ones when ``None``).
    center : ndarray of shape (n_features,), optional
        :attr:`~kernlearn.methods.slkl.SLKLResult.center`.

    Returns
    -------
    scores : ndarray of shape (n_samples, n_outputs)
    """
    if kernel == "precomputed":
        K = np.asarray(X[:, centers], dtype=float)
    elif centers.shape[0]:
        f = (np.ones(centers.shape[0]) if center_factors is None
             else np.asarray(center_factors, dtype=float))
        K = np.empty((X.shape[0], centers.shape[0]))
        for factor in np.unique(f):
            sel = np.flatnonzero(f == factor)
            p = (dict(kernel_params, gamma=kernel_params["gamma"] * factor)
                 if factor != 1.0 else kernel_params)
            K[:, sel] = kernel_block(X, centers[sel], kernel, p, center)
    else:
        K = np.zeros((X.shape[0], 0))
    return np.asarray(K) @ dual_coef + intercept
