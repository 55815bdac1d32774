"""ADMM for the GrFL restricted master (paper 000, Algorithm 2).

The variable splitting of eq. (18), written on margins so that any loss with
a ``prox`` fits: for every task ``t``

.. math::

    m_t = \\Phi^{(t)}(w_t + \\tilde w) + b_t\\mathbf 1, \\qquad
    u_t = w_t, \\qquad \\tilde u = \\tilde w,

and the (scaled) augmented Lagrangian of eq. (19) with penalties
:math:`\\xi_t` (margins), :math:`\\eta` (task weights) and :math:`\\tilde\\eta`
(shared weights).  One iteration:

1. :math:`(w_t, b_t)` from the linear system (26),
   :math:`\\begin{bmatrix}\\xi\\Phi'\\Phi + \\eta I & \\xi\\Phi'\\mathbf 1\\\\
   \\xi\\mathbf 1'\\Phi & \\xi n_t\\end{bmatrix}`;
2. :math:`\\tilde w` from (28), :math:`(\\sum_t \\xi_t\\Phi^{(t)\\prime}\\Phi^{(t)} + \\tilde\\eta I)`;
3. :math:`m_t = \\mathrm{prox}_{\\ell/\\xi_t}(\\cdot)` (eq. 22, Table 2);
4. :math:`U = \\mathrm{prox}_{\\Omega_p/\\eta}`, :math:`\\tilde u = \\mathrm{prox}_{\\Omega_s/\\tilde\\eta}` (eq. 23, Table 1);
5. dual ascent on the three constraints.

Both systems are inverted (from their Cholesky factors) once per active set
(per call of :meth:`ADMM.solve`); only their right-hand sides change, and those are formed
from the cached Gram matrices, so an iteration costs two products with
:math:`\\Phi`.  All tasks are updated together: their margins form one array
(an ``(n, T)`` matrix for one-vs-all or multi-output tasks, which share rows),
so each product with :math:`\\Phi` is a single BLAS call with ``T``
right-hand sides, the loss prox one vectorised call, and tasks with the same
system are solved by one product with its pre-computed inverse.
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from ._base import BaseSolver, History, SolverResult, iteration_constraints
from ._dirty import DirtyProblem, DirtyState, pad_state

__all__ = ["ADMM", "ADMMState", "fact_groups", "pad_state"]


@dataclass(frozen=True)
class ADMMState(DirtyState):
    """State of :class:`ADMM`: every primal and dual variable of the splitting.

    ``W, ws, b`` (see :class:`~kernlearn.solvers._dirty.DirtyState`) are the
    iterates of (26) and (28); the fields below default to the start of a
    solve from that point.

    Parameters
    ----------
    U, us : ndarray, optional
        Split copies of ``W`` and ``ws`` (exactly sparse).
    N, nus : ndarray, optional
        Their scaled multipliers.
    M, Mu : ndarray, optional
        Split margins and their scaled multipliers (margin layout).
    xi : ndarray of shape (T,), optional
        Margin penalties reached by residual balancing.
    eta : float, optional
        Weight penalty reached by residual balancing.
    n_factor : int, default=0
        Factorisations of the systems in the solve.
    """

    U: np.ndarray = None
    us: np.ndarray = None
    N: np.ndarray = None
    nus: np.ndarray = None
    M: np.ndarray = None
    Mu: np.ndarray = None
    xi: np.ndarray = None
    eta: float = None
    n_factor: int = 0


def _spd_inverse(K):
    """Inverse of a symmetric positive definite matrix, from its Cholesky factor.

    The systems (26) and (28) keep their matrix for many iterations (the
    paper pre-computes their inverses, sec. 4.1.3): one matrix product per
    iteration then replaces two triangular solves, whose call overhead
    dominates for the small systems of a restricted master.
    """
    inv = cho_solve(cho_factor(K), np.eye(K.shape[0]), check_finite=False)
    return 0.5 * (inv + inv.T)


def fact_groups(facts):
    """Group tasks by their (shared) system inverse.

    Parameters
    ----------
    facts : list
        One system inverse per task (the same object for tasks that share
        rows and penalty).

    Returns
    -------
    groups : list of (ndarray, ndarray of int)
        Each distinct inverse with the tasks that use it.
    """
    groups = {}
    for t, f in enumerate(facts):
        groups.setdefault(id(f), (f, []))[1].append(t)
    return [(f, np.array(ts)) for f, ts in groups.values()]


class ADMM(BaseSolver):
    """ADMM master of GrFL (paper 000, Algorithm 2, eqs. (18)-(28)).

    Parameters
    ----------
    tol : float, default=1e-3
        Stop when the approximate-KKT measure
        (:meth:`~kernlearn.solvers._dirty.DirtyProblem.kkt`, relative to the
        regularisation level) falls below ``tol``.
    max_iter : int, default=1000
        Iteration cap.
    xi : float, optional
        Margin penalty :math:`\\xi_t`; default :math:`\\max(10/n_t, 0.1)` (sec. 6).
    eta : float, optional
        Weight penalties :math:`\\eta_t = \\tilde\\eta`; default
        :math:`\\max(10, d)` with ``d`` active columns (sec. 6).
    check_every : int, default=10
        Iterations between two KKT evaluations (each costs two products
        with :math:`\\Phi`).
    adaptive : bool, default=True
        Start from the paper's :math:`\\xi_t, \\eta` and rebalance them by
        residual balancing (Boyd et al. 2011, sec. 3.4.1: double or halve a
        penalty when its primal and dual residuals differ by more than
        ``balance`` times),
        refactorising the systems at most ``max_refactor`` times per solve.
        ``False`` keeps the paper's fixed values (one factorisation per
        active set).
    max_refactor : int, default=20
        Cap on the refactorisations caused by rebalancing.
    balance : float, default=10.0
        Residual ratio that triggers a rebalancing.

    References
    ----------
    Rakotomamonjy, Flamary, Yger (2013), "Learning with infinitely many
    features", Mach. Learn. 91, Algorithm 2, eqs. (18), (22), (23), (26), (28);
    Boyd et al. (2011), Found. Trends Mach. Learn. 3(1).
    """

    problem_type = DirtyProblem
    required_loss_methods = ("value", "grad_margin", "prox")
    required_penalty_methods = ("value", "prox", "matrix_value", "matrix_prox")

    def __init__(self, tol=1e-3, max_iter=1000, xi=None, eta=None, check_every=10,
                 adaptive=True, max_refactor=20, balance=10.0):
        self.tol = tol
        self.max_iter = max_iter
        self.xi = xi
        self.eta = eta
        self.check_every = check_every
        self.adaptive = adaptive
        self.max_refactor = max_refactor
        self.balance = balance

    @staticmethod
    def _constraints():
        from sklearn.utils._param_validation import Interval

        return iteration_constraints(xi=[Interval(Real, 0, None, closed="neither"), None],
                                     eta=[Interval(Real, 0, None, closed="neither"), None],
                                     check_every=[Interval(Integral, 1, None, closed="left")],
                                     adaptive=["boolean"],
                                     max_refactor=[Interval(Integral, 0, None, closed="left")],
                                     balance=[Interval(Real, 1, None, closed="left")])

    def solve(self, problem, warm_state=None):
        """Solve the restricted master, warm-started from ``warm_state``.

        Parameters
        ----------
        problem : DirtyProblem
            Active columns, targets, loss and penalties.
        warm_state : DirtyState or ADMMState, optional
            A starting point, or a previous result's state padded to the
            current columns (:func:`pad_state`); an :class:`ADMMState` also
            restores the split variables, multipliers and penalties.

        Returns
        -------
        result : SolverResult
            ``coef`` is the pair ``(U, u_shared)`` (exactly sparse),
            ``intercept`` the ``(T,)`` biases; an :class:`ADMMState` holding
            every primal and dual variable plus ``objective`` and ``kkt``.
        """
        self.check_problem(problem)
        state = warm_state
        P, T, p = problem, problem.T, problem.p
        fit_b = P.fit_intercept
        xi = (np.maximum(10.0 / np.maximum(P.n_t, 1), 0.1) if self.xi is None
              else np.full(T, float(self.xi)))
        eta = float(max(10.0, p)) if self.eta is None else float(self.eta)
        if self.adaptive and getattr(state, "eta", None) is not None:
            xi, eta = state.xi.copy(), state.eta

        def factorise():
            # inverses of (26) per task and of (28); tasks sharing rows and xi
            # share them (all one-vs-all tasks: a single system).
            cache, facts = {}, []
            for t in range(T):
                key = (0 if P.shared_rows else t, float(xi[t]))
                if key not in cache:
                    G, s = P.task_gram(t)
                    K = xi[t] * G + eta * np.eye(p)
                    if fit_b:
                        K = np.block([[K, xi[t] * s[:, None]],
                                      [xi[t] * s[None, :], np.array([[xi[t] * P.n_t[t]]])]])
                    cache[key] = _spd_inverse(K)
                facts.append(cache[key])
            fact_s = None
            if P.has_shared and p:
                Ks = sum(xi[t] * P.task_gram(t)[0] for t in range(T)) + eta * np.eye(p)
                fact_s = _spd_inverse(Ks)
            return facts, fact_s, fact_groups(facts)

        facts, fact_s, groups = factorise()
        n_factor = 1

        W, ws, b = P.zeros()
        U, us, N, nus = W.copy(), ws.copy(), W.copy(), ws.copy()
        if state is not None:
            W, ws, b = state.W.copy(), state.ws.copy(), state.b.copy()
            # a plain starting point: split copies equal to it, zero multipliers
            U = getattr(state, "U", None)
            U, us = (W.copy(), ws.copy()) if U is None else (U.copy(), state.us.copy())
            N = getattr(state, "N", None)
            N, nus = (np.zeros_like(W), np.zeros_like(ws)) if N is None else (
                N.copy(), state.nus.copy())
        Z = P.margins(W, ws, b)
        if getattr(state, "M", None) is not None:
            M, Mu = state.M.copy(), state.Mu.copy()
        else:
            M, Mu = Z.copy(), np.zeros_like(Z)

        # Every step below treats all tasks at once: margins live in one array
        # (DirtyProblem's margin layout), so the loss prox is one vectorised
        # call and, when the tasks share rows, each product with Phi is one
        # BLAS call with T right-hand sides.
        history = History()
        step_kkt = 1.0 / P.lipschitz()
        converged, k, kkt, obj = False, 0, np.inf, np.nan
        for k in range(1, self.max_iter + 1):
            R = M - Mu
            C = P.correlate(R)
            e = P.task_sums(R)
            # (26): task weights and biases, one product per distinct system
            Ct, et = C, e
            if P.has_shared:  # the shared weights' part of the margins
                Cs, es = P.gram_apply(ws, np.zeros(T))
                Ct, et = C - Cs, e - es
            rhs = np.empty((p + fit_b, T))
            rhs[:p] = xi * Ct + eta * (U - N)
            if fit_b:
                rhs[p] = xi * et
            for inv, ts in groups:
                sol = inv @ rhs[:, ts]
                W[:, ts] = sol[:p]
                if fit_b:
                    b[ts] = sol[p]
            # (28): shared weights
            if fact_s is not None:
                CW = P.gram_apply(W, b)[0]
                ws = fact_s @ ((C - CW) @ xi + eta * (us - nus))
            Z = P.margins(W, ws, b)
            # (22): margins by the prox of the loss
            M_old = M
            M = P.loss.prox(Z + Mu, P.Ys, P.per_task(1.0 / xi))
            # (23): proxes of the penalties
            U_old, us_old = U, us
            U, us = P.prox(W + N, ws + nus, 1.0 / eta, 1.0 / eta)
            # multipliers (scaled form: mu = multiplier / xi)
            Mu += Z - M
            N += W - U
            if P.has_shared:
                nus += ws - us
            if k % self.check_every == 0 or k == self.max_iter:
                mU = P.margins(U, us, b)
                obj = P.objective(U, us, b, mU)
                kkt = P.kkt(U, us, b, mU, step=step_kkt)
                history.append(objective=obj, kkt=kkt, xi=float(xi[0]), eta=eta)
                if kkt <= self.tol:
                    converged = True
                    break
                if self.adaptive and n_factor <= self.max_refactor:
                    # residual balancing (Boyd et al. 2011, sec. 3.4.1), one
                    # factor per constraint family; scaled duals are rescaled.
                    r_w = np.sqrt(np.sum((W - U) ** 2) + np.sum((ws - us) ** 2))
                    s_w = eta * np.sqrt(np.sum((U - U_old) ** 2)
                                        + np.sum((us - us_old) ** 2))
                    r_m = np.sqrt(np.sum((Z - M) ** 2))
                    s_m = xi[0] * np.sqrt(np.sum((M - M_old) ** 2))
                    mu = self.balance
                    f_eta = 2.0 if r_w > mu * s_w else (0.5 if s_w > mu * r_w else 1.0)
                    f_xi = 2.0 if r_m > mu * s_m else (0.5 if s_m > mu * r_m else 1.0)
                    if f_eta != 1.0 or f_xi != 1.0:
                        eta *= f_eta
                        N /= f_eta
                        nus /= f_eta
                        xi = xi * f_xi
                        Mu /= f_xi
                        facts, fact_s, groups = factorise()
                        n_factor += 1
        if not np.isfinite(obj) or k % self.check_every:
            mU = P.margins(U, us, b)
            obj = P.objective(U, us, b, mU)
            kkt = P.kkt(U, us, b, mU, step=step_kkt)
        state = ADMMState(W=W, ws=ws, b=b, objective=obj, kkt=kkt, U=U, us=us, N=N,
                          nus=nus, M=M, Mu=Mu, xi=xi, eta=eta, n_factor=n_factor)
        return SolverResult(coef=(U, us), intercept=b.copy(), state=state,
                            history=history, converged=converged, n_iter=k)
