"""The multitask regressors' faster fits give the models of the routes they replace.

Each restructured computation is compared with the old one, reached through a
private switch (the old route patched back in) or computed directly.
"""

import numpy as np
import pytest

from kernlearn import MultitaskMKLRegressor
from kernlearn.methods.mtmkl import TaskBuckets, mtfl, solve_mtfl
from kernlearn.methods.mtmkl._ridge_repeats import ridge_repeats


def _repeated(n_tasks=3, rows=(90, 100, 110), distinct=20, seed=0):
    """Tasks whose inputs repeat (each from ``distinct`` rows), targets noisy."""
    rng = np.random.default_rng(seed)
    X, y, t = [], [], []
    for a in range(n_tasks):
        m = rows[a % len(rows)]
        base = rng.normal(size=(distinct, 3))
        Xa = base[rng.integers(0, distinct, size=m)]
        X.append(Xa)
        y.append(Xa[:, 0] - (a % 3) * Xa[:, 1] + 0.3 * rng.normal(size=m) + a)
        t.append(np.full(m, a))
    return np.vstack(X), np.concatenate(y), np.concatenate(t)


def _whole_rows(monkeypatch):
    """The old route: every task's kernel ridge on all its rows (repeats found
    neither from the inputs nor from the blocks)."""
    from kernlearn.methods.mtmkl import fit

    monkeypatch.setattr(fit, "distinct_inputs", lambda *a: None)
    monkeypatch.setattr(mtfl, "ridge_repeats", lambda *a: None)


def _fits(monkeypatch, X, y, t, sw=None, **params):
    new = MultitaskMKLRegressor(**params).fit(X, y, task_index=t, sample_weight=sw)
    with monkeypatch.context() as m:
        _whole_rows(m)
        old = MultitaskMKLRegressor(**params).fit(X, y, task_index=t, sample_weight=sw)
    return new, old


def _same_model(new, old, X, t):
    np.testing.assert_allclose(new.predict(X, task_index=t), old.predict(X, task_index=t),
                               rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(new.kernel_weights_, old.kernel_weights_, rtol=1e-8,
                               atol=1e-12)
    np.testing.assert_allclose(new.intercept_, old.intercept_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(new.objective_, old.objective_, rtol=1e-8)
    assert new.n_iter_ == old.n_iter_


def test_repeats_found_only_where_they_save():
    X, y, t = _repeated()
    blocks = TaskBuckets([np.flatnonzero(t == a) for a in range(3)])
    grams = [np.stack([np.exp(-((X[idx][:, :, None] - X[idx][:, None, :]) ** 2).sum(-1)
                               * (mask[:, :, None] & mask[:, None, :]))])
             for _, idx, mask in blocks.buckets]
    for (_, idx, mask), K in zip(blocks.buckets, grams):
        rep = ridge_repeats(K, np.where(mask, y[idx], 0.0), mask, 1.0)
        assert rep is not None and rep.mask.shape[1] <= 20
        # the distinct rows' kernel is the whole one's (each row, its distinct row's)
        Ku = np.empty(rep.mask.shape + rep.mask.shape[1:])
        mtfl._unpack_effective(np.ones((len(mask), 1)), rep.Gp, Ku)
        for a in range(len(mask)):
            g = rep.group[a, mask[a]]
            np.testing.assert_array_equal(Ku[a][np.ix_(g, g)],
                                          K[0, a][np.ix_(mask[a], mask[a])])
    # distinct inputs: the whole rows
    Xd, yd, td = _repeated(distinct=10_000)
    blocks = TaskBuckets([np.flatnonzero(td == a) for a in range(3)])
    (_, idx, mask), = blocks.buckets[:1]
    K = Xd[idx] @ Xd[idx].transpose(0, 2, 1) * (mask[:, :, None] & mask[:, None, :])
    assert ridge_repeats(K[None], np.where(mask, yd[idx], 0.0), mask, 1.0) is None


@pytest.mark.parametrize("params", [
    {},
    {"kernels": ["linear", ("rbf", {"gamma": 0.5})], "C": 10.0},
    {"formulation": "mkl"},
    {"p": 4.0},
    {"formulation": "independent"},
])
def test_repeated_inputs_same_model(monkeypatch, params):
    X, y, t = _repeated()
    new, old = _fits(monkeypatch, X, y, t, **params)
    _same_model(new, old, X, t)


def test_repeated_inputs_weights_and_many_tasks(monkeypatch):
    X, y, t = _repeated(n_tasks=12, rows=(64, 70, 75, 80))
    sw = np.random.default_rng(1).uniform(0.2, 3.0, size=len(y))
    sw[::7] = 0.0  # rows of zero weight leave the fit
    new, old = _fits(monkeypatch, X, y, t, sw)
    _same_model(new, old, X, t)


def test_repeats_with_a_task_of_one_row(monkeypatch):
    """A bucket of one row (solved whole) next to buckets of repeated rows."""
    X, y, t = _repeated()
    rows = [np.flatnonzero(t == a) for a in range(3)] + [np.array([len(y)])]
    X = np.vstack([X, X[:1]])
    y = np.append(y, 0.5)
    blocks = TaskBuckets(rows)
    grams = []
    for _, idx, mask in blocks.buckets:
        Xb = X[idx]
        pair = mask[:, :, None] & mask[:, None, :]
        grams.append(np.stack([Xb @ Xb.transpose(0, 2, 1) * pair,
                               np.exp(-((Xb[:, :, None] - Xb[:, None, :]) ** 2).sum(-1))
                               * pair]))
    y_b = blocks.gather(y)
    new = solve_mtfl(blocks, grams, y_b, "square", 2.0, max_iter=30)
    with monkeypatch.context() as m:
        _whole_rows(m)
        old = solve_mtfl(blocks, grams, y_b, "square", 2.0, max_iter=30)
    np.testing.assert_allclose(new["gamma"], old["gamma"], rtol=1e-8)
    np.testing.assert_allclose(new["b"], old["b"], rtol=1e-8)
    for bn, bo in zip(new["beta"], old["beta"]):
        np.testing.assert_allclose(bn, bo, rtol=1e-8, atol=1e-10)
    assert new["n_iter"] == old["n_iter"]


# ---------------------------------------------------------------- C="auto"'s blocks

def _all_blocks(monkeypatch):
    """The old route of C="auto": every kernel's blocks built and used."""
    from kernlearn.methods.mtmkl import fit

    monkeypatch.setattr(fit, "_loo_grams", lambda kernels, blocks, dense, *_: [
        np.stack([kernels.blocks(j, idx, mask) for j in range(kernels.n_kernels)])
        for _, idx, mask in blocks.buckets])
    monkeypatch.setattr(fit, "distinct_blocks", lambda *_: None)
    monkeypatch.setattr(fit, "_kernel_terms", lambda mu, K, factors, beta, **_: np.einsum(
        "j,jtab,tb->ta", mu, K, beta))


def _grouped(n_tasks=4, m=(30, 45, 80), d=4, seed=0):
    rng = np.random.default_rng(seed)
    t = np.concatenate([np.full(m[a % len(m)], a) for a in range(n_tasks)])
    X = rng.normal(size=(len(t), d))
    y = X[:, 0] + np.sin(X[:, 1]) * (1 + t % 2) + 0.2 * rng.normal(size=len(t)) + t
    return X, y, t


@pytest.mark.parametrize("case", ["default", "weights", "many_tasks", "unshared",
                                  "precomputed", "rbf_only"])
def test_loo_fit_same_model_without_the_factor_blocks(monkeypatch, case):
    from kernlearn import MultitaskMKLRegressorCV
    from kernlearn.kernels import linear_kernel, rbf_kernel

    X, y, t = _grouped(n_tasks=30, m=(3, 4, 6)) if case == "many_tasks" else _grouped()
    sw = (np.random.default_rng(3).uniform(0.5, 2.0, len(y)) if case == "weights"
          else None)
    params = {"shared": False} if case == "unshared" else {}
    fit_X = X
    if case == "precomputed":
        params["kernels"] = "precomputed"
        fit_X = [linear_kernel(X, X), rbf_kernel(X, X, gamma=0.3)]
    if case == "rbf_only":
        params["kernels"] = [("rbf", {"gamma": 0.3})]

    def fitted():
        return MultitaskMKLRegressorCV(**params).fit(fit_X, y, task_index=t,
                                                     sample_weight=sw)
    new = fitted()
    with monkeypatch.context() as m:
        _all_blocks(m)
        old = fitted()
    assert new.C_ == pytest.approx(old.C_, rel=1e-8)
    _same_model(new, old, fit_X, t)
    np.testing.assert_allclose(new.shared_kernel_weights_, old.shared_kernel_weights_,
                               rtol=1e-8, atol=1e-12)


def test_kernel_terms_equal_the_blocks_products():
    from kernlearn.methods.mtmkl.fit import _kernel_terms

    rng = np.random.default_rng(0)
    F = rng.normal(size=(3, 7, 2))
    F[2, 5:] = 0.0  # padding
    Kd = rng.normal(size=(3, 7, 7))
    Kd = Kd @ Kd.transpose(0, 2, 1)
    K = np.stack([Kd, F @ F.transpose(0, 2, 1)])
    beta = rng.normal(size=(3, 7))
    mu = np.array([0.7, 1.3])
    np.testing.assert_allclose(_kernel_terms(mu, K, [None, F], beta),
                               np.einsum("j,jtab,tb->ta", mu, K, beta), rtol=1e-12)
    # the factor's block is not read
    np.testing.assert_allclose(_kernel_terms(mu, np.stack([Kd, 0 * Kd]), [None, F], beta),
                               np.einsum("j,jtab,tb->ta", mu, K, beta), rtol=1e-12)


# ---------------------------------------------------------------- Cholesky solves

def test_spd_solve_equals_the_lu_solve():
    from kernlearn.utils._linalg import spd_solve

    rng = np.random.default_rng(0)
    for m in (10, 80):
        F = rng.normal(size=(4, m, m))
        A = F @ F.transpose(0, 2, 1) + 0.5 * np.eye(m)
        A[3] = np.diag(np.r_[-1.0, np.ones(m - 1)])  # not positive definite: LU
        B = rng.normal(size=(4, m, 2))
        np.testing.assert_allclose(spd_solve(A, B), np.linalg.solve(A, B), rtol=1e-9,
                                   atol=1e-12)


@pytest.mark.parametrize("sw", [False, True])
def test_ridge_by_cholesky_same_model(monkeypatch, sw):
    from kernlearn.methods.mtmkl import inner

    X, y, t = _grouped(n_tasks=3, m=(70, 90, 150), seed=1)
    w = np.random.default_rng(4).uniform(0.3, 3.0, len(y)) if sw else None
    new = MultitaskMKLRegressor(p=3.0).fit(X, y, task_index=t, sample_weight=w)
    with monkeypatch.context() as m:
        m.setattr(inner, "spd_solve", np.linalg.solve)
        old = MultitaskMKLRegressor(p=3.0).fit(X, y, task_index=t, sample_weight=w)
    _same_model(new, old, X, t)


# ---------------------------------------------------------------- Kelley's bound, two kernels

def _lp_bound(a, grads):
    """The linear programme of ``cutting_plane_bound`` (its route for every size)."""
    from scipy.optimize import linprog

    t, d = grads.shape
    res = linprog(np.append(-a, -1.0), A_ub=np.column_stack([-grads.T, np.ones(d)]),
                  b_ub=np.zeros(d), A_eq=np.append(np.ones(t), 0.0)[None], b_eq=[1.0],
                  bounds=[(0, None)] * t + [(None, None)], method="highs")
    mu = np.maximum(res.x[:t], 0.0)
    mu /= mu.sum()
    return float(mu @ a + (grads.T @ mu).min())


def test_two_kernel_bound_is_the_programmes():
    from kernlearn.solvers.mirror_descent import cutting_plane_bound

    rng = np.random.default_rng(0)
    s = np.linspace(0.0, 1.0, 4001)
    for _ in range(200):
        t = int(rng.integers(1, 40))
        c, pts = rng.dirichlet([1, 1]), rng.dirichlet([0.5, 0.5], size=t)
        scale = 10.0 ** rng.uniform(-3, 3)
        f = scale * ((pts - c) ** 2).sum(1) + scale * pts[:, 0]  # convex on the simplex
        g = scale * (2 * (pts - c) + np.array([1.0, 0.0]))
        a = f - (g * pts).sum(1)
        bound = cutting_plane_bound(a, g)
        assert bound == pytest.approx(_lp_bound(a, g), rel=1e-8, abs=1e-10 * scale)
        # a lower bound of the function, and the minimum of the cuts' maximum
        y = np.column_stack([s, 1 - s])
        true_min = (scale * (((y - c) ** 2).sum(1) + y[:, 0])).min()
        model_min = (a[:, None] + g @ y.T).max(0).min()
        assert bound <= true_min + 1e-12 * scale
        # (the grid's minimum: within a step times the steepest slope)
        assert bound <= model_min + 1e-9 * scale
        assert model_min - bound <= 2 * np.abs(g).max() * s[1] + 1e-9 * scale


@pytest.mark.parametrize("params", [{}, {"p": 3.0}, {"formulation": "mkl"}])
def test_fits_with_the_closed_form_bound_same_model(monkeypatch, params):
    from kernlearn.solvers import mirror_descent

    X, y, t = _grouped(n_tasks=5, m=(20, 30, 45), seed=2)
    new = MultitaskMKLRegressor(**params).fit(X, y, task_index=t)
    with monkeypatch.context() as m:
        m.setattr(mirror_descent, "_two_kernel_bound", _lp_bound)
        old = MultitaskMKLRegressor(**params).fit(X, y, task_index=t)
    _same_model(new, old, X, t)
