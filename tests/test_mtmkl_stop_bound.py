"""Mirror descent on the simplex stops on the bound of all its linearisations.

Near an interior optimum the best single linearisation certifies the gap only
to first order in the distance to the optimum; Kelley's bound of all of them
(``cutting_plane_bound``) to second order.  The loop measures its gap with it
once the single-linearisation gap is within ``_CUTS_FROM`` times ``tol``: it
stops where the optimum is certified, earlier, and the certificate holds.
"""

import numpy as np
import pytest

from kernlearn.solvers import mirror_descent as MD


def _quadratic(seed, n_groups=2, d=4):
    """Convex quadratics on the simplex with interior minimisers, and their minima."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n_groups, 6, d))
    target = rng.dirichlet(np.ones(d) * 5, size=n_groups)  # interior points
    b = np.einsum("gij,gj->gi", A, target) + 0.0
    offset = 1.0  # values well away from zero: a relative gap is meaningful

    def f(x):
        r = np.einsum("gij,gj->gi", A, x) - b
        return (r * r).sum(1) + offset

    def oracle(x, it):
        r = np.einsum("gij,gj->gi", A, x) - b
        val = (r * r).sum(1) + offset
        grad = 2 * np.einsum("gij,gi->gj", A, r)
        low = val - (grad * x).sum(1) + grad.min(1)  # the linearisation's vertex minimum
        return val, low, grad

    return f, oracle, target, offset


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_the_bound_of_all_linearisations_stops_earlier_with_a_true_certificate(
        seed, monkeypatch):
    f, oracle, _, f_star = _quadratic(seed)
    tol = 1e-3
    monkeypatch.setattr(MD, "_with_all_cuts", lambda c, v, low: low)  # single ones only
    single = MD.simplex_mirror_descent(oracle, 2, 4, max_iter=1000, tol=tol)
    monkeypatch.undo()
    # (the single gap of this quadratic stalls above ten times tol: the bound of
    # all the cuts measured at every iteration)
    monkeypatch.setattr(MD, "_CUTS_FROM", np.inf)
    cuts = MD.simplex_mirror_descent(oracle, 2, 4, max_iter=1000, tol=tol)
    assert cuts.converged
    assert cuts.n_iter < single.n_iter
    # the certificate: the lower bounds are below the true minima, and the gap
    # they leave is what the loop stopped on
    f_min = np.full(2, f_star)  # minimisers interior, residual 0
    assert np.all(cuts.lower <= f_min + 1e-12)
    assert cuts.gap <= tol * abs(cuts.objective)
    assert float((cuts.value - f_min).sum()) <= tol * abs(float(f_min.sum())) + 1e-12
    np.testing.assert_allclose(cuts.value, f(cuts.x))
    # and the recorded gap is the certified one
    assert cuts.history.last("gap") == pytest.approx(cuts.gap)


def test_far_from_tol_no_programme_is_solved(monkeypatch):
    # the single-linearisation gap above _CUTS_FROM * tol: no LP in the loop
    # (milliseconds each), only the certificate at max_iter (one per open group)
    _, oracle, _, _ = _quadratic(0)
    calls = []
    real = MD.cutting_plane_bound
    monkeypatch.setattr(MD, "cutting_plane_bound",
                        lambda a, g: calls.append(len(a)) or real(a, g))
    res = MD.simplex_mirror_descent(oracle, 2, 4, max_iter=6, tol=1e-12)
    assert calls == [6, 6] and not res.converged


def test_within_ten_times_tol_the_last_cuts_stop_the_loop(monkeypatch):
    # an optimum inside the simplex whose single gap reaches 10 tol but not tol:
    # the loop measures the window of its last cuts and stops there
    def oracle(x, it):
        g = np.zeros_like(x)
        g[:, 0] = x[:, 0] - 0.8
        v = 1.0 + 0.5 * (x[:, 0] - 0.8) ** 2
        return v, v + g.min(1) - (g * x).sum(1), g

    sizes = []
    real = MD.cutting_plane_bound
    monkeypatch.setattr(MD, "cutting_plane_bound",
                        lambda a, g: sizes.append(len(a)) or real(a, g))
    monkeypatch.setattr(MD, "_CUTS_WINDOW", 8)
    res = MD.simplex_mirror_descent(oracle, 1, 2, max_iter=100, tol=1e-3)
    assert res.converged and res.n_iter < 100
    assert sizes and max(sizes) <= 8  # the window, not every cut
    assert res.lower[0] <= 1.0 <= res.value[0]
