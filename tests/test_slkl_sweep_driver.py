"""SLKL's sweeps compiled (issue 24, thirty-second pass): the same solve in a few calls.

In Gram mode :meth:`CoordinateNewton.solve` runs its sweeps in
:func:`~kernlearn.methods._slkl_compiled._gram_sweeps` instead of
:class:`~kernlearn.colgen.ColumnGeneration`'s Python loop over the pricing and
master closures (which a callback, a time budget or progress output still
select).  The compiled driver must be that loop: the same coordinates drawn
from the same generator, the same refresh cadence, the same stopping test,
hence the same state, history and warnings, bit for bit at one BLAS thread.
"""

import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from kernlearn import LowRankKernelRegressor
from kernlearn.methods import _slkl_state, slkl
from kernlearn.methods._slkl_state import SLKLState
from test_lowrank_nu_path_cost import _columns_and_targets  # (same folder: the RBF columns and targets)


@pytest.fixture(autouse=True)
def one_blas_thread():
    with threadpool_limits(1):
        yield


def _never_stop(row):
    return None


def _problem(n, M, T, seed):
    return _columns_and_targets(n, M, T, seed)


def _path(C, Y, seed, callback, **kw):
    """Two warm-started solves (a nu path's two values) on one generator."""
    rng = np.random.default_rng(seed)
    solver = slkl.CoordinateNewton(random_state=rng, callback=callback, **kw)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = solver.solve(slkl.slkl_problem(C, Y, 0.02))
        second = solver.solve(slkl.slkl_problem(C, Y, 0.0005), first.state)
    return [first, second], [str(w.message) for w in caught], rng.bit_generator.state


def _assert_same(new, old):
    (a_res, a_warn, a_rng), (b_res, b_warn, b_rng) = new, old
    assert a_warn == b_warn and a_rng == b_rng
    for a, b in zip(a_res, b_res):
        assert (a.n_iter, a.converged, a.state.stop_reason) == \
            (b.n_iter, b.converged, b.state.stop_reason)
        ha, hb = a.history.as_dict(), b.history.as_dict()
        assert list(ha) == list(hb) and len(ha["objective"]) == a.n_iter
        for key in ha:
            if key != "time":  # (the compiled rows share their call's end)
                assert np.array_equal(ha[key], hb[key], equal_nan=True), key
        assert np.array_equal(a.coef, b.coef)
        sa, sb = a.state.slkl, b.state.slkl
        m = sa.m0
        assert m == sb.m0 > 0
        assert np.array_equal(sa.G, sb.G)  # (the lower triangle: the upper one is stale)
        assert np.array_equal(sa._V[:m], sb._V[:m])
        assert np.array_equal(sa._PA[:m, :m], sb._PA[:m, :m])
        assert np.array_equal(sa.active, sb.active) and np.array_equal(sa.slot, sb.slot)
        for name in ("mu", "kkt", "case_counts"):
            assert np.array_equal(getattr(sa, name), getattr(sb, name)), name
        assert (sa.objective, sa.n_refresh, sa.n_fallback, sa._floor) == \
            (sb.objective, sb.n_refresh, sb.n_fallback, sb._floor)


@pytest.fixture
def calls(monkeypatch):
    """Count the compiled driver's calls (it is the one that ran)."""
    count = [0]
    compiled = _slkl_state._gram_sweeps

    def counted(*args):
        count[0] += 1
        return compiled(*args)

    monkeypatch.setattr(_slkl_state, "_gram_sweeps", counted)
    return count


CASES = [  # (n, M, T, seed, solver options)
    (120, 30, 1, 0, {}),
    (200, 101, 3, 1, {}),  # odd M (the draws' 32-bit halves), grown past 64 slots
    (300, 150, 1, 2, dict(max_iter=7)),  # the budget: a warning from each solve
    (150, 77, 2, 3, dict(rule="exact", refresh=3)),
    (250, 133, 1, 4, dict(tol=1e-9, refresh=0)),
    (90, 45, 2, 5, dict(tol=0.0, max_iter=4, refresh=2)),
]


@pytest.mark.parametrize("n, M, T, seed, kw", CASES)
def test_compiled_sweeps_equal_the_python_driver(calls, n, M, T, seed, kw):
    C, Y = _problem(n, M, T, seed)
    old = _path(C, Y, seed, _never_stop, **kw)
    assert calls[0] == 0
    new = _path(C, Y, seed, None, **kw)
    assert calls[0] >= 2  # (at least one call a solve)
    _assert_same(new, old)
    if M > 64:
        assert max(r.state.slkl.m0 for r in new[0]) > 64  # (a grow mid-sweep)


def test_compiled_sweeps_refresh_where_the_round_off_check_fails(monkeypatch, calls):
    # a threshold of zero: every check (each 8th weight change) asks for a
    # refresh, in the middle of sweeps, and the sweep resumes after it
    monkeypatch.setattr(SLKLState, "_threshold", lambda self: 0.0)
    C, Y = _problem(200, 90, 2, 6)
    old = _path(C, Y, 6, _never_stop)
    new = _path(C, Y, 6, None)
    assert new[0][1].state.slkl.n_refresh > 20
    assert calls[0] > new[0][0].state.slkl.n_refresh
    _assert_same(new, old)


def test_what_needs_python_per_sweep_keeps_the_python_driver(calls):
    C, Y = _problem(100, 40, 1, 7)
    problem = slkl.slkl_problem(C, Y, 0.02)
    slkl.CoordinateNewton(random_state=0).solve(problem)
    compiled = calls[0]
    assert compiled >= 1
    seen = []
    slkl.CoordinateNewton(random_state=0, callback=seen.append).solve(problem)
    slkl.CoordinateNewton(random_state=0, time_budget=1e6).solve(problem)
    slkl.CoordinateNewton(random_state=0, verbose=1).solve(problem)
    assert calls[0] == compiled and len(seen) > 1  # (the callback saw every sweep)


def test_a_division_by_zero_in_the_compiled_sweeps_is_a_breakdown(monkeypatch):
    def divide(*args):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(_slkl_state, "_gram_sweeps", divide)
    C, Y = _problem(100, 40, 1, 8)
    with pytest.raises(slkl.SLKLBreakdown, match="division by zero at nu="):
        slkl.CoordinateNewton(random_state=0).solve(slkl.slkl_problem(C, Y, 0.02))


def test_the_default_regressor_fits_as_with_the_python_driver(monkeypatch, calls):
    rng = np.random.default_rng(9)
    X = rng.standard_normal((250, 5))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(250)
    new = LowRankKernelRegressor(random_state=0).fit(X, y)
    assert calls[0] >= len(new.nu_path_["nu"])
    init = slkl.CoordinateNewton.__init__

    def python_driven(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.callback = _never_stop

    monkeypatch.setattr(slkl.CoordinateNewton, "__init__", python_driven)
    before = calls[0]
    old = LowRankKernelRegressor(random_state=0).fit(X, y)
    assert calls[0] == before
    for key in old.nu_path_:
        assert np.array_equal(new.nu_path_[key], old.nu_path_[key]), key
    assert np.array_equal(new.mu_, old.mu_)
    assert np.array_equal(new.dual_coef_, old.dual_coef_)
    assert np.array_equal(new.predict(X), old.predict(X))
    for key in old.history_:
        if key != "time":
            assert np.array_equal(new.history_[key], old.history_[key]), key
