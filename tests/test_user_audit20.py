"""A twentieth user's audit: the estimators inside the scikit-learn ecosystem.

A data scientist put each estimator in the tools of an ordinary project:
pipelines with column transformers and pandas output, feature selection,
searches with several metrics, calibration, ensembles, inspection plots and
metadata routing.  Each test here failed before its fix.
"""

import numpy as np
import pytest

pd = pytest.importorskip("pandas")


def _frame(n=80, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.standard_normal((n, p)), columns=[f"f{j}" for j in range(p)])
    y = X["f0"] + 0.5 * X["f1"] ** 2 + 0.2 * rng.standard_normal(n)
    return X, y


# --------------------------------------------- pandas output of a whole pipeline
@pytest.mark.parametrize("kind", ["classifier", "classifier-platt", "regressor"])
def test_grfl_in_a_pipeline_with_pandas_output_fits_and_predicts(kind):
    # set_output(transform="pandas") on a pipeline reaches every step with a
    # transform, the infinite-feature model's too; its predictions read its
    # own transform, got a DataFrame, and fit stopped in its score or Platt
    # folds ("'DataFrame' object has no attribute 'ravel'"; the regressor's
    # predict raised KeyError: (slice(None, None, None), 0))
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor

    X, y = _frame()
    kw = dict(max_features=3, n_candidates=5, random_state=0)
    if kind == "regressor":
        est = InfiniteFeatureRegressor(**kw)
    else:
        y = (y > y.median()).astype(int)
        est = InfiniteFeatureClassifier(probability=kind.endswith("platt"), **kw)
    plain = make_pipeline(StandardScaler(), clone(est)).fit(X, y)
    pipe = make_pipeline(StandardScaler(), est).set_output(transform="pandas").fit(X, y)
    np.testing.assert_array_equal(pipe.predict(X), plain.predict(X))
    assert isinstance(pipe.predict(X), np.ndarray)
    assert pipe.score(X, y) == plain.score(X, y)
    Z = pipe.transform(X)  # the learned features, now named columns
    assert isinstance(Z, pd.DataFrame)
    assert list(Z.columns) == list(pipe[-1].get_feature_names_out())


# ------------------------------------------- task ids and scikit-learn's scorers
def _tasks_binary(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    t = np.arange(n) % 2
    y = (X[:, 0] * (2 * t - 1) + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y, t


@pytest.mark.parametrize("scoring, advice", [
    ("roc_auc", "scoring=MultitaskScorer('roc_auc')"),
    ({"auc": "roc_auc", "acc": "accuracy"},
     "scoring={'auc': MultitaskScorer('roc_auc'), 'acc': MultitaskScorer('accuracy')}"),
])
def test_the_scorer_advice_for_task_ids_names_the_users_scoring(scoring, advice):
    # a classifier with task ids scored by roc_auc was told "wrap it:
    # scoring=MultitaskScorer('r2')": a regression metric, which on 0/1 labels
    # scores something, but not what was asked for
    import sklearn
    from sklearn.model_selection import StratifiedKFold, cross_validate

    from kernlearn import MultitaskMKLClassifier

    X, y, t = _tasks_binary()
    cv = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, 2 * t + y))
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(ValueError, match="calls MultitaskMKLClassifier's predictions "
                                             "without task_index") as info:
            cross_validate(MultitaskMKLClassifier(["linear"]), X, y, cv=cv,
                           params={"task_index": t}, scoring=scoring, error_score="raise")
        assert advice in str(info.value) and "'r2'" not in str(info.value)
        # the advice, followed, scores
        from kernlearn.estimators.mtmkl import MultitaskScorer

        fixed = (MultitaskScorer(scoring) if isinstance(scoring, str) else
                 {key: MultitaskScorer(name) for key, name in scoring.items()})
        res = cross_validate(MultitaskMKLClassifier(["linear"]), X, y, cv=cv,
                             params={"task_index": t}, scoring=fixed, error_score="raise")
        key = "test_score" if isinstance(scoring, str) else "test_auc"
        assert np.all(res[key] > 0.6)


def test_an_unrequested_classifier_score_is_advised_a_classification_metric():
    # task ids routed to fit but not to score: the advice was
    # MultitaskScorer('r2') for a classifier too
    import sklearn
    from sklearn.model_selection import cross_val_score

    from kernlearn import MultitaskMKLClassifier

    X, y, t = _tasks_binary()
    with sklearn.config_context(enable_metadata_routing=True):
        est = MultitaskMKLClassifier(["linear"]).set_score_request(task_index=False)
        with pytest.raises(ValueError, match=r"scoring=MultitaskScorer\('accuracy'\)"):
            cross_val_score(est, X, y, cv=3, params={"task_index": t}, error_score="raise")


# ---------------------------------------------------- weights of a data width
@pytest.mark.parametrize("name", ["MultitaskMKLRegressor", "MultitaskMKLClassifier"])
def test_multitask_scale_width_weighs_rows_as_repeated_rows(name):
    # gamma="scale" (a bare "rbf" too) is the weighted 1/(D Var X) in every
    # estimator's kernel list, but the multitask MKL models computed it
    # unweighted: integer weights fitted another model than the repeated rows
    # (0.001 apart on these predictions, 0.008 on the margins; at the same
    # width they agree to 1e-5, the solver's own precision)
    import kernlearn

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 3)) * [1.0, 3.0, 0.5]
    y = X[:, 0] + np.sin(X[:, 1])
    if name == "MultitaskMKLClassifier":
        y = (y > np.median(y)).astype(int)
    w = rng.integers(1, 4, 50)
    Est = getattr(kernlearn, name)
    a = Est(kernels=["rbf", "linear"]).fit(X, y, sample_weight=w.astype(float))
    b = Est(kernels=["rbf", "linear"]).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    out = "predict" if name == "MultitaskMKLRegressor" else "decision_function"
    np.testing.assert_allclose(getattr(a, out)(X), getattr(b, out)(X), atol=1e-4)
    assert a.kernels_.params_[0]["gamma"] == pytest.approx(b.kernels_.params_[0]["gamma"],
                                                           rel=1e-12)


# ------------------------------------------- class_weight="balanced" and weights
@pytest.mark.parametrize("name", ["FGMClassifier", "InfiniteFeatureClassifier",
                                  "LowRankKernelClassifier", "MultitaskMKLClassifier"])
def test_balanced_class_weights_count_weights_not_rows(name):
    # "balanced" counted every row of a class, whatever its sample weight:
    # rows of zero weight (removed rows) still moved the class weights (the
    # margins 0.24-1.2 from the fit without them) and integer weights were not
    # repeated rows; scikit-learn's LogisticRegression and SVC count weights
    from sklearn.datasets import make_classification

    import kernlearn

    X, y = make_classification(90, 4, n_informative=3, n_redundant=0, weights=[0.7],
                               random_state=0)
    Est = getattr(kernlearn, name)
    kw = {"random_state": 0} if "random_state" in Est().get_params() else {}
    if name == "InfiniteFeatureClassifier":
        kw.update(max_features=3, n_candidates=10, inner_tol=1e-10)
    w = np.ones(90)
    w[np.flatnonzero(y == 0)[:25]] = 0  # 36 rows of class 0 left, 29 of class 1
    a = Est(class_weight="balanced", **kw).fit(X, y, sample_weight=w)
    b = Est(class_weight="balanced", **kw).fit(X[w > 0], y[w > 0])
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-9)
    if name == "InfiniteFeatureClassifier":  # (an exact solver: weights are repeats)
        r = np.random.default_rng(0).integers(1, 4, 90)
        c = Est(class_weight="balanced", **kw).fit(X, y, sample_weight=r.astype(float))
        d = Est(class_weight="balanced", **kw).fit(np.repeat(X, r, axis=0), np.repeat(y, r))
        np.testing.assert_allclose(c.decision_function(X), d.decision_function(X),
                                   atol=1e-8)


def test_balanced_class_weights_match_scikit_learns():
    from sklearn.utils.class_weight import compute_class_weight

    from kernlearn.estimators._base import fit_sample_weight

    y = np.array(["a", "b", "b", "c", "a", "b", "c", "c"])
    w = np.array([1.0, 2.0, 0.0, 0.5, 3.0, 1.0, 0.0, 2.0])
    got = fit_sample_weight(w, 8, y, "balanced")
    classes = np.unique(y)
    ref = compute_class_weight("balanced", classes=classes, y=y, sample_weight=w)
    np.testing.assert_allclose(got, w * ref[np.searchsorted(classes, y)], rtol=1e-15)
    # without sample_weight: as before, scikit-learn's compute_sample_weight
    from sklearn.utils.class_weight import compute_sample_weight

    np.testing.assert_array_equal(fit_sample_weight(None, 8, y, "balanced"),
                                  compute_sample_weight("balanced", y))


def test_a_given_fourier_family_weighs_its_scale_width_as_repeated_rows():
    # gamma="scale" is the weighted 1/(D Var X) for the estimator's default
    # family; a family given explicitly, RandomFourierFeatures() (gamma=
    # "scale"), resolved it unweighted: integer weights fitted another model
    # than the repeated rows (0.019 apart on these predictions)
    from kernlearn import InfiniteFeatureRegressor
    from kernlearn.families import RandomFourierFeatures

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3)) * [1.0, 3.0, 0.5]
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1]
    w = rng.integers(1, 4, 60)
    kw = dict(family=RandomFourierFeatures(), max_features=4, n_candidates=10,
              inner_tol=1e-10, random_state=0)
    a = InfiniteFeatureRegressor(**kw).fit(X, y, sample_weight=w.astype(float))
    b = InfiniteFeatureRegressor(**kw).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert a.family_.widths_ == pytest.approx(b.family_.widths_, rel=1e-12)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-8)
    # (the parameter object is not the fitted one: still gamma="scale")
    assert kw["family"].gamma == "scale" and a.family.gamma == "scale"


# ------------------------------------------------ why predict_proba is missing
def _why(exc):
    """The reason an ``available_if`` method is missing (the chained cause)."""
    return str(exc.__cause__ if exc.__cause__ is not None else exc)


@pytest.mark.parametrize("name", ["FGMClassifier", "PNormMKLClassifier",
                                  "MultitaskMKLClassifier"])
def test_predict_proba_missing_after_a_plain_fit_says_to_set_probability(name):
    # VotingClassifier(voting="soft") or calibration code calling predict_proba
    # of a model fitted without probabilities: FGM's attribute fallback hid
    # the reason ("'FGMClassifier' object has no attribute 'predict_proba'"),
    # and the others said "its parameters changed since, so fit it again",
    # though nothing had changed
    import kernlearn

    X, y, _ = _tasks_binary()
    est = getattr(kernlearn, name)().fit(X, y)
    with pytest.raises(AttributeError) as info:
        est.predict_proba(X)
    assert "set probability=True" in _why(info.value)
    assert "changed since" not in _why(info.value)
    # changed since: that reason stays
    est.set_params(probability=True)
    with pytest.raises(AttributeError) as info:
        est.predict_proba(X)
    assert "its parameters changed since" in _why(info.value)


def test_predict_proba_of_the_multitask_cv_classifier_names_the_plain_one():
    # it has no probability parameter, and was told "set probability=True"
    from kernlearn import MultitaskMKLClassifierCV

    X, y, _ = _tasks_binary()
    est = MultitaskMKLClassifierCV(["linear"], Cs=(1.0,), cv=3).fit(X, y)
    with pytest.raises(AttributeError) as info:
        est.predict_proba(X)
    assert "has no probability parameter" in _why(info.value)
    assert "MultitaskMKLClassifier(C=model.C_, probability=True)" in _why(info.value)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_fgm_polynomial_family_weighs_rows_as_repeated_rows(sparse):
    # the polynomial family scaled its monomials to unit root-mean-square over
    # the rows, unweighted: integer weights fitted another model than the
    # repeated rows (0.004 apart on these predictions, 0.018 elsewhere; the default
    # feature pool's scaling was weighted already)
    import scipy.sparse as sp

    from kernlearn import FGMRegressor
    from kernlearn.families import PolynomialPool

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    X[np.abs(X) < 0.6] = 0.0
    y = X[:, 0] + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(60)
    w = rng.integers(1, 4, 60)
    conv = sp.csr_matrix if sparse else np.asarray
    est = FGMRegressor(B=2, C=1.0, family=PolynomialPool())
    a = est.fit(conv(X), y, sample_weight=w.astype(float)).predict(conv(X))
    b = est.fit(conv(np.repeat(X, w, axis=0)), np.repeat(y, w)).predict(conv(X))
    np.testing.assert_allclose(a, b, atol=1e-9)
