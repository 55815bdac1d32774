"""Kernel FGM with the intersection kernel: exact worst-case analysis (paper 002, sec. 4.4).

With a nonlinear map :math:`\\phi(x \\odot \\sqrt d)` FGM becomes the infinite
kernel learning problem (24); its worst-case analysis (25) asks for the
scaling :math:`d \\in \\mathcal D` maximising
:math:`\\tfrac12 (\\alpha\\odot y)'\\tilde K_d(\\alpha\\odot y)`.  For a general
kernel this is NP-hard; for an *additive* kernel
:math:`k(x, z) = \\sum_k k_k(x_k, z_k)` it is linear in :math:`d`.  For the
generalised intersection kernel (26), :math:`k_k(x, z) = \\min(|x_k|^\\beta,
|z_k|^\\beta)`, the worst case is (27),

.. math:: \\max_{d \\in \\mathcal D} \\sum_k d_k c_k, \\qquad
          c_k = \\sum_{i,j} u_i u_j \\min(v_{ik}, v_{jk}),\\quad
          u = \\alpha \\odot y,\\ v_{ik} = |x_{ik}|^\\beta,

solved exactly by keeping the ``B`` largest :math:`c_k` (Remark 3: FGM keeps
its global convergence).  Each :math:`c_k` costs :math:`O(n)` instead of
:math:`O(n^2)`: with the values of feature ``k`` sorted,
:math:`v_{(1)} \\le \\dots \\le v_{(n)}`, and
:math:`\\min(a, b) = \\int_0^\\infty [t < a][t < b]\\,dt`,

.. math:: c_k = \\sum_{r=1}^n \\big(v_{(r)} - v_{(r-1)}\\big)
          \\Big(\\sum_{s \\ge r} u_{(s)}\\Big)^2, \\qquad v_{(0)} = 0,

one sort per feature at ``fit`` and a suffix sum per pricing.

The restricted master of (24) is solved in the primal, like linear FGM, on an
*exact* finite map of each selected sub-kernel: the piecewise-linear encoding
of Maji and Berg with one level per training value,
:math:`\\phi_l(v) = \\mathrm{clip}(v - t_{l-1}, 0, t_l - t_{l-1}) / \\sqrt{t_l - t_{l-1}}`,
for which :math:`\\phi(v)'\\phi(t_l) = \\min(v, t_l)` for every training value
:math:`t_l` and every ``v``.  So :math:`\\Phi_k\\Phi_k' = K_k` on the training
set, the master is exactly the MKL problem (24) over the kernels
:math:`K_t = \\sum_{k \\in d_t} K_k`, and predictions on new points are the
kernel expansion :math:`\\sum_i a_i k(x_i, x)`.  A selected feature costs
``n x n`` memory in the master, so this exact form is for data sets of a few
thousand points; :class:`~kernlearn.families.AdditiveKernelExpansion` with its
100 levels (sec. 7.3) scales further.

Virtual feature ids: level ``l`` of feature ``k`` is ``k * n_train + l``.
"""

import numpy as np
import scipy.sparse as sp

from ..utils._sparse import canonical_sparse
from ._base import top_candidates
from .explicit import AdditiveKernelExpansion, finite_powers


class IntersectionKernelFeatures(AdditiveKernelExpansion):
    """Input features under the generalised intersection kernel, priced exactly.

    Kernel FGM (paper 002, eqs. 24-27): each candidate is an input feature
    ``k`` with its sub-kernel :math:`\\min(|x_k|^\\beta, |z_k|^\\beta)`; pricing
    returns the ``B`` features with the largest
    :math:`c_k = u'K_k u` (computed by sorting, never forming :math:`K_k`),
    and the columns of a selected feature are an exact factor of
    :math:`K_k`.

    Parameters
    ----------
    beta : float, default=1.0
        Exponent of the generalised intersection kernel (26); 1 is the
        histogram intersection kernel.
    feature_scaling : bool, default=True
        Scale each sub-kernel to unit trace, :math:`K_k / \\mathrm{tr} K_k`
        (block scale :math:`1/\\|\\Phi_k\\|_F`), so that a feature's range does
        not decide its selection.  ``False`` is the paper's unscaled kernel.
    chunk_size : int, default=256
        Features scored at once (memory ``n_samples x chunk_size``).

    Attributes
    ----------
    n_features_ : int
        Input columns seen in :meth:`fit`.
    n_virtual_ : int
        Number of virtual (generated) columns, the range of the candidate ids.
    width_ : int
        Columns per input feature: the training rows.
    levels_ : ndarray of shape (n_features, n_samples)
        Sorted training values :math:`|x_{ik}|^\\beta` of each feature (the
        encoding's levels; for sparse input only the stored values are kept
        and this array is built on access).
    scale_ : ndarray of shape (n_features,)
        Block scale of each feature.

    References
    ----------
    Tan, Tsang, Wang (2014), JMLR 15, sec. 4.4, eqs. (24)-(27), Remark 3;
    Maji, Berg, Malik (2008), CVPR; Maji, Berg (2009), ICCV.
    """

    def __init__(self, beta=1.0, feature_scaling=True, chunk_size=256):
        super().__init__(kernel="hik", beta=beta, feature_scaling=feature_scaling,
                         chunk_size=chunk_size)

    def fit(self, X, sample_weight=None):
        """Sort each feature's training values (the levels) and scale the sub-kernels.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        sample_weight : ndarray of shape (n_samples,), optional
            Row weights of the traces the sub-kernels are scaled by (integer
            weights scale as repeated rows do).

        Returns
        -------
        self : IntersectionKernelFeatures
        """
        self._validate_params()  # (AdditiveKernelExpansion's constraints)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        n, m = X.shape
        self.width_ = n
        self.n_features_ = m
        self.n_virtual_ = m * n
        if sp.issparse(X):
            # Zeros sort first and add nothing (v_(r) - v_(r-1) = 0 among them):
            # only the stored values of each column, sorted, are kept.
            Xc = canonical_sparse(sp.csc_matrix(X))  # (a copy if it must change)
            v = finite_powers(Xc.data.astype(float), self.beta)
            col = np.repeat(np.arange(m), np.diff(Xc.indptr))
            order = np.lexsort((v, col))
            self._sparse = (Xc.indptr.copy(), Xc.indices[order], v[order])
            first = np.zeros(v.size, dtype=bool)
            first[Xc.indptr[:-1][np.diff(Xc.indptr) > 0]] = True
            vs = v[order]
            self._steps = np.where(first, vs, vs - np.concatenate([[0.0], vs[:-1]]))
            trace = np.bincount(col, weights=vs if w is None else vs * w[self._sparse[1]],
                                minlength=m)
        else:
            self._sparse = None
            V = finite_powers(np.asarray(X, dtype=float), self.beta)
            self._order = np.argsort(V, axis=0, kind="stable").astype(
                np.int32 if n < 2**31 else np.int64)
            self._levels_dense = np.take_along_axis(V, self._order, axis=0).T.copy()
            # v_(r) - v_(r-1) with v_(0) = 0, per feature (n x m)
            self._steps = np.diff(self._levels_dense.T, axis=0, prepend=0.0)
            # tr K_k = sum_i w_i v_ik = ||Phi_k||_F^2 (weighted: as the repeated rows)
            trace = self._levels_dense.sum(axis=1) if w is None else w @ V
        if self.feature_scaling:
            self.scale_ = np.where(trace > 0, 1.0 / np.sqrt(np.where(trace > 0, trace, 1.0)),
                                   0.0)
        else:
            self.scale_ = np.ones(m)
        return self

    @property
    def levels_(self):
        """Sorted training values of each feature, shape ``(n_features, n_samples)``."""
        return self._levels(np.arange(self.n_features_))

    def _levels(self, features):
        features = np.asarray(features, dtype=int)
        if self._sparse is None:
            return self._levels_dense[features]
        # zeros first, then the sorted stored values (built for these features only)
        indptr, _, vals = self._sparse
        out = np.zeros((features.size, self.width_))
        for r, f in enumerate(features.tolist()):
            a, b = indptr[f], indptr[f + 1]
            out[r, self.width_ - (b - a):] = vals[a:b]
        return out

    def kernel_scores(self, u):
        """:math:`c_k = u'K_k u` of every feature by the sorted suffix sums (exact).

        Parameters
        ----------
        u : ndarray of shape (n_samples,)
            :math:`\\alpha \\odot y`.

        Returns
        -------
        c : ndarray of shape (n_features,)
            Unscaled :math:`c_k` (multiply by ``scale_ ** 2`` for the scaled
            kernels).
        """
        u = np.asarray(u, dtype=float)
        if self._sparse is not None:
            # suffix sums over each column's stored entries in sorted order
            indptr, rows, _ = self._sparse
            cs = np.concatenate([[0.0], np.cumsum(u[rows])])
            col = np.repeat(np.arange(self.n_features_), np.diff(indptr))
            suffix = cs[indptr[1:]][col] - cs[:-1]
            c = np.bincount(col, weights=self._steps * suffix**2,
                            minlength=self.n_features_)
            return np.maximum(c, 0.0)
        c = np.empty(self.n_features_)
        step = int(self.chunk_size)
        for s in range(0, self.n_features_, step):
            U = u[self._order[:, s:s + step]]
            suffix = np.cumsum(U[::-1], axis=0)[::-1]
            c[s:s + step] = np.einsum("ij,ij->j", self._steps[:, s:s + step], suffix**2)
        # rounding can leave tiny negatives for a PSD quadratic form
        return np.maximum(c, 0.0)

    def price(self, grad, k, rng=None, exclude=None, X=None):
        """The ``k`` features with the largest :math:`\\lambda_k^2 c_k` (worst case (27)).

        Parameters
        ----------
        grad : ndarray of shape (n_samples,)
            ``C`` times the loss gradient in the margins (``u = -grad``).
        k : int
            Budget ``B``.
        rng, X : ignored
            Exact pricing from the sorted training values kept at ``fit``.
        exclude : array-like or set of int, optional
            Input-feature indices never returned.

        Returns
        -------
        candidates : Candidates
            ``params`` are input-feature indices, ``scores`` the norms
            :math:`\\lambda_k\\sqrt{c_k} = \\|\\lambda_k\\Phi_k'u\\|`, and
            ``extra["sum_sq"]`` the value :math:`\\sum_{\\mathrm{top}B}\\lambda_k^2 c_k`
            of (27).
        """
        c = self.kernel_scores(-np.asarray(grad, dtype=float)) * self.scale_**2
        return top_candidates(np.sqrt(c), k, exclude, group_size=self.width_)
