"""FGM's master on a Dask LocalCluster: the in-memory model, nothing n-sized on the client."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import FGMClassifier, FGMRegressor

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

N, M, CHUNK = 600, 30, 150


def _data(rng, n=N, sparse=False):
    X = rng.standard_normal((n, M))
    if sparse:
        X[rng.random(X.shape) < 0.7] = 0.0
    w = np.zeros(M)
    w[:5] = [2.0, -1.5, 1.0, 1.0, -0.5]
    f = X @ w + 0.3 * rng.standard_normal(n)
    return (sp.csr_matrix(X) if sparse else X), f


def _dask(X, y=None, chunk=CHUNK):
    Xd = da.from_array(X, chunks=(chunk, X.shape[1]), asarray=False)
    return Xd if y is None else (Xd, da.from_array(y, chunks=chunk))


# name: (estimator, target from the signal, sparse X, y as a Dask array)
CASES = {
    "binary": (lambda: FGMClassifier(B=2, max_iter=5), lambda f: np.sign(f), False, False),
    "binary-sparse-logistic": (lambda: FGMClassifier(B=2, max_iter=5, loss="logistic"),
                               lambda f: np.sign(f), True, True),
    "multiclass": (lambda: FGMClassifier(B=2, max_iter=4),
                   lambda f: np.digitize(f, [-1.0, 1.0]), False, True),
    "regression": (lambda: FGMRegressor(B=2, max_iter=4, C=1.0), lambda f: 3 * f + 1, False, True),
    "budget": (lambda: FGMClassifier(B=2, max_features=5), lambda f: np.sign(f), False, False),
    "groups": (lambda: FGMClassifier(B=1, max_iter=4,
                                     groups=[list(range(i, i + 3)) for i in range(0, M, 3)]),
               lambda f: np.sign(f), False, False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_dask_master_gives_the_in_memory_model(client, rng, case):
    make, target, sparse, dask_y = CASES[case]
    X, f = _data(rng, sparse=sparse)
    y = target(f)
    ref = make().fit(X, y)
    Xd, yd = _dask(X, y)
    got = make().fit(Xd, yd if dask_y else y)
    np.testing.assert_array_equal(got.selected_features_, ref.selected_features_)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(got.intercept_, ref.intercept_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(got.history_["objective"], ref.history_["objective"],
                               rtol=1e-10)
    # (no worker is stopped here: a count above 0 is a worker that really left,
    # e.g. restarted by its nanny, or a miscount; the rounds' counts say when)
    assert np.all(got.history_["dask_workers_lost"] == 0), got.history_["dask_workers_lost"]
    if case != "regression":
        np.testing.assert_array_equal(got.classes_, ref.classes_)


def test_no_worker_is_counted_lost_when_the_clients_cache_lists_none(client, rng,
                                                                     monkeypatch):
    # The count read client.scheduler_info()["workers"]: the client's cached
    # scheduler identity, which its periodic refresh (every 2 s) replaces with one
    # listing no worker (scheduler.identity(n_workers=0)).  A refresh landing
    # between scheduler_info's own fetch and its return made both workers of an
    # intact cluster "lost" (dask_workers_lost 0, 2, 2, 2, 2 in a full test run,
    # once).  Here every other call returns such a cached identity.
    real = client.scheduler_info()
    assert len(real["workers"]) == 2
    answers = itertools.cycle([real, dict(real, workers={})])
    monkeypatch.setattr(client, "scheduler_info", lambda *a, **k: next(answers))
    X, f = _data(rng)
    got = FGMClassifier(B=2, max_iter=3).fit(_dask(X), np.sign(f))
    assert got.history_["dask_workers_lost"].size == got.n_iter_
    assert np.all(got.history_["dask_workers_lost"] == 0), got.history_["dask_workers_lost"]


def test_dask_master_with_sample_weights(client, rng):
    X, f = _data(rng)
    y = np.sign(f)
    sw = rng.integers(0, 3, N).astype(float)
    ref = FGMClassifier(B=2, max_iter=4).fit(X, y, sample_weight=sw)
    got = FGMClassifier(B=2, max_iter=4).fit(_dask(X), y, sample_weight=sw)
    np.testing.assert_array_equal(got.selected_features_, ref.selected_features_)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=0, atol=1e-9)


class _Received:
    """Bytes of every result the client gathers (``Future.result``, ``gather``, ``compute``)."""

    def __init__(self, client, monkeypatch):
        from dask.sizeof import sizeof

        self.sizes = []
        original = client._gather

        async def counting(futures, *args, **kwargs):
            out = await original(futures, *args, **kwargs)
            self.sizes.append(sizeof(out))
            return out

        monkeypatch.setattr(client, "_gather", counting)


class _Sent:
    """Largest NumPy array (entries) in the arguments of every task the client submits."""

    def __init__(self, client, monkeypatch):
        self.sizes = []
        for name in ("map", "submit"):
            original = getattr(client, name)

            def spy(*args, _original=original, **kwargs):
                self.sizes.append(max([0] + list(_arrays(args))))
                return _original(*args, **kwargs)

            monkeypatch.setattr(client, name, spy)


def _arrays(obj, depth=0):
    import functools

    if isinstance(obj, np.ndarray):
        yield obj.size
    elif sp.issparse(obj):
        yield obj.nnz
    elif depth < 4 and isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _arrays(o, depth + 1)
    elif depth < 4 and isinstance(obj, dict):
        for o in obj.values():
            yield from _arrays(o, depth + 1)
    elif depth < 4 and isinstance(obj, functools.partial):
        yield from _arrays((obj.func, obj.args, obj.keywords), depth + 1)


def test_nothing_n_sized_reaches_the_client(client, rng, monkeypatch):
    from kernlearn.distributed import DaskRows

    n, chunk = 8000, 2000
    X, f = _data(rng, n=n)
    Xd, yd = _dask(X, np.sign(f), chunk=chunk)
    received = _Received(client, monkeypatch)
    # The instrument sees an n-sized gather (so its silence below means something).
    DaskRows(Xd, client=client).map_stack(lambda B: B[:, :1])
    assert sum(received.sizes) >= 8 * n and max(received.sizes) >= 8 * chunk
    received.sizes.clear()
    sent = _Sent(client, monkeypatch)
    clf = FGMClassifier(B=3, max_iter=4).fit(Xd, yd)
    assert len(clf.selected_features_) >= 3
    assert len(received.sizes) > 20 and len(sent.sizes) > 20
    # Nor does the client send any (e.g. a vector of unit weights, sliced).
    assert max(sent.sizes) < chunk / 4, max(sent.sizes)
    # Largest result: O(|active|^2 + m) numbers, a quarter of one partition's n-vector.
    assert max(received.sizes) < 8 * chunk / 4, max(received.sizes)


def test_row_futures_refuse_to_become_numpy(client, rng):
    from kernlearn.partitioned import RowFutures

    u = RowFutures.from_array(client, rng.standard_normal(10), [0, 4, 10])
    with pytest.raises(TypeError, match="gather"):
        np.asarray(u)
    with pytest.raises(TypeError, match="gather"):
        np.sum(u)
    assert np.shape(u) == (10,) and np.ndim(u) == 1 and len(u) == 10


def test_row_sums_equal_the_in_memory_derivatives(client, rng):
    # The cluster's gradient and Hessian blocks are the sums of the partitions'.
    from kernlearn._dask_master import (linear_loss_derivatives, linear_loss_value,
                                        linear_margins, loss_partitions)
    from kernlearn.losses import get_loss, weighted
    from kernlearn.partitioned import RowFutures
    from kernlearn.solvers.prox_newton import loss_derivatives

    n, p, K = 500, 6, 2
    A = rng.standard_normal((n, p))
    Y = np.sign(rng.standard_normal((n, K)))
    W, b = rng.standard_normal((p, K)), rng.standard_normal(K)
    sw = rng.random(n)
    loss = weighted(get_loss("logistic"), sw, C=0.7)
    bounds = [0, 120, 300, 500]
    Ad = RowFutures.from_array(client, A, bounds)
    Yd = RowFutures.from_array(client, Y, bounds)
    Md = linear_margins(Ad, W, b)
    parts = loss_partitions(client, loss, np.asarray(bounds))
    Mm = A @ W + b
    np.testing.assert_allclose(linear_loss_value(Md, Yd, parts), loss.value(Mm, Y).sum(),
                               rtol=1e-13)
    for got, want in zip(linear_loss_derivatives(Ad, Md, Yd, parts),
                         loss_derivatives(A, Mm, Y, loss)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # and they are the derivatives: a finite difference of the value in W
    g = linear_loss_derivatives(Ad, Md, Yd, parts)[0]
    E = np.zeros((p, K))
    E[2, 1] = 1e-6
    fd = (loss.value(A @ (W + E) + b, Y).sum() - loss.value(A @ (W - E) + b, Y).sum()) / 2e-6
    np.testing.assert_allclose(g[1, 2], fd, rtol=1e-6)


def test_dask_master_is_newton(client, rng):
    X, f = _data(rng)
    with pytest.raises(ValueError, match="proximal Newton"):
        FGMClassifier(B=2, max_iter=2, solver="apg").fit(_dask(X), np.sign(f))


def test_dask_y_shape_checked(client, rng):
    X, f = _data(rng)
    with pytest.raises(ValueError, match="rows"):
        FGMClassifier(B=2).fit(_dask(X), da.from_array(np.sign(f[:-1]), chunks=CHUNK))
    with pytest.raises(ValueError, match="two classes"):
        FGMClassifier(B=2).fit(_dask(X), da.from_array(np.ones(N), chunks=CHUNK))
    # (class_weight with a Dask y was refused here; it now weighs the rows as in
    # memory: tests/test_leftovers25.py compares the two fits)
    with pytest.raises(ValueError, match="class_weight names 5"):
        FGMClassifier(B=2, class_weight={5: 1.0}).fit(
            _dask(X), da.from_array(np.sign(f), chunks=CHUNK))


def _mapped_bytes_of_a_new_array():
    """Bytes glibc maps directly (``mmap``) for a new 1 MiB array on this worker."""
    import ctypes

    class _Info(ctypes.Structure):
        _fields_ = [(f, ctypes.c_size_t) for f in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
            "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _Info
    before = libc.mallinfo2().hblkhd
    a = np.ones(2**17)
    after = libc.mallinfo2().hblkhd
    del a
    return int(after - before)


def test_worker_malloc_tuned_once_per_worker(client):
    import sys

    import dask

    from kernlearn.distributed import tune_worker_malloc
    from kernlearn.partitioned import _set_malloc

    if not sys.platform.startswith("linux"):
        pytest.skip("glibc's mallopt")
    try:
        client.run(_mapped_bytes_of_a_new_array)
    except AttributeError:
        pytest.skip("glibc without mallinfo2")
    workers = set(client.scheduler_info()["workers"])
    # distributed's default (MALLOC_TRIM_THRESHOLD_=65536 fixes the mmap threshold at
    # 128 KiB): a 1 MiB array is mapped afresh
    client.run(_set_malloc, 128 << 10, 65536)
    assert all(v >= 2**20 for v in client.run(_mapped_bytes_of_a_new_array).values())
    client.__dict__.pop("_kernlearn_malloc", None)
    with dask.config.set({"kernlearn.tune-worker-malloc": False}):
        assert tune_worker_malloc(client) == {}
    out = tune_worker_malloc(client)
    assert set(out) == workers and all(out.values())
    assert tune_worker_malloc(client) == {}  # once per worker
    assert set(client.run(_mapped_bytes_of_a_new_array).values()) == {0}
    # a fit tunes the workers of its client
    client.run(_set_malloc, 128 << 10, 65536)
    client.__dict__.pop("_kernlearn_malloc", None)
    X, f = _data(np.random.default_rng(0))
    est = FGMClassifier(B=2, max_iter=2).fit(_dask(X), np.sign(f))
    assert set(client.run(_mapped_bytes_of_a_new_array).values()) == {0}
    # and so does a prediction of a Dask array on the workers (a kernel model's
    # temporaries were mapped afresh there: 1.5-3x the client's time)
    client.run(_set_malloc, 128 << 10, 65536)
    client.__dict__.pop("_kernlearn_malloc", None)
    est.predict(_dask(X))
    assert set(client.run(_mapped_bytes_of_a_new_array).values()) == {0}


def test_recentring_starts_from_the_masters_newton_sums(client, rng, monkeypatch):
    # After a master, FGM's re-centring takes sum l'(m) and sum l''(m) from the
    # master's last Newton step (its loss is C times FGM's): they must be the sums
    # a reduction at those margins gives.
    from functools import partial

    from kernlearn import _dask_master as dm

    checked = []
    original = dm.DaskMasterRows._known_sums

    def spy(self, M):
        known = original(self, M)
        if known is not None:
            out = M.sum(partial(dm._centre_sums, delta=np.zeros(self.K)), self.Y, self.loss)
            checked.append(np.allclose(known[0], out[: self.K], rtol=1e-10, atol=1e-12)
                           and np.allclose(known[1], out[self.K:], rtol=1e-10, atol=1e-12))
        return known

    monkeypatch.setattr(dm.DaskMasterRows, "_known_sums", spy)
    X, f = _data(rng)
    sw = rng.uniform(0.5, 2.0, len(f))
    Xd, yd = _dask(X, np.sign(f))
    FGMClassifier(B=2, max_iter=4, C=0.3, loss="logistic").fit(Xd, yd, sample_weight=sw)
    assert len(checked) >= 3 and all(checked), checked


def _rmatvec(block, u):
    return block.T @ u


def _scaled_rows(block, u):
    return block * u[:, None]


def _first_rows(block):
    return block[:1]


def _stack(parts):
    return np.vstack(parts)


def _times_index(block, i):
    return i * block.sum(0)


def test_grouped_rows_run_one_task_per_worker_with_the_per_partition_results(
        client, rng, monkeypatch):
    # A fit's passes run one task per worker (its partitions in row order),
    # with the same values as one task per partition.
    from kernlearn.partitioned import DaskRows, GroupedRows, PerPartition, RowFutures

    n, P = 800, 8
    X = rng.standard_normal((n, 5))
    u = rng.standard_normal(n)
    rows = DaskRows(da.from_array(X, chunks=(n // P, 5)), client=client)
    blocks = rows.blocks
    assert isinstance(blocks, GroupedRows)
    assert sorted(i for g in blocks.groups for i in g) == list(range(P))
    who = client.who_has(RowFutures.from_dask(client, rows.array).futures)
    holders = {tuple(sorted(v)) for v in who.values()}
    assert len(blocks.groups) == len(holders) <= len(client.scheduler_info()["workers"])
    us = RowFutures.from_array(client, u, blocks.bounds)  # ungrouped, aligned per group
    submitted = []  # tasks submitted (one per call to submit, one per item of map)
    submit, map_ = client.submit, client.map
    monkeypatch.setattr(client, "submit",
                        lambda *a, **k: submitted.append(1) or submit(*a, **k))
    monkeypatch.setattr(client, "map",
                        lambda f, *it, **k: submitted.extend([1] * len(it[0])) or map_(f, *it, **k))
    np.testing.assert_allclose(blocks.sum(_rmatvec, us), X.T @ u, rtol=1e-12)
    assert len(submitted) == len(blocks.groups) < P
    monkeypatch.undo()
    np.testing.assert_allclose(np.vstack(blocks.map(_scaled_rows, u).gather_parts()),
                               X * u[:, None], rtol=1e-15)
    # row order kept by reduce and take, whatever the grouping
    np.testing.assert_array_equal(blocks.map(_first_rows).reduce(_stack), X[:: n // P])
    np.testing.assert_array_equal(blocks.take(np.array([3, 150, 799])), X[[3, 150, 799]])
    want = sum(i * X[i * 100:(i + 1) * 100].sum(0) for i in range(P))
    np.testing.assert_allclose(blocks.sum(_times_index, PerPartition(list(range(P)))), want,
                               rtol=1e-12)
    # per-partition futures on demand (one task each)
    np.testing.assert_array_equal(client.gather(blocks.futures[5]), X[500:600])
