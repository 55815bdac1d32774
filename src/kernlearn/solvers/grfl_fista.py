"""FISTA on the GrFL restricted master, the baseline of paper 000, Table 3.

Accelerated proximal gradient on :math:`x = (W, \\tilde w, b)` for the
problem of :class:`~kernlearn.solvers._dirty.DirtyProblem`: a gradient step on
the smooth loss, then the proxes of :math:`\\Omega_p` and :math:`\\Omega_s`
(separable across the two blocks), with backtracking on the Lipschitz
estimate and a function-value restart of the momentum.  It stops on the same
approximate-KKT measure as :class:`~kernlearn.solvers.admm.ADMM`, so the two
masters can be compared at equal accuracy.
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from ._base import BaseSolver, History, SolverResult, iteration_constraints
from ._dirty import DirtyProblem, DirtyState

__all__ = ["FISTAState", "GrFLFISTA"]


@dataclass(frozen=True)
class FISTAState(DirtyState):
    """State of :class:`GrFLFISTA`: the point (see ``DirtyState``) and the step.

    Parameters
    ----------
    L : float, optional
        Lipschitz estimate reached by the line search.
    """

    L: float = None


class GrFLFISTA(BaseSolver):
    """FISTA master of GrFL (comparison baseline of paper 000, sec. 6.1).

    Parameters
    ----------
    tol : float, default=1e-3
        Stop when the approximate-KKT measure falls below ``tol``.
    max_iter : int, default=3000
        Iteration cap (the paper's cap in Table 3).
    eta : float in (0, 1), default=0.5
        Backtracking factor.
    check_every : int, default=10
        Iterations between two KKT evaluations.

    References
    ----------
    Beck and Teboulle (2009), SIAM J. Imaging Sci. 2(1);
    Rakotomamonjy, Flamary, Yger (2013), Mach. Learn. 91, sec. 6.1, Table 3.
    """

    problem_type = DirtyProblem
    required_loss_methods = ("value", "grad_margin")
    required_penalty_methods = ("value", "prox", "matrix_value", "matrix_prox")

    def __init__(self, tol=1e-3, max_iter=3000, eta=0.5, check_every=10):
        self.tol = tol
        self.max_iter = max_iter
        self.eta = eta
        self.check_every = check_every

    @staticmethod
    def _constraints():
        from sklearn.utils._param_validation import Interval

        return iteration_constraints(eta=[Interval(Real, 0, 1, closed="neither")],
                                     check_every=[Interval(Integral, 1, None, closed="left")])

    def solve(self, problem, warm_state=None):
        """Solve the restricted master, warm-started from ``warm_state``.

        Parameters
        ----------
        problem : DirtyProblem
            Active columns, targets, loss and penalties.
        warm_state : DirtyState or FISTAState, optional
            Starting point (and step), padded to the current columns.

        Returns
        -------
        result : SolverResult
            ``coef`` is ``(W, w_shared)``, ``intercept`` the biases; a
            :class:`FISTAState`.
        """
        self.check_problem(problem)
        P = problem
        W, ws, b = P.zeros()
        L = None
        if warm_state is not None:
            W, ws, b = warm_state.W.copy(), warm_state.ws.copy(), warm_state.b.copy()
            L = getattr(warm_state, "L", None)
        if not L:
            L = P.lipschitz() / 10.0
        L = max(L, 1e-12)
        fit_b = P.fit_intercept
        step_kkt = 1.0 / P.lipschitz()
        mx = P.margins(W, ws, b)
        F = P.objective(W, ws, b, mx)
        Wp, wsp, bp, mxp = W, ws, b, mx
        rho_prev = rho = 1.0
        history = History()
        converged, k, kkt = False, 0, np.inf
        for k in range(1, self.max_iter + 1):
            beta = (rho_prev - 1.0) / rho
            Wy = W + beta * (W - Wp)
            wsy = ws + beta * (ws - wsp)
            by = b + beta * (b - bp)
            my = (1 + beta) * mx - beta * mxp  # margins of the extrapolated point
            fy = P.loss_value(my)
            gW, gws, gb = P.gradients(my)
            L *= self.eta
            while True:
                s = 1.0 / L
                Wn, wsn = P.prox(Wy - s * gW, wsy - s * gws, s, s)
                bn = by - s * gb if fit_b else by
                mn = P.margins(Wn, wsn, bn)
                fn = P.loss_value(mn)
                dW, dws, db = Wn - Wy, wsn - wsy, bn - by
                quad = (fy + np.vdot(gW, dW) + gws @ dws + gb @ db
                        + 0.5 * L * (np.vdot(dW, dW) + dws @ dws + db @ db))
                if fn <= quad + 1e-12 * max(abs(fy), 1.0) or L > 1e15:
                    break
                L /= self.eta
            Fn = fn + P.penalty_value(Wn, wsn)
            if Fn > F and beta > 0:
                # momentum overshoot: restart from the current iterate
                rho_prev = rho = 1.0
                Wp, wsp, bp, mxp = W, ws, b, mx
                continue
            rho_prev, rho = rho, (1.0 + np.sqrt(1.0 + 4.0 * rho * rho)) / 2.0
            Wp, wsp, bp, mxp = W, ws, b, mx
            W, ws, b, mx, F = Wn, wsn, bn, mn, Fn
            if k % self.check_every == 0:
                kkt = P.kkt(W, ws, b, mx, step=step_kkt)
                history.append(objective=F, kkt=kkt)
                if kkt <= self.tol:
                    converged = True
                    break
        if not converged:
            kkt = P.kkt(W, ws, b, mx, step=step_kkt)
        state = FISTAState(W=W, ws=ws, b=b, objective=F, kkt=kkt, L=L)
        return SolverResult(coef=(W, ws), intercept=b.copy(), state=state,
                            history=history, converged=converged, n_iter=k)
