"""Choosing FGM's loss weight by cross-validation (``C="auto"``).

:func:`fit_fgm_auto_C` fits FGM on each fold's training rows at every ``C``
of the decade grid :data:`C_GRID`, then at the two values :data:`REFINE`
times above and below the best one, and keeps the ``C`` of lowest held-out
loss summed over the folds; :func:`~kernlearn.methods.fgm.fit_fgm` then fits
all rows at that ``C``.

Each fold fit starts cold.  Warm starts along the grid (the previous ``C``'s
active constraints re-solved at the next) were measured slower: the
re-solve from another ``C``'s optimum cost as much as a cold fit, and the
path accumulated overlapping constraints whose masters grew expensive (suite
set breastcancer, 135 x 33: 1.2 s warm against 0.27 s cold for ten values).
"""

import copy
import warnings
from dataclasses import replace

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..losses import weighted
from .fgm import _assemble, _cutting_planes, _dense_coef, _fit_pool, fgm_decision, fit_fgm

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
    perm = np.random.RandomState(seed).permutation(n)
    parts = [np.sort(perm[i::n_folds]) for i in range(n_folds)]
    if n >= folds_below:
        parts = parts[:1]
    return [(np.setdiff1d(np.arange(n), val), val) for val in parts]


def _weighted_folds(n, sample_weight):
    """:func:`cv_folds` over the rows of positive weight.

    Rows of zero weight are held out by no fold (they sit, weightless, in
    every fold's training rows), so a zero weight acts as a removed row.
    """
    pos = np.arange(n) if sample_weight is None else np.flatnonzero(sample_weight > 0)
    return [(np.setdiff1d(np.arange(n), pos[val]), pos[val])
            for _, val in cv_folds(len(pos))]


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
        self.settings = replace(settings, verbose=0,
                                master_tol=settings.master_tol or CV_MASTER_TOL)

    def loss_at(self, C):
        """Held-out loss (sample-weighted sum) of FGM fitted at ``C``."""
        with warnings.catch_warnings():
            # a fold fit that stops at max_iter still ranks C; the fit on all
            # rows warns as any fit does
            warnings.simplefilter("ignore", ConvergenceWarning)
            path = _cutting_planes(self.Xtr, self.ytr, self.pool, self.loss,
                                   replace(self.settings, C=float(C)))
        res = _assemble(self.Xtr, self.pool, [path],
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
    """
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if folds is None:
        folds = _weighted_folds(X.shape[0], sw)
    runs = [_Fold(X, y, pool, base_loss, settings, sw, column_scale, tr, val)
            for tr, val in folds]
    curve = {}

    def evaluate(values):
        for C in values:
            if C not in curve:
                curve[C] = sum(run.loss_at(C) for run in runs)

    evaluate([float(c) for c in grid])
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
