"""An eighth user's audit: what the fitted models report, and when they warn.

A user reads the numbers a fitted model reports (its attributes, the report's
figures and tables) and trusts that a fit stopped on an iteration cap says so
with a ``ConvergenceWarning``.  Each test here failed before its fix.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from kernlearn import FGMClassifier, FGMRegressor, InfiniteFeatureClassifier


def _convergence_warnings(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = fit()
    return est, [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def _xor_like(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    return X, (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(int)


# --------------------------------------------------------------- convergence
@pytest.mark.parametrize("solver", ["newton", "admm", "fista"])
def test_grfl_masters_solved_by_the_uncapped_solver_warn_when_they_stop_unconverged(solver):
    # path_iter=None solves every master with the full solver: one stopped by
    # inner_max_iter far from inner_tol is the returned model's master, and
    # it said nothing (the capped path masters' finishing solve did warn)
    X, y = _xor_like()
    est, caught = _convergence_warnings(lambda: InfiniteFeatureClassifier(
        max_features=8, n_paths=1, random_state=0, solver=solver, inner_max_iter=1,
        inner_tol=1e-10, path_iter=None).fit(X, y))
    assert est.history_["kkt"][-1] > 1e-10  # the last master did stop unconverged
    assert caught, "an unconverged final master raised no ConvergenceWarning"


def test_grfl_converged_fit_with_uncapped_masters_does_not_warn():
    X, y = _xor_like()
    _, caught = _convergence_warnings(lambda: InfiniteFeatureClassifier(
        max_features=8, n_paths=1, random_state=0, path_iter=None).fit(X, y))
    assert not caught
