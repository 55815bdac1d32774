r"""Input and target standardisation: the one place that chooses the preprocessing.

Every estimator's ``fit`` runs ``validate -> standardise -> method -> map back``.
This module is the "standardise" and "map back" steps, the glmnet way
(``standardize=TRUE``):

* dense columns are centred and scaled to unit (weighted) standard deviation;
* sparse columns are scaled only, so they stay sparse and are never densified.
  Centring is implicit where the mathematics allows it: a linear model with a
  free intercept absorbs the shift (:math:`w^\top D(x-\mu) + b = w^\top D x +
  (b - w^\top D \mu)`), translation-invariant kernels (RBF, Laplacian) do
  not see it, and the models that do (the linear and polynomial kernels,
  Fourier features scaled to unit norm) subtract the means themselves
  (:func:`implicit_center`), so the same numbers give the same model dense or
  sparse;
* regression targets are centred and scaled per output.

Constant columns (zero spread, or empty sparse ones) get an infinite scale:
they map to zero on the training rows and on every new row, so a column that
carried no information in training cannot move a prediction.  (scikit-learn's
``StandardScaler`` keeps a scale of one: a kernel model then measures a new
row's departure from the training constant in raw units, and a column
constant in training but varying at predict changed up to half of the kernel
estimators' predictions.)  The statistics are
computed in float64 whatever the input dtype; the transformed data keep the
input's dtype.

Learned quantities are reported in the user's units by
:meth:`Standardization.coef_to_original` (coefficients and intercepts),
:meth:`TargetStandardization.inverse_transform` (predictions) and the
estimators' own maps for kernel widths and learned frequencies (a frequency
:math:`\omega` on standardised inputs is :math:`\omega / s` on raw inputs, with
phase :math:`b - \omega^\top (\mu / s)`).
"""

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .utils._finite import first_non_finite
from .utils._warnings import user_stacklevel
from .utils._sparse import (  # noqa: F401
    _sparse_centred_squares, canonical_sparse, column_nonzeros, dense_product)

__all__ = [
    "Standardization",
    "TargetStandardization",
    "centred_dots",
    "check_center",
    "column_nonzeros",
    "fit_standardization",
    "fit_target_standardization",
    "implicit_center",
    "measurement_columns",
    "standardization_from_maxabs",
    "standardization_from_moments",
]

# A column whose spread is below this fraction of its magnitude is constant up
# to rounding (scikit-learn's ``_handle_zeros_in_scale`` uses the same idea).
_CONSTANT_RTOL = 1e3 * np.finfo(np.float64).eps
# sparse_rule="maxabs": a sparse column non-zero in at least this share of the
# rows is a measurement (a year, a price: an offset column has no zeros) and is
# scaled by its standard deviation, not by its largest value, which is mostly
# its offset.  Dense suite sets passed to FGMClassifier as CSR, seed 0: with
# every column on its largest value, offset columns were nearly muted
# (hill-valley 0.742 -> 0.657, vehicle 0.807 -> 0.748,
# one-hundred-plants-shape 0.504 -> 0.444 against the same data dense).  Counts
# and indicators have zeros, words of text in most documents: Reuters' most
# common word is in 65 % of them (at a share of 0.5 that word alone moved FGM
# with 100 features from 0.9730 to 0.9706).
MEASUREMENT_SHARE = 0.9


def measurement_columns(nnz, n_rows):
    """Which sparse columns ``sparse_rule="maxabs"`` scales by their spread.

    Parameters
    ----------
    nnz : ndarray of shape (n_features,)
        Non-zero values per column (:func:`column_nonzeros`, over the rows of
        positive weight).
    n_rows : int
        Number of those rows.

    Returns
    -------
    ndarray of bool, shape (n_features,)
    """
    return np.asarray(nnz) >= MEASUREMENT_SHARE * max(int(n_rows), 1)


def check_center(center, X):
    """Validated column means ``center`` that a model subtracts implicitly from sparse ``X``.

    Parameters
    ----------
    center : array-like of shape (n_features,) or None
        Means of the columns of ``X`` (``None``: not centred).
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The inputs they belong to; only a sparse ``X`` is centred implicitly
        (a dense one is centred directly, by :class:`Standardization`).

    Returns
    -------
    center : ndarray of float64 or None
    """
    if center is None:
        return None
    center = np.asarray(center, dtype=np.float64)
    if not sp.issparse(X) or center.shape != (X.shape[1],) or not np.isfinite(center).all():
        raise ValueError("center must be the finite means of the columns of a sparse X "
                         f"(dense X is centred directly); got shape {center.shape} for X "
                         f"of shape {X.shape}.")
    return center


def centred_dots(A, B, center=None, u_a=None, u_b=None):
    r"""Inner products of the rows of ``A - center`` and ``B - center``, never densified.

    :math:`(x-c)^\top(x'-c) = x^\top x' - x^\top c - x'^\top c + c^\top c`: one
    product of the (sparse) rows and two matrix-vector products.

    Parameters
    ----------
    A, B : ndarray or sparse matrix of shape (n_A, n_features), (n_B, n_features)
    center : ndarray of shape (n_features,), optional
        ``None``: the plain products.
    u_a, u_b : ndarray of shape (n_A,), (n_B,), optional
        ``A @ center`` and ``B @ center`` when already known.

    Returns
    -------
    D : ndarray of shape (n_A, n_B), float64, C order
    """
    # (dense_product: without scikit-learn, Dask workers evaluate it for predictions)
    D = np.array(dense_product(A, B.T), dtype=np.float64, order="C")
    if center is not None:
        D -= np.asarray(A @ center if u_a is None else u_a, dtype=np.float64).ravel()[:, None]
        D -= np.asarray(B @ center if u_b is None else u_b, dtype=np.float64).ravel()[None, :]
        D += center @ center
    return D


#: Squared mean over one-pass variance (:math:`E[x^2] - E[x]^2`) beyond which
#: those moments lose more than about 1e-12 of a column's variance to rounding:
#: past it, row-partitioned data take a second pass for the squares about the mean.
ONE_PASS_OFFSET = 1e4

#: Offsets (in units of the column's spread) beyond which a sparse column cannot be
#: centred exactly (:func:`implicit_center` warns).
FAR_OFFSET = 1e6


def implicit_center(X, sample_weight=None, standardize=True):
    """Column means of a standardised sparse ``X``, for the kernels that centre implicitly.

    Standardisation centres dense columns but only scales sparse ones (never
    densified).  Models that are not invariant to a shift of the inputs
    (the linear kernel, Fourier features scaled to unit norm) subtract
    these means themselves, so that the same numbers give the same model
    dense or sparse.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The standardised training inputs.
    sample_weight : ndarray of shape (n_samples,), optional
        The weights the standardisation used.
    standardize : bool, default=True
        The estimator's ``standardize``: ``False`` centres nothing.

    Returns
    -------
    center : ndarray of shape (n_features,) or None
        ``None`` unless ``X`` is sparse and ``standardize=True`` (dense
        columns are already centred; unstandardised ones are not centred
        dense either).
    """
    if not (standardize and sp.issparse(X)):
        return None
    w = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    return warn_far_center(np.asarray(X.T @ w, dtype=np.float64).ravel() / w.sum())


def warn_far_center(center):
    """``center`` (the means of standardised sparse columns), with a warning
    when one is beyond :data:`FAR_OFFSET` (the fits on a Dask cluster compute
    it by partitions: they said nothing where the in-memory fit warns).

    Parameters
    ----------
    center : ndarray of shape (n_features,)
        The columns' means in units of their spread.

    Returns
    -------
    center : ndarray of shape (n_features,)
        The same array.
    """
    far = np.flatnonzero(np.abs(center) > FAR_OFFSET)
    if far.size:
        # (the spread is exact (two passes), but the centring comes from products
        # of the raw values, which lose the digits of the offset: dense and sparse
        # kernel fits agree at 1e6, no longer at 1e7)
        warnings.warn(f"X is sparse and its column(s) {far[:5].tolist()} hold an offset "
                      f"more than {FAR_OFFSET:.0e} times their spread, which a sparse "
                      "container cannot centre exactly: the model may differ from the "
                      "dense one. Subtract the offset first, or pass X dense.",
                      UserWarning, stacklevel=user_stacklevel())
    return center


@dataclass(frozen=True)
class Standardization:
    """Per-column affine map ``x -> (x - mean) / scale`` fitted on training data.

    Parameters
    ----------
    mean : ndarray of shape (n_features,) or None
        Column means removed by :meth:`transform`; ``None`` when the columns
        are not centred (sparse input, or ``standardize=False``).
    scale : ndarray of shape (n_features,) or None
        Column spreads divided out; ``None`` for the identity map.
    dtype : str or numpy.dtype or None
        The float type of the data the map was fitted on (a model's
        precision).  Input of a narrower type is mapped in this one: a
        model fitted in float64 computes float32 input in float64, so its
        outputs equal those of the same numbers as float64 (scikit-learn's
        convention).  ``None`` keeps the input's float type.
    """

    mean: np.ndarray | None = None
    scale: np.ndarray | None = None
    dtype: object = None

    @property
    def is_identity(self):
        """Whether the map leaves the data unchanged (``standardize=False``)."""
        return self.mean is None and self.scale is None

    def transform(self, X):
        """Apply the map to ``X`` (a copy; sparse stays sparse in its format).

        Parameters
        ----------
        X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        Xt : ndarray or scipy.sparse matrix of the same shape
            In ``X``'s float type, or :attr:`dtype` where that is wider.
        """
        if self.is_identity:
            return X
        if not sp.issparse(X):
            X = np.asarray(X)
        dtype = X.dtype if X.dtype.kind == "f" else np.dtype(np.float64)
        if self.dtype is not None:
            # (rounding the mapped float32 values back to float32 moved a float64
            # model's outputs by up to 2e-7 from those of the same numbers in float64)
            dtype = np.result_type(dtype, self.dtype)
        if sp.issparse(X):
            if self.mean is not None:
                # (at predict time: what to do was not said; a DataFrame of sparse
                # columns arrives here as a sparse matrix, and has no toarray())
                raise ValueError("X is sparse, but the model was fitted on dense X, "
                                 "whose columns it centres: pass X.toarray() (for a "
                                 "DataFrame of sparse columns, X.sparse.to_dense()), or "
                                 "fit on sparse X.")
            return _refuse_overflow(scale_columns(X.astype(dtype, copy=False), 1.0 / self.scale),
                                    X, self.scale)
        out = X.astype(np.float64, copy=True)
        if self.mean is not None:
            out -= self.mean
        with np.errstate(over="ignore"):  # (refused below, in words)
            out /= self.scale
            out = out.astype(dtype, copy=False)  # (float32: 1e39 is inf too)
        return _refuse_overflow(out, X, self.scale)

    def coef_to_original(self, coef, intercept=None):
        r"""Linear coefficients and intercepts on standardised inputs, in raw units.

        :math:`f(x) = w^\top (x-\mu)/s + b = (w/s)^\top x + (b - (w/s)^\top \mu)`.

        Parameters
        ----------
        coef : ndarray of shape (n_features,) or (n_outputs, n_features)
        intercept : float or ndarray of shape (n_outputs,), optional

        Returns
        -------
        coef : ndarray, same shape
        intercept : float or ndarray or None
        """
        coef = np.asarray(coef, dtype=np.float64)
        if self.is_identity:
            return coef, intercept
        raw = coef / self.scale
        if intercept is None:
            return raw, None
        if self.mean is None:
            return raw, intercept
        shift = raw @ self.mean
        if np.ndim(intercept) == 0:
            return raw, float(intercept - shift)
        return raw, np.asarray(intercept, dtype=np.float64) - shift


def kernel_overflow_message(j):
    """The refusal of kernel ``j``'s NaN or infinite values on finite data.

    On finite, validated data a built-in kernel's values overflowed (e.g.
    squared distances of rows near 1e308), which "produced NaN or infinite
    values" alone did not say.

    Parameters
    ----------
    j : int
        The kernel's position in the kernel list.

    Returns
    -------
    message : str
    """
    return (f"kernels[{j}] produced NaN or infinite values on finite X: values too "
            "large for float64 in this kernel overflow (or a kernel callable returned "
            "them); rescale X (other units) or drop such rows.")


def _refuse_overflow(out, X, scale):
    """``out``, ``X`` standardised, refused if a finite value of ``X`` became
    infinite (a value near float64's limit divided by a scale below one).

    The infinity went on into the model, which then refused "Input X contains
    infinity" (values the user never gave) or predicted NaN.
    """
    values = out.data if sp.issparse(out) else out
    # (one reduction, no n x d mask: a NaN or an infinity makes the sum not finite;
    # a sum of huge finite values that overflows is looked at value by value)
    if np.isfinite(np.add.reduce(values, axis=None)):
        return out
    found = first_non_finite(out)
    if found is None:
        return out
    i, j = found[:2]
    value = X[i, j] if sp.issparse(X) else X[i][j]
    raise ValueError(
        f"X has a value too large to standardise in {out.dtype} at row {i}, column "
        f"{j} ({float(value):.6g}; the column's training scale is {scale[j]:.6g}, "
        f"{found[3]} such value{'s' if found[3] > 1 else ''} in all): rescale X (other "
        "units) or drop such rows.")


def scale_columns(X, factors):
    """``X @ diag(factors)`` for a sparse matrix, as a copy in X's format and dtype.

    Parameters
    ----------
    X : scipy.sparse matrix of shape (n_samples, n_features)
    factors : ndarray of shape (n_features,)

    Returns
    -------
    Xs : scipy.sparse matrix (CSR or CSC as ``X``; other formats become CSR)
    """
    fmt = X.format if X.format in ("csr", "csc") else "csr"
    Xs = X.asformat(fmt, copy=True)
    f = np.asarray(factors, dtype=np.float64)
    if fmt == "csc":
        col = np.repeat(np.arange(Xs.shape[1]), np.diff(Xs.indptr))
    else:
        col = Xs.indices
    Xs.data = (Xs.data * f[col]).astype(X.dtype, copy=False)
    return Xs


def standardization_from_moments(sum_w, sum_wx, sum_wx2, center, absmax=None, centred=False):
    """A :class:`Standardization` from weighted column moments.

    Lets out-of-core and distributed code, which accumulates the moments in
    one pass over row blocks, build exactly the map :func:`fit_standardization`
    builds in memory.

    Parameters
    ----------
    sum_w : float
        Sum of the row weights (the number of rows when unweighted).
    sum_wx, sum_wx2 : ndarray of shape (n_features,)
        Weighted column sums of ``x`` and ``x**2``.
    center : bool
        Remove the means.
    absmax : ndarray of shape (n_features,), optional
        Largest ``|x|`` of each column.  With it, a column whose values are
        all below ~1e-154 is refused: its squares underflow, so its moments
        cannot tell it from a constant one (in memory,
        :func:`fit_standardization` recomputes such a spread instead).
    centred : bool, default=False
        ``sum_wx2`` holds the squares about the weighted mean (a second pass,
        as :func:`fit_standardization` computes dense variances): one-pass
        moments lose a column far from zero (a Unix time varying by days has
        :math:`E[x^2] - E[x]^2` below the rounding of :math:`E[x^2]`).

    Returns
    -------
    Standardization
    """
    if not sum_w > 0:
        raise ValueError("standardisation needs a positive total sample weight.")
    if absmax is not None:
        tiny = np.flatnonzero((np.asarray(absmax) > 0)
                              & (np.asarray(absmax) < np.sqrt(np.finfo(np.float64).tiny)))
        if tiny.size:
            raise ValueError(f"X column(s) {tiny[:5].tolist()} have values too small to "
                             "standardise block by block in float64 (every |x| < 1e-154: "
                             "their squares underflow); rescale them.")
    mean = np.asarray(sum_wx, dtype=np.float64) / sum_w
    var = np.asarray(sum_wx2, dtype=np.float64) / sum_w - (0.0 if centred else mean**2)
    return _from_mean_var(mean, var, center)


def _spread(var, deviations, w, only=None):
    """Square roots of the variances ``var``, safe from underflow.

    Where a variance falls below float64's smallest normal number (columns on
    a scale under ~1e-154, e.g. values near 1e-300) the squares underflowed
    and the column would pass for constant (issue 23: such columns were
    silently dropped from every model).  There the spread is recomputed from
    ``deviations(cols)`` (the deviations of those columns from their means, a
    dense ``(n, len(cols))`` array) divided by their largest entry, which is
    multiplied back.  ``only`` (sparse input) restricts this to the columns it
    marks: an empty column is constant and is never densified.
    """
    scale = np.sqrt(np.maximum(var, 0.0))
    small = np.isfinite(var) & (var < np.finfo(np.float64).tiny)
    small = np.flatnonzero(small if only is None else small & only)
    if small.size:
        D = deviations(small)
        c = np.abs(D).max(axis=0)
        c = np.where(c > 0, c, 1.0)
        scale[small] = c * np.sqrt((w @ np.square(D / c)) / w.sum())
    return scale


def _from_mean_var(mean, var, center, scale=None):
    """The map of columns with the given means and variances (or spreads)."""
    bad = np.flatnonzero(~np.isfinite(var))
    if bad.size:
        raise ValueError(f"X column(s) {bad[:5].tolist()} have values too large to "
                         "standardise in float64 (their variance overflows); rescale "
                         "them.")
    if scale is None:
        scale = np.sqrt(np.maximum(var, 0.0))
    constant = scale <= _CONSTANT_RTOL * np.maximum(np.abs(mean), 1e-300)
    scale = np.where(constant, np.inf, scale)
    return Standardization(mean=mean if center else None, scale=scale)


def standardization_from_maxabs(absmax, measured=None, spread=None):
    """A scale-only :class:`Standardization` from column maxima of ``|x|``.

    Parameters
    ----------
    absmax : ndarray of shape (n_features,)
        Largest absolute value of each column (empty columns: 0, kept at 1).
    measured : ndarray of bool of shape (n_features,), optional
        Columns scaled by their spread instead (:func:`measurement_columns`).
    spread : callable, optional
        ``spread()`` gives the columns' spreads; called only when some column
        is ``measured`` (it costs a pass over the data).

    Returns
    -------
    Standardization
    """
    absmax = np.asarray(absmax, dtype=np.float64)
    scale = np.where(absmax > 0, absmax, np.inf)
    if measured is not None and np.any(measured):
        scale = np.where(measured, spread(), scale)
    return Standardization(scale=scale)


def fit_standardization(X, sample_weight=None, standardize=True, sparse_rule="std"):
    """Fit the per-column standardisation of ``X``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Validated, finite training inputs.
    sample_weight : ndarray of shape (n_samples,), optional
        Row weights: the statistics are those of the data with rows repeated.
    standardize : bool, default=True
        ``False`` returns the identity map.
    sparse_rule : {"std", "maxabs"}, default="std"
        Scale of sparse columns: their (weighted) standard deviation, or
        (FGM's rule on sparse text, where the standard deviation blows a rare
        word up to the size of a common one) their largest absolute value
        over the rows of positive weight, for the columns non-zero in fewer
        than :data:`MEASUREMENT_SHARE` of those rows; a column non-zero in more
        is a measurement in a sparse container (a year, a price, or a dense
        matrix passed as CSR), whose largest value is mostly its offset, and
        gets its standard deviation as with ``"std"``.

    Returns
    -------
    Standardization
        Centred and scaled for dense ``X``; scaled only for sparse ``X``.
    """
    if not standardize:
        return Standardization()
    n = X.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, np.float64)
    if sp.issparse(X) and sparse_rule == "maxabs":
        # rows of zero weight are absent from the data (as repeated rows are
        # present once): the maximum runs over the others
        # (canonical first: SciPy's abs() sums the duplicates of the matrix it
        # is given in place, here the caller's)
        Xr = canonical_sparse(sp.csr_matrix(X))
        Xr = Xr if sample_weight is None else Xr[np.flatnonzero(w > 0)]
        return standardization_from_maxabs(
            np.asarray(abs(Xr).max(axis=0).todense()).ravel(),
            measurement_columns(column_nonzeros(Xr), Xr.shape[0]),
            lambda: fit_standardization(X, sample_weight, True, sparse_rule="std").scale)
    if sp.issparse(X):
        Xc = X.tocsc() if X.format != "csc" else X
        if not np.all(w > 0):
            # a zero weight's row is absent, as for dense rows below: kept, its
            # square could overflow and 0 * inf is NaN, which hid an underflowed
            # column from the recomputation of its spread (another scale)
            Xc, w = Xc[np.flatnonzero(w > 0)], w[w > 0]
        sq = Xc.copy()
        with np.errstate(over="ignore"):
            sq.data = np.square(sq.data, dtype=np.float64)
        s1 = np.asarray(Xc.T @ w, dtype=np.float64).ravel()
        s2 = np.asarray(sq.T @ w, dtype=np.float64).ravel()
        # the map standardization_from_moments builds, with tiny spreads recomputed
        mean = s1 / w.sum()
        var = _sparse_centred_squares(Xc, w, mean) / w.sum()
        # (only where the squares themselves underflowed, so that the map stays
        # the moments' map of the out-of-core and distributed paths otherwise)
        tiny = (np.diff(Xc.indptr) > 0) & (s2 / w.sum() < np.finfo(np.float64).tiny)
        scale = _spread(var, lambda cols: Xc[:, cols].toarray() - mean[cols], w,
                        only=tiny)
        return _from_mean_var(mean, var, center=False, scale=scale)
    Xd = np.asarray(X, dtype=np.float64)
    if not np.all(w > 0):
        # rows of zero weight are removed rows: summed without them, the
        # statistics are bitwise those of the data without them (BLAS adds in
        # blocks set by the rows' positions, so the zeros moved the rounding:
        # ~1e-8 of a standardised column at an offset of 1e8)
        Xd, w = Xd[w > 0], w[w > 0]
    sw = w.sum()
    mean = (w @ Xd) / sw
    # two-pass variance: accurate for columns with a large offset (squared in
    # place: one n x d temporary, not two, on top of X)
    with np.errstate(over="ignore", invalid="ignore"):
        dev = Xd - mean
        var = (w @ np.square(dev, out=dev)) / sw
        del dev
    scale = _spread(var, lambda cols: Xd[:, cols] - mean[cols], w)
    return _from_mean_var(mean, var, center=True, scale=scale)


@dataclass(frozen=True)
class TargetStandardization:
    """Per-output affine map of regression targets ``y -> (y - mean) / scale``.

    Parameters
    ----------
    mean : ndarray of shape (n_outputs,)
    scale : ndarray of shape (n_outputs,)
    """

    mean: np.ndarray
    scale: np.ndarray

    def transform(self, y):
        """Standardise targets of shape (n,) or (n, n_outputs)."""
        y = np.asarray(y, dtype=np.float64)
        return (y - self._shape(y, self.mean)) / self._shape(y, self.scale)

    def inverse_transform(self, f):
        """Predictions on the standardised scale back in the target's units."""
        f = np.asarray(f, dtype=np.float64)
        return f * self._shape(f, self.scale) + self._shape(f, self.mean)

    def without_centring(self):
        """The same scales without the centring: the map of a model without bias.

        A regressor fitted with ``fit_intercept=False`` must not add the
        targets' mean back (that is a bias the problem has not got); its
        targets are divided by the same spread, so the penalty levels keep
        their meaning.

        Returns
        -------
        TargetStandardization
            Of the same class (the lazy Dask map stays lazy), mean zero.
        """
        return type(self)(np.zeros_like(self.mean), self.scale)

    @staticmethod
    def _shape(y, v):
        return v[0] if y.ndim == 1 else v


def fit_target_standardization(y, sample_weight=None, standardize=True):
    """Fit the per-output standardisation of regression targets.

    Parameters
    ----------
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        Finite targets.
    sample_weight : ndarray of shape (n_samples,), optional
    standardize : bool, default=True
        ``False`` returns the identity map (mean 0, scale 1).

    Returns
    -------
    TargetStandardization

    Raises
    ------
    ValueError
        If the targets' spread overflows float64 (e.g. values near 1e300).
    """
    Y = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
    k = Y.shape[1]
    if not standardize:
        return TargetStandardization(np.zeros(k), np.ones(k))
    w = np.ones(len(Y)) if sample_weight is None else np.asarray(sample_weight, np.float64)
    if not np.all(w > 0):
        # a zero weight's target is absent, as its row is from X's statistics:
        # weighted by 0, a square that overflows gave 0 * inf = NaN ("y is too
        # large" for a removed row of 1e160), and the zeros moved the sums' rounding
        Y, w = Y[w > 0], w[w > 0]
    sw = w.sum()
    mean = (w @ Y) / sw
    with np.errstate(over="ignore", invalid="ignore"):
        var = (w @ np.square(Y - mean)) / sw
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(var))):
        raise ValueError("y is too large to standardise in float64 (its variance "
                         "overflows); rescale the target.")
    scale = _spread(var, lambda cols: Y[:, cols] - mean[cols], w)
    lo, hi = (Y.min(axis=0), Y.max(axis=0)) if len(Y) else (mean, mean)
    mean, scale = constant_targets(mean, scale, lo, hi)
    return TargetStandardization(mean, scale)


def constant_targets(mean, scale, lo, hi):
    """The target map of outputs that are constant up to rounding.

    An output whose values (rows of positive weight) differ by no more than
    a few units in their last place varies by rounding only: it keeps the
    scale 1 (its rounding noise is not blown up to unit variance).  The rule
    reads the range, not the spread about the computed mean: that mean's own
    rounding made a spread below ``_CONSTANT_RTOL`` times the mean, which
    passed for constant, though a target of 1e6 varying by 7e-8 (600 units
    in the last place: airfoil's noise level, in other units) is data;
    GrFL then fitted it unscaled and learned nothing.  An exactly constant
    output's mean is its value, not the sum's rounding of it: its
    standardised column is zero (nothing to fit, nothing added to the mean
    square that sets SLKL's ``nu``) and it is predicted exactly.

    Parameters
    ----------
    mean, scale : ndarray of shape (n_outputs,)
        The outputs' (weighted) means and spreads.
    lo, hi : ndarray of shape (n_outputs,)
        Their smallest and largest values over the rows of positive weight.

    Returns
    -------
    mean, scale : ndarray of shape (n_outputs,)
    """
    eps = np.finfo(np.float64).eps
    constant = (hi - lo) <= 4 * eps * np.maximum(np.abs(lo), np.abs(hi))
    return np.where(lo == hi, lo, mean), np.where(constant, 1.0, scale)
