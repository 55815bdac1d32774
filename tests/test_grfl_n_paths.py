"""``n_paths`` of the GrFL estimators: how many paths on all rows, each drawing
its own random features, are averaged into the model (``_grfl_average``)."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.estimators._base import input_standardization
from kernlearn.methods import _grfl_average
from kernlearn.methods._grfl_select import CV_BELOW


def _clf_data(n, seed=0):
    return make_classification(n, n_features=5, n_informative=4, n_redundant=0,
                               n_clusters_per_class=1, flip_y=0.05, random_state=seed)


def _reg_data(n, seed=0):
    X, y = make_regression(n, n_features=4, noise=5.0, random_state=seed)
    return X, y + 0.02 * y ** 2


def test_auto_is_the_explicit_count_below_cv_rows():
    X, y = _clf_data(120)
    kw = {"n_candidates": 30, "random_state": 0}
    auto = InfiniteFeatureClassifier(**kw).fit(X, y)
    three = InfiniteFeatureClassifier(n_paths=_grfl_average.FINAL_DRAWS, **kw).fit(X, y)
    assert auto.n_paths_ == three.n_paths_ == _grfl_average.FINAL_DRAWS
    np.testing.assert_array_equal(auto.features_, three.features_)
    np.testing.assert_array_equal(auto.decision_function(X), three.decision_function(X))
    Xr, yr = _reg_data(100)
    auto = InfiniteFeatureRegressor(n_candidates=30, random_state=0).fit(Xr, yr)
    three = InfiniteFeatureRegressor(n_candidates=30, random_state=0,
                                     n_paths=_grfl_average.FINAL_DRAWS).fit(Xr, yr)
    assert auto.n_paths_ == three.n_paths_ == _grfl_average.FINAL_DRAWS
    np.testing.assert_array_equal(auto.predict(Xr), three.predict(Xr))


def test_one_path_is_the_first_draw_of_the_average():
    # the draws are made one after another from the same random state, so the
    # single path is the average's first member, with weights n_paths times larger
    X, y = _clf_data(120, seed=1)
    kw = {"n_candidates": 30, "random_state": 0}
    one = InfiniteFeatureClassifier(n_paths=1, **kw).fit(X, y)
    three = InfiniteFeatureClassifier(**kw).fit(X, y)
    k = len(one.features_)
    assert one.n_paths_ == 1 and len(three.features_) > k
    np.testing.assert_array_equal(three.features_[:k], one.features_)
    np.testing.assert_allclose(three.column_coef_[:, :2 * k], one.column_coef_ / 3, rtol=1e-12)
    # the regressor: after the same folds' level choice, one path on all rows
    Xr, yr = _reg_data(100, seed=1)
    r1 = InfiniteFeatureRegressor(n_candidates=30, random_state=0, n_paths=1).fit(Xr, yr)
    r3 = InfiniteFeatureRegressor(n_candidates=30, random_state=0).fit(Xr, yr)
    assert r1.lambda_p_ == r3.lambda_p_ and r1.n_paths_ == 1
    k = len(r1.features_)
    np.testing.assert_array_equal(r3.features_[:k], r1.features_)


def test_an_explicit_count_averages_on_any_size(averaged_draws):
    # from CV_BELOW rows "auto" fits one path; n_paths=2 averages two there too
    X, y = _clf_data(CV_BELOW + 30, seed=2)
    kw = {"n_candidates": 20, "random_state": 0, "max_features": 20}
    one = InfiniteFeatureClassifier(**kw).fit(X, y)
    two = InfiniteFeatureClassifier(n_paths=2, **kw).fit(X, y)
    assert one.n_paths_ == 1 and two.n_paths_ == 2
    paths, results = averaged_draws[-1]
    assert len(results) == 2
    np.testing.assert_array_equal(two.features_[:len(one.features_)], one.features_)
    # the decision values are the mean of the two paths' (one's is the first)
    second = results[1]
    Z2 = second.family.columns(second.features, input_standardization(two).transform(X)) \
        * second.feature_scales.ravel()
    m2 = Z2 @ second.coef.T + second.intercept
    np.testing.assert_allclose(two.decision_function(X),
                               (one.decision_function(X) + m2.ravel()) / 2,
                               rtol=1e-9, atol=1e-10)
    # the regressor at a numeric level and budget (no folds): the same rule
    Xr, yr = _reg_data(CV_BELOW + 30, seed=2)
    reg = InfiniteFeatureRegressor(n_candidates=20, random_state=0, lambda_p=0.5,
                                   max_features=15, n_paths=2).fit(Xr, yr)
    assert reg.n_paths_ == 2 and len(reg.features_) > 15


def test_warm_start_continues_one_path_only():
    X, y = _clf_data(120)
    with pytest.raises(ValueError, match="n_paths=2 with warm_start=True"):
        InfiniteFeatureClassifier(n_paths=2, warm_start=True).fit(X, y)
    # "auto" and 1 are one path, continued
    m = InfiniteFeatureClassifier(warm_start=True, n_candidates=20, random_state=0).fit(X, y)
    assert m.n_paths_ == 1


def test_held_out_choice_is_one_model_and_says_so():
    # from CV_BELOW rows max_features="auto" refits one master on the features a
    # held-out path chose: asking for 2 paths warns, and n_paths_ tells
    X, y = _reg_data(CV_BELOW + 50, seed=3)
    with pytest.warns(UserWarning, match="n_paths=2 was not used"):
        m = InfiniteFeatureRegressor(n_candidates=20, random_state=0, n_paths=2).fit(X, y)
    assert m.n_paths_ == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        InfiniteFeatureRegressor(n_candidates=20, random_state=0).fit(X, y)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "three"])
def test_bad_counts_are_refused(bad):
    X, y = _clf_data(60)
    with pytest.raises(ValueError, match="n_paths"):
        InfiniteFeatureClassifier(n_paths=bad).fit(X, y)
