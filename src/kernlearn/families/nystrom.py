r"""Rank-1 Nystrom columns (paper 003, sec. 2.1).

For a kernel :math:`k` and a training point :math:`x_m`, the column

.. math:: c_m = k(x_m, x_m)^{-1/2} \, [k(x_1, x_m), \dots, k(x_n, x_m)]^\top

gives the rank-1 Nystrom approximation :math:`\tilde K_m = c_m c_m^\top` of the
Gram matrix (eq. 2).  SLKL draws ``M`` such columns at random and learns a
conical combination of them; this family holds the sampled set
:math:`\mathcal S`, either with its ``n x M`` columns precomputed
(:math:`O(nM)` memory) or computing each column when it is asked for
(:math:`O(n)` per column; the solver keeps only the :math:`m_0` active ones).
"""

import functools
import inspect
from numbers import Integral

import numpy as np
import scipy.sparse as sp

from ..kernels import (KERNELS, _dot_kernel, pairwise_kernel, refuse_unknown_kernel_params,
                       resolve_gamma)
from .._callable_kernels import warn_uncentred_callable
from .._kernel_rules import check_named_kernel, refuse_non_numbers
from ..widths import check_gamma
from ..preprocessing import centred_dots, check_center
from ..utils._sparse import (canonical_sparse, distance_shift, shift_rows,
                             warn_far_sparse_offset)
from ._base import BaseFamily, Candidates, as_params
from ._content_sample import content_sample, row_hashes

__all__ = ["NystromColumns", "check_kernel_params", "content_order", "given_gamma",
           "kernel_block", "kernel_params_for", "kernel_params_unread"]


def kernel_block(A, B, kernel, params, center=None):
    """``k(A, B)`` for a named or callable kernel, on the rows less ``center``.

    The linear and polynomial kernels subtract ``center`` (the column means of
    sparse inputs, which standardisation scales but cannot centre) implicitly
    (:func:`kernlearn.preprocessing.centred_dots`), so the same numbers give
    the same kernel dense or sparse; the RBF kernel does not depend on it, and
    other kernels see the rows as given.

    Parameters
    ----------
    A, B : ndarray or sparse matrix of shape (n_A, n_features), (n_B, n_features)
    kernel : str or callable
    params : dict
        The kernel's keyword arguments.
    center : ndarray of shape (n_features,), optional

    Returns
    -------
    K : ndarray of shape (n_A, n_B)
    """
    if center is not None and isinstance(kernel, str) and kernel in ("linear", "poly"):
        return _dot_kernel(kernel, params, centred_dots(A, B, center))
    if (center is not None and isinstance(kernel, str) and kernel == "rbf"
            and isinstance(A, np.ndarray) and isinstance(B, np.ndarray)):
        A, B = shift_rows(center, A, B)  # (dense rows far from zero: NystromColumns.fit)
    if isinstance(kernel, str) and kernel == "rbf" and _plain_rbf_args(A, B, params):
        return _rbf_float64(A, B, params["gamma"])
    return pairwise_kernel(A, B, kernel=kernel, **params)


#: mantissa bits of the kernel values that :func:`content_order` compares (the
#: rest is round-off: kernel values of the same rows can differ there)
_KEY_BITS = 36


def content_order(X, indices, kernel, params, center=None, tie=None):
    """``indices`` sorted by their rows' kernel values against one another.

    A sample drawn by position follows the rows' order; sorted by content,
    whatever depends on a sampled row's place in the sample (SLKL's width
    per candidate column, the coordinate each draw names) depends on the
    data alone.  Row ``m``'s key is the sorted values ``k(x_m, x_s)`` over
    the sampled rows ``s`` (in float64, the matrix made exactly symmetric:
    two rows farthest from each other share their smallest value), the
    rows are taken in lexicographic order of their keys, then of ``tie``
    (the targets, the weights), then of their values (first column first)
    where keys are equal.  The same rows in
    another order (all of them sampled), their columns in another order,
    float32 copies or their Gram matrix given as ``kernel="precomputed"``
    give the same order: the values are compared to 36 bits (about 1e-11
    relative), so that values equal but for round-off (categorical inputs:
    many equal distances) tie.  Rows of one content hash (rows that a map of
    the columns takes one onto the other, as ``(1, 2)`` and ``(2, 1)`` of a
    set with both; ``kernlearn.families._content_sample``) share the smallest
    of their keys: their round-off, which follows the row order, could put
    their values on either side of a rounding boundary.  Distinct rows whose keys tie (a symmetric
    design, as a full factorial one) are ordered by ``tie``, then by their
    values: only where those tie too does the order of the columns (or,
    ``kernel="precomputed"``, of the rows) decide.
    Equal rows keep their order (they are interchangeable).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Training inputs (the Gram matrix when ``kernel="precomputed"``).
    indices : ndarray of int
        Rows of ``X``.
    kernel : str or callable
        The kernel (see :func:`kernel_block`) or ``"precomputed"``.
    params : dict
        Its keyword arguments.
    center : ndarray of shape (n_features,), optional
        See :func:`kernel_block`.
    tie : ndarray of shape (n_samples, q), optional
        Further values of each row (first column first) that order rows
        whose kernel values tie; they must not depend on the row order
        beyond an increasing map (a centred or scaled target is fine).

    Returns
    -------
    indices : ndarray of int
        The same indices, in that order.
    """
    indices = np.asarray(indices, dtype=np.intp)
    if len(indices) < 2:
        return indices
    if isinstance(kernel, str) and kernel == "precomputed":
        block, values = np.asarray(X[np.ix_(indices, indices)], dtype=float), None
        share = None
    else:
        rows = X[indices].astype(np.float64)
        # rows of one content hash (rows such as (1, 2) and (2, 1) of a set
        # with both: equal keys in exact arithmetic) share their smallest
        # rounded key, so that round-off in another row order (of the
        # standardization, of the width) cannot split them across a rounding
        # boundary of _key_bits (sparse rows: hashed from their stored values)
        share = _shared_keys(row_hashes(rows)[0])
        block = np.asarray(kernel_block(rows, rows, kernel, params, center), dtype=float)
        values = rows  # (read only for the rows that tie on every other key)
    sym = 0.5 * (block + block.T)
    if tie is not None:
        tie = np.asarray(tie, dtype=float).reshape(len(tie), -1)[indices].T[::-1]
    # the rows in the order of their smallest _HEAD_KEYS values (a partition,
    # not a sort of every row: 0.5 s of 0.6 at M = 3000), then the rows whose
    # heads tie in that of all their keys, as one lexicographic sort of all keys
    # would order them (equal keys keep their order)
    c = min(len(indices), _HEAD_KEYS)
    head = _key_bits(np.sort(np.partition(sym, c - 1, axis=1)[:, :c], axis=1))
    if share is not None:
        head = share(head)
    order = np.lexsort(head.T[::-1])
    same = np.all(head[order][1:] == head[order][:-1], axis=1)
    if same.any():
        group = np.cumsum(np.r_[True, ~same])
        at = np.flatnonzero(np.r_[same, False] | np.r_[False, same])
        rows = order[at]
        full = _key_bits(np.sort(sym[rows], axis=1))
        if share is not None:
            full = share(full, rows)
        keys = [full.T[::-1], group[at][None]]
        if tie is not None:
            keys.insert(0, tie[:, rows])
        keys = np.vstack(keys)
        sub = np.lexsort(keys)  # (the last key first)
        order[at] = rows[sub]
        if values is not None:
            # the values are the last key: a stable sort of the runs that tie
            # on all others by them gives one lexsort's order of all keys
            order[at] = _values_within_ties(values, rows[sub], keys[:, sub])
    return indices[order]


def _values_within_ties(rows, pos, keys):
    """``pos`` with each run of equal ``keys`` ordered by its rows' values.

    The rows ``rows[pos]`` are in the order of their ``keys`` (one column
    each); rows whose keys are all equal (NaN equal to NaN, as in a sort)
    are put in lexicographic order of their values (first column first),
    equal values keeping their order.  Sparse rows are compared on the
    columns that those rows store (the others are zero in all of them), so
    the memory is the tying rows times their stored columns, never the
    sampled rows dense (audit 113: 260 MB on 300 x 200,000 counts).

    Parameters
    ----------
    rows : ndarray or sparse matrix of shape (n_rows, n_features)
    pos : ndarray of int
        Rows of ``rows``, in the order of ``keys``.
    keys : ndarray of shape (n_keys, len(pos))
        Their other keys, in that order.

    Returns
    -------
    pos : ndarray of int
        The same rows, each run of equal keys in the order of its values.
    """
    a, b = keys[:, 1:], keys[:, :-1]
    same = np.all((a == b) | (np.isnan(a) & np.isnan(b)), axis=0)
    if not same.any():
        return pos
    run = np.cumsum(np.r_[True, ~same])
    at = np.flatnonzero(np.r_[same, False] | np.r_[False, same])
    tied = rows[pos[at]]
    if sp.issparse(tied):  # (only the columns stored in these rows can differ)
        tied = sp.csr_matrix(tied)
        tied = tied[:, np.unique(tied.indices)].toarray()
    pos = pos.copy()
    pos[at] = pos[at][np.lexsort(np.vstack([np.asarray(tied).T[::-1], run[at][None]]))]
    return pos


def _shared_keys(h):
    """A map giving each row (of those ``at``, all by default) the smallest in
    lexicographic order of the ``keys`` of the rows of its content hash ``h``
    among them; ``None`` when the hashes are distinct (nothing to share)."""
    _, inverse, counts = np.unique(h, return_inverse=True, return_counts=True)
    if counts.max() < 2:
        return None

    def share(keys, at=None):
        g = inverse if at is None else inverse[at]
        if np.bincount(g).max() < 2:
            return keys
        order = np.lexsort(np.vstack([keys.T[::-1], g[None]]))  # (by group, then keys)
        first = np.r_[True, g[order][1:] != g[order][:-1]]
        lead = order[np.maximum.accumulate(np.where(first, np.arange(len(g)), 0))]
        out = np.empty_like(keys)
        out[order] = keys[lead]
        return out
    return share


#: how many of a row's smallest kernel values :func:`content_order` sorts every
#: row by before it compares all values of the rows that tie on them
_HEAD_KEYS = 8


def _key_bits(values):
    """``values`` rounded to :data:`_KEY_BITS` bits of mantissa (a non-decreasing
    map: rounding sorted values gives the sorted rounded values).  Values equal in
    exact arithmetic but computed from inputs that differ in round-off, as the
    standardized inputs of the same rows in another order do, tie as they
    should; on categorical inputs their last bits ordered the rows."""
    mant, expo = np.frexp(values)
    return np.ldexp(np.round(np.ldexp(mant, _KEY_BITS)), expo - _KEY_BITS)


def _plain_rbf_args(A, B, params):
    """Whether :func:`_rbf_float64` gives ``rbf_kernel(A, B, **params)`` exactly.

    Two float64 ``numpy.ndarray`` matrices (the estimators' validated,
    finite inputs and centres) and one positive ``gamma``; anything else goes
    through :func:`~kernlearn.kernels.rbf_kernel` and its checks.  One matrix
    against itself (SLKL's content order, a family's diagonal: 0.2-0.5 ms of
    checks a call) only when that kernel's distances would not shift its
    rows (:func:`~kernlearn.utils._sparse.distance_shift`).
    """
    gamma = params.get("gamma")
    return (len(params) == 1 and isinstance(gamma, (float, int)) and not isinstance(gamma, bool)
            and gamma > 0 and all(
                type(M) is np.ndarray and M.ndim == 2 and M.dtype == np.float64
                for M in (A, B)) and A.shape[1] == B.shape[1]
            and (A is not B or distance_shift(A) is None))


def _rbf_float64(A, B, gamma):
    """:func:`~kernlearn.kernels.rbf_kernel` of float64 arrays without its checks.

    The same operations in the same order as scikit-learn's
    ``euclidean_distances(A, B, squared=True)`` (float64; with ``A is B`` its
    zero diagonal too) followed by ``rbf_kernel``'s, so the same bits; skipped are the parameter
    and array validations that cost most of a one-row prediction.
    """
    D = -2 * (A @ B.T)
    D += np.einsum("ij,ij->i", A, A)[:, None]
    D += np.einsum("ij,ij->i", B, B)[None, :]
    np.maximum(D, 0, out=D)  # (rbf_kernel's clip repeats it: the same bits)
    if A is B:  # (scikit-learn's rows against themselves: a zero diagonal)
        np.fill_diagonal(D, 0.0)
    return np.exp(-gamma * D)


def kernel_params_for(kernel, gamma=None, degree=None, coef0=None, kernel_params=None,
                      X=None, sample_weight=None):
    """Keyword arguments for ``pairwise_kernel`` from estimator-style parameters.

    ``gamma``, ``degree`` and ``coef0`` are passed only to kernels whose
    signature accepts them; ``gamma=None`` or ``"scale"`` is resolved by
    :func:`kernlearn.kernels.resolve_gamma` on the training inputs ``X``
    (scikit-learn's ``"scale"``, weighted by ``sample_weight``), and only
    when the kernel takes a ``gamma``.  A value ``kernel_params`` holds, or
    a ``functools.partial`` kernel binds, is the user's own and kept (a
    ``gamma`` named there, ``"scale"`` or ``"mean"``, is resolved alike).

    Parameters
    ----------
    kernel : str or callable
        Kernel name in ``kernlearn.kernels.KERNELS``, ``"precomputed"`` or a callable.
    gamma : float, "scale" or None
        Kernel width.
    degree, coef0 : float, optional
        Common kernel parameters.
    kernel_params : dict, optional
        Extra parameters passed as is.
    X : ndarray or sparse matrix of shape (n_samples, n_features), optional
        The training inputs the kernel sees; needed for ``gamma="scale"``.
    sample_weight : ndarray of shape (n_samples,), optional
        Row weights of ``"scale"``.

    Returns
    -------
    params : dict
        Keyword arguments for the kernel.
    """
    return _kernel_params(kernel, gamma, degree, coef0, kernel_params, X, sample_weight)


def check_kernel_params(kernel, gamma=None, degree=None, coef0=None, kernel_params=None):
    """Refuse, before any data is read, what :func:`kernel_params_for` refuses
    without reading it (the command line's check of the low-rank estimators'
    settings: exit 2 where the fit's was exit 6).

    A width computed from the data (``gamma="scale"``, a ``kernel_params``
    width ``"scale"`` or ``"mean"``) is left uncomputed, its name and value
    checked (:func:`kernlearn.widths.check_gamma`); every other rule is the
    fit's own code.

    Parameters
    ----------
    kernel : str or callable
        Kernel name in ``kernlearn.kernels.KERNELS``, ``"precomputed"`` or a callable.
    gamma : float, "scale" or None
        Kernel width.
    degree, coef0 : float, optional
        Common kernel parameters.
    kernel_params : dict, optional
        Extra parameters of the kernel.

    Raises
    ------
    ValueError
        Naming the setting, as the fit would.
    """
    _kernel_params(kernel, gamma, degree, coef0, kernel_params, None, None, data=False)


def _kernel_params(kernel, gamma, degree, coef0, kernel_params, X, sample_weight, data=True):
    """:func:`kernel_params_for`; ``data=False``: its checks alone (no width computed)."""
    params = dict(kernel_params or {})
    if kernel == "precomputed":
        return params
    refuse_unknown_kernel_params(kernel, params, "kernel_params")
    if isinstance(kernel, str) and kernel in KERNELS:
        refuse_non_numbers(kernel, KERNELS[kernel], params, lambda name: f"kernel_params[{name!r}]")
    func = KERNELS.get(kernel) if isinstance(kernel, str) else kernel
    accepted = _signature_names(func)
    # partial(rbf_kernel, gamma=0.03): gamma="scale" silently replaced the bound
    # 0.03 (a partial's signature lists it as a keyword with that default)
    bound = _partial_keywords(func)
    for name, value in (("gamma", gamma), ("degree", degree), ("coef0", coef0)):
        if name not in accepted:
            continue
        _refuse_two_values(name, value, params, bound)
        if name in params:
            continue
        if name in bound:
            params[name] = bound[name]  # (kept, and reported as used)
            continue
        if name == "gamma" and (value is None or value == "scale"):
            if not data:
                continue  # (the fit computes it on the data)
            if X is None:
                raise ValueError("gamma='scale' needs the training data: pass X.")
            value = resolve_gamma("scale", X, kernel, sample_weight=sample_weight)
        if value is not None:
            params[name] = value
    if "gamma" in accepted and isinstance(params.get("gamma"), str):
        # kernel_params={"gamma": "scale"} reached the kernel as the string
        # ("can't multiply sequence by non-int of type 'float'")
        if data:
            params["gamma"] = resolve_gamma(params["gamma"], X, kernel, sample_weight=sample_weight,
                                            name="kernel_params['gamma']")
        else:
            check_gamma(params["gamma"], kernel, name="kernel_params['gamma']")
    # the kernel lists' rule (degree=2.5, coef0=-1, a hik beta of -1 fitted a
    # non-kernel here where the lists refused them): the user's own names
    given = dict(kernel_params or {})
    check_named_kernel(kernel, params, lambda name: (
        f"kernel_params[{name!r}]" if name in given else name))
    return params


def _signature_names(func):
    """The parameter names of ``func``'s signature (none when it has none to read)."""
    try:
        return set(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return set()


def kernel_params_unread(kernel):
    """Which of ``gamma``, ``degree`` and ``coef0`` the kernel does not read.

    :func:`kernel_params_for` passes each only to a kernel whose signature
    takes it (``rbf``: ``gamma``; ``poly``: all three; ``linear``: none),
    and none to ``"precomputed"``: the others are dropped.

    Parameters
    ----------
    kernel : str or callable
        Kernel name in ``kernlearn.kernels.KERNELS``, ``"precomputed"`` or a callable.

    Returns
    -------
    names : tuple of str
    """
    names = ("gamma", "degree", "coef0")
    if isinstance(kernel, str) and kernel == "precomputed":
        return names
    accepted = _signature_names(KERNELS.get(kernel) if isinstance(kernel, str) else kernel)
    return tuple(n for n in names if n not in accepted)


def _refuse_two_values(name, value, params, bound):
    """Refuse a parameter given as an argument and in ``kernel_params`` or a partial.

    The value ``kernel_params`` holds (or a ``functools.partial`` kernel
    binds) was kept and the estimator's argument dropped without a word
    (``gamma=0.5, kernel_params={"gamma": 0.01}`` fitted at 0.01).  An
    argument at its default (``None``, ``gamma="scale"``) or equal to the
    other value is no conflict.
    """
    if value is None or (name == "gamma" and isinstance(value, str) and value == "scale"):
        return
    for where, source in (("kernel_params", params), ("the functools.partial kernel", bound)):
        if name in source and source[name] is not None and source[name] != value:
            raise ValueError(
                f"{name}={value!r} and {name}={source[name]!r} in {where} both set the "
                f"kernel's {name}; give it once.")


def _partial_keywords(func):
    """Keywords a ``functools.partial`` (nested ones too) binds; ``{}`` otherwise."""
    out = {}
    while isinstance(func, functools.partial):
        out = {**func.keywords, **out}  # (the outer partial's values win)
        func = func.func
    return out


def given_gamma(kernel, gamma, kernel_params=None):
    """The width the user gave: ``gamma``, else ``kernel_params``' or a partial's.

    ``gamma_factors="auto"`` spreads its columns over several widths around
    the default width only; a width given in ``kernel_params`` or bound in a
    ``functools.partial`` kernel was given as surely as ``gamma=`` (half the
    columns were put at a tenth of it without a word).

    Parameters
    ----------
    kernel : str or callable
    gamma : float, "scale" or None
        The estimator's ``gamma``.
    kernel_params : dict, optional

    Returns
    -------
    gamma : float, "scale" or None
        ``"scale"``/``None`` when no width was given.
    """
    if gamma is not None and not (isinstance(gamma, str) and gamma == "scale"):
        return gamma
    for source in (kernel_params or {},
                   {} if isinstance(kernel, str) else _partial_keywords(kernel)):
        if source.get("gamma") is not None:
            return source["gamma"]
    return gamma


class NystromColumns(BaseFamily):
    """A seeded sample of ``M`` rank-1 Nystrom columns of a kernel.

    Parameters
    ----------
    kernel : str or callable, default="rbf"
        A name in ``kernlearn.kernels.KERNELS``, a callable ``k(X, Y, **params)``,
        or ``"precomputed"`` (then ``X`` given to :meth:`fit` is the square
        training Gram matrix and ``X`` given to :meth:`columns` is
        ``K(X_new, X_train)``).
    kernel_params : dict, optional
        Keyword arguments of the kernel; a ``gamma`` of ``"scale"`` (or
        ``"mean"`` for ``rbf``) is computed from the training inputs at
        :meth:`fit` (:func:`kernlearn.kernels.resolve_gamma`).
    n_columns : int, default=256
        Number ``M`` of sampled columns (at most ``n_samples``).
    precompute : bool, default=True
        Compute and keep all ``M`` columns at :meth:`fit` (:math:`O(nM)`
        memory) rather than on demand.
    random_state : int, Generator or None, default=None
        Seed for sampling the column set :math:`\\mathcal S` when :meth:`fit`
        is given no ``indices``, by the low-rank estimators' rule (without
        their targets): the ``M`` rows of smallest seeded key, a hash of each
        row's inputs and occurrence number among equal rows
        (``kernlearn.families._content_sample``; sparse rows hashed from their
        stored values), in increasing order of their keys.  The same rows in
        another order give the same sampled rows and, at ``M < n``, the same
        columns in the same order, to round-off (``M = n``: every row, in the
        rows' order).  With ``kernel="precomputed"`` a row's content is its
        kernel values.

    Attributes
    ----------
    kernel_params_ : dict
        The kernel's keyword arguments as used (a data-derived ``gamma``
        resolved).
    indices_ : ndarray of shape (M,)
        Training indices of the sampled points :math:`x_m` (as given to
        :meth:`fit`, else in increasing order of their keys: see
        ``random_state``).
    diag_ : ndarray of shape (M,)
        :math:`k(x_m, x_m)`.
    columns_ : ndarray of shape (M, n_samples) or None
        Precomputed columns (rows), ``None`` when computed on demand.
    center_ : ndarray of shape (n_features,) or None
        Column means the kernel subtracts from its inputs (:meth:`fit`'s
        ``center``, or for an RBF kernel on dense rows far from zero
        :func:`~kernlearn.utils._sparse.distance_shift`'s); ``None``: the
        inputs are used as given.
    n_samples_ : int
        Training rows.

    References
    ----------
    Machart, Peel, Anthoine, Ralaivola, Glotin (2011), Stochastic Low-Rank Kernel
    Learning for Regression, ICML, eqs. (1)-(3) and sec. 4.2; Williams and Seeger
    (2001), Using the Nystrom method to speed up kernel machines.
    """

    sampled = True

    def __init__(self, kernel="rbf", kernel_params=None, n_columns=256, precompute=True,
                 random_state=None):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.n_columns = n_columns
        self.precompute = precompute
        self.random_state = random_state

    def _k(self, A, B):
        return kernel_block(A, B, self.kernel, self.kernel_params_,
                            getattr(self, "center_", None))

    @staticmethod
    def _constraints():
        from sklearn.utils._param_validation import Interval

        return {"kernel_params": [dict, None],
                "n_columns": [Interval(Integral, 1, None, closed="left")],
                "precompute": ["boolean"],
                "random_state": ["random_state", np.random.Generator]}

    def fit(self, X, indices=None, center=None):
        """Sample :math:`\\mathcal S` and compute the normalisations.

        Parameters
        ----------
        X : ndarray or sparse matrix of shape (n_samples, n_features)
            Training inputs (the Gram matrix when ``kernel="precomputed"``).
        indices : array-like of int, optional
            Use these training indices instead of the seeded sample
            (``random_state``).
        center : ndarray of shape (n_features,), optional
            Column means of a sparse ``X`` that the linear and polynomial
            kernels subtract (:func:`kernel_block`).

        Returns
        -------
        self : object
            The fitted family.
        """
        self._validate_params()
        X = canonical_sparse(X)  # (kept for the rows: indexable, duplicates summed)
        n = X.shape[0]
        M = int(self.n_columns)
        if M < 1 or M > n:
            raise ValueError(
                f"n_columns={self.n_columns} must be between 1 and n_samples={n}."
            )
        if indices is None:
            # keyed by the rows' content, as the low-rank estimators' sample: a
            # draw by position gave other rows (other columns) in another row order
            seed = np.random.default_rng(self.random_state).integers(2**31)
            indices = content_sample(X, np.arange(n), M, seed,
                                     precomputed=self.kernel == "precomputed")
        self.indices_ = np.asarray(indices, dtype=np.intp)
        self.center_ = check_center(center, X)
        params = dict(self.kernel_params or {})
        if self.kernel != "precomputed" and isinstance(params.get("gamma"), str):
            # (it reached the kernel as the string: "rbf gamma must be positive")
            params["gamma"] = resolve_gamma(params["gamma"], X, self.kernel)
        self.kernel_params_ = params
        warn_uncentred_callable(self.kernel, getattr(self.kernel, "__name__", "kernel"),
                                self.center_)
        if self.center_ is None and isinstance(self.kernel, str) and self.kernel == "rbf":
            # (rows far from zero: their RBF distances subtract the training mean)
            self.center_ = distance_shift(X)
            warn_far_sparse_offset(X)
        self._X = X
        self.n_samples_ = n
        if self.kernel == "precomputed":
            diag = np.asarray(X[self.indices_, self.indices_], dtype=float).ravel()
        else:
            diag = np.empty(len(self.indices_))
            for s in range(0, len(self.indices_), 256):
                rows = self._rows(self.indices_[s : s + 256])
                diag[s : s + 256] = np.diagonal(self._k(rows, rows))
        if np.any(diag < 0) or not np.all(np.isfinite(diag)):
            raise ValueError(
                "The kernel is not positive semi-definite: k(x_m, x_m) < 0 for some "
                "sampled point."
            )
        self.diag_ = diag
        # c_m = k(., x_m) / sqrt(k(x_m, x_m)); a zero diagonal implies a zero column.
        with np.errstate(divide="ignore"):
            safe = np.where(diag > 0, diag, 1.0)
            self._scale = np.where(diag > 0, 1.0 / np.sqrt(safe), 0.0)
        self.columns_ = None
        if self.precompute:
            self.columns_ = self._compute(np.arange(len(self.indices_)))
        return self

    def _rows(self, idx):
        return self._X[idx]  # (dense or sparse: the same indexing)

    def _compute(self, positions):
        """Columns at positions of :math:`\\mathcal S`, as rows ``(len, n)``."""
        idx = self.indices_[positions]
        if self.kernel == "precomputed":
            K = np.asarray(self._X[:, idx], dtype=float).T
        else:
            K = self._k(self._rows(idx), self._X)
        return np.ascontiguousarray(K * self._scale[positions][:, None])

    def column(self, j):
        """The column :math:`c_{m_j}` of the ``j``-th sampled point.

        Parameters
        ----------
        j : int
            Position in the sampled set.

        Returns
        -------
        c : ndarray of shape (n_samples,)
            The normalised kernel column.
        """
        if self.columns_ is not None:
            return self.columns_[j]
        return self._compute(np.array([j]))[0]

    def price(self, grad, k, rng=None, exclude=None, X=None):
        """Draw ``k`` coordinates uniformly at random (Algorithm 1) and score them.

        Parameters
        ----------
        grad : ndarray of shape (n_samples,) or (n_samples, n_outputs) or None
            :math:`Z = (\\lambda I + \\tilde K(\\mu))^{-1} Y`; the score of a column is
            :math:`\\|c_m^\\top Z\\|^2`, so that :math:`-\\lambda \\cdot` score
            :math:`+ \\nu` is the partial derivative (20).  ``None`` skips scoring
            (scores are NaN).
        k : int
            Number of coordinates (drawn with replacement).
        rng : numpy.random.Generator, optional
            Randomness.
        exclude : array-like, optional
            Unused (every coordinate may be revisited).
        X : ignored
            The columns come from :meth:`fit`'s inputs (one signature for
            every family).

        Returns
        -------
        candidates : Candidates
            ``params`` are positions in :math:`\\mathcal S`.
        """
        rng = np.random.default_rng(rng)
        pos = rng.integers(0, len(self.indices_), size=int(k))
        if grad is None:
            scores = np.full(len(pos), np.nan)
        else:
            Z = np.asarray(grad, dtype=float).reshape(self.n_samples_, -1)
            if self.columns_ is not None:
                cols = self.columns_[pos]
            else:
                cols = self._compute(pos)
            scores = np.sum((cols @ Z) ** 2, axis=1)
        return Candidates(params=pos, scores=scores)

    def columns(self, candidates, X):
        """Kernel columns :math:`k(X, x_m) / \\sqrt{k(x_m, x_m)}` on new inputs.

        Parameters
        ----------
        candidates : Candidates or array-like of int
            Positions in :math:`\\mathcal S`.
        X : ndarray or sparse matrix
            New inputs (``K(X_new, X_train)`` when precomputed).

        Returns
        -------
        block : ndarray of shape (n_new, n_candidates)
            The columns evaluated on ``X``.
        """
        pos = np.asarray(as_params(candidates), dtype=np.intp)
        idx = self.indices_[pos]
        if self.kernel == "precomputed":
            K = np.asarray(X[:, idx], dtype=float)
        else:
            K = self._k(X, self._rows(idx))
        return K * self._scale[pos]
