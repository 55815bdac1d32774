"""The short cuts of FGM's per-fit set-up give what the general paths give."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import validate_data

from kernlearn import FGMClassifier, FGMRegressor
from kernlearn.estimators._base import _plain_fit_data, validate_fit_data
from kernlearn.families import FeaturePool
from kernlearn.losses import get_loss
from kernlearn.methods.fgm import FGMSettings, FGMState, _collect, fit_fgm


def _sklearn_checked(X, y, y_numeric):
    est = FGMRegressor()
    return validate_data(est, X, y, accept_sparse=["csr", "csc"],
                         dtype=[np.float64, np.float32], y_numeric=y_numeric,
                         ensure_min_samples=2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("y_kind", ["float", "int", "str"])
def test_plain_dense_input_is_returned_as_validate_data_returns_it(dtype, y_kind):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3)).astype(dtype)
    y = {"float": rng.normal(size=12), "int": rng.integers(0, 3, 12),
         "str": np.array(list("abc") * 4)}[y_kind]
    classification = y_kind != "float"
    assert _plain_fit_data(X, y, classification)
    est = FGMClassifier() if classification else FGMRegressor()
    Xv, yv = validate_fit_data(est, X, y, classification=classification,
                               y_numeric=not classification)
    Xs, ys = _sklearn_checked(X, y, not classification)
    assert Xv is X  # no copy, no conversion
    assert Xv.dtype == Xs.dtype and np.array_equal(Xv, Xs)
    assert yv.dtype == ys.dtype and np.array_equal(yv, ys)
    assert est.n_features_in_ == 3


def test_plain_path_forgets_feature_names_of_an_earlier_fit():
    X = np.random.default_rng(1).normal(size=(30, 3))
    y = np.arange(30.0)
    est = FGMRegressor(C=1.0).fit(pd.DataFrame(X, columns=["a", "b", "c"]), y)
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    est.fit(X, y)
    assert not hasattr(est, "feature_names_in_")


@pytest.mark.parametrize("where", ["X", "y"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_leaves_the_short_cut_and_is_refused(where, bad):
    X = np.random.default_rng(2).normal(size=(10, 2))
    y = np.linspace(0, 1, 10)
    (X if where == "X" else y)[3] = bad
    assert not _plain_fit_data(X, y, False)
    # (X's cell is named by row and column, y's by row)
    match = ("X has (a missing|an infinite) value .* at row 3" if where == "X"
             else "y has (a missing|an infinite) value at row 3")
    with pytest.raises(ValueError, match=match):
        FGMRegressor().fit(X, y)


def test_huge_finite_values_whose_sum_overflows_are_accepted():
    X = np.full((4, 2), 1e308)
    X[:, 1] = [1.0, -2.0, 3.0, 0.5]
    y = np.array([0.0, 1.0, 0.0, 1.0])
    assert not _plain_fit_data(X, y, False)  # the general path decides
    Xv, _ = validate_fit_data(FGMRegressor(), X, y, classification=False,
                              y_numeric=True)
    assert np.array_equal(Xv, X)


@pytest.mark.parametrize("X, y", [
    (np.ones((1, 2)), np.ones(1)),          # one sample
    (np.ones((3, 2)), np.ones(4)),          # inconsistent lengths
    (np.ones((3, 2)), np.ones((3, 2))),     # 2-D y
    (np.ones((3, 2), dtype=int), np.ones(3)),  # integer X: converted
    (np.asfortranarray(np.ones((3, 2)))[:, :1], np.ones(6)[::2]),  # strided y
])
def test_unusual_input_takes_the_general_path(X, y):
    assert not _plain_fit_data(X, y, False)


def _sklearn_message(est):
    with pytest.raises(InvalidParameterError) as info:
        BaseEstimator._validate_params(est)
    return str(info.value)


@pytest.mark.parametrize("params", [{"B": 0}, {"B": 2.0}, {"C": "big"}, {"C": -1.0},
                                    {"solver": "lbfgs"}, {"groups": (1, 2)},
                                    {"standardize": "yes"}])
def test_cached_parameter_check_raises_scikit_learns_error(params):
    # the valid neighbours are checked (and remembered) first
    FGMRegressor(B=2, C=1.0).fit(np.random.default_rng(3).normal(size=(9, 2)),
                                 np.arange(9.0))
    est = FGMRegressor(**params)
    with pytest.raises(InvalidParameterError) as info:
        est.fit(np.random.default_rng(3).normal(size=(9, 2)), np.arange(9.0))
    assert str(info.value) == _sklearn_message(est)


def test_remembered_scalar_verdicts_tell_types_apart():
    X, y = np.random.default_rng(4).normal(size=(20, 3)), np.tile([0, 1], 10)
    FGMClassifier(B=1, max_iter=2).fit(X, y)  # B=1 (int) accepted and remembered
    with pytest.raises(InvalidParameterError, match="'B' parameter"):
        FGMClassifier(B=1.0, max_iter=2).fit(X, y)  # equal, but a float


def test_folds_without_memory_records_fit_the_same_model():
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(60, 6)), rng.normal(size=60)
    loss = get_loss("square")
    runs = [fit_fgm(X, y, FeaturePool(), loss, FGMSettings(B=2, record_memory=flag))
            for flag in (True, False)]
    assert "peak_rss_mb" in runs[0].history and "peak_rss_mb" not in runs[1].history
    assert np.all(runs[0].history["peak_rss_mb"] > 0)
    assert np.array_equal(runs[0].coef, runs[1].coef)
    assert np.array_equal(runs[0].intercept, runs[1].intercept)


def test_collect_scaling_of_features_in_overlapping_constraints():
    # features 1 and 2 sit in two constraints; feature 3 twice in one
    st = FGMState(W=np.array([[1.0], [2.0], [0.5], [1.5], [1.0], [-2.0], [1.0]]),
                  b=np.zeros(1), M=np.zeros((1, 1)), tau=1.0)
    st.feats = [np.array([1, 2]), np.array([2, 0, 1]), np.array([3, 3])]
    st.weights = [np.ones(2), np.ones(3), np.ones(2)]
    selected, coef, d = _collect(st)
    norms = np.array([np.sqrt(5.0), np.sqrt(0.25 + 2.25 + 1.0), np.sqrt(5.0)])
    mu = norms / norms.sum()
    assert selected.tolist() == [1, 2, 0, 3]
    assert np.allclose(coef[:, 0], [2.0, 2.5, 1.5, -1.0])
    assert np.allclose(d, [mu[0] + mu[1], mu[0] + mu[1], mu[1], mu[2]], rtol=0, atol=1e-15)
