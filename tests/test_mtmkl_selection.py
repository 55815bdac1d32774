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
    # error at fit, not silent predictions for the wrong tasks
    with pytest.raises(ValueError, match="cross_val_predict, which passes metadata to fit"):
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
    cv = MultitaskMKLRegressorCV(KERNELS, Cs=Cs, cv=folds, kernel_selection="objective",
                                 **kw).fit(X, y, task_index=t)
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
    cv3 = MultitaskMKLRegressorCV(KERNELS, Cs=Cs, cv=3, kernel_selection="objective",
                                  **kw).fit(X, y, task_index=t)
    folds3 = list(StratifiedKFold(3).split(X, t))
    manual = np.mean(_manual_cv(MultitaskMKLRegressor(KERNELS, **kw), X, y, t,
                                folds3, cv3.C_))
    assert cv3.best_score_ == pytest.approx(manual, rel=1e-12)


def test_cv_loo_scores_are_the_left_out_r2():
    from kernlearn import MultitaskMKLRegressorCV
    from kernlearn.methods.mtmkl.selection import loo_residuals

    X, y, t = _tasks()
    Cs = [0.01, 1.0, 100.0]
    cv = MultitaskMKLRegressorCV(KERNELS, Cs=Cs, cv="loo", kernel_selection="objective",
                                 max_iter=20).fit(X, y, task_index=t)
    for C, score in zip(Cs, cv.cv_results_["mean_test_score"]):
        reg = MultitaskMKLRegressor(KERNELS, C=C, max_iter=20).fit(X, y, task_index=t)
        e = loo_residuals(reg.kernels_, reg._blocks, reg._model, y, C)
        assert score == pytest.approx(1 - np.sum(e ** 2) / np.sum((y - y.mean()) ** 2),
                                      rel=1e-12)
    assert cv.C_ == Cs[int(np.argmax(cv.cv_results_["mean_test_score"]))]
    ref = MultitaskMKLRegressor(KERNELS, C=cv.C_, max_iter=20).fit(X, y, task_index=t)
    np.testing.assert_array_equal(cv.predict(X, task_index=t), ref.predict(X, task_index=t))
    with pytest.raises(ValueError, match="cv='loo' needs"):
        MultitaskMKLRegressorCV(KERNELS, cv="loo", formulation="mtsfl",
                                kernel_selection="objective").fit(X, y, task_index=t)
    with pytest.raises(ValueError, match="kernel_selection='loo' needs"):
        MultitaskMKLRegressorCV(KERNELS, formulation="mtsfl").fit(X, y, task_index=t)
    with pytest.raises(ValueError, match="C='auto'.*needs"):
        MultitaskMKLRegressor(KERNELS, C="auto", loss="epsilon_insensitive").fit(
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


# ------------------------------------------- kernel weights by leave-one-out
def _bucket_grams(specs, X, y, rows):
    from kernlearn.methods import mtmkl as M

    kern = M.TaskKernels(specs).fit(X)
    blocks = M.TaskBuckets(rows)
    grams = [np.stack([kern.blocks(j, idx, mask) for j in range(len(specs))])
             for _, idx, mask in blocks.buckets]
    return grams, blocks.gather(y), [mask for *_, mask in blocks.buckets], blocks


@pytest.mark.parametrize("weighted", [False, True])
def test_loo_criterion_and_its_gradient(weighted, rng):
    # the criterion is the weighted sum of the brute-force-checked left-out
    # residuals (kernel_ridge_loo) at gamma = mu / sum(mu), C = sum(mu) / 2,
    # and its gradient matches central differences
    from kernlearn.methods.mtmkl.selection import _loo_objective, kernel_ridge_loo

    X, y, t = _tasks(T=4, m=10)
    rows = [np.flatnonzero(t == v) for v in np.unique(t)]
    rows[0] = rows[0][:7]  # unequal sizes: padding
    grams, y_b, masks, _ = _bucket_grams(KERNELS + [("rbf", {"gamma": 3.0})], X, y, rows)
    w_b = [np.where(mk, rng.uniform(0.5, 2.0, mk.shape) if weighted else 1.0, 0.0)
           for mk in masks]
    mu = np.array([0.3, 1.7, 0.6])
    f, g = _loo_objective(mu, grams, y_b, w_b, masks)
    C, gamma = mu.sum() / 2, mu / mu.sum()
    ref = sum(float((w * kernel_ridge_loo(np.einsum("j,jtab->tab", gamma, K), yb, mk,
                                          np.where(mk, C * w, C)) ** 2).sum())
              for K, yb, w, mk in zip(grams, y_b, w_b, masks))
    assert f == pytest.approx(ref, rel=1e-10)
    for j in range(3):
        e = np.zeros(3)
        e[j] = 1e-6
        fd = (_loo_objective(mu + e, grams, y_b, w_b, masks, grad=False)
              - _loo_objective(mu - e, grams, y_b, w_b, masks, grad=False)) / 2e-6
        assert g[j] == pytest.approx(fd, rel=1e-5, abs=1e-8)


def test_learned_weights_are_a_minimum_of_the_loo_error():
    from kernlearn.methods.mtmkl.selection import _loo_objective, learn_loo_weights

    X, y, t = _tasks(T=5, m=16)
    rows = [np.flatnonzero(t == v) for v in np.unique(t)]
    grams, y_b, masks, _ = _bucket_grams(KERNELS + [("rbf", {"gamma": 0.05})], X, y, rows)
    gamma, C, sse = learn_loo_weights(grams, y_b, masks)
    assert gamma.sum() == pytest.approx(1.0) and (gamma >= 0).all()
    mu = 2 * C * gamma
    w1 = [m.astype(float) for m in masks]
    assert sse == pytest.approx(_loo_objective(mu, grams, y_b, w1, masks, grad=False))
    rng = np.random.default_rng(0)
    for _ in range(20):  # no nearby point (C and the weights) is better, up to
        # the tie-break towards small weights (1e-4 of the criterion's scale)
        other = mu * np.exp(0.2 * rng.normal(size=3))
        assert _loo_objective(other, grams, y_b, w1, masks, grad=False) \
            >= sse * (1 - 5e-4)
    with pytest.warns(ConvergenceWarning, match=r"\(L-BFGS-B\) stopped at its own cap of 1 iterations"):
        learn_loo_weights(grams, y_b, masks, max_iter=1)
    # and the uniform weights at the best C of the starting grid are worse
    start = min(_loo_objective(np.full(3, 2 * c / 3), grams, y_b, w1, masks,
                               grad=False) for c in np.logspace(-3, 4, 15))
    assert sse < start


def _interpolation_data(seed):
    # 30 tasks of 15 training rows: a smooth common function plus task slopes
    rng = np.random.default_rng(seed)
    T, m = 30, 30
    t = np.repeat(np.arange(T), m)
    X = rng.normal(size=(T * m, 4))
    slope = 0.5 * rng.normal(size=(T, 4))
    y = np.sin(1.5 * X[:, 0]) + (X * slope[t]).sum(1) + rng.normal(size=T)[t] \
        + 0.3 * rng.normal(size=T * m)
    train = np.tile(np.r_[np.ones(15, bool), np.zeros(15, bool)], T)
    return X[train], y[train], t[train], X[~train], y[~train], t[~train]


def _per_task_r2(y, pred, t):
    from sklearn.metrics import r2_score

    return np.mean([r2_score(y[t == v], pred[t == v]) for v in np.unique(t)])


@pytest.mark.parametrize("seed", [0, 1])
def test_an_interpolating_kernel_takes_no_weight_and_does_no_harm(seed):
    # a very narrow RBF interpolates each task's 15 rows: the training
    # objective gives it much of the weight; the leave-one-out weights (the
    # CV estimator's default) give it none, the held-out R^2 is that of the
    # list without it, and above the objective's
    from kernlearn import MultitaskMKLRegressorCV

    Xtr, ytr, ttr, Xte, yte, tte = _interpolation_data(seed)
    base = ["linear", ("rbf", {"gamma": 0.1}), ("rbf", {"gamma": 0.5})]
    narrow = ("rbf", {"gamma": 1e3})
    r2, weight = {}, {}
    for sel in ("loo", "objective"):
        for name, kern in (("base", base), ("narrow", base + [narrow])):
            est = MultitaskMKLRegressorCV(kern, kernel_selection=sel).fit(
                Xtr, ytr, task_index=ttr)
            r2[sel, name] = _per_task_r2(yte, est.predict(Xte, task_index=tte), tte)
            weight[sel, name] = est.kernel_weights_[-1]
    # the failure mode is present in these data
    assert weight["objective", "narrow"] > 0.2
    # and the leave-one-out weights do not fall for it
    assert weight["loo", "narrow"] < 1e-3
    assert r2["loo", "narrow"] >= r2["loo", "base"] - 2e-3
    assert r2["loo", "narrow"] > r2["objective", "narrow"]


def test_cv_estimator_with_loo_weights_and_folds(routing):
    # K-fold cv with kernel_selection="loo": the validation scores of the
    # whole procedure, each fold's weights and C learned on its training rows
    from kernlearn import MultitaskMKLRegressorCV

    X, y, t = _tasks()
    folds = list(StratifiedKFold(3, shuffle=True, random_state=1).split(X, t))
    Cs = [0.1, 10.0]
    cv = MultitaskMKLRegressorCV(KERNELS, Cs=Cs, cv=folds).fit(X, y, task_index=t)

    def auto(rows):  # C="auto" started from the grid Cs
        est = MultitaskMKLRegressor(KERNELS, C="auto", shared=True)  # shared="auto"
        est._validate_params()
        return est._fit_regression(X[rows], y[rows], t[rows], None, C_grid=Cs)

    manual = [auto(tr).score(X[te], y[te], task_index=t[te]) for tr, te in folds]
    np.testing.assert_allclose([cv.cv_results_[f"split{k}_test_score"][0]
                                for k in range(3)], manual, rtol=1e-10)
    ref = auto(np.arange(len(y)))
    assert cv.C_ == pytest.approx(ref.C_) and cv.n_splits_ == 3
    np.testing.assert_allclose(cv.predict(X, task_index=t), ref.predict(X, task_index=t))
    # the grid only starts the search: the learned C is off the grid
    assert cv.C_ not in Cs


# ------------------------------------------------------- the classifier's CV
def _class_tasks(seed=0, T=3, m=30):
    rng = np.random.default_rng(seed)
    t = np.repeat(np.arange(T) * 3 + 1, m)
    X = rng.normal(size=(T * m, 3))
    slope = np.array([1.0, -0.5, 2.0])[t // 3]
    y = np.where(slope * X[:, 0] + np.sin(2 * X[:, 1]) + 0.6 * rng.normal(size=T * m) > 0,
                 "yes", "no")
    return X, y, t


@pytest.mark.parametrize("form", ["mtfl", "mtsfl"])
def test_classifier_cv_equals_gridsearch_on_the_same_grid_and_folds(form, routing):
    from kernlearn import MultitaskMKLClassifierCV

    X, y, t = _class_tasks()
    Cs = [0.01, 0.1, 1.0, 100.0]
    strata = 2 * (t // 3) + (y == "yes")
    folds = list(StratifiedKFold(3, shuffle=True, random_state=2).split(X, strata))
    kw = dict(formulation=form, max_iter=10, class_weight="balanced")
    cv = MultitaskMKLClassifierCV(KERNELS, Cs=Cs, cv=folds, **kw).fit(X, y, task_index=t)
    search = GridSearchCV(MultitaskMKLClassifier(KERNELS, **kw), {"C": Cs},
                          cv=folds).fit(X, y, task_index=t)
    for key in ("mean_test_score", "std_test_score", "split0_test_score",
                "split2_test_score"):
        np.testing.assert_allclose(cv.cv_results_[key], search.cv_results_[key],
                                   rtol=1e-12)
    assert len(set(cv.cv_results_["mean_test_score"])) > 1  # C matters here
    np.testing.assert_array_equal(cv.cv_results_["rank_test_score"],
                                  search.cv_results_["rank_test_score"])
    assert cv.C_ == search.best_params_["C"] and cv.best_score_ == search.best_score_
    np.testing.assert_array_equal(cv.classes_, ["no", "yes"])
    if form == "mtsfl":
        np.testing.assert_array_equal(
            cv.decision_function(X, task_index=t),
            search.best_estimator_.decision_function(X, task_index=t))
    else:  # (the refit starts from its fold fits: the same optimum within the gaps)
        best = search.best_estimator_
        assert abs(cv.objective_ - best.objective_) <= max(cv.gap_, best.gap_)
    # an int cv: StratifiedKFold on task and class
    cv3 = MultitaskMKLClassifierCV(KERNELS, Cs=Cs, cv=3, **kw).fit(X, y, task_index=t)
    folds3 = list(StratifiedKFold(3).split(X, strata))
    manual = [np.mean(_manual_cv(MultitaskMKLClassifier(KERNELS, **kw), X, y, t, folds3,
                                 C)) for C in Cs]
    np.testing.assert_allclose(cv3.cv_results_["mean_test_score"], manual, rtol=1e-12)
    with pytest.raises(ValueError, match="Cs must be"):
        MultitaskMKLClassifierCV(KERNELS, Cs=[]).fit(X, y, task_index=t)
    with pytest.raises(ValueError, match="Only binary"):
        MultitaskMKLClassifierCV(KERNELS, Cs=[1.0], cv=2).fit(
            X, np.arange(len(y)) % 3, task_index=t)


# ------------------------------------ shared components in the LOO criterion
def _brute_force_coupled_loo(K_full, y, w, t):
    """Leave-one-out SSE by refits of kernel ridge on all rows, a free bias per task."""
    tasks = np.unique(t)
    E = (t[:, None] == tasks[None, :]).astype(float)
    sse = 0.0
    for i in range(len(y)):
        keep = np.r_[0:i, i + 1:len(y)]
        A = K_full[np.ix_(keep, keep)] + np.diag(1 / w[keep])
        Ek = E[keep]
        M = np.block([[A, Ek], [Ek.T, np.zeros((len(tasks),) * 2)]])
        sol = np.linalg.solve(M, np.r_[y[keep], np.zeros(len(tasks))])
        pred = K_full[i, keep] @ sol[:len(keep)] + E[i] @ sol[len(keep):]
        sse += w[i] * (y[i] - pred) ** 2
    return sse


@pytest.mark.parametrize("weighted", [False, True])
def test_coupled_loo_with_shared_components_matches_refits(weighted, rng):
    # A = blockdiag(sum_j mu_j K_tj) + mu_s K_lin (all rows) + diag(1/w), a free
    # bias per task: the Woodbury form equals n refits, and its gradient
    # (the shared weight's too) matches central differences
    from kernlearn.methods import mtmkl as M
    from kernlearn.methods.mtmkl.selection import _loo_objective

    X, y, t = _tasks(T=3, m=9)
    rows = [np.flatnonzero(t == v) for v in np.unique(t)]
    rows[1] = rows[1][:6]
    idx = np.concatenate(rows)
    specs = ["linear", ("rbf", {"gamma": 0.5})]
    grams, y_b, masks, blocks = _bucket_grams(specs, X, y, rows)
    kern = M.TaskKernels(specs).fit(X)
    Z_b = M.gather_rows(blocks, kern.factor(0))
    w_row = rng.uniform(0.5, 2.0, len(y)) if weighted else np.ones(len(y))
    w_b = blocks.gather(w_row)
    mu = np.array([0.4, 1.3, 0.8])
    f, g = _loo_objective(mu, grams, y_b, w_b, masks, shared=[Z_b])
    same = t[idx][:, None] == t[idx][None, :]
    K_full = mu[2] * kern.full(0)[np.ix_(idx, idx)] + sum(
        m * kern.full(j)[np.ix_(idx, idx)] * same for j, m in enumerate(mu[:2]))
    assert f == pytest.approx(_brute_force_coupled_loo(K_full, y[idx], w_row[idx], t[idx]),
                              rel=1e-9)
    for j in range(3):
        e = np.zeros(3)
        e[j] = 1e-6
        fd = (_loo_objective(mu + e, grams, y_b, w_b, masks, grad=False, shared=[Z_b])
              - _loo_objective(mu - e, grams, y_b, w_b, masks, grad=False,
                               shared=[Z_b])) / 2e-6
        assert g[j] == pytest.approx(fd, rel=1e-5, abs=1e-8)


def test_auto_fit_reproduces_its_training_residuals():
    # the fitted model (within-task blocks, shared linear part, biases) must
    # give the kernel ridge's fitted values y - beta / w on its training rows
    X, y, t = _tasks()
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    for shared in (False, True):
        est = MultitaskMKLRegressor(KERNELS, C="auto", shared=shared).fit(
            X, y, task_index=t, sample_weight=w)
        beta = est._blocks.scatter(est._model.coef[2], len(y))
        # (beta of the targets the fit saw: each task's standardised ones
        # without shared components)
        scale = est.y_scale_[np.searchsorted(est.tasks_, t)]
        np.testing.assert_allclose(est.predict(X, task_index=t), y - scale * beta / w,
                                   atol=1e-9)
        assert est.C_ > 0 and (est.shared_kernel_weights_[1:] == 0).all()
    assert est.shared_kernel_weights_[0] > 0  # these tasks share a slope component


def _synthetic(related, seed, T=30, m=10, d=4):
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(T), 2 * m)
    X = rng.normal(size=(len(task), d))
    if related:  # one function for all tasks, small task deviations
        w = rng.normal(size=d)
        f = X @ w / np.sqrt(d) + np.sin(X[:, 0]) + (X * 0.2 * rng.normal(size=(T, d))[task]).sum(1)
    else:  # every task its own function
        W = rng.normal(size=(T, d))
        f = (X * W[task]).sum(1) / np.sqrt(d) + np.sin(X[:, 0] * rng.normal(size=T)[task])
    y = f + rng.normal(size=T)[task] + 0.3 * rng.normal(size=len(task))
    tr = np.tile(np.r_[np.ones(m, bool), np.zeros(m, bool)], T)
    return X[tr], y[tr], task[tr], X[~tr], y[~tr], task[~tr]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shared_by_loo_helps_related_tasks_and_never_hurts_unrelated(seed):
    from kernlearn import MultitaskMKLRegressorCV

    kern = ["linear", ("rbf", {"gamma": 0.1}), ("rbf", {"gamma": 0.5})]
    r2 = {}
    for related in (True, False):
        Xtr, ytr, ttr, Xte, yte, tte = _synthetic(related, seed)
        for shared in (False, "auto"):
            est = MultitaskMKLRegressorCV(kern, shared=shared).fit(Xtr, ytr, task_index=ttr)
            r2[related, shared] = _per_task_r2(yte, est.predict(Xte, task_index=tte), tte)
            if related and shared == "auto":
                assert est.shared_ and est.shared_kernel_weights_[0] > 0.1
    # 10 training rows per task: the common linear part is what the per-task
    # models cannot estimate alone (+0.3 to +5 points on these seeds)
    assert r2[True, "auto"] > r2[True, False]
    assert r2[False, "auto"] >= r2[False, False] - 0.01


def test_training_folds_of_one_task_are_refused_too():
    # doc/mtmkl.md: with routing off a fit receiving task_index in model
    # selection is an error, and (routing on) a split hiding a task from its
    # training rows is refused.  KFold(2) on two tasks sorted by task trains
    # each fold on one task: both checks were skipped for one-task folds, so
    # without routing the other task's rows were scored with that task's model
    # (silently), and with routing the split scored NaN
    from sklearn.model_selection import KFold

    X, y, t = _tasks(T=2)
    est = MultitaskMKLRegressor(KERNELS, max_iter=5)
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        cross_val_score(est, X, y, cv=KFold(2), params={"task_index": t})
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(ValueError, match="validation rows only"):
            cross_val_score(est, X, y, cv=KFold(2), params={"task_index": t})
    # a fit outside model selection on one task is unaffected
    assert MultitaskMKLRegressor(KERNELS, max_iter=5).fit(
        X[:24], y[:24], task_index=t[:24]).tasks_.size == 1
