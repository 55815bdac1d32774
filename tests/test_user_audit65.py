"""A sixty-fifth user's audit: the fits on a Dask cluster under faults.

A user fitted FGM and GrFL (``InfiniteFeature*``) on a real
``distributed.LocalCluster`` and broke things as a cluster does: workers
closed or gone for good, partitions that fail when computed or compute to
another shape than their chunks say, the client interrupted.  Each test here
failed before its fix:

* a partition whose task raised (a file that cannot be read) failed the fit
  with its own error, but the client then kept every future of the fit (the
  partitions of ``X`` and the vectors derived from them) alive until it
  closed: ``distributed`` raises the exception it keeps for the failed task,
  and the raise hung the fit's frames on it;
* a cluster left without workers (workers without a nanny closed, a cluster
  scaled to zero) hung the fit forever in its next wait;
* a partition of ``X`` or of FGM's Dask ``y`` that computed to another shape
  than its Dask chunks declare (``da.from_delayed`` with a wrong ``shape``)
  failed on a worker with NumPy's words about operands that do not
  broadcast, naming nothing;
* a NaN in FGM's Dask ``y`` became a class of its own (``classes_`` ended
  in ``nan``), where the in-memory fit refuses its row;
* without a client, FGM fitted a Dask ``X`` on Dask's local scheduler but
  refused a Dask ``y`` ("a Dask y needs X as a Dask array on a distributed
  client", which it was); a client closed inside its ``with`` block (still
  the current one) failed every fit with "'NoneType' object has no
  attribute 'ncores'".

Checked clean (no fix needed): a worker closed mid-fit (the model of an
intact cluster); two fits sharing one client from two threads; a client
closed outside a ``with`` block, or its cluster closed, before the fit
(Dask's local scheduler fits); NaN in one partition of ``X`` (named by row
and column); float32 and float64 partitions mixed; an empty or a single
partition; a Dask DataFrame whose partitions reorder or rename their
columns (Dask's own check refuses them; ``dd.from_delayed(...,
verify_meta=False)`` fails in Dask itself, "Cycle detected", whatever the
partitions); a fit interrupted by SIGINT (below: the client process exits
and the scheduler forgets its tasks); a model fitted on the cluster pickled
and predicted where ``dask`` cannot be imported (below).  The command line
has no cluster option.  Every wait here has a timeout.
"""

import gc
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time
import traceback
from pathlib import Path

import numpy as np
import pytest

from kernlearn import FGMClassifier, InfiniteFeatureClassifier

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

N, M, CHUNK = 400, 10, 100
SRC = str(Path(__file__).resolve().parents[1] / "src")
ESTIMATORS = {"fgm": lambda: FGMClassifier(B=2, max_iter=4),
              "grfl": lambda: InfiniteFeatureClassifier(inner_max_iter=3, random_state=0)}


@pytest.fixture
def cluster():
    # light workers in this process, one cluster per test: tests close its workers
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as c, distributed.Client(c) as client:
        client.wait_for_workers(2, timeout=30)
        yield c, client


def _problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, M))
    return X, np.sign(X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.standard_normal(N))


def _until(condition, timeout=20.0):
    # the client drops a released future's record on its event loop, a moment later
    end = time.monotonic() + timeout
    while not condition() and time.monotonic() < end:
        time.sleep(0.05)
    return condition()


def _unreadable(i):
    raise OSError(f"cannot read part-{i}.npy")


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_failed_partition_leaves_nothing_on_the_cluster(cluster, name):
    _, client = cluster
    X, y = _problem()
    Xd = da.concatenate([da.from_array(X[:200], chunks=CHUNK),
                         da.from_delayed(dask.delayed(_unreadable)(2), (200, M), dtype=float)])
    with pytest.raises(OSError, match="cannot read part-2.npy") as info:
        ESTIMATORS[name]().fit(Xd, y)
    # the worker's frame still shows in the traceback the user gets
    assert "_unreadable" in "".join(traceback.format_exception(info.value))
    del info  # (the user lets go of the error: nothing else may hold the fit's data)
    assert _until(lambda: gc.collect() >= 0 and not client.futures), list(client.futures)
    assert _until(lambda: not any(client.has_what().values()))


def _fit_in_thread(est, X, y, timeout=60):
    out = {}

    def run():
        try:
            out["model"] = est.fit(X, y)
        except RuntimeError as exc:  # (the error expected; any other fails the test)
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "the fit hung on a cluster without workers"
    return out


def _close_workers(cluster):
    for w in list(cluster.workers.values()):
        cluster.sync(w.close)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_fit_on_a_cluster_without_workers_stops_with_a_clear_error(cluster, name):
    c, client = cluster
    X, y = _problem()
    _close_workers(c)
    assert _until(lambda: not client.nthreads())
    with dask.config.set({"kernlearn.no-workers-timeout": "1s"}):
        out = _fit_in_thread(ESTIMATORS[name](), da.from_array(X, chunks=CHUNK), y)
    assert isinstance(out.get("error"), RuntimeError), out
    assert "no worker for 1 s" in str(out["error"])
    assert "kernlearn.no-workers-timeout" in str(out["error"])


def test_workers_gone_mid_fit_stop_the_fit_with_a_clear_error(cluster, monkeypatch):
    from kernlearn._dask_master import DaskMasterRows

    c, _ = cluster
    X, y = _problem()
    original, calls = DaskMasterRows.dual_point, []

    def dual_point(self, *args):
        calls.append(1)
        if len(calls) == 2:
            _close_workers(c)
        return original(self, *args)

    monkeypatch.setattr(DaskMasterRows, "dual_point", dual_point)
    with dask.config.set({"kernlearn.no-workers-timeout": "1s"}):
        out = _fit_in_thread(FGMClassifier(B=2, max_iter=4), da.from_array(X, chunks=CHUNK), y)
    assert len(calls) == 2
    assert isinstance(out.get("error"), RuntimeError), out
    assert "no worker for 1 s" in str(out["error"])


def test_a_worker_closed_mid_fit_gives_the_same_model(cluster, monkeypatch):
    # (checked clean) the other worker recomputes the lost partitions
    from kernlearn._dask_master import DaskMasterRows

    c, _ = cluster
    X, y = _problem()
    Xd = da.from_array(X, chunks=CHUNK)
    ref = FGMClassifier(B=2, max_iter=4).fit(Xd, y)
    original, calls = DaskMasterRows.dual_point, []

    def dual_point(self, *args):
        calls.append(1)
        if len(calls) == 2:
            c.sync(next(iter(c.workers.values())).close)
        return original(self, *args)

    monkeypatch.setattr(DaskMasterRows, "dual_point", dual_point)
    got = _fit_in_thread(FGMClassifier(B=2, max_iter=4), Xd, y)["model"]
    np.testing.assert_array_equal(got.selected_features_, ref.selected_features_)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=0, atol=1e-12)


def _lying(rows, cols):
    return np.ones((rows, cols))


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("shape", [(190, M), (200, M - 1)])
def test_partition_of_another_shape_than_declared_is_named(cluster, name, shape):
    X, y = _problem()
    Xd = da.concatenate([da.from_array(X[:200], chunks=CHUNK),
                         da.from_delayed(dask.delayed(_lying)(*shape), (200, M), dtype=float)])
    with pytest.raises(ValueError, match=(
            rf"partition 2 of X \(rows 200:400\) computed to an array of shape "
            rf"\({shape[0]}, {shape[1]}\), not the \(200, {M}\) its Dask chunks declare")):
        ESTIMATORS[name]().fit(Xd, y)


def test_partition_of_y_of_another_shape_than_declared_is_named(cluster):
    # FGM keeps a Dask y on the workers: its partitions are checked as X's
    X, y = _problem()
    yd = da.concatenate([da.from_array(y[:200], chunks=CHUNK),
                         da.from_delayed(dask.delayed(_lying)(190, 1)[:, 0], (200,),
                                         dtype=float)])
    with pytest.raises(ValueError, match=r"partition 3 of y \(rows 300:400\) computed to an "
                                         r"array of shape \(90,\), not the \(100,\)"):
        FGMClassifier(B=2, max_iter=4).fit(da.from_array(X, chunks=CHUNK), yd)


def test_missing_label_in_a_dask_y_is_refused_by_its_row(cluster):
    # NaN was fitted as a class of its own (classes_ [-1, 1, nan]); in memory it is refused
    X, y = _problem()
    y[205] = np.nan
    words = r"y has a missing value at row 205 \(1 row with one in all\)"
    with pytest.raises(ValueError, match=words):
        FGMClassifier(B=2, max_iter=4).fit(X, y)
    with pytest.raises(ValueError, match=words):
        FGMClassifier(B=2, max_iter=4).fit(da.from_array(X, chunks=CHUNK),
                                           da.from_array(y, chunks=CHUNK))


def test_closed_current_client_is_refused_in_words():
    # closed inside its with block it stays the current client: every fit failed on
    # "'NoneType' object has no attribute 'ncores'"
    X, y = _problem()
    before = dask.config.get("scheduler", None)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as c, distributed.Client(c) as client:
        client.close()
        for est in ESTIMATORS.values():
            with pytest.raises(RuntimeError, match=r"the current Dask client \(closed\) cannot"):
                est().fit(da.from_array(X, chunks=CHUNK), y)
    # (distributed leaves scheduler="dask.distributed" set when a client is closed inside
    # its with block: the next tests' Dask computations would ask for a client)
    dask.config.set(scheduler=before)


def test_dask_y_without_a_client_fits_on_the_local_scheduler(monkeypatch):
    # a Dask X alone fitted there; with a Dask y: "a Dask y needs X as a Dask array
    # on a distributed client" (X was one)
    from kernlearn import partitioned

    monkeypatch.setattr(partitioned, "_current_client", lambda: None)  # (no client)
    X, y = _problem()
    got = FGMClassifier(B=2, max_iter=4).fit(da.from_array(X, chunks=CHUNK),
                                              da.from_array(y, chunks=CHUNK))
    ref = FGMClassifier(B=2, max_iter=4).fit(X, y)
    np.testing.assert_array_equal(got.selected_features_, ref.selected_features_)
    np.testing.assert_array_equal(got.predict(X), ref.predict(X))


def test_two_fits_sharing_a_client_from_two_threads(cluster):
    # (checked clean) each thread gets the model of its fit alone
    X, y = _problem()
    Xd = da.from_array(X, chunks=CHUNK)
    refs = {k: make().fit(X, y).predict(X) for k, make in ESTIMATORS.items()}
    out, threads = {}, []
    for k, make in ESTIMATORS.items():
        def run(k=k, make=make):
            out[k] = make().fit(Xd, y).predict(X)
        threads.append(threading.Thread(target=run, daemon=True))
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    for k in ESTIMATORS:
        np.testing.assert_array_equal(out[k], refs[k])


_INTERRUPTED = """
import signal, sys, time
import numpy as np, dask.array as da, distributed
# (Ctrl-C as in a terminal's foreground process: a process started as a background
# job of a non-interactive shell, as `make test &` is, has SIGINT ignored, and its
# children inherit that; Python then installs no KeyboardInterrupt handler, the
# signal does nothing and the test waited out its timeout)
signal.signal(signal.SIGINT, signal.default_int_handler)
from kernlearn import FGMClassifier
from kernlearn._dask_master import DaskMasterRows

client = distributed.Client({address!r}, timeout=30)
original = DaskMasterRows.dual_point

def dual_point(self, *args):
    print("fitting", flush=True)
    # (interrupted here, as a user's Ctrl-C in a long fit; in short sleeps, as a
    # real fit returns to Python often: a signal the system hands to another
    # thread (the client's event loop) would not wake one long sleep)
    for _ in range(1200):
        time.sleep(0.05)
    return original(self, *args)

DaskMasterRows.dual_point = dual_point
rng = np.random.default_rng(0)
X = rng.standard_normal(({n}, {m}))
try:
    FGMClassifier(B=2, max_iter=4).fit(da.from_array(X, chunks={chunk}), np.sign(X[:, 0]))
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def test_interrupted_client_exits_and_the_cluster_forgets_its_tasks(tmp_path):
    # (checked clean) SIGINT in a client process in the middle of a fit
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  protocol="tcp", dashboard_address=None) as c:
        script = tmp_path / "fit.py"
        script.write_text(_INTERRUPTED.format(address=c.scheduler_address, n=N, m=M,
                                              chunk=CHUNK))
        env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "1"}
        proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        try:
            line = ""
            end = time.monotonic() + 60
            while "fitting" not in line and time.monotonic() < end:
                line = proc.stdout.readline()
                if not line and proc.poll() is not None:
                    break
            assert "fitting" in line, proc.stderr.read()
            assert c.scheduler.tasks, "the fit's data should be on the cluster"
            proc.send_signal(signal.SIGINT)
            # (a client's close may wait out distributed's 30 s comm timeouts on a
            # loaded machine: a fresh-clone run timed out here at 30 s)
            code = proc.wait(120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        assert code == 130, proc.stderr.read()
        assert "interrupted" in proc.stdout.read()
        assert _until(lambda: not c.scheduler.tasks), list(c.scheduler.tasks)


_NO_DASK = """
import pickle, sys
class _Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("dask", "distributed"):
            raise ImportError(f"{{name}} is not installed here")
sys.meta_path.insert(0, _Refuse())
import numpy as np
with open({path!r}, "rb") as fh:
    models, X = pickle.load(fh)
for model in models:
    print(type(model).__name__, "".join(map(str, model.predict(X).astype(int) + 1)))
print("dask" in sys.modules, "distributed" in sys.modules)
"""


def test_model_fitted_on_the_cluster_predicts_where_dask_is_absent(cluster, tmp_path):
    # (checked clean) the fitted models hold no Dask object
    X, y = _problem()
    Xd = da.from_array(X, chunks=CHUNK)
    models = [make().fit(Xd, y) for make in ESTIMATORS.values()]
    path = tmp_path / "models.pkl"
    path.write_bytes(pickle.dumps((models, X[:20])))
    script = tmp_path / "load.py"
    script.write_text(textwrap.dedent(_NO_DASK.format(path=str(path))))
    env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "1"}
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    for model, line in zip(models, lines):
        assert line == type(model).__name__ + " " + "".join(
            map(str, model.predict(X[:20]).astype(int) + 1))
    assert lines[-1] == "False False"
