"""The leave-one-out search's unfactored kernel built on each task's distinct inputs
(``_loo_eigen.distinct_blocks``): the same criterion, gradient and fitted model as
from the whole blocks, the whole blocks not built; and the constant kernel's scale
not computed where the search does not read it."""

import numpy as np
import pytest

from kernlearn import MultitaskMKLRegressor, MultitaskMKLRegressorCV
from kernlearn.methods.mtmkl import fit
from kernlearn.methods.mtmkl._loo_eigen import EigenLOO, distinct_blocks, eigen_plan
from kernlearn.methods.mtmkl.task_kernels import TaskKernels

from test_mtmkl_loo_fast import _problem


def _repeated(seed=0):
    """Star-like tasks: 70-110 rows each on about 27 distinct inputs, weighted."""
    rng = np.random.default_rng(seed)
    t = np.repeat(np.arange(3), [110, 70, 90])
    X = rng.integers(0, 3, size=(len(t), 3)).astype(float)
    y = X[:, 0] * (t - 1.0) + np.sin(X[:, 1]) + 0.3 * rng.normal(size=len(t)) + t
    return X, y, t, rng.uniform(0.5, 2.0, len(t))


def test_distinct_inputs_give_the_whole_blocks_criterion():
    p = _problem([110, 70], weighted=True, repeats=True)
    kern, buckets = p["kern"], p["blocks"].buckets
    dense = eigen_plan(2, p["factors"], p["masks"], p["shared"])
    assert dense == 0
    distinct = [distinct_blocks(kern, dense, idx, mask) for _, idx, mask in buckets]
    assert all(D is not None for D in distinct)
    for (_, idx, mask), (K_u, maps) in zip(buckets, distinct):
        for t, (r, uniq, inv) in enumerate(maps):
            # the valid rows' inputs are their distinct inputs', in the kernel's view
            V = kern.X_[idx[t, r]]
            np.testing.assert_array_equal(V[uniq][inv], V)
            assert len(uniq) == len(np.unique(V, axis=0)) < len(r)
    whole = EigenLOO(p["grams"], p["y_b"], p["w_b"], p["masks"], p["shared"],
                                p["factors"], dense)
    zeros = [np.zeros_like(K) for K in p["grams"]]  # (the blocks are not read)
    new = EigenLOO(zeros, p["y_b"], p["w_b"], p["masks"], p["shared"], p["factors"],
                   dense, distinct)
    rng = np.random.default_rng(1)
    for mu in [np.array([0.7, 0.2, 0.05]), rng.uniform(0.01, 3.0, 3)]:
        f0, g0 = whole(mu)
        f1, g1 = new(mu)
        assert f1 == pytest.approx(f0, rel=1e-10)
        np.testing.assert_allclose(g1, g0, rtol=1e-8, atol=1e-10 * np.abs(g0).max())


def test_kernel_terms_on_distinct_inputs_equal_the_blocks_products():
    p = _problem([110, 70], repeats=True)
    kern = p["kern"]
    rng = np.random.default_rng(2)
    for b, (_, idx, mask) in enumerate(p["blocks"].buckets):
        D = distinct_blocks(kern, 0, idx, mask)
        beta = np.where(mask, rng.normal(size=mask.shape), 0.0)
        mu = np.array([0.8, 0.0])
        full = fit._kernel_terms(mu, p["grams"][b], [None, None], beta)
        got = fit._kernel_terms(mu, np.zeros_like(p["grams"][b]), [None, None], beta,
                                distinct=D)
        np.testing.assert_allclose(got, full, rtol=1e-12, atol=1e-12 * np.abs(full).max())


def test_default_fit_builds_no_whole_block_of_a_repeated_task(monkeypatch):
    X, y, t, sw = _repeated()
    widths = []
    blocks = TaskKernels.blocks

    def spy(self, j, idx_a, mask_a, *a, **k):
        widths.append(mask_a.shape[1])
        return blocks(self, j, idx_a, mask_a, *a, **k)

    def fitted():
        return MultitaskMKLRegressorCV().fit(X, y, task_index=t, sample_weight=sw)

    with monkeypatch.context() as m:
        m.setattr(TaskKernels, "blocks", spy)
        new = fitted()
    # only the blocks of the distinct inputs (at most 27 a task), never a task's 70-110
    assert widths and max(widths) <= 27
    with monkeypatch.context() as m:
        m.setattr(fit, "distinct_blocks", lambda *_: None)  # the whole blocks
        old = fitted()
    assert new.C_ == pytest.approx(old.C_, rel=1e-6)
    np.testing.assert_allclose(new.kernel_weights_, old.kernel_weights_, atol=1e-6)
    pn, po = new.predict(X, task_index=t), old.predict(X, task_index=t)
    np.testing.assert_allclose(pn, po, rtol=0, atol=1e-8 * np.ptp(po))


def test_no_constant_kernel_scale_on_the_leave_one_out_route(monkeypatch):
    X, y, t, _ = _repeated()
    calls = []
    scale = fit.bias_scale
    monkeypatch.setattr(fit, "bias_scale", lambda *a: calls.append(1) or scale(*a))
    MultitaskMKLRegressorCV().fit(X, y, task_index=t)  # shared components, C="auto"
    assert calls == []
    MultitaskMKLRegressor(shared=True).fit(X, y, task_index=t)  # its constant kernel
    assert calls == [1]
