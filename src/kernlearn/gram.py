"""Precomputed Gram matrices: validation and the samples-first container.

:func:`check_psd_gram` refuses matrices that are not symmetric positive
semi-definite (in :math:`O(n^2)` beyond 500 rows); :class:`PrecomputedKernels`
holds F precomputed kernels with the sample axis first so that scikit-learn's
splitters index samples.  :mod:`kernlearn.kernels` re-exports both.
"""

import numbers
import sys

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg

from .utils._input_kinds import refuse_unlike_array

__all__ = [
    "PrecomputedKernels",
    "check_gram_list",
    "check_psd_gram",
    "check_training_grams",
    "max_asymmetry",
]


def check_psd_gram(K, name="X", what="The precomputed kernel"):
    """Raise ``ValueError`` unless ``K`` is a square, symmetric PSD Gram matrix.

    Symmetry is checked exactly (:math:`O(n^2)`).  Positive semi-definiteness
    is checked without an :math:`O(n^3)` factorisation: the smallest
    eigenvalue is bounded from above by two certificates, the exact smallest
    eigenvalue of a random 500 x 500 principal submatrix (a principal
    submatrix of a PSD matrix is PSD) and the smallest Ritz value of 16
    Lanczos steps on ``K`` (Ritz values never fall below the smallest
    eigenvalue).  A bound below :math:`-10^{-8} n \\max|K|` proves that ``K`` is
    not PSD.  Matrices of at most 500 rows are checked exactly; larger ones
    for clearly non-PSD spectra only (a negative eigenvalue that neither
    certificate resolves is not detected).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Candidate Gram matrix.
    name : str, default="X"
        Argument name used in the messages.
    what : str, default="The precomputed kernel"
        What ``K`` is, in the messages.
    """
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(
            f"With kernel='precomputed', {name} must be the square training Gram "
            f"matrix; got shape {K.shape}."
        )
    n = K.shape[0]
    scale = max(float(np.max(np.abs(K))), 1e-300)
    if not np.allclose(K, K.T, rtol=1e-6, atol=1e-10 * scale):
        raise ValueError(f"{what} {name} is not symmetric.")
    # the shared controller: threadpool_limits rescans the loaded libraries on
    # every call, 15-20 ms, most of the check's time below 500 rows
    from .solvers._base import single_blas_thread

    with single_blas_thread():
        lo = _smallest_eigenvalue_bound(K)
    if lo < -1e-8 * scale * n:
        raise ValueError(
            f"{what} {name} is not positive semi-definite "
            f"(an eigenvalue <= {lo:.3g})."
        )


def _smallest_eigenvalue_bound(K):
    """Upper bound on the smallest eigenvalue of symmetric ``K`` in O(n^2)."""
    n = K.shape[0]
    # a principal submatrix of a PSD matrix is PSD: exact on m random rows
    m = min(n, _EXACT_PSD_CHECK)
    rows = np.sort(np.random.default_rng(0).choice(n, size=m, replace=False))
    Ks = K[np.ix_(rows, rows)]
    lo = scipy.linalg.eigvalsh((Ks + Ks.T) / 2, subset_by_index=[0, 0])[0]
    if m < n:
        # then a few Lanczos steps on all of K (16 products with K)
        try:
            ritz = scipy.sparse.linalg.eigsh(
                K, k=1, which="SA", ncv=16, tol=1e-2, maxiter=1,
                v0=np.random.default_rng(0).standard_normal(n),
                return_eigenvectors=False,
            )
        except scipy.sparse.linalg.ArpackNoConvergence as exc:
            ritz = exc.eigenvalues
        lo = min([lo, *np.real(ritz)])
    return float(lo)


# Up to this size the PSD check computes the smallest eigenvalue exactly.
_EXACT_PSD_CHECK = 500


class PrecomputedKernels:
    """F precomputed kernel matrices that scikit-learn can split by samples.

    A plain list of Gram matrices (or an ``(F, n, n)`` array) has the kernels
    first, so scikit-learn's splitters (``cross_val_score``,
    ``GridSearchCV``, ``train_test_split``) and meta-estimators
    (``OneVsRestClassifier``) would index kernels instead of samples.  This
    object puts the sample axis first: it behaves as an array of shape
    ``(n_rows, n_cols, F)`` whose ``X[rows]``, ``X[rows, cols]`` and
    ``X[np.ix_(rows, cols)]`` select samples of every kernel at once, which
    is what scikit-learn's ``_safe_split`` does for estimators with the
    ``pairwise`` tag (``kernels="precomputed"``).  Estimators taking
    ``kernels="precomputed"`` accept it wherever they accept a list.

    Parameters
    ----------
    grams : list of array-like of shape (n_rows, n_cols), ndarray of shape (F, n_rows, n_cols) or PrecomputedKernels
        The kernel matrices, kernels first (training: ``n x n``; test:
        ``n_test x n_train``).

    Attributes
    ----------
    shape : tuple of int
        ``(n_rows, n_cols, F)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import cross_val_score
    >>> from kernlearn import PNormMKLClassifier, PrecomputedKernels
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 3))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> K = PrecomputedKernels([X @ X.T, np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))])
    >>> K.shape
    (60, 60, 2)
    >>> K[np.ix_(np.arange(10), np.arange(50))].shape
    (10, 50, 2)
    >>> scores = cross_val_score(PNormMKLClassifier(kernels="precomputed",
    ...                                             random_state=0), K, y, cv=3)
    """

    ndim = 3

    def __init__(self, grams):
        if isinstance(grams, PrecomputedKernels):
            grams = grams.kernels_first()
        self._grams = np.stack(check_gram_list(grams, "grams"))

    def kernels_first(self):
        """The matrices as one array, kernels first.

        Returns
        -------
        grams : ndarray of shape (F, n_rows, n_cols)
        """
        return self._grams

    @property
    def shape(self):
        """``(n_rows, n_cols, F)``: samples first, as scikit-learn expects."""
        F, n, m = self._grams.shape
        return (n, m, F)

    @property
    def dtype(self):
        """Value type of the matrices."""
        return self._grams.dtype

    def __len__(self):
        return self._grams.shape[1]

    def __array__(self, dtype=None, copy=None):
        return np.asarray(np.moveaxis(self._grams, 0, -1), dtype=dtype)

    def __repr__(self):
        n, m, F = self.shape
        return f"PrecomputedKernels({F} kernels of shape {n} x {m})"

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        # X[key, ...] (scikit-learn's row indexing) means every column
        key = tuple(slice(None) if k is Ellipsis else k for k in key)
        if len(key) == 3 and isinstance(key[2], slice) and key[2] == slice(None):
            key = key[:2]
        if len(key) > 2:
            raise IndexError(
                "PrecomputedKernels is indexed by samples (rows, columns); it "
                f"takes at most 2 indices, got {len(key)}."
            )
        rows, cols = key if len(key) == 2 else (key[0], slice(None))
        if isinstance(rows, list):
            rows = np.asarray(rows)
        if isinstance(cols, list):
            cols = np.asarray(cols)
        if isinstance(rows, numbers.Integral) or isinstance(cols, numbers.Integral):
            raise IndexError(
                "PrecomputedKernels needs index arrays or slices (a single row "
                "or column would drop the sample axis)."
            )
        out = self._grams[:, rows, cols]
        if out.ndim != 3:
            raise IndexError(
                "rows and columns of PrecomputedKernels must be selected as a grid "
                "(np.ix_(rows, cols), or rows then [:, cols])."
            )
        # already validated: wrap the sub-array without copying it again
        sub = object.__new__(PrecomputedKernels)
        sub._grams = out
        return sub


def _is_pandas(obj):
    """Whether ``obj`` is a pandas DataFrame or Series (pandas imported only if
    it already is: nothing else can be one)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, (pd.DataFrame, pd.Series))


def check_gram_list(grams, name):
    """Validate F Gram matrices into a list of finite 2-D float arrays.

    Parameters
    ----------
    grams : list of array-like, ndarray of shape (F, n_rows, n_cols) or PrecomputedKernels
        The matrices, kernels first (sparse matrices are densified).
    name : str
        Argument name used in the messages.

    Returns
    -------
    grams : list of ndarray of shape (n_rows, n_cols)
    """
    if isinstance(grams, PrecomputedKernels):
        grams = grams.kernels_first()
    if isinstance(grams, np.ndarray) and grams.ndim == 3:
        grams = list(grams)
    if not isinstance(grams, (list, tuple)) or len(grams) == 0:
        raise TypeError(
            f"{name} must be a non-empty list of Gram matrices (one per kernel), "
            f"got {type(grams).__name__}."
        )
    out = []
    for j, K in enumerate(grams):
        if sp.issparse(K):
            K = K.toarray()
        # (a masked matrix's masked cells were read as the values under the
        # mask; complex ones lost their imaginary parts)
        refuse_unlike_array(K, f"{name}[{j}]", "a precomputed kernel")
        # (pandas' pd.NA is a missing value: NumPy's conversion of a nullable or
        # pyarrow frame holding one failed with "float() argument ... 'NAType'";
        # pandas' own to_numpy only: an xarray DataArray's takes no dtype)
        K = (K.to_numpy(dtype=float, na_value=np.nan) if _is_pandas(K)
             else np.asarray(K, dtype=float))
        if K.ndim != 2:
            raise ValueError(f"{name}[{j}] must be 2-D, got shape {K.shape}.")
        if not np.isfinite(K).all():
            raise ValueError(f"{name}[{j}] contains NaN or infinite values.")
        out.append(K)
    return out


def check_training_grams(grams, name="X"):
    """Validate F training Gram matrices: square, of one size, symmetric, PSD.

    Every estimator taking precomputed kernels checks its training matrices
    here, so that a matrix one refuses is refused by all (the multitask
    estimators checked only the diagonal and fitted an indefinite kernel
    without a word).

    Parameters
    ----------
    grams : list of array-like, ndarray of shape (F, n, n) or PrecomputedKernels
        The training matrices, kernels first.
    name : str, default="X"
        Argument name used in the messages.

    Returns
    -------
    grams : list of ndarray of shape (n, n)
    """
    grams = check_gram_list(grams, name)
    n = grams[0].shape[0]
    for j, K in enumerate(grams):
        if K.shape[0] != K.shape[1]:
            raise ValueError(
                f"{name}[{j}] must be a square training Gram matrix, got shape {K.shape}."
            )
        if K.shape[0] != n:
            raise ValueError(
                f"Gram matrices have mismatched sizes: {name}[0] is {n} x {n}, "
                f"{name}[{j}] is {K.shape[0]} x {K.shape[1]}."
            )
        tol = 1e-8 * max(1.0, float(np.abs(K).max()))
        if max_asymmetry(K) > tol:
            raise ValueError(f"{name}[{j}] is not symmetric; a Gram matrix must be.")
        check_psd_gram(K, f"{name}[{j}]")
    return grams


# the name other modules imported before the split
_check_gram_list = check_gram_list


def max_asymmetry(K, block=256):
    """``max |K - K'|`` computed by cache-friendly square tiles.

    Parameters
    ----------
    K : ndarray of shape (n, n)
    block : int, default=256
        Tile size.

    Returns
    -------
    asymmetry : float
    """
    n = K.shape[0]
    worst = 0.0
    for a in range(0, n, block):
        for b in range(a, n, block):
            d = np.abs(
                K[a : a + block, b : b + block] - K[b : b + block, a : a + block].T
            )
            worst = max(worst, float(d.max()) if d.size else 0.0)
    return worst
