"""Audit 75: a hostile review of the plain multitask regressor's new route
(issue 24: repeated rows found from the inputs, blocks on the distinct inputs).

Each model of the new route is the old route's (repeats searched in the whole
blocks) to round-off on inputs built to split or merge rows wrongly; and
:func:`~kernlearn.methods.mtmkl.solve_mtfl`'s public ``groups_b`` is refused
where the compiled solvers would read its distinct-row kernels as whole blocks.
"""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from kernlearn import MultitaskMKLRegressor
from kernlearn.methods.mtmkl import fit, solve_mtfl
from kernlearn.methods.mtmkl.mtfl import packed_blocks
from kernlearn.methods.mtmkl.task_kernels import TaskBuckets, TaskKernels


def _repeated(rows=(90, 100, 110), distinct=20, seed=0):
    """Three tasks, each drawing its rows from ``distinct`` inputs."""
    rng = np.random.default_rng(seed)
    X, y, t = [], [], []
    for a in range(3):
        m = rows[a % len(rows)]
        Xa = rng.normal(size=(distinct, 3))[rng.integers(0, distinct, size=m)]
        X.append(Xa)
        y.append(Xa[:, 0] + np.sin(Xa[:, 1]) * (1 + a) + 0.3 * rng.normal(size=m) + a)
        t.append(np.full(m, a))
    return np.vstack(X), np.concatenate(y), np.concatenate(t)


def _problem(distinct=20):
    """A bucket's distinct-input problem, as the plain regressor builds it."""
    X, y, t = _repeated(distinct=distinct)
    kernels = TaskKernels(["linear", ("rbf", {"gamma": 0.5})]).fit(X)
    blocks = TaskBuckets([np.flatnonzero(t == a) for a in range(3)])
    made = [fit._distinct_problem(kernels, idx, mask) for _, idx, mask in blocks.buckets]
    return kernels, blocks, blocks.gather(y), [G for G, _ in made], [D for _, D in made]


@pytest.mark.parametrize("case", ["svr", "shared", "grams"])
def test_groups_b_only_with_the_square_loss_packed_and_unshared(case):
    """Kernels on the distinct inputs (20 rows a task) given with the SVR loss
    were read as the whole 110-row blocks, out of bounds, and a model came
    back (uniform weights); with shared factors or unpacked blocks, errors
    that named nothing."""
    kernels, blocks, y_b, grams_tm, groups = _problem()
    assert all(isinstance(D, tuple) for D in groups)
    kw = {"grams_tm": grams_tm, "groups_b": groups, "max_iter": 3}
    loss = "epsilon_insensitive" if case == "svr" else "square"
    if case == "shared":
        kw["shared_factors"] = [np.ones((blocks.n_samples, 1))]
    if case == "grams":
        kw["grams_tm"] = None
        grams = [np.stack([kernels.blocks(j, idx, mask) for j in range(2)])
                 for _, idx, mask in blocks.buckets]
    with pytest.raises(ValueError, match="groups_b .* needs grams_tm, loss='square'"):
        solve_mtfl(blocks, grams if case == "grams" else None, y_b, loss, 1.0, **kw)


def test_groups_b_must_fit_the_packed_kernels():
    """Groups of the distinct inputs with the packed whole blocks (or the
    reverse) were read in the wrong layout without a word."""
    kernels, blocks, y_b, grams_tm, groups = _problem()
    whole = [packed_blocks(lambda j, i=idx, m=mask: kernels.blocks(j, i, m), idx.shape, 2)
             for _, idx, mask in blocks.buckets]
    with pytest.raises(ValueError, match=r"groups_b\[0\] does not fit bucket 0"):
        solve_mtfl(blocks, None, y_b, "square", 1.0, grams_tm=whole, groups_b=groups,
                   max_iter=3)
    # the groups of other data's distinct inputs (40 a task, not 20)
    other = _problem(distinct=40)[4]
    with pytest.raises(ValueError, match=r"groups_b\[0\] does not fit bucket 0"):
        solve_mtfl(blocks, None, y_b, "square", 1.0, grams_tm=grams_tm, groups_b=other,
                   max_iter=3)
    # flags alone (no groups) and the right groups are taken with either loss
    solve_mtfl(blocks, None, y_b, "epsilon_insensitive", 1.0, grams_tm=whole,
               groups_b=[False], max_iter=3)
    solve_mtfl(blocks, None, y_b, "square", 1.0, grams_tm=grams_tm, groups_b=groups,
               max_iter=3)


def _hostile(case):
    """``(X, y, tasks, params, sample_weight, grouped)``: inputs built to split or
    merge rows wrongly, and whether the new route groups their bucket."""
    X, y, t = _repeated()
    rng = np.random.default_rng(3)
    params, sw, grouped = {}, None, True
    if case == "signed zeros":  # bitwise distinct inputs of equal kernel rows
        X[:, 2] = np.where(rng.random(len(y)) < 0.5, 0.0, -0.0)
        params = {"standardize": False}
    elif case == "equal after standardising":  # 1e-300 and 2e-300 -> one value
        X[:, 0] = rng.choice([1.0, 0.0, 1e-300, 2e-300], len(y))
    elif case == "equal kernel rows, distinct inputs":  # x and -x: one row of x^2
        X[::3] *= -1
        params = {"kernels": [("poly", {"degree": 2, "coef0": 0.0})], "standardize": False}
    elif case == "views of column subsets":  # each view repeats more than both
        X = rng.integers(0, 4, size=X.shape).astype(float)
        params = {"kernels": [("rbf", {"gamma": 0.5}, [0]), ("linear", {}, [1, 2])]}
    elif case == "hik, x and -x":  # equal kernel rows of distinct inputs
        X[::3] *= -1
        params = {"kernels": ["hik", "rbf"], "standardize": False}
    elif case == "zero weights on every copy":
        sw = rng.uniform(0.2, 3.0, len(y))
        sw[np.unique(X, axis=0, return_inverse=True)[1].ravel() % 4 == 0] = 0.0
    elif case == "string unsorted tasks":
        order = rng.permutation(len(y))
        X, y, t = X[order], y[order], np.array(["b", "a", "c"])[t[order]]
    elif case == "float32":
        X = X.astype(np.float32)
    elif case == "64 rows, 58 distinct":  # past nine tenths: whole rows
        X, y, t = X[:192], y[:192], np.repeat(np.arange(3), 64)
        X[:, 0] = np.tile(np.r_[np.arange(58), np.arange(6)], 3)
        grouped = False
    return X, y, t, params, sw, grouped


@pytest.mark.parametrize("case", [
    "signed zeros", "equal after standardising", "equal kernel rows, distinct inputs",
    "views of column subsets", "hik, x and -x", "zero weights on every copy", "string unsorted tasks",
    "float32", "64 rows, 58 distinct"])
@pytest.mark.filterwarnings("ignore:kernels.0.. the columns hik sees")
def test_hostile_inputs_same_model_as_the_old_route(monkeypatch, case):
    X, y, t, params, sw, grouped = _hostile(case)
    seen, real = [], fit.input_groups
    monkeypatch.setattr(fit, "input_groups", lambda *a: seen.append(real(*a)) or seen[-1])
    with threadpool_limits(1):
        new = MultitaskMKLRegressor(**params).fit(X, y, task_index=t, sample_weight=sw)
        with monkeypatch.context() as m:
            m.setattr(fit, "distinct_inputs", lambda *a: None)  # the old route
            old = MultitaskMKLRegressor(**params).fit(X, y, task_index=t, sample_weight=sw)
    assert seen and all((g is not None) == grouped for g in seen)
    Xn = np.vstack([X[:40], np.random.default_rng(4).normal(size=(20, X.shape[1]))])
    tn = np.r_[t[:40], t[:20]]
    p_new, p_old = new.predict(Xn, task_index=tn), old.predict(Xn, task_index=tn)
    np.testing.assert_allclose(p_new, p_old, rtol=0, atol=1e-8 * np.ptp(p_old))
    np.testing.assert_allclose(new.kernel_weights_, old.kernel_weights_, rtol=1e-8,
                               atol=1e-12)
    assert new.n_iter_ == old.n_iter_
