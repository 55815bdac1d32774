"""Dask back end: FGM on row-partitioned data held by a Dask cluster.

:class:`DaskRows` is the :class:`~kernlearn.partitioned.RowPartitioned` view of a
``dask.array`` (dense or scipy-sparse chunks, partitioned by rows).  Every
access FGM makes is a map over the partitions on the workers: the squared
column norms and the pricing scores :math:`X'u = \\sum_p X_p' u_p` are also
*reduced* on the cluster, so one ``n_features``-sized vector reaches the
client; the active columns ``X[:, ids]`` (``n x |active|``, small) are
gathered once per outer iteration for the master.  ``X`` itself never leaves
the workers.  ``FGMClassifier().fit(X_dask, y)`` uses it automatically.

The class lives in :mod:`kernlearn.partitioned` (beside the other row
partitions, so that no module imports this one back); this module is its
public name.  Requires the ``dask`` extra (``pip install kernlearn[dask]``).
"""

from .partitioned import DaskRows

__all__ = ["DaskRows"]
