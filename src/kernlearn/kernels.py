"""Kernel functions, normalisation, and the kernel lists used by MKL.

Every kernel is a function ``k(X, Y, **params) -> ndarray (n_X, n_Y)`` that
accepts dense arrays or scipy sparse matrices, registered by name in
``KERNELS``.  :func:`pairwise_kernel` is the single entry point the
estimators use.

:class:`BaseKernelList` is the one kernel-list interface (rows, blocks,
cross kernels, factors).  :class:`KernelList` holds F kernels on one training
set (each possibly on its own column subset, a *view*), normalised to unit
diagonal and with widths resolved by :func:`resolve_gamma`
(:mod:`kernlearn.widths`).  It either caches the whole ``F x n x n`` Gram
tensor or computes rows on the fly by blocks so that memory stays below
``cache_size``.  :class:`PrecomputedKernelList` gives the same interface over
user-supplied Gram matrices (validated by :mod:`kernlearn.gram`).
"""

import inspect
import numbers

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .gram import (  # noqa: F401  (re-exported: the kernel layer's public names)
    _EXACT_PSD_CHECK,
    PrecomputedKernels,
    _check_gram_list,
    _smallest_eigenvalue_bound,
    check_gram_list,
    check_psd_gram,
    check_training_grams,
    max_asymmetry,
)
from ._callable_kernels import check_kernel_callable, warn_uncentred_callable
from ._kernel_rules import check_named_kernel, computed, refuse_non_numbers
from ._histogram_kernels import (HISTOGRAM_KERNELS, additive_chi2_kernel, check_negative_features,
                                 histogram_diag, histogram_view, hik_kernel)
from .preprocessing import canonical_sparse, centred_dots, check_center, kernel_overflow_message
from .utils._sparse import (distance_shift, shift_rows, squared_distances,
                            warn_far_sparse_offset)
from .widths import (  # noqa: F401  (re-exported)
    _DATA_GAMMAS,
    _row_sq_norms,
    centred_row_stats,
    convert_width,
    distance_to_kernel,
    mean_pairwise_sq_distance,
    resolve_gamma,
    scale_gamma,
)

__all__ = [
    "KERNELS",
    "BaseKernelList",
    "KernelList",
    "PrecomputedKernelList",
    "PrecomputedKernels",
    "additive_chi2_kernel",
    "check_kernel_callable",
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
    "refuse_unknown_kernel_params",
    "parse_specs",
    "rbf_kernel",
    "resolve_gamma",
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
    from .utils._sparse import dense_product  # (no scikit-learn: Dask workers run it)
    return np.asarray(dense_product(X, Y.T), dtype=float)


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

    Notes
    -----
    Dense rows far from zero relative to their spread (columns at 1e9 with a
    unit spread) are shifted by the mean of ``Y``'s rows first
    (:func:`~kernlearn.utils._sparse.distance_shift`), so their distances
    keep their digits; sparse rows are not (the fits warn).
    """
    if gamma is None or isinstance(gamma, str) or gamma <= 0:
        raise ValueError(f"rbf gamma must be positive, got {gamma!r}.")
    X, Y = canonical_sparse(X), canonical_sparse(Y)  # (the row norms read stored values)
    D = squared_distances(X, Y)
    return np.exp(-gamma * np.maximum(D, 0, out=D))


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
_OWN_KERNELS = dict(KERNELS)  # (a name added to KERNELS is a user's kernel)


def _user_kernel(kernel):
    """The function of a kernel the library does not define, else ``None``.

    A callable, or a name a user added to ``KERNELS``: both are checked as
    callables are (:func:`check_kernel_callable`); a registered name skipped the
    check, and an indefinite kernel was fitted without a word.
    """
    if not isinstance(kernel, str):
        return kernel
    return None if KERNELS.get(kernel) is _OWN_KERNELS.get(kernel) else KERNELS[kernel]


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
    X = computed(X)  # (Dask collections: the Gram matrix is in memory anyway)
    Y = X if Y is None else computed(Y)
    if isinstance(kernel, str):
        if kernel not in KERNELS:
            raise ValueError(
                f"Unknown kernel {kernel!r}; choose one of {sorted(KERNELS)}."
            )
        kernel = KERNELS[kernel]
    if not callable(kernel):
        raise TypeError(f"kernel must be a name or a callable, got {kernel!r}.")
    return kernel(X, Y, **params)


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
    X = computed(X)
    n = X.shape[0]
    if kernel in ("rbf", "constant"):
        return np.ones(n)
    if kernel in ("linear", "poly"):
        return _dot_kernel(kernel, params, _row_sq_norms(X))
    if kernel in ("hik", "additive_chi2"):
        return histogram_diag(X, kernel, params.get("beta", 1.0))
    out = np.empty(n)
    for s in range(0, n, block):
        Xb = X[s : s + block]
        Kb = np.asarray(pairwise_kernel(Xb, Xb, kernel, **params))
        if Kb.shape != (Xb.shape[0], Xb.shape[0]):
            raise ValueError(
                f"the kernel callable {getattr(kernel, '__name__', kernel)!r} returned "
                f"shape {Kb.shape} for inputs of {Xb.shape[0]} and {Xb.shape[0]} rows; "
                "k(X, Y) must return an array of shape (len(X), len(Y))."
            )
        out[s : s + block] = np.diag(Kb)
    return out


def _dot_kernel(kernel, params, sq):
    """The linear or polynomial kernel from inner products (the diagonal: squared norms)."""
    if kernel == "linear":
        return sq
    gamma, coef0 = params.get("gamma", 1.0), params.get("coef0", 1.0)
    return (gamma * sq + coef0) ** params.get("degree", 2)


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
            # kernels=("rbf", {...}): one spec where a list of specs belongs
            + (" One kernel is a list of one spec: kernels=[(kernel, params)]."
               if isinstance(spec, dict) else "")
        )
    if isinstance(kernel, str):
        if kernel not in KERNELS:
            raise ValueError(
                f"kernels[{index}]: unknown kernel {kernel!r}; choose one of "
                f"{sorted(KERNELS)} or pass a callable"
                + ("; precomputed kernels are kernels='precomputed', not in a list."
                   if kernel == "precomputed" else ".")
            )
    elif not callable(kernel):
        raise TypeError(
            f"kernels[{index}]: kernel must be a name or callable, got {kernel!r}."
        )
    if not isinstance(params, dict):
        raise TypeError(f"kernels[{index}]: params must be a dict, got {params!r}.")
    if cols is not None and not isinstance(cols, slice):
        _refuse_negative_columns(cols, index)  # before any data is read
    return kernel, dict(params), cols


def refuse_unknown_kernel_params(kernel, params, where):
    """Refuse parameter names a named kernel does not take.

    Parameters
    ----------
    kernel : str or callable
        A name in :data:`KERNELS` (callables and kernels of ``**kwargs`` are not checked).
    params : dict
        The keyword arguments meant for the kernel.
    where : str
        How the message names them (``"kernels[0]"``, ``"kernel_params"``).

    Raises
    ------
    ValueError
        Naming the unknown parameters and those the kernel takes (passed on,
        they reached the kernel function as a bare ``TypeError`` naming it).
    """
    if not isinstance(kernel, str) or kernel not in KERNELS:
        return
    # (a kernel added to KERNELS may take **kwargs: any name; "it takes ['kw']" was said)
    sig = list(inspect.signature(KERNELS[kernel]).parameters.values())
    if any(p.kind is p.VAR_KEYWORD for p in sig):
        return
    allowed = {p.name for p in sig[2:]}  # (after the two inputs, whatever their names)
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(
            f"{where}: unknown parameter(s) {unknown} for kernel {kernel!r}; "
            f"it takes {sorted(allowed)}."
        )


def _check_kernel_params(kernel, params, index):
    """Reject unknown parameter names and non-positive widths of named kernels."""
    if not isinstance(kernel, str):
        return
    refuse_unknown_kernel_params(kernel, params, f"kernels[{index}]")

    def label(name):
        return f"kernels[{index}]: " + (name if name == "gamma" else f"{kernel} {name}")

    # (one rule with the low-rank estimators' kernel_params: _kernel_rules.py;
    # a width has resolve_gamma's messages: "several widths are several kernels")
    if kernel in KERNELS:
        refuse_non_numbers(kernel, KERNELS[kernel],
                           {k: v for k, v in params.items() if k != "gamma"}, label)
    check_named_kernel(kernel, params, label)


def resolve_params(kernel, params, Xj, index=0, sample_weight=None, centred=None):
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
    sample_weight : ndarray of shape (n,), optional
        Row weights of ``"scale"`` (``"mean"``: unweighted, zero-weight rows left out).
    centred : bool, optional
        Whether the fit's ``standardize=True`` centred the columns (the
        ``additive_chi2``/``hik`` hint on negative values; None: not said).

    Returns
    -------
    params : dict
        A copy; ``"scale"`` becomes scikit-learn's :math:`1/(D\,\mathrm{Var}(X_j))`
        (:func:`scale_gamma`) and ``"mean"`` (``rbf`` only) the inverse mean
        squared pairwise distance :math:`1/\overline{d^2}` (OBSCURE, sec. 5.1.2).
    """
    params = dict(params)
    _check_kernel_params(kernel, params, index)
    check_negative_features(kernel, Xj, f"kernels[{index}]", centred)
    if kernel == "rbf" and "gamma" not in params:
        params["gamma"] = "scale"  # a bare "rbf" takes scikit-learn's default width
    if "gamma" in params:
        params["gamma"] = resolve_gamma(params["gamma"], Xj, kernel, sample_weight=sample_weight,
                                        name=f"kernels[{index}]: gamma")
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
        Non-negative column indices (or a slice, or a mask).
    index : int, default=0
        Position of the kernel in its list (for error messages).

    Returns
    -------
    Xj : ndarray or sparse matrix
    """
    return _take_columns(X, cols, index)


def _refuse_negative_columns(cols, index):
    # a negative id is a typo more often than a count from the end (issue 23
    # item 12); FGM's pools refuse it too
    cols = np.asarray(cols)
    if cols.dtype != bool and cols.size and np.issubdtype(cols.dtype, np.integer) \
            and cols.min() < 0:
        raise ValueError(
            f"kernels[{index}]: column index {int(cols.min())} is negative (negative "
            "indices are not read from the end)."
        )
    if cols.dtype != bool and cols.ndim == 1 and len(np.unique(cols)) < cols.size:
        # ([0, 0]: the column would count twice in the kernel, as FGM's groups refuse)
        twice = next(int(c) for i, c in enumerate(cols) if c in cols[:i])
        raise ValueError(f"kernels[{index}]: column index {twice} is listed twice.")


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
        # (a DataFrame's column names, or one column as a bare 0, got only the first line)
        raise ValueError(
            f"kernels[{index}]: columns must be a non-empty 1-D index array"
            + (f"; columns are positions, not names ({cols.tolist()!r}): e.g. "
               "[list(X.columns).index(c) for c in names]" if cols.dtype.kind in "USO"
               else f"; one column is a list of one, [{cols.item()!r}]" if cols.ndim == 0
               else "") + ".")
    _refuse_negative_columns(cols, index)
    if cols.max() >= n_features:
        raise ValueError(
            f"kernels[{index}]: column index out of range for {n_features} features."
        )
    return X[:, cols]


class BaseKernelList:
    """What every kernel list offers: F kernels on n training samples.

    A fitted list has ``diag_`` / ``kdiag_`` (``(F, n)``: raw and as-used
    diagonals) and ``gram_`` (the cached ``(F, n, n)`` tensor or ``None``);
    subclasses provide :meth:`rows` and :meth:`cross`.  On top of these the
    base gives blocks of rows within the memory budget (:meth:`blocks`), the
    whole tensor (:meth:`gram`) and low-rank factors (:meth:`factor`), whose
    cache the list owns.
    """

    @property
    def n_kernels(self):
        """Number of kernels F."""
        return len(self.diag_)

    @property
    def n_samples(self):
        """Number of training samples n."""
        return self.diag_.shape[1]

    def rows(self, ids):
        """Gram rows ``(F, len(ids), n)`` of training samples ``ids`` (subclasses)."""
        raise NotImplementedError

    def cross(self, X, support=None):
        """Kernels ``(F, n_new, n_support)``, new against training points (subclasses)."""
        raise NotImplementedError

    def block_size(self):
        """Rows per block such that ``F x block x n`` doubles fit in ``cache_size``."""
        per_row = 8.0 * self.n_kernels * max(self.n_samples, 1)
        return int(max(1, min(self.n_samples, self.cache_size * 2**20 // per_row)))

    def factor(self, j, max_rank=None, rtol=1e-10):
        r"""Factor :math:`A_j` (``n x r``) of kernel ``j``: :math:`A_j A_j^\top = K_j`.

        From the eigendecomposition of the (normalised, as used) training Gram
        matrix, eigenvalues below ``rtol`` times the largest dropped, at most
        ``max_rank`` columns (largest eigenvalues first).  Kept by the list:
        asking again costs nothing.

        Parameters
        ----------
        j : int
            The kernel.
        max_rank : int, optional
            Keep at most this many columns (the best rank-``max_rank``
            approximation in Frobenius norm).
        rtol : float, default=1e-10
            Relative eigenvalue cut-off.

        Returns
        -------
        A : ndarray of shape (n, r)
        """
        cache = self.__dict__.setdefault("_factors", {})
        key = f"{int(j)}:{max_rank}:{rtol}"
        if key not in cache:
            K = self.gram_[j] if self.gram_ is not None else self.rows(
                np.arange(self.n_samples))[j]
            s, V = scipy.linalg.eigh((K + K.T) / 2)
            s, V = s[::-1], V[:, ::-1]
            keep = s > rtol * max(float(s[0]), 0.0) if s.size else s > 0
            keep &= s > 0
            r = int(keep.sum())
            r = r if max_rank is None else min(r, int(max_rank))
            cache[key] = V[:, :r] * np.sqrt(s[:r])
        return cache[key]

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

    # the kernel-list contract names it ``blocks`` (BaseKernelList)
    blocks = iter_blocks

    def gram(self):
        """The full ``(F, n, n)`` Gram tensor (cached, or computed now).

        Returns
        -------
        K : ndarray of shape (F, n, n)
        """
        if self.gram_ is not None:
            return self.gram_
        return self.rows(np.arange(self.n_samples))


class KernelList(BaseKernelList):
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
    center_ : ndarray of shape (n_features,) or None
        Column means the dot-product kernels subtract (:meth:`fit`).
    hist_shift_ : ndarray of shape (n_features,) or None
        What the histogram kernels add back to the columns (:meth:`fit`).

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

    def fit(self, X, center=None, sample_weight=None, centred=None, hist_shift=None):
        """Resolve parameters, compute diagonals and (if it fits) cache the Grams.

        Parameters
        ----------
        X : ndarray or sparse matrix of shape (n, n_features)
            Training data.
        center : ndarray of shape (n_features,), optional
            Column means of a sparse ``X`` (which standardisation scales but
            cannot centre) that the linear, polynomial and RBF kernels
            subtract implicitly, :math:`(x-c)\\cdot(x'-c) = x\\cdot x' - x\\cdot c
            - x'\\cdot c + c\\cdot c`: the dense model, ``X`` kept sparse.
        sample_weight : ndarray of shape (n,), optional
            Row weights of the data-derived widths ``gamma="scale"``.
        centred : bool, optional
            Whether the estimator centred ``X`` (:func:`resolve_params`).
        hist_shift : ndarray of shape (n_features,), optional
            ``mean / scale`` of a dense ``X`` the estimator centred: the histogram
            kernels see ``X + hist_shift``, the columns scaled, uncentred
            (:func:`~kernlearn._histogram_kernels.histogram_shift`).

        Returns
        -------
        self : KernelList
        """
        self.X_ = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X, dtype=float)
        self.center_ = check_center(center, X)
        self.hist_shift_ = hist_shift if any(k in HISTOGRAM_KERNELS for k, _, _ in
                                             self.specs if isinstance(k, str)) else None
        self.__dict__.pop("_factors", None)
        self.params_, diags, self._sqn_, self._u_, self._shift_ = [], [], [], [], []
        seen = {}  # (the views warned of: once each)
        for j, (kernel, params, _) in enumerate(self.specs):
            Xj = self._kview(self.X_, j)
            # (the RBF distances of rows far from zero subtract the training mean)
            self._shift_.append(distance_shift(Xj) if kernel == "rbf" else None)
            view = id(self.specs[j][2])
            if kernel == "rbf" and self.center_ is None and view not in seen:
                seen[view] = warn_far_sparse_offset(Xj, f"X (kernels[{j}]'s view)")
            params = resolve_params(kernel, params, Xj, j, sample_weight, centred)
            user = _user_kernel(kernel)
            if user is not None:
                check_kernel_callable(user, Xj, j, params)
                warn_uncentred_callable(user, f"kernels[{j}]", self._center(j))
            self.params_.append(params)
            sq, u = self._row_stats(Xj, j)
            self._sqn_.append(sq)
            self._u_.append(u)
            with np.errstate(over="ignore"):  # (an overflow is refused just below)
                d = np.asarray(_dot_kernel(kernel, params, sq) if kernel in ("linear", "poly")
                               else kernel_diag(Xj, kernel, **params), dtype=float)
            if not np.isfinite(d).all():
                raise ValueError(kernel_overflow_message(j))
            diags.append(d)
        self.diag_ = np.vstack(diags)
        self._isd_ = _inv_sqrt(self.diag_)
        self._unit_diag_ = np.all(self.diag_ == 1.0, axis=1)
        self.kdiag_ = (self.diag_ > 0).astype(float) if self.normalize else self.diag_
        n = self.X_.shape[0]
        self.gram_ = None
        if self.precompute and 8.0 * self.n_kernels * n * n <= self.cache_size * 2**20:
            self.gram_ = self.rows(np.arange(n))
        return self

    def _kview(self, X, j):
        """Kernel ``j``'s view of ``X`` as it sees it (histogram kernels: uncentred)."""
        s = getattr(self, "hist_shift_", None)  # (absent from older model files)
        return histogram_view(self._view(X, j), self.specs[j][0],
                              None if s is None else np.ravel(self._view(s[None, :], j)))

    def _center(self, j):
        """Kernel ``j``'s view of ``center_`` (``None``: not centred)."""
        c = getattr(self, "center_", None)  # (absent from older model files)
        return None if c is None else np.ravel(self._view(c[None, :], j))

    def _row_stats(self, Xj, j):
        """Squared norms of the rows of view ``j`` and their products with its centre
        (``None`` when not centred), both of the centred rows' kernel."""
        return centred_row_stats(Xj, self._center(j))

    def _dots(self, Xa, Xb, j, u=None):
        """``Xa Xb'`` (float64, C order); with ``u = (u_a, u_b)``, the rows' products
        with kernel ``j``'s centre, the products of the centred rows (see fit)."""
        return centred_dots(Xa, Xb, None if u is None else self._center(j), *(u or ()))

    def _train_dots(self, Xv, ids, j):
        """:meth:`_dots` of training rows ``ids`` of kernel ``j``'s view ``Xv`` with all."""
        u = self._u_[j]
        return self._dots(Xv[ids], Xv, j, None if u is None else (u[ids], u))

    def _block(self, Xa, Xb, diag_a, diag_b, j, sq_a=None, sq_b=None, dots=None, u=None,
               dists=None):
        kernel, _, cols = self.specs[j]
        params = self.params_[j]
        if kernel in ("linear", "rbf", "poly") and (
            kernel != "rbf" or sq_b is not None
        ):
            # one product X_a X_b' for the dot-product kernels, without the
            # per-call validation of the generic path (single rows on the fly);
            # kernels on the same view share it through ``dots``, RBF kernels
            # their squared distances through ``dists`` (the same numbers)
            key, shift = id(cols), getattr(self, "_shift_", None)
            shift = None if shift is None else shift[j]
            if kernel == "rbf" and dists is not None and key in dists:
                K = dists[key] * -params["gamma"]
            elif shift is not None:  # (rows far from zero: their own distances)
                K = squared_distances(*shift_rows(shift, Xa, Xb))
                if dists is not None:
                    dists[key] = K.copy()
                K *= -params["gamma"]
            elif dots is not None and key in dots:
                K = dots[key].copy()
            else:
                K = self._dots(Xa, Xb, j, u)
                if dots is not None:
                    dots[key] = K.copy()
            if kernel == "rbf" and shift is None and not (dists is not None and key in dists):
                K *= -2.0
                K += sq_a[:, None]
                K += sq_b[None, :]
                np.maximum(K, 0.0, out=K)
                if dists is not None:
                    dists[key] = K.copy()
                K *= -params["gamma"]
            if kernel == "rbf":
                np.exp(K, out=K)
            elif kernel == "poly":
                K *= params.get("gamma", 1.0)
                K += params.get("coef0", 1.0)
                K **= params.get("degree", 2)
        else:
            K = np.asarray(pairwise_kernel(Xa, Xb, kernel, **params), dtype=float)
        if K.shape != (Xa.shape[0], Xb.shape[0]):
            raise ValueError(f"kernels[{j}] returned shape {K.shape}, expected "
                             f"{(Xa.shape[0], Xb.shape[0])}.")
        if not np.isfinite(K).all():
            raise ValueError(kernel_overflow_message(j))
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
            Xj = self._kview(self.X_, j)
            sq = self._sqn_[j]
            u = self._u_[j]
            out[j] = self._block(Xj[ids], Xj, self.diag_[j, ids], None, j, sq[ids], sq,
                                 dots, None if u is None else (u[ids], u))
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
        self._u_ = [None if u is None else u[support] for u in self._u_]
        self.gram_ = None
        self.__dict__.pop("_factors", None)
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
        if sp.issparse(X):
            # in the training matrix's precision: scikit-learn's sparse product
            # refuses float32 against float64 (an error naming neither matrix)
            X = sp.csr_matrix(X, dtype=self.X_.dtype if sp.issparse(self.X_) else None)
        else:
            X = np.asarray(X, dtype=float)
        keep = slice(None) if support is None else np.asarray(support)  # (a slice: no copy)
        out = np.zeros((self.n_kernels, X.shape[0], self.diag_[0, keep].shape[0]))
        which = range(self.n_kernels) if which is None else which
        dots, dists, stats = {}, {}, {}  # (shared by the kernels of one view)
        for j in which:
            kernel = self.specs[j][0]
            Xj, Tj = self._kview(X, j), self._kview(self.X_, j)[keep]
            if id(self.specs[j][2]) not in stats:
                stats[id(self.specs[j][2])] = self._row_stats(Xj, j)
            sq, u = stats[id(self.specs[j][2])]
            with np.errstate(over="ignore"):  # (an overflow is refused just below)
                d_new = None if not self.normalize else (
                    _dot_kernel(kernel, self.params_[j], sq) if kernel in ("linear", "poly")
                    else kernel_diag(Xj, kernel, **self.params_[j]))
            if d_new is not None and not np.isfinite(d_new).all():
                # (a squared norm past 1e308 normalised its finite row to zero:
                # refused, as fit refuses such a diagonal)
                raise ValueError(kernel_overflow_message(j))
            u_b = getattr(self, "_u_", [None] * self.n_kernels)[j]
            # (all training rows: their inverse square roots are stored, a unit diagonal known)
            out[j] = self._block(Xj, Tj, d_new, None if support is None else self.diag_[j, keep],
                                 j, sq, self._sqn_[j][keep], dots,
                                 None if u is None else (u, u_b[keep]), dists)
        return out


class PrecomputedKernelList(BaseKernelList):
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
        grams = check_training_grams(self.grams, "X")
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
        grams = check_gram_list(grams, "X")
        if len(grams) != self.n_kernels:
            raise ValueError(
                f"Expected {self.n_kernels} test Gram matrices (one per training "
                f"kernel), got {len(grams)}."
            )
        n_new = grams[0].shape[0]
        for j, K in enumerate(grams):
            # (a transposed K(X_train, X_test) was asked to be (n_train, n_train))
            if K.shape[1] != self.n_samples:
                raise ValueError(
                    f"X[{j}] has shape {K.shape}; test Gram matrices are K(X_test, X_train)"
                    f" of shape (n_test, n_train) = (n_test, {self.n_samples}): one column "
                    "per training sample."
                )
            if K.shape[0] != n_new:
                raise ValueError(f"X[{j}] has {K.shape[0]} rows and X[0] {n_new}: the "
                                 "test Gram matrices must be of the same test points.")
        K = np.stack(grams)
        return K if support is None else K[:, :, np.asarray(support)]
