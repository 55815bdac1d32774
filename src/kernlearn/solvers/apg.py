r"""Accelerated proximal gradient (FISTA) with backtracking and cached products.

Minimises

.. math:: F(w, b) = \sum_i \ell(m_i, y_i) + \Omega(w), \qquad m = A w + b,

(the loss carries FGM's ``C`` and the sample weights, see
:class:`~kernlearn.solvers.Problem`)
over the columns ``A`` of an active set split into contiguous groups.  With
``K`` outputs (``y`` of shape ``(n, K)``: FGM's shared multiclass selection)
``w`` is a ``(p, K)`` matrix ``W``, the loss sums over the outputs, and the
penalty groups each group's rows of ``W`` over all outputs
(:meth:`~kernlearn.penalties.BasePenalty.matrix_value`), so the prox is a
row-group prox: the same scales, from the Frobenius norms of the row blocks.
The smooth part is separable over the outputs, so its curvature (the step)
is that of one output and every rule below is unchanged.  When
the penalty's prox only rescales groups (``prox_scales``; true for l1, group
l1-l2 and FGM's squared group l1), the margins of every trial point of the line
search are combinations of two cached per-group products (paper 002, eq. 42),
so a line search never rescans the data: each iteration costs one
``A' r`` and one per-group ``A_t g_t`` product.
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from ..losses import WeightedLoss
from ..penalties._prox import expand, group_norms
from ._base import (BaseSolver, History, SolverResult, SolverState, iteration_constraints,
                    single_blas_thread)

# Per-group caches are n x T; beyond this many entries fall back to A @ w.
_MAX_CACHE_ENTRIES = 50_000_000
# Active sets up to this many entries are solved with one BLAS thread.
_SINGLE_THREAD_ENTRIES = 20_000_000
# A solve also counts as converged once the prox-gradient mapping has dropped
# by this factor from its first value (warm starts begin near the optimum).
_GMAP_DROP = 0.1


class _GroupBlocks:
    """The active columns split once into their groups, for per-group products."""

    # Beyond this many groups one sparse block-diagonal product beats a loop.
    _MAX_LOOP = 256

    def __init__(self, A, indptr):
        self.A, self.indptr = A, np.asarray(indptr)
        T = len(self.indptr) - 1
        self.loop = T <= self._MAX_LOOP
        if self.loop:
            self.blocks = [A[:, a:b] for a, b in zip(self.indptr[:-1], self.indptr[1:])]
        else:
            p = A.shape[1]
            self.group_of = np.repeat(np.arange(T), np.diff(self.indptr))
            self.rows = np.arange(p)

    def products(self, x):
        """Per-group products ``A_t x_t``: ``(n, T)``, or ``(n, K, T)`` for ``x`` ``(p, K)``.

        Parameters
        ----------
        x : ndarray of shape (p,) or (p, K)
            Weights of the active columns.

        Returns
        -------
        Z : ndarray of shape (n, T) or (n, K, T)
            Group ``t``'s margins in ``Z[..., t]``; they sum to ``A x``.
        """
        T = len(self.indptr) - 1
        if self.loop:
            Z = np.empty((self.A.shape[0],) + x.shape[1:] + (T,))
            for t, (blk, a, b) in enumerate(zip(self.blocks, self.indptr[:-1],
                                                self.indptr[1:])):
                Z[..., t] = blk @ x[a:b]
            return Z
        if x.ndim == 2:
            return np.stack([self.products(x[:, k]) for k in range(x.shape[1])], axis=1)
        Xb = sp.csc_matrix((x, (self.rows, self.group_of)), shape=(len(x), T))
        if sp.issparse(self.A):
            return (self.A @ Xb).toarray()
        return np.asarray((Xb.T @ np.asarray(self.A).T).T)


@dataclass(frozen=True)
class APGState(SolverState):
    """State of :class:`APG`: the point, the step and (after a solve) its margins.

    Parameters
    ----------
    coef : ndarray of shape (p,) or (p, K)
        Weights of the active columns.
    intercept : float or ndarray of shape (K,), default=0.0
        Intercepts (ignored without them).
    tau : float, optional
        Lipschitz estimate (inverse step) to start the line search from;
        default paper 002's ``0.1 n C`` with ``C`` the loss's weight.
    margin : ndarray of shape (n_samples,) or (n_samples, K), optional
        Margins ``A coef + intercept`` (output only).
    objective : float, default=nan
        Objective at the point (output only).
    """

    coef: np.ndarray
    intercept: object = 0.0
    tau: float = None
    margin: np.ndarray = None
    objective: float = np.nan


def _loss_weight(loss):
    """The factor ``C`` that ``loss`` carries for every row (sample weights aside)."""
    c = 1.0
    while isinstance(loss, WeightedLoss):
        if loss.sample_weight.ndim == 0:
            c *= float(loss.sample_weight)
        loss = loss.loss
    return c


def _inner(u, v):
    """The inner product of two points: floats and vectors (one output) or matrices.

    Parameters
    ----------
    u, v : float or ndarray
        Points of one shape.

    Returns
    -------
    float
    """
    if np.ndim(u) == 0:
        return u * v
    return u @ v if np.ndim(u) == 1 else float(np.vdot(u, v))


def row_group_scales(penalty, V, step, indptr):
    r"""Scales of a rescaling penalty's prox at ``V``, grouped by rows over all outputs.

    For a penalty whose prox only rescales groups (``prox_scales``), the prox
    of its matrix form (:meth:`~kernlearn.penalties.BasePenalty.matrix_value`)
    at ``V`` of shape ``(p, K)`` is ``c_t V_t`` on each group's rows ``V_t``,
    with the scales computed from the Frobenius norms :math:`\|V_t\|_F` (the
    rows of a group are contiguous in ``V.ravel()``); ``K = 1`` (a vector)
    is the vector prox.

    Parameters
    ----------
    penalty : BasePenalty
        A penalty with ``prox_scales``.
    V : ndarray of shape (p,) or (p, K)
        Point.
    step : float
        Prox step.
    indptr : ndarray of shape (T + 1,)
        Row groups.

    Returns
    -------
    scales : ndarray of shape (T,)
    """
    K = V.shape[1] if V.ndim == 2 else 1
    return penalty.prox_scales(group_norms(V.ravel(), np.asarray(indptr) * K), step)


class APG(BaseSolver):
    r"""FISTA with backtracking line search, warm start and cached products.

    Algorithm 4 of the FGM paper: momentum
    :math:`v^k = w^k + \tfrac{\varrho^{k-1}-1}{\varrho^k}(w^k - w^{k-1})`,
    a step :math:`1/\tau` found by backtracking from :math:`\eta\tau_{k-1}`,
    and :math:`\varrho^{k+1} = (1 + \sqrt{1 + 4\varrho_k^2})/2`.  A function-value
    restart of the momentum keeps the iterates monotone.

    Parameters
    ----------
    tol : float, default=1e-4
        Stop when, for ``patience`` consecutive iterations, the relative
        objective change is below ``tol`` and the prox-gradient mapping is
        below ``sqrt(tol)`` times the gradient norm or a tenth of its first
        value (the paper stops on the objective change alone, which ends
        warm-started solves after a few iterations).
    max_iter : int, default=1000
        Iteration cap.
    eta : float in (0, 1), default=0.5
        Line-search factor.
    restart : bool, default=True
        Restart the momentum when the objective increases.
    patience : int, default=3
        Consecutive iterations below ``tol`` required to stop.

    References
    ----------
    Tan, Tsang, Wang (2014), JMLR 15, Algorithm 4 and eq. (42);
    Beck and Teboulle (2009), SIAM J. Imaging Sci.
    """

    required_loss_methods = ("value", "grad_margin")
    required_penalty_methods = ("value", "prox")

    def __init__(self, tol=1e-4, max_iter=1000, eta=0.5, restart=True, patience=3):
        self.tol = tol
        self.max_iter = max_iter
        self.eta = eta
        self.restart = restart
        self.patience = patience

    @staticmethod
    def _constraints():
        from sklearn.utils._param_validation import Interval

        return iteration_constraints(eta=[Interval(Real, 0, 1, closed="neither")],
                                     restart=["boolean"],
                                     patience=[Interval(Integral, 1, None, closed="left")])

    def solve(self, problem, warm_state=None):
        """Minimise ``sum loss(A w + b, y) + penalty(w)`` from ``warm_state``.

        Parameters
        ----------
        problem : Problem
            Active columns, groups, targets of shape ``(n,)`` or ``(n, K)``
            (``K`` outputs sharing the groups), loss and penalty.
        warm_state : APGState, optional
            Starting point and step (zeros and the default step otherwise).

        Returns
        -------
        result : SolverResult
            ``coef`` and ``intercept`` in the shapes of the targets (``(p,)``
            and a float for 1-D ``y``, ``(p, K)`` and ``(K,)`` otherwise), and
            an :class:`APGState` holding the final ``tau``, ``margin`` and
            ``objective``.
        """
        self.check_problem(problem)
        if np.ndim(problem.y) not in (1, 2):
            raise ValueError("APG's targets y must be 1-D (one output) or 2-D (one column "
                             f"per output); got {np.ndim(problem.y)} dimensions.")
        A = problem.A
        # Matrix-vector products on an active set are memory-bound: extra BLAS
        # threads only contend, so small problems run with one BLAS thread.
        if A.shape[0] * A.shape[1] * np.size(problem.y) // max(len(problem.y), 1) \
                <= _SINGLE_THREAD_ENTRIES:
            with single_blas_thread():
                return self._solve(problem, warm_state)
        return self._solve(problem, warm_state)

    def _solve(self, problem, warm):
        A, y, loss, penalty = problem.A, problem.y, problem.loss, problem.penalty
        indptr, fit_intercept = problem.indptr, problem.fit_intercept
        n, p = A.shape
        T = len(indptr) - 1
        # One output keeps vectors and floats (its arithmetic as it always
        # was); K outputs carry W (p, K), b (K,) and margins (n, K).
        shape = (p,) + np.shape(y)[1:]
        K = int(np.prod(shape[1:], dtype=int))
        w = np.zeros(shape) if warm is None else np.array(warm.coef, dtype=float).reshape(shape)
        b = 0.0 if len(shape) == 1 else np.zeros(K)
        if fit_intercept and warm is not None:
            b = (float(warm.intercept) if len(shape) == 1
                 else np.array(warm.intercept, dtype=float).reshape(K))
        tau = warm.tau if warm is not None else None
        tau = float(tau) if tau else 0.1 * n * _loss_weight(loss)
        tau = max(tau, 1e-12)
        cached = hasattr(penalty, "prox_scales") and n * T * K <= _MAX_CACHE_ENTRIES
        history = History()
        if len(shape) == 1:
            value, prox = penalty.value, penalty.prox
        else:
            value, prox = penalty.matrix_value, penalty.matrix_prox

        def smooth(m):
            return float(loss.value(m, y).sum())

        def product(x):
            return np.asarray(A @ x).reshape((n,) + shape[1:])

        blocks = _GroupBlocks(A, indptr) if cached else None
        Zw = blocks.products(w) if cached else None
        mw = (Zw.sum(-1) if cached else product(w)) + b
        F = smooth(mw) + value(w, indptr)
        w_prev, b_prev, Zw_prev, mw_prev = w, b, Zw, mw
        rho_prev = rho = 1.0
        converged = False
        k = streak = 0
        gmap0 = None
        for k in range(1, self.max_iter + 1):
            beta = (rho_prev - 1.0) / rho
            v = w + beta * (w - w_prev)
            bv = b + beta * (b - b_prev)
            if cached:
                Zv = (1 + beta) * Zw - beta * Zw_prev
                mv = Zv.sum(-1) + bv
            else:
                mv = (1 + beta) * mw - beta * mw_prev
            fv = smooth(mv)
            r = loss.grad_margin(mv, y)
            gw = np.asarray(A.T @ r).reshape(shape)
            gb = (float(r.sum()) if len(shape) == 1 else r.sum(0)) if fit_intercept else 0.0 * b
            Zg = blocks.products(gw) if cached else None
            tau *= self.eta
            while True:
                gpt = v - gw / tau
                if cached:
                    c = row_group_scales(penalty, gpt, 1.0 / tau, indptr)
                    w_new = gpt * expand(c, indptr).reshape((p,) + (1,) * (len(shape) - 1))
                    Z_new = c * (Zv - Zg / tau)
                    b_new = bv - gb / tau
                    m_new = Z_new.sum(-1) + b_new
                else:
                    w_new = prox(gpt, 1.0 / tau, indptr)
                    b_new = bv - gb / tau
                    m_new = product(w_new) + b_new
                    Z_new = None
                f_new = smooth(m_new)
                dw, db = w_new - v, b_new - bv
                quad = fv + _inner(gw, dw) + _inner(gb, db) + 0.5 * tau * (
                    _inner(dw, dw) + _inner(db, db))
                if f_new <= quad + 1e-12 * max(abs(fv), 1.0) or tau > 1e15:
                    break
                tau /= self.eta
            F_new = f_new + value(w_new, indptr)
            if self.restart and F_new > F + 1e-15 * abs(F):
                if beta == 0.0:
                    # A plain prox-gradient step cannot decrease F: F is
                    # stationary to machine precision.
                    converged = True
                    break
                # Momentum overshot: restart from the last iterate.
                rho_prev = rho = 1.0
                w_prev, b_prev, Zw_prev, mw_prev = w, b, Zw, mw
                history.append(objective=F, step=1.0 / tau, restart=1)
                continue
            rho_prev, rho = rho, (1.0 + np.sqrt(1.0 + 4.0 * rho * rho)) / 2.0
            w_prev, b_prev, Zw_prev, mw_prev = w, b, Zw, mw
            w, b, Zw, mw = w_new, b_new, Z_new, m_new
            rel = abs(F - F_new) / max(abs(F_new), 1e-300)
            F = F_new
            history.append(objective=F, step=1.0 / tau, rel_change=rel)
            # Scale-free optimality: the prox-gradient mapping tau (v - w+) must
            # be small relative to the gradient, not only the objective flat.
            gmap = tau * np.sqrt(_inner(dw, dw) + _inner(db, db))
            gnorm = np.sqrt(_inner(gw, gw) + _inner(gb, gb))
            history.rows[-1]["kkt"] = gmap / max(gnorm, 1e-300)
            gmap0 = gmap if gmap0 is None else gmap0
            ok = rel < self.tol and (gmap <= np.sqrt(self.tol) * gnorm
                                     or gmap <= _GMAP_DROP * gmap0)
            streak = streak + 1 if ok else 0
            if streak >= self.patience:
                converged = True
                break
        return SolverResult(
            coef=w,
            intercept=b,
            state=APGState(coef=w, intercept=b, tau=tau, margin=mw, objective=F),
            history=history,
            converged=converged,
            n_iter=k,
        )
