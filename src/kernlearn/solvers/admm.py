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

Both systems are Cholesky-factorised once per active set (per call of
:meth:`ADMM.solve`); only their right-hand sides change, and those are formed
from the cached Gram matrices, so an iteration costs two products with
:math:`\\Phi` per task.
"""

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from ._base import BaseSolver, History, SolverResult
from ._dirty import DirtyProblem

__all__ = ["ADMM", "pad_state"]


def pad_state(state, p_new, T):
    """Extend a master state with zero rows for newly added columns.

    Adding columns with zero weight leaves the margins unchanged, so the
    margin variables and their multipliers are reused as they are (the warm
    start of Algorithm 1, line 11).

    Parameters
    ----------
    state : dict or None
        Previous ``SolverResult.state``.
    p_new : int
        Number of active columns now.
    T : int
        Number of tasks.

    Returns
    -------
    state : dict or None
    """
    if not state:
        return state
    out = dict(state)
    for key in ("W", "U", "N"):
        if key in out and out[key] is not None:
            A = out[key]
            out[key] = np.vstack([A, np.zeros((p_new - A.shape[0], T))])
    for key in ("ws", "us", "nus"):
        if key in out and out[key] is not None:
            a = out[key]
            out[key] = np.concatenate([a, np.zeros(p_new - a.shape[0])])
    return out


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

    References
    ----------
    Rakotomamonjy, Flamary, Yger (2013), "Learning with infinitely many
    features", Mach. Learn. 91, Algorithm 2, eqs. (18), (22), (23), (26), (28);
    Boyd et al. (2011), Found. Trends Mach. Learn. 3(1).
    """

    required_loss_methods = ("value", "grad_margin", "prox")
    required_penalty_methods = ("value", "prox")

    def __init__(self, tol=1e-3, max_iter=1000, xi=None, eta=None, check_every=10):
        self.tol = tol
        self.max_iter = max_iter
        self.xi = xi
        self.eta = eta
        self.check_every = check_every

    def solve(self, problem, state=None):
        """Solve the restricted master, warm-started from ``state``.

        Parameters
        ----------
        problem : DirtyProblem
            Active columns, targets, loss and penalties.
        state : dict, optional
            A previous result's ``state`` padded to the current columns
            (:func:`pad_state`).

        Returns
        -------
        result : SolverResult
            ``coef`` is the pair ``(U, u_shared)`` (exactly sparse),
            ``intercept`` the ``(T,)`` biases; ``state`` holds every primal and
            dual variable plus ``objective`` and ``kkt``.
        """
        if not isinstance(problem, DirtyProblem):
            raise TypeError("problem must be a DirtyProblem.")
        P, T, p = problem, problem.T, problem.p
        fit_b = P.fit_intercept
        xi = (np.maximum(10.0 / np.maximum(P.n_t, 1), 0.1) if self.xi is None
              else np.full(T, float(self.xi)))
        eta = float(max(10.0, p)) if self.eta is None else float(self.eta)
        eta_s = eta

        # Gram matrices, column sums and the factorisations of (26) and (28),
        # once per active set.  Tasks sharing rows and xi share them.
        grams, sums, facts = [], [], []
        cache = {}
        for t in range(T):
            Pt = P.Phis[t]
            key = (id(Pt), float(xi[t]))
            if key not in cache:
                G, s = P.gram(t)
                K = xi[t] * G + eta * np.eye(p)
                if fit_b:
                    K = np.block([[K, xi[t] * s[:, None]],
                                  [xi[t] * s[None, :], np.array([[xi[t] * len(Pt)]])]])
                cache[key] = (G, s, cho_factor(K) if K.size else None)
            G, s, f = cache[key]
            grams.append(G)
            sums.append(s)
            facts.append(f)
        if P.has_shared and p:
            Ks = sum(xi[t] * grams[t] for t in range(T)) + eta_s * np.eye(p)
            fact_s = cho_factor(Ks)

        W, ws, b = P.zeros()
        U, us, N, nus = W.copy(), ws.copy(), W.copy(), ws.copy()
        if state:
            W, ws, b = state["W"].copy(), state["ws"].copy(), state["b"].copy()
            U, us = state["U"].copy(), state["us"].copy()
            N, nus = state["N"].copy(), state["nus"].copy()
        Z = P.margins(W, ws, b)
        if state and state.get("M") is not None:
            M = [m.copy() for m in state["M"]]
            Mu = [m.copy() for m in state["Mu"]]
        else:
            M = [z.copy() for z in Z]
            Mu = [np.zeros_like(z) for z in Z]

        history = History()
        step_kkt = 1.0 / P.lipschitz()
        converged, k, kkt, obj = False, 0, np.inf, np.nan
        for k in range(1, self.max_iter + 1):
            R = [M[t] - Mu[t] for t in range(T)]
            if P.shared_rows:
                C = P.Phi.T @ np.column_stack(R)
                c = [C[:, t] for t in range(T)]
            else:
                c = [P.Phis[t].T @ R[t] for t in range(T)]
            e = [R[t].sum() for t in range(T)]
            # (26): task weights and biases
            for t in range(T):
                if p == 0 and not fit_b:
                    continue
                rhs_w = xi[t] * (c[t] - grams[t] @ ws) + eta * (U[:, t] - N[:, t])
                if fit_b:
                    rhs = np.append(rhs_w, xi[t] * (e[t] - sums[t] @ ws))
                    sol = cho_solve(facts[t], rhs)
                    W[:, t], b[t] = sol[:p], sol[p]
                else:
                    W[:, t] = cho_solve(facts[t], rhs_w)
            # (28): shared weights
            if P.has_shared and p:
                rhs = sum(xi[t] * (c[t] - grams[t] @ W[:, t] - sums[t] * b[t])
                          for t in range(T)) + eta_s * (us - nus)
                ws = cho_solve(fact_s, rhs)
            Z = P.margins(W, ws, b)
            # (22): margins by the prox of the loss
            for t in range(T):
                M[t] = P.loss.prox(Z[t] + Mu[t], P.ys[t], 1.0 / xi[t])
            # (23): proxes of the penalties
            U, us = P.prox(W + N, ws + nus, 1.0 / eta, 1.0 / eta_s)
            # multipliers (scaled form: mu = multiplier / xi)
            for t in range(T):
                Mu[t] += Z[t] - M[t]
            N += W - U
            if P.has_shared:
                nus += ws - us
            if k % self.check_every == 0 or k == self.max_iter:
                mU = P.margins(U, us, b)
                obj = P.objective(U, us, b, mU)
                kkt = P.kkt(U, us, b, mU, step=step_kkt)
                history.append(objective=obj, kkt=kkt)
                if kkt <= self.tol:
                    converged = True
                    break
        if not np.isfinite(obj) or k % self.check_every:
            mU = P.margins(U, us, b)
            obj = P.objective(U, us, b, mU)
            kkt = P.kkt(U, us, b, mU, step=step_kkt)
        state = dict(W=W, ws=ws, b=b, U=U, us=us, N=N, nus=nus, M=M, Mu=Mu,
                     objective=obj, kkt=kkt)
        return SolverResult(coef=(U, us), intercept=b.copy(), state=state,
                            history=history, converged=converged, n_iter=k)
