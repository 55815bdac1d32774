"""scikit-learn citizenship (issue 14): selectors, set_output, splitting, conventions."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import Bunch
from sklearn.utils import estimator_checks as ec

from kernlearn import (
    FGMClassifier,
    FGMRegressor,
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
)
from kernlearn.families import PolynomialPool

pd = pytest.importorskip("pandas")


def _cancer():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return X, y


# ----------------------------------------------------------------- selectors
def test_fgm_is_a_selector_in_input_order():
    X, y = _cancer()
    clf = FGMClassifier(B=3).fit(X, y)
    sel = clf.selected_features_
    # inclusion order differs from input order on this set: transform follows the input
    assert not np.all(np.diff(sel) > 0)
    idx = clf.get_support(indices=True)
    np.testing.assert_array_equal(idx, np.sort(sel))
    mask = clf.get_support()
    assert mask.dtype == bool and mask.sum() == sel.size and mask.shape == (X.shape[1],)
    Z = clf.transform(X)
    np.testing.assert_array_equal(Z, X.to_numpy()[:, idx])
    np.testing.assert_array_equal(clf.get_feature_names_out(), X.columns[idx])
    back = clf.inverse_transform(Z)
    np.testing.assert_array_equal(back[:, idx], Z)
    assert np.all(back[:, ~mask] == 0)


def test_fgm_set_output_pandas_and_pipeline_names():
    X, y = _cancer()
    pipe = make_pipeline(StandardScaler(), FGMClassifier(B=3)).set_output(transform="pandas")
    pipe.fit(X, y)
    Z = pipe[:-1].transform(X)
    out = pipe[-1].transform(Z)
    assert isinstance(out, pd.DataFrame)
    names = pipe.get_feature_names_out()
    assert list(out.columns) == list(names)
    assert set(names) <= set(X.columns) and len(names) == pipe[-1].selected_features_.size


def test_fgm_family_feature_names_name_generated_features():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 6))
    y = np.sign(X[:, 1] * X[:, 4] + 0.1 * rng.standard_normal(300))
    Xdf = pd.DataFrame(X, columns=list("abcdef"))
    clf = FGMClassifier(B=2, family=PolynomialPool()).fit(Xdf, y)
    names = clf.get_feature_names_out()
    assert "b*e" in names
    clf.set_output(transform="pandas")
    Z = clf.transform(Xdf)
    assert list(Z.columns) == list(names)
    np.testing.assert_allclose(Z["b*e"], X[:, 1] * X[:, 4])
    with pytest.raises(ValueError, match="generated features"):
        clf.get_support()


@pytest.mark.parametrize("est", [
    FGMClassifier(B=2, max_outer_iter=3),
    FGMRegressor(B=2, max_outer_iter=3),
    FGMRegressor(B=2, max_outer_iter=3, family=PolynomialPool()),
    InfiniteFeatureClassifier(max_features=5, n_candidates=10, random_state=0),
    InfiniteFeatureRegressor(max_features=5, n_candidates=10, random_state=0),
], ids=lambda e: type(e).__name__ + ("+family" if getattr(e, "family", None) else ""))
def test_sklearn_set_output_checks(est):
    """scikit-learn's own pandas-output and feature-name checks."""
    name = type(est).__name__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ec.check_set_output_transform(name, est)
        ec.check_set_output_transform_pandas(name, est)
        ec.check_global_output_transform_pandas(name, est)
        ec.check_transformer_get_feature_names_out(name, est)
        ec.check_transformer_get_feature_names_out_pandas(name, est)


def test_learned_features_pandas_names():
    X, y = load_iris(return_X_y=True)
    clf = InfiniteFeatureClassifier(max_features=4, random_state=0).fit(X, y)
    clf.set_output(transform="pandas")
    Z = clf.transform(X)
    assert isinstance(Z, pd.DataFrame) and Z.shape[1] == clf.feature_scales_.size
    assert Z.columns[0] == "infinitefeatureclassifier0"


# ---------------------------------------------------------- n_columns clamp
@pytest.mark.parametrize("cls", [LowRankKernelRegressor, LowRankKernelClassifier])
def test_lowrank_clamps_n_columns_with_a_warning(cls):
    X, y = load_iris(return_X_y=True)
    X, y = X[::5], y[::5]  # 30 samples
    with pytest.warns(UserWarning, match="n_columns=64 > n_samples=30"):
        est = cls(n_columns=64, random_state=0).fit(X, y)
    assert est.column_indices_.size == 30
    ref = cls(n_columns=30, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.predict(X), ref.predict(X))


# ------------------------------------------------------------------ datasets
def test_load_dataset_returns_bunches():
    from conftest import real_data
    from kernlearn.datasets import _LOADERS, available_datasets

    names = available_datasets()
    if not names:
        real_data("wine")  # skips with the reason
    for name in names:
        if name in ("a9a", "ijcnn1", "usps", "brodatz"):  # slow or image sets: below
            continue
        b = real_data(name)
        assert isinstance(b, Bunch) and name in b.DESCR
        assert b.data.shape[0] == b.target.shape[0] > 0
    for name in set(names) & {"a9a", "ijcnn1", "usps"}:
        assert "data_test" in _LOADERS[name][1]
