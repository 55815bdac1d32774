"""GrFL with tasks (issue 21): weighted task losses and one-vs-rest within tasks.

``sample_weight`` / ``class_weight`` with ``task_index`` weigh each task's loss as the
single-task route weighs its one loss: integer weights are repeated rows, zero weights
removed rows (a task of zero weight only leaves ``tasks_``), and ``"balanced"`` is
scikit-learn's ``compute_sample_weight`` on each task's rows.
"""

import numpy as np
import pytest
from sklearn.utils.class_weight import compute_sample_weight
from threadpoolctl import threadpool_limits

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor

# masters solved far below the default tolerance: weights and repeated rows agree to it
KW = dict(max_features=6, n_candidates=15, lambda_p=0.1, inner_tol=1e-10, n_paths=1,
          random_state=0)


def _data(n=90, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 4)
    t = rng.randint(0, 3, n)
    yc = np.where(X[:, 0] + 0.4 * t + 0.3 * rng.randn(n) > 0.2, "b", "a")
    yr = X[:, 1] + t + 0.1 * rng.randn(n)
    w = rng.randint(0, 3, n).astype(float)
    return X, t, yc, yr, w


def _out(est, X, t):
    f = getattr(est, "decision_function", est.predict)
    return f(X, task_index=t)


@pytest.mark.parametrize("cls", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_integer_weights_are_repeated_rows_within_tasks(cls):
    X, t, yc, yr, w = _data()
    y = yc if cls is InfiniteFeatureClassifier else yr
    rep = np.repeat(np.arange(len(y)), w.astype(int))
    with threadpool_limits(1):
        a = cls(**KW).fit(X, y, task_index=t, sample_weight=w)
        b = cls(**KW).fit(X[rep], y[rep], task_index=t[rep])
        c = cls(**KW).fit(X, y, task_index=t)  # (the weights matter)
    np.testing.assert_allclose(_out(a, X, t), _out(b, X, t), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(a.features_, b.features_, rtol=1e-7, atol=1e-8)
    assert np.abs(_out(a, X, t) - _out(c, X, t)).max() > 1e-3
    if cls is InfiniteFeatureRegressor:  # each task's targets standardised on its weights
        np.testing.assert_allclose(a.y_mean_, b.y_mean_, rtol=1e-12)
        np.testing.assert_allclose(a.y_scale_, b.y_scale_, rtol=1e-12)


@pytest.mark.parametrize("cls", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_zero_weight_removes_rows_and_a_task(cls):
    X, t, yc, yr, w = _data(seed=1)
    y = yc if cls is InfiniteFeatureClassifier else yr
    t = np.where(np.arange(len(t)) < 6, 7, t)  # task 7: its six rows ...
    w[:6] = 0.0  # ... all weigh zero
    w[w > 0] += 0.5
    keep = w > 0
    with threadpool_limits(1):
        a = cls(**KW).fit(X, y, task_index=t, sample_weight=w)
        b = cls(**KW).fit(X[keep], y[keep], task_index=t[keep], sample_weight=w[keep])
    assert list(a.tasks_) == [0, 1, 2] == list(b.tasks_)
    np.testing.assert_array_equal(_out(a, X[keep], t[keep]), _out(b, X[keep], t[keep]))
    np.testing.assert_array_equal(a.features_, b.features_)
    with pytest.raises(ValueError, match="7"):  # (the removed task is unknown to the model)
        a.predict(X[:6], task_index=t[:6])


def test_balanced_is_per_task():
    rng = np.random.RandomState(2)
    n = 120
    X, t = rng.randn(n, 3), np.repeat([0, 1], n // 2)
    # task 0 mostly "a", task 1 mostly "b": the pool is balanced, the tasks are not
    y = np.where(rng.rand(n) < np.where(t == 0, 0.2, 0.8), "b", "a")
    y[:3], y[-3:] = "b", "a"
    per_task = np.empty(n)
    for k in (0, 1):
        per_task[t == k] = compute_sample_weight("balanced", y[t == k])
    pooled = compute_sample_weight("balanced", y)
    assert np.abs(per_task - pooled).max() > 0.3
    with threadpool_limits(1):
        a = InfiniteFeatureClassifier(class_weight="balanced", **KW).fit(X, y, task_index=t)
        b = InfiniteFeatureClassifier(**KW).fit(X, y, task_index=t, sample_weight=per_task)
        c = InfiniteFeatureClassifier(**KW).fit(X, y, task_index=t, sample_weight=pooled)
    np.testing.assert_allclose(_out(a, X, t), _out(b, X, t), rtol=1e-9, atol=1e-10)
    assert np.abs(_out(a, X, t) - _out(c, X, t)).max() > 1e-3
    # under sample_weight: the classes' total weights within each task
    w = rng.randint(1, 3, n).astype(float)
    rep = np.repeat(np.arange(n), w.astype(int))
    with threadpool_limits(1):
        d = InfiniteFeatureClassifier(class_weight="balanced", **KW).fit(
            X, y, task_index=t, sample_weight=w)
        e = InfiniteFeatureClassifier(class_weight="balanced", **KW).fit(
            X[rep], y[rep], task_index=t[rep])
    np.testing.assert_allclose(_out(d, X, t), _out(e, X, t), rtol=1e-7, atol=1e-8)


def test_weighted_tasks_with_defaults_and_platt():
    # the defaults (levels and budgets chosen on held-out rows) and Platt's folds
    # take the weights with tasks; zero weights still remove rows exactly
    X, t, yc, yr, w = _data(n=80, seed=3)
    keep = w > 0
    kw = dict(random_state=0, probability=True)
    with threadpool_limits(1):
        a = InfiniteFeatureClassifier(**kw).fit(X, yc, task_index=t, sample_weight=w)
        b = InfiniteFeatureClassifier(**kw).fit(X[keep], yc[keep], task_index=t[keep],
                                                sample_weight=w[keep])
        r = InfiniteFeatureRegressor(random_state=0).fit(X, yr, task_index=t, sample_weight=w)
        s = InfiniteFeatureRegressor(random_state=0).fit(
            X[keep], yr[keep], task_index=t[keep], sample_weight=w[keep])
    pa = a.predict_proba(X, task_index=t)
    assert pa.shape == (80, 2)
    np.testing.assert_array_equal(pa, b.predict_proba(X, task_index=t))
    np.testing.assert_array_equal(r.predict(X, task_index=t), s.predict(X, task_index=t))


@pytest.mark.parametrize("weights, message", [
    (-np.ones(90), "non-negative"),
    (np.ones(89), "sample_weight"),
    (np.zeros(90), "zero"),
])
def test_bad_weights_with_tasks_are_refused(weights, message):
    X, t, yc, yr, _ = _data()
    for est, y in ((InfiniteFeatureClassifier(**KW), yc), (InfiniteFeatureRegressor(**KW), yr)):
        with pytest.raises(ValueError, match=message):
            est.fit(X, y, task_index=t, sample_weight=weights)
    with pytest.raises(ValueError, match=message):
        InfiniteFeatureClassifier(class_weight="balanced", **KW).fit(
            X, yc, task_index=t, sample_weight=weights)
