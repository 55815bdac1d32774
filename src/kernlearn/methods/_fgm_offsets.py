"""FGM on columns far from zero: centre them before the fit, map the intercept back."""

import numpy as np

__all__ = ["CENTRE_OFFSET", "centre_far_offsets", "raw_intercept"]

#: Column offsets (in units of the column's spread) beyond which
#: :func:`centre_far_offsets` centres a dense ``X`` on a copy: two orders of
#: magnitude below the measured failure (1e6), above every real set of the
#: breadth benchmark (largest: 2.5e3, a year column).
CENTRE_OFFSET = 1e4


def centre_far_offsets(X, standardization, fit_intercept=True):
    """``(X, shift)``: ``X - shift`` when a column sits too far from zero, else ``X``.

    FGM centres implicitly, through the intercept, and never copies ``X``
    for it.  A column whose mean is more than :data:`CENTRE_OFFSET` times its
    spread makes its weight and the intercept nearly collinear for the master
    solver (the Hessian's condition grows as the square of that ratio):
    measured on real sets shifted by 1e6 x their spread
    (``benchmarks/data_kinds.py``, ``offset``), the Newton master failed on
    NaN or lost 10-50 accuracy points, while at 1e5 x the fits were those of
    the unshifted data.  Such an ``X`` (in memory, dense, with an intercept)
    is centred on a copy; :func:`raw_intercept` maps the intercept back.

    Parameters
    ----------
    X : ndarray, sparse matrix or RowPartitioned of shape (n_samples, n_features)
        Training data.
    standardization : kernlearn.preprocessing.Standardization
        Its :func:`fgm_standardization` (``mean`` is ``None`` unless dense).
    fit_intercept : bool, default=True
        Without an intercept nothing is centred.

    Returns
    -------
    X : the data to fit on
    shift : ndarray of shape (n_features,) or None
        The column means subtracted (``None``: ``X`` is returned as given).
    """
    mean, scale = standardization.mean, standardization.scale
    if (mean is None or not fit_intercept or not isinstance(X, np.ndarray)
            or not np.any(np.abs(mean) > CENTRE_OFFSET * scale)):
        return X, None
    return (X - mean).astype(X.dtype, copy=False), mean


def raw_intercept(result, shift):
    """Intercepts of ``result`` (fitted on ``X - shift``) for the raw ``X``.

    Parameters
    ----------
    result : FGMResult
        Coefficients ``(K, n_features)`` and intercepts ``(K,)``.
    shift : ndarray of shape (n_features,) or None
        From :func:`centre_far_offsets`.

    Returns
    -------
    intercept : ndarray of shape (K,)
    """
    if shift is None:
        return result.intercept
    return result.intercept - result.coef @ shift
