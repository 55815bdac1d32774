"""Audit 110 of GrFL with tasks (issue 21): weights, classes and odd tasks.

Checks found by the audit of the merge that gave ``InfiniteFeatureClassifier`` /
``InfiniteFeatureRegressor`` sample and class weights and three or more classes with
``task_index`` (``tests/test_grfl_tasks35.py`` holds that merge's own tests).
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold
from threadpoolctl import threadpool_limits

from kernlearn import InfiniteFeatureClassifier
from kernlearn.methods._platt import platt_sigmoid

KW = dict(max_features=6, n_candidates=15, lambda_p=0.1, n_paths=1, random_state=0)


def _tasks_of_both_classes(n=60, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    t = rng.randint(0, 3, n)
    y = np.digitize(X[:, 0] + 0.3 * t + 0.3 * rng.randn(n), [-0.5, 0.5])
    return X, t, y


@pytest.mark.parametrize("binary", [True, False])
def test_platt_folds_keep_each_tasks_classes(binary):
    # Platt's folds were stratified by class only: a task of few rows could sit in a
    # test fold only (its rows unscored), or lose a class from a training fold, whose
    # fit now refuses a task of one class (tests/test_loose_ends36.py).  They are
    # stratified by (task, class), as the multitask MKL classifier's: every training
    # fold holds each class of each task, every row is scored.
    X, t, y = _tasks_of_both_classes()
    y = (y > 0).astype(int) if binary else y
    with threadpool_limits(1):
        est = InfiniteFeatureClassifier(probability=True, **KW).fit(X, y, task_index=t)
        # by hand: the same folds, each row scored by its fold's model
        inner = InfiniteFeatureClassifier(**KW)
        scores = np.full((len(y), 1 if binary else 3), np.nan)
        K = len(np.unique(y))
        strata = t * K + y
        n_folds = min(5, np.bincount(strata)[np.bincount(strata) > 0].min())
        for train, test in StratifiedKFold(n_folds, shuffle=True,
                                           random_state=0).split(X, strata):
            m = clone(inner).fit(X[train], y[train], task_index=t[train])
            scores[test] = m.decision_function(X[test], task_index=t[test]).reshape(
                len(test), -1)
    assert not np.isnan(scores).any()
    targets = [y == 1] if binary else [y == k for k in range(3)]
    platt = [platt_sigmoid(scores[:, k], c) for k, c in enumerate(targets)]
    np.testing.assert_allclose(est.platt_, platt, rtol=1e-10)
    P = est.predict_proba(X, task_index=t)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    D = est.decision_function(X, task_index=t).reshape(len(y), -1)
    S = 1 / (1 + np.exp(D * est.platt_[:, 0] + est.platt_[:, 1]))
    if binary:
        S = np.column_stack([1 - S, S])
    else:  # (a class with no row in the row's task: probability 0)
        S *= est._task_classes[np.searchsorted(est.tasks_, t)]
        S /= S.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(P, S, rtol=1e-10)


def _three_classes(n=90, seed=1):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    t = rng.randint(0, 3, n)
    y = np.array(["p", "q", "r"])[np.digitize(X[:, 0] + 0.3 * t, [-0.5, 0.5])]
    return X, t, y


@pytest.mark.parametrize("how", ["sample_weight", "class_weight"])
def test_two_classes_left_with_tasks_are_the_binary_fit_without_the_rows(how):
    # a class whose rows all weigh zero is fitted as without its rows (the model
    # without tasks does so: two classes left are one binary problem); with tasks the
    # fit kept one-vs-rest within tasks, two mirror problems per task, another model
    X, t, y = _three_classes()
    out = y == "r"
    w = np.where(out, 0.0, 1.0)
    fit = ({"sample_weight": w} if how == "sample_weight" else {})
    kw = dict(KW, loss="logistic",
              **({"class_weight": {"r": 0.0}} if how == "class_weight" else {}))
    with threadpool_limits(1):
        a = InfiniteFeatureClassifier(**kw).fit(X, y, task_index=t, **fit)
        b = InfiniteFeatureClassifier(**dict(kw, class_weight=None)).fit(
            X[~out], y[~out], task_index=t[~out])
    assert list(a.classes_) == ["p", "q", "r"] and list(b.classes_) == ["p", "q"]
    D, f = a.decision_function(X, task_index=t), b.decision_function(X, task_index=t)
    np.testing.assert_array_equal(D[:, :2], np.column_stack([-f, f]))
    np.testing.assert_array_equal(D[:, 2], D[:, :2].min(axis=1) - 1.0)  # (never predicted)
    np.testing.assert_array_equal(a.predict(X, task_index=t), b.predict(X, task_index=t))
    P = a.predict_proba(X, task_index=t)
    np.testing.assert_allclose(P[:, :2], b.predict_proba(X, task_index=t), rtol=1e-12)
    assert np.all(P[:, 2] == 0)
    # one row per (task, class), the binary fit's weights on the second class's rows
    np.testing.assert_array_equal(a.column_coef_[1::3], b.column_coef_)
    np.testing.assert_array_equal(a.column_coef_[0::3], -b.column_coef_)
    assert not a.column_coef_[2::3].any()


def test_a_binary_task_file_saved_before_task_classes_loads(tmp_path):
    # a model file of binary tasks saved before _task_classes (and the other later
    # attributes) existed predicts as the model did
    from kernlearn.io import load_model, save_model

    X, t, y = _three_classes()
    y = y == "r"
    est = InfiniteFeatureClassifier(loss="logistic", **KW).fit(X, y, task_index=t)
    assert est._task_classes is None
    expected = {m: getattr(est, m)(X, task_index=t)
                for m in ("decision_function", "predict_proba", "predict")}
    for name in ("_task_classes", "_absent_classes", "_proba_source"):
        delattr(est, name)
    save_model(est, tmp_path / "older.npz")
    back = load_model(tmp_path / "older.npz")
    assert not hasattr(back, "_task_classes") or back._task_classes is None
    for m, values in expected.items():
        np.testing.assert_array_equal(getattr(back, m)(X, task_index=t), values)


def test_held_out_folds_of_one_vs_rest_within_tasks_deal_each_row_once():
    # the (task, class) problems of a task share its rows (one array): when the random
    # folds leave a small task short, the task's rows are dealt over the folds once,
    # not once per class (dealt three times, the folds failed and the fit fell back to
    # the small-data budget with a warning); every row is held out exactly once
    from kernlearn.losses import get_loss
    from kernlearn.methods._grfl_select import _validation_split

    t = np.repeat(np.arange(4), [7, 7, 7, 39])
    rows = [np.flatnonzero(t == k) for k in range(4)]
    for seed in range(3):
        y = np.random.RandomState(seed).randint(0, 3, len(t))
        codes = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
        folds = _validation_split(len(t), np.tile(codes, 4), [r for r in rows for _ in range(3)],
                                  seed, None, get_loss("squared_hinge"))
        assert folds is not None and len(folds) == 5
        held = np.concatenate([val for _, val in folds])
        np.testing.assert_array_equal(np.sort(held), np.arange(len(t)))
        for train, val in folds:  # every task: a held-out row and two training rows
            assert all(np.isin(r, val).any() and np.isin(r, train).sum() >= 2 for r in rows)


def test_a_weighed_out_class_is_one_below_with_tasks():
    # a class weighed out of the whole fit (class_weight 0) is unfitted in every task:
    # one below the row's lowest fitted class, as documented, also in a task where
    # another class is unfitted too (it was put two below there)
    rng = np.random.RandomState(0)
    X, t = rng.randn(120, 3), rng.randint(0, 3, 120)
    y = np.digitize(X[:, 0] + 0.3 * t, [-0.7, 0, 0.7])
    y[(t == 2) & (y == 3)] = 2  # class 3: no row in task 2
    with threadpool_limits(1):
        est = InfiniteFeatureClassifier(class_weight={0: 0.0}, **KW).fit(X, y, task_index=t)
    fitted = est._task_classes[t]
    assert not fitted[:, 0].any() and not fitted[t == 2, 3].any()
    D = est.decision_function(X, task_index=t)
    low = np.where(fitted, D, np.inf).min(axis=1)
    np.testing.assert_array_equal(D[~fitted], np.broadcast_to(low[:, None] - 1, D.shape)[~fitted])
    assert 0 not in est.predict(X, task_index=t)
