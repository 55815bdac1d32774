"""Cost growth with n of GrFL, OBSCURE and SLKL (log-log slopes over >= 10x in n).

On random subsets of ``ijcnn1``'s training set (n = 2,000 ... 32,000, a 16x
range), each method with a fixed amount of *algorithmic* work, so that the
slope measures the cost of that work as n grows:

* GrFL: ``InfiniteFeatureClassifier(max_features=30, tol=0)`` (30 features
  added; pricing on the default 2,000-row subsample plus exact re-scoring,
  masters O(n p) per iteration): expected slope 1;
* OBSCURE: ``PNormMKLClassifier(max_steps=40000)`` with the default kernels
  computed on the fly (40,000 stochastic steps whatever n; each additive
  update costs O(F n), each computed Gram row O(F n d)): expected slope 1,
  and the time per update divided by n constant ("linear in the updates");
* SLKL: ``LowRankKernelClassifier(max_iter=10, tol=0)`` (10 sweeps of
  M = 256 coordinate steps; columns O(n M d), Gram mode O(n M^2) once, then
  steps independent of n): expected slope <= 1.

Prints the times (median of ``--repeats``), the slopes and, for OBSCURE, the
number of updates and of Gram rows computed.

Usage::

    python benchmarks/scaling_kernel.py [--repeats 3] [--sizes 2000,4000,...]
"""

import os

# One BLAS thread for both sides, set before numpy loads (as suite.py): on a
# shared machine neither side's time then counts threads the other does not use.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table, timed  # noqa: E402

from kernlearn import (  # noqa: E402
    InfiniteFeatureClassifier,
    LowRankKernelClassifier,
    PNormMKLClassifier,
)
from kernlearn.datasets import DatasetNotFoundError, load_dataset  # noqa: E402

warnings.filterwarnings("ignore", category=ConvergenceWarning)

METHODS = {
    "GrFL (30 features)": lambda: InfiniteFeatureClassifier(
        max_features=30, tol=0.0, random_state=0),
    "OBSCURE (40,000 steps, rows on the fly)": lambda: PNormMKLClassifier(
        max_steps=40_000, random_state=0),
    "SLKL (10 sweeps, M = 256)": lambda: LowRankKernelClassifier(
        max_iter=10, tol=0.0, random_state=0),
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", default="2000,4000,8000,16000,32000")
    ap.add_argument("--methods", default="grfl,obscure,slkl")
    args = ap.parse_args(argv)
    try:
        d = load_dataset("ijcnn1")
        Xtr, ytr = d.data, d.target
    except DatasetNotFoundError as exc:
        print(f"skip: {exc}")
        return
    Xtr = Xtr.toarray()
    sizes = [int(v) for v in args.sizes.split(",")]
    perm = np.random.default_rng(0).permutation(len(ytr))
    rows, slopes = [], []
    for key, (name, make) in zip(("grfl", "obscure", "slkl"), METHODS.items()):
        if key not in args.methods.split(","):
            continue
        # warm-up: loads the compiled (numba) loops once, outside the timings
        make().fit(Xtr[perm[:300]], ytr[perm[:300]])
        times = []
        for n in sizes:
            X, y = Xtr[perm[:n]], ytr[perm[:n]]
            est, t = timed(lambda: make().fit(X, y), args.repeats)
            times.append(t)
            extra = ""
            if isinstance(est, PNormMKLClassifier):
                upd = int(est.history_["n_updates"].sum())
                extra = (f"{upd} updates, {est.n_rows_computed_} rows; "
                         f"time/(updates n) {1e9 * t / (upd * n):.2f} ns")
            rows.append([name, n, t, extra])
            print(f"{name:42s} n={n:6d} {t:8.2f} s {extra}", flush=True)
        slope = np.polyfit(np.log(sizes), np.log(times), 1)[0]
        slopes.append([name, f"{sizes[0]}-{sizes[-1]}", slope])
        print(f"{name}: log-log slope {slope:.2f}", flush=True)
    print()
    print(markdown_table(["method", "n", "fit s (median)", "notes"], rows))
    print()
    print(markdown_table(["method", "n range", "log-log slope"], slopes))


if __name__ == "__main__":
    main()
