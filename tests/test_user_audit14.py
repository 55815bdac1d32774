"""A fourteenth user's audit: bigger data, memory and run control.

A user with bigger data fitted every estimator on sparse text-like input,
long dense tables and many classes, watched the memory, stopped fits with
Ctrl-C, capped iterations and budgets, and read what the fits said.  Each
test here failed before its fix, but for two guards of the shared paths:
FGM's refit case (FGM already kept its model) and the equality of multitask
predictions made by blocks of rows with those made at once.
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


_MULTITASK_PREDICT = """
import tracemalloc, warnings
import numpy as np
from kernlearn import MultitaskMKLRegressor
rng = np.random.default_rng(0)
X = rng.normal(size=(600, 5))
t = np.arange(600) % 2
y = X[:, 0] + t * X[:, 1]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    est = MultitaskMKLRegressor(max_iter=5).fit(X, y, task_index=t)
Xt = rng.normal(size=(30000, 5))
tt = np.arange(30000) % 2
tracemalloc.start()
est.predict(Xt, task_index=tt)
print(tracemalloc.get_traced_memory()[1] / 1e6)
"""


def test_multitask_predict_on_many_rows_is_done_by_blocks():
    # predicting 30,000 rows after a fit on 600 built each task's whole
    # (new rows x training rows) kernel block at once: a peak of 2 x 30,000 x
    # 600 x 8 B = 288 MB (3.2 GB for 100,000 rows after a fit on 2,000);
    # about 10 MB by blocks of rows, as the other estimators predict
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _MULTITASK_PREDICT], capture_output=True,
                         text=True, check=True)
    peak_mb = float(out.stdout.split()[-1])
    assert peak_mb < 60, f"predict peaked at {peak_mb:.0f} MB"


@pytest.mark.parametrize("kernels", [None, "precomputed"])
def test_multitask_predictions_by_blocks_are_those_at_once(monkeypatch, kernels):
    from kernlearn.kernels import rbf_kernel
    from kernlearn.utils import _row_blocks

    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 3))
    t = np.arange(90) % 3
    y = X[:, 0] * (t - 1) + 0.1 * rng.normal(size=90)
    tr, te = np.arange(60), np.arange(60, 90)
    if kernels is None:
        est, fit_X, new_X = kernlearn.MultitaskMKLRegressor(max_iter=5), X[tr], X[te]
    else:
        est = kernlearn.MultitaskMKLRegressor(kernels="precomputed", max_iter=5)
        fit_X = np.stack([rbf_kernel(X[tr], X[tr], gamma=g) for g in (0.1, 1.0)])
        new_X = np.stack([rbf_kernel(X[te], X[tr], gamma=g) for g in (0.1, 1.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(fit_X, y[tr], task_index=t[tr])
    at_once = est.predict(new_X, task_index=t[te])
    monkeypatch.setattr(_row_blocks, "PREDICT_ROWS", 7)
    np.testing.assert_allclose(est.predict(new_X, task_index=t[te]), at_once, rtol=1e-12)


def test_the_held_out_stop_is_named_validation_not_a_callback(capsys, monkeypatch):
    # with max_features="auto" the regressor's progress said "stop: callback
    # ... the callback asked to stop" (the user gave no callback): the path
    # stopped because the held-out loss no longer improved
    monkeypatch.setenv("KERNLEARN_PROGRESS", "lines")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.sin(2 * X[:, 0]) + 0.3 * rng.normal(size=300)
    est = kernlearn.InfiniteFeatureRegressor(random_state=0, verbose=1).fit(X, y)
    assert est.stop_reason_ == "validation"
    out = capsys.readouterr()
    stops = [line for line in (out.out + out.err).splitlines() if "stop:" in line]
    assert stops and not any("callback" in line for line in stops), stops
    assert any("stop: validation" in line and "held-out" in line for line in stops), stops


_STANDARDIZATION_PEAK = """
import tracemalloc
import numpy as np
from kernlearn.preprocessing import fit_standardization
X = np.random.default_rng(0).normal(size=(20000, 100))
tracemalloc.start()
fit_standardization(X)
print(tracemalloc.get_traced_memory()[1] / X.nbytes)
"""


def test_the_standardisation_statistics_hold_one_copy_of_x_at_most():
    # the two-pass variance made two n x d temporaries (the deviations and
    # their squares): FGM on a 20,000 x 500 array (80 MB) peaked at 261 MB
    # with standardize=True against 51 MB without; now 181 MB
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _STANDARDIZATION_PEAK], capture_output=True,
                         text=True, check=True)
    ratio = float(out.stdout.split()[-1])
    assert ratio < 1.5, f"peak {ratio:.2f} times the size of X"
