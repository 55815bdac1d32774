"""Audit 91: the fitted-state check on load must not refuse a valid model file.

A model file saved by kernlearn 0.2.0.dev0 before an attribute was added (the
weighed-out classes, the Platt source, the CV's ``best_index_``, ...) lacks it;
predict reads such attributes with a fallback, so the file loaded and predicted
the same before the check, and must still.  Such a file is written here by
``save_model`` of an estimator whose later attributes were deleted.
"""

import warnings

import numpy as np
import pytest

import kernlearn as K
from kernlearn.io import load_model, save_model

rng = np.random.RandomState(0)
X = rng.randn(60, 4)
Y_BIN = (X[:, 0] > 0).astype(int)
Y_3 = np.digitize(X[:, 0], [-0.5, 0.5])
Y_REG = X[:, 0] + 0.1 * rng.randn(60)
TASK = np.repeat([0, 1], 30)

# what a file of 0.2.0.dev0 saved before each attribute existed lacks (the
# versions of 2026-11-26 and 2026-11-28; a real file of each was checked)
_CLF = ["_absent_classes", "_proba_source"]
_LR = ["_kernel", "kernel_center_", "nu_path_"]
MAY_LACK = {
    "FGMClassifier": _CLF,
    "PNormMKLClassifier": [*_CLF, "converged_", "stop_reason_"],
    "InfiniteFeatureClassifier": _CLF,
    "InfiniteFeatureRegressor": ["x_range_"],
    "LowRankKernelClassifier": [*_CLF, *_LR],
    "LowRankKernelRegressor": [*_LR, "x_range_"],
    "MultitaskMKLClassifier": ["_weighed_out", "_proba_source"],
    # (one saved before y_mean_ / y_scale_ kept its intercept in the targets'
    # units: deleting them from a new model is not such a file; checked on a real one)
    "MultitaskMKLRegressor": ["_weighed_out"],
    "MultitaskMKLClassifierCV": ["_weighed_out", "_proba_source", "best_index_"],
    "MultitaskMKLRegressorCV": ["_weighed_out", "best_index_"],
}

CASES = {
    "FGMClassifier": (lambda: K.FGMClassifier(max_iter=3), X, Y_3, {}),
    "PNormMKLClassifier": (lambda: K.PNormMKLClassifier(), X, Y_3, {}),
    "InfiniteFeatureClassifier": (lambda: K.InfiniteFeatureClassifier(max_iter=3), X, Y_BIN, {}),
    "InfiniteFeatureRegressor": (lambda: K.InfiniteFeatureRegressor(max_iter=3), X, Y_REG, {}),
    "LowRankKernelClassifier": (lambda: K.LowRankKernelClassifier(), X, Y_3, {}),
    "LowRankKernelRegressor": (lambda: K.LowRankKernelRegressor(), X, Y_REG, {}),
    "MultitaskMKLClassifier": (lambda: K.MultitaskMKLClassifier(), X, Y_BIN, {"task_index": TASK}),
    "MultitaskMKLRegressor": (lambda: K.MultitaskMKLRegressor(), X, Y_REG, {"task_index": TASK}),
    "MultitaskMKLClassifierCV": (lambda: K.MultitaskMKLClassifierCV(), X, Y_BIN, {"task_index": TASK}),
    "MultitaskMKLRegressorCV": (lambda: K.MultitaskMKLRegressorCV(), X, Y_REG, {"task_index": TASK}),
}


def _older_file(est, tmp_path, names):
    for name in names:
        if name in vars(est):
            delattr(est, name)
    path = tmp_path / "older.npz"
    save_model(est, path)
    return load_model(path)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_file_saved_before_later_attributes_loads(name, tmp_path):
    """Every estimator: a file lacking the attributes added during 0.2.0's
    development (as one saved before them) loads and predicts the same."""
    make, Xf, y, kw = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make().fit(Xf, y, **kw)
    expected = est.predict(Xf, **kw)
    loaded = _older_file(est, tmp_path, MAY_LACK[name])
    np.testing.assert_array_equal(loaded.predict(Xf, **kw), expected)


def test_the_named_attributes_are_those_an_older_file_lacks(tmp_path):
    """The two attributes by which files of 2026-11-28 differ, named directly
    (a classifier's weighed-out classes, the CV's best_index_)."""
    est = K.FGMClassifier(max_iter=3).fit(X, Y_3)
    loaded = _older_file(est, tmp_path, ["_absent_classes"])
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    est = K.MultitaskMKLRegressorCV().fit(X, Y_REG, task_index=TASK)
    loaded = _older_file(est, tmp_path, ["best_index_"])
    np.testing.assert_array_equal(loaded.predict(X, task_index=TASK),
                                  est.predict(X, task_index=TASK))


def test_a_precomputed_lowrank_file_without_kernel_loads(tmp_path):
    """A Gram-matrix model saved before ``_kernel``: its kernel is the parameter's."""
    G = X @ X.T
    est = K.LowRankKernelClassifier(kernel="precomputed").fit(G, Y_BIN)
    loaded = _older_file(est, tmp_path, ["_kernel"])
    np.testing.assert_array_equal(loaded.predict(G), est.predict(G))


def test_attributes_predict_needs_are_still_required(tmp_path):
    """Only the later attributes may be absent: x_scale_ is still refused."""
    est = K.FGMClassifier(max_iter=3).fit(X, Y_3)
    with pytest.raises(ValueError, match=r"lacks the fitted attribute\(s\) \['x_scale_'\]"):
        _older_file(est, tmp_path, ["x_scale_"])
