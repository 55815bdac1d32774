"""Finite pools of columns of a data matrix: single features or feature groups.

FGM's worst-case analysis (paper 002, Algorithm 2) scores every feature (or
group) by :math:`c_j = \\lambda_j^2 \\|X_{G_j}'u\\|^2` with
:math:`u = \\alpha \\odot y` and keeps the ``B`` largest.  The scan can run
over column chunks so that a memory-mapped or very wide ``X`` is never
materialised, keeping only the running top-``B`` (sec. 5.3.1).

``X`` may be an in-memory matrix or any
:class:`~kernlearn.partitioned.RowPartitioned` (row chunks read out of core,
or a Dask array's partitions): the pool reads it only through that interface.
"""

import warnings
from numbers import Integral

import numpy as np
import scipy.sparse as sp

from ..partitioned import as_row_partitioned
from ..utils._sparse import canonical_sparse
from ..utils._warnings import user_stacklevel
from ._base import (BaseFamily, _exclude_array, _top_k, as_params, check_ids, drop_excluded,
                    input_feature_names, top_candidates)


class FeaturePool(BaseFamily):
    """The columns of ``X`` as candidates, singly or in (overlapping) groups.

    Parameters
    ----------
    groups : list of array-like of int, optional
        Feature groups (may overlap: a feature in two groups is duplicated,
        paper 002 sec. 3.2).  ``None`` means one group per feature.
    tree : bool, default=False
        The groups form a tree (Definition 1 of paper 002: any two groups are
        disjoint or nested), listed in any order; pricing then prunes
        sub-trees by Proposition 2.
    feature_scaling : bool, default=True
        Scale feature ``j`` by :math:`\\lambda_j = \\sqrt{n}/\\|f_j\\|` (unit
        root-mean-square columns; groups also by :math:`1/\\sqrt{|G|}`) so that
        data scale and group size do not bias selection.  Unit RMS rather than
        unit norm keeps ``C`` on LIBLINEAR's scale: ``C`` weighs a sum of ``n``
        losses, and the scaled columns have the magnitude of standardised data.
    chunk_size : int, optional
        Score at most this many columns at a time (bounded memory).
    group_size_weights : bool or None, default=None
        Weigh each group by :math:`1/\\sqrt{|G|}`; ``None`` follows
        ``feature_scaling``.  The estimators always weigh them: group size is
        not a matter of units, so ``standardize=False`` on standardised data
        gives the model ``standardize=True`` gives on the raw data.
    screening : bool, default=True
        With groups: skip the :math:`X_G'u` work of groups that provably
        cannot enter the top ``B``.  Proposition 2 of paper 002 prunes a
        (sub-)tree when :math:`\\lambda_{\\max}\\|\\omega_G\\| < c_B^{\\min}`,
        but :math:`\\omega_G = X_G'u` is what costs; here the bound is taken
        from a reference pricing :math:`(u_0, \\omega^0)` without touching
        ``X``: :math:`\\|\\omega_G\\| \\le \\|\\omega^0_G\\| + \\|\\Lambda_G X_G\\|_F
        \\|u - u_0\\|`.  Groups are scored exactly in decreasing order of their
        bound until the bound falls below the current :math:`c_B^{\\min}`: the
        result is the exact top ``B``.  When more than half of the columns
        would be needed, all are scored and the reference is renewed.

    Attributes
    ----------
    scale_ : ndarray of shape (n_features,)
        Per-feature scaling :math:`\\lambda_j` (0 for all-zero columns).
    n_samples_ : int or float
        Rows of the data the scaling was computed on (their total weight
        when fitted with ``sample_weight``).
    n_features_ : int
        Input columns seen in :meth:`fit` (the candidates).
    n_column_evals_ : int
        Columns :math:`f_j'u` computed by the last :meth:`price`.
    """

    def __init__(self, groups=None, tree=False, feature_scaling=True, chunk_size=None,
                 screening=True, group_size_weights=None):
        self.groups = groups
        self.tree = tree
        self.feature_scaling = feature_scaling
        self.chunk_size = chunk_size
        self.screening = screening
        self.group_size_weights = group_size_weights

    @staticmethod
    def _constraints():
        from sklearn.utils._param_validation import Interval

        return {"groups": [list, tuple, None], "tree": ["boolean"],
                "feature_scaling": ["boolean"],
                "chunk_size": [Interval(Integral, 1, None, closed="left"), None],
                "screening": ["boolean"], "group_size_weights": ["boolean", None]}

    def fit(self, X, sample_weight=None, scale=None):
        """Compute the feature scaling on the training data.

        Parameters
        ----------
        X : array-like, sparse matrix or RowPartitioned of shape (n_samples, n_features)
            Training data.
        sample_weight : ndarray of shape (n_samples,), optional
            Row weights: the root-mean-square is then the weighted one, so that
            integer weights scale exactly as repeated rows do.
        scale : ndarray of shape (n_features,), optional
            With ``feature_scaling``: column scales :math:`s_j > 0` to use
            instead of the root-mean-square, :math:`\\lambda_j = 1/s_j` (the
            estimators' input standardisation).

        Returns
        -------
        self : FeaturePool
        """
        self._validate_params()
        # (the squared norms read the stored values: duplicates summed first)
        rows = as_row_partitioned(canonical_sparse(X))
        if sample_weight is None:
            return self._setup(rows.column_sq_norms(), X.shape[0], scale)
        w = np.asarray(sample_weight, dtype=float)
        return self._setup(rows.column_sq_norms(w), float(np.sum(w)), scale)

    def _setup(self, sq, n_samples, scale=None):
        """Scaling and group bookkeeping from the squared column norms."""
        n_features = len(sq)
        self.n_samples_ = n_samples
        if self.feature_scaling and scale is not None:
            scale = np.asarray(scale, dtype=float)
            if scale.shape != (n_features,) or not np.all(scale > 0):
                raise ValueError(f"scale must hold {n_features} positive numbers.")
            self.scale_ = 1.0 / scale
        elif self.feature_scaling:
            # Unit root-mean-square columns: lambda_j = sqrt(n) / ||f_j||.
            ms = sq / self.n_samples_ if self.n_samples_ > 0 else sq
            self.scale_ = np.where(ms > 0, 1.0 / np.sqrt(np.where(ms > 0, ms, 1)), 0.0)
        else:
            self.scale_ = np.ones(n_features)
        self.n_features_ = n_features
        self._groups = None
        self._reference = None
        self.n_column_evals_ = 0
        if self.groups is not None:
            self._groups = _check_groups(self.groups)
            flat = np.concatenate(self._groups)
            if flat.min() < 0 or flat.max() >= n_features:
                raise ValueError(
                    f"groups index features outside [0, {n_features - 1}]."
                )
            outside = n_features - np.unique(flat).size
            if outside:
                warnings.warn(
                    f"{outside} of {n_features} features are in no group and can never be "
                    "selected; list them as groups of their own to make them candidates.",
                    UserWarning, stacklevel=user_stacklevel())
            size_w = 1.0 / np.sqrt([g.size for g in self._groups])
            weigh = (self.feature_scaling if self.group_size_weights is None
                     else self.group_size_weights)
            self._group_weight = size_w if weigh else np.ones(len(self._groups))
            if self.tree:
                self._tree_children = _tree_children(self._groups)
            self._flat = flat
            self._gptr = np.concatenate([[0], np.cumsum([g.size for g in self._groups])])
            # ||Lambda_G X_G||_F, an upper bound of the spectral norm (screening)
            self._group_sigma = np.sqrt(_group_sums(self.scale_**2 * sq, flat, self._gptr))
        return self

    @property
    def n_virtual_(self):
        """Width of the model's feature space (the columns of ``X``)."""
        return self.n_features_

    @property
    def n_candidates(self):
        """Number of candidates (features or groups)."""
        return self.n_features_ if self._groups is None else len(self._groups)

    def feature_scores(self, u, X):
        """Scaled correlations :math:`\\lambda_j f_j' u` of every feature (chunked).

        ``u`` of shape ``(n,)`` gives ``(n_features,)``; ``(n, K)`` (one dual
        vector per output) gives ``(n_features, K)``.
        """
        out = as_row_partitioned(X).rmatvec(u, step=self.chunk_size)
        return out * self.scale_.reshape((-1,) + (1,) * (out.ndim - 1))

    def price(self, grad, k, rng=None, exclude=None, X=None):
        """Top-``k`` features or groups by :math:`\\|\\lambda X_G' u\\|` with ``u = -grad``.

        Parameters
        ----------
        grad : ndarray of shape (n_samples,) or (n_samples, K)
            ``C`` times the loss gradient in the margins (``u = -grad`` is
            FGM's :math:`\\alpha \\odot y`); with ``K`` outputs a feature's
            score is the norm of its ``K`` correlations (shared selection).
        k : int
            Budget ``B``.
        rng : ignored
            Finite pools are priced exactly.
        exclude : array-like or set of int, optional
            Feature (or group) ids never returned (FGM's budget mode: those
            active or declined).
        X : array-like, sparse matrix or RowPartitioned
            Training data (required).

        Returns
        -------
        candidates : Candidates
            ``params`` are feature (or group) indices; ``scores`` their
            violation; ``extra["sum_sq"]`` the sum of the top-``k`` squared
            scores of the whole pool (excluded ones included), i.e. twice the
            conjugate term of the FGM dual.
        """
        # n-sized vectors held by a Dask cluster stay there (RowFutures)
        u = -grad if getattr(grad, "is_row_futures", False) else -np.asarray(grad, dtype=float)
        ex = _exclude_array(exclude)
        if self._groups is not None and self.screening and self._reference is not None:
            out = self._screened_top_k(u, k + ex.size, X)
            if out is not None:
                return drop_excluded(*out, k, ex)
        z = self.feature_scores(u, X)
        self.n_column_evals_ = self.n_features_
        if self._groups is not None and self.screening:
            self._reference = (u.copy(), z)
        if self._groups is None:
            scores = np.abs(z) if z.ndim == 1 else np.sqrt((z * z).sum(1))
        elif self.tree:
            idx, scores = _tree_top_k(z, self._groups, self._group_weight,
                                      self._tree_children, k + ex.size)
            return drop_excluded(idx, scores, k, ex)
        else:
            scores = np.array([np.linalg.norm(z[g]) for g in self._groups]) * self._group_weight
        return top_candidates(scores, k, ex)

    def _screened_top_k(self, u, k, X):
        """Exact top-``k`` groups scoring only those whose bound can beat :math:`c_B^{\\min}`.

        Returns ``None`` (score everything) when more than half of the columns
        would be needed.
        """
        u0, z0 = self._reference
        if u0.shape != u.shape:
            return None
        zz0 = z0 * z0 if z0.ndim == 1 else (z0 * z0).sum(1)
        drift = float(np.linalg.norm(u - u0))
        w = self._group_weight
        bound = w * (np.sqrt(_group_sums(zz0, self._flat, self._gptr))
                     + self._group_sigma * drift)
        # a bound that is not a number bounds nothing: such a group is scored
        # (NaN compares false with c_min, and the group was never priced again)
        bound[~(bound >= 0)] = np.inf
        order = np.argsort(-bound, kind="stable")
        sizes_sorted = np.diff(self._gptr)[order]
        z = np.zeros_like(z0)
        done = np.zeros(self.n_features_, dtype=bool)
        exact = np.full(len(self._groups), -1.0)
        c_min, pos, batch = -np.inf, 0, max(k, 1)
        while pos < order.size and bound[order[pos]] >= c_min:
            nxt = order[pos : pos + batch]
            need = np.unique(np.concatenate([self._groups[g] for g in nxt]))
            need = need[~done[need]]
            if done.sum() + need.size > self.n_features_ // 2:
                return None
            if need.size:
                cols = as_row_partitioned(X).rmatvec_columns(need, u)
                z[need] = cols * self.scale_[need].reshape((-1,) + (1,) * (u.ndim - 1))
                done[need] = True
            exact[nxt] = w[nxt] * np.array([np.linalg.norm(z[self._groups[g]]) for g in nxt])
            if (exact >= 0).sum() >= k:
                c_min = np.partition(exact, exact.size - k)[exact.size - k]
                # Groups still to score have bound >= c_min (which only grows):
                # give up early, before gathering columns, if they are too many.
                n_left = np.searchsorted(-bound[order], -c_min, side="right")
                if sizes_sorted[:n_left].sum() > self.n_features_ // 2:
                    return None
            pos, batch = pos + nxt.size, 2 * batch
        self.n_column_evals_ = int(done.sum())
        idx = _top_k(exact, k)
        idx = idx[exact[idx] >= 0]
        return idx, exact[idx]

    def column_indices(self, candidates):
        """Feature indices (with duplicates for overlapping groups) of candidates."""
        params = check_ids(as_params(candidates), self.n_candidates, "candidate id")
        if self._groups is None:
            return params, self.scale_[params]
        feats = np.concatenate([self._groups[g] for g in params])
        weights = np.concatenate(
            [self.scale_[self._groups[g]] * self._group_weight[g] for g in params]
        )
        return feats, weights

    def raw_columns(self, ids, X):
        """Unscaled columns of feature ids (the model's inputs)."""
        # (a BSR or DIA matrix cannot be indexed: canonical_sparse makes it CSR)
        return as_row_partitioned(canonical_sparse(X)).take_columns(
            check_ids(ids, self.n_features_))

    def describe(self, ids, input_features=None):
        """Names of feature ids: the input features' names.

        Parameters
        ----------
        ids : array-like of int
            Feature ids.
        input_features : array-like of str, optional
            Names of the input features (default ``x0, x1, ...``).

        Returns
        -------
        names : list of str
        """
        names = input_feature_names(input_features, self.n_features_)
        return [str(names[j]) for j in np.asarray(ids, dtype=int)]

    def columns(self, candidates, X):
        feats, weights = self.column_indices(candidates)
        block = self.raw_columns(feats, X)
        if sp.issparse(block):
            return sp.csc_matrix(block @ sp.diags(weights))
        return np.asarray(block) * weights


def _check_groups(groups):
    """Groups as integer index arrays; scalars and non-integers refused."""
    if isinstance(groups, np.ndarray) and groups.ndim == 2:
        groups = list(groups)
    if not isinstance(groups, (list, tuple)) or len(groups) == 0:
        raise ValueError("groups must be a non-empty list of lists of feature indices.")
    out = []
    for i, g in enumerate(groups):
        if np.ndim(g) != 1 or isinstance(g, (str, bytes)):
            raise ValueError(
                f"groups must be a list of lists of feature indices; group {i} is "
                f"{g!r} (write groups=[[1]] for one group holding feature 1).")
        arr = np.asarray(g)
        if arr.size == 0:
            raise ValueError(f"group {i} is empty.")
        if arr.dtype.kind not in "iu":
            if arr.dtype.kind != "f" or not np.all(arr == np.round(arr)):
                raise ValueError(f"group {i} holds non-integer feature indices.")
        values, counts = np.unique(arr, return_counts=True)
        if counts.max() > 1:
            # (its norm would count the feature twice: another penalty, without a word)
            raise ValueError(f"group {i} lists feature {values[counts > 1][0]} more than "
                             "once.")
        out.append(arr.astype(np.int64))
    return out


def _group_sums(values, flat, gptr):
    """Sum of ``values`` over each group (``flat`` features, boundaries ``gptr``)."""
    csum = np.concatenate([[0.0], np.cumsum(values[flat])])
    return csum[gptr[1:]] - csum[gptr[:-1]]


def _tree_children(groups):
    """Children lists of a tree of groups (Definition 1), in any listing order.

    Groups are visited from the largest to the smallest (ties in listing
    order), each feature remembering the smallest group visited so far that
    holds it: a group's parent is then the one group its features share, and
    a group whose features have different owners overlaps a group it is not
    nested in.  :math:`O(\\sum_G |G| + n_G \\log n_G)`.
    """
    sizes = np.array([g.size for g in groups])
    order = np.lexsort((np.arange(len(groups)), -sizes))
    n_features = int(max(g.max() for g in groups)) + 1
    owner = np.full(n_features, -1, dtype=np.int64)
    parent = np.full(len(groups), -1, dtype=np.int64)
    for h in order.tolist():
        g = groups[h]
        if np.unique(g).size != g.size:
            raise ValueError(f"group {h} lists a feature twice; tree groups must be sets.")
        owners = np.unique(owner[g])
        if owners.size > 1:
            other = int(owners[owners >= 0][0]) if np.any(owners >= 0) else int(owners[0])
            raise ValueError(
                f"groups {other} and {h} overlap without nesting: not a tree "
                "(Definition 1: any two groups are disjoint or one contains the other)."
            )
        parent[h] = owners[0]
        owner[g] = h
    children = [[] for _ in groups]
    roots = []
    for h in range(len(groups)):
        (children[parent[h]] if parent[h] >= 0 else roots).append(h)
    return {"children": children, "roots": roots, "order": order}


def _tree_top_k(z, groups, weight, tree, k):
    """Top-``k`` groups of a tree, pruning sub-trees by Proposition 2 of paper 002."""
    children = tree["children"]
    # Largest weight in each sub-tree bounds its descendants' scores (children
    # before parents: the reverse of the largest-first visiting order).
    wmax = weight.copy()
    for g in reversed(tree["order"].tolist()):
        for c in children[g]:
            wmax[g] = max(wmax[g], wmax[c])
    best_idx, best = [], []
    stack = list(reversed(tree["roots"]))
    while stack:
        g = stack.pop()
        norm = np.linalg.norm(z[groups[g]])
        cmin = min(best) if len(best) >= k else -np.inf
        if wmax[g] * norm < cmin:
            continue  # neither g nor any descendant can enter the top k
        score = weight[g] * norm
        if len(best) < k:
            best_idx.append(g)
            best.append(score)
        elif score > cmin:
            j = int(np.argmin(best))
            best_idx[j], best[j] = g, score
        stack.extend(reversed(children[g]))
    order = np.lexsort((best_idx, -np.asarray(best)))
    return np.asarray(best_idx, dtype=int)[order], np.asarray(best)[order]
