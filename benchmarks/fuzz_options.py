"""Randomised combinations of the public estimators' documented options.

For each estimator, draws seeded random *valid* settings of the options its
docstring documents (every value of a categorical option, numbers across
their documented range including the edges, ``None`` / ``"auto"`` forms,
``warm_start`` refits, ``class_weight``, ``sample_weight``, ``verbose`` 0-2
with the output captured, a tiny ``time_budget``) on small ordinary random
data (dense or CSR where accepted; binary, multiclass or regression targets),
fits, and checks:

- the fit succeeds, or raises a ``ValueError`` / ``TypeError`` whose message
  names no private function or variable (a bare ``IndexError``,
  ``KeyError``, ``AttributeError``, ``ZeroDivisionError``, a NumPy, SciPy or
  numba error is a defect);
- predictions are finite, of the right shape and among ``classes_``;
  ``predict_proba`` rows sum to one; ``decision_function`` agrees with
  ``predict``;
- ``get_params`` / ``set_params`` / ``clone`` round trip; ``pickle`` and
  :func:`kernlearn.io.save_model` / :func:`~kernlearn.io.load_model` keep the
  predictions equal;
- a ``ConvergenceWarning`` says what to change; ``verbose=0`` prints nothing,
  ``verbose=2`` prints to standard output only;
- the attributes the docstring documents (those not said to be conditional)
  exist after ``fit``, and every public trailing-underscore attribute is
  documented.

Each failure is printed with the estimator, the seed of its case and the
settings, so that one case reruns alone (``--estimators X --first-case K
--cases 1``).  ``--edges`` runs the hand-picked settings of ``EDGES`` instead
(each option at its documented bounds, settings that leave nothing to run).
Exit status 1 when any case failed.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fuzz_options.py \
        --cases 200 --seed 0 --estimators FGMClassifier,PNormMKLClassifier
"""

import argparse
import contextlib
import io
import os
import pickle
import re
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

import kernlearn
from kernlearn.io import load_model, save_model

# Exceptions an option conflict may raise; anything else out of fit is a defect.
CLEAR_ERRORS = (ValueError, TypeError, NotImplementedError)
# A message naming a private function/variable (``_name``), or NumPy's own words.
INTERNAL_WORDS = re.compile(
    r"(?<![A-Za-z0-9])_[a-z][a-z0-9_]*|operands could not be broadcast|"
    r"index \d+ is out of bounds|object has no attribute|unsupported operand|"
    r"not subscriptable|referenced before assignment|numba|Traceback"
)
# A ConvergenceWarning says what to change: one of these words must appear.
REMEDY_WORDS = ("increase", "raise", "decrease", "lower", "set ", "pass ", "use ",
                "keep ", "fewer", "rescale", "scale the", "is the one reached",
                "the model is")


def _pick(rng, values):
    return values[rng.randint(len(values))]


def _maybe(rng, value, prob=0.5):
    return value if rng.rand() < prob else None


# ---------------------------------------------------------------------------
# Data


def make_data(rng, kind, sparse=False, n=None, n_tasks=0):
    """Random data: ``kind`` is "binary", "multiclass" or "regression"."""
    n = int(n or rng.randint(30, 301))
    d = int(rng.randint(2, 13))
    X = rng.randn(n, d)
    w = rng.randn(d)
    m = X @ w + 0.5 * np.sin(2 * X[:, 0]) + 0.3 * rng.randn(n)
    if kind == "regression":
        y = 3.0 * m + 5.0
    elif kind == "binary":
        y = np.where(m > np.median(m), "b", "a") if rng.rand() < 0.3 else (m > np.median(m)).astype(int)
    else:
        k = int(rng.randint(3, 5))
        y = np.digitize(m, np.quantile(m, np.linspace(0, 1, k + 1)[1:-1]))
    if sparse:
        X[rng.rand(n, d) < 0.6] = 0.0
        X = sp.csr_matrix(X)
    task = None
    if n_tasks:
        task = np.arange(n) % n_tasks
        rng.shuffle(task)
    return X, y, task


# ---------------------------------------------------------------------------
# Option spaces (read from each docstring's Parameters section)


def _class_weight(rng, y):
    r = rng.rand()
    if r < 0.6:
        return None
    if r < 0.8:
        return "balanced"
    labels = np.unique(y)
    return {lab: float(rng.choice([0.5, 1.0, 3.0])) for lab in labels}


def space_fgm(rng, classifier):
    p = {
        "B": int(_pick(rng, [1, 2, 5, 10, 30])),
        "max_iter": int(_pick(rng, [1, 2, 5, 15])),
        "tol": _pick(rng, [None, 1e-6, 1e-2, 0.5]),
        "max_features": _pick(rng, [None, None, 1, 3, 7]),
        "solver": _pick(rng, ["auto", "newton", "apg", "simplemkl"]),
        "inner_tol": _pick(rng, [None, 1e-10, 1e-4, 0.1]),
        "inner_max_iter": _pick(rng, [None, 1, 5, 200]),
        "standardize": bool(rng.rand() < 0.7),
        "fit_intercept": bool(rng.rand() < 0.8),
        "refit": bool(rng.rand() < 0.3),
        "chunk_size": _pick(rng, [None, None, 1, 3, 1000]),
        "verbose": int(rng.randint(0, 3)),
    }
    if classifier:
        p["C"] = float(_pick(rng, [1e-3, 0.1, 1.0, 10.0, 1e4]))
        p["loss"] = _pick(rng, ["squared_hinge", "logistic"])
        p["multiclass"] = _pick(rng, ["auto", "shared", "ovr"])
        p["n_jobs"] = _pick(rng, [None, 1, 2])
        p["probability"] = bool(rng.rand() < 0.3)
        if p["refit"]:
            p["refit_C"] = _pick(rng, [None, 0.1, 20.0])
        kind = _pick(rng, ["binary", "binary", "multiclass"])
    else:
        p["C"] = _pick(rng, ["auto", "auto", 1e-3, 1.0, 1e3])
        if p["refit"]:
            p["refit_C"] = _pick(rng, [None, 0.1, 20.0])
        kind = "regression"
    if rng.rand() < 0.1:
        # a deprecated alias instead of its new name (FutureWarning, same meaning)
        alias, new = _pick(rng, [("max_outer_iter", "max_iter"), ("master_tol", "inner_tol"),
                                 ("master_max_iter", "inner_max_iter"),
                                 ("feature_scaling", "standardize")])
        p[alias] = p.pop(new)
        if p[alias] is None:
            p[alias] = {"master_tol": 1e-4, "master_max_iter": 20}.get(alias, p[alias])
    if rng.rand() < 0.1:
        p["tree"] = True
    sparse = bool(rng.rand() < 0.3)
    if rng.rand() < 0.1:
        p["memory_budget"] = _pick(rng, ["1KB", "1MB", 4096])  # out of core in row chunks
    if rng.rand() < 0.2 and not sparse:
        fam = _pick(rng, ["poly", "additive"])
        from kernlearn.families import AdditiveKernelExpansion, PolynomialPool

        p["family"] = PolynomialPool() if fam == "poly" else AdditiveKernelExpansion()
        p["chunk_size"] = None
        p.pop("memory_budget", None)
    return p, {"kind": kind, "sparse": sparse, "groups": rng.rand() < 0.15}


def space_pnorm(rng):
    kernels = _pick(rng, [None, None, ["linear"], ["linear", ("rbf", {"gamma": "mean"})],
                          ["rbf", ("poly", {"degree": 2})], [("rbf", {"gamma": 0.5}, [0])],
                          "precomputed"])
    p = {
        "kernels": kernels,
        "p": float(_pick(rng, [1.01, 1.1, 1.5, 2.0])),
        "C": float(_pick(rng, [1e-3, 0.1, 1.0, 100.0])),
        "normalize": bool(rng.rand() < 0.7),
        "standardize": bool(rng.rand() < 0.7),
        "eta": float(_pick(rng, [1e-3, 1.0, 10.0])),
        "max_iter": int(_pick(rng, [0, 1, 3, 50, 1000])),
        "max_iter_online": int(_pick(rng, [0, 1, 2, 5])),
        "tol": _pick(rng, [None, 1e-3, 0.05, 0.5]),
        "online_only": bool(rng.rand() < 0.15),
        "pegasos": False,
        "fit_intercept": bool(rng.rand() < 0.3),
        "max_steps": _pick(rng, [None, None, 10, 500]),
        "cache_size": float(_pick(rng, [1024, 0.01, 1.0])),
        "random_state": int(rng.randint(100)),
        "verbose": int(rng.randint(0, 3)),
        "probability": bool(rng.rand() < 0.25),
    }
    if not p["online_only"] and rng.rand() < 0.2:
        p["pegasos"] = True
    if p["online_only"]:
        p.pop("max_iter")
        p.pop("tol")
    if p["pegasos"]:
        p.pop("eta")
        p.pop("max_iter_online")
    if kernels == "precomputed":
        p["fit_intercept"] = False  # documented: not with precomputed kernels
    kind = _pick(rng, ["binary", "binary", "multiclass"])
    return p, {"kind": kind, "sparse": bool(rng.rand() < 0.25)}


def space_infinite(rng, classifier):
    p = {
        "max_features": _pick(rng, [None, "auto", 1, 3, 10]),
        "n_candidates": int(_pick(rng, [1, 5, 100])),
        "lambda_p": _pick(rng, ["auto", 1e-3, 0.1, 1.0]),
        "lambda_s": _pick(rng, [None, None, 1e-3, 0.5]),
        "lambda_scale": _pick(rng, ["ours", "paper"]),
        "penalty": _pick(rng, ["group_l1_l2", "l1", "l1_linf", "l1_lq", "per_task_l1_lq"]),
        "solver": _pick(rng, ["auto", "admm", "fista", "newton"]),
        "inner_tol": float(_pick(rng, [1e-6, 1e-3, 0.1])),
        "inner_max_iter": int(_pick(rng, [1, 5, 500])),
        "fit_intercept": bool(rng.rand() < 0.8),
        "time_budget": _pick(rng, [None, None, None, 1e-6, 0.05]),
        "pricing_subsample": _pick(rng, ["auto", None, 10, 1000]),
        "path_iter": _pick(rng, ["auto", None, 1, 5]),
        "n_paths": _pick(rng, ["auto", 1, 2]),
        "standardize": bool(rng.rand() < 0.7),
        "random_state": int(rng.randint(100)),
        "verbose": int(rng.randint(0, 3)),
    }
    if rng.rand() < 0.2:
        p["warm_start"] = True
        p["n_paths"] = _pick(rng, ["auto", 1])
        if p["max_features"] is None:
            p["max_features"] = 3
    if classifier:
        p["loss"] = _pick(rng, ["squared_hinge", "logistic"])
        p["probability"] = bool(rng.rand() < 0.25)
        kind = _pick(rng, ["binary", "binary", "multiclass"])
    else:
        p["max_features"] = _pick(rng, ["auto", "auto", 1, 3, 10]) if p["max_features"] is None else p["max_features"]
        p["out_of_bounds"] = _pick(rng, ["auto", "clip", "extend"])
        kind = "regression"
    if rng.rand() < 0.1:
        # deprecated aliases: eps (then tol keeps its old meaning) or max_iter
        if rng.rand() < 0.5:
            p["eps"] = float(_pick(rng, [1e-3, 1e-2]))
        else:
            p["max_iter"] = p.pop("inner_max_iter")
    if rng.rand() < 0.15:
        from kernlearn.families import RandomFourierFeatures

        p["family"] = RandomFourierFeatures(bandwidth=_pick(rng, [1.0, [0.5, 2.0]]))
    return p, {"kind": kind, "sparse": bool(rng.rand() < 0.25),
               "n_tasks": int(_pick(rng, [0, 0, 0, 2])), "max_n": 200}


def space_lowrank(rng, classifier):
    kernel = _pick(rng, ["rbf", "rbf", "linear", "poly", "precomputed"]
                   + (["laplacian"] if "laplacian" in _kernel_names() else []))
    p = {
        "kernel": kernel,
        "gamma": _pick(rng, ["scale", "scale", 0.01, 1.0]),
        "n_columns": _pick(rng, [None, None, 1, 5, 1000]),
        "nu": _pick(rng, ["auto", "auto", 1e-5, 1.0, [0.1, 0.01], [0.5]]),
        "precompute": bool(rng.rand() < 0.7),
        "fit_intercept": bool(rng.rand() < 0.8),
        "tol": float(_pick(rng, [1e-8, 1e-4, 0.1])),
        "max_iter": int(_pick(rng, [1, 3, 100])),
        "rule": _pick(rng, ["newton", "exact"]),
        "random_state": int(rng.randint(100)),
        "verbose": int(rng.randint(0, 3)),
        "standardize": bool(rng.rand() < 0.7),
        "gamma_factors": _pick(rng, ["auto", "auto", (1.0,), (1.0, 0.3, 3.0)]),
    }
    if kernel == "poly":
        p["degree"] = _pick(rng, [None, 2, 3])
        p["coef0"] = _pick(rng, [None, 0.0, 1.0])
    if kernel == "rbf" and rng.rand() < 0.2:
        p["kernel_params"] = {"gamma": _pick(rng, ["scale", "mean", 0.3])}
        p["gamma"] = "scale"
    if classifier:
        p["multiclass"] = _pick(rng, ["shared", "ovr"])
        p["probability"] = bool(rng.rand() < 0.25)
        kind = _pick(rng, ["binary", "binary", "multiclass"])
    else:
        p["out_of_bounds"] = _pick(rng, ["auto", "clip", "extend"])
        kind = "regression"
    return p, {"kind": kind, "sparse": bool(rng.rand() < 0.25)}


def _kernel_names():
    from kernlearn.kernels import KERNELS

    return tuple(KERNELS)


def _mtmkl_common(rng):
    formulation = _pick(rng, ["mtfl", "mtsfl", "mkl", "independent"])
    p = {
        "kernels": _pick(rng, [None, None, ["linear"], ["linear", ("rbf", {"gamma": "mean"})],
                               [("rbf", {"gamma": 0.5}, [0]), ("rbf", {"gamma": 0.5}, [1])],
                               "precomputed"]),
        "formulation": formulation,
        "normalize": bool(rng.rand() < 0.7),
        "standardize": bool(rng.rand() < 0.7),
        "max_iter": int(_pick(rng, [1, 5, 100])),
        "tol": float(_pick(rng, [1e-6, 1e-3, 0.5])),
        "verbose": int(rng.randint(0, 3)),
    }
    if formulation == "mtfl":
        p["p"] = float(_pick(rng, [2.0, 3.0, 10.0]))
        p["inner_max_iter"] = int(_pick(rng, [1, 5, 20]))
    if formulation == "mtsfl":
        p["q"] = float(_pick(rng, [1.0, 1.5, 2.0]))
        p["max_rank"] = _pick(rng, [None, 2, 300])
    if formulation in ("mtfl", "mtsfl"):
        p["shared"] = bool(rng.rand() < 0.3)
    if "inner_max_iter" in p and rng.rand() < 0.15:
        p["max_inner"] = p.pop("inner_max_iter")  # deprecated alias
    return p


def space_mtmkl(rng, classifier, cv):
    p = _mtmkl_common(rng)
    if classifier:
        if cv:
            p["Cs"] = _pick(rng, [(0.1, 1.0, 10.0), (1.0,), [0.01, 100.0]])
            p["cv"] = _pick(rng, [None, 2, 3, 5])
        else:
            p["C"] = float(_pick(rng, [1e-3, 1.0, 10.0, 1e3]))
            p["probability"] = bool(rng.rand() < 0.25)
        kind = "binary"
    else:
        p["loss"] = _pick(rng, ["square", "square", "epsilon_insensitive"])
        if p["loss"] == "epsilon_insensitive":
            p["epsilon"] = float(_pick(rng, [0.0, 0.1, 1.0]))
        if cv:
            p["Cs"] = _pick(rng, [(0.01, 1.0, 100.0), (1.0,)])
            sel = _pick(rng, ["loo", "objective"])
            p["kernel_selection"] = sel
            if sel == "loo":
                p["formulation"] = "mtfl"
                p["loss"] = "square"
                for key in ("p", "inner_max_iter", "max_iter", "tol", "verbose", "q", "max_rank",
                            "epsilon"):
                    p.pop(key, None)
                p["shared"] = _pick(rng, ["auto", True, False])
                p["cv"] = _pick(rng, ["loo", "loo", 3])
            else:
                p["shared"] = _pick(rng, ["auto", False]) if p["formulation"] in ("mkl", "independent") \
                    else _pick(rng, ["auto", True, False])
                loo_ok = p["loss"] == "square" and p["formulation"] != "mtsfl" and p["shared"] in ("auto", False)
                p["cv"] = _pick(rng, ["loo", 2, 3] if loo_ok else [2, 3, None])
        else:
            if p["loss"] == "square" and p["formulation"] == "mtfl" and rng.rand() < 0.3:
                p["C"] = "auto"
                for key in ("p", "inner_max_iter", "max_iter", "tol", "verbose"):
                    p.pop(key, None)
            else:
                p["C"] = float(_pick(rng, [1e-3, 1.0, 1e3]))
        kind = "regression"
    return p, {"kind": kind, "sparse": False, "n_tasks": int(_pick(rng, [1, 2, 3])), "max_n": 150}


SPACES = {
    "FGMClassifier": lambda r: space_fgm(r, True),
    "FGMRegressor": lambda r: space_fgm(r, False),
    "PNormMKLClassifier": space_pnorm,
    "InfiniteFeatureClassifier": lambda r: space_infinite(r, True),
    "InfiniteFeatureRegressor": lambda r: space_infinite(r, False),
    "LowRankKernelClassifier": lambda r: space_lowrank(r, True),
    "LowRankKernelRegressor": lambda r: space_lowrank(r, False),
    "MultitaskMKLClassifier": lambda r: space_mtmkl(r, True, False),
    "MultitaskMKLRegressor": lambda r: space_mtmkl(r, False, False),
    "MultitaskMKLClassifierCV": lambda r: space_mtmkl(r, True, True),
    "MultitaskMKLRegressorCV": lambda r: space_mtmkl(r, False, True),
}


# ---------------------------------------------------------------------------
# Checks


def documented_attributes(cls):
    """(always, conditional) documented fitted attributes of ``cls``."""
    doc = cls.__doc__ or ""
    part = doc.split("Attributes\n    ----------", 1)
    if len(part) < 2:
        return set(), set()
    text = re.split(r"\n    [A-Z][a-z]+\n    -{4,}", part[1])[0]
    always, conditional = set(), set()
    for block in re.split(r"\n    (?=[A-Za-z])", "\n    " + text.strip()):
        head, _, body = block.partition("\n")
        names = [h.strip() for h in head.split(":")[0].split(",")]
        cond = bool(re.search(r"\bonly\b|\bWith\b|None|when|unless|absent|optional|Not defined", head + body))
        for name in names:
            if name.endswith("_"):
                # Column names exist only for input with string column names.
                cond_here = cond or name == "feature_names_in_"
                (conditional if cond_here else always).add(name)
    # Documented in the estimator's other docstrings (the CV classes refer to their base).
    return always, conditional


def _fit_args(est_name, X, y, task, sw):
    kw = {}
    if task is not None:
        kw["task_index"] = task
    if sw is not None:
        kw["sample_weight"] = sw
    return kw


def _pred_args(task):
    return {"task_index": task} if task is not None else {}


def draw_case(name, case_seed):
    """The random settings, data and unfitted estimator of one case.

    Returns ``(rng, params, data, est, X, y, task, fit_kw)``; ``rng`` is left
    where the draw stopped (the case's later draws continue from it).  Other
    hunts (``fuzz_files.py``) fit the same cases.
    """
    rng = np.random.RandomState(case_seed)
    params, data = SPACES[name](rng)
    cls = getattr(kernlearn, name)
    n = int(rng.randint(30, data.get("max_n", 300) + 1))
    n_tasks = data.get("n_tasks", 0)
    X, y, task = make_data(rng, data["kind"], data.get("sparse", False), n=n, n_tasks=n_tasks)
    if params.get("tree") and "family" not in params:
        # nested groups: all columns, then the halves, then single columns
        d = X.shape[1]
        half = max(1, d // 2)
        params["groups"] = [list(range(d)), list(range(half)), list(range(half, d)) or [0],
                            [0]]
        if half == 1 or d - half == 0:
            params["groups"] = [list(range(d)), [0]]
    elif data.get("groups") and "family" not in params:
        d = X.shape[1]
        params["groups"] = [list(range(0, d, 2)), list(range(1, d, 2))] if d > 1 else [[0]]
    elif params.get("tree"):
        params.pop("tree")
    if "class_weight" in cls().get_params() and rng.rand() < 0.5 and data["kind"] != "regression":
        params["class_weight"] = _class_weight(rng, y)
    sw = None
    if rng.rand() < 0.3:
        # a zero weight removes a row (documented for every estimator)
        sw = rng.choice([0.0, 0.5, 1.0, 2.0] if rng.rand() < 0.3 else [0.5, 1.0, 2.0],
                        size=len(y))
    if params.get("kernels") == "precomputed" or params.get("kernel") == "precomputed":
        # Gram matrices of the rows against themselves: fit and predict on the training rows
        from kernlearn.kernels import rbf_kernel

        Xd = X.toarray() if sp.issparse(X) else X
        Xd = (Xd - Xd.mean(0)) / (Xd.std(0) + 1e-12)
        grams = [Xd @ Xd.T, rbf_kernel(Xd, Xd, gamma=1.0 / Xd.shape[1])]
        X = grams if params.get("kernels") == "precomputed" else grams[1]
    est = cls(**params)
    return rng, params, data, est, X, y, task, _fit_args(name, X, y, task, sw)


def run_case(name, case_seed, tmpdir):
    """One random case; returns (status, detail, params)."""
    rng, params, data, est, X, y, task, fit_kw = draw_case(name, case_seed)
    cls = type(est)
    out, err = io.StringIO(), io.StringIO()
    t0 = time.process_time()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        warnings.simplefilter("always")
        try:
            est.fit(X, y, **fit_kw)
        except CLEAR_ERRORS as exc:
            msg = str(exc)
            if INTERNAL_WORDS.search(msg):
                return "bad-error", f"{type(exc).__name__}: {msg}", params
            return "refused", f"{type(exc).__name__}: {msg[:160]}", params
        except Exception as exc:  # noqa: BLE001 - any other type is the finding
            tb = traceback.format_exc(limit=-3)
            return "crash", f"{type(exc).__name__}: {exc}\n{tb}", params
    fit_time = time.process_time() - t0
    problems = []
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            text = str(w.message)
            if not any(word in text.lower() for word in REMEDY_WORDS):
                problems.append(f"ConvergenceWarning names nothing to change: {text[:200]}")
    # A path cut by time_budget says so (a ConvergenceWarning naming it) and is
    # not converged; a tiny budget stops the path with one of the documented reasons.
    if getattr(est, "stop_reason_", None) == "time_budget":
        if not any(issubclass(w.category, ConvergenceWarning) and "time_budget" in str(w.message)
                   for w in caught):
            problems.append("stopped on time_budget without a ConvergenceWarning naming it")
        if getattr(est, "converged_", False):
            problems.append("stopped on time_budget but converged_ is True")
    if params.get("time_budget") == 1e-6 and getattr(est, "stop_reason_", None) not in (
            "time_budget", "no_violation", "max_features", "validation"):
        problems.append(f"time_budget: stop_reason_={getattr(est, 'stop_reason_', None)!r}")
    # verbose=0 prints nothing; verbose=2 prints its lines to standard output.
    verbose = params.get("verbose", 0)
    if verbose == 0 and (out.getvalue() or err.getvalue()):
        problems.append(f"verbose=0 printed {(out.getvalue() + err.getvalue())[:120]!r}")
    # (formulation="independent" solves each task once: no iterations to print)
    if verbose == 2 and not out.getvalue() and params.get("formulation") != "independent":
        problems.append("verbose=2 printed nothing to standard output")
    if verbose == 2 and err.getvalue():
        problems.append(f"verbose=2 wrote to standard error: {err.getvalue()[:120]!r}")
    pk = _pred_args(task)
    try:
        pred = est.predict(X, **pk)
    except Exception as exc:  # noqa: BLE001
        return "crash", f"predict: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-3)}", params
    pred = np.asarray(pred)
    if pred.shape[0] != len(y):
        problems.append(f"predict shape {pred.shape}")
    if data["kind"] == "regression":
        if not np.all(np.isfinite(pred.astype(float))):
            problems.append("predict not finite")
    else:
        if not np.isin(pred, est.classes_).all():
            problems.append("predict outside classes_")
        if hasattr(est, "decision_function"):
            try:
                df = np.asarray(est.decision_function(X, **pk))
            except Exception as exc:  # noqa: BLE001
                problems.append(f"decision_function: {type(exc).__name__}: {exc}")
                df = None
            if df is not None:
                if not np.all(np.isfinite(df)):
                    problems.append("decision_function not finite")
                elif df.ndim == 1:
                    agree = est.classes_[(df > 0).astype(int)]
                    if not np.array_equal(agree[df != 0], pred[df != 0]):
                        problems.append("decision_function disagrees with predict (binary)")
                else:
                    agree = est.classes_[np.argmax(df, axis=1)]
                    if not np.array_equal(agree, pred):
                        problems.append("decision_function disagrees with predict (argmax)")
        has_proba = True
        try:
            proba = est.predict_proba(X, **pk)
        except (AttributeError, NotImplementedError):
            has_proba = False
        except Exception as exc:  # noqa: BLE001
            problems.append(f"predict_proba: {type(exc).__name__}: {exc}")
            has_proba = False
        if has_proba:
            proba = np.asarray(proba)
            if proba.shape != (len(y), len(est.classes_)):
                problems.append(f"predict_proba shape {proba.shape}")
            elif not np.allclose(proba.sum(1), 1.0) or not np.all(np.isfinite(proba)) or proba.min() < 0:
                problems.append("predict_proba rows not probabilities")
    # Parameters round trip.
    got = est.get_params(deep=False)
    for key, value in params.items():
        if got.get(key) is not value and not _same(got.get(key), value):
            problems.append(f"get_params[{key}] != given")
    cl = clone(est)
    if set(cl.get_params(deep=False)) != set(got):
        problems.append("clone changed the parameter names")
    cl.set_params(**{k: v for k, v in got.items()})
    # Pickle and model file.
    try:
        back = pickle.loads(pickle.dumps(est))
        if not _equal_pred(back.predict(X, **pk), pred):
            problems.append("pickle changes predictions")
    except Exception as exc:  # noqa: BLE001
        problems.append(f"pickle: {type(exc).__name__}: {exc}")
    path = os.path.join(tmpdir, f"{name}_{case_seed}.kl")
    try:
        save_model(est, path)
        loaded = load_model(path)
        if not _equal_pred(loaded.predict(X, **pk), pred):
            problems.append("model file changes predictions")
        if hasattr(est, "predict_proba") and data["kind"] != "regression":
            try:
                p1 = est.predict_proba(X, **pk)
            except (AttributeError, NotImplementedError):
                p1 = None
            if p1 is not None and not np.allclose(loaded.predict_proba(X, **pk), p1, rtol=1e-12, atol=0):
                problems.append("model file changes predict_proba")
    except Exception as exc:  # noqa: BLE001
        problems.append(f"model file: {type(exc).__name__}: {exc}")
    finally:
        if os.path.exists(path):
            os.remove(path)
    # Warm start: refit with a larger budget (or other settings) must work.
    if params.get("warm_start"):
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                warnings.simplefilter("ignore")
                new_lp = _pick(rng, [params.get("lambda_p"), 0.05])
                est.set_params(max_features=int(_pick(rng, [2, 5, 12])), lambda_p=new_lp)
                est.fit(X, y, **fit_kw)
                np.asarray(est.predict(X, **pk))
                # documented: a changed setting (lambda_p) starts over: the cold fit's model
                if new_lp != params.get("lambda_p") and params.get("time_budget") is None:
                    cold = clone(est).fit(X, y, **fit_kw)
                    a, b = _decisions(est, X, pk), _decisions(cold, X, pk)
                    if a.shape != b.shape or not np.allclose(a, b, rtol=1e-9, atol=1e-12):
                        problems.append("warm refit with a changed lambda_p differs from the cold fit")
        except CLEAR_ERRORS as exc:
            if INTERNAL_WORDS.search(str(exc)):
                problems.append(f"warm refit: {type(exc).__name__}: {exc}")
        except Exception as exc:  # noqa: BLE001
            problems.append(f"warm refit: {type(exc).__name__}: {exc}")
    # Documented attributes.
    always, conditional = documented_attributes(cls)
    for attr in sorted(always):
        if not hasattr(est, attr):
            problems.append(f"documented attribute {attr} missing")
    public = {a for a in dir(est) if a.endswith("_") and not a.startswith("_")
              and not a.endswith("__")}
    extra = public - always - conditional - _documented_elsewhere(cls)
    for attr in sorted(extra):
        try:
            getattr(est, attr)
        except Exception:  # noqa: BLE001
            continue
        problems.append(f"undocumented public attribute {attr}")
    if not problems and not params.get("warm_start") and params.get("time_budget") is None:
        problems += check_refit(name, rng, params, data, X, y, task, fit_kw, pk)
    if problems:
        return "defect", "; ".join(problems), params
    return "ok", f"{fit_time:.2f}s", params


def _decisions(est, X, pk):
    for method in ("decision_function", "predict"):
        if hasattr(est, method):
            return np.asarray(getattr(est, method)(X, **pk), dtype=float)


def _public_fitted(est):
    return {a for a in vars(est) if a.endswith("_") and not a.startswith("_")}


def check_refit(name, rng, params, data, X, y, task, fit_kw, pk):
    """Refit after ``set_params`` to other settings equals a fresh fit of them.

    Nothing of the first fit may leak into the second (a stale attribute, a
    cached state): the model and the set of fitted attributes must be a fresh
    estimator's.
    """
    for _ in range(30):
        other, odata = SPACES[name](rng)
        same_data = (odata["kind"] == data["kind"]
                     and bool(odata.get("sparse")) == bool(data.get("sparse"))
                     and odata.get("n_tasks", 0) == data.get("n_tasks", 0)
                     and ("precomputed" in (other.get("kernels"), other.get("kernel")))
                     == ("precomputed" in (params.get("kernels"), params.get("kernel"))))
        if same_data and not other.get("warm_start") and other.get("time_budget") is None:
            break
    else:
        return []
    other.pop("tree", None)
    if "groups" in params and "family" not in other:
        other["groups"], other["tree"] = params["groups"], params.get("tree", False)
    if "class_weight" in params:
        other["class_weight"] = params["class_weight"]
    other["verbose"] = 0
    cls = getattr(kernlearn, name)
    est = cls(**params)
    fresh = clone(cls(**other))
    sink = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(sink), \
                contextlib.redirect_stderr(sink):
            warnings.simplefilter("ignore")
            est.fit(X, y, **fit_kw)
            full = {k: v for k, v in cls().get_params(deep=False).items()}
            full.update(other)
            est.set_params(**full)
            est.fit(X, y, **fit_kw)
            fresh.fit(X, y, **fit_kw)
    except Exception as exc:  # noqa: BLE001 - the fresh fit's own refusal is not ours
        return [] if isinstance(exc, CLEAR_ERRORS) else [f"refit: {type(exc).__name__}: {exc}"]
    problems = []
    a, b = _decisions(est, X, pk), _decisions(fresh, X, pk)
    if a.shape != b.shape or not np.allclose(a, b, rtol=1e-9, atol=1e-12):
        shown = {k: (type(v).__name__ if hasattr(v, "fit") else v) for k, v in other.items()}
        problems.append(f"refit after set_params({shown}) differs from a fresh fit "
                        f"(max |diff| {np.max(np.abs(a - b)) if a.shape == b.shape else a.shape})")
    stale = _public_fitted(est) - _public_fitted(fresh)
    if stale:
        problems.append(f"refit keeps the first fit's attributes {sorted(stale)}")
    return problems


def _documented_elsewhere(cls):
    """Attributes documented in the docstrings of the class's bases (the CV classes)."""
    names = set()
    for base in cls.__mro__[1:]:
        if base.__module__.startswith("kernlearn") and base.__doc__:
            a, c = documented_attributes(base)
            names |= a | c
    doc = cls.__doc__ or ""
    names |= set(re.findall(r"``([a-z][a-z0-9_]*_)``", doc))
    return names


def _same(a, b):
    try:
        return bool(a == b) if not isinstance(a, np.ndarray) else np.array_equal(a, b)
    except Exception:  # noqa: BLE001
        return repr(a) == repr(b)


def _equal_pred(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "fc":
        return a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=1e-12)
    return np.array_equal(a, b)


# Hand-picked settings at the documented edges (``--edges``): each option at its
# bounds, and settings that leave a stage, a kernel or an iteration with nothing to run.
EDGES = {
    "FGMClassifier": [dict(tol=0.0), dict(B=100), dict(n_jobs=-1, multiclass="ovr"),
                      dict(memory_budget="1KB"), dict(tol=None, max_iter=1),
                      dict(refit=True, refit_C=None), dict(max_features=1, B=1)],
    "FGMRegressor": [dict(tol=0.0), dict(memory_budget="1MB"), dict(max_features=4),
                     dict(B=4, C="auto"), dict(refit=True, C=1e-3)],
    "PNormMKLClassifier": [dict(p=2.0), dict(p=1.0 + 1e-9), dict(max_iter=0),
                           dict(max_iter_online=0), dict(max_iter=0, max_iter_online=0),
                           dict(max_iter=0, pegasos=True), dict(tol=0.0, max_iter=5),
                           dict(max_steps=1), dict(cache_size=1e-6),
                           dict(online_only=True, max_iter=5), dict(pegasos=True, eta=2.0),
                           dict(fit_intercept=True, kernels=["linear"])],
    "InfiniteFeatureClassifier": [dict(tol=0.0, max_features=3), dict(pricing_subsample=1),
                                  dict(n_candidates=1), dict(path_iter=1, inner_max_iter=1),
                                  dict(penalty="l1_lq", solver="newton"),
                                  dict(lambda_s=1.0, penalty="per_task_l1_lq"),
                                  dict(time_budget=1e-9, max_features=5)],
    "InfiniteFeatureRegressor": [dict(max_features=1, n_paths=3), dict(out_of_bounds="raise"),
                                 dict(pricing_subsample=1), dict(lambda_p=1e9),
                                 dict(lambda_p=1e-9, max_features=3)],
    "LowRankKernelRegressor": [dict(nu=[1.0, 1.0]), dict(n_columns=1), dict(tol=0.0),
                               dict(kernel="poly", degree=1), dict(kernel_params={"gamma": "mean"}),
                               dict(kernel="linear", kernel_params={"gamma": 1.0}),
                               dict(precompute=False, n_columns=3), dict(nu=1e9), dict(nu=1e-12),
                               dict(n_columns=10000)],
    "LowRankKernelClassifier": [dict(nu=[0.1]), dict(multiclass="ovr", nu=[0.1, 0.01]),
                                # (n_columns=1: one RBF bump cannot split these rows;
                                # one class everywhere is that model's honest answer)
                                dict(n_columns=3), dict(kernel="rbf", kernel_params={"degree": 2})],
    "MultitaskMKLClassifier": [dict(p=2.0, formulation="mtsfl", q=1.0), dict(tol=0.0),
                               dict(max_rank=1, formulation="mtsfl"), dict(p=1e6),
                               dict(kernels=[("poly", {"degree": 3})], C=1e4, normalize=False,
                                    standardize=False, scale=100.0)],
    "MultitaskMKLRegressor": [dict(C="auto", shared=True), dict(C="auto", kernels=["rbf"]),
                              dict(loss="epsilon_insensitive", epsilon=0.0),
                              dict(loss="epsilon_insensitive", epsilon=100.0),
                              dict(max_rank=1, formulation="mtsfl"),
                              dict(formulation="mtsfl", shared=True, max_rank=None),
                              dict(C="auto", n_features=6, kernels=(
                                  [("rbf", {"gamma": g}) for g in (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)]
                                  + ["linear"] + [("rbf", {"gamma": 1.0}, [j]) for j in range(6)]
                                  + [("linear", {}, [j]) for j in range(6)]))],
    "MultitaskMKLClassifierCV": [dict(Cs=(1.0,)), dict(cv=2), dict(Cs=[1e-6, 1e6])],
    "MultitaskMKLRegressorCV": [dict(Cs=(1.0,)), dict(kernel_selection="objective", cv=2),
                                dict(kernel_selection="objective", formulation="mtsfl", cv=2)],
}


def run_edge(name, settings):
    """Fit one hand-picked setting on fixed data; returns (status, detail)."""
    settings = dict(settings)
    scale = settings.pop("scale", 1.0)  # (input units: a badly scaled kernel)
    d = settings.pop("n_features", 4)
    rng = np.random.RandomState(0)
    X = scale * rng.randn(80, d)
    m = X[:, 0] / scale + 0.3 * rng.randn(80)
    regression = "Regressor" in name
    y = m + np.sin(2 * X[:, 1] / scale) if regression else (m > np.median(m)).astype(int)
    kw = {"task_index": np.arange(80) % 3 if regression else np.arange(80) % 2} \
        if name.startswith("Multitask") else {}
    est = getattr(kernlearn, name)(**settings)
    with warnings.catch_warnings(record=True) as caught, \
            contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("always")
        try:
            est.fit(X, y, **kw)
            pred = np.asarray(est.predict(X, **kw))
        except CLEAR_ERRORS as exc:
            kind = "bad-error" if INTERNAL_WORDS.search(str(exc)) else "refused"
            return kind, f"{type(exc).__name__}: {str(exc)[:200]}"
        except Exception as exc:  # noqa: BLE001 - any other type is the finding
            return "crash", f"{type(exc).__name__}: {exc}"
    problems = [f"ConvergenceWarning names nothing to change: {str(w.message)[:200]}"
                for w in caught if issubclass(w.category, ConvergenceWarning)
                and not any(word in str(w.message).lower() for word in REMEDY_WORDS)]
    if not np.all(np.isfinite(pred.astype(float))):
        problems.append("predict not finite")
    if not regression and len(np.unique(pred)) == 1 and not any(
            issubclass(w.category, (ConvergenceWarning, UserWarning)) for w in caught):
        # balanced classes one column apart: one class for every row is a model
        # that learned nothing, and a silent one
        problems.append("one class predicted for every training row, without a warning")
    return ("defect", "; ".join(problems)) if problems else ("ok", "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=50, help="cases per estimator")
    ap.add_argument("--seed", type=int, default=0, help="seed of the case sequence")
    ap.add_argument("--first-case", type=int, default=0, help="index of the first case")
    ap.add_argument("--estimators", default=",".join(SPACES),
                    help="comma-separated estimator names (default: all)")
    ap.add_argument("--show-refused", action="store_true", help="print refused settings too")
    ap.add_argument("--edges", action="store_true",
                    help="run the hand-picked edge settings (EDGES) instead of random cases")
    args = ap.parse_args(argv)
    names = [s.strip() for s in args.estimators.split(",") if s.strip()]
    unknown = [s for s in names if s not in SPACES]
    if unknown:
        ap.error(f"unknown estimators {unknown}; choose from {sorted(SPACES)}")
    failed = 0
    if args.edges:
        for name in names:
            for settings in EDGES.get(name, []):
                status, detail = run_edge(name, settings)
                failed += status in ("crash", "bad-error", "defect")
                if status != "ok" and (status != "refused" or args.show_refused):
                    print(f"[{status}] {name} {settings}\n    {detail}", flush=True)
            print(f"{name}: {len(EDGES.get(name, []))} edge settings", flush=True)
        return 1 if failed else 0
    with tempfile.TemporaryDirectory() as tmpdir:
        for name in names:
            counts = {}
            t0 = time.process_time()
            for k in range(args.first_case, args.first_case + args.cases):
                case_seed = args.seed * 100003 + k * 7919 + sum(map(ord, name))
                status, detail, params = run_case(name, case_seed, tmpdir)
                counts[status] = counts.get(status, 0) + 1
                if status in ("crash", "bad-error", "defect") or (
                        status == "refused" and args.show_refused):
                    failed += status != "refused"
                    shown = {k2: (type(v).__name__ if hasattr(v, "fit") else v)
                             for k2, v in params.items()}
                    print(f"[{status}] {name} case {k} (seed {case_seed}) {shown}\n    {detail}",
                          flush=True)
            print(f"{name}: {args.cases} cases, {counts}, {time.process_time() - t0:.1f} s CPU",
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
