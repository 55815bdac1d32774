r"""Accelerated proximal gradient (FISTA) with backtracking and cached products.

Minimises

.. math:: F(w, b) = \sum_i \ell(m_i, y_i) + \Omega(w), \qquad m = A w + b,

(the loss carries FGM's ``C`` and the sample weights, see
:class:`~kernlearn.solvers.Problem`)
over the columns ``A`` of an active set split into contiguous groups.  When
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
        T = len(self.indptr) - 1
        if self.loop:
            Z = np.empty((self.A.shape[0], T))
            for t, (blk, a, b) in enumerate(zip(self.blocks, self.indptr[:-1],
                                                self.indptr[1:])):
                Z[:, t] = blk @ x[a:b]
            return Z
        Xb = sp.csc_matrix((x, (self.rows, self.group_of)), shape=(len(x), T))
        if sp.issparse(self.A):
            return (self.A @ Xb).toarray()
        return np.asarray((Xb.T @ np.asarray(self.A).T).T)


@dataclass(frozen=True)
class APGState(SolverState):
    """State of :class:`APG`: the point, the step and (after a solve) its margins.

    Parameters
    ----------
    coef : ndarray of shape (p,)
        Weights of the active columns.
    intercept : float, default=0.0
        Intercept (ignored without one).
    tau : float, optional
        Lipschitz estimate (inverse step) to start the line search from;
        default paper 002's ``0.1 n C`` with ``C`` the loss's weight.
    margin : ndarray of shape (n_samples,), optional
        Margins ``A coef + intercept`` (output only).
    objective : float, default=nan
        Objective at the point (output only).
    """

    coef: np.ndarray
    intercept: float = 0.0
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
            Active columns, groups, one output's targets, loss and penalty.
        warm_state : APGState, optional
            Starting point and step (zeros and the default step otherwise).

        Returns
        -------
        result : SolverResult
            ``coef`` of shape ``(p,)``, a float ``intercept``, and an
            :class:`APGState` holding the final ``tau``, ``margin`` and
            ``objective``.
        """
        self.check_problem(problem)
        if np.ndim(problem.y) != 1:
            raise ValueError("APG solves one output: y must be 1-D; use ProxNewton for "
                             "several outputs sharing their features.")
        A = problem.A
        # Matrix-vector products on an active set are memory-bound: extra BLAS
        # threads only contend, so small problems run with one BLAS thread.
        if A.shape[0] * A.shape[1] <= _SINGLE_THREAD_ENTRIES:
            with single_blas_thread():
                return self._solve(problem, warm_state)
        return self._solve(problem, warm_state)

    def _solve(self, problem, warm):
        A, y, loss, penalty = problem.A, problem.y, problem.loss, problem.penalty
        indptr, fit_intercept = problem.indptr, problem.fit_intercept
        n, p = A.shape
        T = len(indptr) - 1
        w = np.zeros(p) if warm is None else np.array(warm.coef, dtype=float)
        b = float(warm.intercept) if fit_intercept and warm is not None else 0.0
        tau = warm.tau if warm is not None else None
        tau = float(tau) if tau else 0.1 * n * _loss_weight(loss)
        tau = max(tau, 1e-12)
        cached = hasattr(penalty, "prox_scales") and n * T <= _MAX_CACHE_ENTRIES
        history = History()

        def smooth(m):
            return float(loss.value(m, y).sum())

        blocks = _GroupBlocks(A, indptr) if cached else None
        Zw = blocks.products(w) if cached else None
        mw = (Zw.sum(1) if cached else np.asarray(A @ w).ravel()) + b
        F = smooth(mw) + penalty.value(w, indptr)
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
                mv = Zv.sum(1) + bv
            else:
                mv = (1 + beta) * mw - beta * mw_prev
            fv = smooth(mv)
            r = loss.grad_margin(mv, y)
            gw = np.asarray(A.T @ r).ravel()
            gb = float(r.sum()) if fit_intercept else 0.0
            Zg = blocks.products(gw) if cached else None
            tau *= self.eta
            while True:
                gpt = v - gw / tau
                if cached:
                    c = penalty.prox_scales(group_norms(gpt, indptr), 1.0 / tau)
                    w_new = gpt * expand(c, indptr)
                    Z_new = c * (Zv - Zg / tau)
                    b_new = bv - gb / tau
                    m_new = Z_new.sum(1) + b_new
                else:
                    w_new = penalty.prox(gpt, 1.0 / tau, indptr)
                    b_new = bv - gb / tau
                    m_new = np.asarray(A @ w_new).ravel() + b_new
                    Z_new = None
                f_new = smooth(m_new)
                dw, db = w_new - v, b_new - bv
                quad = fv + gw @ dw + gb * db + 0.5 * tau * (dw @ dw + db * db)
                if f_new <= quad + 1e-12 * max(abs(fv), 1.0) or tau > 1e15:
                    break
                tau /= self.eta
            F_new = f_new + penalty.value(w_new, indptr)
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
            gmap = tau * np.sqrt(dw @ dw + db * db)
            gnorm = np.sqrt(gw @ gw + gb * gb)
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
