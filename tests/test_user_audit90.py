"""Audit 90: the scikit-learn ecosystem, randomised
(``benchmarks/fuzz_ecosystem.py``); each test names what went wrong."""

import copy
import warnings

import pytest


@pytest.fixture
def fuzzer():
    from bench_scripts import load_script

    yield from load_script("fuzz_ecosystem")


def test_fuzzer_runs(fuzzer):
    # a few compositions of each kind run clean on today's library
    assert fuzzer.main(["--cases", "3", "--estimators", "FGMRegressor",
                        "--compositions", "pipeline,clone_fitted,tags"]) == 0
    for comp in ("pipeline", "clone_fitted", "tags", "defaults_warnings", "routing"):
        assert fuzzer.run_case("FGMRegressor", comp, 11)[0] == "ok", comp


def test_fuzzer_flags_planted_defects(fuzzer, monkeypatch):
    # the script's checks can fail: a clone that keeps the fit, a wrong
    # estimator type, a warning at the defaults, a fit that does not repeat, a
    # bare IndexError out of fit
    from kernlearn import FGMRegressor

    monkeypatch.setattr(FGMRegressor, "__sklearn_clone__", lambda self: copy.deepcopy(self),
                        raising=False)
    status, detail, _ = fuzzer.run_case("FGMRegressor", "clone_fitted", 11)
    assert status == "defect" and "is fitted" in detail
    monkeypatch.undo()

    tags = FGMRegressor.__sklearn_tags__

    def classifier_tags(self):
        t = tags(self)
        t.estimator_type = "classifier"
        return t

    monkeypatch.setattr(FGMRegressor, "__sklearn_tags__", classifier_tags)
    assert fuzzer.run_case("FGMRegressor", "tags", 11)[0] == "defect"
    monkeypatch.undo()

    fit = FGMRegressor.fit

    def warning_fit(self, X, y, sample_weight=None):
        warnings.warn("a planted warning", UserWarning, stacklevel=2)
        return fit(self, X, y, sample_weight=sample_weight)

    monkeypatch.setattr(FGMRegressor, "fit", warning_fit)
    status, detail, _ = fuzzer.run_case("FGMRegressor", "defaults_warnings", 11)
    assert status == "defect" and "a planted warning" in detail

    # a fit that does not repeat (a seed not kept): the pipeline differs from
    # the scaler then the estimator by hand
    fits = []

    def unrepeatable_fit(self, X, y, sample_weight=None):
        fits.append(1)
        self.shift_ = float(len(fits))
        return fit(self, X, y, sample_weight=sample_weight)

    predict = FGMRegressor.predict
    monkeypatch.setattr(FGMRegressor, "fit", unrepeatable_fit)
    monkeypatch.setattr(FGMRegressor, "predict", lambda self, X: predict(self, X) + self.shift_)
    status, detail, _ = fuzzer.run_case("FGMRegressor", "pipeline", 11)
    assert status == "defect" and "pipeline vs scaler then estimator" in detail

    def raise_index(self, X, y, sample_weight=None):
        raise IndexError("index 3 is out of bounds")

    monkeypatch.setattr(FGMRegressor, "fit", raise_index)
    assert fuzzer.run_case("FGMRegressor", "pipeline", 11)[0] == "crash"


def test_class_weight_keys_from_numpy_named_as_labels():
    # class_weight=dict(zip(np.unique(y_strings), ...)) given with labels of
    # another y (a VotingClassifier fits its members on the labels encoded
    # 0..k-1) was refused naming "np.str_('a'), np.str_('b')"
    import numpy as np

    from kernlearn import FGMClassifier

    rng = np.random.RandomState(0)
    X = rng.randn(30, 3)
    y = (X[:, 0] > 0).astype(int)
    weights = dict(zip(np.unique(np.array(["a", "b"])), [1.0, 2.0]))
    with pytest.raises(ValueError, match=r"class_weight names 'a', 'b', which are not") as info:
        FGMClassifier(class_weight=weights).fit(X, y)
    assert "np." not in str(info.value)
