"""FGMClassifier's default loss weight (issue 21): C=10, not C=1.

With ``T`` constraints sharing the weight, FGM's squared group-l1 penalty
shrinks like an l2 SVM at about ``C / T``.  On data whose signal is a small
feature of many correlated columns (the suite set hill-valley: each row a
noisy curve on a large common level, with a hill or a valley) the separating
direction cancels the common level and needs large weights; ``C=1`` then
underfits (hill-valley: 5-6 points below ``LinearSVC()``), ``C=10`` does not.
"""

import numpy as np
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from kernlearn import FGMClassifier


def _hill_valley_like(seed, n=600, p=100, height=0.3, level=10.0):
    """Curves on a large random level with a small hill (y=1) or valley (y=0)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    t = np.arange(p)
    bump = np.exp(-0.5 * ((t - p / 2) / (p / 10)) ** 2)
    X = (level * rng.normal(size=(n, 1)) + height * np.where(y == 1, 1.0, -1.0)[:, None] * bump
         + rng.normal(size=(n, p)))
    half = n // 2
    return X[:half], y[:half], X[half:], y[half:]


def test_default_C_is_ten():
    assert FGMClassifier().get_params()["C"] == 10.0


def test_default_does_not_underfit_spread_signal():
    """The default keeps up with LinearSVC() where C=1 clearly underfits."""
    default, c1, svc = [], [], []
    for seed in range(4):
        Xtr, ytr, Xte, yte = _hill_valley_like(seed)
        default.append(FGMClassifier().fit(Xtr, ytr).score(Xte, yte))
        c1.append(FGMClassifier(C=1.0).fit(Xtr, ytr).score(Xte, yte))
        svc.append(make_pipeline(StandardScaler(), LinearSVC()).fit(Xtr, ytr).score(Xte, yte))
    default, c1, svc = np.mean(default), np.mean(c1), np.mean(svc)
    # the data have the structure that C=1 cannot fit (measured: 0.756 vs 0.804)
    assert svc - c1 >= 0.03
    # the default recovers it (measured 0.793): within 2 points of LinearSVC()
    assert default >= c1 + 0.02
    assert default >= svc - 0.02
