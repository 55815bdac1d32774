"""A thirteenth user's audit: self-consistency and composition with scikit-learn.

A data scientist checked that each estimator agrees with itself (``predict``
against ``decision_function`` and ``predict_proba``, ``score`` against
scikit-learn's metrics, refits, clones, pickles and model files) and that it
composes with scikit-learn's tools (pipelines, searches with a process pool,
``cross_val_predict``, calibration, one-vs-rest, bagging, stacking,
metadata routing).  Most of it held; each test here failed before its fix.
"""

import numpy as np
import pytest

from kernlearn import PNormMKLClassifier
from kernlearn.kernels import rbf_kernel


def _binary(n=60, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y


def test_the_rbf_kernel_function_without_a_width_is_its_default_width():
    # kernels=[rbf_kernel] (the library's own function, no parameters) fitted
    # the model and then stopped in a KeyError: 'gamma' while recording the
    # raw-unit widths (it runs with its default, gamma=1.0)
    X, y = _binary()
    a = PNormMKLClassifier(kernels=[rbf_kernel, "linear"], random_state=0).fit(X, y)
    b = PNormMKLClassifier(kernels=[(rbf_kernel, {"gamma": 1.0}), "linear"],
                           random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_allclose(a.rbf_gamma_raw_[0], b.rbf_gamma_raw_[0])
    assert a.rbf_gamma_raw_[1] is None


def _tasks_regression(n=48, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    t = np.arange(n) % 2
    y = X[:, 0] * (2 * t - 1) + 0.1 * rng.standard_normal(n)
    return X, y, t


def _grfl_regressor():
    from kernlearn import InfiniteFeatureRegressor

    return InfiniteFeatureRegressor(max_features=2, n_candidates=5, random_state=0)


def test_grfl_task_index_in_a_search_without_routing_is_refused():
    # the multitask MKL estimators refused this; InfiniteFeatureRegressor fitted
    # every split, scored each NaN (predict needs the tasks, which the search
    # does not pass without routing) and silently picked the first candidate
    from sklearn.model_selection import GridSearchCV

    X, y, t = _tasks_regression()
    search = GridSearchCV(_grfl_regressor(), {"standardize": [True, False]}, cv=3,
                          error_score="raise")
    with pytest.raises(ValueError, match=r"metadata routing off.*every score NaN"):
        search.fit(X, y, task_index=t)


def test_grfl_task_index_declined_by_score_is_refused():
    # routing on, task_index requested by fit and declined by score: every
    # split scored NaN (with a warning per split) instead of an error naming
    # the fix
    import sklearn
    from sklearn.model_selection import cross_val_score

    X, y, t = _tasks_regression()
    with sklearn.config_context(enable_metadata_routing=True):
        est = _grfl_regressor().set_fit_request(task_index=True).set_score_request(
            task_index=False)
        with pytest.raises(ValueError, match="not to its scoring.*set_score_request"):
            cross_val_score(est, X, y, cv=3, params={"task_index": t},
                            error_score="raise")


@pytest.mark.parametrize("routing", [False, True])
def test_cross_val_predict_with_task_ids_says_it_passes_them_to_fit_only(routing):
    # the error came from predict and said "turn scikit-learn's metadata
    # routing on": with routing on it was on, and cross_val_predict still
    # passes task_index to fit only
    import sklearn
    from sklearn.model_selection import cross_val_predict

    from kernlearn import MultitaskMKLRegressor

    X, y, t = _tasks_regression()
    with sklearn.config_context(enable_metadata_routing=routing):
        grfl = _grfl_regressor()
        if routing:
            grfl.set_fit_request(task_index=True)
        for est in (MultitaskMKLRegressor(["linear"]), grfl):
            with pytest.raises(ValueError, match="passes metadata to fit only"):
                cross_val_predict(est, X, y, cv=3, params={"task_index": t})


def _classifiers():
    from kernlearn import (
        FGMClassifier,
        InfiniteFeatureClassifier,
        LowRankKernelClassifier,
        MultitaskMKLClassifier,
    )

    return [FGMClassifier(B=2), PNormMKLClassifier(random_state=0),
            InfiniteFeatureClassifier(max_features=2, n_candidates=5, random_state=0),
            LowRankKernelClassifier(n_columns=10, random_state=0),
            MultitaskMKLClassifier(["linear"])]


@pytest.mark.parametrize("est", _classifiers(), ids=lambda e: type(e).__name__)
def test_probabilities_follow_the_fitted_model_not_later_parameters(est):
    # fitted without probabilities, then set_params(probability=True) and no
    # refit: predict_proba appeared and returned the logistic sigmoids of the
    # hinge margins (no Platt sigmoids were fitted), numbers with no meaning
    from sklearn.base import clone

    X, y = _binary()
    plain = clone(est).fit(X, y).set_params(probability=True)
    assert not hasattr(plain, "predict_proba")
    with pytest.raises(AttributeError):
        plain.predict_proba(X)
    # the other way, the fitted Platt sigmoids stay until the next fit
    platt = clone(est).set_params(probability=True).fit(X, y)
    before = platt.predict_proba(X)
    platt.set_params(probability=False)
    np.testing.assert_array_equal(platt.predict_proba(X), before)
    # an unfitted estimator goes by its parameters, as before
    assert hasattr(clone(est).set_params(probability=True), "predict_proba")
    assert not hasattr(clone(est), "predict_proba")


def test_a_pipeline_holding_a_sparse_fitted_attribute_is_saved(tmp_path):
    # save_model refused a pipeline whose FGM model had a feature family ("it
    # holds scipy.sparse._csr.csr_matrix, neither a scikit-learn nor a
    # kernlearn type"): the model's column_coef_ is sparse, which skops
    # stores as arrays but does not trust by default; the model alone saved
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from kernlearn import FGMClassifier
    from kernlearn.families import PolynomialPool
    from kernlearn.io import load_model, save_model

    X, y = _binary()
    pipe = make_pipeline(StandardScaler(), FGMClassifier(B=2, family=PolynomialPool()))
    pipe.fit(X, y)
    save_model(pipe, tmp_path / "pipe.npz")
    back = load_model(tmp_path / "pipe.npz")
    np.testing.assert_array_equal(back.decision_function(X), pipe.decision_function(X))


def test_grfl_deprecated_max_iter_beside_inner_max_iter_says_which_is_unused():
    # max_iter (the old name of inner_max_iter) and inner_max_iter both set:
    # the old name's value was used and the warning said only "use
    # inner_max_iter=3", silent on the inner_max_iter=7 given and dropped
    # (not refused: scikit-learn's checks set max_iter on any estimator)
    from kernlearn import InfiniteFeatureClassifier

    X, y = _binary()
    est = InfiniteFeatureClassifier(max_features=2, n_candidates=5, random_state=0,
                                    max_iter=3, inner_max_iter=7)
    with pytest.warns(FutureWarning, match=r"inner_max_iter=3 \(inner_max_iter=7, "
                                           r"also given, is not used\)"):
        est.fit(X, y)


def test_a_refit_stopped_in_its_platt_folds_keeps_the_earlier_model_whole():
    # a fit whose Platt sigmoids could not be fitted (one row of a class)
    # left the new margins with the earlier fit's kind of probabilities:
    # predict_proba gave logistic sigmoids of the new, unscaled margins.  A
    # fit that raises now leaves the earlier model whole (sigmoids included)
    X, y = _binary()
    est = PNormMKLClassifier(random_state=0, probability=True).fit(X, y)
    before_p, before_f = est.predict_proba(X), est.decision_function(X)
    y1 = y.copy()
    y1[np.flatnonzero(y1 == 1)[1:]] = 0  # one sample of class 1
    with pytest.raises(ValueError, match="at least 2 samples of every class"):
        est.fit(X, y1)
    np.testing.assert_array_equal(est.decision_function(X), before_f)
    np.testing.assert_array_equal(est.predict_proba(X), before_p)


def test_logistic_probabilities_far_from_the_data_are_numbers():
    # one-vs-rest logistic probabilities are the classes' sigmoids normalised
    # to sum to one; a row where every margin is below about -745 (far from
    # the training data) had all sigmoids underflow to 0, and 0/0 made it NaN
    from kernlearn import FGMClassifier

    from sklearn.datasets import make_classification

    X, y = make_classification(90, 5, n_informative=3, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=1)
    clf = FGMClassifier(B=2, loss="logistic").fit(X, np.array(["a", "b", "c"])[y])
    # directions in which every class's margin falls
    V = np.random.default_rng(0).standard_normal((500, 5))
    slope = clf.decision_function(V) - clf.decision_function(np.zeros((1, 5)))
    far = 1e4 * V[np.all(slope < 0, axis=1)][:3]
    assert far.shape[0] and clf.decision_function(far).max() < -745
    P = clf.predict_proba(far)
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[P.argmax(axis=1)], clf.predict(far))


def test_multitask_platt_probabilities_take_y_as_one_column():
    # MultitaskMKLClassifier(probability=True) gave its Platt folds the
    # caller's y, not the validated one: y of shape (n, 1) (one DataFrame
    # column) stopped on NumPy's "object too deep for desired array", where
    # every other classifier fits the raveled labels (with scikit-learn's
    # DataConversionWarning)
    from sklearn.exceptions import DataConversionWarning

    from kernlearn import MultitaskMKLClassifier

    X, y = _binary()
    t = np.arange(len(y)) % 2
    ref = MultitaskMKLClassifier(["linear"], probability=True).fit(X, y, task_index=t)
    with pytest.warns(DataConversionWarning):
        col = MultitaskMKLClassifier(["linear"], probability=True).fit(
            X, y[:, None], task_index=t)
    np.testing.assert_array_equal(col.predict_proba(X, task_index=t),
                                  ref.predict_proba(X, task_index=t))


def test_multitask_classifier_routing_error_names_the_classifiers_cv_variant():
    # the advice ended "or use MultitaskMKLRegressorCV" for the classifier too
    from sklearn.model_selection import cross_val_score

    from kernlearn import MultitaskMKLClassifier

    X, y = _binary()
    t = np.arange(len(y)) % 2
    with pytest.raises(ValueError, match="or use MultitaskMKLClassifierCV") as info:
        cross_val_score(MultitaskMKLClassifier(["linear"]), X, y, cv=3,
                        params={"task_index": t}, error_score="raise")
    assert "RegressorCV" not in str(info.value)
