r"""Proximal Newton master for GrFL's restricted problem (paper 000, eq. (17)).

The restricted master of GrFL has few columns (``p`` = group size times the
active features, a few hundred at most) but many rows, and it is smooth away
from the kinks of its group penalties.  First-order masters (ADMM, FISTA) need
hundreds to thousands of iterations, each two products with the ``n x p``
matrix :math:`\Phi`; a proximal Newton method needs a handful, each one
product for the gradient, one for the direction's margins and a rank update
of the Hessian (Lee, Sun and Saunders 2014; the design of LIBLINEAR's
newGLMNET, Yuan, Ho and Lin 2012).  One iteration:

1. the gradient :math:`G_t = [\Phi^{(t)}\ \mathbf 1]'\ell'(m_t)` and the
   generalised Hessians :math:`H_t = [\Phi^{(t)}\ \mathbf 1]'\,
   \mathrm{diag}(\ell''(m_t))\,[\Phi^{(t)}\ \mathbf 1]` of every task (the
   intercept is the last coordinate).  The Hessians are kept between
   iterations *and between outer GrFL iterations* (in the solver state): a
   new column adds one row and column (:math:`O(np)`), and only the rows
   whose curvature changed are updated (:math:`O(|S|p^2)`; for the squared
   hinge the rows that crossed the margin, for the square loss none);
2. the quadratic model plus the penalties is minimised by block coordinate
   descent over the feature groups (each block a proximal step with the
   block's own curvature; compiled), the intercepts exactly, the shared
   weights coordinate-wise, with Anderson extrapolation of every few sweeps
   (Bertrand and Massias 2021; the Fourier pairs are strongly correlated and
   often outnumber the rows, where plain sweeps converge slowly), skipped
   where its coefficients' magnitudes sum to more than 100: such coefficients
   follow the rounding of nearly parallel sweeps.  The model
   is solved until its own KKT residual, in the outer measure, is below a
   forcing term floored at half the outer tolerance: the step then passes
   the outer test (at once for the square loss, whose model is exact).
   Penalties without a compiled block prox fall back to accelerated
   proximal gradient on the model (still ``n``-free);
3. a backtracking line search with the Armijo rule of Tseng and Yun (2009)
   on the true objective, along the direction's margins (one product).

The common master -- every task on every row, the square loss or the
squared hinge, a penalty with a compiled block prox -- runs the steps of an
iteration (gradients and KKT residual; direction, line search and the next
gradients) as two compiled kernels that reproduce the NumPy steps bit for
bit, and appends and updates its Hessians through compiled kernels (the
rank updates' products ``S'S`` stay NumPy's); any other master runs the
NumPy steps.  On masters of a hundred rows and columns the NumPy calls cost
more than the arithmetic.

It stops on the same approximate-KKT measure as
:class:`~kernlearn.solvers.admm.ADMM` (:meth:`DirtyProblem.kkt`), so the two
masters are interchangeable at equal accuracy.

References
----------
Lee, Sun, Saunders (2014), SIAM J. Optim. 24(3); Tseng and Yun (2009),
Math. Program. 117; Yuan, Ho, Lin (2012), JMLR 13; Rakotomamonjy, Flamary,
Yger (2013), Mach. Learn. 91, eq. (17); Bertrand and Massias (2021),
AISTATS, "Anderson acceleration of coordinate descent".
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from ..losses import Square, SquaredHinge
from ..penalties import L1, GroupL1L2, L1Linf, L1Lq, PerTaskL1Lq
from ._base import BaseSolver, History, SolverResult, iteration_constraints
from ._dirty import DirtyProblem, DirtyState

# (the compiled kernels, re-exported here where the solver and its tests read them)
from ._grfl_newton_kernels import (  # noqa: F401
    _DENSE_CURVATURE,
    _SQUARE,
    _SQUARED_HINGE,
    _add_rank_block,
    _bcd,
    _changed_rows,
    _curvature_change,
    _extrapolate,
    _gradients_kkt,
    _hessian_append,
    _kkt_residual,
    _loss_value,
    _model_curvatures,
    _newton_step,
    _pack,
    _penalty_value,
    _prox_in_place,
    _rank_block,
    _same_head,
)

__all__ = ["GrFLNewton", "hessian_block"]

# Armijo constant and line-search halvings (Tseng and Yun 2009).
_SIGMA = 1e-4
_MAX_HALVINGS = 40
# Share of the outer tolerance the Newton model is solved to (in the outer KKT
# measure): the rest is left to the model's error and rounding at the new point.
_INNER_SHARE = 0.5
# Objective values closer than this (relative) are equal up to rounding.
_ROUND = 1e-13
# Compiled block proxes: joint l2 over a (group x tasks) block, elementwise l1,
# l2 per task column, joint l-infinity over the block.
_JOINT_L2, _L1, _PER_TASK_L2, _JOINT_LINF = 0, 1, 2, 3
# Losses of the compiled Newton iteration (exact types: a subclass may change them).
_LOSS_KINDS = {Square: _SQUARE, SquaredHinge: _SQUARED_HINGE}


def _penalty_kind(pen):
    """Compiled block prox of a penalty on ``W``, or ``None`` (generic fallback)."""
    q = float(getattr(pen, "q", 2.0))
    if type(pen) is GroupL1L2 or (type(pen) is L1Lq and q == 2.0):
        return _JOINT_L2
    if type(pen) is L1 or (type(pen) is L1Lq and q == 1.0):
        return _L1
    if type(pen) is PerTaskL1Lq and q == 2.0:
        return _PER_TASK_L2
    if type(pen) is L1Linf or (type(pen) is L1Lq and np.isinf(q)):
        return _JOINT_LINF
    return None


def hessian_block(Phi, d, cols=None):
    r"""``A' diag(d) A[:, cols]`` with ``A = [Phi 1]`` (the intercept column last).

    Rows of zero curvature (for the squared hinge, the rows beyond the
    margin: most of them once the model fits) add nothing and are left out
    when they are at least a quarter of the rows; with non-negative
    curvatures the full block is the symmetric product ``S'S`` of
    :math:`S = \mathrm{diag}(\sqrt d)\,\Phi` (half the work of a general
    product).  Either way the result equals the plain product up to
    rounding.

    Parameters
    ----------
    Phi : ndarray of shape (n_rows, p)
        Active columns on some rows.
    d : ndarray of shape (n_rows,)
        Curvatures of those rows.
    cols : ndarray of int, optional
        Columns of ``A`` wanted, increasing, the intercept (``p``) last if
        present (default: all).

    Returns
    -------
    block : ndarray of shape (p + 1, p + 1) or (p + 1, len(cols))
    """
    p = Phi.shape[1]
    out = np.empty((p + 1, p + 1 if cols is None else len(cols)))
    nz = np.flatnonzero(d)
    if nz.size <= _DENSE_CURVATURE * d.size:
        Phi, d = Phi[nz], d[nz]
    if cols is None:
        if d.size and d.min() >= 0:
            S = Phi * np.sqrt(d)[:, None]
            out[:p, :p] = S.T @ S  # (BLAS syrk: S'S is recognised)
        else:
            out[:p, :p] = (Phi * d[:, None]).T @ Phi
        out[:p, p] = out[p, :p] = Phi.T @ d
        out[p, p] = d.sum()
    else:
        B = np.empty((Phi.shape[0], len(cols)))
        inner = cols[cols < p]
        B[:, : len(inner)] = Phi[:, inner]
        B[:, len(inner):] = 1.0  # the intercept column, last in cols
        B *= d[:, None]
        out[:p] = Phi.T @ B
        out[p] = B.sum(axis=0)
    return out


class _Hessians:
    """Generalised Hessians ``[Phi_t 1]' diag(d_t) [Phi_t 1]`` of every task,
    updated only where the curvature ``d`` changed (kept in the solver state)."""

    def __init__(self, P, rtol, compiled=False):
        self.P, self.rtol = P, rtol
        # columns appended and rows updated by the compiled kernels (every
        # task on every row, the columns contiguous)
        self.compiled = compiled and P.shared_rows and (
            P.Phi.flags.c_contiguous or P.Phi.flags.f_contiguous)
        self.rows = ([np.arange(P.n)] * P.T if P.shared_rows
                     else [np.asarray(r) for r in P.task_rows])
        # changes of H in place (update): the solver's curvatures of H are
        # reused while it stays the same
        self.version = 0

    def _d(self, D, t):
        P = self.P
        return D[:, t] if P.shared_rows else D[P._slices[t]]

    def _block(self, t, idx, d, cols=None):
        r"""``A_S' diag(d) A[S, cols]`` with ``A = [Phi_t 1]`` on the rows ``S = idx``.

        ``idx=None`` means all of the task's rows (no copy of ``Phi``).  With
        curvature one on every row (the unweighted square loss) and the Gram
        matrix supplied by the caller (GrFL updates it as columns arrive), the
        block is read from the bordered Gram :math:`[\Phi\ 1]'[\Phi\ 1]`
        instead of recomputed (a product of all rows with the new columns,
        a tenth of a regression fit on a thousand rows).
        """
        P = self.P
        if idx is None and getattr(P, "gram_supplied", False) and np.all(d == 1.0):
            B = P.bordered_gram()
            return B if cols is None else B[:, cols]
        rows = self.rows[t] if idx is None else self.rows[t][idx]
        Phi = P.Phi if (idx is None and P.shared_rows) else P.Phi[rows]
        return hessian_block(Phi, d, cols)

    def start(self, D, state):
        """Hessians at curvature ``D``, reusing ``state``'s for the first columns."""
        P, T, p = self.P, self.P.T, self.P.p
        old = getattr(state, "hess", None)
        if (old is not None and old["H"].shape[0] == T and old["p"] <= p
                and old["D"].shape == D.shape
                and old["check"].shape[1] == old["p"] and _same_head(old["check"], P.Phi)):
            # columns appended since (GrFL's warm start): one new row and column
            q = old["p"]
            self.Dh = old["D"].copy()
            self.H = np.empty((T, p + 1, p + 1))
            if self.compiled:
                supplied = bool(getattr(P, "gram_supplied", False))
                _hessian_append(old["H"], self.H, P.Phi, self.Dh,
                                P.bordered_gram() if supplied else self.H[0], supplied)
                self.update(D)
                return self
            new = np.arange(q, p + 1)  # the new columns, then the intercept (p)
            Ho = old["H"]  # (the intercept is the last row and column of both)
            self.H[:, :q, :q] = Ho[:, :q, :q]
            self.H[:, p, :q] = Ho[:, q, :q]
            self.H[:, :q, p] = Ho[:, :q, q]
            self.H[:, p, p] = Ho[:, q, q]
            for t in range(T):
                d = self._d(self.Dh, t)
                C = self._block(t, None, d, cols=new)
                self.H[t][:, q:] = C
                self.H[t][q:, :] = C.T
            self.update(D)
            return self
        self.Dh = D.copy()
        self.H = np.empty((T, p + 1, p + 1))
        for t in range(T):
            self.H[t] = self._block(t, None, self._d(D, t))
        return self

    def update(self, D, rtol=None):
        """Move to curvature ``D``: rank updates on the rows that changed by
        more than ``rtol`` (default the solver's) times the largest curvature."""
        if self.compiled and D.shape == self.Dh.shape:
            D = np.ascontiguousarray(D, dtype=float)
            same, scale = _curvature_change(D, self.Dh)
            if not same:
                self._update_compiled(D, (self.rtol if rtol is None else rtol) * scale)
            return
        if D.shape == self.Dh.shape and (D == self.Dh).all():
            # no row moved (the square loss's constant curvature, every
            # Newton iteration of a regression master): nothing to update
            return
        rtol = self.rtol if rtol is None else rtol
        scale = max(float(np.abs(D).max(initial=0.0)), 1e-300)
        for t in range(self.P.T):
            d_new, d_old = self._d(D, t), self._d(self.Dh, t)
            idx = np.flatnonzero(np.abs(d_new - d_old) > rtol * scale)
            if not idx.size:
                continue
            if idx.size > len(d_new) // 3:  # cheaper to rebuild
                self.H[t] = self._block(t, None, d_new)
            else:
                self.H[t] += self._block(t, idx, d_new[idx] - d_old[idx])
            d_old[idx] = d_new[idx]  # a view into self.Dh
            self.version += 1

    def _update_compiled(self, D, thr):
        """:meth:`update`'s rank updates through compiled kernels but for the
        products ``S'S`` (NumPy's syrk), its steps and sums otherwise; the
        rebuilds (more than a third of the rows moved) are NumPy's."""
        Phi, Dh, p = self.P.Phi, self.Dh, self.P.p
        for t in range(self.P.T):
            idx = _changed_rows(D, Dh, t, thr)
            if not idx.size:
                continue
            if idx.size > D.shape[0] // 3:  # cheaper to rebuild
                self.H[t] = self._block(t, None, D[:, t])
                Dh[idx, t] = D[idx, t]
            else:
                out, S = _rank_block(Phi, D, Dh, t, idx)
                if S.shape[0]:
                    out[:p, :p] = S.T @ S  # (BLAS syrk: S'S is recognised)
                _add_rank_block(self.H, t, out, D, Dh, idx)
            self.version += 1

    def state(self):
        """What the next solve needs to reuse these Hessians."""
        P = self.P
        return dict(H=self.H, D=self.Dh, p=P.p, check=P.Phi[:2, :].copy())


class _NumpyOps:
    """The steps of a Newton iteration by the problem's and penalties' own
    methods and NumPy (any problem; the reference of :class:`_CompiledOps`)."""

    compiled = False

    def __init__(self, solver, P, inner):
        self.solver, self.P, self.inner = solver, P, inner
        self.pen_of, self.kkt_of = solver._measures(P, inner)

    def objective(self, M, W, ws):
        """The objective at ``(W, ws)`` with margins ``M``, and its penalty part."""
        pen = self.pen_of(W, ws)
        return self.P.loss_value(M) + pen, pen

    def gradients(self, M, W, ws, step):
        """The gradients at margins ``M`` and the KKT residual (unscaled)."""
        gW, gws, gb = self.P.gradients(M)
        return gW, gws, gb, self.kkt_of(W, ws, gW, gws, gb, step)

    def curvatures(self, M, grads):
        """The loss's curvatures at margins ``M`` (``grads``: :meth:`gradients` there)."""
        return self.P.loss.hess_margin(M, self.P.Ys)

    def step(self, H, curvatures, gW, gws, gb, W, ws, b, M, F, pen0, tol, step_kkt):
        """The Newton direction to the model residual ``tol`` and the Armijo
        line search along it (see :func:`._grfl_newton_kernels._newton_step`
        for what it returns; last, the :meth:`gradients` at the accepted
        point)."""
        P, pen_of = self.P, self.pen_of
        Wn, wsn, bn, sweeps = self.solver._direction(P, H, gW, gb, W, ws, b, tol, step_kkt,
                                                     self.inner, curvatures)
        dW, dws, db = Wn - W, wsn - ws, bn - b
        pen_n = pen_of(Wn, wsn)
        delta = GrFLNewton._model_decrease(gW, gws, gb, dW, dws, db, pen_n, pen0)
        dM = P.margins(dW, dws, db)
        s = 1.0
        for _ in range(_MAX_HALVINGS):
            # (the full step first: x + 1.0 * dx is x + dx, one product less)
            Ws, wss, Ms = ((W + dW, ws + dws, M + dM) if s == 1.0
                           else (W + s * dW, ws + s * dws, M + s * dM))
            pen_s = pen_of(Ws, wss)
            Fs = P.loss_value(Ms) + pen_s
            # (slack: near the optimum the decrease is below the rounding of
            # F, and the step is then judged by the model)
            if Fs <= F + _SIGMA * s * min(delta, 0.0) + _ROUND * abs(F):
                # (the new point: the prox's exact zeros after a full step)
                grads = (self.gradients(Ms, Wn, wsn, step_kkt) if s == 1.0
                         else self.gradients(Ms, Ws, wss, step_kkt))
                return (True, s, sweeps, Wn, wsn, bn, db, Ws, wss, Ms, Fs, pen_s, pen_n,
                        grads)
            s *= 0.5
        return False, s, sweeps, Wn, wsn, bn, db, Ws, wss, Ms, Fs, pen_s, pen_n, None


class _CompiledOps:
    """The steps of a Newton iteration as compiled kernels, for the common
    case: every task on every row, the square loss or the squared hinge
    (unweighted), a penalty with a compiled block prox.  They take the steps
    of :class:`_NumpyOps` bit for bit (NumPy's BLAS products, its pairwise
    sums): a small master then costs a few kernel calls per iteration
    instead of some fifty NumPy calls, and gives the same model."""

    compiled = True

    def __init__(self, solver, P, inner):
        self.solver, self.P, self.inner = solver, P, inner
        Phi = P.Phi
        self.Phi = Phi if Phi.flags.f_contiguous or Phi.flags.c_contiguous else (
            np.asfortranarray(Phi))
        self.Y = np.ascontiguousarray(P.Ys, dtype=float)
        self.loss_kind = _LOSS_KINDS[type(P.loss)]

    @staticmethod
    def applies(P, inner):
        """Whether the compiled steps solve ``P`` (``inner``: its constants)."""
        return (inner[1] is not None and P.shared_rows and type(P.loss) in _LOSS_KINDS
                and P.n > 0 and P.p > 0 and P.Phi.dtype == float
                and getattr(P, "newton_hessians", None) is None)

    def objective(self, M, W, ws):
        """The objective at ``(W, ws)`` with margins ``M``, and its penalty part."""
        indptr, kind, alpha, alpha_s, shared, _ = self.inner
        pen = _penalty_value(W, ws, indptr, kind, alpha, alpha_s, shared)
        return _loss_value(np.ascontiguousarray(M), self.Y, self.loss_kind) + pen, pen

    def gradients(self, M, W, ws, step):
        """The gradients at margins ``M``, the KKT residual (unscaled), the
        loss's curvatures and its gradients on the margins."""
        indptr, kind, alpha, alpha_s, shared, fit_b = self.inner
        return _gradients_kkt(self.Phi, self.Y, np.ascontiguousarray(M), self.loss_kind,
                              W, ws, float(step), indptr, kind, alpha, alpha_s, shared,
                              fit_b)

    def curvatures(self, M, grads):
        """The loss's curvatures at margins ``M``, from ``grads``
        (:meth:`gradients` there)."""
        return grads[4] if grads[4].shape == M.shape else self.P.loss.hess_margin(
            M, self.P.Ys)

    def step(self, H, curvatures, gW, gws, gb, W, ws, b, M, F, pen0, tol, step_kkt):
        """:func:`._grfl_newton_kernels._newton_step` (``H`` is not read: the
        damped copy in ``curvatures`` is)."""
        indptr, kind, alpha, alpha_s, shared, fit_b = self.inner
        Hd, Lw, Ls = curvatures
        return _newton_step(self.Phi, self.Y, self.loss_kind, np.ascontiguousarray(M),
                            float(F), float(pen0), W, ws, b, gW, gws, gb, Hd, Lw, Ls,
                            indptr, kind, alpha, alpha_s, shared, fit_b,
                            int(self.solver.max_sweeps), float(tol), float(step_kkt),
                            _SIGMA, _MAX_HALVINGS, _ROUND)


@dataclass(frozen=True)
class GrFLNewtonState(DirtyState):
    """State of :class:`GrFLNewton`: the point, its margins and the Hessians.

    Parameters
    ----------
    p : int, default=-1
        Number of active columns the margins and Hessians belong to.
    margins : ndarray, optional
        Margins at ``(W, ws, b)`` (reused when columns were appended).
    hess : dict, optional
        Per-task Hessians of the loss on the active columns (updated, not
        rebuilt, when columns are appended).
    lip_vectors : dict, optional
        Top eigenvectors of the problem's Gram matrices, the warm start of
        the next problem's Lipschitz bound
        (:meth:`~kernlearn.solvers._dirty.DirtyProblem.lipschitz`).
    loss_grad : ndarray, optional
        The loss's gradients at ``margins``
        (:meth:`~kernlearn.solvers._dirty.DirtyProblem.loss_gradients`), when
        the compiled iteration computed them (GrFL's next pricing step reads
        them instead of computing them again).
    """

    p: int = -1
    margins: np.ndarray = None
    hess: dict = None
    lip_vectors: dict = None
    loss_grad: np.ndarray = None


class GrFLNewton(BaseSolver):
    """Proximal Newton master of GrFL (restricted problem of paper 000, eq. (17)).

    Parameters
    ----------
    tol : float, default=1e-3
        Stop when the approximate-KKT measure
        (:meth:`~kernlearn.solvers._dirty.DirtyProblem.kkt`, the one
        :class:`~kernlearn.solvers.admm.ADMM` uses) falls below ``tol``.
    max_iter : int, default=100
        Cap on the Newton iterations.
    max_sweeps : int, default=1000
        Cap on the coordinate-descent sweeps per Newton iteration (the
        history's ``sweeps`` column records those used).
    curvature_rtol : float, default=1e-3
        A row's Hessian contribution is refreshed when its curvature moved by
        more than this fraction of the largest curvature (0 keeps the exact
        generalised Hessian; the square and squared hinge losses are exact
        for any value below one, their curvatures being 0 or the weight).

    References
    ----------
    Lee, Sun, Saunders (2014), SIAM J. Optim. 24(3); Tseng and Yun (2009),
    Math. Program. 117; Yuan, Ho, Lin (2012), JMLR 13.
    """

    required_loss_methods = ("value", "grad_margin", "hess_margin")
    required_penalty_methods = ("value", "prox")
    # the compiled Newton iteration where it applies (False: the NumPy one,
    # its reference in the tests)
    _compiled_path = True

    def __init__(self, tol=1e-3, max_iter=100, max_sweeps=1000, curvature_rtol=1e-3):
        self.tol = tol
        self.max_iter = max_iter
        self.max_sweeps = max_sweeps
        self.curvature_rtol = curvature_rtol

    @staticmethod
    def compiled(penalty):
        """Whether ``penalty`` has a compiled block prox here (else the
        slower generic inner solver runs).

        Parameters
        ----------
        penalty : BasePenalty

        Returns
        -------
        bool
        """
        return _penalty_kind(penalty) is not None

    @staticmethod
    def _constraints():
        from sklearn.utils._param_validation import Interval

        return iteration_constraints(max_sweeps=[Interval(Integral, 1, None, closed="left")],
                                     curvature_rtol=[Interval(Real, 0, None, closed="left")])

    def solve(self, problem, state=None):
        """Solve the restricted master, warm-started from ``state``.

        Parameters
        ----------
        problem : DirtyProblem
            Active columns, targets, loss and penalties.
        state : dict, optional
            A previous result's ``state`` padded to the current columns
            (:func:`~kernlearn.solvers.admm.pad_state`); its Hessians are
            reused when the columns were appended.

        Returns
        -------
        result : SolverResult
            ``coef`` is ``(W, w_shared)`` (exactly sparse), ``intercept`` the
            ``(T,)`` biases; ``state`` holds them, their ``margins``,
            ``objective``, ``kkt`` and the Hessians.
        """
        if not isinstance(problem, DirtyProblem):
            raise TypeError("problem must be a DirtyProblem.")
        # (not check_problem: a fit on a Dask cluster passes a loss on the
        # workers' rows, its methods checked by the caller on the loss itself)
        self.check_params(problem)
        P = problem
        if state is not None:
            W, ws, b = state.W.copy(), state.ws.copy(), state.b.copy()
        else:
            W, ws, b = P.zeros()
        reg = P.reg_scale()
        # (per-problem constants of the inner solve, computed once per master
        # rather than once per Newton iteration)
        inner = self._inner_constants(P)
        ops = (_CompiledOps if self._compiled_path and _CompiledOps.applies(P, inner)
               else _NumpyOps)(self, P, inner)
        step_kkt = 1.0 / P.lipschitz(getattr(state, "lip_vectors", None))
        M = getattr(state, "margins", None)
        if M is None or M.shape != P.Ys.shape or getattr(state, "p", -1) > P.p:
            M = P.margins(W, ws, b)  # (columns appended with zero weight keep them)
        # (the penalty at the current point is kept, not recomputed)
        F, pen0 = ops.objective(M, W, ws)
        history = History()
        hess, exact_hessian, curv = None, False, None
        converged, k, kkt = False, 0, np.inf
        grads = ops.gradients(M, W, ws, step_kkt)  # (then from each accepted step)
        for k in range(1, self.max_iter + 1):
            gW, gws, gb, kkt = grads[:4]
            kkt /= reg
            history.append(objective=F, kkt=kkt)
            if kkt <= self.tol:
                converged = True
                break
            D = ops.curvatures(M, grads)
            if hess is None:
                # a problem whose rows live elsewhere (a cluster) brings its own;
                # started at curvature D (to rtol, as update(D) would leave it)
                make = getattr(P, "newton_hessians", None) or (
                    lambda r: _Hessians(P, r, compiled=ops.compiled))
                hess = make(self.curvature_rtol).start(D, state)
            else:
                hess.update(D, 0.0 if exact_hessian else None)
            # forcing term (the model is solved more exactly as the KKT
            # shrinks), floored at a share of the outer tolerance in the outer
            # measure itself: a model solved past that buys nothing
            inner_tol = reg * max(0.1 * min(kkt, 1.0) * kkt, _INNER_SHARE * self.tol)
            # the model's curvatures, computed again only when the Hessians moved
            # (never within a master of the square loss)
            version = getattr(hess, "version", None)
            if curv is None or version is None or curv[0] is not hess.H or curv[1] != version:
                curv = (hess.H, version, self._curvatures(hess.H, inner))
            (accepted, s, sweeps, Wn, wsn, _, db, Ws, wss, Ms, Fs, pen_s, pen_n,
             grads_new) = ops.step(hess.H, curv[2], gW, gws, gb, W, ws, b, M, F, pen0,
                                   inner_tol, step_kkt)
            history.rows[-1]["sweeps"] = sweeps
            if not accepted:
                if exact_hessian or self.curvature_rtol == 0:
                    break  # no decrease left at machine precision
                exact_hessian = True  # retry with the exact generalised Hessian
                continue
            exact_hessian = False
            # (the accepted trial point: W + s * dW, ws + s * dws, M + s * dM)
            W, ws, b = Ws, wss, (b + db if s == 1.0 else b + s * db)
            pen0 = pen_s  # the penalty at W + s * dW, the new point
            if s == 1.0:
                W, ws = Wn, wsn  # keep the exact zeros of the prox
                pen0 = pen_n
            M = Ms
            F = Fs
            grads = grads_new  # (the gradients and residual at the new point)
        if not converged:
            kkt = grads[3] / reg  # (at the current point, the last one reached)
            converged = kkt <= self.tol
        kept = getattr(state, "hess", None)
        out = GrFLNewtonState(
            W=W, ws=ws, b=b, objective=float(F), kkt=float(kkt), p=P.p, margins=M,
            lip_vectors=getattr(P, "lip_vectors", None),
            loss_grad=grads[5] if len(grads) > 5 else None,
            hess=hess.state() if hess is not None
            else kept if kept is not None and kept["p"] == P.p else None)
        return SolverResult(coef=(W, ws), intercept=b.copy(), state=out,
                            history=history, converged=converged, n_iter=k)

    @classmethod
    def _measures(cls, P, inner=None):
        """``P.penalty_value`` and the KKT residual (:meth:`DirtyProblem.kkt`
        from gradients already computed, before the division by
        ``reg_scale``): compiled for the penalties with a compiled block prox
        and an l1 (or no) shared penalty, else from the penalties' methods
        (``inner``: :meth:`_inner_constants` of ``P``, if at hand)."""
        indptr, kind, alpha, alpha_s, shared, fit_b = (
            cls._inner_constants(P) if inner is None else inner)
        if kind is None:
            def kkt_generic(W, ws, gW, gws, gb, step):
                U, us = P.prox(W - step * gW, ws - step * gws, step, step)
                res = np.abs(W - U).max(initial=0.0) / step
                if P.has_shared:
                    res = max(res, np.abs(ws - us).max(initial=0.0) / step)
                if P.fit_intercept:
                    res = max(res, np.abs(gb).max(initial=0.0))
                return float(res)

            return P.penalty_value, kkt_generic
        flat = np.ascontiguousarray

        def pen_of(W, ws):
            return _penalty_value(flat(W, dtype=float), flat(ws, dtype=float), indptr,
                                  kind, alpha, alpha_s, shared)

        def kkt_of(W, ws, gW, gws, gb, step):
            return _kkt_residual(flat(W, dtype=float), flat(ws, dtype=float),
                                 flat(gW, dtype=float), flat(gws, dtype=float),
                                 flat(gb, dtype=float), float(step), indptr, kind,
                                 alpha, alpha_s, shared, fit_b)

        return pen_of, kkt_of

    @staticmethod
    def _model_decrease(gW, gws, gb, dW, dws, db, pen_new, pen_old):
        """The model's predicted decrease along the step (the Armijo test's
        ``delta``): ``pen_old`` is the penalty at the current point, kept from
        the line search that reached it rather than recomputed."""
        return np.vdot(gW, dW) + gws @ dws + gb @ db + pen_new - pen_old

    @staticmethod
    def _inner_constants(P):
        """What :meth:`_direction` reads of ``P`` besides the point: the groups
        (int64), the compiled prox kind (``None``: the generic inner solver),
        the two penalty levels and the flags."""
        kind = _penalty_kind(P.penalty_p)
        if kind is not None and P.has_shared and type(P.penalty_s) is not L1:
            kind = None
        alpha_s = float(P.penalty_s.alpha) if (kind is not None and P.has_shared) else 0.0
        alpha = float(P.penalty_p.alpha) if kind is not None else 0.0
        return (P.indptr.astype(np.int64), kind, alpha, alpha_s, bool(P.has_shared),
                bool(P.fit_intercept))

    @staticmethod
    def _curvatures(H, inner):
        """:func:`_model_curvatures` of the Hessians ``H`` (``inner``:
        :meth:`_inner_constants` of the problem)."""
        return _model_curvatures(np.ascontiguousarray(H, dtype=float), inner[0], inner[5])

    def _direction(self, P, H, gW, gb, W, ws, b, tol, step_kkt, inner=None,
                   curvatures=None):
        """Minimiser of the quadratic model plus the penalties, from ``(W, ws, b)``,
        to the model KKT residual ``tol`` (unscaled; step ``step_kkt``), and the
        inner iterations it took (``inner``: :meth:`_inner_constants` of ``P``;
        ``curvatures``: :meth:`_curvatures` of ``H``, if at hand)."""
        if inner is None:
            inner = self._inner_constants(P)
        indptr, kind, alpha, alpha_s, shared, fit_b = inner
        H, Lw, Ls = self._curvatures(H, inner) if curvatures is None else curvatures
        if kind is None:
            return self._direction_generic(P, H, gW, gb, W, ws, b, tol)
        Wn, wsn, bn = W.copy(), ws.copy(), b.copy()
        sweeps, _ = _bcd(H, np.ascontiguousarray(gW), gb.astype(float), Wn, wsn, bn,
                         indptr, Lw, Ls, kind, alpha, alpha_s, shared, fit_b,
                         self.max_sweeps, float(tol), float(step_kkt))
        return Wn, wsn, bn, sweeps

    def _direction_generic(self, P, H, gW, gb, W, ws, b, tol):
        """Accelerated proximal gradient on the model (any penalty with a prox)."""
        T, p = P.T, P.p
        L = float(np.linalg.eigvalsh(H)[:, -1].max()) * (1 + (T if P.has_shared else 0))
        s = 1.0 / max(L, 1e-300)
        x = (W.copy(), ws.copy(), b.copy())
        y, t_k = x, 1.0

        def grad(Wy, wsy, by):
            V = np.vstack([Wy - W + (wsy - ws)[:, None], (by - b)[None, :]])  # (p+1, T)
            HV = np.einsum("tij,jt->it", H, V)
            gWy = gW + HV[:p]
            return gWy, gWy.sum(axis=1), gb + HV[p]

        k = 0
        for k in range(1, self.max_sweeps + 1):
            gy = grad(*y)
            Wn, wsn = P.prox(y[0] - s * gy[0], y[1] - s * gy[1], s, s)
            bn = y[2] - s * gy[2] if P.fit_intercept else y[2]
            step = (Wn - x[0], wsn - x[1], bn - x[2])
            move = max(np.abs(a).max(initial=0.0) for a in step) / s
            # gradient restart (O'Donoghue and Candes 2015): drop the momentum
            # when it points uphill
            uphill = sum(np.vdot(yy - nn, dd) for yy, nn, dd in
                         zip(y, (Wn, wsn, bn), step)) > 0
            t_next = 1.0 if uphill else (1.0 + np.sqrt(1.0 + 4.0 * t_k * t_k)) / 2.0
            beta = 0.0 if uphill else (t_k - 1.0) / t_next
            y = tuple(a + beta * d for a, d in zip((Wn, wsn, bn), step))
            x, t_k = (Wn, wsn, bn), t_next
            if move <= tol:
                break
        return (*x, k)
