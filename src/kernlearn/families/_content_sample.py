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
centred) keeps the sample.  A column is known by its content, not its place:
its salt hashes its values' multiplicities (in increasing order of value) and
its ranks against the rows' first hashes (one round of refinement: columns of
distinct values, whose multiplicities are all one, are told apart by how they
rank the rows), so columns in another order keep the sample too; constant
columns add nothing.  The targets and weights are not hashed: a model fitted
on one output of a multi-output problem samples as the whole problem does.
They order rows of equal inputs instead, then a second hash of the rows'
ranks by column position (rows such as ``(1, 2)`` and ``(2, 1)`` of a set
with both have equal keys: no key blind to the column order tells them apart),
then their positions (rows equal in all of them are interchangeable); the
occurrence number keeps copies of a row from being all taken together or all
left out.
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["content_sample", "row_hashes"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(z):
    """splitmix64's finaliser of ``z + golden`` (uint64, wrapping)."""
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = z + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _sums(values, bounds):
    """Wrapping uint64 sums of ``values`` between consecutive ``bounds``."""
    with np.errstate(over="ignore"):
        run = np.cumsum(np.r_[np.uint64(0), values], dtype=np.uint64)
        return run[bounds[1:]] - run[bounds[:-1]]


def _profile(run_lengths, run_bounds):
    """Per column, a hash of its values' multiplicities in increasing order (its
    runs ``run_bounds[j]:run_bounds[j + 1]`` of equal values)."""
    k = np.arange(len(run_lengths)) - np.repeat(run_bounds[:-1], np.diff(run_bounds))
    with np.errstate(over="ignore"):
        runs = _mix(_mix(k.astype(np.uint64)) + run_lengths.astype(np.uint64))
    return _mix(_sums(runs, run_bounds))


#: entries (rows x columns) ranked at once by :func:`_dense_row_hashes`: blocks
#: of columns bound its temporaries (a few times 8 MB) on wide data
_BLOCK_ENTRIES = 1 << 20


def _dense_ranks(A):
    """Per block of ``A``'s columns, the varying ones' mixed dense ranks (``d_b x
    n``), profiles and positions.  A block's columns are ranked by one NumPy call
    each (a loop over the columns made 20 calls per column: at 1,000 x 20 a
    tenth of a low-rank fit); blocks bound the temporaries on wide data."""
    n, d = A.shape
    step = max(1, _BLOCK_ENTRIES // max(n, 1))
    blocks = []
    for j0 in range(0, d, step):
        At = np.ascontiguousarray(A[:, j0:j0 + step].T)
        order = np.argsort(At, axis=1)
        s = np.take_along_axis(At, order, axis=1)
        new = s[:, 1:] != s[:, :-1]
        varies = new.any(axis=1)  # (a constant column adds nothing: as unstored sparse ones)
        if not varies.any():
            continue
        order, new = order[varies], new[varies]
        dense = np.zeros(order.shape, dtype=np.int64)
        np.cumsum(new, axis=1, out=dense[:, 1:])
        rank = np.empty(order.shape, dtype=np.uint64)
        np.put_along_axis(rank, order, _mix(dense), axis=1)  # (the ranks, mixed once)
        start = np.ones(order.shape, dtype=bool)
        start[:, 1:] = new
        run_starts = np.flatnonzero(start)  # (column by column, each one's runs)
        run_lengths = np.diff(np.r_[run_starts, start.size])
        prof = _profile(run_lengths, np.r_[0, np.cumsum(start.sum(axis=1))])
        blocks.append((rank, prof, j0 + np.flatnonzero(varies)))
    return blocks


def _dense_row_hashes(A):
    """Each row's content hash and its positional one (:func:`_positional`)."""
    blocks = _dense_ranks(A)

    def row_sums(salts):  # (wrapping uint64 sums: exact in any order)
        rows = np.zeros(A.shape[0], dtype=np.uint64)
        for (rank, _, _), salt in zip(blocks, salts):
            rows += _mix(rank ^ salt[:, None]).sum(axis=0, dtype=np.uint64)
        return rows

    with np.errstate(over="ignore"):
        b = _mix(row_sums([prof for _, prof, _ in blocks]))
        # each column's salt: its ranks against the rows' hashes
        salt = [_mix(prof + _mix((rank * b).sum(axis=1, dtype=np.uint64)))
                for rank, prof, _ in blocks]
        return (row_sums(salt),
                row_sums([_positional(where.astype(np.uint64)) for *_, where in blocks]))


def _positional(columns):
    """Salts of columns by their position: a second hash of each row, of its
    ranks in each column where it is, which tells apart rows whose content hashes
    are equal because columns map one onto the other (rows ``(1, 2)`` and
    ``(2, 1)`` of a set with both: a balanced one-hot pair of columns)."""
    return _mix(_mix(columns) ^ _M2)


def _sparse_row_hashes(A):
    """As :func:`_dense_row_hashes` of ``A.toarray()``, from the stored values."""
    A = sp.csr_matrix(A, dtype=float)
    A.sum_duplicates()
    n = A.shape[0]
    if A.nnz == 0:  # every column constant (zero): no hash to add, as dense
        return np.zeros(n, dtype=np.uint64), np.zeros(n, dtype=np.uint64)
    # only the columns with stored values (the others are constant: nothing to
    # add, and 2,000,000 of them must not cost memory per column)
    used, stored_cols = np.unique(A.indices, return_inverse=True)  # (not per column of A)
    d, nnz = len(used), len(A.data)
    row_of = np.repeat(np.arange(n), np.diff(A.indptr))
    implicit = n - np.bincount(stored_cols, minlength=d)  # (zeros not stored)
    # one zero entry per column with implicit zeros, ranked with the stored ones
    zcols = np.flatnonzero(implicit > 0)
    cols = np.concatenate([stored_cols, zcols])
    vals = np.concatenate([A.data, np.zeros(len(zcols))])
    weight = np.concatenate([np.ones(nnz, dtype=np.int64), implicit[zcols]])
    order = np.argsort(vals)  # (by value, then stably by column: lexsort's order;
    # columns as uint16 where they fit: NumPy's stable sort of them is a radix sort)
    key = cols[order].astype(np.uint16) if d <= 65536 else cols[order]
    order = order[np.argsort(key, kind="stable")]
    c, v = cols[order], vals[order]
    start = np.r_[True, c[1:] != c[:-1]]
    new = start | np.r_[True, v[1:] != v[:-1]]
    dense = np.cumsum(new)
    first = np.maximum.accumulate(np.where(start, np.arange(len(c)), 0))
    rank = np.empty(len(c), dtype=np.uint64)
    rank[order] = (dense - dense[first]).astype(np.uint64)
    run_starts = np.flatnonzero(new)
    run_bounds = np.searchsorted(run_starts, np.r_[np.flatnonzero(start), len(c)])
    prof = _profile(np.add.reduceat(weight[order], run_starts), run_bounds)
    varies = np.diff(run_bounds) > 1  # (constant columns add nothing)

    def row_sums(salt):
        g = np.where(varies[cols], _mix(_mix(rank) ^ salt[cols]), np.uint64(0))
        base = np.zeros(d, dtype=np.uint64)
        base[zcols] = g[nnz:]  # (what an implicit zero adds to its row)
        with np.errstate(over="ignore"):
            return (_sums(g[:nnz] - base[stored_cols], A.indptr)
                    + base.sum(dtype=np.uint64))

    b = _mix(row_sums(prof))
    # each column's salt: its ranks against the rows' hashes (the implicit
    # zeros' rows: the zero's rank times the sum of their hashes)
    stored = order[order < nnz]  # (the stored entries by column)
    bounds = np.r_[0, np.cumsum(n - implicit)]
    with np.errstate(over="ignore"):
        t = _sums((_mix(rank[:nnz]) * b[row_of])[stored], bounds)
        zero = np.zeros(d, dtype=np.uint64)
        zero[zcols] = _mix(rank[nnz:])
        t = t + zero * (b.sum(dtype=np.uint64) - _sums(b[row_of][stored], bounds))
        salt = _mix(prof + _mix(t))
    return row_sums(salt), row_sums(_positional(used.astype(np.uint64)))


def row_hashes(X):
    """Each row's content hash (blind to the column order and to an increasing
    map of a column) and its positional one (:func:`_positional`), as uint64."""
    return (_sparse_row_hashes(X) if sp.issparse(X)
            else _dense_row_hashes(np.asarray(X, dtype=float)))


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
    r, pos = row_hashes(Xp)
    # the occurrence number of each row among rows of equal content hash, ordered
    # by their targets and weights, then by their positional hash (rows of equal
    # content hash need not be equal: columns that map one onto the other), then
    # by position (equal in all: interchangeable); a Gram matrix's columns are
    # its rows, whose positions are no content
    keys = [np.arange(len(r))] + ([] if precomputed else [pos])
    if tie is not None:
        tie = np.asarray(tie, dtype=float).reshape(X.shape[0], -1)[pool]
        keys += [tie[:, t] for t in range(tie.shape[1] - 1, -1, -1)]
    order = np.lexsort(keys + [r])
    ranks = np.arange(len(r))
    first = np.r_[True, r[order][1:] != r[order][:-1]]
    occ = np.empty(len(r), dtype=np.uint64)
    occ[order] = ranks - np.maximum.accumulate(np.where(first, ranks, 0))
    with np.errstate(over="ignore"):
        key = _mix(_mix(r ^ _mix(np.uint64(seed))) + occ)
    pick = np.argpartition(key, M - 1)[:M]
    return pool[pick[np.argsort(key[pick], kind="stable")]]
