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
