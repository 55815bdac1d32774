r"""SLKL: stochastic low-rank kernel learning (paper 003, Algorithms 1-2).

Minimises over :math:`\mu \ge 0`

.. math:: F(\mu) = \lambda \sum_t y_t^\top (\lambda I + \textstyle\sum_m \mu_m c_m c_m^\top)^{-1} y_t
          + \nu \sum_m \mu_m

(eq. 14, summed over the outputs) by stochastic coordinate Newton descent:
coordinates are drawn uniformly at random among the ``M`` sampled Nystrom
columns, ``M`` per *sweep*, each updated by the projected Newton step (19)
with :math:`G` and :math:`Z` kept by the Woodbury updates (24)-(27) of
:class:`~kernlearn.solvers.coordinate_newton.SLKLState`; the run stops when
:math:`F(\mu^{k-M}) - F(\mu^k) < \epsilon F(\mu^{k-M})`.

Cost (sec. 3.2): a coordinate step is :math:`O(n m_0 T)` when the weight
changes and :math:`O(nT)` when a zero weight stays zero, so a sweep is
:math:`O(M n m_0 T)`: linear in ``n`` for fixed ``M``.  The periodic
round-off check of the state measures the residual on one random
combination of the outputs (:math:`O(n m_0)`), not on all of them.
"""

import numpy as np

from ..colgen import ColumnGeneration
from ..families._base import Candidates
from ..solvers._base import BaseSolver, SolverResult, single_blas_thread
from ..solvers.coordinate_newton import SLKLState

__all__ = ["CoordinateNewton"]


class CoordinateNewton(BaseSolver):
    r"""Stochastic coordinate Newton descent (SLKL, paper 003, Algorithm 2).

    At each iteration a coordinate :math:`m_k` is drawn uniformly from the
    ``M`` candidates and updated by the projected Newton step (19),

    .. math::

        \mu_{m_k} \leftarrow \Big(\mu_{m_k} - \frac{\partial_{m_k} F}
        {\partial^2_{m_k} F}\Big)_+ ,

    with the derivatives (20)-(21); :math:`G` is updated by the rank-one or
    block formulas (24)-(27).  Iterations are grouped in *sweeps* of ``M``;
    the run stops when :math:`F(\mu^{k-M}) - F(\mu^k) < \epsilon F(\mu^{k-M})`
    (the rule of Algorithm 1, evaluated at the end of each sweep; the paper
    prints the difference with the opposite sign, which would always hold
    since F decreases).

    Parameters
    ----------
    nu : float, default=0.01
        Weight :math:`\nu > 0` of :math:`\sum_m \mu_m` (with :math:`\lambda = 1`
        the only hyper-parameter, sec. 4.1).
    lam : float, default=1.0
        :math:`\lambda`; by Proposition 3 only :math:`\lambda\nu` matters.
    tol : float, default=1e-4
        :math:`\epsilon` of the stopping rule.
    max_iter : int, default=100
        Maximum number of sweeps (of ``M`` coordinate steps each).
    rule : {"newton", "exact"}, default="newton"
        Step rule, see :meth:`SLKLState.step`.
    refresh : int, default=1
        Recompute ``G`` and ``Z`` from scratch every ``refresh`` sweeps
        (:meth:`SLKLState.refresh`, about the cost of one sweep) to wash out
        round-off of the rank-one updates; 0 never does.
    verbose : int, default=0
        Progress lines (one per sweep) printed by the column-generation driver.

    References
    ----------
    Machart, Peel, Anthoine, Ralaivola, Glotin (2011), Stochastic Low-Rank Kernel
    Learning for Regression, ICML, Algorithms 1-2, eqs. (19)-(27);
    Nesterov (2010), coordinate descent on huge-scale problems.
    """

    required_loss_methods = ()
    required_penalty_methods = ()

    def __init__(self, nu=0.01, lam=1.0, tol=1e-4, max_iter=100, rule="newton",
                 refresh=1, verbose=0):
        self.nu = nu
        self.lam = lam
        self.tol = tol
        self.max_iter = max_iter
        self.rule = rule
        self.refresh = refresh
        self.verbose = verbose

    def _check(self):
        if not (np.isscalar(self.nu) and self.nu > 0):
            raise ValueError(f"nu must be a positive number, got {self.nu!r}.")
        if not (np.isscalar(self.lam) and self.lam > 0):
            raise ValueError(f"lam must be a positive number, got {self.lam!r}.")
        if self.rule not in ("newton", "exact"):
            raise ValueError(f"rule must be 'newton' or 'exact', got {self.rule!r}.")

    def init_state(self, Y, n_columns, columns=None, gram=None):
        """Fresh state at :math:`\\mu = 0` (Algorithm 2's initialisation).

        Parameters
        ----------
        Y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Targets.
        n_columns : int
            Number ``M`` of candidate columns.
        columns : ndarray of shape (M, n_samples), optional
            All columns (as rows): the state then works in Gram mode.
        gram : ndarray of shape (M, M), optional
            Their Gram matrix, when already computed.

        Returns
        -------
        state : SLKLState
            The state at zero weights.
        """
        self._check()
        return SLKLState(Y, n_columns, lam=self.lam, nu=self.nu, columns=columns,
                         gram=gram)

    def solve(self, columns, Y, n_columns=None, rng=None, state=None, callback=None,
              time_budget=None, gram=None):
        """Run Algorithm 2 until the stopping rule, ``max_iter`` sweeps or a budget.

        Parameters
        ----------
        columns : ndarray of shape (n_samples, M) or callable
            The candidate columns :math:`c_m` (the state then works on their
            Gram matrix: a step costs :math:`O(m_0^2 + m_0 T)`, not
            :math:`O(n m_0)`), or ``columns(j) -> c_j`` (computed on demand).
        Y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Targets.
        n_columns : int, optional
            ``M``, required when ``columns`` is a callable.
        rng : numpy.random.Generator or int, optional
            Source of the random coordinates.
        state : SLKLState, optional
            Warm start (continues from its :math:`\\mu`).
        callback : callable, optional
            ``callback(row) -> bool`` after each sweep; truthy stops.
        time_budget : float, optional
            Seconds after which no new sweep starts.
        gram : ndarray of shape (M, M), optional
            :math:`C^\top C` for array ``columns``, when already computed (one
            product shared by problems on the same columns).

        Returns
        -------
        result : SolverResult
            ``coef`` is :math:`\\mu`; ``state`` holds the :class:`SLKLState`
            under ``"slkl"``; ``history`` has one row per sweep (objective,
            ``m0``, max KKT violation seen, time).
        """
        if callable(columns):
            if n_columns is None:
                raise ValueError("n_columns is required when columns is a callable.")
            column_fn, M = columns, int(n_columns)
        else:
            cols = np.asarray(columns, dtype=float)
            if cols.ndim != 2:
                raise ValueError(
                    f"columns must be 2-D (n_samples, M), got {cols.shape}."
                )
            colsT = np.ascontiguousarray(cols.T)
            column_fn, M = colsT.__getitem__, cols.shape[1]
        rng = np.random.default_rng(rng)
        if state is None:
            state = self.init_state(Y, M, None if callable(columns) else colsT, gram)

        def price():
            # Algorithm 1: coordinates drawn uniformly at random in S, M per
            # sweep; scores are the KKT violations measured at their last visit.
            coords = rng.integers(0, M, size=M)
            return Candidates(params=coords, scores=state.kkt[coords])

        n_sweeps = [0]

        def master(cand):
            obj = state.sweep(cand.params, column_fn, self.rule)
            n_sweeps[0] += 1
            if self.refresh and n_sweeps[0] % self.refresh == 0:
                state.refresh()
                obj = state.objective
            return obj, {"m0": state.m0, "kkt": float(np.max(state.kkt))}

        driver = ColumnGeneration(
            max_iter=self.max_iter, tol=self.tol, verbose=self.verbose,
            callback=callback, time_budget=time_budget, name="slkl",
        )
        with single_blas_thread():
            res = driver.run(price, master, n_active=lambda: state.m0)
        return SolverResult(
            coef=state.mu.copy(), intercept=0.0, state={"slkl": state},
            history=res.history, converged=res.converged, n_iter=res.n_iter,
        )
