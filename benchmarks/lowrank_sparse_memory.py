"""Traced peak memory and CPU time of the low-rank estimators on sparse rows.

Each case fits and predicts in a fresh subprocess under :mod:`tracemalloc`
(compiled code loaded by a small fit first): ``LowRankKernelRegressor`` with
``hik`` and ``linear`` and
``LowRankKernelClassifier`` with ``linear`` on 300 x 200,000 Poisson counts
(0.1 % stored, 480 MB dense; audit 113's shape) and on Reuters' training set
(the library's data folder).  A fit that made ``X`` dense would show its
dense size.  ``--src`` names the source tree to measure (another checkout:
before/after in one run, alternated).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/lowrank_sparse_memory.py --src src --src /old/src
"""

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

_CASE = """
import sys, time, tracemalloc, warnings
import numpy as np, scipy.sparse as sp
sys.path.insert(0, {bench!r})
from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor
data, kernel, standardize, cls = {data!r}, {kernel!r}, {standardize!r}, {cls!r}
if data == "reuters":
    from _common import reuters_split
    X, y = reuters_split()[:2]
    X = X[:, np.unique(X.indices)]  # (the columns the training rows store)
    y = (y == y[0]).astype(float)
else:
    rng = np.random.default_rng(0)
    X = sp.random(300, 200000, density=0.001, random_state=0, format="csr",
                  data_rvs=lambda k: rng.poisson(2.0, k) + 1.0)
    y = np.asarray(X[:, :40000].sum(axis=1)).ravel()
Est = LowRankKernelClassifier if cls else LowRankKernelRegressor
target = (y > np.median(y)).astype(int) if cls else y
warnings.simplefilter("ignore")
Est(kernel=kernel, standardize=standardize).fit(X[:60], target[:60])  # (compiled code)
t0 = time.process_time()
tracemalloc.start()
est = Est(kernel=kernel, standardize=standardize).fit(X, target)
est.decision_function(X) if cls else est.predict(X)
peak = tracemalloc.get_traced_memory()[1] / 1e6
print(peak, time.process_time() - t0, X.shape[0] * X.shape[1] * 8 / 1e6, X.nnz)
"""

CASES = [("counts", "hik", False, False), ("counts", "linear", True, False),
         ("counts", "linear", False, True), ("reuters", "linear", False, False)]


def run(src, case):
    data, kernel, standardize, cls = case
    code = _CASE.format(bench=str(Path(__file__).resolve().parent), data=data, kernel=kernel,
                        standardize=standardize, cls=cls)
    env = {**os.environ, "PYTHONPATH": src, "OMP_NUM_THREADS": "1"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if res.returncode:
        return None, res.stderr.strip().splitlines()[-1]
    return tuple(map(float, res.stdout.split())), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", action="append", help="source trees to compare (default: src)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    srcs = args.src or ["src"]
    cols = " | ".join(f"peak MB, CPU s ({s})" for s in srcs)
    print(f"| data | estimator | kernel | standardize | X dense (MB) | stored | {cols} |")
    print("|---|---|---|---|---|---|" + "---|" * len(srcs))
    for case in CASES:
        got = {s: [] for s in srcs}
        dense = nnz = err = None
        for r in range(args.repeats):  # (the trees alternated: A B, B A, ...)
            for s in (srcs if r % 2 == 0 else srcs[::-1]):
                out, err = run(s, case)
                if out is None:
                    break
                got[s].append(out[:2])
                dense, nnz = out[2], int(out[3])
            if err:
                break
        name = "classifier" if case[3] else "regressor"
        if err:
            print(f"| {case[0]} | {name} | {case[1]} | {case[2]} | skipped: {err} |")
            continue
        cells = " | ".join(
            f"{statistics.median(p for p, _ in got[s]):.0f}, "
            f"{statistics.median(t for _, t in got[s]):.2f}" for s in srcs)
        print(f"| {case[0]} | {name} | {case[1]} | {case[2]} | {dense:.0f} | {nnz} | {cells} |",
              flush=True)


if __name__ == "__main__":
    main()
