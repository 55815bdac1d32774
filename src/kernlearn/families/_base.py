"""The family contract: a pool of candidate columns, finite or infinite.

Column generation asks a family for the candidates that most violate the
optimality conditions of the current model.  ``grad`` below is the loss
gradient with respect to the margins, shape ``(n_samples,)`` or
``(n_samples, n_tasks)``; a candidate's *score* is the penalty's dual norm of
``Phi_v' grad`` (a group of columns ``Phi_v``), which pricing compares with the
regularisation level.

Required methods
----------------
fit(X) -> self
    Precompute what pricing needs (column norms, image shapes, ...).
price(grad, k, rng=None, exclude=None, X=None) -> Candidates
    The ``k`` most violating candidates (exact top-k for finite pools, best
    of sampled parameters for infinite ones), never one listed in
    ``exclude``; ``X`` is the training data for families that read it.
    Finite pools also report ``extra["sum_sq"]``, the sum of the squared
    scores of the top ``k`` of the whole pool (excluded candidates
    included): the conjugate term of FGM's dual bound.
columns(candidates, X) -> ndarray or sparse matrix (n_samples, n_columns)
    The columns of the given candidates evaluated on ``X``.
transform(X, kept) -> ndarray or sparse matrix
    Columns of the kept candidates on new data (same as ``columns``).
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._component import ComponentMixin


@dataclass
class Candidates:
    """Candidates returned by pricing.

    Attributes
    ----------
    params : ndarray
        One row per candidate: a feature index for finite pools, a parameter
        vector (direction, bandwidth, filter, ...) for infinite families.
    scores : ndarray of shape (n_candidates,)
        Violation measure of each candidate (dual norm of its scores).
    group_size : int
        Number of columns each candidate contributes.
    extra : dict
        Family-specific by-products of pricing (e.g. ``conjugate`` terms for a
        duality gap).
    """

    params: np.ndarray
    scores: np.ndarray
    group_size: int = 1
    extra: dict = None

    def __len__(self):
        return len(self.scores)


class BaseFamily(ComponentMixin):
    """Base class of candidate-column families; see the module docstring."""

    #: Whether the candidates are drawn at random (no exact pricing: not for FGM).
    sampled = False

    def fit(self, X):  # pragma: no cover - contract
        """Precompute what pricing needs on the training data.

        Parameters
        ----------
        X : array-like or sparse matrix
            Training inputs.

        Returns
        -------
        self : object
        """
        raise _not_implemented(self, 'fit(X)')

    def price(self, grad, k, rng=None, exclude=None, X=None):  # pragma: no cover - contract
        """Return the ``k`` most violating candidates.

        Parameters
        ----------
        grad : ndarray of shape (n_samples,) or (n_samples, n_tasks)
            Loss gradient with respect to the margins, times ``C``.
        k : int
            Number of candidates to return.
        rng : numpy.random.Generator, optional
            Randomness for infinite families.
        exclude : array-like or set of int, optional
            Candidate ids never to return (finite pools).
        X : array-like or sparse matrix, optional
            Training data, for families that price by reading it.

        Returns
        -------
        candidates : Candidates
        """
        raise _not_implemented(self, 'price(grad, k, rng=None, exclude=None, X=None)')

    def columns(self, candidates, X):  # pragma: no cover - contract
        """Evaluate the candidates' columns on ``X``.

        Parameters
        ----------
        candidates : Candidates or ndarray of params
            Which columns.
        X : array-like or sparse matrix
            Inputs.

        Returns
        -------
        block : ndarray or sparse matrix of shape (n_samples, n_columns)
        """
        raise _not_implemented(self, 'columns(candidates, X)')

    def transform(self, X, kept):
        """Columns of the kept candidates on new data.

        Parameters
        ----------
        X : array-like or sparse matrix
            Inputs.
        kept : ndarray
            Parameters of the kept candidates.

        Returns
        -------
        block : ndarray or sparse matrix
        """
        return self.columns(kept, X)

    def describe(self, ids, input_features=None):
        """Names of virtual feature ids, for ``get_feature_names_out``.

        Families whose virtual ids are blocks of ``width_`` columns per input
        feature name column ``c`` of feature ``j`` as ``"x<j>[<c>]"``;
        otherwise ``"<family><id>"``.

        Parameters
        ----------
        ids : array-like of int
            Virtual feature ids.
        input_features : array-like of str, optional
            Names of the input features (default ``x0, x1, ...``).

        Returns
        -------
        names : list of str
        """
        ids = np.asarray(ids, dtype=np.int64)
        width = getattr(self, "width_", None)
        if width is None:
            prefix = type(self).__name__.lower()
            return [f"{prefix}{v}" for v in ids]
        names = input_feature_names(input_features, getattr(self, "n_features_", None))
        return [f"{names[j]}[{c}]" for j, c in zip(*np.divmod(ids, width))]

    def input_incidence(self, ids):
        """Which input features each virtual id is computed from.

        Families whose virtual ids are blocks of ``width_`` columns per input
        feature read input ``id // width_``; other families override this or
        have no per-input reading (their columns mix every input).

        Parameters
        ----------
        ids : array-like of int
            Virtual feature ids.

        Returns
        -------
        incidence : sparse matrix of shape (len(ids), n_features_)
            One where the column of the id reads the input feature.

        Raises
        ------
        NotImplementedError
            If the family's columns are not functions of a few inputs.
        """
        width = getattr(self, "width_", None)
        if width is None:
            raise NotImplementedError(
                f"{type(self).__name__}'s columns are not computed from single input "
                "features.")
        ids = np.asarray(ids, dtype=np.int64)
        return incidence_matrix(np.arange(ids.size), ids // width, ids.size,
                                self.n_features_)


def _not_implemented(family, signature):
    # (a bare NotImplementedError() named neither the family nor the method)
    return NotImplementedError(
        f"{type(family).__name__} does not implement {signature}, which the family "
        "contract requires (doc/extending.md, 'A family').")


def missing_methods(family, names):
    """The methods of ``names`` that ``family`` lacks or leaves at :class:`BaseFamily`'s stub.

    Parameters
    ----------
    family : object
        A family instance.
    names : iterable of str
        Method names of the contract a caller needs.

    Returns
    -------
    missing : list of str
        In the order of ``names``.
    """
    return [m for m in names if not callable(getattr(family, m, None))
            or getattr(type(family), m, None) is getattr(BaseFamily, m, object())]


def check_finite_family(pool):
    """Refuse a family FGM cannot price exactly (a sampled one such as Fourier).

    Parameters
    ----------
    pool : family object
        The estimator's ``family``.

    Raises
    ------
    TypeError
        If ``pool`` lacks exact pricing over the training data: a sampled
        family, or one that does not implement (or leaves at
        :class:`BaseFamily`'s stub) a method of the finite contract, named.
    """
    missing = missing_methods(pool, ("fit", "price", "columns", "column_indices",
                                     "raw_columns"))
    if not missing:
        return
    name = type(pool).__name__
    if getattr(pool, "sampled", False):
        raise TypeError(
            f"family={name}() cannot be used by FGM: FGM needs a finite family with "
            "exact pricing over the training data (FeaturePool, PolynomialPool, "
            "AdditiveKernelExpansion, IntersectionKernelFeatures). Sampled families such "
            "as random Fourier features are for InfiniteFeatureClassifier / "
            "InfiniteFeatureRegressor.")
    # (a user's family without raw_columns got the message above, naming no method)
    raise TypeError(
        f"family={name}() cannot be used by FGM: FGM needs a finite family with exact "
        f"pricing over the training data, and {name} does not implement "
        f"{', '.join(missing)} (the contract: doc/extending.md, 'A family').")


def incidence_matrix(rows, inputs, n_ids, n_features):
    """``(n_ids, n_features)`` 0/1 CSR matrix with ones at ``(rows, inputs)``.

    Parameters
    ----------
    rows, inputs : ndarray of int
        Positions of the ones (a repeated pair counts once).
    n_ids, n_features : int
        Shape.

    Returns
    -------
    incidence : scipy.sparse.csr_matrix
    """
    mat = sp.csr_matrix((np.ones(len(rows)), (rows, inputs)), shape=(n_ids, n_features))
    mat.data[:] = 1.0  # duplicates (x_j * x_j) were summed
    return mat


def input_feature_names(input_features, n_features):
    """``input_features`` as an array, or ``x0, x1, ...`` when not given.

    Parameters
    ----------
    input_features : array-like of str or None
        Names of the input features.
    n_features : int
        Number of input features (used when ``input_features`` is None).

    Returns
    -------
    names : ndarray of str
    """
    if input_features is not None:
        return np.asarray(input_features, dtype=object)
    return np.asarray([f"x{j}" for j in range(n_features)], dtype=object)


def _top_k(scores, k):
    """Indices of the ``k`` largest scores, largest first (stable on ties)."""
    k = min(k, scores.size)
    if k <= 0:
        return np.zeros(0, dtype=int)
    idx = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
    return idx[np.lexsort((idx, -scores[idx]))]


def top_candidates(scores, k, exclude=None, group_size=1):
    """The ``k`` best of a full score vector, skipping ``exclude`` (finite pools).

    Parameters
    ----------
    scores : ndarray of shape (n_candidates,)
        Score of every candidate (candidate id = position).
    k : int
        Number of candidates to return.
    exclude : array-like or set of int, optional
        Candidate ids never returned.
    group_size : int, default=1
        Columns per candidate.

    Returns
    -------
    candidates : Candidates
        Largest first (ties by id); ``extra["sum_sq"]`` is the sum of the
        squared top-``k`` scores over all candidates, excluded ones included.
    """
    ex = _exclude_array(exclude)
    idx = _top_k(scores, k + ex.size)
    return drop_excluded(idx, scores[idx], k, ex, group_size)


def drop_excluded(ids, scores, k, exclude=None, group_size=1):
    """Candidates from a best-first list of at least ``k + len(exclude)`` entries.

    Parameters
    ----------
    ids : ndarray of int
        Candidate ids, best first.
    scores : ndarray
        Their scores.
    k : int
        Number of candidates to return.
    exclude : array-like or set of int, optional
        Candidate ids never returned.
    group_size : int, default=1
        Columns per candidate.

    Returns
    -------
    candidates : Candidates
        The first ``k`` ids not excluded; ``extra["sum_sq"]`` the sum of the
        first ``k`` squared scores of the unfiltered list.
    """
    ids, scores = np.asarray(ids), np.asarray(scores, dtype=float)
    sum_sq = float((scores[:k] ** 2).sum())
    ex = _exclude_array(exclude)
    if ex.size:
        keep = ~np.isin(ids, ex)
        ids, scores = ids[keep], scores[keep]
    return Candidates(ids[:k], scores[:k], group_size=group_size, extra={"sum_sq": sum_sq})


def _exclude_array(exclude):
    if exclude is None:
        return np.zeros(0, dtype=np.int64)
    if isinstance(exclude, (set, frozenset)):
        exclude = sorted(exclude)
    ex = np.asarray(exclude, dtype=np.int64).ravel()
    return ex


def check_ids(ids, upper, what="feature id"):
    """``ids`` as int64, refusing any outside ``[0, upper)`` (no wrap-around).

    Parameters
    ----------
    ids : array-like of int
        Ids to check.
    upper : int
        Number of valid ids.
    what : str, default="feature id"
        Name used in the error message.

    Returns
    -------
    ids : ndarray of int64
    """
    arr = np.asarray(ids)
    if arr.size and arr.dtype.kind not in "iu":
        if arr.dtype.kind != "f" or not np.all(arr == np.round(arr)):
            raise ValueError(f"{what}s must be integers.")
    arr = arr.astype(np.int64).ravel()
    bad = arr[(arr < 0) | (arr >= upper)]
    if bad.size:
        raise ValueError(f"{what} {int(bad[0])} is outside [0, {upper - 1}] "
                         "(negative indices are not read from the end).")
    return arr


def as_params(candidates):
    """Parameters of ``candidates`` whether given as Candidates or raw array."""
    return candidates.params if isinstance(candidates, Candidates) else np.asarray(candidates)
