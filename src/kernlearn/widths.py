r"""Kernel widths: the one resolver of ``gamma`` and the data-derived scales.

:func:`resolve_gamma` turns ``"scale"`` (scikit-learn's
:math:`1/(D\,\mathrm{Var}(X))`), ``"mean"`` (OBSCURE's inverse mean squared
pairwise distance) or a number into a checked positive width; every kernel
list and family resolves its widths through it.  :mod:`kernlearn.kernels`
re-exports these names.
"""

import functools
import numbers
import warnings

import numpy as np
import scipy.sparse as sp

from .preprocessing import ONE_PASS_OFFSET
from .utils._sparse import distance_shift, shift_rows
from .utils._warnings import user_stacklevel

__all__ = [
    "centred_row_stats",
    "convert_width",
    "distance_to_kernel",
    "mean_pairwise_sq_distance",
    "pairwise_spread_ratio",
    "resolve_gamma",
    "scale_gamma",
]

# gamma values computed from the training view of a kernel
_DATA_GAMMAS = ("scale", "mean")

#: Rows :func:`pairwise_spread_ratio` looks at (at most ~125,000 pairs).
SPREAD_ROWS = 500


def _row_sq_norms(X):
    if sp.issparse(X):
        with np.errstate(over="ignore"):  # (float32: repaired just below)
            sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        if sq.dtype != np.float64 and not np.isfinite(sq).all():
            # a float32 matrix squares in float32, past 3.4e38 (entries of
            # 2e19): inf, and a normalised kernel refused "too large for
            # float64" a row float64 holds; those rows again in float64
            bad = np.flatnonzero(~np.isfinite(sq))
            sq = sq.astype(np.float64)
            B = X.tocsr()[bad].astype(np.float64)
            sq[bad] = np.asarray(B.multiply(B).sum(axis=1)).ravel()
        return sq
    X = np.asarray(X, dtype=float)
    return np.einsum("ij,ij->i", X, X)


def centred_row_stats(X, center=None):
    r"""Squared norms of the rows of ``X - center`` and the products ``X @ center``.

    :math:`\|x-c\|^2 = \|x\|^2 - 2x^\top c + c^\top c` from the (sparse) rows
    themselves: the diagonal of the dot-product kernels of rows centred
    implicitly (:func:`~kernlearn.preprocessing.centred_dots`).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, n_features)
    center : ndarray of shape (n_features,), optional
        ``None``: the plain squared norms.

    Returns
    -------
    sq : ndarray of shape (n,)
    u : ndarray of shape (n,) or None
        ``X @ center`` (``None`` without a centre).
    """
    sq = _row_sq_norms(X)
    if center is None:
        return sq, None
    u = np.asarray(X @ center, dtype=np.float64).ravel()
    return np.maximum(sq - 2.0 * u + center @ center, 0.0), u


def scale_gamma(X, sample_weight=None):
    """scikit-learn's ``gamma="scale"``: :math:`1 / (D\\,\\mathrm{Var}(X))`.

    Dense ``X``: the variance is over all entries, as scikit-learn computes it
    (on standardised, centred columns it is one).  Sparse ``X``: the mean of
    the columns' variances.  The library never centres sparse columns (that
    would densify them), and a translation-invariant kernel does not see the
    columns' means either; over all entries, the spread of those means
    counted as variance, so columns with offsets (a year, a temperature in
    kelvin, standardised but not centred) made the kernel far too wide: on
    dense suite sets passed as CSR, ``PNormMKLClassifier()`` fell from 0.79
    to 0.37 accuracy on glass.  Both are the same on centred columns.  A
    constant ``X`` gives ``1 / D``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Training inputs.
    sample_weight : ndarray of shape (n_samples,), optional
        Row weights (the variance of the data with rows repeated).

    Returns
    -------
    gamma : float
    """
    if sample_weight is not None and not np.all(np.asarray(sample_weight) > 0):
        # a row of zero weight is a removed row: left out, not weighted by 0
        # (a square that overflows times 0 is NaN: "cannot be computed" for a
        # zero-weight row at 1e200, where the fit without it has a width)
        keep = np.flatnonzero(np.asarray(sample_weight) > 0)
        X = X[keep] if sp.issparse(X) else np.asarray(X)[keep]  # (its dtype kept)
        sample_weight = np.asarray(sample_weight)[keep]
    if sp.issparse(X):
        var = float(np.mean(_column_variances(X, sample_weight)))
    elif sample_weight is not None:
        w = np.asarray(sample_weight, dtype=float) / np.sum(sample_weight)
        sq = np.square(np.asarray(X, dtype=float))
        mean = float(w @ np.asarray(X.mean(axis=1)).ravel())
        var = float(w @ np.asarray(sq.mean(axis=1)).ravel()) - mean**2
        if mean**2 > ONE_PASS_OFFSET * var:  # (far from zero: the one pass lost it)
            var = float(w @ np.square(np.asarray(X, dtype=float) - mean).mean(axis=1))
    else:
        var = float(np.var(np.asarray(X, dtype=float)))
    if not np.isfinite(var):
        return 0.0  # overflow: resolve_gamma names the cause
    var = var if var > 0 else 1.0
    return 1.0 / (X.shape[1] * var)


def convert_width(sigma=None, gamma=None):
    r"""The one conversion between a Gaussian width ``sigma`` and ``gamma``.

    :math:`\exp(-\|x-x'\|^2/(2\sigma^2)) = \exp(-\gamma\|x-x'\|^2)` with
    :math:`\gamma = 1/(2\sigma^2)`.  The library's convention is ``gamma``;
    ``sigma`` is accepted only where a paper's notation uses it
    (:class:`~kernlearn.families.RandomFourierFeatures` ``bandwidth``).

    Parameters
    ----------
    sigma : float or ndarray, optional
        Width(s) :math:`\sigma > 0`; give exactly one of ``sigma`` and ``gamma``.
    gamma : float or ndarray, optional
        Inverse squared width(s) :math:`\gamma > 0`.

    Returns
    -------
    value : float or ndarray
        ``gamma`` of the given ``sigma``, or ``sigma`` of the given ``gamma``.
    """
    if (sigma is None) == (gamma is None):
        raise ValueError("give exactly one of sigma and gamma.")
    if gamma is None:
        return 1.0 / (2.0 * np.square(sigma))
    return 1.0 / np.sqrt(2.0 * np.asarray(gamma, dtype=float))


def mean_pairwise_sq_distance(X):
    r"""Mean squared Euclidean distance over all pairs ``i != j``, in O(n d).

    .. math:: \frac{1}{n(n-1)}\sum_{i\neq j}\|x_i - x_j\|^2
              = \frac{2n}{n-1}\Big(\frac1n\sum_i\|x_i\|^2 - \|\bar x\|^2\Big).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, n_features)

    Returns
    -------
    mean : float

    References
    ----------
    Orabona, Jie, Caputo (2012), JMLR 13, sec. 5.1.2: the RBF bandwidth is
    the average squared pairwise distance.
    """
    n = X.shape[0]
    if n < 2:
        return 0.0
    X = shift_rows(distance_shift(X), X)[0]  # (rows far from zero: their digits kept)
    mu = np.asarray(X.mean(axis=0)).ravel()
    val = 2.0 * n / (n - 1) * (_row_sq_norms(X).mean() - float(mu @ mu))
    return max(val, 0.0)


def pairwise_spread_ratio(X, rows=None, max_rows=SPREAD_ROWS, at_most=None):
    r"""Mean over median of the squared pairwise distances: how far the tails reach.

    On rows drawn from a light-tailed distribution the two are close (a ratio
    of 1-2 on most of the breadth suite's sets); when a few far-out rows make
    most of the spread (log-normal columns, counts, career totals) the mean
    is many times the median, and a width set on the variance (``"scale"``)
    is far too broad for the bulk of the rows: they all look alike to the
    kernel.  Computed on at most ``max_rows`` evenly spaced rows (no random
    draw, so a fit's random stream is untouched), over their pairs ``i < j``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, n_features)
        Rows (as the kernel sees them).
    rows : ndarray of int, optional
        The rows of ``X`` to look at (e.g. those of positive weight); all by
        default.
    max_rows : int, default=SPREAD_ROWS
        At most this many rows enter (``max_rows * (max_rows - 1) / 2`` pairs).
    at_most : float, optional
        For a caller that only asks whether the ratio exceeds this positive
        value: when a count of the pairs shows that it does not, this
        value is returned without the median (whose partition of the pairs
        was half of this function's cost).  ``ratio > at_most`` is then
        decided as the exact ratio decides it.

    Returns
    -------
    ratio : float
        ``mean / median``; ``1.0`` with fewer than two rows or a zero median
        (over half the pairs equal: the median says nothing about a spread);
        ``at_most`` when that is given and the ratio is shown not to exceed it.
    """
    rows = np.arange(X.shape[0]) if rows is None else np.asarray(rows)
    n = len(rows)
    if n < 2:
        return 1.0
    rows = rows[np.unique(np.linspace(0, n - 1, min(n, int(max_rows))).astype(int))]
    S = X[rows]
    if sp.issparse(S) and S.dtype.kind in "biu":
        # (as floats: a boolean matrix's products are logical, 1 for any overlap)
        S = S.astype(float)
    S = S if sp.issparse(S) else shift_rows(distance_shift(S), np.asarray(S, dtype=float))[0]
    sq = _row_sq_norms(S)
    inner = S @ S.T
    # (the dense product is a new array already: a copy of it cost as much
    # as the product at 500 rows)
    inner = inner.toarray() if sp.issparse(inner) else np.asarray(inner, dtype=float)
    # the squared distances in place (the same operations as sq_i + sq_j -
    # 2 inner_ij), the pairs i < j through a kept mask (triu_indices' index
    # arrays and the temporaries were most of the cost, 4 of 5 ms at 500 rows)
    inner *= 2.0
    d = _pair_distances(sq, inner)[_upper_pairs(len(rows))]
    np.maximum(d, 0.0, out=d)
    mean = float(np.mean(d))  # (before the median reorders d)
    if at_most is not None and at_most > 0 and _median_at_least(
            d, mean / at_most * (1.0 + 1e-6)):
        return float(at_most)
    med = float(np.median(d, overwrite_input=True))
    if not (med > 0 and np.isfinite(med)):
        return 1.0
    return mean / med


def _pair_distances(sq, inner):
    """``np.add.outer(sq, sq) - inner``, written into ``inner`` a block of rows at a time.

    The same values (in ``sq``'s type) without the two temporaries of
    ``inner``'s size: at 400-500 rows each was a fresh mapping of 1.3-2 MB
    whose first touch of every page cost more than the arithmetic (1.7 of
    2.1 ms at 400 rows); the block buffer stays in cache.

    Parameters
    ----------
    sq : ndarray of shape (k,)
        Squared norms of the rows.
    inner : ndarray of shape (k, k)
        Twice their inner products; overwritten (unless its type is not the
        result's: then a converted copy is).

    Returns
    -------
    D : ndarray of shape (k, k)
        The squared distances (not yet clipped at zero).
    """
    inner = inner.astype(np.result_type(sq, inner), copy=False)
    k = len(sq)
    rows = max(1, 8192 // max(k, 1))  # (a 64 kB buffer)
    buf = np.empty((min(rows, k), k), dtype=sq.dtype)
    for i in range(0, k, rows):
        block = buf[: min(rows, k - i)]
        np.add(sq[i : i + rows, None], sq[None, :], out=block)
        np.subtract(block, inner[i : i + rows], out=inner[i : i + rows])
    return inner


def _median_at_least(d, c):
    """Whether ``np.median(d) >= c`` is certain from a count: O(n), no partition.

    With at most ``(len(d) - 1) // 2`` entries below ``c``, both middle order
    statistics are at least ``c``, and so is their mean (rounding is
    monotone).  At ``c = mean / at_most * (1 + 1e-6)`` that gives ``mean /
    median <= at_most / (1 + 1e-6)``, a margin that the round-off of the
    divisions (a few units of 1e-16) cannot cross.  A ``c`` that is not a
    positive finite number (an infinite or NaN mean) decides nothing, nor
    does one near the subnormal range: there ``mean / at_most`` rounds to a
    multiple of 5e-324, an error far past the margin (squared distances of
    1e-322: ratios of 3.05 were returned as 3).
    """
    if not (np.isfinite(c) and c >= 2.0 * np.finfo(np.float64).tiny):
        return False
    return int(np.count_nonzero(d < c)) <= (len(d) - 1) // 2


@functools.lru_cache(maxsize=4)
def _upper_pairs(n):
    """The boolean mask of the pairs ``i < j`` of ``n`` rows, in row-major order
    (that of ``np.triu_indices(n, 1)``); read-only, kept for the next fit."""
    mask = np.triu(np.ones((n, n), dtype=bool), 1)
    mask.flags.writeable = False
    return mask


def _column_variances(X, sample_weight=None):
    """Per-column (weighted) variances of dense or sparse ``X`` (never densified)."""
    if sp.issparse(X):
        if sample_weight is None:
            mean = np.asarray(X.mean(axis=0)).ravel()
            sq = np.asarray(X.multiply(X).mean(axis=0)).ravel()
        else:
            w = np.asarray(sample_weight, dtype=float) / np.sum(sample_weight)
            mean = np.asarray(X.T @ w, dtype=float).ravel()
            sq = np.asarray(X.multiply(X).T @ w, dtype=float).ravel()
        return np.maximum(sq - mean**2, 0.0)
    X = np.asarray(X, dtype=float)
    if sample_weight is None:
        return np.var(X, axis=0)
    mean = np.average(X, axis=0, weights=sample_weight)
    return np.average((X - mean) ** 2, axis=0, weights=sample_weight)


def resolve_gamma(gamma, X=None, kernel="rbf", sample_weight=None, name="gamma"):
    r"""The one resolver of kernel widths: ``"scale"``, ``"mean"`` or a number.

    * ``"scale"`` (and ``None``): scikit-learn's
      :math:`\gamma = 1/(D\,\mathrm{Var}(X))` (:func:`scale_gamma`, weighted
      by ``sample_weight`` when given);
    * ``"mean"`` (``rbf`` only): the inverse mean squared pairwise distance
      :math:`1/\overline{d^2}` (:func:`mean_pairwise_sq_distance`, OBSCURE
      sec. 5.1.2; unweighted, over the rows of positive ``sample_weight``),
      ``1`` when every row is equal;
    * a number: checked to be finite and positive.

    A width that cannot be computed (the data's spread overflows, e.g. values
    near 1e300) raises ``ValueError`` naming the data rather than returning
    0.  A data-derived width that one column dominates (it holds over 99 % of
    the variance while other columns vary too, as with columns on scales
    1e-4 .. 1e6) is computed but warned about: the kernel then sees that
    column alone; standardise the columns.

    Parameters
    ----------
    gamma : float, "scale", "mean" or None
        The width as given.
    X : ndarray or sparse matrix of shape (n, n_features), optional
        The training inputs (view) the kernel sees; needed for ``"scale"`` /
        ``"mean"`` / ``None``.
    kernel : str or callable, default="rbf"
        The kernel the width belongs to (``"mean"`` is defined for ``rbf``).
    sample_weight : ndarray of shape (n,), optional
        Row weights of ``"scale"`` (``"mean"`` leaves out rows of zero weight).
    name : str, default="gamma"
        How the parameter is named in messages (e.g. ``"kernels[1]: gamma"``).

    Returns
    -------
    gamma : float
        A finite positive width.
    """
    check_gamma(gamma, kernel, name)
    if gamma is None or (isinstance(gamma, str) and gamma in _DATA_GAMMAS):
        if X is None:
            raise ValueError(f"{name}={gamma!r} is computed from the data: pass X.")
        if sample_weight is not None and not np.all(np.asarray(sample_weight) > 0):
            # a row of zero weight is a removed row, for the width and for the
            # warnings below alike: those read every row, unweighted (a removed
            # row far out gave NumPy's overflow warnings, or a column that
            # dominated only through it a warning of its own)
            keep = np.flatnonzero(np.asarray(sample_weight) > 0)
            X = X[keep] if sp.issparse(X) else np.asarray(X)[keep]  # (its dtype kept)
            sample_weight = np.asarray(sample_weight)[keep]
        with np.errstate(over="ignore", invalid="ignore"):
            if gamma == "mean":
                # unweighted, but over the rows a fit sees (above)
                m = mean_pairwise_sq_distance(X)
                value = 1.0 / m if m > 0 else (1.0 if m == 0 else np.nan)
            else:
                value = scale_gamma(X, sample_weight)
        if not (np.isfinite(value) and value > 0):
            shown = "'scale'" if gamma is None else repr(gamma)
            raise ValueError(
                f"{name}={shown} cannot be computed: the "
                "spread of the data overflows (values of magnitude up to "
                f"{_max_abs(X):.3g}); rescale the inputs (standardize=True does)."
            )
        _warn_dominant_column(X, name, gamma)
        if gamma != "mean":
            _warn_column_offsets(X, sample_weight, name, gamma)
        return float(value)
    return float(gamma)


def check_gamma(gamma, kernel="rbf", name="gamma"):
    """Refuse what :func:`resolve_gamma` refuses without reading data.

    A width computed from the data (``"scale"``, ``"mean"``, ``None``) is not
    computed: only ``"mean"`` beside a kernel other than ``rbf`` is refused;
    any other value must be a finite positive number.  The command line
    checks a low-rank estimator's ``kernel_params`` with it before reading
    the data (a ``gamma`` of ``"Scale"`` was refused by the fit, exit 6).

    Parameters
    ----------
    gamma : float, "scale", "mean" or None
        The width as given.
    kernel : str or callable, default="rbf"
        The kernel the width belongs to.
    name : str, default="gamma"
        How the parameter is named in messages.

    Raises
    ------
    ValueError
        Naming the parameter and the value.
    """
    if gamma is None or (isinstance(gamma, str) and gamma in _DATA_GAMMAS):
        if gamma == "mean" and kernel != "rbf":
            raise ValueError(f"{name}='mean' is only defined for 'rbf'.")
        return
    if (isinstance(gamma, (str, bool)) or not isinstance(gamma, numbers.Real)
            or not np.isfinite(gamma) or gamma <= 0):
        # ("a positive number, 'scale', got" for non-RBF kernels; a list of
        # widths, which is several kernels, got no word on how to write them)
        raise ValueError(
            f"{name} must be a positive number"
            + (", 'scale' or 'mean'" if kernel == "rbf" else " or 'scale'")
            + f", got {gamma!r}" + (
                " (several widths are several kernels: one spec per width)"
                if isinstance(gamma, (list, tuple, np.ndarray)) else "") + "."
        )


def _max_abs(X):
    data = X.data if sp.issparse(X) else np.asarray(X)
    return float(np.max(np.abs(data))) if data.size else 0.0


def _warn_dominant_column(X, name, gamma):
    """Warn when one column holds nearly all the variance a width is set on."""
    if X.shape[1] < 2:
        return
    v = _column_variances(X)
    total = float(v.sum())
    if not np.isfinite(total) or total <= 0:
        return
    top = int(np.argmax(v))
    if v[top] > 0.99 * total and np.count_nonzero(v > 0) > 1:
        warnings.warn(
            f"{name}={'scale' if gamma is None else gamma!r}: column {top} holds "
            f"{100 * v[top] / total:.3g}% of the variance, so the kernel barely sees "
            "the other columns (columns on very different scales); standardise the "
            "inputs (standardize=True) or give the kernel its own width.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


#: :func:`_warn_column_offsets` warns when the variance over all entries is
#: this many times the columns' mean variance: ``gamma="scale"`` then puts
#: the typical squared distance at ``2 / OFFSET_RATIO`` of the kernel's width
#: (kernel values near 0.98; on standardised columns it is 2).
OFFSET_RATIO = 100.0


def _warn_column_offsets(X, sample_weight, name, gamma):
    """Warn when the columns' means, not their spreads, set ``"scale"``'s width.

    On dense ``X`` the variance is over all entries (:func:`scale_gamma`, as
    scikit-learn computes it), so the spread of the columns' means counts: a
    column near 1.6e9 (a time stamp) beside unit columns, not standardised,
    made the width 1e17 times too broad, every kernel value 1, and the model
    a constant (``standardize=False``: accuracy 0.525 where standardised fits
    scored 1.0), without a word.  Sparse ``X`` already uses the columns' own
    variances.
    """
    if sp.issparse(X) or X.shape[1] < 2:
        return
    own = float(np.mean(_column_variances(X, sample_weight)))
    if not (np.isfinite(own) and own > 0):
        return
    ratio = 1.0 / (X.shape[1] * own * scale_gamma(X, sample_weight))
    if ratio > OFFSET_RATIO:
        warnings.warn(
            f"{name}={'scale' if gamma is None else gamma!r}: the columns' means differ "
            f"so much that X's variance over all entries is {ratio:.3g} times the "
            "columns' own variances, so the kernel is nearly constant on the data; "
            "standardise the inputs (standardize=True), centre the columns or give "
            "the kernel its own width.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


def _is_training_distance(D):
    """Whether ``D`` is square, symmetric and zero on the diagonal."""
    if D.shape[0] != D.shape[1]:
        return False
    tol = 1e-12 * max(float(D.max()) if D.size else 0.0, 1e-300)
    return bool(np.all(np.abs(np.diag(D)) <= tol)
                and np.allclose(D, D.T, rtol=1e-10, atol=tol))


def distance_to_kernel(D, gamma=None, return_gamma=False):
    r"""Turn a distance matrix into the kernel :math:`\exp(-d/\gamma)`.

    Parameters
    ----------
    D : array-like of shape (n_X, n_Y)
        Non-negative distances.
    gamma : float, optional
        Scale.  By default the mean off-diagonal distance of the *training*
        matrix ``D`` (the OBSCURE paper's choice for the Oxford flowers
        distances); without ``gamma``, ``D`` must be a training matrix (square,
        symmetric, zero diagonal), else ``ValueError``.  A test-vs-train ``D``
        (even a square one) needs the training value: get it with
        ``return_gamma=True`` on the training distances, so that test kernels
        use the training scale.
    return_gamma : bool, default=False
        Also return the scale used.

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
        The kernel.
    gamma : float
        The scale (only with ``return_gamma=True``).

    References
    ----------
    Orabona, Jie, Caputo (2012), JMLR 13, sec. 5.1.1.
    """
    D = np.asarray(D, dtype=float)
    if D.ndim != 2:
        raise ValueError(f"D must be a 2-D distance matrix, got shape {D.shape}.")
    if not np.isfinite(D).all() or (D < 0).any():
        raise ValueError("D must contain finite non-negative distances.")
    if gamma is None:
        # only the training matrix (square, symmetric, zero diagonal) defines the
        # scale: a test-vs-train matrix of a test set as large as the training
        # set is square too, and its own mean would rescale the test kernel
        if not _is_training_distance(D):
            raise ValueError(
                f"D (shape {D.shape}) is not a training distance matrix (square, "
                "symmetric, zero diagonal): a test-vs-train distance matrix needs the "
                "training scale; pass gamma= (distance_to_kernel(D_train, "
                "return_gamma=True) returns it)."
            )
        mask = ~np.eye(*D.shape, dtype=bool)
        gamma = float(np.mean(D[mask])) if D.shape[0] > 1 else 1.0
        gamma = gamma if gamma > 0 else 1.0
    if gamma <= 0:
        raise ValueError(f"gamma must be positive, got {gamma!r}.")
    K = np.exp(-D / gamma)
    return (K, float(gamma)) if return_gamma else K
