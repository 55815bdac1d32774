"""Choosing FGM's loss weight by cross-validation (``C="auto"``).

:func:`fit_fgm_auto_C` fits FGM on each fold's training rows at every ``C``
of the decade grid :data:`C_GRID`, then at the two values :data:`REFINE`
times above and below the best one, and keeps the ``C`` of lowest held-out
loss summed over the folds; :func:`~kernlearn.methods.fgm.fit_fgm` then fits
all rows at that ``C``.

When FGM's first pricing pass takes every candidate into one constraint (a
:class:`~kernlearn.families.FeaturePool` of at most ``B`` features or groups,
no budget; e.g. 100 x 10 data at the default ``B=10``), FGM with the square
loss *is* ridge regression (see :class:`_RidgePath`): each fold's fits at
every ``C`` then come exactly from one eigendecomposition of that fold's
centred Gram matrix instead of one cutting-plane run per ``C`` (held-out
losses equal to FGM's own fits to 1e-12 relative on the suite's sets, the
same ``C`` chosen, and the fit on all rows is still FGM's; on a fold of fewer
rows than columns FGM's master stops about 1e-6 short of the optimum that
this computes exactly).  Measured on 100 x 10 data: 2.1 ms
per ``FGMRegressor()`` fit against 12 ms, most of it now that final fit;
the suite's 11 regression sets with at most 10 columns, seeds 0-2: time
against ``LassoCV()`` 0.45x -> 0.075x in median, scores unchanged.

Otherwise each fold fit starts cold.  Warm starts along the grid (the previous
``C``'s active constraints re-solved at the next) were measured slower: the
re-solve from another ``C``'s optimum cost as much as a cold fit, and the
path accumulated overlapping constraints whose masters grew expensive (suite
set breastcancer, 135 x 33: 1.2 s warm against 0.27 s cold for ten values).
"""

import copy
import functools
from dataclasses import replace

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ..families import FeaturePool
from ..losses import Square, weighted
from ._fgm_rows import check_loss_scale
from .fgm import _assemble, _cutting_planes, _dense_coef, _fit_pool, fgm_decision, fit_fgm
from ..utils._warnings import pass_on, run_collected

__all__ = ["C_GRID", "cv_folds", "fit_fgm_auto_C"]

# C is the loss weight on standardised inputs and target.  Measured on the 19
# regression sets of benchmarks/suite.py, seeds 0-2, over 1e-3 .. 31.6 a factor
# sqrt(10) apart: the C of lowest test MSE ranged from 1e-3 (a target the
# inputs hardly predict: forest fires, best near the training mean) to 10-30 (a
# smooth linear signal: concrete slump, servo, machine); beyond 10 no set's MSE
# moved by more than 0.5 % per factor sqrt(10).  The decades are tried first,
# then the values a factor REFINE either side of the best decade (none above 10).
C_GRID = (1e-3, 1e-2, 1e-1, 1.0, 10.0)
REFINE = float(np.sqrt(10.0))
# K-fold below FOLDS_BELOW rows; from there one held-out part of 1/CV_FOLDS
# of the rows (on large data the held-out loss hardly depends on C and one
# part of >= 600 rows ranks it).  Three folds, not five: on the 19 regression
# sets x seeds 0-5 (114 pairs) the decades + refinement were within 1.05x of
# LassoCV() on 109 pairs with three folds and 105 with five (C=1: 101), at
# 3/5 of the time; worst pair 1.24x (fertility, 70 rows; five folds: 1.13x).
CV_FOLDS, FOLDS_BELOW = 3, 2000
# Relative accuracy of the folds' master solves (the final fit keeps the
# caller's): at the solver's default 1e-8 an ill-conditioned set (suite: stock)
# ran every master to its 50-iteration cap, 90 ms per fit against 5 ms at 1e-4.
CV_MASTER_TOL = 1e-5
# Fixed seed of the fold assignment (rows sorted by target must not make folds
# of one target range); the estimator has no random_state.
FOLD_SEED = 0


def cv_folds(n, n_folds=CV_FOLDS, folds_below=FOLDS_BELOW, seed=FOLD_SEED):
    """Training and held-out rows of the folds (one part only on large ``n``).

    Parameters
    ----------
    n : int
        Number of rows.
    n_folds : int, default=CV_FOLDS
        Folds below ``folds_below`` rows.
    folds_below : int, default=FOLDS_BELOW
        From this many rows only the first fold is used.
    seed : int, default=FOLD_SEED
        Seed of the row permutation.

    Returns
    -------
    folds : list of (ndarray, ndarray)
        Sorted training and held-out row indices per fold.
    """
    perm = _permutation(n, seed)
    parts = [np.sort(perm[i::n_folds]) for i in range(n_folds)]
    if n >= folds_below:
        parts = parts[:1]
    return [(_complement(n, val), val) for val in parts]


def _permutation(n, seed):
    """``RandomState(seed).permutation(n)`` (read-only), remembered for small ``n``.

    Seeding a Mersenne Twister costs about 0.15 ms, as much as all the
    folds' ridge fits of a small problem (:class:`_RidgePath`); a repeated
    fit at the same small ``n`` (a grid search, a benchmark) reuses the
    permutation.  Large ``n`` is not kept: there the seeding is negligible
    and eight permutations of ten million rows would hold 640 MB.
    """
    if n > _REMEMBER_ROWS:
        return np.random.RandomState(seed).permutation(n)
    return _remembered_permutation(n, seed)


_REMEMBER_ROWS = 100_000


@functools.lru_cache(maxsize=8)
def _remembered_permutation(n, seed):
    perm = np.random.RandomState(seed).permutation(n)
    perm.flags.writeable = False
    return perm


def _complement(n, rows):
    """Sorted ``range(n)`` without ``rows`` (``np.setdiff1d`` at 1/30 of its cost)."""
    keep = np.ones(n, dtype=bool)
    keep[rows] = False
    return np.flatnonzero(keep)


def _weighted_folds(n, sample_weight):
    """:func:`cv_folds` over the rows of positive weight.

    Rows of zero weight are held out by no fold (they sit, weightless, in
    every fold's training rows), so a zero weight acts as a removed row.
    """
    if sample_weight is None:
        return cv_folds(n)  # every row has weight: the same folds, computed once
    pos = np.flatnonzero(sample_weight > 0)
    return [(_complement(n, pos[val]), pos[val]) for _, val in cv_folds(len(pos))]


def _one_constraint(pool, base_loss, settings):
    r"""Whether FGM at any ``C`` is ridge regression (:class:`_RidgePath` is exact).

    True when the first pricing pass takes every candidate: a fitted
    :class:`~kernlearn.families.FeaturePool` (features, or groups, which the
    pool's columns then duplicate and weight) with at most ``B`` candidates,
    no budget (which prices fewer per round), and the square loss.  The first
    master then solves the whole problem: with one constraint the penalty
    :math:`\tfrac12(\sum_t\|W_t\|)^2` is :math:`\tfrac12\|w\|^2`.  The
    loop stops after it (the next pricing returns the same constraint,
    Theorem 3, or the gap meets ``tol``), or before it when every score is
    zero, :math:`A_c' S y_c = 0`, where the ridge solution is zero as well.
    """
    return _ridge_shaped(pool, base_loss, settings) and pool.n_candidates <= settings.B


def _ridge_shaped(pool, base_loss, settings):
    """The part of :func:`_one_constraint` that needs no fitted pool."""
    return (isinstance(pool, FeaturePool) and type(base_loss) is Square
            and settings.max_features is None)


class _RidgePath:
    r"""FGM fitted at every ``C`` from one eigendecomposition (one constraint).

    With every candidate in one constraint (:func:`_one_constraint`), FGM at
    ``C`` minimises :math:`\tfrac12\|w\|^2 + \tfrac C2 \sum_i s_i (a_i'w + b
    - y_i)^2` over the pool's scaled columns :math:`A` (``pool.columns``:
    :math:`x_j \lambda_j`, a group's columns also weighted), with the row
    weights :math:`s_i` and an unpenalised intercept :math:`b`.  Its optimum:
    :math:`b = \bar y - \bar a'w` (weighted means) and
    :math:`(I + C G) w = C r` with :math:`G = A_c' S A_c`, :math:`r = A_c' S
    y_c` on the centred columns; from :math:`G = V \Lambda V'`,
    :math:`w(C) = V\,\mathrm{diag}(C / (1 + C\lambda))\,V'r`, exact at
    every ``C`` whatever the master's tolerance.

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (n_samples, n_columns)
        Scaled columns of the one constraint on the fold's training rows.
    y : ndarray of shape (n_samples,)
        Targets.
    sample_weight : ndarray of shape (n_samples,) or None
        Row weights.
    fit_intercept : bool
        Fit the unpenalised intercept.
    """

    def __init__(self, A, y, sample_weight, fit_intercept):
        s = np.ones(A.shape[0]) if sample_weight is None else sample_weight
        p = A.shape[1]
        self.a_mean, self.y_mean = np.zeros(p), 0.0
        if fit_intercept:
            tot = float(s.sum())
            self.a_mean = np.asarray(A.T @ s, dtype=float).ravel() / tot
            self.y_mean = float(s @ y) / tot
        yc = y - self.y_mean
        if sp.issparse(A):
            # A' S A minus the mean's outer product: no dense copy of the
            # rows; sparse columns (mostly zeros) have no mean to cancel
            G = np.asarray((A.T @ A.multiply(s[:, None])).todense(), dtype=float)
            G -= np.outer(self.a_mean, self.a_mean) * (float(s.sum()) if fit_intercept
                                                       else 0.0)
            r = np.asarray(A.T @ (s * yc), dtype=float).ravel()
        else:
            Ac = np.asarray(A, dtype=float) - self.a_mean  # explicit centring: exact
            G = Ac.T @ (Ac * s[:, None])
            r = Ac.T @ (s * yc)
        lam, self.V = np.linalg.eigh(0.5 * (G + G.T))
        self.lam = np.maximum(lam, 0.0)  # G is a Gram matrix: round-off only
        self.Vr = self.V.T @ r

    def gains(self, Cs):
        r""":math:`C / (1 + C\lambda)` per eigenvector (rows) and value of ``Cs`` (columns)."""
        Cs = np.asarray(Cs, dtype=float)
        return Cs / (1.0 + np.outer(self.lam, Cs))

    def at(self, Cs):
        """Optima at the values ``Cs``: weights ``(n_columns, len(Cs))``, intercepts."""
        W = self.V @ (self.gains(Cs) * self.Vr[:, None])
        return W, self.y_mean - self.a_mean @ W


class _RidgeFold:
    """One fold when FGM is ridge regression: held-out losses of the exact fits.

    Parameters
    ----------
    Atr, Aval : ndarray or sparse matrix
        The one constraint's scaled columns on the fold's training and
        held-out rows.
    ytr, yval : ndarray
        Their targets.
    sw_tr, sw_val : ndarray or None
        Their row weights.
    base_loss : Square
        The (unweighted) square loss of the held-out sums.
    fit_intercept : bool
        Fit the unpenalised intercept.
    """

    def __init__(self, Atr, Aval, ytr, yval, sw_tr, sw_val, base_loss, fit_intercept):
        self.path = path = _RidgePath(Atr, ytr, sw_tr, fit_intercept)
        # f(C) = Aval w(C) + b(C) = y_mean + (Aval - a_mean) V diag(Vr) gains(C):
        # the C-independent factor once, then one small product per batch of C
        self.P = (np.asarray(Aval @ path.V) - path.a_mean @ path.V) * path.Vr
        self.yval, self.sw_val, self.base_loss = yval, sw_val, base_loss

    def losses_at(self, Cs):
        """Held-out losses (sample-weighted sums) of FGM fitted at each of ``Cs``."""
        f = self.path.y_mean + self.P @ self.path.gains(Cs)
        v = self.base_loss.value(f, self.yval[:, None])
        return np.sum(v if self.sw_val is None else self.sw_val[:, None] * v, axis=0)


def _ridge_folds(X, y, pool, base_loss, settings, sample_weight, column_scale, folds):
    """The folds as :class:`_RidgeFold`, or ``None`` where FGM is not ridge regression.

    The columns are scaled once for all rows when the scaling does not
    depend on the rows (the estimators' standardisation, or none); the
    unit-RMS scaling is each fold's own, as in the fold's FGM fit.
    """
    if not _ridge_shaped(pool, base_loss, settings):
        return None  # before fitting the pool, which the count below needs
    fitted = _fit_pool(copy.deepcopy(pool), X, sample_weight, column_scale)
    if not _one_constraint(fitted, base_loss, settings):
        return None
    every = np.arange(fitted.n_candidates)
    sw = sample_weight
    A = None
    if column_scale is not None or not pool.feature_scaling:
        A = fitted.columns(every, X)
        A = A.tocsr() if sp.issparse(A) else A  # rows are sliced per fold
    runs = []
    for tr, val in folds:
        sw_tr = None if sw is None else sw[tr]
        if A is None:
            own = _fit_pool(copy.deepcopy(pool), X[tr], sw_tr, None)
            Atr, Aval = own.columns(every, X[tr]), own.columns(every, X[val])
        else:
            Atr, Aval = A[tr], A[val]
        runs.append(_RidgeFold(Atr, Aval, y[tr], y[val], sw_tr,
                               None if sw is None else sw[val], base_loss,
                               settings.fit_intercept))
    return runs


class _Fold:
    """One fold: its fitted pool and the held-out loss of FGM at a given ``C``."""

    def __init__(self, X, y, pool, base_loss, settings, sample_weight, column_scale, tr,
                 val):
        sw_tr = None if sample_weight is None else sample_weight[tr]
        self.sw_val = None if sample_weight is None else sample_weight[val]
        self.Xtr, self.ytr, self.Xval, self.yval = X[tr], y[tr], X[val], y[val]
        self.pool = _fit_pool(copy.deepcopy(pool), self.Xtr, sw_tr, column_scale)
        self.base_loss, self.loss = base_loss, weighted(base_loss, sw_tr)
        # a held-out loss needs a few digits, not the solver's default accuracy
        self.settings = replace(settings, verbose=0, record_memory=False,
                                master_tol=settings.master_tol or CV_MASTER_TOL)

    def losses_at(self, Cs):
        """Held-out losses (sample-weighted sums) of FGM fitted at each of ``Cs``."""
        return np.array([self.loss_at(C) for C in Cs])

    def loss_at(self, C):
        """Held-out loss (sample-weighted sum) of FGM fitted at ``C``."""
        # a fold fit that stops at max_iter still ranks C; the fit on all rows
        # warns as any fit does (not warnings.catch_warnings: see utils/_warnings.py);
        # a fold fit that raised ranks nothing: its stop may explain the error
        path = run_collected(
            lambda: _cutting_planes(self.Xtr, self.ytr, self.pool, self.loss,
                                    replace(self.settings, C=float(C))),
            lambda caught, error: pass_on(caught, ConvergenceWarning if error is None else (),
                                          during=error))
        res = _assemble(self.pool, [path],
                        [_dense_coef(path, self.Xtr.shape[1])[:, 0]],
                        [float(path.intercept[0])])
        f = fgm_decision(self.Xval, res.coef, res.intercept,
                         res.pool if res.virtual else None, res.selected)[:, 0]
        v = self.base_loss.value(f, self.yval)
        return float(np.sum(v if self.sw_val is None else self.sw_val * v))


def fit_fgm_auto_C(X, y, pool, base_loss, settings, *, sample_weight=None,
                   column_scale=None, grid=C_GRID, refine=REFINE, folds=None, **fit_kw):
    """FGM at the ``C`` of lowest cross-validated loss (one output, regression).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Validated in-memory training data.
    y : ndarray of shape (n_samples,)
        Real targets (standardised by the caller).
    pool : family
        Unfitted family of candidates (copied per fold).
    base_loss : BaseLoss
        The loss, not weighted: the sample weights weight it per fold.
    settings : FGMSettings
        Loop settings (with ``max_features``, every fold fit keeps the budget);
        their ``C`` is ignored.
    sample_weight : ndarray of shape (n_samples,), optional
        Row weights of the folds' fits, of the held-out losses and of the final fit.
    column_scale : ndarray of shape (n_features,), optional
        Column scales of the input standardisation (see
        :func:`~kernlearn.methods.fgm.fit_fgm`).
    grid : sequence of float, default=C_GRID
        Values of ``C`` tried first.
    refine : float or None, default=REFINE
        Then also ``best / refine`` and, up to ``max(grid)``, ``best * refine``
        (``None``: no refinement).
    folds : list of (ndarray, ndarray), optional
        Training and held-out rows (default: :func:`cv_folds` over the rows
        of positive weight).
    **fit_kw
        Passed to :func:`~kernlearn.methods.fgm.fit_fgm` for the fit on all rows.

    Returns
    -------
    result : FGMResult
        The fit on all rows at the chosen ``C``, with ``C`` and ``cv`` (the
        values tried, increasing, and the summed held-out loss at each).

    Raises
    ------
    ValueError
        Without ``folds``, when fewer than ``CV_FOLDS`` rows have positive weight.
    """
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    # (the largest C fitted: the grid's, refinements never go above it)
    check_loss_scale(max(grid), sw, X.shape[0], fit_kw.get("name", "FGM"))
    if folds is None:
        n_pos = X.shape[0] if sw is None else int(np.count_nonzero(sw > 0))
        if n_pos < CV_FOLDS:  # a fold would hold out no row, or train on none
            raise ValueError(f'C="auto" cross-validates over {CV_FOLDS} folds and needs at '
                             f"least {CV_FOLDS} rows of positive weight, got {n_pos}; "
                             "pass a numeric C.")
        folds = _weighted_folds(X.shape[0], sw)
    runs = (_ridge_folds(X, y, pool, base_loss, settings, sw, column_scale, folds)
            or [_Fold(X, y, pool, base_loss, settings, sw, column_scale, tr, val)
                for tr, val in folds])
    grid = [float(c) for c in grid]
    ahead = {}
    if runs and isinstance(runs[0], _RidgeFold):
        # exact fits cost microseconds, a call's set-up more: every value the
        # rule below may try, in one batch per fold (the curve keeps only those
        # it tries)
        maybe = grid + ([c for g in grid for c in (g / refine, g * refine)]
                        if refine is not None else [])
        maybe = list(dict.fromkeys(maybe))
        ahead = dict(zip(maybe, sum(run.losses_at(maybe) for run in runs).tolist()))
    curve = {}

    def evaluate(values):
        new = [C for C in dict.fromkeys(values) if C not in curve]
        if new and ahead:
            curve.update((C, ahead[C]) for C in new)
        elif new:
            # summed over the folds in order, as one fold's loss at a time
            curve.update(zip(new, sum(run.losses_at(new) for run in runs).tolist()))

    evaluate(grid)
    if refine is not None:
        best = min(curve, key=curve.get)
        # never above the grid: large C barely changes the model (see C_GRID)
        # and costs the most (weakly regularised masters converge slowest)
        evaluate([c for c in (best / refine, best * refine) if c <= max(grid)])
    Cs = np.array(sorted(curve))
    losses = np.array([curve[c] for c in Cs])
    # the first minimum: on ties the smaller C (stronger regularisation)
    C = float(Cs[int(np.argmin(losses))])
    res = fit_fgm(X, y, pool, weighted(base_loss, sw), replace(settings, C=C),
                  sample_weight=sw, column_scale=column_scale, **fit_kw)
    return replace(res, C=C, cv={"C": Cs, "loss": losses})
