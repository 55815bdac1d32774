"""Audit 114: FGM by row blocks, the bound's offset recheck and SLKL's set-up.

An independent review of the thirty-fourth pass's row-block fits (CSR blocks
with zero-weight rows), its re-pricing of a bound above the objective on
shifted columns, and the low-rank set-up's unchecked self-kernel and spread
ratio, on inputs the earlier hunts did not draw (weights summing below 1e-300
or above 1e300, Dask partitions, float32, duplicate rows, rows far from zero).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kernlearn import FGMClassifier, FGMRegressor

# light workers in the test process (the fits are small)
DASK_CLUSTER = dict(processes=False)


def _fit(est, X, y, sw):
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        return est.fit(X, y, sample_weight=sw)


def _tiny_weight_data():
    rng = np.random.default_rng(65)
    X = rng.standard_normal((60, 4))
    y = (X[:, 0] + 0.5 * rng.standard_normal(60) > 0.8).astype(int)  # (imbalanced)
    return X, y, rng.uniform(0.5, 2.0, 60)


def test_intercepts_of_tiny_weights_are_those_of_the_rescaled_weights():
    """Newton's intercept re-centring at weights summing below 1e-300.

    The intercept minimising a weighted loss does not depend on the weights'
    scale.  The step divided by ``max(h, 1e-300)``: with the summed curvature
    ``h`` near 1e-303 every step was a thousandth of Newton's, and after its
    30 steps the re-centred margins were far from the root (the dual point,
    and on a cluster the empty model's intercept).
    """
    from kernlearn.losses import get_loss, weighted
    from kernlearn.methods.fgm import _centre_intercepts

    X, y, sw = _tiny_weight_data()
    Y = np.where(y == 1, 1.0, -1.0)[:, None]
    M = np.zeros_like(Y)
    for name in ("squared_hinge", "logistic", "square"):
        ref = _centre_intercepts(weighted(get_loss(name), sw), M, Y)
        got = _centre_intercepts(weighted(get_loss(name), sw * 1e-305), M, Y)
        # (before: squared hinge -0.47 against -0.58)
        np.testing.assert_allclose(got, ref, rtol=1e-9, err_msg=name)


def test_dask_empty_model_with_tiny_weights_has_the_in_memory_intercept(client):
    """Silent wrong result: FGM on Dask partitions with weights summing to ~1e-303
    returned the empty model with another intercept than the in-memory fit, both
    ``converged_`` (-0.04 against -0.90 in the hunt's case)."""
    da = pytest.importorskip("dask.array")
    X, y, sw = _tiny_weight_data()
    sw = sw * 1e-305
    make = lambda: FGMClassifier(B=2, C=0.01, max_iter=4)  # noqa: E731
    ref = _fit(make(), X, y, sw)
    got = _fit(make(), da.from_array(X, chunks=(20, 4)), y, sw)
    assert not ref.coef_.any() and not got.coef_.any()
    np.testing.assert_allclose(got.intercept_, ref.intercept_, rtol=1e-8)
    assert got.converged_ == ref.converged_


@pytest.mark.parametrize("est", [FGMRegressor, FGMClassifier])
def test_weights_whose_squared_scores_overflow_are_refused(est):
    """Silent wrong result: weights near 1e160 and beyond "converged" on the first
    features priced.

    ``u = C w l'(m)`` then has scores whose squares are infinite: the pricing
    ranked ties of ``inf`` and Theorem 3's test, ``inf <= inf``, stopped the fit
    at once (2 of the 6 features the same fit with ``C = 1e8`` uses, only NumPy's
    overflow warnings said anything; a cluster's Newton system was singular).
    The fit now refuses with a message naming the product and the remedy; the
    regressor at a weight scale of 1e100 still fits as at ``C = 1e8``.
    """
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 6))
    t = X[:, 0] + 2 * X[:, 1] + 0.3 * rng.standard_normal(80)
    y = t if est is FGMRegressor else (t > 0).astype(int)
    sw = rng.uniform(0.5, 2.0, 80)
    if est is FGMRegressor:  # (a classifier's hard-margin limit is a problem of its own)
        ref = _fit(est(B=2, C=1e8), X, y, sw)
        big = _fit(est(B=2, C=1.0), X, y, sw * 1e100)  # (C w = 1e100: the limit reached)
        np.testing.assert_allclose(big.coef_, ref.coef_, rtol=1e-6, atol=1e-6)
    for scale, C in ((1e250, 1.0), (1.0, 1e250), (1e300, 1e-100)):
        with pytest.raises(ValueError, match="largest sample weight.*lower C"):
            _fit(est(B=2, C=C), X, y, sw * scale)
    # by sparse row blocks, which keep the rows of weight 0: the same message
    sw[::4] = 0.0
    said = []
    for kw in ({}, {"memory_budget": "4KB"}):
        with pytest.raises(ValueError, match="largest sample weight") as err:
            _fit(est(B=2, C=1.0, **kw), sp.csr_matrix(X), y, sw * 1e250)
        said.append(str(err.value))
    assert said[0] == said[1]


@pytest.mark.parametrize("seed, C, zeros", [(4, 0.01, False), (9, 0.1, False), (4, 0.01, True)])
def test_dask_budget_grows_a_group_as_in_memory(client, seed, C, zeros):
    """FGM with ``max_features`` on Dask partitions selects what the in-memory fit does.

    When the best new features one by one do not violate the restricted
    optimum's condition, the budget's loop doubles the group until together
    they do (``_grow_group``), which needs the active constraints' values.  The
    cluster's rows had none, so it kept Theorem 3's exact test and never grew
    the group: on 24 plain fits (12 seeds, two ``C``) 15 differed from the
    in-memory model (seed 4: feature 5 alone against five, unconverged; a hunt's
    case "converged" with 2 of 5 features at a higher objective).
    """
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((60, 9))
    t = X @ (rng.standard_normal(9) * (rng.random(9) < 0.7)) + 0.5 * rng.standard_normal(60)
    sw = None
    if zeros:  # (rows of weight 0 far out: their dual values are 0, X'g holds none of them)
        sw = rng.uniform(0.5, 2.0, 60)
        sw[::5] = 0.0
        X[::5, 3] = 1e200
    make = lambda: FGMRegressor(B=2, C=C, max_iter=3, max_features=5)  # noqa: E731
    ref = _fit(make(), X, t, sw)
    got = _fit(make(), da.from_array(X, chunks=(20, 9)), t, sw)
    np.testing.assert_array_equal(np.sort(got.selected_features_), np.sort(ref.selected_features_))
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
    assert got.converged_ == ref.converged_
