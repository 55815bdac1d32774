"""Arrays held by a Dask cluster by row partitions: :class:`RowFutures` and
:class:`GroupedRows` (the row primitives of every fit on a cluster).

A row partition is the unit of ``X``'s layout, but one task per partition and
per pass is the unit of Dask's overhead: the scheduler's and the client's
bookkeeping (task specs, messages, state transitions) costs about a
millisecond of CPU per task and grows with the partitions of every pass.  A
fit makes about a hundred passes; with :class:`GroupedRows` each pass is one
task per worker instead of one per partition: the task runs the
per-partition function on every partition that worker holds (in row order)
and, for a reduction, sums them there.  No data moves: a group is the
partitions one worker already holds.

This module imports nothing else from kernlearn (:mod:`kernlearn.partitioned`
re-exports its names).
"""

import asyncio
import contextlib
import contextvars
import copy
import itertools
import threading
import time
import uuid
import weakref
from functools import partial

import numpy as np
import scipy.sparse as sp

__all__ = ["GroupedRows", "PerPartition", "RowFutures", "checked_partition", "fit_futures",
           "gather_result", "made", "no_workers_timeout", "stack_rows", "wait_for"]

# the record of the futures the running fit (this context's :func:`fit_futures`
# block) made, held weakly: a fit drops each step's futures as it goes, and they must go
_FIT_FUTURES = contextvars.ContextVar("kernlearn_fit_futures", default=None)


class _FitRecord:
    """The futures one fit made, held weakly; released once, if the fit raises.

    The fit's threads (FGM's one-vs-rest problems, carried into them) record
    into it too.  joblib cannot stop a thread that runs when another raised:
    its futures made after the release are released as they are made (that
    thread's next wait fails, and its error is dropped with the fit's).  Held
    by joblib with its error, which the fit's error kept, they stayed on the
    cluster.  The lock orders a thread's records and the release.
    """

    def __init__(self):
        self._held = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        self._released = False

    def add(self, futures):
        """Record ``futures`` (distributed futures), or release them after the fit's error."""
        with self._lock:
            if not self._released:
                for f in futures:
                    self._held[id(f)] = f
                return
        for f in futures:
            f.release()

    def release(self):
        """Release every recorded future still referenced (the fit raised)."""
        with self._lock:
            self._released = True
            held = list(self._held.values())
        for f in held:
            f.release()


def made(futures):
    """Record ``futures`` as made by the running fit (:func:`fit_futures`).

    Parameters
    ----------
    futures : iterable
        ``distributed.Future`` s (other items, e.g. objects of a
        :class:`PerPartition`, are skipped).

    Returns
    -------
    futures : the argument
    """
    record = _FIT_FUTURES.get()
    if record is not None:
        record.add([f for f in futures if hasattr(f, "release") and hasattr(f, "key")])
    return futures


@contextlib.contextmanager
def fit_futures():
    """A fit: the futures it made are released if it raises.

    Stopped by Ctrl-C (or any error), a fit's futures stayed referenced by
    the exception, which a notebook keeps (``sys.last_value``): its
    traceback holds the fit's frames, their locals and the closures of
    their functions (``frame.clear`` leaves a frame's function), and
    through them the fit's ``RowFutures``.  The cluster kept the fit's data
    (13 futures, 33 tasks of a small FGM fit) until the exception was
    dropped.  Each future the fit made (:func:`made`) is released instead:
    the exception and its traceback stay whole, the futures in its frames
    hold nothing on the cluster.  Only the fit's own future objects are
    released: a key the user holds too (``X`` persisted, then persisted
    again by the fit) keeps the user's reference.  A nested block (an
    inner fit) leaves the release to the outer one.
    """
    if _FIT_FUTURES.get() is not None:
        yield
        return
    record = _FitRecord()
    token = _FIT_FUTURES.set(record)
    try:
        yield
    except BaseException:
        record.release()
        raise
    finally:
        _FIT_FUTURES.reset(token)


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
    # (FuturesCancelledError: distributed.wait's, for tasks cancelled while waited on)
    if name in ("CancelledError", "FutureCancelledError", "FuturesCancelledError",
                "CommClosedError"):
        return RuntimeError(
            f"the Dask cluster stopped serving the fit ({name}: {exc}); the client lost "
            "its connection or the partitions were released.")
    return None


def no_workers_timeout():
    """Seconds a fit waits on a cluster that has no worker before it stops (None: forever).

    The Dask config key ``kernlearn.no-workers-timeout`` (default ``"120s"``;
    ``None`` waits as long as Dask does, forever unless the scheduler's
    ``distributed.scheduler.no-workers-timeout`` is set).

    Returns
    -------
    seconds : float or None
    """
    import dask
    from dask.utils import parse_timedelta

    value = dask.config.get("kernlearn.no-workers-timeout", "120s")
    return None if value is None else parse_timedelta(value, default="s")


def wait_for(futures):
    """Wait until ``futures`` are done; a cluster left without workers ends the wait.

    Dask waits forever for a task no worker can run: a fit whose cluster lost
    every worker (workers without a nanny closed or killed, a cluster scaled
    to zero, ``client.restart()`` on such workers) hung in its next gather.
    Here a wait that sees no worker for :func:`no_workers_timeout` seconds
    raises instead (workers that come back in time, e.g. restarted by their
    nannies or started by an adaptive cluster, let it go on).

    Parameters
    ----------
    futures : list of distributed.Future

    Raises
    ------
    RuntimeError
        When the cluster had no worker for the whole timeout.
    """
    from distributed import wait

    if all(f.done() for f in futures):
        return
    limit, idle_since = no_workers_timeout(), None
    while True:
        try:
            wait(futures, timeout=1.0 if limit is None else min(1.0, max(limit, 0.01)))
            return
        except (TimeoutError, asyncio.TimeoutError):  # (not one class before 3.11)
            pass
        if limit is None or futures[0].client.nthreads():  # (asked of the scheduler)
            idle_since = None
            continue
        now = time.monotonic()
        idle_since = now if idle_since is None else idle_since
        if now - idle_since >= limit:
            raise RuntimeError(
                f"the Dask cluster of the fit has had no worker for {limit:g} s, so "
                f"{sum(not f.done() for f in futures)} of its tasks cannot run: start workers "
                "(or close the client to fit with Dask's local scheduler); the Dask config "
                "key kernlearn.no-workers-timeout sets how long a fit waits for one.")


def _detached(exc, futures):
    """``exc`` to raise to the caller, one the client's record of the failed task does not hold.

    ``distributed`` raises the exception it keeps for a failed task (the
    future's state, in ``client.futures`` while the task is referenced) and
    the raise appends this process's frames to its traceback: the frames of
    the fit, holding the futures of ``X``'s partitions and of every vector
    derived from them.  The client's record then kept those futures alive,
    so after a failed fit the workers held its data until the client closed.
    The kept exception gets back its remote traceback alone and the caller
    gets a copy (the exception itself when it cannot be copied).
    """
    held = [f for f in futures if f.status == "error" and f.exception() is exc]
    if not held:  # (not a task's error: the client keeps no record of it)
        return exc
    try:
        shown = copy.copy(exc).with_traceback(exc.__traceback__)
    except (TypeError, AttributeError, ValueError):  # (a class that cannot rebuild itself)
        return exc
    exc.__traceback__ = held[0].traceback()
    return shown


def gather_result(future):
    """The result of a future (or list); a lost, unrecoverable partition raises a clear error.

    The wait ends with a RuntimeError when the cluster has had no worker for
    :func:`no_workers_timeout` seconds (:func:`wait_for`).  A failed task
    raises its error without the client keeping this process's frames (and
    the futures they hold) alive (:func:`_detached`).

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
        killed repeatedly running one of its tasks, or no worker is left),
        naming the cause.
    """
    futures = made(future if isinstance(future, list) else [future])
    try:
        wait_for(futures)
        return futures[0].client.gather(future)
    except Exception as exc:
        err = _cluster_error(exc)
        shown = _detached(exc, futures)
        if err is not None:
            raise err from shown
        if shown is exc:
            raise
        raise shown from None


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
        self.futures = made(list(futures))
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

    def gather_parts(self):
        """Every partition's value, in row order, gathered by the client (one round trip).

        Returns
        -------
        parts : list
        """
        return list(self.futures) if self.client is None else gather_result(self.futures)

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
        self.items = made(list(items))


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


# Task keys of the group passes: a counter behind one random prefix per process
# (distributed's default, a fresh uuid4 per task, was a tenth of the client's
# time in a fit)
_KEY_PREFIX, _KEY_COUNT = f"kernlearn-rows-{uuid.uuid4().hex}", itertools.count()


def _keys(n):
    return [f"{_KEY_PREFIX}-{next(_KEY_COUNT)}" for _ in range(n)]


def _group_apply(fn, summed, *columns):
    """``fn`` on each partition of a group (one list per argument); their sum or list."""
    out = [fn(*args) for args in zip(*columns)]
    return _sum_all(out) if summed else out


def _collect(*parts):
    return list(parts)


def checked_partition(part, where, name="X"):
    """``part``, refused unless it has the shape its Dask array's chunks declare.

    A partition computed to another shape (``da.from_delayed`` given a wrong
    ``shape``) failed the fit later with NumPy's words about operands that do
    not broadcast, naming nothing.

    Parameters
    ----------
    part : ndarray or scipy.sparse matrix
    where : tuple
        ``(i, a, b, tail)``: the partition's number, its rows ``a:b`` and the
        shape of a row.
    name : str, default="X"

    Returns
    -------
    part : ndarray or scipy.sparse matrix
    """
    i, a, b, tail = where
    got, declared = tuple(np.shape(part)), (int(b - a),) + tuple(tail)
    if got != declared:
        raise ValueError(
            f"partition {i} of {name} (rows {a}:{b}) computed to an array of shape {got}, "
            f"not the {declared} its Dask chunks declare: give the partitions' true shapes "
            f"(e.g. da.from_delayed(..., shape=...)) or call {name}.compute_chunk_sizes().")
    return part


def _collect_checked(expected, *parts):
    """:func:`_collect` of partitions of ``X``, each checked (:func:`checked_partition`)."""
    return [checked_partition(part, where) for where, part in zip(expected, parts)]


def _pick(group, j):
    return group[j]


def _take_group(group, j, idx):
    return group[j][idx]


def _reduce_groups(combine, order, *groups):
    """``combine`` of the partitions' values put back in row order."""
    flat = [v for g in groups for v in g]
    return combine([flat[k] for k in np.argsort(order, kind="stable")])


class GroupedRows(RowFutures):
    """A :class:`RowFutures` run one task per group of partitions.

    Each group is the partitions one worker holds (:meth:`by_worker`); its
    future holds their values as a list.  Every operation of
    :class:`RowFutures` keeps its meaning (the same rows, the same
    per-partition function), with one task per group instead of one per
    partition.  Arguments split like ``X`` (ungrouped RowFutures,
    :class:`PerPartition`, ``n``-row arrays) reach each group as lists of
    their partitions.  The group tasks depend on the partitions' futures, so
    a group lost with its worker is recomputed from its lineage elsewhere.

    Parameters
    ----------
    client : distributed.Client
    group_futures : list of distributed.Future
        One per group: the list of its partitions' values.
    groups : list of list of int
        The partitions of each group (in row order within a group).
    bounds : array-like of int
        Row offsets of the partitions.
    tail : tuple of int, default=()
        Shape of a row.
    """

    def __init__(self, client, group_futures, groups, bounds, tail=()):
        self.client = client
        self.group_futures = made(list(group_futures))
        self.groups = [list(g) for g in groups]
        self.bounds = np.asarray(bounds, dtype=np.int64)
        self.shape = (int(self.bounds[-1]),) + tuple(int(t) for t in tail)

    @classmethod
    def by_worker(cls, rows):
        """Group ``rows``' partitions by the worker holding them (waits for them).

        Parameters
        ----------
        rows : RowFutures
            Computed or pending partitions on a distributed client.

        Returns
        -------
        grouped : GroupedRows
        """
        wait_for(rows.futures)
        who = rows.client.who_has(rows.futures)
        by = {}
        for i, f in enumerate(rows.futures):
            holders = sorted(who.get(f.key, ()))
            by.setdefault(holders[0] if holders else f"({i})", []).append(i)
        return cls._from_parts(rows, sorted(by.values()), checked=True)

    @classmethod
    def _from_parts(cls, rows, groups, checked=False):
        b, tail = rows.bounds, rows.shape[1:]
        # (the partitions of X itself: each checked against the shape its chunks declare)
        collect = [partial(_collect_checked, [(i, b[i], b[i + 1], tail) for i in g])
                   if checked else _collect for g in groups]
        futs = [rows.client.submit(c, *[rows.futures[i] for i in g], pure=False)
                for c, g in zip(collect, groups)]
        return cls(rows.client, futs, groups, rows.bounds, tail)

    def align(self, rows):
        """Ungrouped ``rows`` (split like these) in this grouping (one task per group).

        Parameters
        ----------
        rows : RowFutures

        Returns
        -------
        grouped : GroupedRows
        """
        if isinstance(rows, GroupedRows) and rows.groups == self.groups:
            return rows
        return self._from_parts(rows, self.groups)

    @property
    def futures(self):
        """One future per partition (a task each: the grouped operations avoid them)."""
        where = [None] * (len(self.bounds) - 1)
        for gf, g in zip(self.group_futures, self.groups):
            for j, i in enumerate(g):
                where[i] = self.client.submit(_pick, gf, j, pure=False)
        return made(where)

    def _columns(self, others):
        """Each argument as one value per group: a group future or a list of parts."""
        cols, whole = [self.group_futures], {}
        b = self.bounds
        for j, o in enumerate(others):
            if isinstance(o, GroupedRows) and o.groups == self.groups:
                cols.append(o.group_futures)
            elif isinstance(o, RowFutures):
                parts = o.futures
                cols.append([[parts[i] for i in g] for g in self.groups])
            elif isinstance(o, PerPartition):
                cols.append([[o.items[i] for i in g] for g in self.groups])
            elif isinstance(o, np.ndarray) and o.ndim and o.shape[0] == self.shape[0]:
                cols.append([[o[b[i]:b[i + 1]] for i in g] for g in self.groups])
            else:
                whole[j] = o  # the same object for every partition
        return cols, whole

    def _submit(self, fn, others, summed=False):
        cols, whole = self._columns(others)
        if whole:
            fn = partial(_call_with, fn, whole, len(others))
        # (one message to the scheduler for all the groups)
        return self.client.map(partial(_group_apply, fn, summed), *cols,
                               key=_keys(len(self.groups)), pure=False)

    def map(self, fn, *others, tail=None):
        futs = self._submit(fn, others)
        return GroupedRows(self.client, futs, self.groups, self.bounds,
                           self.shape[1:] if tail is None else tail)

    def sum(self, fn, *others):
        parts = self._submit(fn, others, summed=True)
        if len(parts) <= _CLIENT_SUM_PARTS:
            return _sum_all(gather_result(parts))
        return gather_result(self.client.submit(_sum_all, parts, pure=False))

    def reduce(self, combine=_sum_all):
        order = [i for g in self.groups for i in g]
        return gather_result(self.client.submit(_reduce_groups, combine, order,
                                                *self.group_futures, pure=False))

    def gather_parts(self):
        out = [None] * (len(self.bounds) - 1)
        for g, values in zip(self.groups, gather_result(self.group_futures)):
            for i, v in zip(g, values):
                out[i] = v
        return out

    def take(self, rows):
        rows = np.asarray(rows, dtype=np.int64)
        known = getattr(self, "known_rows", None)
        if known is not None and np.array_equal(known[0], rows):
            return known[1]
        which = np.searchsorted(self.bounds, rows, side="right") - 1
        place = {i: (gi, j) for gi, g in enumerate(self.groups) for j, i in enumerate(g)}
        got = []
        for i in np.unique(which):
            gi, j = place[int(i)]
            got.append(self.client.submit(_take_group, self.group_futures[gi], j,
                                          rows[which == i] - self.bounds[i], pure=False))
        return stack_rows(gather_result(got))

    __getitem__ = take
