"""The ``nu="auto"`` path of SLKL at a lower cost, with the same model (issue 24).

Each value of the path warm-starts from the previous solve, which ends with a
refresh of the state: its ``G`` and ``V`` (or ``Z``) do not depend on ``nu``,
so the warm start no longer refactorises them (:meth:`SLKLState.set_nu`), and
the path hands each state to the next solve instead of copying it.  These
tests pin both to the old path bit for bit at one BLAS thread.  With more
threads a BLAS product's rounding may depend on where its arrays lie in memory,
and the old path's copies lie elsewhere: there the two paths agree to round-off
(the last test).
"""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor
from kernlearn.methods import slkl
from kernlearn.methods._slkl_state import SLKLState


@pytest.fixture(autouse=True)
def one_blas_thread(request):
    """Bit-for-bit comparisons at one BLAS thread (module docstring)."""
    if request.function.__name__.endswith("_at_any_blas_threads"):
        yield
        return
    with threadpool_limits(1):
        yield


def _columns_and_targets(n=120, M=30, T=1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    centres = X[rng.choice(n, M, replace=False)]
    C = np.exp(-0.5 * ((X[:, None, :] - centres[None]) ** 2).sum(-1))  # (n, M)
    Y = np.sin(X[:, :T] * 2.0) + 0.1 * rng.standard_normal((n, T))
    return C, Y - Y.mean(0)


def _stepped_state(C, Y, gram_mode=True, nu=0.05, sweeps=4):
    cols = np.ascontiguousarray(C.T)
    state = SLKLState(Y, C.shape[1], nu=nu, columns=cols if gram_mode else None)
    rng = np.random.default_rng(1)
    for _ in range(sweeps):
        state.sweep(rng.integers(0, C.shape[1], C.shape[1]), cols.__getitem__)
    return state


def _same_state(a, b):
    m = a.m0
    assert m == b.m0 > 0
    assert np.array_equal(a.mu, b.mu)
    assert np.array_equal(a._G[:m, :m], b._G[:m, :m])
    if a.gram_mode:
        assert np.array_equal(a._V[:m], b._V[:m])
    else:
        assert np.array_equal(a._Z, b._Z)
    assert a.objective == b.objective and a.nu == b.nu
    assert a._floor == b._floor
    # the round-off probes drawn alike: the next refreshes' floors agree too
    assert (a._probe_rng.bit_generator.state == b._probe_rng.bit_generator.state)


@pytest.mark.parametrize("gram_mode", [True, False])
@pytest.mark.parametrize("T", [1, 3])
def test_set_nu_after_a_refresh_equals_a_refresh(gram_mode, T):
    C, Y = _columns_and_targets(T=T)
    state = _stepped_state(C, Y, gram_mode)
    state.refresh()  # (how every solve of the path ends)
    ref = state.copy()
    ref.nu = 0.005
    ref.refresh()
    fast = state.copy()
    fast.set_nu(0.005)
    _same_state(fast, ref)
    # the objective is F at the new nu
    F = slkl.slkl_objective(C, Y, fast.mu, nu=0.005)
    assert fast.objective == pytest.approx(F, rel=1e-9)


@pytest.mark.parametrize("gram_mode", [True, False])
def test_set_nu_after_steps_refreshes(gram_mode):
    C, Y = _columns_and_targets()
    state = _stepped_state(C, Y, gram_mode)
    state.refresh()
    rng = np.random.default_rng(5)
    cols = np.ascontiguousarray(C.T)
    # a weight changed since the refresh: G and V are stale for the new nu
    state.sweep(rng.integers(0, C.shape[1], C.shape[1]), cols.__getitem__)
    before = state._n_updates
    ref = state.copy()
    ref.nu = 0.02
    ref.refresh()
    state.set_nu(0.02)
    assert state._n_updates == before
    _same_state(state, ref)
    F = slkl.slkl_objective(C, Y, state.mu, nu=0.02)
    assert state.objective == pytest.approx(F, rel=1e-9)


def test_warm_started_solve_still_leaves_its_warm_state_alone():
    # CoordinateNewton's public contract: a warm start works on a copy
    C, Y = _columns_and_targets()
    solver = slkl.CoordinateNewton(random_state=0, warn=False)
    first = solver.solve(slkl.slkl_problem(C, Y, 0.05))
    mu, G = first.state.mu.copy(), first.state.slkl.G.copy()
    second = solver.solve(slkl.slkl_problem(C, Y, 0.005), first.state)
    assert second.state.slkl is not first.state.slkl
    assert np.array_equal(first.state.mu, mu)
    assert np.array_equal(first.state.slkl.G, G)
    assert first.state.slkl.nu == pytest.approx(0.05)


class _CopyingSolver(slkl.CoordinateNewton):
    """The old path: every warm start on a copy (the path's hand-over ignored)."""

    _take_warm = property(lambda self: False, lambda self, value: None)


def _old_set_nu(self, nu):
    self.nu = float(nu)
    self.refresh()


def _old_path(monkeypatch):
    monkeypatch.setattr(slkl, "CoordinateNewton", _CopyingSolver)
    monkeypatch.setattr(SLKLState, "set_nu", _old_set_nu)


def _data(n, d, classes=None, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sin(X[:, 0] * 2) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(n)
    if classes:
        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


@pytest.mark.parametrize("make, classes", [
    (lambda: LowRankKernelRegressor(random_state=0), None),
    (lambda: LowRankKernelRegressor(random_state=3, n_columns=60), None),
    (lambda: LowRankKernelClassifier(random_state=0), 2),
    (lambda: LowRankKernelClassifier(random_state=1), 3),
])
def test_nu_path_equals_the_old_path_bit_for_bit(monkeypatch, make, classes):
    X, y = _data(300, 5, classes)
    new = make().fit(X, y)
    with monkeypatch.context() as m:
        _old_path(m)
        old = make().fit(X, y)
    assert old.nu_path_ is not None and len(old.nu_path_["nu"]) > 1
    for key in old.nu_path_:
        assert np.array_equal(new.nu_path_[key], old.nu_path_[key]), key
    assert np.array_equal(new.mu_, old.mu_)
    assert np.array_equal(new.dual_coef_, old.dual_coef_)
    assert np.array_equal(new.predict(X), old.predict(X))


def test_multi_output_and_weighted_path_equal_the_old_path(monkeypatch):
    X, y = _data(250, 4)
    Y = np.column_stack([y, np.cos(X[:, 2])])
    w = np.random.default_rng(2).uniform(0.2, 2.0, len(y))

    def fit():
        return LowRankKernelRegressor(random_state=0).fit(X, Y, sample_weight=w)

    new = fit()
    with monkeypatch.context() as m:
        _old_path(m)
        old = fit()
    assert np.array_equal(new.nu_path_["loo"], old.nu_path_["loo"])
    assert np.array_equal(new.predict(X), old.predict(X))


def _counted(monkeypatch, name):
    calls = [0]
    original = getattr(SLKLState, name)

    def wrapper(self, *args, **kwargs):
        calls[0] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(SLKLState, name, wrapper)
    return calls


def test_the_path_neither_refactorises_nor_copies_at_its_warm_starts(monkeypatch):
    X, y = _data(300, 5)

    def counts(old):
        with monkeypatch.context() as m:
            if old:
                _old_path(m)
            refreshes, copies = _counted(m, "refresh"), _counted(m, "copy")
            est = LowRankKernelRegressor(random_state=0).fit(X, y)
        return refreshes[0], copies[0], len(est.nu_path_["nu"])

    (r_new, c_new, k), (r_old, c_old, k_old) = counts(False), counts(True)
    assert k == k_old > 2
    # one warm start per value after the first: each was a copy and a refresh
    assert c_old == k - 1 and c_new == 0
    assert r_new == r_old - (k - 1)


def test_the_path_equals_the_old_path_to_round_off_at_any_blas_threads(monkeypatch):
    X, y = _data(300, 5)
    new = LowRankKernelRegressor(random_state=0).fit(X, y)
    with monkeypatch.context() as m:
        _old_path(m)
        old = LowRankKernelRegressor(random_state=0).fit(X, y)
    np.testing.assert_allclose(new.nu_path_["loo"], old.nu_path_["loo"], rtol=1e-7)
    np.testing.assert_allclose(new.predict(X), old.predict(X), rtol=0, atol=1e-6 * np.std(y))
