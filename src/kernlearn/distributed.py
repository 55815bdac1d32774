"""Dask back end: FGM on row-partitioned data held by a Dask cluster.

:class:`DaskRows` is the :class:`~kernlearn.partitioned.RowPartitioned` view of a
``dask.array`` (dense or scipy-sparse chunks, partitioned by rows).  Every
access FGM makes is a map over the partitions on the workers: the squared
column norms and the pricing scores :math:`X'u = \\sum_p X_p' u_p` are also
*reduced* on the cluster, so one ``n_features``-sized vector reaches the
client; the active columns ``X[:, ids]`` (``n x |active|``, small) are
gathered once per outer iteration for the master.  ``X`` itself never leaves
the workers.  ``FGMClassifier().fit(X_dask, y)`` uses it automatically.

:class:`DaskFeaturePool` is the older entry point: an in-memory ``X`` is
scattered once over the cluster and priced there.

Requires the ``dask`` extra (``pip install kernlearn[dask]``).
"""

import numpy as np

from .families.pool import FeaturePool
from .partitioned import RowPartitioned, stack_rows

__all__ = ["DaskFeaturePool", "DaskRows"]


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


def _sum_all(parts):
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


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

    def _tasks(self, fn, row_args):
        delayed = self._dask.delayed
        # Each partition's task carries its rows of the n-sized vectors.
        slices = [[r[a:b] for r in row_args]
                  for a, b in zip(self.bounds[:-1], self.bounds[1:])]
        call = delayed(fn, pure=False)
        return [call(part, *args) for part, args in zip(self._parts, slices)]

    def _compute(self, *objs):
        if self.client is not None:
            return self.client.compute(list(objs), sync=True)
        return list(self._dask.compute(*objs))

    def map_sum(self, fn, *row_args):
        tasks = self._tasks(fn, row_args)
        # The sum runs on the cluster: one result travels.
        return self._compute(self._dask.delayed(_sum_all, pure=False)(tasks))[0]

    def map_stack(self, fn, *row_args):
        return stack_rows(self._compute(*self._tasks(fn, row_args)))


class DaskFeaturePool(FeaturePool):
    """Feature pool whose rows are scattered over a Dask cluster.

    An in-memory ``X`` is split into row blocks and sent to the workers once,
    at ``fit``; pricing is then a map-reduce there (:class:`DaskRows`), each
    outer iteration moving ``n`` floats out and ``n_features`` floats back.
    The master runs on the client.  (For data that never was on the client,
    pass a ``dask.array`` to the estimator's ``fit`` instead.)

    Parameters
    ----------
    n_partitions : int, default=4
        Row blocks the data is split into.
    scheduler_address : str, optional
        Address of the scheduler; by default the current client
        (``distributed.get_client()``), e.g. one made from a ``LocalCluster``.
    groups, tree, feature_scaling, chunk_size :
        As in :class:`~kernlearn.families.FeaturePool` (group scores are
        computed on the client from the reduced per-feature scores).

    References
    ----------
    Tan, Tsang, Wang (2014), JMLR 15, sec. 5.3.1.
    """

    def __init__(self, n_partitions=4, scheduler_address=None, groups=None, tree=False,
                 feature_scaling=True, chunk_size=None):
        super().__init__(groups=groups, tree=tree, feature_scaling=feature_scaling,
                         chunk_size=chunk_size)
        self.n_partitions = n_partitions
        self.scheduler_address = scheduler_address

    def _client(self):
        from distributed import Client, get_client

        if self.scheduler_address:
            # One connection for the pool's lifetime: the scattered row blocks
            # belong to it, and a new Client per pricing call leaks connections.
            if getattr(self, "_own_client", None) is None:
                self._own_client = Client(self.scheduler_address, set_as_default=False)
            return self._own_client
        try:
            return get_client()
        except ValueError as exc:
            raise RuntimeError(
                "DaskFeaturePool needs a running Dask client (e.g. "
                "Client(LocalCluster())) or scheduler_address."
            ) from exc

    def fit(self, X):
        import dask.array as da

        if self.n_partitions < 1:
            raise ValueError("n_partitions must be >= 1.")
        client = self._client()
        n = X.shape[0]
        bounds = np.linspace(0, n, min(self.n_partitions, n) + 1).astype(int)
        futures = client.scatter([X[a:b] for a, b in zip(bounds[:-1], bounds[1:])])
        meta = X[:0]
        arr = da.concatenate([
            da.from_delayed(f, shape=(b - a, X.shape[1]), dtype=X.dtype, meta=meta)
            for f, a, b in zip(futures, bounds[:-1], bounds[1:])
        ])
        self._rows = DaskRows(arr, client=client, persist=False)
        self.bounds_ = self._rows.bounds
        return super().fit(self._rows)

    def feature_scores(self, u, X=None):
        """Scaled :math:`\\lambda_j f_j'u` by map (per block) and reduce (sum).

        Parameters
        ----------
        u : ndarray of shape (n_samples,) or (n_samples, K)
        X : ignored
            The data scattered at ``fit`` is used.

        Returns
        -------
        scores : ndarray of shape (n_features,) or (n_features, K)
        """
        return super().feature_scores(u, self._rows)
