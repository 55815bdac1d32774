"""Multitask MKL regressors on real multitask data, each task in its own units or not.

Two sets: School (its 20 largest tasks) and airfoil split into 3 tasks by
frequency tercile (the first column).  Each task's rows are halved at random
(``--seeds`` seeds) into training and test rows; the metric is the test
:math:`R^2` averaged over tasks.  "same" fits the targets as given; "mixed"
gives every other task in 1/100 of its units (the metric is unit-free, so
a model that does not depend on each task's units scores the same on both).

Usage::

    python benchmarks/multitask_units.py [--seeds 3] [--configs default,svr,cv]
"""

import os

# One BLAS thread for both sides, set before numpy loads (as suite.py): on a
# shared machine neither side's time then counts threads the other does not use.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import r2_score

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402

from kernlearn import MultitaskMKLRegressor, MultitaskMKLRegressorCV  # noqa: E402
from kernlearn.datafiles import _open  # noqa: E402
from kernlearn.datasets import DatasetNotFoundError, data_home, load_dataset  # noqa: E402

CONFIGS = {
    "default": lambda: MultitaskMKLRegressor(),
    "svr": lambda: MultitaskMKLRegressor(loss="epsilon_insensitive"),
    "mtsfl": lambda: MultitaskMKLRegressor(formulation="mtsfl"),
    "cv": lambda: MultitaskMKLRegressorCV(),
    "cv-noshared": lambda: MultitaskMKLRegressorCV(shared=False),
    "svr-cv": lambda: MultitaskMKLRegressorCV(loss="epsilon_insensitive", cv=3,
                                              kernel_selection="objective"),
}


def school(n_tasks=20):
    data = load_dataset("school")
    ids, counts = np.unique(data.task_index, return_counts=True)
    keep = np.isin(data.task_index, ids[np.argsort(-counts, kind="stable")[:n_tasks]])
    return data.data[keep], data.target[keep], data.task_index[keep]


def airfoil():
    import pandas as pd

    # (_open: a missing file is a DatasetNotFoundError naming it, as for School)
    table = pd.read_csv(_open(data_home() / "suite" / "airfoil.csv.xz"))
    X, y = table.drop(columns="target").to_numpy(float), table["target"].to_numpy(float)
    task = np.searchsorted(np.quantile(X[:, 0], [1 / 3, 2 / 3]), X[:, 0], side="right")
    return X, y, task


def halves(task, seed, n_train=None):
    rng = np.random.default_rng(seed)
    train = np.zeros(len(task), bool)
    for t in np.unique(task):
        rows = rng.permutation(np.flatnonzero(task == t))
        train[rows[: len(rows) // 2 if n_train is None else n_train]] = True
    return train


def run(make, X, y, task, seed, mixed, n_train=None):
    ids = np.unique(task)
    units = np.where(np.searchsorted(ids, task) % 2 == 1, 0.01, 1.0) if mixed else 1.0
    yu = y * units
    tr = halves(task, seed, n_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make().fit(X[tr], yu[tr], task_index=task[tr])
    pred = est.predict(X[~tr], task_index=task[~tr])
    te_t = task[~tr]
    return np.mean([r2_score(yu[~tr][te_t == t], pred[te_t == t]) for t in ids]), est.C_


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--configs", default="default,svr,cv")
    parser.add_argument("--n-train", type=int, default=None,
                        help="training rows per task (default: half of each task's); "
                             "with it, all 139 schools (the paper's protocol: 15)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.configs.split(",")) - set(CONFIGS))
    if unknown:
        parser.error(f"--configs: unknown {unknown}; choose from {list(CONFIGS)}")
    loaders = ({"school": school, "airfoil": airfoil} if args.n_train is None
               else {"school-all": lambda: school(None)})
    sets = {}
    for name, load in loaders.items():
        try:
            sets[name] = load()
        except DatasetNotFoundError as exc:  # absent data: say so, run the rest
            print(f"skip {name}: {exc}", flush=True)
    rows = []
    for cfg in args.configs.split(","):
        for name, (X, y, task) in sets.items():
            out = {}
            for mixed in (False, True):
                t0 = time.perf_counter()
                res = [run(CONFIGS[cfg], X, y, task, s, mixed, args.n_train)
                       for s in range(args.seeds)]
                out[mixed] = (np.mean([r for r, _ in res]), [c for _, c in res],
                              time.perf_counter() - t0)
            rows.append([cfg, name, f"{out[False][0]:.4f}", f"{out[True][0]:.4f}",
                         " ".join(f"{c:.3g}" for c in out[False][1]),
                         " ".join(f"{c:.3g}" for c in out[True][1]),
                         f"{out[False][2] + out[True][2]:.1f}"])
            print(rows[-1], flush=True)
    print(markdown_table(["config", "set", "R2 same", "R2 mixed", "C_ same", "C_ mixed",
                          "time (s)"], rows))


if __name__ == "__main__":
    main()
