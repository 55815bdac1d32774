r"""GrFL: learning with infinitely many features (paper 000, Algorithm 1).

Column generation over a continuously parametrised family of features:

1. **pricing** samples ``n_candidates`` (:math:`k_r`) feature parameters,
   evaluates their unit-norm columns and keeps the one that most violates
   condition (7) (the penalty's dual norm :math:`\|h\|_{q'}` of its
   correlations with the loss gradients, across tasks and within the
   feature's group, against :math:`\lambda_p`) or condition (10) (the same for
   the shared weights, against :math:`\lambda_s`); nothing is added when the
   relative violation is at most ``eps`` (Algorithm 1, line 6);
2. **master** re-solves the restricted problem (17) with bias terms on the active
   features, warm-started (line 11), by proximal Newton
   (:mod:`kernlearn.solvers.grfl_newton`, the default), ADMM (Algorithm 2) or FISTA.

Cost and where the time goes (sec. 4.2): pricing is :math:`O(k_r n T)`, one
master iteration :math:`O(n p T)` with ``p`` active columns, so a fit is
linear in ``n`` for a fixed feature budget.  Three choices keep the
constant small, each keeping the guarantees of Algorithm 1:

* **Inexact intermediate masters.**  Proposition 3 only needs the master to
  decrease the objective when a violating feature enters; the masters
  solved while the path grows are capped at ``path_iter`` iterations
  (warm-started, so the work is not lost), and whenever pricing finds no
  violation after such a master, the master is first finished to ``tol``
  and pricing is repeated.  The returned model therefore always comes from
  a master solved to ``tol`` (or its ``max_iter``) and passes the same
  violation test as with exact masters.
* **Several features per outer iteration** (``batch="auto"``): one at a
  time up to 7 features, then the ``n_active // 4`` best exact violators of
  one pricing sample of ``n_candidates * ceil(sqrt(batch))`` parameters
  (after a step that finds fewer, as many as it found), so a path to ``k``
  features takes about :math:`4 \ln k` masters instead of ``k``; each
  added feature violates (7)/(10), so Proposition 3 still applies (the path
  differs from Algorithm 1's, which is ``batch=1``).
* **Pricing on a row subsample.**  With ``pricing_subsample = m < n`` the
  correlations of the :math:`k_r` candidates are estimated on ``m`` rows
  drawn once (rescaled by :math:`\sqrt{n/m}`), and the ``n_verify`` best
  candidates are then re-scored exactly on all rows; the one added is the
  best *exact* violator, so every added feature truly violates (7)/(10)
  (Proposition 3 applies), and the ``eps`` stopping rule is checked on exact
  violations.  Pricing costs :math:`O(k_r m T + n_{verify} n T)`.

The state of a run (active columns, their Gram matrix, the master's state:
its point with the Newton master's margins and Hessians, or ADMM's dual
variables) is kept on the :class:`GrFL` object, so a path can be extended to
a larger feature budget on the same data (warm start).
"""

import copy
import math
from dataclasses import dataclass

import joblib
import numpy as np
from sklearn.utils import check_random_state

from ..colgen import ColumnGeneration
from ..families._base import Candidates
from ..families._infinite import valid_scores
from ..penalties import GroupL1L2
from ..solvers._base import check_compatible, single_blas_thread
from ..solvers._dirty import DirtyState, pad_state
from . import _grfl_average
from ._grfl_master import (_GrFLProblem, block_norms, capped_solver, intercept_only,
                           n_params, one_master_warning, paper_loss_factor, penalty_level,
                           prune, solve_master)
from ._grfl_warm import (GrFLWarmStart, _setting_key, continue_path,  # noqa: F401
                         kept_on_failure, kept_path)
from ._grfl_tasks import task_intercepts, task_weighted_loss
from ._grfl_select import (AUTO_MAX_FEATURES, CV_BELOW, CV_FOLDS, stop_of_folds,  # noqa: F401
                           DEFAULT_LEVEL, LEVEL_BELOW, LEVEL_MAX_FEATURES, MIN_VALIDATION_ROWS,
                           PATIENCE_EXTRA, PATIENCE_FACTOR, VALIDATION_FRACTION, _curve_at,
                           HeldOutRows, _HoldOut, _row_subset, _validation_history,
                           _validation_split, auto_budget, auto_levels, select_level,
                           select_level_held_out)
from ._result import MethodResult

__all__ = ["GrFL", "GrFLResult", "fit_grfl", "intercept_only", "paper_loss_factor",
           "solve_master"]

# pricing_subsample="auto": rows used to estimate violations when n is more than
# twice as large (the best estimates are then re-scored on all rows)
AUTO_PRICING_ROWS = 2000
# path_iter="auto" with the Newton master: two Newton steps per intermediate
# master (ijcnn1, 100 features: 4.8 s CPU against 6.0 s solving each to tol,
# the same test accuracy); first-order masters get 20 iterations.
NEWTON_PATH_ITER = 2
# Coordinate-descent sweeps per Newton direction in the intermediate masters (the
# final master keeps its cap); 10-30, 80-1000 or one step were slower (BENCHMARKS.md).
PATH_SWEEPS = 50
# Candidates re-scored exactly (float64) after a float32 ranking on all rows.
N_EXACT = 3
# batch="auto": max(1, n_active // BATCH_DIVISOR) features per outer iteration
BATCH_DIVISOR = 4
# ... from a pricing sample of n_candidates * ceil(batch ** SAMPLE_POWER)
SAMPLE_POWER = 0.5


class GrFL:
    r"""Algorithm 1 of paper 000 with its state, extendable to more features.

    Parameters
    ----------
    family : InfiniteFamily
        Fitted family (``sample``, ``columns``, ``correlations``, ``price``).
    loss : BaseLoss
        Margin loss (``value``, ``grad_margin``; ``hess_margin`` for Newton,
        ``prox`` for ADMM).
    penalty_p : BasePenalty
        :math:`\Omega_p` (its ``alpha`` is :math:`\lambda_p`).
    penalty_s : BasePenalty or None
        :math:`\Omega_s` on the shared weights (``alpha`` = :math:`\lambda_s`).
    solver : BaseSolver
        Restricted-master solver taking a :class:`~kernlearn.solvers.DirtyProblem`.
    n_candidates : int, default=100
        :math:`k_r`, parameters sampled per pricing step.
    eps : float, default=1e-3
        Relative violation below which no feature is added.
    fit_intercept : bool, default=True
        One unpenalised bias per task.
    pricing_subsample : int or None, default=None
        Rows used to estimate the candidates' violations (``None``: all).
    n_verify : int, default=25
        Best estimated candidates re-scored exactly on all rows when
        ``pricing_subsample`` is used (on ijcnn1, GrFL-M with 100 features:
        test accuracy 0.966 with 5, 0.973 with 25, 0.976 pricing on all rows).
    path_iter : int or None, default=None
        Iteration cap of the intermediate masters (``None``: the solver's own).
    time_budget : float or None, default=None
        Seconds after which no feature is added.
    verbose : int, default=0
        One line per added feature.
    name : str, default="GrFL"
        Prefix of the progress lines.
    batch : int or "auto", default=1
        Features added per outer iteration (the best violators of one
        pricing sample); ``"auto"``: see :meth:`batch_size`.
    callback : callable or None, default=None
        ``callback(row) -> bool`` after each outer iteration (the run is then
        at its new model); true stops the path (``stop_reason="callback"``).

    Attributes
    ----------
    p : int
        Active columns (features times group size).
    params : list of ndarray
        Parameters of the active features, in order of entry (in the rows' span
        where its scores are the model's; :meth:`features` completes them).
    scales : list of ndarray
        ``1 / ||column||`` of each active feature's columns.
    result : SolverResult or None
        Last master result (``None`` before the first feature).
    objective : float
        Objective (17) of the current model.
    last_violation : float
        Largest relative violation at the last pricing step.
    history : list of dict
        One row per outer iteration (``objective``, ``violation``,
        ``n_active``, ``kkt``, ``master_iter``, ``time``).
    stop_reason : str
        Why the last :meth:`extend` stopped.
    converged : bool
        Whether it stopped on the violation test.

    References
    ----------
    Rakotomamonjy, Flamary, Yger (2013), "Learning with infinitely many
    features", Mach. Learn. 91:43-66, Proposition 3, Algorithms 1-2, sec. 4.2.
    """

    def __init__(self, family, loss, penalty_p, penalty_s, solver, *, n_candidates=100,
                 eps=1e-3, fit_intercept=True, pricing_subsample=None, n_verify=25,
                 path_iter=None, time_budget=None, verbose=0, name="GrFL", batch=1,
                 callback=None):
        self.family = family
        self.loss = loss
        self.penalty_p = penalty_p
        self.penalty_s = penalty_s
        self.solver = solver
        self.n_candidates = n_candidates
        self.eps = eps
        self.fit_intercept = fit_intercept
        self.pricing_subsample = pricing_subsample
        self.n_verify = n_verify
        self.path_iter = path_iter
        self.time_budget = time_budget
        self.verbose = verbose
        self.name = name
        self.batch = batch
        self.callback = callback

    # ------------------------------------------------------------------ setup
    def start(self, X, Y, task_rows, rng, sample_weight=None, b0=None, span=None):
        """Initialise the run at the model without features.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training inputs.
        Y : ndarray
            ``(n, T)`` targets when every task uses every row (``task_rows``
            ``None``), else ``(n,)`` with ``task_rows`` the rows of each task.
        task_rows : list of ndarray or None
            Rows of each task.
        rng : numpy.random.RandomState or Generator
            Source of the sampled parameters (and of the pricing rows).
        sample_weight : ndarray of shape (n_samples,), optional
            Row weights, already inside ``loss`` (a
            :class:`~kernlearn.losses.WeightedLoss`); here they make the
            columns unit-norm in the weighted sense, so that integer weights
            act as repeated rows.
        b0 : ndarray of shape (T,), optional
            The biases of the model without features (:func:`intercept_only`), if known.
        span : tuple, optional
            The family's ``in_span(X, sample_weight)``, if known (another path's).

        Returns
        -------
        self : GrFL
        """
        self.X, self.Y, self.task_rows, self.rng = X, Y, task_rows, rng
        self.sample_weight = sample_weight
        self.n = X.shape[0]
        self.T = Y.shape[1] if task_rows is None else len(task_rows)
        self.gs = self.family.group_size
        self.p = 0
        self._budget = 0  # feature budget of the current extend(); sizes the buffers
        self.Phi, self.gram, self._colsum = np.empty((self.n, 0)), np.empty((0, 0)), np.empty(0)
        self.params, self.scales = [], []
        if b0 is not None:
            self.b0 = np.array(b0, dtype=float)
        elif self.fit_intercept:
            self.b0 = task_intercepts(self.loss, Y, task_rows)
        else:
            self.b0 = np.zeros(self.T)
        T = self.T
        self.state = DirtyState(W=np.zeros((0, T)), ws=np.zeros(0), b=self.b0)
        self.margins = None
        self.result = None
        self.exact = True  # the current master was solved to the solver's tol
        self.objective = np.nan
        self.last_violation = np.nan
        self.history = []
        self.stop_reason, self.converged = None, False
        self._sub = None
        # violators found by the last pricing step, once one found fewer than
        # asked (batch_size then asks for no more); None before that
        self._found = None
        m = self.pricing_subsample
        # pricing rows, drawn once per fit among the rows of positive weight: a
        # zero weight removes a row (drawn among all, the rows and the features
        # priced on them were those of another fit than the one without it)
        pos = None if sample_weight is None else np.flatnonzero(sample_weight > 0)
        if m is not None and m < (self.n if pos is None else pos.size):
            sub = rng.choice(self.n if pos is None else pos.size, size=int(m), replace=False)
            self._sub = np.sort(sub if pos is None else pos[sub])
            self._X_sub = X[self._sub]
        in_span = getattr(self.family, "in_span", None)
        if span is None:  # (the paths on all rows share it: an SVD or eigh each)
            span = in_span(X, sample_weight) if in_span and self._sub is None else None
        self._span = span
        # a span whose scores are the model's: features stay in its coordinates and
        # are completed where they leave it (features), each from its own generator
        self._seed = (np.random.default_rng(rng).integers(2**63) if self._span and getattr(
            self._span[2], "scores_in_span", False) else None)
        return self

    def features(self, index, out=None):
        """Full parameters (``len(index) x n_params``, into ``out`` if given) of the active
        features ``index``: a span's completed, feature ``i`` from the generator of
        ``(seed, i)`` (the same whenever asked)."""
        if not len(index):
            return np.zeros((0, n_params(self))) if out is None else out
        rows = np.stack([self.params[i] for i in index], out=out if self._seed is None else None)
        return rows if self._seed is None else _grfl_average.complete_rows(  # (or deferred)
            self._span[2], rows, [(self._seed, i) for i in index], out)

    def _capacity(self, n_features):
        """The buffers' new column count for ``n_features`` features (``None``: room enough)."""
        self._budget = max(self._budget, n_features)
        cap = self.gs * n_features
        if self.Phi.shape[1] >= cap:
            return None
        # grown by doubling as features arrive, never to the whole budget at
        # once: max_features=10**9 ("no cap") is a MemoryError otherwise
        return max(cap, min(2 * self.Phi.shape[1], self.gs * self._budget))

    def _reserve(self, n_features):
        """Grow the column and Gram buffers to hold ``n_features`` features."""
        cap = self._capacity(n_features)
        if cap is None:
            return
        # column-major: the active block Phi[:, :p] is then one contiguous
        # array that BLAS reads directly (a row-major slice is copied by every
        # product, 3.5x slower per ADMM iteration measured at n = 10^4, p = 160)
        Phi = np.empty((self.n, cap), order="F")
        Phi[:, : self.p] = self.Phi[:, : self.p]
        self.Phi = Phi
        self._grow_gram(cap)

    def _grow_gram(self, cap):
        """Grow the Gram matrix and the column sums of the active columns to ``cap``."""
        gram, colsum = np.empty((cap, cap)), np.empty(cap)
        gram[: self.p, : self.p] = self.gram[: self.p, : self.p]
        colsum[: self.p] = self._colsum[: self.p]
        self.gram, self._colsum = gram, colsum

    # ---------------------------------------------------------------- pricing
    def problem(self):
        """The restricted master (17) on the active columns.

        Returns
        -------
        problem : DirtyProblem
        """
        p = self.p
        return _GrFLProblem(
            self.Phi[:, :p], self.Y, self.loss, self.penalty_p, self.penalty_s,
            indptr=np.arange(0, p + 1, self.gs), task_rows=self.task_rows,
            fit_intercept=self.fit_intercept,
            gram=self.gram[:p, :p] if self.task_rows is None else None,
            colsum=self._colsum[:p] if self.task_rows is None else None)

    def grad_matrix(self):
        """Loss gradients at the current margins, one column per task.

        Returns
        -------
        G : ndarray of shape (n_samples, T)
            Zero outside a task's rows.
        """
        M = self.margins
        if M is None:
            # the model without features: each task's optimal constant
            prob = self.problem()
            M = prob.margins(*prob.zeros()[:2], self.b0)
        else:
            prob = self._prob  # the master that produced the margins
        # (the compiled Newton master's loss gradients at its margins, if kept)
        g = getattr(self.state, "loss_grad", None)
        if g is None or getattr(self.state, "margins", None) is not M:
            g = prob.loss_gradients(M)
        if self.task_rows is None:
            return g
        G = np.zeros((self.n, self.T))
        for t, (r, gt) in enumerate(zip(self.task_rows, prob.task_margins(g))):
            G[r, t] = gt
        return G

    def violation(self, H):
        """Relative violation of conditions (7) and (10) of each candidate.

        Parameters
        ----------
        H : ndarray of shape (k, group_size, T)
            Correlations of the candidates' unit-norm columns with the gradients.

        Returns
        -------
        v : ndarray of shape (k,)
            ``max(||h||_* / lambda_p, ||sum_t h_t||_* / lambda_s) - 1`` with
            ``||.||_*`` the dual norm of the penalty (for the per-task
            penalties, the largest per-task dual norm).
        """
        k, gs, T = H.shape
        if k and type(self.penalty_p) is GroupL1L2 and gs * T > 1:
            # the default penalty: the l2 norm of each candidate's block, the sums
            # GroupL1L2.matrix_dual_norm forms (without its bookkeeping: hot path)
            v = block_norms(H)
        else:
            # the candidates stacked as the row groups of one (k * gs, T) block; the
            # penalty's dual norm is joint across tasks or per task (PerTaskL1Lq)
            rows = np.arange(0, k * gs + 1, gs)
            v = self.penalty_p.matrix_dual_norm(H.reshape(k * gs, T), rows)
        v = v / penalty_level(self.penalty_p)
        if self.penalty_s is not None:
            hs = H.sum(axis=2)
            ips = np.arange(0, hs.size + 1, self.gs)
            vs = self.penalty_s.dual_norm(hs.ravel(), ips).reshape(k, -1).max(axis=1)
            v = np.maximum(v, vs / penalty_level(self.penalty_s))
        return v - 1.0

    def batch_size(self, budget):
        r"""Features the next outer iteration may add (``budget``: room left).

        ``batch="auto"`` adds the ``b = max(1, floor(n_active / 4))`` best
        violators of one pricing sample of ``n_candidates * ceil(sqrt(b))``
        parameters (ijcnn1, 100 features: accuracy 0.948 sampling
        ``n_candidates``, 0.950 this way, 0.953 sampling ``b`` times as many
        at 1.3x the time and up to 4x on small sets that stop early, 0.962
        one at a time at 4x the time): one at a time up to 7 features (the
        paper's Algorithm 1), then about 25 % more per outer iteration, so a
        path to ``k`` features takes :math:`O(\log k)` masters and pricing
        steps instead of ``k``.  Every added feature violates (7) or (10) by
        more than ``eps`` (so Proposition 3 still applies).

        Once a pricing step finds fewer violators than asked, the path asks
        for as many as the last step found (never more, so the size only
        shrinks, down to one at a time) from a sample of
        ``n_candidates * ceil(sqrt(b))``.  Falling back to one at a time
        instead cost one master per feature for the rest of the path: with
        ``max_features=200`` (the classifier's largest default budget) a step
        that found 23 of 24 violators left 66-82 one-feature iterations,
        71x the time of ``Nystroem(200) + LinearSVC`` on a 100-class set
        (12-15x this way) and 6.5x on pendigits (2.4-3x).  At the default
        budgets on 36 classification sets as many or one more were within 1
        accuracy point of that baseline (two seeds).  Paths may run further:
        the larger samples still find violators where one of
        ``n_candidates`` found none (small sets: up to about 2x their few
        hundredths of a second; eeg-eye-state with ``max_features=200``: 129
        features instead of 95, 2.3x the time, +0.5 point).  The
        size depends only on the active count and the counts found (for a
        given seed the path is deterministic), so paths are the same up to a
        budget that is one of their sizes.
        """
        k = self.p // self.gs
        b = max(1, k // BATCH_DIVISOR) if self.batch == "auto" else int(self.batch)
        if self._found is not None and self.batch == "auto":
            b = min(b, self._found)  # a step found fewer violators than asked
        return max(1, min(b, budget, self.n_candidates))

    def _best_candidate(self, n_best=1):
        G = self.grad_matrix()
        fam, w = self.family, self.sample_weight
        # float32 columns rank the candidates (errors near 1e-6) where that is
        # cheaper; the best few are scored exactly (the violations are exact)
        f32 = getattr(fam, "ranks_in_float32", None)
        low = bool(f32(self.X, self.T) if f32 else getattr(fam, "float32_columns", False))
        n_sample = self.n_candidates * math.ceil(n_best ** SAMPLE_POWER)
        n_exact = min(n_best + N_EXACT - 1, n_sample)
        fam_x, X_x = fam, self.X  # (where the best few are scored exactly)
        if self._sub is None:
            # (data wider than long: priced in the rows' span, see in_span; where its
            # scores are the model's, scored there too and the features kept in it)
            fam_p, X_p, complete = self._span or (fam, self.X, None)
            if self._seed is not None:
                fam_x, X_x, low = fam_p, X_p, bool(f32(X_p, self.T))
            rescore = low or (complete is not None and X_x is self.X)
            est = fam_p.price(G, k=n_exact if rescore else n_best, rng=self.rng, X=X_p,
                              n_sample=n_sample, score=self.violation, sample_weight=w,
                              low_precision=low)
            if not rescore:
                return est
            params = est.params if X_x is X_p else complete(est.params, self.rng)
        else:
            # correlations of unit-norm columns on m rows, times sqrt(n/m),
            # estimate those on all rows; the best estimates are then ranked on
            # all rows
            boost = np.sqrt(self.n / len(self._sub) if w is None
                            else w.sum() / max(w[self._sub].sum(), 1e-300))
            est = fam.price(G[self._sub],
                            k=min(max(self.n_verify, n_best + N_EXACT), n_sample),
                            rng=self.rng, X=self._X_sub, n_sample=n_sample,
                            score=lambda H: self.violation(H * boost),
                            sample_weight=None if w is None else w[self._sub],
                            low_precision=low)
            params = est.params
            if low:
                H, norms = fam.correlations(params, self.X, G, w, low_precision=True)
                s = valid_scores(self.violation(H), norms)
                params = params[np.argsort(-s, kind="stable")[:n_exact]]
        H, norms = fam_x.correlations(params, X_x, G, w)
        s = valid_scores(self.violation(H), norms)
        best = np.argsort(-s, kind="stable")[:n_best]
        return Candidates(params=params[best], scores=s[best], group_size=self.gs,
                          extra={"norms": norms[best], "H": H[best]})

    def price(self):
        """Most violating sampled feature, or ``None`` (Algorithm 1, lines 4-6).

        After an inexact intermediate master, a negative answer first
        finishes the master and prices again, so stopping is decided on a
        master solved to ``tol``.

        Returns
        -------
        candidates : Candidates, None or tuple
            The violators with a relative violation above ``eps`` (the best
            ``batch_size`` of the sample), ``None`` when none is, or
            ``(None, "max_features")`` once the feature budget is met.
        """
        if self.p + self.gs > self.gs * self._budget:  # the feature budget is met
            return None, "max_features"
        n_best = self.batch_size(self._budget - self.p // self.gs)
        cand = self._best_candidate(n_best)
        if not cand.scores[0] > self.eps and not self.exact:
            self._solve(exact=True)
            cand = self._best_candidate(n_best)
        self.last_violation = float(cand.scores[0])
        keep = (cand.scores > self.eps).nonzero()[0]
        if keep.size < n_best or self._found is not None:
            self._found = max(1, keep.size)
        if not keep.size or keep.size == len(cand.scores):  # (none or all: as they are)
            return cand if keep.size else None
        extra = None if cand.extra is None else {k: v[keep] for k, v in cand.extra.items()}
        return Candidates(params=cand.params[keep], scores=cand.scores[keep],
                          group_size=self.gs, extra=extra)

    # ----------------------------------------------------------------- master
    def _path_solver(self):
        """The solver of the intermediate masters: ``solver`` capped at ``path_iter``."""
        if self.path_iter is None or not hasattr(self.solver, "max_iter"):
            return self.solver
        self._capped = capped_solver(self.solver, self.path_iter, PATH_SWEEPS,
                                     self.__dict__.get("_capped"))
        return self._capped[1]

    def _solve(self, exact):
        solver = self.solver if exact else self._path_solver()
        # the uncapped solver's solve may be the returned master (path_iter=None:
        # every one is, and max_features="auto" refits through it): reported too
        exact = exact or solver is self.solver
        prob = self.problem()
        res = solve_master(solver, prob, pad_state(self.state, self.p, self.T), exact)
        self.state, self.result, self._prob = res.state, res, prob
        self.exact = exact or res.converged
        U, us = res.coef
        # a master that returns the margins of its point (the Newton master)
        # also returns the objective there: no product, no penalty to recompute
        M = getattr(res.state, "margins", None)
        if M is None:
            self.margins = prob.margins(U, us, res.intercept)
            self.objective = prob.objective(U, us, res.intercept, self.margins)
        else:
            self.margins, self.objective = M, float(res.state.objective)
        return res

    def master(self, cand):
        """Add the candidates' unit-norm columns and re-solve (lines 7-11).

        Parameters
        ----------
        cand : Candidates
            The features to add (one row each).

        Returns
        -------
        objective : float
        extras : dict
            ``kkt`` and ``master_iter`` of the solve.
        """
        p0, p = self.p, self.p + self.gs * len(cand.params)
        self._reserve(p // self.gs)
        fam, X = self._span[:2] if self._seed is not None else (self.family, self.X)
        block = fam.columns(cand.params, X)
        w = self.sample_weight
        # (np.linalg.norm(block, axis=0) without its checks and copy)
        norms = (np.sqrt(np.add.reduce(block * block, axis=0)) if w is None
                 else np.sqrt(np.einsum("ij,ij,i->j", block, block, w)))
        if not norms.min(initial=np.inf) > 0:  # (an all-zero column: kept at zero)
            norms = np.where(norms > 0, norms, 1.0)
        block = block / norms
        self.Phi[:, p0:p] = block
        self.gram[:p, p0:p] = self.Phi[:, :p].T @ block
        self.gram[p0:p, :p0] = self.gram[:p0, p0:p].T
        # (each column's sum, as Phi[:, :p].sum(axis=0) gives it)
        self._colsum[p0:p] = np.add.reduce(self.Phi[:, p0:p], axis=0)
        self.params.extend(cand.params)
        self.scales.extend((1.0 / norms).reshape(len(cand.params), self.gs))
        self.p = p
        res = self._solve(exact=False)
        return self.objective, {"kkt": float(res.state["kkt"]),
                                "master_iter": int(res.n_iter)}

    # ------------------------------------------------------------------- run
    def extend(self, max_features):
        """Run Algorithm 1 until ``max_features`` features are active in total.

        Parameters
        ----------
        max_features : int
            Feature budget of the whole path (features already active count).

        Returns
        -------
        self : GrFL
        """
        self._budget = max_features
        self._reserve(min(max_features, self.p // self.gs + 8))
        n_new = max(max_features - self.p // self.gs, 0)
        colgen = ColumnGeneration(max_iter=n_new, tol=None, verbose=self.verbose,
                                  callback=self.callback,
                                  time_budget=self.time_budget, name=self.name,
                                  budget_name="max_features", budget=max_features)
        # every step is a product with an n x p matrix, memory bound: BLAS
        # threads only add synchronisation overhead there
        with single_blas_thread():
            out = colgen.run(self.price, self.master, n_active=lambda: self.p // self.gs)
            if not self.exact:
                # budget reached after an intermediate master: finish it
                self._solve(exact=True)
        if out.history.rows:
            # the last row describes the returned (finished) master
            out.history.rows[-1].update(objective=self.objective,
                                        kkt=float(self.state["kkt"]))
        t_prev = self.history[-1]["time"] if self.history else 0.0
        for row in out.history.rows:
            row["time"] = row["time"] + t_prev
        self.history = self.history + out.history.rows
        self.stop_reason, self.converged = out.stop_reason, out.converged
        return self

    def coefficients(self):
        """Weights of the active columns and biases of the current model.

        Returns
        -------
        U : ndarray of shape (p, T)
            Task-specific weights.
        us : ndarray of shape (p,)
            Shared weights.
        b : ndarray of shape (T,)
            Biases.
        """
        if self.result is None:
            return np.zeros((0, self.T)), np.zeros(0), np.asarray(self.b0, dtype=float)
        U, us = self.result.coef
        return U, us, np.asarray(self.result.intercept, dtype=float)


@dataclass(frozen=True)
class GrFLResult(MethodResult):
    """Everything a GrFL fit exposes (on the inputs and targets it was given).

    Parameters
    ----------
    family : InfiniteFamily
        The fitted family (evaluates :attr:`features`).
    features : ndarray or DeferredRows of shape (n_kept, n_params)
        Parameters of the kept features (non-zero weight in some task; ``_grfl_average``).
    feature_scales : ndarray of shape (n_kept, group_size)
        ``1 / ||column||`` of each kept feature's training columns.
    coef : ndarray of shape (T, n_kept * group_size)
        :math:`w_t + \\tilde w` per task.
    intercept : ndarray of shape (T,)
        Biases :math:`b_t`.
    task_coef : ndarray of shape (T, n_kept * group_size)
        Task-specific weights :math:`w_t`.
    shared_coef : ndarray of shape (n_kept * group_size,)
        Shared weights :math:`\\tilde w`.
    objective : float
        Final objective (17).
    last_violation : float
        Largest relative violation at the last pricing step.
    master : str
        Class name of the restricted-master solver that ran (what
        ``solver="auto"`` chose).
    max_features : int or None
        The feature budget used (chosen on held-out rows with
        ``max_features="auto"``).
    lambda_p : float or None
        The level :math:`\\lambda_p` used, as passed (chosen with
        ``lambda_p="auto"``).
    n_paths : int
        Paths averaged into the model (:mod:`~kernlearn.methods._grfl_average`).
    warm : GrFLWarmStart or None
        The run's state, to pass back as ``warm`` to continue the path
        (``None`` unless asked for).
    """

    family: object = None
    features: np.ndarray = None
    feature_scales: np.ndarray = None
    coef: np.ndarray = None
    intercept: np.ndarray = None
    task_coef: np.ndarray = None
    shared_coef: np.ndarray = None
    objective: float = np.nan
    last_violation: float = np.nan
    master: str = ""
    max_features: int = None
    lambda_p: float = None
    n_paths: int = 1
    warm: object = None


@one_master_warning
def fit_grfl(X, Y, *, loss, penalty, family=None, task_rows=None, sample_weight=None,
             lambda_p=1.0, lambda_s=None, lambda_scale="ours", solver="auto", tol=1e-3,
             max_iter=500, max_features=100, n_candidates=100, eps=1e-3,
             fit_intercept=True, pricing_subsample="auto", path_iter="auto",
             time_budget=None, random_state=None, verbose=0, name="GrFL", warm=None,
             keep_warm=False, batch="auto", final_draws="auto", center=None):
    """Run GrFL (Algorithm 1) end to end on validated data.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Training inputs (as the method should see them, e.g. standardised).
    Y : ndarray
        ``(n, T)`` targets when every task uses every row, else ``(n,)`` with
        ``task_rows`` the rows of each task.
    loss : BaseLoss
        Unweighted margin loss.
    penalty : BasePenalty
        :math:`\\Omega_p`; a copy gets ``alpha = lambda_p`` when it has one.
    family : InfiniteFamily or None, default=None
        Unfitted family (copied, then fitted on ``X``); ``None`` is
        ``RandomFourierFeatures`` with ``gamma="scale"`` (weighted when
        weighted).
    task_rows : list of ndarray or None, default=None
        Rows of each task.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Row weights of the loss, as given: integer weights equal repeated rows at the same
        levels.  Their scale ``s`` (the mean positive weight) is moved into the levels: the
        problem is ``s`` times the one with weights of mean one at levels divided by
        :math:`\\sqrt s` (the loss grows by ``s``, the columns' weighted norms by
        :math:`\\sqrt s`), which is what is solved, so weights of any scale (1e-12 or 1e12)
        see the numerics of mean-one weights.  A penalty without ``alpha`` keeps its
        built-in level (the weights' scale then does not matter).
    lambda_p, lambda_s : float or "auto", float or None
        Levels of :math:`\\Omega_p` and of the l1 penalty on shared weights.
        ``lambda_p="auto"``: chosen on the held-out rows of ``max_features="auto"``
        below ``LEVEL_BELOW`` rows (``_grfl_select``), else ``DEFAULT_LEVEL``.
    lambda_scale : {"ours", "paper"}, default="ours"
        Divide the levels by :func:`paper_loss_factor` with ``"paper"``.
    solver : {"auto", "admm", "fista", "newton"} or solver object, default="auto"
        Restricted master (:class:`~kernlearn.solvers.grfl_newton.GrFLNewton`
        for ``"newton"``); ``"auto"`` is Newton when its inner solver is
        compiled for the penalty and the loss has second derivatives, else
        ADMM (Newton still for a loss without a prox, which ADMM needs).
    tol, max_iter : float, int
        Master tolerance and iteration cap (string solvers).
    max_features : int or "auto", default=100
        Feature budget.  ``"auto"`` chooses it on held-out rows: the path (up to
        :data:`AUTO_MAX_FEATURES` features; :data:`LEVEL_MAX_FEATURES` where it chooses
        ``lambda_p="auto"`` too: :func:`auto_budget`) runs on a random
        ``1 - VALIDATION_FRACTION`` of the rows (of positive weight; every task in
        every part: :func:`_validation_split`) at the levels times
        :math:`\\sqrt{1 - \\text{fraction}}` (the same problem per row, by the rule of
        ``sample_weight``), the loss of each outer iteration's model is measured on the
        held-out rows, the path stops once it holds ``PATIENCE_FACTOR`` times the best count
        plus ``PATIENCE_EXTRA`` features, and the returned model is the master on all rows
        with the path's first ``k`` features, ``k`` the count of lowest held-out loss (its
        history rows carry ``validation_loss``).  Below :data:`CV_BELOW` rows,
        :data:`CV_FOLDS` folds each run such a path, ``k`` minimises their summed held-out
        loss (a fold that stopped early keeps its last value) and a path on all rows is run
        to ``k``.  On data too small to hold out :data:`MIN_VALIDATION_ROWS` rows,
        ``min(100, max(1, n // 6))``.
    n_candidates, eps, fit_intercept, pricing_subsample, path_iter, time_budget, verbose
        As in :class:`GrFL` and the estimators (``pricing_subsample="auto"``:
        :data:`AUTO_PRICING_ROWS` rows when ``n`` is more than twice that;
        ``path_iter="auto"``: :data:`NEWTON_PATH_ITER` with the Newton master,
        20 with the others).
    random_state : int, RandomState or None
        Source of the sampled parameters (and of the held-out rows).
    name : str, default="GrFL"
        Prefix of progress lines.
    warm : GrFLWarmStart or None, default=None
        A previous run; it is continued only when its key matches this
        call's data and settings and its path fits in ``max_features``,
        otherwise the fit starts over (always with ``max_features="auto"``).
    keep_warm : bool, default=False
        Return the run in ``result.warm`` for a later warm start (not with
        ``max_features="auto"``).
    batch : int or "auto", default="auto"
        Features added per outer iteration (:meth:`GrFL.batch_size`); 1 is
        the paper's Algorithm 1.
    final_draws : int or "auto", default="auto"
        Paths on all rows averaged into the model (``_grfl_average``; not with ``keep_warm``);
        ``"auto"``: ``FINAL_DRAWS`` where the folds chose ``lambda_p``, else 1.
    center : ndarray of shape (n_features,), optional
        Column means of a sparse ``X`` that a family with ``centres_sparse``
        subtracts (Fourier: inside its phases, without densifying; Gabor): the
        model of the centred dense data.  Ignored by other families.

    Returns
    -------
    result : GrFLResult
    """
    from ..families import RandomFourierFeatures
    from ..kernels import resolve_gamma
    from ..penalties import L1
    from ..solvers import ADMM, GrFLFISTA
    from ..solvers.grfl_newton import GrFLNewton

    n = X.shape[0]
    w_scale = 1.0
    if sample_weight is not None:
        # weights as given (integer weights = repeated rows); their scale goes
        # into the levels, so the numbers solved are those of mean-one weights
        sample_weight = np.asarray(sample_weight, dtype=float)
        w_scale = sample_weight.sum() / np.count_nonzero(sample_weight)
        sample_weight = sample_weight / w_scale
    level = 1.0 / np.sqrt(w_scale)
    rng = check_random_state(random_state)
    auto = isinstance(max_features, str)  # "auto": held-out rows choose the count
    # rows of zero weight are removed rows: in no held-out part, not counted (they
    # were split with the others: the level and budget differed from the fit without them)
    n_rows = n if sample_weight is None else int(np.count_nonzero(sample_weight))
    split = _validation_split(n, Y, task_rows, rng, sample_weight, loss) if auto else None
    choose_level = (isinstance(lambda_p, str) and split is not None and n_rows < LEVEL_BELOW
                    and hasattr(penalty, "alpha"))
    if auto:
        max_features, warm, keep_warm = auto_budget(n_rows, split, choose_level), None, False
    # the paper's losses are c times ours: its lambda is c times ours
    c = paper_loss_factor(loss) if lambda_scale == "paper" else 1.0
    lambda_p, levels = auto_levels(lambda_p, c)
    settings = dict(
        loss=loss, penalty=penalty, family=family, lambda_p=lambda_p * level,
        lambda_s=None if lambda_s is None else lambda_s * level,
        lambda_scale=lambda_scale, solver=solver, tol=tol, max_iter=max_iter,
        n_candidates=n_candidates, eps=eps, fit_intercept=fit_intercept,
        pricing_subsample=pricing_subsample, path_iter=path_iter, batch=batch,
        random_state=_setting_key(random_state))
    key = joblib.hash((X, Y, task_rows, sample_weight, settings)) if (warm or keep_warm) \
        else None
    path = kept_path(warm, key, random_state)
    if path is not None and path.p <= path.gs * max_features:
        continue_path(path, max_features, time_budget, verbose)
        return _result(path, w_scale, warm=GrFLWarmStart(key, path) if keep_warm else None,
                       lambda_p=lambda_p)
    family = RandomFourierFeatures() if family is None else copy.deepcopy(family)
    if sample_weight is not None and getattr(family, "width_from_data", False):
        # scikit-learn's gamma="scale" on the weighted variance (a given family's too)
        family.set_params(gamma=resolve_gamma("scale", X, sample_weight=sample_weight))
    # (row partitions on a cluster fit the family from statistics reduced there)
    if hasattr(X, "fit_family"):
        X.fit_family(family)
    elif center is not None and getattr(family, "centres_sparse", False):
        family.fit(X, center=center)
    else:
        family.fit(X)

    shared = []  # (the biases of the model without features on all rows and their span)

    def make_path(rows, shrink, exact=False, lam=None):
        """A GrFL run on ``rows`` (``None``: all) at the levels times ``shrink``
        (``exact``: every master solved to ``tol``; ``lam``: this ``lambda_p``)."""
        pen_p = copy.deepcopy(penalty)
        if hasattr(pen_p, "alpha"):  # else its level is built in (penalty_level)
            pen_p.alpha = float(lambda_p if lam is None else lam) * level * shrink / c
        pen_s = None if lambda_s is None else L1(alpha=float(lambda_s) * level * shrink / c)
        w = sample_weight if rows is None or sample_weight is None else sample_weight[rows]
        Xr = X if rows is None else X[rows]
        Yr, tr = (Y, task_rows) if rows is None else _row_subset(Y, task_rows, rows)
        wloss = task_weighted_loss(loss, w, tr)  # (with tasks, in the margins' layout)
        slv = solver
        if slv == "auto":
            # Newton where its inner solver is compiled (the built-in penalties
            # but l1-lq with q not in {1, 2, inf}); ADMM otherwise
            newton = GrFLNewton.compiled(pen_p) and callable(
                getattr(wloss, "hess_margin", None))
            slv = "newton" if newton or not callable(getattr(wloss, "prox", None)) \
                else "admm"
        if isinstance(slv, str):
            slv = {"admm": ADMM, "fista": GrFLFISTA, "newton": GrFLNewton}[slv](
                tol=tol, max_iter=max_iter)
        check_compatible(slv, wloss, pen_p)
        sub = pricing_subsample
        if sub == "auto":  # (counting the rows of positive weight, as the draw does)
            n_sub = Xr.shape[0] if w is None else int(np.count_nonzero(w))
            sub = AUTO_PRICING_ROWS if n_sub > 2 * AUTO_PRICING_ROWS else None
        pi = path_iter
        if pi == "auto":
            pi = NEWTON_PATH_ITER if isinstance(slv, GrFLNewton) else 20
        pi = None if exact else pi
        # GrFL on row partitions: their own class; the paths on all rows share their biases
        path = getattr(Xr, "grfl_class", GrFL)(
            family, wloss, pen_p, pen_s, slv, n_candidates=n_candidates, eps=eps,
            fit_intercept=fit_intercept, pricing_subsample=sub, path_iter=pi,
            time_budget=time_budget, name=name, batch=batch,
            # verbose=1: not the folds' paths (a default fit on 200 rows drew 34
            # bars and stop lines for them); one held-out part's is the model's
            verbose=verbose if rows is None or verbose > 1 or len(split) == 1 else 0).start(
            Xr, Yr, tr, rng, sample_weight=w, **(shared[0] if rows is None and shared else {}))
        if rows is None and not shared:
            shared.append(dict(b0=path.b0, span=path._span))
        return path

    draws = 1 if final_draws == "auto" else int(final_draws)
    if split is None and draws > 1 and not keep_warm:  # an average of paths
        return _grfl_average.average_draws(
            lambda: make_path(None, 1.0).extend(max_features), draws, w_scale,
            lambda f, out: _result(f, w_scale, lambda_p=lambda_p, out=out))
    if split is None:
        path = make_path(None, 1.0).extend(max_features)
        return _result(path, w_scale, warm=GrFLWarmStart(key, path) if keep_warm else None,
                       lambda_p=lambda_p)

    held_out_rows = HeldOutRows()  # (the monitors' completed features, one fit's)

    def start(tr, val, lam=None):
        # the same problem per row on the training part: its loss is (1 - f)
        # times the whole one and its unit-norm columns sqrt(1 - f) times longer
        f_tr = (len(tr) / n if sample_weight is None
                else sample_weight[tr].sum() / sample_weight.sum())
        path = make_path(tr, np.sqrt(f_tr), lam=lam)
        Yv, rows_v = _row_subset(Y, task_rows, val)
        # (rows on a cluster: their own monitor, the held-out rows kept there)
        hold_out = getattr(X, "hold_out_class", _HoldOut)
        return path, hold_out(path, X[val], Yv, rows_v, loss,
                              None if sample_weight is None else sample_weight[val],
                              rows=held_out_rows)

    if choose_level and len(split) > 1:  # the folds: a path on all rows at their level
        # that path draws as if the folds had not run: its model depends on
        # the chosen level only, not on how many draws the folds made
        state = rng.get_state()
        lambda_p, _ = select_level(start, split, max_features, levels=levels)
        rng.set_state(state)
        # the average of FINAL_DRAWS such paths (they draw one after another)
        return _grfl_average.average_draws(
            lambda: make_path(None, 1.0).extend(max_features),
            _grfl_average.FINAL_DRAWS if final_draws == "auto" else draws,
            w_scale, lambda f, out: _result(f, w_scale, lambda_p=lambda_p, out=out))
    if choose_level:  # one part: the level and the count of lowest held-out loss
        lambda_p, *run = select_level_held_out(start, split[0], max_features, levels=levels)
        runs = [tuple(run)]
    else:
        runs = [start(tr, val) for tr, val in split]
        for path, monitor in runs:
            path.callback = monitor
            path.extend(max_features)
    if len(runs) == 1:
        # the master on all rows with the path's first k features (one model)
        _grfl_average.one_model(draws, "one held-out part chose the features")
        path, monitor = runs[0]
        k = monitor.best()
        final = make_path(None, 1.0, exact=True)
        final._reserve(k)
        final._seed = None  # (its features come completed, from the part's span)
        if k:
            final.master(Candidates(params=path.features(np.arange(k)),
                                    scores=np.full(k, np.inf), group_size=path.gs))
        _validation_history(path.history, monitor, w_scale)
        final.history, final.last_violation = path.history, path.last_violation
        stop, finals, final.converged = path.stop_reason, [final], path.converged
    else:
        # folds: the count with the lowest summed held-out loss, then a path
        # (the classifier: ``draws`` paths, averaged) on all rows to that count
        counts = np.unique(np.concatenate([m.counts for _, m in runs]))
        # (no fold's path added a feature, as at a level above every score:
        # no held-out loss to compare, the model of no features)
        k = int(counts[int(np.argmin(sum(_curve_at(m, counts) for _, m in runs)))]
                ) if counts.size else 0
        finals = [make_path(None, 1.0).extend(k) for _ in range(draws)]
        final = finals[0]
        cv = sum(_curve_at(m, [r["n_active"] for r in final.history]) for _, m in runs
                 ) if counts.size else []
        for row, v in zip(final.history, cv):
            row["validation_loss"] = v * w_scale
        stop = stop_of_folds(runs, final, counts)
    final.stop_reason = stop
    for f in finals:
        f.converged = f.converged or final.stop_reason in ("validation", "no_violation")
    return _grfl_average.average_paths(finals, _grfl_average.stacked_results(
        finals, lambda f, out: _result(f, w_scale, n_features=k, lambda_p=lambda_p, out=out)),
        w_scale)


def _result(path, w_scale, warm=None, n_features=None, lambda_p=None, out=None):
    """The :class:`GrFLResult` of a run, on the given weights' scale.

    The run saw weights of mean one: with the given ones (``w_scale`` times
    larger) the objective is ``w_scale`` times larger and the unit-norm
    columns :math:`\\sqrt{w_s}` times shorter, so their weights are that much
    larger.
    """
    history = [dict(r, objective=r["objective"] * w_scale) for r in path.history]
    fields = prune(path, _grfl_average.rows_for([path]) if out is None else out)  # (rows)
    r = np.sqrt(w_scale)
    fields.update(feature_scales=fields["feature_scales"] / r, coef=fields["coef"] * r,
                  task_coef=fields["task_coef"] * r, shared_coef=fields["shared_coef"] * r)
    # (and the model's master met its tol: a capped one warned, converged_ read True);
    # a feature budget reached is the stop asked for, as FGM counts it: a default
    # regressor's read False there with no warning (audit 53)
    master = getattr(path, "result", None)
    return GrFLResult(
        n_iter=len(path.history), stop_reason=path.stop_reason,
        converged=((path.converged or path.stop_reason == "max_features")
                   and (master is None or bool(master.converged))),
        history=history, objective=path.objective * w_scale,
        last_violation=path.last_violation, master=type(path.solver).__name__,
        max_features=path._budget if n_features is None else n_features,
        lambda_p=lambda_p, warm=warm, **fields)
