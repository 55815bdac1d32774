"""``benchmarks/slkl_cost.py`` counts what a low-rank fit does, and leaves the library as it was.

Its tables (BENCHMARKS.md, the thirty-first pass's low-rank paragraph) rest on
these counts: every coordinate step of a sweep is one of the four update cases,
a sweep is ``M`` steps (a sweep that the compiled steps interrupt to grow the
arrays or refresh is still counted once), and the timers and counters it wraps
around the library's functions are removed afterwards.
"""

import numpy as np
import pytest

from bench_scripts import load_script
from kernlearn import LowRankKernelRegressor
from kernlearn.methods import _slkl_state, slkl

@pytest.fixture
def script():
    yield from load_script("slkl_cost")


def test_the_path_counts_add_up(script):
    X, y, _ = script.make_data("reg", 400, 8)  # (the small_fits data: m0 up to ~100)
    est = LowRankKernelRegressor(random_state=0)
    record = script.path_record(est, X, y)
    M = len(est.mu_)
    assert [r["nu"] for r in record] == list(est.nu_path_["nu"])
    for r in record:
        assert r["steps"] == r["sweeps"] * M
        assert r["cases"].sum() == r["steps"]  # one case a step
        assert 0 < r["m0"] <= M and r["state"].m0 == np.count_nonzero(r["state"].mu)
    # a sweep interrupted to grow the active arrays (64 slots first) is one sweep
    assert max(r["state"].m0 for r in record) > 64
    cost, changes = script.sweep_cost(record[-1]["state"], 2)
    assert cost[8] > 0 and cost[0] > 0 and changes > 0


def test_python_sweeps_selects_the_python_driver(script, monkeypatch):
    # the paired table's second column is the Python driver (the compiled one not called)
    calls = []
    compiled = _slkl_state._gram_sweeps
    monkeypatch.setattr(_slkl_state, "_gram_sweeps", lambda *a: calls.append(1) or compiled(*a))
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(120, 2)), rng.normal(size=120)
    with script.python_sweeps():
        LowRankKernelRegressor(random_state=0).fit(X, y)
    assert calls == []
    LowRankKernelRegressor(random_state=0).fit(X, y)
    assert calls


def test_the_wrapped_functions_are_restored(script):
    before = (_slkl_state._gram_steps, _slkl_state._gram_sweeps,
              _slkl_state.SLKLState.__dict__["refresh"], slkl._loo_errors, slkl._solve_one,
              slkl.extract_fit, slkl.CoordinateNewton.__init__)
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(120, 2)), rng.normal(size=120)  # (the anchor: 100 components)
    med = script.phases(LowRankKernelRegressor(random_state=0), X, y, 1)
    assert med["fit"] >= med["nu path"] >= med["compiled steps"] > 0
    script.path_record(LowRankKernelRegressor(random_state=0), X, y)
    t = script.paired("LowRankKernelRegressor", X, y, 1)
    assert set(t) == {"default", "python sweeps", "anchor"}
    assert before == (_slkl_state._gram_steps, _slkl_state._gram_sweeps,
                      _slkl_state.SLKLState.__dict__["refresh"], slkl._loo_errors,
                      slkl._solve_one, slkl.extract_fit, slkl.CoordinateNewton.__init__)
