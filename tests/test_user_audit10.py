"""A tenth user's audit: the estimators as a scikit-learn user meets them.

A demanding user fitted the multitask estimators with True/False task ids,
listed a kernel twice in a kernel list, and read ``n_iter_`` of a low-rank
model whose ``nu`` was chosen along a path.  Each test here failed before
its fix.
"""

import numpy as np
import pytest

from kernlearn import (
    InfiniteFeatureRegressor,
    MultitaskMKLClassifier,
    MultitaskMKLRegressor,
)


def _tasks_data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    t = np.arange(n) % 2 == 0
    y = X[:, 0] + 0.5 * t + 0.1 * rng.standard_normal(n)
    return X, y, t


# ------------------------------------------------------- True/False task ids
def test_true_false_task_ids_round_trip_and_are_not_the_numbers_0_and_1():
    # True == 1 in NumPy: a model of tasks False/True predicted task ids 0/1
    # as if they were its own, and one of tasks 0/1 took True/False
    X, y, t = _tasks_data()
    est = MultitaskMKLRegressor(kernels=["linear"]).fit(X, y, task_index=list(t))
    assert est.tasks_.dtype == bool and est.tasks_.tolist() == [False, True]
    np.testing.assert_array_equal(est.predict(X, task_index=t),
                                  est.predict(X, task_index=list(t)))
    with pytest.raises(ValueError, match=r"holds numbers \(\[1, 0\]\) but the model's "
                                         r"task ids are True/False"):
        est.predict(X, task_index=t.astype(int))
    by_number = MultitaskMKLRegressor(kernels=["linear"]).fit(X, y, task_index=t.astype(int))
    with pytest.raises(ValueError, match="holds True/False .* task ids are numbers"):
        by_number.predict(X, task_index=t)
    # the other multitask family reads task ids through the same helpers
    inf = InfiniteFeatureRegressor(max_features=3, random_state=0).fit(
        X, y, task_index=t.astype(int))
    with pytest.raises(ValueError, match="True is not 1"):
        inf.predict(X, task_index=t)


@pytest.mark.parametrize("ids", [
    [True, False, 2, 3] * 10,  # (np.asarray makes this list numbers: 1, 0, 2, 3)
    np.array([0, 1, True, False] * 10, dtype=object),  # True and 1 were one task
])
def test_task_ids_mixing_true_false_with_numbers_are_refused(ids):
    X, y, _ = _tasks_data()
    y = (y > np.median(y)).astype(int)
    with pytest.raises(ValueError, match="mixes True/False with other task ids"):
        MultitaskMKLClassifier(kernels=["linear"]).fit(X, y, task_index=ids)
