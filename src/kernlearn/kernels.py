"""Kernel functions, normalisation, and the kernel lists used by MKL.

Every kernel is a function ``k(X, Y, **params) -> ndarray (n_X, n_Y)`` that
accepts dense arrays or scipy sparse matrices, registered by name in
``KERNELS``.  :func:`pairwise_kernel` is the single entry point the
estimators use.

:class:`KernelList` holds F kernels on one training set (each possibly on its
own column subset, a *view*), normalised to unit diagonal and with the RBF
bandwidth scaled as in the OBSCURE paper.  It either caches the whole
``F x n x n`` Gram tensor or computes rows on the fly by blocks so that memory
stays below ``cache_size``.  :class:`PrecomputedKernelList` gives the same
interface over user-supplied Gram matrices.
"""

import inspect
import numbers

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg
from sklearn.metrics.pairwise import euclidean_distances, safe_sparse_dot
from threadpoolctl import threadpool_limits

__all__ = [
    "KERNELS",
    "KernelList",
    "PrecomputedKernelList",
    "PrecomputedKernels",
    "additive_chi2_kernel",
    "check_psd_gram",
    "distance_to_kernel",
    "hik_kernel",
    "kernel_diag",
    "constant_kernel",
    "linear_kernel",
    "mean_pairwise_sq_distance",
    "normalize_kernel",
    "pairwise_kernel",
    "poly_kernel",
    "parse_specs",
    "rbf_kernel",
    "resolve_params",
    "scale_gamma",
    "convert_width",
    "take_columns",
]


def linear_kernel(X, Y):
    """Linear kernel ``X Y'``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_X, n_features)
    Y : array-like or sparse matrix of shape (n_Y, n_features)

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
    """
    K = safe_sparse_dot(X, Y.T, dense_output=True)
    return np.asarray(K, dtype=float)


def rbf_kernel(X, Y, gamma=1.0):
    r"""Gaussian kernel :math:`\exp(-\gamma\|x - y\|^2)`.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_X, n_features)
    Y : array-like or sparse matrix of shape (n_Y, n_features)
    gamma : float, default=1.0
        Inverse squared width (``KernelList`` also accepts ``"scale"`` and
        ``"mean"``, resolved on the training data).

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
    """
    if gamma is None or isinstance(gamma, str) or gamma <= 0:
        raise ValueError(f"rbf gamma must be positive, got {gamma!r}.")
    D = euclidean_distances(X, Y, squared=True)
    np.maximum(D, 0, out=D)
    return np.exp(-gamma * D)


def poly_kernel(X, Y, degree=2, gamma=1.0, coef0=1.0):
    r"""Polynomial kernel :math:`(\gamma x'y + c_0)^d`.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_X, n_features)
    Y : array-like or sparse matrix of shape (n_Y, n_features)
    degree : int, default=2
    gamma : float, default=1.0
    coef0 : float, default=1.0

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
    """
    return (gamma * linear_kernel(X, Y) + coef0) ** degree


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)


def hik_kernel(X, Y, beta=1.0, block=256):
    r"""Generalised histogram intersection :math:`\sum_k \min(|x_k|^\beta, |y_k|^\beta)`.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_X, n_features)
    Y : array-like or sparse matrix of shape (n_Y, n_features)
    beta : float, default=1.0
    block : int, default=256
        Rows of ``X`` processed at once (memory ``block x n_Y x n_features``).

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
    """
    A, B = np.abs(_dense(X)) ** beta, np.abs(_dense(Y)) ** beta
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
        Rows of ``X`` processed at once.

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
    """
    A, B = _dense(X), _dense(Y)
    if (A < 0).any() or (B < 0).any():
        raise ValueError("additive_chi2 kernel needs non-negative features.")
    K = np.empty((A.shape[0], B.shape[0]))
    for s in range(0, A.shape[0], block):
        num = 2 * A[s : s + block, None, :] * B[None]
        den = A[s : s + block, None, :] + B[None]
        K[s : s + block] = np.divide(
            num, den, out=np.zeros_like(num), where=den > 0
        ).sum(-1)
    return K


def constant_kernel(X, Y):
    """Constant kernel ``k(x, y) = 1``: a kernel whose feature is the bias.

    Adding it to a kernel list gives a kernel machine an intercept through the
    kernel (paper 001, footnote 2), its weight learned with the others.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_X, n_features)
    Y : array-like or sparse matrix of shape (n_Y, n_features)

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
    """
    return np.ones((X.shape[0], Y.shape[0]))


KERNELS = {
    "constant": constant_kernel,
    "linear": linear_kernel,
    "rbf": rbf_kernel,
    "poly": poly_kernel,
    "hik": hik_kernel,
    "additive_chi2": additive_chi2_kernel,
}


def pairwise_kernel(X, Y=None, kernel="rbf", **params):
    """Evaluate a kernel given by name or callable.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_X, n_features)
    Y : array-like or sparse matrix of shape (n_Y, n_features), optional
        Defaults to ``X``.
    kernel : str or callable
        A name in ``KERNELS`` or ``f(X, Y, **params)``.
    **params : dict
        Kernel parameters.

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
    """
    Y = X if Y is None else Y
    if isinstance(kernel, str):
        if kernel not in KERNELS:
            raise ValueError(
                f"Unknown kernel {kernel!r}; choose one of {sorted(KERNELS)}."
            )
        kernel = KERNELS[kernel]
    if not callable(kernel):
        raise TypeError(f"kernel must be a name or a callable, got {kernel!r}.")
    return kernel(X, Y, **params)


def _row_sq_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    X = np.asarray(X, dtype=float)
    return np.einsum("ij,ij->i", X, X)


def kernel_diag(X, kernel="rbf", block=256, **params):
    r"""Diagonal :math:`k(x_i, x_i)` of a kernel without forming the Gram matrix.

    Closed forms for the named kernels; a callable is evaluated on diagonal
    blocks of ``block`` rows.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, n_features)
    kernel : str or callable, default="rbf"
    block : int, default=256
    **params : dict
        Kernel parameters.

    Returns
    -------
    diag : ndarray of shape (n,)
    """
    n = X.shape[0]
    if kernel in ("rbf", "constant"):
        return np.ones(n)
    if kernel == "linear":
        return _row_sq_norms(X)
    if kernel == "poly":
        gamma, coef0 = params.get("gamma", 1.0), params.get("coef0", 1.0)
        return (gamma * _row_sq_norms(X) + coef0) ** params.get("degree", 2)
    if kernel == "hik":
        return (np.abs(_dense(X)) ** params.get("beta", 1.0)).sum(axis=1)
    if kernel == "additive_chi2":
        return _dense(X).sum(axis=1)
    out = np.empty(n)
    for s in range(0, n, block):
        Xb = X[s : s + block]
        out[s : s + block] = np.diag(pairwise_kernel(Xb, Xb, kernel, **params))
    return out


def normalize_kernel(K, diag_X, diag_Y=None):
    r"""Normalise a kernel block to unit diagonal.

    .. math:: \tilde k(x, y) = k(x, y) / \sqrt{k(x, x)\, k(y, y)},

    so that :math:`\|\phi(x)\|_2 = 1`, the setting of the bounds on
    :math:`L` in Theorem 3 of the OBSCURE paper.  Points with a zero
    diagonal (zero feature vector) keep a zero row/column.

    Parameters
    ----------
    K : ndarray of shape (n_X, n_Y)
        Kernel block.
    diag_X : ndarray of shape (n_X,)
        ``k(x_i, x_i)`` of the rows.
    diag_Y : ndarray of shape (n_Y,), optional
        ``k(y_j, y_j)`` of the columns; defaults to ``diag_X``.

    Returns
    -------
    K_normalised : ndarray of shape (n_X, n_Y)

    References
    ----------
    Orabona, Jie, Caputo (2012), JMLR 13, sec. 4 (normalised kernels).
    """
    diag_Y = diag_X if diag_Y is None else diag_Y
    sx, sy = _inv_sqrt(diag_X), _inv_sqrt(diag_Y)
    return K * sx[:, None] * sy[None, :]


def _inv_sqrt(d):
    d = np.asarray(d, dtype=float)
    out = np.zeros_like(d)
    pos = d > 0
    out[pos] = 1.0 / np.sqrt(d[pos])
    return out


def scale_gamma(X, sample_weight=None):
    """scikit-learn's ``gamma="scale"``: :math:`1 / (D\\,\\mathrm{Var}(X))`.

    The variance is over all entries of ``X`` (dense or sparse); a constant
    ``X`` gives ``1 / D``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Training inputs.
    sample_weight : ndarray of shape (n_samples,), optional
        Row weights (the variance of the data with rows repeated).

    Returns
    -------
    gamma : float
    """
    if sample_weight is not None:
        w = np.asarray(sample_weight, dtype=float) / np.sum(sample_weight)
        sq = X.multiply(X) if sp.issparse(X) else np.square(np.asarray(X, dtype=float))
        mean = float(w @ np.asarray(X.mean(axis=1)).ravel())
        var = float(w @ np.asarray(sq.mean(axis=1)).ravel()) - mean**2
    elif sp.issparse(X):
        mean = float(np.asarray(X.mean()))
        var = float(np.asarray(X.multiply(X).mean())) - mean**2
    else:
        var = float(np.var(np.asarray(X, dtype=float)))
    var = var if var > 0 else 1.0
    return 1.0 / (X.shape[1] * var)


def convert_width(sigma=None, gamma=None):
    r"""The one conversion between a Gaussian width ``sigma`` and ``gamma``.

    :math:`\exp(-\|x-x'\|^2/(2\sigma^2)) = \exp(-\gamma\|x-x'\|^2)` with
    :math:`\gamma = 1/(2\sigma^2)`.  The library's convention is ``gamma``;
    ``sigma`` is accepted only where a paper's notation uses it
    (:class:`~kernlearn.families.RandomFourierFeatures` ``bandwidth``).

    Parameters
    ----------
    sigma : float or ndarray, optional
        Width(s) :math:`\sigma > 0`; give exactly one of ``sigma`` and ``gamma``.
    gamma : float or ndarray, optional
        Inverse squared width(s) :math:`\gamma > 0`.

    Returns
    -------
    value : float or ndarray
        ``gamma`` of the given ``sigma``, or ``sigma`` of the given ``gamma``.
    """
    if (sigma is None) == (gamma is None):
        raise ValueError("give exactly one of sigma and gamma.")
    if gamma is None:
        return 1.0 / (2.0 * np.square(sigma))
    return 1.0 / np.sqrt(2.0 * np.asarray(gamma, dtype=float))


def mean_pairwise_sq_distance(X):
    r"""Mean squared Euclidean distance over all pairs ``i != j``, in O(n d).

    .. math:: \frac{1}{n(n-1)}\sum_{i\neq j}\|x_i - x_j\|^2
              = \frac{2n}{n-1}\Big(\frac1n\sum_i\|x_i\|^2 - \|\bar x\|^2\Big).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, n_features)

    Returns
    -------
    mean : float

    References
    ----------
    Orabona, Jie, Caputo (2012), JMLR 13, sec. 5.1.2: the RBF bandwidth is
    the average squared pairwise distance.
    """
    n = X.shape[0]
    if n < 2:
        return 0.0
    mu = np.asarray(X.mean(axis=0)).ravel()
    val = 2.0 * n / (n - 1) * (_row_sq_norms(X).mean() - float(mu @ mu))
    return max(val, 0.0)


def distance_to_kernel(D, gamma=None, return_gamma=False):
    r"""Turn a distance matrix into the kernel :math:`\exp(-d/\gamma)`.

    Parameters
    ----------
    D : array-like of shape (n_X, n_Y)
        Non-negative distances.
    gamma : float, optional
        Scale.  By default the mean off-diagonal distance of the square
        *training* matrix ``D`` (the OBSCURE paper's choice for the Oxford
        flowers distances).  A rectangular (test-vs-train) ``D`` needs the
        training value: get it with ``return_gamma=True`` on the training
        distances, so that test kernels use the training scale.
    return_gamma : bool, default=False
        Also return the scale used.

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
        The kernel.
    gamma : float
        The scale (only with ``return_gamma=True``).

    References
    ----------
    Orabona, Jie, Caputo (2012), JMLR 13, sec. 5.1.1.
    """
    D = np.asarray(D, dtype=float)
    if D.ndim != 2:
        raise ValueError(f"D must be a 2-D distance matrix, got shape {D.shape}.")
    if not np.isfinite(D).all() or (D < 0).any():
        raise ValueError("D must contain finite non-negative distances.")
    if gamma is None:
        if D.shape[0] != D.shape[1]:
            raise ValueError(
                f"D has shape {D.shape}: a test-vs-train distance matrix needs the "
                "training scale; pass gamma= (distance_to_kernel(D_train, "
                "return_gamma=True) returns it)."
            )
        mask = ~np.eye(*D.shape, dtype=bool)
        gamma = float(np.mean(D[mask])) if D.shape[0] > 1 else 1.0
        gamma = gamma if gamma > 0 else 1.0
    if gamma <= 0:
        raise ValueError(f"gamma must be positive, got {gamma!r}.")
    K = np.exp(-D / gamma)
    return (K, float(gamma)) if return_gamma else K


def _parse_spec(spec, index):
    """Split a kernel spec into ``(kernel, params, columns)``.

    Accepted forms: ``"rbf"``, ``callable``, ``(kernel,)``, ``(kernel, params)``,
    ``(kernel, params, columns)``.
    """
    if isinstance(spec, (str,)) or callable(spec):
        kernel, params, cols = spec, {}, None
    elif isinstance(spec, (tuple, list)) and 1 <= len(spec) <= 3:
        kernel = spec[0]
        params = spec[1] if len(spec) > 1 and spec[1] is not None else {}
        cols = spec[2] if len(spec) > 2 else None
    else:
        raise TypeError(
            f"kernels[{index}] must be a name, a callable or a tuple "
            f"(kernel, params[, columns]); got {spec!r}."
        )
    if isinstance(kernel, str):
        if kernel not in KERNELS:
            raise ValueError(
                f"kernels[{index}]: unknown kernel {kernel!r}; choose one of "
                f"{sorted(KERNELS)} or pass a callable."
            )
    elif not callable(kernel):
        raise TypeError(
            f"kernels[{index}]: kernel must be a name or callable, got {kernel!r}."
        )
    if not isinstance(params, dict):
        raise TypeError(f"kernels[{index}]: params must be a dict, got {params!r}.")
    return kernel, dict(params), cols


def _check_kernel_params(kernel, params, index):
    """Reject unknown parameter names and non-positive widths of named kernels."""
    if not isinstance(kernel, str):
        return
    allowed = set(inspect.signature(KERNELS[kernel]).parameters) - {"X", "Y"}
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(
            f"kernels[{index}]: unknown parameter(s) {unknown} for kernel {kernel!r}; "
            f"it takes {sorted(allowed)}."
        )
    g = params.get("gamma")
    if isinstance(g, str) and g in _DATA_GAMMAS:
        return
    if g is not None and (isinstance(g, str) or not np.isfinite(g) or g <= 0):
        raise ValueError(
            f"kernels[{index}]: gamma must be a positive number, 'scale'"
            + (" or 'mean'" if kernel == "rbf" else "") + f", got {g!r}."
        )


# gamma values computed from the training view of a kernel
_DATA_GAMMAS = ("scale", "mean")


def resolve_params(kernel, params, Xj, index=0):
    r"""Kernel parameters with ``gamma="scale"``/``"mean"`` replaced by values on ``Xj``.

    Parameters
    ----------
    kernel : str or callable
        The kernel.
    params : dict
        Its parameters as given.
    Xj : ndarray or sparse matrix of shape (n, n_view_features)
        The training view the kernel sees.
    index : int, default=0
        Position of the kernel in its list (for error messages).

    Returns
    -------
    params : dict
        A copy; ``"scale"`` becomes scikit-learn's :math:`1/(D\,\mathrm{Var}(X_j))`
        (:func:`scale_gamma`) and ``"mean"`` (``rbf`` only) the inverse mean
        squared pairwise distance :math:`1/\overline{d^2}` (OBSCURE, sec. 5.1.2).
    """
    params = dict(params)
    _check_kernel_params(kernel, params, index)
    if params.get("gamma") == "mean":
        if kernel != "rbf":
            raise ValueError(
                f"kernels[{index}]: gamma='mean' is only defined for 'rbf'."
            )
        m = mean_pairwise_sq_distance(Xj)
        params["gamma"] = 1.0 / m if m > 0 else 1.0
    elif params.get("gamma") == "scale":
        params["gamma"] = scale_gamma(Xj)
    return params


def parse_specs(kernels):
    """Validate a list of kernel specs into ``[(kernel, params, columns), ...]``.

    Parameters
    ----------
    kernels : list
        Names, callables or tuples ``(kernel, params[, columns])``.

    Returns
    -------
    specs : list of tuple
    """
    if isinstance(kernels, str) or callable(kernels) or not hasattr(kernels, "__len__"):
        raise TypeError(f"kernels must be a list of kernel specs, got {kernels!r}.")
    if len(kernels) == 0:
        raise ValueError("kernels must contain at least one kernel.")
    return [_parse_spec(s, i) for i, s in enumerate(kernels)]


def take_columns(X, cols, index=0):
    """The view ``X[:, cols]`` of a kernel spec (``cols=None``: all columns).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, n_features)
    cols : slice, int array, boolean mask or None
    index : int, default=0
        Position of the kernel in its list (for error messages).

    Returns
    -------
    Xj : ndarray or sparse matrix
    """
    return _take_columns(X, cols, index)


def _take_columns(X, cols, index):
    if cols is None:
        return X
    n_features = X.shape[1]
    if isinstance(cols, slice):
        return X[:, cols]
    cols = np.asarray(cols)
    if cols.dtype == bool:
        if cols.shape != (n_features,):
            raise ValueError(
                f"kernels[{index}]: boolean column mask has length {cols.shape[0]}, "
                f"X has {n_features} features."
            )
        cols = np.flatnonzero(cols)
    if cols.ndim != 1 or cols.size == 0 or not np.issubdtype(cols.dtype, np.integer):
        raise ValueError(
            f"kernels[{index}]: columns must be a non-empty 1-D index array."
        )
    if cols.min() < -n_features or cols.max() >= n_features:
        raise ValueError(
            f"kernels[{index}]: column index out of range for {n_features} features."
        )
    return X[:, cols]


class _BaseKernelList:
    """Shared block logic of :class:`KernelList` and :class:`PrecomputedKernelList`."""

    @property
    def n_kernels(self):
        """Number of kernels F."""
        return len(self.diag_)

    @property
    def n_samples(self):
        """Number of training samples n."""
        return self.diag_.shape[1]

    def block_size(self):
        """Rows per block such that ``F x block x n`` doubles fit in ``cache_size``."""
        per_row = 8.0 * self.n_kernels * max(self.n_samples, 1)
        return int(max(1, min(self.n_samples, self.cache_size * 2**20 // per_row)))

    def iter_blocks(self, order):
        """Yield ``(ids, K_rows, local)`` over ``order`` in blocks.

        ``K_rows[:, local[k], :]`` is the Gram row of sample ``ids[k]`` against
        all training samples (shape ``(F, n)``).  In cached mode ``K_rows`` is
        the whole Gram tensor and ``local = ids``.

        Parameters
        ----------
        order : ndarray of int
            Training sample indices in visiting order.

        Yields
        ------
        ids : ndarray of int
        K_rows : ndarray of shape (F, n_rows, n)
        local : ndarray of int
        """
        order = np.asarray(order, dtype=np.int64)
        if self.gram_ is not None:
            yield order, self.gram_, order
            return
        B = self.block_size()
        for s in range(0, len(order), B):
            ids = order[s : s + B]
            yield ids, self.rows(ids), np.arange(len(ids), dtype=np.int64)

    def gram(self):
        """The full ``(F, n, n)`` Gram tensor (cached, or computed now).

        Returns
        -------
        K : ndarray of shape (F, n, n)
        """
        if self.gram_ is not None:
            return self.gram_
        return self.rows(np.arange(self.n_samples))


class KernelList(_BaseKernelList):
    r"""F kernels on one training set, cached or computed on the fly by blocks.

    Each kernel spec is a name in ``KERNELS``, a callable ``k(X, Y, **params)``
    or a tuple ``(kernel, params)`` / ``(kernel, params, columns)``, where
    ``columns`` (slice, integer indices or boolean mask) selects the view of
    ``X`` the kernel sees.  ``params={"gamma": "scale"}`` sets scikit-learn's
    :math:`\gamma = 1/(D\,\mathrm{Var}(X))` on that view;
    ``params={"gamma": "mean"}`` for ``rbf`` sets
    :math:`\gamma = 1/\overline{d^2}`, the inverse mean squared pairwise distance
    of the training view (OBSCURE paper, sec. 5.1.2).

    Parameters
    ----------
    kernels : list
        Kernel specs (see above).
    normalize : bool, default=True
        Normalise every kernel to unit diagonal, :math:`k/\sqrt{k(x,x)k(y,y)}`.
    cache_size : float, default=1024
        Memory budget in MiB.  If the ``F x n x n`` Gram tensor fits it is
        cached at :meth:`fit`; otherwise rows are computed on the fly in blocks
        of at most ``cache_size`` MiB.
    precompute : bool, default=True
        Cache the Gram tensor at :meth:`fit` when it fits; ``False`` always
        computes rows on demand (OBSCURE's compiled loop keeps its own LRU
        cache of the rows it needs, the support vectors' only).

    Attributes
    ----------
    params_ : list of dict
        Resolved kernel parameters (``gamma="scale"``/``"mean"`` replaced by values).
    diag_ : ndarray of shape (F, n)
        Unnormalised training diagonals.
    kdiag_ : ndarray of shape (F, n)
        Diagonals of the kernels as used (1, or 0 for a zero point, when
        normalised).
    gram_ : ndarray of shape (F, n, n) or None
        Cached (normalised) Gram tensor, or ``None`` in on-the-fly mode.

    References
    ----------
    Orabona, Jie, Caputo (2012), "Multi kernel learning with online-batch
    optimization", JMLR 13, sec. 3.1 (kernel caching / on the fly) and 5.1.
    """

    def __init__(self, kernels, normalize=True, cache_size=1024, precompute=True):
        self.specs = parse_specs(kernels)
        self.normalize = normalize
        if not isinstance(cache_size, numbers.Real) or cache_size <= 0:
            raise ValueError(
                f"cache_size must be a positive number of MiB, got {cache_size!r}."
            )
        self.cache_size = cache_size
        self.precompute = precompute

    def _view(self, X, j):
        return _take_columns(X, self.specs[j][2], j)

    def fit(self, X):
        """Resolve parameters, compute diagonals and (if it fits) cache the Grams.

        Parameters
        ----------
        X : ndarray or sparse matrix of shape (n, n_features)
            Training data.

        Returns
        -------
        self : KernelList
        """
        self.X_ = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X, dtype=float)
        self.params_ = []
        diags = []
        for j, (kernel, params, _) in enumerate(self.specs):
            Xj = self._view(self.X_, j)
            params = resolve_params(kernel, params, Xj, j)
            self.params_.append(params)
            d = np.asarray(kernel_diag(Xj, kernel, **params), dtype=float)
            if not np.isfinite(d).all():
                raise ValueError(f"kernels[{j}] produced non-finite values on X.")
            diags.append(d)
        self.diag_ = np.vstack(diags)
        self._isd_ = _inv_sqrt(self.diag_)
        self._unit_diag_ = np.all(self.diag_ == 1.0, axis=1)
        self._sqn_ = [_row_sq_norms(self._view(self.X_, j)) for j in range(len(diags))]
        self.kdiag_ = (self.diag_ > 0).astype(float) if self.normalize else self.diag_
        n = self.X_.shape[0]
        self.gram_ = None
        if self.precompute and 8.0 * self.n_kernels * n * n <= self.cache_size * 2**20:
            self.gram_ = self.rows(np.arange(n))
        return self

    def _block(self, Xa, Xb, diag_a, diag_b, j, sq_a=None, sq_b=None, dots=None):
        kernel, _, cols = self.specs[j]
        params = self.params_[j]
        if kernel in ("linear", "rbf", "poly") and (
            kernel != "rbf" or sq_b is not None
        ):
            # one product X_a X_b' for the dot-product kernels, without the
            # per-call validation of the generic path (single rows on the fly);
            # kernels on the same view share it through ``dots``
            key = id(cols)
            if dots is not None and key in dots:
                K = dots[key].copy()
            else:
                K = safe_sparse_dot(Xa, Xb.T, dense_output=True)
                K = np.array(K, dtype=float, copy=True)
                if dots is not None:
                    dots[key] = K.copy()
            if kernel == "rbf":
                K *= -2.0
                K += sq_a[:, None]
                K += sq_b[None, :]
                np.maximum(K, 0.0, out=K)
                K *= -params["gamma"]
                np.exp(K, out=K)
            elif kernel == "poly":
                K *= params.get("gamma", 1.0)
                K += params.get("coef0", 1.0)
                K **= params.get("degree", 2)
        else:
            K = np.asarray(pairwise_kernel(Xa, Xb, kernel, **params), dtype=float)
        if K.shape != (Xa.shape[0], Xb.shape[0]):
            raise ValueError(
                f"kernels[{j}] returned shape {K.shape}, expected "
                f"{(Xa.shape[0], Xb.shape[0])}."
            )
        if not np.isfinite(K).all():
            raise ValueError(f"kernels[{j}] produced NaN or infinite values.")
        if self.normalize and not (self._unit_diag_[j] and np.all(diag_a == 1.0)
                                   and (diag_b is None or np.all(diag_b == 1.0))):
            # (RBF kernels have a unit diagonal already: two passes saved)
            K *= _inv_sqrt(diag_a)[:, None]
            K *= (self._isd_[j] if diag_b is None else _inv_sqrt(diag_b))[None, :]
        return K

    def rows(self, ids):
        """Gram rows of training samples ``ids`` against all training samples.

        Parameters
        ----------
        ids : ndarray of int

        Returns
        -------
        K_rows : ndarray of shape (F, len(ids), n)
        """
        ids = np.asarray(ids, dtype=np.int64)
        out = np.empty((self.n_kernels, len(ids), self.n_samples))
        dots = {}
        for j in range(self.n_kernels):
            Xj = self._view(self.X_, j)
            sq = self._sqn_[j]
            out[j] = self._block(Xj[ids], Xj, self.diag_[j, ids], None, j, sq[ids], sq,
                                 dots)
        return out

    def restrict(self, support):
        """Keep only the training samples ``support`` (e.g. the support vectors).

        Parameters
        ----------
        support : ndarray of int

        Returns
        -------
        self : KernelList
        """
        support = np.asarray(support, dtype=np.int64)
        self.X_ = self.X_[support]
        self.diag_ = self.diag_[:, support]
        self.kdiag_ = self.kdiag_[:, support]
        self._isd_ = self._isd_[:, support]
        self._sqn_ = [sq[support] for sq in self._sqn_]
        self.gram_ = None
        return self

    def cross(self, X, support=None, which=None):
        """Kernels between new points and (a subset of) the training points.

        Parameters
        ----------
        X : ndarray or sparse matrix of shape (n_new, n_features)
        support : ndarray of int, optional
            Training indices (columns) to keep; all by default.
        which : iterable of int, optional
            Kernels to evaluate (the others are left at zero); all by default.

        Returns
        -------
        K : ndarray of shape (F, n_new, n_support)
        """
        X = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X, dtype=float)
        support = np.arange(self.n_samples) if support is None else np.asarray(support)
        out = np.zeros((self.n_kernels, X.shape[0], len(support)))
        which = range(self.n_kernels) if which is None else which
        dots = {}
        for j in which:
            kernel = self.specs[j][0]
            Xj, Tj = self._view(X, j), self._view(self.X_, j)[support]
            d_new = (
                kernel_diag(Xj, kernel, **self.params_[j]) if self.normalize else None
            )
            out[j] = self._block(
                Xj,
                Tj,
                d_new,
                self.diag_[j, support],
                j,
                _row_sq_norms(Xj),
                self._sqn_[j][support],
                dots,
            )
        return out


def check_psd_gram(K, name="X"):
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
    """
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(
            f"With kernel='precomputed', {name} must be the square training Gram "
            f"matrix; got shape {K.shape}."
        )
    n = K.shape[0]
    scale = max(float(np.max(np.abs(K))), 1e-300)
    if not np.allclose(K, K.T, rtol=1e-6, atol=1e-10 * scale):
        raise ValueError(f"The precomputed kernel {name} is not symmetric.")
    with threadpool_limits(limits=1, user_api="blas"):
        lo = _smallest_eigenvalue_bound(K)
    if lo < -1e-8 * scale * n:
        raise ValueError(
            f"The precomputed kernel {name} is not positive semi-definite "
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
        self._grams = np.stack(_check_gram_list(grams, "grams"))

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


def _check_gram_list(grams, name):
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
        K = np.asarray(K, dtype=float)
        if K.ndim != 2:
            raise ValueError(f"{name}[{j}] must be 2-D, got shape {K.shape}.")
        if not np.isfinite(K).all():
            raise ValueError(f"{name}[{j}] contains NaN or infinite values.")
        out.append(K)
    return out


def _max_asymmetry(K, block=256):
    """``max |K - K'|`` computed by cache-friendly square tiles."""
    n = K.shape[0]
    worst = 0.0
    for a in range(0, n, block):
        for b in range(a, n, block):
            d = np.abs(
                K[a : a + block, b : b + block] - K[b : b + block, a : a + block].T
            )
            worst = max(worst, float(d.max()) if d.size else 0.0)
    return worst


class PrecomputedKernelList(_BaseKernelList):
    """The :class:`KernelList` interface over precomputed Gram matrices.

    Parameters
    ----------
    grams : list of array-like of shape (n, n)
        Training Gram matrices, one per kernel; square, symmetric, finite,
        all of the same size.  They are used as given (not normalised).
    cache_size : float, default=1024
        Unused (the matrices are already in memory); kept for a common interface.

    Attributes
    ----------
    gram_ : ndarray of shape (F, n, n)
    diag_ : ndarray of shape (F, n)

    References
    ----------
    Orabona, Jie, Caputo (2012), JMLR 13, sec. 3.1.
    """

    def __init__(self, grams, cache_size=1024):
        self.grams = grams
        self.cache_size = cache_size

    def fit(self, X=None):
        """Validate the Gram matrices.

        Parameters
        ----------
        X : ignored

        Returns
        -------
        self : PrecomputedKernelList
        """
        grams = _check_gram_list(self.grams, "X")
        n = grams[0].shape[0]
        for j, K in enumerate(grams):
            if K.shape[0] != K.shape[1]:
                raise ValueError(
                    f"X[{j}] must be a square training Gram matrix, got shape {K.shape}."
                )
            if K.shape[0] != n:
                raise ValueError(
                    f"Gram matrices have mismatched sizes: X[0] is {n} x {n}, "
                    f"X[{j}] is {K.shape[0]} x {K.shape[1]}."
                )
            tol = 1e-8 * max(1.0, float(np.abs(K).max()))
            if _max_asymmetry(K) > tol:
                raise ValueError(f"X[{j}] is not symmetric; a Gram matrix must be.")
            check_psd_gram(K, f"X[{j}]")
        self.gram_ = np.stack(grams)
        self.diag_ = np.einsum("jii->ji", self.gram_).copy()
        self.kdiag_ = self.diag_
        return self

    def rows(self, ids):
        """Gram rows ``(F, len(ids), n)`` of training samples ``ids``."""
        return self.gram_[:, np.asarray(ids), :]

    def cross(self, grams, support=None):
        """Validate test-vs-train Gram matrices and keep the ``support`` columns.

        Parameters
        ----------
        grams : list of array-like of shape (n_new, n)
        support : ndarray of int, optional

        Returns
        -------
        K : ndarray of shape (F, n_new, n_support)
        """
        grams = _check_gram_list(grams, "X")
        if len(grams) != self.n_kernels:
            raise ValueError(
                f"Expected {self.n_kernels} test Gram matrices (one per training "
                f"kernel), got {len(grams)}."
            )
        n_new = grams[0].shape[0]
        for j, K in enumerate(grams):
            if K.shape != (n_new, self.n_samples):
                raise ValueError(
                    f"X[{j}] has shape {K.shape}; test Gram matrices must all be "
                    f"(n_test, n_train) = ({n_new}, {self.n_samples})."
                )
        K = np.stack(grams)
        return K if support is None else K[:, :, np.asarray(support)]
