"""Refuse a kernel listed twice in a multiple kernel learner's list.

Two copies of one kernel do not split its weight harmlessly: under an
:math:`\\ell_p` constraint on the kernel weights with :math:`p > 1` the two
copies together carry up to :math:`2^{1 - 1/p}` times the weight one copy
can, so the repeated kernel is favoured over the others and the model
changes without a word (and with the simplex constraint the reported weights
halve).  A repeated kernel is almost always a slip (a grid of widths with a
value twice, ``"rbf"`` beside ``("rbf", {"gamma": "scale"})``), so it is
refused with the positions of both copies; to favour a kernel, scale it.
"""

import hashlib

import numpy as np


def _columns_key(cols, n_features, named):
    """The columns a kernel sees as a tuple of indices (``None``: all)."""
    if cols is None:
        idx = np.arange(n_features)
    elif isinstance(cols, slice):
        idx = np.arange(n_features)[cols]
    else:
        idx = np.asarray(cols)
        idx = np.flatnonzero(idx) if idx.dtype == bool else idx.astype(np.int64).ravel()
    # the named kernels depend on the set of columns, not their order
    return tuple(sorted(idx.tolist()) if named else idx.tolist())


def _params_key(params):
    # repr: a resolved width is a float (exact in repr); arrays are not hashable
    return tuple(sorted((k, repr(v)) for k, v in params.items()))


def refuse_repeated_kernels(specs, params, n_features, n_given=None):
    """Raise ``ValueError`` if two kernels of a list are the same kernel.

    Parameters
    ----------
    specs : list of tuple
        ``(kernel, params, columns)`` as :func:`kernlearn.kernels.parse_specs`
        returns them.
    params : list of dict
        Each kernel's resolved parameters (``gamma="scale"`` and ``"mean"``
        replaced by their values), so that ``"rbf"`` and
        ``("rbf", {"gamma": "scale"})`` are found equal.
    n_features : int
        Columns of the training inputs (to compare column views).
    n_given : int, optional
        Number of kernels the user listed; the ones after them were appended
        (the constant kernel of ``fit_intercept=True``).
    """
    seen = {}
    for j, ((kernel, _, cols), p) in enumerate(zip(specs, params)):
        key = (kernel, _params_key(p), _columns_key(cols, n_features, isinstance(kernel, str)))
        i = seen.setdefault(key, j)
        if i != j:
            _raise(specs, i, j, n_given)


def refuse_repeated_grams(grams):
    """Raise ``ValueError`` if two precomputed Gram matrices are equal.

    Parameters
    ----------
    grams : sequence of ndarray of shape (n, n)
    """
    seen = {}
    for j, K in enumerate(grams):
        K = np.asarray(K)
        # a fingerprint of the diagonal and first row (O(n), not the n^2 entries);
        # equal fingerprints are then compared in full
        probe = np.concatenate([np.diagonal(K), K[0]]) if K.ndim == 2 and K.size else K
        digest = hashlib.blake2b(np.ascontiguousarray(probe).tobytes(),
                                 digest_size=16).digest()
        for i in seen.setdefault((K.shape, digest), []):
            if np.array_equal(grams[i], K):
                raise ValueError(
                    f"X[{i}] and X[{j}] are the same Gram matrix: a kernel listed twice "
                    "takes a larger share of the kernel weights (under the p-norm) and "
                    "changes the model; list each kernel once.")
        seen[(K.shape, digest)].append(j)


def _raise(specs, i, j, n_given):
    def name(k):
        kernel = specs[k][0]
        return repr(kernel if isinstance(kernel, str) else getattr(kernel, "__name__", kernel))

    appended = n_given is not None and j >= n_given
    raise ValueError(
        f"kernels[{i}] ({name(i)}) and "
        + ("the constant kernel that fit_intercept=True appends" if appended
           else f"kernels[{j}] ({name(j)})")
        + " are the same kernel (same parameters, once resolved, and columns): a kernel "
        "listed twice takes a larger share of the kernel weights (under the p-norm) "
        "and changes the model; list each kernel once"
        + (", or set fit_intercept=False." if appended else "."))
