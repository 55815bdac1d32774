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
    plain = make_pipeline(StandardScaler(), est).fit(X, y)
    pipe = make_pipeline(StandardScaler(), est).set_output(transform="pandas").fit(X, y)
    np.testing.assert_array_equal(pipe.predict(X), plain.predict(X))
    assert isinstance(pipe.predict(X), np.ndarray)
    assert pipe.score(X, y) == plain.score(X, y)
    Z = pipe.transform(X)  # the learned features, now named columns
    assert isinstance(Z, pd.DataFrame)
    assert list(Z.columns) == list(pipe[-1].get_feature_names_out())
