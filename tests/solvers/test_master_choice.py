"""FGM's master chosen by cost (issue: the proximal-Newton master was used on
active sets wider than the data), and the choice recorded in ``history_``."""

import numpy as np
import pytest

from kernlearn import FGMRegressor
from kernlearn.losses import get_loss
from kernlearn.solvers import MASTER_REASONS, choose_master


@pytest.mark.parametrize("n, p, K, loss, solver, name, code", [
    (500, 40, 1, "square", "auto", "newton", 6),      # narrow: Hessian cheap
    (500, 600, 1, "square", "auto", "apg", 8),        # wider than the data, APG cheaper
    (500, 400, 1, "squared_hinge", "auto", "apg", 7),  # p < n but Newton costs more
    (10**6, 150, 1, "logistic", "auto", "apg", 5),    # Hessian flops over the cap
    (10**5, 3000, 1, "logistic", "auto", "apg", 4),   # Hessian too large to store
    (500, 40, 1, "hinge", "auto", "apg", 1),          # no hess_margin
    (50, 400, 3, "logistic", "auto", "newton", 2),    # several outputs: Newton measured faster
    (1000, 1000, 10, "logistic", "auto", "newton", 2),  # ... past the Hessian cap too
    (500, 600, 1, "square", "newton", "newton", 0),   # asked for
])
def test_choose_master(n, p, K, loss, solver, name, code):
    choice = choose_master(n, p, K, get_loss(loss), solver)
    assert (choice.name, choice.code) == (name, code)
    assert choice.reason == MASTER_REASONS[code]


def test_fgm_records_the_master_and_its_reason_in_history():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 300))
    y = X[:, :5].sum(1) + 0.1 * rng.standard_normal(40)
    est = FGMRegressor(B=15, max_iter=4, tol=None).fit(X, y)
    h = est.history_
    p = np.cumsum(np.full(len(h["objective"]), 15))  # active columns per iteration
    # the wide masters (p > 40) decided by the wide cost estimate, as recorded
    want = [choose_master(40, q, 1, get_loss("square")) for q in p]
    np.testing.assert_array_equal(h["master_reason"], [c.code for c in want])
    np.testing.assert_array_equal(h["newton_master"], [c.name == "newton" for c in want])
    assert set(h["master_reason"][p > 40]) <= {8, 9}
    assert np.all(h["newton_master"][p <= 15] == 1)
