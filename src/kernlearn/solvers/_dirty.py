"""The restricted master of GrFL: a sparse "dirty" multitask problem.

For a fixed active set of columns :math:`\\Phi` (``p`` columns split into
contiguous groups by ``indptr``) and ``T`` tasks, paper 000 eq. (2)/(17)
with bias terms reads

.. math::

    \\min_{W, \\tilde w, b}\\ \\sum_{t=1}^T \\sum_{i \\in I_t}
        \\ell\\big(y_{i,t},\\ \\Phi_{i,\\cdot}(w_t + \\tilde w) + b_t\\big)
        + \\Omega_p(W) + \\Omega_s(\\tilde w),

with :math:`W = [w_1 \\dots w_T] \\in \\mathbb R^{p\\times T}` penalised by a
mixed norm over the row groups (group ``g`` is the block
``W[indptr[g]:indptr[g+1], :]``, i.e. ``W.ravel()`` with groups
``indptr * T``), and the shared weights :math:`\\tilde w` by a norm over the
column groups.  The regularisation levels are the penalties' ``alpha``
(:math:`\\lambda_p`, :math:`\\lambda_s`).  Every task either uses every row
(multi-output, one-vs-all multiclass: ``task_rows=None``) or its own rows.

This module holds what both masters (ADMM, FISTA) and the pricing need: the
margins, the objective, the gradients and the approximate-KKT measure.

Margins of all tasks are held in one array so that every per-sample operation
(loss, its gradient and prox) is a single vectorised call whatever the number
of tasks: an ``(n, T)`` matrix when every task uses every row (one product
with :math:`\\Phi` serves all tasks), else the tasks' margin vectors
concatenated task after task (length :math:`\\sum_t n_t`).  Per-task
quantities (steps, biases) are broadcast to that layout by :meth:`DirtyProblem.per_task`.
"""

import math
from dataclasses import InitVar, dataclass, fields, replace

import numpy as np

from ._base import SolverState
from ._dirty_kernels import EXACT, KATO_TEMPLE, _power_iterations

__all__ = ["LIP_RTOL", "DirtyProblem", "DirtyState", "pad_state", "top_eigenvalue_bound"]

# Relative accuracy of the Lipschitz bound u: lambda_max <= u <= (1 + 2 LIP_RTOL)
# lambda_max (the KKT step 1/u is the exact one to this accuracy).
LIP_RTOL = 1e-6
# Below this size LAPACK's eigenvalues cost no more than the bound.
_EXACT_BELOW = 16


def _pad_vector(v, k, intercept_last):
    """A previous top eigenvector ``v`` extended with zeros to length ``k``
    (new columns are inserted before the intercept coordinate, when last)."""
    if v is None or len(v) > k:
        return None
    if len(v) == k:
        return v
    out = np.zeros(k)
    if intercept_last and len(v):
        out[: len(v) - 1] = v[:-1]
        out[-1] = v[-1]
    else:
        out[: len(v)] = v
    return out


def _exact_top(G, rtol):
    # (times 1 + rtol: LAPACK's value is within k * eps of the true one)
    return float(np.linalg.eigvalsh(G)[-1]) * (1.0 + rtol) + 1e-300


def top_eigenvalue_bound(G, start=None, rtol=LIP_RTOL, max_iter=40, compiled=True):
    r"""A certified upper bound of the largest eigenvalue of a symmetric PSD matrix.

    Power iterations from ``start`` (the previous problem's top eigenvector:
    appending a few columns moves it little) give a unit vector :math:`v`,
    its Rayleigh quotient :math:`\theta \le \lambda_{\max}` and residual
    :math:`r = \|Gv - \theta v\|`.  Two certificates turn them into a bound:

    - when one eigenvalue dominates (GrFL's Grams with the intercept column,
      whose norm is :math:`\sqrt n`): every other eigenvalue is at most
      :math:`\mu = (\|G\|_F^2 - \theta^2)^{1/2}` in magnitude (the squared
      eigenvalues sum to :math:`\|G\|_F^2`), and if :math:`\mu < \theta`
      the Kato-Temple inequality gives
      :math:`\lambda_{\max} \le \theta + r^2/(\theta - \mu)`; it is
      used once :math:`\mu \le \theta/2` and this excess is below
      :math:`\text{rtol}\,\theta`;
    - otherwise, once :math:`r \le \text{rtol}\,\theta`, the bound
      :math:`u = \theta + r + \text{rtol}\,\theta` is *certified* by a
      Cholesky factorisation of :math:`uI - G` (which exists iff
      :math:`\lambda_{\max} < u`; its margin of at least
      :math:`\text{rtol}\,\theta` is far above the factorisation's rounding).

    The slack :math:`\text{rtol}\,\theta` added to either bound covers the
    rounding of :math:`\theta`, :math:`r` and :math:`\mu`.  A failed
    certificate, iterations that did not converge, or a small matrix (where
    LAPACK's eigenvalues cost no more) give the exact :math:`\lambda_{\max}`
    times ``1 + rtol``.  Either way :math:`\lambda_{\max} \le u \le
    (1 + 2\,\text{rtol})\lambda_{\max}`.

    Parameters
    ----------
    G : ndarray of shape (k, k)
        Symmetric positive semi-definite matrix.
    start : ndarray of shape (k,), optional
        Starting vector (default: all ones).
    rtol : float, default=LIP_RTOL
        Relative slack of the bound.
    max_iter : int, default=40
        Cap on the power iterations (fewer when the residuals shrink too
        slowly to reach ``rtol`` within it).
    compiled : bool, default=True
        Run the iterations compiled (else by NumPy: the same iterations, its
        reference; the two differ by rounding).

    Returns
    -------
    bound : float
        :math:`u`, with :math:`\lambda_{\max}(G) \le u`.
    vector : ndarray of shape (k,) or None
        Unit vector close to the top eigenvector (the next warm start);
        ``None`` for a small matrix.
    """
    k = G.shape[0]
    if k < _EXACT_BELOW:
        return _exact_top(G, rtol), None
    # (count_nonzero: any() without the ufunc reduction's overhead)
    v = (np.ones(k) if start is None or not np.count_nonzero(start)
         else np.asarray(start, float))
    # (Euclidean norms as sqrt(x.dot(x)), what np.linalg.norm computes for a
    # vector, without its checks)
    v = v / math.sqrt(v.dot(v))
    G = np.ascontiguousarray(G, dtype=float)
    code, u, v = (_power_iterations if compiled else _power_iterations_numpy)(
        G, v, float(rtol), int(max_iter))
    if code == KATO_TEMPLE:
        return u, v
    if code == EXACT:
        return _exact_top(G, rtol), v
    M = -G
    M.flat[:: k + 1] += u
    try:
        np.linalg.cholesky(M)
    except np.linalg.LinAlgError:  # theta belonged to a lower eigenvalue
        return _exact_top(G, rtol), v
    return u, v


# the same iterations by NumPy, uncompiled (the compiled kernel's reference)
_power_iterations_numpy = _power_iterations.py_func


@dataclass(frozen=True)
class DirtyState(SolverState):
    """A point of the GrFL master, the state both of its solvers start from.

    Parameters
    ----------
    W : ndarray of shape (p, T)
        Task-specific weights.
    ws : ndarray of shape (p,)
        Shared weights.
    b : ndarray of shape (T,)
        Biases.
    objective : float, default=nan
        Objective (17) at the solver's returned point (output only).
    kkt : float, default=inf
        Approximate-KKT measure there (output only).
    """

    W: np.ndarray
    ws: np.ndarray
    b: np.ndarray
    objective: float = np.nan
    kkt: float = np.inf


# Fields of the master states with one row per active column.
_ROW_FIELDS = ("W", "U", "N")
_VECTOR_FIELDS = ("ws", "us", "nus")
# state type -> its row fields and vector fields (pad_state)
_PADDED = {}


def pad_state(state, p_new, T):
    """Extend a master state with zero rows for newly added columns.

    Adding columns with zero weight leaves the margins unchanged, so the
    margin variables and their multipliers are reused as they are (the warm
    start of Algorithm 1, line 11).

    Parameters
    ----------
    state : DirtyState or None
        Previous ``SolverResult.state`` (or a starting point).
    p_new : int
        Number of active columns now.
    T : int
        Number of tasks.

    Returns
    -------
    state : DirtyState or None
        The same type as ``state``.
    """
    if state is None:
        return None
    cls = type(state)
    padded = _PADDED.get(cls)
    if padded is None:  # (the fields of a state type, looked up once)
        names = {f.name for f in fields(state)}
        padded = _PADDED[cls] = ([k for k in _ROW_FIELDS if k in names],
                                 [k for k in _VECTOR_FIELDS if k in names],
                                 not hasattr(cls, "__post_init__"))
    new = {}
    for key in padded[0]:
        A = getattr(state, key)
        if A is not None:
            # (what np.vstack with a block of zeros gives, without its checks)
            new[key] = out = np.zeros((p_new, T), dtype=np.promote_types(A.dtype, float))
            out[: A.shape[0]] = A
    for key in padded[1]:
        a = getattr(state, key)
        if a is not None:
            new[key] = out = np.zeros(p_new, dtype=np.promote_types(a.dtype, float))
            out[: a.shape[0]] = a
    if not padded[2]:
        return replace(state, **new)
    # what dataclasses.replace gives for a state without __post_init__ (once
    # per outer iteration; replace re-runs the frozen __init__ on every field)
    padded_state = object.__new__(cls)
    padded_state.__dict__.update(state.__dict__, **new)
    return padded_state


def task_targets(Y, task_rows):
    """Each task's targets on its rows.

    Parameters
    ----------
    Y : ndarray of shape (n_samples,) or (n_samples, T)
        One target per row (of the row's task), or one column per task.
    task_rows : list of ndarray
        Rows of each task (with a 2-D ``Y``, several tasks may hold a row).

    Returns
    -------
    list of ndarray
        ``Y[r]`` or ``Y[r, t]`` of task ``t`` with rows ``r``.
    """
    if Y.ndim == 1:
        return [Y[r] for r in task_rows]
    return [Y[r, t] for t, r in enumerate(task_rows)]


@dataclass(eq=False)
class DirtyProblem:
    r"""Data of a restricted master problem (paper 000, eq. (17)).

    Parameters
    ----------
    Phi : ndarray of shape (n_samples, p)
        Active columns on all training rows.
    Y : ndarray of shape (n_samples, T) or (n_samples,)
        Targets; with ``task_rows`` a 1-D array where ``Y[i]`` belongs to the
        task of row ``i``, or ``(n_samples, T)`` where task ``t`` reads column
        ``t`` on its rows (tasks sharing rows with other targets: one-vs-rest
        classes within tasks, :func:`task_targets`).
    loss : BaseLoss
        Datafit on margins (``value``, ``grad_margin``; ``prox`` for ADMM).
    penalty_p : BasePenalty
        Task-specific penalty on ``W`` (its ``matrix_value`` / ``matrix_prox``:
        joint across tasks by default, per task for
        :class:`~kernlearn.penalties.PerTaskL1Lq`).
    penalty_s : BasePenalty or None
        Shared penalty on :math:`\\tilde w`; ``None`` drops the shared part.
    indptr : ndarray of shape (n_groups + 1,), optional
        Column groups (singletons by default).
    task_rows : list of ndarray, optional
        Row indices of each task; ``None`` means every task uses every row.
    fit_intercept : bool, default=True
        Fit one unpenalised bias per task.
    gram : ndarray of shape (p, p), optional
        :math:`\Phi'\Phi` when every task uses every row (callers that grow
        the active set update it column by column instead of recomputing it).
    colsum : ndarray of shape (p,), optional
        ``Phi.sum(axis=0)`` with ``gram`` (kept up to date the same way).

    Attributes
    ----------
    Ys : ndarray
        Targets in the margin layout (``(n, T)``, or the tasks' targets
        concatenated).
    """

    Phi: np.ndarray
    Y: np.ndarray
    loss: object
    penalty_p: object
    penalty_s: object = None
    indptr: np.ndarray = None
    task_rows: list = None
    fit_intercept: bool = True
    gram: InitVar[np.ndarray] = None
    colsum: np.ndarray = None

    def __post_init__(self, gram):
        Phi = np.asarray(self.Phi, dtype=float)
        self.Phi = Phi
        self.n, self.p = Phi.shape
        self.indptr = np.arange(self.p + 1) if self.indptr is None else np.asarray(self.indptr)
        task_rows = self.task_rows
        Y = np.asarray(self.Y, dtype=float)
        if task_rows is None:
            if Y.ndim == 1:
                Y = Y[:, None]
            self.shared_rows = True
            self.T = Y.shape[1]
            self.Phis = [Phi] * self.T
            self.Ys = Y
            self.n_t = np.array([self.n] * self.T, dtype=int)  # (np.full, without its wrapper)
        else:
            self.shared_rows = False
            self.T = len(task_rows)
            self.Phis = [Phi[r] for r in task_rows]
            self.Ys = np.concatenate(task_targets(Y, task_rows)) if self.T else Y[:0]
            self.n_t = np.array([len(r) for r in task_rows], dtype=int)
            # task of each entry of the concatenated layout, and its slices
            self._task_of = np.repeat(np.arange(self.T), self.n_t)
            ends = np.cumsum(self.n_t)
            self._slices = [slice(e - k, e) for e, k in zip(ends, self.n_t)]
        self.has_shared = self.penalty_s is not None
        self._grams = {}
        self._lip = None
        # top eigenvectors of the (bordered) Grams, the next problem's warm start
        self.lip_vectors = {}
        # (a Gram matrix passed in is kept up to date by the caller: reading it
        # saves products with all rows)
        self.gram_supplied = gram is not None and self.shared_rows
        if self.gram_supplied:
            self._grams[0] = (np.asarray(gram, dtype=float),
                              Phi.sum(axis=0) if self.colsum is None else self.colsum)

    @property
    def penalties(self):
        """The penalties of the problem: :math:`\\Omega_p` and, if any, :math:`\\Omega_s`."""
        return (self.penalty_p,) if self.penalty_s is None else (self.penalty_p, self.penalty_s)

    def task_gram(self, t):
        r"""Cached :math:`(\Phi^{(t)\prime}\Phi^{(t)},\ \Phi^{(t)\prime}\mathbf 1)` of task ``t``."""
        key = 0 if self.shared_rows else t
        if key not in self._grams:
            Pt = self.Phis[t]
            self._grams[key] = (Pt.T @ Pt, Pt.sum(axis=0))
        return self._grams[key]

    def bordered_gram(self, t=0):
        r"""Cached :math:`[\Phi^{(t)}\ \mathbf 1]'[\Phi^{(t)}\ \mathbf 1]` of task ``t`` (intercept last).

        The Hessian of the unweighted square loss, and the matrix whose top
        eigenvalue bounds the Lipschitz constant (:meth:`lipschitz`).

        Parameters
        ----------
        t : int, default=0
            Task (all tasks share one when rows are shared).

        Returns
        -------
        ndarray of shape (p + 1, p + 1)
        """
        key = 0 if self.shared_rows else t
        cache = self.__dict__.setdefault("_bordered", {})
        if key not in cache:
            G, s = self.task_gram(t)
            p = G.shape[0]
            B = np.empty((p + 1, p + 1))
            B[:p, :p] = G
            B[:p, p] = B[p, :p] = s
            B[p, p] = self.n_t[t]
            cache[key] = B
        return cache[key]

    # ------------------------------------------------------ the margin layout
    def per_task(self, v):
        """Broadcast one value per task to the margin layout.

        Parameters
        ----------
        v : array-like of shape (T,)
            Per-task values (e.g. ADMM steps).

        Returns
        -------
        ndarray
            ``(1, T)`` (shared rows) or ``(sum n_t,)``.
        """
        v = np.asarray(v, dtype=float)
        return v[None, :] if self.shared_rows else v[self._task_of]

    def task_margins(self, M):
        """Split margins (or any array in the margin layout) into one vector per task.

        Parameters
        ----------
        M : ndarray
            Array in the margin layout.

        Returns
        -------
        list of ndarray
        """
        if self.shared_rows:
            return [M[:, t] for t in range(self.T)]
        return [M[s] for s in self._slices]

    def task_sums(self, M):
        """:math:`\\mathbf 1' m_t` of every task.

        Parameters
        ----------
        M : ndarray
            Array in the margin layout.

        Returns
        -------
        ndarray of shape (T,)
        """
        if self.shared_rows:
            return np.ones(M.shape[0]) @ M  # BLAS: faster than a strided sum
        return np.bincount(self._task_of, weights=M, minlength=self.T)

    def correlate(self, M):
        """:math:`\\Phi^{(t)\\prime} m_t` of every task, one BLAS product when rows are shared.

        Parameters
        ----------
        M : ndarray
            Array in the margin layout.

        Returns
        -------
        ndarray of shape (p, T)
        """
        if self.shared_rows:
            return self.Phi.T @ M
        out = np.empty((self.p, self.T))
        for t, (Pt, s) in enumerate(zip(self.Phis, self._slices)):
            out[:, t] = Pt.T @ M[s]
        return out

    def gram_apply(self, V, b):
        r"""``correlate`` and ``task_sums`` of :math:`\Phi^{(t)}v_t + b_t`, from the Gram matrices.

        Parameters
        ----------
        V : ndarray of shape (p, T) or (p,)
            Weights per task (a 1-D ``V`` is used by every task).
        b : ndarray of shape (T,)
            Biases.

        Returns
        -------
        C : ndarray of shape (p, T)
            :math:`\Phi^{(t)\prime}\Phi^{(t)} v_t + b_t \Phi^{(t)\prime}\mathbf 1`.
        e : ndarray of shape (T,)
            :math:`\mathbf 1'\Phi^{(t)} v_t + n_t b_t`.
        """
        if self.shared_rows:
            # a 1-D V is one product, broadcast to the tasks
            G, s = self.task_gram(0)
            C, e = G @ V, s @ V + self.n_t * b
            return (C[:, None] if V.ndim == 1 else C) + np.outer(s, b), e
        V = np.broadcast_to(V[:, None] if V.ndim == 1 else V, (self.p, self.T))
        C, e = np.empty((self.p, self.T)), np.empty(self.T)
        for t in range(self.T):
            G, s = self.task_gram(t)
            C[:, t] = G @ V[:, t] + s * b[t]
            e[t] = s @ V[:, t] + self.n_t[t] * b[t]
        return C, e

    # ------------------------------------------------------------------ basics
    def zeros(self):
        """All-zero point ``(W, w_shared, b)``."""
        return np.zeros((self.p, self.T)), np.zeros(self.p), np.zeros(self.T)

    def margins(self, W, ws, b):
        """Margins :math:`\\Phi^{(t)}(w_t + \\tilde w) + b_t` of all tasks in the margin layout."""
        if self.shared_rows:
            return self.Phi @ (W + ws[:, None]) + b
        if not self.T:
            return np.zeros(0)
        return np.concatenate([Pt @ (W[:, t] + ws) + b[t] for t, Pt in enumerate(self.Phis)])

    def loss_value(self, margins):
        """:math:`\\sum_t \\sum_i \\ell(m_{i,t}, y_{i,t})`."""
        return float(self.loss.value(margins, self.Ys).sum())

    def penalty_value(self, W, ws):
        """:math:`\\Omega_p(W) + \\Omega_s(\\tilde w)`."""
        val = self.penalty_p.matrix_value(W, self.indptr)
        if self.has_shared:
            val += self.penalty_s.value(ws, self.indptr)
        return float(val)

    def objective(self, W, ws, b, margins=None):
        """Objective of eq. (17) with bias terms."""
        if margins is None:
            margins = self.margins(W, ws, b)
        return self.loss_value(margins) + self.penalty_value(W, ws)

    def loss_gradients(self, margins):
        """Loss gradients :math:`\\ell'(m, y)` at the margins, in the margin layout."""
        return self.loss.grad_margin(margins, self.Ys)

    def gradients(self, margins):
        """Gradients of the smooth part from the margins.

        Returns
        -------
        gW : ndarray of shape (p, T)
            :math:`[\\nabla_{W}J]_{j,t} = \\Phi^{(t)\\prime}_j \\ell'_t` (paper 000, sec. 3.2.1).
        gws : ndarray of shape (p,)
            :math:`\\nabla_{\\tilde w} J = \\sum_t \\nabla_{w_t} J`.
        gb : ndarray of shape (T,)
            Bias gradients (zero without intercept).
        """
        G = self.loss_gradients(margins)
        gW = self.correlate(G)
        gb = self.task_sums(G) if self.fit_intercept else np.zeros(self.T)
        return gW, gW.sum(axis=1), gb

    def prox(self, W, ws, step_p, step_s):
        """Prox of the penalties at ``(W, ws)`` with steps ``step_p``, ``step_s``."""
        U = self.penalty_p.matrix_prox(W, step_p, self.indptr)
        if not self.has_shared:
            return U, ws * 0.0
        return U, self.penalty_s.prox(ws, step_s, self.indptr)

    def lipschitz(self, start=None):
        r"""Lipschitz constant bound of the smooth part's gradient.

        :math:`L = \ell'' \max_t \bar\lambda_t\,(1 + T\,[\text{shared}])` with
        :math:`\bar\lambda_t \ge \lambda_{\max}([\Phi^{(t)}\ \mathbf 1]'
        [\Phi^{(t)}\ \mathbf 1])` from the cached Gram matrices, exact to a
        relative :data:`LIP_RTOL` (:func:`top_eigenvalue_bound`); computed once
        per problem.

        Parameters
        ----------
        start : dict, optional
            :attr:`lip_vectors` of a previous problem whose columns are the
            first ones of this one (the warm start of the bound).

        Returns
        -------
        lipschitz : float
        """
        # (through __dict__: a subclass may set up its own attributes)
        if self.__dict__.get("_lip") is not None:
            return self._lip
        vectors = self.__dict__.setdefault("lip_vectors", {})
        s2 = 0.0
        start = start or {}
        for t in range(1 if self.shared_rows else self.T):
            G = self.bordered_gram(t) if self.fit_intercept else self.task_gram(t)[0]
            if G.size:
                lam, vectors[t] = top_eigenvalue_bound(
                    G, _pad_vector(start.get(t), G.shape[0], self.fit_intercept))
                s2 = max(s2, lam)
        lip = self.loss.lipschitz
        lip = lip if math.isfinite(lip) else 1.0
        self._lip = max(lip * s2 * (1 + (self.T if self.has_shared else 0)), 1e-12)
        return self._lip

    def kkt(self, W, ws, b, margins=None, step=None):
        """Approximate-KKT measure, scale-free in the regularisation level.

        The norm of the prox-gradient mapping
        :math:`G_s(x) = (x - \\mathrm{prox}_{s\\Omega}(x - s\\nabla J(x)))/s`,
        which vanishes exactly at the minimisers (it plays the role of the
        distance of :math:`-\\nabla J` to :math:`\\partial\\Omega`, conditions (3)
        and (4) of paper 000), in max-norm and divided by the smallest
        regularisation level.

        Parameters
        ----------
        W, ws, b : ndarray
            Point.
        margins : ndarray, optional
            Its margins in the margin layout (computed when omitted).
        step : float, optional
            Step ``s``; default ``1 / lipschitz()``.

        Returns
        -------
        kkt : float
        """
        if margins is None:
            margins = self.margins(W, ws, b)
        if step is None:
            step = 1.0 / self.lipschitz()
        gW, gws, gb = self.gradients(margins)
        U, us = self.prox(W - step * gW, ws - step * gws, step, step)
        res = np.abs(W - U).max(initial=0.0) / step
        if self.has_shared:
            res = max(res, np.abs(ws - us).max(initial=0.0) / step)
        res = max(res, np.abs(gb).max(initial=0.0))
        return float(res) / self.reg_scale()

    def reg_scale(self):
        """Smallest regularisation level, the scale of the KKT measure."""
        lams = [float(self.penalty_p.alpha)]
        if self.has_shared:
            lams.append(float(self.penalty_s.alpha))
        return max(min(lams), 1e-12)
