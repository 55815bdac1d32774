"""Multitask MKL (paper 004): Lemma 3.1, Danskin gradients, mirror-descent steps,
the rho-step, agreement of MK-MTFL / MK-MTSFL with cvxpy on the primal problems,
the special cases (one task, one kernel), estimators and bad input."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from kernlearn import MultitaskMKLClassifier, MultitaskMKLRegressor
from kernlearn.methods import mtmkl as M
from kernlearn.methods.mtmkl import task_kernels

# three linear kernels on column pairs: finite features, so the primal is a cvxpy problem
SPECS = [("linear", {}, [0, 1]), ("linear", {}, [2, 3]), ("linear", {}, [4, 5])]


def _data(T=4, m=12, seed=0, offset=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T * m, 6))
    w = np.array([1.0, -1.0, 0.5, 0.0, 0.2, 0.1])
    y = X @ w + 0.3 * rng.normal(size=T * m) + offset * np.repeat(rng.normal(size=T), m)
    rows = [np.arange(t * m, (t + 1) * m) for t in range(T)]
    return X, y, rows


def _fit(form, X, y, rows, C=0.5, **kw):
    kern = M.TaskKernels(SPECS, normalize=False, standardize=False)
    kw.setdefault("max_iter", 500)
    kw.setdefault("tol", 1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return M.fit_multitask(kern, X, y, rows, form, "square", C, **kw)


def _predict(fitted, X, rows):
    kern, blocks, model = fitted
    pos = np.concatenate([np.full(len(r), t) for t, r in enumerate(rows)])
    return model.decision(kern, blocks, X[np.concatenate(rows)], pos)


# ------------------------------------------------------------------ Lemma 3.1
@pytest.mark.parametrize("r", [1.0, 1.3, 3.0, 10.0])
def test_lemma31_matches_numerical_minimiser(r, rng):
    a = rng.uniform(0.1, 2.0, size=5)
    eta, val = M.lemma31(a, r)
    assert np.isclose(np.sum(eta**r), 1.0)
    assert np.isclose(np.sum(a / eta), val)
    # numerical minimum over the r-ball, parametrised by log eta
    res = minimize(lambda z: np.sum(a / np.exp(z)), np.log(np.full(5, 0.3)),
                   constraints=[{"type": "ineq", "fun": lambda z: 1 - np.sum(np.exp(r * z))}],
                   method="SLSQP", options={"ftol": 1e-12, "maxiter": 500})
    assert res.fun >= val - 1e-6
    np.testing.assert_allclose(res.fun, val, rtol=1e-5)
    np.testing.assert_allclose(np.exp(res.x), eta, rtol=1e-3)


def test_lemma31_zero_entries_and_p2():
    eta, val = M.lemma31(np.array([0.0, 1.0, 4.0]), 2.0)
    assert eta[0] == 0 and np.isclose(val, (1 + 4 ** (2 / 3)) ** 1.5)
    eta, val = M.lemma31(np.array([1.0, 2.0]), np.inf)  # p = 2: lambda = 1
    assert np.all(eta == 1) and val == 3.0


# ------------------------------------------------------------ mirror descent
def test_entropic_step_is_the_closed_form_argmin(rng):
    x0 = rng.dirichlet(np.ones(6))
    g, s = rng.normal(size=6), 0.7
    x = np.exp(M.entropic_step(np.log(x0), g, s))
    z = cp.Variable(6, nonneg=True)
    kl = cp.sum(cp.kl_div(z, x0)) + cp.sum(x0) - cp.sum(z)  # sum z log(z/x0)
    cp.Problem(cp.Minimize(s * g @ z + kl), [cp.sum(z) == 1]).solve()
    np.testing.assert_allclose(x, z.value, atol=1e-4)  # cvxpy accuracy


@pytest.mark.parametrize("qbar", [1.0, 1.5, 3.0, np.inf])
@pytest.mark.parametrize("shift", [2.0, -1.5])  # constraint active / inactive
def test_rho_step_matches_cvxpy(qbar, shift, rng):
    c = rng.normal(size=4) + shift
    rho = np.exp(M.rho_step(c, qbar))
    r = cp.Variable(4, nonneg=True)
    cons = [cp.max(r) <= 1] if np.isinf(qbar) else [cp.sum(cp.power(r, qbar)) <= 1]
    prob = cp.Problem(cp.Minimize(-cp.sum(cp.entr(r)) - c @ r), cons)
    prob.solve()
    ours = np.sum(rho * np.log(rho) - c * rho)
    assert ours <= prob.value + 1e-6
    np.testing.assert_allclose(rho, r.value, atol=1e-4)
    assert (np.sum(rho**qbar) if not np.isinf(qbar) else rho.max()) <= 1 + 1e-9


# -------------------------------------------------------------------- MK-MTFL
@pytest.mark.parametrize("p", [2.0, 4.0])
@pytest.mark.parametrize("shared", [False, True])
def test_danskin_gradient_matches_finite_differences(p, shared):
    # d f / d gamma_j = -1/2 sum_t S_jt / lambda_jt; with shared components
    # (two shared kernels after the three task-specific ones) also
    # -1/2 ||A_j' beta||^2 for each shared one
    X, y, rows = _data()
    kern = M.TaskKernels(SPECS, normalize=False, standardize=False).fit(X)
    blocks = M.TaskBuckets(rows)
    grams = [np.stack([kern.blocks(j, idx, mask) for j in range(3)])
             for _, idx, mask in blocks.buckets]
    y_b = blocks.gather(y)
    pbar = np.inf if p == 2 else p / (p - 2)
    factors = [kern.factor(0), M.kernel_factor(kern.full(2))] if shared else None
    gamma = np.array([0.2, 0.3, 0.1, 0.25, 0.15] if shared else [0.2, 0.5, 0.3])

    def f(g):
        return M.evaluate_mtfl(blocks, grams, y_b, "square", 0.5, np.tile(g, (4, 1)),
                               pbar, max_inner=500, inner_tol=1e-14,
                               shared_factors=factors)

    out = f(gamma)
    grad = -0.5 * np.r_[(out[1] / out[2]).sum(axis=1), out[6] if shared else []]
    h = 1e-6
    fd = [(f(gamma + h * e)[0] - f(gamma - h * e)[0]) / (2 * h)
          for e in np.eye(len(gamma))]
    np.testing.assert_allclose(grad, fd, rtol=1e-4)


@pytest.mark.parametrize("p", [2.0, 4.0])
def test_mtfl_reaches_the_primal_optimum_of_cvxpy(p):
    X, y, rows = _data()
    C, T = 0.5, len(rows)
    kern, blocks, model = fitted = _fit("mtfl", X, y, rows, C, p=p)
    W = [[cp.Variable(2) for _ in range(3)] for _ in range(T)]
    b = cp.Variable(T)
    reg = sum(cp.pnorm(cp.hstack([cp.norm(W[t][j]) for t in range(T)]), p)
              for j in range(3))
    fit = sum(cp.sum_squares(y[r] - sum(X[r][:, 2 * j:2 * j + 2] @ W[t][j]
                                        for j in range(3)) - b[t])
              for t, r in enumerate(rows))
    prob = cp.Problem(cp.Minimize(0.5 * cp.square(reg) + C * fit))
    prob.solve()
    np.testing.assert_allclose(model.objective, prob.value, rtol=1e-5)
    ref = np.concatenate([X[r] @ np.concatenate([W[t][j].value for j in range(3)])
                          + b.value[t] for t, r in enumerate(rows)])
    np.testing.assert_allclose(_predict(fitted, X, rows), ref, atol=0.05)
    if p == 2:  # the closed form of Lemma 3.1 with p-bar = inf
        assert np.all(model.task_kernel_weights == 1)


def test_one_task_mtfl_is_l1_mkl():
    X, y, rows = _data(T=1, m=30)
    C = 0.5
    _, _, model = _fit("mtfl", X, y, rows, C, p=4.0)
    _, _, per_task = _fit("mkl", X, y, rows, C)
    w = [cp.Variable(2) for _ in range(3)]
    b = cp.Variable()
    reg = sum(cp.norm(wj) for wj in w)
    prob = cp.Problem(cp.Minimize(0.5 * cp.square(reg) + C * cp.sum_squares(
        y - sum(X[:, 2 * j:2 * j + 2] @ w[j] for j in range(3)) - b)))
    prob.solve()
    # entropic mirror descent converges at O(1/sqrt(l)): 500 steps, 1e-3
    np.testing.assert_allclose(model.objective, prob.value, rtol=1e-3)
    np.testing.assert_allclose(per_task.objective, prob.value, rtol=1e-3)
    norms = np.array([np.linalg.norm(wj.value) for wj in w])
    np.testing.assert_allclose(model.kernel_weights, norms / norms.sum(), atol=3e-2)


def test_per_task_mkl_is_separate_mkls():
    # each task's mirror descent has its own step sizes: identical trajectories
    X, y, rows = _data(T=3, m=15)
    _, _, joint = _fit("mkl", X, y, rows, max_iter=60, tol=0)
    alone = [_fit("mkl", X[r], y[r], [np.arange(len(r))], max_iter=60, tol=0)[2]
             for r in rows]
    np.testing.assert_allclose(joint.objective, sum(a.objective for a in alone), rtol=1e-9)


def test_best_iterate_is_kept_and_cap_warns():
    X, y, rows = _data()
    kern = M.TaskKernels(SPECS, normalize=False, standardize=False)
    with pytest.warns(ConvergenceWarning, match="max_iter=15"):
        _, _, model = M.fit_multitask(kern, X, y, rows, "mtfl", "square", 0.5, p=4.0,
                                      max_iter=15, tol=1e-12)
    h = model.history
    assert model.n_iter == 15 and len(h["objective"]) == 15
    assert np.all(np.diff(h["best"]) <= 0)  # best value never increases
    assert h["best"][-1] < h["objective"][0]  # and mirror descent improved on 1/k
    assert h["best"][-1] == model.objective


# ------------------------------------------------------------------- MK-MTSFL
@pytest.mark.parametrize("q", [1.0, pytest.param(1.5, marks=pytest.mark.slow)])
def test_mtsfl_reaches_the_primal_optimum_of_cvxpy(q):
    X, y, rows = _data()
    C, T = 0.5, len(rows)
    _, _, model = fitted = _fit("mtsfl", X, y, rows, C, q=q)
    Ws = [cp.Variable((2, T)) for _ in range(3)]
    b = cp.Variable(T)
    reg = cp.pnorm(cp.hstack([cp.normNuc(Wj) for Wj in Ws]), q)
    fit = sum(cp.sum_squares(y[r] - sum(X[r][:, 2 * j:2 * j + 2] @ Ws[j][:, t]
                                        for j in range(3)) - b[t])
              for t, r in enumerate(rows))
    prob = cp.Problem(cp.Minimize(0.5 * cp.square(reg) + C * fit))
    prob.solve()
    np.testing.assert_allclose(model.objective, prob.value, rtol=1e-5)
    ref = np.concatenate([X[r] @ np.concatenate([Ws[j].value[:, t] for j in range(3)])
                          + b.value[t] for t, r in enumerate(rows)])
    np.testing.assert_allclose(_predict(fitted, X, rows), ref, atol=0.02)


def test_one_kernel_mk_mtsfl_is_mtsfl():
    # MTSFL (Argyriou et al.): 1/2 ||W||_*^2 + C loss, a cvxpy problem for a linear kernel
    X, y, rows = _data(T=5, m=10)
    C, T = 1.0, len(rows)
    kern = M.TaskKernels(["linear"], normalize=False, standardize=False).fit(X)
    blocks = M.TaskBuckets(rows)
    A = M.kernel_factor(kern.full(0))
    y_b = blocks.gather(y)
    md = M.solve_mtsfl(blocks, [A], y_b, "square", C, q=1.5, max_iter=2000, tol=1e-6)
    W, b = cp.Variable((6, T)), cp.Variable(T)
    fit = sum(cp.sum_squares(y[r] - X[r] @ W[:, t] - b[t]) for t, r in enumerate(rows))
    prob = cp.Problem(cp.Minimize(0.5 * cp.square(cp.normNuc(W)) + C * fit))
    prob.solve()
    np.testing.assert_allclose(md["objective"], prob.value, rtol=1e-5)
    # the alternating minimisation baseline decreases and never beats the optimum
    alt = M.solve_mtsfl_altmin(blocks, A, y_b, "square", C, max_iter=300, tol=0)
    h = alt["history"].as_dict()["objective"]
    assert np.all(np.diff(h) <= 1e-9 * abs(h[0]))
    assert alt["objective"] >= prob.value * (1 - 1e-6)


def test_kernel_factor_randomised_matches_exact(rng):
    X = rng.normal(size=(200, 3))
    K = np.exp(-0.1 * ((X[:, None] - X[None]) ** 2).sum(-1))
    A = M.kernel_factor(K, max_rank=40)
    Ae = M.kernel_factor(K)
    np.testing.assert_allclose(Ae @ Ae.T, K, atol=1e-8)
    w = np.linalg.eigvalsh(K)
    best = np.sqrt(np.sum(w[:-40] ** 2))  # Eckart-Young: best rank-40 error
    assert np.linalg.norm(K - A @ A.T) <= 1.01 * best
    with pytest.raises(ValueError, match="positive semidefinite"):
        M.kernel_factor(K - 2 * np.eye(200))


def test_blockwise_factor_matches_the_in_memory_one(rng, monkeypatch):
    # beyond _GRAM_IN_MEMORY_ROWS the factor comes from products with row
    # blocks of K (no n x n matrix): the same randomised method, the same result
    X = rng.normal(size=(300, 4))
    kern = M.TaskKernels([("rbf", {"gamma": 0.3})]).fit(X)
    A = kern.factor(0, max_rank=40)
    monkeypatch.setattr(task_kernels, "_GRAM_IN_MEMORY_ROWS", 100)
    calls = []
    full = kern.full

    def spy(j, X_a=None, rows=None):
        calls.append(None if rows is None else len(rows))
        return full(j, X_a=X_a, rows=rows)

    monkeypatch.setattr(kern, "full", spy)
    B = M.TaskKernels.factor(kern, 0, max_rank=40)
    assert calls and None not in calls  # never the whole Gram matrix
    B2 = M.TaskKernels._gram_matmul(kern, 0, np.eye(300), block=64)
    np.testing.assert_allclose(B2, full(0), atol=1e-12)
    np.testing.assert_allclose(A @ A.T, B @ B.T, atol=1e-10)


def test_linear_factor_from_data_matches_the_gram(rng):
    # column view, normalisation scale and standardisation all enter K
    X = rng.normal(size=(60, 5)) * [1, 3, 10, 1, 1]
    X[:, 4] = 1.0
    kern = M.TaskKernels(["linear", ("linear", {}, [1, 2])]).fit(X)
    for j in range(2):
        A = kern.factor(j)
        assert A.shape[1] <= (4 if j == 0 else 2)  # exact rank, the constant column drops
        np.testing.assert_allclose(A @ A.T, kern.full(j), atol=1e-10)
    assert kern.factor(0, max_rank=2).shape[1] == 2


def test_factor_store_follows_the_data():
    # refits on the same rows reuse the factors of their store; a change of
    # any training value must give the factors of the new data, not the
    # stored ones
    X, y, rows = _data(T=4, m=10)
    specs = [("linear", {}, [0, 1]), ("rbf", {"gamma": 0.3})]
    store = M.FactorStore()
    k1 = M.TaskKernels(specs).fit(X)
    A = [store.get(k1, j, None) for j in range(2)]
    assert all(store.get(M.TaskKernels(specs).fit(X.copy()), j, None) is A[j]
               for j in range(2))
    X2 = X.copy()
    X2[3, 1] += 0.5
    k2 = M.TaskKernels(specs).fit(X2)
    for j in range(2):
        A2 = store.get(k2, j, None)
        np.testing.assert_allclose(A2 @ A2.T, k2.full(j), atol=1e-8)
    # a new parameter is a new kernel
    k3 = M.TaskKernels([("linear", {}, [0, 1]), ("rbf", {"gamma": 0.4})]).fit(X)
    A3 = store.get(k3, 1, None)
    np.testing.assert_allclose(A3 @ A3.T, k3.full(1), atol=1e-8)
    # another store (another fit) computes its own
    assert M.FactorStore().get(k1, 0, None) is not A[0]


def test_no_factor_leaks_between_fits(monkeypatch):
    # the store belongs to the fit: a second estimator fitted on the same data
    # factors its kernels again (nothing module-global), and a fit that is
    # given a store fills that store only
    from kernlearn import MultitaskMKLRegressor
    from kernlearn.methods.mtmkl import fit as fit_module

    X, y, rows = _data(T=4, m=10)
    t = np.concatenate([np.full(len(r), i) for i, r in enumerate(rows)])
    Xo = np.concatenate([X[r] for r in rows])
    yo = np.concatenate([y[r] for r in rows])
    calls = []
    real = M.TaskKernels.factor

    def counting(self, j, max_rank=None, rtol=1e-10):
        calls.append(j)
        return real(self, j, max_rank, rtol)

    monkeypatch.setattr(M.TaskKernels, "factor", counting)
    kw = dict(kernels=["linear", ("rbf", {"gamma": 0.3})], formulation="mtsfl",
              max_iter=3)
    a = MultitaskMKLRegressor(**kw).fit(Xo, yo, task_index=t)
    assert calls == [0, 1]
    b = MultitaskMKLRegressor(**kw).fit(Xo, yo, task_index=t)
    assert calls == [0, 1, 0, 1]  # factored again: no cross-fit cache
    np.testing.assert_allclose(a.predict(Xo, task_index=t), b.predict(Xo, task_index=t))
    assert not any(isinstance(v, M.FactorStore) for v in vars(fit_module).values())
    assert not any(isinstance(v, M.FactorStore) for v in vars(a).values())
    store = M.FactorStore()
    for C in (0.1, 1.0):  # a C grid with one store: factored once
        M.fit_multitask(M.TaskKernels(kw["kernels"]), Xo, yo,
                        [np.flatnonzero(t == i) for i in range(4)],
                        formulation="mtsfl", C=C, max_iter=3, factor_store=store)
    assert calls == [0, 1, 0, 1, 0, 1] and len(store) == 2


# ----------------------------------------------------------------- estimators
def _tasks(seed=0, T=6, m=20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T * m, 4)) * [1, 10, 100, 1]
    t = np.repeat(np.arange(T) * 3 + 1, m)  # non-contiguous task ids
    y = np.sin(X[:, 0]) + 0.02 * X[:, 1] + 0.1 * rng.normal(size=T * m) + t
    return X, y, t


@pytest.mark.parametrize("form", ["mtfl", "mtsfl", "mkl", "independent"])
def test_regressor_formulations_fit_and_predict(form):
    X, y, t = _tasks()
    kernels = [("rbf", {"gamma": 0.5}, [0]), ("linear", {}, [1]), ("linear", {}, [2])]
    reg = MultitaskMKLRegressor(kernels=kernels, formulation=form, p=4.0, C=10.0,
                                max_iter=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reg.fit(X, y, task_index=t)
    assert reg.score(X, y, task_index=t) > 0.9
    assert reg.kernel_weights_.shape == (3,)
    assert reg.task_kernel_weights_.shape == (6, 3)
    if form in ("mtfl", "mtsfl"):  # the irrelevant third column gets little weight
        assert reg.kernel_weights_[2] < reg.kernel_weights_[0]


def test_precomputed_equals_named_kernels():
    X, y, t = _tasks()
    kernels = ["linear", ("rbf", {"gamma": 0.3})]
    tr, te = np.arange(0, 120, 2), np.arange(1, 120, 2)
    from kernlearn.kernels import linear_kernel, rbf_kernel
    gram = [linear_kernel(X[tr], X[tr]), rbf_kernel(X[tr], X[tr], gamma=0.3)]
    cross = [linear_kernel(X[te], X[tr]), rbf_kernel(X[te], X[tr], gamma=0.3)]
    for form in ("mtfl", "mtsfl"):
        a = MultitaskMKLRegressor(kernels=kernels, formulation=form,
                                  standardize=False, max_iter=20)
        # (standardize=True would standardise each task's targets, not the kernels)
        b = MultitaskMKLRegressor(kernels="precomputed", formulation=form,
                                  standardize=False, max_iter=20)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            a.fit(X[tr], y[tr], task_index=t[tr])
            b.fit(gram, y[tr], task_index=t[tr])
        np.testing.assert_allclose(a.predict(X[te], task_index=t[te]),
                                   b.predict(cross, task_index=t[te]), rtol=1e-7)


def test_classifier_and_svr():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    t = np.repeat([0, 1, 2], 40)
    y = np.where(X[:, 0] + 0.3 * (t - 1) > 0, "a", "b")
    clf = MultitaskMKLClassifier(kernels=["linear", ("rbf", {"gamma": 1.0})],
                                 max_iter=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y, task_index=t)
    assert clf.score(X, y, task_index=t) > 0.9
    assert set(clf.predict(X, task_index=t)) <= {"a", "b"}
    reg = MultitaskMKLRegressor(kernels=["linear"], loss="epsilon_insensitive",
                                epsilon=0.05, C=10.0)
    reg.fit(X, X[:, 0] + t, task_index=t)
    assert reg.score(X, X[:, 0] + t, task_index=t) > 0.95


def test_bad_input():
    X, y, t = _tasks()
    reg = MultitaskMKLRegressor(kernels=["linear"])
    with pytest.raises(ValueError, match="task_index must have shape"):
        reg.fit(X, y, task_index=t[:-1])
    with pytest.raises(ValueError, match="NaN"):
        reg.fit(X, y, task_index=np.where(t == 1, np.nan, t).astype(float))
    with pytest.raises(ValueError, match="p must be >= 2|p' parameter"):
        MultitaskMKLRegressor(p=1.5).fit(X, y, task_index=t)
    with pytest.raises(ValueError, match="q must be in|'q' parameter"):
        MultitaskMKLRegressor(q=2.5).fit(X, y, task_index=t)
    with pytest.raises(ValueError, match="formulation"):
        MultitaskMKLRegressor(formulation="mtl").fit(X, y, task_index=t)
    reg.fit(X, y, task_index=t)
    with pytest.raises(ValueError, match="unseen in fit"):
        reg.predict(X[:3], task_index=[1, 2, 4])
    with pytest.raises(ValueError, match="pass task_index"):
        reg.predict(X[:3])
    with pytest.raises(ValueError, match="task_index must have shape"):
        reg.predict(X[:3], task_index=[1, 4])
    with pytest.raises(ValueError, match="NaN|infinity"):
        reg.fit(np.where(X > 2, np.nan, X), y, task_index=t)
    with pytest.raises(ValueError, match="at least 2 samples"):
        reg.fit(X, y, task_index=np.r_[t[:-1], 99])
    labels = np.where(X[:, 0] > 0, 1, 0)
    labels[t == 1] = 1
    with pytest.raises(ValueError, match="one class"):
        MultitaskMKLClassifier(kernels=["linear"]).fit(X, labels, task_index=t)
    with pytest.raises(ValueError, match="Only binary"):
        MultitaskMKLClassifier().fit(X, np.arange(len(y)) % 3, task_index=t)
    with pytest.raises(ValueError, match="not symmetric|non-symmetric"):
        MultitaskMKLRegressor(kernels="precomputed").fit(
            [np.triu(np.ones((120, 120)))], y, task_index=t)
    with pytest.raises(ValueError, match="unknown kernel"):
        MultitaskMKLRegressor(kernels=["nope"]).fit(X, y, task_index=t)


# ------------------------------------------- MK-MTSFL with shared components
@pytest.mark.parametrize("global_bias", [False, True])
def test_coupled_inner_solve_equals_the_dense_system(global_bias, rng):
    # Woodbury through the per-task solves vs the n x n bordered KKT system
    rows = [np.arange(0, 5), np.arange(5, 12), np.arange(12, 18)]
    blocks = M.TaskBuckets(rows)
    n, T = 18, 3
    F, G = rng.normal(size=(n, 3)), rng.normal(size=(n, 2))
    y, C = rng.normal(size=n), 0.7
    K_b = [Fb @ Fb.transpose(0, 2, 1) for Fb in M.gather_rows(blocks, F)]
    G_b = M.gather_rows(blocks, G)
    beta, b, L = M.solve_coupled(blocks, K_b, G_b, blocks.gather(y), C, global_bias)
    beta = blocks.scatter(beta, n)
    K = G @ G.T + np.eye(n) / (2 * C)
    E = np.zeros((n, T))
    for t, r in enumerate(rows):
        K[np.ix_(r, r)] += F[r] @ F[r].T
        E[r, t] = 1.0
    E = E.sum(1, keepdims=True) if global_bias else E
    kkt = np.block([[K, E], [E.T, np.zeros((E.shape[1],) * 2)]])
    sol = np.linalg.solve(kkt, np.r_[y, np.zeros(E.shape[1])])
    np.testing.assert_allclose(beta, sol[:n], atol=1e-10)
    np.testing.assert_allclose(b, np.broadcast_to(sol[n:], T), atol=1e-10)
    Lref = [y[r] @ sol[r] - sol[r] @ sol[r] / (4 * C) for r in rows]
    np.testing.assert_allclose(L, Lref, atol=1e-10)


@pytest.mark.parametrize("q,offset", [(1.0, 1.0), (1.0, 6.0),
                                      pytest.param(1.5, 1.0, marks=pytest.mark.slow)])
def test_shared_mtsfl_reaches_the_primal_optimum_of_cvxpy(q, offset):
    # f_t(x) = x'(w0 + W[:, t]) + b + d_t:  1/2 (sum_j ||W_j||_*^q + ||d / sqrt(s)||^q
    #          + sum_j ||w0_j||^q)^(2/q) + C * squared loss, with b free and s the
    # constant kernel's scale (1 unless the task levels differ by more than
    # the spread within tasks, as with offset=6)
    X, y, rows = _data(T=4, m=8, offset=offset)
    C, T = 0.5, len(rows)
    s = M.bias_scale(y, rows)
    assert (s > 2) == (offset > 1)
    fitted = _fit("mtsfl", X, y, rows, C, q=q, shared=True, max_iter=1500, tol=1e-7)
    model = fitted[2]
    Ws = [cp.Variable((2, T)) for _ in range(3)]
    w0 = [cp.Variable(2) for _ in range(3)]
    d, b = cp.Variable(T), cp.Variable()
    norms = ([cp.normNuc(Wj) for Wj in Ws] + [cp.norm(d) / np.sqrt(s)]
             + [cp.norm(w) for w in w0])
    reg = cp.pnorm(cp.hstack(norms), q)
    fit = sum(cp.sum_squares(y[r] - sum(X[r][:, 2 * j:2 * j + 2] @ (Ws[j][:, t] + w0[j])
                                        for j in range(3)) - b - d[t])
              for t, r in enumerate(rows))
    prob = cp.Problem(cp.Minimize(0.5 * cp.square(reg) + C * fit))
    prob.solve()
    np.testing.assert_allclose(model.objective, prob.value, rtol=1e-4)
    ref = np.concatenate([X[r] @ np.concatenate([Ws[j].value[:, t] + w0[j].value
                                                 for j in range(3)])
                          + b.value + d.value[t] for t, r in enumerate(rows)])
    np.testing.assert_allclose(_predict(fitted, X, rows), ref, atol=0.02)
    # the reported weights are the blocks' shares of the trace budget
    total = model.kernel_weights.sum() + model.shared_kernel_weights.sum()
    assert 0.0 < total <= 1.0 + 1e-12  # the rest is the bias deviations' block


@pytest.mark.parametrize("p", [2.0, 4.0])
def test_shared_mtfl_reaches_the_primal_optimum_of_cvxpy(p):
    # f_t(x) = x'(w0 + w_t) + b + d_t:  1/2 (sum_j ||(||w_tj||)_t||_p + ||d||_p
    #          + sum_j ||w0_j||)^2 + C * squared loss, with b free
    X, y, rows = _data(T=4, m=8, offset=1.0 if p == 2 else 6.0)
    C, T = 0.5, len(rows)
    s = M.bias_scale(y, rows)
    fitted = _fit("mtfl", X, y, rows, C, p=p, shared=True, max_iter=2000, tol=1e-7)
    model = fitted[2]
    W = [[cp.Variable(2) for _ in range(3)] for _ in range(T)]
    w0 = [cp.Variable(2) for _ in range(3)]
    d, b = cp.Variable(T), cp.Variable()
    reg = (sum(cp.pnorm(cp.hstack([cp.norm(W[t][j]) for t in range(T)]), p)
               for j in range(3)) + cp.pnorm(d, p) / np.sqrt(s)
           + sum(cp.norm(w) for w in w0))
    fit = sum(cp.sum_squares(y[r] - sum(X[r][:, 2 * j:2 * j + 2] @ (W[t][j] + w0[j])
                                        for j in range(3)) - b - d[t])
              for t, r in enumerate(rows))
    prob = cp.Problem(cp.Minimize(0.5 * cp.square(reg) + C * fit))
    prob.solve()
    # entropic mirror descent converges at O(1/sqrt(l))
    np.testing.assert_allclose(model.objective, prob.value, rtol=1e-3)
    ref = np.concatenate([X[r] @ np.concatenate([W[t][j].value + w0[j].value
                                                 for j in range(3)])
                          + b.value + d.value[t] for t, r in enumerate(rows)])
    np.testing.assert_allclose(_predict(fitted, X, rows), ref, atol=0.05)
    total = model.kernel_weights.sum() + model.shared_kernel_weights.sum()
    assert 0.0 < total <= 1.0 + 1e-12  # the rest is the bias deviations' block


@pytest.mark.parametrize("form", ["mtfl", "mtsfl"])
def test_shared_components_let_small_tasks_borrow_strength(form):
    # 30 tasks of 6 points, one common linear predictor: the paper's model
    # fits every task's coefficients from its own 6 points, the shared
    # component learns them once (and says so through its trace share)
    rng = np.random.default_rng(3)
    T, m, d = 30, 6, 5
    w = rng.normal(size=d)
    X = rng.normal(size=(2 * T * m, d))
    t = np.tile(np.repeat(np.arange(T), m), 2)
    y = X @ w + 0.5 * rng.normal(size=len(t)) + np.repeat(0.3 * rng.normal(size=T), m)[
        np.tile(np.arange(T * m), 2)]
    tr, te = np.arange(T * m), np.arange(T * m, 2 * T * m)
    scores = {}
    for shared in (False, True):
        reg = MultitaskMKLRegressor(kernels=["linear"], formulation=form, C=0.5,
                                    shared=shared, max_iter=200)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            reg.fit(X[tr], y[tr], task_index=t[tr])
        scores[shared] = reg.score(X[te], y[te], task_index=t[te])
    assert scores[True] > scores[False] + 0.05
    assert reg.shared_kernel_weights_[0] > reg.kernel_weights_[0]


def test_shared_needs_mtfl_or_mtsfl():
    # one check (check_formulation) that every entry point reaches: the
    # baselines have no shared components, an unknown formulation is refused
    for form in ("mtfl", "mtsfl"):
        M.check_formulation(form, shared=True)
    for form in ("mkl", "independent"):
        M.check_formulation(form, shared=False)
        with pytest.raises(ValueError, match=f"need formulation='mtfl' or 'mtsfl'; "
                                             f"got formulation='{form}'"):
            M.check_formulation(form, shared=True)
    with pytest.raises(ValueError, match="formulation must be one of"):
        M.check_formulation("mtl")
    X, y, t = _tasks()
    msg = "shared components \\(shared=True\\) need formulation='mtfl' or 'mtsfl'"
    with pytest.raises(ValueError, match=msg):
        MultitaskMKLRegressor(kernels=["linear"], formulation="mkl",
                              shared=True).fit(X, y, task_index=t)
    with pytest.raises(ValueError, match=msg):
        MultitaskMKLClassifier(kernels=["linear"], formulation="independent",
                               shared=True).fit(X, np.arange(len(y)) % 2, task_index=t)
    with pytest.raises(ValueError, match=msg):
        M.fit_multitask(M.TaskKernels(["linear"]), X, y, [np.arange(len(y))], "mkl",
                        shared=True)
    with pytest.raises(ValueError, match="formulation must be one of"):
        M.fit_multitask(M.TaskKernels(["linear"]), X, y, [np.arange(len(y))], "mtl")


@pytest.mark.parametrize("form", ["mtfl", "mtsfl"])
def test_default_is_the_papers_model_at_every_size(form):
    # no switch of model by data size: the default is shared=False (the
    # paper's model), and the fitted attributes mean the same with shared=True
    X, y, t = _tasks()
    kw = dict(kernels=["linear", ("rbf", {"gamma": 0.5})], formulation=form,
              max_iter=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        default = MultitaskMKLRegressor(**kw).fit(X, y, task_index=t)
        paper = MultitaskMKLRegressor(**kw, shared=False).fit(X, y, task_index=t)
        opt_in = MultitaskMKLRegressor(**kw, shared=True).fit(X, y, task_index=t)
    assert MultitaskMKLRegressor().shared is False
    assert MultitaskMKLClassifier().shared is False
    assert not default.shared_ and opt_in.shared_
    np.testing.assert_array_equal(default.predict(X, task_index=t),
                                  paper.predict(X, task_index=t))
    # kernel_weights_: the task-specific blocks (all blocks without sharing);
    # shared_kernel_weights_: the shared blocks (none without sharing)
    np.testing.assert_array_equal(default.shared_kernel_weights_, [0.0, 0.0])
    np.testing.assert_allclose(default.kernel_weights_.sum(), 1.0)
    total = opt_in.kernel_weights_.sum() + opt_in.shared_kernel_weights_.sum()
    assert opt_in.shared_kernel_weights_.sum() > 0 and total <= 1 + 1e-12
    assert default.shared_kernel_weights_.shape == opt_in.shared_kernel_weights_.shape


@pytest.mark.parametrize("form,loss", [("mtsfl", "epsilon_insensitive"),
                                       ("mtfl", "hinge")])
def test_shared_svr_and_svm_reach_the_primal_optimum_of_cvxpy(form, loss):
    # the coupled solve through libsvm: f_t(x) = x'(w0 + w_t) + b + d_t with
    # the epsilon-insensitive loss (MK-MTSFL, q = 1) or the hinge (MK-MTFL, p = 2)
    X, y, rows = _data(T=4, m=8)
    if loss == "hinge":
        y = np.where(y > np.median(y), 1.0, -1.0)
    C, T, eps = 0.5, len(rows), 0.1
    s = M.bias_scale(y, rows)
    kern = M.TaskKernels(SPECS, normalize=False, standardize=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = M.fit_multitask(kern, X, y, rows, form, loss, C, p=2.0, q=1.0,
                                 epsilon=eps, max_iter=1500, tol=1e-7, shared=True)
    model = fitted[2]
    W = cp.Variable((6, T))
    w0 = cp.Variable(6)
    d, b = cp.Variable(T), cp.Variable()
    # q = 1: an l1 sum of nuclear norms; p = 2: of Frobenius norms (l2 over tasks)
    block = cp.normNuc if form == "mtsfl" else (lambda V: cp.norm(V, "fro"))
    norms = ([block(W[2 * j:2 * j + 2]) for j in range(3)] + [cp.norm(d) / np.sqrt(s)]
             + [cp.norm(w0[2 * j:2 * j + 2]) for j in range(3)])
    reg = cp.sum(cp.hstack(norms))
    f = cp.hstack([X[r] @ (W[:, t] + w0) + b + d[t] for t, r in enumerate(rows)])
    yy = np.concatenate([y[r] for r in rows])
    loss_term = (cp.sum(cp.pos(1 - cp.multiply(yy, f))) if loss == "hinge"
                 else cp.sum(cp.pos(cp.abs(yy - f) - eps)))
    prob = cp.Problem(cp.Minimize(0.5 * cp.square(reg) + C * loss_term))
    prob.solve()
    np.testing.assert_allclose(model.objective, prob.value, rtol=2e-3)
    np.testing.assert_allclose(_predict(fitted, X, rows), f.value, atol=0.05)


def test_shared_classifier_fits():
    rng = np.random.default_rng(2)
    T, m = 12, 8
    task = np.repeat(np.arange(T), 2 * m)
    X = rng.normal(size=(len(task), 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=len(task)) > 0, "a", "b")
    train = np.tile(np.r_[np.ones(m, bool), np.zeros(m, bool)], T)
    acc = {}
    for shared in (False, True):
        clf = MultitaskMKLClassifier(kernels=["linear", ("rbf", {"gamma": 1.0})],
                                     C=1.0, shared=shared, max_iter=30)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X[train], y[train], task_index=task[train])
        acc[shared] = clf.score(X[~train], y[~train], task_index=task[~train])
    assert clf.shared_ and clf.shared_kernel_weights_[0] > clf.kernel_weights_[0]
    assert acc[True] >= acc[False]


def test_bias_scale_is_the_spread_of_task_levels():
    rows = [np.arange(0, 10), np.arange(10, 20)]
    y = np.r_[np.tile([-1.0, 1.0], 5), np.tile([-1.0, 1.0], 5) + 40.0]
    # levels 0 and 40: variance of the means 400, within-task variance 1
    assert np.isclose(M.bias_scale(y, rows), 400.0)
    assert M.bias_scale(y - np.r_[np.zeros(10), np.full(10, 39.5)], rows) == 1.0
    # weights: a zero-weight row is as if absent
    w = np.ones(20)
    w[0] = 0.0
    y2 = y.copy()
    y2[0] = 1e6
    np.testing.assert_allclose(M.bias_scale(y2, rows, w),
                               M.bias_scale(np.delete(y, 0), [np.arange(9),
                                                               np.arange(9, 19)]))


@pytest.mark.parametrize("form", ["mtfl", "mtsfl"])
def test_shared_keeps_task_levels_far_apart(form):
    # levels 100 within-task deviations apart: pooling them at the scale of
    # the kernels would miss every task's mean; the scaled constant kernel
    # leaves them nearly free, so shared=True is no worse than the paper's model
    rng = np.random.default_rng(0)
    T, m = 20, 10
    task = np.repeat(np.arange(T), 2 * m)
    X = rng.normal(size=(len(task), 3))
    y = X @ [1.0, -0.5, 0.2] + 100 * rng.normal(size=T)[task] + 0.3 * rng.normal(
        size=len(task))
    train = np.tile(np.r_[np.ones(m, bool), np.zeros(m, bool)], T)
    r2 = {}
    for shared in (False, True):
        reg = MultitaskMKLRegressor(kernels=["linear"], formulation=form, shared=shared)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            reg.fit(X[train], y[train], task_index=task[train])
        pred = reg.predict(X[~train], task_index=task[~train])
        yt, tt = y[~train], task[~train]
        r2[shared] = np.mean([1 - np.mean((yt[tt == k] - pred[tt == k]) ** 2)
                              / np.var(yt[tt == k]) for k in range(T)])
    assert r2[False] > 0.7
    assert r2[True] > r2[False] - 0.02


@pytest.mark.parametrize("form,name", [("mtfl", "MK-MTFL"), ("mtsfl", "MK-MTSFL"),
                                       ("mkl", "per-task MKL")])
def test_verbose_reports_through_progress(form, name, capsys, monkeypatch):
    # one line per mirror-descent iteration and a stop line, in the library's
    # progress format; verbose changes nothing that is computed
    monkeypatch.setenv("KERNLEARN_PROGRESS", "lines")  # captured output is not a terminal
    X, y, t = _tasks()
    kw = dict(kernels=["linear"], formulation=form, max_iter=4, tol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        quiet = MultitaskMKLRegressor(**kw, verbose=0).fit(X, y, task_index=t)
        assert capsys.readouterr().out == ""
        loud = MultitaskMKLRegressor(**kw, verbose=1).fit(X, y, task_index=t)
    out = capsys.readouterr().out.splitlines()
    assert sum(line.startswith(f"[{name}] iter") for line in out) == loud.n_iter_
    assert out[-1].startswith(f"[{name}] stop: ")
    np.testing.assert_array_equal(quiet.predict(X, task_index=t),
                                  loud.predict(X, task_index=t))


def test_classifier_is_binary_as_documented():
    # (sparse X, refused before, is fitted: tests/test_mtmkl_sparse35.py)
    X, y, t = _tasks()
    with pytest.raises(ValueError, match="Only binary"):
        MultitaskMKLClassifier(kernels=["linear"]).fit(X, np.arange(len(y)) % 3,
                                                        task_index=t)
    doc = MultitaskMKLClassifier.__doc__
    assert "Binary only" in doc and "Input may be\n    sparse" in doc


@pytest.mark.parametrize("precomputed", [False, True])
def test_task_kernels_are_a_kernel_list(rng, precomputed):
    # the BaseKernelList interface (rows, cross, iter_blocks, gram, diagonals)
    # gives the same normalised kernels as TaskKernels.full
    from kernlearn.kernels import BaseKernelList

    X = rng.normal(size=(40, 3)) * [1.0, 5.0, 0.2]
    Xn = rng.normal(size=(7, 3))
    specs = ["linear", ("rbf", {"gamma": 0.5}, [0, 2])]
    kern = M.TaskKernels(specs).fit(X)
    if precomputed:
        G = np.stack([kern.full(j) for j in range(2)]) / kern.scales_[:, None, None]
        Gn = np.stack([kern.full(j, X_a=Xn) for j in range(2)]) / kern.scales_[:, None, None]
        ref, kern = kern, M.TaskKernels("precomputed").fit(G)
        Xn = Gn
    assert isinstance(kern, BaseKernelList) and kern.n_kernels == 2 and kern.n_samples == 40
    full = np.stack([kern.full(j) for j in range(2)])
    assert not np.allclose(kern.scales_, 1.0)  # normalisation is in play
    ids = np.array([5, 0, 33])
    np.testing.assert_allclose(kern.rows(ids), full[:, ids], rtol=1e-12)
    np.testing.assert_allclose(kern.gram(), full, rtol=1e-12)
    np.testing.assert_allclose(kern.kdiag_, np.einsum("jii->ji", full), rtol=1e-12)
    np.testing.assert_allclose(kern.diag_ * kern.scales_[:, None], kern.kdiag_)
    cross = np.stack([kern.full(j, X_a=Xn) for j in range(2)])
    np.testing.assert_allclose(kern.cross(Xn), cross, rtol=1e-12)
    np.testing.assert_allclose(kern.cross(Xn, support=ids), cross[:, :, ids], rtol=1e-12)
    kern.cache_size = 8 * 2 * 40 * 16 / 2**20  # blocks of 16 rows
    seen = []
    for got, K_rows, local in kern.iter_blocks(np.arange(40)[::-1]):
        assert len(got) <= 16
        np.testing.assert_allclose(K_rows[:, local], full[:, got], rtol=1e-12)
        seen.extend(got)
    assert sorted(seen) == list(range(40))
    if precomputed:
        np.testing.assert_allclose(full, np.stack([ref.full(j) for j in range(2)]), rtol=1e-12)
