r"""Explicit feature maps of additive kernels, one group per input feature.

An additive kernel :math:`k(x, z) = \\sum_j k_j(x_j, z_j)` has a feature map
that is a concatenation of per-feature maps :math:`\\phi_j`; selecting input
features under such a kernel is group selection over the blocks
:math:`\\Phi_j` (paper 002, sec. 4.4 and 7).  The blocks are computed on the
fly, a chunk of input features at a time, so the expansion is never stored.

* ``"hik"``: the (generalised) histogram intersection kernel
  :math:`\\min(|x|^\\beta, |z|^\\beta)`, by the piecewise-linear encoding of
  Maji and Berg on ``n_bins`` levels (exact for values on the grid);
* ``"additive_chi2"``: :math:`2xz/(x+z)`, by the sampled Fourier map of
  Vedaldi and Zisserman (``sample_steps`` terms, non-negative data);
* ``"additive_gaussian"``: :math:`\exp(-\gamma (x - z)^2)`, by the same
  construction applied to its spectrum
  :math:`\kappa(\omega) = e^{-\omega^2/4\gamma}/\sqrt{4\pi\gamma}`:
  :math:`\phi(x) = [\sqrt{L\kappa(0)},\ \sqrt{2L\kappa(jL)}\cos(jLx),\
  \sqrt{2L\kappa(jL)}\sin(jLx)]_{j=1}^{J-1}`, whose inner product is the
  periodic sum :math:`L\sum_{|j|<J}\kappa(jL)\cos(jL(x-z))`.

The defaults are the maps of sec. 7.3 (Table 3): HIK on 100 levels (a group of
100 columns per feature) and the additive Gaussian with ``J = 6`` (a group of
11).  With the default period :math:`L = 0.6\sqrt{2\gamma}` the Gaussian map
is within 1e-3 of the kernel for :math:`|x - z| \le 6/\sqrt{2\gamma}`.

Virtual feature ids: column ``l`` of feature ``j``'s block is ``j * g + l``
with ``g`` the block width.
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from ..kernels import resolve_gamma
from ..utils._memory import physical_memory, refuse_oversized
from ..utils._sparse import canonical_sparse
from ._base import BaseFamily, as_params, check_ids, top_candidates

# Columns of a dense chunk of the expansion: the defaults' 256 features x 100
# bins.  A wider map is expanded fewer features at a time: n_bins=10_000 held
# 256 x 10_000 columns per chunk (2 GB at 200 rows x 30 features)
_DENSE_COLUMNS = 256 * 100


def _col_absmax(X):
    if sp.issparse(X):
        return np.asarray(abs(X).max(axis=0).todense()).ravel()
    return np.abs(X).max(axis=0)


def _col_min(X):
    if sp.issparse(X):
        return X.data.min() if X.nnz else 0.0
    return X.min() if X.size else 0.0


def finite_powers(values, beta, what="X"):
    """``|values| ** beta``, refused where a value overflows to infinity.

    ``beta=1e8`` (or 100 on inputs in the thousands) made every power of a value
    above 1 infinite: the blocks' levels and scales turned into inf and NaN, and
    the fit returned the intercept-only model with NumPy's overflow warnings only.

    Parameters
    ----------
    values : ndarray
        The values to raise (their absolute values are taken).
    beta : float
        The exponent.
    what : str, default="X"
        What ``values`` are, for the message.

    Returns
    -------
    ndarray
        ``|values| ** beta``, every entry finite.

    Raises
    ------
    ValueError
        Naming ``beta`` and the largest absolute value when a power is infinite.
    """
    with np.errstate(over="ignore"):
        powered = np.abs(values) ** beta
    if not np.all(np.isfinite(powered)):
        top = float(np.max(np.abs(values)))
        raise ValueError(f"beta={beta:g} overflows: |x| ** beta of the largest absolute "
                         f"value of {what} ({top:g}) is not a finite float; use a smaller "
                         "beta or scale the inputs (e.g. by MaxAbsScaler) first.")
    return powered


def _row_sums(P, w):
    """Column sums of ``P`` over its rows, weighted by ``w`` (``None``: unweighted)."""
    return np.asarray(P.sum(axis=0) if w is None else P.T @ w).ravel()


def _col_var(X, w=None):
    total = X.shape[0] if w is None else float(np.sum(w))
    mean = _row_sums(X, w) / total
    sq = _row_sums(X.multiply(X) if sp.issparse(X) else X * X, w) / total
    return np.maximum(sq - mean**2, 0.0)


def _block_sums(P, k, width, w=None):
    """Sum over rows (weighted by ``w``) and each feature's ``width`` columns of
    ``P`` (n x k*width)."""
    return _row_sums(P, w).reshape(k, width).sum(axis=1)


def _scale_columns(block, scales):
    if sp.issparse(block):
        return sp.csc_matrix(block @ sp.diags(scales))
    return block * scales


class AdditiveKernelExpansion(BaseFamily):
    r"""Per-feature explicit maps of an additive kernel, as groups of columns.

    Parameters
    ----------
    kernel : {"hik", "additive_chi2", "additive_gaussian"}, default="hik"
        The additive kernel.
    n_bins : int, default=100
        Levels of the HIK encoding (block width for ``"hik"``; the paper's 100).
    beta : float, default=1.0
        Exponent of the generalised intersection kernel.
    sample_steps : int, optional
        Terms ``J`` of the Fourier maps (block width ``2 J - 1``); default 2
        for chi2 (Vedaldi and Zisserman) and 6 for the Gaussian (the paper's
        groups of 11).
    sample_interval : float, optional
        Sampling period ``L`` of the Fourier maps (chi2 default as Vedaldi and
        Zisserman: 0.8 for 1 step, 0.5 for 2, 0.4 for 3; Gaussian default
        :math:`0.6\sqrt{2\gamma_j}`).
    gamma : float or "scale", optional
        :math:`\gamma` of the additive Gaussian :math:`e^{-\gamma(x-z)^2}`;
        ``"scale"`` is scikit-learn's definition applied to each
        one-dimensional kernel, :math:`1/\mathrm{Var}(x_j)`; default
        :math:`1/(2\,\mathrm{Var}(x_j))` per feature (a wider kernel), so
        unscaled features get a bandwidth of their own scale.
    feature_scaling : bool, default=True
        Scale each block by :math:`1/\\|\\Phi_j\\|_F`.
    chunk_size : int, default=256
        Input features expanded at once (dense input: at most
        ``25_600 // width`` of them, the defaults' 256 x 100 columns, so that a
        wide map is expanded a few features at a time).

    Notes
    -----
    Memory bound: a fit may hold the expansion of every input feature on the
    training rows, ``8 * n_samples * n_features * width`` bytes (the stored
    entries instead of ``n_samples * n_features`` for sparse input; ``width``
    is ``n_bins`` for ``"hik"``, ``2 * sample_steps - 1`` otherwise).  A
    ``n_bins`` (or ``sample_steps``) for which this exceeds the machine's
    physical memory is refused by :meth:`fit` with a ``ValueError`` naming
    it and the memory needed.  The time of a fit grows with the width too
    (about linearly).

    Attributes
    ----------
    n_features_ : int
        Input columns seen in :meth:`fit`.
    n_virtual_ : int
        Number of virtual (generated) columns, the range of the candidate ids.
    width_ : int
        Columns per input feature (the block width: ``n_bins`` or ``2 J - 1``).
    scale_ : ndarray of shape (n_features_,)
        Block scale of each input feature (ones without ``feature_scaling``).
    levels_ : ndarray of shape (n_features_, n_bins)
        ``"hik"`` only: the encoding's levels of each feature.
    steps_, interval_ : int, float or ndarray
        ``"additive_chi2"`` / ``"additive_gaussian"`` only: the terms ``J``
        and the sampling period ``L`` used (per feature for the Gaussian).
    gamma_ : ndarray of shape (n_features_,)
        ``"additive_gaussian"`` only: each feature's :math:`\gamma`.

    References
    ----------
    Maji, Berg (2009), ICCV; Vedaldi, Zisserman (2012), TPAMI; Tan, Tsang,
    Wang (2014), JMLR 15, sec. 7.
    """

    def __init__(self, kernel="hik", n_bins=100, beta=1.0, sample_steps=None,
                 sample_interval=None, gamma=None, feature_scaling=True, chunk_size=256):
        self.kernel = kernel
        self.n_bins = n_bins
        self.beta = beta
        self.sample_steps = sample_steps
        self.sample_interval = sample_interval
        self.gamma = gamma
        self.feature_scaling = feature_scaling
        self.chunk_size = chunk_size

    @staticmethod
    def _constraints():
        from sklearn.utils._param_validation import Interval, StrOptions

        positive = Interval(Real, 0, None, closed="neither")
        return {"kernel": [StrOptions({"hik", "additive_chi2", "additive_gaussian"})],
                "n_bins": [Interval(Integral, 1, None, closed="left")],
                "beta": [positive],
                "sample_steps": [Interval(Integral, 1, None, closed="left"), None],
                "sample_interval": [positive, None],
                "gamma": [positive, StrOptions({"scale"}), None],
                "feature_scaling": ["boolean"],
                "chunk_size": [Interval(Integral, 1, None, closed="left")]}

    def fit(self, X, sample_weight=None):
        """Choose the maps' levels or widths and the block scales on the training data.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        sample_weight : ndarray of shape (n_samples,), optional
            Row weights of the block scales and of the Gaussian's widths
            (integer weights scale as repeated rows do; the levels of
            ``"hik"`` read the rows of positive weight).

        Returns
        -------
        self : AdditiveKernelExpansion
        """
        self._validate_params()
        # (the maps read the stored values, and SciPy's abs() and max() would
        # sum a non-canonical matrix's duplicates in the caller's matrix)
        X = canonical_sparse(X)
        # (a nested list or a DataFrame is read as an array once: every step below
        # reads .shape, and a list died in an AttributeError)
        X = Xd = X if sp.issparse(X) else np.asarray(X)
        # (the scales were unweighted: a weighted fit was 0.25 away from the fit on
        # repeated rows, where the other families' fits agree)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        if self.kernel in ("additive_chi2", "additive_gaussian"):
            chi2 = self.kernel == "additive_chi2"
            if chi2 and _col_min(Xd) < 0:
                raise ValueError("the additive_chi2 expansion needs non-negative features.")
            steps = self.sample_steps if self.sample_steps is not None else (2 if chi2 else 6)
            self.steps_ = int(steps)
            self.width_ = 2 * self.steps_ - 1
            self._refuse_oversized(X)  # (before the widths' work)
            if chi2:
                self.interval_ = self.sample_interval or {1: 0.8, 2: 0.5, 3: 0.4}.get(
                    self.steps_, 0.4)
            else:
                if isinstance(self.gamma, str) and self.gamma == "scale":
                    # scikit-learn's "scale" for each one-dimensional kernel
                    Xc = Xd.tocsc() if sp.issparse(Xd) else Xd
                    gamma = np.array([resolve_gamma("scale", Xc[:, [j]], sample_weight=w,
                                                    name=f"gamma of column {j}")
                                      for j in range(Xc.shape[1])])
                elif self.gamma is not None:
                    gamma = np.full(Xd.shape[1], float(self.gamma))
                else:
                    var = _col_var(Xd, w)
                    gamma = 0.5 / np.where(var > 0, var, 1.0)
                self.gamma_ = gamma
                # 0.6 / sigma: the spectrum kappa is covered up to 3 standard
                # deviations by J = 6 terms, and the period 2 pi / L ~ 10.5 sigma
                self.interval_ = (np.full_like(gamma, float(self.sample_interval))
                                  if self.sample_interval else 0.6 * np.sqrt(2.0 * gamma))
        else:
            self.width_ = self.n_bins
            self._refuse_oversized(X)  # (before the levels: 30 x 10**9 died in NumPy)
            top = finite_powers(_col_absmax(Xd if w is None else Xd[w > 0]), self.beta)
            # Per-feature grid t_1 < ... < t_q on [0, max |x_j|^beta].
            self.levels_ = top[:, None] * np.arange(1, self.n_bins + 1)[None, :] / self.n_bins
        self.n_features_ = X.shape[1]
        self.n_virtual_ = self.n_features_ * self.width_
        sq = np.zeros(self.n_features_)
        for s, e, Phi in self._chunks(X):
            sq[s:e] = _block_sums(Phi.multiply(Phi) if sp.issparse(Phi) else Phi**2,
                                  e - s, self.width_, w)
        if sp.issparse(X) and self.kernel == "additive_gaussian":
            # Zeros map to phi(0) != 0: the stored chunks hold phi(x) - phi(0).
            # ||Phi_j||^2 = sum_i ||phi(x_ij)||^2 = sum_nz(||phi(x)||^2 - ||phi(0)||^2)
            #               + n ||phi(0)||^2, and ||phi(x)||^2 is constant here.
            total = X.shape[0] if w is None else float(np.sum(w))
            sq = total * (self._phi_zero(np.arange(self.n_features_)) ** 2).sum(1)
        if self.feature_scaling:
            self.scale_ = np.where(sq > 0, 1.0 / np.sqrt(np.where(sq > 0, sq, 1.0)), 0.0)
        else:
            self.scale_ = np.ones(self.n_features_)
        return self

    def _refuse_oversized(self, X):
        """Refuse a width whose whole expansion of ``X`` exceeds the physical memory.

        A model may select every input feature, and the fit then holds the
        map of all of them on the training rows (``n_samples x n_features x
        width`` values, of the stored entries for sparse input): such a width
        died in NumPy's bare ``MemoryError`` after minutes of work.
        """
        name, value = (("n_bins", self.n_bins) if self.kernel == "hik"
                       else ("sample_steps", self.steps_))
        n_values = X.nnz if sp.issparse(X) else X.shape[0] * X.shape[1]
        refuse_oversized(self, name, value, 8.0 * n_values * self.width_,
                         physical_memory(), "the expansion of the training data",
                         "the machine's physical memory")

    @property
    def n_candidates(self):
        """Number of candidates: the input features."""
        return self.n_features_

    def expand(self, X, features):
        """Blocks ``[Phi_j for j in features]`` of ``X``, shape (n, len * width).

        Sparse ``X`` gives a sparse CSC block holding the map of the stored
        entries only: HIK and chi2 map 0 to 0, so this is their expansion; the
        additive Gaussian maps 0 to :math:`\\phi(0) \\ne 0`, and its sparse
        block holds :math:`\\phi(x) - \\phi(0)` (add :meth:`_phi_zero` back,
        as :meth:`columns` and :meth:`price` do).
        """
        features = check_ids(features, self.n_features_, "input feature id")
        Xj = canonical_sparse(X)[:, features]
        if sp.issparse(Xj):
            return self._expand_sparse(sp.csc_matrix(Xj), features)
        Xj = np.asarray(Xj, dtype=float)
        n, k = Xj.shape
        if self.kernel == "hik":
            v = np.abs(Xj) ** self.beta
            lev = self._levels(features)  # (k, q)
            lower = np.concatenate([np.zeros((k, 1)), lev[:, :-1]], axis=1)
            delta = np.maximum(lev - lower, 1e-300)
            # phi_l(x) = clip(x - t_{l-1}, 0, Delta_l) / sqrt(Delta_l)
            Phi = np.clip(v[:, :, None] - lower[None], 0.0, delta[None]) / np.sqrt(delta)[None]
        elif self.kernel == "additive_gaussian":
            Phi = self._gauss_map(Xj, features)
        else:
            L = self.interval_
            with np.errstate(divide="ignore", invalid="ignore"):
                logx = np.where(Xj > 0, np.log(np.where(Xj > 0, Xj, 1.0)), 0.0)
            parts = [np.sqrt(Xj * L)]
            for kk in range(1, self.steps_):
                with np.errstate(over="ignore"):  # (a long period: cosh is inf, the term 0)
                    amp = np.sqrt(2 * Xj * L / np.cosh(np.pi * kk * L))
                parts += [amp * np.cos(kk * L * logx), amp * np.sin(-kk * L * logx)]
            Phi = np.stack(parts, axis=2)
        return Phi.reshape(n, k * self.width_)

    def _entry_maps(self, v, features):
        """Maps (one row per entry) of values ``v`` of the given per-entry ``features``."""
        if self.kernel == "hik":
            v = np.abs(v) ** self.beta
            uniq, inv = np.unique(features, return_inverse=True)
            lev = self._levels(uniq)[inv]
            lower = np.concatenate([np.zeros((len(v), 1)), lev[:, :-1]], axis=1)
            delta = np.maximum(lev - lower, 1e-300)
            return np.clip(v[:, None] - lower, 0.0, delta) / np.sqrt(delta)
        if self.kernel == "additive_gaussian":
            return self._gauss_map(v[:, None], features[:, None]).reshape(len(v), -1) \
                - self._phi_zero(features)
        L = self.interval_
        logx = np.log(np.where(v > 0, v, 1.0))
        parts = [np.sqrt(v * L)]
        for kk in range(1, self.steps_):
            with np.errstate(over="ignore"):  # (as in expand)
                amp = np.sqrt(2 * v * L / np.cosh(np.pi * kk * L))
            parts += [amp * np.cos(kk * L * logx), amp * np.sin(-kk * L * logx)]
        return np.stack(parts, axis=1)

    def _gauss_map(self, Xj, features):
        """Additive Gaussian map of a dense ``(n, k)`` block, shape ``(n, k, width)``."""
        L, g = self.interval_[features], self.gamma_[features]
        kappa = lambda w: np.exp(-w**2 / (4.0 * g)) / np.sqrt(4.0 * np.pi * g)  # noqa: E731
        parts = [np.broadcast_to(np.sqrt(L * kappa(0.0)), Xj.shape)]
        for j in range(1, self.steps_):
            amp = np.sqrt(2.0 * L * kappa(j * L))
            parts += [amp * np.cos(j * L * Xj), amp * np.sin(j * L * Xj)]
        return np.stack(parts, axis=2)

    def _levels(self, features):
        """HIK grid of the given features, shape ``(len(features), width)``."""
        return self.levels_[features]

    def _phi_zero(self, features):
        """:math:`\\phi_j(0)` of the given features, shape ``(len(features), width)``."""
        features = np.asarray(features, dtype=int)
        if self.kernel != "additive_gaussian":
            return np.zeros((len(features), self.width_))
        return self._gauss_map(np.zeros((1, len(features))), features)[0]

    def _expand_sparse(self, Xj, features):
        """Sparse expansion of a CSC block: the map of each stored entry only."""
        n, k = Xj.shape
        counts = np.diff(Xj.indptr)
        feat = np.repeat(features, counts)
        maps = self._entry_maps(Xj.data.astype(float), feat)  # (nnz, width)
        w = self.width_
        # Column of entry e, level l: its position in the block times w plus l.
        cols = (np.repeat(np.arange(k), counts)[:, None] * w + np.arange(w)[None, :])
        rows = np.broadcast_to(Xj.indices[:, None], maps.shape)
        keep = maps != 0
        return sp.csc_matrix((maps[keep], (rows[keep], cols[keep])), shape=(n, k * w))

    def _chunks(self, X):
        """``(start, end, block)`` of consecutive input features, bounded in memory.

        Sparse input is cut by stored entries (at most ``chunk_size * n`` and
        ``4e6 / width`` per block), not by columns: a sparse set with many
        features is expanded in few, small sparse blocks.
        """
        if sp.issparse(X):
            Xc = canonical_sparse(sp.csc_matrix(X))
            # stored entries per block: as many map values as a dense chunk, at
            # most 4e6 (32 MB)
            budget = max(1, min(int(self.chunk_size) * X.shape[0],
                                4_000_000 // self.width_))
            ends = np.searchsorted(Xc.indptr, np.arange(budget, Xc.nnz + budget, budget),
                                   side="right") - 1
            cuts = np.unique(np.concatenate([[0], np.clip(ends, 1, None),
                                             [self.n_features_]]))
            cuts = cuts[cuts <= self.n_features_]
            for s, e in zip(cuts[:-1], cuts[1:]):
                yield int(s), int(e), self._expand_sparse(Xc[:, s:e], np.arange(s, e))
            return
        step = max(1, min(int(self.chunk_size), _DENSE_COLUMNS // self.width_))
        for s in range(0, self.n_features_, step):
            e = min(self.n_features_, s + step)
            yield s, e, self.expand(X, np.arange(s, e))

    def price(self, grad, k, rng=None, exclude=None, X=None):
        """Top-``k`` input features by :math:`\\lambda_j\\|\\Phi_j'u\\|`, ``u = -grad``.

        Parameters
        ----------
        grad : ndarray of shape (n_samples,)
            ``C`` times the loss gradient in the margins.
        k : int
            Budget ``B`` (groups).
        rng : ignored
            Exact pricing.
        exclude : array-like or set of int, optional
            Input-feature indices never returned.
        X : array-like or sparse matrix
            Training data (required).

        Returns
        -------
        candidates : Candidates
            ``params`` are input-feature indices.
        """
        u = -np.asarray(grad, dtype=float)
        scores = np.zeros(self.n_features_)
        for s, e, Phi in self._chunks(X):
            z = np.asarray(Phi.T @ u).reshape(e - s, self.width_)
            if sp.issparse(Phi):
                # the zeros' map phi(0) (additive Gaussian) contributes sum(u) phi(0)
                z = z + u.sum() * self._phi_zero(np.arange(s, e))
            scores[s:e] = np.linalg.norm(z, axis=1) * self.scale_[s:e]
        return top_candidates(scores, k, exclude, group_size=self.width_)

    def column_indices(self, candidates):
        """Virtual ids and scaling of the candidates' columns."""
        feats = check_ids(as_params(candidates), self.n_features_, "input feature id")
        ids = (feats[:, None] * self.width_ + np.arange(self.width_)[None, :]).ravel()
        return ids, np.repeat(self.scale_[feats], self.width_)

    def columns(self, candidates, X):
        feats = as_params(candidates).astype(int)
        _, scales = self.column_indices(feats)
        return _scale_columns(self._with_zero_map(self.expand(X, feats), feats), scales)

    def raw_columns(self, ids, X):
        """Unscaled expanded columns of virtual ``ids`` on ``X``."""
        ids = check_ids(ids, self.n_virtual_, "virtual feature id")
        feats, cols = np.divmod(ids, self.width_)
        uniq, inv = np.unique(feats, return_inverse=True)
        Phi = self._with_zero_map(self.expand(X, uniq), uniq)
        if sp.issparse(Phi):
            return sp.csc_matrix(Phi)[:, inv * self.width_ + cols]
        return Phi.reshape(X.shape[0], len(uniq), self.width_)[:, inv, cols]

    def _with_zero_map(self, Phi, features):
        """Complete a sparse block of the additive Gaussian with :math:`\\phi(0)`.

        Its columns are dense (every point has a non-zero map), so only the
        selected features' block is densified; HIK and chi2 stay sparse.
        """
        if not sp.issparse(Phi) or self.kernel != "additive_gaussian":
            return Phi
        return Phi.toarray() + self._phi_zero(features).ravel()[None, :]
