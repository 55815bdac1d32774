"""Audit 109: FGM's master and row-block fits after the thirty-third pass.

Sparse row blocks (CSR ``memory_budget`` chunks, CSR Dask partitions) kept
their rows of zero weight as zeros in the master's active columns.  A
column the standardisation takes far from zero (values ``1 + 1e-9 z``:
scaled by ``1e9``, so ``1e9 + z``) then spanned ``[0, 1e9]``, which hid its
offset from the master's shift once the block was densified; the master
solved the ill-conditioned problem, stopped "converged" far above the
restricted optimum, and the fit mostly reported converged, without a word,
at 1.3-86x the in-memory objective (the de-biasing refit's columns too).
And the dual bound FGM stops on, against cvxpy on the full relaxed problem.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from kernlearn import FGMClassifier, FGMRegressor


def _offset_data(seed=2, n=90):
    """A column ``1 + 1e-9 z`` carrying the target, a constant one, zero weights."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, 3))
    X = np.column_stack([z[:, 0], 1.0 + 1e-9 * z[:, 1], np.full(n, 7.0)])
    t = z[:, 0] + 2.0 * z[:, 1] + 0.3 * rng.standard_normal(n)
    sw = rng.uniform(0.5, 2.0, n)
    sw[rng.random(n) < 0.25] = 0.0
    sw[0] = 1.0
    return X, t, sw


def _fit(model, X, y, sw):
    with warnings.catch_warnings(record=True) as seen, threadpool_limits(1):
        warnings.simplefilter("always")
        model.fit(X, y, sample_weight=sw)
    return model, sorted(str(w.message) for w in seen
                         if issubclass(w.category, (ConvergenceWarning, RuntimeWarning)))


def _same(ref, got):
    np.testing.assert_array_equal(got.selected_features_, ref.selected_features_)
    scale = np.abs(ref.coef_).max()
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-7, atol=1e-9 * scale)
    np.testing.assert_allclose(got.intercept_, ref.intercept_, rtol=1e-7, atol=1e-9 * scale)
    np.testing.assert_allclose(got.history_["objective"], ref.history_["objective"], rtol=1e-9)


@pytest.mark.parametrize("refit", [False, True], ids=["", "refit"])
@pytest.mark.parametrize("make", [
    lambda **kw: FGMRegressor(B=2, C=10.0, max_iter=4, **kw),
    lambda **kw: FGMClassifier(B=2, C=10.0, max_iter=4, **kw),
], ids=["regressor", "classifier"])
def test_sparse_row_blocks_with_zero_weights_fit_as_in_memory(make, refit):
    X, t, sw = _offset_data()
    y = t if make().__class__ is FGMRegressor else (t > np.median(t)).astype(int)
    Xs = sp.csr_matrix(X)
    ref, said_ref = _fit(make(refit=refit), Xs, y, sw)
    got, said = _fit(make(refit=refit, memory_budget="4KB"), Xs, y, sw)
    # (before: objectives 214 and 292 against 8.3 and 48, converged_ True, silent)
    _same(ref, got)
    assert said == said_ref
    assert got.converged_ == ref.converged_


def test_sparse_dask_partitions_with_zero_weights_fit_as_in_memory(client):
    da = pytest.importorskip("dask.array")
    X, t, sw = _offset_data()
    make = lambda: FGMRegressor(B=2, C=10.0, max_iter=4)  # noqa: E731
    ref, said_ref = _fit(make(), X, t, sw)
    Xd = da.from_array(sp.csr_matrix(X), chunks=(30, 3), asarray=False)
    got, said = _fit(make(), Xd, t, sw)
    _same(ref, got)
    assert said == said_ref


def _ksupport_sq(z, k):
    """Squared ``k``-support norm of ``|z|`` (Argyriou, Foygel, Srebro 2012, Prop. 2.1)."""
    z = np.sort(np.abs(np.asarray(z, float)))[::-1]
    if k >= z.size:
        return float(z @ z)
    for r in range(k):
        tail, upper = z[k - r - 1:].sum(), np.inf if k - r < 2 else z[k - r - 2]
        if upper > tail / (r + 1) >= z[k - r - 1]:
            return float(z[:k - r - 1] @ z[:k - r - 1] + tail**2 / (r + 1))
    raise AssertionError("no r")


@pytest.mark.parametrize("seed", range(6))
def test_dual_bounds_lie_below_a_feasible_value_and_the_model_at_the_optimum(seed):
    """FGM's dual values are lower bounds of the full relaxed problem (Theorem 2).

    The problem over every set of ``B`` groups is ``1/2 ||V||_(B)^2 + C sum_i
    w_i l(m_i)``, the ``B``-support norm of the group norms, whose variational
    form makes it a cvxpy problem.  Every recorded bound must lie below the
    exact value at cvxpy's (feasible) point, and the converged model within
    ``1e-6`` of cvxpy's point.  (Checked failing with the pricing's sum of
    squared scores 1 % or 0.01 % short: every fit unconverged by the bound
    guard; with the guard off too, bounds above cvxpy's point.)
    """
    from kernlearn.families import FeaturePool
    from kernlearn.losses import get_loss, weighted
    from kernlearn.methods.fgm import FGMSettings, fit_fgm

    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(seed)
    n, p = 30, 6
    X = rng.standard_normal((n, p))
    X[:, 5] = X[:, 0] + 1e-3 * rng.standard_normal(n)  # a near-duplicate
    f = X[:, :3] @ rng.standard_normal(3)
    name = ["square", "logistic", "squared_hinge"][seed % 3]
    y = f + 0.1 * rng.standard_normal(n) if name == "square" else (f > 0).astype(int)
    Y = y if name == "square" else np.where(y == 1, 1.0, -1.0)
    w = rng.uniform(0.5, 2.0, n)
    w[rng.random(n) < 0.2] = 0.0
    groups = [[0], [1, 2], [3], [4, 5]] if seed % 2 else None
    B, C = 1 + seed % 2, [0.1, 1.0, 10.0][seed % 3]
    s = FGMSettings(B=B, C=C, tol=1e-8, max_iter=30, solver="newton", master_tol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = fit_fgm(X, y, FeaturePool(groups=groups), weighted(get_loss(name), w), s,
                      sample_weight=w, n_classes=None if name == "square" else 2)
    pool = res.pool
    G = [np.array([j]) for j in range(p)] if groups is None else pool._groups
    gw = np.ones(len(G)) if groups is None else pool._group_weight
    A = X * pool.scale_
    A = A - A.mean(0)  # (the intercept absorbs the shift)
    V = [cp.Variable(len(g)) for g in G]
    th, b = cp.Variable(len(G)), cp.Variable()
    m = sum((A[:, g] * gw[t]) @ V[t] for t, g in enumerate(G)) + b
    loss = {"square": lambda: 0.5 * cp.square(m - Y),
            "logistic": lambda: cp.logistic(-cp.multiply(Y, m)),
            "squared_hinge": lambda: 0.5 * cp.square(cp.pos(1 - cp.multiply(Y, m)))}[name]()
    unit = res.history["objective"][-1]
    prob = cp.Problem(cp.Minimize((0.5 * sum(cp.quad_over_lin(V[t], th[t]) for t in range(len(G)))
                                   + C * (w @ loss)) / unit),
                      [th >= 0, th <= 1, cp.sum(th) <= B])
    prob.solve(solver="CLARABEL")
    margins = sum((A[:, g] * gw[t]) @ V[t].value for t, g in enumerate(G)) + b.value
    at = 0.5 * _ksupport_sq([np.linalg.norm(v.value) for v in V], B) + C * float(
        w @ get_loss(name).value(margins, Y))
    lows = np.append(res.history["lower_bound"], res.history["final_lower_bound"])
    assert np.max(lows) <= at * (1 + 1e-9)
    assert res.converged
    assert unit <= at * (1 + 1e-6)  # (no worse than cvxpy's point)
