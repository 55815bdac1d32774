"""Audit 67: a hostile review of the twenty-seventh pass's merges.

Each test fails on the code as merged and passes with its fix.
"""


import asyncio
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn.widths import pairwise_spread_ratio


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_spread_ratio_of_integer_and_boolean_sparse_rows(dtype):
    """``pairwise_spread_ratio`` (public in ``kernlearn.widths``) of an integer
    or boolean sparse matrix is that of the same rows as floats.  A boolean
    one's inner products were logical (1 for any overlap): a wrong ratio, 0.97
    for 1.10 here; and the in-place doubling of the inner products (this
    pass's low-rank speed-up) raised NumPy's UFuncTypeError ("Cannot cast
    ufunc 'multiply' output") on integer ones too."""
    X = np.random.default_rng(0).poisson(1.0, size=(60, 5)).astype(dtype)
    want = pairwise_spread_ratio(sp.csr_matrix(X.astype(float)))
    got = pairwise_spread_ratio(sp.csr_matrix(X))
    assert got == pytest.approx(want, rel=1e-12)
    assert got != 1.0  # (a spread, not the ratio of a zero median)


def test_dask_wait_survives_the_asyncio_timeout_of_python_310(monkeypatch):
    """A gather that waits over a second goes on waiting on Python 3.10 too.

    ``distributed.wait(..., timeout=)`` raises ``asyncio.TimeoutError`` when
    its time is up (``distributed.utils.wait_for`` is ``asyncio.wait_for``
    before Python 3.11), which on 3.10 is not the builtin ``TimeoutError`` the
    wait for a cluster without workers caught: every Dask fit whose tasks ran
    over a second would have stopped with it.  The class is made distinct here
    as on 3.10 (from 3.11 on the two are one)."""
    distributed = pytest.importorskip("distributed")
    from kernlearn._row_futures import wait_for

    class AsyncioTimeout(Exception):
        """``asyncio.TimeoutError`` as on Python 3.10: not a ``TimeoutError``."""

    monkeypatch.setattr(asyncio, "TimeoutError", AsyncioTimeout)
    waits = []

    def wait(futures, timeout=None):
        waits.append(timeout)
        if len(waits) < 3:  # (the task still running: the wait's time is up)
            raise AsyncioTimeout()

    class Future:  # (one task, done at the third wait, on a cluster with a worker)
        client = SimpleNamespace(nthreads=lambda: {"tcp://worker": 1})

        def done(self):
            return len(waits) >= 3

    monkeypatch.setattr(distributed, "wait", wait)
    wait_for([Future()])
    assert len(waits) == 3


def test_tasks_cancelled_while_a_fit_waits_give_the_clear_error():
    """Tasks cancelled while the fit waits on them (``client.restart()``, the
    partitions released) end it with the cluster error naming the cause, as
    they did before the wait for workers: ``distributed.wait`` raises
    ``FuturesCancelledError`` (plural), which was not recognised, where the
    gather raised ``FutureCancelledError``."""
    distributed = pytest.importorskip("distributed")
    from kernlearn._row_futures import gather_result

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        future = client.submit(time.sleep, 3, pure=False)
        timer = threading.Timer(0.5, future.cancel)
        timer.start()
        with pytest.raises(RuntimeError, match="stopped serving the fit"):
            gather_result([future])
        timer.join()
