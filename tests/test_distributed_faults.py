"""A worker process killed in the middle of a Dask FGM fit: same model, or a clear error."""

import os
import signal
import sys

import numpy as np
import pytest

from kernlearn import FGMClassifier

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

# Workers cannot import this test module: ship its functions by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

N, M, CHUNK = 800, 20, 200


@pytest.fixture
def cluster_client():
    # A cluster per test: a test that kills every worker must not leave the
    # next one waiting for the nannies to bring workers back.  One failure
    # allowed per task (an unrecoverable partition fails fast); tasks with no
    # worker for a minute fail instead of waiting forever.
    with dask.config.set({"distributed.scheduler.allowed-failures": 1,
                          "distributed.scheduler.no-workers-timeout": "60s"}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
        client = distributed.Client(cluster)
        client.wait_for_workers(2, timeout=120)
        yield client
        client.close()
        cluster.close()


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, M))
    w = np.zeros(M)
    w[:4] = [2.0, -1.0, 1.0, 0.5]
    return X, np.sign(X @ w + 0.3 * rng.standard_normal(N))


def _kill_a_worker(client, every=False):
    # every=True: no partition survives anywhere (which worker holds which
    # partition is the scheduler's choice, so killing one may lose nothing)
    pids = sorted(client.run(os.getpid).values())
    for pid in pids if every else pids[:1]:
        os.kill(pid, signal.SIGKILL)


def _kill_at_second_pricing(monkeypatch, client, before=None, every=False, at=2):
    # at: which dual point the kill comes before; the optimality check after
    # each Newton master computes one too (shared with the next pricing), so
    # the second is the check after the first master, the third comes after
    # the first round's record
    from kernlearn._dask_master import DaskMasterRows

    original = DaskMasterRows.dual_point
    calls = []

    def dual_point(self, M, centre):
        calls.append(1)
        if len(calls) == at:
            if before is not None:
                before()
            _kill_a_worker(client, every)
        return original(self, M, centre)

    monkeypatch.setattr(DaskMasterRows, "dual_point", dual_point)
    return calls


def test_killed_worker_mid_fit_gives_the_same_model(cluster_client, monkeypatch):
    X, y = _problem()
    Xd = da.from_array(X, chunks=(CHUNK, M))
    ref = FGMClassifier(B=2, max_iter=4).fit(Xd, y)
    calls = _kill_at_second_pricing(monkeypatch, cluster_client, at=3)
    got = FGMClassifier(B=2, max_iter=4).fit(Xd, y)
    assert len(calls) >= 4  # the fit went on after the kill
    np.testing.assert_array_equal(got.selected_features_, ref.selected_features_)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.intercept_, ref.intercept_, rtol=0, atol=1e-12)
    lost = got.history_["dask_workers_lost"]
    assert lost[0] == 0 and lost[-1] >= 1
    assert np.all(ref.history_["dask_workers_lost"] == 0)


def _chunk(seed, rows, flag):
    if os.path.exists(flag):  # as if the worker ran out of memory rebuilding it
        os._exit(1)
    return np.random.default_rng(seed).standard_normal((rows, M))


def test_unrecoverable_partition_ends_the_fit_with_a_clear_error(cluster_client, monkeypatch,
                                                                 tmp_path):
    flag = str(tmp_path / "fail")
    parts = [da.from_delayed(dask.delayed(_chunk)(i, CHUNK, flag), (CHUNK, M), dtype=float)
             for i in range(N // CHUNK)]
    Xd = da.concatenate(parts)
    _, y = _problem()
    _kill_at_second_pricing(monkeypatch, cluster_client,
                            before=lambda: open(flag, "w").close(), every=True)
    clf = FGMClassifier(B=2, max_iter=4)
    with pytest.raises(RuntimeError, match="lost a partition.*memory"):
        clf.fit(Xd, y)
    assert not hasattr(clf, "coef_")  # no half-fitted model


def test_grfl_unrecoverable_partition_ends_the_fit_with_the_same_clear_error(
        cluster_client, monkeypatch, tmp_path):
    # GrFL's partitions are reduced through the same gathers as FGM's
    from kernlearn import InfiniteFeatureClassifier
    from kernlearn.methods._grfl_dask import DaskGrFL

    flag = str(tmp_path / "fail")
    parts = [da.from_delayed(dask.delayed(_chunk)(i, CHUNK, flag), (CHUNK, M), dtype=float)
             for i in range(N // CHUNK)]
    Xd = da.concatenate(parts)
    _, y = _problem()
    master, calls = DaskGrFL.master, []

    def master_after_a_loss(self, cand):
        calls.append(1)
        if len(calls) == 2:  # the second master: the partitions must be rebuilt
            open(flag, "w").close()
            _kill_a_worker(cluster_client, every=True)
        return master(self, cand)

    monkeypatch.setattr(DaskGrFL, "master", master_after_a_loss)
    clf = InfiniteFeatureClassifier(max_features=4, n_candidates=5, random_state=0)
    with pytest.raises(RuntimeError, match="lost a partition.*memory"):
        clf.fit(Xd, y)
    assert len(calls) == 2  # it stopped at the loss, not later
    assert not hasattr(clf, "coef_")  # no half-fitted model
