"""Shared machinery of continuously parametrised (infinite) families.

An infinite family samples candidate parameters, evaluates each candidate's
group of columns on the data and scores it against the loss gradient.  The
score needs only the correlations :math:`h = \\Phi_v' G` of the candidate's
unit-norm columns with the gradient matrix ``G`` (one column per task), so
pricing evaluates the sampled candidates in chunks: one matrix product
per chunk, never one candidate at a time (paper 000, sec. 4.2: cost
:math:`O(k_r n T)`).
"""

import weakref

import numpy as np
import scipy.sparse as sp

from ._base import BaseFamily, Candidates, _not_implemented, as_params

# id(family) -> (weak reference to the family, {id(array): weak reference} of the
# last arrays it validated, oldest first)
_CHECKED = {}
#: Arrays remembered per family by :meth:`_checked`: the regressor's five folds
#: alternate among ten training and held-out arrays (with 8, oldest-first
#: eviction missed on every access: 53 validations in a 120-row fit, not 13)
_N_REMEMBERED = 16
# Entries of one chunk of candidate columns (n_samples x chunk x group size).
_CHUNK_ENTRIES = 8_000_000


_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


def plain_float_matrix(X, sparse=False):
    """Whether ``check_array`` (dense or CSR/CSC, float64 or float32) returns ``X`` as it is.

    True for a finite, non-empty, 2-D, C-ordered float64/float32
    ``numpy.ndarray``: no conversion, copy or error is due, so the check (a tenth of a millisecond
    per array) can be skipped.  A finite sum proves every entry finite (NaN
    and infinity propagate); a sum that overflows takes the general path.

    Parameters
    ----------
    X : object
        Candidate input.
    sparse : bool, default=False
        Also true for a non-empty CSR or CSC matrix of float64/float32 with
        finite stored entries, which ``check_array(X, accept_sparse=["csr",
        "csc"])`` returns as it is too (the families' check: on a Dask
        worker, which never imports scikit-learn, the partitions are such).

    Returns
    -------
    bool
    """
    if sparse and sp.issparse(X) and X.format in ("csr", "csc") and X.ndim == 2:
        values = X.data  # (any memory layout; SciPy's csr_array may be 1-D)
    elif type(X) is np.ndarray and X.ndim == 2 and X.flags.c_contiguous:
        values = X
    else:
        return False
    if not (X.dtype in _FLOATS and X.shape[0] >= 1 and X.shape[1] >= 1):
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(values.sum()))


def valid_scores(s, norms):
    """The scores ``s``, ``-inf`` for candidates with an all-zero column.

    Parameters
    ----------
    s : ndarray of shape (k,)
        Scores of the candidates.
    norms : ndarray of shape (k, group_size)
        Norms of their columns.

    Returns
    -------
    ndarray of shape (k,)
    """
    ok = norms > 0
    if np.count_nonzero(ok) == ok.size:  # (the usual case: nothing to mask)
        return s
    return np.where(ok.all(axis=1), s, -np.inf)


def top_k(s, k):
    """``(-s).argsort(kind="stable")[:k]``: the ``k`` largest scores, the
    first index first on ties, NaN last.

    Pricing keeps the best of hundreds of candidates at every outer
    iteration, most often one (the paths add one feature at a time up to
    seven): that one is the first maximum, without sorting all of ``s`` (a
    full stable sort was about 2 % of a small GrFL fit).  More than one, or
    NaN scores, take the full sort (a partition first measured no faster on
    a few hundred scores).

    Parameters
    ----------
    s : ndarray of shape (n,)
        Scores.
    k : int
        How many to keep (at least 1).

    Returns
    -------
    ndarray of shape (min(k, n),)
        Their indices, best first.
    """
    if k == 1 and s.size:
        i = int(s.argmax())  # (the first maximum; the first NaN if any)
        if s[i] == s[i]:
            return np.array([i])
    return (-s).argsort(kind="stable")[:k]


def _default_score(H):
    """Frobenius norm of each candidate's correlation block."""
    return np.sqrt((H * H).sum(axis=(1, 2)))


class InfiniteFamily(BaseFamily):
    """Base of sampled families: ``sample`` + ``columns`` give ``price``.

    Subclasses implement ``_check_X(X)``, ``sample(k, rng)``,
    ``_columns(params, X) -> (n, k * group_size)`` and define ``group_size``.
    """

    group_size = 1
    sampled = True

    def fit(self, X):
        """Validate the family's parameters against the training inputs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs.

        Returns
        -------
        self : object
        """
        self._validate_params()
        X = self._checked(X)  # (remembered: pricing reads the same array)
        self.n_features_in_ = X.shape[1]
        return self

    def sample(self, k, rng):
        """``k`` candidate parameters drawn with ``rng`` (subclasses).

        Parameters
        ----------
        k : int
            Number of candidates.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        params : ndarray of shape (k, n_params)
        """
        raise _not_implemented(self, "sample(k, rng)")

    def _columns(self, params, X):
        # (a subclass without it stopped in "'NoCols' object has no attribute '_columns'")
        raise _not_implemented(self, "_columns(params, X)")

    def _check_X(self, X):
        return X

    def _checked(self, X):
        """``_check_X(X)``, once per array object.

        Pricing passes the same training array at every outer iteration
        (three calls each); validating it every time cost a tenth of a
        GrFL fit on a9a.  Weak references remember, per family, the last
        arrays that passed unchanged (outside the family's attributes, so
        pickles and model files do not see them); a new or converted array
        is still checked.
        """
        key = id(self)
        entry = _CHECKED.get(key)
        if entry is not None and entry[0]() is not self:
            entry = None  # a dead family's id reused
        if entry is not None:
            # (by the array's id, its reference then confirming it: no walk
            # over the remembered arrays, three calls per outer iteration)
            ref = entry[1].get(id(X))
            if ref is not None and ref() is X:
                return X
        Xc = self._check_X(X)
        if Xc is X:
            try:
                ref = weakref.ref(X)
            except TypeError:  # an object without weak references: check each time
                return Xc
            if entry is None:
                entry = (weakref.ref(self, lambda _, k=key: _CHECKED.pop(k, None)), {})
                _CHECKED[key] = entry
            # a few arrays, not one: a cross-validated path alternates
            # between its training and validation rows (oldest evicted first)
            arrays = entry[1]
            for k in [k for k, r in arrays.items() if r() is None or k == id(X)]:
                del arrays[k]
            while len(arrays) >= _N_REMEMBERED:
                del arrays[next(iter(arrays))]
            arrays[id(X)] = ref
        return Xc

    def columns(self, candidates, X):
        """Columns ``[phi_1(X), ..., phi_k(X)]`` of the candidates, groups contiguous.

        Parameters
        ----------
        candidates : Candidates or ndarray of shape (k, n_params)
            Candidate parameters.
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        block : ndarray of shape (n_samples, k * group_size)
        """
        params = np.atleast_2d(np.asarray(as_params(candidates), dtype=float))
        X = self._checked(X)
        if params.shape[0] == 0:
            return np.zeros((X.shape[0], 0))
        return self._columns(params, X)

    #: Whether ``_columns`` takes a ``dtype`` (float32 columns for ranking).
    float32_columns = False

    def _columns_norms(self, params, X, dtype=np.float64, sample_weight=None):
        """``_columns(params, X)`` (in ``dtype`` when :attr:`float32_columns`)
        and the (weighted) squared norms of its columns, summed in float64."""
        block = (self._columns(params, X, dtype) if dtype != np.float64
                 else self._columns(params, X))
        nrm2 = (np.einsum("ij,ij->j", block, block, dtype=float) if sample_weight is None
                else np.einsum("ij,ij,i->j", block, block, sample_weight))
        return block, nrm2

    def correlations(self, params, X, G, sample_weight=None, low_precision=False):
        """Correlations of the candidates' columns with ``G`` and the column norms.

        Parameters
        ----------
        params : ndarray of shape (k, n_params)
            Candidate parameters.
        X : array-like of shape (n_samples, n_features)
            Training inputs.
        G : ndarray of shape (n_samples, T)
            Loss gradients (one column per task, zero outside a task's rows).
        sample_weight : ndarray of shape (n_samples,), optional
            Row weights: norms are then :math:`\\sqrt{\\sum_i w_i \\phi_i^2}`,
            as on the data with rows repeated (``G`` is already weighted).
        low_precision : bool, default=False
            Evaluate the columns in float32 where the family can (relative
            errors near 1e-6, enough to rank candidates, not to decide on
            them); :meth:`ranks_in_float32` says where that is cheaper.

        Returns
        -------
        H : ndarray of shape (k, group_size, T)
            :math:`\\Phi_v' G` for unit-norm columns (paper 000, eq. (7)).
        norms : ndarray of shape (k, group_size)
            Euclidean norms of the raw columns on ``X``.
        """
        return self.normalize_correlations(
            *self.correlation_sums(params, X, G, sample_weight, low_precision))

    def correlation_sums(self, params, X, G, sample_weight=None, low_precision=False):
        """Raw correlations and squared norms of the candidates' columns.

        The sums over rows behind :meth:`correlations`, before the columns are
        made unit-norm: both add up over row blocks of ``X`` (so a row
        partitioned ``X`` is priced block by block and the sums reduced).

        Parameters
        ----------
        params : ndarray of shape (k, n_params)
            Candidate parameters.
        X : array-like of shape (n_samples, n_features)
            Training inputs (or a block of their rows).
        G : ndarray of shape (n_samples, T)
            Loss gradients on the same rows.
        sample_weight : ndarray of shape (n_samples,), optional
            Row weights of the squared norms.
        low_precision : bool, default=False
            As in :meth:`correlations`.

        Returns
        -------
        HG : ndarray of shape (k, group_size, T)
            :math:`\\Phi_v' G` for the raw columns.
        sq : ndarray of shape (k, group_size)
            Squared (weighted) norms of the raw columns.
        """
        X = self._checked(X)
        G = np.asarray(G, dtype=float)
        G = G[:, None] if G.ndim == 1 else G
        low = low_precision and self.float32_columns
        Gc = G.astype(np.float32) if low else G
        n, gs = X.shape[0], self.group_size
        k = params.shape[0]
        chunk = max(1, _CHUNK_ENTRIES // max(n * gs, 1))
        if k <= chunk:  # (one chunk: no copy into the output)
            return self._chunk_sums(params, X, Gc, low, sample_weight)
        H = np.empty((k, gs, G.shape[1]))
        sq = np.empty((k, gs))
        for s in range(0, k, chunk):
            HG, nrm2 = self._chunk_sums(params[s : s + chunk], X, Gc, low, sample_weight)
            H[s : s + len(HG)], sq[s : s + len(HG)] = HG, nrm2
        return H, sq

    def _chunk_sums(self, params, X, G, low_precision, sample_weight):
        """:meth:`correlation_sums` of one chunk of candidates (``G`` in float32
        with ``low_precision``): the columns' block, its product with ``G``."""
        gs = self.group_size
        block, nrm2 = self._columns_norms(params, X,
                                          np.float32 if low_precision else np.float64,
                                          sample_weight)
        c = nrm2.size // gs
        return (block.T @ G).reshape(c, gs, -1).astype(float, copy=False), nrm2.reshape(c, gs)

    def ranks_in_float32(self, X, n_tasks):
        """Whether pricing on ``X`` should rank in float32, then re-score the best exactly.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows priced on.
        n_tasks : int
            Columns of the gradient matrix.

        Returns
        -------
        bool
            :attr:`float32_columns` here; a family whose exact sums cost no
            more than its float32 ranking on ``X`` says ``False`` (see
            :class:`~kernlearn.families.RandomFourierFeatures`).
        """
        return self.float32_columns

    @staticmethod
    def normalize_correlations(HG, sq):
        """Correlations of unit-norm columns from :meth:`correlation_sums`.

        Parameters
        ----------
        HG : ndarray of shape (k, group_size, T)
            Raw correlations (overwritten).
        sq : ndarray of shape (k, group_size)
            Squared column norms.

        Returns
        -------
        H : ndarray of shape (k, group_size, T)
            Zero for an all-zero column.
        norms : ndarray of shape (k, group_size)
        """
        norms = np.sqrt(sq)
        # (the usual case: no all-zero column to mask; all() by count_nonzero,
        # without the reduction's call overhead)
        if np.count_nonzero(norms) == norms.size:
            HG /= norms[:, :, None]
            return HG, norms
        safe = np.where(norms > 0, norms, 1.0)
        HG /= safe[:, :, None]
        HG[norms == 0] = 0.0
        return HG, norms

    def price(self, grad, k=1, rng=None, exclude=None, X=None, n_sample=100,
              score=None, sample_weight=None, low_precision=False):
        """Best ``k`` of ``n_sample`` sampled candidates (paper 000, sec. 4.2).

        Parameters
        ----------
        grad : ndarray of shape (n_samples,) or (n_samples, T)
            Loss gradients with respect to the margins.
        k : int, default=1
            Number of candidates returned.
        rng : numpy.random.Generator, optional
            Source of the samples.
        exclude : ignored
            Sampled parameters repeat with probability zero.
        X : array-like of shape (n_samples, n_features)
            Training inputs (required).
        n_sample : int, default=100
            Number :math:`k_r` of sampled parameters.
        score : callable, optional
            ``score(H) -> (n_sample,)`` from the ``(n_sample, group_size, T)``
            correlation blocks; default the Frobenius norm.  Estimators pass
            the violation of conditions (7) and (10).
        sample_weight : ndarray of shape (n_samples,), optional
            Row weights of the column norms (see :meth:`correlations`).
        low_precision : bool, default=False
            Rank in float32 where the family can (see :meth:`correlations`);
            the caller then re-scores the returned candidates exactly.

        Returns
        -------
        candidates : Candidates
            ``extra["norms"]`` holds the columns' norms (for unit-norm
            scaling) and ``extra["H"]`` their correlation blocks.
        """
        if X is None:
            raise ValueError("price needs the training inputs X.")
        # (default_rng returns a Generator as it is; the test is cheaper)
        rng = rng if type(rng) is np.random.Generator else np.random.default_rng(rng)
        params = self.sample(n_sample, rng)
        H, norms = self.correlations(params, X, grad, sample_weight, low_precision)
        s = valid_scores((score or _default_score)(H), norms)
        order = top_k(s, k)
        return Candidates(params=params[order], scores=s[order],
                          group_size=self.group_size,
                          extra={"norms": norms[order], "H": H[order]})
