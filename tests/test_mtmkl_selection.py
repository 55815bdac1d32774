"""Model selection with task ids: scikit-learn's metadata routing (GridSearchCV,
cross_val_score, cross_validate, cross_val_predict, scorer strings), the clear
errors where task ids cannot reach predict, and the built-in
MultitaskMKLRegressorCV."""

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import (
    GridSearchCV,
    StratifiedKFold,
    cross_val_predict,
    cross_val_score,
    cross_validate,
)

from kernlearn import MultitaskMKLClassifier, MultitaskMKLRegressor
from kernlearn.estimators.mtmkl import MultitaskScorer

KERNELS = ["linear", ("rbf", {"gamma": 0.5})]


def _tasks(seed=0, T=4, m=24):
    # tasks with their own slopes and levels: C matters
    rng = np.random.default_rng(seed)
    t = np.repeat(np.arange(T) * 5 + 2, m)  # non-contiguous ids
    X = rng.normal(size=(T * m, 3))
    slope = rng.normal(size=T)[t // 5]
    y = slope * X[:, 0] + np.sin(2 * X[:, 1]) + t / 5 + 0.5 * rng.normal(size=T * m)
    return X, y, t


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def _manual_cv(est, X, y, t, folds, C, score=None):
    out = []
    for tr, te in folds:
        model = sklearn.base.clone(est).set_params(C=C).fit(X[tr], y[tr], task_index=t[tr])
        out.append(model.score(X[te], y[te], task_index=t[te]) if score is None
                   else score(model, X[te], y[te], t[te]))
    return np.array(out)


def test_model_selection_without_routing_is_an_error():
    # task_index reaches fit only: predict and score would fail on every
    # split (NaN scores, the first C picked); a clear error instead
    X, y, t = _tasks()
    est = MultitaskMKLRegressor(KERNELS, max_iter=10)
    folds = list(StratifiedKFold(3).split(X, t))
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        GridSearchCV(est, {"C": [0.1, 1.0]}, cv=folds).fit(X, y, task_index=t)
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        cross_val_score(est, X, y, cv=folds, params={"task_index": t})
    # a direct fit is unaffected, and predict without task ids says what to do
    est.fit(X, y, task_index=t)
    with pytest.raises(ValueError, match="pass task_index.*enable_metadata_routing"):
        est.predict(X)


def test_gridsearch_with_routing_equals_the_manual_cross_validation(routing):
    X, y, t = _tasks()
    est = MultitaskMKLRegressor(KERNELS, max_iter=20)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, t))
    Cs = [0.01, 0.1, 1.0, 10.0]
    search = GridSearchCV(est, {"C": Cs}, cv=folds).fit(X, y, task_index=t)
    manual = np.array([_manual_cv(est, X, y, t, folds, C) for C in Cs])
    scores = search.cv_results_["mean_test_score"]
    assert np.isfinite(scores).all()
    np.testing.assert_allclose(scores, manual.mean(1), rtol=1e-12)
    assert np.ptp(scores) > 0.01  # C matters here, so the choice is a real one
    assert search.best_params_["C"] == Cs[int(np.argmax(manual.mean(1)))]
    # the refit at the chosen C (GridSearchCV.predict takes no metadata:
    # predict with best_estimator_)
    ref = sklearn.base.clone(est).set_params(**search.best_params_).fit(X, y, task_index=t)
    np.testing.assert_array_equal(search.best_estimator_.predict(X, task_index=t),
                                  ref.predict(X, task_index=t))
    # cross_val_score and cross_validate route task_index too
    np.testing.assert_allclose(
        cross_val_score(est.set_params(C=1.0), X, y, cv=folds, params={"task_index": t}),
        manual[2], rtol=1e-12)


def test_scorer_strings_need_the_task_aware_wrapper(routing):
    X, y, t = _tasks()
    est = MultitaskMKLRegressor(KERNELS, max_iter=20, C=1.0)
    folds = list(StratifiedKFold(3).split(X, t))
    # a bare string calls predict(X) without task ids: an error, never NaN
    with pytest.raises(ValueError, match=r"MultitaskScorer\('r2'\)"):
        GridSearchCV(est, {"C": [0.1, 1.0]}, cv=folds, scoring="r2").fit(
            X, y, task_index=t)
    res = cross_validate(est, X, y, cv=folds, params={"task_index": t},
                         scoring={"r2": MultitaskScorer("r2"),
                                  "mse": MultitaskScorer("neg_mean_squared_error")})

    def mse(model, Xte, yte, tte):
        return -np.mean((yte - model.predict(Xte, task_index=tte)) ** 2)

    np.testing.assert_allclose(res["test_r2"], _manual_cv(est, X, y, t, folds, 1.0),
                               rtol=1e-12)
    np.testing.assert_allclose(res["test_mse"], _manual_cv(est, X, y, t, folds, 1.0, mse),
                               rtol=1e-12)
    # cross_val_predict routes metadata to fit only (scikit-learn 1.9): a clear
    # error from predict, not silent predictions for the wrong tasks
    with pytest.raises(ValueError, match="pass task_index"):
        cross_val_predict(est, X, y, cv=folds, params={"task_index": t})


def test_classifier_scorer_uses_the_task_decision_values(routing):
    X, y, t = _tasks()
    med = {k: np.median(y[t == k]) for k in np.unique(t)}  # both classes in every task
    labels = np.where(y > np.array([med[k] for k in t]), "hi", "lo")
    clf = MultitaskMKLClassifier(KERNELS, max_iter=10, C=1.0)
    folds = list(StratifiedKFold(3).split(X, t))
    got = cross_val_score(clf, X, labels, cv=folds, params={"task_index": t},
                          scoring=MultitaskScorer("roc_auc"))

    def auc(model, Xte, yte, tte):  # positive class: classes_[1] = "lo"
        return roc_auc_score(yte == "lo", model.decision_function(Xte, task_index=tte))

    np.testing.assert_allclose(got, _manual_cv(clf, X, labels, t, folds, 1.0, auc),
                               rtol=1e-12)


# -------------------------------------------- closed-form leave-one-out, CV estimator
def _brute_force_loo(K, y, C):
    # refit kernel ridge with a free bias without each row, predict that row
    from kernlearn.methods.mtmkl import solve_inner

    m = len(y)
    out = np.zeros(m)
    for i in range(m):
        r = np.delete(np.arange(m), i)
        Ci = C if np.ndim(C) == 0 else C[r][None]
        beta, b, _ = solve_inner("square", K[np.ix_(r, r)][None], y[r][None],
                                 np.ones((1, m - 1), bool), Ci)
        out[i] = y[i] - (K[i, r] @ beta[0] + b[0])
    return out


@pytest.mark.parametrize("weighted", [False, True])
def test_kernel_ridge_loo_matches_brute_force_refits(weighted, rng):
    from kernlearn.methods.mtmkl.selection import kernel_ridge_loo

    sizes, m = [7, 5], 7  # the second task padded
    K = np.zeros((2, m, m))
    y = np.zeros((2, m))
    mask = np.zeros((2, m), bool)
    C = np.full((2, m), 0.8)
    for a, mt in enumerate(sizes):
        F = rng.normal(size=(mt, 3))
        K[a, :mt, :mt] = F @ F.T + np.exp(-((F[:, None] - F[None]) ** 2).sum(-1))
        y[a, :mt] = rng.normal(size=mt) + 3.0 * a
        mask[a, :mt] = True
        if weighted:
            C[a, :mt] *= rng.uniform(0.2, 3.0, size=mt)
    got = kernel_ridge_loo(K, y, mask, C if weighted else 0.8)
    for a, mt in enumerate(sizes):
        ref = _brute_force_loo(K[a, :mt, :mt], y[a, :mt], C[a, :mt] if weighted else 0.8)
        np.testing.assert_allclose(got[a, :mt], ref, rtol=1e-9, atol=1e-12)
    assert np.all(got[~mask] == 0)


@pytest.mark.parametrize("form", ["mtfl", "mkl"])
def test_loo_residuals_of_a_fitted_model_at_its_kernel(form):
    # the learned kernel sum_j W_tj K_tj of each task, left-out rows refitted
    from kernlearn.methods.mtmkl.selection import loo_residuals

    X, y, t = _tasks(T=3, m=10)
    reg = MultitaskMKLRegressor(KERNELS, formulation=form, p=4.0, C=0.7,
                                max_iter=30).fit(X, y, task_index=t)
    res = loo_residuals(reg.kernels_, reg._blocks, reg._model, y, 0.7)
    W = reg._model.coef[1]
    for pos, rows in enumerate(reg._blocks.task_rows):
        K = sum(W[pos, j] * reg.kernels_.full(j)[np.ix_(rows, rows)] for j in range(2))
        np.testing.assert_allclose(res[rows], _brute_force_loo(K, y[rows], 0.7),
                                   rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("form", ["mtfl", "mtsfl"])
def test_cv_estimator_equals_gridsearch_on_the_same_grid_and_folds(form, routing):
    from kernlearn import MultitaskMKLRegressorCV

    X, y, t = _tasks()
    Cs = [0.01, 0.1, 1.0, 10.0]
    folds = list(StratifiedKFold(3, shuffle=True, random_state=1).split(X, t))
    kw = dict(formulation=form, max_iter=20)
    cv = MultitaskMKLRegressorCV(KERNELS, Cs=Cs, cv=folds, **kw).fit(X, y, task_index=t)
    search = GridSearchCV(MultitaskMKLRegressor(KERNELS, **kw), {"C": Cs},
                          cv=folds).fit(X, y, task_index=t)
    for key in ("mean_test_score", "std_test_score", "split2_test_score"):
        np.testing.assert_allclose(cv.cv_results_[key], search.cv_results_[key],
                                   rtol=1e-12)
    np.testing.assert_array_equal(cv.cv_results_["rank_test_score"],
                                  search.cv_results_["rank_test_score"])
    assert cv.C_ == search.best_params_["C"] and cv.best_score_ == search.best_score_
    np.testing.assert_array_equal(cv.predict(X, task_index=t),
                                  search.best_estimator_.predict(X, task_index=t))
    # an int cv: folds stratified by task, every task in every fold
    cv3 = MultitaskMKLRegressorCV(KERNELS, Cs=Cs, cv=3, **kw).fit(X, y, task_index=t)
    folds3 = list(StratifiedKFold(3).split(X, t))
    manual = np.mean(_manual_cv(MultitaskMKLRegressor(KERNELS, **kw), X, y, t,
                                folds3, cv3.C_))
    assert cv3.best_score_ == pytest.approx(manual, rel=1e-12)


def test_cv_loo_scores_are_the_left_out_r2():
    from kernlearn import MultitaskMKLRegressorCV
    from kernlearn.methods.mtmkl.selection import loo_residuals

    X, y, t = _tasks()
    Cs = [0.01, 1.0, 100.0]
    cv = MultitaskMKLRegressorCV(KERNELS, Cs=Cs, cv="loo", max_iter=20).fit(
        X, y, task_index=t)
    for C, score in zip(Cs, cv.cv_results_["mean_test_score"]):
        reg = MultitaskMKLRegressor(KERNELS, C=C, max_iter=20).fit(X, y, task_index=t)
        e = loo_residuals(reg.kernels_, reg._blocks, reg._model, y, C)
        assert score == pytest.approx(1 - np.sum(e ** 2) / np.sum((y - y.mean()) ** 2),
                                      rel=1e-12)
    assert cv.C_ == Cs[int(np.argmax(cv.cv_results_["mean_test_score"]))]
    ref = MultitaskMKLRegressor(KERNELS, C=cv.C_, max_iter=20).fit(X, y, task_index=t)
    np.testing.assert_array_equal(cv.predict(X, task_index=t), ref.predict(X, task_index=t))
    with pytest.raises(ValueError, match="cv='loo' needs"):
        MultitaskMKLRegressorCV(KERNELS, cv="loo", formulation="mtsfl").fit(
            X, y, task_index=t)
    with pytest.raises(ValueError, match="Cs must be"):
        MultitaskMKLRegressorCV(KERNELS, Cs=[1.0, -1.0]).fit(X, y, task_index=t)


def test_folds_that_hide_a_task_are_an_error(routing):
    # KFold on rows sorted by task puts whole tasks in the validation rows:
    # predict would fail on every split (NaN scores); refused at fit instead
    from sklearn.model_selection import KFold

    X, y, t = _tasks()
    est = MultitaskMKLRegressor(KERNELS, max_iter=5)
    with pytest.raises(ValueError, match="validation rows only.*stratified by task"):
        GridSearchCV(est, {"C": [0.1, 1.0]}, cv=KFold(4)).fit(X, y, task_index=t)
    with pytest.raises(ValueError, match="validation rows only"):
        cross_val_score(est, X, y, cv=KFold(4), params={"task_index": t})
    # shuffled KFold with every task in every training fold is fine
    scores = cross_val_score(est, X, y, cv=KFold(3, shuffle=True, random_state=0),
                             params={"task_index": t})
    assert np.isfinite(scores).all()
