"""The papers' synthetic generators follow their definitions (issue 23, item 15)."""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn.datasets import (
    load_svmlight,
    make_fgm_group_synthetic,
    make_fgm_synthetic,
    make_sinc,
    write_fgm_synthetic_svmlight,
)


def _balanced(y, n_sd=4):
    """Fraction of +1 within ``n_sd`` binomial standard deviations of 1/2."""
    frac = np.mean(y == 1)
    return abs(frac - 0.5) < n_sd * 0.5 / np.sqrt(len(y)), frac


# ----------------------------------------------------------- paper 002, 6.2.1
@pytest.mark.parametrize("weight_type", ["I", "II", "III"])
def test_fgm_synthetic_dense_is_sign_of_gaussian_times_sparse_w(weight_type):
    X, y, Xt, yt, w = make_fgm_synthetic(3000, 300, 40, weight_type=weight_type,
                                         n_test=500, random_state=0)
    assert np.count_nonzero(w) == 40  # the support size
    assert np.all((w >= 0) & (w <= 1))
    np.testing.assert_array_equal(y, np.sign(X @ w))
    np.testing.assert_array_equal(yt, np.sign(Xt @ w))
    assert set(np.unique(y)) == {-1.0, 1.0}
    ok, frac = _balanced(y)
    assert ok, frac
    # the entries are standard normal
    assert abs(X.mean()) < 0.01 and abs(X.std() - 1) < 0.01


def test_fgm_weight_types_share_support_and_w0():
    """Type II = w0^0.3 (flatter), Type III = w0^3 (sharper), same X and support."""
    X1, _, w1 = make_fgm_synthetic(50, 500, 60, weight_type="I", random_state=4)
    X2, _, w2 = make_fgm_synthetic(50, 500, 60, weight_type="II", random_state=4)
    X3, _, w3 = make_fgm_synthetic(50, 500, 60, weight_type="III", random_state=4)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(X1, X3)
    s = np.flatnonzero(w1)
    np.testing.assert_array_equal(s, np.flatnonzero(w2))
    np.testing.assert_array_equal(s, np.flatnonzero(w3))
    np.testing.assert_allclose(w2[s], w1[s] ** 0.3)
    np.testing.assert_allclose(w3[s], w1[s] ** 3)
    # w0 ~ U(0, 1]: mean 1/2 (60 draws: sd 0.037)
    assert abs(w1[s].mean() - 0.5) < 0.15
    # sorted, Type II decreases more slowly and Type III faster than Type I
    r = lambda v: np.sort(v[s])[::-1]  # noqa: E731
    assert r(w2)[-1] / r(w2)[0] > r(w1)[-1] / r(w1)[0] > r(w3)[-1] / r(w3)[0]


# ----------------------------------------------------------- paper 002, 6.2.3
def test_sparse_fgm_synthetic_labels_are_balanced_not_plus_one_by_default():
    """Rows keeping no informative entry used to be labelled +1 (13.8 % of them)."""
    X, y, w = make_fgm_synthetic(6000, 4000, 400, density=0.005, random_state=0)
    assert sp.isspmatrix_csr(X) or sp.issparse(X)
    assert abs(X.nnz / (6000 * 4000) - 0.005) < 1e-4
    tied = np.asarray(X @ w).ravel() == 0
    # (1 - 0.005)^400 = 13.5 % of the rows touch no informative feature
    assert 0.11 < tied.mean() < 0.16
    ok, frac = _balanced(y)
    assert ok, frac
    ok, frac = _balanced(y[tied])  # not all +1: the dense matrix's labels
    assert ok, frac


def test_sparse_fgm_synthetic_samples_the_entries_of_the_labelled_dense_matrix():
    """A row that keeps every informative entry has the label sign(Xw) exactly."""
    X, y, w = make_fgm_synthetic(3000, 40, 3, density=0.8, random_state=1)
    s = np.flatnonzero(w)
    full = np.asarray((X[:, s] != 0).sum(axis=1)).ravel() == s.size
    assert full.sum() > 1000  # 0.8^3 of the rows
    np.testing.assert_array_equal(np.sign(X[full] @ w), y[full])
    # other rows: the kept part agrees with the label more often than chance
    part = ~full & (np.asarray(X @ w).ravel() != 0)
    assert np.mean(np.sign(X[part] @ w) == y[part]) > 0.6
    # the kept entries in informative columns are still N(0, 1)
    vals = X[:, s].data
    assert abs(vals.mean()) < 0.06 and abs(vals.std() - 1) < 0.06


def test_sparse_fgm_synthetic_sampled_labels_break_ties_by_a_coin():
    X, y, w = make_fgm_synthetic(6000, 4000, 400, density=0.005, random_state=2,
                                 labels="sampled")
    xw = np.asarray(X @ w).ravel()
    np.testing.assert_array_equal(y[xw != 0], np.sign(xw[xw != 0]))
    ok, frac = _balanced(y[xw == 0])
    assert ok, frac
    with pytest.raises(ValueError, match="labels must be"):
        make_fgm_synthetic(10, 10, 2, density=0.5, labels="sparse")
    with pytest.raises(ValueError, match="density must be in"):
        make_fgm_synthetic(10, 10, 2, density=0.0)


def test_written_sparse_file_has_balanced_labels(tmp_path):
    path = tmp_path / "s.svm"
    w = write_fgm_synthetic_svmlight(path, 4000, 2000, 200, density=0.005,
                                     chunk_rows=1500, random_state=0)
    X, y = load_svmlight(path, n_features=2000)[:2]
    assert X.shape == (4000, 2000) and np.count_nonzero(w) == 200
    tied = np.asarray(X @ w).ravel() == 0
    assert 0.3 < tied.mean() < 0.45  # (1 - 0.005)^200 = 36.7 %
    for part in (y, y[tied]):
        ok, frac = _balanced(part)
        assert ok, frac
    # entries rounded to 4 decimals (a short file), also at density 1
    write_fgm_synthetic_svmlight(path, 20, 30, 5, density=1.0, random_state=0)
    X, _ = load_svmlight(path, n_features=30)[:2]
    np.testing.assert_array_equal(X.data, np.round(X.data, 4))


# ------------------------------------------------------------- paper 002, 7.2
def test_fgm_group_synthetic_definition():
    X, y, Xt, yt, w, groups = make_fgm_group_synthetic(
        3000, 400, group_size=10, n_informative_groups=6, n_test=200, random_state=0)
    assert len(groups) == 40 and all(len(g) == 10 for g in groups)
    np.testing.assert_array_equal(np.concatenate(groups), np.arange(400))
    informative = np.unique(np.flatnonzero(w) // 10)
    assert informative.size == 6
    # whole groups are informative, with N(0, 1) weights (both signs)
    assert np.count_nonzero(w) == 60 and (w < 0).any() and (w > 0).any()
    np.testing.assert_array_equal(y, np.sign(X @ w))
    np.testing.assert_array_equal(yt, np.sign(Xt @ w))
    ok, frac = _balanced(y)
    assert ok, frac
    with pytest.raises(ValueError, match="multiple of group_size"):
        make_fgm_group_synthetic(10, 25, group_size=10)


# ------------------------------------------------------------- paper 003, 5.1
def test_sinc_definition():
    X, y, Xt, yt = make_sinc(4000, 500, snr_db=10.0, random_state=0)
    assert X.shape == (4000, 2) and Xt.shape == (500, 2)
    assert X.min() >= -5 and X.max() <= 5
    r = np.linalg.norm(Xt, axis=1)
    np.testing.assert_allclose(yt, np.sin(r) / r)  # clean test targets
    f = np.sin(np.linalg.norm(X, axis=1)) / np.linalg.norm(X, axis=1)
    snr = 10 * np.log10(np.mean(f**2) / np.var(y - f))
    assert abs(snr - 10) < 0.3
    assert abs(np.mean(y - f)) < 0.02  # zero-mean white noise
