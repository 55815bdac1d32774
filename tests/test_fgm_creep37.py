"""FGM's slow creep near the optimum (issue 21, thirty-sixth pass).

Two regressors of audit 53 (60 x 30 Gaussian data, square loss, ``B=2`` and
``B=5``) stopped silently 2.4 % and 9.2 % above their optimum: near ties of
the top-``B`` scores the cutting plane lowers the objective by less than
``tol / 10`` a round for several rounds, then by 1 %, and the objective-change
stop took the flat stretch with a duality gap of 13-32 %.  That stop now also
needs the gap within ``10 tol`` (``5 tol`` cured both but made the ten-class
image sets of the breadth suite up to 40x slower than ``LinearSVC``): the
``B=2`` fit runs on to 0.1 % above its optimum, silent (its own rule
converged); the ``B=5`` fit still stops silently 3.0 % above, at a gap of
7 % (open, marked ``xfail``).
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from kernlearn import FGMRegressor

TOL = 1e-2


def _wide(n=60, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 30)
    return X, X[:, :6] @ rng.randn(6) + 0.1 * rng.randn(n)


def _fit(model, X, y):
    with warnings.catch_warnings(record=True) as seen, threadpool_limits(1):
        warnings.simplefilter("always")
        model.fit(X, y)
    return model, [str(w.message) for w in seen if issubclass(w.category, ConvergenceWarning)]


def _optimum(make, X, y):
    ref, _ = _fit(make(tol=1e-9, max_iter=500, inner_tol=1e-12), X, y)
    return ref.history_["objective"].min()


# the C that cross-validation chose for each at defaults (fixed: one fit each)
HUNTED = {"B=2": (2, 10.0), "B=5": (5, 10 ** 0.5)}

OPEN_B5 = pytest.mark.xfail(strict=True, reason=(
    "open (issue 21): FGMRegressor(B=5) creeps with changes below tol / 10 at a gap "
    "of 7 %, inside 10 tol, and stops silently 2.99 % above its optimum; the cure "
    "named is a master over the squared B-support norm of the active features "
    "instead of the hull of the found d's"))


@pytest.mark.parametrize("case", ["B=2", pytest.param("B=5", marks=OPEN_B5)])
def test_hunted_regressors_end_within_tol_of_their_optimum_or_warn(case):
    B, C = HUNTED[case]
    X, y = _wide()
    make = lambda **kw: FGMRegressor(B=B, C=C, **kw)  # noqa: E731
    got, said = _fit(make(), X, y)
    above = got.history_["objective"][-1] / _optimum(make, X, y) - 1
    # main's code: 2.39 % (B=2) and 9.16 % (B=5) above, no warning; now 0.12 % and
    # 2.99 %, no warning
    assert above <= TOL or said, f"{100 * above:.2f} % above the optimum, silent"


def test_the_b2_hunted_regressor_converges_silently():
    # not by warning: the path runs on to within tol and says nothing (measured
    # 0.12 % above, 15 rounds against main's 9)
    X, y = _wide()
    make = lambda **kw: FGMRegressor(B=2, C=10.0, **kw)  # noqa: E731
    got, said = _fit(make(), X, y)
    assert not said and got.converged_
    assert got.history_["objective"][-1] <= _optimum(make, X, y) * (1 + TOL)


@pytest.mark.parametrize("case", sorted(HUNTED))
def test_a_converged_fit_has_its_certificate_within_ten_tol(case):
    # the stop at an objective change below tol / 10 is taken only with the gap of
    # Theorem 2 within 10 tol (main's code ended these at gaps of 32 % and 13 %;
    # now 9.9 % and 7.2 %)
    B, C = HUNTED[case]
    X, y = _wide()
    got, said = _fit(FGMRegressor(B=B, C=C), X, y)
    h = got.history_
    gap = (h["objective"][-1] - h["final_lower_bound"][0]) / h["objective"][-1]
    assert got.converged_ and not said
    assert gap <= 10 * TOL


def test_a_creeping_path_cut_by_max_iter_warns_naming_the_gap_rule():
    # at round 9 the B=2 path's change is below tol / 10 with a 32 % gap: main's code
    # stopped there converged; now the cap comes first and says which rule was not met
    X, y = _wide()
    got, said = _fit(FGMRegressor(B=2, C=10.0, max_iter=9), X, y)
    assert not got.converged_
    assert any("within 10 tol = 0.1" in m for m in said), said
