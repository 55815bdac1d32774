"""Audit 86 (issue 24, thirty-second pass): a review of the compiled sweep driver.

``methods._slkl_state.gram_sweeps`` runs a low-rank solve's sweeps in a few
compiled calls.  Its ``history`` array was allocated for all ``max_iter``
sweeps at once (a budget: ``max_iter=10**11`` was a 2.9 TiB allocation that
failed), one call ran every sweep up to the next refresh (or the whole solve
with ``refresh=0``: a Ctrl-C or an abandoned problem waited for all of them;
12 s at 5,000 x 50 with 2,000 columns, where the Python driver waited one
sweep), and numba drew from the generator without the bit generator's lock,
which NumPy's own draws from the same generator take.
"""

import threading
import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from kernlearn import LowRankKernelRegressor
from kernlearn.methods import _slkl_state, slkl


@pytest.fixture(autouse=True)
def one_blas_thread():
    with threadpool_limits(1):
        yield


def _problem(n, M, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    centres = X[rng.choice(n, M, replace=False)]
    C = np.exp(-0.5 * ((X[:, None, :] - centres[None]) ** 2).sum(-1))
    y = np.sin(2.0 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    return C, (y - y.mean())[:, None]


def _solve(C, Y, callback=None, nu=0.002, **kw):
    rng = np.random.default_rng(5)
    solver = slkl.CoordinateNewton(random_state=rng, callback=callback, **kw)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = solver.solve(slkl.slkl_problem(C, Y, nu))
    return res, [str(w.message) for w in caught], rng.bit_generator.state


def _assert_same(new, old):
    (a, a_warn, a_rng), (b, b_warn, b_rng) = new, old
    assert a_warn == b_warn and a_rng == b_rng
    assert (a.n_iter, a.converged, a.state.stop_reason) == \
        (b.n_iter, b.converged, b.state.stop_reason)
    ha, hb = a.history.as_dict(), b.history.as_dict()
    assert list(ha) == list(hb)
    for key in ha:
        if key != "time":
            assert np.array_equal(ha[key], hb[key]), key
    assert np.array_equal(a.coef, b.coef)
    for name in ("mu", "kkt", "case_counts"):
        assert np.array_equal(getattr(a.state.slkl, name), getattr(b.state.slkl, name))


@pytest.fixture
def sweeps_per_call(monkeypatch):
    """The sweeps each compiled call started (``done`` after minus before)."""
    seen = []
    compiled = _slkl_state._gram_sweeps

    def counted(*args):
        out = compiled(*args)
        seen.append(out[3] - args[3])
        return out

    monkeypatch.setattr(_slkl_state, "_gram_sweeps", counted)
    return seen


def test_a_huge_max_iter_is_a_budget_not_an_allocation():
    # the history grows with the sweeps run: max_iter=10**11 allocated 2.9 TiB
    # (MemoryError) although the tolerance stops the solves after a few sweeps
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 4))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(150)
    huge = LowRankKernelRegressor(max_iter=10**11, random_state=0).fit(X, y)
    usual = LowRankKernelRegressor(max_iter=1000, random_state=0).fit(X, y)
    assert np.array_equal(huge.predict(X), usual.predict(X))
    assert np.array_equal(huge.mu_, usual.mu_)


def test_the_history_grows_past_its_first_block(monkeypatch, sweeps_per_call):
    # sweeps until the objective stops changing at all: the rows past the
    # first block (64) as the Python driver records them.  One sweep a call
    # and a refresh every 8th: the block grows between the 64th sweep's call
    # (its violation recorded) and the one that records the rest of its row.
    monkeypatch.setattr(_slkl_state, "_CALL_SECONDS", 0.0, raising=False)
    C, Y = _problem(200, 100, 1)
    kw = dict(max_iter=300, tol=0.0, refresh=8, nu=1e-4)
    new = _solve(C, Y, **kw)
    old = _solve(C, Y, callback=lambda row: None, **kw)
    assert new[0].n_iter > 64 and sum(sweeps_per_call) == new[0].n_iter
    _assert_same(new, old)


def test_one_compiled_call_waits_for_python_about_once_per_budget(monkeypatch,
                                                                 sweeps_per_call):
    # refresh=0: no refresh returns to Python; a call ran the whole solve (a
    # Ctrl-C or an abandoned problem waited for all of it).  With no time for
    # a call, each starts one sweep, as the Python driver checks once a sweep;
    # the solve is unchanged.
    monkeypatch.setattr(_slkl_state, "_CALL_SECONDS", 0.0, raising=False)
    C, Y = _problem(150, 60, 2)
    kw = dict(max_iter=40, tol=0.0, refresh=0)
    new = _solve(C, Y, **kw)
    old = _solve(C, Y, callback=lambda row: None, **kw)
    assert new[0].n_iter == 40 and sum(sweeps_per_call) == 40
    assert max(sweeps_per_call) == 1
    _assert_same(new, old)


def test_an_abandoned_problem_stops_within_a_sweep_or_two(monkeypatch):
    # the abandonment check runs between calls: with no time for a call, a
    # refresh-free solve abandoned at its third check stops there (it ran
    # all 500 sweeps in one call)
    from kernlearn.methods import _slkl_state as module

    monkeypatch.setattr(module, "_CALL_SECONDS", 0.0, raising=False)
    calls = [0]

    def abandon_after_two():
        calls[0] += 1
        if calls[0] > 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(module, "check_abandoned", abandon_after_two)
    C, Y = _problem(150, 60, 3)
    solver = slkl.CoordinateNewton(random_state=0, max_iter=500, tol=0.0, refresh=0)
    with pytest.raises(KeyboardInterrupt):
        solver.solve(slkl.slkl_problem(C, Y, 0.002))


def test_the_compiled_draws_hold_the_bit_generator_lock(monkeypatch):
    # NumPy's draws take the bit generator's lock (and release the GIL);
    # numba's do not: the compiled call holds it for them
    held = []
    compiled = _slkl_state._gram_sweeps

    def check(rng, *args):
        # (an RLock: held when another thread cannot take it)
        free = []

        def take():
            got = rng.bit_generator.lock.acquire(blocking=False)
            if got:
                rng.bit_generator.lock.release()
            free.append(got)

        other = threading.Thread(target=take)
        other.start()
        other.join()
        held.append(not free[0])
        return compiled(rng, *args)

    monkeypatch.setattr(_slkl_state, "_gram_sweeps", check)
    C, Y = _problem(100, 30, 4)
    rng = np.random.default_rng(0)
    slkl.CoordinateNewton(random_state=rng).solve(slkl.slkl_problem(C, Y, 0.01))
    assert held and all(held)
    assert rng.bit_generator.lock.acquire(blocking=False)  # (released after)
    rng.bit_generator.lock.release()
