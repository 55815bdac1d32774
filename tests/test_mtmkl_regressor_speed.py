"""The leave-one-out search's compiled evaluation (``methods/mtmkl/_loo_kernel.py``)
reads each task's ``G`` (its largest array) once for ``W1``, ``G Delta G' y`` and
the gradient's ``W2`` (one product with ``[om X, om yh, lm dl^2 X]``) and once for
the gradient's ``G' v`` and ``(G * G)' S``: on hostile task shapes (tasks of two
rows next to one of 150, zero kernel weights, zero sample weights in a fit) it
gives the inverse-based criterion's numbers, its criterion does not depend on
whether the gradient is asked for, and the fitted models equal the inverse-based
search's."""

import numpy as np
import pytest
from test_mtmkl_loo_fast import (  # (same folder: bucketed inputs)
    _assert_central_differences,
    _eigen,
    _old,
    _problem,
)

from kernlearn import MultitaskMKLRegressorCV
from kernlearn.methods.mtmkl import selection
from kernlearn.methods.mtmkl._loo_eigen import EigenLOO
from kernlearn.methods.mtmkl._loo_kernel import _gt_pair, _right_factors

HOSTILE = [  # sizes (tasks of two rows beside a large one), weighted, shared components
    ([2, 2, 150, 3, 9], True, True),
    ([2, 120], False, True),
    ([150, 2, 5], True, False),
]
POINTS = [np.array([0.3, 1.7, 0.6]), np.array([0.0, 2.0, 0.5]),  # no RBF: om = 0
          np.array([4.0, 0.0, 0.0]), np.array([25.0, 0.05, 3.0])]


@pytest.mark.parametrize(("m", "na", "r"), [(1, 1, 1), (7, 3, 2), (40, 31, 6), (3, 0, 2)])
def test_the_one_pass_products_equal_numpy(m, na, r):
    rng = np.random.default_rng(m + na)
    G, v, S = rng.normal(size=(m, na)), rng.normal(size=m), rng.normal(size=m)
    gv, gs = _gt_pair(G, v, S)
    np.testing.assert_allclose(gv, G.T @ v, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(gs, (G * G).T @ S, rtol=1e-13, atol=1e-14)
    om, lm, dl = rng.uniform(0, 1, na), rng.uniform(0, 3, na), rng.uniform(0, 1, na)
    X, yh = rng.normal(size=(na, r)), rng.normal(size=na)
    Y = _right_factors(om, lm, dl, X, yh)
    assert Y.shape == (na, 2 * r + 1)
    np.testing.assert_array_equal(Y[:, :r], om[:, None] * X)
    np.testing.assert_array_equal(Y[:, r], om * yh)
    np.testing.assert_array_equal(Y[:, r + 1:], (lm * dl * dl)[:, None] * X)
    # the starts' (criterion only): the first r + 1 columns
    np.testing.assert_array_equal(_right_factors(om, lm, dl, X, yh, True), Y[:, :r + 1])


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_shapes_give_the_inverse_based_numbers(case):
    # a wrong column of the joint product (W1, G Delta G' y or W2) or of the
    # one-pass gradient products moves the criterion or the gradient far above 1e-8
    sizes, weighted, shared = case
    p = _problem(sizes, weighted, shared, seed=21)
    ev = _eigen(p)
    assert isinstance(ev, EigenLOO)
    for mu in POINTS:
        mu = mu[:2 + len(p["shared"])]
        f0, g0, b0 = _old(p, mu, full=True)
        f1, g1, b1 = ev._evaluate(mu, True, True)
        assert f1 == pytest.approx(f0, rel=1e-10)
        np.testing.assert_allclose(g1, g0, rtol=1e-8, atol=1e-10 * np.abs(g0).max())
        for a, b in zip(b1, b0):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10 * np.abs(b).max())
        # the criterion's rounding does not depend on the gradient (the search's
        # memory of the points seen returns either)
        assert ev._evaluate(mu, False, False) == f1
        assert ev(mu[None], grad=False)[0] == pytest.approx(f1, rel=1e-12)


@pytest.mark.parametrize("case", HOSTILE[:2])
def test_hostile_gradient_matches_central_differences(case):
    sizes, weighted, shared = case
    p = _problem(sizes, weighted, shared, seed=22)
    ev = _eigen(p)
    mu = np.linspace(0.4, 2.0, 2 + len(p["shared"]))
    _assert_central_differences(ev, mu)


def test_a_fit_on_hostile_tasks_equals_the_inverse_based_search(monkeypatch):
    # tasks of 2 and 3 rows beside one of 160, some zero sample weights
    rng = np.random.default_rng(5)
    t = np.r_[[0, 0], [1, 1, 1], np.full(160, 2), np.full(12, 3)]
    X = rng.normal(size=(len(t), 4))
    y = X[:, 0] * (t - 1.5) + np.sin(2 * X[:, 1]) + 0.2 * rng.normal(size=len(t))
    w = rng.uniform(0.5, 2.0, len(t))
    w[[10, 40, 170]] = 0.0
    built = []
    init = EigenLOO.__init__
    monkeypatch.setattr(EigenLOO, "__init__",
                        lambda self, *a: built.append(1) or init(self, *a))
    new = MultitaskMKLRegressorCV().fit(X, y, task_index=t, sample_weight=w)
    assert built
    monkeypatch.setattr(selection, "eigen_plan", lambda *a: False)
    old = MultitaskMKLRegressorCV().fit(X, y, task_index=t, sample_weight=w)
    assert len(built) == 1
    assert new.C_ == pytest.approx(old.C_, rel=1e-5)
    p_new, p_old = new.predict(X, task_index=t), old.predict(X, task_index=t)
    assert np.max(np.abs(p_new - p_old)) <= 1e-6 * np.ptp(p_old)
