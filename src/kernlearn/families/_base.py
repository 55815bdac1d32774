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
price(grad, k, rng=None, exclude=None) -> Candidates
    The ``k`` most violating candidates (exact top-k for finite pools, best
    of sampled parameters for infinite ones).
columns(candidates, X) -> ndarray or sparse matrix (n_samples, n_columns)
    The columns of the given candidates evaluated on ``X``.
transform(X, kept) -> ndarray or sparse matrix
    Columns of the kept candidates on new data (same as ``columns``).
"""

from dataclasses import dataclass

import numpy as np

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
        raise NotImplementedError

    def price(self, grad, k, rng=None, exclude=None):  # pragma: no cover - contract
        """Return the ``k`` most violating candidates.

        Parameters
        ----------
        grad : ndarray of shape (n_samples,) or (n_samples, n_tasks)
            Loss gradient with respect to the margins, times ``C``.
        k : int
            Number of candidates to return.
        rng : numpy.random.Generator, optional
            Randomness for infinite families.
        exclude : array-like, optional
            Candidates not to return again (finite pools).

        Returns
        -------
        candidates : Candidates
        """
        raise NotImplementedError

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
        raise NotImplementedError

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


def as_params(candidates):
    """Parameters of ``candidates`` whether given as Candidates or raw array."""
    return candidates.params if isinstance(candidates, Candidates) else np.asarray(candidates)
