"""Randomised fits on a Dask cluster against the same fits in memory.

One ``distributed.LocalCluster`` (two one-thread workers in this process), then
seeded random cases.  Each case draws

- an estimator that fits on the cluster: ``FGMClassifier``, ``FGMRegressor``,
  ``InfiniteFeatureClassifier``, ``InfiniteFeatureRegressor``;
- data: dense float64 or float32, CSR-backed chunks, columns at large
  offsets, constant and duplicated columns, heavy-tailed columns;
- a partitioning: even or uneven chunks, chunks of one row, empty
  partitions, many partitions, a Dask DataFrame (its partitions' sizes
  unknown to Dask until the fit computes them);
- sample weights: none, some zero (the removed rows sometimes far away: a
  value or target near 1e300), a whole partition of zero weight (GrFL refuses
  weights on Dask input: such cases check the refusal);
- classes: 2 to 6, integer or string labels, sorted so that a class is absent
  from some partitions; regression targets at an offset;
- ``y`` in memory or, for FGM, a Dask array (or Series) that stays on the cluster;
- an option the distributed path accepts (``groups``, ``class_weight``,
  ``multiclass="ovr"``, ``loss="logistic"``) or one it refuses by name
  (``family=``, ``probability=True`` with another loss).

and checks

- the model equals the in-memory fit on the concatenated rows (the docs:
  "Models equal the in-memory ones (up to rounding in the sums)"): the same
  classes and selected features, coefficients to ``1e-6`` relative to their
  largest, predictions on the training rows equal where the decision values
  are not near a tie;
- ``predict`` on the Dask array (lazy) equals ``predict`` in memory of the same
  model;
- the Dask-fitted model pickles and saves to a model file, and both copies
  predict the same;
- the fit on the cluster warns of nothing the in-memory fit does not, and
  never with a bare ``RuntimeWarning`` (NumPy's words from a worker);
- a refused option raises ``ValueError`` naming the parameter;
- after the fit no future of the fit is left on the client, no thread is
  left running, no temporary file is left, and the cluster still computes.

Every 15th case one partition fails when computed (an ``OSError`` in the
task): the fit must raise an error naming the problem, and leave nothing.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fuzz_dask.py --minutes 10 --seed 0

Exit status 1 when any case failed; the summary counts outcomes by class.
"""

import argparse
import collections
import gc
import glob
import os
import pickle
import sys
import tempfile
import threading
import time
import traceback
import warnings

import numpy as np
import scipy.sparse as sp

os.environ.setdefault("OMP_NUM_THREADS", "1")

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import distributed  # noqa: E402
import pandas as pd  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from kernlearn import (FGMClassifier, FGMRegressor, InfiniteFeatureClassifier,  # noqa: E402
                       InfiniteFeatureRegressor)
from kernlearn.io import load_model, save_model  # noqa: E402

ESTIMATORS = ("fgm_clf", "fgm_reg", "grfl_clf", "grfl_reg")


def draw_data(rng, n, d):
    """(X dense float64, kind notes): columns with the drawn pathologies."""
    X = rng.standard_normal((n, d))
    notes = []
    if rng.random() < 0.3:
        X[:, rng.integers(d)] = 3.5  # a constant column
        notes.append("const")
    if rng.random() < 0.3 and d > 2:
        X[:, 1] = X[:, 0]  # a duplicated column
        notes.append("dup")
    if rng.random() < 0.3:
        X[:, -1] = rng.standard_t(1.5, n)  # heavy tails
        notes.append("tails")
    if rng.random() < 0.3:
        X = X + rng.choice([1e3, -1e4, 1e6], size=d)  # offsets
        notes.append("offset")
    return X, notes


def draw_chunks(rng, n):
    """Row chunk sizes summing to ``n`` and the partitioning's name."""
    kind = rng.choice(["even", "uneven", "ones", "empty", "many", "frame"])
    if kind == "even":
        size = int(rng.integers(n // 4, n + 1))
        sizes = [size] * (n // size) + ([n % size] if n % size else [])
    elif kind == "ones":  # chunks of one row at the start, the rest in one
        k = int(rng.integers(1, 6))
        sizes = [1] * k + [n - k]
    elif kind == "many":
        sizes = [n // 30] * 30
        sizes[-1] += n - sum(sizes)
    else:  # uneven, or uneven with empty partitions
        cuts = np.sort(rng.choice(np.arange(1, n), size=int(rng.integers(1, 6)), replace=False))
        sizes = list(np.diff(np.r_[0, cuts, n]))
        if kind == "empty":
            for _ in range(int(rng.integers(1, 3))):
                sizes.insert(int(rng.integers(0, len(sizes) + 1)), 0)
    return [int(s) for s in sizes], str(kind)


def draw_case(seed):
    rng = np.random.default_rng(seed)
    est = str(rng.choice(ESTIMATORS))
    clf = est.endswith("clf")
    n = int(rng.integers(120, 320))
    d = int(rng.integers(3, 12))
    X, notes = draw_data(rng, n, d)
    dtype = str(rng.choice(["float64", "float32", "csr"], p=[0.5, 0.25, 0.25]))
    sizes, part = draw_chunks(rng, n)
    signal = X[:, 0] - 0.5 * X[:, 1 % d] + 0.3 * rng.standard_normal(n)
    signal = (signal - np.mean(signal)) / (np.std(signal) + 1e-300)
    if clf:
        k = int(rng.integers(2, 7))
        y = np.digitize(signal, np.quantile(signal, np.linspace(0, 1, k + 1)[1:-1]))
        if rng.random() < 0.4:
            y = np.array(["cls_" + "abcdef"[c] for c in y])
            notes.append("strings")
        if rng.random() < 0.4:  # sorted by class: a class absent from some partitions
            order = np.argsort(y, kind="stable")
            X, y = X[order], y[order]
            notes.append("sorted")
    else:
        y = 2.0 * signal + rng.choice([0.0, 50.0, 1e5])
    sw = None
    wkind = str(rng.choice(["none", "some_zero", "zero_part", "positive"]))
    if est.startswith("grfl") and rng.random() < 0.7:
        wkind = "none"  # (GrFL refuses weights on Dask input: drawn less often)
    if wkind != "none":
        sw = rng.uniform(0.5, 2.0, n)
        if wkind == "some_zero":
            sw[rng.random(n) < 0.2] = 0.0
        elif wkind == "zero_part":
            bounds = np.cumsum([0] + sizes)
            nz = [i for i, s in enumerate(sizes) if s > 0 and s < n // 2]
            if nz:
                i = nz[int(rng.integers(len(nz)))]
                sw[bounds[i]:bounds[i + 1]] = 0.0
    if wkind == "some_zero" and rng.random() < 0.4:
        # removed rows far away: an in-memory fit never reads them
        far = np.flatnonzero(sw == 0)
        if clf:
            X[far, 0] = 1e300
        else:
            y[far] = rng.choice([1e300, -1e300], size=far.size)
        notes.append("far_removed")
    dask_y = est.startswith("fgm") and rng.random() < 0.4
    if dask_y:
        notes.append("dask_y")
    option = str(rng.choice(["none", "none", "accepted", "refused"]))
    return dict(seed=seed, est=est, n=n, d=d, dtype=dtype, part=part, sizes=sizes,
                notes=notes, weights=wkind, option=option, X=X, y=y, sw=sw, rng=rng)


def make_estimator(case):
    est, rng, opt = case["est"], case["rng"], case["option"]
    kw = {}
    refused = None
    if est.startswith("fgm"):
        kw = dict(B=int(rng.integers(1, 4)), max_iter=int(rng.integers(2, 5)))
        if est == "fgm_reg":
            kw["C"] = 1.0
        if opt == "accepted":
            choice = rng.choice(["groups", "class_weight", "ovr", "logistic"]
                                if est == "fgm_clf" else ["groups", "no_scaling"])
            if choice == "groups":
                kw["groups"] = [list(range(i, min(i + 2, case["d"])))
                                for i in range(0, case["d"], 2)]
            elif choice == "class_weight":
                kw["class_weight"] = "balanced"
            elif choice == "ovr":
                kw["multiclass"] = "ovr"
            elif choice == "logistic":
                kw["loss"] = "logistic"
            else:
                kw["feature_scaling"] = False
            case["notes"].append(str(choice))
        elif opt == "refused":
            from kernlearn.families import PolynomialPool
            if est == "fgm_clf" and rng.random() < 0.5:
                kw["probability"], refused = True, "probability"
            else:
                kw["family"], refused = PolynomialPool(), "family"
        cls = FGMClassifier if est == "fgm_clf" else FGMRegressor
    else:
        kw = dict(max_features=int(rng.integers(2, 7)), n_candidates=10,
                  inner_max_iter=int(rng.integers(2, 6)), random_state=int(rng.integers(100)))
        cls = InfiniteFeatureClassifier if est == "grfl_clf" else InfiniteFeatureRegressor
        if opt == "refused":
            case["option"] = "none"  # (GrFL's distributed path refuses nothing drawn here)
    return (lambda: cls(**kw)), kw, refused


def to_dask_y(case, Xd):
    """``y`` as the drawn container: NumPy, or Dask with ``X``'s row chunks."""
    y = case["y"]
    if "dask_y" not in case["notes"]:
        return y
    if case["part"] == "frame":
        return dd.from_pandas(pd.Series(y), npartitions=Xd.npartitions, sort=False)
    return da.from_array(y, chunks=(Xd.chunks[0],))


def to_dask(case):
    X, sizes = case["X"], case["sizes"]
    if case["dtype"] == "float32":
        X = X.astype(np.float32)
    if case["part"] == "frame":
        frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
        nparts = int(case["rng"].integers(2, 6))
        return X, dd.from_pandas(frame, npartitions=nparts)
    if case["dtype"] == "csr":
        Xs = sp.csr_matrix(X)
        return Xs, da.from_array(Xs, chunks=(tuple(sizes), X.shape[1]), asarray=False)
    return X, da.from_array(X, chunks=(tuple(sizes), X.shape[1]))


def _model_close(a, b, case, Xp, Xq):
    """Problems (strings) where the Dask-fitted ``b`` differs from ``a``.

    With duplicated columns (equal once standardised) the two fits may pick
    either of a pair: their decision values are compared instead.
    """
    out = []
    if hasattr(a, "classes_") and not np.array_equal(a.classes_, b.classes_):
        return [f"classes_ {a.classes_} != {b.classes_}"]
    # CSR columns at offsets over 1e6 spreads: the fit warns that sparse input
    # cannot centre them exactly; the partitioned sums round otherwise
    rtol = 1e-3 if case["dtype"] == "csr" and "offset" in case["notes"] else 1e-6
    if "dup" in case["notes"]:
        # (on the rows of positive weight: removed rows far away tell apart
        # the duplicated columns, which the fit never saw)
        f = "decision_function" if hasattr(a, "decision_function") else "predict"
        kept = slice(None) if case["sw"] is None else case["sw"] > 0
        va, vb = np.asarray(getattr(a, f)(Xp))[kept], np.asarray(getattr(b, f)(Xq))[kept]
        scale = max(np.max(np.abs(va)), 1.0)
        if np.max(np.abs(va - vb)) > rtol * scale:  # (as the coefficients below)
            out.append(f"{f} differ by {np.max(np.abs(va - vb)):.3g} (scale {scale:.3g})")
        return out
    if case["est"].startswith("fgm"):
        if not np.array_equal(np.sort(a.selected_features_), np.sort(b.selected_features_)):
            return [f"selected {a.selected_features_} != {b.selected_features_}"]
        ca, cb = np.asarray(a.coef_), np.asarray(b.coef_)
    else:
        if len(a.features_) != len(b.features_):
            return [f"{len(a.features_)} features != {len(b.features_)}"]
        ca, cb = np.asarray(a.column_coef_), np.asarray(b.column_coef_)
    scale = max(np.max(np.abs(ca)) if ca.size else 0.0, 1e-12)
    if ca.shape != cb.shape or np.max(np.abs(ca - cb), initial=0.0) > rtol * scale:
        out.append(f"coef differ by {np.max(np.abs(ca - cb)) if ca.shape == cb.shape else np.inf:.3g} "
                   f"(scale {scale:.3g})")
    return out


def _preds_close(pa, pb, da_, rtol=1e-6):
    """Predictions equal (labels: except near ties of the decision values)."""
    pa, pb = np.asarray(pa), np.asarray(pb)
    if pa.dtype.kind in "fc":
        tol = rtol * max(1.0, np.max(np.abs(pa)))
        return np.max(np.abs(pa - pb), initial=0.0) <= tol
    diff = pa != pb
    if not diff.any():
        return True
    if da_ is None:
        return False
    dec = np.asarray(da_)
    if dec.ndim == 1:  # binary: a tie is a decision value near 0
        return bool(np.all(np.abs(dec[diff]) < rtol * max(1.0, np.max(np.abs(dec)))))
    top = np.sort(dec[diff], axis=1)
    return bool(np.all(top[:, -1] - top[:, -2] < rtol * max(1.0, np.max(np.abs(dec)))))


def hygiene(client, before_threads, before_tmp):
    """Problems with what a fit left behind."""
    out = []
    gc.collect()
    end = time.monotonic() + 5
    while client.futures and time.monotonic() < end:
        time.sleep(0.05)
        gc.collect()
    if client.futures:
        out.append(f"{len(client.futures)} futures left on the client")
    time.sleep(0.05)
    extra = {t.name for t in threading.enumerate()} - before_threads
    # (Dask's own pools: its local scheduler's threads live as long as the process)
    extra = {t for t in extra if not t.startswith(("Dask-", "ThreadPoolExecutor", "asyncio"))
             and "Dask-Default-Threads" not in t}
    if extra:
        out.append(f"threads left: {sorted(extra)}")
    tmp = set(glob.glob(os.path.join(tempfile.gettempdir(), "*"))) - before_tmp
    if tmp:
        out.append(f"temporary files left: {sorted(tmp)[:3]}")
    if client.submit(sum, [1, 2], pure=False).result(timeout=30) != 3:
        out.append("cluster no longer computes")
    return out


def _bare_runtime(ws):
    return [f"{w.category.__name__}: {w.message} ({os.path.basename(w.filename)}:{w.lineno})"
            for w in ws if w.category is RuntimeWarning]


def run_case(case, client, tmpdir):
    """(outcome class, problems list)."""
    make, kw, refused = make_estimator(case)
    Xmem, Xd = to_dask(case)
    y, sw = case["y"], case["sw"]
    yd = to_dask_y(case, Xd)
    before_threads = {t.name for t in threading.enumerate()}
    before_tmp = set(glob.glob(os.path.join(tempfile.gettempdir(), "*")))
    problems = []
    fit_kw = {} if sw is None else {"sample_weight": sw}
    if sw is not None and case["est"].startswith("grfl"):
        refused = "sample_weight"  # (documented: GrFL on Dask input takes no weights)
    if refused is not None:
        try:
            make().fit(Xd, yd, **fit_kw)
        except ValueError as exc:
            if refused not in str(exc):
                return "refusal_unnamed", [f"ValueError not naming {refused}: {exc}"]
            return "refused", hygiene(client, before_threads, before_tmp)
        except Exception as exc:  # noqa: BLE001
            return "refusal_wrong_type", [f"{type(exc).__name__}: {exc}"]
        return "refusal_missing", [f"{refused} accepted on Dask input"]
    with threadpool_limits(1):
        with warnings.catch_warnings(record=True) as wm:
            warnings.simplefilter("always")
            try:
                ref = make().fit(Xmem, y, **fit_kw)
                mem_error = None
            except ValueError as exc:
                ref, mem_error = None, exc
        with warnings.catch_warnings(record=True) as wd:
            warnings.simplefilter("always")
            try:
                dist = make().fit(Xd, yd, **fit_kw)
            except ValueError as exc:
                if mem_error is not None:
                    return "both_refused", hygiene(client, before_threads, before_tmp)
                return "dask_error", [f"{type(exc).__name__}: {exc}"] + hygiene(
                    client, before_threads, before_tmp)
            except Exception as exc:  # noqa: BLE001
                return "dask_crash", ["".join(traceback.format_exception(exc)[-3:])]
    if mem_error is not None:
        return "memory_only_error", [f"in memory: {mem_error}"]
    bare = _bare_runtime(wd)
    if bare:
        problems.append(f"bare RuntimeWarning on the cluster: {bare[:2]}")
    cats_m = collections.Counter(w.category.__name__ for w in wm)
    cats_d = collections.Counter(w.category.__name__ for w in wd)
    extra = {c for c in cats_d if c not in cats_m and c != "UserWarning"}
    said_m = {str(w.message)[:40] for w in wm if w.category is UserWarning}
    said_d = {str(w.message)[:40] for w in wd if w.category is UserWarning
              and "C=1.0" not in str(w.message)}  # (the documented C="auto" note)
    if said_m - said_d:
        problems.append(f"in-memory UserWarning missing on the cluster: {sorted(said_m - said_d)}")
    if extra:
        problems.append(f"warnings only on the cluster: {extra} "
                        f"{[str(w.message)[:120] for w in wd if w.category.__name__ in extra][:2]}")
    # predictions: in-memory model vs Dask model, both in memory
    Xp = Xmem.toarray() if sp.issparse(Xmem) else np.asarray(Xmem)
    Xq = pd.DataFrame(Xp, columns=Xd.columns) if case["part"] == "frame" else Xmem
    problems += _model_close(ref, dist, case, Xp, Xq)
    dec = getattr(ref, "decision_function", None)
    dec_a = dec(Xp) if dec is not None else None
    kept = slice(None) if sw is None or "dup" not in case["notes"] else sw > 0
    rtol = 1e-3 if case["dtype"] == "csr" and "offset" in case["notes"] else 1e-6
    if not _preds_close(ref.predict(Xp)[kept], dist.predict(Xq)[kept],
                        None if dec_a is None else dec_a[kept], rtol):
        problems.append("predictions of the two models differ beyond ties")
    # the Dask-fitted model predicting on Dask vs in memory
    lazy = dist.predict(Xd)
    if not hasattr(lazy, "compute"):
        problems.append(f"predict on Dask gave {type(lazy).__name__}, not lazy")
    else:
        got = lazy.compute()
        want = dist.predict(pd.DataFrame(Xp, columns=Xd.columns) if case["part"] == "frame"
                            else Xmem)
        if not np.array_equal(np.asarray(got), np.asarray(want)):
            if not _preds_close(want, got, None):
                problems.append("predict on Dask != predict in memory")
    # pickle and a model file
    base = dist.predict(Xq)
    again = pickle.loads(pickle.dumps(dist))
    if not np.array_equal(np.asarray(again.predict(Xq)), np.asarray(base)):
        problems.append("pickled model predicts otherwise")
    path = os.path.join(tmpdir, f"m{case['seed']}.kl")
    try:
        save_model(dist, path)
        loaded = load_model(path)
        if not np.array_equal(np.asarray(loaded.predict(Xq)), np.asarray(base)):
            problems.append("model file predicts otherwise")
    except Exception as exc:  # noqa: BLE001
        problems.append(f"model file: {type(exc).__name__}: {exc}")
    finally:
        if os.path.exists(path):
            os.remove(path)
    del dist, ref, lazy
    problems += hygiene(client, before_threads, before_tmp)
    return ("fail" if problems else "equal"), problems


def _broken_part(i):
    raise OSError(f"cannot read part {i}: disk gone")


def run_worker_error(seed, client):
    """A partition whose task raises: the fit names it, leaves nothing, cluster fine."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((200, 5))
    y = (X[:, 0] > 0).astype(int)
    parts = [da.from_array(X[:100], chunks=50),
             da.from_delayed(dask.delayed(_broken_part)(1), shape=(100, 5), dtype=float)]
    Xd = da.concatenate(parts)
    est = [FGMClassifier(B=2, max_iter=2),
           InfiniteFeatureClassifier(max_features=2, n_candidates=5)][seed % 2]
    before_threads = {t.name for t in threading.enumerate()}
    before_tmp = set(glob.glob(os.path.join(tempfile.gettempdir(), "*")))
    try:
        est.fit(Xd, y)
    except OSError as exc:
        problems = [] if "disk gone" in str(exc) else [f"OSError without the cause: {exc}"]
    except Exception as exc:  # noqa: BLE001
        problems = [f"{type(exc).__name__} instead of the worker's OSError: {exc}"]
    else:
        problems = ["fit on a failing partition succeeded"]
    del est
    problems += hygiene(client, before_threads, before_tmp)
    return ("worker_error_named" if not problems else "fail"), problems


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, default=5.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cases", type=int, default=None, help="stop after this many cases")
    args = p.parse_args(argv)
    outcomes = collections.Counter()
    by_class = collections.Counter()
    failures = []
    end = time.monotonic() + 60 * args.minutes
    # a temporary directory of this run's own: a file left in it is this process's
    tempfile.tempdir = tempfile.mkdtemp(prefix="fuzz_dask_")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client, \
            tempfile.TemporaryDirectory() as tmpdir:
        client.wait_for_workers(2, timeout=30)
        seed = args.seed * 100000
        count = 0
        while time.monotonic() < end and (args.cases is None or count < args.cases):
            count += 1
            if count % 15 == 0:
                outcome, problems = run_worker_error(seed, client)
                label = "worker_error"
            else:
                case = draw_case(seed)
                label = (f"{case['est']}/{case['dtype']}/{case['part']}/w={case['weights']}"
                         f"/opt={case['option']}")
                try:
                    outcome, problems = run_case(case, client, tmpdir)
                except Exception:  # noqa: BLE001
                    outcome, problems = "harness_crash", [traceback.format_exc()[-800:]]
            outcomes[outcome] += 1
            by_class[(label.split("/")[0], outcome)] += 1
            if problems:
                failures.append((seed, label, problems))
                print(f"[seed {seed}] {label} {outcome}: " + " | ".join(
                    str(x)[:400] for x in problems), flush=True)
            seed += 1
    print(f"\n{count} cases drawn")
    for k, v in sorted(outcomes.items()):
        print(f"  {k}: {v}")
    for (e, o), v in sorted(by_class.items()):
        print(f"    {e:10s} {o:20s} {v}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
