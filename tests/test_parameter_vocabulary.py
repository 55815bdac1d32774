"""One parameter vocabulary (0.2): ``max_iter`` / ``tol`` are the outer loop's,
``inner_max_iter`` / ``inner_tol`` the master's; every old name still works,
warns, and gives the model of the new name."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from kernlearn import (
    FGMClassifier,
    FGMRegressor,
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    MultitaskMKLClassifier,
    MultitaskMKLRegressor,
    MultitaskMKLRegressorCV,
)
from kernlearn.cli import build_estimator


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(80, n_features=6, n_informative=4, random_state=0)
    return X, y, X[:, 0] - 0.5 * X[:, 1], np.arange(80) % 2


def _outputs(est, X, **kw):
    f = est.decision_function if hasattr(est, "decision_function") else est.predict
    return f(X, **kw)


def _fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return est.fit(X, y, **kw)


# (estimator class, old keyword, new keyword, value, target, task-indexed)
ALIASES = [
    (FGMClassifier, "max_outer_iter", "max_iter", 1, "y", False),
    (FGMClassifier, "master_tol", "inner_tol", 1e-3, "y", False),
    (FGMClassifier, "master_max_iter", "inner_max_iter", 2, "y", False),
    (FGMRegressor, "max_outer_iter", "max_iter", 2, "r", False),
    (FGMRegressor, "master_tol", "inner_tol", 1e-3, "r", False),
    (FGMRegressor, "master_max_iter", "inner_max_iter", 2, "r", False),
    (InfiniteFeatureClassifier, "eps", "tol", 0.5, "y", False),
    (InfiniteFeatureClassifier, "max_iter", "inner_max_iter", 3, "y", False),
    (InfiniteFeatureRegressor, "eps", "tol", 0.5, "r", False),
    (InfiniteFeatureRegressor, "max_iter", "inner_max_iter", 3, "r", False),
    (MultitaskMKLRegressor, "max_inner", "inner_max_iter", 1, "r", True),
    (MultitaskMKLClassifier, "max_inner", "inner_max_iter", 1, "y", True),
    (MultitaskMKLRegressorCV, "max_inner", "inner_max_iter", 1, "r", True),
]
# ADMM masters (a cap of 3 iterations shows), p = 3 (p = 2 needs one alternation)
_GRFL = dict(max_features=8, n_candidates=10, solver="admm", random_state=0)
_MT = dict(kernels=["linear", "rbf"], max_iter=5, p=3.0)
_SMALL = {InfiniteFeatureClassifier: _GRFL, InfiniteFeatureRegressor: _GRFL,
          MultitaskMKLRegressor: _MT, MultitaskMKLClassifier: _MT,
          MultitaskMKLRegressorCV: dict(_MT, Cs=[0.1, 1.0], cv=2,
                                        kernel_selection="objective")}


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("Est, old, new, value, target, tasks", ALIASES,
                         ids=lambda a: a.__name__ if isinstance(a, type) else str(a))
def test_old_name_warns_and_gives_the_new_names_model(data, Est, old, new, value, target,
                                                       tasks):
    X, y, r, t = data
    kw = {"task_index": t} if tasks else {}
    small = _SMALL.get(Est, dict(B=2))
    new_est = Est(**small, **{new: value})
    with warnings.catch_warnings():
        # the new name is never reported as renamed (GrFL's tol warns that its
        # meaning changed, tested below)
        warnings.simplefilter("error", FutureWarning)
        warnings.filterwarnings("ignore", "InfiniteFeature.*tol=", FutureWarning)
        new_est.fit(X, y if target == "y" else r, **kw)
    old_est = Est(**small, **{old: value})
    with pytest.warns(FutureWarning, match=f"'{old}' was renamed '{new}'"):
        old_est.fit(X, y if target == "y" else r, **kw)
    out = (lambda e: _outputs(e, X, task_index=t)) if tasks else (lambda e: _outputs(e, X))
    np.testing.assert_array_equal(out(old_est), out(new_est))
    assert getattr(old_est, new) == getattr(Est(), new)  # the new parameter is untouched
    # the value is not just accepted: it changes the model (else the test is void)
    default = _fit(Est(**small), X, y if target == "y" else r, **kw)
    assert not np.array_equal(out(default), out(new_est))

def test_grfl_tol_is_the_outer_tolerance_and_warns_when_set(data):
    X, y, _, _ = data
    kw = dict(max_features=30, n_candidates=20, random_state=0)
    with pytest.warns(FutureWarning, match="outer loop's tolerance since 0.2.*inner_tol"):
        loose = InfiniteFeatureClassifier(tol=0.5, **kw).fit(X, y)
    # the outer loop stopped on tol: nothing sampled violated (7) by more than 50 %
    assert loose.stop_reason_ == "no_violation" and loose.last_violation_ <= 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # the default does not warn
        tight = InfiniteFeatureClassifier(**kw).fit(X, y)
    assert len(loose.features_) < len(tight.features_)


def test_grfl_tol_with_the_deprecated_eps_keeps_its_old_meaning(data):
    X, y, _, _ = data
    kw = dict(max_features=5, n_candidates=10, random_state=0)
    new = InfiniteFeatureClassifier(tol=0.2, inner_tol=1e-2, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        new.fit(X, y)
    with pytest.warns(FutureWarning, match="pre-0.2 meaning, the master's tolerance"):
        old = InfiniteFeatureClassifier(eps=0.2, tol=1e-2, **kw).fit(X, y)
    np.testing.assert_array_equal(old.decision_function(X), new.decision_function(X))
    with pytest.raises(ValueError, match="cannot be combined with inner_tol"):
        _fit(InfiniteFeatureClassifier(eps=0.2, tol=1e-2, inner_tol=1e-4, **kw), X, y)


@pytest.mark.parametrize("old, new", [("max_outer_iter=2", "max_iter=2"),
                                      ("master_tol=0.001", "inner_tol=0.001")])
def test_cli_accepts_old_and_new_names(data, old, new):
    X, y, _, _ = data
    _, a = build_estimator("fgm", [old, "B=2"])
    _, b = build_estimator("fgm", [new, "B=2"])
    with pytest.warns(FutureWarning, match="renamed"):
        a.fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X),
                                  _fit(clone(b), X, y).decision_function(X))


def test_old_and_new_names_together_are_refused():
    from kernlearn import FGMClassifier

    X = np.random.default_rng(0).standard_normal((30, 4))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="not both"):
        FGMClassifier(max_iter=3, max_outer_iter=5).fit(X, y)
