r"""Multitask multiple kernel learning: MK-MTFL and MK-MTSFL (paper 004).

Tasks :math:`t = 1..T` with :math:`m_t` points each share :math:`k` base
kernels :math:`K_j`.  Both formulations are solved in their partial dual,
a convex function of the kernel parameters whose value and gradient come from
independent per-task solves (Danskin's theorem):

* **MK-MTFL** (sec. 3), the (l1, lp) mixed norm, :math:`p \ge 2`:
  :math:`\min_{\gamma\in\Delta_k} f(\gamma)`,

  .. math:: f(\gamma) = \max_{\lambda_j\in\Delta_{T,\bar p},\,\beta_t}
            \sum_t\Big[L_t(\beta_t) - \tfrac12\sum_j \tfrac{\gamma_j}{\lambda_{jt}}
            \beta_t^\top K_{tj}\beta_t\Big],\qquad \bar p = \tfrac{p}{p-2},

  evaluated by alternating the per-task solves in :math:`\beta` with the
  closed form of Lemma 3.1 in :math:`\lambda`; :math:`\gamma` moves by entropic
  mirror descent (2.2) with :math:`\partial_j f = -\tfrac12\sum_t S_{jt}/\lambda_{jt}`,
  :math:`S_{jt} = \beta_t^\top K_{tj}\beta_t`.
* **MK-MTSFL** (sec. 4), the (l1, lq) Schatten norm, :math:`1 \le q < 2`:
  :math:`\min_{Q\in R(\bar q)} \sum_t \max_{\beta_t} L_t(\beta_t) - \tfrac12
  \beta_t^\top(\sum_j M_{tj}^\top Q_j M_{tj})\beta_t`, with
  :math:`M_{tj} = \Sigma_j V_j[I_t]^\top` from the compact eigendecomposition
  :math:`K_j = V_j\Sigma_j^2V_j^\top`, :math:`R(\bar q) = \{Q_j \succeq 0,
  \sum_j(\mathrm{tr}\,Q_j)^{\bar q}\le 1\}`, :math:`\bar q = q/(2-q)`; solved by
  mirror descent with :math:`\omega(Q)=\mathrm{tr}\,Q\log Q`, whose step is an
  eigendecomposition per kernel and the scalar problem in :math:`\rho` of
  :func:`rho_step`.

:math:`L_t` is the dual's linear part: :math:`\sum_i|\beta_{ti}|` (hinge, SVM),
:math:`y_t^\top\beta_t - \|\beta_t\|^2/(4C)` (square loss, kernel ridge) or
:math:`y_t^\top\beta_t - \epsilon\|\beta_t\|_1` (SVR), with
:math:`\mathbf 1^\top\beta_t = 0` (bias :math:`b_t`).  Every task's predictor is
:math:`f_t(x) = \sum_i\beta_{ti}\tilde k_t(x_{ti}, x) + b_t`.

The per-task solves are batched: tasks are grouped by size into *buckets*
padded to a common size, so the kernel-ridge solve of all tasks is one
batched LAPACK call (padding rows have a unit diagonal, zero target and no
part in the bias constraint, so their dual variable is exactly 0).

Baselines: ``formulation="mkl"`` (one l1-MKL per task: each task its own
:math:`\gamma_t`, the T = 1 case of MK-MTFL) and ``"independent"`` (one kernel
machine per task on the average kernel); MTSFL [Argyriou et al. 2008] is
MK-MTSFL with one kernel, also solvable by the alternating minimisation of
that paper (:func:`solve_mtsfl_altmin`).

References
----------
Jawanpuria, Nath (2011), "Multi-task multiple kernel learning", SDM:
Lemma 3.1, eq. (2.2), (3.3), sec. 4.  Argyriou, Evgeniou, Pontil (2008),
"Convex multi-task feature learning", Mach. Learn. 73.
"""

import hashlib
import pickle
import threading
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq
from sklearn.exceptions import ConvergenceWarning

from ..kernels import (
    kernel_diag,
    pairwise_kernel,
    parse_specs,
    resolve_params,
    take_columns,
)
from ..penalties.squared import lp_norm
from ..solvers._base import History

__all__ = [
    "FORMULATIONS",
    "MultitaskModel",
    "TaskBuckets",
    "TaskKernels",
    "clear_kernel_cache",
    "entropic_step",
    "evaluate_mtfl",
    "fit_multitask",
    "kernel_factor",
    "lemma31",
    "rho_step",
    "solve_inner",
    "solve_mtfl",
    "solve_mtsfl",
    "solve_mtsfl_altmin",
]

FORMULATIONS = ("mtfl", "mtsfl", "mkl", "independent")


# --------------------------------------------------------------------- maths
def lemma31(a, r):
    r"""Lemma 3.1: :math:`\min_{\eta\in\Delta_{d,r}} \sum_i a_i/\eta_i`.

    .. math:: \eta_i = \frac{a_i^{1/(r+1)}}{(\sum_l a_l^{r/(r+1)})^{1/r}},\qquad
              \min = \Big(\sum_i a_i^{r/(r+1)}\Big)^{(r+1)/r},

    over :math:`\Delta_{d,r} = \{\eta\ge0: \sum_i\eta_i^r\le1\}`, with
    :math:`0/0 = 0`.  ``r = inf`` gives :math:`\eta \equiv 1` and the sum.

    Parameters
    ----------
    a : ndarray of shape (..., d)
        Non-negative numerators; the lemma is applied along the last axis.
    r : float
        Exponent, ``1 <= r <= inf``.

    Returns
    -------
    eta : ndarray of shape (..., d)
        The minimiser.
    value : ndarray of shape (...)
        The minimum.
    """
    a = np.maximum(np.asarray(a, dtype=float), 0.0)
    if np.isinf(r):
        return np.ones_like(a), a.sum(axis=-1)
    # scale by the max so that a**e neither under- nor overflows; eta is
    # scale invariant and the value scales linearly
    mx = a.max(axis=-1, keepdims=True)
    safe = np.where(mx > 0, mx, 1.0)
    ah = a / safe
    s = (ah ** (r / (r + 1.0))).sum(axis=-1, keepdims=True)
    s_safe = np.where(s > 0, s, 1.0)
    eta = ah ** (1.0 / (r + 1.0)) / s_safe ** (1.0 / r)
    value = (safe * s ** ((r + 1.0) / r))[..., 0]
    return eta, value


def logsumexp(z, axis=None, keepdims=False):
    """``log(sum(exp(z)))`` without overflow (``-inf`` for empty or all ``-inf``).

    A plain NumPy version: SciPy's array-API ``logsumexp`` costs ~0.3 ms
    per call, and the rho-step's root search calls it hundreds of times per
    MK-MTSFL iteration (a fifth of a 139-task fit).

    Parameters
    ----------
    z : array_like
    axis : int, optional
    keepdims : bool, default=False

    Returns
    -------
    out : float or ndarray
    """
    z = np.asarray(z, dtype=float)
    if z.size == 0:
        return np.full(np.sum(z, axis=axis, keepdims=keepdims).shape, -np.inf)[()]
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(z - m), axis=axis, keepdims=True)) + m
    return (out if keepdims else np.squeeze(out, axis=axis))[()]


def entropic_step(log_x, grad, step):
    r"""Entropic mirror-descent step (2.2) on the simplex, in log domain.

    .. math:: x_i^+ = \frac{x_i e^{-s g_i}}{\sum_l x_l e^{-s g_l}}
              = \arg\min_{x\in\Delta} s\,g^\top x + \mathrm{KL}(x\,\|\,x^{(l)}).

    Parameters
    ----------
    log_x : ndarray of shape (..., d)
        Logarithm of the current point(s) of the simplex.
    grad : ndarray of shape (..., d)
        (Sub)gradient(s).
    step : float or ndarray of shape (..., 1)
        Step size(s) :math:`s`.

    Returns
    -------
    log_x_new : ndarray of shape (..., d)
    """
    z = log_x - step * grad
    return z - logsumexp(z, axis=-1, keepdims=True)


def _w_exp(L, n_iter=60):
    """Solve ``w + log w = L`` for ``w > 0`` (Lambert W of ``exp(L)``), vectorised."""
    L = np.asarray(L, dtype=float)
    u = np.where(L > 1, np.log(np.maximum(L, 1.0)), L)  # f(u0) >= 0: monotone Newton
    for _ in range(n_iter):
        eu = np.exp(u)
        du = (eu + u - L) / (eu + 1.0)
        u = u - du
        if np.all(np.abs(du) <= 1e-14 * np.maximum(1.0, np.abs(u))):
            break
    return np.exp(u)


def rho_step(c, qbar):
    r"""Exact solution of the reduced mirror-descent problem of MK-MTSFL.

    .. math:: \min_{\rho\ge0}\ \sum_j \rho_j\log\rho_j - c_j\rho_j
              \quad\text{s.t.}\quad \sum_j\rho_j^{\bar q}\le 1.

    Unconstrained :math:`\rho_j = e^{c_j-1}`; otherwise the KKT conditions
    :math:`\log\rho_j + 1 - c_j + \nu\bar q\rho_j^{\bar q-1} = 0` give
    :math:`\log\rho_j = c_j - 1 - W_j/(\bar q-1)` with :math:`W_j` a Lambert-W
    value, and the multiplier :math:`\nu` is found by a bracketed root search
    on :math:`\log\sum_j\rho_j^{\bar q} = 0`.  :math:`\bar q = 1`:
    :math:`\rho = \mathrm{softmax}(c)`; :math:`\bar q = \infty`:
    :math:`\rho_j = \min(e^{c_j-1}, 1)`.

    Parameters
    ----------
    c : ndarray of shape (k,)
        Linear coefficients (``log-sum-exp`` of each block's eigenvalues).
    qbar : float
        :math:`\bar q \ge 1` (``inf`` allowed).

    Returns
    -------
    log_rho : ndarray of shape (k,)
        :math:`\log\rho` (log domain: :math:`\rho` may underflow).
    """
    c = np.asarray(c, dtype=float)
    free = c - 1.0
    if np.isinf(qbar):
        return np.minimum(free, 0.0)
    if logsumexp(qbar * free) <= 0.0:
        return free
    if qbar == 1.0:
        return c - logsumexp(c)
    a = qbar - 1.0

    def log_rho(log_nu):
        v = _w_exp(np.log(a * qbar) + log_nu + a * free)
        return free - v / a

    def excess(log_nu):
        return logsumexp(qbar * log_rho(log_nu))

    lo, hi = -50.0, 1.0
    while excess(lo) < 0:
        lo -= 50.0
    while excess(hi) > 0:
        hi += 2.0 * max(1.0, abs(hi))
    return log_rho(brentq(excess, lo, hi, xtol=1e-13, rtol=1e-13))


# ------------------------------------------------------------------- buckets
class TaskBuckets:
    """Tasks grouped by size and padded, for batched per-task linear algebra.

    Parameters
    ----------
    task_rows : list of ndarray of int
        Row indices of each task.
    growth : float, default=1.25
        A bucket holds tasks whose sizes are within this factor of its
        smallest one (less padding vs fewer batched calls).

    Attributes
    ----------
    buckets : list of tuple
        ``(tasks, idx, mask)``: task ids ``(T_b,)``, padded row indices
        ``(T_b, m_b)`` (valid rows first) and the validity mask.
    """

    def __init__(self, task_rows, growth=1.25):
        self.task_rows = [np.asarray(r, dtype=np.int64) for r in task_rows]
        sizes = np.array([len(r) for r in self.task_rows])
        order = np.argsort(sizes, kind="stable")
        self.buckets = []
        i = 0
        while i < len(order):
            cap = int(np.ceil(sizes[order[i]] * growth))
            j = i
            while j < len(order) and sizes[order[j]] <= cap:
                j += 1
            tasks = order[i:j]
            m = int(sizes[tasks].max())
            idx = np.zeros((len(tasks), m), dtype=np.int64)
            mask = np.zeros((len(tasks), m), dtype=bool)
            for a, t in enumerate(tasks):
                idx[a, : sizes[t]] = self.task_rows[t]
                mask[a, : sizes[t]] = True
            self.buckets.append((tasks, idx, mask))
            i = j
        self.n_tasks = len(self.task_rows)
        self.n_samples = int(sizes.sum())

    def gather(self, v):
        """Padded per-bucket copies ``v[idx] * mask`` of a per-row vector."""
        return [np.where(mask, v[idx], 0.0) for _, idx, mask in self.buckets]

    def scatter(self, vals, n):
        """Per-row vector of length ``n`` from padded per-bucket values."""
        out = np.zeros(n)
        for (_, idx, mask), v in zip(self.buckets, vals):
            out[idx[mask]] = v[mask]
        return out

    def by_task(self, vals):
        """Stack per-bucket ``(T_b,)`` values into one ``(T,)`` array."""
        out = np.zeros(self.n_tasks)
        for (tasks, _, _), v in zip(self.buckets, vals):
            out[tasks] = v
        return out


# ------------------------------------------------------------------- kernels
def _batched_gram(kernel, params, A, B):
    """Gram blocks ``k(A_t, B_t)`` of stacked ``(T, m_a, d)``, ``(T, m_b, d)`` data."""
    if kernel in ("linear", "rbf", "poly"):
        G = A @ B.transpose(0, 2, 1)
        if kernel == "linear":
            return G
        if kernel == "poly":
            g, c0 = params.get("gamma", 1.0), params.get("coef0", 1.0)
            return (g * G + c0) ** params.get("degree", 2)
        D = (A * A).sum(-1)[:, :, None] + (B * B).sum(-1)[:, None, :] - 2.0 * G
        return np.exp(-params["gamma"] * np.maximum(D, 0.0))
    out = np.stack([np.asarray(pairwise_kernel(A[t], B[t], kernel, **params), float)
                    for t in range(len(A))])
    if out.shape != (A.shape[0], A.shape[1], B.shape[1]):
        raise ValueError(f"a kernel callable returned blocks of shape {out.shape}.")
    return out


#: Up to this many training rows a kernel's factor is taken from its Gram
#: matrix in memory (128 MB); beyond it from products with blocks of rows.
_GRAM_IN_MEMORY_ROWS = 4096


class TaskKernels:
    """The k base kernels of a multitask problem: within-task blocks or full Grams.

    Parameters
    ----------
    kernels : list or "precomputed"
        Kernel specs as in :class:`kernlearn.kernels.KernelList` (names,
        callables, ``(kernel, params[, columns])``), or ``"precomputed"``.
    normalize : bool, default=True
        Scale each kernel to unit mean diagonal on the training data (the
        simplex weights then compare kernels of different scales fairly).
    standardize : bool, default=True
        Centre and scale every input column by its training mean and standard
        deviation before the kernels see it.

    Attributes
    ----------
    scales_ : ndarray of shape (k,)
        Multiplier applied to each kernel.
    params_ : list of dict
        Resolved parameters (``gamma="mean"`` replaced).
    """

    def __init__(self, kernels, normalize=True, standardize=True):
        self.kernels = kernels
        self.normalize = normalize
        self.standardize = standardize
        self.precomputed = isinstance(kernels, str) and kernels == "precomputed"

    def fit(self, X, sample_weight=None):
        """Resolve parameters and scales on the training data.

        Parameters
        ----------
        X : ndarray of shape (n, n_features), or (precomputed) ndarray (k, n, n)
        sample_weight : ndarray of shape (n,), optional
            Row weights of the standardisation and of the mean diagonal (as
            for repeated rows); data-driven kernel parameters such as
            ``gamma="mean"`` stay unweighted.

        Returns
        -------
        self : TaskKernels
        """
        if self.precomputed:
            self.grams_ = X
            diag = np.einsum("jii->ji", X)
            self.n_kernels = X.shape[0]
        else:
            self.specs_ = parse_specs(self.kernels)
            X = np.asarray(X, dtype=float)
            self.mean_, self.std_ = np.zeros(X.shape[1]), np.ones(X.shape[1])
            if self.standardize:
                mu = np.average(X, axis=0, weights=sample_weight)
                sd = np.sqrt(np.average((X - mu) ** 2, axis=0, weights=sample_weight))
                self.mean_, self.std_ = mu, np.where(sd > 0, sd, 1.0)
            self.X_ = self._scaled(X)
            self.params_, diag = [], []
            for j, (kernel, params, cols) in enumerate(self.specs_):
                Xj = take_columns(self.X_, cols, j)
                self.params_.append(resolve_params(kernel, params, Xj, j))
                d_j = kernel_diag(Xj, kernel, **self.params_[j])
                diag.append(np.asarray(d_j, dtype=float))
            diag = np.vstack(diag)
            self.n_kernels = len(self.specs_)
        if not np.isfinite(diag).all():
            raise ValueError("a kernel produced non-finite values on X.")
        if (diag < -1e-10 * np.abs(diag).max(initial=1.0)).any():
            raise ValueError("a kernel has a negative diagonal: it is not PSD.")
        mean = np.average(diag, axis=1, weights=sample_weight)
        self.scales_ = (np.where(mean > 0, 1.0 / np.where(mean > 0, mean, 1.0), 1.0)
                        if self.normalize else np.ones(self.n_kernels))
        return self

    def _scaled(self, X):
        return (np.asarray(X, dtype=float) - self.mean_) / self.std_

    def factor(self, j, max_rank=None):
        r"""Factor :math:`A` with :math:`K_j \approx AA^\top` over the training rows.

        A linear kernel is factored from its data view (thin SVD of the
        ``n x d`` columns, :math:`O(nd^2)`, exact rank ``<= d``) instead of from
        its ``n x n`` Gram matrix; other kernels by :func:`kernel_factor`.

        Parameters
        ----------
        j : int
        max_rank : int, optional

        Returns
        -------
        A : ndarray of shape (n, r)
        """
        if self.precomputed or (self.specs_[j][0] != "linear"
                                and len(self.X_) <= _GRAM_IN_MEMORY_ROWS):
            return kernel_factor(self.full(j), max_rank)
        if self.specs_[j][0] != "linear":
            # products with K_j in blocks of rows: memory O(n r), not the
            # n x n Gram matrix (1.9 GB on the 15,362 rows of School), at the
            # price of recomputing K_j's rows once per product
            return kernel_factor(len(self.X_), max_rank,
                                 matmul=lambda Q: self._gram_matmul(j, Q))
        Xj = np.asarray(self._views(self.X_, j), dtype=float) * np.sqrt(self.scales_[j])
        U, sv, _ = np.linalg.svd(Xj, full_matrices=False)
        r = len(sv) if max_rank is None else min(int(max_rank), len(sv))
        keep = sv[:r] ** 2 > 1e-10 * max(sv[0] ** 2, 0.0) if sv.size else sv > 0
        return U[:, :r][:, keep] * sv[:r][keep]

    def _gram_matmul(self, j, Q, block=2048):
        """``K_j @ Q`` over the training rows, ``block`` rows of ``K_j`` at a time."""
        out = np.empty((len(self.X_), Q.shape[1]))
        for s in range(0, len(self.X_), block):
            rows = np.arange(s, min(len(self.X_), s + block))
            out[rows] = self.full(j, rows=rows) @ Q
        return out

    def cache_key(self, j):
        """Content key of training kernel ``j`` (``None`` if it cannot be keyed).

        Equal keys mean equal training Gram matrices: the key hashes the
        (scaled) training data, the kernel with its resolved parameters and
        column view, and the normalisation scale.  Kernels that cannot be
        pickled (lambdas, local functions) have no key.

        Parameters
        ----------
        j : int

        Returns
        -------
        key : bytes or None
        """
        h = hashlib.sha1()
        if self.precomputed:
            h.update(np.ascontiguousarray(self.grams_[j]).tobytes())
        else:
            try:
                spec = pickle.dumps((self.specs_[j], self.params_[j]))
            except (pickle.PicklingError, AttributeError, TypeError):
                return None
            h.update(np.ascontiguousarray(self.X_).tobytes())
            h.update(repr(self.X_.shape).encode())
            h.update(spec)
        h.update(np.float64(self.scales_[j]).tobytes())
        return h.digest()

    def _views(self, X, j):
        return take_columns(X, self.specs_[j][2], j)

    def blocks(self, j, idx_a, mask_a, X_a=None, idx_b=None, mask_b=None):
        """Kernel ``j`` between padded row sets of each task of a bucket.

        Parameters
        ----------
        j : int
            Kernel.
        idx_a, mask_a : ndarray of shape (T_b, m_a)
            Rows of ``X_a`` (training rows when ``X_a`` is None) and validity.
        X_a : ndarray, optional
            New data (rows ``idx_a``); for precomputed kernels the
            ``(k, n_new, n_train)`` test Grams.
        idx_b, mask_b : ndarray of shape (T_b, m_b), optional
            Training rows of the second side; default ``idx_a``/``mask_a``.

        Returns
        -------
        K : ndarray of shape (T_b, m_a, m_b)
        """
        idx_b = idx_a if idx_b is None else idx_b
        mask_b = mask_a if mask_b is None else mask_b
        if self.precomputed:
            G = self.grams_[j] if X_a is None else X_a[j]
            K = G[idx_a[:, :, None], idx_b[:, None, :]]
        else:
            Xa = self._views(self.X_ if X_a is None else self._scaled(X_a), j)
            Xb = self._views(self.X_, j)
            kernel = self.specs_[j][0]
            K = _batched_gram(kernel, self.params_[j], Xa[idx_a], Xb[idx_b])
        if not np.isfinite(K).all():
            raise ValueError(f"kernels[{j}] produced NaN or infinite values.")
        return K * (self.scales_[j] * (mask_a[:, :, None] & mask_b[:, None, :]))

    def full(self, j, X_a=None, rows=None):
        """Kernel ``j`` between (new or training) rows and all training rows.

        Parameters
        ----------
        j : int
        X_a : ndarray, optional
            New data (or precomputed test Grams ``(k, n_new, n_train)``).
        rows : ndarray of int, optional
            Subset of rows of ``X_a`` (all by default).

        Returns
        -------
        K : ndarray of shape (n_rows, n_train)
        """
        if self.precomputed:
            G = self.grams_[j] if X_a is None else X_a[j]
            K = G if rows is None else G[rows]
        else:
            Xa = self._views(self.X_ if X_a is None else self._scaled(X_a), j)
            Xa = Xa if rows is None else Xa[rows]
            K = _batched_gram(self.specs_[j][0], self.params_[j], Xa[None],
                              self._views(self.X_, j)[None])[0]
        if not np.isfinite(K).all():
            raise ValueError(f"kernels[{j}] produced NaN or infinite values.")
        return K * self.scales_[j]


# ---------------------------------------------------------------- inner solve
def solve_inner(loss, K, y, mask, C, epsilon=0.1):
    r"""Per-task dual solves on one bucket of tasks with effective kernels ``K``.

    Returns the signed dual coefficients :math:`\beta_t`, biases and the
    linear part :math:`L_t(\beta_t)` of each task's dual
    :math:`L_t(\beta_t) - \tfrac12\beta_t^\top K_t\beta_t`.

    Parameters
    ----------
    loss : {"square", "hinge", "epsilon_insensitive"}
        Kernel ridge (closed form, batched), SVM or SVR (scikit-learn's
        libsvm with a precomputed kernel, one call per task).
    K : ndarray of shape (T_b, m, m)
        Effective kernels, zero on padding.
    y : ndarray of shape (T_b, m)
        Targets (labels in {-1, +1} for the hinge), zero on padding.
    mask : ndarray of shape (T_b, m)
        Valid rows.
    C : float or ndarray of shape (T_b, m)
        Loss weight: :math:`C\sum_i\ell_i + \tfrac12\|w\|^2`; an array gives
        each sample its own weight :math:`C_i` (sample weights; positive).
    epsilon : float, default=0.1
        Width of the epsilon-insensitive tube.

    Returns
    -------
    beta : ndarray of shape (T_b, m)
    b : ndarray of shape (T_b,)
    L : ndarray of shape (T_b,)
    """
    T, m = mask.shape
    if loss == "square":
        # (K + I/2C) beta + b 1 = y, 1'beta = 0; padding: unit diagonal, no 1
        A = K.copy()
        ar = np.arange(m)
        A[:, ar, ar] += np.where(mask, 0.5 / C, 1.0)
        e = mask.astype(float)
        sol = np.linalg.solve(A, np.stack([y * e, e], axis=-1))
        u, v = sol[..., 0], sol[..., 1]
        b = (e * u).sum(1) / (e * v).sum(1)
        beta = (u - b[:, None] * v) * e
        L = (y * beta).sum(1) - (beta * beta / (4.0 * C)).sum(1)
        return beta, b, L
    from sklearn.svm import SVC, SVR

    beta, b, L = np.zeros((T, m)), np.zeros(T), np.zeros(T)
    for a in range(T):
        mt = int(mask[a].sum())
        Ka, ya = K[a, :mt, :mt], y[a, :mt]
        # per-sample C_i: libsvm's C times sample_weight
        Cs, sw = (C, None) if np.ndim(C) == 0 else (1.0, C[a, :mt])
        if loss == "hinge":
            est = SVC(kernel="precomputed", C=Cs, tol=1e-5).fit(Ka, ya, sample_weight=sw)
        else:
            est = SVR(kernel="precomputed", C=Cs, epsilon=epsilon, tol=1e-5).fit(
                Ka, ya, sample_weight=sw)
        beta[a, est.support_] = est.dual_coef_[0]
        b[a] = est.intercept_[0]
        if loss == "hinge":
            L[a] = np.abs(beta[a]).sum()
        else:
            L[a] = ya @ beta[a, :mt] - epsilon * np.abs(beta[a]).sum()
    return beta, b, L


# ---------------------------------------------------------------- MK-MTFL
@dataclass
class _Best:
    """Best iterate of a mirror descent (the method is not monotone)."""

    value: float = np.inf
    lower: float = -np.inf
    state: dict = field(default_factory=dict)


def _step_size(l, n_dim, spread):
    """Step :math:`\\sqrt{2\\ln d}/(\\|g\\|_\\infty\\sqrt l)` (Nemirovski)."""
    scale = np.maximum(spread, 1e-300) * np.sqrt(l)
    return np.sqrt(2.0 * np.log(max(n_dim, 2))) / scale


def evaluate_mtfl(blocks, grams, y_b, loss, C, gamma_t, pbar, lam=None, epsilon=0.1,
                  max_inner=5, inner_tol=1e-6, shared_factors=None):
    r"""Evaluate :math:`f(\gamma)` of (3.3) by alternating task solves and Lemma 3.1.

    For fixed :math:`\lambda` the tasks are independent kernel machines on
    :math:`\sum_j(\gamma_j/\lambda_{jt})K_{tj}`; for fixed :math:`\beta`
    the :math:`\lambda_{j\cdot}` are Lemma 3.1's minimisers with
    :math:`r=\bar p` and :math:`a_t = S_{jt}`.  Both steps increase the
    (jointly concave) objective.

    Parameters
    ----------
    blocks : TaskBuckets
    grams : list of ndarray of shape (k, T_b, m_b, m_b)
    y_b : list of ndarray
    loss : str
    C : float
    gamma_t : ndarray of shape (T, k)
        Kernel weights of each task (rows equal for MK-MTFL); need not lie on
        the simplex (finite differences).
    pbar : float
        :math:`\bar p = p/(p-2)` (``inf`` for ``p = 2``: :math:`\lambda\equiv1`).
    lam : ndarray of shape (k, T), optional
        Warm start of :math:`\lambda`.
    epsilon : float, default=0.1
    max_inner : int, default=5
    inner_tol : float, default=1e-6
    shared_factors : list of ndarray of shape (n, r_j), optional
        Shared components (see :func:`solve_mtfl`): ``gamma_t`` then has one
        more column per factor, and :math:`\|A_j^\top\beta\|^2` of each is
        returned last.

    Returns
    -------
    value : float
        :math:`f(\gamma)` (the last alternation's dual value).
    S : ndarray of shape (k, T)
        :math:`S_{jt} = \beta_t^\top K_{tj}\beta_t`.
    lam : ndarray of shape (k, T)
    L : ndarray of shape (T,)
    beta : list of ndarray
    bias : ndarray of shape (T,)
    """
    shared_b = (None if shared_factors is None
                else [_gather_rows(blocks, A) for A in shared_factors])
    return _evaluate(blocks, _task_major(grams), y_b, loss, C, gamma_t, pbar, lam,
                     epsilon, max_inner, inner_tol, shared_b)


def _task_major(grams):
    """Task-major, packed copies of ``(k, T_b, m_b, m_b)`` kernel blocks.

    Each bucket becomes ``(T_b, k, m_b (m_b + 1) / 2)``: the upper triangles
    (the blocks are symmetric), tasks first.  In this layout both
    per-iteration contractions over the k kernels (the effective kernels and
    the quadratic forms :math:`S_{jt}`) are batched BLAS products over tasks,
    instead of strided ``einsum`` loops that were 80 % of a feature-wise
    (189-kernel) fit, and they stream half the memory of full blocks.
    """
    out = []
    for Kb in grams:
        iu = np.triu_indices(Kb.shape[2])
        out.append(np.ascontiguousarray(Kb[:, :, iu[0], iu[1]].transpose(1, 0, 2)))
    return out


def _evaluate(blocks, grams_tm, y_b, loss, C, gamma_t, pbar, lam, epsilon, max_inner,
              inner_tol, shared_b=None):
    r""":func:`evaluate_mtfl` on task-major blocks (:func:`_task_major`).

    ``shared_b`` (padded row blocks of the shared kernels' factors, one list
    per kernel) adds shared components: ``gamma_t`` then has one more column
    per shared kernel, the tasks' solves are coupled with one common bias
    (:func:`_solve_coupled`), and the quadratic terms
    :math:`\|A_j^\top\beta\|^2` of the shared kernels are returned too.
    """
    k, T = grams_tm[0].shape[1], blocks.n_tasks
    lam = np.ones((k, T)) if lam is None else lam
    prev = -np.inf
    S_sh = np.zeros(0)
    # upper-triangle indices of each bucket, and the weights (1 on the
    # diagonal, 2 off it) that turn a packed sum into beta' K beta
    tri = []
    for _, _, mask in blocks.buckets:
        i, j = np.triu_indices(mask.shape[1])
        tri.append((i, j, np.where(i == j, 1.0, 2.0)))
    for _ in range(max_inner):
        W = gamma_t[:, :k] / lam.T
        beta, bias, Ls, K_b = [], [], [], []
        for (tasks, _, mask), Gb, yb, (i, j, _), Cb in zip(blocks.buckets, grams_tm, y_b, tri,
                                                            _per_bucket(C, len(y_b))):
            packed = np.matmul(W[tasks][:, None, :], Gb)[:, 0]
            Keff = np.empty(mask.shape + mask.shape[1:])
            Keff[:, i, j] = packed
            Keff[:, j, i] = packed
            if shared_b is not None:
                K_b.append(Keff)
                continue
            be, bb, Lb = solve_inner(loss, Keff, yb, mask, Cb, epsilon)
            beta.append(be), bias.append(bb), Ls.append(Lb)
        if shared_b is not None:
            g_sh = gamma_t[0, k:]
            G_b = [np.concatenate([np.zeros(m.shape + (0,))] + [
                np.sqrt(g) * Ab[bi] for g, Ab in zip(g_sh, shared_b) if g > 0], axis=2)
                for bi, (_, _, m) in enumerate(blocks.buckets)]
            beta, bias_t, L = _solve_coupled(blocks, K_b, G_b, y_b, C, True, loss,
                                             epsilon)
        S = np.zeros((k, T))
        for (tasks, _, _), Gb, be, (i, j, w2) in zip(blocks.buckets, grams_tm, beta, tri):
            outer = (be[:, i] * be[:, j] * w2)[:, :, None]
            S[:, tasks] = np.matmul(Gb, outer)[:, :, 0].T
        S = np.maximum(S, 0.0)
        if shared_b is not None:
            S_sh = np.array([float(np.sum(_task_products(blocks, Ab, beta).sum(1) ** 2))
                             for Ab in shared_b])
        if not np.isinf(pbar):
            lam, _ = lemma31(S, pbar)
            # S_jt = 0 gives lambda_jt = 0 (0/0 = 0); a floor keeps the
            # effective kernel weight gamma/lambda finite
            top = lam.max(axis=1, keepdims=True)
            lam = np.where(top > 0, np.maximum(lam, 1e-6 * top), 1.0)
        if shared_b is None:
            L, bias_t = blocks.by_task(Ls), blocks.by_task(bias)
        val = (L.sum() - 0.5 * float((gamma_t[:, :k].T * S / lam).sum())
               - 0.5 * float(gamma_t[0, k:] @ S_sh))
        if np.isinf(pbar) or abs(val - prev) <= inner_tol * abs(val):
            break
        prev = val
    if shared_b is not None:
        return val, S, lam, L, beta, bias_t, S_sh
    return val, S, lam, L, beta, bias_t


def solve_mtfl(blocks, grams, y_b, loss, C, p=2.0, epsilon=0.1, share=True,
               max_iter=100, tol=1e-3, max_inner=5, inner_tol=1e-6, verbose=0,
               shared_factors=None):
    r"""MK-MTFL (or, ``share=False``, one l1-MKL per task) by mirror descent.

    Parameters
    ----------
    blocks : TaskBuckets
    grams : list of ndarray of shape (k, T_b, m_b, m_b)
        Within-task base kernel blocks per bucket.
    y_b : list of ndarray of shape (T_b, m_b)
        Padded targets per bucket.
    loss : str
        Inner loss (see :func:`solve_inner`).
    C : float
    p : float, default=2.0
        Norm across tasks, ``p >= 2`` (``inf`` allowed).
    epsilon : float, default=0.1
    share : bool, default=True
        Share :math:`\gamma` across tasks (MK-MTFL); ``False`` gives every task
        its own :math:`\gamma_t` (per-task MKL).
    max_iter : int, default=100
        Mirror-descent iterations.
    tol : float, default=1e-3
        Stop when the duality gap (best value minus the best lower bound
        :math:`\sum_t L_t - \tfrac12\max_j G_j`) is below ``tol`` times the
        best value.
    max_inner : int, default=5
        Alternations :math:`\beta \leftrightarrow \lambda` per evaluation of
        :math:`f` (one when ``p = 2``: :math:`\lambda \equiv 1`).
    inner_tol : float, default=1e-6
        Relative change of the alternation's value that ends it.
    verbose : int, default=0
    shared_factors : list of ndarray of shape (n, r_j), optional
        Shared components (an extension of the paper, ``share=True``): kernel :math:`A_jA_j^\top` over all training rows with
        a weight vector common to all tasks.  Each is one more coordinate of
        the simplex :math:`\gamma` (a group of one "task", so no
        :math:`\lambda`), with :math:`\partial_j f = -\tfrac12\|A_j^\top
        \beta\|^2`; the tasks share one free bias.

    Returns
    -------
    result : dict
        ``gamma (G, k)``, ``lam (k, T)``, ``beta`` (per bucket), ``b (T,)``,
        ``objective``, ``gap``, ``history`` (:class:`History`), ``n_iter``,
        ``converged``; with shared factors ``gamma`` has ``k + k_s`` columns
        and ``shared_z`` holds :math:`A_j^\top\beta` of each shared kernel.
    """
    k = grams[0].shape[0]
    shared_b = None
    if shared_factors is not None:
        if not share:
            raise ValueError("shared components need share=True (MK-MTFL).")
        shared_b = [_gather_rows(blocks, A) for A in shared_factors]
    k_all = k + (0 if shared_b is None else len(shared_b))
    T = blocks.n_tasks
    grams_tm = _task_major(grams)
    pbar = np.inf if (not share or p == 2 or np.isinf(p)) else p / (p - 2.0)
    if share and np.isinf(p):
        pbar = 1.0
    n_groups = 1 if share else T
    group = np.zeros(T, dtype=np.int64) if share else np.arange(T)
    log_gamma = np.full((n_groups, k_all), -np.log(k_all))
    lam = np.ones((k, T))
    best_val = np.full(n_groups, np.inf)
    best_low = np.full(n_groups, -np.inf)
    best = {"gamma": np.exp(log_gamma), "lam": lam.copy(),
            "beta": [np.zeros_like(y) for y in y_b], "b": np.zeros(T), "shared_z": []}
    hist = History()
    converged = False
    n_iter = 0
    for it in range(1, max_iter + 1):
        n_iter = it
        gamma = np.exp(log_gamma)
        gt = gamma[group]  # (T, k_all)
        out = _evaluate(blocks, grams_tm, y_b, loss, C, gt, pbar, lam, epsilon,
                        max_inner, inner_tol, shared_b)
        _, S, lam, L, beta, bias = out[:6]
        Gj = np.zeros((n_groups, k_all))
        np.add.at(Gj[:, :k], group, (S / lam).T)
        if shared_b is not None:
            Gj[0, k:] = out[6]
        Lg = np.bincount(group, weights=L, minlength=n_groups)
        val_g = Lg - 0.5 * (gamma * Gj).sum(1)
        low_g = Lg - 0.5 * Gj.max(1)
        better = val_g < best_val
        best_val = np.where(better, val_g, best_val)
        best_low = np.maximum(best_low, low_g)
        if better.any():
            tb = better[group]
            best["gamma"][better] = gamma[better]
            best["lam"][:, tb] = lam[:, tb]
            best["b"][tb] = bias[tb]
            for bi, ((tasks, _, _), be) in enumerate(zip(blocks.buckets, beta)):
                sel = tb[tasks]
                best["beta"][bi][sel] = be[sel]
            if shared_b is not None:
                best["shared_z"] = [_task_products(blocks, Ab, beta).sum(1)
                                    for Ab in shared_b]
        obj, gap = float(best_val.sum()), float((best_val - best_low).sum())
        hist.append(objective=float(val_g.sum()), best=obj, gap=gap,
                    n_active=int((gamma > 1e-6).sum()))
        if verbose:
            print(f"[MK-MTFL] iter {it:3d}  f={val_g.sum():.6g}  gap={gap:.3g}",
                  flush=True)
        if k_all == 1 or gap <= tol * abs(obj):
            converged = True
            break
        grad = -0.5 * Gj
        spread = 0.5 * (grad.max(1) - grad.min(1))  # gradients are defined up to
        log_gamma = entropic_step(log_gamma, grad,  # a constant on the simplex
                                  _step_size(it, k_all, spread)[:, None])
    return dict(best, objective=float(best_val.sum()),
                gap=float((best_val - best_low).sum()), history=hist,
                n_iter=n_iter, converged=converged)


# ---------------------------------------------------------------- MK-MTSFL
def kernel_factor(K, max_rank=None, rtol=1e-10, n_power=3, random_state=0, matmul=None):
    r"""Compact eigendecomposition :math:`K \approx V\Sigma^2V^\top` as ``A = V\Sigma``.

    Exact (LAPACK) at full rank; with ``max_rank`` well below ``n`` the
    leading eigenpairs come from randomised subspace iteration (Halko,
    Martinsson, Tropp 2011, Algorithm 4.4), :math:`O(n^2 r)` instead of the
    :math:`O(n^3)` of a full decomposition.

    Parameters
    ----------
    K : ndarray of shape (n, n), or int
        Symmetric PSD Gram matrix over all training points, or (with
        ``matmul``) its size ``n``.
    max_rank : int, optional
        Keep at most this many leading eigenpairs.
    rtol : float, default=1e-10
        Drop eigenvalues below ``rtol`` times the largest.
    n_power : int, default=3
        Subspace iterations of the randomised method.
    random_state : int, default=0
        Seed of its Gaussian test matrix.
    matmul : callable, optional
        ``Q -> K @ Q`` without ``K`` in memory (the randomised method needs
        nothing else; the exact one builds ``K`` from it).

    Returns
    -------
    A : ndarray of shape (n, r)
        :math:`V\Sigma`, so that :math:`K \approx AA^\top`.
    """
    n = int(K) if matmul is not None else K.shape[0]
    mm = matmul if matmul is not None else K.__matmul__
    r = n if max_rank is None else min(int(max_rank), n)
    if 2 * (r + 10) >= n:
        w, V = np.linalg.eigh(K if matmul is None else mm(np.eye(n)))
        if w[0] < -1e-6 * max(abs(w[-1]), 1e-300):
            raise ValueError("a kernel matrix is not positive semidefinite "
                             f"(eigenvalue {w[0]:.3g}).")
        w, V = w[n - r:], V[:, n - r:]
    else:
        rng = np.random.default_rng(random_state)
        Qm = np.linalg.qr(mm(rng.standard_normal((n, r + 10))))[0]
        for _ in range(n_power):
            Qm = np.linalg.qr(mm(Qm))[0]
        w, U = np.linalg.eigh(Qm.T @ mm(Qm))
        w, V = w[-r:], Qm @ U[:, -r:]
    keep = w > rtol * max(w[-1], 0.0) if w.size else w > 0
    return V[:, keep] * np.sqrt(w[keep])


class _FactorCache:
    """Least-recently-used store of kernel factors, bounded in bytes.

    A model-selection loop (a C grid, the folds of a cross-validation)
    refits on the same training rows many times; the kernel matrix over all
    of them and its eigendecomposition do not depend on C and were over half
    of a 139-task MK-MTSFL fit (School, 7 kernels: 4.5 s of 9 s).
    """

    def __init__(self, max_bytes=256 * 2**20):
        self.max_bytes = max_bytes
        self._store = OrderedDict()
        self._lock = threading.Lock()

    def get(self, kernels, j, max_rank):
        """Factor :math:`A` of training kernel ``j`` (:func:`kernel_factor`)."""
        key = kernels.cache_key(j)
        key = None if key is None else (key, max_rank)
        with self._lock:
            if key is not None and key in self._store:
                self._store.move_to_end(key)
                return self._store[key]
        A = kernels.factor(j, max_rank)
        A.flags.writeable = False  # shared between fits
        if key is not None and A.nbytes <= self.max_bytes:
            with self._lock:
                self._store[key] = A
                while sum(v.nbytes for v in self._store.values()) > self.max_bytes:
                    self._store.popitem(last=False)
        return A

    def clear(self):
        """Drop every stored factor."""
        with self._lock:
            self._store.clear()


_FACTORS = _FactorCache()


def clear_kernel_cache():
    """Forget the kernel factors kept between MK-MTSFL fits (cold-start timing)."""
    _FACTORS.clear()


def _gather_rows(blocks, A):
    """Padded ``(T_b, m_b, r)`` row blocks of ``A`` (zero rows on padding)."""
    return [A[idx] * mask[:, :, None] for _, idx, mask in blocks.buckets]


def _task_products(blocks, A_b, beta):
    """``(r, T)`` matrix of the products :math:`A[I_t]^\top\beta_t` of every task."""
    out = np.zeros((A_b[0].shape[2], blocks.n_tasks))
    for (tasks, _, _), Ab, be in zip(blocks.buckets, A_b, beta):
        out[:, tasks] = np.einsum("tir,ti->rt", Ab, be)
    return out


def _solve_all(blocks, F_b, y_b, loss, C, epsilon, G_b=None, global_bias=False):
    r"""Inner solves with effective kernels ``F F'`` per task (F: padded factors).

    ``G_b`` (padded rows of a factor :math:`G`, ``(T_b, m_b, r_s)`` per
    bucket) adds the shared kernel :math:`GG^\top` over *all* training rows,
    which couples the tasks, and ``global_bias`` one bias for all tasks: see
    :func:`_solve_coupled`.
    """
    if global_bias or (G_b is not None and G_b[0].shape[2] > 0):
        if G_b is None:
            G_b = [np.zeros(Fb.shape[:2] + (0,)) for Fb in F_b]
        return _solve_coupled(blocks, [Fb @ Fb.transpose(0, 2, 1) for Fb in F_b], G_b,
                              y_b, C, global_bias, loss, epsilon)
    beta, bias, Ls = [], [], []
    for (_, _, mask), Fb, yb, Cb in zip(blocks.buckets, F_b, y_b,
                                        _per_bucket(C, len(y_b))):
        Keff = Fb @ Fb.transpose(0, 2, 1)
        be, bb, Lb = solve_inner(loss, Keff, yb, mask, Cb, epsilon)
        beta.append(be), bias.append(bb), Ls.append(Lb)
    return beta, blocks.by_task(bias), blocks.by_task(Ls)


def _solve_coupled(blocks, K_b, G_b, y_b, C, global_bias=False, loss="square",
                   epsilon=0.1):
    r"""Kernel machine of all tasks on ``blockdiag(K_t) + G G'``.

    Other losses than the square (hinge, epsilon-insensitive) go to
    :func:`_solve_coupled_libsvm`; the rest of this docstring is the square
    loss's closed form.

    ``K_b``: the within-task effective kernels per bucket ``(T_b, m_b, m_b)``
    (zero on padding); ``G_b``: padded rows of the shared factor ``G``.
    The dual's stationarity conditions are, for every task,
    :math:`(K_t + D_t)\beta_t + G_t G^\top\beta + b_t\mathbf 1 = y_t`,
    with :math:`D_t = I/(2C)` and either :math:`\mathbf 1^\top\beta_t = 0` for
    every task (free per-task biases) or, ``global_bias``, one bias
    :math:`b_t = b` for all tasks and :math:`\sum_t\mathbf 1^\top\beta_t = 0`.
    Writing :math:`H` for the symmetric PSD map that solves the per-task
    systems (bordered by their bias constraint, or not), Woodbury's identity
    gives :math:`P = (H^{-1} + GG^\top)^{-1} = H - HG(I + G^\top HG)^{-1}G^\top H`,
    so the coupled problem costs batched per-task solves with
    :math:`r_s + 2` right-hand sides and one :math:`r_s\times r_s` system, not
    an :math:`n\times n` factorisation.  With a global bias,
    :math:`\beta = Py - bP\mathbf 1` and :math:`b = \mathbf 1^\top Py /
    \mathbf 1^\top P\mathbf 1`.

    Returns
    -------
    beta : list of ndarray of shape (T_b, m_b)
    bias : ndarray of shape (T,)
    L : ndarray of shape (T,)
        Each task's :math:`y_t^\top\beta_t - \sum_i\beta_{ti}^2/(4C_i)`.
    """
    if loss != "square":
        return _solve_coupled_libsvm(blocks, K_b, G_b, y_b, C, global_bias, loss,
                                     epsilon)
    parts, S, GH = [], 0.0, 0.0
    for (_, _, mask), Kb, Gb, yb, Cb in zip(blocks.buckets, K_b, G_b, y_b,
                                            _per_bucket(C, len(y_b))):
        m = mask.shape[1]
        e = mask.astype(float)
        A = Kb.copy()
        ar = np.arange(m)
        A[:, ar, ar] += np.where(mask, 0.5 / Cb, 1.0)
        # right-hand sides [y, 1, G] (zero on padding)
        rhs = np.concatenate([(yb * e)[..., None], e[..., None], Gb * e[..., None]],
                             axis=2)
        sol = np.linalg.solve(A, rhs) * e[..., None]
        if global_bias:
            H, b = sol, np.zeros(sol.shape[::2])  # no per-task border
        else:
            b = np.einsum("tm,tmc->tc", e, sol) / (e * sol[..., 1]).sum(1)[:, None]
            H = (sol - b[:, None, :] * sol[..., 1:2]) * e[..., None]
        # G'H[y, 1, G] over all rows: one GEMM per bucket
        Gf = Gb.reshape(-1, Gb.shape[2])
        prod = Gf.T @ H.reshape(-1, H.shape[2])
        GH = GH + prod[:, :2]
        S = S + prod[:, 2:]
        parts.append((H, b))
    r = GH.shape[0]
    coef = (np.linalg.solve(np.eye(r) + 0.5 * (S + S.T), GH) if r  # (r, 2): y and 1
            else np.zeros((0, 2)))
    P = [(H[..., :2] - H[..., 2:] @ coef, b[:, :2] - b[:, 2:] @ coef) for H, b in parts]
    b0 = 0.0
    if global_bias:  # 1'(Py) / 1'(P1) over all rows
        b0 = sum(Pb[..., 0].sum() for Pb, _ in P) / sum(Pb[..., 1].sum() for Pb, _ in P)
    beta, bias, Ls = [], [], []
    for (Pb, bb), yb, Cb in zip(P, y_b, _per_bucket(C, len(y_b))):
        be = Pb[..., 0] - b0 * Pb[..., 1]
        beta.append(be)
        bias.append(np.full(len(be), b0) if global_bias else bb[:, 0])
        Ls.append((yb * be).sum(1) - (be * be / (4.0 * np.asarray(Cb))).sum(1))
    return beta, blocks.by_task(bias), blocks.by_task(Ls)


def _solve_coupled_libsvm(blocks, K_b, G_b, y_b, C, global_bias, loss, epsilon):
    """SVM or SVR of all tasks at once on ``blockdiag(K_t) + G G'`` (libsvm).

    libsvm has one bias, so only ``global_bias`` is possible; the kernel is
    assembled over all n training rows (:math:`O(n^2)` memory), which is why
    shared components are not the default for these losses.  Returns what
    :func:`_solve_coupled` does, with :func:`solve_inner`'s linear parts.
    """
    if not global_bias:
        raise ValueError("coupled hinge / epsilon-insensitive solves have one bias "
                         "for all tasks (libsvm).")
    from sklearn.svm import SVC, SVR

    n, r = blocks.n_samples, G_b[0].shape[2]
    G, y, w = np.zeros((n, r)), np.zeros(n), np.ones(n)
    for (_, idx, mask), Gb, yb, Cb in zip(blocks.buckets, G_b, y_b,
                                          _per_bucket(C, len(y_b))):
        G[idx[mask]], y[idx[mask]] = Gb[mask], yb[mask]
        w[idx[mask]] = np.broadcast_to(Cb, mask.shape)[mask]
    K = G @ G.T
    for (_, idx, mask), Kb in zip(blocks.buckets, K_b):
        for a in range(len(idx)):
            rows = idx[a, mask[a]]
            K[np.ix_(rows, rows)] += Kb[a][np.ix_(mask[a], mask[a])]
    # per-sample C_i as libsvm's C = 1 times sample_weight (as solve_inner)
    if loss == "hinge":
        est = SVC(kernel="precomputed", C=1.0, tol=1e-5).fit(K, y, sample_weight=w)
    else:
        est = SVR(kernel="precomputed", C=1.0, epsilon=epsilon, tol=1e-5).fit(
            K, y, sample_weight=w)
    beta_full = np.zeros(n)
    beta_full[est.support_] = est.dual_coef_[0]
    beta = blocks.gather(beta_full)
    Ls = [np.abs(be).sum(1) if loss == "hinge"
          else (yb * be).sum(1) - epsilon * np.abs(be).sum(1)
          for be, yb in zip(beta, y_b)]
    return beta, np.full(blocks.n_tasks, est.intercept_[0]), blocks.by_task(Ls)


def solve_mtsfl(blocks, factors, y_b, loss, C, q=1.5, epsilon=0.1, max_iter=100,
                tol=1e-3, verbose=0, shared=None, global_bias=False):
    r"""MK-MTSFL by mirror descent over the block-diagonal :math:`Q` (sec. 4).

    Each :math:`Q_j` is kept as its eigendecomposition
    :math:`Z_j\,\mathrm{diag}(e^{\theta_j})Z_j^\top` (log-eigenvalues, so that
    :math:`\log Q_j` is exact and nothing underflows).  A step forms
    :math:`H_j = \log Q_j + \tfrac{s}{2}B_j` (:math:`B_j=\sum_t M_{tj}\beta_t
    \beta_t^\top M_{tj}^\top`, i.e. :math:`-2\nabla_{Q_j}f`), diagonalises it,
    and sets :math:`Q_j = \rho_j\,\mathrm{expm}(H_j)/\mathrm{tr}(\cdot)` with
    :math:`\rho` from :func:`rho_step` and :math:`c_j = 1 + \log\mathrm{tr}\,
    \mathrm{expm}(H_j)`.  Start: :math:`Q_j = (k^{-1/\bar q}/r_j)I`.

    Parameters
    ----------
    blocks : TaskBuckets
    factors : list of ndarray of shape (n, r_j)
        :math:`A_j = V_j\Sigma_j` of each kernel (:func:`kernel_factor`).
    y_b : list of ndarray
        Padded targets per bucket.
    loss : str
    C : float
    q : float, default=1.5
        Schatten mixed-norm exponent in ``[1, 2]``.
    epsilon : float, default=0.1
    max_iter : int, default=100
    tol : float, default=1e-3
        Relative duality gap; the lower bound is
        :math:`\sum_tL_t - \tfrac12\|(\lambda_{\max}(B_j))_j\|_{\bar q^*}`.
    verbose : int, default=0
    shared : array-like of bool of shape (k,), optional
        Blocks whose weight vector is common to all tasks (an extension of
        the paper, see :func:`fit_multitask`'s ``shared``): block ``j``
        contributes :math:`\langle w_{0j}, L_j^\top\phi_j(x)\rangle` to every
        task, its regulariser is :math:`\|w_{0j}\|_2` (the Schatten norm of a
        single column) and its :math:`B_j = z_jz_j^\top` with
        :math:`z_j = \sum_t M_{tj}\beta_t`.  The inner problem couples the
        tasks (:func:`_solve_coupled`).
    global_bias : bool, default=False
        One free bias for all tasks instead of one per task (required with
        shared blocks for the hinge and epsilon-insensitive losses).

    Returns
    -------
    result : dict
        ``Z``, ``log_theta`` (per kernel), ``beta``, ``b``, ``objective``,
        ``gap``, ``history``, ``n_iter``, ``converged``; ``Zt`` holds the
        columns :math:`M_{tj}\beta_t` (one summed column for shared blocks).
    """
    k = len(factors)
    shared = np.zeros(k, bool) if shared is None else np.asarray(shared, bool)
    spec, shr = np.flatnonzero(~shared), np.flatnonzero(shared)
    qbar = np.inf if q >= 2 else q / (2.0 - q)
    qstar = 1.0 if np.isinf(qbar) else (np.inf if qbar == 1 else qbar / (qbar - 1.0))
    ranks = [A.shape[1] for A in factors]
    Zs = [np.eye(r) for r in ranks]
    t0 = 0.0 if np.isinf(qbar) else -np.log(k) / qbar
    log_th = [np.full(r, t0 - np.log(max(r, 1))) for r in ranks]
    gathered = {}  # a shared block reuses its kernel's factor: gather it once
    for A in factors:
        if id(A) not in gathered:
            gathered[id(A)] = _gather_rows(blocks, A)
    A_b = [gathered[id(A)] for A in factors]
    hist = History()
    best = _Best()
    converged, n_iter = False, 0
    for it in range(1, max_iter + 1):
        n_iter = it
        # effective per-task kernels F F' with F = [A_j Z_j e^{theta_j/2}]_j
        # Q_j is low-rank after a few steps: eigen-directions below 1e-12 of
        # the largest eigenvalue change no kernel entry, and dropping them
        # cuts the n r^2 products to n r r_eff
        top = max(float(t.max()) for t in log_th if t.size) if any(
            t.size for t in log_th) else 0.0
        live = [t > top + np.log(1e-12) for t in log_th]
        Fj = [Zs[j][:, live[j]] * np.exp(0.5 * log_th[j][live[j]]) for j in range(k)]
        # one (T_b m_b, r) x (r, r_eff) product per bucket and kernel on the
        # row blocks gathered once (zero on padding): a single large BLAS
        # call, no per-iteration gather
        def padded(js, bi, idx):
            return np.concatenate([np.zeros(idx.shape + (0,))] + [
                (A_b[j][bi].reshape(-1, ranks[j]) @ Fj[j]).reshape(idx.shape + (-1,))
                for j in js], axis=2)

        F_b = [padded(spec, bi, idx) for bi, (_, idx, _) in enumerate(blocks.buckets)]
        G_b = ([padded(shr, bi, idx) for bi, (_, idx, _) in enumerate(blocks.buckets)]
               if shr.size else None)
        beta, bias, L = _solve_all(blocks, F_b, y_b, loss, C, epsilon, G_b, global_bias)
        # columns M_tj beta_t, (r_j, T): each task's beta touches only its own
        # m_t rows, so a gathered contraction (n r flops) replaces the dense
        # A' B product (n r T flops); a shared block has the one column
        # sum_t M_tj beta_t
        Zt = [_task_products(blocks, Ab, beta) for Ab in A_b]
        Zt = [Z.sum(axis=1, keepdims=True) if shared[j] else Z for j, Z in enumerate(Zt)]
        quad = np.array([float((np.exp(log_th[j])[:, None]
                                * (Zs[j].T @ Zt[j]) ** 2).sum()) for j in range(k)])
        lmax = np.array([np.linalg.eigvalsh(Z.T @ Z if Z.shape[1] < Z.shape[0]
                                            else Z @ Z.T)[-1] if Z.size else 0.0
                         for Z in Zt])
        val = float(L.sum() - 0.5 * quad.sum())
        norm = lp_norm(lmax, qstar)
        low = float(L.sum() - 0.5 * norm)
        if val < best.value:
            best.value = val
            best.state = dict(Z=[Z.copy() for Z in Zs],
                              log_theta=[t.copy() for t in log_th],
                              beta=[b.copy() for b in beta], b=bias.copy(),
                              Zt=[Z.copy() for Z in Zt])
        best.lower = max(best.lower, low)
        gap = best.value - best.lower
        hist.append(objective=val, best=best.value, gap=gap,
                    n_active=int(sum(np.exp(logsumexp(t)) > 1e-6 for t in log_th)))
        if verbose:
            print(f"[MK-MTSFL] iter {it:3d}  f={val:.6g}  gap={gap:.3g}", flush=True)
        if gap <= tol * abs(best.value):
            converged = True
            break
        s = _step_size(it, sum(ranks), 0.5 * lmax.max())
        hs, c = [], np.zeros(k)
        for j in range(k):
            H = (Zs[j] * log_th[j]) @ Zs[j].T + 0.5 * s * (Zt[j] @ Zt[j].T)
            h, Zs[j] = np.linalg.eigh(0.5 * (H + H.T))
            hs.append(h)
            c[j] = 1.0 + logsumexp(h)
        log_rho = rho_step(c, qbar)
        log_th = [log_rho[j] + hs[j] - logsumexp(hs[j]) for j in range(k)]
    return dict(best.state, objective=best.value, gap=best.value - best.lower,
                history=hist, n_iter=n_iter, converged=converged)


def solve_mtsfl_altmin(blocks, factor, y_b, loss, C, max_iter=100, tol=1e-3,
                       eps=1e-10, verbose=0):
    r"""MTSFL (one kernel) by the alternating minimisation of Argyriou et al.

    Alternates the per-task solves for fixed :math:`D` and
    :math:`D \leftarrow (WW^\top + \varepsilon_l I)^{1/2}/\mathrm{tr}(\cdot)`,
    :math:`\varepsilon_l = \max(\varepsilon, 2^{-l})\,\mathrm{tr}(WW^\top)/r`,
    :math:`W = [D M_t\beta_t]_t` (Algorithm 1 of Argyriou et al., kernelised
    through the same factor as :func:`solve_mtsfl`).  The baseline of the
    paper's Fig. 1.

    Parameters
    ----------
    blocks : TaskBuckets
    factor : ndarray of shape (n, r)
        :math:`A = V\Sigma` of the kernel.
    y_b : list of ndarray
    loss : str
    C : float
    max_iter : int, default=100
    tol : float, default=1e-3
        Relative decrease of the objective that ends the loop.
    eps : float, default=1e-10
        Final relative perturbation keeping :math:`D` invertible.
    verbose : int, default=0

    Returns
    -------
    result : dict
        ``Z``, ``log_theta`` (one block), ``beta``, ``b``, ``objective``,
        ``history``, ``n_iter``, ``converged``.
    """
    r = factor.shape[1]
    Z, d = np.eye(r), np.full(r, 1.0 / r)
    A_b = _gather_rows(blocks, factor)
    hist = History()
    prev, converged, it = np.inf, False, 0
    state = {}
    for it in range(1, max_iter + 1):
        Fj = Z * np.sqrt(d)
        beta, bias, L = _solve_all(blocks, [Ab @ Fj for Ab in A_b], y_b, loss, C, 0.1)
        Zt = _task_products(blocks, A_b, beta)
        Y = Z.T @ Zt
        val = float(L.sum() - 0.5 * (d[:, None] * Y ** 2).sum())
        hist.append(objective=val)
        state = dict(Z=[Z.copy()], log_theta=[np.log(np.maximum(d, 1e-300))], beta=beta,
                     b=bias, Zt=[Zt])
        if verbose:
            print(f"[MTSFL altmin] iter {it:3d}  f={val:.6g}", flush=True)
        if prev - val <= tol * abs(val):
            converged = True
            break
        prev = val
        W = (Z * d) @ Y  # D M_t beta_t
        WW = W @ W.T
        # epsilon continuation: with a fixed tiny epsilon, directions where D
        # vanished after the first steps can never come back
        e_l = max(eps, 0.5**it) * max(np.trace(WW), 1e-300) / r
        w2, U = np.linalg.eigh(WW + e_l * np.eye(r))
        sq = np.sqrt(np.maximum(w2, 0.0))
        Z, d = U, sq / sq.sum()
    return dict(state, objective=val, history=hist, n_iter=it, converged=converged)


# ------------------------------------------------------------------- driver
@dataclass
class MultitaskModel:
    """A fitted multitask kernel model: what prediction needs.

    Attributes
    ----------
    formulation : str
    kernel_weights : ndarray of shape (k,)
    task_kernel_weights : ndarray of shape (T, k)
    intercept : ndarray of shape (T,)
    coef : object
        ``("blocks", W (T, k), beta per bucket)`` for the within-task models,
        ``("full", list of (n, T) coefficient matrices)`` for MK-MTSFL.
    objective : float
    gap : float
    history : dict
    n_iter : int
    converged : bool
    """

    formulation: str
    kernel_weights: np.ndarray
    task_kernel_weights: np.ndarray
    intercept: np.ndarray
    coef: tuple
    objective: float
    gap: float
    history: dict
    n_iter: int
    converged: bool
    shared_kernel_weights: np.ndarray = None
    shared_coef: list = None

    def decision(self, kernels, blocks, X, task_pos):
        """Predictions ``f_t(x)`` of new rows, each for its own task.

        Parameters
        ----------
        kernels : TaskKernels
            Fitted on the training data.
        blocks : TaskBuckets
            The training buckets.
        X : ndarray
            New data (or precomputed test Grams ``(k, n_new, n_train)``).
        task_pos : ndarray of int of shape (n_new,)
            Task position (0..T-1) of each new row.

        Returns
        -------
        f : ndarray of shape (n_new,)
        """
        out = self.intercept[task_pos].astype(float)
        kind = self.coef[0]
        if kind == "blocks":
            _, W, beta = self.coef
            for (tasks, idx, mask), be in zip(blocks.buckets, beta):
                rows = [np.flatnonzero(task_pos == t) for t in tasks]
                m_new = max((len(r) for r in rows), default=0)
                if m_new == 0:
                    continue
                ia = np.zeros((len(tasks), m_new), np.int64)
                ma = np.zeros((len(tasks), m_new), bool)
                for a, r in enumerate(rows):
                    ia[a, : len(r)], ma[a, : len(r)] = r, True
                acc = np.zeros((len(tasks), m_new))
                for j in np.flatnonzero(W[tasks].max(0) > 0):
                    Kc = kernels.blocks(j, ia, ma, X_a=X, idx_b=idx, mask_b=mask)
                    acc += W[tasks, j][:, None] * np.einsum("tab,tb->ta", Kc, be)
                out[ia[ma]] += acc[ma]
        else:
            out += _full_kernel_terms(kernels, X, task_pos, self.coef[1])
        if self.shared_coef is not None:  # shared components, common to all tasks
            out += _full_kernel_terms(kernels, X, task_pos, self.shared_coef)
        return out


def _full_kernel_terms(kernels, X, task_pos, coefs):
    """``sum_j k_j(x, X_train) c_j`` of new rows, by blocks of 2048 rows.

    ``coefs[j]`` is ``None`` (kernel unused), an ``(n_train, T)`` matrix
    (one coefficient vector per task: row ``i`` uses column ``task_pos[i]``)
    or an ``(n_train,)`` vector common to all tasks.
    """
    n = len(task_pos)
    out = np.zeros(n)
    for s in range(0, n, 2048):
        rows = np.arange(s, min(n, s + 2048))
        for j, Cj in enumerate(coefs):
            if Cj is None:
                continue
            Kc = kernels.full(j, X_a=X, rows=rows)
            out[rows] += (Kc @ Cj if Cj.ndim == 1
                          else (Kc * Cj.T[task_pos[rows]]).sum(axis=1))
    return out


def _warn(name, res, max_iter, tol):
    if not res["converged"] and tol is not None:
        warnings.warn(f"{name} stopped after max_iter={max_iter} iterations with a "
                      f"relative duality gap of "
                      f"{res['gap'] / max(abs(res['objective']), 1e-300):.2g} "
                      f"> tol={tol}.", ConvergenceWarning)


def _per_bucket(C, n_buckets):
    """``C`` of each bucket: a list of padded per-sample arrays, or one scalar."""
    return C if isinstance(C, list) else [C] * n_buckets


def _bias_scale(y, task_rows, sample_weight=None):
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


def fit_multitask(kernels, X, y, task_rows, formulation="mtfl", loss="square", C=1.0,
                  p=2.0, q=1.5, epsilon=0.1, max_iter=100, tol=1e-3, max_inner=5,
                  max_rank=None, verbose=0, sample_weight=None, shared=False):
    r"""Fit one of the multitask kernel formulations on validated inputs.

    Parameters
    ----------
    kernels : TaskKernels
        Unfitted kernels.
    X : ndarray
        Training data (or precomputed Grams ``(k, n, n)``).
    y : ndarray of shape (n,)
        Targets (labels in {-1, +1} for the hinge loss).
    task_rows : list of ndarray of int
        Rows of each task.
    formulation : {"mtfl", "mtsfl", "mkl", "independent"}, default="mtfl"
        MK-MTFL, MK-MTSFL, one l1-MKL per task, or one kernel machine per
        task on the average kernel.
    loss : {"square", "hinge", "epsilon_insensitive"}, default="square"
    C : float, default=1.0
    p : float, default=2.0
        MK-MTFL's norm across tasks (``>= 2``).
    q : float, default=1.5
        MK-MTSFL's Schatten exponent (``[1, 2]``).
    epsilon : float, default=0.1
        SVR tube width.
    max_iter : int, default=100
    tol : float, default=1e-3
    max_inner : int, default=5
    max_rank : int, optional
        Rank cap of the kernel eigendecompositions (MK-MTSFL).
    verbose : int, default=0
    sample_weight : ndarray of shape (n,), optional
        Positive weights of the samples' losses (per-sample :math:`C w_i`).
    shared : bool, default=False
        Shared components (an extension of the paper; MK-MTFL or MK-MTSFL;
        other losses than the square assemble the n x n kernel of all
        training rows for libsvm): every kernel gets a second block whose weight vector
        :math:`w_{0j}` is common to all tasks, and each task's bias becomes
        one free common bias plus a deviation :math:`d_t` on a constant
        task-specific kernel, so that
        :math:`f_t(x) = \sum_j\langle w_{0j} + w_{tj}, \phi_j(x)\rangle + b + d_t`.
        The shared blocks enter the same mixed norm, as groups of a single
        "task" (:math:`\|w_{0j}\|_2`): MK-MTSFL's trace budget of
        :math:`R(\bar q)`, or MK-MTFL's simplex :math:`\gamma`, then decides
        how much of each kernel is common and how much task-specific (no
        extra hyper-parameter); with few points
        per task the common part is what lets tasks borrow strength.

    Returns
    -------
    kernels : TaskKernels
        Fitted.
    blocks : TaskBuckets
    model : MultitaskModel
    """
    if shared and formulation not in ("mtfl", "mtsfl"):
        raise ValueError("shared components are implemented for formulation='mtfl' or "
                         f"'mtsfl'; got formulation={formulation!r}.")
    kernels.fit(X, sample_weight)
    k = kernels.n_kernels
    blocks = TaskBuckets(task_rows)
    y_b = blocks.gather(np.asarray(y, dtype=float))
    if sample_weight is not None:
        # per-sample loss weights C w_i in the padded layout (C on padding)
        C = [np.where(mask, C * wb, C) for wb, (_, _, mask)
             in zip(blocks.gather(np.asarray(sample_weight, dtype=float)), blocks.buckets)]
    T = blocks.n_tasks
    bias_scale = _bias_scale(y, blocks.task_rows, sample_weight) if shared else 1.0
    t0 = time.perf_counter()
    if formulation in ("mtfl", "mkl", "independent"):
        grams = []
        for _, idx, mask in blocks.buckets:
            grams.append(np.stack([kernels.blocks(j, idx, mask) for j in range(k)]))
        if formulation == "independent":
            grams = [Kb.mean(axis=0, keepdims=True) for Kb in grams]
            res = solve_mtfl(blocks, grams, y_b, loss, C, 2.0, epsilon, True, 1, tol)
            W = np.full((T, k), 1.0 / k)
            gamma, lam = np.full(k, 1.0 / k), np.ones((T, k))
        else:
            share = formulation == "mtfl"
            factors = None
            if shared:
                # the constant kernel (bias deviations) as one more
                # task-specific kernel; the shared kernels through their
                # factors over all training rows
                grams = [np.concatenate([Kb, bias_scale * (m[:, :, None]
                                                           & m[:, None, :])[None]])
                         for Kb, (_, _, m) in zip(grams, blocks.buckets)]
                factors = [_FACTORS.get(kernels, j, max_rank) for j in range(k)]
            res = solve_mtfl(blocks, grams, y_b, loss, C, p, epsilon, share, max_iter,
                             tol, max_inner, verbose=verbose, shared_factors=factors)
            _warn("MK-MTFL" if share else "per-task MKL", res, max_iter, tol)
            g = res["gamma"]
            W = (g[np.zeros(T, np.int64)] if share else g)[:, :res["lam"].shape[0]] \
                / res["lam"].T
            gamma = g[0, :k] if share else g.mean(axis=0)
            lam = res["lam"].T[:, :k] if share else g
        intercept, shared_coef, shared_w = res["b"].copy(), None, None
        if shared:
            # the constant kernel's part of f_t is W_tk * sum_i beta_ti
            sums = blocks.by_task([be.sum(1) for be in res["beta"]])
            intercept += W[:, k] * bias_scale * sums
            W = W[:, :k]
            shared_w = g[0, k + 1:]
            shared_coef = [w * (A / (A * A).sum(axis=0)) @ z if w > 0 else None
                           for w, A, z in zip(shared_w, factors, res["shared_z"])]
        model = MultitaskModel(
            formulation, gamma, lam, intercept, ("blocks", W, res["beta"]),
            res["objective"], res["gap"], res["history"].as_dict(), res["n_iter"],
            res["converged"], shared_kernel_weights=shared_w, shared_coef=shared_coef)
    else:
        factors, sq = [], []
        for j in range(k):
            A = _FACTORS.get(kernels, j, max_rank)
            factors.append(A)
            sq.append((A * A).sum(axis=0))
        # shared components: a second block per kernel, on the same factor,
        # whose weight vector is common to all tasks, and a task-specific
        # block on the constant kernel (factor 1): the deviation of each
        # task's bias from one free common bias.  Blocks: k task-specific,
        # then the constant one, then k shared.
        const = [np.full((blocks.n_samples, 1), np.sqrt(bias_scale))] if shared else []
        factors_all = factors + const + (factors if shared else [])
        res = solve_mtsfl(blocks, factors_all, y_b, loss, C, q, epsilon, max_iter, tol,
                          verbose, shared=np.arange(len(factors_all)) > k,
                          global_bias=shared)
        _warn("MK-MTSFL", res, max_iter, tol)
        tr = np.array([np.exp(logsumexp(t)) for t in res["log_theta"]])
        live = tr > 1e-12 * max(tr.max(), 1e-300)

        def coef_of(jb):  # V Sigma^-1 Q_j M_tj beta_t of block jb (None if unused)
            A = factors_all[jb]
            if not live[jb] or A.shape[1] == 0:
                return None
            QZ = (res["Z"][jb] * np.exp(res["log_theta"][jb])) @ (res["Z"][jb].T
                                                                  @ res["Zt"][jb])
            return (A / (A * A).sum(axis=0)) @ QZ

        coefs = [coef_of(j) for j in range(k)]  # (n, T): one column per task
        intercept, shared_coef = res["b"].copy(), None
        if shared:
            # the constant kernel's part of f_t, sum_i c_ti * s: the bias deviation
            d = coef_of(k)
            intercept += 0.0 if d is None else bias_scale * d.sum(axis=0)
            shared_coef = [None if c is None else c[:, 0]  # (n,): the one shared column
                           for c in (coef_of(k + 1 + j) for j in range(k))]
        task_w = np.zeros((T, k))
        for j in range(k):
            if coefs[j] is None:
                continue
            th = np.exp(res["log_theta"][j])  # task-specific block
            # share of kernel j in each task's effective kernel vs its base kernel
            Fb = _gather_rows(blocks, factors[j] @ (res["Z"][j] * np.sqrt(th)))
            eff = blocks.by_task([np.einsum("tir,tir->t", F, F) for F in Fb])
            base = blocks.by_task([np.einsum("tir,tir->t", F, F)
                                   for F in _gather_rows(blocks, factors[j])])
            task_w[:, j] = np.where(base > 0, eff / np.where(base > 0, base, 1), 0)
        model = MultitaskModel(
            "mtsfl", tr[:k] / tr.sum(), task_w, intercept, ("full", coefs),
            res["objective"], res["gap"], res["history"].as_dict(), res["n_iter"],
            res["converged"],
            shared_kernel_weights=tr[k + 1:] / tr.sum() if shared else None,
            shared_coef=shared_coef)
    model.history["fit_time"] = np.array([time.perf_counter() - t0])
    return kernels, blocks, model
