"""The leave-one-out search's starts (``_loo_kernel.loo_criteria``): each point's
products with the tasks' ``G`` without the gradient's columns, the same criterion
as the search's own evaluations to round-off; and its result evaluated once for
its criterion and the refit's ``beta``."""

import numpy as np
import pytest

from kernlearn.methods.mtmkl import _loo_eigen, _loo_kernel
from kernlearn.methods.mtmkl._loo_eigen import EigenLOO, eigen_plan

from test_mtmkl_loo_fast import _problem


def _eigen(sizes, **kw):
    p = _problem(sizes, weighted=True, **kw)
    dense = eigen_plan(p["grams"][0].shape[0], p["factors"], p["masks"], p["shared"])
    return EigenLOO(p["grams"], p["y_b"], p["w_b"], p["masks"], p["shared"],
                    p["factors"], dense)


@pytest.mark.parametrize("sizes", [[10, 13, 7, 12], [70, 90]])
def test_starts_equal_the_single_point_criterion(sizes):
    ev = _eigen(sizes)
    rng = np.random.default_rng(0)
    pts = rng.uniform(0.01, 5.0, size=(6, 3))
    pts[0, 2] = 0.0  # a start without the shared component
    batch = ev(pts, grad=False)
    for mu, f in zip(pts, batch):
        assert f == pytest.approx(ev(mu, grad=False), rel=1e-12)


def test_starts_multiply_g_by_the_criterion_columns_only(monkeypatch):
    # the interpreted loop (the compiled one's code): the widths of the right factors
    ev = _eigen([10, 13, 7])
    widths = []
    for name in ("_mm", "_mv", "_task", "_gt_pair", "loo_evaluate"):
        monkeypatch.setattr(_loo_kernel, name, getattr(_loo_kernel, name).py_func)
    right = _loo_kernel._right_factors.py_func
    monkeypatch.setattr(_loo_kernel, "_right_factors",
                        lambda *a: widths.append(right(*a).shape[1]) or right(*a))
    pts = np.array([[0.5, 0.3, 0.2], [2.0, 1.0, 0.0]])
    sL, sF = np.sqrt(pts[:, [1]]), np.sqrt(pts[:, [2]])
    sL = np.repeat(sL, np.diff(ev.eL), axis=1)
    sF = np.ascontiguousarray(np.repeat(sF, np.diff(ev.eZ), axis=1))
    f = _loo_kernel.loo_criteria.py_func(
        np.ascontiguousarray(pts[:, 0]), sL, sF, ev.off, *ev.bufs, ev._low, ev.eL, ev.eZ,
        ev.dense, 3)
    r = int(ev.off[1, 5] - ev.off[0, 5])
    assert widths and set(widths) == {r + 1}
    np.testing.assert_allclose(f, ev(pts, grad=False), rtol=1e-12)
    # the search's evaluations: the gradient's columns too, with or without it
    widths.clear()
    monkeypatch.setattr(_loo_eigen, "loo_evaluate", _loo_kernel.loo_evaluate)
    ev._evaluate(pts[0], False, False)
    assert set(widths) == {2 * r + 1}


def test_the_result_is_evaluated_once_for_its_criterion_and_beta(monkeypatch):
    ev = _eigen([10, 13, 7, 12])
    mu = np.array([0.6, 0.4, 0.1])
    f_grad, _ = ev._evaluate(mu, True, False)
    calls = []
    evaluate = EigenLOO._evaluate
    monkeypatch.setattr(EigenLOO, "_evaluate",
                        lambda self, *a: calls.append(a[1:]) or evaluate(self, *a))
    f = ev(mu, grad=False)
    f_full, beta, res = ev(mu, grad=False, full=True)
    assert calls == [(False, True)]  # one criterion-only call, beta kept
    assert f == f_full == f_grad  # (the criterion rounds as with the gradient)
    _, beta0, res0 = evaluate(ev, mu, False, True)
    for a, b in zip(beta + res, beta0 + res0):
        np.testing.assert_array_equal(a, b)
    # another point: evaluated again; a point the search saw: from its memory
    ev(2.0 * mu, grad=False)
    assert calls == [(False, True)] * 2
    f2, _ = ev(3.0 * mu)
    assert ev(3.0 * mu, grad=False) == f2 and len(calls) == 3
