"""A fifty-eighth user's audit: the estimators inside scikit-learn's inspection
and meta-estimator tools.

A data scientist put every public estimator into the tools she uses on any
scikit-learn model and compared what came out with the model's own outputs
or with an equivalent scikit-learn estimator.

What held (checked on small synthetic sets; pinned here per tool family):

- Inspection: ``permutation_importance`` (zero for the columns a sparse FGM
  model leaves out), ``partial_dependence`` (the mean of the model's own
  predictions over the grid; per class for multiclass, the positive class's
  for binary), ``DecisionBoundaryDisplay`` (a grid per class for
  ``decision_function``), ``RocCurveDisplay`` with ``pos_label`` the first
  class, ``TunedThresholdClassifierCV`` and ``FixedThresholdClassifier``.
- Feature selection: FGM's ``coef_`` is on the inputs' units (the decision
  function is ``X @ coef_.T + intercept_`` with ``standardize=True``, as
  ``LogisticRegression``'s), so ``SelectFromModel`` at a tiny threshold keeps
  FGM's own selection; GrFL's and FGM-with-family ``feature_importances_``
  do not change with a column's units; ``RFE``/``RFECV`` and
  ``SequentialFeatureSelector`` find the informative columns of a
  regression as scikit-learn's linear models do.  The kernel estimators
  (p-norm MKL, low-rank, multitask) have no per-input weight and are refused
  by ``SelectFromModel``/``RFE`` with scikit-learn's message, as ``SVC`` with
  an RBF kernel is.
- Meta-estimators: ``CalibratedClassifierCV`` (binary and multiclass
  decision values), ``VotingClassifier(voting="soft")``,
  ``StackingClassifier``/``Regressor``, ``BaggingClassifier`` with column
  subsets and weights (a bootstrapped FGM is the fit on the drawn rows: the
  draws' counts are weights FGM takes as repeated rows; at their automatic
  levels GrFL and the low-rank estimators are not, as audit 51 documents), ``OneVsRestClassifier`` (equal to the binary fits),
  ``OneVsOneClassifier``, ``MultiOutputRegressor``,
  ``TransformedTargetRegressor``, ``ClassifierChain``.
- Model selection: ``cross_val_predict(method="predict_proba")`` with a class
  missing from a fold gives it probability 0 as for ``LogisticRegression``
  (``decision_function`` is refused by scikit-learn in the same words);
  ``learning_curve``, ``validation_curve``, ``HalvingGridSearchCV`` with
  ``resource="n_samples"``.
- Output containers: ``set_output(transform="pandas")`` keeps the rows'
  index and names the columns ``get_feature_names_out()``, also through a
  ``ColumnTransformer``; metadata routing of ``sample_weight`` through a
  ``Pipeline`` and a ``GridSearchCV`` (to ``fit`` and ``score``) gives the
  directly weighted fits' scores.
"""

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LinearRegression, LogisticRegression

from kernlearn import (
    FGMClassifier,
    FGMRegressor,
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
    MultitaskMKLClassifier,
    MultitaskMKLRegressor,
    PNormMKLClassifier,
)
from kernlearn.families import IntersectionKernelFeatures, PolynomialPool

pytestmark = pytest.mark.filterwarnings("ignore")


def _binary():
    return make_classification(80, 6, n_informative=3, random_state=0)


def _multiclass():
    return make_classification(90, 6, n_informative=4, n_classes=3,
                               n_clusters_per_class=1, random_state=0)


def _regression():
    X, y, coef = make_regression(80, 6, n_informative=3, noise=1.0, coef=True,
                                 random_state=0)
    return X, y, np.flatnonzero(coef)


# ------------------------------------------------------------------ inspection
def test_partial_dependence_and_permutation_importance_follow_the_model():
    from sklearn.inspection import partial_dependence, permutation_importance

    X, y, informative = _regression()
    m = FGMRegressor(C=1.0).fit(X, y)
    grid = np.linspace(-1, 1, 4)
    pd_ = partial_dependence(m, X, [0], custom_values={0: grid}, kind="average")
    manual = [m.predict(np.column_stack([np.full(len(X), g), X[:, 1:]])).mean()
              for g in grid]
    np.testing.assert_allclose(pd_["average"][0], manual, rtol=1e-10)
    # a linear model: the slope is the column's coefficient in X's units
    np.testing.assert_allclose(np.diff(pd_["average"][0]) / np.diff(grid),
                               m.coef_[0], rtol=1e-8)
    imp = permutation_importance(m, X, y, n_repeats=2, random_state=0).importances_mean
    assert np.all(imp[m.coef_ == 0] == 0)
    assert set(np.argsort(-imp)[:3]) == set(informative)

    # multiclass: one curve per class, the mean of predict_proba (Platt)
    Xm, ym = _multiclass()
    c = PNormMKLClassifier(random_state=0, probability=True).fit(Xm, ym)
    pdc = partial_dependence(c, Xm, [2], custom_values={2: grid}, kind="average")
    assert pdc["average"].shape == (3, 4)
    X0 = np.column_stack([Xm[:, :2], np.full(len(Xm), grid[1]), Xm[:, 3:]])
    np.testing.assert_allclose(pdc["average"][:, 1], c.predict_proba(X0).mean(0),
                               rtol=1e-10)


def test_boundary_roc_and_threshold_tools_read_classes_as_sklearn_does():
    import matplotlib

    matplotlib.use("Agg")
    from sklearn.inspection import DecisionBoundaryDisplay
    from sklearn.metrics import RocCurveDisplay, roc_auc_score
    from sklearn.model_selection import FixedThresholdClassifier

    X, y = _binary()
    ys = np.where(y == 1, "yes", "no")
    m = LowRankKernelClassifier(random_state=0).fit(X, ys)
    d = m.decision_function(X)
    roc = RocCurveDisplay.from_estimator(m, X, ys, pos_label="no")
    assert roc.roc_auc == pytest.approx(roc_auc_score(ys == "no", -d))
    fixed = FixedThresholdClassifier(m, threshold=0.3, pos_label="yes").predict(X)
    np.testing.assert_array_equal(fixed == "yes", d >= 0.3)

    Xm, ym = _multiclass()
    c = PNormMKLClassifier(random_state=0).fit(Xm[:, :2], ym)
    disp = DecisionBoundaryDisplay.from_estimator(
        c, Xm[:, :2], response_method="decision_function", grid_resolution=5)
    assert disp.response.shape == (5, 5, 3)
    grid = np.c_[disp.xx0.ravel(), disp.xx1.ravel()]
    np.testing.assert_allclose(disp.response.reshape(-1, 3), c.decision_function(grid))
    import matplotlib.pyplot as plt

    plt.close("all")


# ---------------------------------------------------------- feature selection
def test_fgm_coef_is_in_input_units_so_select_from_model_keeps_its_selection():
    from sklearn.feature_selection import SelectFromModel

    X, y = _binary()
    m = FGMClassifier(C=1.0, B=2, max_iter=1).fit(X, y)
    np.testing.assert_allclose(m.decision_function(X), X @ m.coef_.ravel() + m.intercept_,
                               atol=1e-12)
    sfm = SelectFromModel(m, prefit=True, threshold=1e-12)
    np.testing.assert_array_equal(sfm.get_support(), m.get_support())
    # a column in other units: coef_ scales as LogisticRegression's does, the
    # model (standardised) does not change
    X2 = X.copy()
    X2[:, 0] *= 1000
    m2 = clone(m).fit(X2, y)
    np.testing.assert_allclose(m2.coef_[0, 0] * 1000, m.coef_[0, 0], rtol=1e-6)
    np.testing.assert_allclose(m2.decision_function(X2), m.decision_function(X), atol=1e-9)


@pytest.mark.parametrize("make", [
    lambda: FGMClassifier(C=1.0, family=PolynomialPool()),
    lambda: FGMClassifier(C=1.0, family=IntersectionKernelFeatures()),
    lambda: InfiniteFeatureClassifier(random_state=0),
], ids=["fgm-polynomial", "fgm-intersection", "grfl"])
def test_feature_importances_do_not_depend_on_a_columns_units(make):
    from sklearn.feature_selection import SelectFromModel

    X, y = _binary()
    X2 = X.copy()
    X2[:, 0] *= 1000
    a, b = make().fit(X, y), make().fit(X2, y)
    np.testing.assert_allclose(a.feature_importances_, b.feature_importances_, atol=1e-8)
    assert a.feature_importances_.shape == (6,)
    assert a.feature_importances_.sum() == pytest.approx(1.0)
    sel = SelectFromModel(a, prefit=True)
    np.testing.assert_array_equal(sel.get_support(),
                                  a.feature_importances_ >= a.feature_importances_.mean())


def test_rfe_rfecv_and_sequential_selection_find_what_sklearn_finds():
    from sklearn.feature_selection import RFE, RFECV, SequentialFeatureSelector

    X, y, informative = _regression()
    truth = np.isin(np.arange(6), informative)
    ref = RFE(LinearRegression(), n_features_to_select=3).fit(X, y).support_
    np.testing.assert_array_equal(ref, truth)
    np.testing.assert_array_equal(
        RFE(FGMRegressor(C=1.0), n_features_to_select=3).fit(X, y).support_, truth)
    np.testing.assert_array_equal(
        RFE(InfiniteFeatureRegressor(random_state=0), n_features_to_select=3)
        .fit(X, y).support_, truth)
    np.testing.assert_array_equal(RFECV(FGMRegressor(C=1.0), cv=2).fit(X, y).support_, truth)
    sfs = SequentialFeatureSelector(LowRankKernelRegressor(random_state=0),
                                    n_features_to_select=3, cv=2).fit(X, y)
    np.testing.assert_array_equal(sfs.get_support(), truth)


@pytest.mark.parametrize("make", [
    lambda: PNormMKLClassifier(random_state=0),
    lambda: LowRankKernelClassifier(random_state=0),
    lambda: MultitaskMKLClassifier(),
], ids=["pnorm", "lowrank", "multitask"])
def test_kernel_models_are_refused_by_select_from_model_as_an_rbf_svc_is(make):
    from sklearn.feature_selection import SelectFromModel
    from sklearn.svm import SVC

    X, y = _binary()
    with pytest.raises(ValueError, match="coef_") as ref:
        SelectFromModel(SVC()).fit(X, y).get_support()
    with pytest.raises(ValueError, match="coef_") as ours:
        SelectFromModel(make()).fit(X, y).get_support()
    assert str(ours.value).replace(type(make()).__name__, "SVC") == str(ref.value)


# ------------------------------------------------------------ meta-estimators
def test_calibration_voting_and_stacking_shapes_and_probabilities():
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import StackingClassifier, VotingClassifier

    X, y = _binary()
    Xm, ym = _multiclass()
    for Xs, ys in ((X, y), (Xm, ym)):
        cal = CalibratedClassifierCV(PNormMKLClassifier(random_state=0), cv=3).fit(Xs, ys)
        P = cal.predict_proba(Xs)
        assert P.shape == (len(ys), len(np.unique(ys)))
        np.testing.assert_allclose(P.sum(1), 1)
        assert (cal.predict(Xs) == ys).mean() > 0.85
    ests = [("fgm", FGMClassifier(C=1.0, probability=True)),
            ("lr", LowRankKernelClassifier(random_state=0, probability=True))]
    vote = VotingClassifier(ests, voting="soft").fit(Xm, ym)
    fitted = [e.predict_proba(Xm) for e in vote.estimators_]
    np.testing.assert_allclose(vote.predict_proba(Xm), np.mean(fitted, axis=0))
    stack = StackingClassifier([("fgm", FGMClassifier(C=1.0)),
                                ("grfl", InfiniteFeatureClassifier(random_state=0))],
                               cv=3).fit(Xm, ym)
    # two estimators' decision values, one column per class each
    assert stack.transform(Xm[:4]).shape == (4, 6)
    np.testing.assert_allclose(stack.transform(Xm[:4])[:, :3],
                               stack.estimators_[0].decision_function(Xm[:4]))


def test_one_vs_rest_bagging_and_multioutput_equal_the_direct_fits():
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.ensemble import BaggingClassifier
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.multioutput import MultiOutputRegressor

    Xm, ym = _multiclass()
    ovr = OneVsRestClassifier(FGMClassifier(C=1.0)).fit(Xm, ym)
    for k in range(3):
        direct = FGMClassifier(C=1.0).fit(Xm, (ym == k).astype(int))
        np.testing.assert_allclose(ovr.estimators_[k].decision_function(Xm),
                                   direct.decision_function(Xm))
    w = np.random.RandomState(0).randint(1, 4, len(ym)).astype(float)
    bag = BaggingClassifier(FGMClassifier(C=1.0), n_estimators=2, max_features=3,
                            bootstrap=False, max_samples=len(ym), random_state=0)
    bag.fit(Xm, ym)
    for est, cols in zip(bag.estimators_, bag.estimators_features_):
        direct = FGMClassifier(C=1.0).fit(Xm[:, cols], ym)
        np.testing.assert_allclose(est.decision_function(Xm[:, cols]),
                                   direct.decision_function(Xm[:, cols]))
    # bootstrap: scikit-learn passes each estimator the draws' counts as
    # sample_weight (rows drawn by the user's weights), which FGM takes as
    # repeated rows: the fit on the drawn rows
    boot = BaggingClassifier(FGMClassifier(C=1.0), n_estimators=2, max_features=4,
                             random_state=0).fit(Xm, ym, sample_weight=w)
    for est, rows, cols in zip(boot.estimators_, boot.estimators_samples_,
                               boot.estimators_features_):
        assert len(np.unique(rows)) < len(rows)  # (rows drawn more than once)
        direct = FGMClassifier(C=1.0).fit(Xm[rows][:, cols], ym[rows])
        np.testing.assert_allclose(est.decision_function(Xm[:, cols]),
                                   direct.decision_function(Xm[:, cols]), atol=1e-10)

    X, y, _ = _regression()
    Y = np.c_[y, -2 * y + 5]
    mo = MultiOutputRegressor(LowRankKernelRegressor(random_state=0)).fit(X, Y)
    direct = LowRankKernelRegressor(random_state=0).fit(X, Y[:, 1])
    np.testing.assert_allclose(mo.predict(X)[:, 1], direct.predict(X))
    yp = y - y.min() + 1
    ttr = TransformedTargetRegressor(MultitaskMKLRegressor(), func=np.log,
                                     inverse_func=np.exp).fit(X, yp)
    np.testing.assert_allclose(ttr.predict(X),
                               np.exp(MultitaskMKLRegressor().fit(X, np.log(yp)).predict(X)))


# ------------------------------------------------------------ model selection
def test_cross_val_predict_gives_a_class_missing_from_a_fold_probability_zero():
    from sklearn.model_selection import KFold, cross_val_predict

    X, y = _multiclass()
    y = np.r_[np.zeros(40), np.ones(40), np.full(10, 2)].astype(int)  # class 2 last
    ref = cross_val_predict(LogisticRegression(), X, y, cv=KFold(3), method="predict_proba")
    for est in (FGMClassifier(C=1.0, probability=True),
                LowRankKernelClassifier(random_state=0, probability=True)):
        P = cross_val_predict(est, X, y, cv=KFold(3), method="predict_proba")
        assert P.shape == ref.shape == (90, 3)
        np.testing.assert_array_equal(P == 0, ref == 0)
        np.testing.assert_allclose(P.sum(1), 1)
        with pytest.raises(ValueError, match="Only 2 class/es in training fold"):
            cross_val_predict(est, X, y, cv=KFold(3), method="decision_function")


def test_learning_validation_and_halving_searches_over_our_parameters():
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import (
        HalvingGridSearchCV,
        learning_curve,
        validation_curve,
    )

    X, y = _binary()
    sizes, train, test = learning_curve(FGMClassifier(C=1.0), X, y, train_sizes=[0.5, 1.0],
                                        cv=2)
    np.testing.assert_array_equal(sizes, [20, 40])
    assert train.shape == test.shape == (2, 2)
    _, vtest = validation_curve(PNormMKLClassifier(random_state=0), X, y, param_name="p",
                                   param_range=[1.2, 2.0], cv=2)
    assert vtest.shape == (2, 2) and np.all(vtest > 0.7)
    h = HalvingGridSearchCV(FGMClassifier(), {"C": [0.1, 1.0, 10.0]}, resource="n_samples",
                            cv=2, min_resources=30, factor=2, random_state=0).fit(X, y)
    assert list(h.n_resources_) == [30, 60]
    direct = FGMClassifier(**h.best_params_).fit(X, y)
    np.testing.assert_allclose(h.best_estimator_.decision_function(X),
                               direct.decision_function(X))


# ------------------------------------------------- output containers, routing
@pytest.mark.parametrize("make", [
    lambda: FGMClassifier(C=1.0),
    lambda: FGMClassifier(C=1.0, family=PolynomialPool()),
    lambda: InfiniteFeatureClassifier(random_state=0),
], ids=["fgm", "fgm-polynomial", "grfl"])
def test_pandas_output_keeps_the_index_and_names_the_columns(make):
    pd = pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer

    X, y = _binary()
    Xd = pd.DataFrame(X, columns=[f"c{i}" for i in range(6)], index=np.arange(80) * 3 + 7)
    m = make().set_output(transform="pandas").fit(Xd, y)
    Z = m.transform(Xd)
    assert isinstance(Z, pd.DataFrame)
    np.testing.assert_array_equal(Z.index, Xd.index)
    np.testing.assert_array_equal(Z.columns, m.get_feature_names_out())
    np.testing.assert_allclose(Z.to_numpy(), make().fit(X, y).transform(X))
    ct = ColumnTransformer([("m", make(), ["c0", "c1", "c2", "c3"]),
                            ("p", "passthrough", ["c4"])]).set_output(transform="pandas")
    Zc = ct.fit_transform(Xd, y)
    names = ["m__" + n for n in ct.named_transformers_["m"].get_feature_names_out()]
    assert list(Zc.columns) == [*names, "p__c4"]


@pytest.mark.parametrize("make, data", [
    (lambda: MultitaskMKLClassifier(), _binary),
    (lambda: InfiniteFeatureRegressor(random_state=0), lambda: _regression()[:2]),
], ids=["multitask-classifier", "grfl-regressor"])
def test_routed_weights_reach_fit_and_score_as_direct_weights(make, data):
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.pipeline import make_pipeline

    X, y = data()
    w = np.random.RandomState(0).randint(0, 4, len(y)).astype(float)
    cv = KFold(2, shuffle=True, random_state=0)
    manual = [make().fit(X[tr], y[tr], sample_weight=w[tr])
              .score(X[te], y[te], sample_weight=w[te]) for tr, te in cv.split(X)]
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make().set_fit_request(sample_weight=True).set_score_request(sample_weight=True)
        g = GridSearchCV(est, {"verbose": [0]}, cv=cv).fit(X, y, sample_weight=w)
        pipe = make_pipeline(clone(est)).fit(X, y, sample_weight=w)
    assert g.cv_results_["mean_test_score"][0] == pytest.approx(np.mean(manual), rel=1e-10)
    np.testing.assert_allclose(pipe.predict(X),
                               make().fit(X, y, sample_weight=w).predict(X))
