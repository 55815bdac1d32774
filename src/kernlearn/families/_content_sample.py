r"""A seeded sample of rows keyed by their content, not their position.

SLKL samples ``M`` of the ``n`` training rows as its candidate columns.  Drawn
by position (``rng.choice(n, M)``), the same rows in another order give other
centres: sorting a file differently moved the model as a change of seed does.
Here every row gets a pseudo-random 64-bit key (splitmix64) computed from its
inputs, its occurrence number among rows of equal inputs, and the seed; the
``M`` rows of smallest key are the sample.  Distinct rows get independent keys,
so for one seed the sample is a uniform draw without replacement, and a
permutation of the rows gives the same rows.

A value enters the key as its rank among its column's distinct values: an
increasing map of a column (the standardisation, its round-off in another row
order, float32 copies, a sparse column scaled where a dense one is also
centred) keeps the sample.  A column is known by its content, not its place
(its salt hashes its number of distinct values and a 16-bin histogram of
them), so columns in another order keep it too.  The targets and weights are
not hashed: a model fitted on one output of a multi-output problem samples as
the whole problem does.  They order rows of equal inputs instead, before their
positions (rows equal in all of them are interchangeable); the occurrence
number keeps copies of a row from being all taken together or all left out.
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["content_sample"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
#: bins of the histogram that tells columns apart (coarse: round-off moves a
#: value across a bin edge about never)
_BINS = 16


def _mix(z):
    """splitmix64's finaliser of ``z + golden`` (uint64, wrapping)."""
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = z + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _salt(n_distinct, counts):
    """A column's salt from its number of distinct values and bin counts."""
    h = _mix(np.asarray(n_distinct, dtype=np.uint64))
    for b in range(counts.shape[1]):
        with np.errstate(over="ignore"):
            h = _mix(h + counts[:, b].astype(np.uint64))
    return h


def _bins(values, lo, hi):
    """The histogram bin of each value between its column's ``lo`` and ``hi``."""
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.clip(((values - lo) / span * _BINS).astype(np.int64), 0, _BINS - 1)


def _dense_row_hashes(A):
    n, d = A.shape
    rows = np.zeros(n, dtype=np.uint64)
    rank = np.empty(n, dtype=np.int64)
    for j in range(d):  # (a column at a time: no n x d temporaries)
        col = np.ascontiguousarray(A[:, j])
        order = np.argsort(col)
        s = col[order]
        new = s[1:] != s[:-1]
        if not new.any():
            continue  # (a constant column adds nothing: as unstored sparse ones)
        rank[order] = np.r_[0, np.cumsum(new)]
        counts = np.bincount(_bins(col, s[0], s[-1]), minlength=_BINS)
        salt = _salt(np.count_nonzero(new) + 1, counts[None])[0]
        with np.errstate(over="ignore"):
            rows += _mix(_mix(rank.astype(np.uint64)) ^ salt)
    return rows


def _sparse_row_hashes(A):
    """As :func:`_dense_row_hashes` of ``A.toarray()``, from the stored values."""
    A = sp.csr_matrix(A, dtype=float)
    A.sum_duplicates()
    n = A.shape[0]
    # only the columns with stored values (the others are constant: nothing to
    # add, and 2,000,000 of them must not cost memory per column)
    used = np.bincount(A.indices, minlength=A.shape[1]) > 0
    stored_cols = (np.cumsum(used) - 1)[A.indices]
    d = int(np.count_nonzero(used))
    implicit = n - np.bincount(stored_cols, minlength=d)  # (zeros not stored)
    # one zero entry per column with implicit zeros, ranked with the stored ones
    zcols = np.flatnonzero(implicit > 0)
    cols = np.concatenate([stored_cols, zcols])
    vals = np.concatenate([A.data, np.zeros(len(zcols))])
    order = np.argsort(vals)  # (by value, then stably by column: lexsort's order)
    order = order[np.argsort(cols[order], kind="stable")]
    c, v = cols[order], vals[order]
    start = np.r_[True, c[1:] != c[:-1]]
    new = start | np.r_[True, v[1:] != v[:-1]]
    dense = np.cumsum(new)
    first = np.maximum.accumulate(np.where(start, np.arange(len(c)), 0))
    rank = np.empty(len(c), dtype=np.int64)
    rank[order] = dense - dense[first]
    n_distinct = np.bincount(c[new], minlength=d)
    ends = np.r_[np.flatnonzero(start)[1:], len(c)] - 1
    lo, hi = v[start], v[ends]  # (each column's smallest and largest value)
    b = _bins(vals, lo[cols], hi[cols])
    weight = np.concatenate([np.ones(len(A.data), dtype=np.int64), implicit[zcols]])
    counts = np.bincount(cols * _BINS + b, weights=weight,
                         minlength=d * _BINS).reshape(d, _BINS).astype(np.int64)
    salt = _salt(n_distinct, counts)
    g = np.where(n_distinct[cols] > 1, _mix(_mix(rank.astype(np.uint64)) ^ salt[cols]),
                 np.uint64(0))
    base = np.zeros(d, dtype=np.uint64)
    base[zcols] = g[len(A.data):]  # (what an implicit zero adds to its row)
    with np.errstate(over="ignore"):
        # (wrapping sums per row: differences of a running sum)
        run = np.cumsum(np.r_[np.uint64(0), g[:len(A.data)] - base[stored_cols]],
                        dtype=np.uint64)
        return run[A.indptr[1:]] - run[A.indptr[:-1]] + base.sum(dtype=np.uint64)


def content_sample(X, pool, M, seed, tie=None, precomputed=False):
    """The ``M`` rows of ``pool`` of smallest seeded content key, smallest first.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Training inputs (the Gram matrix when ``precomputed``).
    pool : ndarray of int
        The rows to sample from (those of positive weight).
    M : int
        How many; all of ``pool`` (in its order) when ``M >= len(pool)``.
    seed : int
        The sample's seed: another seed, other keys.
    tie : ndarray of shape (n_samples, q), optional
        Further values of each row (targets, weights) that order rows of
        equal inputs (first column first) for their occurrence numbers.
    precomputed : bool, default=False
        ``X`` is a Gram matrix: a row's content is its kernel values against
        the pool's rows, each column known by its content, so the same rows
        in another order (rows and columns permuted together) key alike.

    Returns
    -------
    indices : ndarray of int
        ``M`` entries of ``pool``, in increasing order of their keys.
    """
    pool = np.asarray(pool, dtype=np.intp)
    if M >= len(pool):
        return pool
    Xp = X[pool]
    if precomputed:
        Xp = np.asarray(Xp, dtype=float)[:, pool]  # (its columns: the pool's rows too)
    r = (_sparse_row_hashes(Xp) if sp.issparse(Xp)
         else _dense_row_hashes(np.asarray(Xp, dtype=float)))
    # the occurrence number of each row among rows of equal inputs, ordered by
    # their targets and weights, then by position (equal in all: interchangeable)
    keys = [np.arange(len(r))]
    if tie is not None:
        tie = np.asarray(tie, dtype=float).reshape(X.shape[0], -1)[pool]
        keys += [tie[:, t] for t in range(tie.shape[1] - 1, -1, -1)]
    order = np.lexsort(keys + [r])
    ranks = np.arange(len(r))
    first = np.r_[True, r[order][1:] != r[order][:-1]]
    occ = np.empty(len(r), dtype=np.uint64)
    occ[order] = (ranks - np.maximum.accumulate(np.where(first, ranks, 0))).astype(np.uint64)
    with np.errstate(over="ignore"):
        key = _mix(_mix(r ^ _mix(np.uint64(seed))) + occ)
    pick = np.argpartition(key, M - 1)[:M]
    return pool[pick[np.argsort(key[pick], kind="stable")]]
