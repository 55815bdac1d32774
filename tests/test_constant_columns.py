"""A column constant in the training data is ignored at predict time.

Before, ``standardize=True`` kept such a column at a scale of one, so a new row
whose value departed from the training constant moved the kernel estimators'
predictions by that departure in raw units (44-50 % of the GrFL and low-rank
classifiers' predictions changed on the data below).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import (
    FGMClassifier,
    FGMRegressor,
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
    MultitaskMKLRegressor,
    PNormMKLClassifier,
)

ESTIMATORS = [FGMClassifier, FGMRegressor, InfiniteFeatureClassifier,
              InfiniteFeatureRegressor, LowRankKernelClassifier, LowRankKernelRegressor,
              PNormMKLClassifier, MultitaskMKLRegressor]


def _data(sparse):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 5))
    y = X[:, 0] - X[:, 1] + 0.3 * rng.standard_normal(120)
    if sparse:  # sparse: an empty column; dense: a constant far from zero
        X = np.where(np.abs(X) > 0.5, X, 0.0)
        X = np.c_[X, np.zeros(120)]
    else:
        X = np.c_[X, np.full(120, 7.5)]
    new = X.copy()
    new[:, -1] = rng.normal(0.0, 100.0, 120)
    if sparse:
        X, new = sp.csr_matrix(X), sp.csr_matrix(new)
    return X, y, new


def _kwargs(Est):
    params = Est().get_params()
    return {"random_state": 0} if "random_state" in params else {}


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda e: e.__name__)
def test_a_column_constant_in_training_does_not_move_predictions(Est, sparse):
    X, y, new = _data(sparse)
    is_clf = Est.__name__.endswith("Classifier")
    target = (y > 0).astype(int) if is_clf else y
    fit_kw = {"task_index": np.arange(len(y)) % 2} if Est is MultitaskMKLRegressor else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = Est(**_kwargs(Est)).fit(X, target, **fit_kw)
    pred_kw = {"task_index": fit_kw["task_index"]} if fit_kw else {}
    score = est.decision_function if hasattr(est, "decision_function") else est.predict
    np.testing.assert_allclose(score(new, **pred_kw), score(X, **pred_kw),
                               rtol=1e-10, atol=1e-10)
    scale = getattr(est, "x_scale_", None)
    if scale is not None:
        assert scale[-1] == np.inf and np.isfinite(scale[:-1]).all()


@pytest.mark.parametrize("Est", [FGMClassifier, InfiniteFeatureClassifier,
                                 LowRankKernelClassifier, PNormMKLClassifier],
                         ids=lambda e: e.__name__)
def test_a_model_with_an_ignored_column_saves_and_loads(Est, tmp_path):
    from kernlearn.io import load_model, save_model

    X, y, new = _data(False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = Est(**_kwargs(Est)).fit(X, (y > 0).astype(int))
    save_model(est, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert back.x_scale_[-1] == np.inf
    np.testing.assert_array_equal(back.decision_function(new), est.decision_function(new))
