"""Breadth benchmark: every estimator at defaults against its one-line baseline.

Every kernlearn estimator is fitted with no argument (apart from a fixed
``random_state`` where it has one, and ``--param`` overrides) on the RAW values
of every set of ``<data folder>/suite/`` (``<name>.csv.xz``, target last,
column ``target``; see that folder's ``MANIFEST.md``) and of a few named sets,
next to the scikit-learn estimator a user would type instead, which gets the
``StandardScaler`` a user would give it:

===============================  ==============================================
ours (defaults)                  baseline (after ``StandardScaler()``)
===============================  ==============================================
``FGMClassifier()``              ``LinearSVC()``
``FGMRegressor()``               ``LassoCV()``
``PNormMKLClassifier()``         ``SVC()``
``InfiniteFeatureClassifier()``  ``Nystroem(n_components=200) + LinearSVC()``
``InfiniteFeatureRegressor()``   ``Nystroem(n_components=200) + RidgeCV()``
``LowRankKernelClassifier()``    ``Nystroem(n_components=100) + RidgeClassifierCV()``
``LowRankKernelRegressor()``     ``Nystroem(n_components=100) + RidgeCV()``
===============================  ==============================================

(The multitask estimators need task ids: ``multitask_breadth.py`` runs them.)

Protocol: one seeded 70/30 split per set (stratified for classification); at
most ``--max-rows`` training rows (then ``3/7`` of that many test rows), drawn
in the same seeded split.  Every estimator or baseline step with a
``random_state`` gets the seed.  Metrics: test accuracy, with the gap
ours - baseline in points (classification); test MSE, with the ratio
ours / baseline (regression).  A pair is *within* at a gap of at least -1 point
or a ratio of at most 1.05, *bad* below -3 points or above 1.15.  Fit times
of both sides are taken in the same process after one tiny warm-up fit of each
(so compiled code is loaded); the time ratio is ours / baseline on the process
CPU clock (``--clock wall`` for wall time; both are stored), since on a shared
machine wall time also counts other people's work.  An exception (or a fit
longer than ``--timeout`` seconds) becomes an error row and counts as neither
within nor a time; it never stops the run.

Cost: at the default cap of 20,000 training rows (which cuts only keggdirected,
protein, a9a and ijcnn1) a run takes minutes of CPU; each pass's entry in
BENCHMARKS.md's "Breadth: every estimator at defaults on 60 real sets" gives
its CPU and wall time.  Most of it is kernel SVMs (ours and ``SVC``) on the
largest sets, quadratic in the rows.

Output: a markdown table (one row per set x estimator) and one summary line per
estimator, printed and written with ``--md``; every number in ``--out`` (JSON).

Cold start (issue 24): with ``--cold-start RUNS`` (default 3; 0 turns it off)
the run ends with ``fgm_cold_start.py``'s new-process measurement of every
estimator run: numba's cache filled once by the precompile step in a
temporary folder, then ``RUNS`` new Python processes per estimator, each
timing its first fit on 100 x 10 data against the warm fits of the same
process.  The median "first - warm" (on ``--clock``) is each summary line's
``cold start`` figure and the JSON summary's ``cold_start_seconds``; the
goal is at most 0.2 s.  It costs the precompile step (a minute or two of CPU)
plus a few seconds per process.

Several seeds (``--seeds 0,1,2``, instead of ``--seed``): on a set with under
100 test rows one point is one row, so one split decides little.  The same
pairs run for every seed (in one pool); the output has each seed's table and
summary lines, then a table of the pairs' scores and fit times averaged over
the seeds and, per estimator, the summary line of those means (a pair is
within when its mean scores are) followed by each seed's share within.  The
JSON's ``rows`` carry their ``seed``; ``per_seed`` and ``mean_rows`` hold the
rest.  Each seed costs what one run costs (BENCHMARKS.md's entries give the
three seeds' time).

Usage::

    python benchmarks/suite.py [--sets a,named:usps,unseen:oj | --unseen all] [--estimators FGMClassifier,...]
        [--max-rows 20000] [--jobs 2] [--seed 0 | --seeds 0,1,2]
        [--param FGMClassifier.C=10]
        [--param '*.standardize=False']
        [--out suite.json] [--md suite.md] [--named a9a,usps|none] [--cold-start 3]
"""

import os

# One thread per process, for both sides, before numpy loads its BLAS.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import ast  # noqa: E402
import json  # noqa: E402
import lzma  # noqa: E402
import math  # noqa: E402
import multiprocessing  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from functools import lru_cache  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.kernel_approximation import Nystroem  # noqa: E402
from sklearn.linear_model import LassoCV, RidgeClassifierCV, RidgeCV  # noqa: E402
from sklearn.metrics import accuracy_score, mean_squared_error  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC, LinearSVC  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table, parse_seeds  # noqa: E402, F401
import fgm_cold_start  # noqa: E402
import unseen_sets  # noqa: E402

import kernlearn  # noqa: E402
from kernlearn.datasets import (  # noqa: E402
    DatasetNotFoundError,
    data_home,
    load_dataset,
)

# estimator -> (task, baseline label, baseline steps after the StandardScaler)
PAIRS = {
    "FGMClassifier": ("clf", "LinearSVC()", lambda: [LinearSVC()]),
    "FGMRegressor": ("reg", "LassoCV()", lambda: [LassoCV()]),
    "PNormMKLClassifier": ("clf", "SVC()", lambda: [SVC()]),
    "InfiniteFeatureClassifier": (
        "clf",
        "Nystroem(200)+LinearSVC()",
        lambda: [Nystroem(n_components=200), LinearSVC()],
    ),
    "InfiniteFeatureRegressor": (
        "reg",
        "Nystroem(200)+RidgeCV()",
        lambda: [Nystroem(n_components=200), RidgeCV()],
    ),
    "LowRankKernelClassifier": (
        "clf",
        "Nystroem(100)+RidgeClassifierCV()",
        lambda: [Nystroem(n_components=100), RidgeClassifierCV()],
    ),
    "LowRankKernelRegressor": (
        "reg",
        "Nystroem(100)+RidgeCV()",
        lambda: [Nystroem(n_components=100), RidgeCV()],
    ),
}

# Named sets of kernlearn.datasets that the suite does not already hold
# (letter, pendigits and housing are in it), with their task.
NAMED = {
    "a9a": "clf",
    "ijcnn1": "clf",
    "usps": "clf",
    "mfeat": "clf",
    "wine": "clf",
    "abalone": "reg",
    "cal_housing": "reg",
}

WITHIN = {"clf": -1.0, "reg": 1.05}  # gap >= -1 point; MSE ratio <= 1.05
BAD = {"clf": -3.0, "reg": 1.15}  # gap < -3 points; MSE ratio > 1.15


# ----------------------------------------------------------------- data


def suite_dir():
    """The suite folder: ``data_home() / "suite"`` (honours ``$KERNLEARN_DATA``)."""
    return data_home() / "suite"


def manifest_tasks(folder):
    """``{name: "clf" | "reg"}`` from the suite's ``MANIFEST.md`` ({} if absent)."""
    path = Path(folder) / "MANIFEST.md"
    if not path.exists():
        return {}
    tasks = {}
    for m in re.finditer(
        r"^\|\s*([^|\s]+)\s*\|\s*(classification|regression)\s*\|",
        path.read_text(),
        flags=re.MULTILINE,
    ):
        tasks[m.group(1)] = "clf" if m.group(2) == "classification" else "reg"
    return tasks


def suite_sets(folder):
    """``{name: task}`` of every ``<name>.csv.xz`` in ``folder``, sorted by name."""
    folder = Path(folder)
    tasks = manifest_tasks(folder)
    names = sorted(p.name[: -len(".csv.xz")] for p in folder.glob("*.csv.xz"))
    return {name: tasks.get(name) for name in names}


def _guess_task(y):
    """Task from the target when the manifest is silent: text or few integers: clf."""
    try:
        v = np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        return "clf"
    few = np.unique(v).size <= max(2, min(100, v.size // 5))
    return "clf" if few and np.all(v == np.round(v)) else "reg"


def load_set(spec, task=None):
    """``X, y, task`` of ``name`` (suite file), ``named:<name>`` or ``unseen:<name>``."""
    if spec.startswith("unseen:"):  # real sets from pip packages: unseen_sets.py
        return unseen_sets.load(spec.split(":", 1)[1])
    if spec.startswith("named:"):
        name = spec.split(":", 1)[1]
        data = load_dataset(name)
        X, y = data.data, data.target
        if "data_test" in data:  # one pool, split below like every other set
            X = (
                sp.vstack([X, data.data_test]).tocsr()
                if sp.issparse(X)
                else np.vstack([X, data.data_test])
            )
            y = np.concatenate([y, data.target_test])
        task = task or NAMED.get(name) or _guess_task(y)
        y = np.asarray(y).astype(str) if task == "clf" else np.asarray(y, dtype=float)
        return X, y, task
    path = suite_dir() / f"{spec}.csv.xz"
    if not path.exists():
        raise DatasetNotFoundError(f"data file not found: {path}")
    with lzma.open(path, "rt") as fh:
        df = pd.read_csv(fh, dtype={"target": str})  # labels stay strings
    X = df.drop(columns="target").to_numpy(dtype=float)
    task = task or _guess_task(df["target"].to_numpy())
    y = df["target"].to_numpy(dtype=str if task == "clf" else float)
    return X, y, task


def split_capped(X, y, task, max_rows, seed):
    """Seeded 70/30 split (stratified for clf), at most ``max_rows`` train rows.

    Above the cap, ``max_rows`` train and ``round(max_rows * 3 / 7)`` test rows
    are drawn in one split of the whole set, so the rows kept are stratified too.
    """
    n = X.shape[0]
    if max_rows is not None and 0.7 * n > max_rows:
        sizes = {"train_size": int(max_rows), "test_size": round(max_rows * 3 / 7)}
    else:
        sizes = {"test_size": 0.3}
    strat = y if task == "clf" else None
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, random_state=seed, stratify=strat, **sizes
    )
    if hasattr(
        Xtr, "toarray"
    ):  # the scaled baseline needs dense columns; rows are capped
        Xtr, Xte = Xtr.toarray(), Xte.toarray()
    return Xtr, ytr, Xte, yte


@lru_cache(maxsize=4)
def _cached_split(spec, task, max_rows, seed):
    X, y, task = load_set(spec, task)
    return split_capped(X, y, task, max_rows, seed), task, X.shape[0]


# ----------------------------------------------------------------- models


def parse_params(items, estimators):
    """``{estimator: {key: value}}`` from ``Est.key=value`` items.

    ``*.key=value`` sets ``key`` on every estimator that has that parameter.
    Values are Python literals (``10``, ``False``, ``'mean'``, ``None``), else
    strings.
    An explicit estimator must be one of ``estimators`` and have the parameter.
    """
    out = {name: {} for name in estimators}
    for item in items or []:
        m = re.fullmatch(r"\s*([\w*]+)\.(\w+)\s*=(.*)", item)
        if not m:
            raise ValueError(
                f"--param {item!r}: expected Est.key=value or *.key=value."
            )
        est, key, raw = m.group(1), m.group(2), m.group(3).strip()
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        if est == "*":
            for name in estimators:
                if key in getattr(kernlearn, name)().get_params():
                    out[name][key] = value
            continue
        if est not in estimators:
            raise ValueError(
                f"--param {item!r}: {est!r} is not among the estimators run "
                f"({', '.join(estimators)})."
            )
        if key not in getattr(kernlearn, est)().get_params():
            raise ValueError(f"--param {item!r}: {est} has no parameter {key!r}.")
        out[est][key] = value
    return out


def make_ours(name, params, seed):
    """Our estimator with ``params``, and ``random_state=seed`` if it has one."""
    est = getattr(kernlearn, name)()
    extra = {"random_state": seed} if "random_state" in est.get_params() else {}
    return est.set_params(**{**extra, **params})


def make_baseline(name, seed):
    """``StandardScaler`` + the baseline steps, each ``random_state`` at ``seed``."""
    steps = PAIRS[name][2]()
    for step in steps:
        if "random_state" in step.get_params():
            step.set_params(random_state=seed)
    return make_pipeline(StandardScaler(), *steps)


class _Timeout(Exception):
    pass


def _alarm(_signum, _frame):
    raise _Timeout()


def timed_fit(model, X, y, timeout=None):
    """Fit; return ``(cpu s, wall s, ConvergenceWarning seen)``.

    Raises ``_Timeout`` once the fit has run ``timeout`` seconds.
    """
    use_alarm = timeout and threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGALRM, _alarm) if use_alarm else None
    try:
        if use_alarm:  # inside the try: an early alarm still restores the handler
            signal.setitimer(signal.ITIMER_REAL, timeout)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c0, w0 = time.process_time(), time.perf_counter()
            model.fit(X, y)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    return cpu, wall, any(issubclass(w.category, ConvergenceWarning) for w in caught)


def warm_up(estimators, params, seed):
    """One tiny fit of each estimator and baseline: compiled code loaded for timing."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 4))
    data = {
        "clf": np.array(["a", "b", "c"])[np.arange(60) % 3],
        "reg": X[:, 0] + 0.1 * rng.normal(size=60),
    }
    for name in estimators:
        y = data[PAIRS[name][0]]
        for build, args in (
            (make_ours, (name, params.get(name, {}), seed)),
            (make_baseline, (name, seed)),
        ):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    build(*args).fit(X, y)
            except Exception:  # the timed fit records the error
                pass


# ----------------------------------------------------------------- one pair


def score(task, y_true, y_pred):
    """Accuracy (clf) or MSE (reg)."""
    if task == "clf":
        return float(accuracy_score(y_true, y_pred))
    return float(mean_squared_error(y_true, y_pred))


def compare(task, ours, base):
    """``(gap, within, bad)``: points ours - base (clf), MSE ratio ours / base (reg)."""
    if task == "clf":
        gap = 100.0 * (ours - base)
        return gap, gap >= WITHIN[task], gap < BAD[task]
    gap = ours / base if base > 0 else (1.0 if ours == base else math.inf)
    return gap, gap <= WITHIN[task], gap > BAD[task]


def run_pair(job):
    """One row (dict) for one ``(set, task, estimator)``; errors stored, not raised."""
    spec, task, name, params, max_rows, seed, timeout, clock = job
    row = {
        "set": spec,
        "estimator": name,
        "baseline": PAIRS[name][1],
        "params": params,
        "error": None,
    }
    try:
        (Xtr, ytr, Xte, yte), task, n = _cached_split(spec, task, max_rows, seed)
    except Exception as exc:
        row.update(task=task, error=f"data: {type(exc).__name__}: {exc}")
        return row
    row.update(
        task=task, n=n, n_train=Xtr.shape[0], n_test=Xte.shape[0], d=Xtr.shape[1]
    )
    if task == "clf":
        row["n_classes"] = int(np.unique(ytr).size)
    if task != PAIRS[name][0]:
        row["error"] = f"{name} is for {PAIRS[name][0]}, the set is {task}"
        return row
    for side, build in (
        ("ours", lambda: make_ours(name, params, seed)),
        ("base", lambda: make_baseline(name, seed)),
    ):
        try:
            model = build()
            cpu, wall, warned = timed_fit(model, Xtr, ytr, timeout)
            row[f"score_{side}"] = score(task, yte, model.predict(Xte))
        except _Timeout:
            row["error"] = f"{side}: fit longer than --timeout {timeout} s"
            return row
        except Exception as exc:
            msg = " ".join(str(exc).split())
            row["error"] = f"{side}: {type(exc).__name__}: {msg[:300]}"
            return row
        row.update({f"cpu_{side}": cpu, f"wall_{side}": wall, f"warn_{side}": warned})
    gap, within, bad = compare(task, row["score_ours"], row["score_base"])
    t_ours, t_base = row[f"{clock}_ours"], row[f"{clock}_base"]
    row.update(
        gap=gap,
        within=bool(within),
        bad=bool(bad),
        time_ratio=t_ours / t_base if t_base > 0 else math.inf,
    )
    return row


# ----------------------------------------------------------------- summary


def summarize(rows, estimators):
    """Per estimator: pairs, errors, share within, worst gap, bad, time ratios.

    Error rows count as pairs that are not within (and not bad: they are counted apart).
    """
    out = []
    for name in estimators:
        mine = [r for r in rows if r["estimator"] == name]
        if not mine:
            continue
        task = PAIRS[name][0]
        ok = [r for r in mine if r["error"] is None]
        errors = len(mine) - len(ok)
        worst = (min if task == "clf" else max)(
            ok, key=lambda r: r["gap"], default=None
        )
        ratios = [r["time_ratio"] for r in ok]
        slow = max(ok, key=lambda r: r["time_ratio"], default=None)
        within = sum(r["within"] for r in ok)
        out.append(
            {
                "estimator": name,
                "baseline": PAIRS[name][1],
                "task": task,
                "pairs": len(mine),
                "errors": errors,
                "within": within,
                "share_within": within / len(mine),
                "bad": sum(r["bad"] for r in ok),
                "worst_gap": worst["gap"] if worst else None,
                "worst_set": worst["set"] if worst else None,
                "time_ratio_median": statistics.median(ratios) if ratios else None,
                "time_ratio_max": slow["time_ratio"] if slow else None,
                "slowest_set": slow["set"] if slow else None,
            }
        )
    return out


def summary_line(s):
    """One sentence for one estimator's summary dict."""
    if s["task"] == "clf":
        crit, bad, worst = (
            "within 1 point",
            "worse than 3 points",
            "worst gap {:+.1f} points",
        )
    else:
        crit, bad, worst = "MSE ratio <= 1.05", "ratio > 1.15", "worst MSE ratio {:.3f}"
    head = (
        f"{s['estimator']} vs {s['baseline']}: {s['within']}/{s['pairs']} pairs "
        f"({100 * s['share_within']:.0f} %) {crit}"
    )
    parts = [head]
    if s["worst_gap"] is not None:
        parts.append(worst.format(s["worst_gap"]) + f" ({s['worst_set']})")
    parts.append(f"{s['bad']} {bad}")
    parts.append(f"{s['errors']} errors")
    if s["time_ratio_median"] is not None:
        parts.append(
            f"time ratio median {s['time_ratio_median']:.2g}, "
            f"max {s['time_ratio_max']:.3g} ({s['slowest_set']})"
        )
    if s.get("cold_start_seconds") is not None:
        parts.append(f"cold start +{s['cold_start_seconds']:.2f} s")
    return "; ".join(parts)


def cold_start(estimators, runs, clock="cpu"):
    """``{estimator: seconds}``: the median over ``runs`` new processes of the
    first fit's time minus the warm fit's (``fgm_cold_start.py``'s "new proc -
    warm", 100 x 10 data) on ``clock``; compiled code comes from numba's cache,
    filled once by the precompile step as an install fills it."""
    res, _ = fgm_cold_start.measure_new_process(estimators, runs)
    col = 1 if clock == "cpu" else 0
    return {
        name: statistics.median(r["first"][col] - r["warm"][col] for r in sc["new proc"])
        for name, sc in res.items()
    }


def add_cold_start(summary, seconds):
    """Put each estimator's ``seconds`` into its summary dict (in place)."""
    for s in summary:
        s["cold_start_seconds"] = seconds.get(s["estimator"])


def overall_line(summary):
    """All estimators together: share within and bad pairs."""
    pairs = sum(s["pairs"] for s in summary)
    within = sum(s["within"] for s in summary)
    bad = sum(s["bad"] for s in summary)
    errors = sum(s["errors"] for s in summary)
    share = 100 * within / pairs if pairs else 0.0
    return (
        f"All: {within}/{pairs} pairs ({share:.0f} %) within 1 point / MSE ratio 1.05; "
        f"{bad} worse than 3 points / 1.15x; {errors} errors"
    )


def mean_rows(rows_by_seed, clock="cpu"):
    """One row per (set, estimator): scores and fit times averaged over the seeds.

    The gap (ratio) is then taken between the mean scores, so a set's verdict
    rests on all its seeds' test rows.  A pair with an error in any seed is an
    error row (the first seed's error, named).
    """
    seeds = list(rows_by_seed)
    keyed = [{(r["set"], r["estimator"]): r for r in rows_by_seed[s]} for s in seeds]
    out = []
    for first in rows_by_seed[seeds[0]]:
        key = (first["set"], first["estimator"])
        mine = [k.get(key) for k in keyed]
        row = {k: first[k] for k in ("set", "estimator", "baseline", "params", "task")}
        row.update({k: first[k] for k in ("n", "n_train", "n_test", "d") if k in first})
        errors = [
            f"seed {s}: " + (r["error"] if r else "pair missing")
            for s, r in zip(seeds, mine)
            if r is None or r["error"] is not None
        ]
        row["error"] = errors[0] if errors else None
        row["seeds"] = seeds
        if row["error"] is None:
            for k in ("score", "cpu", "wall"):
                for side in ("ours", "base"):
                    row[f"{k}_{side}"] = statistics.fmean(
                        r[f"{k}_{side}"] for r in mine
                    )
            for side in ("ours", "base"):
                row[f"warn_{side}"] = any(r[f"warn_{side}"] for r in mine)
            gap, within, bad = compare(
                row["task"], row["score_ours"], row["score_base"]
            )
            t_ours, t_base = row[f"{clock}_ours"], row[f"{clock}_base"]
            row.update(
                gap=gap,
                within=bool(within),
                bad=bool(bad),
                time_ratio=t_ours / t_base if t_base > 0 else math.inf,
                seed_gaps=[r["gap"] for r in mine],
            )
        out.append(row)
    return out


def seeds_summary(rows_by_seed, estimators, clock="cpu"):
    """Summary of the mean over seeds (:func:`mean_rows`) with each seed's share.

    Returns ``(mean_rows, summary, per_seed)``: ``summary`` as :func:`summarize`
    on the mean rows, each entry with ``per_seed_within`` and
    ``per_seed_share`` (lists in seed order); ``per_seed`` is ``{seed:
    summarize(rows)}``.
    """
    per_seed = {s: summarize(rows, estimators) for s, rows in rows_by_seed.items()}
    mean = mean_rows(rows_by_seed, clock)
    summary = summarize(mean, estimators)
    for s in summary:
        mine = [
            next(x for x in per_seed[seed] if x["estimator"] == s["estimator"])
            for seed in rows_by_seed
        ]
        s["seeds"] = list(rows_by_seed)
        s["per_seed_within"] = [x["within"] for x in mine]
        s["per_seed_share"] = [x["share_within"] for x in mine]
    return mean, summary, per_seed


def seeds_line(s):
    """:func:`summary_line` of a mean-over-seeds summary, then each seed's share."""
    shares = ", ".join(
        f"{w}/{s['pairs']} ({100 * f:.0f} %)"
        for w, f in zip(s["per_seed_within"], s["per_seed_share"])
    )
    seeds = ",".join(str(x) for x in s["seeds"])
    return f"{summary_line(s)}; per seed ({seeds}): {shares}"


def table(rows, clock="cpu"):
    """Markdown table, one row per set x estimator (fit seconds on ``clock``)."""
    header = [
        "set",
        "train x d",
        "estimator",
        "baseline",
        "ours",
        "baseline score",
        "gap (pts) / MSE ratio",
        "fit s ours",
        "fit s base",
        "time ratio",
        "notes",
    ]
    body = []
    for r in rows:
        shape = f"{r.get('n_train', '?')}x{r.get('d', '?')}"
        if r["error"] is not None:
            body.append(
                [
                    r["set"],
                    shape,
                    r["estimator"],
                    r["baseline"],
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "ERROR " + r["error"].replace("|", "/"),
                ]
            )
            continue
        notes = ", ".join(
            s
            for s, w in (
                ("ours warned", r["warn_ours"]),
                ("baseline warned", r["warn_base"]),
            )
            if w
        )
        gap = f"{r['gap']:+.1f}" if r["task"] == "clf" else f"{r['gap']:.3f}"
        fmt = "{:.4f}" if r["task"] == "clf" else "{:.4g}"
        body.append(
            [
                r["set"],
                shape,
                r["estimator"],
                r["baseline"],
                fmt.format(r["score_ours"]),
                fmt.format(r["score_base"]),
                gap,
                f"{r[clock + '_ours']:.3g}",
                f"{r[clock + '_base']:.3g}",
                f"{r['time_ratio']:.3g}",
                notes,
            ]
        )
    return markdown_table(header, body)


# ----------------------------------------------------------------- driver


def _init_worker(estimators, params, seed):
    warm_up(estimators, params, seed)


def run(
    sets,
    estimators,
    params,
    max_rows=20000,
    seed=0,
    jobs=1,
    timeout=600.0,
    clock="cpu",
    log=print,
):
    """Run every estimator on every set of its task; return the rows (dicts).

    Parameters
    ----------
    sets : dict
        ``{spec: task or None}``; ``spec`` is a suite name or ``named:<name>``.
    estimators : list of str
        Names from :data:`PAIRS`.
    params : dict
        ``{estimator: {key: value}}`` constructor overrides.
    max_rows, seed, jobs, timeout, clock
        Training-row cap, seed of split and estimators, processes, per-fit
        time limit in seconds, clock of the time ratio (``"cpu"`` or ``"wall"``).
    log : callable
        Called with one progress line per finished pair.

    Returns
    -------
    rows : list of dict
        One per (set, estimator of the set's task), in set then estimator order.
    """
    return run_seeds(
        sets, estimators, params, [seed], max_rows, jobs, timeout, clock, log
    )[seed]


def run_seeds(
    sets,
    estimators,
    params,
    seeds,
    max_rows=20000,
    jobs=1,
    timeout=600.0,
    clock="cpu",
    log=print,
):
    """:func:`run` for several seeds in one pool; return ``{seed: rows}``.

    Parameters
    ----------
    sets, estimators, params, max_rows, jobs, timeout, clock, log
        As for :func:`run`.
    seeds : list of int
        Seeds of the splits and estimators; every seed runs the same pairs.

    Returns
    -------
    rows : dict
        ``{seed: rows}``, each list as :func:`run` returns it.
    """
    tasks = {}
    for spec, task in sets.items():
        if task is None:  # no manifest entry: read the target once
            try:
                task = load_set(spec)[2]
            except Exception:
                task = None  # load error recorded by each pair below
        tasks[spec] = task
    # set, then seed, then estimator: each worker's data cache stays warm
    jobs_list = [
        (spec, tasks[spec], name, params.get(name, {}), max_rows, seed, timeout, clock)
        for spec in sets
        for seed in seeds
        for name in estimators
        if tasks[spec] is None or PAIRS[name][0] == tasks[spec]
    ]
    done_rows = []
    tag = len(seeds) > 1

    def done(job, row):
        done_rows.append((job[5], row))
        gap = row.get("gap")
        what = row["error"] or f"gap {gap:.3g}, time ratio {row['time_ratio']:.3g}"
        where = f" seed {job[5]}" if tag else ""
        log(
            f"[{len(done_rows)}/{len(jobs_list)}] {row['set']} {row['estimator']}"
            f"{where}: {what}"
        )

    if jobs <= 1:
        warm_up(estimators, params, seeds[0])
        for job in jobs_list:
            done(job, run_pair(job))
    else:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(
            jobs,
            mp_context=ctx,
            initializer=_init_worker,
            initargs=(estimators, params, seeds[0]),
        ) as pool:
            for job, row in zip(jobs_list, pool.map(run_pair, jobs_list, chunksize=1)):
                done(job, row)
    order = {(j[0], j[2]): i for i, j in enumerate(jobs_list)}
    out = {seed: [] for seed in seeds}
    for seed, row in done_rows:
        out[seed].append(row)
    return {
        seed: sorted(rows, key=lambda r: order[(r["set"], r["estimator"])])
        for seed, rows in out.items()
    }


def _json_value(value):
    """JSON for what ``json`` does not know: NumPy scalars as numbers, else text."""
    return value.item() if isinstance(value, np.generic) else str(value)


def write_outputs(result, out, md, md_path=None):
    """Write ``result`` as JSON to ``out`` (folders created) and ``md`` to
    ``md_path`` when given: the outputs of this script and of the benchmarks
    built on it (``suite_noise_floor.py``, ``data_kinds.py``)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=_json_value))
    if md_path:
        Path(md_path).write_text(md)


def _cpu_seconds():
    """User + system CPU seconds of this process and its waited-for children."""
    return sum(
        u.ru_utime + u.ru_stime
        for u in map(
            resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
    )


def _git_commit():
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(kernlearn.__file__).parent,
            check=True,
        ).stdout.strip()
    except Exception:
        return None


# printed (and nothing run) when the suite folder is missing
NO_DATA = ("skip: no suite data in {folder} (set KERNLEARN_DATA to the folder that "
           "holds suite/)")


def select_sets(sets_arg, named_arg):
    """``({spec: task or None}, skipped)`` of ``--sets`` / ``--named``.

    With ``sets_arg`` (comma list of suite names and ``named:<name>``) those
    sets; else every suite file plus the named sets of ``named_arg`` (comma
    list or ``"none"``) that have a folder, the others in ``skipped``.  Returns
    ``(None, [])`` when ``sets_arg`` is empty and the suite folder is missing.
    """
    folder = suite_dir()
    skipped = []
    available = suite_sets(folder) if folder.is_dir() else {}
    if sets_arg:
        sets = {}
        for spec in (s.strip() for s in sets_arg.split(",") if s.strip()):
            name = spec.split(":", 1)[1] if spec.startswith("named:") else None
            sets[spec] = NAMED.get(name) if name else available.get(spec)
        return sets, skipped
    if not available:
        return None, skipped
    sets = dict(available)
    if named_arg.strip().lower() != "none":
        for name in (n.strip() for n in named_arg.split(",") if n.strip()):
            if (data_home() / name).is_dir():
                sets[f"named:{name}"] = NAMED.get(name)
            else:
                skipped.append(f"named:{name}: no folder {data_home() / name}")
    return sets, skipped


def main(argv=None):
    """Command line: run, print the table and summary lines, write JSON/markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sets",
        default=None,
        help="comma list of suite names, named:<name>, unseen:<name> (default: all)",
    )
    parser.add_argument(
        "--named",
        default=",".join(NAMED),
        help="named sets added when --sets is not given, or 'none'",
    )
    parser.add_argument("--unseen", help="only these unseen_sets.py sets (list or all)")
    parser.add_argument("--estimators", default=",".join(PAIRS))
    parser.add_argument("--max-rows", type=int, default=20000, help="training-row cap")
    seed_arg = parser.add_mutually_exclusive_group()
    seed_arg.add_argument("--seed", type=int, default=0)
    seed_arg.add_argument(
        "--seeds",
        default=None,
        help="comma list of seeds: the same pairs per seed, a table and summary "
        "per seed, then the summary of the scores averaged over the seeds",
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0, help="per fit, seconds")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        help="Est.key=value or *.key=value (repeatable)",
    )
    parser.add_argument(
        "--cold-start",
        type=int,
        default=3,
        metavar="RUNS",
        help="new processes per estimator for the cold-start column (0: none)",
    )
    parser.add_argument("--out", default="benchmarks/out/suite.json")
    parser.add_argument("--md", default=None, help="also write table + summary here")
    args = parser.parse_args(argv)

    estimators = [e.strip() for e in args.estimators.split(",") if e.strip()]
    unknown = [e for e in estimators if e not in PAIRS]
    if unknown:
        parser.error(f"unknown estimator(s) {unknown}; choose from {list(PAIRS)}")
    try:
        params = parse_params(args.param, estimators)
    except ValueError as exc:
        parser.error(str(exc))
    seeds = None
    if args.seeds is not None:
        try:
            seeds = parse_seeds(args.seeds)
        except ValueError as exc:
            parser.error(str(exc))

    folder = suite_dir()
    try:
        sets, skipped = (unseen_sets.select(args.unseen) if args.unseen
                         else select_sets(args.sets, args.named))
    except ValueError as exc:
        parser.error(str(exc))
    if sets is None:
        print(NO_DATA.format(folder=folder))
        return None

    t0, cpu0 = time.perf_counter(), _cpu_seconds()
    by_seed = run_seeds(
        sets,
        estimators,
        params,
        [args.seed] if seeds is None else seeds,
        max_rows=args.max_rows,
        jobs=args.jobs,
        timeout=args.timeout,
        clock=args.clock,
        log=lambda s: print(s, file=sys.stderr, flush=True),
    )
    # CPU of this process and its finished workers: the run's cost on a shared machine
    total, total_cpu = time.perf_counter() - t0, _cpu_seconds() - cpu0
    # after the pairs, so that the precompile step's load does not touch their times
    cold = cold_start(estimators, args.cold_start, args.clock) if args.cold_start > 0 else {}
    skip_lines = [f"skipped {reason}" for reason in skipped]
    which = f"seed {args.seed}" if seeds is None else f"seeds {args.seeds}"
    head = (
        f"suite benchmark: {len(sets)} sets, max {args.max_rows} train rows, "
        f"{which}, {args.jobs} job(s), time ratio on {args.clock} time; "
        f"total {total:.0f} s wall, {total_cpu:.0f} s CPU"
    )
    extra = {}
    if seeds is None:
        rows = by_seed[args.seed]
        summary = summarize(rows, estimators)
        add_cold_start(summary, cold)
        lines = [summary_line(s) for s in summary] + [overall_line(summary)]
        lines += skip_lines
        blocks = [table(rows, args.clock), "", *[f"- {line}" for line in lines]]
    else:
        rows = [dict(r, seed=s) for s, seed_rows in by_seed.items() for r in seed_rows]
        mean, summary, per_seed = seeds_summary(by_seed, estimators, args.clock)
        add_cold_start(summary, cold)
        blocks = []
        for seed, seed_summary in per_seed.items():
            seed_lines = [summary_line(s) for s in seed_summary]
            seed_lines.append(overall_line(seed_summary))
            extra.setdefault("per_seed", []).append(
                {"seed": seed, "summary": seed_summary, "summary_lines": seed_lines}
            )
            blocks += [f"seed {seed}:", "", table(by_seed[seed], args.clock), ""]
            blocks += [f"- {line}" for line in seed_lines] + [""]
        lines = [seeds_line(s) for s in summary] + [overall_line(summary)]
        lines += skip_lines
        extra["mean_rows"] = mean
        blocks += [
            f"mean over seeds {args.seeds} (scores and fit times averaged per pair):",
            "",
            table(mean, args.clock),
            "",
            *[f"- {line}" for line in lines],
        ]
    md = "\n".join([head, "", *blocks, ""])
    print(md)
    meta = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": _git_commit(),
        "kernlearn": kernlearn.__version__,
        "data": str(folder),
        "sets": list(sets),
        "estimators": estimators,
        "params": params,
        "max_rows": args.max_rows,
        **({"seed": args.seed} if seeds is None else {"seeds": seeds}),
        "jobs": args.jobs,
        "clock": args.clock,
        "timeout": args.timeout,
        "cold_start_runs": args.cold_start,
        "skipped": skipped,
        "total_seconds": total,
        "total_cpu_seconds": total_cpu,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "sklearn": __import__("sklearn").__version__,
    }
    result = {"meta": meta, "rows": rows, "summary": summary, "summary_lines": lines, **extra}
    write_outputs(result, args.out, md, args.md)
    return result


if __name__ == "__main__":
    main()
