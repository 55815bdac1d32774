r"""Tasks and kernels of a multitask problem: buckets, kernel blocks, factors.

:class:`TaskBuckets` groups the tasks by size and pads them, so that the
per-task linear algebra is batched: padding rows have a unit diagonal, zero
target and no part in the bias constraint, so their dual variable is exactly
0.  :class:`TaskKernels` gives the k base kernels as within-task blocks (what
MK-MTFL needs) or over all training rows, and :func:`kernel_factor` their
compact eigendecompositions (what MK-MTSFL and the shared components need),
kept by a :class:`FactorStore` that the fit owns (a cross-validation shares
one across the fits of a C grid; nothing is kept between unrelated fits).
"""

import hashlib
import pickle
import threading
from collections import OrderedDict

import numpy as np
import scipy.sparse as sp

from ..._callable_kernels import warn_uncentred_callable
from ..._histogram_kernels import HISTOGRAM_KERNELS, histogram_shift, histogram_view
from ...kernels import (
    BaseKernelList,
    _user_kernel,
    check_kernel_callable,
    kernel_diag,
    pairwise_kernel,
    parse_specs,
    resolve_params,
    take_columns,
)
from ...preprocessing import fit_standardization, kernel_overflow_message
from ...utils._repeated_kernels import refuse_repeated_grams, refuse_repeated_kernels
from ...utils._sparse import distance_shift, shift_rows, warn_far_sparse_offset
from ._sparse_rows import (sparse_block, sparse_diag, sparse_inputs, sparse_linear_factor,
                           sparse_scaled, task_blocks)

__all__ = [
    "FactorStore",
    "TaskBuckets",
    "TaskKernels",
    "gather_rows",
    "kernel_factor",
    "task_products",
]


class TaskBuckets:
    """Tasks grouped by size and padded, for batched per-task linear algebra.

    Parameters
    ----------
    task_rows : list of ndarray of int
        Row indices of each task.
    growth : float, default=1.25
        A bucket holds tasks whose sizes are within this factor of its
        smallest one (less padding vs fewer batched calls).

    Attributes
    ----------
    buckets : list of tuple
        ``(tasks, idx, mask)``: task ids ``(T_b,)``, padded row indices
        ``(T_b, m_b)`` (valid rows first) and the validity mask.
    """

    def __init__(self, task_rows, growth=1.25):
        self.task_rows = [np.asarray(r, dtype=np.int64) for r in task_rows]
        sizes = np.array([len(r) for r in self.task_rows])
        order = np.argsort(sizes, kind="stable")
        self.buckets = []
        i = 0
        while i < len(order):
            cap = int(np.ceil(sizes[order[i]] * growth))
            j = i
            while j < len(order) and sizes[order[j]] <= cap:
                j += 1
            tasks = order[i:j]
            m = int(sizes[tasks].max())
            idx = np.zeros((len(tasks), m), dtype=np.int64)
            mask = np.zeros((len(tasks), m), dtype=bool)
            for a, t in enumerate(tasks):
                idx[a, : sizes[t]] = self.task_rows[t]
                mask[a, : sizes[t]] = True
            self.buckets.append((tasks, idx, mask))
            i = j
        self.n_tasks = len(self.task_rows)
        self.n_samples = int(sizes.sum())

    def gather(self, v):
        """Padded per-bucket copies ``v[idx] * mask`` of a per-row vector."""
        return [np.where(mask, v[idx], 0.0) for _, idx, mask in self.buckets]

    def scatter(self, vals, n):
        """Per-row vector of length ``n`` from padded per-bucket values."""
        out = np.zeros(n)
        for (_, idx, mask), v in zip(self.buckets, vals):
            out[idx[mask]] = v[mask]
        return out

    def by_task(self, vals):
        """Stack per-bucket ``(T_b,)`` values into one ``(T,)`` array."""
        out = np.zeros(self.n_tasks)
        for (tasks, _, _), v in zip(self.buckets, vals):
            out[tasks] = v
        return out


# ------------------------------------------------------------------- kernels
def _batched_gram(kernel, params, A, B, shift=None):
    """Gram blocks ``k(A_t, B_t)`` of stacked ``(T, m_a, d)``, ``(T, m_b, d)`` data
    (RBF: both less ``shift``, the training rows' :func:`distance_shift`)."""
    if kernel == "rbf":
        A, B = shift_rows(shift, A, B)
    if kernel in ("linear", "rbf", "poly"):
        G = A @ B.transpose(0, 2, 1)
        if kernel == "linear":
            return G
        if kernel == "poly":
            g, c0 = params.get("gamma", 1.0), params.get("coef0", 1.0)
            with np.errstate(over="ignore"):  # (inf: refused by the callers, named)
                return (g * G + c0) ** params.get("degree", 2)
        # a squared norm past float64's range is inf, and the kernel value its limit,
        # 0 (NumPy warned of the overflow; inf - inf = NaN is refused by the callers)
        # in place, the same operations in the same order as
        # exp(-gamma * max(|a|^2 + |b|^2 - 2 G, 0)): fresh temporaries of a
        # task's Gram block (1,400 rows: 16 MB each) were half its cost
        with np.errstate(over="ignore"):
            D = (A * A).sum(-1)[:, :, None] + (B * B).sum(-1)[:, None, :]
            G *= 2.0
            np.subtract(D, G, out=D)
        np.maximum(D, 0.0, out=D)
        np.multiply(-params["gamma"], D, out=D)
        return np.exp(D, out=D)
    out = np.stack([np.asarray(pairwise_kernel(A[t], B[t], kernel, **params), float)
                    for t in range(len(A))])
    if out.shape != (A.shape[0], A.shape[1], B.shape[1]):
        raise ValueError(f"a kernel callable returned blocks of shape {out.shape}.")
    return out


#: Up to this many training rows a kernel's factor is taken from its Gram
#: matrix in memory (128 MB); beyond it from products with blocks of rows.
_GRAM_IN_MEMORY_ROWS = 4096


class TaskKernels(BaseKernelList):
    """The k base kernels of a multitask problem: within-task blocks or full Grams.

    A :class:`~kernlearn.kernels.BaseKernelList`: ``rows``, ``cross``,
    ``iter_blocks``, ``gram`` and ``factor`` as for every kernel list, the
    kernels as used (normalised); :meth:`blocks` gives
    kernel ``j`` between the padded rows of each task of a bucket instead of
    blocks of training rows (use :meth:`iter_blocks` for those).

    Parameters
    ----------
    kernels : list or "precomputed"
        Kernel specs as in :class:`kernlearn.kernels.KernelList` (names,
        callables, ``(kernel, params[, columns])``), or ``"precomputed"``.
    normalize : bool, default=True
        Scale each kernel to unit mean diagonal on the training data (the
        simplex weights then compare kernels of different scales fairly).
    standardize : bool, default=True
        Centre and scale every input column by its training mean and standard
        deviation before the kernels see it; the histogram kernels (``hik``,
        ``additive_chi2``) see the columns scaled, not centred, as sparse
        columns are (:func:`~kernlearn._histogram_kernels.histogram_shift`).

    Attributes
    ----------
    scales_ : ndarray of shape (k,)
        Multiplier applied to each kernel.
    hist_shift_ : ndarray of shape (n_features,) or None
        What the histogram kernels add back to the standardised dense columns.
    params_ : list of dict
        Resolved parameters (``gamma="mean"`` replaced).
    diag_, kdiag_ : ndarray of shape (k, n)
        Raw and as-used (scaled) diagonals of the training kernels.
    gram_ : None
        Gram tensors are not kept; rows are computed when asked for.
    """

    #: MiB of Gram rows per block of :meth:`iter_blocks`
    cache_size = 1024

    def __init__(self, kernels, normalize=True, standardize=True):
        self.kernels = kernels
        self.normalize = normalize
        self.standardize = standardize
        self.precomputed = isinstance(kernels, str) and kernels == "precomputed"

    def fit(self, X, sample_weight=None):
        """Resolve parameters and scales on the training data.

        Parameters
        ----------
        X : ndarray of shape (n, n_features), or (precomputed) ndarray (k, n, n)
        sample_weight : ndarray of shape (n,), optional
            Row weights of the standardisation, of ``gamma="scale"`` and of
            the mean diagonal (as for repeated rows, as in every estimator's
            kernel list); ``gamma="mean"`` stays unweighted.

        Returns
        -------
        self : TaskKernels
        """
        if self.precomputed:
            refuse_repeated_grams(X)
            self.grams_ = X
            diag = np.einsum("jii->ji", X)
        else:
            self.specs_ = parse_specs(self.kernels)
            sparse = sp.issparse(X)
            X = X if sparse else np.asarray(X, dtype=float)
            self.mean_, self.std_ = np.zeros(X.shape[1]), np.ones(X.shape[1])
            self.center_ = None
            if sparse:
                # scaled, never centred (nor densified): the dot-product kernels
                # subtract the centre themselves (._sparse_rows)
                self.X_, self.std_, self.center_ = sparse_inputs(X, sample_weight,
                                                                 self.standardize)
            elif self.standardize:
                # the one standardisation of every estimator: it refuses columns
                # whose variance overflows (X * 1e300 gave wrong models here) and
                # keeps the spread of columns near 1e-300 (they passed for constant)
                st = fit_standardization(X, sample_weight)
                self.mean_, self.std_ = st.mean, st.scale
            self.X_ = self.X_ if sparse else self._scaled(X)
            hist = any(isinstance(k, str) and k in HISTOGRAM_KERNELS for k, _, _ in self.specs_)
            self.hist_shift_ = histogram_shift(self.mean_, self.std_) if (
                hist and not sparse and self.standardize) else None
            self.params_, diag, self.shift_ = [], [], []
            for j, (kernel, params, cols) in enumerate(self.specs_):
                Xj = self._kviews(self.X_, j)
                # (the RBF distances of rows far from zero subtract the training mean)
                self.shift_.append(distance_shift(Xj) if kernel == "rbf" else None)
                if sparse and kernel == "rbf" and self.center_ is None:
                    warn_far_sparse_offset(Xj, f"X (kernels[{j}]'s view)")
                self.params_.append(resolve_params(kernel, params, Xj, j, sample_weight,
                                                   centred=bool(self.standardize)
                                                   and not sparse))
                if _user_kernel(kernel) is not None:
                    # as every estimator's kernel lists: the diagonal alone let
                    # an indefinite callable (1 - |x - y| / 2) be fitted
                    check_kernel_callable(_user_kernel(kernel), Xj, j, self.params_[j])
                    if sparse:
                        warn_uncentred_callable(_user_kernel(kernel), f"kernels[{j}]",
                                                self.center_)
                with np.errstate(over="ignore"):  # (an overflow is refused below)
                    d_j = (sparse_diag(self, Xj, j, self.params_[j]) if sparse
                           else kernel_diag(Xj, kernel, **self.params_[j]))
                diag.append(np.asarray(d_j, dtype=float))
            diag = np.vstack(diag)
            refuse_repeated_kernels(self.specs_, self.params_, X.shape[1])
        if not np.isfinite(diag).all():
            if self.precomputed:
                raise ValueError("a kernel produced non-finite values on X.")
            # (named, with the remedy, as every other kernel list's refusal)
            raise ValueError(kernel_overflow_message(
                int(np.flatnonzero(~np.isfinite(diag).all(axis=1))[0])))
        if (diag < -1e-10 * np.abs(diag).max(initial=1.0)).any():
            raise ValueError("a kernel has a negative diagonal: it is not PSD.")
        self.diag_, self.gram_ = diag, None
        mean = np.average(diag, axis=1, weights=sample_weight)
        self.scales_ = (np.where(mean > 0, 1.0 / np.where(mean > 0, mean, 1.0), 1.0)
                        if self.normalize else np.ones(self.n_kernels))
        self.kdiag_ = diag * self.scales_[:, None]
        return self

    def rows(self, ids):
        """Training Gram rows ``(k, len(ids), n)`` of samples ``ids``, as used.

        Parameters
        ----------
        ids : ndarray of int

        Returns
        -------
        K : ndarray of shape (k, len(ids), n)
        """
        return np.stack([self.full(j, rows=np.asarray(ids)) for j in range(self.n_kernels)])

    def cross(self, X, support=None):
        """Kernels ``(k, n_new, n_support)`` of new inputs against training rows.

        Parameters
        ----------
        X : ndarray of shape (n_new, n_features), or (precomputed) (k, n_new, n)
        support : ndarray of int, optional
            Training rows kept (all by default).

        Returns
        -------
        K : ndarray of shape (k, n_new, n_support)
        """
        K = np.stack([self.full(j, X_a=X) for j in range(self.n_kernels)])
        return K if support is None else K[:, :, support]

    def _scaled(self, X):
        if sp.issparse(X):
            return sparse_scaled(self, X)
        return (np.asarray(X, dtype=float) - self.mean_) / self.std_

    def factor(self, j, max_rank=None, rtol=1e-10):
        r"""Factor :math:`A` with :math:`K_j \approx AA^\top` over the training rows.

        A linear kernel is factored from its data view (thin SVD of the
        ``n x d`` columns, :math:`O(nd^2)`, exact rank ``<= d``) instead of from
        its ``n x n`` Gram matrix (sparse rows: exactly as well, from the
        smaller of its two Gram matrices,
        :func:`~kernlearn.methods.mtmkl._sparse_rows.sparse_linear_factor`);
        other kernels by :func:`kernel_factor`.
        Computed on every call: the factors are kept, keyed by the content
        of the kernel (:meth:`cache_key`), by the fit's
        :class:`FactorStore`.

        Parameters
        ----------
        j : int
        max_rank : int, optional
        rtol : float, default=1e-10
            Relative eigenvalue cut-off.

        Returns
        -------
        A : ndarray of shape (n, r)
        """
        # (a sparse linear kernel's data view would be dense: exact from the
        # smaller of its two Gram matrices, as the dense view's SVD)
        A = self.linear_factor(j)
        if A is None and self._sparse_linear(j):
            F = sparse_linear_factor(self, j, max_rank, rtol)
            if F is not None:
                return F
        if A is None and (self.precomputed or _n_train(self) <= _GRAM_IN_MEMORY_ROWS):
            return kernel_factor(self.full(j), max_rank, rtol)
        if A is None:
            # products with K_j in blocks of rows: memory O(n r), not the
            # n x n Gram matrix (1.9 GB on the 15,362 rows of School), at the
            # price of recomputing K_j's rows once per product
            return kernel_factor(_n_train(self), max_rank, rtol,
                                 matmul=lambda Q: self._gram_matmul(j, Q))
        U, sv, _ = np.linalg.svd(A, full_matrices=False)
        r = len(sv) if max_rank is None else min(int(max_rank), len(sv))
        keep = sv[:r] ** 2 > rtol * max(sv[0] ** 2, 0.0) if sv.size else sv > 0
        return U[:, :r][:, keep] * sv[:r][keep]

    def linear_factor(self, j):
        r"""The scaled data view :math:`A` of linear kernel ``j``: :math:`K_j = AA^\top`.

        Exact (no truncation; as many columns as the kernel's view), over the
        training rows; ``None`` for other kernels, precomputed ones and
        sparse rows (their view would be dense).

        Parameters
        ----------
        j : int

        Returns
        -------
        A : ndarray of shape (n, d_j) or None
        """
        if self.precomputed or self.specs_[j][0] != "linear" or sp.issparse(self.X_):
            return None
        return np.asarray(self._views(self.X_, j), dtype=float) * np.sqrt(self.scales_[j])

    def _sparse_linear(self, j):
        """Whether kernel ``j`` is linear on sparse training rows."""
        return (not self.precomputed and self.specs_[j][0] == "linear"
                and sp.issparse(self.X_))

    def _gram_matmul(self, j, Q, block=2048):
        """``K_j @ Q`` over the training rows, ``block`` rows of ``K_j`` at a time."""
        n = _n_train(self)
        out = np.empty((n, Q.shape[1]))
        for s in range(0, n, block):
            rows = np.arange(s, min(n, s + block))
            out[rows] = self.full(j, rows=rows) @ Q
        return out

    def cache_key(self, j, _data=None):
        """Content key of training kernel ``j`` (``None`` if it cannot be keyed).

        Equal keys mean equal training Gram matrices: the key hashes the
        (scaled) training data, the kernel with its resolved parameters and
        column view, and the normalisation scale.  Kernels that cannot be
        pickled (lambdas, local functions) have no key.

        Parameters
        ----------
        j : int
        _data : bytes, optional
            The training data's digest, if already hashed (:meth:`cache_keys`).

        Returns
        -------
        key : bytes or None
        """
        h = hashlib.sha1()
        if self.precomputed:
            h.update(np.ascontiguousarray(self.grams_[j]).tobytes())
        else:
            try:
                spec = pickle.dumps((self.specs_[j], self.params_[j]))
            except (pickle.PicklingError, AttributeError, TypeError):
                return None
            h.update(self._data_digest() if _data is None else _data)
            h.update(spec)
            shift = getattr(self, "hist_shift_", None)
            if shift is not None and self.specs_[j][0] in HISTOGRAM_KERNELS:
                h.update(np.ascontiguousarray(shift).tobytes())  # (its columns, uncentred)
        h.update(np.float64(self.scales_[j]).tobytes())
        return h.digest()

    def cache_keys(self):
        """:meth:`cache_key` of every kernel, the training data hashed once
        (each key hashed it: 1,600 rows of 84 columns, a millisecond a key)."""
        data = None if self.precomputed else self._data_digest()
        return [self.cache_key(j, data) for j in range(self.n_kernels)]

    def _data_digest(self):
        """Digest of the (scaled) training data and its shape."""
        X = self.X_
        parts = ([X.data, X.indices, X.indptr] if sp.issparse(X) else [X])  # (CSR: canonical)
        return hashlib.sha1(b"".join(np.ascontiguousarray(a).tobytes() for a in parts)
                            + repr(X.shape).encode()).digest()

    def _shift(self, j):
        shift = getattr(self, "shift_", None)  # (absent from older model files)
        return None if shift is None else shift[j]

    def _views(self, X, j):
        return take_columns(X, self.specs_[j][2], j)

    def _kviews(self, X, j):
        """Kernel ``j``'s view of ``X`` as it sees it (histogram kernels: uncentred)."""
        s = getattr(self, "hist_shift_", None)  # (absent from older model files)
        return histogram_view(self._views(X, j), self.specs_[j][0],
                              None if s is None else np.ravel(self._views(s[None, :], j)))

    def blocks(self, j, idx_a, mask_a, X_a=None, idx_b=None, mask_b=None):
        """Kernel ``j`` between padded row sets of each task of a bucket.

        Parameters
        ----------
        j : int
            Kernel.
        idx_a, mask_a : ndarray of shape (T_b, m_a)
            Rows of ``X_a`` (training rows when ``X_a`` is None) and validity.
        X_a : ndarray, optional
            New data (rows ``idx_a``); for precomputed kernels the
            ``(k, n_new, n_train)`` test Grams.
        idx_b, mask_b : ndarray of shape (T_b, m_b), optional
            Training rows of the second side; default ``idx_a``/``mask_a``.

        Returns
        -------
        K : ndarray of shape (T_b, m_a, m_b)
        """
        idx_b = idx_a if idx_b is None else idx_b
        mask_b = mask_a if mask_b is None else mask_b
        if self.precomputed:
            G = self.grams_[j] if X_a is None else X_a[j]
            K = np.asarray(G[idx_a[:, :, None], idx_b[:, None, :]], dtype=float)
        else:
            Xa = self._kviews(self.X_ if X_a is None else self._scaled(X_a), j)
            Xb = self._kviews(self.X_, j)
            kernel = self.specs_[j][0]
            K = (task_blocks(self, j, Xa, idx_a, Xb, idx_b) if sp.issparse(Xb) else
                 _batched_gram(kernel, self.params_[j], Xa[idx_a], Xb[idx_b], self._shift(j)))
        if not np.isfinite(K).all():
            raise ValueError(kernel_overflow_message(j))
        # (in place: K * scale * mask, the values of K * (scale * mask))
        K *= self.scales_[j]
        K *= mask_a[:, :, None] & mask_b[:, None, :]
        return K

    def full(self, j, X_a=None, rows=None):
        """Kernel ``j`` between (new or training) rows and all training rows.

        Parameters
        ----------
        j : int
        X_a : ndarray, optional
            New data (or precomputed test Grams ``(k, n_new, n_train)``).
        rows : ndarray of int, optional
            Subset of rows of ``X_a`` (all by default).

        Returns
        -------
        K : ndarray of shape (n_rows, n_train)
        """
        if self.precomputed:
            G = self.grams_[j] if X_a is None else X_a[j]
            K = G if rows is None else G[rows]
        else:
            Xa = self._kviews(self.X_ if X_a is None else self._scaled(X_a), j)
            Xa = Xa if rows is None else Xa[rows]
            Xb = self._kviews(self.X_, j)
            K = (sparse_block(self, j, Xa, Xb) if sp.issparse(Xb) else
                 _batched_gram(self.specs_[j][0], self.params_[j], Xa[None], Xb[None],
                               self._shift(j))[0])
        if not np.isfinite(K).all():
            raise ValueError(kernel_overflow_message(j))
        return K * self.scales_[j]


# ------------------------------------------------------------------- factors
def kernel_factor(K, max_rank=None, rtol=1e-10, n_power=3, random_state=0, matmul=None):
    r"""Compact eigendecomposition :math:`K \approx V\Sigma^2V^\top` as ``A = V\Sigma``.

    Exact (LAPACK) at full rank; with ``max_rank`` well below ``n`` the
    leading eigenpairs come from randomised subspace iteration (Halko,
    Martinsson, Tropp 2011, Algorithm 4.4), :math:`O(n^2 r)` instead of the
    :math:`O(n^3)` of a full decomposition.

    Parameters
    ----------
    K : ndarray of shape (n, n), or int
        Symmetric PSD Gram matrix over all training points, or (with
        ``matmul``) its size ``n``.
    max_rank : int, optional
        Keep at most this many leading eigenpairs.
    rtol : float, default=1e-10
        Drop eigenvalues below ``rtol`` times the largest.
    n_power : int, default=3
        Subspace iterations of the randomised method.
    random_state : int, default=0
        Seed of its Gaussian test matrix.
    matmul : callable, optional
        ``Q -> K @ Q`` without ``K`` in memory (the randomised method needs
        nothing else; the exact one builds ``K`` from it).

    Returns
    -------
    A : ndarray of shape (n, r)
        :math:`V\Sigma`, so that :math:`K \approx AA^\top`.
    """
    n = int(K) if matmul is not None else K.shape[0]
    mm = matmul if matmul is not None else K.__matmul__
    r = n if max_rank is None else min(int(max_rank), n)
    if 2 * (r + 10) >= n:
        w, V = np.linalg.eigh(K if matmul is None else mm(np.eye(n)))
        if w[0] < -1e-6 * max(abs(w[-1]), 1e-300):
            raise ValueError("a kernel matrix is not positive semidefinite "
                             f"(eigenvalue {w[0]:.3g}).")
        w, V = w[n - r:], V[:, n - r:]
    else:
        rng = np.random.default_rng(random_state)
        Qm = np.linalg.qr(mm(rng.standard_normal((n, r + 10))))[0]
        for _ in range(n_power):
            Qm = np.linalg.qr(mm(Qm))[0]
        w, U = np.linalg.eigh(Qm.T @ mm(Qm))
        w, V = w[-r:], Qm @ U[:, -r:]
    keep = w > rtol * max(w[-1], 0.0) if w.size else w > 0
    return V[:, keep] * np.sqrt(w[keep])


class FactorStore:
    """Kernel factors of one fit, or of the fits of one model selection.

    A store belongs to whoever creates it: every :func:`fit_multitask` call
    makes its own unless it is given one, and
    :class:`~kernlearn.MultitaskMKLRegressorCV` passes one store
    to the fits of its C grid (the kernel matrix over all training rows and
    its eigendecomposition do not depend on C, and were over half of a
    139-task MK-MTSFL fit: School, 7 kernels, 4.5 s of 9 s), then drops it.
    Nothing is shared between unrelated fits.  Entries are keyed by the
    content of the training kernel (:meth:`TaskKernels.cache_key`), so fits
    on other rows (other folds) never see each other's factors; the store
    is bounded in bytes (least recently used entries go first).

    With ``max_block_rows`` it also keeps the within-task kernel blocks of
    fits on at most that many training rows (:meth:`blocks`):
    :class:`~kernlearn.MultitaskMKLClassifierCV` fits every C of
    its grid on one fold's rows with one store, so each fold's blocks are
    computed once, not once per C (packed for the solver, with the rows whose
    duals merge: :meth:`kept`), and each C's first SVM / SVR solves
    start from the previous C's duals (:meth:`start`).

    Parameters
    ----------
    max_bytes : int, default=256 MiB
        Bound on the bytes of the stored factors (and blocks).
    max_block_rows : int, default=0
        Keep the kernel blocks of fits on at most this many training rows
        (0: none; a plain fit computes each block once anyway, and a kept
        copy would double its memory).

    Attributes
    ----------
    block_hits, block_misses : int
        Kernel blocks served from the store, and computed.
    start_hits : int
        SVM / SVR solves started from duals kept at another C (:meth:`start`),
        or from a start kept for other rows (:meth:`row_start`).
    """

    def __init__(self, max_bytes=256 * 2**20, max_block_rows=0):
        self.max_bytes = max_bytes
        self.max_block_rows = max_block_rows
        self.block_hits = self.block_misses = self.start_hits = 0
        self._store = OrderedDict()
        self._starts = {}
        self._row_start = None
        self._lock = threading.Lock()

    def __len__(self):
        return len(self._store)

    def get(self, kernels, j, max_rank):
        """Factor :math:`A` of training kernel ``j`` (:meth:`TaskKernels.factor`).

        Parameters
        ----------
        kernels : TaskKernels
            Fitted.
        j : int
            Kernel.
        max_rank : int or None
            Rank cap.

        Returns
        -------
        A : ndarray of shape (n, r)
            Read-only (it may be shared by the fits of the store's owner).
        """
        key = kernels.cache_key(j)
        key = None if key is None else (key, max_rank)
        with self._lock:
            if key is not None and key in self._store:
                self._store.move_to_end(key)
                return self._store[key]
        return self._keep(key, kernels.factor(j, max_rank))

    def blocks(self, kernels, j, idx, mask):
        """Training blocks of kernel ``j`` over a bucket (:meth:`TaskKernels.blocks`).

        Kept when the store keeps blocks and the fit has at most
        ``max_block_rows`` training rows; keyed by the content of the
        training kernel (:meth:`TaskKernels.cache_key`: other rows, inputs,
        parameters or scales never share an entry) and by the bucket's rows.

        Parameters
        ----------
        kernels : TaskKernels
            Fitted.
        j : int
            Kernel.
        idx, mask : ndarray of shape (T_b, m_b)
            The bucket's padded rows and their validity.

        Returns
        -------
        K : ndarray of shape (T_b, m_b, m_b)
            Read-only when kept (it is shared by the store's fits).
        """
        key = kernels.cache_key(j) if _n_train(kernels) <= self.max_block_rows else None
        if key is not None:
            key = ("blocks", key, hashlib.sha1(np.ascontiguousarray(idx).tobytes()
                                               + np.packbits(mask).tobytes()).digest(),
                   idx.shape)
            with self._lock:
                if key in self._store:
                    self._store.move_to_end(key)
                    self.block_hits += 1
                    return self._store[key]
        self.block_misses += 1
        K = kernels.blocks(j, idx, mask)
        return K if key is None else self._keep(key, K)

    def kernel_keys(self, kernels):
        """Every kernel's :meth:`TaskKernels.cache_key` for :meth:`start_key`
        (``None`` past ``max_block_rows``: the store keeps nothing of the fit)."""
        if _n_train(kernels) > self.max_block_rows:
            return None
        return kernels.cache_keys()

    def start_key(self, kernels, blocks, arrays, params, keys=None):
        """Key of a problem along a C grid (``None``: not kept): of its SVM / SVR
        duals (``params``: the solver's), or of what :meth:`kept` derives.

        Only a store that keeps blocks keeps either: the problem is that of the
        training kernels (:meth:`TaskKernels.cache_key`), the buckets, the
        per-row ``arrays`` (targets, sample weights) and the solver ``params``
        (all but C), so other rows, labels or parameters never share a start.
        ``keys``: the kernels' :meth:`TaskKernels.cache_key`, when the caller
        has them (each hashes the training inputs: a fit asks for several keys).
        """
        if _n_train(kernels) > self.max_block_rows:
            return None
        if keys is None:
            keys = kernels.cache_keys()
        if any(key is None for key in keys):
            return None
        h = hashlib.sha1(b"".join(keys) + pickle.dumps(params))
        for _, idx, mask in blocks.buckets:
            # (the shape too: tasks of 40 and 40 rows and one of 80 are the same bytes)
            h.update(np.ascontiguousarray(idx).tobytes() + np.packbits(mask).tobytes()
                     + repr(idx.shape).encode())
        for a in arrays:
            h.update(b"-" if a is None else np.ascontiguousarray(a, dtype=float).tobytes())
        return h.digest()

    def kept(self, key, make, n_blocks=0):
        """``make()`` (arrays, or a list of them) kept under ``key`` for the store's
        later fits (``None``: not kept, e.g. :meth:`start_key`'s past the row bound).

        What a fit derives from its rows alone, not from C: the packed training
        blocks of a fold (``n_blocks``: the kernel blocks they hold, counted
        in :attr:`block_hits` / :attr:`block_misses`) and its repeated rows,
        found once for its C grid.  Unlike :meth:`blocks`' they stay
        writeable, so that the compiled solver, which only reads them, serves
        them and a fresh fit's alike (one compilation); nobody writes into them.
        """
        if key is not None:
            with self._lock:
                if key in self._store:
                    self._store.move_to_end(key)
                    self.block_hits += n_blocks
                    return self._store[key]
        self.block_misses += n_blocks
        value = make()
        if key is not None and _nbytes(value) <= self.max_bytes:
            with self._lock:
                self._store[key] = value
                self._bound()
        return value

    def start(self, key, C):
        """The duals kept under ``key`` at the kept C nearest to ``C`` (in ratio),
        scaled to the loss weight ``C`` (or ``None``).

        Scaled by the ratio of the C: feasible (the box :math:`[0, C_i]` and
        the bias constraint scale alike), and exactly the solution when every
        dual is at a bound (overlapping classes).
        """
        near = self._nearest(key, C)
        if near is None:
            return None
        self.start_hits += 1
        return [b * (C / near) for b in self._starts[key][near][0]]

    def start_weights(self, key, C):
        """The kernel weights kept with :meth:`start`'s duals (or ``None``)."""
        near = self._nearest(key, C)
        return None if near is None else self._starts[key][near][1]

    def _nearest(self, key, C):
        if key is None or key not in self._starts:
            return None
        return min(self._starts[key], key=lambda c: abs(np.log(c / C)))

    def keep_start(self, key, C, beta, gamma=None):
        """Keep the duals ``beta`` (per bucket) of loss weight ``C`` under ``key``,
        with the kernel weights ``gamma`` of the same solution."""
        if key is not None:
            self._starts.setdefault(key, {})[float(C)] = (
                [np.array(b) for b in beta], None if gamma is None else np.array(gamma))

    def keep_row_start(self, C, beta, gamma):
        """Keep one start for a fit on other rows: duals ``beta`` per training row
        (in the fit's row order) at loss weight ``C``, and kernel weights ``gamma``
        (``None``: uniform; :class:`~kernlearn.MultitaskMKLClassifierCV`'s
        refit starts from its folds' fits at the chosen C)."""
        self._row_start = (float(C), np.asarray(beta, dtype=float),
                           None if gamma is None else np.array(gamma))

    def row_start(self, blocks, C):
        """``(duals per bucket scaled to C, kernel weights)`` of the kept row start
        when it has one dual per row of ``blocks``, else ``(None, None)``."""
        kept = self._row_start
        if kept is None or len(kept[1]) != blocks.n_samples:
            return None, None
        self.start_hits += 1
        return [b * (C / kept[0]) for b in blocks.gather(kept[1])], kept[2]

    def _keep(self, key, A):
        """``A``, read-only, kept under ``key`` (unless ``None`` or too large)."""
        A.flags.writeable = False  # shared between the owner's fits
        if key is not None and A.nbytes <= self.max_bytes:
            with self._lock:
                self._store[key] = A
                self._bound()
        return A

    def _bound(self):
        """Drop the least recently used entries past ``max_bytes`` (lock held)."""
        while sum(_nbytes(v) for v in self._store.values()) > self.max_bytes:
            self._store.popitem(last=False)

    def clear(self):
        """Drop every stored factor."""
        with self._lock:
            self._store.clear()
            self._starts.clear()
            self._row_start = None


def _n_train(kernels):
    """Training rows of fitted ``kernels``."""
    return len(kernels.grams_[0]) if kernels.precomputed else kernels.X_.shape[0]


def _nbytes(value):
    """Bytes of an array or of (nested) lists and tuples of them (``None`` and
    flags: none)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, (list, tuple)):
        return sum(_nbytes(a) for a in value)
    return 0


def gather_rows(blocks, A):
    """Padded row blocks of a per-row matrix, one per bucket.

    Parameters
    ----------
    blocks : TaskBuckets
    A : ndarray of shape (n, r)
        One row per training row (e.g. a kernel factor).

    Returns
    -------
    A_b : list of ndarray of shape (T_b, m_b, r)
        Zero rows on padding.
    """
    return [A[idx] * mask[:, :, None] for _, idx, mask in blocks.buckets]


def task_products(blocks, A_b, beta):
    r"""Products :math:`A[I_t]^\top\beta_t` of every task.

    Parameters
    ----------
    blocks : TaskBuckets
    A_b : list of ndarray of shape (T_b, m_b, r)
        Padded row blocks of :math:`A` (:func:`gather_rows`).
    beta : list of ndarray of shape (T_b, m_b)
        Padded dual coefficients per bucket.

    Returns
    -------
    out : ndarray of shape (r, T)
    """
    out = np.zeros((A_b[0].shape[2], blocks.n_tasks))
    for (tasks, _, _), Ab, be in zip(blocks.buckets, A_b, beta):
        out[:, tasks] = np.einsum("tir,ti->rt", Ab, be)
    return out

