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
  (:mod:`kernlearn._dask_master`).

So the in-memory, chunked and Dask paths run the same FGM code
(:func:`kernlearn.methods.fgm.fit_fgm` through
:class:`~kernlearn.families.FeaturePool`).
"""

import mmap
import re
import sys
from functools import partial

import numpy as np
import scipy.sparse as sp

__all__ = [
    "LocalRows",
    "PerPartition",
    "RowFutures",
    "RowPartitioned",
    "as_row_partitioned",
    "gather_result",
    "is_out_of_core",
    "parse_bytes",
    "peak_rss_mb",
    "stack_rows",
    "tune_worker_malloc",
]

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_bytes(size):
    """Bytes in a memory size such as ``"2GB"``, ``"512 MiB"`` or ``10**9``.

    Parameters
    ----------
    size : int, float or str
        A positive number of bytes, or a number with a unit (B, KB, MB, GB,
        TB, KiB, MiB, GiB, TiB; case-insensitive).

    Returns
    -------
    n_bytes : int
    """
    if isinstance(size, (int, float, np.integer, np.floating)) and not isinstance(size, bool):
        value = float(size)
    else:
        m = re.fullmatch(r"\s*([0-9.]+(?:e[0-9]+)?)\s*([a-zA-Z]*)\s*", str(size))
        if m is None or m.group(2).lower() not in _UNITS:
            raise ValueError(f"memory size {size!r} is not a number of bytes such as "
                             "'2GB' or '512MiB'.")
        value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"memory size must be positive, got {size!r}.")
    return int(value)


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
        sq_data = np.square(data)
        if weight is not None:
            sq_data *= weight[rows]
        sq = np.bincount(cols, weights=sq_data, minlength=block.shape[1])
    else:
        data = np.asarray(block)
        sq = (np.einsum("ij,ij->j", data, data, dtype=float) if weight is None
              else np.einsum("ij,ij,i->j", data, data, weight, dtype=float))
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


def stack_rows(parts):
    """Row blocks (dense or sparse) stacked into one matrix.

    Parameters
    ----------
    parts : list of ndarray or scipy.sparse matrix

    Returns
    -------
    stacked : ndarray or scipy.sparse.csr_matrix
    """
    if len(parts) == 1:
        return parts[0]
    return sp.vstack(parts, format="csr") if sp.issparse(parts[0]) else np.concatenate(parts)


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
            raise ValueError(f"X contains NaN or infinity ({int(out[-1])} entries).")
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
        bounds = np.append(np.arange(0, n, step), n) if n else np.array([0, 0])
        if len(bounds) == 2:
            return cls(lambda i: X, bounds, X.shape[1])
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


def is_out_of_core(X):
    """Whether ``X`` is read through :class:`RowPartitioned` (not an in-memory matrix).

    Parameters
    ----------
    X : object

    Returns
    -------
    bool
        True for a :class:`RowPartitioned`, a ``dask.array`` or a chunk source
        with ``row_partitioned()`` (e.g. :class:`~kernlearn.datasets.SvmlightChunks`).
    """
    return (isinstance(X, RowPartitioned) or hasattr(X, "row_partitioned")
            or _is_dask_array(X))


def _is_dask_array(X):
    mod = type(X).__module__ or ""
    return mod.startswith("dask.array") and hasattr(X, "to_delayed")


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
    """The default ``distributed`` client, or None (local Dask scheduler)."""
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        return get_client()
    except ValueError:
        return None


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
    todo = sorted(set(client.scheduler_info()["workers"]) - done)
    if not todo:
        return {}
    out = client.run(_set_malloc, int(mmap_threshold), int(trim_threshold), workers=todo,
                     on_error="ignore")  # (a worker leaving meanwhile: not an error)
    done.update(out)
    return out


def _sum_all(parts):
    """Sum of a list of arrays, or of tuples of arrays entry by entry (a reduction)."""
    total = parts[0]
    for p in parts[1:]:
        total = (tuple(a + b for a, b in zip(total, p)) if isinstance(total, tuple)
                 else total + p)
    return total


def _cluster_error(exc):
    """A clear error for a partition the cluster could not (re)compute, or None."""
    name = type(exc).__name__
    if name == "KilledWorker":
        return RuntimeError(
            f"the Dask cluster lost a partition of the fit and could not recompute it: "
            f"{exc}.  Workers died repeatedly while running that task; the usual cause "
            "is a worker exceeding its memory limit (give the workers more memory or "
            "use smaller row chunks).")
    if name in ("CancelledError", "FutureCancelledError", "CommClosedError"):
        return RuntimeError(
            f"the Dask cluster stopped serving the fit ({name}: {exc}); the client lost "
            "its connection or the partitions were released.")
    return None


def gather_result(future):
    """The result of a future (or list); a lost, unrecoverable partition raises a clear error.

    Parameters
    ----------
    future : distributed.Future or list of distributed.Future

    Returns
    -------
    result : object or list

    Raises
    ------
    RuntimeError
        When the cluster could not compute the result (e.g. workers were
        killed repeatedly running one of its tasks), naming the cause.
    """
    try:
        client = future[0].client if isinstance(future, list) else future.client
        return client.gather(future)
    except Exception as exc:
        err = _cluster_error(exc)
        if err is None:
            raise
        raise err from exc


# Up to this many partitions the client sums the partitions' results itself
# (each is O(|active|^2)); above, one task on the cluster sums them.
_CLIENT_SUM_PARTS = 16


class RowFutures:
    """An ``(n, ...)`` array held by a Dask cluster: one future per row partition.

    The row primitives of the fits on a cluster.  A :class:`RowFutures` is
    split like the ``X`` it was derived from (same ``bounds``); every
    operation is one task per partition on the workers, and only reductions
    (:meth:`sum`, :meth:`reduce`) and selected rows (:meth:`take`) come back
    to the client.  The futures carry their lineage, so a partition lost
    with its worker is recomputed by the scheduler.  Converting one to a
    NumPy array raises (that would gather ``n`` rows onto the client).
    Without a client (``client=None``) the partitions are values in this
    process and every operation runs here (same code, no cluster).

    Parameters
    ----------
    client : distributed.Client or None
    futures : list of distributed.Future
        One per partition, in row order (without a client: the values).
    bounds : array-like of int
        Row offsets of the partitions.
    tail : tuple of int, default=()
        Shape of a row (``()`` for a vector, ``(K,)`` for ``K`` columns).

    Attributes
    ----------
    shape : tuple of int
        ``(n,) + tail``.
    """

    #: duck-type marker read by modules that may not import this one
    is_row_futures = True

    def __init__(self, client, futures, bounds, tail=()):
        self.client = client
        self.futures = list(futures)
        self.bounds = np.asarray(bounds, dtype=np.int64)
        self.shape = (int(self.bounds[-1]),) + tuple(int(t) for t in tail)

    @property
    def ndim(self):
        """Number of dimensions."""
        return len(self.shape)

    @property
    def size(self):
        """Number of entries."""
        return int(np.prod(self.shape))

    def __len__(self):
        return self.shape[0]

    def __array__(self, *args, **kwargs):
        raise TypeError("RowFutures holds its rows on the Dask workers; converting it to "
                        "a NumPy array would gather them onto the client.")

    def __array_function__(self, func, types, args, kwargs):
        if func is np.linalg.norm and len(args) == 1 and not kwargs:
            return float(np.sqrt(self.sum(_sq_sum)[0]))
        if func in (np.shape, np.ndim, np.size) and len(args) == 1 and not kwargs:
            return {np.shape: self.shape, np.ndim: self.ndim, np.size: self.size}[func]
        raise TypeError(f"numpy.{func.__name__} would gather the rows of a RowFutures "
                        "onto the client; use RowFutures.map / RowFutures.sum.")

    @classmethod
    def from_array(cls, client, array, bounds):
        """Split an in-memory array by rows onto the cluster (once).

        Each part is the argument of a task, so the scheduler can recompute
        a part lost with its worker.

        Parameters
        ----------
        client : distributed.Client
        array : ndarray of shape (n, ...)
        bounds : array-like of int

        Returns
        -------
        rows : RowFutures
        """
        bounds = np.asarray(bounds, dtype=np.int64)
        futs = [client.submit(_identity, array[a:b], pure=False)
                for a, b in zip(bounds[:-1], bounds[1:])]
        return cls(client, futs, bounds, np.shape(array)[1:])

    @classmethod
    def from_dask(cls, client, array, bounds=None):
        """The row partitions of a ``dask.array`` (persisted) as futures.

        Parameters
        ----------
        client : distributed.Client
        array : dask.array.Array of shape (n, ...)
            Rechunked to ``bounds`` and to whole rows.
        bounds : array-like of int, optional
            Row offsets (default: the array's own row chunks).

        Returns
        -------
        rows : RowFutures
        """
        from distributed import futures_of

        if bounds is not None:
            bounds = np.asarray(bounds, dtype=np.int64)
            if array.ndim and tuple(array.chunks[0]) != tuple(np.diff(bounds)):
                array = array.rechunk({0: tuple(int(c) for c in np.diff(bounds))})
        if array.ndim > 1 and any(nb != 1 for nb in array.numblocks[1:]):
            array = array.rechunk({i: -1 for i in range(1, array.ndim)})
        array = client.persist(array)
        by_key = {f.key: f for f in futures_of(array)}
        keys = [k for k in _flatten(array.__dask_keys__())]
        bounds = np.concatenate([[0], np.cumsum(array.chunks[0])]).astype(np.int64)
        return cls(client, [by_key[k] for k in keys], bounds, array.shape[1:])

    def _submit(self, fn, others):
        """One task per partition, submitted as one batch: ``fn(part, *other parts)``."""
        columns, whole = [self.futures], {}
        for j, o in enumerate(others):
            if isinstance(o, RowFutures):
                columns.append(o.futures)
            elif isinstance(o, PerPartition):
                columns.append(o.items)
            elif isinstance(o, np.ndarray) and o.ndim and o.shape[0] == self.shape[0]:
                columns.append([o[a:b] for a, b in zip(self.bounds[:-1], self.bounds[1:])])
            else:
                whole[j] = o  # the same object for every partition
        if whole:
            fn = partial(_call_with, fn, whole, len(others))
        if self.client is None:
            return [fn(*args) for args in zip(*columns)]
        return self.client.map(fn, *columns, pure=False)

    def map(self, fn, *others, tail=None):
        """``fn(part, *other parts)`` on every partition, as a new :class:`RowFutures`.

        Parameters
        ----------
        fn : callable
            Maps a partition (and the matching partitions of ``others``) to
            an array with the partition's rows.
        *others : RowFutures, PerPartition, ndarray or object
            Split like this one (RowFutures, PerPartition, an ``n``-row
            ndarray, sliced) or passed whole (anything else).
        tail : tuple of int, optional
            Row shape of the result (default: this one's).

        Returns
        -------
        rows : RowFutures
        """
        futs = self._submit(fn, others)
        return RowFutures(self.client, futs, self.bounds,
                          self.shape[1:] if tail is None else tail)

    def sum(self, fn, *others):
        """``sum_p fn(part_p, *other parts_p)``, reduced on the cluster.

        Parameters
        ----------
        fn : callable
            Maps a partition to an array of a fixed shape.
        *others : RowFutures, PerPartition, ndarray or object
            As in :meth:`map`.

        Returns
        -------
        total : ndarray
            The one result gathered by the client.
        """
        parts = self._submit(fn, others)
        if self.client is None:
            return _sum_all(parts)
        if len(parts) <= _CLIENT_SUM_PARTS:
            # Few small parts: summed here (same order as on a worker), one hop less.
            return _sum_all(gather_result(parts))
        return gather_result(self.client.submit(_sum_all, parts, pure=False))

    def reduce(self, combine=_sum_all):
        """``combine(list of the partitions' values)``, run on the cluster; its result.

        The partitions' values are already small (a :meth:`map` to sums per
        partition); ``combine`` merges them in one task next to them.

        Parameters
        ----------
        combine : callable, default=sum (entry by entry for tuples)
            Module-level function of the list of values, in row order.

        Returns
        -------
        result : object
            The reduced value, gathered by the client.
        """
        if self.client is None:
            return combine(self.futures)
        return gather_result(self.client.submit(combine, self.futures, pure=False))

    def take(self, rows):
        """The given rows of the partitions, gathered by the client.

        Parameters
        ----------
        rows : ndarray of int
            Sorted row indices (a few, e.g. a subsample).

        Returns
        -------
        rows : ndarray or scipy.sparse matrix
        """
        rows = np.asarray(rows, dtype=np.int64)
        known = getattr(self, "known_rows", None)
        if known is not None and np.array_equal(known[0], rows):
            return known[1]  # gathered along with another result
        which = np.searchsorted(self.bounds, rows, side="right") - 1
        got = []
        for i in np.unique(which):
            local = rows[which == i] - self.bounds[i]
            got.append(_take_rows(self.futures[i], local) if self.client is None
                       else self.client.submit(_take_rows, self.futures[i], local,
                                               pure=False))
        return stack_rows(got if self.client is None else gather_result(got))

    __getitem__ = take

    def split_rows(self, rows):
        """Sorted global row indices as each partition's local indices.

        Parameters
        ----------
        rows : ndarray of int

        Returns
        -------
        local : PerPartition
            One (possibly empty) index array per partition, held here.
        """
        rows = np.asarray(rows, dtype=np.int64)
        return PerPartition([rows[(rows >= a) & (rows < b)] - a
                             for a, b in zip(self.bounds[:-1], self.bounds[1:])])

    def __add__(self, other):
        # ``M + s * dM`` (a line search): one task per partition, and the same
        # object again for the accepted step (with what was attached to it)
        if not isinstance(other, _Scaled):
            other = _Scaled(other, 1.0)
        key = (id(other.base), other.s)
        memo = self.__dict__.setdefault("_steps", {})
        hit = memo.get(key)
        if hit is None or hit[0] is not other.base:
            memo.clear()  # one entry: the last step
            hit = memo[key] = (other.base, self.map(_axpy, other.base, other.s))
        return hit[1]

    def __mul__(self, s):
        return _Scaled(self, float(s))

    __rmul__ = __mul__

    def __neg__(self):
        return self.map(np.negative)

    def __sub__(self, other):
        return self.map(np.subtract, other)

    def copy(self):
        """This object (its partitions are never written in place)."""
        return self


class PerPartition:
    """One object per partition (e.g. a loss restricted to its rows), for :meth:`RowFutures.map`.

    Parameters
    ----------
    items : list
        Objects or futures, one per partition.
    """

    def __init__(self, items):
        self.items = list(items)


class _Scaled:
    """``s * base`` for a :class:`RowFutures` ``base``, formed when added to another."""

    def __init__(self, base, s):
        self.base, self.s, self.shape = base, s, base.shape


def _axpy(a, b, s):
    return a + s * b


def _take_rows(part, idx):
    """Rows ``idx`` (local indices) of a partition."""
    return part[idx]


def _call_with(fn, whole, n_others, part, *split):
    """``fn(part, *others)`` with the whole (unsplit) arguments put back in place."""
    split = iter(split)
    args = [whole[j] if j in whole else next(split) for j in range(n_others)]
    return fn(part, *args)


def _identity(x):
    return x


def _sq_sum(part):
    part = np.asarray(part, dtype=float)
    return np.array([float(np.sum(part * part))])


def _flatten(keys):
    if isinstance(keys, list):
        for k in keys:
            yield from _flatten(k)
    else:
        yield keys


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
    blocks : RowFutures or None
        The partitions on the cluster (with a distributed client).

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
        if any(np.isnan(c) for c in X.chunks[0]):
            X = X.compute_chunk_sizes()  # only the sizes reach the client
        self._dask = dask
        self.array = X
        self._parts = X.to_delayed().ravel().tolist()
        self.bounds = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
        self.shape = (int(self.bounds[-1]), int(X.shape[1]))
        self.blocks = (RowFutures.from_dask(self.client, X) if self.client is not None
                       else None)

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
            parts = self.blocks.map(fn, *row_args)
            return stack_rows(gather_result(parts.futures))  # one round trip
        return stack_rows(list(self._dask.compute(*self._tasks(fn, row_args))))

    def columns_on_workers(self, ids, weights=None):
        """``X[:, ids] * weights`` kept on the workers (FGM's active block).

        Parameters
        ----------
        ids : array-like of int
        weights : ndarray of shape (len(ids),), optional
            Column scaling.

        Returns
        -------
        columns : RowFutures of shape (n_samples, len(ids))
            CSC partitions for sparse ``X``, dense otherwise.
        """
        if self.blocks is None:
            raise TypeError("columns on the workers need a distributed client.")
        ids = np.asarray(ids, dtype=np.int64)
        return self.blocks.map(partial(_scaled_columns, ids=ids, weights=weights),
                               tail=(len(ids),))


def _scaled_columns(block, ids, weights):
    cols = block[:, ids]
    if sp.issparse(cols):
        return sp.csc_matrix(cols if weights is None else cols @ sp.diags(weights))
    cols = np.asarray(cols, dtype=float)
    return cols if weights is None else cols * weights
