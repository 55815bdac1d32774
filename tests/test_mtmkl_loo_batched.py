"""The multitask leave-one-out search's evaluation (``methods/mtmkl/_loo_eigen.py``,
one compiled call over every task: ``_loo_kernel.py``): the criterion and
gradient of a point seen before come from memory with the same numbers as
evaluating it again; tasks of two rows, many tasks and buckets of different
sizes, several factored kernels and shared components give the inverse-based
criterion's numbers (to 1e-10); the search runs the same L-BFGS-B path as
without the memory and ends no higher than the inverse-based search."""

import numpy as np
import pytest
from test_mtmkl_loo_fast import (  # (same folder: bucketed inputs)
    _assert_central_differences,
    _eigen,
    _old,
    _problem,
)

from kernlearn import MultitaskMKLRegressorCV
from kernlearn.methods.mtmkl import _loo_eigen, selection
from kernlearn.methods.mtmkl._loo_eigen import EigenLOO
from kernlearn.methods.mtmkl.selection import learn_loo_weights

CASES = [  # sizes (tasks of two rows, the fewest a fit takes; many buckets), weights,
    # shared components
    ([2, 2, 9, 14, 3, 31, 5], True, True),
    ([2, 3, 2, 40, 3, 70], False, True),
    ([3, 7, 12, 20, 33, 50, 64, 80], True, False),
]


def _points(n_w, seed=0, n=6):
    rng = np.random.default_rng(seed)
    mu = rng.uniform(0.0, 4.0, size=(n, n_w)) * rng.choice([0.01, 1.0, 30.0], (n, 1))
    mu[1, 0] = 0.0  # a weight on its bound
    return mu


@pytest.mark.parametrize("case", CASES)
def test_random_points_give_the_inverse_based_numbers(case):
    sizes, weighted, shared = case
    p = _problem(sizes, weighted, shared, seed=3)
    assert len(p["masks"]) > 1  # several buckets of different sizes
    ev = _eigen(p)
    assert isinstance(ev, EigenLOO)
    for mu in _points(2 + len(p["shared"])):
        f0, g0 = _old(p, mu)
        f1, g1 = ev(mu)
        assert f1 == pytest.approx(f0, rel=1e-10)
        np.testing.assert_allclose(g1, g0, rtol=1e-8, atol=1e-10 * np.abs(g0).max())


@pytest.mark.parametrize("case", CASES)
def test_a_point_seen_before_gives_the_numbers_of_a_fresh_evaluation(case):
    sizes, weighted, shared = case
    p = _problem(sizes, weighted, shared, seed=4)
    ev, fresh = _eigen(p), _eigen(p)
    for mu in _points(2 + len(p["shared"]), seed=1):
        f1, g1 = ev(mu)
        g1[:] = np.nan  # the caller's copy: changing it leaves the kept one
        f2, g2 = ev(mu.copy())
        f3, g3 = fresh._evaluate(mu, True, False)
        assert f2 == f1 == f3 and np.array_equal(g2, g3)
        # the criterion alone (the search's last call) is the same number
        assert ev(mu, grad=False) == f3 == fresh._evaluate(mu, False, False)
        f4, g4, beta4 = ev(mu, full=True)
        f5, g5, beta5 = fresh._evaluate(mu, True, True)
        assert f4 == f5 and np.array_equal(g4, g5)
        assert all(np.array_equal(a, b) for a, b in zip(beta4, beta5))


def test_a_point_seen_before_is_not_evaluated_again(monkeypatch):
    p = _problem([2, 2, 9, 14, 31], True, True, seed=5)
    ev = _eigen(p)
    calls = []
    evaluate = EigenLOO._evaluate
    monkeypatch.setattr(EigenLOO, "_evaluate",
                        lambda self, *a: calls.append(1) or evaluate(self, *a))
    mu = np.array([0.4, 1.3, 0.2])
    ev(mu)
    ev(mu, grad=False)
    ev(mu * 1.0)
    assert len(calls) == 1
    ev(np.nextafter(mu, 1.0))  # another point, if only by one unit in the last place
    assert len(calls) == 2


def test_the_memory_is_bounded(monkeypatch):
    monkeypatch.setattr(_loo_eigen, "_MEMO", 3)
    ev = _eigen(_problem([4, 9, 14], False, False, seed=6))
    for c in range(1, 6):
        ev(np.array([c, 1.0]))
    assert len(ev._memo) == 3
    assert list(ev._memo) == [np.array([c, 1.0]).tobytes() for c in (3, 4, 5)]


@pytest.mark.parametrize("case", CASES[:2])
def test_gradient_matches_central_differences(case):
    sizes, weighted, shared = case
    p = _problem(sizes, weighted, shared, seed=7)
    ev = _eigen(p)
    mu = np.array([0.7, 1.9, 0.4])[:2 + len(p["shared"])]
    _, g = ev(mu)
    for j in range(len(mu)):
        h = 1e-5 * mu[j]
        e = np.zeros_like(mu)
        e[j] = h
        fd = (ev(mu + e, grad=False) - ev(mu - e, grad=False)) / (2 * h)
        assert g[j] == pytest.approx(fd, rel=1e-5, abs=1e-7 * np.abs(g).max())


def test_the_fit_runs_the_same_search_as_without_the_memory(monkeypatch):
    rng = np.random.default_rng(8)
    sizes = [14] * 11  # Grunfeld's shape: 11 tasks of 14 rows
    X = rng.normal(size=(sum(sizes), 3))
    t = np.repeat(np.arange(len(sizes)), sizes)
    y = X[:, 0] * (1 + 0.2 * t) + np.sin(X[:, 1]) + 0.3 * rng.normal(size=len(t))
    points = []
    call = EigenLOO.__call__

    def logged(self, mu, grad=True, full=False):
        points.append(np.array(mu))
        return call(self, mu, grad, full)

    monkeypatch.setattr(EigenLOO, "__call__", logged)
    a = MultitaskMKLRegressorCV().fit(X, y, task_index=t)
    with_memory = points[:]
    points.clear()

    def without_memory(self, mu, grad=True, full=False):
        points.append(np.array(mu))
        return self._evaluate(np.asarray(mu, dtype=float), grad, full)

    monkeypatch.setattr(EigenLOO, "__call__", without_memory)
    b = MultitaskMKLRegressorCV().fit(X, y, task_index=t)
    assert len(points) == len(with_memory)
    assert all(np.array_equal(u, v) for u, v in zip(points, with_memory))
    assert a.C_ == b.C_
    np.testing.assert_array_equal(a.predict(X, task_index=t), b.predict(X, task_index=t))


WIDE = [  # sizes, weights, shared components, kernels, largest weight: many tasks of different
    # sizes (Cigar's 46 tasks; tasks of two rows), two factored kernels and two
    # shared components (each kernel's and component's own columns)
    ([2, 5, 21, 2, 14, 30, 9, 3] * 6, True, True, None, np.inf),
    ([2, 3, 14, 26] * 4, False, True,
     [("rbf", {"gamma": 0.5}), "linear", ("linear", {}, [0, 1])], np.inf),
    # no RBF; weights up to 4 (at 30-100 the gradient is a difference of nearly
    # equal terms: the inverse-based one is itself only good to ~1e-8 there, the
    # former batched NumPy evaluation differed from it by 2.6e-8)
    ([2, 7, 18, 33], True, False, ["linear", ("linear", {}, [1, 2])], 4.0),
]


@pytest.mark.parametrize("case", WIDE)
def test_one_compiled_call_gives_the_inverse_based_numbers(case, monkeypatch):
    sizes, weighted, shared, kernels, cap = case
    p = _problem(sizes, weighted, shared, seed=9, kernels=kernels)
    ev = _eigen(p)
    calls = []
    evaluate = _loo_eigen.loo_evaluate
    monkeypatch.setattr(_loo_eigen, "loo_evaluate",
                        lambda *a: calls.append(1) or evaluate(*a))
    n_w = p["grams"][0].shape[0] + len(p["shared"])
    for mu in _points(n_w, seed=2):
        mu = mu * min(1.0, cap / mu.max())
        f0, g0, b0 = _old(p, mu, full=True)
        calls.clear()
        f1, g1, b1 = ev._evaluate(mu, True, True)
        assert len(calls) == 1  # every task and bucket in one call
        assert f1 == pytest.approx(f0, rel=1e-10)
        np.testing.assert_allclose(g1, g0, rtol=1e-10, atol=1e-10 * np.abs(g0).max())
        for a, b in zip(b1, b0):  # each bucket's beta, zero on its padding
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10 * np.abs(b).max())
        _, _, r0 = _old(p, mu, grad=False, full=True)
        _, _, r1 = ev._evaluate(mu, False, True)
        for a, b, mask in zip(r1, r0, p["masks"]):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10 * np.abs(b).max())
            assert not a[~mask].any()
        # the criterion alone is the same number as with the gradient
        assert ev._evaluate(mu, False, False) == f1


@pytest.mark.parametrize("case", WIDE[1:])
def test_wide_gradient_matches_central_differences(case):
    sizes, weighted, shared, kernels, _ = case
    p = _problem(sizes, weighted, shared, seed=10, kernels=kernels)
    ev = _eigen(p)
    mu = np.linspace(0.4, 2.0, p["grams"][0].shape[0] + len(p["shared"]))
    _assert_central_differences(ev, mu)


@pytest.mark.parametrize("sizes", [[14] * 11, [21] * 12 + [2, 9]])
def test_the_search_ends_no_higher_than_the_inverse_based_search(sizes):
    # Grunfeld's and Cigar's shapes: the search follows the criterion's last
    # bits, so its path may differ from the inverse-based one's, but not its end
    p = _problem(sizes, weighted=True, shared=True, seed=11)
    args = (p["grams"], p["y_b"], p["masks"], p["w_b"])

    def old(mu, grad=True, full=False):
        return _old(p, mu, grad=grad, full=full)

    ref = learn_loo_weights(*args, shared=p["shared"], objective=old)
    got = learn_loo_weights(*args, shared=p["shared"], factors=p["factors"])
    assert isinstance(selection.loo_objective(p["grams"], p["y_b"], p["w_b"], p["masks"],
                                              p["shared"], p["factors"]), EigenLOO)
    # both ends measured with the inverse-based criterion
    f_got = old(got[0] * 2.0 * got[1], grad=False)
    f_ref = old(ref[0] * 2.0 * ref[1], grad=False)
    assert f_got <= f_ref * (1.0 + 1e-7)
    assert got[1] == pytest.approx(ref[1], rel=1e-5)
    np.testing.assert_allclose(got[0], ref[0], atol=1e-5)


def test_the_evaluation_refuses_weights_of_another_length():
    """The compiled call reads the weights by position: a vector one short was
    read past its end (a silently wrong gradient) before this check."""
    ev = _eigen(_problem([10, 13, 7, 12], shared=True, seed=5))
    n_w = ev.k + ev.S
    ev(np.ones(n_w))
    with pytest.raises(ValueError, match="weights for"):
        ev(np.ones(n_w - 1))
    with pytest.raises(ValueError, match="weights for"):
        ev(np.ones((3, n_w + 1)), grad=False)
