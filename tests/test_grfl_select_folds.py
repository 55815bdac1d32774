"""The folds that choose ``lambda_p="auto"`` below CV_BELOW rows: their masters are
solved to FOLD_TOL (the model's path keeps its own tol), and the model on all rows
draws its features as if they had not run."""

import functools

import numpy as np
import pytest

from kernlearn import InfiniteFeatureRegressor
from kernlearn.methods import grfl
from kernlearn.methods._grfl_average import FINAL_DRAWS
from kernlearn.methods._grfl_select import (
    AUTO_LEVELS,
    CV_BELOW,
    CV_FOLDS,
    FOLD_TOL,
    select_level,
)
from kernlearn.solvers.grfl_newton import GrFLNewton


class _Solver:
    def __init__(self, tol):
        self.tol = tol


class _FakePath:
    """A path whose held-out loss is a known function of its level."""

    def __init__(self, level, solver):
        self.penalty_p = type("Pen", (), {"alpha": level})()
        self.p, self._found, self.extended, self.history = 0, None, [], []
        self.solver = solver

    def extend(self, max_features):
        self.extended.append((self.penalty_p.alpha, max_features, self.solver.tol))
        return self


class _FakeMonitor:
    def __init__(self, path, best):
        self.path, self.best_level, self.losses = path, best, []

    def __call__(self):
        self.losses.append((np.log(self.path.penalty_p.alpha / self.best_level)) ** 2)


@pytest.mark.parametrize("tol, fold_tol", [(1e-3, FOLD_TOL), (0.05, 0.05)])
def test_folds_masters_use_fold_tol_on_a_copy_of_the_solver(tol, fold_tol):
    shared = _Solver(tol)  # one solver object for every path, as a user's would be
    runs = []

    def start(tr, val, level):
        path = _FakePath(level, shared)
        runs.append(path)
        return path, _FakeMonitor(path, 0.4)

    folds = [(np.arange(3), np.arange(3, 5))] * 4
    level, losses = select_level(start, folds, max_features=9)
    assert level == 0.4 and len(losses) == 5
    assert shared.tol == tol  # the given solver is not changed
    for path in runs:
        # every level of every fold ran to the budget, its masters to FOLD_TOL
        # unless the solver's own tol is looser (then on the solver itself)
        assert {(m, t) for _, m, t in path.extended} == {(9, fold_tol)}
        assert (path.solver is shared) == (tol >= FOLD_TOL)
    runs.clear()
    select_level(start, folds, max_features=9, fold_tol=0.0)  # the solver's own tol
    assert all(p.solver is shared and {t for *_, t in p.extended} == {tol} for p in runs)


def _small_problem():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.2 * rng.normal(size=120)
    return X, y


def test_fold_masters_are_looser_and_the_model_keeps_its_tol(monkeypatch):
    X, y = _small_problem()
    assert X.shape[0] < CV_BELOW
    folds, final = [], []

    def spy(start, split, max_features, **kw):
        def recorded(tr, val, level):
            path, monitor = start(tr, val, level)
            folds.append(path)
            return path, monitor
        return select_level(recorded, split, max_features, **kw)

    orig_result = grfl._result

    def result(path, *a, **k):
        final.append(path)
        return orig_result(path, *a, **k)

    monkeypatch.setattr(grfl, "select_level", spy)
    monkeypatch.setattr(grfl, "_result", result)
    solver = GrFLNewton(tol=1e-3)
    est = InfiniteFeatureRegressor(solver=solver, n_candidates=30, random_state=0).fit(X, y)
    assert est.lambda_p_ in AUTO_LEVELS
    assert len(folds) == CV_FOLDS and len(final) == FINAL_DRAWS
    assert {p.solver.tol for p in folds} == {FOLD_TOL}
    assert all(f.solver.tol == 1e-3 and f.exact for f in final)
    assert solver.tol == 1e-3  # the estimator's solver is left as given


def test_the_model_on_all_rows_depends_on_the_chosen_level_only(monkeypatch):
    # the folds' paths draw from the fit's random state; the path on all rows
    # starts from the state before them, so folds that draw differently but
    # choose the same level give the same model
    X, y = _small_problem()
    ref = InfiniteFeatureRegressor(n_candidates=30, random_state=0).fit(X, y)

    def more_draws(start, folds, max_features, **kw):
        level, losses = select_level(start, folds, max_features, **kw)
        start(folds[0][0], folds[0][1], level)[0].extend(3)  # more draws
        return level, losses

    monkeypatch.setattr(grfl, "select_level", more_draws)
    other = InfiniteFeatureRegressor(n_candidates=30, random_state=0).fit(X, y)
    assert other.lambda_p_ == ref.lambda_p_
    np.testing.assert_array_equal(other.features_, ref.features_)
    np.testing.assert_allclose(other.predict(X), ref.predict(X), rtol=1e-12)
    # folds at the model's own tol (other draws: their masters take other
    # steps) held to the chosen level give the same model too
    monkeypatch.setattr(grfl, "select_level", functools.partial(
        select_level, levels=(ref.lambda_p_,), fold_tol=0.0))
    fixed = InfiniteFeatureRegressor(n_candidates=30, random_state=0).fit(X, y)
    np.testing.assert_array_equal(fixed.features_, ref.features_)
