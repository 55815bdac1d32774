r"""Degree-2 polynomial features, scored without building the expansion.

The candidate columns are the products :math:`x_j x_k` (:math:`j \\le k`) and,
optionally, the linear features :math:`x_j`.  FGM's worst-case analysis needs
:math:`|\\sum_i u_i x_{ij} x_{ik}|` for all pairs, i.e. the entries of
:math:`X' \\mathrm{diag}(u) X`; they are computed one block of rows at a time
and only the running top-``k`` is kept, so the :math:`O(m^2)` expansion is
never stored (paper 002, sec. 5.3.1 and 6.4).

The candidates are the coordinates of the explicit map of the polynomial kernel
:math:`k(x, z) = (\gamma x'z + r)^2` (sec. 6.4),

.. math:: \phi(x) = [r,\ \sqrt{2\gamma r}\,x_j,\ \gamma x_j^2,\
          \sqrt{2}\,\gamma\,x_j x_k\ (j < k)],

so that :math:`\phi(x)'\phi(z) = (\gamma x'z + r)^2`.  (The paper prints the
cross weight as :math:`\sqrt{2\gamma}`; expanding the square gives
:math:`\sqrt{2}\gamma`, which is what makes the identity hold.)  The constant
coordinate :math:`r` is the intercept and is not offered as a candidate.

Virtual feature ids: pair ``(j, k)``, ``j <= k``, is ``j * m + k``; linear
feature ``j`` is ``m * m + j``.  There are ``m (m + 1) / 2`` pairs (plus ``m``
linear features when ``coef0 > 0``); a budget larger than that returns every
candidate once.
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from ..utils._numba_cache import njit_cached
from ..utils._sparse import canonical_sparse
from ._base import (
    BaseFamily,
    _exclude_array,
    as_params,
    check_ids,
    drop_excluded,
    incidence_matrix,
    input_feature_names,
)


def _sq_col_norms(X, w=None):
    """Column sums of ``X**2``, weighted by the rows' ``w`` when given."""
    if w is not None:
        return _weighted_col_sums(X.multiply(X) if sp.issparse(X) else X * X, w)
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(0)).ravel()
    return np.einsum("ij,ij->j", X, X)


def _weighted_col_sums(A, w):
    """``sum_i w_i A_ij`` per column (dense or sparse ``A``)."""
    return np.asarray(A.T @ w).ravel()


class PolynomialPool(BaseFamily):
    """All degree-2 monomials (and optionally linear terms) of ``X`` as candidates.

    Parameters
    ----------
    include_linear : bool, default=True
        Also offer the original features (the map has them only when
        ``coef0 > 0``).
    feature_scaling : bool, default=True
        Scale each column to unit root-mean-square
        (:math:`\\sqrt{n}/\\|x_j \\odot x_k\\|`, as
        :class:`~kernlearn.families.FeaturePool` does) times the kernel map's
        weight relative to a cross pair's (:math:`1/\\sqrt2` for squares,
        :math:`\\sqrt{r/\\gamma}` for linear terms), so that ``gamma`` and
        ``coef0`` keep their meaning (the balance of linear, square and cross
        terms) while ``C`` means what it means on standardised data (with unit-norm columns ``C = 1`` regularised ``n`` times harder:
        a9a's degree-2 FGM at ``C = 1`` scored 0.821 against 0.850 for the
        ``PolynomialFeatures + l1 LinearSVC`` anchor).  With ``False`` the columns
        are exactly the kernel map's coordinates, weighted by ``gamma`` and
        ``coef0`` as in the paper (which sets ``gamma = 4`` or ``8`` to give
        the pairs more weight than the linear terms).
    gamma : float, default=1.0
        :math:`\\gamma > 0` of the kernel :math:`(\\gamma x'z + r)^2`.
    coef0 : float, default=1.0
        :math:`r \\ge 0` of the kernel.
    block_size : int, default=128
        Dense ``X``: rows of :math:`X'\\mathrm{diag}(u)X` computed at once
        (memory ``block_size x n_features``).  Sparse ``X`` is priced one
        column of the sparse product at a time (memory
        ``O(n_features + k)``), so a sparse set with hundreds of thousands of
        input features (:math:`> 10^{10}` implicit pairs) can be priced.

    Attributes
    ----------
    n_features_ : int
        Input columns seen in :meth:`fit`.
    n_virtual_ : int
        Number of virtual (generated) columns, the range of the candidate ids.
    offers_linear_ : bool
        Whether the linear terms are candidates (``include_linear`` and
        ``coef0 > 0``).
    n_pair_evals_ : int
        Sparse ``X``: pairs with a stored product scored by the last
        :meth:`price` (the work done; the dense path scores all pairs).

    References
    ----------
    Tan, Tsang, Wang (2014), JMLR 15, sec. 6.4 (polynomial feature selection).
    """

    def __init__(self, include_linear=True, feature_scaling=True, gamma=1.0, coef0=1.0,
                 block_size=128):
        self.include_linear = include_linear
        self.feature_scaling = feature_scaling
        self.gamma = gamma
        self.coef0 = coef0
        self.block_size = block_size

    @staticmethod
    def _constraints():
        from sklearn.utils._param_validation import Interval

        return {"include_linear": ["boolean"], "feature_scaling": ["boolean"],
                "gamma": [Interval(Real, 0, None, closed="neither")],
                "coef0": [Interval(Real, 0, None, closed="left")],
                "block_size": [Interval(Integral, 1, None, closed="left")]}

    def fit(self, X, sample_weight=None):
        """Scale the columns on the training data.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        sample_weight : ndarray of shape (n_samples,), optional
            Row weights of the root-mean-square scaling (integer weights
            scale as repeated rows do).

        Returns
        -------
        self : PolynomialPool
        """
        self._validate_params()
        X = canonical_sparse(X)  # (norms and pricing read the stored values)
        self.n_features_ = m = X.shape[1]
        self.n_virtual_ = m * m + m
        # With r = 0 the map has no linear coordinates.
        self.offers_linear_ = bool(self.include_linear and self.coef0 > 0)
        w = self._w = None if sample_weight is None else np.asarray(sample_weight, float)
        sq = _sq_col_norms(X, w)
        # unit root-mean-square columns: sqrt(n) / ||column|| (weighted: as the
        # repeated rows, the total weight and the weighted norms)
        n = X.shape[0] if w is None else float(np.sum(w))
        self._rms = float(np.sqrt(n)) if self.feature_scaling else 1.0
        self._lin_scale = (self._inv_sqrt(sq) * self._rms * self._relative(False, True)
                           if self.feature_scaling else
                           np.full(m, np.sqrt(2.0 * self.gamma * self.coef0)))
        # ||x_j * x_k||^2 = sum_i x_ij^2 x_ik^2 = (X^2)'(X^2): kept only if small.
        X2 = X.multiply(X) if sp.issparse(X) else X * X
        self._X2 = sp.csc_matrix(X2) if sp.issparse(X) else X2
        return self

    @staticmethod
    def _inv_sqrt(sq):
        return np.where(sq > 0, 1.0 / np.sqrt(np.where(sq > 0, sq, 1.0)), 0.0)

    @property
    def n_candidates(self):
        """Number of candidates: the pairs ``j <= k`` and the linear terms offered."""
        m = self.n_features_
        return m * (m + 1) // 2 + m * self.offers_linear_

    def _relative(self, square, linear=False):
        """Kernel-map weight relative to a cross pair's: 1/sqrt(2) or sqrt(r/gamma)."""
        if linear:
            return np.sqrt(self.coef0 / self.gamma)
        return np.where(square, np.sqrt(0.5), 1.0)

    def _pair_weight(self, j, k):
        """Kernel-map weight of pair ``(j, k)``: gamma on squares, sqrt(2) gamma off them."""
        return np.where(np.asarray(j) == np.asarray(k), 1.0, np.sqrt(2.0)) * self.gamma

    def _pair_block(self, X, u, s, e):
        """Scores and scales of pairs with first index in ``[s, e)`` (all ``k``), dense ``X``."""
        S = X[:, s:e].T @ (u[:, None] * X)
        left = self._X2[:, s:e] if self._w is None else self._w[:, None] * self._X2[:, s:e]
        N = left.T @ self._X2
        j, k = np.arange(s, e)[:, None], np.arange(X.shape[1])[None, :]
        scale = (self._inv_sqrt(N) * self._rms * self._relative(j == k)
                 if self.feature_scaling else self._pair_weight(j, k))
        return np.abs(S) * scale, scale

    def price(self, grad, k, rng=None, exclude=None, X=None):
        """Top-``k`` monomials by :math:`\\lambda_{jk}|\\sum_i u_i x_{ij}x_{ik}|`, ``u = -grad``.

        Parameters
        ----------
        grad : ndarray of shape (n_samples,)
            ``C`` times the loss gradient in the margins.
        k : int
            Budget ``B``.
        rng : ignored
            Exact pricing.
        exclude : array-like or set of int, optional
            Virtual ids never returned.
        X : array-like or sparse matrix
            Training data (required).

        Returns
        -------
        candidates : Candidates
            ``params`` are virtual feature ids; ``extra["sum_sq"]`` the sum
            of the squared top-``k`` scores, excluded ids included.
        """
        u = -np.asarray(grad, dtype=float)
        ex = _exclude_array(exclude)
        kept_k, k = k, k + ex.size
        m = self.n_features_
        best_ids, best_scores = np.zeros(0, dtype=np.int64), np.zeros(0)
        if sp.issparse(X):
            # Column j of the sparse product X' diag(u) X, one j at a time
            # (Gustavson), straight into a top-k heap: memory O(m + k), never
            # a block x n_features array; work = the stored pairs of each row.
            X = canonical_sparse(X)
            Xc, Xr = sp.csc_matrix(X), sp.csr_matrix(X)
            kk = int(min(k, self.n_virtual_))
            # Work arrays allocated here (visible to memory profilers): O(m + k).
            work = (np.zeros(m), np.zeros(m), np.zeros(m, dtype=np.bool_),
                    np.empty(m, dtype=np.int64), np.empty(max(kk, 1)),
                    np.empty(max(kk, 1), dtype=np.int64))
            # (unit weights: 1.0 * v is v, the unweighted norms bit for bit)
            w = np.ones(X.shape[0]) if self._w is None else self._w
            ids, scores = _sparse_pair_top_k(
                Xc.indptr, Xc.indices, Xc.data.astype(float), Xr.indptr, Xr.indices,
                Xr.data.astype(float), u, w, kk, bool(self.feature_scaling),
                float(self.gamma), *work)
            self.n_pair_evals_ = int(ids[-1])
            best_ids, best_scores = _merge_top(best_ids, best_scores, ids[:-1],
                                               scores * self._rms, k)
        else:
            for s in range(0, m, int(self.block_size)):
                e = min(m, s + int(self.block_size))
                scores, _ = self._pair_block(X, u, s, e)
                j, kk = np.arange(s, e)[:, None], np.arange(m)[None, :]
                # Only j <= k are candidates: (k, j) is the same monomial as (j, k).
                valid = np.broadcast_to(kk >= j, scores.shape)
                ids = np.broadcast_to(j * m + kk, scores.shape)[valid]
                best_ids, best_scores = _merge_top(best_ids, best_scores, ids, scores[valid],
                                                   k)
        if self.offers_linear_:
            lin = np.abs(np.asarray(X.T @ u).ravel()) * self._lin_scale
            best_ids, best_scores = _merge_top(best_ids, best_scores,
                                               m * m + np.arange(m), lin, k)
        return drop_excluded(best_ids, best_scores, kept_k, ex)

    def _scales(self, ids):
        m = self.n_features_
        ids = np.asarray(ids, dtype=np.int64)
        out = np.empty(len(ids))
        lin = ids >= m * m
        out[lin] = self._lin_scale[ids[lin] - m * m]
        j, kk = np.divmod(ids[~lin], m)
        if not self.feature_scaling:
            out[~lin] = self._pair_weight(j, kk)
        elif j.size:
            X2 = self._X2
            sq = (X2[:, j].multiply(X2[:, kk]) if sp.issparse(X2) else X2[:, j] * X2[:, kk])
            sums = (np.asarray(sq.sum(0)).ravel() if self._w is None
                    else _weighted_col_sums(sq, self._w))
            out[~lin] = (self._inv_sqrt(sums) * self._rms
                         * self._relative(j == kk))
        return out

    def column_indices(self, candidates):
        """Virtual ids and their scaling of the candidates."""
        ids = check_ids(as_params(candidates), self.n_virtual_, "virtual feature id")
        return ids, self._scales(ids)

    def raw_columns(self, ids, X):
        """Unscaled monomial columns of virtual ``ids`` on ``X`` (only those pairs).

        Sparse input gives a CSC block: each pair column is the elementwise
        product of two sparse columns, so prediction costs the selected pairs
        only.
        """
        m = self.n_features_
        ids = check_ids(ids, self.n_virtual_, "virtual feature id")
        lin = ids >= m * m
        j, kk = np.divmod(ids[~lin], m)
        where = np.concatenate([np.flatnonzero(~lin), np.flatnonzero(lin)])
        back = np.argsort(where, kind="stable")
        if sp.issparse(X):
            Xc = sp.csc_matrix(X)
            block = sp.hstack([Xc[:, j].multiply(Xc[:, kk]), Xc[:, ids[lin] - m * m]],
                              format="csc")
            return block[:, back]
        Xd = np.asarray(X)
        return np.hstack([Xd[:, j] * Xd[:, kk], Xd[:, ids[lin] - m * m]])[:, back]

    def columns(self, candidates, X):
        ids, scales = self.column_indices(candidates)
        block = self.raw_columns(ids, X)
        if sp.issparse(block):
            return sp.csc_matrix(block @ sp.diags(scales))
        return block * scales

    def input_incidence(self, ids):
        """Inputs of each monomial: ``x_j x_k`` reads ``j`` and ``k``, ``x_j`` reads ``j``.

        Parameters
        ----------
        ids : array-like of int
            Monomial ids.

        Returns
        -------
        incidence : sparse matrix of shape (len(ids), n_features_)
        """
        m = self.n_features_
        ids = check_ids(ids, self.n_virtual_, "virtual feature id")
        lin = ids >= m * m
        j, kk = np.divmod(np.where(lin, 0, ids), m)
        j = np.where(lin, ids - m * m, j)
        kk = np.where(lin, j, kk)
        rows = np.arange(ids.size)
        return incidence_matrix(np.concatenate([rows, rows]), np.concatenate([j, kk]),
                                ids.size, m)

    def describe(self, ids, input_features=None):
        """Human-readable names (``x3``, ``x1*x7``) of virtual ids.

        Parameters
        ----------
        ids : array-like of int
            Monomial ids (``j * m + k`` for ``x_j x_k``, ``m * m + j`` for ``x_j``).
        input_features : array-like of str, optional
            Input names used in the products (``x0, x1, ...`` when not given).

        Returns
        -------
        names : list of str
            One name per id, e.g. ``"age*bmi"``.
        """
        m = self.n_features_
        names = input_feature_names(input_features, m)
        out = []
        for v in np.asarray(ids, dtype=np.int64):
            if v >= m * m:
                out.append(str(names[v - m * m]))
            else:
                j, kk = divmod(int(v), m)
                out.append(f"{names[j]}*{names[kk]}")
        return out


def _merge_top(ids_a, sc_a, ids_b, sc_b, k):
    ids = np.concatenate([ids_a, ids_b])
    sc = np.concatenate([sc_a, sc_b])
    if sc.size > k:
        keep = np.argpartition(-sc, k - 1)[:k]
        ids, sc = ids[keep], sc[keep]
    order = np.lexsort((ids, -sc))
    return ids[order], sc[order]


@njit_cached
def _heap_push(hs, hi, size, score, ident):
    """Push into the min-heap ``(hs, hi)`` of capacity ``len(hs)``; return its size."""
    if size < hs.size:
        pos = size
        size += 1
    elif score > hs[0]:
        pos = 0
        # sift the root down to make room, then place the new entry there
        while True:
            c = 2 * pos + 1
            if c >= size:
                break
            if c + 1 < size and hs[c + 1] < hs[c]:
                c += 1
            if hs[c] >= score:
                break
            hs[pos], hi[pos] = hs[c], hi[c]
            pos = c
        hs[pos], hi[pos] = score, ident
        return size
    else:
        return size
    while pos > 0:  # sift up a new leaf
        parent = (pos - 1) // 2
        if hs[parent] <= score:
            break
        hs[pos], hi[pos] = hs[parent], hi[parent]
        pos = parent
    hs[pos], hi[pos] = score, ident
    return size


@njit_cached
def _sparse_pair_top_k(c_ptr, c_idx, c_val, r_ptr, r_idx, r_val, u, w, k, scaled, gamma,
                       s_acc, n_acc, mark, touched, hs, hi):
    r"""Top-``k`` pairs ``j <= l`` by :math:`|\sum_i u_i x_{ij} x_{il}|` (scaled), sparse ``X``.

    ``X`` is given twice, as CSC (``c_*``) and CSR (``r_*``).  For each column
    ``j`` the non-zero entries of column ``j`` of :math:`X'\mathrm{diag}(u)X`
    and of :math:`(X\odot X)'\mathrm{diag}(w)(X\odot X)` (``w``: row weights)
    are accumulated over the rows where :math:`x_{ij} \ne 0` (Gustavson's
    sparse product); each non-zero pair
    score goes into a min-heap of the ``k`` best.  The work arrays
    (``s_acc, n_acc`` zeros and ``mark`` False of length ``m``, ``touched`` of
    length ``m``, heap ``hs, hi`` of length ``k``) are passed in.  Returns the
    heap's ids (virtual ``j * m + l``) with the count of scored pairs
    appended, and its scores.
    """
    m = c_ptr.size - 1
    size = 0
    n_eval = 0
    root2 = np.sqrt(2.0)
    root_half = np.sqrt(0.5)
    for j in range(m):
        n_t = 0
        for p in range(c_ptr[j], c_ptr[j + 1]):
            i = c_idx[p]
            xij = c_val[p]
            uij = u[i] * xij
            for q in range(r_ptr[i], r_ptr[i + 1]):
                col = r_idx[q]
                if col < j:
                    continue
                if not mark[col]:
                    mark[col] = True
                    touched[n_t] = col
                    n_t += 1
                xil = r_val[q]
                s_acc[col] += uij * xil
                n_acc[col] += w[i] * (xij * xil) ** 2
        for t in range(n_t):
            col = touched[t]
            sv = abs(s_acc[col])
            if scaled:
                score = sv / np.sqrt(n_acc[col]) if n_acc[col] > 0 else 0.0
                if col == j:
                    score *= root_half
            else:
                score = sv * gamma * (1.0 if col == j else root2)
            if score > 0 and k > 0:
                size = _heap_push(hs, hi, size, score, j * m + col)
            s_acc[col] = 0.0
            n_acc[col] = 0.0
            mark[col] = False
        n_eval += n_t
    out_ids = np.empty(size + 1, dtype=np.int64)
    out_ids[:size] = hi[:size]
    out_ids[size] = n_eval
    return out_ids, hs[:size].copy()
