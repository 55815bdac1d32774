"""The CV classifier's fold and refit starts as plain functions
(``kernlearn.methods.mtmkl._fold_starts``, moved out of the estimator in the
thirtieth pass): each rule on small hand-made inputs."""

import numpy as np

from kernlearn.methods.mtmkl import FactorStore
from kernlearn.methods.mtmkl._fold_starts import (
    keep_start,
    lead_start,
    mean_start,
    path_order,
)


def _kept(store):
    C, beta, gamma = store._row_start
    return C, beta, gamma


def test_keep_start_clips_to_the_box_before_zeroing_each_task_sum():
    # task 0: +3 (past its box 1.0) against -1 and -0.5; task 1: +0.2, -0.6
    beta = np.array([3.0, -1.0, -0.5, 0.2, -0.6])
    t = np.array([0, 0, 0, 1, 1])
    store = FactorStore()
    keep_start(store, (beta, None), 1.0, np.arange(5), np.ones(5), t)
    C, b, gamma = _kept(store)
    assert C == 1.0 and gamma is None
    # clipped first (3 -> 1), then the heavier side scaled: 1 against 1.5
    np.testing.assert_allclose(b, [1.0, -2 / 3, -1 / 3, 0.2, -0.2], rtol=1e-15)
    for task in (0, 1):
        assert abs(b[t == task].sum()) <= 1e-15
    assert np.all(np.abs(b) <= 1.0)


def test_keep_start_drops_rows_of_zero_weight_and_uses_each_rows_box():
    beta = np.array([0.5, -0.5, 0.9, -0.2])
    w = np.array([0.25, 1.0, 0.0, 1.0])  # (row 2 is no fit's)
    store = FactorStore()
    keep_start(store, (beta, np.array([[0.3, 0.7]])), 2.0, np.arange(4), w, None)
    _, b, gamma = _kept(store)
    assert len(b) == 3  # (one dual per row of positive weight)
    # row 0's box is 2 * 0.25 = 0.5; the positive side 0.5 against 0.7
    np.testing.assert_allclose(b, [0.5, -0.5 * 0.5 / 0.7, -0.2 * 0.5 / 0.7], rtol=1e-15)
    np.testing.assert_array_equal(gamma, [[0.3, 0.7]])


def test_keep_start_matches_per_task_weights_by_task_id():
    t = np.array([5, 5, 7, 7, 9, 9])
    gamma = np.array([[0.1, 0.9], [0.6, 0.4]])  # (of tasks 7 and 9: the fold's rows)
    used = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 1.0])
    beta = np.array([0.0, 0.0, 0.5, -0.5, 0.5, -0.5])
    store = FactorStore()
    keep_start(store, (beta, gamma, used), 1.0, np.arange(2, 6), None, t)
    np.testing.assert_array_equal(_kept(store)[2], gamma)
    store = FactorStore()
    keep_start(store, (beta, gamma, used), 1.0, np.array([4, 5]), None, t)
    np.testing.assert_array_equal(_kept(store)[2], gamma[[1]])  # (task 9's, not 7's)
    store = FactorStore()  # (task 5 was not the fold's: duals alone)
    keep_start(store, (beta, gamma, used), 1.0, np.arange(4), None, t)
    assert _kept(store)[2] is None


def test_keep_start_of_no_start_keeps_nothing():
    store = FactorStore()
    keep_start(store, None, 1.0, np.arange(3), None, None)
    assert store._row_start is None


def test_lead_start_gives_validation_rows_their_kkt_duals():
    start = (np.array([0.4, -0.4, 0.0, 0.0, 0.0, 0.0]), np.array([[1.0]]), np.ones(6))
    rows = np.array([2, 3, 4, 5])
    # inside the margin (y f < 1): at the bound y C_i; on it or outside: zero
    out = lead_start(start, np.array([0.5, 0.5, 1.0, -2.0]),
                     np.array([1.0, -1.0, 1.0, -1.0]), np.array([2.0, 3.0, 4.0, 5.0]), rows)
    np.testing.assert_array_equal(out[0], [0.4, -0.4, 2.0, -3.0, 0.0, 0.0])
    assert out[1] is start[1] and out[2] is start[2]
    assert start[0][2] == 0.0  # (the fold fit's own duals not written over)
    assert lead_start(None, None, None, None, rows) is None


def test_mean_start_averages_over_the_folds_that_trained_on_each_row():
    a = (np.array([1.0, 0.0, -1.0]), np.array([[0.2, 0.8]]), np.array([1.0, 0.0, 1.0]))
    b = (np.array([3.0, 2.0, 0.0]), np.array([[0.4, 0.6]]), np.array([1.0, 1.0, 0.0]))
    beta, gamma = mean_start([a, b])
    np.testing.assert_array_equal(beta, [2.0, 2.0, -1.0])
    np.testing.assert_allclose(gamma, [[0.3, 0.7]], rtol=1e-15)
    # per-task weights of folds on other numbers of tasks: no mean
    c = (b[0], np.array([[0.4, 0.6], [0.5, 0.5]]), b[2])
    assert mean_start([a, c])[1] is None
    assert mean_start([a, None]) is None and mean_start([]) is None


def test_path_order_goes_up_from_the_middle_then_down():
    np.testing.assert_array_equal(path_order(np.array([10.0, 0.1, 1.0])), [2, 0, 1])
    np.testing.assert_array_equal(path_order(np.array([0.01, 0.1, 1.0, 10.0])),
                                  [2, 3, 1, 0])
