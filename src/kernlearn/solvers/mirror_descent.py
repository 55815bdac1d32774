r"""Entropic mirror descent on simplices and on trace-norm (Schatten) sets.

The master solver of multitask MKL (paper 004):

* :func:`simplex_mirror_descent` minimises a convex function of one or
  several points of the simplex :math:`\Delta_d` (one per *group*, each
  group its own problem with its own step sizes), given an oracle that
  returns the value, a lower bound and a (sub)gradient at the current
  points; steps (2.2) of the paper, :func:`entropic_step`, with Nemirovski's
  step size :func:`step_size`; the best iterate is kept (the method is not
  monotone) and the loop stops on the relative duality gap (near ``tol`` and
  at ``max_iter``, the gap of its linearisations together:
  :func:`cutting_plane_bound`).
* :func:`schatten_entropic_step` is the step with :math:`\omega(Q) =
  \mathrm{tr}\,Q\log Q` over block-diagonal PSD matrices with
  :math:`\sum_j(\mathrm{tr}\,Q_j)^{\bar q}\le 1` (MK-MTSFL): an
  eigendecomposition per block and the scalar problem :func:`rho_step`.

Solvers never import a method: the oracles live in
:mod:`kernlearn.methods.mtmkl`.

References
----------
Jawanpuria, Nath (2011), "Multi-task multiple kernel learning", SDM: eq. (2.2),
sec. 4.  Ben-Tal, Margalit, Nemirovski (2001), "The ordered subsets mirror
descent optimization method with applications to tomography", SIAM J. Optim.
"""

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from ..progress import Progress
from ..utils._threads import check_abandoned
from ._base import History

__all__ = [
    "MirrorDescentResult",
    "cutting_plane_bound",
    "entropic_step",
    "logsumexp",
    "rho_step",
    "schatten_entropic_step",
    "simplex_mirror_descent",
    "step_size",
]


def logsumexp(z, axis=None, keepdims=False):
    """``log(sum(exp(z)))`` without overflow (``-inf`` for empty or all ``-inf``).

    A plain NumPy version: SciPy's array-API ``logsumexp`` costs ~0.3 ms
    per call, and the rho-step's root search calls it hundreds of times per
    MK-MTSFL iteration (a fifth of a 139-task fit).

    Parameters
    ----------
    z : array_like
        Values.
    axis : int, optional
        Axis to reduce (all by default).
    keepdims : bool, default=False
        Keep the reduced axis with length one.

    Returns
    -------
    out : float or ndarray
        The log-sum-exp.
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
        Logarithm of the new point(s).
    """
    z = log_x - step * grad
    return z - logsumexp(z, axis=-1, keepdims=True)


def step_size(it, n_dim, spread):
    r"""Step :math:`\sqrt{2\ln d}/(\|g\|_\infty\sqrt l)` (Nemirovski).

    Parameters
    ----------
    it : int
        Iteration :math:`l` (1-based).
    n_dim : int
        Dimension :math:`d` of the simplex (or total rank of the blocks).
    spread : float or ndarray
        :math:`\|g\|_\infty` of the gradient(s), up to the constant that does
        not change a step on the simplex.

    Returns
    -------
    step : float or ndarray
    """
    scale = np.maximum(spread, 1e-300) * np.sqrt(it)
    return np.sqrt(2.0 * np.log(max(n_dim, 2))) / scale


@dataclass(frozen=True)
class MirrorDescentResult:
    """What :func:`simplex_mirror_descent` returns.

    Attributes
    ----------
    x : ndarray of shape (n_groups, d)
        Best point of each group (lowest value seen).
    value : ndarray of shape (n_groups,)
        Best values.
    lower : ndarray of shape (n_groups,)
        Best lower bounds.
    history : History
        Per iteration ``objective`` (summed over groups), ``best``, ``gap``,
        ``n_active`` (coordinates above 1e-6), ``time``.
    n_iter : int
        Iterations run.
    converged : bool
        Whether the summed gap fell below ``tol`` times the summed value.
    """

    x: np.ndarray
    value: np.ndarray
    lower: np.ndarray
    history: History
    n_iter: int
    converged: bool

    @property
    def objective(self):
        """Summed best value."""
        return float(self.value.sum())

    @property
    def gap(self):
        """Summed gap between the best values and the best lower bounds."""
        return float((self.value - self.lower).sum())


def simplex_mirror_descent(oracle, n_groups, n_dim, max_iter=100, tol=1e-3,
                           on_better=None, verbose=0, name="mirror descent", x0=None):
    r"""Minimise :math:`\sum_g f_g(x_g)` over points :math:`x_g` of the simplex.

    Starts at the centre :math:`x_g = \mathbf 1/d` and steps each group by
    :func:`entropic_step` with its own :func:`step_size` (the gradient's
    spread :math:`\tfrac12(\max_i g_i - \min_i g_i)`: a gradient is defined up
    to a constant on the simplex).  Stops when the summed gap (best values
    minus best lower bounds) is at most ``tol`` times the summed best value,
    or at once when ``n_dim == 1``.

    Parameters
    ----------
    oracle : callable
        ``oracle(x, it) -> (value, lower, grad)`` at the points ``x`` of shape
        ``(n_groups, n_dim)``: values and lower bounds of shape
        ``(n_groups,)``, gradients of shape ``(n_groups, n_dim)``.
    n_groups : int
        Independent simplices.
    n_dim : int
        Dimension of each.
    max_iter : int, default=100
        Iterations.
    tol : float, default=1e-3
        Relative gap that stops the loop.
    on_better : callable, optional
        ``on_better(better)`` with the boolean mask of the groups whose value
        improved in this iteration, called right after the oracle (so that
        the caller can keep what its last oracle call computed for them).
    verbose : int, default=0
        Report each iteration through :class:`kernlearn.progress.Progress`.
    name : str, default="mirror descent"
        Prefix of the progress lines.
    x0 : ndarray of shape (n_groups, n_dim), optional
        Starting points (another fit's solution) instead of the centres,
        mixed with the centre by :data:`_START_MIX` so that no coordinate
        starts at zero (where the entropic steps cannot move it).  The
        stopping rule is the same: the result meets ``tol`` from any start.

    Returns
    -------
    result : MirrorDescentResult

    Notes
    -----
    The lower bound of an iteration is its linearisation's minimum over the
    simplex (``lower``); the loop keeps the best.  Near an interior optimum
    the iterates circle it at a distance that shrinks as the steps do
    (:math:`1/\sqrt l`), and so does that gap, linearly: a fit whose values
    had settled to 2e-5 stopped at ``max_iter=100`` at a gap of 1.3e-3 > ``tol``
    (MK-MTFL's SVM, one fold of the Default set at C = 1) and warned.  Once
    that gap is within ``_CUTS_FROM`` (10) times ``tol``, the loop therefore
    measures it with the bound of its last 64 linearisations together
    (:func:`cutting_plane_bound`, second order in the distance to the
    optimum; one small LP), and stops when that meets ``tol`` (the same fold
    fit: 12 iterations instead of 100); at ``max_iter``, with all of them.
    The linearisations are
    ``value + grad . (y - x)``: the oracle's values and gradients must make
    them lower bounds of the function (as its ``lower``, their minimum over
    the vertices).
    """
    log_x = np.full((n_groups, n_dim), -np.log(n_dim))
    if x0 is not None:
        x0 = np.clip(np.asarray(x0, dtype=float).reshape(n_groups, n_dim), 0.0, None)
        x0 = x0 / np.maximum(x0.sum(axis=1, keepdims=True), 1e-300)
        log_x = np.log((1.0 - _START_MIX) * x0 + _START_MIX / n_dim)
    best_x = np.exp(log_x)
    best_val = np.full(n_groups, np.inf)
    best_low = np.full(n_groups, -np.inf)
    hist = History()
    progress = Progress(name, max_iter, level=verbose) if verbose else None
    converged, n_iter = False, 0
    cuts = []  # (intercepts (n_groups,), gradients (n_groups, n_dim)) per iteration
    for it in range(1, max_iter + 1):
        check_abandoned()  # (a threaded search's Ctrl-C: utils._threads)
        n_iter = it
        x = np.exp(log_x)
        val, low, grad = oracle(x, it)
        cuts.append((val - (grad * x).sum(1), np.array(grad, dtype=float)))
        better = val < best_val
        best_val = np.where(better, val, best_val)
        best_low = np.maximum(best_low, low)
        if better.any():
            best_x[better] = x[better]
            if on_better is not None:
                on_better(better)
        obj, gap = float(best_val.sum()), float((best_val - best_low).sum())
        if n_dim > 1 and tol * abs(obj) < gap <= _CUTS_FROM * tol * abs(obj):
            # near the end, the bound of all the linearisations (second order in
            # the distance to the optimum, where each one alone is first order; an
            # LP costs milliseconds, more than a small fit's iteration)
            best_low = _with_all_cuts(cuts[-_CUTS_WINDOW:], best_val, best_low)
            gap = float((best_val - best_low).sum())
        n_active = int((x > 1e-6).sum())
        hist.append(objective=float(val.sum()), best=obj, gap=gap, n_active=n_active)
        if progress is not None:
            progress.update(dict(iter=it, objective=float(val.sum()), gap=gap,
                                 n_active=n_active))
        if n_dim == 1 or gap <= tol * abs(obj):
            converged = True
            break
        spread = 0.5 * (grad.max(1) - grad.min(1))
        log_x = entropic_step(log_x, grad, step_size(it, n_dim, spread)[:, None])
    if not converged and cuts:
        best_low = _with_all_cuts(cuts, best_val, best_low)
        converged = float((best_val - best_low).sum()) <= tol * abs(float(best_val.sum()))
    if progress is not None:
        progress.close("tol" if converged else "max_iter", n_iter)
    return MirrorDescentResult(best_x, best_val, best_low, hist, n_iter, converged)


#: weight of the centre in a given start (``x0``): a coordinate of 1e-30 would
#: need dozens of steps to come back
_START_MIX = 1e-3

#: the loop measures its gap with all its linearisations (:func:`cutting_plane_bound`)
#: once the gap of the best single one is within this factor of ``tol``
_CUTS_FROM = 10.0
#: ... of the last ones only, in the loop (any subset gives a valid bound; the
#: programme's cost grows with its size, and the recent cuts are the tight ones)
_CUTS_WINDOW = 64


def _with_all_cuts(cuts, best_val, best_low):
    """``best_low`` raised, for the groups not yet closed, to the bound of all ``cuts``."""
    a = np.stack([c[0] for c in cuts], axis=1)  # (n_groups, iterations)
    grads = np.stack([c[1] for c in cuts], axis=1)
    best_low = best_low.copy()
    for g in np.flatnonzero(best_val > best_low):
        best_low[g] = max(best_low[g], cutting_plane_bound(a[g], grads[g]))
    return best_low


def cutting_plane_bound(a, grads):
    r"""Lower bound of a convex function on the simplex from its linearisations.

    With :math:`f(y) \ge a_i + g_i^\top y` on :math:`\Delta_d` for every
    :math:`i`, any convex combination :math:`\mu` of them is a lower bound
    too, and so is its minimum over the vertices:
    :math:`\min_y f(y) \ge \mu^\top a + \min_j (G^\top\mu)_j`.  The best
    :math:`\mu` (Kelley's bound, the minimum of the piecewise-linear model
    :math:`\max_i a_i + g_i^\top y`) is a linear programme; the bound is
    evaluated at its solution, clipped to the simplex, so it is valid
    whatever the LP solver's accuracy.

    Parameters
    ----------
    a : ndarray of shape (t,)
        Intercepts :math:`a_i`.
    grads : ndarray of shape (t, d)
        Gradients :math:`g_i`.

    Returns
    -------
    bound : float
        ``-inf`` if the programme fails (or a linearisation is not finite).
    """
    from scipy.optimize import linprog

    t, d = grads.shape
    if not (np.isfinite(a).all() and np.isfinite(grads).all()):
        return -np.inf  # (no bound from those; linprog refuses them)
    if d == 2:
        return _two_kernel_bound(a, grads)
    # maximise mu'a + z with z <= (G' mu)_j, mu on the simplex
    res = linprog(np.append(-a, -1.0), A_ub=np.column_stack([-grads.T, np.ones(d)]),
                  b_ub=np.zeros(d), A_eq=np.append(np.ones(t), 0.0)[None],
                  b_eq=[1.0], bounds=[(0, None)] * t + [(None, None)], method="highs")
    if res.x is None:
        return -np.inf
    mu = np.maximum(res.x[:t], 0.0)
    if not mu.sum() > 0:
        return -np.inf
    mu /= mu.sum()
    return float(mu @ a + (grads.T @ mu).min())


def _two_kernel_bound(a, grads):
    r""":func:`cutting_plane_bound` on the simplex of two coordinates, in closed form.

    On :math:`y = (s, 1 - s)` every linearisation is a line in :math:`s`, and
    the minimum over :math:`[0, 1]` of their maximum is that of two of them
    (Helly's theorem in one dimension; a basic solution of the programme has
    two nonzero multipliers): a single line (its lower vertex), or two lines of
    opposite slopes crossing inside, combined with the weights that cancel
    the slope.  The best of these multipliers :math:`\mu` is the programme's
    solution, and the bound is evaluated at it as the programme's is (the
    default kernel list has two kernels: the programme's set-up was a third of
    a small multitask fit).
    """
    c0, c1 = grads[:, 0], grads[:, 1]
    slope = c0 - c1  # (each line: a_i + c1_i + slope_i s)
    t = len(a)
    if t > _PAIRS_AT_ONCE:
        mu = _best_pair(a, c0, c1, slope)
        return float(mu @ a + (grads.T @ mu).min())
    i, j = np.nonzero((slope[:, None] > 0) & (slope[None, :] < 0))
    lam = -slope[j] / (slope[i] - slope[j])  # weight of line i: slopes cancel
    mus = np.zeros((t + len(i), t))
    mus[np.arange(t), np.arange(t)] = 1.0
    mus[t + np.arange(len(i)), i] = lam
    mus[t + np.arange(len(i)), j] += 1.0 - lam
    values = mus @ a + (mus @ grads).min(axis=1)
    mu = mus[int(np.argmax(values))]
    return float(mu @ a + (grads.T @ mu).min())


#: more linearisations than this (a fit's last bound with all of its cuts,
#: ``max_iter`` above the default): the pairs' multipliers are not stacked into
#: one matrix of (pairs, t), whose size grows as t^3 (700 iterations: 0.6 GB)
_PAIRS_AT_ONCE = 128


def _best_pair(a, c0, c1, slope):
    """:func:`_two_kernel_bound`'s best multipliers, one line's pairs at a time
    (memory of order ``t``; the same candidates, first of equal values kept)."""
    t = len(a)
    lower = a + np.minimum(c0, c1)
    best, mu = lower.max(), np.eye(1, t, int(np.argmax(lower)))[0]
    neg = np.flatnonzero(slope < 0)
    for i in np.flatnonzero(slope > 0) if len(neg) else ():
        lam = -slope[neg] / (slope[i] - slope[neg])  # weight of line i
        values = lam * a[i] + (1.0 - lam) * a[neg] + np.minimum(
            lam * c0[i] + (1.0 - lam) * c0[neg], lam * c1[i] + (1.0 - lam) * c1[neg])
        k = int(np.argmax(values))
        if values[k] > best:
            best, mu = values[k], np.zeros(t)
            mu[i], mu[neg[k]] = lam[k], 1.0 - lam[k]
    return mu


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


def schatten_entropic_step(Z, log_theta, grad_factors, step, qbar):
    r"""One mirror-descent step with :math:`\omega(Q)=\mathrm{tr}\,Q\log Q` over
    :math:`R(\bar q) = \{Q_j\succeq 0, \sum_j(\mathrm{tr}\,Q_j)^{\bar q}\le1\}`.

    Each block is kept as its eigendecomposition
    :math:`Q_j = Z_j\,\mathrm{diag}(e^{\theta_j})Z_j^\top` (log-eigenvalues:
    :math:`\log Q_j` is exact and nothing underflows).  With the negative
    gradient :math:`-\nabla_{Q_j} f = \tfrac12 B_jB_j^\top` the step forms
    :math:`H_j = \log Q_j + \tfrac s2 B_jB_j^\top`, diagonalises it, and sets
    :math:`Q_j = \rho_j\,\mathrm{expm}(H_j)/\mathrm{tr}(\cdot)` with
    :math:`\rho` from :func:`rho_step` and :math:`c_j = 1 + \log\mathrm{tr}\,
    \mathrm{expm}(H_j)`.

    Parameters
    ----------
    Z : list of ndarray of shape (r_j, r_j)
        Eigenvectors of each block.
    log_theta : list of ndarray of shape (r_j,)
        Log-eigenvalues of each block.
    grad_factors : list of ndarray of shape (r_j, c_j)
        :math:`B_j` with :math:`-\nabla_{Q_j} f = \tfrac12 B_jB_j^\top`.
    step : float
        Step size :math:`s`.
    qbar : float
        :math:`\bar q\ge 1` (``inf`` allowed).

    Returns
    -------
    Z : list of ndarray
        New eigenvectors.
    log_theta : list of ndarray
        New log-eigenvalues.
    """
    k = len(Z)
    Z, hs, c = list(Z), [], np.zeros(k)
    for j in range(k):
        H = (Z[j] * log_theta[j]) @ Z[j].T + 0.5 * step * (grad_factors[j]
                                                           @ grad_factors[j].T)
        h, Z[j] = np.linalg.eigh(0.5 * (H + H.T))
        hs.append(h)
        c[j] = 1.0 + logsumexp(h)
    log_rho = rho_step(c, qbar)
    return Z, [log_rho[j] + hs[j] - logsumexp(hs[j]) for j in range(k)]
