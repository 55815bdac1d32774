"""A thirty-fifth audit: parallel and long-running use.

A data scientist ran many fits at once (grid searches with the threading
and loky backends, ``joblib.Parallel`` of threads fitting different
estimators), moved fitted models between processes, and fitted in loops in
a long-lived process.  Fits in threads shared what is the process's: the
warnings machinery, which an estimator's inner fits replaced with
``warnings.catch_warnings`` (and left replaced, every later warning of the
process kept in a list nobody reads), and BLAS's thread count, which each
small solve limited and restored in an order that gave a running solve its
threads back.  A read-only container could not import the estimators
(numba had nowhere to write its cache), a warm-started GrFL fit stopped
part way left its kept run half extended, the parameter check's per-class
cache could be read half stored, and ``n_jobs`` did not say what it meant.
Each test here failed before its fix, but for the guards named so.
"""

import threading
import warnings

import numpy as np
import pytest

_KERN = ["linear", ("rbf", {"gamma": 0.5})]


def _classes(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)


def _short_fit(seed):
    """A fit that gives one ConvergenceWarning (two epochs of OBSCURE)."""
    from kernlearn import PNormMKLClassifier

    X, y = _classes(seed=seed)
    PNormMKLClassifier(kernels=_KERN, max_iter=2, random_state=0).fit(X, y)


def _machinery():
    return list(warnings.filters), warnings.showwarning, warnings._showwarnmsg_impl


def _in_thread(target):
    box = {}

    def run():
        try:
            box["out"] = target()
        except BaseException as exc:  # (re-raised by the caller's join)
            box["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()

    def join():
        thread.join(60)
        assert not thread.is_alive()
        if "error" in box:
            raise box["error"]
        return box.get("out")

    return join


# ------------------------------------------------ the inner fits' warnings
def test_inner_fits_of_two_threads_leave_the_warnings_machinery_as_found():
    # Two estimators' inner fits (Platt's folds, a search's validation fits)
    # overlapping in two threads, the first to start ending first: the
    # second restored the first's recorder and filters on leaving, so the
    # process kept every later warning in a list nobody read (a grid search
    # with the threading backend left warnings.warn silent for good), with
    # RenamedParameterWarning ignored and ConvergenceWarning "always"
    from kernlearn.estimators._renamed import inner_fits

    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()

    def run_a():
        _short_fit(0)
        a_in.set()
        assert b_in.wait(30)
        return np.zeros(1)

    def run_b():
        b_in.set()
        assert a_out.wait(30)
        _short_fit(1)
        return np.zeros(1)

    def first():
        try:
            return inner_fits(run_a, "fits of A", "A may be wrong")
        finally:
            a_out.set()

    def second():
        assert a_in.wait(30)
        return inner_fits(run_b, "fits of B", "B may be wrong")

    _short_fit(0)  # (the modules a fit imports add their filters first)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        before = _machinery()
        joins = [_in_thread(first), _in_thread(second)]
        for join in joins:
            join()
        assert _machinery() == before
        warnings.warn("a later warning", UserWarning)
    said = [str(w.message) for w in seen]
    # each summary counts its own thread's fit, and nothing else came through
    assert [m.split(" (first")[0] for m in said if "convergence warning(s)" in m] == [
        "1 convergence warning(s) in the 1 fits of A",
        "1 convergence warning(s) in the 1 fits of B"], said
    assert said[-1] == "a later warning" and len(said) == 3, said


def test_a_warning_of_another_thread_is_not_taken_by_running_inner_fits():
    # while one estimator's inner fits ran, any thread's warning was recorded
    # as theirs: the other fit's own warning vanished and the summary
    # counted it ("1 convergence warning(s) in the 5 validation fits")
    from kernlearn.estimators._renamed import inner_fits

    inside, done = threading.Event(), threading.Event()

    def run():
        inside.set()
        assert done.wait(30)
        return np.zeros(5)

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        join = _in_thread(lambda: inner_fits(run, "validation fits", "C may rank wrongly"))
        assert inside.wait(30)
        _short_fit(0)  # this thread's own fit, warning as it would alone
        done.set()
        join()
    said = [str(w.message) for w in seen]
    assert len(said) == 1 and said[0].startswith("OBSCURE ran max_iter=2 epochs"), said


def test_fgm_choosing_c_hides_no_warning_of_another_thread(monkeypatch):
    # FGM's C="auto" silenced its folds' ConvergenceWarnings with a filter of
    # the whole process: a fit in another thread lost its own, and threads
    # leaving in another order than they entered kept the filter for good
    import kernlearn.methods._fgm_select as select
    from kernlearn import FGMRegressor

    inside, done = threading.Event(), threading.Event()
    real = select._cutting_planes

    def waiting(*args, **kwargs):
        inside.set()
        assert done.wait(30)
        return real(*args, **kwargs)

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = X[:, 0] + 0.1 * rng.normal(size=60)
    _short_fit(0)  # (the modules the fits import add their filters first)
    FGMRegressor(C="auto", B=2, max_iter=3).fit(X, y)
    monkeypatch.setattr(select, "_cutting_planes", waiting)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        before = _machinery()
        join = _in_thread(lambda: FGMRegressor(C="auto", B=2, max_iter=3).fit(X, y))
        assert inside.wait(30)
        _short_fit(0)
        done.set()
        join()
        assert _machinery() == before
    assert any(str(w.message).startswith("OBSCURE ran max_iter=2 epochs") for w in seen), [
        str(w.message) for w in seen]


def test_one_vs_rest_threads_inside_inner_fits_are_summed_up():
    # guard: FGM's one-vs-rest threads (n_jobs=2) inside Platt's folds warn
    # into the folds' summary, as they did when the summary read the
    # process's warnings
    from kernlearn import FGMClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 4))
    y = np.argmax(X[:, :3], axis=1)
    est = FGMClassifier(B=1, max_iter=1, multiclass="ovr", n_jobs=2, probability=True)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        est.fit(X, y)
    folds = [str(w.message) for w in seen if "Platt" in str(w.message)]
    # (each fit's three one-vs-rest problems sum theirs up in one since audit 53)
    assert len(folds) == 1 and folds[0].startswith(
        "5 convergence warning(s) in the 5 cross-validation fits of the Platt sigmoids "
        "(first: 3 convergence warning(s) in the 3 one-vs-rest problems (first: FGM["), [
        str(w.message) for w in seen]
    own = [str(w.message) for w in seen if "Platt" not in str(w.message)]
    assert len(own) == 1 and own[0].startswith(
        "3 convergence warning(s) in the 3 one-vs-rest problems (first: FGM["), own


# ---------------------------------------------------- BLAS's thread count
def _blas_threads():
    from threadpoolctl import threadpool_info

    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_overlapping_small_solves_keep_one_blas_thread_until_both_end():
    # each solve limited BLAS to one thread and restored the count it found:
    # of two solves overlapping in two threads, the first to end gave the
    # other, still running, every BLAS thread back (oversubscription in a
    # threaded grid search); had the second found the first's limit, it would
    # have kept the process at one BLAS thread for good.  (The two threads'
    # blocks are entered and left here in that order by one thread: the count
    # is the process's, and OpenBLAS ignores a count set by another thread
    # after this one set its own.)
    from threadpoolctl import threadpool_limits

    from kernlearn.solvers._base import single_blas_thread

    with threadpool_limits(limits=2, user_api="blas"):
        if not _blas_threads() or set(_blas_threads()) != {2}:
            pytest.skip("no BLAS whose threads can be set to 2")
        first = single_blas_thread()
        first.__enter__()
        second = single_blas_thread()
        second.__enter__()
        assert set(_blas_threads()) == {1}
        first.__exit__(None, None, None)
        assert set(_blas_threads()) == {1}  # the second still runs
        second.__exit__(None, None, None)
        assert set(_blas_threads()) == {2}


# ------------------------------------------- a model loaded in another process
_COMPILED = """
from kernlearn.utils._numba_cache import njit_cached

@njit_cached
def twice(x):
    return 2.0 * x
"""

_IMPORT_AND_CALL = r"""
import json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as seen:
    import compiled
    value = compiled.twice(1.5)
print(json.dumps({"value": value, "said": [str(w.message) for w in seen]}))
"""


def test_compiled_code_runs_where_numba_can_write_no_cache(tmp_path):
    # a read-only container (the package's folder read-only, no writable
    # NUMBA_CACHE_DIR nor home): numba's "cannot cache function
    # '_cos_sin_row': no locator available" stopped import of the estimators,
    # so no pickled model could even be loaded.  The code is compiled without a
    # cache now, and one warning says why and what to set.  (A module of one
    # compiled function stands for kernlearn's: without a cache, their import
    # compiles them, 6 s.)
    import json
    import os
    import subprocess
    import sys

    from numba.core import config

    if not hasattr(config, "CACHE_LOCATOR_CLASSES"):
        pytest.skip("a numba without NUMBA_CACHE_LOCATOR_CLASSES (before 0.61)")
    (tmp_path / "compiled.py").write_text(_COMPILED)
    (tmp_path / "a-file").write_text("")
    # numba's only place is then NUMBA_CACHE_DIR, a folder it cannot make (as
    # on a read-only file system, which a test cannot mount)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "a-file" / "cache"),
               NUMBA_CACHE_LOCATOR_CLASSES="UserProvidedCacheLocator",
               PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    out = subprocess.run([sys.executable, "-c", _IMPORT_AND_CALL], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout)
    assert got["value"] == 3.0
    said = [m for m in got["said"] if "cannot be cached" in m]
    assert len(said) == 1 and "set NUMBA_CACHE_DIR to a writable folder" in said[0], got["said"]


# ------------------------------------------ a warm start after an interrupted fit
def test_a_warm_start_after_an_interrupted_fit_continues_the_kept_model(monkeypatch):
    # InfiniteFeatureClassifier(warm_start=True): a fit extending the kept run
    # stopped in its first master solve (Ctrl-C) kept the previous model, but
    # its run then held columns whose master was never solved, and the next
    # warm fit gave another model than the uninterrupted fits (decision values
    # 0.37 apart)
    import kernlearn.methods.grfl as grfl
    from kernlearn import InfiniteFeatureClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int)

    def make():
        return InfiniteFeatureClassifier(warm_start=True, max_features=3, lambda_p=0.05,
                                         random_state=0)

    ref = make().fit(X, y).set_params(max_features=6).fit(X, y)
    est = make().fit(X, y)
    before = est.decision_function(X)
    real = grfl.GrFL._solve

    def stop(self, exact):
        raise KeyboardInterrupt

    monkeypatch.setattr(grfl.GrFL, "_solve", stop)
    with pytest.raises(KeyboardInterrupt):
        est.set_params(max_features=6).fit(X, y)
    monkeypatch.setattr(grfl.GrFL, "_solve", real)
    np.testing.assert_array_equal(est.decision_function(X), before)
    est.fit(X, y)
    np.testing.assert_array_equal(est.decision_function(X), ref.decision_function(X))
    np.testing.assert_array_equal(est.features_, ref.features_)


# ------------------------------------------------------------------ n_jobs
def test_fgm_n_jobs_says_what_none_and_minus_one_mean_and_they_fit_one_model():
    # the only n_jobs of the estimators read "Parallel one-vs-rest problems
    # (joblib)": not that it is threads, for multiclass="ovr" only, nor what
    # None and -1 mean (scikit-learn's: 1 unless in a joblib context, all
    # processors).  The models are those of n_jobs=None (guard).
    import re

    from kernlearn import FGMClassifier

    doc = re.search(r"n_jobs : int, optional\n(.*?)\n    \w+ :", FGMClassifier.__doc__,
                    re.S).group(1)
    assert "one-vs-rest" in doc and "``None``" in doc and "``-1`` all" in doc, doc
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 4))
    y = np.argmax(X[:, :3], axis=1)
    ref = FGMClassifier(B=2, max_iter=3, multiclass="ovr").fit(X, y).decision_function(X)
    for n_jobs in (-1, 2):
        est = FGMClassifier(B=2, max_iter=3, multiclass="ovr", n_jobs=n_jobs).fit(X, y)
        np.testing.assert_array_equal(est.decision_function(X), ref)


# --------------------------------------------- the parameter checks' caches
def test_a_first_fit_meeting_another_threads_first_fit_of_its_class_is_checked():
    # the first fit of a class in a process compiles its constraints and
    # stores them, then its set of accepted values: a fit in another thread
    # that came between the two stores (the first fits of a threaded grid
    # search run at once) read the parent class's set, whose verdicts are not
    # this class's (or none: AttributeError).  The other thread is played here
    # by a fit run at the first store.
    from numbers import Real

    from sklearn.utils._param_validation import Interval

    from kernlearn import FGMRegressor
    from kernlearn.utils._params import validate_params_cached

    validate_params_cached(FGMRegressor(C=2.0))  # the parent's verdict: C=2.0 is valid
    seen = []

    class Storing(type(FGMRegressor)):
        def __setattr__(cls, name, value):
            super().__setattr__(name, value)
            if name == "_compiled_constraints" and not seen:
                seen.append(name)
                with pytest.raises(ValueError, match="'C' parameter of Stricter"):
                    validate_params_cached(cls(C=2.0))

    class Stricter(FGMRegressor, metaclass=Storing):
        _parameter_constraints = {**FGMRegressor._parameter_constraints,
                                  "C": [Interval(Real, 0, 1, closed="right")]}

    validate_params_cached(Stricter(C=0.5))
    assert seen == ["_compiled_constraints"]
