r"""SimpleMKL master for FGM's restricted problem (paper 002, sec. 5.1; MKL-FGM).

FGM's restricted master over the active groups :math:`d_1, \dots, d_T` is the
multiple kernel learning problem (paper 002, eq. 29)

.. math:: \min_{\mu \in \mathcal{M}} J(\mu), \qquad
          J(\mu) = \max_{\alpha \ge 0}\; \sum_i \alpha_i
          - \frac{1}{2}(\alpha \odot y)'\Big(\frac{1}{\lambda}\sum_t \mu_t X_t X_t'
          + \frac{1}{C} I\Big)(\alpha \odot y),

with :math:`\mathcal{M}` the simplex, the kernel :math:`\sum_t \mu_t X_t X_t'`
a convex combination of one linear kernel per active group and
``lambda`` the weight ``alpha`` of the :class:`~kernlearn.penalties.SquaredGroupL1`
penalty (FGM uses 1; paper 002 writes eq. 29 without the linear term
:math:`\sum_i \alpha_i` of the l2-loss SVM dual and without ``lambda``).
With an unpenalised intercept the dual also has
:math:`\sum_i \alpha_i y_i = 0`.

SimpleMKL (Rakotomamonjy et al., 2008, Algorithm 1) alternates:

1. fix ``mu`` and train the SVM, i.e. evaluate :math:`J(\mu)`;
2. take the gradient :math:`\partial J / \partial \mu_t = -\tfrac{1}{2\lambda}
   \|X_t'(\alpha \odot y)\|^2 = -\tfrac{\lambda}{2}\|w_t\|^2/\mu_t^2`,
3. build the reduced-gradient descent direction on the simplex (eq. 14),
   follow it to the boundary while that lowers ``J`` (every trial an SVM
   training), then search the step on the last segment by golden section,

and stops when the MKL duality gap
:math:`J(\mu) - \big[\sum_i\alpha_i - \tfrac{1}{2C}\alpha'\alpha
- \tfrac{1}{2\lambda}\max_t\|X_t'(\alpha\odot y)\|^2\big]` falls below ``tol``
times ``J``.

The SVM of step 1 has linear kernels on the active columns, so it is trained
in the primal over :math:`v_t = w_t/\sqrt{\mu_t}` (the features of group ``t``
scaled by :math:`\sqrt{\mu_t}`): a Newton method with an exact line search,
which for the squared hinge is the finite Newton method of Mangasarian
(2002) and Keerthi and DeCoste (2005) and reaches the SVM's optimum to machine
precision in a few steps.  The dual variables are then recovered from the
training errors, :math:`\alpha_i = C\xi_i` (paper 002, Theorem 4).  The same
scheme holds for any loss with a (generalised) second derivative (its dual
uses the loss's Fenchel conjugate), so logistic and square losses are solved
too; the paper's MKL-FGM is the squared hinge.

With ``K`` outputs (targets of shape ``(n, K)``: FGM's shared multiclass
selection) the kernel weights are shared: since
:math:`(\sum_t \|W_t\|_F)^2 = \min_{\mu \in \mathcal{M}} \sum_t \|W_t\|_F^2/\mu_t`,
the squared group-l1 problem whose group norms run over the outputs is the
MKL problem over one ``mu`` whose ``J`` is the sum of ``K`` independent SVMs
(its gradient the sum of theirs).  FGM uses it where a Newton master stopped
at the squared hinge's kink.

At the optimum of the MKL problem the primal weights
:math:`w_t = \mu_t X_t'(\alpha\odot y)/\lambda` solve FGM's squared group-l1
problem (paper 002, Theorem 4) and :math:`\mu_t = \|w_t\|/\sum_s\|w_s\|`.

References
----------
Tan, Tsang, Wang (2014), JMLR 15, sec. 5.1, eqs. (29)-(30) and Theorem 4;
Rakotomamonjy, Bach, Canu, Grandvalet (2008), "SimpleMKL", JMLR 9,
Algorithm 1 and eq. (14); Keerthi and DeCoste (2005), "A modified finite
Newton method for fast solution of large scale linear SVMs", JMLR 6.
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from ..penalties import SquaredGroupL1
from ..penalties._prox import expand, group_norms
from ._base import BaseSolver, History, SolverResult, SolverState, single_blas_thread
from ._newton_guard import damped_solve

__all__ = ["SimpleMKL", "SimpleMKLState"]

# Golden ratio of the line search.
_GOLD = (1.0 + np.sqrt(5.0)) / 2.0
# Kernel weights below this are set to zero (SimpleMKL's numerical precision).
_MU_ZERO = 1e-12
# Inner Newton: relative decrement that ends an SVM training, and its cap.
_SVM_TOL = 1e-15
_SVM_MAX_ITER = 100
# Active sets up to this many entries are solved with one BLAS thread.
_SINGLE_THREAD_ENTRIES = 20_000_000


@dataclass(frozen=True)
class SimpleMKLState(SolverState):
    """State of :class:`SimpleMKL`: the point, the kernel weights and the gap.

    Parameters
    ----------
    coef : ndarray of shape (p,) or (p, K)
        Weights of the active columns.
    intercept : float or ndarray of shape (K,), default=0.0
        Intercept (ignored without one).
    mu : ndarray of shape (T,), optional
        Kernel weights on the simplex, one per group; default the group-norm
        shares of ``coef`` (the optimal weights for that point), or uniform
        when ``coef`` is zero (SimpleMKL's start).
    margin : ndarray of shape (n_samples,) or (n_samples, K), optional
        Margins ``A coef + intercept`` (output only).
    objective : float, default=nan
        FGM's primal objective at the point (output only).
    gap : float, default=nan
        MKL duality gap :math:`J(\\mu) - D(\\alpha)` at the point (output only).
    """

    coef: np.ndarray
    intercept: float = 0.0
    mu: np.ndarray = None
    margin: np.ndarray = None
    objective: float = np.nan
    gap: float = np.nan


class _SVM:
    """Primal SVM with kernel ``sum_t mu_t X_t X_t'``, trained by Newton's method.

    Minimises ``phi(v, b) = sum_i loss(m_i, y_i) + lam/2 ||v||^2`` with margins
    ``m = A diag(sqrt(mu)) v + b`` (``mu`` expanded per column).  Every
    training is warm-started from the weights ``w = sqrt(mu) v`` of the last
    one, so margins carry over between nearby ``mu``.
    """

    def __init__(self, A, y, loss, lam, indptr, fit_intercept):
        self.A, self.y, self.loss, self.lam = A, y, loss, lam
        self.indptr, self.fit_intercept = indptr, fit_intercept
        self.sparse = sp.issparse(A)
        self.n_trainings = 0
        self.n_newton = 0

    def _scaled(self, s):
        if self.sparse:
            return sp.csr_matrix(self.A @ sp.diags(s))
        return self.A * s

    def train(self, mu, w0, b0):
        """Train at ``mu`` from ``(w0, b0)``; return a dict of the solution.

        With ``K`` outputs (``y`` of shape ``(n, K)``, ``w0`` ``(p, K)``,
        ``b0`` ``(K,)``) the kernel is shared and the SVMs are independent:
        ``J`` is their sum and so is ``-dJ/dmu_t``, the squared Frobenius
        norms of the groups' dual correlations.
        """
        self.n_trainings += 1
        s = np.sqrt(expand(mu, self.indptr))
        As = self._scaled(s)
        if np.ndim(self.y) == 1:
            return self._train_one(As, s, self.y, w0, b0)
        sols = [self._train_one(As, s, self.y[:, k], w0[:, k], b0[k])
                for k in range(self.y.shape[1])]
        out = {key: np.stack([o[key] for o in sols], axis=-1)
               for key in ("w", "b", "m", "r", "z")}
        out["J"] = float(sum(o["J"] for o in sols))
        out["zn2"] = np.sum([o["zn2"] for o in sols], axis=0)
        return out

    def _train_one(self, As, s, y, w0, b0):
        """One output's SVM on the scaled columns ``As`` from ``(w0, b0)``."""
        loss, lam = self.loss, self.lam
        # v_t = w_t / sqrt(mu_t); groups with mu_t = 0 have no features.
        v = np.divide(w0, s, out=np.zeros_like(w0), where=s > 0)
        b = float(b0) if self.fit_intercept else 0.0
        m = np.asarray(As @ v).ravel() + b
        phi = float(loss.value(m, y).sum()) + 0.5 * lam * float(v @ v)
        p = len(v)
        for _ in range(_SVM_MAX_ITER):
            self.n_newton += 1
            r = loss.grad_margin(m, y)
            d = loss.hess_margin(m, y)
            gv = np.asarray(As.T @ r).ravel() + lam * v
            gb = float(r.sum()) if self.fit_intercept else 0.0
            rows = np.flatnonzero(d > 0)
            Ar = As[rows]
            Ad = Ar.multiply(d[rows, None]) if self.sparse else Ar * d[rows, None]
            H = np.empty((p + 1, p + 1))
            HA = Ar.T @ Ad
            H[:p, :p] = HA.toarray() if self.sparse else HA
            H[:p, :p] += lam * np.eye(p)
            hb = np.asarray(Ad.sum(0)).ravel()
            H[:p, p] = H[p, :p] = hb
            # The intercept's curvature vanishes when no row is curved (all
            # margins beyond the hinge): its gradient is then zero too.
            H[p, p] = max(float(d.sum()), 1e-12 * lam)
            g = np.append(gv, gb)
            if not self.fit_intercept:
                H, g = H[:p, :p], g[:p]
            step = damped_solve(H, g)
            if step is None:  # (not even a damped Newton step: the SVM stops here)
                break
            step = -step
            dec = -float(g @ step)
            if dec <= _SVM_TOL * max(abs(phi), 1e-300):
                break
            dv = step[:p]
            db = step[p] if self.fit_intercept else 0.0
            dm = np.asarray(As @ dv).ravel() + db
            t = self._line_search(y, m, dm, v, dv, g @ step)
            v = v + t * dv
            b += t * db
            m = m + t * dm
            phi_new = float(loss.value(m, y).sum()) + 0.5 * lam * float(v @ v)
            converged = phi - phi_new <= _SVM_TOL * max(abs(phi_new), 1e-300)
            phi = phi_new
            if converged and t == 1.0:
                break
        r = loss.grad_margin(m, y)
        # z_t = X_t' grad: the SVM's dual variables seen by each kernel;
        # ||z_t||^2 / (2 lam) is -dJ/dmu_t.
        z = np.asarray(self.A.T @ r).ravel()
        zn2 = group_norms(z, self.indptr) ** 2
        return {"J": phi, "w": s * v, "b": b, "m": m, "r": r, "z": z, "zn2": zn2}

    def _line_search(self, y, m, dm, v, dv, slope0):
        """Exact minimiser along the Newton direction of the convex ``phi``.

        ``phi'(t)`` is non-decreasing: safeguarded Newton steps on it inside
        a bracket (piecewise linear for the squared hinge, so a few steps).
        """
        loss, lam = self.loss, self.lam
        vd, dd = float(v @ dv), float(dv @ dv)

        def dphi(t):
            mt = m + t * dm
            return (float(dm @ loss.grad_margin(mt, y)) + lam * (vd + t * dd),
                    float(dm @ (loss.hess_margin(mt, y) * dm)) + lam * dd)

        if slope0 >= 0:  # no descent (machine precision)
            return 0.0
        lo, hi = 0.0, 1.0
        g1, h1 = dphi(1.0)
        if abs(g1) <= 1e-12 * abs(slope0):
            return 1.0
        while g1 < 0 and hi < 1e6:
            lo, hi = hi, 2.0 * hi
            g1, h1 = dphi(hi)
        t, gt, ht = hi, g1, h1
        for _ in range(60):
            if abs(gt) <= 1e-12 * abs(slope0) or hi - lo <= 1e-15 * hi:
                break
            if gt > 0:
                hi = t
            else:
                lo = t
            tn = t - gt / ht if ht > 0 else 0.5 * (lo + hi)
            t = tn if lo < tn < hi else 0.5 * (lo + hi)
            gt, ht = dphi(t)
        return t


def descent_direction(mu, grad):
    """SimpleMKL's reduced-gradient descent direction on the simplex (eq. 14).

    The largest weight ``mu_k`` is the dependent variable:
    ``D_t = grad_k - grad_t`` for ``t != k``, zero where ``mu_t = 0`` and the
    direction would decrease it, and ``D_k = -sum_{t != k} D_t`` so that the
    weights stay on the simplex.

    Parameters
    ----------
    mu : ndarray of shape (T,)
        Kernel weights on the simplex.
    grad : ndarray of shape (T,)
        Gradient of ``J`` in ``mu``.

    Returns
    -------
    D : ndarray of shape (T,)
    k : int
        Index of the dependent weight.
    """
    k = int(np.argmax(mu))
    D = grad[k] - grad
    D[(mu <= 0) & (D < 0)] = 0.0
    D[k] = 0.0
    D[k] = -D.sum()
    return D, k


class SimpleMKL(BaseSolver):
    r"""SimpleMKL (reduced gradient on the kernel weights) for FGM's master.

    The paper's MKL-FGM master (paper 002, sec. 5.1): see the module
    docstring for the method.  It solves the same problem as
    :class:`~kernlearn.solvers.APG` and :class:`~kernlearn.solvers.ProxNewton`
    -- the squared group-l1 problem of eq. (31), whose dual is the MKL
    problem (29) -- through many SVM trainings, so it is a baseline for
    them, not a faster master.

    Parameters
    ----------
    tol : float, default=1e-6
        Stop when the MKL duality gap is below ``tol`` times :math:`J(\mu)`
        (Rakotomamonjy et al.'s stopping rule; it also bounds the gap of the
        returned primal point), or when no step along a descent direction
        lowers ``J`` any more (machine precision; ``history`` marks it
        ``stalled``).
    max_iter : int, default=500
        Cap on the reduced-gradient iterations.
    line_search_tol : float, default=1e-2
        The golden-section search stops when its bracket is below this
        fraction of the longest step (the role of SimpleMKL's
        ``goldensearch_deltmax``); it is shrunk further until a trial point
        lowers ``J``.

    References
    ----------
    Rakotomamonjy, Bach, Canu, Grandvalet (2008), JMLR 9, Algorithm 1;
    Tan, Tsang, Wang (2014), JMLR 15, sec. 5.1.
    """

    required_loss_methods = ("value", "grad_margin", "hess_margin", "conjugate_at_grad")
    required_penalty_methods = ("value",)
    # The MKL problem is the dual of the squared group-l1 problem only.
    supported_penalties = (SquaredGroupL1,)

    def __init__(self, tol=1e-6, max_iter=500, line_search_tol=1e-2):
        self.tol = tol
        self.max_iter = max_iter
        self.line_search_tol = line_search_tol

    @staticmethod
    def _constraints():
        from sklearn.utils._param_validation import Interval

        return {"tol": [Interval(Real, 0, 1, closed="neither")],
                "max_iter": [Interval(Integral, 1, None, closed="left")],
                "line_search_tol": [Interval(Real, 0, 1, closed="neither")]}

    def solve(self, problem, warm_state=None):
        """Minimise ``sum loss(A w + b, y) + alpha/2 (sum_t ||w_t||)^2`` through its MKL dual.

        Parameters
        ----------
        problem : Problem
            Active columns, groups, targets of shape ``(n,)`` or ``(n, K)``
            (``K`` outputs sharing the kernel weights: the groups' norms
            run over the outputs, as in :class:`~kernlearn.solvers.APG`),
            a loss with ``hess_margin`` and a
            :class:`~kernlearn.penalties.SquaredGroupL1` penalty.
        warm_state : SimpleMKLState, optional
            Starting point; its ``mu`` (or the group-norm shares of its
            ``coef``) starts the kernel weights.

        Returns
        -------
        result : SolverResult
            ``coef`` of shape ``(p,)`` and a float ``intercept`` (``(p, K)``
            and ``(K,)`` for ``K`` outputs), and a
            :class:`SimpleMKLState` holding ``mu``, ``margin``, ``objective``
            and ``gap``; ``history`` records per iteration ``J``, the
            relative gap, the SVM trainings so far and the primal objective.
        """
        self.check_problem(problem)
        alpha = float(problem.penalty.alpha)
        if not alpha > 0:
            raise ValueError(f"SimpleMKL needs a positive penalty alpha, got {alpha!r}.")
        A = problem.A
        if A.shape[0] * A.shape[1] <= _SINGLE_THREAD_ENTRIES:
            with single_blas_thread():
                return self._solve(problem, warm_state, alpha)
        return self._solve(problem, warm_state, alpha)

    def _start(self, warm, p, T, indptr, tail=()):
        """Start point ``(w, b, mu)`` from ``warm`` (SimpleMKL starts at ``mu = 1/T``)."""
        w = np.zeros((p,) + tail) if warm is None else np.array(warm.coef, dtype=float)
        if w.size != int(np.prod((p,) + tail)):
            raise ValueError(f"warm_state.coef must have shape {(p,) + tail}, got "
                             f"{w.shape}.")
        w = w.reshape((p,) + tail)
        b = _intercepts(0.0 if warm is None else warm.intercept, tail)
        mu = None if warm is None else getattr(warm, "mu", None)
        if mu is not None:
            mu = np.array(mu, dtype=float).ravel()
            if mu.shape != (T,) or np.any(mu < 0) or not mu.sum() > 0:
                raise ValueError(f"warm_state.mu must be {T} non-negative weights with a "
                                 "positive sum.")
            mu = mu / mu.sum()
        else:
            # (Frobenius norms over the outputs: the shares that are optimal for w)
            norms = _group_norms(w, indptr)
            mu = norms / norms.sum() if norms.sum() > 0 else np.full(T, 1.0 / T)
        return w, b, mu

    def _solve(self, problem, warm, alpha):
        A, y, loss = problem.A, np.asarray(problem.y, dtype=float), problem.loss
        indptr = problem.indptr
        n, p = A.shape
        T = len(indptr) - 1
        tail = y.shape[1:]
        svm = _SVM(A, y, loss, alpha, indptr, problem.fit_intercept)
        history = History()
        if T == 0:
            b = _intercepts(0.0 if warm is None else warm.intercept, tail)
            w, mu = np.zeros((p,) + tail), np.zeros(0)
            sol = svm.train(mu, w, b)
            return self._result(problem, sol, mu, 0.0, history, True, 0)
        w, b, mu = self._start(warm, p, T, indptr, tail)
        sol = svm.train(mu, w, b)

        def evaluate(m):
            return svm.train(m, sol["w"], sol["b"])

        converged = False
        it = 0
        gap = np.inf
        for it in range(1, self.max_iter + 1):
            grad = -sol["zn2"] / (2.0 * alpha)
            gap = (sol["zn2"].max() - mu @ sol["zn2"]) / (2.0 * alpha)
            rel_gap = gap / max(abs(sol["J"]), 1e-300)
            history.append(J=sol["J"], gap=rel_gap, svm_trainings=svm.n_trainings,
                           newton_steps=svm.n_newton)
            if rel_gap <= self.tol:
                converged = True
                break
            D, k = descent_direction(mu, grad)
            if not np.any(D < 0):
                # No feasible descent: a stationary point of J on the simplex.
                converged = True
                break
            J_old = sol["J"]
            mu, sol = self._step(mu, D, k, sol, evaluate)
            if not sol["J"] < J_old:
                # No trial point along a descent direction lowers J: J is
                # flat to machine precision (as APG and ProxNewton conclude).
                history.append(J=sol["J"], gap=rel_gap, svm_trainings=svm.n_trainings,
                               newton_steps=svm.n_newton, stalled=1)
                converged = True
                break
        return self._result(problem, sol, mu, gap, history, converged, it)

    def _step(self, mu, D, k, sol, evaluate):
        """One iteration of Algorithm 1: to the boundary while J drops, then a line search."""
        J = sol["J"]
        while True:
            neg = np.flatnonzero(D < 0)
            ratios = -mu[neg] / D[neg]
            nu = int(neg[np.argmin(ratios)])
            gmax = float(ratios.min())
            mu_far = mu + gmax * D
            mu_far[nu] = 0.0
            mu_far = _clean(mu_far)
            far = evaluate(mu_far)
            if far["J"] >= J:
                break
            # The whole segment lowers J: move to its end and follow the
            # direction projected on the new face.
            mu, sol, J = mu_far, far, far["J"]
            if nu == k:
                return mu, sol
            # Paper's update D_k -= D_nu, D_nu = 0, applied to every weight
            # that reached zero.
            D = D.copy()
            D[(mu <= 0) & (D < 0)] = 0.0
            D[k] = 0.0
            D[k] = -D.sum()
            if not np.any(D < 0):
                return mu, sol
        return self._golden(mu, D, gmax, sol, far, evaluate)

    def _golden(self, mu, D, gmax, sol0, sol_max, evaluate):
        """Golden-section search of ``J(mu + g D)`` on ``[0, gmax]``; the best point seen."""
        def at(g):
            return evaluate(_clean(mu + g * D))

        best_g, best = (0.0, sol0) if sol0["J"] <= sol_max["J"] else (gmax, sol_max)
        lo, hi = 0.0, gmax
        c = hi - (hi - lo) / _GOLD
        d = lo + (hi - lo) / _GOLD
        fc, fd = at(c), at(d)
        # Near the optimum the best step is a tiny fraction of the longest
        # one, and a bracket of line_search_tol * gmax can miss every
        # decrease: keep shrinking until a trial point lowers J.
        while hi - lo > 1e-14 * gmax and (hi - lo > self.line_search_tol * gmax
                                          or min(fc["J"], fd["J"]) >= sol0["J"]):
            if fc["J"] < fd["J"]:
                hi, d, fd = d, c, fc
                c = hi - (hi - lo) / _GOLD
                fc = at(c)
            else:
                lo, c, fc = c, d, fd
                d = lo + (hi - lo) / _GOLD
                fd = at(d)
        for g, f in ((c, fc), (d, fd)):
            if f["J"] < best["J"]:
                best_g, best = g, f
        return _clean(mu + best_g * D), best

    def _result(self, problem, sol, mu, gap, history, converged, it):
        """Primal point ``w_t = mu_t z_t / lambda`` of the last SVM and its objective."""
        w, b, m = sol["w"], sol["b"], sol["m"]
        pen = (problem.penalty.matrix_value(w, problem.indptr) if np.ndim(w) == 2
               else problem.penalty.value(w, problem.indptr))
        F = float(problem.loss.value(m, problem.y).sum()) + pen
        return SolverResult(
            coef=w,
            intercept=b,
            state=SimpleMKLState(coef=w, intercept=b, mu=mu, margin=m, objective=F, gap=gap),
            history=history,
            converged=converged,
            n_iter=it,
        )


def _intercepts(b, tail):
    """Intercept(s) of a start: a float for one output, ``(K,)`` for ``tail = (K,)``."""
    return np.broadcast_to(np.asarray(b, dtype=float), tail).copy() if tail else float(b)


def _group_norms(w, indptr):
    """Norms of the row groups of ``w`` ``(p,)``, or of ``(p, K)`` (Frobenius)."""
    # the rows of a (p, K) matrix are contiguous when raveled: group t spans
    # entries K indptr[t] to K indptr[t + 1]
    return group_norms(np.ravel(w), np.asarray(indptr) * (np.shape(w)[1] if np.ndim(w) == 2
                                                        else 1))


def _clean(mu):
    """Weights on the simplex: negligible ones set to zero, the rest renormalised."""
    mu = np.where(mu > _MU_ZERO, mu, 0.0)
    return mu / mu.sum()


def mkl_dual(problem, margin):
    """Fenchel dual value of FGM's master at the dual point of ``margin``.

    The dual point is the loss gradient at the margins (for the squared hinge,
    :math:`\\alpha_i = C\\xi_i` times the label, paper 002, Theorem 4); the
    value is :math:`-\\sum_i \\ell^*(g_i) - \\max_t\\|X_t'g\\|^2/(2\\lambda)`,
    a lower bound on the optimum when :math:`\\sum_i g_i = 0` (always without
    an intercept).

    Parameters
    ----------
    problem : Problem
        The master (penalty :class:`~kernlearn.penalties.SquaredGroupL1`).
    margin : ndarray of shape (n_samples,)
        Margins of a point.

    Returns
    -------
    dual : float
    """
    y = np.asarray(problem.y, dtype=float)
    g = problem.loss.grad_margin(margin, y)
    z = np.asarray(problem.A.T @ g).ravel()
    zmax = float((group_norms(z, problem.indptr) ** 2).max(initial=0.0))
    return -float(problem.loss.conjugate_at_grad(margin, y).sum()) - zmax / (
        2.0 * float(problem.penalty.alpha))
