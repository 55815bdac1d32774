"""The equal-k comparison of FGM and l1 models (kernlearn.demo, issue 21 item 6)."""

import numpy as np
import pytest

from kernlearn.demo import _at_k, demo_table, format_table, l1_path


def test_accuracy_at_k_is_interpolated_in_log_k():
    path = [{"n_features": 0, "accuracy": 0.5, "time": 1.0},
            {"n_features": 10, "accuracy": 0.8, "time": 1.0},
            {"n_features": 1000, "accuracy": 0.9, "time": 2.0}]
    acc, t = _at_k(path, 100)
    assert acc == pytest.approx(0.85)  # log 100 is half-way between log 10 and log 1000
    assert t == pytest.approx(4.0)  # the path's time up to the first point with >= 100
    assert np.isnan(_at_k(path, 5000)[0]) and np.isnan(_at_k(path, 5)[0])


def test_l1_path_starts_at_the_first_feature_and_grows_by_1_25():
    from sklearn.datasets import make_classification
    from sklearn.svm import LinearSVC

    X, y = make_classification(200, 30, n_informative=5, random_state=0)
    path = l1_path(lambda C: LinearSVC(penalty="l1", dual=False, C=C), "squared_hinge",
                   X, y, X, y, k_max=5)
    Cs = np.array([r["C"] for r in path])
    np.testing.assert_allclose(Cs[1:] / Cs[:-1], 1.25)
    assert path[0]["n_features"] <= 1 and path[-1]["n_features"] > 5
    assert all(r["n_features"] <= 5 for r in path[:-1])


def test_compare_at_equal_k_table(rng):
    rows = demo_table(n_samples=150, n_features=200, n_informative=10, ks=(3, 8))
    assert [r["k"] for r in rows] == [3, 8]
    for r in rows:
        assert r["FGM features"] == r["k"]
        assert 0.5 <= r["FGM"] <= 1.0 and r["FGM time"] > 0
        assert r["FGM - best l1"] == pytest.approx(r["FGM"] - r["best l1"])
        assert r["best l1"] == pytest.approx(np.nanmax([r["l1-SVM"], r["l1-LR"]]))
    text = format_table(rows)
    assert text.splitlines()[0].split()[:2] == ["k", "FGM"] and len(text.splitlines()) == 3
