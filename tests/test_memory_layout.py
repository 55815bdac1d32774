"""The model does not depend on the memory layout of the same data.

A C-ordered array, its Fortran-ordered copy (``np.asfortranarray``, or what a
DataFrame's values are) and a DataFrame of it hold the same numbers; each
estimator must fit the same model on all three, bit for bit.  Before the
validation returned C-ordered arrays, BLAS summed the Fortran copy in another
order: every estimator's predictions differed in the last bits (up to 4e-7
for the low-rank regressor), and GrFL's tied choices on integer-valued data
by more.
"""

import numpy as np
import pandas as pd
import pytest

import kernlearn

SINGLE_TASK = ["FGMClassifier", "FGMRegressor", "InfiniteFeatureClassifier",
               "InfiniteFeatureRegressor", "LowRankKernelClassifier",
               "LowRankKernelRegressor", "PNormMKLClassifier"]
MULTITASK = ["MultitaskMKLClassifier", "MultitaskMKLRegressor"]


def _data():
    # integer-valued columns on mixed scales and offsets: ties and BLAS
    # summation order both matter here
    rng = np.random.RandomState(0)
    X = rng.randint(0, 5, size=(120, 6)).astype(float)
    X[:, 3] *= 1000.0
    X[:, 4] += 50.0
    y_clf = (X[:, 0] + X[:, 1] - X[:, 2] + rng.randn(120) > 4).astype(int)
    y_reg = X[:, 0] * X[:, 1] + rng.randn(120)
    return X, y_clf, y_reg


def _make(name):
    est = getattr(kernlearn, name)()
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    return est


def _outputs(model, X, **kw):
    f = model.decision_function(X, **kw) if hasattr(model, "decision_function") \
        else model.predict(X, **kw)
    return np.asarray(f, dtype=float)


def _layouts(X):
    F = np.asfortranarray(X)
    assert F.flags.f_contiguous and not F.flags.c_contiguous
    return {"fortran": F, "dataframe": pd.DataFrame(X, columns=[f"c{j}" for j in range(6)])}


@pytest.mark.parametrize("name", SINGLE_TASK)
def test_fit_is_the_same_on_every_memory_layout(name):
    X, y_clf, y_reg = _data()
    y = y_reg if name.endswith("Regressor") else y_clf
    ref = _outputs(_make(name).fit(X, y), X)
    for layout, Xl in _layouts(X).items():
        # (predict on the C array: only the fit differs between the runs)
        got = _outputs(_make(name).fit(Xl, y), X if layout != "dataframe" else Xl)
        assert np.array_equal(ref, got), (layout, np.abs(ref - got).max())


@pytest.mark.parametrize("name", SINGLE_TASK)
def test_predict_is_the_same_on_every_memory_layout(name):
    X, y_clf, y_reg = _data()
    y = y_reg if name.endswith("Regressor") else y_clf
    model = _make(name).fit(X, y)
    ref = _outputs(model, X)
    got = _outputs(model, np.asfortranarray(X))
    assert np.array_equal(ref, got), np.abs(ref - got).max()


@pytest.mark.parametrize("name", MULTITASK)
def test_multitask_fit_is_the_same_on_every_memory_layout(name):
    X, y_clf, y_reg = _data()
    y = y_reg if name.endswith("Regressor") else y_clf
    tasks = np.arange(X.shape[0]) % 2
    ref = _outputs(_make(name).fit(X, y, task_index=tasks), X, task_index=tasks)
    got = _outputs(_make(name).fit(np.asfortranarray(X), y, task_index=tasks), X,
                   task_index=tasks)
    assert np.array_equal(ref, got), np.abs(ref - got).max()
