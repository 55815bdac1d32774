"""The multi-output APG master of FGM's shared multiclass selection (issue 24).

APG solves ``K`` outputs sharing the groups (``W`` of shape ``(p, K)``, the
squared group-l1 penalty on each group's rows over all outputs): against the
Newton master and cvxpy, its prox against the definition, one output bit for
bit the APG before it, and ``FGMClassifier(solver="apg", multiclass="shared")``
against ``solver="newton"``.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kernlearn.losses import get_loss, weighted
from kernlearn.penalties import L1, SquaredGroupL1
from kernlearn.penalties._prox import expand, group_norms
from kernlearn.solvers import APG, APGState, Problem, ProxNewton, choose_master
from kernlearn.solvers.apg import row_group_scales
from kernlearn.solvers.choice import MasterChoice

INDPTR = np.array([0, 2, 3, 6])
# the APG of one output before it solved several (main before this pass's change)
OLD_APG_COMMIT = "2beb16ed90867146f5177ef92579459d4c24637e"


def _multi(rng, n=40, p=6, K=3, sparse=False, loss="squared_hinge", C=0.8, weights=True):
    A = rng.standard_normal((n, p))
    if sparse:
        A = sp.csr_matrix(A * (rng.random((n, p)) < 0.5))
    Y = np.where(rng.random((n, K)) < 0.4, 1.0, -1.0) if loss != "square" \
        else rng.standard_normal((n, K))
    sw = rng.random(n) + 0.5 if weights else None
    return Problem(A, Y, weighted(get_loss(loss), sample_weight=sw, C=C), SquaredGroupL1(1.0),
                   INDPTR, True)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", ["squared_hinge", "logistic"])
def test_multi_output_apg_matches_newton(sparse, loss, rng):
    pr = _multi(rng, sparse=sparse, loss=loss)
    apg = APG(tol=1e-13, max_iter=20000).solve(pr)
    newton = ProxNewton(tol=1e-14).solve(pr)
    assert apg.coef.shape == (6, 3) and apg.intercept.shape == (3,)
    F, G = apg.state.objective, newton.state.objective
    assert abs(F - G) <= 1e-8 * abs(G)
    np.testing.assert_allclose(apg.coef, newton.coef, atol=1e-4 * np.abs(newton.coef).max())
    np.testing.assert_allclose(apg.intercept, newton.intercept, atol=1e-4)
    # the state's margins and objective are those of the returned point
    M = pr.A @ apg.coef + apg.intercept
    np.testing.assert_allclose(apg.state.margin, M, atol=1e-10)
    value = pr.loss.value(M, pr.y).sum() + pr.penalty.matrix_value(apg.coef, INDPTR)
    assert abs(value - F) <= 1e-10 * abs(F)


@pytest.mark.parametrize("loss", ["square", "squared_hinge"])
def test_multi_output_apg_matches_cvxpy(loss, rng):
    pr = _multi(rng, n=15, loss=loss, weights=False)
    res = APG(tol=1e-13, max_iter=20000).solve(pr)
    W, b = cp.Variable((6, 3)), cp.Variable(3)
    M = pr.A @ W + np.ones((15, 1)) @ cp.reshape(b, (1, 3), order="C")
    fit = (0.5 * cp.sum_squares(pr.y - M) if loss == "square"
           else 0.5 * cp.sum_squares(cp.pos(1 - cp.multiply(pr.y, M))))
    norms = [cp.norm(cp.vec(W[a:c, :], order="C")) for a, c in zip(INDPTR[:-1], INDPTR[1:])]
    prob = cp.Problem(cp.Minimize(0.8 * fit + 0.5 * cp.square(sum(norms))))
    prob.solve(solver=cp.CLARABEL)
    assert abs(res.state.objective - prob.value) <= 1e-6 * abs(prob.value)
    np.testing.assert_allclose(res.coef, W.value, atol=1e-3)


def test_row_group_prox_against_definition(rng):
    # argmin_X 1/2 ||X - V||^2 + s/2 (sum_t ||X_t||_F)^2, groups of rows over outputs
    V, s = rng.standard_normal((6, 3)), 0.4
    pen = SquaredGroupL1(1.0)
    ours = V * expand(row_group_scales(pen, V, s, INDPTR), INDPTR)[:, None]
    X = cp.Variable((6, 3))
    norms = [cp.norm(cp.vec(X[a:c, :], order="C")) for a, c in zip(INDPTR[:-1], INDPTR[1:])]
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X - V) + 0.5 * s * cp.square(sum(norms)))
               ).solve(solver=cp.CLARABEL)
    np.testing.assert_allclose(ours, X.value, atol=1e-6)
    # and the penalty's own matrix prox (the uncached path's) gives the same point
    np.testing.assert_allclose(ours, pen.matrix_prox(V, s, INDPTR), rtol=1e-14, atol=1e-15)


class _NoScales(SquaredGroupL1):
    """The same penalty without ``prox_scales``: APG's uncached path."""

    prox_scales = property(lambda self: (_ for _ in ()).throw(AttributeError))

    def prox(self, w, step, indptr=None):
        ip = self._indptr(w, indptr)
        return w * expand(SquaredGroupL1.prox_scales(self, group_norms(w, ip), step), ip)


def test_cached_and_uncached_paths_agree(rng):
    pr = _multi(rng)
    plain = Problem(pr.A, pr.y, pr.loss, _NoScales(1.0), INDPTR, True)
    assert not hasattr(plain.penalty, "prox_scales")
    a = APG(tol=1e-10).solve(pr)
    b = APG(tol=1e-10).solve(plain)
    assert a.n_iter == b.n_iter
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.state.margin, b.state.margin, rtol=1e-9, atol=1e-12)


def test_warm_start_keeps_the_outputs(rng):
    pr = _multi(rng)
    first = APG(tol=1e-10).solve(pr)
    again = APG(tol=1e-10).solve(pr, first.state)
    assert again.n_iter < first.n_iter / 2
    assert again.state.objective <= first.state.objective * (1 + 1e-12)
    # a warm point given as (p, K) weights and K intercepts starts there
    start = APGState(first.coef, first.intercept, tau=first.state.tau)
    one = APG(max_iter=1).solve(pr, start)
    assert abs(one.state.objective - first.state.objective) <= 1e-8 * first.state.objective


def test_bad_target_shape_is_named(rng):
    pr = _multi(rng)
    bad = Problem(pr.A, pr.y[:, :, None], pr.loss, pr.penalty, INDPTR, True)
    with pytest.raises(ValueError, match="got 3 dimensions"):
        APG().solve(bad)


def _old_apg():
    """The APG module of :data:`OLD_APG_COMMIT`, or skip."""
    root = Path(__file__).resolve().parents[1]
    try:
        text = subprocess.run(["git", "show", f"{OLD_APG_COMMIT}:src/kernlearn/solvers/apg.py"],
                              cwd=root, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("the APG before the multi-output one is read from git history (absent)")
    spec = importlib.util.spec_from_loader("kernlearn.solvers._apg_before36", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "kernlearn.solvers"
    sys.modules[spec.name] = module
    exec(compile(text, f"{OLD_APG_COMMIT[:8]}:apg.py", "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("case", ["dense", "sparse", "many_groups", "l1_uncached"])
def test_one_output_is_the_old_apg_bit_for_bit(case, rng):
    old = _old_apg()
    n, p = 60, 12
    A = rng.standard_normal((n, p))
    indptr, pen = np.array([0, 3, 5, 9, 12]), SquaredGroupL1(1.0)
    if case == "sparse":
        A = sp.csr_matrix(A * (rng.random((n, p)) < 0.4))
    elif case == "many_groups":  # more groups than the loop of per-group products
        p = 600
        A, indptr = rng.standard_normal((n, p)), np.arange(0, p + 1, 2)
    elif case == "l1_uncached":
        pen = L1(0.5)
    y = np.sign(rng.standard_normal(n))
    pr = Problem(A, y, weighted(get_loss("logistic"), sample_weight=rng.random(n) + 0.5, C=2.0),
                 pen, indptr, True)
    warm = APGState(0.01 * rng.standard_normal(p), 0.2, tau=3.0)
    with threadpool_limits(1):
        for start in (None, warm):
            a, b = old.APG(tol=1e-8).solve(pr, start), APG(tol=1e-8).solve(pr, start)
            assert a.n_iter == b.n_iter and a.converged == b.converged
            assert a.coef.tobytes() == b.coef.tobytes()
            assert a.intercept == b.intercept and a.state.tau == b.state.tau
            assert a.state.margin.tobytes() == b.state.margin.tobytes()
            assert a.state.objective == b.state.objective


def _three_classes(n=90, d=12, seed=0):
    rng = np.random.RandomState(seed)
    y = np.arange(n) % 3
    X = rng.randn(n, d)
    X[:, :4] += 1.5 * rng.randn(3, 4)[y]
    return X, y


@pytest.mark.parametrize("variant", ["dense", "sparse", "weights", "groups"])
def test_fgm_shared_apg_matches_newton(variant):
    from kernlearn import FGMClassifier

    X, y = _three_classes()
    kw, fit_kw = {}, {}
    if variant == "sparse":
        X = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    elif variant == "weights":
        fit_kw = {"sample_weight": np.random.RandomState(1).rand(len(y)) + 0.5}
        kw = {"class_weight": {0: 2.0, 1: 1.0, 2: 0.5}}
    elif variant == "groups":
        kw = {"groups": [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11]]}
    fits = {}
    with threadpool_limits(1):
        for solver, tol in (("newton", 1e-12), ("apg", 1e-12)):
            fits[solver] = FGMClassifier(B=2, C=1.0, multiclass="shared", solver=solver,
                                         inner_tol=tol, inner_max_iter=20000, **kw
                                         ).fit(X, y, **fit_kw)
    new, apg = fits["newton"], fits["apg"]
    assert apg.coef_.shape == new.coef_.shape == (3, 12)
    np.testing.assert_array_equal(np.flatnonzero(np.any(apg.coef_, 0)),
                                  np.flatnonzero(np.any(new.coef_, 0)))
    np.testing.assert_allclose(apg.coef_, new.coef_, atol=1e-4 * np.abs(new.coef_).max())
    np.testing.assert_allclose(apg.decision_function(X), new.decision_function(X),
                               atol=1e-4 * np.abs(new.decision_function(X)).max())
    # the recorded masters: APG set by the parameter, no Newton master
    h = apg.history_
    assert np.all(h["newton_master"] == 0) and np.all(h["master_reason"] == 0)
    assert np.all(new.history_["newton_master"] == 1)


def test_auto_records_newton_for_shared_outputs():
    from kernlearn import FGMClassifier
    from kernlearn.solvers import MASTER_REASONS

    X, y = _three_classes()
    h = FGMClassifier(B=2, C=1.0, multiclass="shared").fit(X, y).history_
    assert np.all(h["newton_master"] == 1)
    assert {MASTER_REASONS[int(c)] for c in h["master_reason"]} == {MASTER_REASONS[2]}
    assert "Newton" in MASTER_REASONS[2] and "only Newton" not in MASTER_REASONS[2]


def test_choice_for_several_outputs():
    loss = get_loss("squared_hinge")
    # Newton, measured faster on most multi-output sets (past the Hessian cap
    # of one output too: K=10, p=900, n=1000 solved 10x faster than by APG)
    for n, p, K in ((100, 150, 10), (2000, 150, 10), (300, 40, 3), (1000, 1000, 10)):
        assert choose_master(n, p, K, loss) == MasterChoice("newton", 2)
    assert choose_master(1000, 1000, 10, loss, solver="apg") == MasterChoice("apg", 0)
    # a loss without hess_margin: APG, which now solves the K outputs
    assert choose_master(100, 40, 3, get_loss("hinge")) == MasterChoice("apg", 1)


def test_simplemkl_still_refuses_shared_outputs():
    from kernlearn import FGMClassifier

    X, y = _three_classes()
    with pytest.raises(ValueError, match="solver='simplemkl' handles one output"):
        FGMClassifier(solver="simplemkl", multiclass="shared").fit(X, y)
