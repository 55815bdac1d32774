"""Settings the fit does not read are named (``UnusedParameterWarning``).

Audit 79 found settings that changed nothing, without a word, where the
library names such settings elsewhere (:func:`warn_unused`):

- ``LowRankKernelClassifier`` / ``Regressor``: ``degree`` and ``coef0``
  beside ``kernel="rbf"``, ``gamma`` beside ``kernel="linear"``, any of the
  three beside ``"precomputed"`` or a callable whose signature does not take
  it (the kernel receives only the parameters it accepts);
- ``MultitaskMKL*``: ``max_iter`` with ``formulation="independent"`` (the
  average kernel is fitted once), ``inner_max_iter`` wherever MK-MTFL's task
  weights are not updated: ``"mkl"``, ``"independent"``, ``"mtsfl"`` and
  ``"mtfl"`` at ``p=2`` (one pass is then exact).

Each case checks the warning, where it points (the caller's line), that the
model equals the one fitted without the setting (so the setting truly is
unread), and that no warning is given at the defaults or where it is read.
"""
import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import kernlearn as kl
from kernlearn.estimators._renamed import UnusedParameterWarning

_RNG = np.random.default_rng(32)
_X = _RNG.normal(size=(60, 3))
_YR = _X[:, 0] + 0.1 * _RNG.normal(size=60)
_YC = np.where(_X[:, 0] + 0.3 * _RNG.normal(size=60) > 0, 1, -1)
_T = np.repeat([0, 1], 30)


def _linear_callable(A, B):
    return A @ B.T


def _fit_quiet(est, *args, **kw):
    """Fit with an ``UnusedParameterWarning`` made an error (none may be given)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedParameterWarning)
        return est.fit(*args, **kw)


# -- low-rank kernel learning ---------------------------------------------------------------
def _lowrank_data(kernel):
    """``X`` for ``kernel``: the linear Gram matrix for ``"precomputed"``."""
    return _X @ _X.T if kernel == "precomputed" else _X


@pytest.mark.parametrize("cls, y", [(kl.LowRankKernelRegressor, _YR),
                                    (kl.LowRankKernelClassifier, _YC)],
                         ids=["regressor", "classifier"])
@pytest.mark.parametrize("kernel, setting, said", [
    ("rbf", {"degree": 3}, "degree=3 not used with kernel='rbf'"),
    ("rbf", {"coef0": 2.0}, "coef0=2.0 not used with kernel='rbf'"),
    ("linear", {"gamma": 0.5}, "gamma=0.5 not used with kernel='linear'"),
    ("precomputed", {"gamma": 0.5, "degree": 2},
     "gamma=0.5, degree=2 not used with kernel='precomputed'"),
    (_linear_callable, {"coef0": 1.0},
     r"coef0=1.0 not used with kernel=_linear_callable \(a callable"),
], ids=["rbf-degree", "rbf-coef0", "linear-gamma", "precomputed", "callable"])
def test_lowrank_unread_kernel_parameter_is_named(cls, y, kernel, setting, said):
    X = _lowrank_data(kernel)
    est = cls(kernel=kernel, n_columns=10, random_state=0, **setting)
    with threadpool_limits(1):
        with pytest.warns(UnusedParameterWarning, match=said) as record:
            est.fit(X, y)
        plain = _fit_quiet(cls(kernel=kernel, n_columns=10, random_state=0), X, y)
        # unread: the model is the one fitted without the setting, bit for bit
        np.testing.assert_array_equal(est.decision_function(X) if y is _YC
                                      else est.predict(X),
                                      plain.decision_function(X) if y is _YC
                                      else plain.predict(X))
    assert len([r for r in record if r.category is UnusedParameterWarning]) == 1
    assert record[0].filename == __file__


@pytest.mark.parametrize("kernel, setting", [
    ("rbf", {}), ("linear", {}), ("poly", {}), ("precomputed", {}), (_linear_callable, {}),
    ("rbf", {"gamma": 0.5}), ("poly", {"gamma": 0.5, "degree": 3, "coef0": 2.0}),
    ("rbf", {"gamma": None}),
], ids=["rbf", "linear", "poly", "precomputed", "callable", "rbf-gamma", "poly-all",
        "gamma-None"])
def test_lowrank_default_or_read_kernel_parameter_is_not_named(kernel, setting):
    _fit_quiet(kl.LowRankKernelRegressor(kernel=kernel, n_columns=10, random_state=0,
                                         **setting), _lowrank_data(kernel), _YR)


# -- multitask MKL ---------------------------------------------------------------------------
_MT = [(kl.MultitaskMKLRegressor, _YR), (kl.MultitaskMKLClassifier, _YC)]


def _mt_output(est):
    if isinstance(est, kl.MultitaskMKLClassifier):
        return est.decision_function(_X, task_index=_T)
    return est.predict(_X, task_index=_T)


@pytest.mark.parametrize("cls, y", _MT, ids=["regressor", "classifier"])
@pytest.mark.parametrize("setting, said", [
    ({"formulation": "independent", "max_iter": 3},
     "max_iter=3 not used with formulation='independent'"),
    ({"formulation": "independent", "inner_max_iter": 2},
     "inner_max_iter=2 not used with formulation='independent'"),
    ({"formulation": "mkl", "inner_max_iter": 2},
     "inner_max_iter=2 not used with formulation='mkl'"),
    ({"formulation": "mtsfl", "inner_max_iter": 2},
     "inner_max_iter=2 not used with formulation='mtsfl'"),
    ({"formulation": "mtfl", "inner_max_iter": 1},
     "inner_max_iter=1 not used with formulation='mtfl' and p=2"),
], ids=["independent-max_iter", "independent-inner", "mkl-inner", "mtsfl-inner",
        "mtfl-p2-inner"])
def test_multitask_unread_iteration_cap_is_named(cls, y, setting, said):
    est = cls(kernels=["rbf", "linear"], **setting)
    with threadpool_limits(1):
        with pytest.warns(UnusedParameterWarning, match=said) as record:
            est.fit(_X, y, task_index=_T)
        plain = _fit_quiet(cls(kernels=["rbf", "linear"],
                               formulation=setting["formulation"]), _X, y, task_index=_T)
        np.testing.assert_array_equal(_mt_output(est), _mt_output(plain))
    assert len([r for r in record if r.category is UnusedParameterWarning]) == 1
    assert record[0].filename == __file__


@pytest.mark.parametrize("setting", [
    {"formulation": "mtfl"}, {"formulation": "mkl"}, {"formulation": "mtsfl"},
    {"formulation": "independent"},
    {"formulation": "mtfl", "p": 3.0, "inner_max_iter": 2},
    {"formulation": "mkl", "max_iter": 3}, {"formulation": "mtsfl", "max_iter": 3},
], ids=["mtfl", "mkl", "mtsfl", "independent", "mtfl-p3-inner", "mkl-max_iter",
        "mtsfl-max_iter"])
def test_multitask_default_or_read_iteration_cap_is_not_named(setting):
    _fit_quiet(kl.MultitaskMKLRegressor(kernels=["rbf", "linear"], **setting), _X, _YR,
               task_index=_T)


def test_multitask_read_inner_cap_changes_the_model():
    # the pin of the case left unnamed: at p=3 inner_max_iter is read
    a = kl.MultitaskMKLRegressor(kernels=["rbf", "linear"], p=3.0).fit(_X, _YR, task_index=_T)
    b = _fit_quiet(kl.MultitaskMKLRegressor(kernels=["rbf", "linear"], p=3.0,
                                            inner_max_iter=1), _X, _YR, task_index=_T)
    assert not np.array_equal(_mt_output(a), _mt_output(b))


def test_multitask_leave_one_out_names_the_caps_once():
    # C="auto" (leave-one-out) names inner_max_iter itself: not a second time
    est = kl.MultitaskMKLRegressor(kernels=["rbf", "linear"], C="auto", inner_max_iter=2)
    with pytest.warns(UnusedParameterWarning) as record:
        est.fit(_X, _YR, task_index=_T)
    said = [str(r.message) for r in record if r.category is UnusedParameterWarning]
    assert len(said) == 1 and 'C="auto"' in said[0] and "inner_max_iter=2" in said[0]


def test_multitask_cv_names_the_cap_once():
    est = kl.MultitaskMKLRegressorCV(kernels=["rbf", "linear"], formulation="independent",
                                     kernel_selection="objective", max_iter=3,
                                     Cs=[0.1, 1.0], cv=2)
    with pytest.warns(UnusedParameterWarning,
                      match="max_iter=3 not used with formulation='independent'") as record:
        est.fit(_X, _YR, task_index=_T)
    assert len([r for r in record if r.category is UnusedParameterWarning]) == 1
