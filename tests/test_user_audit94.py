"""Audit 94: wrongful refusals in the scikit-learn ecosystem (issue 21).

``benchmarks/fuzz_ecosystem.py`` counted any clear refusal as a success; its
refusals are now judged by the scikit-learn counterpart of each estimator
(``benchmarks/fuzz_counterparts.py``).  Each test names what went wrong."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits


SEARCH_SEED = 163  # (a grid search over fit_intercept of a case fitted with it)


@pytest.fixture
def fuzzer():
    from bench_scripts import load_script

    yield from load_script("fuzz_ecosystem")


def _three_classes(n=60, d=4, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    return X, np.digitize(X[:, 0] + 0.3 * rng.randn(n), [-0.5, 0.5])


@pytest.mark.parametrize("solver", ["apg", "simplemkl"])
def test_one_output_solvers_fit_multiclass_at_auto(solver):
    # FGMClassifier(solver="apg" or "simplemkl") refused every y of three or
    # more classes at the default multiclass="auto" ("handles one output"),
    # where LinearSVC fits: "auto" now runs their one-vs-rest problems
    from kernlearn import FGMClassifier

    X, y = _three_classes()
    with threadpool_limits(1):
        auto = FGMClassifier(solver=solver, max_features=2).fit(X, y)
        ovr = FGMClassifier(solver=solver, max_features=2, multiclass="ovr").fit(X, y)
    np.testing.assert_array_equal(auto.predict(X), ovr.predict(X))
    np.testing.assert_allclose(auto.decision_function(X), ovr.decision_function(X),
                               rtol=1e-12, atol=1e-12)
    assert auto.decision_function(X).shape == (60, 3)
    # asked for explicitly, the shared selection is refused by name with
    # SimpleMKL; APG solves it since the thirty-fifth pass
    # (tests/test_fgm_apg_multi36.py)
    if solver == "simplemkl":
        with pytest.raises(ValueError, match=f"solver='{solver}' handles one output"):
            FGMClassifier(solver=solver, multiclass="shared").fit(X, y)


def _limitation_cases():
    from kernlearn import (FGMClassifier, FGMRegressor, PNormMKLClassifier)

    rng = np.random.RandomState(1)
    X = rng.randn(40, 3)
    yb = (X[:, 0] > 0).astype(int)
    X3, y3 = _three_classes()
    task = np.arange(40) % 2

    from kernlearn import (LowRankKernelClassifier, MultitaskMKLClassifier,
                           MultitaskMKLClassifierCV)

    small = np.arange(16) % 2  # two tasks of 8 rows, 4 of each class
    return [
        (LowRankKernelClassifier(gamma=0.1, kernel_params={"gamma": "mean"}), X, yb, {},
         "as the argument of that name (or bound by a ``functools.partial``\n        kernel) "
         "is refused"),
        (MultitaskMKLClassifier(), X, np.where(task == 1, 1, yb), {"task_index": task},
         "Every task is a binary problem"),
        (MultitaskMKLClassifierCV(cv=5, Cs=(1.0,)), X[:16], np.repeat([0, 1], 8),
         {"task_index": small}, "stratified by task and class"),
        (FGMRegressor(max_features=9), X, X[:, 0], {}, "at most the number of candidates"),
        (FGMClassifier(solver="simplemkl", multiclass="shared"), X3, y3, {},
         '``"shared"`` with it is refused'),
        (PNormMKLClassifier(max_iter=0, max_iter_online=0), X, yb, {},
         "``max_iter_online=0``: no epoch"),
        (PNormMKLClassifier(online_only=True, max_iter_online=0), X, yb, {},
         "``max_iter_online=0``, which run no stage-1 epoch"),
    ]


def test_listed_limitations_are_refused_documented_and_matched():
    # each entry of the fuzz's list of right refusals is a refusal of the bare
    # fit, documented in the estimator's docstring, and matched by the list
    # (a message the list does not name is not excused)
    from bench_scripts import load_script

    gen = load_script("fuzz_counterparts")
    fc = next(gen)
    cases = _limitation_cases()
    assert len(cases) >= len(fc.LIMITATIONS)
    matched = set()
    for est, X, y, kw, doc in cases:
        name = type(est).__name__
        with pytest.raises((ValueError, TypeError)) as info:
            est.fit(X, y, **kw)
        reason = fc.documented_limitation(name, str(info.value))
        assert reason is not None, (name, str(info.value))
        matched.add(reason)
        text = " ".join((type(est).__doc__ + type(est).fit.__doc__).split())
        assert " ".join(doc.split()) in text, (name, doc)
    assert len(matched) == len(fc.LIMITATIONS)
    assert fc.documented_limitation("FGMRegressor", "ValueError: a planted refusal") is None
    assert fc.documented_limitation("LowRankKernelRegressor",
                                    "max_features=9 exceeds the 3 candidate") is None


def test_fuzzer_judges_refusals_by_the_counterpart(fuzzer, monkeypatch):
    # a refusal the counterpart does not share is a failure ("wrongful");
    # one it shares, or a listed limitation, is expected
    import sys

    from sklearn.linear_model import Lasso

    from kernlearn import FGMRegressor

    def refuse(message):
        def fit(self, X, y, sample_weight=None):
            raise ValueError(message)
        return fit

    monkeypatch.setattr(FGMRegressor, "fit", refuse("a planted refusal of a pipeline"))
    status, detail, _ = fuzzer.run_case("FGMRegressor", "pipeline", 11)
    assert status == "wrongful-refusal" and "Lasso" in detail
    assert status in fuzzer.FAILURES
    assert fuzzer.main(["--cases", "1", "--estimators", "FGMRegressor",
                        "--compositions", "pipeline"]) == 1

    monkeypatch.setattr(FGMRegressor, "fit",
                        refuse("max_features=9 exceeds the 3 candidate features"))
    assert fuzzer.run_case("FGMRegressor", "pipeline", 11)[0] == "refused-limitation"

    # (a refusal of the same kind: audit 104 requires the kinds to agree)
    monkeypatch.setattr(FGMRegressor, "fit",
                        refuse("The 'C' parameter of FGMRegressor must be positive"))
    monkeypatch.setattr(sys.modules["fuzz_counterparts"], "counterpart",
                        lambda name, params, tasks=False: Lasso(alpha=-1.0))
    status, detail, _ = fuzzer.run_case("FGMRegressor", "pipeline", 11)
    assert status == "refused-expected" and "alpha" in detail


def test_fuzzer_converse_flags_an_acceptance_the_counterpart_refuses(fuzzer, monkeypatch):
    # a composition we accept and the counterpart refuses is returned for review
    import sys

    from sklearn.linear_model import Lasso

    assert fuzzer.run_case("FGMRegressor", "pipeline", 11, converse=True)[0] == "ok-both"
    monkeypatch.setattr(sys.modules["fuzz_counterparts"], "counterpart",
                        lambda name, params, tasks=False: Lasso(alpha=-1.0))
    status, detail, _ = fuzzer.run_case("FGMRegressor", "pipeline", 11, converse=True)
    assert status == "accepted-counterpart-refuses" and "alpha" in detail


def test_fuzzer_search_fails_on_one_failed_candidate(fuzzer, monkeypatch):
    # a search whose candidate refused counted as held (scikit-learn scored
    # the failed fits NaN, its warning silenced, and chose among the rest)
    from kernlearn import FGMRegressor

    fit = FGMRegressor.fit

    def refuse_without_intercept(self, X, y, sample_weight=None):
        if not self.fit_intercept:
            raise ValueError("a planted refusal of fit_intercept=False")
        return fit(self, X, y, sample_weight=sample_weight)

    monkeypatch.setattr(FGMRegressor, "fit", refuse_without_intercept)
    status, detail, params = fuzzer.run_case("FGMRegressor", "search", SEARCH_SEED)
    assert params["fit_intercept"], params
    assert status == "wrongful-refusal" and "fit_intercept=False" in detail


def test_fuzzer_does_not_skip_an_attribute_error_inside_a_prediction(fuzzer):
    # an AttributeError out of decision_function / predict_proba (a bug inside
    # them) was skipped as "the method is not there"
    class Stub:
        def predict(self, X):
            return np.zeros(len(X))

        def decision_function(self, X):
            raise AttributeError("'NoneType' object has no attribute 'shape'")

    with pytest.raises(AttributeError, match="NoneType"):
        fuzzer._outputs(Stub(), np.zeros((3, 2)))

    class Absent(Stub):
        def decision_function(self, X):
            raise AttributeError("'Absent' object has no attribute 'decision_function'")

    assert set(fuzzer._outputs(Absent(), np.zeros((3, 2)))) == {"predict"}

