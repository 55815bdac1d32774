"""A fourteenth user's audit: bigger data, memory and run control.

A user with bigger data fitted every estimator on sparse text-like input,
long dense tables and many classes, watched the memory, stopped fits with
Ctrl-C, capped iterations and budgets, and read what the fits said.  Each
test here failed before its fix (but for FGM's refit case, which already
kept its model: a guard of the shared path).
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils.validation import check_is_fitted

import kernlearn


def _data(n=200, shift=0.0, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int)
    return scale * X + shift, y


def _interrupt(monkeypatch, module, name):
    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(module, name, stop)


def _interrupted(monkeypatch, which):
    """An estimator and a way to make its next fit stop part way (Ctrl-C)."""
    if which == "FGMClassifier":
        import kernlearn.estimators.fgm as mod

        return kernlearn.FGMClassifier(), lambda: _interrupt(monkeypatch, mod, "fit_fgm")
    if which == "InfiniteFeatureClassifier":
        import kernlearn.estimators.infinite as mod

        return (kernlearn.InfiniteFeatureClassifier(random_state=0),
                lambda: _interrupt(monkeypatch, mod, "fit_grfl"))
    if which == "LowRankKernelClassifier":
        import kernlearn.estimators.lowrank as mod

        return (kernlearn.LowRankKernelClassifier(random_state=0),
                lambda: _interrupt(monkeypatch, mod, "fit_slkl"))
    from kernlearn.methods import obscure

    return (kernlearn.PNormMKLClassifier(random_state=0),
            lambda: _interrupt(monkeypatch, obscure, "fit_obscure"))


ESTIMATORS = ["FGMClassifier", "InfiniteFeatureClassifier", "LowRankKernelClassifier",
              "PNormMKLClassifier"]


@pytest.mark.parametrize("which", ESTIMATORS)
def test_a_fit_stopped_by_ctrl_c_leaves_no_half_fitted_estimator(monkeypatch, which):
    # a fresh estimator stopped after the input's standardisation was stored
    # passed check_is_fitted, then predict failed on a missing attribute
    X, y = _data()
    est, arm = _interrupted(monkeypatch, which)
    arm()
    with pytest.raises(KeyboardInterrupt):
        est.fit(X, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    with pytest.raises(NotFittedError):
        est.predict(X)


@pytest.mark.parametrize("which", ESTIMATORS)
def test_an_interrupted_refit_keeps_the_previous_model_whole(monkeypatch, which):
    # a fitted estimator whose refit on other data was stopped kept the old
    # model with the new data's standardisation and predicted silently wrong
    # (about 40 % of labels flipped)
    X, y = _data()
    est, arm = _interrupted(monkeypatch, which)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y)
    before = est.decision_function(X)
    arm()
    X2, _ = _data(shift=50.0, scale=100.0, seed=1)
    with pytest.raises(KeyboardInterrupt):
        est.fit(X2, 1 - y)
    np.testing.assert_array_equal(est.decision_function(X), before)


@pytest.mark.parametrize("name", ["MultitaskMKLClassifier", "MultitaskMKLRegressor"])
def test_the_multitask_iteration_cap_warning_says_what_to_raise(name):
    # the warning named the cap and the gap but not the setting to change,
    # as every other estimator's does
    X, y = _data(n=120)
    task = np.arange(len(y)) % 2
    target = y if "Classifier" in name else X[:, 0] + X[:, 1] ** 2
    with pytest.warns(ConvergenceWarning, match=r"max_iter=1 .*; increase max_iter\."):
        getattr(kernlearn, name)(max_iter=1).fit(X, target, task_index=task)
