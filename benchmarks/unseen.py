"""Defaults on real sets nobody tuned them on: tables shipped inside pip packages.

The breadth benchmark (``suite.py``) judges every default on the 53 sets of
``../shared/datasets/suite``; the defaults were developed there.  This script
runs the same estimators, baselines, split (seeded 70/30, stratified, at most
``--max-rows`` training rows), scores and criteria (within 1 accuracy point /
MSE ratio 1.05; worse than 3 points / 1.15x) on real tables that ship inside
installable packages and that no default was ever measured on.  Nothing is
downloaded at run time; a set whose package is not installed is skipped with
the reason.  Install the packages with::

    pip install -e ".[unseen]"            # palmerpenguins, mlxtend, statsmodels
    pip install --no-deps ISLP==0.6.0     # its data files only (ISLP needs torch)

ISLP is never imported: its CSV files are read from its package folder.

Every set is encoded by one rule, as a user would: index and identifier
columns dropped, the listed leakage columns dropped (a column that is the
target in other units, or computed from it), rows with a missing value
dropped, text columns one-hot encoded (``pandas.get_dummies``, every category
kept), the rest read as numbers.  Sets already in the suite or among its
named sets (Auto = autompg, Boston = housing, iris, wine) are left out.

=================  =========================  ======  ==========  =====================
set                source (package / file)      rows    task        target (dropped)
=================  =========================  ======  ==========  =====================
Caravan            ISLP data/Caravan.csv        5822    clf         Purchase
Default            ISLP data/Default.csv       10000    clf         default
OJ                 ISLP data/OJ.csv             1070    clf         Purchase
Smarket            ISLP data/Smarket.csv        1250    clf         Direction (Today, Year)
Weekly             ISLP data/Weekly.csv         1089    clf         Direction (Today, Year)
College            ISLP data/College.csv         777    clf         Private
Khan               ISLP data/Khan_*.csv           83    clf         4 tumour classes
Carseats           ISLP data/Carseats.csv        400    reg         Sales
Credit             ISLP data/Credit.csv          400    reg         Balance (ID)
Wage               ISLP data/Wage.csv           3000    reg         wage (logwage)
Hitters            ISLP data/Hitters.csv         263    reg         Salary
Bikeshare          ISLP data/Bikeshare.csv      8645    reg         bikers (casual, registered)
CollegeApps        ISLP data/College.csv         777    reg         Apps (Accept, Enroll)
mnist5k            mlxtend mnist_5k.csv.gz      5000    clf         digit
penguins           palmerpenguins               333     clf         species
fair               statsmodels fair             6366    reg         affairs
anes96             statsmodels anes96            944    clf         vote
modechoice         statsmodels modechoice        840    clf         choice
=================  =========================  ======  ==========  =====================

Usage::

    python benchmarks/unseen.py [--sets Caravan,OJ] [--estimators FGMClassifier]
        [--seeds 0,1,2] [--max-rows 5000] [--json FILE]
"""

import argparse
import gzip
import importlib.util
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from suite import (PAIRS, compare, make_baseline, make_ours, score,  # noqa: E402
                   split_capped, warm_up)


class MissingPackage(Exception):
    """The package holding a set is not installed (the set is skipped)."""


def _package_dir(name):
    spec = importlib.util.find_spec(name)  # (finds the folder, imports nothing)
    if spec is None or not spec.submodule_search_locations:
        raise MissingPackage(f"package {name!r} is not installed")
    return Path(spec.submodule_search_locations[0])


def encode(df, target, drop=(), task="clf"):
    """``(X, y, task)`` of a table by the one rule of this benchmark.

    Parameters
    ----------
    df : pandas.DataFrame
        The table as read.
    target : str
        Its target column.
    drop : sequence of str
        Identifier and leakage columns.
    task : {"clf", "reg"}

    Returns
    -------
    X : ndarray of float64
    y : ndarray (text labels for clf, float for reg)
    task : str
    """
    df = df.drop(columns=[c for c in df.columns
                          if str(c).startswith("Unnamed") or c in drop])
    df = df.dropna()
    y = df.pop(target)
    X = pd.get_dummies(df, dtype=float).to_numpy(dtype=float)
    y = y.astype(str).to_numpy(dtype=str) if task == "clf" else y.to_numpy(dtype=float)
    return X, y, task


def _islp(file, target, drop=(), task="clf"):
    path = _package_dir("ISLP") / "data" / f"{file}.csv"
    return encode(pd.read_csv(path), target, drop, task)


def _khan():
    folder = _package_dir("ISLP") / "data"
    X = pd.concat([pd.read_csv(folder / f"Khan_x{p}.csv") for p in ("train", "test")])
    y = pd.concat([pd.read_csv(folder / f"Khan_y{p}.csv") for p in ("train", "test")])
    X = X.drop(columns=[c for c in X.columns if str(c).startswith("Unnamed")])
    return X.to_numpy(dtype=float), y.iloc[:, -1].astype(str).to_numpy(dtype=str), "clf"


def _mnist5k():
    path = _package_dir("mlxtend") / "data" / "data" / "mnist_5k.csv.gz"
    with gzip.open(path, "rt") as fh:
        a = np.loadtxt(fh, delimiter=",")
    return a[:, :-1], a[:, -1].astype(int).astype(str), "clf"


def _penguins():
    folder = _package_dir("palmerpenguins")
    path = next(iter(sorted(folder.rglob("penguins.csv"))), None)
    if path is None:
        raise MissingPackage("palmerpenguins has no penguins.csv")
    return encode(pd.read_csv(path), "species", task="clf")


def _statsmodels(name, target, task):
    _package_dir("statsmodels")
    import statsmodels.datasets as smd

    df = getattr(smd, name).load_pandas().data
    if task == "clf":
        df[target] = df[target].astype(int)  # (codes stored as floats: 1.0 -> "1")
    return encode(df, target, task=task)


SETS = {
    "Caravan": lambda: _islp("Caravan", "Purchase"),
    "Default": lambda: _islp("Default", "default"),
    "OJ": lambda: _islp("OJ", "Purchase"),
    "Smarket": lambda: _islp("Smarket", "Direction", drop=("Today", "Year")),
    "Weekly": lambda: _islp("Weekly", "Direction", drop=("Today", "Year")),
    "College": lambda: _islp("College", "Private"),
    "Khan": _khan,
    "Carseats": lambda: _islp("Carseats", "Sales", task="reg"),
    "Credit": lambda: _islp("Credit", "Balance", drop=("ID",), task="reg"),
    "Wage": lambda: _islp("Wage", "wage", drop=("logwage",), task="reg"),
    "Hitters": lambda: _islp("Hitters", "Salary", task="reg"),
    "Bikeshare": lambda: _islp("Bikeshare", "bikers", drop=("casual", "registered"),
                               task="reg"),
    "CollegeApps": lambda: _islp("College", "Apps", drop=("Accept", "Enroll"), task="reg"),
    "mnist5k": _mnist5k,
    "penguins": _penguins,
    "fair": lambda: _statsmodels("fair", "affairs", "reg"),
    "anes96": lambda: _statsmodels("anes96", "vote", "clf"),
    "modechoice": lambda: _statsmodels("modechoice", "choice", "clf"),
}


def run_set(name, estimators, seeds, max_rows):
    """Rows ``{set, estimator, gaps, cpu_ours, cpu_base}`` of one set, seeds in order."""
    X, y, task = SETS[name]()
    rows = []
    for est in estimators:
        if PAIRS[est][0] != task:
            continue
        row = {"set": name, "shape": list(X.shape), "task": task, "estimator": est,
               "baseline": PAIRS[est][1], "gaps": [], "cpu_ours": [], "cpu_base": []}
        for seed in seeds:
            Xtr, ytr, Xte, yte = split_capped(X, y, task, max_rows, seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.process_time()
                ours = make_ours(est, {}, seed).fit(Xtr, ytr)
                t1 = time.process_time()
                base = make_baseline(est, seed).fit(Xtr, ytr)
                t2 = time.process_time()
                so, sb = score(task, yte, ours.predict(Xte)), score(task, yte, base.predict(Xte))
            row["gaps"].append(compare(task, so, sb)[0])
            row["cpu_ours"].append(t1 - t0)
            row["cpu_base"].append(t2 - t1)
        rows.append(row)
    return rows


def mean_gap(row):
    """Mean gap over the seeds: points (clf), geometric mean of MSE ratios (reg)."""
    g = np.asarray(row["gaps"], dtype=float)
    return float(g.mean() if row["task"] == "clf" else np.exp(np.log(g).mean()))


def verdict(row):
    """``(within, worse)`` of the mean gap, by the suite's criteria."""
    g = mean_gap(row)
    if row["task"] == "clf":
        return g >= -1.0, g < -3.0
    return g <= 1.05, g > 1.15


def summary(rows):
    """One line per estimator: pairs within / worse on the mean of seeds, worst pair."""
    lines = []
    for est in dict.fromkeys(r["estimator"] for r in rows):
        mine = [r for r in rows if r["estimator"] == est]
        within = sum(verdict(r)[0] for r in mine)
        worse = sum(verdict(r)[1] for r in mine)
        worst = (min if mine[0]["task"] == "clf" else max)(mine, key=mean_gap)
        ratio = [np.median(np.divide(r["cpu_ours"], np.maximum(r["cpu_base"], 1e-4)))
                 for r in mine]
        lines.append(f"- {est} vs {mine[0]['baseline']}: {within}/{len(mine)} within, "
                     f"{worse} worse; worst {worst['set']} {mean_gap(worst):.3g}; "
                     f"time ratio median {np.median(ratio):.2g}, max {max(ratio):.3g}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--estimators", default=",".join(PAIRS))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--max-rows", type=int, default=5000)
    parser.add_argument("--json", help="write every row to this file")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    estimators = [e.strip() for e in args.estimators.split(",") if e.strip()]
    unknown = [e for e in estimators if e not in PAIRS]
    if unknown:
        parser.error(f"unknown estimator(s) {unknown}; known: {', '.join(PAIRS)}")
    warm_up(estimators, {}, seeds[0])  # (compiled code loaded before any timing)
    rows = []
    for name in (s.strip() for s in args.sets.split(",") if s.strip()):
        if name not in SETS:
            parser.error(f"unknown set {name!r}; known: {', '.join(SETS)}")
        try:
            new = run_set(name, estimators, seeds, args.max_rows)
        except MissingPackage as exc:
            print(f"{name}: skipped ({exc})", flush=True)
            continue
        for r in new:
            slower = np.median(np.subtract(r["cpu_ours"], r["cpu_base"]))
            print(f"{name:12s} {r['estimator']:26s} gaps "
                  f"{' '.join(f'{g:.3g}' for g in r['gaps'])}  mean {mean_gap(r):.3g}"
                  f"{'  NOT WITHIN' if not verdict(r)[0] else ''}"
                  f"  cpu {np.median(r['cpu_ours']):.3g} s vs {np.median(r['cpu_base']):.3g} s"
                  f" (+{slower:.2g} s)", flush=True)
        rows += new
    print("\n".join(summary(rows)) if rows else "no set ran")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
