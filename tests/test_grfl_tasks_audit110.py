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


def _tasks_with_a_lone_row(n=60, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    t = rng.randint(0, 3, n)
    y = np.digitize(X[:, 0] + 0.3 * t + 0.3 * rng.randn(n), [-0.5, 0.5])
    t[0] = 8  # task 8: one row, in one test fold of Platt's and no training fold
    return X, t, y


@pytest.mark.parametrize("binary", [True, False])
def test_platt_with_a_task_of_one_row(binary):
    # Platt's folds are stratified by class: a task of few rows can sit in a test fold
    # only, whose model never saw it.  Its rows get no cross-validated score (so no say
    # in the sigmoids) instead of the fit stopping on "task_index has tasks unseen in
    # fit" (a prediction's message, of a fit); the sigmoids are those of the other rows.
    X, t, y = _tasks_with_a_lone_row()
    y = (y > 0).astype(int) if binary else y
    with threadpool_limits(1):
        est = InfiniteFeatureClassifier(probability=True, **KW).fit(X, y, task_index=t)
        # by hand: the same folds, each row scored by the fold's model if it knows the task
        inner = InfiniteFeatureClassifier(**KW)
        scores = np.full((len(y), 1 if binary else 3), np.nan)
        for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
            m = clone(inner).fit(X[train], y[train], task_index=t[train])
            test = test[np.isin(t[test], m.tasks_)]
            scores[test] = m.decision_function(X[test], task_index=t[test]).reshape(
                len(test), -1)
    scored = ~np.isnan(scores[:, 0])
    assert not scored[0] and scored[1:].all()  # (the lone row had no training fold)
    targets = [y == 1] if binary else [y == k for k in range(3)]
    platt = [platt_sigmoid(scores[scored, k], c[scored]) for k, c in enumerate(targets)]
    np.testing.assert_allclose(est.platt_, platt, rtol=1e-10)
    P = est.predict_proba(X, task_index=t)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    # (Platt's probabilities of the decision values, the lone task's row too)
    D = est.decision_function(X, task_index=t).reshape(len(y), -1)
    S = 1 / (1 + np.exp(D * est.platt_[:, 0] + est.platt_[:, 1]))
    if binary:
        S = np.column_stack([1 - S, S])
    else:  # (a class with no row in the row's task: probability 0)
        S *= est._task_classes[np.searchsorted(est.tasks_, t)]
        S /= S.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(P, S, rtol=1e-10)
