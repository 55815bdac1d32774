"""A seventy-seventh audit: the loose-ends merge (threads, warnings' locations).

Each test here failed before its fix:

* after a Ctrl-C, the one-vs-rest problems that ``parallel_until_error``
  abandoned ran on in their threads to their end (CPU used after the user had
  got control back): they are now cancelled, and the column generation stops
  them at its next outer iteration;
* a Ctrl-C while the fit waited for the running problems after another
  problem's error abandoned them without cancelling them or saying so;
* in a pool's worker (no user frame on the stack), a summary of the inner fits'
  ``ConvergenceWarning`` s (FGM's one-vs-rest problems) named
  ``utils/_warnings.py``, the helper that gives it, instead of the fit's line.
"""

import _thread
import os
import threading
import time
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import kernlearn as kl
from kernlearn.utils import _threads


def _three_classes(n=90, p=5):
    X = np.random.RandomState(0).randn(n, p)
    return X, np.argmax(X[:, :3], axis=1)


def _threads_end(names, timeout=20.0):
    """Poll ``threading.enumerate()`` until no thread of ``names`` is alive."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not [t for t in threading.enumerate() if t.name in names and t.is_alive()]:
            return True
        time.sleep(0.02)
    return False


# ------------------------------- Ctrl-C: the abandoned problems stop in their threads
@pytest.mark.usefixtures("sigint_handled")
def test_column_generation_abandoned_by_ctrl_c_stops_at_its_next_iteration():
    from kernlearn.colgen import ColumnGeneration

    started, iterations, ended = threading.Event(), [], []

    def problem(k):
        if k == 0:
            assert started.wait(10)
            _thread.interrupt_main()
            return None
        ended.append(threading.current_thread().name)

        class One(list):  # (never out of candidates: only a stop rule ends the loop)
            scores = [1.0]

        def price():
            return One([0])

        def master(cand):
            iterations.append(1)
            started.set()
            time.sleep(0.01)
            return 1.0 / len(iterations)

        try:
            # (3,000 iterations of 10 ms: 30 s, beyond _threads_end's 20 s, so an
            # abandoned loop that runs on fails the test and does not hang it)
            return ColumnGeneration(3000, tol=None, warn=False).run(price, master)
        except _threads.Abandoned:
            ended.append("abandoned")
            raise

    with pytest.raises(KeyboardInterrupt) as info:
        _threads.parallel_until_error(problem, [(0,), (1,)], 2)
    assert info.value.__notes__ == [
        "1 problems still running were abandoned in their threads; their warnings "
        "are dropped."]
    # the abandoned thread ends by itself (no wall-clock limit on the loop)
    assert _threads_end({ended[0]}), "the abandoned problem still runs"
    assert ended[1:] == ["abandoned"]
    n = len(iterations)
    time.sleep(0.05)
    assert len(iterations) == n


def _ovr_interrupted(monkeypatch, first):
    """FGM's three one-vs-rest problems in two threads: problem 0 calls ``first()``
    once problem 1 ran its first outer iteration; problem 1's callback waits for the
    test to have caught the error, then lets the loop go on.

    Returns the error, problem 1's thread name, its iterations, and how it ended."""
    import kernlearn.methods.fgm as fgm

    real, rows, how = fgm._cutting_planes, [], []
    first_done, caught = threading.Event(), threading.Event()
    thread = []

    def on_row(row):
        rows.append(row["iter"])
        first_done.set()
        caught.wait(10)

    def solve(X, t, pool, loss, settings, name, callback):
        if name.endswith("[0]"):
            assert first_done.wait(10)
            first()
            return real(X, t, pool, loss, settings, name, callback)
        thread.append(threading.current_thread().name)
        try:
            out = real(X, t, pool, loss, settings, name, on_row)
        except _threads.Abandoned:
            how.append("abandoned")
            raise
        how.append("ran to its end")
        return out

    monkeypatch.setattr(fgm, "_cutting_planes", solve)
    X, y = _three_classes(n=120, p=30)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(BaseException) as info:
            kl.FGMClassifier(B=1, max_iter=20, tol=1e-12, multiclass="ovr",
                             n_jobs=2).fit(X, y)
        caught.set()
        assert _threads_end(set(thread)), "an abandoned problem still runs"
    said = [str(w.message) for w in seen if issubclass(w.category, ConvergenceWarning)]
    return info.value, rows, how, said


@pytest.mark.usefixtures("sigint_handled")
def test_fgm_ovr_problems_abandoned_by_ctrl_c_stop_in_their_threads(monkeypatch):
    error, rows, how, said = _ovr_interrupted(monkeypatch, _thread.interrupt_main)
    assert isinstance(error, KeyboardInterrupt)
    # problem 1 stopped at its next outer iteration's check, unwarned (it ran 20
    # outer iterations to its end, after the user had got control back)
    assert how == ["abandoned"] and rows == [1] and said == []


@pytest.mark.usefixtures("sigint_handled")
def test_ctrl_c_while_waiting_for_the_running_problems_abandons_them(monkeypatch):
    # problem 0 raises; the fit waits for problem 1 (its warnings belong to the
    # summary) and the user presses Ctrl-C meanwhile: problem 1 is abandoned,
    # cancelled and said so (it ran on, and the error had no note)
    def raise_then_interrupt():
        threading.Timer(0.3, _thread.interrupt_main).start()
        raise RuntimeError("problem 0 failed")

    error, rows, how, said = _ovr_interrupted(monkeypatch, raise_then_interrupt)
    assert isinstance(error, KeyboardInterrupt)
    assert isinstance(error.__context__, RuntimeError)
    assert error.__notes__ == [
        "1 one-vs-rest problems still running were abandoned in their threads; their "
        "warnings are dropped."]
    assert how == ["abandoned"] and rows == [1]


def test_a_fit_not_abandoned_is_unchanged_by_the_cancellation(monkeypatch):
    # the check runs in every outer iteration: the model with and without it is
    # the same (and the check is no-op outside parallel_until_error's threads)
    import kernlearn.colgen as colgen
    from threadpoolctl import threadpool_limits

    X, y = _three_classes(n=120, p=30)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = kl.FGMClassifier(B=1, multiclass="ovr", n_jobs=2).fit(X, y)
        calls = []
        monkeypatch.setattr(colgen, "check_abandoned", lambda: calls.append(1))
        b = kl.FGMClassifier(B=1, multiclass="ovr", n_jobs=2).fit(X, y)
    assert calls  # (the loop does check)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(a.coef_, b.coef_)


# -------------------------------------------- where a pool's worker locates a summary
@pytest.mark.parametrize("how", ["executor", "search_threads"])
def test_a_summary_in_a_pools_worker_names_the_fits_line(how):
    import concurrent.futures

    import joblib
    from sklearn.model_selection import cross_val_score

    X, y = _three_classes()
    est = kl.FGMClassifier(B=1, max_iter=1, multiclass="ovr")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        if how == "executor":
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pool.submit(est.fit, X, y).result()
        else:
            with joblib.parallel_config(backend="threading"):
                cross_val_score(est, X, y, cv=2, n_jobs=2)
    where = {os.path.relpath(w.filename, os.path.dirname(kl.__file__))
             for w in seen if issubclass(w.category, ConvergenceWarning)}
    assert where == {"methods/fgm.py"}, where


def test_a_warning_on_a_dask_backends_worker_names_the_line_that_warns():
    # joblib's Dask backend on a real cluster (workers in this process): the
    # one-vs-rest problems run pickled on the workers, where their warnings pass
    # as they come; the first frame outside kernlearn there was Dask's
    # dask/_task_spec.py, where no user acts
    distributed = pytest.importorskip("distributed")
    import joblib

    X, y = _three_classes()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        with warnings.catch_warnings(record=True) as seen, \
                joblib.parallel_config(backend="dask"):
            warnings.simplefilter("always")
            kl.FGMClassifier(B=1, max_iter=1, multiclass="ovr", n_jobs=2).fit(X, y)
    where = {os.path.relpath(w.filename, os.path.dirname(kl.__file__))
             for w in seen if issubclass(w.category, ConvergenceWarning)}
    assert where == {"methods/fgm.py"}, where
