"""Random Fourier features as an infinite family (paper 000, sec. 5.2).

A candidate is a direction :math:`v` and its feature group is
:math:`z_v(x) = [\\cos(v'x),\\ \\sin(v'x)]` (two columns, penalised jointly).
Sampling :math:`v \\sim \\mathcal N(0, \\sigma^{-2} I)` draws from the Fourier
transform of the Gaussian kernel
:math:`k(x, x') = \\exp(-\\|x - x'\\|^2 / (2\\sigma^2))` (Rahimi and Recht,
2007).  With one bandwidth this is GrFL; sampling the bandwidth as well
(from a list or a range) mixes the spectra of several Gaussian kernels,
which is the approximate infinite kernel learning of sec. 5.2 (GrFL-M).
"""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array

from ._infinite import InfiniteFamily

__all__ = ["RandomFourierFeatures"]


class RandomFourierFeatures(InfiniteFamily):
    """Cos/sin pairs of random projections, with fixed or sampled bandwidth.

    Parameters
    ----------
    bandwidth : float or sequence of float, default=1.0
        Gaussian kernel width :math:`\\sigma` in
        :math:`\\exp(-\\|x-x'\\|^2/(2\\sigma^2))`.  A sequence makes the family
        GrFL-M: the sampled candidates are split evenly among its values
        (the paper samples 50 directions for each of 4 widths).
    bandwidth_range : tuple (low, high), optional
        Sample each candidate's :math:`\\sigma` uniformly in ``[low, high]``
        instead (the paper's "20 values in [5, 100]"); overrides
        ``bandwidth``.

    Notes
    -----
    Parameters are stored one row per candidate as ``[v_1, ..., v_D, sigma]``.

    References
    ----------
    Rakotomamonjy, Flamary, Yger (2013), Mach. Learn. 91, sec. 5.2 and 6.3;
    Rahimi and Recht (2007), "Random features for large-scale kernel machines".
    """

    group_size = 2

    def __init__(self, bandwidth=1.0, bandwidth_range=None):
        self.bandwidth = bandwidth
        self.bandwidth_range = bandwidth_range

    def _widths(self):
        """Validated bandwidth list, or ``None`` when a range is used."""
        if self.bandwidth_range is not None:
            try:
                lo, hi = (float(v) for v in self.bandwidth_range)
            except (TypeError, ValueError):
                raise ValueError(
                    "bandwidth_range must be a pair (low, high) of numbers, got "
                    f"{self.bandwidth_range!r}."
                ) from None
            if not (np.isfinite(lo) and np.isfinite(hi)) or lo <= 0 or hi < lo:
                raise ValueError(
                    "bandwidth_range must satisfy 0 < low <= high (finite); got "
                    f"{self.bandwidth_range!r}."
                )
            return None
        bw = self.bandwidth
        if isinstance(bw, (str, bytes)) or bw is None:
            raise TypeError(f"bandwidth must be a number or a sequence, got {bw!r}.")
        widths = np.atleast_1d(np.asarray(bw, dtype=float)).ravel()
        if widths.size == 0:
            raise ValueError("bandwidth is an empty sequence; give at least one width.")
        if not np.all(np.isfinite(widths)) or np.any(widths <= 0):
            raise ValueError(f"bandwidth values must be finite and > 0, got {bw!r}.")
        return widths

    def _validate_params(self):
        self._widths()

    def _check_X(self, X):
        X = check_array(X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32],
                        input_name="X")
        if hasattr(self, "n_features_in_") and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but the family was fitted with "
                f"{self.n_features_in_}."
            )
        return X

    def sample(self, k, rng=None):
        """Sample ``k`` candidate parameters ``[v, sigma]``.

        Parameters
        ----------
        k : int
            Number of candidates.
        rng : numpy.random.Generator or int, optional
            Randomness.

        Returns
        -------
        params : ndarray of shape (k, n_features + 1)
        """
        if not hasattr(self, "n_features_in_"):
            raise ValueError(
                "RandomFourierFeatures must be fitted (fit(X)) before sampling."
            )
        if not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}.")
        rng = np.random.default_rng(rng)
        widths = self._widths()
        if widths is None:
            lo, hi = (float(v) for v in self.bandwidth_range)
            sigma = rng.uniform(lo, hi, size=k)
        else:
            # even split of the candidates among the listed widths
            sigma = widths[np.arange(k) % widths.size]
        V = rng.standard_normal((k, self.n_features_in_)) / sigma[:, None]
        return np.column_stack([V, sigma])

    def _columns(self, params, X):
        V = params[:, :-1]
        if V.shape[1] != X.shape[1]:
            raise ValueError(
                f"parameters have {V.shape[1]} directions entries but X has "
                f"{X.shape[1]} features."
            )
        P = X @ V.T if sp.issparse(X) else np.asarray(X, dtype=float) @ V.T
        P = np.asarray(P, dtype=float)
        out = np.empty((P.shape[0], 2 * P.shape[1]))
        np.cos(P, out=out[:, 0::2])
        np.sin(P, out=out[:, 1::2])
        return out
