"""The multitask MKL estimators' targets: a regressor's standardisation and
the checks of its square loss' range, a classifier's two classes.

Moved out of :mod:`kernlearn.estimators.mtmkl` (its fit adapters call them).
"""

import numpy as np

from ..preprocessing import fit_target_standardization
from ._multitask import standardize_task_targets


def _fitted_targets(est, y, task_index, sw):
    """The targets a regressor fits, its ``y_mean_`` / ``y_scale_``, and the task rows.

    Parameters
    ----------
    est : MultitaskMKLRegressor
    y : ndarray of shape (n_samples,)
        Finite targets (the rows of positive weight).
    task_index : array-like of shape (n_samples,) or None
    sw : ndarray of shape (n_samples,) or None
        Positive sample weights.

    Returns
    -------
    y : ndarray of shape (n_samples,)
        The targets to fit.
    rows : list of ndarray of int
        The rows of each task.
    """
    # targets whose spread overflows float64 are refused as by every
    # regressor (y * 1e300 gave all-zero predictions without a word)
    fit_target_standardization(y, sw)
    if est.loss == "square":
        _check_square_loss_scale(y)
    rows = est._split_tasks(task_index, len(y))
    if est.loss == "square" and not est._shared():
        # Each task on its own standardised targets.  None (the model of
        # a * y + b is a * f + b) left the tasks' shares of the joint loss,
        # hence the kernel weights, C_ and every other task's predictions,
        # depending on each task's units (MK-MTSFL on airfoil's frequency
        # terciles, every other task in 1/100 of its units: test R^2
        # 0.661 -> 0.635; now 0.663 in both).
        return standardize_task_targets(est, y, rows, sw), rows
    # One map pooled over the tasks, as documented.  Shared components are a
    # predictor common to the tasks, in common units: each task's scale (from
    # its few rows) bent it, and sharing stopped helping related tasks
    # (synthetic, 10 rows per task, one of three seeds: R^2 0.52 -> 0.46).
    # The SVR's per-task scales were worse in shared units (test R^2 averaged
    # over airfoil's frequency terciles 0.823 -> 0.813, C by validation).  The
    # square loss needs no map (its model of a * y + b is a * f + b); the
    # SVR's tube is a width in y, so it is fitted on standardised targets (on
    # raw ones every row of autompg's target / 1000 was inside the tube).
    ts = fit_target_standardization(
        y, sw, bool(est.standardize) and est.loss == "epsilon_insensitive")
    est.y_mean_ = np.repeat(ts.mean, len(rows))
    est.y_scale_ = np.repeat(ts.scale, len(rows))
    return ts.transform(y), rows


def _check_binary(classes):
    """Refuse more than two ``classes`` (one binary problem per task)."""
    if len(classes) != 2:
        raise ValueError(f"Only binary classification is supported (one binary problem per "
                         f"task); got {len(classes)} classes: fit one model per class on y == c.")


def _check_square_loss_scale(y):
    """Refuse targets whose squares leave float64's normal range.

    The square loss's solves form sums of targets times dual coefficients of
    the same scale (and their squares): a constant target of 1e200 overflowed
    them and the model predicted 0; targets varying by less than ~1e-146 have
    squares that, times the loss weights, fall to subnormal numbers and lose
    their precision, and their kernel weights came out wrong (y * 1e-300:
    predictions off by a fifth of their scale; y * 1e-154: 3e-4), both without
    a word.
    """
    f = np.finfo(np.float64)
    tiny, huge = f.tiny / f.eps, f.max
    big = float(np.max(np.abs(y)))
    if big > np.sqrt(huge / len(y)):
        raise ValueError(f"y is too large for the square loss in float64 (max |y| = "
                         f"{big:.3g}: sums of squared targets overflow); rescale the "
                         "target.")
    spread = float(np.ptp(y))
    if 0 < spread < np.sqrt(tiny):
        raise ValueError(f"y varies too little for the square loss in float64 (by "
                         f"{spread:.3g}: its squares lose their precision); rescale the target.")
