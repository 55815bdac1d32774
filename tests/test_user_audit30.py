"""A thirtieth user's audit: multitask MKL with many tasks.

A researcher with many tasks of very different sizes ran the multitask
MKL estimators as her experiments do: every formulation at the extremes of
``p`` and ``q``, shared components, the ``*CV`` estimators against her own
cross-validation, tasks of two rows, a task whose rows she weighed out,
hundreds of tasks of a few rows, precomputed Grams with tasks, Platt
probabilities, and model files of each formulation.  Most of it held (the
precomputed path equals the named kernels for every formulation, model
files predict as the fitted models, probabilities sum to one, every
iteration cap warns); each test here failed before its fix.
"""

import numpy as np
import pytest

from kernlearn import (
    MultitaskMKLClassifier,
    MultitaskMKLClassifierCV,
    MultitaskMKLRegressor,
    MultitaskMKLRegressorCV,
)
from kernlearn.kernels import linear_kernel, rbf_kernel

KERNELS = ["linear", ("rbf", {"gamma": 0.5})]


def _tasks(seed=1, T=4, m=20):
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(T), m)
    X = rng.normal(size=(T * m, 3))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.1 * rng.normal(size=T * m)
    return X, y, task


# ------------------------------------------- a task whose rows were weighed out
@pytest.mark.parametrize("make", ["regressor", "classifier", "precomputed"])
def test_scoring_with_the_fits_weights_skips_a_task_weighed_out_of_the_fit(make):
    # zero weight on every row of task 2: the fit leaves the task out (its
    # rows are removed rows), and score(X, y, task_index=t, sample_weight=sw)
    # with the fit's own weights stopped on "task_index has tasks unseen in
    # fit: [2]", about rows that weigh nothing in the score
    X, y, task = _tasks()
    sw = np.where(task == 2, 0.0, 1.0)
    keep = sw > 0
    if make == "classifier":
        y = (y > 0).astype(int)
        est = MultitaskMKLClassifier(KERNELS).fit(X, y, task_index=task, sample_weight=sw)
        Xs, Xk = X, X[keep]
    elif make == "regressor":
        est = MultitaskMKLRegressor(KERNELS).fit(X, y, task_index=task, sample_weight=sw)
        Xs, Xk = X, X[keep]
    else:
        Xs = [linear_kernel(X, X), rbf_kernel(X, X, gamma=0.5)]
        est = MultitaskMKLRegressor("precomputed").fit(Xs, y, task_index=task,
                                                        sample_weight=sw)
        Xk = [G[keep] for G in Xs]
    assert est.tasks_.tolist() == [0, 1, 3]
    score = est.score(Xs, y, task_index=task, sample_weight=sw)
    assert score == pytest.approx(est.score(Xk, y[keep], task_index=task[keep]), abs=1e-12)
    with pytest.raises(ValueError, match="only rows of zero sample weight"):  # unweighted
        est.score(Xs, y, task_index=task)


def test_predicting_a_task_weighed_out_of_the_fit_says_so(tmp_path):
    # predict(task_index=[2, 0]) said "task_index has tasks unseen in fit:
    # [2]" about a task the fit was given (every row of zero weight)
    from kernlearn.io import load_model, save_model

    X, y, task = _tasks()
    sw = np.where(task == 2, 0.0, 1.0)
    est = MultitaskMKLRegressor(KERNELS).fit(X, y, task_index=task, sample_weight=sw)
    save_model(est, tmp_path / "m.npz")
    for model in (est, load_model(tmp_path / "m.npz")):
        with pytest.raises(ValueError, match=r"task\(s\) \[2\] had only rows of zero "
                                             "sample weight in fit"):
            model.predict(X[:2], task_index=[2, 0])
        with pytest.raises(ValueError, match="unseen in fit: \\[7\\]"):  # never given
            model.predict(X[:2], task_index=[7, 0])


# ------------------------------------------- many tasks of a few rows each
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # (5 steps)
def test_mtsfl_model_of_many_tasks_does_not_grow_as_tasks_squared(tmp_path):
    # MK-MTSFL kept one (n_train, n_tasks) coefficient matrix per kernel:
    # n T = m T^2 for tasks of m rows (800 tasks of 6 rows, 3 kernels: 92 MB
    # in memory and 88 MB in the model file; 27 MB now).  Its factors through
    # Q_j's eigen-directions take (n + T) r
    import dataclasses

    from kernlearn.io import load_model, save_model

    X, y, task = _tasks(seed=3, T=150, m=3)
    n, T = len(y), 150
    est = MultitaskMKLRegressor(KERNELS, formulation="mtsfl", max_rank=10,
                                max_iter=5).fit(X, y, task_index=task)
    path = tmp_path / "many.npz"
    save_model(est, path)
    assert path.stat().st_size < n * T * 8  # less than one kernel's n x T matrix
    pred = est.predict(X, task_index=task)
    np.testing.assert_array_equal(load_model(path).predict(X, task_index=task), pred)
    # the same predictions as the (n, T) matrices the factors multiply to
    kind, coefs = est._model.coef
    full = [c[0] @ c[1] if isinstance(c, tuple) else c for c in coefs]
    assert any(isinstance(c, tuple) for c in coefs)
    dense = dataclasses.replace(est._model, coef=(kind, full))
    pos = np.searchsorted(est.tasks_, task)
    f = dense.decision(est.kernels_, est._blocks, X, pos)
    # (in each task's units: the model fits each task's standardised targets)
    np.testing.assert_allclose(pred, f * est.y_scale_[pos] + est.y_mean_[pos], rtol=0,
                               atol=1e-12)


@pytest.mark.parametrize("make", ["objective", "loo-weights", "classifier"])
def test_more_folds_than_rows_of_any_task_name_the_tasks(make):
    # 30 tasks of 4 rows (2 of each class): cv=5 (the classifier's default)
    # stopped on scikit-learn's "n_splits=5 cannot be greater than the number
    # of members in each class", about tasks
    X, y, task = _tasks(seed=5, T=30, m=4)
    if make == "classifier":
        est, y = MultitaskMKLClassifierCV(["linear"], Cs=[1.0]), np.tile([0, 1], 60)
        match = "cv=5 folds stratified by task need some task with 5 rows of one class; " \
                "no task has more than 2: use at most cv=2"
    else:
        est = MultitaskMKLRegressorCV(["linear"], Cs=[1.0], cv=5, kernel_selection=(
            "objective" if make == "objective" else "loo"))
        match = "need some task with 5 rows; no task has more than 4: use at most cv=4"
    with pytest.raises(ValueError, match=match):
        est.fit(X, y, task_index=task)


# ------------------------------------------------- iteration caps
def test_platt_folds_of_a_capped_fit_warn_once_in_all():
    # probability=True with a capped mirror descent gave six ConvergenceWarnings
    # (the model's and one per fold of Platt's cross-validation, each with its
    # own gap, so none was merged): now the model's and one summing the folds
    from sklearn.exceptions import ConvergenceWarning

    X, y, task = _tasks()
    clf = MultitaskMKLClassifier(KERNELS, probability=True, max_iter=2, tol=0)
    with pytest.warns(ConvergenceWarning) as caught:
        clf.fit(X, (y > 0).astype(int), task_index=task)
    messages = [str(w.message) for w in caught if w.category is ConvergenceWarning]
    assert len(messages) == 2, messages
    assert messages[0].startswith("MK-MTFL stopped after max_iter=2")
    assert messages[1].startswith("5 convergence warning(s) in the 5 cross-validation "
                                  "fits of the Platt sigmoids")
