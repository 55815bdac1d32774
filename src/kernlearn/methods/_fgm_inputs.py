"""FGM on a family's generated features: what the model says about its inputs.

With ``family=`` FGM selects generated columns (monomials ``x_j x_k``, blocks
of an additive kernel's map), so its weights are not one per input feature and
scikit-learn's selectors (``SelectFromModel``, ``RFE``), which read ``coef_``
as one weight per input, would keep inputs by the generated columns' positions.
:func:`input_importances` gives them what they need instead: one importance per
input, from the selected columns that read it.
"""

import numpy as np
import scipy.sparse as sp

from .fgm import _coef_at


def input_importances(pool, coef, selected, X, sample_weight=None):
    r"""Importance of each input feature of an FGM model on a family's columns.

    A selected generated column :math:`g` with raw weights :math:`w_g` (one per
    output) moves the decision function by :math:`\|w_g\|\,\sigma_g` over the
    training rows, :math:`\sigma_g` the (weighted) standard deviation of the
    column there: a measure that does not depend on the inputs' units nor on
    how the family scales its columns.  An input's importance is the sum over
    the selected columns that read it (``x_j x_k`` counts for both ``j`` and
    ``k``), normalised to sum to one.

    Parameters
    ----------
    pool : family
        The fitted family (``FGMResult.pool``).
    coef : sparse matrix of shape (n_outputs, n_virtual)
        Weights on the family's raw generated columns (``FGMResult.coef``).
    selected : ndarray of int
        Selected virtual ids.
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The training inputs.
    sample_weight : ndarray of shape (n_samples,), optional
        Training row weights.

    Returns
    -------
    importances : ndarray of shape (n_features,) or None
        ``None`` when the family's columns are not functions of a few inputs
        (e.g. Nystrom columns, which read every input).
    """
    ids = np.sort(np.asarray(selected, dtype=np.int64))
    try:
        incidence = pool.input_incidence(ids)
    except (AttributeError, NotImplementedError):
        return None
    n_features = incidence.shape[1]
    if ids.size == 0:
        return np.full(n_features, 1.0 / n_features)
    cols = pool.raw_columns(ids, X)
    w = np.full(X.shape[0], 1.0) if sample_weight is None else np.asarray(sample_weight, float)
    w = w / w.sum()
    if sp.issparse(cols):
        mean = np.asarray(cols.T @ w).ravel()
        sq = np.asarray(cols.multiply(cols).T @ w).ravel()
    else:
        cols = np.asarray(cols, dtype=float)
        mean, sq = w @ cols, w @ (cols * cols)
    spread = np.sqrt(np.maximum(sq - mean * mean, 0.0))
    amp = np.linalg.norm(_coef_at(coef, ids), axis=1) * spread
    imp = np.asarray(incidence.T @ amp).ravel()
    total = imp.sum()
    return imp / total if total > 0 else np.full(n_features, 1.0 / n_features)
