"""The multitask leave-one-out search's criterion from one eigendecomposition per task
(``methods/mtmkl/_loo_eigen.py``): the same values and gradient as the inverse-based
criterion, as refits without each row and as finite differences; the same search
result; and the default fit takes it."""

import numpy as np
import pytest

from kernlearn import MultitaskMKLRegressorCV
from kernlearn.methods import mtmkl as M
from kernlearn.methods.mtmkl import _loo_eigen, selection
from kernlearn.methods.mtmkl._loo_eigen import EigenLOO, eigen_plan
from kernlearn.methods.mtmkl.selection import _loo_objective, learn_loo_weights
from kernlearn.methods.mtmkl.task_kernels import gather_rows


def _problem(sizes, weighted=False, shared=True, repeats=False, seed=0, kernels=None):
    """Bucketed inputs of the search on tasks of ``sizes`` rows (the RBF kernel
    without a factor, the linear kernel with its data as factor)."""
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    X = (rng.integers(0, 3, size=(n, 3)).astype(float) if repeats
         else rng.normal(size=(n, 4)))
    if not repeats:
        X[:, 3] = 2.0 * X[:, 2]  # dependent columns: a factor of lower rank
    t = np.repeat(np.arange(len(sizes)), sizes)
    y = X[:, 0] * (t % 3 - 1.0) + np.sin(X[:, 1]) + 0.3 * rng.normal(size=n) + 5.0
    kern = M.TaskKernels(kernels or [("rbf", {"gamma": 0.5}), "linear"]).fit(X)
    blocks = M.TaskBuckets([np.flatnonzero(t == v) for v in range(len(sizes))])
    k = kern.n_kernels
    grams = [np.stack([kern.blocks(j, idx, mask) for j in range(k)])
             for _, idx, mask in blocks.buckets]
    masks = [mask for *_, mask in blocks.buckets]
    y_b = [np.where(mk, v - (v * mk).sum(1, keepdims=True) / mk.sum(1, keepdims=True), 0.0)
           for v, mk in zip(blocks.gather(y), masks)]
    w_b = [np.where(mk, rng.uniform(0.5, 2.0, mk.shape) if weighted else 1.0, 0.0)
           for mk in masks]
    factors = [None if kern.linear_factor(j) is None
               else gather_rows(blocks, kern.linear_factor(j)) for j in range(k)]
    lin = [j for j in range(k) if kern.specs_[j][0] == "linear"]
    Z = [gather_rows(blocks, kern.factor(j)) for j in lin] if shared else []
    return {"grams": grams, "y_b": y_b, "w_b": w_b, "masks": masks, "shared": Z,
            "factors": factors, "kern": kern, "blocks": blocks, "y": y, "t": t, "lin": lin}


def _eigen(p):
    dense = eigen_plan(p["grams"][0].shape[0], p["factors"], p["masks"], p["shared"])
    return EigenLOO(p["grams"], p["y_b"], p["w_b"], p["masks"], p["shared"],
                    p["factors"], dense)


def _old(p, mu, **kw):
    return _loo_objective(mu, p["grams"], p["y_b"], p["w_b"], p["masks"],
                          shared=p["shared"], **kw)


CASES = [  # sizes (unequal: padding), weights, shared components, repeated inputs
    ([10, 13, 7, 12], False, True, False),
    ([10, 13, 7, 12], True, True, False),
    ([30, 40, 25], True, False, False),
    ([70, 90], False, True, True),
    ([40, 25, 33], True, True, True),
]
MUS = [np.array([0.3, 1.7, 0.6]), np.array([3.0, 0.0, 0.2]), np.array([0.0, 5.0, 0.0]),
       np.array([40.0, 0.05, 2.0])]


@pytest.mark.parametrize("case", CASES)
def test_criterion_gradient_and_coefficients_equal_the_inverse_based_ones(case):
    sizes, weighted, shared, repeats = case
    p = _problem(sizes, weighted, shared, repeats)
    ev = _eigen(p)
    for mu in MUS:
        mu = mu[:2 + len(p["shared"])]
        f0, g0, b0 = _old(p, mu, full=True)
        f1, g1, b1 = ev(mu, full=True)
        assert f1 == pytest.approx(f0, rel=1e-11)
        np.testing.assert_allclose(g1, g0, rtol=1e-9, atol=1e-10 * np.abs(g0).max())
        for a, b in zip(b1, b0):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11 * np.abs(b).max())
        assert ev(mu, grad=False) == f1
        _, _, res0 = _old(p, mu, grad=False, full=True)
        _, _, res1 = ev(mu, grad=False, full=True)
        for a, b in zip(res1, res0):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11 * np.abs(b).max())


def test_repeated_inputs_decompose_only_their_distinct_rows(monkeypatch):
    # Star's tasks: 700 rows, 140 distinct; the eigenpairs of the distinct rows
    # (weighted by their counts) give every row's (the criterion test above)
    p = _problem([100, 70], weighted=True, repeats=True)
    sizes, eigh = [], np.linalg.eigh
    monkeypatch.setattr(_loo_eigen.np.linalg, "eigh",
                        lambda A: sizes.append(A.shape) or eigh(A))
    _eigen(p)
    distinct = [len(np.unique(p["kern"].X_[p["t"] == v], axis=0)) for v in (0, 1)]
    assert max(distinct) < 70 <= _loo_eigen._DISTINCT_FROM + 6
    # one call a bucket, of its distinct kernel rows (rows of equal inputs whose
    # kernel rows differ in their last bit count as distinct: a few more)
    got = sorted(s[-1] for s in sizes)
    assert len(got) == 2 and all(d <= g <= d + 3 for d, g in zip(sorted(distinct), got))
    # small tasks: one batched call over their rows
    sizes.clear()
    _eigen(_problem([30, 20], repeats=True))
    assert sorted(s[-1] for s in sizes) == [20, 30]


def test_rows_equal_only_bitwise_share_a_representative():
    A = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0 + 1e-15],
                  [3.0, 2.0, 1.0]])
    uniq, inv = _loo_eigen._distinct_rows(A)
    np.testing.assert_array_equal(A[uniq][inv], A)
    assert len(uniq) == 3 and inv[0] == inv[1] != inv[2]


def test_a_hash_collision_keeps_both_rows(monkeypatch):
    # rows of equal hash but other entries: each its own representative
    A = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])

    class Same:
        def uniform(self, lo, hi, size):
            return np.ones(size)  # every row hashes to its sum: all three collide

        def integers(self, lo, hi, size, dtype):
            return np.ones(size, dtype)  # (the integer hash's weights: the same)

    monkeypatch.setattr(_loo_eigen.np.random, "default_rng", lambda seed: Same())
    uniq, inv = _loo_eigen._distinct_rows(A)
    np.testing.assert_array_equal(A[uniq][inv], A)
    assert len(uniq) == 2


def _assert_central_differences(ev, mu, step=1e-5):
    """The evaluator's gradient at ``mu`` against central differences of its criterion
    (steps of ``step`` times each weight)."""
    _, g = ev(mu)
    for j in range(len(mu)):
        e = np.zeros_like(mu)
        e[j] = h = step * mu[j]
        fd = (ev(mu + e, grad=False) - ev(mu - e, grad=False)) / (2 * h)
        assert g[j] == pytest.approx(fd, rel=1e-5, abs=1e-7 * np.abs(g).max())


def _direct_loo(p, mu):
    """Residuals of refits without each row: kernel ridge on the whole multitask
    kernel (within-task kernels, shared components over all rows) with a free bias
    per task, solved from its bordered system."""
    kern, t, y = p["kern"], p["t"], p["y"]
    n, k = len(y), p["grams"][0].shape[0]
    same = t[:, None] == t[None, :]
    K = sum(mu[j] * kern.full(j) * same for j in range(k))
    for m_s, j in zip(mu[k:], p["lin"]):
        A = kern.factor(j)
        K = K + m_s * A @ A.T
    w = np.ones(n)
    E = (t[:, None] == np.unique(t)[None, :]).astype(float)
    yc = p["blocks"].scatter(p["y_b"], n)  # the task-centred targets
    out = np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        Kk, Ek = K[np.ix_(keep, keep)], E[keep]
        T = E.shape[1]
        lhs = np.block([[Kk + np.diag(1.0 / w[keep]), Ek], [Ek.T, np.zeros((T, T))]])
        sol = np.linalg.solve(lhs, np.r_[yc[keep], np.zeros(T)])
        out[i] = yc[i] - (K[i, keep] @ sol[:n - 1] + E[i] @ sol[n - 1:])
    return out


@pytest.mark.parametrize("shared", [False, True])
def test_residuals_are_those_of_refits_without_each_row(shared):
    p = _problem([9, 12, 8], shared=shared)
    ev = _eigen(p)
    mu = np.array([0.4, 1.3, 0.7])[:2 + len(p["shared"])]
    f, _, res = ev(mu, grad=False, full=True)
    direct = _direct_loo(p, mu)
    np.testing.assert_allclose(p["blocks"].scatter(res, len(direct)), direct,
                               rtol=1e-8, atol=1e-10)
    assert f == pytest.approx(float((direct ** 2).sum()), rel=1e-9)


@pytest.mark.parametrize("case", CASES[:4])
def test_gradient_matches_central_differences(case):
    sizes, weighted, shared, repeats = case
    p = _problem(sizes, weighted, shared, repeats)
    ev = _eigen(p)
    mu = np.array([0.3, 1.7, 0.6])[:2 + len(p["shared"])]
    _, g = ev(mu)
    for j in range(len(mu)):
        e = np.zeros(len(mu))
        e[j] = 1e-6
        fd = (ev(mu + e, grad=False) - ev(mu - e, grad=False)) / 2e-6
        assert g[j] == pytest.approx(fd, rel=1e-5, abs=1e-7 * np.abs(g).max())


def test_one_kernel_and_every_kernel_factored():
    # a single (precomputed-like) kernel: no factor, the eigenpairs alone; and a
    # list of linear kernels only: no kernel to decompose (G = D^1/2)
    for kernels, dense in ([["rbf"], 0], [["linear", ("linear", {}, [0, 1])], None]):
        p = _problem([20, 30], weighted=True, shared=False, kernels=kernels)
        assert eigen_plan(len(kernels), p["factors"], p["masks"], []) == dense
        ev = _eigen(p)
        mu = np.linspace(0.5, 1.5, len(kernels))
        f0, g0 = _old(p, mu)
        f1, g1 = ev(mu)
        assert f1 == pytest.approx(f0, rel=1e-11)
        np.testing.assert_allclose(g1, g0, rtol=1e-9, atol=1e-10 * np.abs(g0).max())


def test_plan_keeps_the_inverse_for_two_unfactored_kernels_and_tiny_tasks():
    p = _problem([20, 30], kernels=[("rbf", {"gamma": 0.5}), ("rbf", {"gamma": 2.0})])
    assert eigen_plan(2, p["factors"], p["masks"], p["shared"]) is False
    assert not isinstance(selection.loo_objective(p["grams"], p["y_b"], p["w_b"],
                                                  p["masks"]), EigenLOO)
    # School's schools: tasks of 4-33 rows against 50 factor columns
    p = _problem([5, 6, 7] * 4)
    wide = [np.concatenate([f] * 8, axis=2) for f in p["factors"][1]]
    assert eigen_plan(2, [None, wide], p["masks"], p["shared"]) is False
    assert eigen_plan(2, p["factors"], p["masks"], p["shared"]) == 0


@pytest.mark.parametrize("shared", [False, True])
def test_the_search_ends_where_the_inverse_based_search_ends(shared):
    p = _problem([40, 55, 35], weighted=True, shared=shared, seed=3)
    args = (p["grams"], p["y_b"], p["masks"], p["w_b"])

    def old(mu, grad=True, full=False):
        return _old(p, mu, grad=grad, full=full)

    ref = learn_loo_weights(*args, shared=p["shared"], objective=old)
    got = learn_loo_weights(*args, shared=p["shared"], factors=p["factors"])
    # the same optimum, to the resolution of the search on a flat criterion
    assert got[2] == pytest.approx(ref[2], rel=1e-10)
    assert got[1] == pytest.approx(ref[1], rel=1e-5)
    np.testing.assert_allclose(got[0], ref[0], atol=1e-5)


def test_default_fit_takes_the_eigen_criterion_and_gives_the_same_model(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    t = np.repeat([0, 1], 150)
    y = X[:, 0] * (2 * t - 1) + np.sin(2 * X[:, 1]) + 0.2 * rng.normal(size=300)
    built = []
    init = EigenLOO.__init__
    monkeypatch.setattr(EigenLOO, "__init__",
                        lambda self, *a: built.append(1) or init(self, *a))
    new = MultitaskMKLRegressorCV().fit(X, y, task_index=t)
    assert built  # (not the m x m inverse of every evaluation)
    monkeypatch.setattr(selection, "eigen_plan", lambda *a: False)
    old = MultitaskMKLRegressorCV().fit(X, y, task_index=t)
    assert len(built) == 1
    assert new.C_ == pytest.approx(old.C_, rel=1e-5)
    p_new, p_old = new.predict(X, task_index=t), old.predict(X, task_index=t)
    assert np.max(np.abs(p_new - p_old)) <= 1e-6 * np.ptp(p_old)


@pytest.mark.parametrize("case", CASES[1:4])
def test_a_batch_of_points_gives_each_points_criterion(case):
    # the search's starts: the grid of C at uniform weights in one evaluation
    sizes, weighted, shared, repeats = case
    p = _problem(sizes, weighted, shared, repeats)
    ev = _eigen(p)
    pts = np.array([m[:2 + len(p["shared"])] for m in MUS])
    got = ev(pts, grad=False)
    assert got.shape == (len(MUS),)
    np.testing.assert_allclose(got, [ev(m, grad=False) for m in pts], rtol=1e-12)
    np.testing.assert_allclose(got, [_old(p, m, grad=False) for m in pts], rtol=1e-11)
    with pytest.raises(ValueError, match="criterion only"):
        ev(pts)
