"""The plain multitask regressor finds repeated rows from its inputs (issue 24).

With the square loss, each task's kernel ridge is solved on its distinct rows
(:mod:`~kernlearn.methods.mtmkl._ridge_repeats`); those are found from the
inputs, and only their kernel blocks are built, instead of every task's whole
blocks (packed, unpacked and compared row by row).  The models are those of
the old routes to round-off.
"""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from kernlearn import MultitaskMKLRegressor
from kernlearn.methods.mtmkl import fit, mtfl
from kernlearn.methods.mtmkl.task_kernels import TaskKernels


def _repeated(n_tasks=3, rows=(90, 100, 110), distinct=20, extra=0, seed=0):
    """Tasks whose inputs repeat (each from ``distinct`` rows; ``extra`` more
    columns of noise that no kernel reads), targets noisy."""
    rng = np.random.default_rng(seed)
    X, y, t = [], [], []
    for a in range(n_tasks):
        m = rows[a % len(rows)]
        Xa = rng.normal(size=(distinct, 3))[rng.integers(0, distinct, size=m)]
        X.append(np.hstack([Xa, rng.normal(size=(m, extra))]))
        y.append(Xa[:, 0] + np.sin(Xa[:, 1]) * (1 + a % 2) + 0.3 * rng.normal(size=m) + a)
        t.append(np.full(m, a))
    return np.vstack(X), np.concatenate(y), np.concatenate(t)


def _widths(monkeypatch):
    """Record the widths of the kernel blocks built (rows of each side)."""
    widths, real = [], TaskKernels.blocks

    def blocks(self, j, idx_a, mask_a, X_a=None, idx_b=None, mask_b=None):
        widths.append(max(idx_a.shape[1], 0 if idx_b is None else idx_b.shape[1]))
        return real(self, j, idx_a, mask_a, X_a, idx_b, mask_b)

    monkeypatch.setattr(TaskKernels, "blocks", blocks)
    return widths


def _old_route(monkeypatch, whole):
    """Main's route before issue 24: repeats found from the whole blocks
    (``whole``: not at all, every task's kernel ridge on all its rows)."""
    monkeypatch.setattr(fit, "distinct_inputs", lambda *a: None)
    if whole:
        monkeypatch.setattr(mtfl, "ridge_repeats", lambda *a: None)


def _same_model(new, old, X, t):
    np.testing.assert_allclose(new.predict(X, task_index=t), old.predict(X, task_index=t),
                               rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(new.kernel_weights_, old.kernel_weights_, rtol=1e-8,
                               atol=1e-12)
    np.testing.assert_allclose(new.task_kernel_weights_, old.task_kernel_weights_,
                               rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(new.intercept_, old.intercept_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(new.objective_, old.objective_, rtol=1e-8)
    assert new.n_iter_ == old.n_iter_


def test_blocks_built_on_the_distinct_inputs_only(monkeypatch):
    X, y, t = _repeated()
    widths = _widths(monkeypatch)
    MultitaskMKLRegressor().fit(X, y, task_index=t)
    # the fit's blocks: each task's 20 distinct inputs, not its 90-110 rows
    assert widths and max(widths) <= 20


@pytest.mark.parametrize("params", [
    {},
    {"kernels": ["linear", ("rbf", {"gamma": 0.5})], "C": 10.0},
    {"formulation": "mkl"},
    {"p": 4.0},
])
@pytest.mark.parametrize("whole", [False, True])
def test_same_model_as_the_old_routes(monkeypatch, params, whole):
    X, y, t = _repeated()
    with threadpool_limits(1):
        new = MultitaskMKLRegressor(**params).fit(X, y, task_index=t)
        with monkeypatch.context() as m:
            _old_route(m, whole)
            old = MultitaskMKLRegressor(**params).fit(X, y, task_index=t)
    _same_model(new, old, X, t)


def test_views_of_several_columns_and_sample_weights(monkeypatch):
    """Kernels on column subsets: rows equal on every kernel's view are one row.
    Columns 0-1 repeat 20 rows, column 2 (the second kernel's) takes two values
    on its own, column 3 (read by none) is distinct on every row: 40 distinct
    rows at most, more than either view's.  Rows of zero weight leave the fit."""
    X, y, t = _repeated(n_tasks=5, rows=(70, 80), extra=1)
    X[:, 2] = np.random.default_rng(2).integers(0, 2, size=len(y))
    sw = np.random.default_rng(1).uniform(0.2, 3.0, size=len(y))
    sw[::7] = 0.0
    params = {"kernels": [("rbf", {"gamma": 0.3}, [0, 1]), ("linear", {}, [1, 2])]}
    joint = max(len(np.unique(X[(t == a) & (sw > 0), :3], axis=0)) for a in range(5))
    assert 20 < joint <= 40
    with threadpool_limits(1):
        with monkeypatch.context() as m:
            widths = _widths(m)
            new = MultitaskMKLRegressor(**params).fit(X, y, task_index=t, sample_weight=sw)
        assert max(widths) == joint
        with monkeypatch.context() as m:
            _old_route(m, whole=True)
            old = MultitaskMKLRegressor(**params).fit(X, y, task_index=t, sample_weight=sw)
    _same_model(new, old, X, t)


def test_distinct_inputs_whole_rows(monkeypatch):
    """Tasks without repeats keep their whole blocks and rows (the bookkeeping
    of distinct rows would save nothing), and their blocks are not searched
    for repeated rows: the inputs said there are too few."""
    X, y, t = _repeated(distinct=10_000)
    widths, grouped, searched = _widths(monkeypatch), [], []
    real, search = mtfl.grouped_ridge, mtfl.ridge_repeats
    monkeypatch.setattr(mtfl, "grouped_ridge", lambda *a: grouped.append(1) or real(*a))
    monkeypatch.setattr(mtfl, "ridge_repeats", lambda *a: searched.append(1) or search(*a))
    MultitaskMKLRegressor().fit(X, y, task_index=t)
    assert max(widths) == 110 and not grouped and not searched
    # precomputed kernels: no inputs to compare, the blocks are searched
    MultitaskMKLRegressor(kernels="precomputed").fit(
        [X @ X.T, np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))], y, task_index=t)
    assert searched and not grouped



@pytest.mark.parametrize("distinct", [20, 10_000])
def test_a_store_that_keeps_blocks_keeps_the_distinct_problem(monkeypatch, distinct):
    """A store keeping blocks (a C grid's fits on one fold) keeps each bucket's
    blocks with its groups (repeated inputs) or its flag (too many distinct
    ones) and gives them to its next fit, which builds no block; the model is
    a fresh store's."""
    from kernlearn.methods.mtmkl import FactorStore, fit_multitask

    X, y, t = _repeated(distinct=distinct)
    rows = [np.flatnonzero(t == a) for a in range(3)]
    kernels = ["linear", ("rbf", {"gamma": 0.5})]
    store = FactorStore(max_block_rows=10_000)
    widths = _widths(monkeypatch)
    fit_multitask(TaskKernels(kernels), X, y, rows, C=1.0, factor_store=store)
    assert widths and max(widths) == (20 if distinct == 20 else 110)
    del widths[:]
    kept = fit_multitask(TaskKernels(kernels), X, y, rows, C=10.0, factor_store=store)[2]
    assert not widths
    fresh = fit_multitask(TaskKernels(kernels), X, y, rows, C=10.0)[2]
    np.testing.assert_array_equal(kept.intercept, fresh.intercept)
    for a, b in zip(kept.coef[2], fresh.coef[2]):
        np.testing.assert_array_equal(a, b)
