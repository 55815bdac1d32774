"""The per-task SVM / SVR duals of the multitask formulations in one compiled loop.

MK-MTSFL's classifier called scikit-learn's ``SVC`` once per task and per
mirror-descent iteration (400 tasks of 6 rows: 146 s, nearly all of it in
the calls' input validation).  The duals are now solved by libsvm's SMO,
compiled, all tasks of a bucket at once, each started from the previous
iteration's duals.  These tests hold the new solver to libsvm's answers, a
warm start to a cold one, the fits to the per-task libsvm fits they replace,
and MK-MTSFL with the hinge to the cvxpy primal.
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from kernlearn.methods import mtmkl as M
from kernlearn.methods.mtmkl import _smo, inner
from kernlearn.methods.mtmkl._smo import libsvm_buckets, smo_buckets

EPS = 0.1


def _bucket(seed=0, T=12, m=9):
    """A padded bucket of tasks of 4..m rows: PSD kernels, labels, targets, C_i."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, m, 3))
    K = np.einsum("tid,tjd->tij", X, X) + np.exp(
        -((X[:, :, None] - X[:, None]) ** 2).sum(-1))
    sizes = rng.integers(4, m + 1, T)
    mask = np.arange(m)[None] < sizes[:, None]
    K = K * (mask[:, :, None] & mask[:, None])
    labels = np.where(X[..., 0] + 0.5 * rng.normal(size=(T, m)) > 0, 1.0, -1.0)
    labels[:, 0], labels[:, 1] = 1.0, -1.0  # both classes in every task
    targets = X[..., 0] - X[..., 1] + 0.2 * rng.normal(size=(T, m))
    C = rng.uniform(0.3, 3.0, (T, m))
    return K, labels * mask, targets * mask, sizes, np.where(mask, C, 0.0)


def _dual(K, y, beta, regression):
    """Each task's dual objective L_t(beta_t) - beta_t' K_t beta_t / 2."""
    lin = (y * beta).sum(1) - EPS * np.abs(beta).sum(1) if regression else np.abs(
        beta).sum(1)
    return lin - 0.5 * np.einsum("ti,tij,tj->t", beta, K, beta)


@pytest.mark.parametrize("regression", [False, True])
def test_compiled_smo_matches_libsvm_task_by_task(regression):
    K, labels, targets, sizes, C = _bucket()
    y = targets if regression else labels
    beta, b, n_iter, converged = smo_buckets(K, y, sizes, C, regression, EPS)
    ref_beta, ref_b, *_ = libsvm_buckets(K, y, sizes, C, regression, EPS)
    assert converged.all() and (n_iter > 0).all()
    # the dual optimum (unique), to libsvm's tolerance
    np.testing.assert_allclose(_dual(K, y, beta, regression),
                               _dual(K, y, ref_beta, regression), rtol=1e-8)
    # the decision values on the tasks' rows, and the constraints
    f = np.einsum("tij,tj->ti", K, beta) + b[:, None]
    f_ref = np.einsum("tij,tj->ti", K, ref_beta) + ref_b[:, None]
    mask = np.arange(K.shape[1])[None] < sizes[:, None]
    np.testing.assert_allclose(f[mask], f_ref[mask], atol=1e-4)
    np.testing.assert_allclose(beta.sum(1), 0.0, atol=1e-12)
    assert np.all(np.abs(beta) <= C + 1e-12) and np.all(beta[~mask] == 0)
    if not regression:
        assert np.all(beta * labels >= 0)


@pytest.mark.parametrize("regression", [False, True])
def test_warm_start_reaches_the_cold_optimum(regression):
    # the previous outer iteration's duals on a kernel that has moved: the
    # same optimum in fewer pair updates; from the optimum itself, none
    K, labels, targets, sizes, C = _bucket(seed=1)
    y = targets if regression else labels
    K2 = 0.7 * K + 0.3 * np.einsum("tij,tjk->tik", K, K) / K.shape[1]
    start, *_ = smo_buckets(K, y, sizes, C, regression, EPS)
    cold, b_cold, it_cold, _ = smo_buckets(K2, y, sizes, C, regression, EPS)
    warm, b_warm, it_warm, ok = smo_buckets(K2, y, sizes, C, regression, EPS,
                                            beta0=start)
    assert ok.all() and it_warm.sum() < it_cold.sum()
    np.testing.assert_allclose(_dual(K2, y, warm, regression),
                               _dual(K2, y, cold, regression), rtol=1e-8)
    f_cold = np.einsum("tij,tj->ti", K2, cold) + b_cold[:, None]
    f_warm = np.einsum("tij,tj->ti", K2, warm) + b_warm[:, None]
    mask = np.arange(K.shape[1])[None] < sizes[:, None]
    np.testing.assert_allclose(f_warm[mask], f_cold[mask], atol=1e-4)
    again, b_again, it_again, _ = smo_buckets(K2, y, sizes, C, regression, EPS,
                                              beta0=cold)
    assert (it_again == 0).all()
    np.testing.assert_array_equal(again, cold)
    np.testing.assert_allclose(b_again, b_cold, rtol=0, atol=1e-12)


def test_infeasible_start_is_a_cold_start():
    # a start outside the box, of the wrong sign or off the equality
    # constraint is not used: that task starts at zero
    K, labels, _, sizes, C = _bucket(seed=2)
    cold, b_cold, it_cold, _ = smo_buckets(K, labels, sizes, C)
    bad = np.zeros_like(cold)
    bad[0, :2] = 2.0 * C[0, :2].max() * np.array([1.0, -1.0])  # outside the box
    bad[1, 0], bad[1, 1] = -1e-3 * labels[1, 0], 1e-3 * labels[1, 0]  # wrong signs
    bad[2, 0] = 1e-3 * labels[2, 0]  # 1'beta != 0
    beta, b, n_iter, _ = smo_buckets(K, labels, sizes, C, beta0=bad)
    np.testing.assert_array_equal(beta[:3], cold[:3])
    np.testing.assert_array_equal(b[:3], b_cold[:3])
    np.testing.assert_array_equal(n_iter[:3], it_cold[:3])


def test_a_dual_at_rounding_distance_of_its_bound_does_not_pin_the_bias():
    # the pair updates can leave a dual at 1e-17 where it should be 0: counted
    # as free, it set the bias to its own end of the optimal interval, so
    # that a warm and a cold start of a degenerate SVR task (no free dual)
    # gave biases 0.02 apart, on the same optimum.  tol=inf: no pair update,
    # the bias of the start as given
    K, _, targets, sizes, C = _bucket(seed=0)
    C = np.where(C > 0, 0.05, 0.0)
    beta, b, *_ = smo_buckets(K, targets, sizes, C, True, EPS)
    a = 1  # (a task with no free dual and one at zero)
    duals = np.abs(beta[a, :sizes[a]])
    assert np.all(np.isin(duals, [0.0, 0.05])) and (duals == 0).sum() == 1
    tiny = beta.copy()
    tiny[a, np.flatnonzero(duals == 0)[0]] = 1e-17
    _, b_tiny, it, _ = smo_buckets(K, targets, sizes, C, True, EPS, tol=np.inf,
                                   beta0=tiny)
    _, b_exact, _, _ = smo_buckets(K, targets, sizes, C, True, EPS, tol=np.inf,
                                   beta0=beta)
    assert (it == 0).all()
    np.testing.assert_allclose(b_exact, b, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b_tiny, b_exact, rtol=0, atol=1e-12)


# ------------------------------------------------------------- whole fits
def _many_tasks(T, m=7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T * m, 4))
    shared = np.array([1.0, -0.5, 0.0, 0.3])
    level = np.repeat(rng.normal(size=T), m)
    y = X @ shared + 0.5 * level + 0.4 * rng.normal(size=T * m)
    rows = [np.arange(t * m, (t + 1) * m) for t in range(T)]
    labels = np.concatenate([np.where(y[r] > np.median(y[r]), 1.0, -1.0) for r in rows])
    return X, y, labels, rows


def _fit(X, target, rows, form, loss, C, **kw):
    kern = M.TaskKernels([("rbf", {"gamma": 0.3}), "linear"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        kern, blocks, model = M.fit_multitask(kern, X, target, rows, form, loss, C,
                                              max_rank=60, **kw)
    pos = np.concatenate([np.full(len(r), t) for t, r in enumerate(rows)])
    return model, model.decision(kern, blocks, X[np.concatenate(rows)] + 0.1, pos)


@pytest.mark.parametrize("form,loss", [("mtsfl", "hinge"), ("mtfl", "hinge"),
                                       ("mtsfl", "epsilon_insensitive")])
def test_fits_agree_with_the_per_task_libsvm_solves(form, loss, monkeypatch):
    # the whole fit, new solves (warm-started in MK-MTSFL) against the
    # per-task scikit-learn calls they replaced (as solve_inner made them):
    # the same objective, duality gap, iterations and decisions, to the
    # solvers' tolerance
    X, y, labels, rows = _many_tasks(T=20)
    target = labels if loss == "hinge" else y
    C = 10.0 if loss == "hinge" else 1.0
    new, f_new = _fit(X, target, rows, form, loss, C, max_iter=20)
    monkeypatch.setattr(_smo, "smo_buckets", _smo.libsvm_buckets)
    old, f_old = _fit(X, target, rows, form, loss, C, max_iter=20)
    assert new.n_iter == old.n_iter
    np.testing.assert_allclose(new.objective, old.objective, rtol=1e-6)
    np.testing.assert_allclose(new.gap, old.gap, rtol=1e-3,
                               atol=1e-6 * abs(old.objective))
    np.testing.assert_allclose(f_new, f_old, atol=1e-3)
    if loss == "hinge":
        np.testing.assert_array_equal(np.sign(f_new), np.sign(f_old))


@pytest.mark.parametrize("loss", ["hinge", "epsilon_insensitive"])
def test_mtsfl_warm_started_duals_reach_the_cold_started_optimum(loss, monkeypatch):
    X, y, labels, rows = _many_tasks(T=15, seed=1)
    target = labels if loss == "hinge" else y
    warm, f_warm = _fit(X, target, rows, "mtsfl", loss, 1.0, max_iter=30, tol=0)
    solve_all = inner.solve_all
    monkeypatch.setattr(M.mtsfl, "solve_all",
                        lambda *a, beta0=None, **k: solve_all(*a, **k))
    cold, f_cold = _fit(X, target, rows, "mtsfl", loss, 1.0, max_iter=30, tol=0)
    # (the inner solves stop at a KKT violation of 1e-5: up to 2e-7 apart here)
    np.testing.assert_allclose(warm.history["objective"], cold.history["objective"],
                               rtol=1e-6)
    np.testing.assert_allclose(f_warm, f_cold, atol=1e-4)


def test_mtsfl_hinge_reaches_the_primal_optimum_of_cvxpy():
    # q = 1: 1/2 (sum_j ||W_j||_*)^2 + C sum hinge, three linear kernels on
    # column pairs (finite features, so the primal is a cvxpy problem)
    specs = [("linear", {}, [0, 1]), ("linear", {}, [2, 3]), ("linear", {}, [4, 5])]
    rng = np.random.default_rng(0)
    T, m, C = 4, 10, 0.5
    X = rng.normal(size=(T * m, 6))
    rows = [np.arange(t * m, (t + 1) * m) for t in range(T)]
    score = X @ np.array([1.0, -1.0, 0.5, 0.0, 0.2, 0.1]) + 0.5 * rng.normal(size=T * m)
    y = np.where(score > 0, 1.0, -1.0)
    kern = M.TaskKernels(specs, normalize=False, standardize=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        kern, blocks, model = M.fit_multitask(kern, X, y, rows, "mtsfl", "hinge", C,
                                              q=1.0, max_iter=1500, tol=1e-6)
    Ws = [cp.Variable((2, T)) for _ in range(3)]
    b = cp.Variable(T)
    f = cp.hstack([sum(X[r][:, 2 * j:2 * j + 2] @ Ws[j][:, t] for j in range(3)) + b[t]
                   for t, r in enumerate(rows)])
    reg = cp.sum(cp.hstack([cp.normNuc(Wj) for Wj in Ws]))
    prob = cp.Problem(cp.Minimize(0.5 * cp.square(reg) + C * cp.sum(
        cp.pos(1 - cp.multiply(y, f)))))
    prob.solve()
    np.testing.assert_allclose(model.objective, prob.value, rtol=1e-3)
    pos = np.concatenate([np.full(m, t) for t in range(T)])
    ours = model.decision(kern, blocks, X, pos)
    # the same weight vectors; a task's bias may differ where the hinge is
    # flat in it (every bias of an interval optimal): the loss is the same
    diff = (ours - f.value).reshape(T, m)
    np.testing.assert_allclose(diff - diff.mean(axis=1, keepdims=True), 0.0, atol=0.02)
    hinge = [np.maximum(0, 1 - y * g).sum() for g in (ours, f.value)]
    np.testing.assert_allclose(hinge[0], hinge[1], rtol=2e-3)
