"""``benchmarks/grfl_small_work.py``: what a small GrFL fit does and where its time goes.

The script wraps the library's functions to count the work and split the CPU
time of a fit; these tests hold it to what BENCHMARKS.md reads from it: the
wrapped fit is the plain fit's model, the library is restored afterwards, the
counts follow the route the defaults take at each size, and the exclusive times
of the kinds of work add up to no more than the fit.
"""

import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@pytest.fixture(scope="module")
def work():
    # (the scripts set the thread variables on import, for the processes they start;
    # the test session's other subprocesses keep the session's own)
    saved = {k: os.environ.get(k) for k in THREAD_VARS}
    sys.path.insert(0, str(BENCH))
    try:
        import grfl_small_work
    finally:
        sys.path.remove(str(BENCH))
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return grfl_small_work


def _measure(work, n, d):
    X, y, X_test = work.make_data("reg", n, d)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return work.measure("InfiniteFeatureRegressor", X, y, repeats=1), X_test


def test_the_wrapped_fit_is_the_plain_fit_and_the_library_is_restored(work):
    from kernlearn.methods import grfl
    from kernlearn.solvers import grfl_newton

    before = (grfl.GrFL._solve, grfl.select_level, grfl_newton._newton_step,
              grfl_newton.GrFLNewton.__dict__["_curvatures"])
    res, X_test = _measure(work, 60, 4)
    plain, wrapped = res["estimators"]
    np.testing.assert_array_equal(wrapped.predict(X_test), plain.predict(X_test))
    after = (grfl.GrFL._solve, grfl.select_level, grfl_newton._newton_step,
             grfl_newton.GrFLNewton.__dict__["_curvatures"])
    assert all(a is b for a, b in zip(before, after))


@pytest.mark.parametrize("n, d, folds", [(60, 4, True), (320, 4, False)])
def test_counts_follow_the_route_and_times_add_up(work, n, d, folds):
    from kernlearn.methods._grfl_select import CV_FOLDS

    res, _ = _measure(work, n, d)
    w = res["work"]
    if folds:  # below CV_BELOW rows: the folds' paths, then the averaged paths
        assert res["route"].startswith(f"{CV_FOLDS} folds")
        assert w["paths"] == CV_FOLDS + res["n_paths"] and res["n_paths"] > 1
        assert w["level changes"] % CV_FOLDS == 0 and w["level changes"] > 0
    else:  # one held-out path, then the master on all rows
        assert res["route"].startswith("one held-out part")
        assert w["paths"] == 2 and res["n_paths"] == 1
    # every outer iteration prices and solves a master; the finishing solves add more
    assert 0 < w["outer iterations"] <= w["masters"] <= w["Newton steps"]
    assert w["outer iterations"] <= w["pricing steps"] <= w["candidates drawn"]
    assert 0 < w["masters to tol"] < w["masters"]
    assert 0 < w["sweeps to tol"] <= w["sweeps"]
    kinds = [res["times"][label] for label, _, _ in work.KINDS]
    # exclusive times: a wrapped call's time less its wrapped callees'
    assert min(kinds) >= -1e-3 and res["times"]["Newton step kernel (sweeps, line search)"] > 0
    assert sum(kinds) <= res["instrumented"] + 1e-3
    assert res["times"][work.OUTSIDE] == pytest.approx(res["instrumented"] - sum(kinds))
