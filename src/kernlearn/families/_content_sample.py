r"""A seeded sample of rows keyed by their content, not their position.

SLKL samples ``M`` of the ``n`` training rows as its candidate columns.  Drawn
by position (``rng.choice(n, M)``), the same rows in another order give other
centres: sorting a file differently moved the model as a change of seed does.
Here every row gets a pseudo-random 64-bit key computed from its values, its
targets and weight, its occurrence number among rows of identical content, and
the seed; the ``M`` rows of smallest key are the sample.  Distinct contents get
independent keys, so for one seed the sample is a uniform draw without
replacement, and a permutation of the rows gives the same rows.

The values are hashed on a grid of ``2**-VALUE_BITS`` of each column's largest
magnitude (a power of two): the standardised inputs of the same rows in
another order differ in round-off (their means are summed in another order),
which the grid absorbs, values that are zero but for round-off included.  A
column is named by its content, not its place: its salt is the hash of its
values paired with the rows' targets (a multiset, the same in any row order),
so columns in another order give the same sample too.  Rows equal on the grid
are numbered in row order (they are interchangeable: the occurrence number
only keeps duplicates from being all taken together or all left out).
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["content_sample"]

#: bits of each column's grid below its largest magnitude (float32's mantissa:
#: values that differ only past it are the same content, round-off of the
#: standardisation, about 1e-16 of the column's mean, is far below it)
VALUE_BITS = 24

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
#: rows per block of the dense passes (memory: a few arrays of this many values)
_BLOCK_VALUES = 1 << 20


def _mix(z):
    """splitmix64's finaliser of ``z + golden`` (uint64, wrapping)."""
    with np.errstate(over="ignore"):
        z = z + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _grid(maxabs):
    """The exponent ``e`` of each column's grid ``2**e`` (``VALUE_BITS`` below the
    largest magnitude, rounded up to a power of two)."""
    return np.frexp(np.asarray(maxabs, dtype=float))[1] - VALUE_BITS


def _hashed(values, expo):
    """``mix`` of the values on their columns' grids, 0 where the value rounds to 0
    (so an implicit zero of a sparse row and a stored one hash alike)."""
    q = np.rint(np.ldexp(np.asarray(values, dtype=float), -expo)).astype(np.int64)
    return np.where(q != 0, _mix(q.view(np.uint64)), np.uint64(0))


def _target_hash(tie):
    """One uint64 per row of ``tie`` (targets, weights), its columns in order."""
    h = np.zeros(len(tie), dtype=np.uint64)
    if tie.shape[1]:
        expo = _grid(np.max(np.abs(tie), axis=0))
        for t in range(tie.shape[1]):
            with np.errstate(over="ignore"):
                h = _mix(h + _hashed(tie[:, t], expo[t]))
    return h


def _row_hashes_dense(X, ty):
    n, d = X.shape
    step = max(1, _BLOCK_VALUES // max(d, 1))
    expo = _grid(np.max(np.abs(X), axis=0)) if n else np.zeros(d, dtype=int)
    salt = np.zeros(d, dtype=np.uint64)
    for s in range(0, n, step):  # the columns' salts: their values with the targets
        h = _hashed(X[s:s + step], expo)
        with np.errstate(over="ignore"):
            salt += np.where(h != 0, _mix(h + ty[s:s + step, None]), np.uint64(0)).sum(
                axis=0, dtype=np.uint64)
    salt = _mix(salt)
    rows = np.empty(n, dtype=np.uint64)
    for s in range(0, n, step):
        h = _hashed(X[s:s + step], expo)
        with np.errstate(over="ignore"):
            rows[s:s + step] = np.where(h != 0, _mix(h ^ salt), np.uint64(0)).sum(
                axis=1, dtype=np.uint64)
    return rows


def _row_hashes_sparse(X, ty):
    X = sp.csr_matrix(X)
    X.sum_duplicates()
    n, d = X.shape
    maxabs = np.zeros(d)
    np.maximum.at(maxabs, X.indices, np.abs(X.data))
    expo = _grid(maxabs)
    cols = X.indices
    row_of = np.repeat(np.arange(n), np.diff(X.indptr))
    h = _hashed(X.data, expo[cols])
    with np.errstate(over="ignore"):
        part = np.where(h != 0, _mix(h + ty[row_of]), np.uint64(0))
    salt = _segment_sums(part, cols, d)
    with np.errstate(over="ignore"):
        part = np.where(h != 0, _mix(h ^ _mix(salt)[cols]), np.uint64(0))
    return _segment_sums(part, row_of, n)


def _segment_sums(values, labels, size):
    """Wrapping uint64 sums of ``values`` per label ``0..size-1``."""
    order = np.argsort(labels, kind="stable")
    labels, values = labels[order], values[order]
    out = np.zeros(size, dtype=np.uint64)
    if len(values):
        starts = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
        with np.errstate(over="ignore"):
            out[labels[starts]] = np.add.reduceat(values, starts, dtype=np.uint64)
    return out


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
        Further content of each row (targets, weights).
    precomputed : bool, default=False
        ``X`` is a Gram matrix: a row's content is its kernel values, each
        against a training row named by that row's own content (its column's
        salt), so the same rows in another order (rows and columns permuted
        together) key alike.

    Returns
    -------
    indices : ndarray of int
        ``M`` entries of ``pool``, in increasing order of their keys.
    """
    pool = np.asarray(pool, dtype=np.intp)
    if M >= len(pool):
        return pool
    tie = (np.zeros((X.shape[0], 0)) if tie is None
           else np.asarray(tie, dtype=float).reshape(X.shape[0], -1))
    ty = _target_hash(tie[pool])
    Xp = X[pool]
    if precomputed:
        Xp = np.asarray(Xp, dtype=float)[:, pool]  # (its columns: the pool's rows too)
    if sp.issparse(Xp):
        r = _row_hashes_sparse(Xp, ty)
    else:
        r = _row_hashes_dense(np.asarray(Xp, dtype=float), ty)
    with np.errstate(over="ignore"):
        r = _mix(r + ty)
    # the occurrence number of each row among rows of the same content
    order = np.argsort(r, kind="stable")
    ranks = np.arange(len(r))
    first = np.r_[True, r[order][1:] != r[order][:-1]]
    occ = np.empty(len(r), dtype=np.uint64)
    occ[order] = (ranks - np.maximum.accumulate(np.where(first, ranks, 0))).astype(np.uint64)
    with np.errstate(over="ignore"):
        key = _mix(_mix(r ^ _mix(np.uint64(seed))) + occ)
    pick = np.argpartition(key, M - 1)[:M]
    return pool[pick[np.argsort(key[pick], kind="stable")]]
