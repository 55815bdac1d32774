"""Gabor-filter features of image patches, an infinite family (paper 000, sec. 5.1).

A candidate is a Gabor filter

.. math:: F(z, y) = \\exp\\Big(-\\frac{z_0^2}{2\\sigma_z^2} - \\frac{y_0^2}{2\\sigma_y^2}\\Big)
          \\cos(2\\pi f_0 z_0),\\quad
          z_0 = z\\cos\\theta + y\\sin\\theta,\\ y_0 = -z\\sin\\theta + y\\cos\\theta,

on a square support of ``filter_size`` pixels.  Its feature on an image
patch is the sum over a grid of positions of the absolute responses (inner
products of the translated filter with the patch), as in sec. 6.2.  All
positions of all patches are extracted once per call as one
``(n * positions, filter_size**2)`` matrix, so a chunk of candidates costs
one matrix product.
"""

import numbers

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..preprocessing import check_center
from ._infinite import InfiniteFamily, plain_float_matrix

__all__ = ["GaborFeatures", "gabor_filter"]


def gabor_filter(sigma_z, sigma_y, f0, theta, size):
    """Gabor filter of paper 000, sec. 5.1, on a ``size x size`` grid.

    Parameters
    ----------
    sigma_z, sigma_y : float
        Scales along and across the orientation.
    f0 : float
        Frequency (cycles per pixel).
    theta : float
        Orientation (radians).
    size : int
        Support width in pixels (centred).

    Returns
    -------
    F : ndarray of shape (size, size)
        ``F[row, col]`` with ``z`` the column and ``y`` the row offset.
    """
    c = (size - 1) / 2.0
    y, z = np.mgrid[0:size, 0:size] - c
    z0 = z * np.cos(theta) + y * np.sin(theta)
    y0 = -z * np.sin(theta) + y * np.cos(theta)
    return np.exp(-(z0**2) / (2 * sigma_z**2) - y0**2 / (2 * sigma_y**2)) * np.cos(
        2 * np.pi * f0 * z0
    )


def _range(name, value, lower=0.0, strict=True):
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (low, high), got {value!r}.") from None
    bad_lo = lo <= lower if strict else lo < lower
    if not (np.isfinite(lo) and np.isfinite(hi)) or bad_lo or hi < lo:
        op = ">" if strict else ">="
        raise ValueError(
            f"{name} must satisfy low {op} {lower} and low <= high (finite); "
            f"got {value!r}."
        )
    return lo, hi


class GaborFeatures(InfiniteFamily):
    """Sum-of-absolute Gabor responses of image patches, parameters sampled.

    Parameters
    ----------
    image_shape : tuple (height, width)
        Shape of each patch; ``X`` rows are patches flattened in C order.
    filter_size : int, default=7
        Width of the square filter support (odd values centre it on a pixel).
    stride : int, default=2
        Step between the filter positions on the patch.
    sigma_range : tuple, default=(1.0, 4.0)
        Range of :math:`\\sigma_z` and :math:`\\sigma_y` (sampled independently).
    freq_range : tuple, default=(0.05, 0.45)
        Range of :math:`f_0` in cycles per pixel.
    theta_range : tuple, default=(0, pi)
        Range of the orientation :math:`\\theta`.

    Attributes
    ----------
    n_features_in_ : int
        Input columns (pixels) seen in :meth:`fit`.
    center_ : ndarray of shape (n_features,) or None
        Pixel means subtracted from sparse inputs before filtering (:meth:`fit`'s
        ``center``); ``None``: the inputs are used as given.

    Notes
    -----
    Parameters are stored one row per candidate as
    ``[sigma_z, sigma_y, f0, theta]``; sampling is uniform in the ranges.

    References
    ----------
    Rakotomamonjy, Flamary, Yger (2013), Mach. Learn. 91, sec. 5.1 and 6.2.
    """

    group_size = 1
    #: :meth:`fit` takes the ``center`` of sparse inputs (as the Fourier family).
    centres_sparse = True

    def __init__(self, image_shape=(16, 16), filter_size=7, stride=2,
                 sigma_range=(1.0, 4.0), freq_range=(0.05, 0.45),
                 theta_range=(0.0, np.pi)):
        self.image_shape = image_shape
        self.filter_size = filter_size
        self.stride = stride
        self.sigma_range = sigma_range
        self.freq_range = freq_range
        self.theta_range = theta_range

    def _shape(self):
        try:
            h, w = (int(v) for v in self.image_shape)
        except (TypeError, ValueError):
            raise ValueError(
                f"image_shape must be a pair (height, width), got {self.image_shape!r}."
            ) from None
        if h < 1 or w < 1:
            raise ValueError(f"image_shape must be positive, got {self.image_shape!r}.")
        # (filter_size >= 1 and stride >= 1: _constraints; here the bound
        # that depends on image_shape)
        if self.filter_size > min(h, w):
            raise ValueError(
                f"filter_size must be an integer in [1, min(image_shape)] = "
                f"[1, {min(h, w)}], got {self.filter_size!r}."
            )
        return h, w

    def fit(self, X, center=None):
        """Validate the parameters against the training inputs.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training patches.
        center : ndarray of shape (n_features,), optional
            Pixel means of a sparse ``X`` to subtract before filtering (the
            estimators' ``standardize=True`` centres dense inputs itself;
            without it the same numbers fitted dense and sparse gave
            different filters' responses, hence different models).

        Returns
        -------
        self : GaborFeatures
            With ``center_`` set.
        """
        super().fit(X)
        self.center_ = check_center(center, X)
        return self

    @staticmethod
    def _constraints():
        # (built on the first fit, not on import: Dask workers import the
        # families, and no scikit-learn)
        from sklearn.utils._param_validation import Interval

        positive = [Interval(numbers.Integral, 1, None, closed="left")]
        return {"image_shape": ["array-like"], "filter_size": positive, "stride": positive,
                "sigma_range": ["array-like"], "freq_range": ["array-like"],
                "theta_range": ["array-like"]}

    def _validate_params(self):
        super()._validate_params()  # (the declared constraints)
        # (what they cannot say: pairs, their order and filter_size's bound)
        self._shape()
        _range("sigma_range", self.sigma_range)
        _range("freq_range", self.freq_range, strict=False)
        _range("theta_range", self.theta_range, lower=-np.inf)

    def _check_X(self, X):
        X = np.asarray(X) if not hasattr(X, "toarray") else X.toarray()
        if X.ndim == 3:
            X = X.reshape(X.shape[0], -1)
        if not plain_float_matrix(X):
            # (plain float rows skip scikit-learn's check, which returns them as they
            # are: a Dask worker's blocks are such, and no worker imports scikit-learn)
            from sklearn.utils.validation import check_array

            X = check_array(X, dtype=[np.float64, np.float32], input_name="X")
        h, w = self._shape()
        if X.shape[1] != h * w:
            raise ValueError(
                f"X has {X.shape[1]} columns per row, which does not match "
                f"image_shape={tuple(self.image_shape)} ({h * w} pixels); pass patches "
                "flattened in C order or of shape (n, height, width)."
            )
        return X

    def sample(self, k, rng=None):
        """Sample ``k`` filters ``[sigma_z, sigma_y, f0, theta]`` uniformly.

        Parameters
        ----------
        k : int
            Number of candidates.
        rng : numpy.random.Generator or int, optional
            Randomness.

        Returns
        -------
        params : ndarray of shape (k, 4)
        """
        if not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}.")
        self._validate_params()
        rng = np.random.default_rng(rng)
        s = _range("sigma_range", self.sigma_range)
        f = _range("freq_range", self.freq_range, strict=False)
        t = _range("theta_range", self.theta_range, lower=-np.inf)
        return np.column_stack([
            rng.uniform(*s, size=k), rng.uniform(*s, size=k),
            rng.uniform(*f, size=k), rng.uniform(*t, size=k),
        ])

    def grid(self, n_values=3):
        """A fixed filter bank: ``n_values`` evenly spaced values per parameter.

        ``n_values=3`` gives the bank of :math:`3^4 = 81` filters of the
        "fixed feat" baseline of sec. 6.2.

        Parameters
        ----------
        n_values : int, default=3
            Values per parameter.

        Returns
        -------
        params : ndarray of shape (n_values**4, 4)
        """
        self._validate_params()
        s = np.linspace(*_range("sigma_range", self.sigma_range), n_values)
        f = np.linspace(*_range("freq_range", self.freq_range, strict=False), n_values)
        lo, hi = _range("theta_range", self.theta_range, lower=-np.inf)
        # orientations are periodic: do not repeat the end point
        t = lo + (hi - lo) * np.arange(n_values) / n_values
        mesh = np.meshgrid(s, s, f, t, indexing="ij")
        return np.column_stack([m.ravel() for m in mesh])

    def filters(self, params):
        """Filter bank of ``params`` as an ``(k, filter_size**2)`` matrix."""
        params = np.atleast_2d(np.asarray(params, dtype=float))
        if params.shape[1] != 4:
            raise ValueError(
                f"Gabor parameters have 4 entries per row, got shape {params.shape}."
            )
        return np.stack([
            gabor_filter(*row, self.filter_size).ravel() for row in params
        ]) if len(params) else np.zeros((0, self.filter_size**2))

    def _positions(self, X):
        """All filter positions of all patches: ``(n, n_positions, fs**2)``."""
        h, w = self._shape()
        fs = self.filter_size
        imgs = X.reshape(X.shape[0], h, w)
        win = sliding_window_view(imgs, (fs, fs), axis=(1, 2))
        win = win[:, :: self.stride, :: self.stride]
        return win.reshape(X.shape[0], -1, fs * fs)

    def _columns(self, params, X):
        center = getattr(self, "center_", None)  # (absent from older model files)
        if center is not None:
            X = X - center  # (X is dense here: _check_X densified it)
        F = self.filters(params)
        pos = self._positions(X)
        n, npos, _ = pos.shape
        resp = pos.reshape(n * npos, -1) @ F.T
        return np.abs(resp).reshape(n, npos, -1).sum(axis=1)
