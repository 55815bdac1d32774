"""Shared checks of ``fuzz_ecosystem.py`` and its compositions of input.

``comp_hostile`` feeds input scikit-learn's own models refuse (a one-class
fit or fold, a wrong shape, a NaN or inf, no rows); ``comp_inputs`` input
they accept (float32, CSR, lists, a pandas Series, string or float labels).
Both are judged against the counterpart (``fuzz_counterparts.py``) both
ways: a refusal it does not share is wrongful, an acceptance of what it
refuses is flagged for review.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone, is_classifier

RTOL = 1e-8


class Defect(Exception):
    """A broken invariant (the message says which)."""


def _close(a, b, what, rtol=RTOL):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise Defect(f"{what}: shapes {a.shape} != {b.shape}")
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        a, b = a.astype(float), b.astype(float)
        if not np.allclose(a, b, rtol=rtol, atol=1e-10 * max(1.0, np.abs(b).max(initial=0))):
            raise Defect(f"{what}: max |diff| {np.max(np.abs(a - b)):.3g}")
    elif not np.array_equal(a, b):
        raise Defect(f"{what}: {int(np.sum(a != b))} of {a.size} differ")


def _unavailable(exc, method):
    """True when ``exc`` says ``method`` is not there (a meta-estimator's member
    lacks it); any other AttributeError out of a prediction is a defect."""
    return isinstance(exc, AttributeError) and repr(method) in str(exc)



def _fit(est, X, y, task=None, **kw):
    if task is not None:
        kw["task_index"] = task
    return est.fit(X, y, **kw)


def _pk(task):
    return {} if task is None else {"task_index": task}



def comp_hostile(name, params, est, X, y, task, sw, rng):
    """Input scikit-learn's own models refuse (a one-class fit or fold, a wrong
    shape, a NaN, no rows): judged against the counterpart both ways, so a
    composition we accept and it refuses is flagged (nothing meaningless fitted)."""
    from sklearn.model_selection import KFold, cross_validate

    clf = is_classifier(est)
    kinds = ["n_features", "y_length", "nan", "inf", "no_rows", "y_column"]
    if clf:
        kinds += ["one_class", "one_class_fold"]
    kind = kinds[rng.randint(len(kinds))]
    m = clone(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "n_features":
            _fit(m, X, y, task)
            m.predict(X[:, :-1], **_pk(task))
        elif kind == "y_length":
            _fit(m, X, y[:-1], task)
        elif kind in ("nan", "inf"):
            Xb = X.copy()
            Xb[rng.randint(len(y)), rng.randint(X.shape[1])] = np.nan if kind == "nan" else np.inf
            _fit(m, Xb, y, task)
        elif kind == "no_rows":
            _fit(m, X[:0], y[:0], None if task is None else task[:0])
        elif kind == "y_column":
            # a column vector of targets: the model of y.ravel() (its predictions
            # a column too on a multi-output regressor, as Ridge's)
            _fit(m, X, y[:, None], task)
            flat = _fit(clone(est), X, y, task)
            _close(np.ravel(m.predict(X, **_pk(task))), flat.predict(X, **_pk(task)),
                   "a column y vs the same y flat")
        elif kind == "one_class":
            _fit(m, X, np.full(len(y), y[0]), task)
        else:
            # rows sorted by label, unshuffled folds: the first fold trains on
            # the other labels only, one class when there are two
            order = np.argsort(y, kind="stable")
            yb = y[order]
            keep = yb != yb[-1] if len(np.unique(y)) > 2 else np.ones(len(y), bool)
            cross_validate(m, X[order][keep], yb[keep], cv=KFold(2), error_score="raise")


def comp_inputs(name, params, est, X, y, task, sw, rng):
    """Input scikit-learn's models accept: fitted, its predictions of the rows'
    shape and labels (values compared where the input holds the same numbers)."""
    import pandas as pd

    kinds = ["float32", "csr", "lists", "series", "fortran"]
    if is_classifier(est):
        kinds += ["string_labels", "float_labels"]
    kind = kinds[rng.randint(len(kinds))]
    Xi, yi, same = X, y, True  # (same: the same numbers as X and y)
    if kind == "float32":
        Xi, same = X.astype(np.float32), False
    elif kind == "csr":
        Xi, same = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X)), False
    elif kind == "lists":
        Xi, yi = X.tolist(), y.tolist()
    elif kind == "series":
        yi = pd.Series(y, name="target")
    elif kind == "fortran":
        Xi = np.asfortranarray(X)
    elif kind == "string_labels":
        yi, same = np.array([f"class {v}" for v in y], dtype=object), False
    else:
        yi, same = np.unique(y, return_inverse=True)[1].astype(float), False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = _fit(clone(est), Xi, yi, task)
        ref = _fit(clone(est), X, y, task) if same else None
    pred = np.asarray(m.predict(Xi, **_pk(task)))
    if pred.shape[0] != len(y):
        raise Defect(f"{kind} input: predict's {pred.shape[0]} rows != {len(y)}")
    if is_classifier(est) and not np.isin(pred, np.unique(np.asarray(yi))).all():
        raise Defect(f"{kind} input: predicts labels outside y's")
    if same:
        _close(pred, ref.predict(X, **_pk(task)), f"{kind} input vs the plain arrays")
