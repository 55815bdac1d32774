"""CPU time of ``load_model`` with and without the fitted-state check.

Fits a few estimators on random data, saves them, and loads each file
``--repeats`` times with the check (``kernlearn._model_state``) and with it
replaced by a no-op, alternating; prints the medians and their ratio.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/model_load_check.py --repeats 15
"""

import argparse
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import kernlearn.io as kio
from kernlearn import (FGMClassifier, InfiniteFeatureRegressor, LowRankKernelClassifier,
                       MultitaskMKLRegressor, PNormMKLClassifier)


def cases(n, d):
    rng = np.random.RandomState(0)
    X = rng.randn(n, d)
    y3 = np.digitize(X[:, 0], [-0.5, 0.5])
    task = np.arange(n) % 3
    return [
        ("FGMClassifier (3 classes)", FGMClassifier(max_iter=5), X, y3, {}),
        ("PNormMKLClassifier (3 classes)", PNormMKLClassifier(max_iter=5, random_state=0),
         X, y3, {}),
        ("LowRankKernelClassifier (3 classes)",
         LowRankKernelClassifier(max_iter=5, random_state=0), X, y3, {}),
        ("InfiniteFeatureRegressor", InfiniteFeatureRegressor(max_features=20, random_state=0),
         X, X[:, 0] + X[:, 1] ** 2, {}),
        ("MultitaskMKLRegressor (3 tasks)", MultitaskMKLRegressor(max_iter=5), X,
         X[:, 0], {"task_index": task}),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--d", type=int, default=10)
    args = ap.parse_args(argv)
    real = kio.check_fitted_state
    print(f"load_model CPU ms, median of {args.repeats} (n={args.n}, d={args.d})")
    print(f"{'estimator':38s} {'no check':>9s} {'check':>9s} {'ratio':>7s} {'bytes':>9s}")
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, est, X, y, kw in cases(args.n, args.d):
            est.fit(X, y, **kw)
            path = Path(tmp) / "m.npz"
            kio.save_model(est, path)
            times = {"off": [], "on": []}
            for _ in range(args.repeats):
                for mode in ("off", "on"):
                    kio.check_fitted_state = real if mode == "on" else (lambda *a: None)
                    t = time.process_time()
                    kio.load_model(path)
                    times[mode].append(time.process_time() - t)
            kio.check_fitted_state = real
            off, on = (1e3 * statistics.median(times[m]) for m in ("off", "on"))
            print(f"{name:38s} {off:9.2f} {on:9.2f} {on / off:7.3f} {path.stat().st_size:9d}")


if __name__ == "__main__":
    main()
