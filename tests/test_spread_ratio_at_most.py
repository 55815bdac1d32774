"""The spread ratio's shortcut for callers that ask only whether it exceeds a bound.

``kernlearn.widths.pairwise_spread_ratio(..., at_most=t)`` returns ``t`` without
the median's partition when a count of the pairs shows the ratio is at most
``t``; SLKL's width rule asks it only whether the ratio exceeds
``HEAVY_SPREAD_RATIO`` (issue 24, the thirty-first pass).  The decision
``ratio > t`` must be the exact ratio's, at any ``t`` and on ties, and the
models those of the exact ratio, bit for bit.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor, widths
from kernlearn.methods import slkl
from kernlearn.methods.slkl import HEAVY_SPREAD_RATIO
from kernlearn.widths import _median_at_least, pairwise_spread_ratio


def _matrices():
    rng = np.random.default_rng(0)
    heavy = rng.normal(size=(80, 4))
    heavy[:4] *= 20.0  # four far-out rows: a ratio above 3
    return {
        "normal": rng.normal(size=(300, 6)),
        "heavy": heavy,
        "lognormal": np.exp(2.0 * rng.normal(size=(120, 3))),
        "ties": rng.integers(0, 3, (90, 4)).astype(float),
        "constant": np.ones((10, 3)),
        "one row": rng.normal(size=(1, 3)),
        "sparse": sp.random(70, 20, density=0.2, random_state=1, format="csr"),
    }


@pytest.mark.parametrize("name", list(_matrices()))
def test_the_bound_decides_as_the_exact_ratio(name):
    X = _matrices()[name]
    exact = pairwise_spread_ratio(X)
    bounds = [0.5, 1.0, 1.05, 1.5, HEAVY_SPREAD_RATIO, 100.0, exact,
              exact * (1 + 1e-9), exact * (1 - 1e-9), exact * (1 + 1e-5),
              np.nextafter(exact, np.inf), np.nextafter(exact, -np.inf)]
    for t in bounds:
        fast = pairwise_spread_ratio(X, at_most=t)
        assert (fast > t) == (exact > t), (name, t)
        # the value returned is the exact ratio or the bound itself
        assert fast == exact or (fast == t and exact <= t), (name, t)


def test_the_median_is_skipped_only_well_below_the_bound(monkeypatch):
    X = _matrices()["normal"]
    exact = pairwise_spread_ratio(X)
    assert 1.0 < exact < 1.5
    calls = []
    median = np.median
    monkeypatch.setattr(widths.np, "median", lambda *a, **k: calls.append(1) or median(*a, **k))
    assert pairwise_spread_ratio(X, at_most=HEAVY_SPREAD_RATIO) == HEAVY_SPREAD_RATIO
    assert calls == []  # the count decided
    # within the count's margin of the bound, the exact ratio is computed
    assert pairwise_spread_ratio(X, at_most=exact * (1 + 1e-7)) == exact
    assert pairwise_spread_ratio(X, at_most=exact) == exact
    assert len(calls) == 2


def test_the_count_never_claims_a_median_it_cannot_show():
    rng = np.random.default_rng(2)
    for n in (1, 2, 3, 4, 7, 10, 11, 50):
        for ties in (False, True):
            d = rng.integers(0, 4, n).astype(float) if ties else rng.exponential(size=n)
            med = np.median(d)
            s = np.sort(d)
            # thresholds at, between and just beside the order statistics
            cs = np.r_[s, np.nextafter(s, np.inf), np.nextafter(s, -np.inf),
                       (s[:-1] + s[1:]) / 2, med, np.inf, np.nan, 0.0, -1.0]
            for c in cs:
                if _median_at_least(d, c):
                    assert med >= c > 0, (n, ties, c)
            # and it decides when c is below the lower middle order statistic
            low = s[(n - 1) // 2]
            if low > 0:
                assert _median_at_least(d, low / 2), (n, ties)


@pytest.mark.parametrize("Est, task", [(LowRankKernelRegressor, "reg"),
                                       (LowRankKernelClassifier, "clf")])
def test_models_equal_with_the_exact_ratio(monkeypatch, Est, task):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 5))
    y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.normal(size=200)
    y = y if task == "reg" else (y > np.median(y)).astype(int)
    Xt = rng.normal(size=(30, 5))
    exact = slkl.pairwise_spread_ratio
    asked = []

    def spy(X, rows=None, at_most=None):
        asked.append(at_most)
        return exact(X, rows, at_most=at_most)

    out = "predict" if task == "reg" else "decision_function"
    with threadpool_limits(1):
        monkeypatch.setattr(slkl, "pairwise_spread_ratio", spy)
        fast = Est(random_state=0).fit(X, y)
        monkeypatch.setattr(slkl, "pairwise_spread_ratio",
                            lambda X, rows=None, at_most=None: exact(X, rows))
        ref = Est(random_state=0).fit(X, y)
    assert asked == [HEAVY_SPREAD_RATIO]  # the fit asked with the bound
    np.testing.assert_array_equal(fast.center_factors_, ref.center_factors_)
    np.testing.assert_array_equal(getattr(fast, out)(Xt), getattr(ref, out)(Xt))


def test_a_bound_an_ulp_below_the_ratio_is_exceeded():
    # without the count's margin, mean / bound rounds onto the median on
    # some of these few-row sets and the shortcut claims "not above"
    rng = np.random.default_rng(7)
    for _ in range(600):
        X = rng.normal(size=(rng.integers(3, 9), 2))
        exact = pairwise_spread_ratio(X)
        below = np.nextafter(exact, -np.inf)
        for t in (below, np.nextafter(below, -np.inf)):
            assert pairwise_spread_ratio(X, at_most=t) == exact > t
