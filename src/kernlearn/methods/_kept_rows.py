"""The rows of positive weight of an in-memory fit: a zero weight removes its row.

A row of zero weight adds nothing to a weighted loss, but every step before
the solver read it: the standardisation (a removed row at 3.3e38 in float32,
or near 1e308 in float64, was refused as "too large to standardise"), the
widths, the RBF kernels' distance shift, the intercept's scalar search (whose
sums moved in their last places) and the pools' scores.  The estimators
(FGM, GrFL, the low-rank kernels) therefore fit on the rows of positive
weight only, as ``PNormMKLClassifier`` and the multitask estimators do; the
unweighted and all-positive fits keep their code path and their bits.
"""

import numpy as np

from ._obscure_rows import positive_rows

__all__ = ["class_outputs", "positive_rows", "present_outputs",
           "rows_of_positive_weight"]


def rows_of_positive_weight(X, y, sample_weight):
    """``X``, ``y`` and the weights restricted to the rows of positive weight.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
    sample_weight : ndarray of shape (n_samples,) or None

    Returns
    -------
    X, y, sample_weight
        Restricted to the rows of positive weight (the inputs themselves when
        every row has weight, or no weights are given).
    """
    keep = positive_rows(sample_weight)
    if keep is None:
        return X, y, sample_weight
    return X[keep], np.asarray(y)[keep], sample_weight[keep]


def present_outputs(codes, absent):
    """The +-1 one-vs-rest ``codes`` of the classes left in a fit.

    A class whose rows all weigh zero has, on the rows kept, the code -1
    everywhere: a column of its own that the fit without the rows does not
    have, and that moved the others' model where outputs share it (the
    low-rank kernel's common weights: 0.08 on the decision values and other
    predictions).  Its column is left out; two classes left are one binary
    column, the second's (the coding of a two-class fit).

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_classes)
        +1 on a row's class, -1 elsewhere.
    absent : ndarray of int or None
        Positions of the classes weighed out (``check_weighted_classes``).

    Returns
    -------
    ndarray of shape (n_samples, n_outputs)
        ``codes`` itself when no class is absent.
    """
    if absent is None:
        return codes
    present = np.setdiff1d(np.arange(codes.shape[1]), absent)
    return codes[:, present[1:]] if len(present) == 2 else codes[:, present]


def class_outputs(values, absent, n_classes, axis=-1):
    """``values`` of the outputs of :func:`present_outputs`, one per class.

    The absent classes' outputs are 0 (their decision values are set below
    the others' at prediction, ``below_others``); a binary output ``f`` is
    ``-f`` and ``f`` for the two classes left (one-vs-rest codes of two
    classes are each other's negatives, so the arg max is the sign's class).

    Parameters
    ----------
    values : ndarray
        One entry per fitted output along ``axis``.
    absent : ndarray of int or None
    n_classes : int
    axis : int, default=-1

    Returns
    -------
    ndarray
        ``values`` itself when no class is absent, else with ``n_classes``
        entries along ``axis``.
    """
    if absent is None:
        return values
    values = np.moveaxis(np.asarray(values), axis, -1)
    present = np.setdiff1d(np.arange(n_classes), absent)
    out = np.zeros(values.shape[:-1] + (n_classes,), dtype=values.dtype)
    if len(present) == 2 and values.shape[-1] == 1:
        out[..., present[0]], out[..., present[1]] = -values[..., 0], values[..., 0]
    else:
        out[..., present] = values
    return np.moveaxis(out, -1, axis)
