"""The folds of the ``*CV`` multitask estimators (:mod:`kernlearn.estimators.mtmkl_cv`).

A fold is a (train, test) pair of row indices; every training fold is
checked to fit every task its validation rows hold, and rows of zero sample
weight are removed rows (in no fold).
"""

import numbers

import numpy as np
from sklearn.model_selection import check_cv

from ..utils._messages import plain_value
from ._multitask import split_tasks

__all__ = []


class _FoldsMixin:
    """The (train, test) folds of :class:`~kernlearn.estimators.mtmkl_cv._SelectionMixin`."""

    def _splits(self, strata, sw=None, task_index=None, pos=None):
        """The (train, test) folds, each training fold checked to fit every task.

        ``pos`` is each row's task position (``strata`` when not given).
        """
        # an int: StratifiedKFold on the strata (every task, and for the
        # classifier every task's classes, in every fold)
        cv = check_cv(self.cv, strata, classifier=True)
        if self.cv is None or isinstance(self.cv, numbers.Integral):
            self._check_fold_count(cv.n_splits, strata if sw is None else strata[sw > 0],
                                   pos is not None)
        if self.cv is None or isinstance(self.cv, numbers.Integral):
            cv = _Stratified(cv.n_splits)  # (the same folds, without the warning)
        if sw is None or np.all(sw > 0) or not (self.cv is None or isinstance(
                self.cv, numbers.Integral) or hasattr(self.cv, "split")):
            splits = _split(cv, np.arange(len(strata)), strata)
        else:
            # rows of zero weight are removed rows: in no fold (they were split
            # with the others, so a weighted fit chose another C than the fit
            # without them, and a training fold holding only such rows stopped
            # on "Sample weights must contain at least one non-zero number")
            keep = np.flatnonzero(sw > 0)
            folds = _split(cv, keep, strata[keep])
            given = None if isinstance(cv, _Stratified) else _split(
                cv, np.arange(len(strata)), strata)
            if given is not None and _fixed_folds(folds, len(keep), given):
                # a splitter of fixed folds (PredefinedSplit, a user's that ignores X)
                # numbers the caller's rows, not the kept ones: its folds, less those
                # rows (read as positions of kept rows, a user's folds of the first 30
                # of 60 rows were other rows, silently; PredefinedSplit's an IndexError)
                splits = [(tr[sw[tr] > 0], te[sw[te] > 0]) for tr, te in given]
            else:
                splits = [(keep[tr], keep[te]) for tr, te in folds]
        if not splits:
            # a generator of splits serves one fit: a refit's scores were all
            # NaN ("a validation score is not finite: [nan]")
            used_up = iter(self.cv) is self.cv if hasattr(self.cv, "__iter__") else False
            raise ValueError(
                "cv gave no (train, test) split" + (
                    ": a generator of splits is used up by the fit that first reads "
                    "it; pass a list of (train, test) pairs or a splitter (such as "
                    "KFold(5)) to fit again" if used_up else "."))
        for k, (tr, te) in enumerate(splits if sw is not None else ()):
            for rows, what in ((te, "validation"), (tr, "training")):
                if not np.any(sw[rows] > 0):
                    # (the classifier's np.average said ZeroDivisionError, the
                    # regressor's r2_score and both fold fits "Sample weights
                    # must contain at least one non-zero number")
                    raise ValueError(
                        f"the {what} rows of split {k} all have zero sample weight: " + (
                            "their weighted score is undefined" if what == "validation"
                            else "a fit of them fits nothing") +
                        f"; give every {what} fold a row of positive weight.")
        # a row of zero weight is a removed row, counted in neither fold (a fold fit
        # stopped on "every task needs at least 2 samples of positive weight")
        self._check_training_folds(
            splits if sw is None else [(tr[sw[tr] > 0], te[sw[te] > 0]) for tr, te in splits],
            strata if pos is None else pos, task_index, sw)
        return splits

    def _check_fold_count(self, n_splits, strata, by_class):
        """Refuse more folds than rows of every task (of each class, ``by_class``).

        scikit-learn's splitter said "n_splits=5 cannot be greater than the
        number of members in each class" about 30 tasks of 4 rows each.
        """
        most = int(np.bincount(strata).max())
        if most < n_splits:
            rows = "rows of one class" if by_class else "rows"
            loo = "" if by_class else ", cv='loo' where it applies,"
            raise ValueError(
                f"cv={n_splits} folds stratified by task need some task with {n_splits} "
                f"{rows}; no task has more than {most}: use at most "
                f"cv={max(most, 2)}{loo} or a list of (train, test) pairs.")

    @staticmethod
    def _check_training_folds(splits, pos, task_index, sw=None):
        """Refuse folds whose training rows cannot fit a task their test rows hold.

        A task of two rows split over two folds leaves one row in a training
        fold, whose fit stopped on "every task needs at least 2 samples;
        task(s) [np.int64(7)] have one", about data that has two.  With
        ``sw`` (sample weights) a task's total counts its rows of positive
        weight (the folds given are already without the others).
        """
        n_tasks = int(pos.max()) + 1 if len(pos) else 0
        for k, (tr, te) in enumerate(splits):
            n_train = np.bincount(pos[tr], minlength=n_tasks)
            n_test = np.bincount(pos[te], minlength=n_tasks)
            short = np.flatnonzero((n_train < 2) & ((n_train > 0) | (n_test > 0)))
            if short.size:
                t = short[0]
                name = ("its only task" if task_index is None else
                        f"task {plain_value(split_tasks(task_index, len(pos))[0][t])!r}")
                raise ValueError(
                    f"cross-validation fold {k} leaves {int(n_train[t])} training "
                    f"row(s) of {name} ({_count(pos == t, sw)}; a fit needs "
                    "2 of every task): use fewer folds, cv='loo' where it applies, "
                    "or add samples to the task.")


class _Stratified:
    """The folds of scikit-learn's ``StratifiedKFold(n_splits)`` (no shuffle),
    without its warning about a stratum of fewer rows than folds.

    The strata are tasks (and classes): "The least populated class in y has
    only 3 members, which is less than n_splits=5" named a class of targets
    that have none (a regressor's) or of labels that had plenty, about a task
    of 3 rows.  Nothing is wrong then: such a task is in the validation folds
    it has rows for, every row is validated once, and every training fold
    holds two rows of each task (of each class) it validates
    (:meth:`_FoldsMixin._check_training_folds`, ``_check_lone_classes``).
    """

    def __init__(self, n_splits):
        self.n_splits = n_splits

    def split(self, X, strata):
        """(train, test) index pairs, as ``StratifiedKFold(n_splits).split``."""
        k = self.n_splits
        # strata coded by order of first appearance, then scikit-learn's
        # allocation: a round robin over the sorted codes gives each fold its
        # share of every stratum, assigned to the stratum's rows in order
        _, first, inv = np.unique(strata, return_index=True, return_inverse=True)
        code = np.argsort(np.argsort(first))[inv.ravel()]
        ordered = np.sort(code)
        share = [np.bincount(ordered[i::k], minlength=len(first)) for i in range(k)]
        fold = np.empty(len(code), dtype=np.int64)
        for c in range(len(first)):
            fold[code == c] = np.repeat(np.arange(k), [s[c] for s in share])
        rows = np.arange(len(code))
        return [(rows[fold != i], rows[fold == i]) for i in range(k)]


def _count(rows, sw):
    """"N in all" of a task's rows (a mask), "N of positive weight in all" with zero weights.

    A row of zero weight is a removed row: "(10 in all" was said of a task whose
    fits saw 5.
    """
    if sw is None or np.all(sw > 0):
        return f"{int(np.sum(rows))} in all"
    return f"{int(np.sum(rows & (sw > 0)))} of positive weight in all"


def _fixed_folds(folds, n_kept, given):
    """Whether a splitter's ``folds`` over the ``n_kept`` rows of positive weight are
    its folds over the caller's rows (``given``): folds that ignore X, or that
    number more rows than were passed, are the caller's row numbers."""
    if any(np.max(a, initial=-1) >= n_kept for pair in folds for a in pair):
        return True
    return len(folds) == len(given) and all(
        np.array_equal(a, b) for p, q in zip(folds, given) for a, b in zip(p, q))


def _split(cv, rows, strata):
    """``cv``'s (train, test) pairs over ``rows`` (positions in ``rows``).

    A splitter by groups (``GroupKFold``, ``LeaveOneGroupOut``...) stopped on
    scikit-learn's "The 'groups' parameter should not be None", which ``fit``
    has no way to pass: named, with what to do instead.  Boolean masks (an
    iterable of mask pairs, as scikit-learn's searches take) become indices:
    the CV classifier's fold starts stopped on NumPy's "boolean array
    indexing assignment cannot assign 150 input values to the 100 output values".
    """
    try:
        return [tuple(np.flatnonzero(a) if np.asarray(a).dtype == bool else a
                      for a in pair) for pair in cv.split(np.zeros((len(rows), 1)), strata)]
    except ValueError as err:
        if "'groups'" not in str(err):
            raise
        raise ValueError(
            f"cv={cv!r} splits by groups, which fit does not take (it splits "
            "X and the task positions): pass the pairs it makes, "
            "cv=list(splitter.split(X, y, groups)), whose training folds hold two "
            "rows of every task their test rows hold.") from err
