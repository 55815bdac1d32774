"""The histogram kernels (intersection, additive chi-squared) of :mod:`kernlearn.kernels`.

Kept apart from the kernel list's module (its size); :mod:`kernlearn.kernels`
re-exports them.
"""

from numbers import Integral

import numpy as np
import scipy.sparse as sp

from ._sparse_histogram import refuse_non_finite, sparse_histogram_diag, sparse_histogram_kernel
from .utils._finite import is_finite_number
from .utils._warnings import warn

__all__ = ["additive_chi2_kernel", "hik_kernel"]


class NegativeFeaturesWarning(UserWarning):
    """``hik`` fitted on columns with negative values (it compares their
    absolute values: ``x`` and ``-x`` look alike).

    Public as ``kernlearn.NegativeFeaturesWarning``, so that it can be filtered
    by name (``warnings.filterwarnings("ignore",
    category=kernlearn.NegativeFeaturesWarning)``, ``-W
    error::kernlearn.NegativeFeaturesWarning``) rather than by its message.
    Said once per fit: an estimator's inner fits (Platt folds, validation
    fits), on subsets of the rows the fit itself checked, drop it
    (:func:`kernlearn.estimators._renamed.inner_fits`).
    """


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)


def check_block(block, name="block"):
    """Refuse a ``block`` that is not a positive integer.

    The kernel's rows are written block by block into an uninitialised array:
    ``block=-3`` wrote none and returned whatever memory held (a model fitted
    on it without a word), ``0`` and ``2.5`` stopped on ``range()``'s errors.
    The kernel rules call it too (:func:`kernlearn._kernel_rules.check_named_kernel`),
    so that an estimator's setting is refused before any data is read.

    Parameters
    ----------
    block : object
        The setting.
    name : str, default="block"
        How messages name it (``"kernel_params['block']"``, ``"kernels[0]: hik block"``).

    Raises
    ------
    ValueError
        Naming the setting and its value.
    """
    if isinstance(block, bool) or not isinstance(block, Integral) or block < 1:
        raise ValueError(f"{name} must be a positive integer (rows of X at a time), "
                         f"got {block!r}.")


def check_beta(beta, name="beta"):
    """Refuse a ``hik`` exponent that is not a finite positive number.

    :math:`|0|^\\beta` is 1 for ``beta=0`` and infinite below: the dense
    kernel was a constant or infinite, while the sparse one, which sums
    over the stored entries only (:math:`\\min(|a|^\\beta, 0) = 0` needs
    :math:`\\beta > 0`), returned other numbers.  The kernel rules call it too
    (:func:`kernlearn._kernel_rules.check_named_kernel`).

    Parameters
    ----------
    beta : object
        The setting.
    name : str, default="beta"
        How messages name it.

    Raises
    ------
    ValueError
        Naming the setting and its value.
    """
    if not (is_finite_number(beta) and beta > 0):
        raise ValueError(f"{name} must be a finite positive number for kernel 'hik', "
                         f"got {beta!r}.")


def histogram_diag(X, kernel, beta=1.0):
    """``k(x, x)`` of each row in closed form: ``sum_k |x_k|^beta`` (``hik``), ``sum_k x_k``
    (``additive_chi2``: ``2 x x / (x + x) = x``); sparse rows are not densified.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, n_features)
    kernel : {"hik", "additive_chi2"}
    beta : float, default=1.0
        ``hik``'s exponent.

    Returns
    -------
    diag : ndarray of shape (n,)

    Raises
    ------
    ValueError
        ``hik``'s ``beta`` not a finite positive number.
    """
    if kernel == "hik":
        check_beta(beta)  # (sparse: scipy's power(0) raised NotImplementedError)
    if sp.issparse(X):
        return sparse_histogram_diag(X, kernel, beta)
    X = _dense(X)
    return (np.abs(X) ** beta).sum(axis=1) if kernel == "hik" else X.sum(axis=1)


def hik_kernel(X, Y, beta=1.0, block=256):
    r"""Generalised histogram intersection :math:`\sum_k \min(|x_k|^\beta, |y_k|^\beta)`.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_X, n_features)
    Y : array-like or sparse matrix of shape (n_Y, n_features)
    beta : float, default=1.0
    block : int, default=256
        Rows of ``X`` processed at once (memory ``block x n_Y x n_features`` for
        dense input).

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)

    Raises
    ------
    ValueError
        ``beta`` not a finite positive number; NaN or infinite values in
        ``X`` or ``Y``.

    Notes
    -----
    When ``X`` or ``Y`` is sparse the rows are not densified: the kernel sums
    over the columns both rows store (:mod:`kernlearn._sparse_histogram`), in
    float64 (float32 sparse data was summed in float32 before).
    """
    check_block(block)
    check_beta(beta)
    if sp.issparse(X) or sp.issparse(Y):
        return sparse_histogram_kernel(X, Y, "hik", beta=beta, block=block)
    A, B = _dense(X), _dense(Y)
    refuse_non_finite(A, "X", "hik")
    refuse_non_finite(B, "Y", "hik")
    A, B = np.abs(A) ** beta, np.abs(B) ** beta
    K = np.empty((A.shape[0], B.shape[0]))
    for s in range(0, A.shape[0], block):
        K[s : s + block] = np.minimum(A[s : s + block, None, :], B[None]).sum(-1)
    return K


def additive_chi2_kernel(X, Y, block=256):
    r"""Additive chi-squared kernel :math:`\sum_k 2 x_k y_k / (x_k + y_k)`.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_X, n_features)
        Non-negative data.
    Y : array-like or sparse matrix of shape (n_Y, n_features)
        Non-negative data.
    block : int, default=256
        Rows of ``X`` processed at once (memory ``block x n_Y x n_features`` for
        dense input).

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)

    Raises
    ------
    ValueError
        Data with negative values (of sparse input: read from its stored entries),
        or NaN or infinite ones.

    Notes
    -----
    When ``X`` or ``Y`` is sparse the rows are not densified: the kernel sums
    over the columns both rows store (:mod:`kernlearn._sparse_histogram`), in
    float64.
    """
    check_block(block)
    message = "additive_chi2 kernel needs non-negative features" + negative_hint()
    if sp.issparse(X) or sp.issparse(Y):
        return sparse_histogram_kernel(X, Y, "additive_chi2", block=block,
                                       negative_error=message)
    A, B = _dense(X), _dense(Y)
    refuse_non_finite(A, "X", "additive_chi2")
    refuse_non_finite(B, "Y", "additive_chi2")
    if (A < 0).any() or (B < 0).any():
        raise ValueError(message)
    K = np.empty((A.shape[0], B.shape[0]))
    for s in range(0, A.shape[0], block):
        num = 2 * A[s : s + block, None, :] * B[None]
        den = A[s : s + block, None, :] + B[None]
        K[s : s + block] = np.divide(
            num, den, out=np.zeros_like(num), where=den > 0
        ).sum(-1)
    return K


#: The kernels that read histograms, counts or other non-negative features:
#: under ``standardize=True`` they see the columns scaled, never centred
#: (:func:`histogram_shift`), on dense and sparse input alike.
HISTOGRAM_KERNELS = ("additive_chi2", "hik")

# (an estimator's fit: since the thirty-sixth pass these kernels never see centred
# columns, so negative values are the user's own; standardize=True made
# non-negative dense data negative before, and the hint said so)
_AS_GIVEN = ("; histogram kernels see the columns scaled, never centred: the data has "
             "negative values as given (the kernel reads histograms, counts or other "
             "non-negative features).")
# (a direct kernel call: no estimator, no standardisation to name)
_GIVEN = ("; the data has negative values (the kernel reads histograms, counts or other "
          "non-negative features).")


def negative_hint(centred=None):
    """The end of a "negative values" message: from an estimator's fit
    (``centred`` a bool: its histogram kernels see uncentred columns either
    way) or from a direct kernel call (``None``).

    (A module-level context variable set by the last fit gave a direct call,
    a thread's fit or a model fitted in another context another fit's hint.)
    """
    return _GIVEN if centred is None else _AS_GIVEN


def histogram_shift(mean, scale):
    r"""What the histogram kernels add back to standardised dense columns: ``mean / scale``.

    Standardisation maps a dense column to :math:`(x-\mu)/s`; adding
    :math:`\mu/s` gives :math:`x/s`, the column scaled without centring, which
    is what a sparse column is mapped to (never centred).  So ``hik`` and
    ``additive_chi2`` see the same numbers dense or sparse, and non-negative
    data stays non-negative (centred, half of it was negative: ``hik``
    compared absolute values, ``additive_chi2`` refused).  A constant column
    (infinite scale) maps to zero on both sides: its shift is zero.

    Parameters
    ----------
    mean : ndarray of shape (n_features,) or None
        The columns' means removed by the standardisation (``None``: not centred).
    scale : ndarray of shape (n_features,) or None
        Their scales.

    Returns
    -------
    shift : ndarray of shape (n_features,) or None
        ``None`` when nothing was centred.
    """
    if mean is None:
        return None
    scale = np.ones_like(mean) if scale is None else np.asarray(scale, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(scale), np.asarray(mean, np.float64) / scale, 0.0)


def histogram_precision(X, kernels, standardize):
    r"""``X`` in float64 when a histogram kernel of ``kernels`` reads its dense
    columns uncentred after ``standardize`` centred them (else ``X`` as given).

    The uncentred view adds :math:`\mu/s` back to :math:`(x-\mu)/s`
    (:func:`histogram_shift`): in float64 a zero comes back as exactly 0 and
    no non-negative value turns negative (rounding is symmetric and
    monotone), but a float32 model rounded :math:`(x-\mu)/s` to float32
    first and the zeros came back as :math:`\pm 10^{-8}` of :math:`\mu/s`:
    ``additive_chi2`` refused non-negative data, ``hik`` warned of negative
    values, and with ``beta=0.5`` those round-offs weighed :math:`10^{-4}`
    (decision values 3e-2 off the float64 fit).  Such a model is fitted,
    and maps its inputs, in float64.

    Parameters
    ----------
    X : ndarray or sparse matrix
        The training inputs, validated.
    kernels : list, str or None
        The estimator's kernel specs (names, callables, tuples).
    standardize : bool
        The estimator's setting.

    Returns
    -------
    X : ndarray or sparse matrix
    """
    if (not standardize or sp.issparse(X) or getattr(X, "dtype", None) != np.float32
            or not isinstance(kernels, (list, tuple))):  # (None: the defaults; "precomputed")
        return X
    # (specs: names, callables, (kernel, params[, columns]); bad ones are refused later)
    names = [k[0] if isinstance(k, (tuple, list)) and len(k) else k for k in kernels]
    if any(isinstance(k, str) and k in HISTOGRAM_KERNELS for k in names):
        return np.asarray(X, dtype=np.float64)
    return X


def histogram_view(Xj, kernel, shift_j):
    """Kernel ``kernel``'s view ``Xj`` as it sees it: the histogram kernels'
    uncentred columns (``Xj + shift_j``, :func:`histogram_shift`), the others'
    as given.

    Parameters
    ----------
    Xj : ndarray or sparse matrix of shape (n, n_view_features)
        The standardised view.
    kernel : str or callable
    shift_j : ndarray of shape (n_view_features,) or None
        The view's shift (``None``: sparse, unstandardised, or a model file
        saved before histogram kernels saw uncentred columns).

    Returns
    -------
    Xj : ndarray or sparse matrix
    """
    if shift_j is None or not (isinstance(kernel, str) and kernel in HISTOGRAM_KERNELS):
        return Xj
    return np.asarray(Xj, dtype=np.float64) + shift_j


def check_negative_features(kernel, X, name, centred):
    """Refuse (``additive_chi2``) or warn of (``hik``) the negative values of
    the training columns a named histogram kernel sees, naming the first such
    column.

    (The multitask estimators said "a kernel has a negative diagonal: it is
    not PSD"; ``hik`` compared :math:`|x|`, so ``x`` and ``-x`` looked alike to
    it, without a word, and still did on the low-rank estimators' path.)

    Parameters
    ----------
    kernel : str or callable
        Only the names ``"additive_chi2"`` and ``"hik"`` are checked.
    X : ndarray or sparse matrix
        The columns the kernel sees, as the fit transformed them.
    name : str
        Names the kernel in messages (``"kernels[0]"``, ``"kernel='hik'"``).
    centred : bool or None
        ``None`` for a direct call (the hint names no estimator).
    """
    if not (isinstance(kernel, str) and kernel in HISTOGRAM_KERNELS) or (
            X.data if sp.issparse(X) else X).min(initial=0) >= 0:
        return
    if sp.issparse(X):
        coo = X.tocoo()
        cols = np.unique(coo.col[coo.data < 0])
    else:
        cols = np.flatnonzero((np.asarray(X) < 0).any(axis=0))
    msg = (f"{name}: the columns {kernel} sees have negative values (column "
           f"{int(cols[0])} of its view first, {cols.size} column(s) in all)")
    if kernel == "additive_chi2":
        raise ValueError(msg + negative_hint(centred))
    # (through the library's warn: an estimator's inner fits collect and drop it)
    warn(msg + " (hik compares their absolute values: x and -x look alike)"
         + negative_hint(centred), NegativeFeaturesWarning)
