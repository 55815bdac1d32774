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

import copy
import math
import numbers

import numpy as np
import scipy.sparse as sp

from ..kernels import convert_width, resolve_gamma
from ..preprocessing import check_center
from ..utils._numba_cache import njit_cached
from ._infinite import InfiniteFamily, plain_float_matrix
from ._pcg64_normals import pcg64_scaled_normals

__all__ = ["RandomFourierFeatures"]


# in_span: pricing in the rows' span up to this many rows (its SVD basis costs
# D n^2 once per path, and a D x n array)
SPAN_MAX_ROWS = 1000

# Cody-Waite reduction by pi/2 and fdlibm's kernels on [-pi/4, pi/4]: 2/pi,
# pi/2 in three parts (the first two of 33 bits, so q times them is exact for
# |q| < 2^20), the sine and cosine polynomials (fdlibm's __kernel_sin/_cos).
_TWO_OVER_PI = 6.36619772367581382433e-01
_PIO2_1, _PIO2_2, _PIO2_2T = (1.57079632673412561417e+00, 6.07710050630396597660e-11,
                              2.02226624879595063154e-21)
_S1, _S2, _S3, _S4, _S5, _S6 = (
    -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
    2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
_C1, _C2, _C3, _C4, _C5, _C6 = (
    4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
    -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)
# Phases at least this large (or not finite) go to the C library's cos/sin.
_REDUCE_BELOW = 2.0 ** 19 * 1.5707963267948966
_NO_WEIGHTS = np.empty(0)
# Gradient columns up to which the exact fused sums price a dense X (beyond,
# the float32 block's product wins: 1.4x at 26 tasks on 2,000 rows)
_FUSED_MAX_TASKS = 8
# Phases per call of _cos_sin_row in _cos_sin (whole rows of them)
_COS_SIN_BLOCK = 2048


@njit_cached
def _cos_sin_row(p, c, s):
    """``c[j], s[j] = cos(p[j]), sin(p[j])`` for the phases ``p`` of one row.

    The C library's scalar ``cos``/``sin`` took about 20 ns a pair; this
    branch-free reduction and polynomial (fdlibm's, within one unit in the
    last place of the C library's) is vectorised by the compiler, about 1 ns
    a pair.  Phases of magnitude ``_REDUCE_BELOW`` or more (and non-finite
    ones) are recomputed with the C library's functions.
    """
    k = p.shape[0]
    far = 0
    for j in range(k):
        x = p[j]
        near = abs(x) < _REDUCE_BELOW
        far += 0 if near else 1
        # (q = 0 for the far ones: their int64 conversion is then defined)
        q = math.floor(x * _TWO_OVER_PI + 0.5) if near else 0.0
        y = ((x - q * _PIO2_1) - q * _PIO2_2) - q * _PIO2_2T
        z = y * y
        sn = y + (z * y) * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))))
        hz = 0.5 * z
        v = 1.0 - hz
        cs = v + (((1.0 - v) - hz)
                  + z * z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6))))))
        # quadrant q mod 4: (cos, sin) = (cs, sn), (-sn, cs), (-cs, -sn), (sn, -cs),
        # the signs from q's bits (exact products by +-1; a quarter faster
        # than comparing q mod 4 in floating point)
        qi = np.int64(q)
        odd = (qi & 1) != 0
        a = sn if odd else cs
        b = cs if odd else sn
        c[j] = a * (1.0 - ((qi + 1) & 2))
        s[j] = b * (1.0 - (qi & 2))
    if far:
        for j in range(k):
            if not abs(p[j]) < _REDUCE_BELOW:
                c[j], s[j] = math.cos(p[j]), math.sin(p[j])


@njit_cached
def _cos_sin(P, out, w, sq):
    """``out[:, 2j], out[:, 2j+1] = cos(P[:, j]), sin(P[:, j])``, and their
    squared norms (weighted by ``w`` unless it is empty) added to ``sq``.

    Pricing evaluates ``n x k_r`` of these pairs per outer iteration, the
    largest cost of a fit on a few thousand rows (see :func:`_cos_sin_row`).
    The norms are summed from the stored values (rounded to ``out``'s type)
    in float64, in the same pass: a separate ``einsum`` on float32 columns
    cost half as much as the columns.  The pairs of :data:`_COS_SIN_BLOCK`
    phases (whole rows of C-ordered ``P``) are evaluated by one call of
    :func:`_cos_sin_row`: one call per row cost more than its pairs for the
    few columns a master adds (800 rows, 4 phases: 61 -> 12 us), and each
    pair's value does not depend on the others (the norms are still summed
    row after row).
    """
    n, k = P.shape
    rows = max(1, _COS_SIN_BLOCK // max(k, 1))
    c, s = np.empty(min(n, rows) * k), np.empty(min(n, rows) * k)
    weighted = w.size > 0
    for i0 in range(0, n, rows):
        i1 = min(n, i0 + rows)
        _cos_sin_row(P[i0:i1].ravel(), c, s)
        for i in range(i0, i1):
            wi = w[i] if weighted else 1.0
            cr, sr = c[(i - i0) * k:], s[(i - i0) * k:]
            for j in range(k):
                out[i, 2 * j] = cr[j]
                out[i, 2 * j + 1] = sr[j]
                a, b = np.float64(out[i, 2 * j]), np.float64(out[i, 2 * j + 1])
                sq[2 * j] += wi * (a * a)
                sq[2 * j + 1] += wi * (b * b)


@njit_cached
def _cos_sin_sums(P, G, w, HG, sq):
    """Correlations with ``G`` and squared norms of the cos/sin columns of ``P``.

    ``HG[j, 0, t], HG[j, 1, t] = sum_i cos(P[i, j]) G[i, t], sum_i sin(P[i, j]) G[i, t]``
    and ``sq[j] =`` the (``w``-weighted unless ``w`` is empty) squared norms
    of the pair, all in float64: what :func:`_cos_sin` and a product with
    ``G`` give, without the ``n x 2k`` block of columns.  On small problems
    pricing is many such calls, and the block's allocation, its product and
    the float32 ranking with its exact re-score cost more than the sums.
    """
    n, k = P.shape
    T = G.shape[1]
    # four rows at a time: each accumulator is loaded and stored once per
    # four products (the rows past n are zeros, which add nothing); their
    # pairs by one call (see _cos_sin)
    cf, sf = np.zeros(4 * k), np.zeros(4 * k)
    c, s = cf.reshape((4, k)), sf.reshape((4, k))
    g = np.zeros((4, T))
    hc, hs = np.zeros((T, k)), np.zeros((T, k))
    qc, qs = np.zeros(k), np.zeros(k)
    weighted = w.size > 0
    for i0 in range(0, n, 4):
        m = min(4, n - i0)
        _cos_sin_row(P[i0:i0 + m].ravel(), cf, sf)
        for r in range(4):
            if r < m:
                i = i0 + r
                wi = w[i] if weighted else 1.0
                cr, sr = c[r], s[r]
                for j in range(k):
                    qc[j] += wi * (cr[j] * cr[j])
                    qs[j] += wi * (sr[j] * sr[j])
                for t in range(T):
                    g[r, t] = G[i, t]
            else:
                c[r, :] = 0.0
                s[r, :] = 0.0
                g[r, :] = 0.0
        c0, c1, c2, c3 = c[0], c[1], c[2], c[3]
        s0, s1, s2, s3 = s[0], s[1], s[2], s[3]
        for t in range(T):
            g0, g1, g2, g3 = g[0, t], g[1, t], g[2, t], g[3, t]
            ht, st = hc[t], hs[t]
            for j in range(k):
                ht[j] = (((ht[j] + c0[j] * g0) + c1[j] * g1) + c2[j] * g2) + c3[j] * g3
                st[j] = (((st[j] + s0[j] * g0) + s1[j] * g1) + s2[j] * g2) + s3[j] * g3
    for j in range(k):
        sq[j, 0], sq[j, 1] = qc[j], qs[j]
        for t in range(T):
            HG[j, 0, t], HG[j, 1, t] = hc[t, j], hs[t, j]


@njit_cached
def _sparse_phases_at(indptr, slots, data, V, cols, P):
    """``P[i, j] = sum`` over the stored entries ``(c, a)`` of CSR row ``i`` of
    ``a * V[j, c]`` in storage order, the stored columns ``c`` given as
    ``cols[slots]`` (``cols`` increasing; all columns: ``cols=None``,
    ``slots = indices``): SciPy's ``X @ V[:, :-1].T``, bit for bit.

    SciPy's product needs ``V.T`` C-contiguous, so it copied the ``k x D``
    directions into their transpose at every pricing step (on 200 rows of a
    20,000-column sparse set, twice the product itself).  Here eight
    candidates at a time are copied into a ``D x 8`` block (one cache line
    per input column), and each stored entry of ``X`` is read once per
    block, its eight products summed in registers: 3x faster there, 1.3x on
    2,000 rows of Reuters.  Each sum starts at zero and adds the row's
    products in storage order, as SciPy's ``csr_matvecs`` does (a CSC input,
    converted to CSR with its columns in increasing order, sums in the order
    of ``csc_matvecs``), so the phases, hence the model, are SciPy's.

    Only the columns ``cols`` of ``V`` are copied into the blocks: for fewer
    stored entries than columns (a thousand rows of 20 words on 100,000
    columns; the span's distinct rows) most columns of the directions are
    never read.
    """
    n, k = P.shape
    m = V.shape[1] - 1 if cols is None else cols.size
    Vb = np.zeros((m, 8))
    for j0 in range(0, k, 8):
        b = min(8, k - j0)
        for r in range(b):
            v = V[j0 + r]
            if cols is None:  # (every column: no indirection, 5-10 % of a pricing step)
                for q in range(m):
                    Vb[q, r] = v[q]
            else:
                for q in range(m):
                    Vb[q, r] = v[cols[q]]
        Vb[:, b:] = 0.0  # (a last block of fewer candidates: sums not stored)
        for i in range(n):
            a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
            for jj in range(indptr[i], indptr[i + 1]):
                a = data[jj]
                v = Vb[slots[jj]]
                a0 += a * v[0]
                a1 += a * v[1]
                a2 += a * v[2]
                a3 += a * v[3]
                a4 += a * v[4]
                a5 += a * v[5]
                a6 += a * v[6]
                a7 += a * v[7]
            sums = (a0, a1, a2, a3, a4, a5, a6, a7)
            for r in range(b):
                P[i, j0 + r] = sums[r]


def _stored_columns(indices, more=None):
    """``cols, slots``: the increasing columns of the stored ``indices`` (and of the
    integers ``more``) and each stored entry's position among them."""
    cols = np.unique(indices).astype(np.intp) if more is None else np.union1d(
        indices, more).astype(np.intp)
    return cols, np.searchsorted(cols, indices)


@njit_cached
def _add_row_combinations(indptr, slots, data, Y, c, cols, out):
    """``out[:, :-1] += Y R - (Y 1) c'`` in place for CSR ``R``: the directions
    ``h + Y C`` from their ``h``, ``C = R - 1 c'`` the centred rows.

    Only the columns ``cols`` (increasing) where ``R`` or ``c`` is non-zero are
    touched (elsewhere the sum adds zero): ``R``'s stored columns are
    ``cols[slots]``.  As :func:`_sparse_phases_at`, eight rows of ``Y`` per pass over
    ``R``'s stored entries, summed into a ``len(cols) x 8`` block.
    """
    k, n = Y.shape
    m = cols.size
    B = np.empty((m, 8))
    y = np.zeros((n, 8))
    s = np.zeros(8)
    for j0 in range(0, k, 8):
        b = min(8, k - j0)
        B[:] = 0.0
        y[:] = 0.0
        for r in range(b):
            s[r] = 0.0
            for i in range(n):
                y[i, r] = Y[j0 + r, i]
                s[r] += Y[j0 + r, i]
        for i in range(n):
            y0, y1, y2, y3 = y[i, 0], y[i, 1], y[i, 2], y[i, 3]
            y4, y5, y6, y7 = y[i, 4], y[i, 5], y[i, 6], y[i, 7]
            for jj in range(indptr[i], indptr[i + 1]):
                a = data[jj]
                v = B[slots[jj]]
                v[0] += a * y0
                v[1] += a * y1
                v[2] += a * y2
                v[3] += a * y3
                v[4] += a * y4
                v[5] += a * y5
                v[6] += a * y6
                v[7] += a * y7
        for q in range(m):
            col = cols[q]
            for r in range(b):
                out[j0 + r, col] += B[q, r] - s[r] * c[col]


# Normal numbers per call from which scaled_normals draws in compiled code (below,
# NumPy's call costs less than the compiled one's set-up: about 8 us, mostly
# unboxing the generator)
_COMPILED_NORMALS_FROM = 4096


@njit_cached
def _scaled_normals_compiled(rng, out, sigma):
    """``out[i, j] = rng.standard_normal() / sigma[i]``, row after row (see
    :func:`scaled_normals`)."""
    k, m = out.shape
    for i in range(k):
        s = sigma[i]
        for j in range(m):
            out[i, j] = rng.standard_normal() / s


def scaled_normals(rng, out, sigma):
    """``out[:] = rng.standard_normal(out.shape) / sigma[:, None]``, the same numbers.

    NumPy's ziggurat (``random_standard_normal``) negates half of its numbers
    through a branch the processor cannot predict: about 10 ns a number here,
    against 2.3 ns for a uniform one.  numba's port of the same algorithm
    (``Generator.standard_normal`` in compiled code) calls the generator's own
    ``next_uint64`` in the same order and gives the same numbers, bit for bit,
    leaving the generator in the same state, in about 3.2 ns.  On 200 rows of
    100,000 sparse columns the kept features' 29 M normal numbers were half of
    the first prediction (0.3 s) and the candidates' draws in the span a third
    of the fit's pricing.  Where the generators are PCG64 (NumPy's default) the
    same algorithm steps PCG64 inline, all rows in one call
    (:mod:`~kernlearn.families._pcg64_normals`).

    Parameters
    ----------
    rng : numpy.random.Generator or list of numpy.random.Generator
        Draws ``out.size`` normal numbers, ``out``'s rows in order; a list: one
        generator per row of ``out``, each drawing its row.
    out : ndarray of shape (k, m)
        Written in place (a view, such as the directions of ``params[:, :-1]``).
    sigma : ndarray of shape (k,)
        Each row's divisor.
    """
    rows = isinstance(rng, list)
    if (out.shape[1] if rows else out.size) < _COMPILED_NORMALS_FROM:
        for i, g in enumerate(rng if rows else [rng]):
            sl = slice(i, i + 1) if rows else slice(None)
            np.divide(g.standard_normal(out[sl].shape), sigma[sl, None], out=out[sl])
    elif not pcg64_scaled_normals(rng if rows else [rng], out, sigma):
        for i, g in enumerate(rng if rows else [rng]):
            sl = slice(i, i + 1) if rows else slice(None)
            _scaled_normals_compiled(g, out[sl], np.ascontiguousarray(sigma[sl], dtype=float))


class RandomFourierFeatures(InfiniteFamily):
    r"""Cos/sin pairs of random projections, with fixed or sampled bandwidth.

    Parameters
    ----------
    gamma : float, sequence of float or "scale", default="scale"
        Width of the Gaussian kernel :math:`\exp(-\gamma\|x-x'\|^2)`, the
        library's convention; ``"scale"`` is scikit-learn's
        :math:`1/(D\,\mathrm{Var}(X))` on the training data (good on
        unscaled inputs).  A sequence makes the family GrFL-M: the sampled
        candidates are split evenly among its values.
    bandwidth : float or sequence of float, optional
        The paper's notation instead: widths :math:`\sigma` in
        :math:`\exp(-\|x-x'\|^2/(2\sigma^2))` (the paper samples 50
        directions for each of 4 widths, listed as :math:`\sigma^2 \in
        \{2.5, 5, 10, 15\}`, i.e. ``bandwidth=np.sqrt([2.5, 5, 10, 15])``),
        instead of ``gamma`` (giving both is refused).
    bandwidth_range : tuple (low, high), optional
        Sample each candidate's :math:`\sigma` uniformly in ``[low, high]``
        instead (the paper's "20 values in [5, 100]"), without ``gamma`` or
        ``bandwidth``.

    Attributes
    ----------
    widths_ : ndarray or None
        The widths :math:`\sigma` sampled from (``None`` with
        ``bandwidth_range``).
    center_ : ndarray of shape (n_features,) or None
        Column means subtracted from the inputs inside every phase
        (:meth:`fit`'s ``center``); ``None``: the inputs are used as given.
    n_features_in_ : int
        Input columns seen in :meth:`fit`.

    Notes
    -----
    Parameters are stored one row per candidate as ``[v_1, ..., v_D, sigma]``,
    :math:`\sigma = 1/\sqrt{2\gamma}`.

    References
    ----------
    Rakotomamonjy, Flamary, Yger (2013), Mach. Learn. 91, sec. 5.2 and 6.3;
    Rahimi and Recht (2007), "Random features for large-scale kernel machines".
    """

    group_size = 2
    float32_columns = True
    #: :meth:`fit` takes the ``center`` of sparse inputs (``fit_grfl``'s ``center``).
    centres_sparse = True

    def __init__(self, gamma="scale", bandwidth=None, bandwidth_range=None):
        self.gamma = gamma
        self.bandwidth = bandwidth
        self.bandwidth_range = bandwidth_range

    @property
    def width_from_data(self):
        """Whether the width is ``gamma="scale"``, computed from the training inputs
        (no ``bandwidth`` nor ``bandwidth_range`` overriding it)."""
        return (self.bandwidth is None and self.bandwidth_range is None
                and isinstance(self.gamma, str) and self.gamma == "scale")

    def _widths(self, X=None):
        """Validated widths sigma, or ``None`` when a range is used.

        ``gamma="scale"`` needs the training inputs ``X``.
        """
        given = [name for name, value, unset in (
            ("gamma", self.gamma, "scale"), ("bandwidth", self.bandwidth, None),
            ("bandwidth_range", self.bandwidth_range, None))
            if not (value is unset or (isinstance(value, str) and value == unset))]
        if len(given) > 1:
            # (the later one was used without a word: gamma=0.1, bandwidth=1.0 fitted
            # the width 1.0, sigma, as if gamma had not been given)
            raise ValueError(f"give one of gamma, bandwidth and bandwidth_range; got "
                             f"{' and '.join(given)}.")
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
        name, value = (("bandwidth", self.bandwidth) if self.bandwidth is not None
                       else ("gamma", self.gamma))
        if name == "gamma" and isinstance(value, str) and value == "scale":
            return (None if X is None
                    else np.atleast_1d(convert_width(gamma=resolve_gamma("scale", X))))
        # (the type and a single value's range: _constraints; here a
        # sequence's entries)
        vals = np.atleast_1d(np.asarray(value, dtype=float)).ravel()
        if vals.size == 0:
            raise ValueError(f"{name} is an empty sequence; give at least one value.")
        if not np.all(np.isfinite(vals)) or np.any(vals <= 0):
            raise ValueError(f"{name} values must be finite and > 0, got {value!r}.")
        return vals if name == "bandwidth" else convert_width(gamma=vals)

    def fit(self, X, center=None):
        """Validate the parameters and resolve the widths on the training inputs.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Data on which ``gamma="scale"`` is computed.
        center : ndarray of shape (n_features,), optional
            Column means to subtract implicitly: the features are those of
            ``X - center``, computed as :math:`\\cos(x^\\top v - c^\\top v)`
            without forming ``X - center``.  For sparse inputs, which
            standardisation scales but cannot centre without densifying:
            each feature's two columns are scaled to unit norm separately, so
            a shift of ``X`` changes the model (it only rotates the pair
            within its group), and with it the same numbers fitted dense and
            sparse gave different models.

        Returns
        -------
        self : RandomFourierFeatures
            With ``widths_`` and ``center_`` set.
        """
        super().fit(X)
        X = self._checked(X)
        self.widths_ = self._widths(X)
        self.center_ = check_center(center, X)
        return self

    @staticmethod
    def _constraints():
        # (built on the first fit, not on import: Dask workers import the
        # families, and no scikit-learn)
        from sklearn.utils._param_validation import Interval, StrOptions

        width = Interval(numbers.Real, 0, None, closed="neither")
        return {"gamma": [StrOptions({"scale"}), width, "array-like"],
                "bandwidth": [width, "array-like", None],
                "bandwidth_range": ["array-like", None]}

    def _validate_params(self):
        super()._validate_params()  # (the declared constraints)
        self._widths()  # (what they cannot say: one of three, a sequence's values)

    def _check_X(self, X):
        # (plain dense or CSR/CSC floats skip scikit-learn's check, which returns
        # them as they are: a Dask worker's partitions are such, and no worker
        # imports scikit-learn)
        if not plain_float_matrix(X, sparse=True):
            from sklearn.utils.validation import check_array

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
        rng = rng if type(rng) is np.random.Generator else np.random.default_rng(rng)
        widths = self.widths_
        params = np.empty((k, self.n_features_in_ + 1))
        if widths is not None and widths.size == 1:
            # one width (the default): divided by the scalar, the same
            # quotients as by a column of copies, without building it
            sigma = widths[0]
        elif widths is None:
            lo, hi = (float(v) for v in self.bandwidth_range)
            sigma = rng.uniform(lo, hi, size=k)[:, None]
        else:
            # an even split of the candidates among the listed widths
            sigma = widths[np.arange(k) % widths.size][:, None]
        # (written in place: on wide sparse inputs, e.g. text with thousands of
        # words, the draw of k x n_features directions is most of pricing)
        scaled_normals(rng, params[:, :-1], np.broadcast_to(sigma, (k, 1))[:, 0])
        params[:, -1:] = sigma
        return params

    def in_span(self, X, sample_weight=None):
        """Pricing in the span of ``X``'s rows, where that draws far fewer numbers.

        The phases :math:`Xv` of a direction :math:`v \\sim N(0, \\sigma^{-2}I_D)`
        depend on :math:`v` only through :math:`Q^\\top v \\sim
        N(0, \\sigma^{-2}I_r)`, :math:`Q` an orthonormal basis (``D x r``, ``r = n``)
        of a space holding the rows.  On data wider than long (``D >= 2n``,
        e.g. 58 rows of 2,308 gene expressions) candidates are therefore priced
        with ``r``-dimensional directions on ``XQ`` (a copy of this family with
        ``r`` inputs), and only the chosen ones are completed to ``D``
        dimensions, :math:`v = Qz + (I - QQ^\\top)h` with a fresh
        :math:`h \\sim N(0, \\sigma^{-2}I_D)`: the same distribution of
        directions and phases, drawing ``n`` numbers per candidate instead of
        ``D`` (most of a pricing step on such data), and the phases cost
        ``n x n`` instead of ``n x D`` per candidate.  Up to
        :data:`SPAN_MAX_ROWS` rows (the basis costs :math:`O(Dn^2)` once per path).

        The basis is the right singular vectors of the distinct rows of
        positive weight (signs fixed), which depend neither on the rows' order
        nor on repeated rows: integer weights still act as repeated rows (the
        same basis, hence the same draws; rows of zero weight do not count in
        pricing).  A sparse ``X`` (text: a few hundred documents of tens of
        thousands of words) is priced in its span too, never densified, its
        rows centred by ``center_`` (:func:`_sparse_span`: the basis from the
        distinct rows' Gram matrix, the same distribution of directions).

        Parameters
        ----------
        X : object
            The pricing rows.
        sample_weight : ndarray of shape (n_samples,), optional
            Their weights.

        Returns
        -------
        (family, XQ, complete) or None
            ``complete(params_r, rng, out=None)`` gives the chosen candidates' full
            parameters (``rng``: a generator, or a list of one per candidate; ``out``:
            rows to write them into; ``complete.n_params``: their length); its
            attribute ``scores_in_span`` (sparse ``X``) says that the phases on
            ``X`` are those on ``XQ`` to rounding, so candidates may be scored
            and kept there and completed only when they leave it; ``None`` when ``X`` is not a dense array or a sparse
            matrix at least twice as wide as it has distinct rows (of positive
            weight), or when the family centres a dense ``X`` (``center_``).
        """
        if sp.issparse(X):
            return _sparse_span(self, X, sample_weight)
        if type(X) is not np.ndarray or X.shape[1] < 2 or getattr(self, "center_", None) \
                is not None:
            return None
        X = np.asarray(X, dtype=float)
        keep = None if sample_weight is None else np.asarray(sample_weight) > 0
        # (a cheap exact test first: equal rows have equal sums, so there are at
        # least as many distinct rows as distinct sums; most data stop here)
        sums = np.unique(X.sum(axis=1) if keep is None else X.sum(axis=1)[keep]).size
        if X.shape[1] < 2 * sums or sums > SPAN_MAX_ROWS:
            return None
        rows = np.unique(X if keep is None else X[keep], axis=0)
        if X.shape[1] < 2 * rows.shape[0] or rows.shape[0] > SPAN_MAX_ROWS:
            return None
        _, sv, Vt = np.linalg.svd(rows, full_matrices=False)
        Q = Vt[sv > sv[0] * X.shape[1] * np.finfo(float).eps].T  # (D x r, orthonormal)
        if not (sv[0] > 0 and Q.shape[1]):
            return None
        Q = Q * np.sign(Q[np.abs(Q).argmax(axis=0), np.arange(Q.shape[1])])
        reduced = copy.copy(self)
        reduced.n_features_in_ = Q.shape[1]
        return reduced, np.ascontiguousarray(X @ Q), _SpanCompletion(Q)

    def _columns(self, params, X, dtype=np.float64):
        return self._columns_norms(params, X, dtype)[0]

    def _phases(self, params, X):
        """``(X - center_) V'`` in float64, C-contiguous (``V``: the directions of
        ``params``)."""
        V = params[:, :-1]
        if V.shape[1] != X.shape[1]:
            raise ValueError(
                f"parameters have {V.shape[1]} directions entries but X has "
                f"{X.shape[1]} features."
            )
        # (a float64 array first: issparse's abstract-class check costs more
        # than a small product)
        if type(X) is np.ndarray and X.dtype == float:
            P = np.ascontiguousarray(X @ V.T)
        elif sp.issparse(X):
            X = X if X.format == "csr" else X.tocsr()
            P = np.empty((X.shape[0], V.shape[0]))
            data, params = X.data.astype(float, copy=False), np.ascontiguousarray(
                params, dtype=float)
            if X.nnz < X.shape[1]:  # (the same sums from the stored columns of V only)
                cols, slots = _stored_columns(X.indices)
            else:
                cols, slots = None, X.indices
            _sparse_phases_at(X.indptr, slots, data, params, cols, P)
        else:
            P = np.ascontiguousarray(np.asarray(X, dtype=float) @ V.T)
        center = getattr(self, "center_", None)  # (absent from older model files)
        if center is not None:
            P -= V @ center
        return P

    def _columns_norms(self, params, X, dtype=np.float64, sample_weight=None):
        # the product in float64; float32 ranking columns (``dtype``) also round
        # the phases to float32 before the cos/sin (errors near 1e-6 on phases
        # of a few tens, enough to rank; the added columns are float64)
        P = self._phases(params, X)
        if P.dtype != dtype:
            with np.errstate(over="ignore"):  # (repaired just below)
                low = P.astype(dtype)
            if not np.isfinite(low).all():
                # a phase past float32's range (3.4e38: a row of zero weight far
                # out, never standardised away) rounded to inf, whose cos is NaN,
                # and NaN times the row's zero gradient poisoned every candidate's
                # ranking; reduced modulo 2 pi first, as cos and sin are periodic
                big = ~np.isfinite(low)
                low[big] = np.remainder(P[big], 2.0 * np.pi)
            P = low  # (the float64 phases freed before the columns are allocated)
        out = np.empty((P.shape[0], 2 * P.shape[1]), dtype=dtype)
        sq = np.zeros(out.shape[1])
        _cos_sin(P, out, _weights(sample_weight), sq)
        return out, sq

    def ranks_in_float32(self, X, n_tasks):
        """Whether pricing on ``X`` should rank in float32, then re-score the best exactly.

        Not on a dense ``X`` with at most ``_FUSED_MAX_TASKS`` gradient
        columns: there the exact sums of :func:`_cos_sin_sums` cost about as
        much as the float32 block and its product, or less (0.75-0.95x at
        100-20,000 rows and one task, 1.05x at ten), and the ranking is then
        exact: no re-score of the best few (on small problems, a fifth of
        the pricing step).  Arguments and result as
        :meth:`InfiniteFamily.ranks_in_float32`.
        """
        return self.float32_columns and not _fused(X, n_tasks)

    def _chunk_sums(self, params, X, G, low_precision, sample_weight):
        if low_precision or not _fused(X, G.shape[1]):
            return super()._chunk_sums(params, X, G, low_precision, sample_weight)
        P = self._phases(params, X)
        k, T = P.shape[1], G.shape[1]
        HG, sq = np.empty((k, 2, T)), np.empty((k, 2))
        _cos_sin_sums(P, np.ascontiguousarray(G), _weights(sample_weight), HG, sq)
        return HG, sq


def _weights(sample_weight):
    """The row weights as the kernels take them (empty: unweighted)."""
    return (_NO_WEIGHTS if sample_weight is None
            else np.ascontiguousarray(sample_weight, dtype=float))


def _fused(X, n_tasks):
    """Whether :func:`_cos_sin_sums` prices on ``X`` (dense, few tasks)."""
    return type(X) is np.ndarray and n_tasks <= _FUSED_MAX_TASKS


def _distinct_rows(X, keep):
    """The distinct rows of CSR ``X`` among ``keep`` (all if ``None``), in an order
    that depends on neither the rows' order nor repeated rows."""
    X = X.tocsr()
    X.sum_duplicates()
    X.eliminate_zeros()
    rows = range(X.shape[0]) if keep is None else np.flatnonzero(keep)
    key = {}
    for i in rows:
        a, b = X.indptr[i], X.indptr[i + 1]
        key.setdefault((X.indices[a:b].tobytes(), X.data[a:b].tobytes()), i)
    return X[[key[k] for k in sorted(key)]]


def _sparse_span(family, X, sample_weight):
    r""":meth:`RandomFourierFeatures.in_span` of a sparse ``X``, never densified.

    The basis :math:`Q = C^\top U \Lambda^{-1/2}` of the span of the centred
    distinct rows ``C = R - 1 c'`` (``c`` the family's ``center_``) comes from
    the eigenvectors of their ``r x r`` Gram matrix :math:`CC^\top = U\Lambda U^\top`
    and is never formed: ``XQ`` and the completion of the chosen candidates are
    products with the sparse rows.  Eigenvalues below ``1e-12`` times the largest
    are dropped (their directions move the phases by less than a float32 ranking's
    error; the chosen candidates' columns are then computed exactly on ``X``).
    """
    n, D = X.shape
    keep = None if sample_weight is None else np.asarray(sample_weight) > 0
    if D < 2:
        return None
    X = X.tocsr().astype(float)
    sums = np.asarray(X.sum(axis=1)).ravel()
    sums = np.unique(sums if keep is None else sums[keep]).size
    if D < 2 * sums or sums > SPAN_MAX_ROWS:
        return None
    R = _distinct_rows(X, keep)
    r0 = R.shape[0]
    if D < 2 * r0 or r0 > SPAN_MAX_ROWS:
        return None
    c = getattr(family, "center_", None)
    c = np.zeros(D) if c is None else c

    def centred_products(A):
        """``(A - 1 c') C'`` for sparse ``A``, dense."""
        Ac, Rc, cc = A @ c, R @ c, c @ c
        return (np.asarray((A @ R.T).todense()) - Ac[:, None] - Rc[None, :] + cc)

    lam, U = np.linalg.eigh(centred_products(R))
    ok = lam > lam[-1] * 1e-12 if lam[-1] > 0 else np.zeros(lam.size, bool)
    if not ok.any():
        return None
    lam, U = lam[ok][::-1], U[:, ok][:, ::-1]
    U = U * np.sign(U[np.abs(U).argmax(axis=0), np.arange(U.shape[1])])
    M = U / np.sqrt(lam)  # Q = C' M
    reduced = copy.copy(family)
    reduced.n_features_in_ = M.shape[1]
    reduced.center_ = None  # (XQ below is of the centred rows)
    return (reduced, np.ascontiguousarray(centred_products(X) @ M),
            _SparseSpanCompletion(R, M, c))


class _SpanCompletion:
    """``complete`` of :meth:`RandomFourierFeatures.in_span` (dense ``X``):
    :math:`v = Qz + (I - QQ^\\top)h`, a fresh :math:`h \\sim N(0, \\sigma^{-2}I_D)`.

    An object, not a closure: a warm-started estimator keeps the path that
    holds it, and a closure made that estimator unpicklable ("Can't pickle
    local object").

    Parameters
    ----------
    Q : ndarray of shape (n_features, r)
        The orthonormal basis of the rows' span.
    """

    def __init__(self, Q):
        self.Q = Q

    def __call__(self, params_r, rng):
        Q, sigma = self.Q, params_r[:, -1]
        h = np.empty((len(sigma), Q.shape[0]))
        scaled_normals(np.random.default_rng(rng), h, sigma)
        V = (params_r[:, :-1] - h @ Q) @ Q.T + h
        return np.hstack([V, sigma[:, None]])


class _SparseSpanCompletion:
    """``complete`` of :func:`_sparse_span`: :math:`v = h + yC`, ``C = R - 1c'``
    the centred distinct rows, :math:`y = (z - Q^\\top h)M^\\top`, ``Q = C'M``.

    An object, not a closure, for the reason :class:`_SpanCompletion` gives.
    The scores in the span are the model's (the phases on ``X`` are those of
    ``XQ``), so the caller completes only the features it keeps
    (:attr:`scores_in_span`, read by ``GrFL.features``).

    Parameters
    ----------
    R : scipy.sparse.csr_matrix of shape (r0, n_features)
        The distinct rows, canonical.
    M : ndarray of shape (r0, r)
        The basis' coefficients.
    c : ndarray of shape (n_features,)
        The family's centre (zeros without one).
    """

    scores_in_span = True

    def __init__(self, R, M, c):
        self.R, self.M, self.c = R, M, c
        # the columns where R or c is non-zero: elsewhere a completed direction is h
        self.cols, self.slots = _stored_columns(R.indices, np.flatnonzero(c))

    @property
    def n_params(self):
        """Length of a completed row: the directions' columns and the width."""
        return self.c.size + 1

    def __call__(self, params_r, rng, out=None):
        R, M, c, sigma = self.R, self.M, self.c, params_r[:, -1]
        cols, slots = self.cols, self.slots
        k = len(sigma)
        out = np.empty((k, c.size + 1)) if out is None else out  # (out: rows of a caller's array)
        # (a list: one generator per candidate)
        scaled_normals(rng if isinstance(rng, list) else np.random.default_rng(rng),
                       out[:, :-1], sigma)
        h = out[:, :-1]
        hC = np.empty((R.shape[0], k))  # (h C')'
        _sparse_phases_at(R.indptr, slots, R.data, out, cols, hC)
        hC = hC.T - (h @ c)[:, None]
        y = (params_r[:, :-1] - hC @ M) @ M.T  # (z - Q'h) M'
        _add_row_combinations(R.indptr, slots, R.data, y, c, cols, out)  # V = h + y C
        out[:, -1] = sigma
        return out
