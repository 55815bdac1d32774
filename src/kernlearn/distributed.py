"""Dask back end: FGM on row-partitioned data held by a Dask cluster.

:class:`DaskRows` is the :class:`~kernlearn.partitioned.RowPartitioned` view of a
``dask.array`` (dense or scipy-sparse chunks, partitioned by rows).  Every
access FGM makes is a map over the partitions on the workers: the squared
column norms and the pricing scores :math:`X'u = \\sum_p X_p' u_p` are
*reduced* on the cluster, so one ``n_features``-sized vector reaches the
client.  With a ``distributed`` client the master runs there too: the active
columns, the margins and the dual vectors are :class:`RowFutures` (split by
row partitions, on the workers), and each Newton step gathers only summed
gradients, Hessian blocks and loss values (:mod:`kernlearn._dask_master`).
Each pass is one task per worker (:class:`GroupedRows`: the partitions a
worker holds, in row order), not one per partition: Dask's bookkeeping
then does not grow with the number of partitions.
``X`` itself never leaves the workers, and neither does a Dask ``y``.
``FGMClassifier().fit(X_dask, y)`` uses it automatically.  Each fit on a
cluster first lets the workers' C allocator reuse freed memory
(:func:`tune_worker_malloc`: ``distributed``'s default made the row sums 2-8x
slower on a worker than in one process).

The classes live in :mod:`kernlearn.partitioned` (beside the other row
partitions, so that no module imports this one back); this module is their
public name.  Requires the ``dask`` extra (``pip install "kernlearn[dask]"``).
"""

from .partitioned import DaskRows, GroupedRows, RowFutures, tune_worker_malloc

__all__ = ["DaskRows", "GroupedRows", "RowFutures", "tune_worker_malloc"]
