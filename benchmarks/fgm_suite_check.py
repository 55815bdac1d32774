"""FGM at defaults on raw suite sets against its one-line scikit-learn baseline.

FGMClassifier against ``StandardScaler + LinearSVC()``, FGMRegressor against
``StandardScaler + LassoCV()``; 70/30 split (seed 0), at most 2,000 training
rows.  Prints accuracy (regression: test MSE) and the gap per set.

Usage::

    python benchmarks/fgm_suite_check.py [--sets diabetes wdbc ...]
"""

import os

# One thread for both sides, before numpy loads its BLAS (as suite.py).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.linear_model import LassoCV  # noqa: E402
from sklearn.metrics import mean_squared_error  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402

from kernlearn import FGMClassifier, FGMRegressor  # noqa: E402
from kernlearn.datafiles import _open  # noqa: E402
from kernlearn.datasets import DatasetNotFoundError, data_home  # noqa: E402

CLASSIFICATION = ["diabetes", "ionosphere", "wdbc", "vehicle", "kc1", "spectrometer"]
REGRESSION = ["airfoil", "autompg", "concreteslump", "machine"]


def _load(name):
    # the data folder's suite ($KERNLEARN_DATA honoured); a missing file names itself
    df = pd.read_csv(_open(data_home() / "suite" / f"{name}.csv.xz"))
    X = df.drop(columns="target").to_numpy(dtype=float)
    y = df["target"].to_numpy()
    return X, y


def run(name, regression):
    X, y = _load(name)
    strat = None if regression else y
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0,
                                          stratify=strat)
    Xtr, ytr = Xtr[:2000], ytr[:2000]
    ours = FGMRegressor() if regression else FGMClassifier()
    base = make_pipeline(StandardScaler(), LassoCV() if regression else LinearSVC())
    out = {}
    for label, model in (("FGM", ours), ("baseline", base)):
        t0 = time.perf_counter()
        model.fit(Xtr, ytr)
        out[f"{label} time"] = time.perf_counter() - t0
        pred = model.predict(Xte)
        out[label] = (mean_squared_error(yte, pred) if regression
                      else float(np.mean(pred == yte)))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", default=None)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    sets = [(s, False) for s in CLASSIFICATION] + [(s, True) for s in REGRESSION]
    if args.sets:
        sets = [(s, r) for s, r in sets if s in args.sets]
    print(f"{'set':16s} {'metric':8s} {'FGM':>9s} {'baseline':>9s} {'gap':>9s}")
    for name, regression in sets:
        try:
            r = run(name, regression)
        except DatasetNotFoundError as exc:  # absent data: say so, run the rest
            print(f"skip {name}: {exc}", flush=True)
            continue
        gap = r["FGM"] / r["baseline"] if regression else 100 * (r["FGM"] - r["baseline"])
        metric = "MSE" if regression else "accuracy"
        unit = "x" if regression else " pt"
        print(f"{name:16s} {metric:8s} {r['FGM']:9.4g} {r['baseline']:9.4g} "
              f"{gap:8.3g}{unit}", flush=True)


if __name__ == "__main__":
    main()
