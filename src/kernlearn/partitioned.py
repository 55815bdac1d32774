"""Row-partitioned data: the one data-access interface of FGM's pricing.

Everything FGM reads from ``X`` decomposes over row blocks ``X_1, ..., X_P``:

* the squared column norms (feature scaling): :math:`\\sum_p \\|X_{p,j}\\|^2`;
* the worst-case scores (pricing): :math:`X'u = \\sum_p X_p' u_p`;
* the columns of the active set: the row blocks of ``X[:, ids]`` stacked
  (``n x |active|``, small);
* predictions: the row blocks of ``X w`` stacked.

:class:`RowPartitioned` states this contract as two primitives, a map-sum and
a map-stack over the blocks, and derives the four operations from them once.
Its back ends only say where the blocks live:

* :class:`LocalRows`: in memory (one block: the in-memory path), a
  memory-mapped array read in row chunks, or any source of row chunks such as
  :class:`kernlearn.datasets.SvmlightChunks` (out of core, one chunk resident
  at a time);
* :class:`kernlearn.partitioned.DaskRows`: the partitions of a ``dask.array``
  on the workers of a Dask cluster (map on the workers, sum reduced there, only
  ``n_features``-sized results gathered).  With a ``distributed`` client its
  partitions are :class:`RowFutures`, and so are the ``n``-sized vectors of
  the fit (margins, dual vectors, the active columns): they stay on the workers
  (:mod:`kernlearn._dask_master`), and each pass runs one task per worker
  (:class:`GroupedRows`; both defined in :mod:`kernlearn._row_futures`).

So the in-memory, chunked and Dask paths run the same FGM code
(:func:`kernlearn.methods.fgm.fit_fgm` through
:class:`~kernlearn.families.FeaturePool`).
"""

import mmap
import sys
from functools import partial

import numpy as np
import scipy.sparse as sp

from ._column_sources import register_source

# (the arrays held by a cluster; a leaf module, re-exported here)
from ._row_futures import (
    GroupedRows,
    PerPartition,
    RowFutures,
    _sum_all,
    gather_result,
    made,
    stack_rows,
)
from .utils._finite import block_first_non_finite, first_non_finite_of_blocks, non_finite_message
from .utils._memory import parse_bytes

__all__ = [
    "GroupedRows",
    "LocalRows",
    "PerPartition",
    "RowFutures",
    "RowPartitioned",
    "as_row_partitioned",
    "gather_result",
    "is_out_of_core",
    "non_finite_error",
    "parse_bytes",
    "peak_rss_mb",
    "stack_rows",
    "tune_worker_malloc",
]


def peak_rss_mb():
    """High-water mark of this process's resident memory, in MB (NaN if unknown).

    On Linux the ``VmHWM`` of ``/proc/self/status`` (the peak of this program
    only: ``getrusage``'s ``ru_maxrss`` also keeps the peak of the parent a
    subprocess was forked from); elsewhere ``ru_maxrss``.

    Returns
    -------
    peak : float
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2**10
    except OSError:
        pass
    try:
        import resource
    except ImportError:  # Windows
        return float("nan")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def _block_sq_norms(block, weight=None):
    """Squared column norms of a block (weighted by rows when ``weight`` is given)
    and, last, its count of non-finite entries."""
    if sp.issparse(block):
        block = block.tocsr() if block.format not in ("csr", "csc") else block
        data = np.asarray(block.data, dtype=float)
        lengths = np.diff(block.indptr)
        if block.format == "csr":
            cols = block.indices
            rows = None if weight is None else np.repeat(np.arange(block.shape[0]), lengths)
        else:
            cols, rows = np.repeat(np.arange(block.shape[1]), lengths), block.indices
        if weight is None:
            sq_data = np.square(data)
        else:
            # a zero weight's row left out, not weighted by 0 (as in memory, where
            # it is removed): a value near 1e300 squared overflowed, inf * 0 = NaN,
            # with NumPy's bare warnings from a worker
            w = weight[rows]
            sq_data = np.square(np.where(w > 0, data, 0.0)) * w
        sq = np.bincount(cols, weights=sq_data, minlength=block.shape[1])
    else:
        data = np.asarray(block)
        if weight is None:
            sq = np.einsum("ij,ij->j", data, data, dtype=float)
        else:
            # the same for dense rows: weighted by 0, a square near 1e300 gave
            # inf * 0 = NaN (without a word from einsum), and a NaN norm made
            # the pool's screening bound of the group NaN, so that group was
            # never priced again (FGM's dual bound then rose above its objective)
            keep = weight > 0
            rows = data if keep.all() else data[keep]
            sq = np.einsum("ij,ij,i->j", rows, rows, weight[keep], dtype=float)
    bad = data.size - np.count_nonzero(np.isfinite(data))
    return np.append(sq, bad)


def _block_rmatvec(block, u, step=None):
    """``block' u`` (``u`` of shape ``(rows,)`` or ``(rows, K)``), ``step`` columns at a time."""
    m = block.shape[1]
    step = step or max(m, 1)
    out = np.empty((m,) + np.shape(u)[1:])
    for s in range(0, m, step):
        # Slicing copies a sparse matrix: only slice when chunking.
        part = block if step >= m else block[:, s : s + step]
        out[s : s + step] = np.asarray(part.T @ u).reshape(out[s : s + step].shape)
    return out


def _block_rmatvec_columns(block, u, ids):
    """``block[:, ids]' u``."""
    return np.asarray(block[:, ids].T @ u).reshape((len(ids),) + np.shape(u)[1:])


def _block_columns(block, ids):
    return block[:, ids]


def _block_matmul(block, W):
    return np.asarray(block @ W)


def selected_linear_scores(X, coef, intercept):
    """``X @ coef.T + intercept``, each row's values of that row alone, copying no more of ``X``
    than its weighted columns.

    FGM's decision values (:func:`kernlearn.methods.fgm.fgm_decision`), in
    memory and on each row block: each row's value is a function of that row
    alone (not of the rows around it, their number, the block's memory
    address or layout), so a prediction by row blocks of any size (Dask
    chunks, out-of-core chunks) equals the in-memory one bit for bit.
    Dense rows (BLAS's matrix products round a row by where it falls in
    the block), several outputs: compiled sums over the weighted columns
    (:func:`kernlearn._predict_kernels.dense_linear_scores`: each output's
    products added one column after another, then its intercept), written
    one output after another (the returned array is Fortran-ordered: its
    transpose is C-ordered, which
    :func:`kernlearn.estimators._decisions.class_labels` reads by output).
    Dense rows, one output: NumPy's ``einsum`` dot product of each row
    with the weights, over all columns when at least half of them are
    weighted (a C-ordered float64 ``X`` read as it is; another one copied
    so), else over the weighted columns gathered in row order.  Sparse rows
    (CSR or CSC) of float64: one sparse product with the full weight rows,
    summing each row's stored entries in column order (the zero weights add
    exact zeros, so the sums are those of the selected columns alone) and
    copying nothing of ``X``.  Float32 input has its selected columns cast
    first: NumPy's and SciPy's mixed-type products cast (a copy of) all of
    ``X``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    coef : ndarray of shape (K, n_features) or (n_features,)
    intercept : ndarray of shape (K,) or float

    Returns
    -------
    ndarray of shape (n_samples, K)
    """
    coef = np.asarray(coef).reshape(-1, X.shape[1])
    dtype = np.result_type(X.dtype, coef.dtype)
    out = np.empty((coef.shape[0], X.shape[0]), dtype=dtype)  # (one row per output)
    if sp.issparse(X) and X.format in ("csr", "csc") and X.dtype == dtype:
        # (one pass for all outputs; SciPy copies coef.T in C order, never X)
        scores = X @ (coef[0] if coef.shape[0] == 1 else coef.T)
        # (a NaN or infinity in a column of zero weight gives a NaN here but
        # is never read by the gathered columns' product below)
        if np.isfinite(scores).all():
            return scores.reshape(X.shape[0], coef.shape[0]) + intercept
    sel = np.flatnonzero(coef.any(axis=0))
    if (coef.shape[0] > 1 and dtype == np.float64 and not sp.issparse(X)
            and X.dtype in (np.float32, np.float64)):
        # (compiled: one pass over the rows for all outputs, each row's sums in
        # a fixed order; C or F order read as it is, another layout copied)
        if not (X.flags.c_contiguous or X.flags.f_contiguous):
            X = np.ascontiguousarray(X)
        from ._predict_kernels import dense_linear_scores

        dense_linear_scores(X, sel, np.ascontiguousarray(coef[:, sel], dtype=dtype),
                            np.broadcast_to(np.asarray(intercept, dtype=dtype),
                                            coef.shape[:1]).copy(), out)
        return out.T
    if sp.issparse(X):
        cols = X[:, sel].astype(dtype, copy=False)
        for k, w in enumerate(coef[:, sel]):
            out[k] = cols @ w
    else:
        # all columns if at least half are weighted (a copy of most costs more than
        # their sums), unless a NaN or infinity there made a score NaN, as above
        for whole in (True, False) if 2 * sel.size >= X.shape[1] else (False,):
            # (C order: einsum sums the rows of a column-ordered copy in another order)
            cols = np.ascontiguousarray(X if whole else np.take(X, sel, axis=1), dtype=dtype)
            # (each output's row sums in the order of einsum "ij,j->i": the
            # columns are its innermost loop, whatever the number of rows)
            np.einsum("ij,kj->ki", cols, np.ascontiguousarray(coef if whole else coef[:, sel]),
                      out=out)
            if not whole or np.isfinite(out).all():
                break
        out += np.reshape(intercept, (-1, 1))
        return out.T
    return np.add(out.T, intercept, order="C")


class RowPartitioned:
    """A matrix held as row blocks, read only through map-reduce.

    Subclasses implement the two primitives :meth:`map_sum` and
    :meth:`map_stack` (where the blocks live and where the work runs); the
    operations FGM needs are derived from them here, once.

    Attributes
    ----------
    shape : tuple of int
        ``(n_samples, n_features)``.
    bounds : ndarray of int
        Row offsets of the blocks (``len(bounds) - 1`` blocks).
    """

    shape = (0, 0)
    bounds = np.zeros(1, dtype=np.int64)

    @property
    def n_blocks(self):
        """Number of row blocks."""
        return len(self.bounds) - 1

    def map_sum(self, fn, *row_args):
        """``sum_p fn(X_p, *[a[rows of p] for a in row_args])`` over the blocks.

        Parameters
        ----------
        fn : callable
            Maps a block (and the matching rows of each ``row_args``) to an
            array of a fixed shape.
        *row_args : ndarray
            Arrays with ``n_samples`` rows, split like ``X``.

        Returns
        -------
        total : ndarray
        """
        raise NotImplementedError

    def map_stack(self, fn, *row_args):
        """The blocks' ``fn(X_p, ...)`` stacked by rows (dense or sparse).

        Parameters
        ----------
        fn : callable
            Maps a block (and the matching rows of ``row_args``) to a matrix
            with the block's rows.
        *row_args : ndarray
            Arrays with ``n_samples`` rows.

        Returns
        -------
        stacked : ndarray or scipy.sparse matrix
        """
        raise NotImplementedError

    def column_sq_norms(self, sample_weight=None):
        """Squared column norms :math:`\\|f_j\\|^2` (one pass).

        Parameters
        ----------
        sample_weight : ndarray of shape (n_samples,), optional
            Row weights: :math:`\\sum_i w_i x_{ij}^2` instead.

        Returns
        -------
        sq : ndarray of shape (n_features,)

        Raises
        ------
        ValueError
            If ``X`` holds NaN or infinity.
        """
        out = (self.map_sum(_block_sq_norms) if sample_weight is None
               else self.map_sum(_block_sq_norms, np.asarray(sample_weight, dtype=float)))
        if out[-1] > 0:
            raise non_finite_error(self)
        return out[:-1]

    def rmatvec(self, u, step=None):
        """:math:`X'u`, summed over the blocks.

        Parameters
        ----------
        u : ndarray of shape (n_samples,) or (n_samples, K)
        step : int, optional
            Columns per product inside a block (bounded temporaries).

        Returns
        -------
        Xtu : ndarray of shape (n_features,) or (n_features, K)
        """
        return self.map_sum(partial(_block_rmatvec, step=step), _row_vector(u))

    def rmatvec_columns(self, ids, u):
        """:math:`X_{:,ids}'u` for a subset of the columns, summed over the blocks.

        Parameters
        ----------
        ids : array-like of int
        u : ndarray of shape (n_samples,) or (n_samples, K)

        Returns
        -------
        Xtu : ndarray of shape (len(ids),) or (len(ids), K)
        """
        return self.map_sum(partial(_block_rmatvec_columns, ids=np.asarray(ids, dtype=np.int64)),
                            _row_vector(u))

    def take_columns(self, ids):
        """``X[:, ids]`` (the few active columns), stacked from the blocks.

        Parameters
        ----------
        ids : array-like of int

        Returns
        -------
        columns : ndarray or scipy.sparse.csc_matrix of shape (n_samples, len(ids))
        """
        cols = self.map_stack(partial(_block_columns, ids=np.asarray(ids, dtype=np.int64)))
        return sp.csc_matrix(cols) if sp.issparse(cols) else np.asarray(cols)

    def matmul(self, W):
        """``X @ W`` for a small ``W`` (predictions), stacked from the blocks.

        Parameters
        ----------
        W : ndarray of shape (n_features, K) or scipy.sparse matrix

        Returns
        -------
        XW : ndarray of shape (n_samples, K)
        """
        return np.asarray(self.map_stack(partial(_block_matmul, W=W)))


class LocalRows(RowPartitioned):
    """Row blocks read one at a time in this process.

    Parameters
    ----------
    get_block : callable
        ``get_block(i)`` returns block ``i`` (dense or sparse, rows
        ``bounds[i]:bounds[i+1]``).
    bounds : array-like of int
        Row offsets of the blocks.
    n_features : int
        Columns.
    release : callable, optional
        Called after each block is used (e.g. to drop a memory map's pages from
        the resident set).
    """

    def __init__(self, get_block, bounds, n_features, release=None):
        self.get_block = get_block
        self.bounds = np.asarray(bounds, dtype=np.int64)
        self.shape = (int(self.bounds[-1]), int(n_features))
        self.release = release

    @classmethod
    def from_array(cls, X, chunk_rows=None):
        """Blocks of ``chunk_rows`` rows of an in-memory or memory-mapped matrix.

        Parameters
        ----------
        X : ndarray, numpy.memmap or scipy.sparse matrix
        chunk_rows : int, optional
            Rows per block (default: one block, ``X`` itself).

        Returns
        -------
        rows : LocalRows
        """
        n = X.shape[0]
        step = max(int(chunk_rows or n), 1)
        if step >= n:  # one block, X itself (every in-memory fit, priced often)
            return cls(lambda i: X, np.array([0, n]), X.shape[1])
        bounds = np.append(np.arange(0, n, step), n)
        if sp.issparse(X) and X.format != "csr":
            X = sp.csr_matrix(X)  # row slices of CSR are cheap
        release = None
        mm = getattr(X, "_mmap", None)
        if isinstance(mm, mmap.mmap) and hasattr(mm, "madvise"):
            # Pages of a read-only map stay resident (and count in the RSS)
            # after a pass; dropping them keeps one chunk resident at a time.
            release = partial(mm.madvise, mmap.MADV_DONTNEED)
        return cls(lambda i: X[bounds[i] : bounds[i + 1]], bounds, X.shape[1], release)

    def _blocks(self, row_args):
        for i in range(self.n_blocks):
            a, b = self.bounds[i], self.bounds[i + 1]
            whole = self.n_blocks == 1
            yield self.get_block(i), [r if whole else r[a:b] for r in row_args]
            if self.release is not None:
                self.release()

    def map_sum(self, fn, *row_args):
        total = None
        for block, args in self._blocks(row_args):
            part = fn(block, *args)
            total = part if total is None else total + part
        return total

    def map_stack(self, fn, *row_args):
        return stack_rows([fn(block, *args) for block, args in self._blocks(row_args)])


def non_finite_error(rows):
    """The error refusing row-partitioned ``X`` that holds NaN or infinity.

    Called once a pass has counted such values: a second pass finds each
    block's first (:func:`~kernlearn.utils._finite.block_first_non_finite`,
    where the block lives: four numbers per block come back, never its rows),
    so the error names the row over all of ``X`` and the column, as an
    in-memory fit's does.

    Parameters
    ----------
    rows : RowPartitioned or RowFutures
        ``X`` by row blocks.

    Returns
    -------
    ValueError
    """
    if isinstance(rows, RowPartitioned):
        parts = rows.map_stack(block_first_non_finite)
    else:
        parts = stack_rows(rows.map(block_first_non_finite, tail=(4,)).gather_parts())
    found = first_non_finite_of_blocks(parts, rows.bounds)
    if found is None:  # (a sparse matrix's padding outside its shape; nothing to name)
        return ValueError("X contains NaN or infinity; the fit needs a finite number "
                          "in every cell: fill or drop it.")
    return ValueError(non_finite_message(found, who="the fit"))


def is_out_of_core(X):
    """Whether ``X`` is read through :class:`RowPartitioned` (not an in-memory matrix).

    Parameters
    ----------
    X : object

    Returns
    -------
    bool
        True for a :class:`RowPartitioned`, a ``dask.array``, a Dask DataFrame
        or a chunk source with ``row_partitioned()`` (e.g.
        :class:`~kernlearn.datasets.SvmlightChunks`).
    """
    return (isinstance(X, RowPartitioned) or hasattr(X, "row_partitioned")
            or _is_dask_array(X) or _is_dask_frame(X))


def _is_dask_array(X):
    mod = type(X).__module__ or ""
    return mod.startswith("dask.array") and hasattr(X, "to_delayed")


def _is_dask_frame(X):
    """Whether ``X`` is a Dask DataFrame or Series (its values: ``to_dask_array``)."""
    mod = type(X).__module__ or ""
    return mod.startswith("dask.dataframe") and hasattr(X, "to_dask_array")


def as_row_partitioned(X, memory_budget=None):
    """``X`` as a :class:`RowPartitioned`, chunked to fit a memory budget.

    Parameters
    ----------
    X : ndarray, numpy.memmap, sparse matrix, dask.array, chunk source or RowPartitioned
        A ``dask.array`` becomes :class:`~kernlearn.partitioned.DaskRows`; a
        source with ``row_partitioned()`` (such as
        :class:`~kernlearn.datasets.SvmlightChunks`) gives its own blocks; an
        array is split into row chunks of at most half the budget each (one
        block without a budget).
    memory_budget : int or str, optional
        Bytes of data resident at a time, e.g. ``"2GB"`` (arrays only; a chunk
        source and a Dask array carry their own chunking).

    Returns
    -------
    rows : RowPartitioned
    """
    if isinstance(X, RowPartitioned):
        out = X
    elif hasattr(X, "row_partitioned"):
        out = X.row_partitioned()
    elif _is_dask_array(X):
        out = DaskRows(X)
    else:
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}.")
        chunk_rows = None
        if memory_budget is not None:
            bytes_per_row = (X.data.nbytes + X.indices.nbytes) / max(X.shape[0], 1) \
                if sp.issparse(X) else X.shape[1] * X.dtype.itemsize
            # Half the budget per block: a pass's temporaries take the rest.
            chunk_rows = max(1, int(parse_bytes(memory_budget) / 2 / max(bytes_per_row, 1)))
        return LocalRows.from_array(X, chunk_rows)
    if memory_budget is not None:
        raise ValueError("memory_budget applies to arrays; a chunk source or a Dask "
                         "array sets its own chunk size.")
    return out


def _row_vector(u):
    """An ``n``-sized argument of a map: kept where it lives (cluster) or made float."""
    return u if isinstance(u, RowFutures) else np.asarray(u, dtype=float)


def _current_client():
    """The default ``distributed`` client, or None (local Dask scheduler).

    A client closed inside its ``with`` block stays the current one: the
    fit failed on ``'NoneType' object has no attribute 'ncores'``; it is
    refused in words.
    """
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        client = get_client()
    except ValueError:
        return None
    if client.status in ("closing", "closed"):
        raise RuntimeError(
            f"the current Dask client ({client.status}) cannot run the fit: open a new "
            "client, or leave the closed one's `with` block to fit with Dask's local "
            "scheduler.")
    return client


_MMAP_THRESHOLD, _TRIM_THRESHOLD = 32 << 20, 64 << 20  # see tune_worker_malloc
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (malloc.h)


def _set_malloc(mmap_threshold, trim_threshold):
    """``mallopt`` in this process; False where the C library is not glibc."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold))
                and mallopt(_M_TRIM_THRESHOLD, int(trim_threshold)))


def worker_addresses(client):
    """The addresses of the workers in ``client``'s cluster now, asked of the scheduler.

    Not ``client.scheduler_info()["workers"]``: that returns the client's cached
    scheduler identity, which its periodic refresh (every
    ``distributed.client.scheduler-info-interval``) replaces with one that lists
    no worker; when the refresh lands between the call's own fetch and its
    return, every worker seems gone (a fit on an intact cluster counted both of
    its workers lost, ``dask_workers_lost`` 2 from its second round on).

    Parameters
    ----------
    client : distributed.Client

    Returns
    -------
    set of str
    """
    return set(client.nthreads())  # (one request to the scheduler, no cache)


def tune_worker_malloc(client, mmap_threshold=_MMAP_THRESHOLD, trim_threshold=_TRIM_THRESHOLD):
    """Let the workers' C allocator reuse freed memory (done by every fit on a cluster).

    ``distributed`` starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which
    also fixes glibc's ``mmap`` threshold at 128 KiB: every array of more than
    16,000 floats is then freshly mapped, faulted in and unmapped, and a fit's
    row sums ran 2-8x slower on a worker than in the client.  This raises both
    thresholds on each worker once per client (glibc only).  The Dask config
    key ``kernlearn.tune-worker-malloc=False`` leaves the workers as they are.

    Parameters
    ----------
    client : distributed.Client
    mmap_threshold : int, default=32 MiB
        Allocations at least this large are mapped (and returned) directly.
    trim_threshold : int, default=64 MiB
        Freed memory at the top of the heap kept for reuse.

    Returns
    -------
    tuned : dict
        ``{worker address: bool}`` for the workers set by this call.
    """
    import dask

    if client is None or not dask.config.get("kernlearn.tune-worker-malloc", True):
        return {}
    done = client.__dict__.setdefault("_kernlearn_malloc", set())
    todo = sorted(worker_addresses(client) - done)
    if not todo:
        return {}
    out = client.run(_set_malloc, int(mmap_threshold), int(trim_threshold), workers=todo,
                     on_error="ignore")  # (a worker leaving meanwhile: not an error)
    done.update(out)
    return out


def _known_row_chunks(X):
    """``X`` with the sizes of its row chunks known and none of them empty.

    An empty row chunk (rows filtered out of a partition, or chunks given by
    hand) has nothing to fit, and the per-partition work of the fits on a
    cluster assumes rows: FGM and GrFL failed on one with a reshape error
    raised on a worker.  Such chunks are merged away (the rows, their order
    and the model are unchanged).

    Parameters
    ----------
    X : dask.array.Array

    Returns
    -------
    dask.array.Array
    """
    if any(np.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()  # only the sizes reach the client
    sizes = tuple(int(c) for c in X.chunks[0] if c)
    if sizes and len(sizes) < len(X.chunks[0]):
        X = X.rechunk({0: sizes})
    return X


class DaskRows(RowPartitioned):
    """A ``dask.array`` read by map-reduce over its row partitions.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Dense or scipy-sparse chunks; column chunks are merged so that each
        partition holds whole rows.
    client : distributed.Client, optional
        Cluster to run on (default: the current client, if any; without one
        Dask's local scheduler runs the maps).
    persist : bool, optional
        Keep the partitions in the workers' memory between passes (default:
        True when a distributed client is found; FGM reads ``X`` about twice
        per outer iteration, and an unpersisted graph would be recomputed
        from its source each time).

    Attributes
    ----------
    shape : tuple of int
    bounds : ndarray of int
        Row offsets of the partitions.
    blocks : GroupedRows or None
        The partitions on the cluster (with a distributed client), one task
        per worker and pass.

    References
    ----------
    Tan, Tsang, Wang (2014), JMLR 15, sec. 5.3.1 (the worst-case analysis only
    needs :math:`X'u`, which decomposes over samples).
    """

    def __init__(self, X, client=None, persist=None):
        import dask

        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}.")
        self.client = client if client is not None else _current_client()
        tune_worker_malloc(self.client)
        if X.numblocks[1] != 1:
            X = X.rechunk({1: -1})
        if persist if persist is not None else self.client is not None:
            X = self.client.persist(X) if self.client is not None else X.persist()
            if self.client is not None:
                from distributed import futures_of

                made(futures_of(X))  # (new future objects, even of a persisted X)
        X = _known_row_chunks(X)
        self._dask = dask
        self.array = X
        self._parts = X.to_delayed().ravel().tolist()
        self.bounds = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
        self.shape = (int(self.bounds[-1]), int(X.shape[1]))
        # one task per worker and pass (GroupedRows)
        self.blocks = (GroupedRows.by_worker(RowFutures.from_dask(self.client, X))
                       if self.client is not None else None)

    def _tasks(self, fn, row_args):
        delayed = self._dask.delayed
        # Each partition's task carries its rows of the n-sized vectors.
        slices = [[r[a:b] for r in row_args]
                  for a, b in zip(self.bounds[:-1], self.bounds[1:])]
        call = delayed(fn, pure=False)
        return [call(part, *args) for part, args in zip(self._parts, slices)]

    def map_sum(self, fn, *row_args):
        if self.blocks is not None:
            return self.blocks.sum(fn, *row_args)
        if any(isinstance(r, RowFutures) for r in row_args):
            raise TypeError("RowFutures arguments need a distributed client.")
        tasks = self._tasks(fn, row_args)
        return self._dask.compute(self._dask.delayed(_sum_all, pure=False)(tasks))[0]

    def map_stack(self, fn, *row_args):
        if self.blocks is not None:
            return stack_rows(self.blocks.map(fn, *row_args).gather_parts())  # one round trip
        return stack_rows(list(self._dask.compute(*self._tasks(fn, row_args))))

    def rmatvec(self, u, step=None):
        """:math:`X'u` (see :meth:`RowPartitioned.rmatvec`); FGM's dual vectors
        bring it along from the pass that made them (``u.known_rmatvec``,
        :meth:`kernlearn._dask_master.DaskMasterRows.dual_point`)."""
        known = getattr(u, "known_rmatvec", None)
        return known.copy() if known is not None else super().rmatvec(u, step)

    def columns_on_workers(self, ids, weights=None, sample_weight=None, filler=None):
        """``X[:, ids] * weights`` kept on the workers (FGM's active block).

        Parameters
        ----------
        ids : array-like of int
        weights : ndarray of shape (len(ids),), optional
            Column scaling.
        sample_weight, filler : ndarray, optional
            Rows of zero weight hold ``filler`` (see :func:`_scaled_columns`).

        Returns
        -------
        columns : RowFutures of shape (n_samples, len(ids))
            CSC partitions for sparse ``X``, dense otherwise.
        """
        if self.blocks is None:
            raise TypeError("columns on the workers need a distributed client.")
        ids = np.asarray(ids, dtype=np.int64)
        fn = partial(_scaled_columns, ids=ids, weights=weights, filler=filler)
        if sample_weight is None:
            return self.blocks.map(fn, tail=(len(ids),))
        return self.blocks.map(fn, np.asarray(sample_weight, dtype=float), tail=(len(ids),))


def _scaled_columns(block, sample_weight=None, ids=None, weights=None, filler=None):
    """``block[:, ids] * weights``; with ``sample_weight``, the rows of zero weight
    hold ``filler[ids]`` (a kept row's values: a 1 x p sparse row for sparse blocks).

    A fit by row blocks keeps such rows (their loss is weighted by 0): a value
    near 1e300 there overflowed once scaled (NaN margins), and made the
    column's range that of the removed rows, hiding a far offset from the
    master's shift (:func:`kernlearn.methods._fgm_rows.offset_shift`).
    """
    cols = block[:, ids]
    drop = None if sample_weight is None else ~(np.asarray(sample_weight) > 0)
    if sp.issparse(cols):
        if drop is not None and drop.any():
            # zeros there gave a column far from zero the range [0, offset],
            # hiding the offset from the master's shift once the block was
            # densified (a regressor 12 % off the in-memory one, its master at
            # 2.4x the objective, "converged"): the kept row's values instead
            cols = sp.diags((~drop).astype(float)) @ cols
            if filler is not None:
                cols = cols + sp.csr_matrix(drop.astype(float)[:, None]) @ filler[:, ids]
            cols.eliminate_zeros()
        return sp.csc_matrix(cols if weights is None else cols @ sp.diags(weights))
    cols = np.array(cols, dtype=float)
    if drop is not None and drop.any():
        cols[drop] = filler[ids]
    return cols if weights is None else cols * weights


def kept_row_columns(pool, cand, X, loss):
    """``pool.columns(cand, X)``, the rows the loss weighs by 0 holding
    :func:`removed_rows`'s filler when ``X`` is read by row blocks.

    By row blocks such rows are kept (in memory they are removed first): their
    far values must not reach FGM's master, where they overflowed once scaled
    and gave the column their range, hiding an offset from its shift.

    Parameters
    ----------
    pool : FeaturePool
        The pool whose candidate columns are built.
    cand : array-like
        The candidates (feature ids of ``pool``).
    X : ndarray, sparse matrix or RowPartitioned
        The training inputs.
    loss : Loss
        The fit's loss; its ``sample_weight`` names the removed rows.

    Returns
    -------
    columns : ndarray or scipy.sparse.csc_matrix of shape (n_samples, n_columns)
        The candidates' columns.
    """
    w, filler = removed_rows(X, loss) if isinstance(X, RowPartitioned) else (None, None)
    raw_of = getattr(pool, "raw_columns", None)  # (the columns of X, scaled: FeaturePool)
    if w is None:
        block = pool.columns(cand, X)
        if raw_of is None:
            return block
        feats, weights = pool.column_indices(cand)
        return register_source(block, lambda: raw_of(feats, X), np.asarray(weights))
    feats, weights = pool.column_indices(cand)
    pick = partial(_scaled_columns, ids=np.asarray(feats), filler=filler)
    out = X.map_stack(partial(pick, weights=weights), w)
    block = sp.csc_matrix(out) if sp.issparse(out) else np.asarray(out)
    return block if raw_of is None else register_source(
        block, lambda: X.map_stack(pick, w), np.asarray(weights))


def removed_rows(rows, loss):
    """``(sample_weight, filler)`` for :func:`_scaled_columns` when the loss
    weighs some rows of ``rows`` by 0, else ``(None, None)``.

    ``filler`` is the first row of positive weight (a 1 x p CSR row for sparse ``X``).

    Parameters
    ----------
    rows : RowPartitioned
        The training inputs by row blocks.
    loss : Loss
        The fit's loss; its ``sample_weight`` names the removed rows.

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,) or None
        The row weights, when some are 0.
    filler : ndarray of shape (n_features,) or None
        The values the removed rows hold in the master's columns.
    """
    w = getattr(loss, "sample_weight", None)
    if w is None or np.ndim(w) == 0 or np.all(np.asarray(w) > 0):
        return None, None
    w = np.asarray(w, dtype=float)
    i = int(np.argmax(w > 0))
    if isinstance(rows, DaskRows):
        row = rows.array[i].compute()
    else:
        p = int(np.searchsorted(rows.bounds, i, side="right") - 1)
        row = rows.get_block(p)[i - rows.bounds[p]]
    if sp.issparse(row):
        return w, sp.csr_matrix(row, dtype=float).reshape(1, -1)
    return w, np.asarray(row, dtype=float).ravel()
