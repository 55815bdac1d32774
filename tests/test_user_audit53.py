"""A fifty-third user's audit: numbers at the edges, and honest convergence.

A user fed every public estimator data at the numeric edges -- columns near
1e-150 and 1e+150 (alone and beside unit columns), columns at 1e9 plus a
variation of 1e-3, float32 whose squares overflow float32 (1e37), int64,
uint8 and bool input, a column with one non-zero, repeated rows and columns,
2 to 5 rows, one column, classes of one or two rows, 60 classes of two rows;
targets at 1e9 + y, 1e-12 * y, constant, with one outlier 1e6 times the rest,
two outputs one of them constant -- and read the predictions, decision values
and probabilities.  Then, for every estimator and every solver or master
option it has (FGM's newton / apg / simplemkl, one-vs-rest and shared;
GrFL's admm / fista / newton; SLKL's newton / exact rules, one-vs-rest;
OBSCURE's stages and step budget; the four multitask formulations, both
losses, the ``*CV`` searches; Platt's folds), they forced non-convergence
(``max_iter=1``, ``inner_max_iter=1``, tiny ``tol``) and checked that a
``ConvergenceWarning`` says so, once, at their own line, that ``converged_``
agrees, and that a default fit on ordinary data warns of nothing.

What was wrong (each test below failed before its fix):

- ``InfiniteFeature*`` gave one ``ConvergenceWarning`` per capped master
  solve: 4 to 52 from one fit (every fold's and every path's masters at each
  level; the three averaged paths each gave the same time-budget warning),
  where the other estimators say it once ("FGM: 11 of 11 master solves
  stopped ...").  The fit now sums them up in one warning naming each
  tolerance missed and how often.
- ``InfiniteFeature*``'s ``converged_`` read ``True`` while the model's own
  master had stopped at ``inner_max_iter`` (and said so): audit 8 made FGM's
  ``converged_`` follow its returned master; GrFL's did not.
- ``FGMClassifier`` and ``LowRankKernelClassifier`` with
  ``multiclass="ovr"`` gave one ``ConvergenceWarning`` per class (sixty from a
  sixty-class fit); their one-vs-rest problems now sum theirs up in one, as
  the searches and Platt's folds do.
- ``MultitaskMKLClassifierCV`` given 60 classes said "got 41 classes": the
  binary check ran in the first fold's fit, on that fold's labels.

Checked and clean (pinned below): the edges above give finite outputs,
probabilities summing to one and the model of the scaled data (every
estimator standardises; far-offset and tiny targets are mapped back);
n < folds, one-row classes under ``probability=True`` and too many classes
are refused naming the problem; every forced stop of FGM, SLKL, OBSCURE and
the multitask solvers warns once at the caller's line with ``converged_``
False, and default fits warn of nothing with ``converged_`` True
(``InfiniteFeatureRegressor``'s paths reaching their feature budget read
``converged_`` False with no warning, where FGM counts its budget as
converged; GrFL now counts it as FGM does).
Not changed here: with ``standardize=False``, columns far from zero with a
small spread (1e9 + 1e-3 x) left the RBF distances (|x|^2 + |y|^2 - 2 x.y) with
no digits and the multitask and OBSCURE fits silently poor; the default
standardises them away.  (Fixed since: every RBF distance subtracts the
training mean of such rows, tests/test_offset_distances.py.)
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import kernlearn as K


def _record(fit, *args):
    """``fit(*args)``'s result and every warning it gave (each one, not once per place)."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = fit(*args)
    return out, rec


def _stopped(rec):
    return [w for w in rec if issubclass(w.category, ConvergenceWarning)]


def _data(n=80, d=5, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.randn(n)
    return X, y


# -- GrFL: one warning for the masters of one fit -------------------------------------

@pytest.mark.parametrize("solver", ["admm", "fista", "newton"])
@pytest.mark.parametrize("regressor", [False, True], ids=["classifier", "regressor"])
def test_grfl_capped_masters_warn_once_per_fit(solver, regressor):
    X, y = _data()
    Est = K.InfiniteFeatureRegressor if regressor else K.InfiniteFeatureClassifier
    est, rec = _record(lambda: Est(solver=solver, inner_max_iter=1, inner_tol=1e-14,
                                   n_candidates=20, random_state=0).fit(
        X, y if regressor else (y > 0).astype(int)))
    stopped = _stopped(rec)
    # the old code: one per capped solve (4 to 48 here)
    assert len(stopped) == 1, [str(w.message)[:60] for w in stopped]
    (w,) = stopped
    assert w.filename == __file__  # the caller's line
    message = str(w.message)
    assert message.startswith("GrFL's master stopped after max_iter=1 without meeting ")
    # the user's tolerance, and how many solves missed it
    assert "tol=1e-14 (the estimator's inner_max_iter and inner_tol) in " in message
    assert message.endswith("; increase inner_max_iter.")
    if regressor and solver != "newton":  # (one Newton step meets the folds' 0.01)
        # the folds choosing lambda_p="auto" loosen theirs: named apart
        assert "loosened to this in the folds choosing lambda_p) in " in message
    assert not est.converged_


def test_grfl_averaged_paths_give_one_time_budget_warning():
    X, y = _data()
    est, rec = _record(lambda: K.InfiniteFeatureClassifier(
        time_budget=1e-9, n_candidates=20, random_state=0).fit(X, (y > 0).astype(int)))
    assert est.n_paths_ == 3 and est.stop_reason_ == "time_budget"
    # the old code: the same warning from each of the three paths
    assert len(_stopped(rec)) == 1 and "time_budget" in str(_stopped(rec)[0].message)


@pytest.mark.parametrize("regressor", [False, True], ids=["classifier", "regressor"])
def test_grfl_converged_is_false_when_the_models_master_stopped_at_its_cap(regressor):
    X, y = _data()
    Est = K.InfiniteFeatureRegressor if regressor else K.InfiniteFeatureClassifier
    y = y if regressor else (y > 0).astype(int)
    est, rec = _record(lambda: Est(solver="newton", inner_max_iter=1, inner_tol=1e-14,
                                   n_candidates=20, random_state=0).fit(X, y))
    # the path stopped on its violation test; its final master did not converge
    assert est.stop_reason_ == "no_violation" and _stopped(rec)
    assert not est.converged_  # the old code: True
    # the default master converges: no warning, converged_
    est, rec = _record(lambda: Est(n_candidates=20, random_state=0, n_paths=1).fit(X, y))
    assert not _stopped(rec) and est.converged_


# -- the multitask classifier's search and more than two classes ----------------------

def test_multitask_cv_counts_the_classes_of_all_rows():
    rng = np.random.RandomState(1)
    X, y = rng.randn(120, 3), np.repeat(np.arange(60), 2)
    # the old code: "got 41 classes" (the first training fold's)
    with pytest.raises(ValueError, match="got 60 classes"):
        K.MultitaskMKLClassifierCV(cv=3).fit(X, y)
    # a third class of zero weight only is no class of the fit (as without the search)
    y3, w = np.arange(120) % 3, np.where(np.arange(120) % 3 == 2, 0.0, 1.0)
    est = K.MultitaskMKLClassifierCV(cv=3, Cs=(1.0,)).fit(X, y3, sample_weight=w)
    np.testing.assert_array_equal(est.classes_, [0, 1])


# -- forced stops: one warning at the caller's line, converged_ False (held) ----------

def _wide(n=60, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 30)
    y = X[:, :6] @ rng.randn(6) + 0.1 * rng.randn(n)
    return X, y


_FORCED = {
    # FGM: each master, the outer cap and the masters' cap (several outer iterations)
    **{f"fgm-{s}-{cap}": (lambda s=s, cap=cap: K.FGMClassifier(B=2, solver=s, **cap), "c")
       for s in ("newton", "apg", "simplemkl")
       for cap in ({"max_iter": 1}, {"inner_max_iter": 1, "inner_tol": 1e-14})},
    "fgm-regressor-C-auto": (lambda: K.FGMRegressor(B=2, max_iter=1), "r"),
    "fgm-logistic": (lambda: K.FGMClassifier(B=2, loss="logistic", inner_max_iter=1,
                                             inner_tol=1e-14), "c"),
    **{f"slkl-{rule}-{kind}": (lambda rule=rule, kind=kind: (
        K.LowRankKernelRegressor if kind == "r" else K.LowRankKernelClassifier)(
        rule=rule, max_iter=1, random_state=0), kind)
       for rule in ("newton", "exact") for kind in ("r", "c")},
    "slkl-fixed-nu": (lambda: K.LowRankKernelRegressor(nu=0.01, max_iter=1,
                                                      random_state=0), "r"),
    "obscure-max_iter": (lambda: K.PNormMKLClassifier(max_iter=1, tol=1e-12,
                                                     random_state=0), "c"),
    "obscure-max_steps": (lambda: K.PNormMKLClassifier(max_steps=10, random_state=0), "c"),
    **{f"multitask-{f}-{kind}": (lambda f=f, kind=kind: (
        K.MultitaskMKLRegressor if kind == "r" else K.MultitaskMKLClassifier)(
        formulation=f, max_iter=1), kind)
       for f in ("mtfl", "mtsfl", "mkl") for kind in ("r", "c")},
    "multitask-svr": (lambda: K.MultitaskMKLRegressor(loss="epsilon_insensitive",
                                                      max_iter=1), "r"),
}


@pytest.mark.parametrize("name", list(_FORCED))
def test_a_forced_stop_warns_once_at_the_callers_line(name):
    make, kind = _FORCED[name]
    X, y = _wide()
    est, rec = _record(lambda: make().fit(X, y if kind == "r" else (y > 0).astype(int)))
    stopped = _stopped(rec)
    assert len(stopped) == 1, [str(w.message)[:70] for w in stopped]
    assert stopped[0].filename == __file__
    assert not est.converged_


@pytest.mark.parametrize("make", [
    lambda: K.MultitaskMKLClassifierCV(cv=3, Cs=(1.0, 10.0), max_iter=1),
    lambda: K.MultitaskMKLRegressorCV(kernel_selection="objective", Cs=(1.0, 10.0),
                                      max_iter=1),
    lambda: K.FGMClassifier(B=2, probability=True, max_iter=1),
], ids=["classifier-cv", "regressor-cv", "platt"])
def test_searches_sum_their_fits_up_and_the_model_warns_for_itself(make):
    # the documented pair: the inner fits summed up in one, and the model's own
    X, y = _wide()
    est, rec = _record(lambda: make().fit(
        X, y if isinstance(make(), K.MultitaskMKLRegressorCV) else (y > 0).astype(int)))
    stopped = [str(w.message) for w in _stopped(rec)]
    assert len(stopped) == 2 and sum(" convergence warning(s) in the " in m
                                     for m in stopped) == 1, stopped
    assert all(w.filename == __file__ for w in _stopped(rec))
    assert not est.converged_


@pytest.mark.parametrize("make", [
    lambda: K.FGMClassifier(B=2), lambda: K.FGMRegressor(B=2),
    lambda: K.InfiniteFeatureClassifier(n_candidates=20, random_state=0),
    lambda: K.InfiniteFeatureRegressor(n_candidates=20, random_state=0),
    lambda: K.LowRankKernelClassifier(random_state=0),
    lambda: K.LowRankKernelRegressor(random_state=0),
    lambda: K.PNormMKLClassifier(random_state=0),
    lambda: K.MultitaskMKLClassifier(), lambda: K.MultitaskMKLRegressor(),
    lambda: K.MultitaskMKLRegressorCV(),
], ids=["fgm-c", "fgm-r", "grfl-c", "grfl-r", "slkl-c", "slkl-r", "obscure", "mt-c",
        "mt-r", "mt-r-cv"])
def test_a_default_fit_on_ordinary_data_converges_without_a_warning(make):
    X, y = _wide()
    regressor = "Regressor" in type(make()).__name__
    est, rec = _record(lambda: make().fit(X, y if regressor else (y > 0).astype(int)))
    assert not _stopped(rec), [str(w.message)[:70] for w in _stopped(rec)]
    if isinstance(est, K.InfiniteFeatureRegressor):
        # (GrFL's paths reach their feature budget here: that read converged_
        # False with no warning, and a report said "stopped before meeting its
        # convergence test"; the budget is now the stop asked for, as FGM's is)
        assert est.stop_reason_ == "max_features"
    assert np.all(est.converged_)


# -- numbers at the edges: the model of the scaled data, finite outputs (held) ---------

_EDGE_MODELS = {
    "fgm-r": lambda: K.FGMRegressor(),
    "grfl-r": lambda: K.InfiniteFeatureRegressor(n_candidates=20, random_state=0),
    "slkl-r": lambda: K.LowRankKernelRegressor(random_state=0),
    "mt-r": lambda: K.MultitaskMKLRegressor(),
    "mt-r-cv": lambda: K.MultitaskMKLRegressorCV(),
    "fgm-c": lambda: K.FGMClassifier(probability=True),
    "obscure": lambda: K.PNormMKLClassifier(random_state=0, probability=True),
    "grfl-c": lambda: K.InfiniteFeatureClassifier(n_candidates=20, random_state=0,
                                                  probability=True),
    "slkl-c": lambda: K.LowRankKernelClassifier(random_state=0, probability=True),
    "mt-c": lambda: K.MultitaskMKLClassifier(probability=True),
    "mt-c-cv": lambda: K.MultitaskMKLClassifierCV(cv=3),
}

# columns at the edges of float64 (alone and beside unit columns), a column far
# from zero with a small spread, float32 whose squares overflow float32
_EDGES = {
    "1e-150": (lambda X: X * 1e-150, 1e-10),
    "1e+150": (lambda X: X * 1e150, 1e-10),
    "mixed": (lambda X: X * np.array([1e150, 1e-150, 1.0, 1.0]), 1e-7),
    "offset": (lambda X: X + np.array([0.0, 0.0, 1e9, 0.0]), 1e-6),
    "float32": (lambda X: (X * 1e37).astype(np.float32), 1e-6),
}


#: models chosen by an iterative search, resolved to less than rounding
_SEARCH_RTOL = {"mt-r-cv": 1e-7}


def _outputs(est, X):
    if not hasattr(est, "classes_"):
        return est.predict(X), None
    proba = est.predict_proba(X) if hasattr(est, "predict_proba") and getattr(
        est, "probability", True) else None
    return est.decision_function(X), proba


@pytest.mark.parametrize("name", list(_EDGE_MODELS))
def test_columns_at_the_edges_give_the_model_of_the_scaled_data(name):
    # every estimator standardises its inputs: the same model to rounding
    # (measured: at most 1.5e-9 of the outputs' spread scaled, 1.2e-7 offset or float32)
    rng = np.random.RandomState(0)
    X = rng.randn(60, 4)
    y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.randn(60)
    if name.endswith(("-c", "-cv", "obscure")) and name != "mt-r-cv":
        y = (y > 0).astype(int)
    make = _EDGE_MODELS[name]
    ref, _ = _outputs(_record(lambda: make().fit(X, y))[0], X)
    for edge, (f, rtol) in _EDGES.items():
        # the CV regressor's leave-one-out search (L-BFGS-B) ends on a flat optimum:
        # inputs that differ in their last bits move its criterion by 1e-14 and its
        # line searches by a few evaluations (21 or 25 here), its weights by 1.5e-7
        # and the predictions by 1.5e-9 of their spread (measured): the same model
        # to the search's resolution, not to rounding
        rtol = max(rtol, _SEARCH_RTOL.get(name, 0.0))
        Z = f(X)
        est, rec = _record(make().fit, Z, y)
        out, proba = _outputs(est, Z)
        assert np.all(np.isfinite(out)), edge
        assert not [w for w in rec if issubclass(w.category, RuntimeWarning)], edge
        assert np.max(np.abs(out - ref)) <= rtol * np.ptp(ref), edge
        if proba is not None:
            assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
            np.testing.assert_array_equal(est.predict(Z), est.classes_[proba.argmax(1)])


@pytest.mark.parametrize("name", ["fgm-c", "grfl-c", "slkl-c", "obscure", "mt-c"])
def test_integer_and_boolean_inputs_are_their_float_values(name):
    rng = np.random.RandomState(0)
    X = rng.randn(50, 4)
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    make = _EDGE_MODELS[name]
    for Z in (X > 0, (X * 20).astype(np.int64), (np.abs(X) * 50).astype(np.uint8)):
        a = _outputs(_record(make().fit, Z, y)[0], Z)[0]
        b = _outputs(_record(make().fit, Z.astype(float), y)[0],
                     Z.astype(float))[0]
        np.testing.assert_array_equal(a, b)


def test_sixty_classes_of_two_rows_give_finite_probabilities_summing_to_one():
    rng = np.random.RandomState(1)
    y = np.repeat(np.arange(60), 2)
    X = rng.randn(120, 3) + 0.5 * y[:, None]
    for make in (lambda: K.FGMClassifier(probability=True),
                 lambda: K.InfiniteFeatureClassifier(n_candidates=20, random_state=0,
                                                     probability=True),
                 lambda: K.LowRankKernelClassifier(random_state=0, probability=True),
                 lambda: K.PNormMKLClassifier(random_state=0, probability=True)):
        est = _record(make().fit, X, y)[0]
        proba = est.predict_proba(X)
        assert proba.shape == (120, 60) and np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert np.all(np.isin(est.predict(X), est.classes_))


def test_constant_and_far_offset_targets_are_predicted_in_their_units():
    X, y = _data(40, 3)
    for name in ("fgm-r", "grfl-r", "slkl-r", "mt-r", "mt-r-cv"):
        make = _EDGE_MODELS[name]
        est = _record(make().fit, X, np.full(40, 3.0))[0]
        np.testing.assert_allclose(est.predict(X), 3.0, rtol=1e-12)
        # two outputs, one constant (the regressors taking several)
        if name in ("grfl-r", "slkl-r"):
            est = _record(make().fit, X, np.c_[y, np.full(40, -2.0)])[0]
            P = est.predict(X)
            np.testing.assert_allclose(P[:, 1], -2.0, rtol=1e-12)
            assert np.corrcoef(P[:, 0], y)[0, 1] > 0.9


@pytest.mark.parametrize("fit, message", [
    (lambda X, y: K.FGMRegressor().fit(X[:2], y[:2]), "needs at least 3 rows"),
    (lambda X, y: K.LowRankKernelClassifier(probability=True).fit(X[:3], [0, 1, 0]),
     "needs at least 2 samples of every class"),
    (lambda X, y: K.MultitaskMKLClassifierCV(cv=3).fit(X[:4], [0, 1, 0, 1]),
     "use at most cv=2"),
    (lambda X, y: K.MultitaskMKLClassifier().fit(X[:6], [0, 1, 2, 0, 1, 2]),
     "got 3 classes"),
])
def test_too_few_rows_for_the_folds_are_refused_naming_the_problem(fit, message):
    X, y = _data(10, 3)
    with pytest.raises(ValueError, match=message):
        fit(X, y)


# -- one-vs-rest problems: one warning for all of them --------------------------------

@pytest.mark.parametrize("make", [
    lambda: K.FGMClassifier(B=2, multiclass="ovr", max_iter=1),
    lambda: K.FGMClassifier(B=2, multiclass="ovr", inner_max_iter=1, inner_tol=1e-14),
    lambda: K.LowRankKernelClassifier(multiclass="ovr", max_iter=1, random_state=0),
], ids=["fgm-max_iter", "fgm-inner", "slkl"])
def test_one_vs_rest_problems_stopped_early_warn_once(make):
    X, y = _wide(90)
    y = np.digitize(y, np.quantile(y, [0.25, 0.5, 0.75]))  # four classes
    est, rec = _record(lambda: make().fit(X, y))
    stopped = [str(w.message) for w in _stopped(rec)]
    # the old code: one per class (sixty from a sixty-class fit)
    assert len(stopped) == 1, stopped
    assert stopped[0].startswith("4 convergence warning(s) in the 4 one-vs-rest problems "
                                 "(first: ")
    assert _stopped(rec)[0].filename == __file__ and not np.any(est.converged_)
