"""Choosing GrFL's feature budget on held-out rows (``max_features="auto"``),
the classifier's defaults (its level :func:`classifier_level` and budget
:func:`classifier_budget`) and the regressor's: its family
(:func:`multi_width_family`) and its pricing rows
(:func:`regressor_pricing_subsample`).

:func:`~kernlearn.methods.grfl.fit_grfl` runs the feature path on part of
the rows and measures, after every outer iteration, the loss of the current
model on the rows held out (:class:`_HoldOut`, the column-generation
callback); the budget is the count of lowest held-out loss.  Below
:data:`CV_BELOW` rows one held-out part is too small to rank the counts, and
:data:`CV_FOLDS` folds are used instead.  There the level ``lambda_p="auto"``
is chosen too (:func:`select_level`): the folds' paths descend the levels of
:data:`AUTO_LEVELS`, each run until no feature violates the optimality
conditions (or the budget is met; their masters solved to :data:`FOLD_TOL`),
and the level of lowest summed held-out loss is kept; the path on all rows at
that level then draws its features as if the folds had not run
(:data:`~kernlearn.methods._grfl_average.FINAL_DRAWS` such paths, averaged).
From :data:`CV_BELOW` to :data:`LEVEL_BELOW` rows the one
held-out part chooses the level with the count
(:func:`select_level_held_out`): its path descends the same levels and the
model of lowest held-out loss gives both.
"""

import copy
import warnings

import numpy as np
from sklearn.utils import check_random_state

from ..solvers._dirty import task_targets
from ..utils._warnings import user_stacklevel

# the path's budget, the share of rows held out, the fewest held-out rows worth
# it, the patience (stop at PATIENCE_FACTOR x the best count + PATIENCE_EXTRA
# features), and below CV_BELOW rows CV_FOLDS folds instead of one part
AUTO_MAX_FEATURES = 100
VALIDATION_FRACTION = 0.2
MIN_VALIDATION_ROWS = 10
PATIENCE_FACTOR, PATIENCE_EXTRA = 1.5, 10
CV_BELOW, CV_FOLDS = 300, 5
# the regressor's default family: GrFL-M (paper 000, sec. 5.2) over these
# multiples of scikit-learn's gamma="scale" (1 / n_features on standardised
# columns).  On the 17 regression sets of benchmarks/suite.py, seeds 0-7 (136
# pairs), MSE within 1.05x of Nystroem(200)+RidgeCV on 59 % of pairs with
# gamma="scale" alone (23 pairs above 1.15x) and 76 % with these widths (14
# above 1.15x), a factor 4 apart around a kernel twice as wide as "scale";
# (1/4, 1, 4) reached 72 % on seeds 0-5, (1/16, 1/4, 1) 68 % on seeds 6-7.
GAMMA_FACTORS = (0.125, 0.5, 2.0)
# lambda_p="auto": the levels the folds' paths descend (on standardised targets;
# the descent stops at the first level whose summed held-out loss is not lower
# than the previous one's), and the level used where no folds are run (at least
# CV_BELOW rows, too few rows to hold out, a dask.array, a budget given).  On
# the 11 regression sets of benchmarks/suite.py under 1,000 training rows,
# seeds 0-7, the best of these levels (paths of up to 200 features) was within
# 1.05x of Nystroem(200)+RidgeCV in every set's geometric mean, from 0.1 (a
# smooth signal: concrete slump, yacht) to 3.2 (a noisy target: fertility,
# forest fires); 0.4 alone was 1.1-1.45x on four of them.  Starting at 6.4
# chose no feature at all on fertility twice in eight splits (MSE 1.08-1.26x).
AUTO_LEVELS = (3.2, 1.6, 0.8, 0.4, 0.2, 0.1)
DEFAULT_LEVEL = 0.4
# the folds' masters of that choice (select_level) are solved to FOLD_TOL (a
# solver's tighter tol is loosened on a copy); the path on all rows keeps its
# tol: the folds only rank the levels.  On the 7 regression sets of
# benchmarks/suite.py under 300 training rows, seeds 0-15 (112 splits), the
# model on all rows drawing the same features for a level either way (fit_grfl
# restores the random state after the folds): MSE within 1.05x of
# Nystroem(200)+RidgeCV on 91 splits against 89 at the model's tol (1e-3), 6
# against 7 above 1.15x, geometric mean 0.701x against 0.704x, at 0.87x the fit
# time.  Capping the folds' paths at 50 features as well (0.56x the time) chose
# another level on 40 splits, 20 better and 20 worse, but 85 within: their
# lower levels, cut at 50 features, overfit less than the model's 100, so they
# chose levels too low (autompg); capping the model too (0.53x): 83 within, 8
# above.  The approximate leave-one-out loss along one path on all rows (Rad
# and Maleki 2018; 0.2x the time), judged like the folds on models refit at
# each chosen level, gave 65 within and 24 above against the folds' 87 and 8:
# it counts the features as fixed, while they were sampled to fit every row
# (on breastcancer it rated 0.1 30 % better than 1.6; on test rows it was 71 %
# worse).  With the level proportional to an estimated noise level (the
# scaled lasso) the best levels were 0.6-1.5 noise levels on autompg, machine
# and servo but 2-3.6 on breastcancer and fertility: no one factor fits both.
FOLD_TOL = 1e-2
# lambda_p="auto" is chosen below LEVEL_BELOW rows (from CV_BELOW on the one
# held-out part that also picks the budget); beyond, DEFAULT_LEVEL.  On the 6
# regression sets of benchmarks/suite.py with 300-1,200 training rows, seeds
# 0-5 (36 pairs), within 1.05x of Nystroem(200)+RidgeCV: 27 pairs at 0.4 (3
# above 1.15x), 32 chosen below 1,000 rows (2 above), 33 below 2,000; but the
# two sets of 1,000-1,200 rows (airfoil, wine) then took 4.6-9.8x the
# baseline's fit time instead of 2.5-4x
LEVEL_BELOW = 1000
# the budget of that held-out level descent (CV_BELOW to LEVEL_BELOW rows):
# its lower levels' paths are not cut at AUTO_MAX_FEATURES.  On the regression
# sets of benchmarks/suite.py with 300-999 training rows, seeds 0-5, only
# housing's paths reached 100 features (at levels 0.1-0.4): MSE against
# Nystroem(200)+RidgeCV 1.01-1.35x with 100 (three splits above 1.05x, two
# above 1.15x), 0.88-1.08x with 200 (two above 1.05x, none above 1.15x), 0.13 s
# instead of 0.05 s (150: 1.01-1.24x); forest, stock and solar stop before.
# (Airfoil and wine, 1,000-1,200 rows at DEFAULT_LEVEL, were as good or better
# with 200 too, but at 4-9x the baseline's fit time instead of about 2x.)
LEVEL_MAX_FEATURES = 200
# the regressor's pricing_subsample="auto": violations estimated on this many
# rows once n is more than twice as large, else on all rows (the classifier
# keeps grfl.AUTO_PRICING_ROWS = 2000).  A regression path's later features
# correlate weakly with the residual: on 2,000 rows the estimates' noise (about
# 1/sqrt(m) of the residual's norm) ranks the candidates, the batches add
# redundant features and fewer survive the master.  On the 4 regression sets of
# benchmarks/suite.py above 4,000 training rows, seeds 0-5 (24 pairs), MSE
# against Nystroem(200)+RidgeCV with 2,000 pricing rows: protein 1.05-1.12x
# (no split within 1.05x), cal_housing up to 1.04x; on all rows: protein
# 1.02-1.05x, cal_housing 0.94-1.01x, bike and keggdirected as good or better,
# at 1.5-2.8x the baseline's fit time instead of 1.1-2.5x.
REGRESSOR_PRICING_ROWS = 20000


# lambda_p="auto" (classifier): the level is 1 up to AUTO_LAMBDA_ROWS training
# rows and sqrt(AUTO_LAMBDA_ROWS / n) beyond (see classifier_level)
AUTO_LAMBDA_ROWS = 2000
# max_features=None (classifier): one feature per input column or per BUDGET_ROWS
# training rows, whichever is more, within these bounds (see classifier_budget)
DEFAULT_BUDGET = (100, 200)
BUDGET_ROWS = 10

AUTO_LAMBDA_NOTE = """
        ``"auto"`` is :math:`\\min(1, \\sqrt{2000 / n})` with ``n`` the
        number of training rows (the sum of the sample weights when weighted,
        so integer weights still act as repeated rows); the level used is
        ``lambda_p_``.  Our columns are unit-norm, so at a fixed level the
        penalty per row shrinks as :math:`1/\\sqrt n`, while the
        squared-hinge SVM's fixed ``C`` shrinks its penalty per row as
        :math:`1/n`; "auto" follows the first rate up to 2000 rows and the
        second beyond.  At 1.0 on every size the path stopped too early on
        large sets with a weak signal (eeg-eye-state, 10,486 rows: 32
        features, 3.5 points below ``Nystroem(200)`` + ``LinearSVC()``; the
        breadth benchmark ``benchmarks/suite.py``), while smaller levels on
        small sets overfit."""


BUDGET_NOTE = """  ``None`` (the classifier's default) is
        one feature per input column or per 10 training rows (the sum of the
        sample weights when weighted), whichever is more, at least 100 and at
        most 200.  A Fourier feature varies along one direction of the input
        space, and fewer directions than columns cannot span even a linear
        function of all the inputs (on 256-pixel digits, semeion and usps,
        100 features were 1.5 to 3.8 points below ``Nystroem(200)`` +
        ``LinearSVC()``, 200 within one point).  The rows count from 1,000
        rows on: the larger sets' paths still found violators at 100
        features (letter, 14,000 rows: +1.5 points at 200 features;
        wall-robot-navigation, 3,819 rows: +2.4 at 190; multiclass sets of
        1,100 to 1,500 rows, seeds 0-2 of the breadth benchmark: +0.5 to
        +1.6 points on cardiotocography, up to +1.5 on mfeat-karhunen, +0.2
        to +1.2 on one-hundred-plants-texture at 112 to 148 instead of 100
        features, at 1.6 to 2.6 times the fit time).  Below 1,000 rows the
        rule is the column count alone (small sets mostly stop before the
        budget).  The cap bounds the cost on wide or long inputs.  Below
        300 training rows, with ``None`` or ``"auto"`` and without
        ``warm_start``, the model averages 3 paths on all rows, each
        drawing its own random features (so ``features_`` holds up to three
        budgets; :func:`~kernlearn.methods._grfl_average.average_paths`: the
        decision values are the mean of the paths', a point of the same
        problem with an objective at most their mean).  One path's accuracy
        moves by 1-3 points between random states on such sets; on the 6
        classification sets of the breadth benchmark under 300 rows, seeds
        0-15 and two random states, 147 of 192 fits were within one point
        of ``Nystroem(200)`` + ``LinearSVC()`` instead of 137 and 11 more
        than 3 points below instead of 21, at 3 times the fit time (at most
        +0.15 s).  A numeric budget gives one path (``n_paths`` sets the
        count)."""


def classifier_level(n_rows):
    """The classifier's ``lambda_p="auto"``: the level for ``n_rows`` training rows.

    Parameters
    ----------
    n_rows : float
        Training rows (the sum of the sample weights when weighted).

    Returns
    -------
    level : float
    """
    return float(min(1.0, np.sqrt(AUTO_LAMBDA_ROWS / max(float(n_rows), 1e-300))))


def auto_levels(lambda_p, c=1.0):
    """``lambda_p`` (``"auto"``: :data:`DEFAULT_LEVEL`) and the levels ``"auto"``
    chooses among (:data:`AUTO_LEVELS`), on the scale ``c`` the levels are read in.

    The automatic levels are ours (tuned on our losses); with
    ``lambda_scale="paper"`` every level is divided by the paper's loss factor
    ``c``, so they are given ``c`` times larger: ``"auto"`` then fits the
    model it fits on our scale and reports its level on the paper's (before,
    ``lambda_scale="paper"`` silently halved the automatic level of the square
    and squared hinge losses).

    Parameters
    ----------
    lambda_p : float or "auto"
        The level asked for (a number is returned as it is).
    c : float, default=1.0
        :func:`~kernlearn.methods._grfl_master.paper_loss_factor` with
        ``lambda_scale="paper"``, else 1.

    Returns
    -------
    lambda_p : float
    levels : tuple of float
    """
    levels = tuple(v * c for v in AUTO_LEVELS)
    return (DEFAULT_LEVEL * c if isinstance(lambda_p, str) else lambda_p), levels


def classifier_budget(n_columns, n_rows):
    """The classifier's ``max_features=None``: the budget for these inputs and rows.

    Parameters
    ----------
    n_columns : int
        Input columns.
    n_rows : float
        Training rows (the sum of the sample weights when weighted).

    Returns
    -------
    budget : int
    """
    return int(np.clip(max(n_columns, float(n_rows) / BUDGET_ROWS), *DEFAULT_BUDGET))


def stop_of_folds(runs, final, counts):
    """The stop reason of the model whose feature count the folds chose.

    What cut the folds' paths (their held-out rows, the time budget), if anything
    did; else the final path's own, but where no fold's path added a feature (a
    level above every score) the folds' reason: the final path, asked for no
    feature, stops on that budget at once, and its ``"max_features"`` named a
    budget that chose nothing (and kept :func:`warn_no_feature` quiet).

    Parameters
    ----------
    runs : list of (GrFL, monitor)
        The folds' paths and their held-out monitors.
    final : GrFL
        The path on all rows.
    counts : ndarray
        The feature counts the folds' held-out rows scored (empty: none added).

    Returns
    -------
    str
    """
    cut = next((r for r in ("validation", "time_budget")
                if any(p.stop_reason == r for p, _ in runs)), None)
    return cut or (final.stop_reason if counts.size else runs[0][0].stop_reason)


def warn_no_feature(est, yi, sample_weight, tasks):
    """Warn that a classifier's path selected no feature: a constant model.

    At a level above every candidate's score the model is its intercept
    alone, whatever ``X`` holds.  The classifier's level is set per row, so a
    rare class, whose few rows weigh little in the scores, leads there: 10
    rows of 1,000 two standard deviations apart in two of five columns gave
    a constant model (an AUC of 0.5), without a word, where
    ``class_weight="balanced"`` selects 42 features.

    Parameters
    ----------
    est : InfiniteFeatureClassifier
        The fitted model (``features_``, ``lambda_p_``, ``classes_``).
    yi : ndarray of int of shape (n_samples,)
        Class codes.
    sample_weight : ndarray of shape (n_samples,) or None
        The fit's weights (class weights in).
    tasks : bool
        Whether the model has tasks (an intercept per task).
    """
    from ..utils._messages import plain_value
    from ..utils._warnings import collecting, warn

    # (not of an inner fit, Platt's folds: the model's own fit says it of the
    # model, and the folds said it five times more; nor of a path the level did
    # not stop, cut by the time budget or by held-out rows that chose none)
    # (the stored value's length: reading features_ would complete deferred rows)
    if len(vars(est)["features_"]) or collecting() or est.stop_reason_ != "no_violation":
        return

    kept = yi if sample_weight is None else yi[sample_weight > 0]
    counts = np.bincount(kept, minlength=len(est.classes_))
    # (a class's share of the weight, which the scores see: with class_weight="balanced",
    # or sample weights that make up for the class, the advice was given as well; a
    # class weighted out, share 0, is not the rare one)
    share = counts if sample_weight is None else np.bincount(
        yi, weights=sample_weight, minlength=len(est.classes_))
    present = share > 0
    rare = int(np.argmin(np.where(present, share, np.inf)))
    # (a class of under half its even share: the scores weigh its rows little)
    advice = (f"; or class_weight='balanced': class {plain_value(est.classes_[rare])!r} "
              f"has {counts[rare]} of {len(kept)} rows"
              + ("" if sample_weight is None else " of positive weight, "
                 f"{share[rare] / share.sum():.2g} of their weight")
              + ", and a rare class's rows weigh little in the scores"
              if 2 * np.count_nonzero(present) * share[rare] < share.sum() else "")
    warn(f"{type(est).__name__} selected no feature: at lambda_p={est.lambda_p_:.3g} no "
         "candidate feature's score reached the level, so the decision function is "
         "constant (the intercept" + (" of each task" if tasks else "") + ") and one class "
         "is predicted for every row" + (" of a task" if tasks else "") + ". A smaller "
         f"lambda_p lets features in{advice}.", UserWarning, stacklevel="user")


def multi_width_family(X, sample_weight=None, factors=GAMMA_FACTORS):
    """Random Fourier features over several widths around ``gamma="scale"``.

    Parameters
    ----------
    X : ndarray, sparse matrix or row partitions of shape (n_samples, n_features)
        The inputs the family will see (standardised ones by default); row
        partitions on a cluster reduce the width there (their ``scale_gamma``).
    sample_weight : ndarray of shape (n_samples,), optional
        Row weights of the width (as ``gamma="scale"`` is weighted in
        :func:`~kernlearn.methods.grfl.fit_grfl`).
    factors : sequence of float, default=GAMMA_FACTORS
        Multiples of the ``"scale"`` width; candidates are split evenly among them.

    Returns
    -------
    family : RandomFourierFeatures
        Unfitted, with ``gamma`` the list of widths.
    """
    from ..families import RandomFourierFeatures
    from ..widths import resolve_gamma

    g = (X.scale_gamma() if hasattr(X, "scale_gamma")
         else resolve_gamma("scale", X, sample_weight=sample_weight))
    return RandomFourierFeatures(gamma=[float(f) * g for f in factors])


def auto_budget(n, split, choose_level):
    """The path's feature budget with ``max_features="auto"``.

    Parameters
    ----------
    n : int
        Training rows.
    split : list of (ndarray, ndarray) or None
        The held-out rows (:func:`_validation_split`); ``None``: too few rows.
    choose_level : bool
        Whether ``lambda_p="auto"`` is chosen on them.

    Returns
    -------
    budget : int
        :data:`LEVEL_MAX_FEATURES` where one held-out part chooses the level
        (:func:`select_level_held_out`), else :data:`AUTO_MAX_FEATURES`;
        ``min(100, max(1, n // 6))`` without held-out rows.
    """
    if split is None:
        return min(100, max(1, n // 6))
    return LEVEL_MAX_FEATURES if choose_level and len(split) == 1 else AUTO_MAX_FEATURES


def regressor_pricing_subsample(n, pricing_subsample="auto"):
    """The regressor's ``pricing_subsample``: ``"auto"`` resolved for ``n`` rows.

    Parameters
    ----------
    n : int
        Training rows.
    pricing_subsample : int, "auto" or None, default="auto"
        The estimator's parameter; anything but ``"auto"`` is returned as is.

    Returns
    -------
    pricing_subsample : int or None
        :data:`REGRESSOR_PRICING_ROWS` when ``n`` is more than twice that,
        else ``None`` (all rows).
    """
    if not isinstance(pricing_subsample, str):
        return pricing_subsample
    return REGRESSOR_PRICING_ROWS if n > 2 * REGRESSOR_PRICING_ROWS else None


def _row_subset(Y, task_rows, idx):
    """Targets and task rows restricted to the sorted rows ``idx``."""
    if task_rows is None:
        return Y[idx], None
    pos = np.full(len(Y), -1)
    pos[idx] = np.arange(len(idx))
    return Y[idx], [pos[r][pos[r] >= 0] for r in task_rows]


def _validation_split(n, Y, task_rows, rng, sample_weight=None, loss=None):
    """Training and held-out rows for ``max_features="auto"``, or ``None``.

    A list of ``(train, held_out)`` pairs: one random split holding out
    :data:`VALIDATION_FRACTION` of the rows, or, below :data:`CV_BELOW` rows
    (where one held-out part is too small to rank feature counts),
    :data:`CV_FOLDS` folds.  Every task needs two training rows and a held-out
    row in each pair: when the random parts leave a task short, each task's
    rows are dealt over the parts in a random order instead (stratified by
    task).  ``None`` when the data are too small to hold rows out (fewer than
    :data:`MIN_VALIDATION_ROWS` held out), or, with a ``UserWarning``, when
    some task is too small even so.  With ``sample_weight`` the rows of zero
    weight are removed rows: in no part, and not counted (the parts are those
    of the data without them, drawn alike).  With a classification ``loss``,
    when a random fold holds no row of a class (within a task) of at least
    :data:`CV_FOLDS` rows, the folds are stratified instead: the shuffled rows
    are dealt over the folds class by class, so every fold holds every such
    class (a rare class's held-out loss silently did not count in a fold
    without it).  Folds holding every class are kept as drawn.
    """
    rows = np.arange(n) if sample_weight is None else np.flatnonzero(sample_weight > 0)
    m = len(rows)
    n_val = int(round(VALIDATION_FRACTION * m))
    if n_val < MIN_VALIDATION_ROWS:
        return None
    rng = check_random_state(rng)
    perm = rows[rng.permutation(m)]
    vals = ([perm[:n_val]] if m >= CV_BELOW
            else [perm[i::CV_FOLDS] for i in range(CV_FOLDS)])
    if m < CV_BELOW and getattr(loss, "is_classification", False):
        strata = _strata(Y, task_rows)
        if _fold_lacks_class(vals, strata[rows], strata):
            # (a stable sort keeps the shuffled order within each class: the same
            # single draw as the random folds, so later draws are unchanged)
            perm = perm[np.argsort(strata[perm], kind="stable")]
            vals = [perm[i::CV_FOLDS] for i in range(CV_FOLDS)]
    folds = _checked_parts(rows, vals, Y, task_rows)
    if folds is None:
        # (the random parts left a task without a held-out row or two training
        # rows, and the fit fell back to the small-data budget and level without
        # a word: many tasks of ten rows did so on almost every draw)
        # (tasks holding the same rows, one-vs-rest classes within a task: dealt once)
        dealt = [r[rng.permutation(len(r))] for r in {id(r): r for r in task_rows}.values()]
        vals = ([np.concatenate([r[:max(1, int(round(VALIDATION_FRACTION * len(r))))]
                                 for r in dealt])] if m >= CV_BELOW
                else [np.concatenate([r[i::CV_FOLDS] for r in dealt])
                      for i in range(CV_FOLDS)])
        folds = _checked_parts(rows, vals, Y, task_rows)
    if folds is None:
        short = min(len(r) for r in task_rows)
        warnings.warn(
            f'max_features="auto" holds out rows of every task, but a task of {short} '
            f"rows cannot give {'a held-out part' if m >= CV_BELOW else f'{CV_FOLDS} folds'} "
            "a row and keep two training rows: the budget falls back to min(100, n // 6) "
            f'= {min(100, max(1, m // 6))} (and lambda_p="auto" to {DEFAULT_LEVEL}), as on '
            "data too small to hold rows out; pass max_features (and lambda_p), or give "
            "the task more rows.", UserWarning, stacklevel=user_stacklevel())
    return folds


def _strata(Y, task_rows):
    """Each row's class (and task, with ``task_rows``) of the +-1 codes ``Y``:
    the column of its +1 (one column per class) or its sign (binary)."""
    Y = np.asarray(Y)
    if Y.ndim == 2 and Y.shape[1] > 1:
        cls = np.argmax(Y, axis=1)
    else:
        cls = (Y.reshape(len(Y), -1)[:, 0] > 0).astype(int)
    if task_rows is None:
        return cls
    task = np.zeros(len(Y), dtype=int)
    for t, r in enumerate(task_rows):
        task[r] = t
    return task * (int(cls.max(initial=0)) + 1) + cls  # (one stratum per task and class)


def _fold_lacks_class(vals, row_strata, strata):
    """Whether a held-out part of ``vals`` has no row of a class of at least
    :data:`CV_FOLDS` rows (``row_strata``: the classes of the rows split)."""
    classes, counts = np.unique(row_strata, return_counts=True)
    common = classes[counts >= CV_FOLDS]
    return any(np.setdiff1d(common, strata[val]).size for val in vals)


def _checked_parts(rows, vals, Y, task_rows):
    """``(train, held_out)`` pairs of the held-out parts ``vals`` of ``rows``, or
    ``None`` when a task has fewer than two training rows or no held-out row."""
    folds = []
    for val in vals:
        val = np.sort(val)
        tr = np.setdiff1d(rows, val)
        if task_rows is not None:
            tr_rows = _row_subset(Y, task_rows, tr)[1]
            val_rows = _row_subset(Y, task_rows, val)[1]
            if min(len(r) for r in tr_rows) < 2 or min(len(r) for r in val_rows) < 1:
                return None
        folds.append((tr, val))
    return folds


def _curve_at(monitor, counts):
    """A fold's held-out loss at ``counts`` features (its last model beyond its path).

    A fold whose path added no feature (at a fixed ``lambda_p`` above all its
    candidates' scores, while other folds add some) has no loss yet: its model
    of no features is measured here, as :func:`select_level_held_out` does.
    """
    if not monitor.losses:  # the column-generation loop calls it per added batch only
        monitor()
    c = np.asarray(monitor.counts)
    idx = np.searchsorted(c, counts, side="right") - 1
    return np.asarray(monitor.losses)[np.maximum(idx, 0)]


class HeldOutRows:
    """Rows the held-out monitors of one fit complete their paths' new features into.

    A path priced in a sparse span keeps its features in the span's coordinates
    and completes them to all inputs where they leave it (``GrFL.features``): its
    monitor does so for the held-out rows' columns.  On 200 rows of 100,000 columns
    the regressor's folds completed about 700 features, each into a fresh array of
    the features added by one outer iteration (up to 100 rows, 80 MB), 570 MB a
    fit: touching fresh memory cost this machine 2-6 ns a number on top of the
    normal numbers' 4-5 ns (BENCHMARKS.md, twenty-third and twenty-fourth passes).
    The monitors of one fit run one after another and use the completed rows only
    to compute their columns, so they share these rows: sized once, to the path's
    budget (rows never used are never touched), each call given its first ``k``
    rows, the shape of the fresh array it replaces (hence the same products).
    """

    def __init__(self):
        self.array = None

    def __call__(self, path, k):
        """``k`` rows for ``path.features``, or ``None`` where the path does not
        complete its features (their rows are then stacked as they are)."""
        if getattr(path, "_seed", None) is None:
            return None
        n = path._span[2].n_params
        if self.array is None or self.array.shape[0] < k or self.array.shape[1] != n:
            # (the path's budget: room for any later call; untouched rows cost nothing)
            self.array = np.empty((max(k, path._budget), n))
        return self.array[:k]


class _HoldOut:
    """Loss of the path's models on held-out rows, after each outer iteration.

    Called by the column-generation loop; asks it to stop once the path holds
    ``PATIENCE_FACTOR`` times the best count plus ``PATIENCE_EXTRA`` features
    without a lower held-out loss.  ``rows``: a :class:`HeldOutRows` shared with the
    fit's other monitors (``None``: each call completes into a fresh array).
    """

    def __init__(self, path, X, Y, task_rows, loss, sample_weight, rows=None):
        self.path, self.X, self.Y, self.task_rows = path, X, Y, task_rows
        self.loss, self.w, self.rows = loss, sample_weight, rows
        self.Phi = np.empty((X.shape[0], 0))
        self.losses, self.counts = [], []

    def value(self, M):
        """Held-out loss of the margins ``M`` (rows x tasks)."""
        if self.task_rows is None:
            v = sum(self.loss.value(M[:, t], self.Y[:, t]) for t in range(M.shape[1]))
            return float(np.sum(v if self.w is None else self.w * v))
        tot = 0.0
        for t, (r, y) in enumerate(zip(self.task_rows, task_targets(self.Y, self.task_rows))):
            v = self.loss.value(M[r, t], y)
            tot += float(np.sum(v if self.w is None else self.w[r] * v))
        return tot

    def __call__(self, row=None):
        path, gs = self.path, self.path.gs
        f0, f1 = self.Phi.shape[1] // gs, path.p // gs
        if f1 > f0:
            out = None if self.rows is None else self.rows(path, f1 - f0)
            block = path.family.columns(path.features(np.arange(f0, f1), out), self.X)
            self.Phi = np.hstack([self.Phi, block * np.concatenate(path.scales[f0:f1])])
        U, us, b = path.coefficients()
        self.losses.append(self.value(self.Phi @ (U + us[:, None]) + b))
        self.counts.append(f1)
        # (named: the progress line and the stop reason say "validation",
        # not that a callback the user never gave asked to stop)
        return "validation" if f1 >= PATIENCE_FACTOR * self.best() + PATIENCE_EXTRA else False

    def best(self):
        """Feature count with the lowest held-out loss (the first on ties; 0
        when the path added none)."""
        return self.counts[int(np.argmin(self.losses))] if self.losses else 0


def select_level(start, folds, max_features, levels=AUTO_LEVELS, fold_tol=FOLD_TOL):
    """``lambda_p="auto"``: the level of lowest summed held-out loss over folds.

    Each fold's path starts at the largest level and descends
    ``levels``, warm-started: at each level the master is re-solved and
    features are added until none violates the optimality conditions at that
    level or ``max_features`` are active; then its model's held-out loss is
    measured.  The folds' masters are solved to ``fold_tol`` (or their
    solver's looser ``tol``): they only rank the levels (:data:`FOLD_TOL`).
    The descent stops at the first level whose summed loss is not lower than
    the previous level's (lower levels hold more features and cost more), so
    every fold runs the same levels.

    Parameters
    ----------
    start : callable
        ``start(train_rows, held_out_rows, level)`` returns a started
        :class:`~kernlearn.methods.grfl.GrFL` path on the training rows at
        ``level`` (its penalties' ``alpha`` carry the level) and a
        :class:`_HoldOut` of its held-out rows.
    folds : list of (ndarray, ndarray)
        Training and held-out rows (:func:`_validation_split`).
    max_features : int
        Feature budget of every path.
    levels : sequence of float, default=AUTO_LEVELS
        Decreasing candidate levels.
    fold_tol : float, default=FOLD_TOL
        Tolerance of the folds' masters.

    Returns
    -------
    level : float
        The chosen level.
    losses : list of float
        Summed held-out loss of each level run.
    """
    runs = [start(tr, val, levels[0]) for tr, val in folds]
    for path, _ in runs:
        _loosen(path, fold_tol)
    losses = []
    for i, lam in enumerate(levels):
        total = 0.0
        for path, monitor in runs:
            if i:
                _relevel(path, lam / levels[i - 1])
            path.extend(max_features)
            monitor()
            total += monitor.losses[-1]
        losses.append(total)
        if i and total >= losses[i - 1]:
            break
    return float(levels[int(np.argmin(losses))]), losses


def _loosen(path, tol):
    """Solve the path's masters to at least ``tol`` (a copy of its solver when
    its own is tighter: a solver object may be shared with other paths)."""
    solver = getattr(path, "solver", None)
    if solver is not None and getattr(solver, "tol", tol) < tol:
        path.solver = copy.copy(solver)
        path.solver.tol = tol
        # (its ConvergenceWarning named this tol the estimator's inner_tol)
        path.solver.tol_origin = "inner_tol, loosened to this in the folds choosing lambda_p"


def _relevel(path, factor):
    """The same path at ``factor`` times its level.

    Its master counts as unsolved, so it is solved at the new level before
    the path may stop (the features priced at the old point, as after any
    intermediate master).
    """
    path.penalty_p.alpha *= factor
    path._found = None
    path.exact = path.p == 0


def select_level_held_out(start, part, max_features, levels=AUTO_LEVELS):
    """``lambda_p="auto"`` and the budget on one held-out part.

    One path on the training rows descends ``levels`` from the largest,
    warm-started, its held-out loss measured after every outer iteration (as
    for the budget alone, :class:`_HoldOut`); at each level it runs until no
    feature violates the optimality conditions, ``max_features`` are active
    or the patience rule stops it.  The descent stops after a level whose
    models hold no lower held-out loss than the levels before (a level whose
    run the patience rule stopped does not end it: the next level re-solves
    the same features less shrunk, and on 500-row sets a level below one so
    stopped was kept).  The model kept is the one of lowest held-out loss:
    its level and its feature count (``monitor.best()``).

    Parameters
    ----------
    start : callable
        As in :func:`select_level`.
    part : (ndarray, ndarray)
        Training and held-out rows.
    max_features : int
        Feature budget of the path.
    levels : sequence of float, default=AUTO_LEVELS
        Decreasing candidate levels.

    Returns
    -------
    level : float
        The chosen level.
    path : GrFL
        The path (at the last level run); its history rows carry their
        model's held-out ``validation_loss``.
    monitor : _HoldOut
        Its held-out losses and feature counts, in the order measured.
    """
    path, monitor = start(*part, levels[0])
    path.callback = monitor
    at, best = [], np.inf  # the level of each measured model; the lowest loss
    for i, lam in enumerate(levels):
        if i:
            _relevel(path, lam / levels[i - 1])
        n0, r0 = len(monitor.losses), len(path.history)
        path.extend(max_features)
        if len(monitor.losses) == n0:  # no feature added: the re-solved model
            monitor()
        for row, v in zip(path.history[r0:], monitor.losses[n0:]):
            row["validation_loss"] = v
        at += [lam] * (len(monitor.losses) - n0)
        low = min(monitor.losses[n0:])
        if low >= best:
            break
        best = low
    return float(at[int(np.argmin(monitor.losses))]), path, monitor


def _validation_history(history, monitor, w_scale):
    """Held-out losses on a one-part run's history rows, on the weights' scale.

    The budget path measured every outer iteration (one loss a row);
    :func:`select_level_held_out` marked its rows itself.
    """
    if not any("validation_loss" in row for row in history):
        for row, v in zip(history, monitor.losses):
            row["validation_loss"] = v
    for row in history:
        row["validation_loss"] = row.get("validation_loss", np.nan) * w_scale
