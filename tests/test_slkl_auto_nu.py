"""SLKL's nu="auto": leave-one-out error along a warm-started path of nu values."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from kernlearn.methods.slkl import (
    NU_GRID,
    NU_PATIENCE,
    NU_SE_FRACTION,
    ColumnsOnDemand,
    CoordinateNewton,
    _loo_errors,
    fit_slkl,
    slkl_problem,
)
from kernlearn.kernels import pairwise_kernel


def _columns(n=40, M=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, 2))
    Y = np.column_stack([np.sin(X[:, 0]), np.cos(X[:, 1])])
    Y = Y + 0.2 * rng.normal(size=(n, 2))
    K = pairwise_kernel(X, X, "rbf", gamma=0.5)
    S = rng.choice(n, M, replace=False)
    return K[:, S] / np.sqrt(np.diag(K)[S]), Y - Y.mean(0)


@pytest.mark.parametrize("gram", [True, False])
def test_loo_error_equals_brute_force_leave_one_out(gram):
    """Z_i / (A^-1)_ii is the residual of the fit without row i (kernel fixed)."""
    C, Y = _columns()
    cols = C if gram else ColumnsOnDemand(lambda j: C[:, j], C.shape)
    res = CoordinateNewton(tol=1e-8, max_iter=200, random_state=0).solve(
        slkl_problem(cols, Y, 0.02))
    state = res.state["slkl"]
    assert 0 < state.m0 < C.shape[1] and state.gram_mode == gram
    brute = _brute_loo(C, Y, res.state.mu)
    np.testing.assert_allclose(_loo_errors(state), brute, rtol=1e-7)


def _brute_loo(C, Y, mu):
    """Per-row squared errors of the fits without that row (kernel fixed)."""
    Kt = (C * mu) @ C.T
    n = len(Y)
    rows = np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        alpha = np.linalg.solve(np.eye(n - 1) + Kt[np.ix_(keep, keep)], Y[keep])
        rows[i] = np.sum((Y[i] - Kt[i, keep] @ alpha) ** 2)
    return rows


@pytest.mark.parametrize("noise", [0.3, 1.0, 2.0])
def test_auto_keeps_the_path_value_the_rule_names(noise, monkeypatch):
    """Against brute-force leave-one-out errors of cold fits: the path runs until
    NU_PATIENCE + 1 values in a row do worse than its best (or to its end) and
    keeps the sparsest value within NU_SE_FRACTION standard errors of the best."""
    from kernlearn.methods import slkl

    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 3, (80, 2))
    Y = (np.sin(2 * X[:, 0]) * X[:, 1] + noise * rng.normal(size=80))[:, None]
    kw = dict(gamma=0.5, n_columns=30, tol=1e-12, max_iter=3000, seed=0)
    calls = []
    monkeypatch.setattr(slkl, "_loo_errors",
                        lambda st: calls.append(st.nu) or _loo_errors(st))
    auto = fit_slkl(X, Y, nu="auto", **kw)
    monkeypatch.undo()
    tried = list(dict.fromkeys(auto.history["nu"]))
    assert tried == list(NU_GRID[: len(tried)])
    assert len(auto.history["objective"]) == auto.nu_path["n_iter"][: len(tried)].sum()
    kept = tried[-1]
    K = pairwise_kernel(X, X[auto.column_indices], "rbf", gamma=0.5)
    Yc = Y - Y.mean(0)
    rows = {}
    for rel in NU_GRID:  # each value cold, to high accuracy
        res = fit_slkl(X, Y, nu=rel, **kw)
        np.testing.assert_array_equal(res.column_indices, auto.column_indices)
        rows[rel] = _brute_loo(K, Yc, res.mu)
    loo = {r: rows[r].sum() for r in NU_GRID}
    reached = NU_GRID[: len(calls)]
    best = min(reached, key=lambda r: (loo[r], -NU_GRID.index(r)))
    after = NU_GRID[NU_GRID.index(best) + 1: len(calls)]
    # stopped by NU_PATIENCE + 1 worse values, or at the end of the path
    assert len(calls) == len(NU_GRID) or (
        len(after) == NU_PATIENCE + 1 and all(loo[r] > loo[best] for r in after))
    limit = loo[best] + NU_SE_FRACTION * np.sqrt(len(Y)) * rows[best].std()
    assert kept == next(r for r in reached if loo[r] <= limit)
    cold = fit_slkl(X, Y, nu=kept, **kw)
    # warm-started and cold fits reach the same minimum of eq. (14) (the
    # minimiser itself is flat along nearly collinear columns)
    assert auto.objective == pytest.approx(cold.objective, rel=1e-8)
    assert auto.nu == pytest.approx(cold.nu)


@pytest.mark.parametrize("precompute", [True, False])
def test_dual_coefficients_reproduce_the_ridge_fit_at_large_n_small_nu(precompute):
    """Training predictions equal the kernel ridge fit B (I + B'B)^-1 B'y, B = C D^1/2.

    At many rows, smooth columns and small nu the weights reach ~1e5 and
    mu_m (c_m'z) must not be formed from c_m'z (~sqrt(nu), a difference of
    terms of order n): that lost every digit and gave the fit 4x its MSE.
    """
    rng = np.random.default_rng(0)
    n, g = 20000, 1 / 3
    X = rng.standard_t(3, size=(n, 3))  # heavy tails: a dense bulk, smooth columns
    X = (X - X.mean(0)) / X.std(0)
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.3 * rng.normal(size=n)
    Y = (y - y.mean())[:, None] / y.std()
    res = fit_slkl(X, Y, gamma=g, n_columns=128, nu=1e-5, precompute=precompute,
                   seed=0)
    assert res.mu.max() > 1e4  # the regime where the old extraction failed
    C = pairwise_kernel(X, X[res.column_indices], "rbf", gamma=g)
    B = C * np.sqrt(res.mu)
    exact = B @ np.linalg.solve(np.eye(len(res.mu)) + B.T @ B, B.T @ Y)
    fit = pairwise_kernel(X, X[res.center_indices], "rbf", gamma=g) @ res.dual_coef
    resid = np.mean((Y - exact) ** 2)
    assert np.mean((fit - exact) ** 2) < 1e-6 * resid


def test_path_starts_at_one_and_keeps_it_on_pure_noise():
    """Targets independent of X: the mean is the best model and the path keeps
    its sparsest value, 1.0 (a path starting at 0.1 kept 0.1: forest, fertility)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 4))
    Y = rng.normal(size=(150, 1))
    res = fit_slkl(X, Y, nu="auto", n_columns=40, seed=0)
    assert NU_GRID[0] == 1.0
    kept = res.history["nu"][-1]
    assert kept == 1.0
    assert res.nu == pytest.approx(np.mean((Y - Y.mean()) ** 2))
    # that value predicts noise better than the old start, 0.1 (squared error
    # on fresh rows of the same distribution)
    Xt, Yt = rng.normal(size=(2000, 4)), rng.normal(size=(2000, 1))
    def test_mse(r):
        f = pairwise_kernel(Xt, X[r.center_indices], "rbf", **r.kernel_params)
        return float(np.mean((Yt - f @ r.dual_coef - r.intercept) ** 2))
    assert test_mse(res) < test_mse(fit_slkl(X, Y, nu=0.1, n_columns=40, seed=0))


def _scripted_loo(monkeypatch, factors, spread=0.0):
    """Replace the leave-one-out error by ``factors`` times the mean's error, in
    the order the path asks for them (per-row errors with standard deviation
    ``spread`` times their mean); returns the list of nu values asked."""
    from kernlearn.methods import slkl

    factors, seen = iter(factors), []

    def scripted(state):
        seen.append(state.nu)
        n = len(state.Y)
        # rows summing to factor * ||Y||^2, spread +-spread around their mean
        return (next(factors) * float(np.sum(state.Y ** 2)) / n
                * (1 + spread * (-1.0) ** np.arange(n)))

    monkeypatch.setattr(slkl, "_loo_errors", scripted)
    return seen


def _path_data():
    Y = _columns()[1]
    return np.random.default_rng(0).normal(size=(len(Y), 2)), Y


@pytest.mark.parametrize("patience", [0, 1])
def test_path_stops_only_after_beating_the_mean(monkeypatch, patience):
    """Rises of the error while no value beats the mean's (||Y||^2) do not
    stop the path; once one has, patience + 1 values worse than it do."""
    # three values on the flat start, each worse than the first (1.001)
    seen = _scripted_loo(monkeypatch, [1.001, 1.002, 1.003, 0.8, 0.9, 0.95])
    X, Y = _path_data()
    res = fit_slkl(X, Y, nu="auto", n_columns=12, seed=0, path_rule=(patience, 0.0))
    # patience 0: the rise 0.8 -> 0.9 stops the path after step 4; patience 1:
    # 0.95 is the second value worse than 0.8 (and the last anyway)
    assert len(seen) == 5 + patience
    assert res.history["nu"][-1] == NU_GRID[3]


def test_path_tries_one_value_past_a_rise_and_keeps_the_best(monkeypatch):
    """NU_PATIENCE = 1: a single rise (LOO noise on a few hundred rows: autompg
    stopped at 0.1 and had 1.26x the baseline's MSE) does not end the path; a
    later, better value is kept; two values in a row worse than the best do."""
    assert NU_PATIENCE == 1
    X, Y = _path_data()
    seen = _scripted_loo(monkeypatch, [0.9, 0.8, 0.85, 0.7, 0.75, 0.72])
    res = fit_slkl(X, Y, nu="auto", n_columns=12, seed=0)
    assert len(seen) == 6 and res.history["nu"][-1] == NU_GRID[3]
    seen = _scripted_loo(monkeypatch, [0.9, 0.7, 0.8, 0.75, 0.1, 0.1])
    res = fit_slkl(X, Y, nu="auto", n_columns=12, seed=0)
    assert len(seen) == 4 and res.history["nu"][-1] == NU_GRID[1]
    # the kept fit is the one at that value: same objective as a fit at it alone
    assert res.nu == pytest.approx(fit_slkl(X, Y, nu=NU_GRID[1], n_columns=12,
                                            seed=0).nu)


@pytest.mark.parametrize("spread, kept", [(1.0, 1), (0.1, 2)])
def test_path_keeps_the_sparsest_value_within_a_fraction_of_a_standard_error(
        monkeypatch, spread, kept):
    """The error's minimum 0.68 (step 2) is flat next to 0.70 (step 1): with
    per-row errors as spread as their mean, 0.70 is within NU_SE_FRACTION
    standard errors of 0.68 (sqrt(n) std = 0.68 / sqrt(40) = 0.108 of the
    mean's error; a quarter of it is 0.027) and the sparser value is kept;
    with a tenth of that spread it is not."""
    assert NU_SE_FRACTION == 0.25
    X, Y = _path_data()
    assert len(Y) == 40
    factors = [0.9, 0.7, 0.68, 0.75, 0.8, 0.85]
    _scripted_loo(monkeypatch, factors, spread)
    res = fit_slkl(X, Y, nu="auto", n_columns=12, seed=0)
    assert res.history["nu"][-1] == NU_GRID[kept]
    # the classifier's rule: the smallest error, whatever its spread
    _scripted_loo(monkeypatch, factors, spread)
    res = fit_slkl(X, Y, nu="auto", n_columns=12, seed=0, path_rule=(0, 0.0))
    assert res.history["nu"][-1] == NU_GRID[2]


def test_classifier_path_stops_at_the_first_rise(monkeypatch):
    """LowRankKernelClassifier keeps patience 0 on CODES_NU_GRID (its results
    were measured with it); the regressor uses NU_PATIENCE."""
    from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor

    X, Y = _path_data()
    y = Y[:, 0] > 0
    seen = _scripted_loo(monkeypatch, [0.9, 0.8, 0.85, 0.7, 0.6])
    clf = LowRankKernelClassifier(n_columns=12, random_state=0).fit(X, y)
    assert len(seen) == 3 and clf.history_["nu"][-1] == 0.01
    seen = _scripted_loo(monkeypatch, [0.9, 0.8, 0.85, 0.7, 0.75, 0.8])
    reg = LowRankKernelRegressor(n_columns=12, random_state=0).fit(X, Y[:, 0])
    assert len(seen) == 6 and reg.history_["nu"][-1] == NU_GRID[3]


def test_classifier_path_starts_at_a_tenth_regressor_path_at_one():
    """nu="auto": the regressor's path is NU_GRID (from 1.0), the classifier's
    CODES_NU_GRID (from 0.1: the codes' squared error favours near-mean fits)."""
    from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor
    from kernlearn.methods.slkl import CODES_NU_GRID

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = X[:, 0] + 0.5 * rng.normal(size=120)
    reg = LowRankKernelRegressor(n_columns=30, random_state=0).fit(X, y)
    clf = LowRankKernelClassifier(n_columns=30, random_state=0).fit(X, y > 0)
    assert CODES_NU_GRID == NU_GRID[1:] and CODES_NU_GRID[0] == 0.1
    assert reg.history_["nu"][0] == 1.0
    assert clf.history_["nu"][0] == 0.1
    # a path given as a sequence is run as given, and its kept value is one of it
    res = fit_slkl(X, y[:, None], nu=(0.5, 0.05), n_columns=30, seed=0)
    assert list(dict.fromkeys(res.history["nu"])) in ([0.5], [0.5, 0.05])
    with pytest.raises(ValueError, match="nu must be a positive number"):
        LowRankKernelRegressor(n_columns=30, nu=(0.1, -1.0)).fit(X, y)


def test_a_breakdown_of_the_compiled_updates_is_a_clear_error(monkeypatch):
    """The compiled Gram steps raised a bare ZeroDivisionError at nu = 1e-6 on a
    20,000-row set: the fit now says what broke and what to do."""
    from kernlearn.methods import _slkl_state

    def broken(*args):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(_slkl_state, "_gram_steps", broken)
    C, Y = _columns()
    # (the steps run by the Python sweep driver: a callback selects it)
    with pytest.raises(ValueError, match="Increase nu"):
        CoordinateNewton(random_state=0, callback=lambda row: None).solve(
            slkl_problem(C, Y, 1e-6))
    # and inside the compiled sweeps (test_slkl_sweep_driver has the message)
    monkeypatch.setattr(_slkl_state, "_gram_sweeps", broken)
    with pytest.raises(ValueError, match="Increase nu"):
        CoordinateNewton(random_state=0).solve(slkl_problem(C, Y, 1e-6))


def test_a_breakdown_along_the_path_ends_it_at_the_last_value_solved(monkeypatch):
    # the Woodbury updates can break down at a small nu (weights too large):
    # nu="auto" then keeps the path solved so far and says so; a fixed nu raises
    import kernlearn.methods.slkl as slkl
    from kernlearn.methods._slkl_state import SLKLBreakdown

    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (60, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=60)
    calls = []
    original = slkl.slkl_problem

    def failing(cols, Y, nu, *args, **kwargs):
        calls.append(nu)
        if len(calls) == 3:
            raise SLKLBreakdown("SLKL's coordinate updates broke down (test): nu is too small")
        return original(cols, Y, nu, *args, **kwargs)

    monkeypatch.setattr(slkl, "slkl_problem", failing)
    with pytest.warns(ConvergenceWarning, match=r"path stopped at relative nu=0\.1; at 0\.01"):
        res = fit_slkl(X, y[:, None], nu="auto", seed=0)
    assert len(calls) == 3 and res.history["nu"][-1] in NU_GRID[:2]
    calls.clear()
    monkeypatch.setattr(slkl, "slkl_problem", lambda *a, **k: (_ for _ in ()).throw(
        SLKLBreakdown("broke down")))
    with pytest.raises(SLKLBreakdown):
        fit_slkl(X, y[:, None], nu=1e-3, seed=0)
