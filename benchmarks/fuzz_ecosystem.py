"""Randomised scikit-learn compositions around the public estimators.

For each estimator, draws a seeded random setting (``fuzz_options.draw_case``,
made fast: small data, no precomputed kernels, no time budget) and one random
composition of scikit-learn's machinery around it: ``Pipeline`` with a
scaler, ``ColumnTransformer`` over a pandas frame with named columns of mixed
dtypes, ``GridSearchCV`` / ``RandomizedSearchCV`` / ``HalvingGridSearchCV``
over one or two of its parameters, ``cross_validate`` with several scorers,
``cross_val_predict(method=...)``, ``CalibratedClassifierCV``,
``OneVsRestClassifier`` / ``OneVsOneClassifier``, ``MultiOutputRegressor``,
``Bagging*``, ``Stacking*``, ``VotingClassifier(voting="soft")``,
``SelectFromModel``, ``TransformedTargetRegressor``, ``clone`` of a fitted
estimator, ``set_params`` after ``fit``, ``set_output(transform="pandas")``,
metadata routing of ``sample_weight`` (and ``task_index``), the tags.  It
checks:

- the composition runs, or raises a ``ValueError`` / ``TypeError`` whose
  message names no private function (anything else is a defect);
- a refusal is right: the same composition (same data, same draws) with the
  estimator's scikit-learn counterpart (``fuzz_counterparts.py``) refuses too
  ("refused-expected"), or the message names one of its listed, documented
  limitations ("refused-limitation"); else "wrongful-refusal", a failure.
  The two refusals must share a kind (``fuzz_counterparts.KINDS``: non-finite
  input, no rows, one class, the folds, a wrong shape, a parameter, ...): a
  counterpart refusing for another reason does not excuse ours
  ("refused-differently", a failure);
  ``--converse`` runs a fraction of the accepted compositions with the
  counterpart too ("ok-both"), and the ``hostile`` composition (a one-class
  fit or fold, a wrong shape, NaN, no rows) always: an acceptance of what
  the counterpart refuses is a failure ("accepted-counterpart-refuses");
- a search fails on any failed candidate (``error_score="raise"``), and an
  ``AttributeError`` inside a prediction method is a crash, not a method
  missing;
- the composed model equals the manual composition (a pipeline equals the
  scaler then the estimator by hand; routed weights equal weights passed
  directly; a search's ``best_estimator_`` equals a fresh fit at the best
  parameters; a clone of a fitted estimator is unfitted and refits to the
  same model; ``set_params`` after ``fit`` then ``fit`` equals a fresh fit);
- the fitted composition pickles and predicts the same afterwards;
- ``predict_proba`` rows sum to one and its columns follow ``classes_``;
- at the estimator's defaults, no warning comes from kernlearn's code.

Each failure prints the estimator, the composition, the case's seed and the
settings.  ``--minutes`` bounds the run (cases go round the estimators until
then); the summary counts outcomes by composition.  Exit status 1 when any
case failed.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fuzz_ecosystem.py \
        --minutes 10 --seed 0 --converse 0.2
"""

import argparse
import contextlib
import io
import os
import pickle
import sys
import time
import traceback
import warnings

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import sklearn  # noqa: E402
from sklearn.base import clone, is_classifier, is_regressor  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.utils.validation import check_is_fitted  # noqa: E402

from fuzz_counterparts import (accepted_rightly, documented_limitation,  # noqa: E402
                               run_counterpart, same_kind)
from fuzz_inputs import (Defect, _close, _fit, _pk, _unavailable, comp_hostile,  # noqa: E402
                         comp_inputs)
from fuzz_options import CLEAR_ERRORS, INTERNAL_WORDS, SPACES, draw_case  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from sklearn.experimental import enable_halving_search_cv  # noqa: E402,F401

import kernlearn  # noqa: E402

# What a composition returns when it does not apply to the drawn case (counted apart)
SKIP = "skipped"
# The outcomes that fail the run
FAILURES = ("crash", "bad-error", "defect", "wrongful-refusal", "refused-differently",
            "unjudged", "accepted-counterpart-refuses")


def _outputs(est, X, **kw):
    """The estimator's prediction outputs (predict, decision_function, predict_proba)."""
    out = {"predict": np.asarray(est.predict(X, **kw))}
    for method in ("decision_function", "predict_proba"):
        if hasattr(est, method):
            try:
                out[method] = np.asarray(getattr(est, method)(X, **kw))
            except AttributeError as exc:
                if not _unavailable(exc, method):
                    raise
    return out


def _same_outputs(a, b, what):
    for key in a:
        if key in b:
            _close(a[key], b[key], f"{what} ({key})")


def _check_proba(est, X, what, argmax=True, **kw):
    if not hasattr(est, "predict_proba"):
        return
    try:
        proba = np.asarray(est.predict_proba(X, **kw))
    except AttributeError as exc:
        if not _unavailable(exc, "predict_proba"):
            raise
        return
    classes = est.classes_
    if proba.shape != (X.shape[0], len(classes)):
        raise Defect(f"{what}: predict_proba shape {proba.shape}, classes_ {len(classes)}")
    if not np.allclose(proba.sum(1), 1.0) or proba.min() < 0:
        raise Defect(f"{what}: predict_proba rows not probabilities")
    # the columns follow classes_: the most probable column is predict's class
    # wherever it is clearly most probable
    if not argmax:
        return
    pred = np.asarray(est.predict(X, **kw))
    top = np.sort(proba, axis=1)
    clear = top[:, -1] - top[:, -2] > 1e-6
    if clear.any() and np.mean(classes[np.argmax(proba, 1)][clear] == pred[clear]) < 0.9:
        raise Defect(f"{what}: predict_proba's argmax disagrees with predict "
                     f"({np.mean(classes[np.argmax(proba, 1)][clear] != pred[clear]):.0%} of rows)")


def _pickle_same(model, X, what, **kw):
    back = pickle.loads(pickle.dumps(model))
    _same_outputs(_outputs(model, X, **kw), _outputs(back, X, **kw), f"{what} after pickle")


# ---------------------------------------------------------------------------
# Cases


def draw(name, seed):
    """A fast random setting of ``name``: (params, est, X, y, task, sw, rng)."""
    for attempt in range(50):
        rng, params, data, est, X, y, task, fit_kw = draw_case(name, seed + 104729 * attempt)
        if "precomputed" in (params.get("kernels"), params.get("kernel")):
            continue
        if params.get("time_budget") is not None or params.get("warm_start"):
            continue
        if params.get("memory_budget") or params.get("family") is not None:
            continue
        break
    params = dict(params)
    params["verbose"] = 0
    # fast settings: cap the iteration counts the draw may have made large
    for key, cap in (("max_iter", 50), ("inner_max_iter", 50), ("max_steps", 100)):
        if isinstance(params.get(key), int) and params[key] > cap:
            params[key] = cap
    est = type(est)(**params)
    n = min(X.shape[0], 120)
    X = X[:n].toarray() if sp.issparse(X) else np.asarray(X[:n])
    y = np.asarray(y)[:n]
    task = None if task is None else task[:n]
    sw = fit_kw.get("sample_weight")
    sw = None if sw is None else sw[:n]
    return params, est, X, y, task, sw, rng


def _scaler(rng):
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, RobustScaler, StandardScaler

    return [StandardScaler, MinMaxScaler, RobustScaler, MaxAbsScaler][rng.randint(4)]()


# ---------------------------------------------------------------------------
# Compositions: each takes (name, params, est, X, y, task, sw, rng) and raises
# Defect, or a clear error (refused), or returns quietly.


def comp_pipeline(name, params, est, X, y, task, sw, rng):
    from sklearn.pipeline import Pipeline, make_pipeline

    scaler = _scaler(rng)
    pipe = make_pipeline(clone(scaler), clone(est)) if rng.rand() < 0.5 else \
        Pipeline([("scale", clone(scaler)), ("model", clone(est))])
    if task is not None:
        with sklearn.config_context(enable_metadata_routing=True):
            pipe.fit(X, y, task_index=task)
            got = _outputs(pipe, X, task_index=task)
            _pickle_same(pipe, X, "pipeline", task_index=task)
    else:
        pipe.fit(X, y)
        got = _outputs(pipe, X)
        _pickle_same(pipe, X, "pipeline")
        # (Platt's probabilities may disagree with predict: documented, as SVC's)
        _check_proba(pipe, X, "pipeline", argmax=not params.get("probability"))
    Xs = clone(scaler).fit_transform(X)
    manual = _fit(clone(est), Xs, y, task)
    _same_outputs(got, _outputs(manual, Xs, **_pk(task)), "pipeline vs scaler then estimator")


def _frame(X, rng):
    import pandas as pd

    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    df["colour"] = pd.Categorical(np.array(["red", "green", "blue"])[rng.randint(3, size=len(df))])
    df["count"] = rng.randint(0, 5, size=len(df)).astype(np.int64)
    return df


def comp_column_transformer(name, params, est, X, y, task, sw, rng):
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    df = _frame(X, rng)
    num = [c for c in df.columns if c != "colour"]
    ct = ColumnTransformer([("num", _scaler(rng), num),
                            ("cat", OneHotEncoder(sparse_output=False), ["colour"])])
    pandas_out = rng.rand() < 0.5
    if pandas_out:
        ct.set_output(transform="pandas")
    pipe = make_pipeline(ct, clone(est))
    kw = _pk(task)
    ctx = sklearn.config_context(enable_metadata_routing=True) if task is not None \
        else contextlib.nullcontext()
    with ctx:
        pipe.fit(df, y, **kw)
        got = _outputs(pipe, df, **kw)
        _pickle_same(pipe, df, "column transformer", **kw)
    Z = clone(ct).fit_transform(df)
    model = pipe[-1]
    if pandas_out:
        names = list(getattr(model, "feature_names_in_", []))
        if names != list(Z.columns):
            raise Defect(f"feature_names_in_ {names[:3]}... != the frame's columns")
        if hasattr(pipe, "get_feature_names_out") and hasattr(model, "get_feature_names_out"):
            pipe.get_feature_names_out()
    manual = _fit(clone(est), Z, y, task)
    _same_outputs(got, _outputs(manual, Z, **kw), "column transformer vs by hand")
    if task is None:
        _check_proba(pipe, df, "column transformer", argmax=not params.get("probability"))


def _grid(name, params, est, rng):
    """One or two of the estimator's parameters with two or three values."""
    p = est.get_params(deep=False)
    cands = []
    if isinstance(p.get("C"), (int, float)) and not isinstance(p.get("C"), bool):
        cands.append(("C", [0.1, 1.0, 10.0]))
    for key, values in (("standardize", [True, False]), ("fit_intercept", [True, False]),
                        ("max_features", [2, 4]), ("B", [2, 5]), ("p", [1.5, 2.0]),
                        ("n_columns", [5, 20]), ("gamma", ["scale", 0.1]),
                        ("lambda_p", ["auto", 0.1])):
        if key in p and (key != "p" or "PNorm" in name):
            cands.append((key, values))
    if "Cs" in p:
        cands = [c for c in cands if c[0] != "C"]
    rng.shuffle(cands)
    k = 1 + int(rng.rand() < 0.5 and len(cands) > 1)
    return dict(cands[:k])


def comp_search(name, params, est, X, y, task, sw, rng):
    from sklearn.model_selection import (GridSearchCV, HalvingGridSearchCV,
                                         RandomizedSearchCV)

    grid = _grid(name, params, est, rng)
    kind = ["grid", "random", "halving"][rng.randint(3)]
    n_jobs = int(rng.choice([1, 2]))
    cv = 3
    if kind == "grid":
        search = GridSearchCV(clone(est), grid, cv=cv, n_jobs=n_jobs, error_score="raise")
    elif kind == "random":
        search = RandomizedSearchCV(clone(est), grid, n_iter=3, cv=cv, n_jobs=n_jobs,
                                    random_state=int(rng.randint(100)), error_score="raise")
    else:
        search = HalvingGridSearchCV(clone(est), grid, cv=cv, n_jobs=n_jobs, factor=2,
                                     min_resources=max(30, len(y) // 3), error_score="raise")
    if task is not None:
        # the multitask estimators: task_index routed to fit, and to the
        # predictions through their documented MultitaskScorer
        from sklearn.model_selection import StratifiedKFold

        from kernlearn.estimators.mtmkl import MultitaskScorer

        scoring = MultitaskScorer(["accuracy", "roc_auc"][rng.randint(2)] if is_classifier(est)
                                  else ["r2", "neg_mean_absolute_error"][rng.randint(2)])
        strata = task if not is_classifier(est) else np.char.add(task.astype(str), y.astype(str))
        folds = list(StratifiedKFold(2).split(X, strata))
        search = GridSearchCV(clone(est), grid, cv=folds, n_jobs=n_jobs, scoring=scoring,
                              error_score="raise")
        with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X, y, task_index=task)
            best = clone(est).set_params(**search.best_params_).fit(X, y, task_index=task)
        if not np.all(np.isfinite(search.cv_results_["mean_test_score"])):
            raise Defect("multitask search: a score not finite")
        _same_outputs(_outputs(search.best_estimator_, X, task_index=task),
                      _outputs(best, X, task_index=task),
                      f"multitask search's best_estimator_ vs a fresh fit at {search.best_params_}")
        _pickle_same(search.best_estimator_, X, "multitask search", task_index=task)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    best = clone(est).set_params(**search.best_params_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        best.fit(X, y)
    _same_outputs(_outputs(search.best_estimator_, X), _outputs(best, X),
                  f"{kind} search's best_estimator_ vs a fresh fit at {search.best_params_}")
    _same_outputs(_outputs(search, X), _outputs(best, X), f"{kind} search's predictions")
    if not np.all(np.isfinite(search.cv_results_["mean_test_score"])):
        raise Defect(f"{kind} search: a score not finite")
    _pickle_same(search, X, f"{kind} search")


def comp_cross_validate(name, params, est, X, y, task, sw, rng):
    from sklearn.model_selection import KFold, StratifiedKFold, cross_validate

    if task is not None:
        return SKIP
    clf = is_classifier(est)
    scoring = ["accuracy", "balanced_accuracy"] if clf else ["r2", "neg_mean_squared_error"]
    if clf and len(np.unique(y)) == 2 and rng.rand() < 0.5:
        scoring.append("roc_auc")
    cv = StratifiedKFold(3) if clf else KFold(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = cross_validate(clone(est), X, y, scoring=scoring, cv=cv, return_estimator=True,
                             error_score="raise", n_jobs=int(rng.choice([1, 2])))
    for k, (tr, te) in enumerate(cv.split(X, y)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            manual = clone(est).fit(X[tr], y[tr])
        _same_outputs(_outputs(res["estimator"][k], X[te]), _outputs(manual, X[te]),
                      f"cross_validate's estimator {k}")
        for s in scoring:
            if not np.isfinite(res[f"test_{s}"][k]):
                raise Defect(f"cross_validate test_{s} not finite")


def comp_cross_val_predict(name, params, est, X, y, task, sw, rng):
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict

    if task is not None:
        return SKIP
    clf = is_classifier(est)
    methods = ["predict"] + [m for m in ("predict_proba", "predict_log_proba", "decision_function")
                             if hasattr(est, m)]
    method = methods[rng.randint(len(methods))]
    cv = StratifiedKFold(3) if clf else KFold(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = cross_val_predict(clone(est), X, y, cv=cv, method=method)
    want = None
    for tr, te in cv.split(X, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = clone(est).fit(X[tr], y[tr])
        part = np.asarray(getattr(m, method)(X[te]))
        if want is None:
            want = np.zeros((len(y),) + part.shape[1:], dtype=part.dtype)
        want[te] = part
    _close(got, want, f"cross_val_predict(method={method!r})")


def comp_calibrated(name, params, est, X, y, task, sw, rng):
    from sklearn.calibration import CalibratedClassifierCV

    if not is_classifier(est) or task is not None:
        return SKIP
    cal = CalibratedClassifierCV(clone(est), cv=3, method=["sigmoid", "isotonic"][rng.randint(2)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cal.fit(X, y)
    _check_proba(cal, X, "CalibratedClassifierCV")
    _pickle_same(cal, X, "CalibratedClassifierCV")


def comp_one_vs(name, params, est, X, y, task, sw, rng):
    from sklearn.multiclass import OneVsOneClassifier, OneVsRestClassifier

    if not is_classifier(est) or task is not None:
        return SKIP
    wrap = OneVsRestClassifier if rng.rand() < 0.5 else OneVsOneClassifier
    model = wrap(clone(est), n_jobs=int(rng.choice([1, 2])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    pred = model.predict(X)
    if not np.isin(pred, np.unique(y)).all():
        raise Defect(f"{wrap.__name__} predicts outside the classes")
    if wrap is OneVsRestClassifier and len(np.unique(y)) > 2:
        # each binary estimator equals one fitted by hand on "class k or not"
        k = int(rng.randint(len(model.classes_)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            manual = clone(est).fit(X, (y == model.classes_[k]).astype(int))
        _same_outputs(_outputs(model.estimators_[k], X), _outputs(manual, X),
                      f"OneVsRest's estimator {k}")
    # (OneVsRest predicts the argmax of the decision functions, its
    # probabilities are each binary model's normalised: they may disagree)
    _check_proba(model, X, wrap.__name__, argmax=wrap is not OneVsRestClassifier)
    _pickle_same(model, X, wrap.__name__)


def comp_multioutput(name, params, est, X, y, task, sw, rng):
    from sklearn.multioutput import MultiOutputRegressor

    if not is_regressor(est) or task is not None:
        return SKIP
    Y = np.column_stack([y, -0.5 * y + X[:, 0]])
    model = MultiOutputRegressor(clone(est))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, Y)
        manual = [clone(est).fit(X, Y[:, j]) for j in range(2)]
    _close(model.predict(X), np.column_stack([m.predict(X) for m in manual]),
           "MultiOutputRegressor vs one fit per column")
    _pickle_same(model, X, "MultiOutputRegressor")


def comp_bagging(name, params, est, X, y, task, sw, rng):
    from sklearn.ensemble import BaggingClassifier, BaggingRegressor

    if task is not None:
        return SKIP
    cls = BaggingClassifier if is_classifier(est) else BaggingRegressor
    seed = int(rng.randint(1000))
    model = cls(clone(est), n_estimators=3, random_state=seed, max_samples=0.8,
                n_jobs=int(rng.choice([1, 2])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    # each member equals a fresh fit on its own rows (drawn with replacement:
    # the counts go in as sample weights when the estimator takes them, as rows otherwise)
    k = int(rng.randint(3))
    member = model.estimators_[k]
    rows = model.estimators_samples_[k]
    feats = model.estimators_features_[k]
    if rows.dtype == bool:
        rows = np.flatnonzero(rows)
    counts = np.bincount(rows, minlength=len(y)).astype(float)
    if is_classifier(est):
        y = np.unique(y, return_inverse=True)[1]  # (Bagging fits its members on 0..k-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            manual = clone(member).fit(X[:, feats], y, sample_weight=counts)
        except TypeError:
            manual = clone(member).fit(X[rows][:, feats], y[rows])
    try:
        _same_outputs(_outputs(member, X[:, feats]), _outputs(manual, X[:, feats]),
                      "a bagging member vs a fresh fit on its rows")
    except Defect:
        # Bagging draws the rows, then fits on the weighted rows: rows with
        # weight zero removed and the others weighted; compare with the rows repeated
        manual = clone(member).fit(X[rows][:, feats], y[rows])
        _same_outputs(_outputs(member, X[:, feats]), _outputs(manual, X[:, feats]),
                      "a bagging member vs a fresh fit on its rows (repeated)")
    if is_classifier(est):
        _check_proba(model, X, "Bagging")
    _pickle_same(model, X, "Bagging")


def _linear_for(est):
    """A new scikit-learn linear model of ``est``'s task (logistic or least squares)."""
    from sklearn.linear_model import LinearRegression, LogisticRegression

    return LogisticRegression() if is_classifier(est) else LinearRegression()


def _ours_and_linear(est, classifier, regressor, **kwargs):
    """The ensemble ``classifier`` or ``regressor`` (by ``est``'s task) of a
    clone of ``est`` ("ours") and :func:`_linear_for`'s model, built with ``kwargs``."""
    if is_classifier(est):
        return classifier([("ours", clone(est)), ("lr", _linear_for(est))], **kwargs)
    return regressor([("ours", clone(est)), ("lin", _linear_for(est))], **kwargs)


def comp_stacking(name, params, est, X, y, task, sw, rng):
    from sklearn.ensemble import StackingClassifier, StackingRegressor

    if task is not None:
        return SKIP
    # (StackingClassifier's stack_method is "auto" by default)
    model = _ours_and_linear(est, StackingClassifier, StackingRegressor, cv=3,
                             n_jobs=int(rng.choice([1, 2])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
        # (StackingClassifier fits its members on the labels encoded 0..k-1)
        yy = model._label_encoder.transform(y) if is_classifier(est) else y
        manual = clone(est).fit(X, yy)
    _same_outputs(_outputs(model.named_estimators_["ours"], X), _outputs(manual, X),
                  "stacking's refitted member")
    if is_classifier(est):
        _check_proba(model, X, "Stacking")
    _pickle_same(model, X, "Stacking")


def comp_voting(name, params, est, X, y, task, sw, rng):
    from sklearn.ensemble import VotingClassifier, VotingRegressor

    if task is not None:
        return SKIP
    model = _ours_and_linear(est, VotingClassifier, VotingRegressor)
    if is_classifier(est):
        model.set_params(voting="soft")
    others = _linear_for(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
        manual, other = clone(est).fit(X, y), others.fit(X, y)
    if is_classifier(est):
        try:
            want = (np.asarray(manual.predict_proba(X)) + other.predict_proba(X)) / 2
        except AttributeError as exc:
            if not _unavailable(exc, "predict_proba"):
                raise
            return SKIP  # (soft voting needs probabilities: SVC's the same)
        _close(model.predict_proba(X), want, "soft voting vs the mean of the probabilities")
        _check_proba(model, X, "VotingClassifier")
    else:
        _close(model.predict(X), (manual.predict(X) + other.predict(X)) / 2,
               "voting vs the mean of the predictions")
    _pickle_same(model, X, "Voting")


def comp_select_from_model(name, params, est, X, y, task, sw, rng):
    from sklearn.feature_selection import SelectFromModel
    from sklearn.pipeline import make_pipeline

    if not name.startswith("FGM") or task is not None:
        return SKIP
    sel = SelectFromModel(clone(est), threshold=float(rng.choice([1e-10, 1e-5])))
    final = _linear_for(est)
    pipe = make_pipeline(sel, final)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
        manual = clone(est).fit(X, y)
    support = pipe[0].get_support()
    imp = getattr(manual, "feature_importances_", None)
    if imp is None:
        coef = np.asarray(manual.coef_)
        imp = np.abs(coef) if coef.ndim == 1 else np.linalg.norm(coef, axis=0, ord=1)
    want = np.asarray(imp) >= sel.threshold
    if not np.array_equal(support, want):
        raise Defect(f"SelectFromModel's support {np.flatnonzero(support)} != "
                     f"the fit's {np.flatnonzero(want)}")
    if hasattr(manual, "selected_features_"):
        chosen = np.zeros(X.shape[1], bool)
        chosen[np.asarray(manual.selected_features_, dtype=int)] = True
        if not np.array_equal(support & ~chosen, np.zeros_like(support)):
            raise Defect("SelectFromModel keeps a column the fit did not select")
    _pickle_same(pipe, X, "SelectFromModel")


def comp_transformed_target(name, params, est, X, y, task, sw, rng):
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.preprocessing import StandardScaler

    if not is_regressor(est) or task is not None:
        return SKIP
    if rng.rand() < 0.5:
        model = TransformedTargetRegressor(clone(est), transformer=StandardScaler())
        sc = StandardScaler().fit(y[:, None])
        fwd = lambda t: sc.transform(t[:, None]).ravel()  # noqa: E731
        inv = lambda t: sc.inverse_transform(t[:, None]).ravel()  # noqa: E731
    else:
        shift = -y.min() + 1.0
        model = TransformedTargetRegressor(clone(est), func=np.log, inverse_func=np.exp)
        y = y + shift
        fwd, inv = np.log, np.exp
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
        manual = clone(est).fit(X, fwd(y))
    _close(model.predict(X), inv(manual.predict(X)), "TransformedTargetRegressor vs by hand")
    _pickle_same(model, X, "TransformedTargetRegressor")


def comp_clone_fitted(name, params, est, X, y, task, sw, rng):
    kw = _pk(task)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = _fit(clone(est), X, y, task)
    c = clone(fitted)
    try:
        check_is_fitted(c)
        raise Defect("clone of a fitted estimator is fitted")
    except NotFittedError:
        pass
    try:
        c.predict(X, **kw)
        raise Defect("the unfitted clone predicts")
    except NotFittedError:
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _fit(c, X, y, task)
    _same_outputs(_outputs(c, X, **kw), _outputs(fitted, X, **kw), "a clone refitted")
    _pickle_same(fitted, X, "estimator", **kw)


def comp_set_params_after_fit(name, params, est, X, y, task, sw, rng):
    grid = _grid(name, params, est, rng)
    new = {k: v[rng.randint(len(v))] for k, v in grid.items()}
    kw = _pk(task)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = _fit(clone(est), X, y, task)
        fitted.set_params(**new)
        _fit(fitted, X, y, task)
        fresh = _fit(clone(est).set_params(**new), X, y, task)
    _same_outputs(_outputs(fitted, X, **kw), _outputs(fresh, X, **kw),
                  f"set_params({new}) after fit, refit, vs a fresh fit")


def comp_routing(name, params, est, X, y, task, sw, rng):
    from sklearn.model_selection import KFold, StratifiedKFold, cross_validate
    from sklearn.pipeline import make_pipeline

    w = sw if sw is not None else rng.choice([0.5, 1.0, 2.0], size=len(y))
    scaler = _scaler(rng)
    with sklearn.config_context(enable_metadata_routing=True):
        # (scikit-learn asks every consumer of sample_weight to say yes or no:
        # the scaler does not take the weights, the score does)
        model = clone(est).set_fit_request(sample_weight=True).set_score_request(
            sample_weight=True)
        if hasattr(scaler, "set_fit_request"):
            scaler.set_fit_request(sample_weight=False)
        pipe = make_pipeline(clone(scaler), model)
        kw = {"sample_weight": w}
        if task is not None:
            kw["task_index"] = task
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe.fit(X, y, **kw)
        Xs = clone(scaler).fit_transform(X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            manual = _fit(clone(est), Xs, y, task, sample_weight=w)
        _same_outputs(_outputs(pipe, X, **_pk(task)), _outputs(manual, Xs, **_pk(task)),
                      "routed sample_weight vs passed directly")
        if rng.rand() < 0.4:
            # a search with routed weights: its best model is the weighted fresh fit
            from sklearn.model_selection import GridSearchCV

            from kernlearn.estimators.mtmkl import MultitaskScorer

            grid = _grid(name, params, est, rng)
            scoring = None if task is None else MultitaskScorer(
                "accuracy" if is_classifier(est) else "r2")
            search = GridSearchCV(clone(model), grid, cv=KFold(3), scoring=scoring,
                                  n_jobs=int(rng.choice([1, 2])), error_score="raise")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                search.fit(X, y, sample_weight=w, **_pk(task))
                fresh = _fit(clone(est).set_params(**search.best_params_), X, y, task,
                             sample_weight=w)
            _same_outputs(_outputs(search.best_estimator_, X, **_pk(task)),
                          _outputs(fresh, X, **_pk(task)),
                          "a search with routed weights vs a weighted fresh fit")
        if task is None and rng.rand() < 0.5:
            cv = StratifiedKFold(3) if is_classifier(est) else KFold(3)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = cross_validate(make_pipeline(clone(scaler), clone(model)), X, y, cv=cv,
                                     params={"sample_weight": w}, return_estimator=True,
                                     error_score="raise")
            tr, te = next(iter(cv.split(X, y)))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sc = clone(scaler).fit(X[tr])
                m = clone(est).fit(sc.transform(X[tr]), y[tr], sample_weight=w[tr])
            _same_outputs(_outputs(res["estimator"][0], X[te]), _outputs(m, sc.transform(X[te])),
                          "cross_validate with routed weights vs by hand")


def comp_tags(name, params, est, X, y, task, sw, rng):
    clf = "Classifier" in name
    if is_classifier(est) != clf or is_regressor(est) == clf:
        raise Defect(f"is_classifier {is_classifier(est)}, is_regressor {is_regressor(est)}")
    tags = est.__sklearn_tags__()
    if tags.estimator_type != ("classifier" if clf else "regressor"):
        raise Defect(f"estimator_type tag {tags.estimator_type!r}")
    if clone(est).__sklearn_tags__() != tags:
        raise Defect("a clone's tags differ")


def comp_transform_pandas(name, params, est, X, y, task, sw, rng):
    """Our transformers with ``set_output(transform="pandas")``, alone and in a pipeline."""
    import pandas as pd
    from sklearn.pipeline import make_pipeline

    if not hasattr(est, "transform") or task is not None:
        return SKIP
    inp = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])]) if rng.rand() < 0.5 else X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = clone(est).set_output(transform="pandas").fit(inp, y)
        plain = clone(est).fit(inp, y)
    Z = model.transform(inp)
    if not isinstance(Z, pd.DataFrame):
        raise Defect(f"set_output(transform='pandas'): transform returned {type(Z).__name__}")
    if list(Z.columns) != list(model.get_feature_names_out()):
        raise Defect("transform's columns != get_feature_names_out()")
    if isinstance(inp, pd.DataFrame) and not Z.index.equals(inp.index):
        raise Defect("transform's index != the input frame's")
    _close(np.asarray(Z), np.asarray(plain.transform(inp)), "pandas transform vs NumPy transform")
    if Z.shape[1] == 0:
        return SKIP  # (nothing kept: scikit-learn's own models refuse a frame of no column)
    final = _linear_for(est)
    pipe = make_pipeline(clone(est), final).set_output(transform="pandas")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(inp, y)
    if list(pipe[-1].feature_names_in_) != list(pipe[0].get_feature_names_out()):
        raise Defect("the next step's feature_names_in_ != our get_feature_names_out()")
    _pickle_same(pipe, inp, "transform pipeline")


def comp_defaults_warnings(name, params, est, X, y, task, sw, rng):
    """At the defaults, in a pipeline: no warning from kernlearn's own code."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    cls = type(est)
    pipe = make_pipeline(StandardScaler(), cls())
    kw = _pk(task)
    ctx = sklearn.config_context(enable_metadata_routing=True) if task is not None \
        else contextlib.nullcontext()
    with ctx, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe.fit(X, y, **kw)
        pipe.predict(X, **kw)
    # kernlearn's warnings point (stacklevel) at their caller, which is
    # scikit-learn's code here: every warning counts but scikit-learn's own
    # deprecations of its API
    ours = [w for w in caught if not (issubclass(w.category, (FutureWarning, DeprecationWarning))
                                      and "sklearn" in (w.filename or ""))]
    if ours:
        w = ours[0]
        raise Defect(f"a warning at the defaults: {w.category.__name__}: {str(w.message)[:200]}")


COMPOSITIONS = {
    "pipeline": comp_pipeline,
    "column_transformer": comp_column_transformer,
    "search": comp_search,
    "cross_validate": comp_cross_validate,
    "cross_val_predict": comp_cross_val_predict,
    "calibrated": comp_calibrated,
    "one_vs": comp_one_vs,
    "multioutput": comp_multioutput,
    "bagging": comp_bagging,
    "stacking": comp_stacking,
    "voting": comp_voting,
    "select_from_model": comp_select_from_model,
    "transformed_target": comp_transformed_target,
    "clone_fitted": comp_clone_fitted,
    "set_params_after_fit": comp_set_params_after_fit,
    "routing": comp_routing,
    "tags": comp_tags,
    "transform_pandas": comp_transform_pandas,
    "defaults_warnings": comp_defaults_warnings,
    "hostile": comp_hostile,
    "inputs": comp_inputs,
}


def applies(comp, est, task):
    clf = is_classifier(est)
    name = type(est).__name__
    if task is not None and comp not in ("pipeline", "column_transformer", "clone_fitted", "search",
                                         "set_params_after_fit", "routing", "tags",
                                         "defaults_warnings", "hostile", "inputs"):
        return False
    if comp in ("calibrated", "one_vs") and not clf:
        return False
    if comp in ("multioutput", "transformed_target") and clf:
        return False
    if comp == "transform_pandas" and not hasattr(est, "transform"):
        return False
    if comp == "select_from_model" and not name.startswith("FGM"):
        return False
    return True


def run_case(name, comp, seed, converse=False):
    """One composition; returns (status, detail, params).

    A refusal is judged by the counterpart (``fuzz_counterparts``): expected,
    a listed limitation, or wrongful.  With ``converse``, an accepted
    composition runs with the counterpart too, and one it refuses is returned
    for review.
    """
    params, est, X, y, task, sw, rng = draw(name, seed)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            if COMPOSITIONS[comp](name, params, est, X, y, task, sw, rng) == SKIP:
                return SKIP, "", params
    except Defect as exc:
        return "defect", str(exc), params
    except CLEAR_ERRORS as exc:
        msg = str(exc)
        if "fits failed" in msg and "Traceback" in msg:
            # scikit-learn's summary of failed fits: judge the fits' own error
            msg = [line for line in msg.splitlines() if line.strip()][-1]
        if INTERNAL_WORDS.search(msg):
            return "bad-error", f"{type(exc).__name__}: {msg[:300]}", params
        return judge_refusal(name, comp, seed, f"{type(exc).__name__}: {msg[:200]}", params)
    except Exception as exc:  # noqa: BLE001 - any other type is the finding
        return "crash", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-4)}", params
    if converse or comp == "hostile":
        return judge_acceptance(name, comp, seed, params)
    return "ok", "", params


def _with_counterpart(name, comp, seed):
    """The composition of case ``seed`` (same data, same draws) with the counterpart."""
    params, est, X, y, task, sw, rng = draw(name, seed)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return run_counterpart(COMPOSITIONS[comp], name, params, X, y, task, sw, rng)


def judge_refusal(name, comp, seed, detail, params):
    """A refusal is expected when the counterpart refuses too or a limitation is listed."""
    reason = documented_limitation(name, detail)
    if reason is not None:
        return "refused-limitation", f"{detail} ({reason})", params
    status, other = _with_counterpart(name, comp, seed)
    if status == "refused":
        # (the counterpart's message, past its "Estimator: Error:" prefix)
        theirs = other.split(": ", 2)[-1]
        if not same_kind(detail.split(": ", 1)[-1], theirs):
            return ("refused-differently", f"{detail}; the counterpart refuses for another "
                    f"reason: {other}", params)
        return "refused-expected", f"{detail}; the counterpart too: {other}", params
    if status == "unjudged":
        return "unjudged", f"{detail}; the counterpart failed otherwise: {other}", params
    return "wrongful-refusal", f"{detail}; the counterpart ({other}) accepts it", params


def judge_acceptance(name, comp, seed, params):
    """An accepted composition the counterpart refuses: printed for review."""
    status, other = _with_counterpart(name, comp, seed)
    if status == "refused" and not accepted_rightly(name, other):
        return "accepted-counterpart-refuses", other, params
    return ("ok-both" if status == "accepted" else "ok"), "", params


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=5.0, help="wall-clock bound of the run")
    ap.add_argument("--cases", type=int, default=0, help="stop after this many (0: by time)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the case sequence")
    ap.add_argument("--first-case", type=int, default=0, help="index of the first case")
    ap.add_argument("--estimators", default=",".join(SPACES),
                    help="comma-separated estimator names (default: all)")
    ap.add_argument("--compositions", default=",".join(COMPOSITIONS),
                    help="comma-separated compositions (default: all)")
    ap.add_argument("--show-refused", action="store_true",
                    help="print the expected refusals too")
    ap.add_argument("--converse", type=float, default=0.0,
                    help="fraction of the accepted compositions run with the counterpart too")
    args = ap.parse_args(argv)
    names = [s.strip() for s in args.estimators.split(",") if s.strip()]
    comps = [s.strip() for s in args.compositions.split(",") if s.strip()]
    bad = [s for s in names if s not in SPACES] + [c for c in comps if c not in COMPOSITIONS]
    if bad:
        ap.error(f"unknown estimators or compositions {bad}")
    counts, t0, k, failed = {}, time.time(), args.first_case, 0
    while True:
        if args.cases and k - args.first_case >= args.cases:
            break
        if not args.cases and time.time() - t0 > 60 * args.minutes:
            break
        name = names[k % len(names)]
        case_seed = args.seed * 100003 + k * 7919 + sum(map(ord, name))
        r = np.random.RandomState(case_seed)
        est0 = getattr(kernlearn, name)()
        usable = [c for c in comps if applies(c, est0, 0 if name.startswith("Multitask") else None)]
        comp = usable[r.randint(len(usable))]
        converse = r.rand() < args.converse
        status, detail, params = run_case(name, comp, case_seed, converse=converse)
        counts.setdefault(comp, {}).setdefault(status, 0)
        counts[comp][status] += 1
        if status in FAILURES or (status.startswith("refused") and args.show_refused):
            failed += status in FAILURES
            shown = {k2: (type(v).__name__ if hasattr(v, "fit") else v) for k2, v in params.items()}
            print(f"[{status}] {name} {comp} case {k} (seed {case_seed}) {shown}\n    {detail}",
                  flush=True)
        k += 1
    total = {}
    for comp in sorted(counts):
        print(f"{comp}: {counts[comp]}")
        for s, v in counts[comp].items():
            total[s] = total.get(s, 0) + v
    print(f"{k - args.first_case} compositions, {total}, {time.time() - t0:.0f} s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
