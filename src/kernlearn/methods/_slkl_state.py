r"""Coordinate updates of SLKL (paper 003, sec. 3): the state behind Algorithm 2.

The algorithm itself (random coordinates, sweeps, stopping rule) is
:class:`kernlearn.methods.slkl.CoordinateNewton`, whose Gram-mode sweeps run
compiled through :func:`gram_sweeps`; the compiled Gram-mode steps and sweeps
are in :mod:`kernlearn.methods._slkl_compiled`.

Minimises over :math:`\mu \ge 0` the objective of eq. (14), summed over the
columns :math:`y_t` of a (possibly multi-output) target matrix :math:`Y`,

.. math::

    F(\mu) = \lambda \sum_t y_t^\top (\lambda I + C D C^\top)^{-1} y_t
             + \nu \sum_m \mu_m ,

where :math:`C D C^\top = \sum_m \mu_m c_m c_m^\top` is the conical combination
of rank-1 Nystrom kernels (eq. 3).  :math:`(\lambda I + CDC^\top)^{-1}` is never
formed: it is kept as :math:`I/\lambda - C G C^\top/\lambda^2` with
:math:`G = (D^{-1} + C^\top C/\lambda)^{-1}` over the *active* columns only
(eqs. 22-23), updated in the four cases (24)-(27) of sec. 3.2, so a coordinate
step costs :math:`O(n m_0)` and a coordinate that stays at zero costs
:math:`O(n)` (one product :math:`c_m^\top Z`).

Along one coordinate the objective is known in closed form (Sherman-Morrison):
with :math:`a = Z^\top c_m` (:math:`Z = (\lambda I + CDC^\top)^{-1} Y`) and
:math:`b = c_m^\top (\lambda I + CDC^\top)^{-1} c_m`,

.. math::

    F(\mu + t e_m) - F(\mu) = -\lambda \|a\|^2 \frac{t}{1 + t b} + \nu t ,

whose derivatives at :math:`t = 0` are eqs. (20)-(21):
:math:`\partial_m F = -\lambda\|a\|^2 + \nu` and
:math:`\partial^2_m F = 2 \lambda \|a\|^2 b`.
"""

import copy
import time

import numpy as np
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning

from ._slkl_compiled import _gram_residual, _gram_steps, _gram_sweeps, _rank1, _step_rule
from ..solvers._base import History
from ..utils._threads import check_abandoned
from ..utils._warnings import warn

# Seconds one compiled call of gram_sweeps may aim at: a Ctrl-C or an abandoned
# problem waits for Python at most about this long (or one sweep).
_CALL_SECONDS = 0.1

__all__ = ["SLKLBreakdown", "SLKLState", "extract_fit", "gram_sweeps", "slkl_objective"]


class SLKLBreakdown(ValueError):
    """The Woodbury updates broke down: ``nu`` is too small for these columns."""


def _scalar(index, cast, doc, settable=False):
    """A property reading (and optionally writing) ``self._scal[index]``."""

    def get(self):
        return cast(self._scal[index])

    def set_(self, value):
        self._scal[index] = value

    return property(get, set_ if settable else None, doc=doc)


class SLKLState:
    r"""Active set, :math:`G` and :math:`Z` of SLKL, updated one coordinate at a time.

    Parameters
    ----------
    Y : ndarray of shape (n_samples, n_outputs)
        Targets.
    n_columns : int
        Number ``M`` of candidate columns (coordinates of :math:`\mu`).
    lam : float, default=1.0
        Ridge parameter :math:`\lambda` (the paper fixes it to 1, sec. 4.1).
    nu : float, default=0.01
        Weight :math:`\nu` of :math:`\sum_m \mu_m`.
    check_every : int, default=8
        Every ``check_every`` weight changes, compute the residual of
        :math:`Z` (:math:`O(n m_0)`) and :meth:`refresh` when it exceeds
        ``refresh_tol``; 0 disables the check.  With large weights on nearly
        collinear columns (small :math:`\nu`), :math:`G` is very ill-conditioned
        and the round-off of the rank-one updates (24)-(27) grows geometrically
        (about 7% per update measured on abalone with :math:`\nu = 10^{-4}`);
        the check keeps it bounded.
    refresh_tol : float, default=1e-8
        Residual threshold of the check (raised to 100 times the residual
        right after the last refresh when that is larger).
    columns : ndarray of shape (n_columns, n_samples), optional
        All ``M`` columns (as rows).  Switches to *Gram mode*: with
        :math:`P = C^\top C` and :math:`Q = C^\top Y` computed once
        (:math:`O(n M^2)`), a coordinate step needs
        :math:`a = Z^\top c_j = (Q_j - P_{jA} V/\lambda)/\lambda` and
        :math:`u = C_A^\top c_j = P_{Aj}`, where :math:`V = G Q_A` is updated
        with :math:`G` in :math:`O(m_0 T)`; a step then costs
        :math:`O(m_0^2 + m_0 T)` instead of :math:`O(n m_0)`, and :math:`Z` is
        formed only when asked for.  Without it (columns computed on demand)
        the state keeps the active columns and :math:`Z` (*column mode*).
    gram : ndarray of shape (n_columns, n_columns), optional
        :math:`P = C^\top C` when already known (Gram mode only): problems on
        the same columns (the one-vs-all outputs of a classifier) then share
        the :math:`O(n M^2)` product instead of each repeating it.

    Attributes
    ----------
    mu : ndarray of shape (n_columns,)
        Current weights.
    Z : ndarray of shape (n_samples, n_outputs)
        :math:`(\lambda I + CDC^\top)^{-1} Y`.
    objective : float
        :math:`F(\mu)`, updated exactly by the one-dimensional formula.
    m0 : int
        Number of non-zero weights.
    active : ndarray of shape (m0,)
        Coordinates of the active slots (slot ``i`` holds ``Ct[i]``, ``G[i]``).
    case_counts : ndarray of shape (4,)
        How often each update case (24)-(27) occurred.
    n_fallback : int
        Newton steps (19) replaced by the exact coordinate minimiser because
        they would have increased F.
    kkt : ndarray of shape (n_columns,)
        KKT violation of each coordinate at its last visit (inf before).
    n_refresh : int
        Refreshes triggered by the residual check.

    References
    ----------
    Machart, Peel, Anthoine, Ralaivola, Glotin (2011), Stochastic Low-Rank Kernel
    Learning for Regression, ICML, eqs. (22)-(27).
    """

    def __init__(self, Y, n_columns, lam=1.0, nu=0.01, check_every=8, refresh_tol=1e-8,
                 columns=None, gram=None):
        Y = np.asarray(Y, dtype=float)
        if Y.ndim == 1:
            Y = Y[:, None]
        self.Y = Y
        self.lam = float(lam)
        self.nu = float(nu)
        self.n, self.n_outputs = Y.shape
        self.n_columns = int(n_columns)
        self.mu = np.zeros(self.n_columns)
        self.slot = np.full(self.n_columns, -1, dtype=np.intp)
        cap = max(1, min(self.n_columns, 64))
        self._G = np.empty((cap, cap))
        self._idx = np.empty(cap, dtype=np.intp)
        self._probe_rng = np.random.default_rng(0)
        # m0, objective, n_fallback and the update count live in one array
        # so that the compiled Gram-mode steps can update them in place
        self._scal = np.zeros(4)
        self._cols = None
        if columns is not None:
            # Gram mode: all M columns known, so every quantity lives in
            # R^M: P = C'C, Q = C'Y and V = G C_A'Y replace Z (see class doc)
            self._cols = np.asarray(columns, dtype=float)
            if self._cols.shape != (self.n_columns, self.n):
                raise ValueError(
                    f"columns must have shape (n_columns, n_samples) = "
                    f"{(self.n_columns, self.n)}, got {self._cols.shape}."
                )
            self._P = self._cols @ self._cols.T if gram is None else gram
            self._Q = self._cols @ Y
            self._V = np.empty((cap, self.n_outputs))
            # P_AA in slot order, kept contiguous by the compiled steps
            self._PA = np.empty((cap, cap))
            # the compiled round-off checks cycle through these probes: with
            # several outputs one random combination rho of them is checked
            # (T times cheaper than all, and drift shows in all), and r over
            # the active slots; for one output rho = 1
            self._probes = self._probe_rng.standard_normal(
                (64, self.n_outputs + self.n_columns))
            if self.n_outputs == 1:
                self._probes[:, 0] = 1.0
        else:
            self._Ct = np.empty((cap, self.n))
            self._Z = Y / self.lam
        self.objective = float(np.sum(Y * Y))
        self.case_counts = np.zeros(4, dtype=np.int64)
        self.kkt = np.full(self.n_columns, np.inf)
        self.check_every = int(check_every)
        self.refresh_tol = float(refresh_tol)
        self.n_refresh = 0
        self._floor = 0.0

    # -- scalars shared with the compiled steps ---------------------------------
    # (one float array, so the compiled steps update them in place)
    m0 = _scalar(0, int, "Number of non-zero weights (active slots).", settable=True)
    objective = _scalar(1, float, ":math:`F(\\mu)`, updated exactly by the "
                        "one-dimensional formula.", settable=True)
    n_fallback = _scalar(2, int, "Newton steps replaced by the exact coordinate "
                         "minimiser.")
    _n_updates = _scalar(3, int, "Coordinate updates made.")

    # -- active-set storage ---------------------------------------------------
    @property
    def gram_mode(self):
        """Whether the state works on the Gram matrix of the ``M`` columns."""
        return self._cols is not None

    @property
    def Ct(self):
        """Active columns as rows, shape ``(m0, n_samples)``."""
        if self.gram_mode:
            return self._cols[self.active]
        return self._Ct[: self.m0]

    @property
    def Z(self):
        r""":math:`Z = (\lambda I + CDC^\top)^{-1} Y`, shape ``(n_samples, n_outputs)``.

        Kept up to date in column mode; computed (:math:`O(n m_0 T)`) from
        :math:`Z = (Y - C_A V/\lambda)/\lambda` in Gram mode.
        """
        return self._z(self.Ct)

    def _z(self, Ct):
        """``Z`` with the active columns ``Ct`` already gathered (Gram mode)."""
        if not self.gram_mode:
            return self._Z
        return (self.Y - Ct.T @ self._V[: self.m0] / self.lam) / self.lam

    def W(self):
        r"""Coefficients :math:`W = D C^\top Z` of the columns, shape ``(n_columns, n_outputs)``.

        The kernel ridge fit on the training rows is :math:`CW`; on the active
        set :math:`W_A = G C_A^\top Y/\lambda` (no cancellation, unlike
        :math:`\mu_m (c_m^\top Z)` with :math:`c_m^\top Z \approx \sqrt\nu`),
        zero elsewhere.

        Returns
        -------
        W : ndarray of shape (n_columns, n_outputs)
        """
        W = np.zeros((self.n_columns, self.n_outputs))
        if self.m0:
            # C_A'Y is Q_A in Gram mode: O(m0^2 T), no pass over the n rows
            CY = self._Q[self.active] if self.gram_mode else self.Ct @ self.Y
            W[self.active] = self.G @ CY / self.lam
        return W

    def copy(self):
        """A copy that steps independently (the columns, ``Y`` and Gram matrix shared).

        Returns
        -------
        state : SLKLState
        """
        new = copy.copy(self)
        for name in ("mu", "slot", "_G", "_idx", "_scal", "case_counts", "kkt", "_V",
                     "_PA", "_Ct", "_Z"):
            if hasattr(self, name):
                setattr(new, name, getattr(self, name).copy())
        new._probe_rng = copy.deepcopy(self._probe_rng)
        return new

    def _corr(self, j, c):
        """:math:`a = Z^\top c_j`."""
        if not self.gram_mode:
            return self._Z.T @ c
        A, m = self.active, self.m0
        return (self._Q[j] - self._P[j, A] @ self._V[:m] / self.lam) / self.lam

    @property
    def G(self):
        r""":math:`G = (D^{-1} + C^\top C/\lambda)^{-1}`, shape ``(m0, m0)``.

        Gram mode updates only the lower triangle of the stored matrix (half
        the work of its rank-one updates); the full matrix is rebuilt from it.
        """
        L = self._G[: self.m0, : self.m0]
        if not self.gram_mode:
            return L
        return _mirrored(L, lower=True)

    @property
    def active(self):
        """Coordinates of the active slots."""
        return self._idx[: self.m0]

    def _grow(self):
        cap = min(self.n_columns, 2 * self._G.shape[0])
        G = np.empty((cap, cap))
        idx = np.empty(cap, dtype=np.intp)
        m = self.m0
        G[:m, :m], idx[:m] = self._G[:m, :m], self._idx[:m]
        self._G, self._idx = G, idx
        if self.gram_mode:
            V = np.empty((cap, self.n_outputs))
            V[:m] = self._V[:m]
            PA = np.empty((cap, cap))
            PA[:m, :m] = self._PA[:m, :m]
            self._V, self._PA = V, PA
        else:
            Ct = np.empty((cap, self.n))
            Ct[:m] = self._Ct[:m]
            self._Ct = Ct

    def column(self, j, column_fn):
        """Column ``c_j``: the stored copy when active, else ``column_fn(j)``.

        Parameters
        ----------
        j : int
            Coordinate.
        column_fn : callable
            ``column_fn(j) -> c_j``, called only for inactive coordinates.

        Returns
        -------
        c : ndarray of shape (n_samples,)
            The column.
        """
        if self.gram_mode:
            return self._cols[j]
        s = self.slot[j]
        return self._Ct[s] if s >= 0 else np.asarray(column_fn(j), dtype=float)

    def _b(self, j, c):
        r"""``(b, Gu)`` with :math:`b = c_j^\top(\lambda I + CDC^\top)^{-1}c_j`.

        For an active column, :math:`(\lambda I + CDC^\top)^{-1} C = C G D^{-1}/\lambda`
        and :math:`G(D^{-1} + C^\top C/\lambda) = I` give, without cancellation,
        :math:`b = (\mu_j - g_{jj})/\mu_j^2` and :math:`1 - \mu_j b = g_{jj}/\mu_j`
        (``Gu`` is then ``None``).  For an inactive one, the generic
        :math:`b = (c^\top c - u^\top G u/\lambda)/\lambda` with :math:`u = C^\top c`.
        """
        s = self.slot[j]
        if s >= 0:
            mu, g = self.mu[j], self._G[s, s]
            return max((mu - g) / mu**2, 0.0), None
        if self.gram_mode:
            u, cc = self._P[j, self.active], self._P[j, j]
        else:
            u, cc = self.Ct @ c, c @ c
        Gu = self.G @ u
        return max((cc - u @ Gu / self.lam) / self.lam, 0.0), Gu

    # -- the derivatives (20)-(21) -------------------------------------------
    def derivatives(self, j, c):
        r"""First and second partial derivatives of :math:`F` at coordinate ``j``.

        Parameters
        ----------
        j : int
            Coordinate.
        c : ndarray of shape (n_samples,)
            Its column :math:`c_j`.

        Returns
        -------
        d1, d2 : float
            Eqs. (20) and (21) with :math:`p = 2`.
        """
        a = self._corr(j, c)
        b = self._b(j, c)[0]
        a2 = float(a @ a)
        return -self.lam * a2 + self.nu, 2.0 * self.lam * a2 * b

    # -- one coordinate step -------------------------------------------------
    def step(self, j, c, rule="newton"):
        r"""Update coordinate ``j`` by eq. (19) and ``G``, ``Z`` by (24)-(27).

        Parameters
        ----------
        j : int
            Coordinate.
        c : ndarray of shape (n_samples,)
            Its column :math:`c_j`.
        rule : {"newton", "exact"}
            ``"newton"``: the projected Newton step (19); if, rarely, that step
            would *increase* F (it can when it shrinks a weight: F's third
            derivative is negative, so the quadratic model is then a lower,
            not an upper, bound), the exact coordinate minimiser is taken
            instead, so F never increases.  ``"exact"``: always the exact
            coordinate minimiser :math:`t^* = (\sqrt{\lambda\|a\|^2/\nu} - 1)/b`.

        Returns
        -------
        case : int
            Which of the cases (24)-(27) occurred (1-4).
        """
        if self.gram_mode:
            return self._gram_run([j], exact=rule == "exact")
        lam, nu = self.lam, self.nu
        mu_old = self.mu[j]
        a = self._corr(j, c)
        a2 = float(a @ a)
        d1 = -lam * a2 + nu
        # Case 1 without touching G: at mu_j = 0 a non-negative gradient keeps 0.
        if mu_old == 0.0 and d1 >= 0.0:
            self.kkt[j] = 0.0
            self.case_counts[0] += 1
            return 1
        b, Gu = self._b(j, c)
        self.kkt[j] = abs(d1) if mu_old > 0 else max(-d1, 0.0)

        # 1 + t b = (1 - mu_j b) + (mu_j + t) b, with 1 - mu_j b = g_jj / mu_j
        # computed without cancellation for an active column
        one = self._G[self.slot[j], self.slot[j]] / mu_old if mu_old > 0 else 1.0
        new, change, fallback = _step_rule(mu_old, a2, b, one, lam, nu, rule == "exact")
        self._scal[2] += fallback
        if new == mu_old:
            self.case_counts[0] += 1
            return 1
        self._scal[1] += change
        return self._apply(j, c, new, a, Gu, b)

    def set_weight(self, j, c, value):
        r"""Set :math:`\mu_j` to ``value`` (any value >= 0), updating ``G`` and ``Z``.

        Parameters
        ----------
        j : int
            Coordinate.
        c : ndarray of shape (n_samples,)
            Its column :math:`c_j`.
        value : float
            New weight.

        Returns
        -------
        case : int
            Which of the cases (24)-(27) occurred (1-4).
        """
        value = float(value)
        if value < 0:
            raise ValueError(f"weights must be non-negative, got {value}.")
        if self.gram_mode:
            return self._gram_run([j], forced=value)
        mu_old = self.mu[j]
        if value == mu_old:
            self.case_counts[0] += 1
            return 1
        a = self._corr(j, c)
        b, Gu = self._b(j, c)
        t = value - mu_old
        self._scal[1] += -self.lam * float(a @ a) * t / (1.0 + t * b) + self.nu * t
        return self._apply(j, c, value, a, Gu, b)

    def _apply(self, j, c, new, a, Gu, b):
        case = self._update(j, c, new, a, Gu, b)
        self._scal[3] += 1
        if self.check_every and self._n_updates % self.check_every == 0:
            self.check_and_refresh()
        return case

    def _gram_run(self, coords, forced=-1.0, exact=False):
        """Steps on ``coords`` in Gram mode, compiled (:func:`_gram_steps`).

        Returns the case (1-4) of the last step.
        """
        coords = np.asarray(coords, dtype=np.int64)
        # (a sweep's runs need no case: only a single step reports one)
        before = self.case_counts.copy() if len(coords) == 1 else None
        pos = 0
        while True:
            try:
                pos, why = _gram_steps(
                    coords, pos, float(forced), exact, self._P, self._Q, self._V,
                    self._G, self._PA, self._idx, self.slot, self.mu, self.kkt,
                    self.case_counts, self._scal, self.lam, self.nu,
                    self.check_every, self._probes, self._threshold(),
                )
            except ZeroDivisionError:
                raise self._breakdown() from None
            if not why:
                break
            self._resume(why)
        if len(coords) == 1:
            return int(np.argmax(self.case_counts - before)) + 1
        return None

    def _resume(self, why):
        """What a compiled call that returned early asks for before it goes on.

        ``why`` 1: grow the arrays (the next coordinate enters a full active
        set); 2: refresh (the round-off check failed); 3: refresh (the
        periodic one of :func:`gram_sweeps`).
        """
        if why == 1:
            self._grow()
        else:
            self.refresh()
            self.n_refresh += why == 2

    def _breakdown(self):
        # seen at nu = 1e-6 on 20,000 rows (keggdirected): weights so large
        # that G's updates overflow (a division by zero); the state is unusable
        return SLKLBreakdown(
            f"SLKL's coordinate updates broke down (a division by zero "
            f"at nu={self.nu:.3g}, largest weight {self.mu.max():.3g}): "
            "nu is too small for the Woodbury updates on these columns. "
            "Increase nu (or use nu='auto')."
        )

    def residual(self, probe=None):
        r"""Backward error of :math:`Z`: :math:`\|(\lambda I + CDC^\top) Z - Y\|`
        over :math:`\|Y\| + \lambda\|Z\| + \|CDC^\top Z\|` (O(n m0 T)).

        Parameters
        ----------
        probe : ndarray of shape (n_outputs,), optional
            Measure the error on :math:`Zr` and :math:`Yr` for this vector
            :math:`r` only (O(n m0 + n T)); with a Gaussian :math:`r` the
            squared error is an unbiased estimate of the full one.

        Returns
        -------
        residual : float
            Relative backward error.  In Gram mode, the relative errors of the
            reduced identities :math:`G(D^{-1} + P_{AA}/\lambda) = I` and
            :math:`V = G Q_A` instead (:math:`O(m_0^2 T)`, no ``n``).
        """
        if self.gram_mode:
            return self._reduced_residual(probe)
        Z, Y = self.Z, self.Y
        if probe is not None:
            Z, Y = Z @ probe, Y @ probe
        Ct = self.Ct
        if self.m0:
            D = self.mu[self.active]
            KZ = Ct.T @ ((D[:, None] if Z.ndim == 2 else D) * (Ct @ Z))
        else:
            KZ = 0.0
        R = self.lam * Z + KZ - Y
        scale = np.linalg.norm(Y) + self.lam * np.linalg.norm(Z) + np.linalg.norm(KZ)
        return float(np.linalg.norm(R) / max(scale, 1e-300))

    def _reduced_residual(self, probe=None):
        if not self.m0:
            return 0.0
        r = self._probe_rng.standard_normal(self.m0)
        rho = np.ones(1) if probe is None else np.asarray(probe, dtype=float)
        return float(_gram_residual(self._G, self._V, self._PA, self._Q, self.mu,
                                    self._idx, self.m0, self.lam, r, rho))

    def _threshold(self):
        return max(self.refresh_tol, 100.0 * self._floor)

    def check_and_refresh(self):
        """Refresh when round-off has built up.

        The threshold is ``refresh_tol`` or 100 times the residual reached by
        the last refresh, whichever is larger (on ill-conditioned active sets
        a refresh itself cannot go below ~1e-8).

        Returns
        -------
        refreshed : bool
            Whether a refresh was done.
        """
        # with several outputs, one random combination of them is checked:
        # T times cheaper than the full residual, and drift shows in all
        probe = (self._probe_rng.standard_normal(self.n_outputs)
                 if self.n_outputs > 1 else None)
        if self.residual(probe) > self._threshold():
            self.refresh()
            self.n_refresh += 1
            return True
        return False

    def _update(self, j, c, new, a, Gu, b):
        # column mode; Gram mode runs the same cases compiled (_gram_steps)
        lam, mu_old, m = self.lam, self.mu[j], self.m0
        G = self._G[:m, :m]
        t = new - mu_old
        s = self.slot[j]
        # Z <- (A + t c c')^{-1} Y = Z - t/(1 + t b) A^{-1}c a' (Sherman-Morrison);
        # A^{-1}c = C g_s/(lam mu_j) for an active column, else (c - C G u/lam)/lam
        Ct = self._Ct[:m]
        if s >= 0:
            w = Ct.T @ G[:, s] / (lam * mu_old)
            # 1 + t b, with 1 - mu_j b = g_ss/mu_j computed without cancellation
            den = G[s, s] / mu_old + new * b
        else:
            w = (c - Ct.T @ Gu / lam) / lam
            den = 1.0 + t * b
        self._Z -= np.outer(w, a * (t / den))
        self.mu[j] = new
        if s >= 0 and new > 0.0:  # case 2, eq. (25)
            delta = 1.0 / new - 1.0 / mu_old
            g = G[:, s].copy()
            # 1 + delta g_ss = g_ss/new + (mu_old - g_ss)/mu_old: a sum of terms >= 0
            kappa = delta / (g[s] / new + (mu_old - g[s]) / mu_old)
            _rank1(G, -kappa, g, g)
            self.case_counts[1] += 1
            return 2
        if s >= 0:  # case 3, eq. (26): limit Delta -> inf, then drop slot s
            g = G[:, s].copy()
            _rank1(G, -1.0 / g[s], g, g)
            last = m - 1
            if s != last:
                self._Ct[s] = self._Ct[last]
                self._G[s, :m] = self._G[last, :m]
                self._G[:m, s] = self._G[:m, last]
                self._G[s, s] = self._G[last, last]
                self._idx[s] = self._idx[last]
                self.slot[self._idx[s]] = s
            self.slot[j] = -1
            self.m0 = last
            self.case_counts[2] += 1
            return 3
        # case 4, eq. (27): block inverse with the new column appended
        if m == self._G.shape[0]:
            self._grow()
        sc = 1.0 / (1.0 / new + b)
        v = -(sc / lam) * Gu
        self._Ct[m] = c
        _rank1(self._G[:m, :m], 1.0 / sc, v, v)
        self._G[:m, m] = v
        self._G[m, :m] = v
        self._G[m, m] = sc
        self._idx[m] = j
        self.slot[j] = m
        self.m0 = m + 1
        self.case_counts[3] += 1
        return 4

    def sweep(self, coords, column_fn, rule="newton"):
        """Run coordinate steps on ``coords`` in order; return the objective.

        Parameters
        ----------
        coords : array-like of int
            Coordinates to visit.
        column_fn : callable
            ``column_fn(j) -> c_j`` for inactive coordinates.
        rule : {"newton", "exact"}
            See :meth:`step`.

        Returns
        -------
        objective : float
            The objective after the sweep.
        """
        if self.gram_mode:  # the whole sweep compiled: O(m0^2 + m0 T) a step
            self._gram_run(coords, exact=rule == "exact")
            return self.objective
        # (callers run this under one BLAS thread: each step is a few
        # matrix-vector products of size n x m0, where threads only contend)
        for j in coords:
            j = int(j)
            self.step(j, self.column(j, column_fn), rule)
        return self.objective

    # -- exact recomputations (tests, periodic refresh) ----------------------
    def direct_G(self):
        r"""Recompute :math:`G = (D^{-1} + C^\top C/\lambda)^{-1}` from scratch.

        Uses the well-conditioned form :math:`G = \lambda D^{1/2} (\lambda I +
        B^\top B)^{-1} D^{1/2}` with :math:`B = C D^{1/2}` (a Cholesky solve),
        which stays accurate when large weights make :math:`D^{-1} + C^\top C/\lambda`
        ill-conditioned.

        Returns
        -------
        G : ndarray of shape (m0, m0)
            The matrix of eq. (23).
        """
        if self.m0 == 0:
            return np.zeros((0, 0))
        return self._scaled_factor()[0]

    def _scaled_factor(self):
        # B = C D^{1/2};  G = lam D^{1/2} (lam I + B'B)^{-1} D^{1/2}
        d = np.sqrt(self.mu[self.active])
        if self.gram_mode:  # B'B = D^{1/2} P_AA D^{1/2}, O(m0^2) from P
            PA = self._PA[: self.m0, : self.m0]
            Bt, BtB = None, d[:, None] * PA * d[None, :]
        else:
            Bt = self.Ct * d[:, None]
            BtB = Bt @ Bt.T
        inv, solve = _shifted_inverse(BtB, self.lam)
        G = self.lam * d[:, None] * inv * d[None, :]
        return G, Bt, solve

    def refresh(self):
        """Recompute ``G``, ``Z`` and the objective from the active set.

        Costs :math:`O(n m_0^2 + m_0^3)`, about one sweep, in column mode and
        :math:`O(m_0^3 + m_0^2 T)` in Gram mode; it removes the round-off
        accumulated by the rank-one updates.
        """
        m = self.m0
        if self.gram_mode:
            if m:
                G = self._scaled_factor()[0]
                self._G[:m, :m] = G
                self._V[:m] = G @ self._Q[self.active]
            # lam tr(Y'Z) = tr(Y'Y) - tr(Q_A'V)/lam
            fit = float(np.sum(self.Y * self.Y))
            if m:
                fit -= float(np.sum(self._Q[self.active] * self._V[:m])) / self.lam
        else:
            if m:
                G, Bt, H = self._scaled_factor()  # H(R) = (lam I + B'B)^-1 R
                self._G[:m, :m] = G
                # (lam I + B B')^{-1} Y = (Y - B (lam I + B'B)^{-1} B'Y) / lam
                self._Z = (self.Y - Bt.T @ H(Bt @ self.Y)) / self.lam
            else:
                self._Z = self.Y / self.lam
            fit = self.lam * float(np.sum(self.Y * self._Z))
        self._fit, self._refreshed_at = fit, self._n_updates
        self.objective = fit + self.nu * float(self.mu.sum())
        # what a refresh can achieve on this active set (conditioning-limited)
        self._floor = self.residual() if self.check_every else 0.0

    def set_nu(self, nu):
        r"""Change :math:`\nu`, as :meth:`refresh` would leave the state.

        :math:`G`, :math:`Z` (or :math:`V`) and the fit term of :math:`F` do not
        depend on :math:`\nu`: when no weight changed since the last refresh
        (a ``nu`` path's warm start: each solve ends with one), they are kept
        and only the objective and the round-off floor are recomputed, the
        same values a refresh gives (its factorisation, :math:`O(m_0^3)`, was
        a fifth of a path's refreshes); otherwise this refreshes.

        Parameters
        ----------
        nu : float
            The new :math:`\nu > 0`.
        """
        self.nu = float(nu)
        if getattr(self, "_refreshed_at", None) != self._n_updates:
            self.refresh()
            return
        self.objective = self._fit + self.nu * float(self.mu.sum())
        self._floor = self.residual() if self.check_every else 0.0


def gram_sweeps(state, rng, driver, refresh, exact=False):
    """Algorithm 2's sweeps on a Gram-mode ``state``, compiled (:func:`_gram_sweeps`).

    What ``driver.run`` does with :meth:`~kernlearn.methods.slkl.CoordinateNewton.solve`'s
    pricing and master closures, in the same order on the same numbers (the
    coordinates drawn from ``rng``, a refresh after every ``refresh``-th
    sweep, the stopping test on ``driver.tol`` and ``driver.max_iter``), the
    state and the history rows equal; the Python per sweep (about 40 us: the
    draws, the closures, the history) is gone.  One call runs until a refresh
    or a grown array needs Python, or until it has run the sweeps that fit in
    about ``_CALL_SECONDS`` at the pace of the calls before it on ``state``
    (a new state's first call: one sweep), a few calls a solve.  For a driver with no callback, time
    budget or progress output (they are per-sweep Python); the rows of one
    call share its end as their ``time``, and a Ctrl-C or a problem abandoned
    in its thread (:func:`~kernlearn.utils._threads.check_abandoned`) stops
    between calls.  The draws hold ``rng.bit_generator.lock``, as NumPy's do.

    Parameters
    ----------
    state : SLKLState
        In Gram mode; stepped in place.
    rng : numpy.random.Generator
        The coordinates' generator; it advances as the per-sweep draws did.
    driver : kernlearn.colgen.ColumnGeneration
        Its ``max_iter``, ``tol`` and :meth:`~kernlearn.colgen.ColumnGeneration.finish`.
    refresh : int
        Refresh every this many sweeps (0: never).
    exact : bool, default=False
        The exact coordinate minimiser in place of the Newton step (19).

    Returns
    -------
    result : kernlearn.colgen.ColGenResult
    """
    coords = np.empty(state.n_columns, dtype=np.int64)
    max_iter = int(driver.max_iter)
    # (grown as sweeps run: max_iter is a budget, often far above the sweeps a
    # tolerance stops at, and max_iter=10**11 rows were 2.9 TiB)
    hist = np.empty((min(max_iter, 64), 4))  # objective, violation, m0, max(kkt)
    tol = -1.0 if driver.tol is None else float(driver.tol)
    history, phase, pos, done, prev, why = History(), 0, 0, 0, np.nan, 1
    # sweeps a call may start: what fits in _CALL_SECONDS at the pace of the
    # last call on this state (a nu path's previous solve), one on a new state
    pace = getattr(state, "_sweep_seconds", None)
    per_call = 1 if pace is None else max(1, int(_CALL_SECONDS / pace))
    while why != 4 and not (why == 0 and done == max_iter):
        check_abandoned()
        # A call stops before the pricing of sweep ``cap`` + 1 (why 0, phase 0):
        # the next call draws it as this one would have, so the cap changes
        # nothing but how long a Ctrl-C or an abandonment waits for Python.
        cap = min(max_iter, done + per_call)
        if cap > len(hist):
            hist = np.concatenate([hist, np.empty((max(cap, 2 * len(hist)) - len(hist), 4))])
        start, t0 = done, time.perf_counter()
        try:
            # (numba draws without the bit generator's lock, which NumPy's own
            # draws take, with the GIL released, from the same generator)
            with rng.bit_generator.lock:
                why, phase, pos, done, prev = _gram_sweeps(
                    rng, phase, pos, done, prev, coords, cap, int(refresh), tol,
                    bool(exact),
                    state._P, state._Q, state._V, state._G, state._PA, state._idx,
                    state.slot, state.mu, state.kkt, state.case_counts, state._scal,
                    state.lam, state.nu, state.check_every, state._probes,
                    state._threshold(), hist)
        except ZeroDivisionError:
            raise state._breakdown() from None
        if done > start:  # sweeps for the next calls from this call's pace
            pace = max(time.perf_counter() - t0, 1e-9) / (done - start)
            state._sweep_seconds = pace
            per_call = max(1, int(_CALL_SECONDS / pace))
        # the rows this call completed (a sweep awaiting its refresh has none yet),
        # as the driver records them
        for i in range(len(history), done - (phase == 2)):
            m0 = int(hist[i, 2])
            history.append(iter=i + 1, objective=float(hist[i, 0]),
                           violation=float(hist[i, 1]), m0=m0, kkt=float(hist[i, 3]),
                           n_active=m0)
        if why in (1, 2, 3):
            state._resume(why)
    return driver.finish(history, "tol" if why == 4 else driver.budget_name, done)


def _shifted_inverse(BtB, lam):
    r""":math:`(\lambda I + B^\top B)^{-1}` and a solver with it, for a Gram matrix ``BtB``.

    A Cholesky factorisation (LAPACK potri: :math:`m^3` flops, against
    :math:`2m^3` for two triangular solves with the identity).  ``BtB`` is PSD
    in exact arithmetic, but with huge weights on nearly collinear columns (a
    broad kernel, small :math:`\nu`) its round-off (about
    :math:`\epsilon\|B^\top B\|`) can exceed :math:`\lambda`; the inverse is
    then taken on its eigenvalues clipped at 0 (the nearest PSD matrix).

    Returns
    -------
    inv : ndarray of shape (m, m)
    solve : callable
        ``solve(R) = inv @ R``.
    """
    m = len(BtB)
    A = np.array(BtB, dtype=float, order="C")
    A.flat[:: m + 1] += lam  # (the values of BtB + lam * I, without the identity)
    c, info = scipy.linalg.lapack.dpotrf(A, lower=False)
    if info == 0:
        inv, info = scipy.linalg.lapack.dpotri(c, lower=False)
    if info == 0:
        return (_mirrored(inv, lower=False),
                lambda R: scipy.linalg.cho_solve((c, False), R))
    e, U = np.linalg.eigh(BtB)
    e = lam + np.maximum(e, 0.0)
    return (U / e) @ U.T, lambda R: U @ ((U.T @ R) / e[:, None])


#: a strictly upper triangular mask, grown as needed: its top-left ``m x m``
#: corner is that of ``m`` (one per size was as dear as the temporaries it saves)
_UPPER = [np.zeros((0, 0), dtype=bool)]
#: the largest mask kept (1 MB): a larger ``m`` gets one of its own (its copy
#: costs as much), since the kept one outlives the fit (``4 m^2`` bytes: 1.6 GB
#: after one fit of 20,000 active columns)
_UPPER_KEPT = 1024


def _mirrored(A, lower):
    """A copy of the square ``A`` with one triangle mirrored onto the other: the
    values of ``np.tril(A) + np.tril(A, -1).T`` (``lower``) or ``np.triu(A) +
    np.triu(A, 1).T``, in one masked copy instead of four temporaries (a third
    of a refresh's inverse at ``m0 = 100``; the refreshes and each ``nu``
    value's ``G`` pay it)."""
    # (C order, as the sum it replaces: the layout of G decides the rounding of
    # the BLAS products it enters; potri returns Fortran order)
    S = np.array(A, dtype=float, order="C")
    m = len(S)
    mask = _UPPER[0]  # (read once: a fit in another thread may replace it)
    if mask.shape[0] < m:
        size = min(2 * m, _UPPER_KEPT) if m <= _UPPER_KEPT else m
        mask = np.triu(np.ones((size, size), dtype=bool), 1)
        if size <= _UPPER_KEPT:
            _UPPER[0] = mask
    mask = mask[:m, :m]
    # (each entry written is read from the other triangle, never written)
    np.copyto(S, S.T, where=mask if lower else mask.T)
    return S


def slkl_objective(columns, Y, mu, lam=1.0, nu=0.01):
    r"""Evaluate F of eq. (14) directly (dense, O(n^3); for tests and references).

    Parameters
    ----------
    columns : ndarray of shape (n_samples, n_columns)
        The columns :math:`c_m`.
    Y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        Targets.
    mu : ndarray of shape (n_columns,)
        Weights.
    lam, nu : float
        :math:`\lambda` and :math:`\nu`.

    Returns
    -------
    F : float
        The objective value.
    """
    C = np.asarray(columns, dtype=float)
    Y = np.asarray(Y, dtype=float).reshape(C.shape[0], -1)
    A = lam * np.eye(C.shape[0]) + (C * mu) @ C.T
    return lam * float(np.sum(Y * np.linalg.solve(A, Y))) + nu * float(np.sum(mu))


def extract_fit(state, res, family, rel, start=0.0):
    """Mu, centres and dual coefficients (eq. 17) of a solved state.

    ``rel`` is the solve's relative ``nu`` (the history's ``nu`` column) and
    ``start`` the seconds from the start of the ``nu`` path to the solve's,
    added to its history's ``time`` (each solve's clock began at 0, so the
    report's objective against time ran backwards at every value).
    """
    pos = np.sort(state.active)
    # eq. (17) with alpha* = 2 z: alpha~_m / 2 = mu_m (c_m' z) / sqrt(k(x_m, x_m)),
    # and mu_m (c_m' z) = W_m (SLKLState.W: computed as G C_A'y / lam, without
    # the cancellation of c_m'z ~ sqrt(nu), which at mu_m ~ 1e4 and 20,000 rows
    # lost every digit: protein, 4x the MSE)
    dual = res.coef[pos] * family._scale[pos][:, None]
    history = res.history.as_dict()
    history["nu"] = np.full(len(history["objective"]), rel)
    history["time"] = history["time"] + start
    obj = history["objective"]
    if np.any(np.diff(obj) > 1e-8 * np.abs(obj[:-1])):
        # F never increases in exact arithmetic (Theorem 1a); an increase means
        # the G bookkeeping lost accuracy (weights far above 1e4 on nearly
        # collinear columns, i.e. nu very small for the scale of y).
        warn(
            f"SLKL objective increased between sweeps (max weight "
            f"{state.mu.max():.3g}): the Woodbury updates lost accuracy. "
            "Increase nu or rescale y.",
            ConvergenceWarning,
        )
    return {
        "mu": state.mu.copy(), "nu": state.nu, "pos": pos, "dual": dual,
        "n_iter": res.n_iter, "converged": res.converged, "history": history,
        "objective": state.objective, "stop_reason": res.state.stop_reason,
    }
