"""benchmarks/data_kinds.py: each rewrite does what it says; splits and summary."""

import subprocess
import sys

import numpy as np
import pytest
from bench_scripts import BENCHMARKS, load_script


@pytest.fixture(scope="module")
def kinds():
    yield from load_script("data_kinds")


@pytest.fixture
def X():
    rng = np.random.default_rng(3)
    # 200 rows, 4 columns on different scales, one a count with zeros
    return np.column_stack([rng.normal(size=200), 50 + 10 * rng.normal(size=200),
                            rng.poisson(1.0, size=200), rng.exponential(size=200)])


TRAIN = np.arange(0, 200, 2)  # the even rows train


def _apply(kinds, kind, X, seed=0):
    return kinds.transform(kind, X, TRAIN, np.random.default_rng(seed))


def test_none_dup_noise_keep_the_real_columns(kinds, X):
    assert np.array_equal(_apply(kinds, "none", X), X)
    D = _apply(kinds, "dup", X)
    assert D.shape == (200, 8)
    assert np.array_equal(D[:, :4], X) and np.array_equal(D[:, 4:], X)
    N = _apply(kinds, "noise", X)
    assert N.shape == (200, 8) and np.array_equal(N[:, :4], X)
    assert np.all(np.abs(N[:, 4:].mean(axis=0)) < 0.3)
    assert np.allclose(N[:, 4:].std(axis=0), 1.0, atol=0.2)
    assert abs(np.corrcoef(N[:, 4:].T)[np.triu_indices(4, 1)]).max() < 0.3


def test_const_adds_constant_and_single_training_row_columns(kinds, X):
    C = _apply(kinds, "const", X)
    n5 = kinds.N_EXTRA
    assert C.shape == (200, 4 + 2 * n5) and np.array_equal(C[:, :4], X)
    assert np.all(np.ptp(C[:, 4:4 + n5], axis=0) == 0)
    single = C[:, 4 + n5:]
    rows = [np.flatnonzero(c) for c in single.T]
    assert all(len(r) == 1 for r in rows)  # 0 but at one row, 1 there
    rows = np.concatenate(rows)
    assert np.all(single[rows, np.arange(n5)] == 1.0)
    assert np.isin(rows, TRAIN).all() and np.unique(rows).size == n5


def test_heavy_is_exp_of_twice_the_z_score(kinds, X):
    H = _apply(kinds, "heavy", X)
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    assert np.allclose(H, np.exp(2 * Z))
    # monotone per column (ranks kept), positive, right-skewed
    assert np.array_equal(np.argsort(H, axis=0, kind="stable"),
                          np.argsort(X, axis=0, kind="stable"))
    assert np.all(H > 0) and np.all(H.mean(axis=0) > np.median(H, axis=0))
    const = _apply(kinds, "heavy", np.column_stack([X[:, 0], np.full(200, 7.0)]))
    assert np.all(const[:, 1] == 1.0)  # a constant column stays finite


def test_offset_shifts_by_multiples_of_the_spread(kinds, X):
    O = _apply(kinds, "offset", X)
    shift = (O - X).mean(axis=0) / X.std(axis=0)
    assert shift[0] == pytest.approx(1e9, rel=1e-6)
    assert np.allclose(shift[1:], 1e6, rtol=1e-6)
    # the spread itself is kept up to rounding
    assert np.allclose(O.std(axis=0), X.std(axis=0), rtol=1e-5)


def test_mixed_scales_by_powers_of_ten_from_minus_6_to_6(kinds, X):
    k = kinds.mixed_exponents(4)
    assert k[0] == -6 and k[-1] == 6 and np.all(np.diff(k) > 0)
    M = _apply(kinds, "mixed", X)
    nz = X != 0
    assert np.allclose(M[nz] / X[nz], np.broadcast_to(10.0 ** k, X.shape)[nz])
    assert list(kinds.mixed_exponents(13)) == list(range(-6, 7))


def test_binary_adds_binary_and_categorical_noise(kinds, X):
    B = _apply(kinds, "binary", X)
    n5 = kinds.N_EXTRA
    assert B.shape == (200, 4 + 2 * n5) and np.array_equal(B[:, :4], X)
    assert set(np.unique(B[:, 4:4 + n5])) == {0.0, 1.0}
    cats = B[:, 4 + n5:]
    assert np.all(cats == np.round(cats)) and cats.min() == 0 and cats.max() == 9


def test_onehot_replaces_the_richest_column_by_its_deciles(kinds, X):
    j = kinds.onehot_column(X)
    assert j != 2  # the Poisson count has the fewest distinct values
    H = _apply(kinds, "onehot", X)
    assert H.shape == (200, 3 + 10)
    assert np.array_equal(H[:, :3], np.delete(X, j, axis=1))
    block = H[:, 3:]
    assert set(np.unique(block)) == {0.0, 1.0} and np.all(block.sum(axis=1) == 1)
    assert np.all(block.sum(axis=0) == 20)  # deciles of 200 distinct values
    decile = block.argmax(axis=1)
    order = np.argsort(X[:, j])
    assert np.all(np.diff(decile[order]) >= 0)  # bins follow the column's order


def test_outlier_multiplies_one_cell_of_one_percent_of_training_rows(kinds, X):
    O = _apply(kinds, "outlier", X)
    changed = O != X
    rows = np.flatnonzero(changed.any(axis=1))
    assert len(rows) == max(1, round(0.01 * len(TRAIN)))
    assert np.isin(rows, TRAIN).all() and np.all(changed[rows].sum(axis=1) == 1)
    assert np.allclose(O[changed], 1e3 * X[changed])
    big = np.tile(X, (5, 1))  # 1,000 rows, 500 training: 5 outliers
    moved = kinds.transform("outlier", big, np.arange(0, 1000, 2),
                            np.random.default_rng(1)) != big
    assert np.flatnonzero(moved.any(axis=1)).size == 5 and moved.sum() == 5


def test_unknown_kind_is_refused(kinds, X):
    with pytest.raises(ValueError, match="unknown kind 'log'"):
        _apply(kinds, "log", X)


def test_summary_counts_newly_bad_rows_and_gap_changes(kinds):
    def row(kind, set_, gap, base, bad=False, within=True, est="FGMClassifier"):
        return {"set": f"{set_}@{kind}", "estimator": est, "error": None,
                "gap": gap, "within": within, "bad": bad, "score_base": base,
                "score_ours": base + gap / 100, "task": "clf",
                "cpu_ours": 1.0, "cpu_base": 1.0, "wall_ours": 1.0, "wall_base": 1.0,
                "warn_ours": False, "warn_base": False, "baseline": "LinearSVC()",
                "time_ratio": 1.0,
                "params": {}, "n": 10, "n_train": 7, "n_test": 3, "d": 2}

    by_seed = {0: [row("none", "a", 0.0, 0.9), row("none", "b", -4.0, 0.8, bad=True,
                                                   within=False),
                   row("dup", "a", -5.0, 0.8, bad=True, within=False),
                   row("dup", "b", -6.0, 0.8, bad=True, within=False)]}
    (none, dup) = kinds.kind_summary(by_seed, ["none", "dup"], ["FGMClassifier"])
    assert (none["within"], none["bad"], none["rows"]) == (1, 1, 2)
    assert (dup["within"], dup["bad"]) == (0, 2)
    assert dup["newly_bad"] == ["a s0 -5.0 (none +0.0)"]  # b was bad already
    assert dup["d_within"] == pytest.approx(-0.5)
    assert dup["gap_change"] == pytest.approx(-3.5)  # median of -5 and -2
    assert dup["worse_better"] == (2, 0)  # both moved down by more than 1 point
    assert dup["base_change"] == pytest.approx(-5.0)  # median of -10 and 0 points


def test_help_runs():
    out = subprocess.run([sys.executable, str(BENCHMARKS / "data_kinds.py"), "--help"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0 and "--kinds" in out.stdout


def test_split_is_the_suites_split_of_the_real_set(kinds):
    suite = sys.modules["suite"]
    if not (suite.suite_dir() / "iris.csv.xz").exists():
        pytest.skip(f"no suite data at {suite.suite_dir()} (../shared/datasets absent)")
    for seed in (0, 1):
        (Xtr, ytr, Xte, yte), task, n = kinds.kind_split("iris@none", "clf", 60, seed)
        (Str, s_ytr, Ste, s_yte), _, _ = suite._cached_split("iris", "clf", 60, seed)
        assert task == "clf" and n == 150 and Xtr.shape == (60, 4)
        assert np.array_equal(Xtr, Str) and np.array_equal(Xte, Ste)
        assert np.array_equal(ytr, s_ytr) and np.array_equal(yte, s_yte)
        (Dtr, _, Dte, _), _, _ = kinds.kind_split("iris@dup", "clf", 60, seed)
        assert np.array_equal(Dtr, np.hstack([Str, Str]))
        assert np.array_equal(Dte, np.hstack([Ste, Ste]))
