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


@pytest.mark.usefixtures("sigint_handled")
def test_fgm_ovr_threads_abandoned_by_ctrl_c_say_so(monkeypatch):
    import _thread

    said, done, error, _ = _ovr_stopped_by(monkeypatch, _thread.interrupt_main)
    # Ctrl-C waits for neither problem 0 (which pressed it) nor problem 1: both
    # abandoned, their warnings dropped, and said
    assert isinstance(error, KeyboardInterrupt) and not done and said == []
    assert getattr(error, "__notes__", None) == [
        "2 one-vs-rest problems still running were abandoned in their threads; their "
        "warnings are dropped."]


# ------------------------------------ parameters nothing reads (methods/, solvers/)
# Parameters a body does not read because the function stands in for another
# of the same signature (an interface, a protocol): (file, function, parameter).
_INTERFACE_PARAMETERS = {
    ("methods/_grfl_average.py", "__set_name__", "owner"),  # (Python's protocols)
    ("methods/_grfl_average.py", "__get__", "owner"),
    ("solvers/_base.py", "__exit__", "exc"),
    ("methods/_grfl_dask.py", "hess_margin", "Y"),  # (a loss's hess_margin(M, Y))
    ("methods/_grfl_dask.py", "__init__", "rows"),  # (_HoldOut's, built alike)
    ("methods/_grfl_dask.py", "__call__", "row"),  # (the column generation's callback)
    ("methods/_grfl_select.py", "__call__", "row"),
    ("methods/mtmkl/_smo.py", "libsvm_buckets", "beta0"),  # (stands in for smo_buckets)
    ("methods/mtmkl/mtfl.py", "oracle", "it"),  # (the cutting planes' oracle(gamma, it))
    ("solvers/grfl_newton.py", "curvatures", "grads"),  # (_NumpyOps and _CompiledOps:
    ("solvers/grfl_newton.py", "step", "H"),  # one interface, each reads its own)
    ("solvers/prox_newton.py", "accept", "s"),  # (the rows' accept(s): Dask's reads s)
}


def _unread_parameters():
    """(file, function, parameter) of every parameter of every function and method
    in ``methods/`` and ``solvers/`` that its body (nested functions included)
    never reads."""
    import ast
    import pathlib

    src = pathlib.Path(kl.__file__).parent
    found = set()
    for path in sorted([*src.glob("methods/**/*.py"), *src.glob("solvers/**/*.py")]):
        for fn in ast.walk(ast.parse(path.read_text())):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            a = fn.args
            names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg,
                                     a.kwarg) if x is not None]
            read = {n.id for stmt in fn.body for n in ast.walk(stmt)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            found |= {(path.relative_to(src).as_posix(), fn.name, name) for name in names
                      if name not in read and name not in ("self", "cls")}
    return found


def test_no_parameter_of_the_methods_and_solvers_goes_unread():
    # _fit_loo's tol, _solve_coupled_square's loss and epsilon, GrFLNewton's
    # gws of its directions and SimpleMKL._result's alpha were taken, not read
    assert _unread_parameters() - _INTERFACE_PARAMETERS == set()


# ------------------------------------------- no optimiser in an estimator module
def test_no_estimator_module_runs_an_optimiser():
    # estimators are thin adapters: Platt's sigmoid, fitted by scipy's L-BFGS-B
    # in estimators/_platt.py, is now methods/_platt.py's
    import ast
    import pathlib

    src = pathlib.Path(kl.__file__).parent
    found = []
    for path in sorted(src.glob("estimators/*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            mods = ([node.module or ""] if isinstance(node, ast.ImportFrom) else
                    [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            found += [f"{path.name}: {m}" for m in mods if m.startswith("scipy.optimize")]
    assert found == []


# ---------------------- multitask MKL's repeated inputs: views of a bucket's rows
def test_distinct_inputs_read_the_views_of_the_buckets_rows_only(monkeypatch):
    # each bucket built every kernel's view of all of X (a copy of the columns
    # for kernels on column subsets): 5 % of a fit of 8 buckets, 10 such
    # kernels; now of its own valid rows, the same distinct inputs
    from kernlearn.methods.mtmkl._loo_eigen import distinct_inputs
    from kernlearn.methods.mtmkl.task_kernels import TaskBuckets, TaskKernels

    rng = np.random.default_rng(0)
    sizes = [70, 80, 130, 150]  # (two buckets of 64 rows and more, padded)
    t = np.repeat(np.arange(4), sizes)
    X = rng.integers(0, 3, size=(len(t), 4)).astype(float)
    kern = TaskKernels([("rbf", {"gamma": 0.3}, [0, 1]), ("linear", {}, [1, 2]),
                        ("rbf", {"gamma": 0.1}, [3])]).fit(X)
    buckets = TaskBuckets([np.flatnonzero(t == a) for a in range(4)]).buckets
    assert len(buckets) == 2 and not buckets[0][2].all()
    rows, views = [], TaskKernels._views
    monkeypatch.setattr(TaskKernels, "_views",
                        lambda self, A, j: rows.append(A.shape[0]) or views(self, A, j))
    for _, idx, mask in buckets:
        rows.clear()
        maps = distinct_inputs(kern, [0, 1, 2], idx, mask)
        assert rows == [mask.sum()] * 3
        for a, (r, uniq, inv) in enumerate(maps):
            V = kern.X_[idx[a, r]][:, :4]  # (every column is some kernel's)
            np.testing.assert_array_equal(V[uniq][inv], V)
            np.testing.assert_array_equal(r, np.flatnonzero(mask[a]))
            assert len(uniq) == len(np.unique(V, axis=0)) and list(uniq) == sorted(
                np.unique(V, axis=0, return_index=True)[1])


# ----------------------------------------- where a pool's worker locates a warning
@pytest.mark.parametrize("how", ["search_threads", "executor"])
def test_a_warning_in_a_pools_worker_names_the_line_that_warns(how):
    # no user frame on a worker's stack: the first frame outside kernlearn,
    # scikit-learn and joblib was Python's multiprocessing/pool.py (or
    # concurrent/futures/thread.py), where scikit-learn's own warnings there
    # (LogisticRegression(max_iter=1)) name its module; now ours name theirs
    import concurrent.futures
    import os

    import joblib
    from sklearn.model_selection import GridSearchCV

    X, y = _three_classes()
    y = (y == 0).astype(int)
    est = kl.FGMClassifier(B=1, max_iter=1)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        if how == "search_threads":
            with joblib.parallel_config(backend="threading"):
                GridSearchCV(est, {"C": [0.1, 1.0]}, cv=2, n_jobs=2).fit(X, y)
        else:
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pool.submit(est.fit, X, y).result()
    where = {os.path.relpath(w.filename, os.path.dirname(kl.__file__))
             for w in seen if issubclass(w.category, ConvergenceWarning)}
    # (the search's refit on all rows runs here: this file)
    assert where == ({"methods/fgm.py", os.path.relpath(__file__, os.path.dirname(
        kl.__file__))} if how == "search_threads" else {"methods/fgm.py"}), where
