"""Paper 002 (FGM): its data generators and small reproductions of its experiments."""

import numpy as np
import pytest

from kernlearn.datasets import make_fgm_group_synthetic, make_fgm_synthetic


def test_fgm_synthetic_follows_sec_6_2_1():
    # Sec. 6.2.1: X ~ N(0, 1); 400 informative weights w0 ~ U(0, 1) (all
    # positive); Type II = w0 ** 0.3, Type III = w0 ** 3; y = sign(X w), no noise.
    data = {t: make_fgm_synthetic(300, 2000, 400, weight_type=t, n_test=100, random_state=3)
            for t in ("I", "II", "III")}
    X, y, Xt, yt, w0 = data["I"]
    support = np.flatnonzero(w0)
    assert support.size == 400
    assert np.all((w0[support] > 0) & (w0[support] <= 1))
    # U(0, 1): mean 1/2, variance 1/12, and no sign symmetry.
    assert abs(w0[support].mean() - 0.5) < 0.05
    assert abs(w0[support].var() - 1 / 12) < 0.015
    for t, power in (("II", 0.3), ("III", 3.0)):
        Xk, yk, Xtk, ytk, wk = data[t]
        np.testing.assert_array_equal(Xk, X)
        np.testing.assert_array_equal(Xtk, Xt)
        np.testing.assert_allclose(wk, w0**power)
        np.testing.assert_array_equal(yk, np.sign(Xk @ wk))
    np.testing.assert_array_equal(y, np.sign(X @ w0))
    np.testing.assert_array_equal(yt, np.sign(Xt @ w0))
    # Entries of X are standard normal.
    assert abs(X.mean()) < 0.01 and abs(X.std() - 1) < 0.01
    # Type II is flatter and Type III sharper than Type I (Fig. 1(a)).
    sorted_w = {t: np.sort(d[-1][support]) for t, d in data.items()}
    assert sorted_w["II"][0] > sorted_w["I"][0] > sorted_w["III"][0]


def test_fgm_group_synthetic_follows_sec_7_2():
    # Sec. 7.2: X ~ N(0, 1), consecutive groups of 10, 100 informative groups
    # with N(0, 1) weights, y = sign(X w).
    X, y, Xt, yt, w, groups = make_fgm_group_synthetic(
        400, 5000, n_test=200, random_state=0)
    assert X.shape == (400, 5000) and Xt.shape == (200, 5000)
    assert len(groups) == 500 and all(np.array_equal(g, np.arange(10 * i, 10 * i + 10))
                                      for i, g in enumerate(groups))
    informative = np.unique(np.flatnonzero(w) // 10)
    assert informative.size == 100
    block = w.reshape(500, 10)
    assert np.all(block[informative] != 0)  # whole groups are informative
    vals = block[informative].ravel()
    assert abs(vals.mean()) < 0.1 and abs(vals.std() - 1) < 0.1 and (vals < 0).any()
    np.testing.assert_array_equal(y, np.sign(X @ w))
    np.testing.assert_array_equal(yt, np.sign(Xt @ w))
    with pytest.raises(ValueError, match="multiple of group_size"):
        make_fgm_group_synthetic(10, 25, group_size=10)
    with pytest.raises(ValueError, match="n_informative_groups"):
        make_fgm_group_synthetic(10, 20, group_size=10, n_informative_groups=3)


def test_group_fgm_recovers_informative_groups_of_sec_7_2():
    # A small version of Fig. 15: group FGM with the logistic loss (B = 5 groups
    # per constraint, T = 4) on 1000 x 2000 features in 200 groups, 10
    # informative.  Measured (seed 1): 6 groups chosen, all 6 informative, test
    # accuracy 0.80.
    from kernlearn import FGMClassifier

    X, y, Xt, yt, w, groups = make_fgm_group_synthetic(
        1000, 2000, n_informative_groups=10, n_test=500, random_state=1)
    clf = FGMClassifier(B=5, C=10.0, loss="logistic", groups=groups, max_outer_iter=4).fit(X, y)
    chosen = np.unique(clf.selected_features_ // 10)
    informative = np.unique(np.flatnonzero(w) // 10)
    assert chosen.size >= 5
    assert np.isin(chosen, informative).mean() >= 0.9
    # whole groups enter the model
    assert clf.selected_features_.size == 10 * chosen.size
    assert clf.score(Xt, yt) > 0.75
