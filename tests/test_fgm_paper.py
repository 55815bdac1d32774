"""Paper 002 (FGM): its data generators and small reproductions of its experiments."""

import numpy as np
import pytest

from kernlearn.datasets import make_fgm_synthetic


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
