r"""Proximal Newton master for FGM's squared group-l1 problem on a small active set.

Minimises, over ``W`` of shape ``(p, K)`` and intercepts ``b`` of shape ``(K,)``,

.. math:: F(W, b) = \sum_{k=1}^K \sum_i \ell(m_{ik}, y_{ik})
          + \tfrac{\alpha}{2}\Big(\sum_t \|W_t\|_F\Big)^2,
          \qquad m_{\cdot k} = A W_{\cdot k} + b_k,

(the loss carries FGM's ``C`` and the sample weights, see
:class:`~kernlearn.solvers.Problem`), where ``W_t`` are the rows of group
``t`` (FGM's constraints ``d_t``) over all
``K`` outputs: ``K = 1`` is the paper's problem, ``K > 1`` shares the selected
features across one-vs-rest classes.

FGM's active set is small (tens to hundreds of columns), so the Hessian of the
smooth part, ``H_k = A' diag(l''(m_k)) A``, is cheap to form with one BLAS
product per output, and a Newton method needs a handful of iterations where
first-order methods need hundreds (paper 002's APG).  Each iteration

1. forms the quadratic model of the loss at the current point,
2. minimises model + penalty by exact block coordinate descent (compiled):
   the block problem of group ``t`` has the closed form
   :math:`v_k = -(H_{k,tt} + \mu I)^{-1} c_k` with
   :math:`\mu = \alpha (1 + S / \|v\|_F)`, ``S`` the sum of the other groups'
   norms, and ``mu`` the root of a monotone scalar equation,
3. takes the longest step ``s in {1, 1/2, ...}`` satisfying the Armijo rule
   of Tseng and Yun on the true objective.

It stops when the predicted decrease ``-delta`` of the model (zero exactly at
the optimum) falls below ``tol`` times the objective.

References
----------
Tan, Tsang, Wang (2014), JMLR 15 (the restricted problem, eq. 31);
Lee, Sun, Saunders (2014), "Proximal Newton-type methods for minimizing
composite functions", SIAM J. Optim.; Tseng and Yun (2009), Math. Program.
117; Yuan, Ho, Lin (2012), "An improved GLMNET for l1-regularized logistic
regression", JMLR 13 (the same design in LIBLINEAR).
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from ..penalties import SquaredGroupL1
from ..penalties._prox import group_norms
from ..utils._numba_cache import njit_cached
from ._newton_guard import guarded_subproblem
from ._base import (BaseSolver, History, SolverResult, SolverState, iteration_constraints,
                    single_blas_thread)

__all__ = ["LocalNewtonRows", "ProxNewton", "ProxNewtonState", "block_minimiser", "loss_derivatives",
           "newton_rows"]

# Armijo sufficient-decrease constant and line-search halvings.
_SIGMA = 1e-4
_MAX_HALVINGS = 30
# Active sets (times outputs) up to this many entries run with one BLAS thread.
_SINGLE_THREAD_ENTRIES = 20_000_000
# Block sweeps before the subproblem tries Newton steps on its support, and
# halvings of a Newton step before it is refused.
_NEWTON_AFTER = 2
_NEWTON_HALVINGS = 3
# Halvings of a refused Newton step searched further (see _short_newton_step).
_MAX_SHORT_HALVINGS = 40


@njit_cached
def _block_mu(lam, ct, alpha, S):
    """Root ``mu`` of the block optimality condition (see :func:`block_minimiser`).

    ``lam[k, i]`` are the eigenvalues of the ``k``-th Hessian block and
    ``ct[k, i]`` the linear term in its eigenbasis.  With ``x = mu - alpha``,
    ``h(x) = x * ||(lam + alpha + x)^{-1} ct||`` increases from 0 to ``||ct||``;
    the optimum solves ``h(x) = alpha * S``.
    """
    target = alpha * S
    cn2 = 0.0
    lmax = 0.0
    for k in range(lam.shape[0]):
        for i in range(lam.shape[1]):
            cn2 += ct[k, i] * ct[k, i]
            if lam[k, i] > lmax:
                lmax = lam[k, i]
    cn = np.sqrt(cn2)
    lo = 0.0
    hi = target * (lmax + alpha) / (cn - target)
    # Bisection on a bracket of h(x) - target, finished by secant steps.
    for _ in range(200):
        x = 0.5 * (lo + hi)
        s = 0.0
        for k in range(lam.shape[0]):
            for i in range(lam.shape[1]):
                q = ct[k, i] / (lam[k, i] + alpha + x)
                s += q * q
        if x * np.sqrt(s) < target:
            lo = x
        else:
            hi = x
        if hi - lo <= 1e-14 * hi:
            break
    return alpha + 0.5 * (lo + hi)


def block_minimiser(Hblocks, c, alpha, S):
    r"""Exact minimiser of one group's block problem.

    Solves :math:`\min_v \sum_k c_k'v_k + \tfrac12 v_k' H_k v_k
    + \tfrac{\alpha}{2}(S + \|v\|_F)^2` for positive semi-definite ``H_k``.

    Parameters
    ----------
    Hblocks : ndarray of shape (K, r, r)
        Hessian blocks, one per output.
    c : ndarray of shape (K, r)
        Linear terms.
    alpha : float
        Penalty weight.
    S : float
        Sum of the norms of the other groups.

    Returns
    -------
    v : ndarray of shape (K, r)
    """
    lam, U = np.linalg.eigh(np.asarray(Hblocks, dtype=float))
    ct = np.einsum("kij,ki->kj", U, c)
    out = np.empty_like(ct)
    _solve_block(np.maximum(lam, 0.0), ct, float(alpha), float(S), out)
    return np.einsum("kij,kj->ki", U, out)


@njit_cached
def _solve_block(lam, ct, alpha, S, out):
    """Block minimiser in the eigenbasis: writes ``(U' v)`` into ``out``."""
    cn2 = 0.0
    for k in range(ct.shape[0]):
        for i in range(ct.shape[1]):
            cn2 += ct[k, i] * ct[k, i]
    if np.sqrt(cn2) <= alpha * S:
        out[:] = 0.0
        return
    mu = alpha if S == 0.0 else _block_mu(lam, ct, alpha, S)
    for k in range(ct.shape[0]):
        for i in range(ct.shape[1]):
            out[k, i] = -ct[k, i] / (lam[k, i] + mu)


@njit_cached
def _group_norms(W, indptr):
    T = indptr.shape[0] - 1
    norms = np.zeros(T)
    for t in range(T):
        s = 0.0
        for j in range(indptr[t], indptr[t + 1]):
            for k in range(W.shape[1]):
                s += W[j, k] * W[j, k]
        norms[t] = np.sqrt(s)
    return norms


@njit_cached
def _model_gradient(H, g, W0, W):
    """``Q_k = g_k + H_k (W_k - W0_k)``: gradient of the quadratic model at ``W``."""
    K, p = g.shape
    Q = g.copy()
    for k in range(K):
        for j in range(p):
            d = W[j, k] - W0[j, k]
            if d != 0.0:
                for q in range(p):
                    Q[k, q] += H[k, j, q] * d  # symmetric H, read by rows
    return Q


@njit_cached
def _value_at(g, Q, W0, W, indptr, alpha):
    """Quadratic model plus penalty at ``W`` given its model gradient ``Q``.

    The model ``g'd + d'Hd/2`` (``d = W - W0``) equals ``(g + Q)'d / 2``
    with ``Q = g + H d``: ``O(K p)`` where the direct sum costs ``O(K p^2)``.
    """
    K, p = g.shape
    val = 0.0
    for j in range(p):
        for k in range(K):
            val += 0.5 * (g[k, j] + Q[k, j]) * (W[j, k] - W0[j, k])
    s = _group_norms(W, indptr).sum()
    return val + 0.5 * alpha * s * s


def _model_value(H, g, W0, W, indptr, alpha):
    """Quadratic model plus penalty at ``W`` (up to the constant at ``W0``; for checks)."""
    return _value_at(g, _model_gradient(H, g, W0, W), W0, W, indptr, alpha)


@njit_cached
def _support_newton(H, W, Q, indptr, alpha):
    r"""Newton step of the subproblem on the groups carrying weight.

    Where every group of the support has weight, the penalty
    :math:`\tfrac{\alpha}{2} S^2` (:math:`S = \sum_t \|W_t\|`) is smooth,
    with Hessian :math:`\alpha S D + N M N'`: ``D`` puts
    :math:`1 / \|W_t\|` on the rows of group ``t``, the columns of ``N``
    are the unit directions :math:`n_t = W_t / \|W_t\|` and
    :math:`M = \alpha (1 1' - S\,\mathrm{diag}(1 / \|W_t\|))`.  With the
    model's Hessian the first part is block-diagonal over the outputs,
    :math:`P_k = H_k + \alpha S D`, and the rest has rank ``T``: the step
    costs one ``p x p`` solve per output with ``T + 1`` right-hand sides
    (Woodbury), where the block sweeps crawl for hundreds of sweeps on
    correlated groups.  Groups without weight stay at zero (the sweeps decide
    which groups enter or leave).

    Parameters
    ----------
    H : ndarray of shape (K, p, p)
        Hessians of the model, one per output.
    W : ndarray of shape (p, K)
        Current point.
    Q : ndarray of shape (K, p)
        Gradient of the model at ``W``.
    indptr : ndarray of shape (T + 1,)
        Group boundaries.
    alpha : float
        Penalty weight.

    Returns
    -------
    Wn : ndarray of shape (p, K)
        ``W`` plus the Newton step on the support.
    ok : bool
        False when there is no support or the step is not finite.
    """
    K = W.shape[1]
    T = indptr.shape[0] - 1
    norms = _group_norms(W, indptr)
    S = norms.sum()
    Ts = 0
    ps = 0
    for t in range(T):
        if norms[t] > 0.0:
            Ts += 1
            ps += indptr[t + 1] - indptr[t]
    Wn = W.copy()
    if Ts == 0:
        return Wn, False
    idx = np.empty(ps, dtype=np.int64)
    gid = np.empty(ps, dtype=np.int64)
    snorm = np.empty(Ts)
    j = 0
    s = 0
    for t in range(T):
        if norms[t] > 0.0:
            snorm[s] = norms[t]
            for i in range(indptr[t], indptr[t + 1]):
                idx[j] = i
                gid[j] = s
                j += 1
            s += 1
    # per output: P_k X = [gradient, n_1 .. n_Ts] restricted to the support
    Z = np.empty((K, ps))
    Y = np.empty((K, Ts, ps))
    P = np.empty((ps, ps))
    R = np.zeros((ps, Ts + 1))
    for k in range(K):
        for a in range(ps):
            ia = idx[a]
            for b in range(ps):
                P[a, b] = H[k, ia, idx[b]]
            P[a, a] += alpha * S / snorm[gid[a]]
            R[a, :] = 0.0
            R[a, 0] = Q[k, ia] + alpha * S * W[ia, k] / snorm[gid[a]]
            R[a, 1 + gid[a]] = W[ia, k] / snorm[gid[a]]
        X = np.linalg.solve(P, R)
        for a in range(ps):
            Z[k, a] = X[a, 0]
            for t in range(Ts):
                Y[k, t, a] = X[a, 1 + t]
    # N'Z and N'Y: n_t lives on the rows of group t only
    NZ = np.zeros(Ts)
    NY = np.zeros((Ts, Ts))
    for k in range(K):
        for a in range(ps):
            n = W[idx[a], k] / snorm[gid[a]]
            NZ[gid[a]] += n * Z[k, a]
            for t in range(Ts):
                NY[gid[a], t] += n * Y[k, t, a]
    M = np.full((Ts, Ts), alpha)
    for t in range(Ts):
        M[t, t] -= alpha * S / snorm[t]
    try:
        v = M @ np.linalg.solve(np.eye(Ts) + NY @ M, NZ)
    except Exception:  # noqa: BLE001
        # I + N'Y M is singular where the support's Hessian H + S D + N M N'
        # is: the penalty's part is positive semi-definite (the penalty is
        # convex; M alone is not), so where it and the model's Hessian share
        # a flat direction (repeated features): no Newton step, as for a step
        # that is not finite (numba's solve raises where NumPy's would too;
        # before, the whole fit stopped)
        return Wn, False
    for k in range(K):
        for a in range(ps):
            d = Z[k, a]
            for t in range(Ts):
                d -= Y[k, t, a] * v[t]
            Wn[idx[a], k] -= d
    return Wn, bool(np.all(np.isfinite(Wn)))


@njit_cached
def _short_newton_step(H, g, W0, W, Wn, indptr, alpha, v, step):
    r"""The best of the steps ``step, step/2, ...`` towards ``Wn``, or none.

    When the penalty is weak next to the loss (near noise-free targets, a
    large ``C``) and a feature sits in several groups (FGM selects it
    again), the model is flat along moving weight between the copies: the
    support's Hessian is nearly singular there, and its Newton step
    overshoots by orders of magnitude (a shrinking group passes through
    zero, where the penalty bends).  The direction is still the right one,
    and the value along a segment is convex, so the halvings go on until
    the value drops below ``v`` and then while it keeps dropping; the
    sweeps alone crawl (on 1000 x 20 data with 10 informative features a
    subproblem took over 50,000 sweeps, where two such steps finish it).

    Parameters
    ----------
    H : ndarray of shape (K, p, p)
        Hessians of the model.
    g : ndarray of shape (K, p)
        Gradient of the model at ``W0``.
    W0 : ndarray of shape (p, K)
        Point of the model.
    W : ndarray of shape (p, K)
        Current point.
    Wn : ndarray of shape (p, K)
        The full Newton step's end (:func:`_support_newton`).
    indptr : ndarray of shape (T + 1,)
        Group boundaries.
    alpha : float
        Penalty weight.
    v : float
        Model plus penalty at ``W``.
    step : float
        First step length tried.

    Returns
    -------
    Wt : ndarray of shape (p, K)
        The point reached (``W`` when refused).
    Qt : ndarray of shape (K, p)
        The model's gradient there.
    ok : bool
        False when no step lowers the value below ``v``.
    """
    best_W = W
    best_Q = g  # unused unless a step is found
    best = v
    for _ in range(_MAX_SHORT_HALVINGS):
        Wt = W + step * (Wn - W)
        Qt = _model_gradient(H, g, W0, Wt)
        val = _value_at(g, Qt, W0, Wt, indptr, alpha)
        if val < best:
            best_W, best_Q, best = Wt, Qt, val
        elif best < v:
            break  # convex along the segment: past its minimum
        step *= 0.5
    return best_W, best_Q, best < v


@njit_cached
def _subproblem(H, g, W0, indptr, alpha, max_sweeps, tol, ftol, newton=True):
    """Exact block coordinate descent on model + squared group-l1 penalty.

    ``H`` has shape ``(K, p, p)`` and ``g`` shape ``(K, p)`` (intercepts
    already eliminated).  Returns the minimiser ``W`` of
    ``g'(W - W0) + 1/2 (W - W0)' H (W - W0) + penalty(W)`` and the sweeps run.
    The sweeps stop when no coordinate moves by more than ``tol`` relative to
    the largest, or when a sweep lowers the model by at most ``ftol``
    (absolute): along the near-flat directions the sweeps crawl on, the
    coordinates still move while the model, hence the margins and the
    predicted decrease, no longer change.

    A feature that FGM's worst-case analysis selects again sits in several
    groups; moving weight between such groups is a direction of tiny
    curvature along which plain coordinate descent crawls.  Every
    ``_ANDERSON`` sweeps the iterates are extrapolated (Anderson
    acceleration, as in skglm) and the extrapolation kept when it lowers the
    objective.

    From the ``_NEWTON_AFTER``-th sweep on (with ``newton``), each sweep is
    followed by a Newton step on the groups carrying weight
    (:func:`_support_newton`), kept when it lowers the objective (halved
    up to ``_NEWTON_HALVINGS`` times, then searched further along its
    direction, :func:`_short_newton_step`); once a step is refused (the
    support is still changing) the sweeps go on alone for a while.
    Where the penalty is smooth Newton converges quadratically: on
    spectrometer (18 classes, 11 groups of correlated columns, ``C=10``)
    the subproblems took 5,543 sweeps (up to 500 each) and now 223, with the
    same minimisers.
    """
    K = H.shape[0]
    p = H.shape[1]
    T = indptr.shape[0] - 1
    W = W0.copy()
    Q = g.copy()  # gradient of the model at the current point
    norms = _group_norms(W, indptr)
    # Eigendecompositions of the diagonal blocks, once per model.
    rmax = 0
    for t in range(T):
        rmax = max(rmax, indptr[t + 1] - indptr[t])
    lams = np.zeros((T, K, rmax))
    Us = np.zeros((T, K, rmax, rmax))
    for t in range(T):
        a, e = indptr[t], indptr[t + 1]
        r = e - a
        for k in range(K):
            lam, U = np.linalg.eigh(np.ascontiguousarray(H[k, a:e, a:e]))
            for i in range(r):
                lams[t, k, i] = max(lam[i], 0.0)
                for j in range(r):
                    Us[t, k, i, j] = U[i, j]
    m = 5  # Anderson memory
    last = np.zeros((m + 1, p * K))
    sweeps = 0
    newton_at = _NEWTON_AFTER
    for sweep in range(max_sweeps):
        sweeps = sweep + 1
        change = 0.0
        scale = 0.0
        gain = 0.0  # decrease of the model in this sweep
        total = norms.sum()
        for t in range(T):
            a, e = indptr[t], indptr[t + 1]
            r = e - a
            S = total - norms[t]
            # Linear term of the block problem in the eigenbasis:
            # c = Q_I - H_II W_I, ct = U' c.
            ct = np.zeros((K, r))
            for k in range(K):
                c = np.empty(r)
                for i in range(r):
                    acc = Q[k, a + i]
                    for j in range(r):
                        acc -= H[k, a + i, a + j] * W[a + j, k]
                    c[i] = acc
                for i in range(r):
                    acc = 0.0
                    for j in range(r):
                        acc += Us[t, k, j, i] * c[j]
                    ct[k, i] = acc
            vt = np.empty((K, r))
            _solve_block(lams[t, :, :r], ct, alpha, S, vt)
            # the block problem's value before and after, in the eigenbasis
            before = 0.0
            after = 0.0
            for k in range(K):
                for i in range(r):
                    acc = 0.0
                    for j in range(r):
                        acc += Us[t, k, j, i] * W[a + j, k]
                    before += ct[k, i] * acc + 0.5 * lams[t, k, i] * acc * acc
                    after += ct[k, i] * vt[k, i] + 0.5 * lams[t, k, i] * vt[k, i] * vt[k, i]
            newnorm = 0.0
            for k in range(K):
                for i in range(r):
                    acc = 0.0
                    for j in range(r):
                        acc += Us[t, k, i, j] * vt[k, j]
                    d = acc - W[a + i, k]
                    if d != 0.0:
                        # H is symmetric: its row is read contiguously (its
                        # column, strided by p, cost half the fit at p ~ 80)
                        for q in range(p):
                            Q[k, q] += H[k, a + i, q] * d
                        change = max(change, abs(d))
                    W[a + i, k] = acc
                    scale = max(scale, abs(acc))
                    newnorm += acc * acc
            newnorm = np.sqrt(newnorm)
            before += 0.5 * alpha * (S + norms[t]) ** 2
            after += 0.5 * alpha * (S + newnorm) ** 2
            gain += max(before - after, 0.0)
            total += newnorm - norms[t]
            norms[t] = newnorm
        if change <= tol * max(scale, 1e-300) or gain <= ftol:
            break
        if newton and sweep + 1 >= newton_at and T > 1:
            Wn, ok = _support_newton(H, W, Q, indptr, alpha)
            if ok:
                # the step, halved while it does not lower the objective (a
                # group shrinking towards zero bends the penalty sharply)
                v = _value_at(g, Q, W0, W, indptr, alpha)
                step = 1.0
                for _ in range(_NEWTON_HALVINGS):
                    Wt = W + step * (Wn - W)
                    Qt = _model_gradient(H, g, W0, Wt)
                    if _value_at(g, Qt, W0, Wt, indptr, alpha) < v:
                        break
                    step *= 0.5
                else:
                    Wt, Qt, ok = _short_newton_step(H, g, W0, W, Wn, indptr, alpha, v, step)
            if ok:
                W = Wt
                Q = Qt
                norms = _group_norms(W, indptr)
                continue
            # the support is still changing: sweeps only for a while
            newton_at = sweep + 1 + m + 1
        # Anderson extrapolation from the last m + 1 sweeps.
        slot = sweep % (m + 1)
        last[slot] = W.ravel()
        if slot == m:
            U = np.empty((m, p * K))
            for i in range(m):
                U[i] = last[i + 1] - last[i]
            G = U @ U.T
            for i in range(m):
                G[i, i] += 1e-12 * (G[i, i] + 1e-300)
            z = np.linalg.solve(G, np.ones(m))
            if np.all(np.isfinite(z)) and z.sum() != 0.0:
                cw = z / z.sum()
                Wacc = np.zeros(p * K)
                for i in range(m):
                    Wacc += cw[i] * last[i + 1]
                Wacc = Wacc.reshape(W.shape)
                # one O(K p^2) product: the gradient at the extrapolation,
                # kept if it is accepted (the current Q is maintained)
                Qacc = _model_gradient(H, g, W0, Wacc)
                if (_value_at(g, Qacc, W0, Wacc, indptr, alpha)
                        < _value_at(g, Q, W0, W, indptr, alpha)):
                    W = Wacc.copy()
                    Q = Qacc
                    norms = _group_norms(W, indptr)
    return W, sweeps


@dataclass(frozen=True)
class ProxNewtonState(SolverState):
    """State of :class:`ProxNewton`: the point and (after a solve) its margins.

    Parameters
    ----------
    coef : ndarray of shape (p,) or (p, K)
        Weights of the active columns.
    intercept : float or ndarray of shape (K,), default=0.0
        Intercepts (ignored without them).
    margin : ndarray of shape (n_samples,) or (n_samples, K), optional
        Margins of the point (output only).
    objective : float, default=nan
        Objective at the point (output only).
    """

    coef: np.ndarray
    intercept: object = 0.0
    margin: np.ndarray = None
    objective: float = np.nan


class ProxNewton(BaseSolver):
    r"""Proximal Newton for the squared group-l1 problem on a small active set.

    See the module docstring for the method.  Suited to active sets with up
    to a few hundred columns (the Hessian is ``(p + 1)^2`` per output); FGM
    falls back to :class:`~kernlearn.solvers.APG` beyond that.

    Parameters
    ----------
    tol : float, default=1e-8
        Stop when the model's predicted decrease is below ``tol`` times the
        objective (scale-free; zero exactly at the optimum).
    max_iter : int, default=50
        Newton iterations cap.
    max_sweeps : int, default=500
        Block coordinate descent sweeps per subproblem.
    sweep_tol : float, default=1e-9
        Relative coordinate change that ends the sweeps.

    References
    ----------
    Lee, Sun, Saunders (2014), SIAM J. Optim. 24(3); Tseng and Yun (2009),
    Math. Program. 117; Tan, Tsang, Wang (2014), JMLR 15.
    """

    required_loss_methods = ("value", "grad_margin", "hess_margin")
    required_penalty_methods = ("value",)
    # The block minimiser is that of the squared group-l1 penalty: any other
    # penalty (e.g. the group lasso GroupL1L2) would be solved as if squared.
    supported_penalties = (SquaredGroupL1,)

    def __init__(self, tol=1e-8, max_iter=50, max_sweeps=500, sweep_tol=1e-9):
        self.tol = tol
        self.max_iter = max_iter
        self.max_sweeps = max_sweeps
        self.sweep_tol = sweep_tol

    def _inner_tol(self, last_decrease):
        """Inexact Newton: far from the optimum the model needs no exact minimiser.

        The sweeps' tolerance follows the last relative decrease, down to
        ``sweep_tol`` (Dembo, Eisenstat, Steihaug, 1982).
        """
        return max(self.sweep_tol, 1e-3 * min(1.0, last_decrease))

    @staticmethod
    def _constraints():
        from sklearn.utils._param_validation import Interval

        return iteration_constraints(max_sweeps=[Interval(Integral, 1, None, closed="left")],
                                     sweep_tol=[Interval(Real, 0, None, closed="left")])

    def solve(self, problem, warm_state=None):
        """Minimise ``sum loss(A W + b, Y) + alpha/2 (sum_t ||W_t||_F)^2`` from ``warm_state``.

        Parameters
        ----------
        problem : Problem
            Active columns, groups, targets of shape ``(n,)`` or ``(n, K)``,
            a loss with ``hess_margin`` and a
            :class:`~kernlearn.penalties.SquaredGroupL1` penalty (its
            ``alpha`` is used).
        warm_state : ProxNewtonState, optional
            Starting point (zeros otherwise).

        Returns
        -------
        result : SolverResult
            ``coef`` and ``intercept`` in the shapes of the targets (``(p,)``
            and a float for 1-D ``y``); a :class:`ProxNewtonState` holding
            ``margin`` and ``objective``.
        """
        self.check_problem(problem)
        A, y = problem.A, problem.y
        # The products on an active set are small: extra BLAS threads only
        # contend, so small problems run with one BLAS thread.
        if A.shape[0] * A.shape[1] * np.size(y) // max(len(y), 1) <= _SINGLE_THREAD_ENTRIES:
            with single_blas_thread():
                return self._solve(problem, warm_state)
        return self._solve(problem, warm_state)

    def _solve(self, problem, warm):
        A, y, loss, penalty = problem.A, problem.y, problem.loss, problem.penalty
        fit_intercept = problem.fit_intercept
        n, p = A.shape
        vector = np.ndim(y) == 1
        K = 1 if vector else np.shape(y)[1]
        indptr = problem.indptr.astype(np.int64)
        W = (np.zeros((p, K)) if warm is None
             else np.array(warm.coef, dtype=float).reshape(p, K))
        b = np.zeros(K)
        if fit_intercept and warm is not None:
            b += np.asarray(warm.intercept, dtype=float).reshape(-1)
        alpha = float(getattr(penalty, "alpha", 1.0))

        def pen(V):
            # compiled norms: a handful of NumPy calls cost more on small sets
            return 0.5 * alpha * float(_group_norms(V, indptr).sum()) ** 2

        # Everything that reads the n rows: in memory, or on a Dask cluster.
        rows = newton_rows(A, y, loss, W, b, problem.row_work)
        F = rows.value() + pen(W)
        history = History()
        converged = False
        it = 0
        dec = 1.0
        for it in range(1, self.max_iter + 1):
            g, gb, H, hb, hbb = rows.derivatives()
            if fit_intercept:
                # The intercepts are unpenalised: minimise the model over them
                # in closed form (a Schur complement, i.e. D-weighted centring),
                # so that coordinate descent never fights the intercept.
                inv = np.where(hbb > 0, 1.0 / np.where(hbb > 0, hbb, 1.0), 0.0)
                Hs = H - np.einsum("ki,kj->kij", hb, hb * inv[:, None])
                gs = g - hb * (gb * inv)[:, None]
            else:
                Hs, gs = H, g
            inner = self._inner_tol(dec)
            pen_W = pen(W)
            confirm = False
            while True:
                # a sweep gaining under 1e-3 of the decrease that matters (the
                # last one, or the stopping rule's) ends the sweeps; not when
                # confirming convergence: where the model is flat along moving
                # weight between repeated features a sweep gains less than that
                # while the support-Newton steps still gain more than ``tol``
                ftol = 0.0 if confirm else 1e-3 * abs(F) * max(
                    self.tol, min(1.0, dec) if inner > self.sweep_tol else 0.0)
                Wn, sweeps = guarded_subproblem(_subproblem, Hs, gs, W, indptr, alpha,
                                                self.max_sweeps, inner, ftol)
                if Wn is None:  # no model step, even damped: stop, unconverged
                    break
                if fit_intercept:
                    bn = b - inv * (gb + np.einsum("ki,ki->k", hb, (Wn - W).T))
                else:
                    bn = b.copy()
                dW, db = Wn - W, bn - b
                delta = float((g.T * dW).sum() + gb @ db) + pen(Wn) - pen_W
                dec = -delta / max(abs(F), 1e-300)
                if dec > self.tol or confirm:
                    break
                # A loosely solved model may under-predict the decrease:
                # confirm convergence on a tightly solved one.
                inner, confirm = self.sweep_tol, True
            if Wn is None:
                # (marked: the cause is the model, not the iteration cap)
                history.append(objective=F, decrease=np.nan, step=0.0, sweeps=sweeps,
                               no_model_step=1.0)
                break
            if dec <= self.tol:
                converged = True
                history.append(objective=F, decrease=dec, step=0.0, sweeps=sweeps)
                break
            rows.direction(dW, db)
            s = 1.0
            for _ in range(_MAX_HALVINGS):
                Wt = W + s * dW
                Ft = rows.value_at(s) + pen(Wt)
                if Ft <= F + _SIGMA * s * delta:
                    break
                s *= 0.5
            else:
                # No sufficient decrease along a descent direction: F is flat
                # to machine precision.
                converged = Ft >= F - 1e-12 * abs(F)
                history.append(objective=F, decrease=dec, step=0.0, sweeps=sweeps)
                break
            rows.accept(s)
            W, b, F = Wt, b + s * db, Ft
            history.append(objective=F, decrease=dec, step=s, sweeps=sweeps)
        coef, intercept = (W[:, 0], float(b[0])) if vector else (W, b)
        return SolverResult(
            coef=coef,
            intercept=intercept,
            state=ProxNewtonState(coef=coef, intercept=intercept,
                                  margin=rows.margin(), objective=F),
            history=history,
            converged=converged,
            n_iter=it,
        )


def newton_rows(A, y, loss, W, b, row_work=None):
    """The rows of a Newton master: margins, loss sums and derivatives.

    The one place :class:`ProxNewton` reads the ``n`` rows: in memory
    (:class:`LocalNewtonRows`) unless the problem names other row work
    (:attr:`Problem.row_work <kernlearn.solvers.Problem>`; on a Dask cluster
    the same operations reduced over the partitions on the workers).

    Parameters
    ----------
    A : ndarray, sparse matrix or row partitions of shape (n, p)
        Active columns.
    y : ndarray or row partitions of shape (n,) or (n, K)
        Targets.
    loss : BaseLoss
        Loss with ``hess_margin``.
    W : ndarray of shape (p, K)
        Starting weights.
    b : ndarray of shape (K,)
        Starting intercepts.
    row_work : callable, optional
        ``row_work(A, y, loss, W, b)``; ``None`` for a block in memory.

    Returns
    -------
    rows : LocalNewtonRows or what ``row_work`` returns
    """
    if row_work is not None:
        return row_work(A, y, loss, W, b)
    if getattr(A, "is_row_futures", False):
        raise TypeError("an active block held on a Dask cluster needs "
                        "Problem(row_work=kernlearn._dask_master.DaskNewtonRows).")
    return LocalNewtonRows(A, y, loss, W, b)


class LocalNewtonRows:
    """Margins of a linear model on an in-memory block, and the sums over its rows.

    Protocol of the Newton master's row work: :meth:`value`,
    :meth:`derivatives`, :meth:`direction`, :meth:`value_at`, :meth:`accept`,
    :meth:`margin`.

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (n, p)
    y : ndarray of shape (n,) or (n, K)
    loss : BaseLoss
    W : ndarray of shape (p, K)
    b : ndarray of shape (K,)
    """

    def __init__(self, A, y, loss, W, b):
        y = np.asarray(y, dtype=float)
        self.vector = y.ndim == 1
        self.A = A.tocsr() if sp.issparse(A) else np.asarray(A)
        self.Y = y.reshape(A.shape[0], -1)
        self.loss = loss
        self.hessians = _Hessians(self.A)
        self.M = _matmul(self.A, W) + b
        self.dM = self.Mt = None

    def value(self):
        """Loss summed over the rows at the current margins."""
        return float(self.loss.value(self.M, self.Y).sum())

    def derivatives(self):
        """Gradient and Hessian of the summed loss at the current margins.

        Returns
        -------
        g : ndarray of shape (K, p)
        gb : ndarray of shape (K,)
        H : ndarray of shape (K, p, p)
        hb : ndarray of shape (K, p)
        hbb : ndarray of shape (K,)
        """
        return loss_derivatives(self.A, self.M, self.Y, self.loss, self.hessians)

    def direction(self, dW, db):
        """Set the search direction (its margins ``A dW + db``)."""
        self.dM = _matmul(self.A, dW) + db

    def value_at(self, s):
        """Summed loss at the margins ``M + s dM``."""
        self.Mt = self.M + s * self.dM
        return float(self.loss.value(self.Mt, self.Y).sum())

    def accept(self, s):
        """Move to ``M + s dM`` (the last :meth:`value_at`)."""
        self.M = self.Mt

    def margin(self):
        """The current margins, in the shape of ``y``."""
        return self.M[:, 0] if self.vector else self.M


def loss_derivatives(A, M, Y, loss, hessians=None):
    """Gradient and Hessian of ``sum_i loss(m_i, y_i)`` in ``(W, b)``, with ``M = A W + b``.

    The row sums of one Newton step, on one block of rows (the whole
    active block in memory, one partition on a cluster).

    Parameters
    ----------
    A : ndarray or CSR matrix of shape (n, p)
    M : ndarray of shape (n, K)
        Margins.
    Y : ndarray of shape (n, K)
        Targets.
    loss : BaseLoss
        With ``grad_margin`` and ``hess_margin``.
    hessians : callable, optional
        ``_Hessians(A)`` when reused across calls.

    Returns
    -------
    g : ndarray of shape (K, p)
        ``A' l'(M)``, per output.
    gb : ndarray of shape (K,)
        ``sum_i l'(m_i)``.
    H : ndarray of shape (K, p, p)
        ``A' diag(l''(M_k)) A``.
    hb : ndarray of shape (K, p)
        ``A' l''(M_k)``.
    hbb : ndarray of shape (K,)
        ``sum_i l''(m_ik)``.
    """
    R = loss.grad_margin(M, Y)
    D = loss.hess_margin(M, Y)
    H, hb, hbb = (hessians or _Hessians(A))(D)
    return _matmul_t(A, R).T, R.sum(0), H, hb, hbb


def group_norms_2d(W, indptr):
    """Frobenius norms of the row groups of ``W`` (shape ``(p, K)``).

    Parameters
    ----------
    W : ndarray of shape (p, K)
        Weights.
    indptr : ndarray of shape (T + 1,)
        Group boundaries.

    Returns
    -------
    norms : ndarray of shape (T,)
    """
    return group_norms(np.sqrt((W * W).sum(1)), indptr)


def _matmul(A, W):
    return np.asarray(A @ W)


def _matmul_t(A, R):
    return np.asarray(A.T @ R)


@njit_cached
def _sparse_hessians(indptr, indices, data, D, H, hb):
    """``H_k += sum_i D_ik x_i x_i'`` and ``hb_k += sum_i D_ik x_i`` for CSR rows.

    Costs ``K sum_i nnz_i^2``: far below a dense product on sparse data, and
    no sparse-times-sparse product (whose overhead per entry is large).
    """
    n, K = D.shape
    for i in range(n):
        a, e = indptr[i], indptr[i + 1]
        for k in range(K):
            d = D[i, k]
            if d == 0.0:
                continue
            for u in range(a, e):
                ju = indices[u]
                xu = d * data[u]
                hb[k, ju] += xu
                for v in range(a, e):
                    H[k, ju, indices[v]] += xu * data[v]


class _Hessians:
    """Per output ``k``: ``A' diag(D_k) A``, ``A' D_k`` and ``sum(D_k)``.

    Sparse ``A``: one compiled pass over its rows.  Dense ``A``: one BLAS
    rank-update per output, ``G' G`` with ``G = diag(sqrt(D_k)) A`` restricted
    to the rows where ``D_k > 0`` (few for the squared hinge near the
    optimum); ``n p^2 / 2`` flops at BLAS-3 speed, exactly symmetric.  (An
    earlier build formed the ``n x p^2`` row-wise Kronecker products once per
    solve to get all ``K`` Hessians in one product: at ``n = 5000, p = 36``
    forming it alone cost 34 of a fit's 39 ms.)  The curvatures of the square
    loss do not change between Newton steps, so an unchanged ``D`` returns
    the stored Hessians.
    """

    def __init__(self, A):
        self.A = A
        self._last = None
        if sp.issparse(A):
            self.A = sp.csr_matrix(A)
            self.A.sort_indices()
            # the compiled pass reads float64 entries: cast once per solve
            self.data = self.A.data.astype(np.float64, copy=False)

    def __call__(self, D):
        if self._last is not None and np.array_equal(self._last[0], D):
            return self._last[1]
        out = self._build(D)
        self._last = (D.copy(), out)
        return out

    def _build(self, D):
        A = self.A
        n, p = A.shape
        K = D.shape[1]
        H = np.zeros((K, p, p))
        hb = np.zeros((K, p))
        if sp.issparse(A):
            _sparse_hessians(A.indptr, A.indices, self.data,
                             np.ascontiguousarray(D), H, hb)
            return H, hb, D.sum(0)
        for k in range(K):
            d = D[:, k]
            rows = np.flatnonzero(d > 0)
            if rows.size == 0:
                continue
            As = A[rows] if rows.size < n else A
            ds = d[rows] if rows.size < n else d
            G = As * np.sqrt(ds)[:, None]
            H[k] = G.T @ G  # detected as a symmetric rank-k update (syrk)
            hb[k] = ds @ As
        return H, hb, D.sum(0)
