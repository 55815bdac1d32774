"""Randomised invariants of every public estimator at its defaults (audit 76).

Each case draws a small hostile-but-valid data set (mixed column kinds in one
matrix: constant, binary, integer codes, huge offsets, tiny spreads, heavy
tails, duplicated and collinear columns, repeated rows, float32, sparse CSR
with empty rows and columns; labels of 2-12 classes as strings, booleans or
negative integers with very unequal class sizes; regression targets with
large offsets and tiny spreads, multi-output where supported), fits the
estimator at its defaults and checks what the documentation promises:

- the fit succeeds or raises an error whose message names the problem (an
  exception from NumPy, SciPy or numba, or one without a message, is logged);
- predictions are finite, of the right shape and in ``classes_``;
  ``predict_proba`` rows sum to one; ``predict`` is the arg max of
  ``decision_function`` (and of ``predict_proba`` without Platt scaling);
- the same predictions on ``a * X + b`` (dense, ``a > 0`` per column) and on
  ``a * X`` (sparse);
- weights of ones are no weights, a zero weight removes its row, integer
  weights are repeated rows (where the guide says so: FGM at a numeric ``C``);
- a CSR matrix gives the model of the same numbers dense (the kernel and
  feature methods);
- the same fit twice, a row alone and in a batch, ``pickle`` and
  :func:`kernlearn.io.save_model` / :func:`~kernlearn.io.load_model` give the
  same predictions;
- no NumPy ``RuntimeWarning`` reaches the user, and a ``ConvergenceWarning``
  names its solver.

Each case checks the base fit's invariants plus two of the costlier ones
(affine, weights, repeated fit), chosen by the case's seed, so a run of a few
hundred cases covers all of them.  Failures are printed with the case's seed
(``--seed S --cases 1`` replays it) and the run ends with a table of cases
and failures per estimator::

    OMP_NUM_THREADS=1 python benchmarks/fuzz_invariants.py --cases 300 --seed 0 \\
        --estimators FGMClassifier,LowRankKernelRegressor
"""

import argparse
import collections
import os
import pickle
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np
import scipy.sparse as sp

import kernlearn
from kernlearn.io import load_model, save_model

MULTIOUTPUT = {"LowRankKernelRegressor", "InfiniteFeatureRegressor"}
# one model from the same numbers sparse or dense (README; FGM scales sparse
# columns by their largest value, by design, and the multitask ones take dense only)
SPARSE_AS_DENSE = {"PNormMKLClassifier", "InfiniteFeatureClassifier",
                   "InfiniteFeatureRegressor", "LowRankKernelClassifier",
                   "LowRankKernelRegressor"}
# integer weights equal repeated rows to round-off (doc/weights-and-probabilities.md)
REPEATS_EXACT = {"FGMClassifier"}
# modules whose exceptions are a bare library error, not one a user can act on
BARE_MODULES = ("numpy", "scipy", "numba", "builtins")
ACTIONABLE = (ValueError, TypeError)


# ---------------------------------------------------------------- generators
def _column(rng, n, kind):
    if kind == "constant":
        return np.full(n, rng.normal() * 10)
    if kind == "binary":
        return (rng.random(n) < rng.uniform(0.05, 0.95)).astype(float)
    if kind == "codes":
        return rng.integers(-3, 7, n).astype(float)
    if kind == "offset":
        return 1e8 + rng.normal(size=n)
    if kind == "tiny":
        return 3.0 + 1e-9 * rng.normal(size=n)
    if kind == "cauchy":
        return rng.standard_cauchy(n)
    if kind == "lognormal":
        return rng.lognormal(0, 2.5, n)
    return rng.normal(size=n)


KINDS = ["normal", "normal", "constant", "binary", "codes", "offset", "tiny",
         "cauchy", "lognormal"]


def make_X(rng, n, d):
    """A dense matrix of mixed column kinds, with duplicated/collinear columns."""
    cols = [_column(rng, n, KINDS[rng.integers(len(KINDS))]) for _ in range(d)]
    X = np.column_stack(cols)
    if d >= 3 and rng.random() < 0.4:  # a duplicated and a collinear column
        i, j, k = rng.choice(d, 3, replace=False)
        X[:, j] = X[:, i]
        X[:, k] = 2.0 * X[:, i] - 1.0
    if n >= 6 and rng.random() < 0.3:  # many repeated rows
        src = rng.integers(0, max(2, n // 3), n)
        X = X[src]
    return X


def make_labels(rng, n, n_classes):
    """Labels of ``n_classes`` classes, very unequal sizes, 2-3 rows at least each."""
    p = rng.dirichlet(np.full(n_classes, 0.4))
    codes = np.concatenate([np.repeat(np.arange(n_classes), 2),
                            rng.choice(n_classes, n - 2 * n_classes, p=p)])
    rng.shuffle(codes)
    kind = rng.integers(4)
    if kind == 0:
        names = np.array([f"c{c}" for c in rng.permutation(n_classes)])
    elif kind == 1 and n_classes == 2:
        names = np.array([True, False])
    elif kind == 2:
        names = -rng.choice(50, n_classes, replace=False) - 1
    else:
        names = np.arange(n_classes) * 3
    return names[codes]


def make_target(rng, X, multi):
    Z = np.nan_to_num(X[:, : min(3, X.shape[1])].astype(float))
    Z = (Z - Z.mean(0)) / np.where(Z.std(0) > 0, Z.std(0), 1)
    t = Z.sum(1) + 0.3 * rng.normal(size=len(X))
    kind = rng.integers(3)
    y = t if kind == 0 else (1e6 + t if kind == 1 else 5.0 + 1e-6 * t)
    if multi:
        y = np.column_stack([y, 1e3 * rng.normal(size=len(X))])
    return y


def make_case(name, seed):
    """The case ``seed`` for estimator ``name``: (X, y, fit kwargs, description)."""
    rng = np.random.default_rng(seed)
    clf = "Classifier" in name
    n_classes = int(rng.choice([2, 2, 3, 4, 6, 12])) if clf else 0
    if clf and "Multitask" in name:
        n_classes = 2  # one binary problem per task
    n = int(rng.integers(max(3 * max(n_classes, 2), 6), 300))
    if rng.random() < 0.3:
        n = min(n, 3 * max(n_classes, 2) + 6)
    d = int(rng.integers(1, 41))
    X = make_X(rng, n, d)
    y = make_labels(rng, n, n_classes) if clf else \
        make_target(rng, X, name in MULTIOUTPUT and rng.random() < 0.3)
    kw = {}
    if "Multitask" in name:
        n_tasks = int(rng.integers(2, 4))
        kw["task_index"] = rng.integers(0, n_tasks, n)
        kw["task_index"][:n_tasks] = np.arange(n_tasks)
        if clf:  # every task holds two rows of each class (the CV folds need them)
            classes = np.unique(y)
            for t in range(n_tasks):
                rows = np.flatnonzero(kw["task_index"] == t)
                for r, c in zip(rows[:4], np.repeat(classes, 2)):
                    if np.sum((kw["task_index"] == t) & (y == c)) < 2:
                        y[r] = c
    # (the multitask estimators take dense inputs only, and say so)
    form = rng.choice(["dense", "dense", "float32"] + ([] if "Multitask" in name else ["csr"]))
    if form == "float32":
        X = X.astype(np.float32)
    elif form == "csr":
        X = np.where(rng.random(X.shape) < 0.7, 0.0, np.abs(X) + 0.1)
        X[: max(1, n // 10)] = 0.0  # empty rows
        X[:, : max(1, d // 5)] = 0.0  # empty columns
        X = sp.csr_matrix(X)
    desc = f"n={n} d={d} {form}" + (f" classes={n_classes}" if clf else "")
    return X, y, kw, desc, rng


# ---------------------------------------------------------------- checks
WARNINGS = collections.Counter()  # (estimator, category, message) -> cases


class Failure(Exception):
    pass


def _outputs(m, X, kw):
    """Predictions and (where defined) decision values and probabilities."""
    tkw = {"task_index": kw["task_index"]} if "task_index" in kw else {}
    out = {"predict": m.predict(X, **tkw)}
    if hasattr(m, "decision_function"):
        out["decision"] = m.decision_function(X, **tkw)
    if hasattr(m, "predict_proba"):
        try:
            out["proba"] = m.predict_proba(X, **tkw)
        except (AttributeError, ValueError) as e:  # e.g. the hinge loss without probability
            out["proba_error"] = str(e)
    return out


def _values(out):
    return out.get("decision", out["predict"])


def _close(a, b, rtol, what):
    a, b = np.asarray(a, float), np.asarray(b, float)
    scale = max(np.abs(b).max(initial=0.0), 1e-12)
    if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=rtol * scale):
        gap = np.abs(a - b).max() / scale if a.shape == b.shape else "shape"
        raise Failure(f"{what}: differ (max gap / scale {gap})")


def _same_labels(a, b, what, allow=0):
    bad = int(np.sum(np.asarray(a) != np.asarray(b)))
    if bad > allow:
        raise Failure(f"{what}: {bad} of {len(a)} labels differ")


def check_outputs(name, m, X, y, kw, out):
    n = X.shape[0]
    p = out["predict"]
    if "Classifier" in name:
        if p.shape != (n,):
            raise Failure(f"predict shape {p.shape}")
        if not np.isin(p, m.classes_).all():
            raise Failure("predict gives a label outside classes_")
        if not np.array_equal(np.sort(np.unique(np.asarray(y))), np.asarray(m.classes_)):
            raise Failure(f"classes_ {m.classes_!r} not the sorted labels")
        dec = out.get("decision")
        if dec is not None:
            if not np.isfinite(dec).all():
                raise Failure("decision_function not finite")
            k = len(m.classes_)
            if k == 2:
                if dec.shape != (n,):
                    raise Failure(f"binary decision shape {dec.shape}")
                arg = m.classes_[(dec > 0).astype(int)]
            else:
                if dec.shape != (n, k):
                    raise Failure(f"decision shape {dec.shape}")
                arg = m.classes_[dec.argmax(1)]
            _same_labels(p, arg, "predict vs decision_function")
        proba = out.get("proba")
        if proba is not None:
            if proba.shape != (n, len(m.classes_)) or not np.isfinite(proba).all():
                raise Failure(f"predict_proba shape {proba.shape} or not finite")
            if (proba < 0).any() or not np.allclose(proba.sum(1), 1.0, atol=1e-9):
                raise Failure("predict_proba rows not in [0,1] or not summing to 1")
            if not getattr(m, "probability", False):
                # without Platt folds the probabilities are a monotone map of the
                # decision values; ties in probability (saturation) are allowed
                arg = m.classes_[proba.argmax(1)]
                top = proba.max(1)
                sel = np.array([proba[i, m.classes_ == p[i]][0] for i in range(n)])
                if (sel < top - 1e-12).any():
                    _same_labels(p, arg, "predict vs predict_proba argmax")
    else:
        shape = np.shape(y)[1:]
        if p.shape != (n, *shape):
            raise Failure(f"predict shape {p.shape}, y shape {np.shape(y)}")
        if not np.isfinite(p).all():
            raise Failure("predict not finite")


# messages NumPy and SciPy give from inside a library's call (raised at its line)
RAW_PHRASES = ("operands could not be broadcast", "out-of-bounds", "out of bounds",
               "zero-size array", "could not convert", "core dimension", "not aligned",
               "singular matrix", "must be 2-dimensional", "truth value of an array")


def _is_bare(exc):
    mod = type(exc).__module__.split(".")[0]
    if not str(exc).strip() or any(p in str(exc) for p in RAW_PHRASES):
        return True
    if isinstance(exc, ACTIONABLE) and mod in ("builtins", "kernlearn", "sklearn"):
        # a plain ValueError is fine only when the message comes from our code
        # or scikit-learn's validation (not from inside NumPy/SciPy)
        tb = traceback.extract_tb(exc.__traceback__)
        last = tb[-1].filename if tb else ""
        return not ("kernlearn" in last or "sklearn" in last)
    return mod in BARE_MODULES or mod not in ("kernlearn", "sklearn")


def _fit(Est, X, y, kw, **params):
    # the defaults, with a fixed seed where the estimator draws random numbers
    if "random_state" in Est().get_params():
        params.setdefault("random_state", 0)
    return Est(**params).fit(X, y, **kw)


def _predict_pack(m, X, kw):
    return _values(_outputs(m, X, kw))


def _take(X, rows):
    return X[rows]


def run_case(name, seed):
    """Run one case; return (status, messages)."""
    Est = getattr(kernlearn, name)
    X, y, kw, desc, rng = make_case(name, seed)
    notes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            m = _fit(Est, X, y, kw)
        except Exception as e:  # noqa: BLE001 - the fuzzer classifies every error
            msg = f"{type(e).__module__}.{type(e).__name__}: {str(e)[:300]}"
            if _is_bare(e):
                tb = "".join(traceback.format_exception(e)[-4:])
                return "fail", [f"{desc}: bare error on fit: {msg}\n{tb}"]
            return "refused", [f"{desc}: {msg}"]
        out = _outputs(m, X, kw)
    for w in caught:  # (every warning of the base fit, tallied for --show-warnings)
        WARNINGS[(name, w.category.__name__, str(w.message)[:160])] += 1
        if issubclass(w.category, RuntimeWarning) and "numpy" in (w.filename or "") or (
                w.category is RuntimeWarning and "kernlearn" not in str(w.message)):
            notes.append(f"RuntimeWarning at {w.filename}:{w.lineno}: {w.message}")
        if w.category.__name__ == "ConvergenceWarning" and len(str(w.message)) < 30:
            notes.append(f"terse ConvergenceWarning: {w.message}")
    try:
        check_outputs(name, m, X, y, kw, out)
        ref = _values(out)
        # a row alone and in a batch
        i = int(rng.integers(X.shape[0]))
        one = {k: (v[i:i + 1] if k == "task_index" else v) for k, v in kw.items()}
        _close(_predict_pack(m, _take(X, slice(i, i + 1)), one), np.asarray(ref)[i:i + 1],
               1e-9, "a row alone vs in the batch")
        # pickle and the model file
        _close(_predict_pack(pickle.loads(pickle.dumps(m)), X, kw), ref, 0, "pickle")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.kl")
            save_model(m, path)
            _close(_predict_pack(load_model(path), X, kw), ref, 0, "save_model/load_model")
        extra = list(rng.choice(["affine", "ones", "zero", "repeat", "refit"], 2, replace=False))
        if sp.issparse(X) and name in SPARSE_AS_DENSE:
            extra.append("dense")
        n = X.shape[0]
        for what in extra:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if what == "dense":
                    Xd = X.toarray()
                    _close(_predict_pack(_fit(Est, Xd, y, kw), Xd, kw), ref, 1e-6,
                           "the same numbers dense")
                elif what == "refit":
                    _close(_predict_pack(_fit(Est, X, y, kw), X, kw), ref, 0, "the same fit twice")
                elif what == "affine":
                    a = 10.0 ** rng.uniform(-3, 3, X.shape[1])
                    if sp.issparse(X):
                        Xa = sp.csr_matrix(X.multiply(a[None, :]))
                    else:
                        b = rng.uniform(-1e3, 1e3, X.shape[1])
                        Xa = (a * X.astype(float) + b).astype(X.dtype)
                    if X.dtype == np.float32 or _has_wild_columns(X):
                        continue  # rounding of the mapped inputs is not round-off there
                    m2 = _fit(Est, Xa, y, kw)
                    o2 = _outputs(m2, Xa, kw)
                    if "Classifier" in name:
                        _same_labels(o2["predict"], out["predict"], "affine map", allow=max(1, n // 50))
                    _close(_values(o2), ref, 1e-4, "affine map")
                elif what == "ones":
                    m2 = _fit(Est, X, y, {**kw, "sample_weight": np.ones(n)})
                    _close(_predict_pack(m2, X, kw), ref, 1e-9, "weights of ones vs none")
                elif what == "zero":
                    drop = rng.random(n) < 0.15
                    keep = ~drop
                    if not _valid_subset(name, y, kw, keep):
                        continue
                    w = keep.astype(float)
                    sub = {k: v[keep] for k, v in kw.items()}
                    try:  # (a clear refusal, e.g. a class left alone in a task, is fine)
                        m2 = _fit(Est, X, y, {**kw, "sample_weight": w})
                        m3 = _fit(Est, _take(X, keep), np.asarray(y)[keep], sub)
                    except ValueError:
                        continue
                    if "Classifier" in name and len(m3.classes_) != len(m2.classes_):
                        continue
                    _close(_predict_pack(m2, X, kw), _predict_pack(m3, X, kw), 1e-6,
                           "zero weights vs rows dropped")
                elif what == "repeat" and name in REPEATS_EXACT:
                    w = rng.integers(0, 4, n)
                    if not _valid_subset(name, y, kw, w > 0):
                        continue
                    m2 = _fit(Est, X, y, {**kw, "sample_weight": w})
                    rows = np.repeat(np.arange(n), w)
                    sub = {k: v[rows] for k, v in kw.items()}
                    m3 = _fit(Est, _take(X, rows), np.asarray(y)[rows], sub)
                    _close(_predict_pack(m2, X, kw), _predict_pack(m3, X, kw), 1e-5,
                           "integer weights vs repeated rows")
    except Failure as f:
        return "fail", [f"{desc}: {f}"] + notes
    except Exception as e:  # noqa: BLE001
        tb = "".join(traceback.format_exception(e)[-4:])
        return "fail", [f"{desc}: error after the fit: {type(e).__name__}: {e}\n{tb}"] + notes
    return ("warn" if notes else "ok"), [f"{desc}: {x}" for x in notes]


def _has_wild_columns(X):
    """Columns where ``a * x + b`` loses digits (huge offsets, tiny spreads, heavy tails)."""
    if sp.issparse(X):
        return False
    Xf = X.astype(float)
    spread = Xf.std(0)
    mag = np.abs(Xf).max(0)
    return bool(((spread > 0) & (spread < 1e-6 * np.maximum(mag, 1))).any()
                or (mag > 1e6).any())


def _valid_subset(name, y, kw, keep):
    if "Classifier" not in name:  # (the multitask ones need two rows per task)
        tasks = kw.get("task_index", np.zeros(len(keep), int))
        return keep.sum() >= 4 and all(
            np.sum(keep & (tasks == t)) >= 2 for t in np.unique(tasks))
    y = np.asarray(y)
    if len(np.unique(y[keep])) != len(np.unique(y)):
        return False
    if "task_index" in kw:
        t = kw["task_index"]
        for task in np.unique(t):
            if len(np.unique(y[keep & (t == task)])) < 2:
                return False
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=50, help="cases per estimator")
    ap.add_argument("--seed", type=int, default=0, help="first case seed")
    ap.add_argument("--show-refused", action="store_true",
                    help="print the errors of refused fits too")
    ap.add_argument("--show-warnings", action="store_true",
                    help="list the distinct warnings of the base fits at the end")
    ap.add_argument("--estimators", default=",".join(kernlearn._ESTIMATORS),
                    help="comma-separated estimator names (default: all)")
    args = ap.parse_args(argv)
    names = [s.strip() for s in args.estimators.split(",") if s.strip()]
    unknown = [s for s in names if s not in kernlearn._ESTIMATORS]
    if unknown:
        ap.error(f"unknown estimators {unknown}; choose from {sorted(kernlearn._ESTIMATORS)}")
    table = collections.OrderedDict()
    for name in names:
        counts = collections.Counter()
        t0 = time.process_time()
        for seed in range(args.seed, args.seed + args.cases):
            status, msgs = run_case(name, seed)
            counts[status] += 1
            if status in ("fail", "warn") or (args.show_refused and status == "refused"):
                for msg in msgs:
                    print(f"[{name} seed={seed}] {status}: {msg}", flush=True)
        table[name] = (counts, time.process_time() - t0)
    if args.show_warnings:
        for (name, cat, msg), k in sorted(WARNINGS.items()):
            print(f"[{name}] {k} x {cat}: {msg}")
    print("\n| estimator | cases | ok | refused | warned | failed | CPU s |")
    print("|---|---|---|---|---|---|---|")
    for name, (c, cpu) in table.items():
        print(f"| {name} | {sum(c.values())} | {c['ok']} | {c['refused']} | {c['warn']} "
              f"| {c['fail']} | {cpu:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
