"""Traced peak memory of every multitask MKL route on a wide sparse ``X``.

Each route (plain fits of every formulation, ``C="auto"``, the SVR loss,
Platt's folds, both ``*CV`` searches, column views, ``standardize=False``)
fits and predicts a ``rows x cols`` CSR matrix in a fresh subprocess under
:mod:`tracemalloc`; a route that made ``X`` dense would show its dense size.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/mtmkl_sparse_memory.py --rows 1000 --cols 100000
"""

import argparse
import subprocess
import sys

_ROUTE = """
import time, tracemalloc, warnings
import numpy as np, scipy.sparse as sp
from kernlearn import (MultitaskMKLClassifier, MultitaskMKLClassifierCV,
                       MultitaskMKLRegressor, MultitaskMKLRegressorCV)
route, n, d = {route!r}, {rows}, {cols}
rng = np.random.default_rng(0)
X = sp.random(n, d, density=50 / d, random_state=0, format="csr",
              data_rvs=lambda k: rng.poisson(2.0, k) + 1.0)
t = np.arange(n) % 3
y = np.asarray(X[:, : d // 5].sum(axis=1)).ravel() + t
yc = (y > np.median(y)).astype(int)
Xte, tte = X[:200], t[:200]
kern = [("rbf", {{"gamma": "mean"}}), "linear", ("poly", {{"degree": 2}})]
views = [("linear", {{}}, slice(0, d // 2)), ("rbf", {{"gamma": "scale"}}, slice(d // 2, d))]
est, target, out = {{
    "MK-MTFL": (MultitaskMKLRegressor(kern, max_iter=10), y, "predict"),
    "MK-MTSFL shared": (MultitaskMKLRegressor(kern, formulation="mtsfl", shared=True,
                                              max_iter=10), y, "predict"),
    "C='auto'": (MultitaskMKLRegressor(kern, C="auto", max_iter=10), y, "predict"),
    "SVR loss": (MultitaskMKLRegressor(kern, loss="epsilon_insensitive", max_iter=10), y,
                 "predict"),
    "Platt": (MultitaskMKLClassifier(kern, probability=True, max_iter=10), yc, "predict_proba"),
    "RegressorCV LOO": (MultitaskMKLRegressorCV(kern, Cs=(0.1, 1.0), max_iter=10), y,
                        "predict"),
    "RegressorCV 3 folds": (MultitaskMKLRegressorCV(kern, Cs=(0.1, 1.0), cv=3,
                                                    kernel_selection="objective",
                                                    max_iter=10), y, "predict"),
    "ClassifierCV": (MultitaskMKLClassifierCV(kern, Cs=(0.1, 1.0), cv=3, max_iter=10), yc,
                     "decision_function"),
    "column views": (MultitaskMKLRegressor(views, max_iter=10), y, "predict"),
    "standardize=False": (MultitaskMKLRegressor(kern, standardize=False, max_iter=10), y,
                          "predict"),
}}[route]
warnings.simplefilter("ignore")
t0 = time.process_time()
tracemalloc.start()
est.fit(X, target, task_index=t)
getattr(est, out)(Xte, task_index=tte)
peak = tracemalloc.get_traced_memory()[1] / 1e6
print(f"| {{route}} | {{peak:.0f}} | {{n * d * 8 / 1e6:.0f}} | {{time.process_time() - t0:.1f}} |")
"""

ROUTES = ["MK-MTFL", "MK-MTSFL shared", "C='auto'", "SVR loss", "Platt", "RegressorCV LOO",
          "RegressorCV 3 folds", "ClassifierCV", "column views", "standardize=False"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--cols", type=int, default=100_000)
    args = ap.parse_args()
    print("| route | traced peak (MB) | X dense (MB) | CPU (s) |")
    print("|---|---|---|---|")
    for route in ROUTES:
        code = _ROUTE.format(route=route, rows=args.rows, cols=args.cols)
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        print(res.stdout.strip() if res.returncode == 0
              else f"| {route} | failed: {res.stderr.strip().splitlines()[-1]} | | |", flush=True)


if __name__ == "__main__":
    main()
