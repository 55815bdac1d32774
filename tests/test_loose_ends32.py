"""Loose ends that the thirtieth pass left (each test here failed before its fix).

* FGM's one-vs-rest problems in threads (``n_jobs=2``): when one raised,
  joblib raised its error at once while the other threads' problems ran on;
  the ``ConvergenceWarning`` s they gave then went into the list the summary
  had already read, and were lost.  The running problems now end before the
  summary (those not started are skipped); a Ctrl-C waits for nothing and
  says how many it abandoned.
"""

import threading
import time
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import kernlearn as kl


def _three_classes(n=90):
    X = np.random.RandomState(0).randn(n, 5)
    return X, np.argmax(X[:, :3], axis=1)


# ------------------------- FGM's one-vs-rest threads: every warning in the summary
def _ovr_stopped_by(monkeypatch, stop):
    """Fit FGM's three one-vs-rest problems in two threads, problem 0 calling ``stop()``
    once problem 1 runs; problem 1 warns a little later (``max_iter=1``).

    Returns the ConvergenceWarnings given, whether problem 1 had ended when the fit
    raised, the error, and the problems that ran."""
    import kernlearn.methods.fgm as fgm

    real, ran = fgm._cutting_planes, []
    started, ended, release = threading.Event(), threading.Event(), threading.Event()

    def solve(X, t, pool, loss, settings, name, callback):
        ran.append(name)
        if name.endswith("[0]"):
            assert started.wait(10)
            stop()
            release.wait(10)  # (the Ctrl-C case: returns once the test is done)
            return real(X, t, pool, loss, settings, name, callback)
        started.set()
        time.sleep(0.2)  # (still running when problem 0 raises)
        try:
            return real(X, t, pool, loss, settings, name, callback)
        finally:
            ended.set()

    monkeypatch.setattr(fgm, "_cutting_planes", solve)
    X, y = _three_classes()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(BaseException) as info:
            kl.FGMClassifier(B=1, max_iter=1, multiclass="ovr", n_jobs=2).fit(X, y)
        done = ended.is_set()
        release.set()
        assert ended.wait(10)
    said = [str(w.message) for w in seen if issubclass(w.category, ConvergenceWarning)]
    return said, done, info.value, ran


def test_fgm_ovr_threads_running_when_one_raised_are_in_the_summary(monkeypatch):
    def raise_():
        raise RuntimeError("stopped here")

    said, done, error, ran = _ovr_stopped_by(monkeypatch, raise_)
    assert isinstance(error, RuntimeError) and done
    # problem 1 ran alongside and warned: counted; problem 2 never started
    assert sorted(ran) == ["FGM[0]", "FGM[1]"]
    assert len(said) == 1 and said[0].startswith(
        "1 convergence warning(s) in the one-vs-rest problems that ran before an error "
        "stopped them (first: FGM[1] stopped after 1 outer iterations"), said


def test_fgm_ovr_threads_abandoned_by_ctrl_c_say_so(monkeypatch):
    import _thread

    said, done, error, _ = _ovr_stopped_by(monkeypatch, _thread.interrupt_main)
    # Ctrl-C waits for neither problem 0 (which pressed it) nor problem 1: both
    # abandoned, their warnings dropped, and said
    assert isinstance(error, KeyboardInterrupt) and not done and said == []
    assert getattr(error, "__notes__", None) == [
        "2 one-vs-rest problems still running were abandoned in their threads; their "
        "warnings are dropped."]
