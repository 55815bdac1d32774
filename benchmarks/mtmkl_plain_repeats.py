"""The plain ``MultitaskMKLRegressor()``'s repeated rows found from its inputs
against the route before (issue 24): paired CPU times and the models' agreement.

The route before builds every task's whole kernel blocks and finds the repeated
rows from them (``fit.distinct_inputs`` switched off, the library's private
switch, in this process); the new one builds the blocks of each task's distinct
inputs only.  On each regression set of ``multitask_breadth.py`` (seed 0, at
most 2,000 training rows, as ``multitask_reg_times.py``) the two fits alternate
``--pairs`` times after a warm-up of each; the CPU medians, their ratio, the
pooled ``RidgeCV()`` baseline's median and the largest difference of the test
predictions (relative to their range) are printed.

Usage::

    python benchmarks/mtmkl_plain_repeats.py [--sets star,wage] [--pairs 9]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import multitask_breadth as mb
from multitask_reg_times import SETS, load_split

from kernlearn import MultitaskMKLRegressor
from kernlearn.methods.mtmkl import fit as mtfit


@contextmanager
def route_before():
    """The repeated rows found from the whole kernel blocks (before issue 24)."""
    real = mtfit.distinct_inputs
    mtfit.distinct_inputs = lambda *a: None
    try:
        yield
    finally:
        mtfit.distinct_inputs = real


def cpu(f):
    t0 = time.process_time()
    f()
    return time.process_time() - t0


def run_set(name, pairs):
    Xtr, ytr, ttr, ttr_i, Xte, tte_i, levels = load_split(name)

    def fit():
        return MultitaskMKLRegressor().fit(Xtr, ytr, task_index=ttr_i)

    with route_before():
        p_old = fit().predict(Xte, task_index=tte_i)
    p_new = fit().predict(Xte, task_index=tte_i)
    old, new = [], []
    for _ in range(pairs):
        with route_before():
            old.append(cpu(fit))
        new.append(cpu(fit))
    Atr = mb.with_tasks(Xtr, ttr, levels)
    pooled = [cpu(lambda: mb.make_baseline("reg", "pooled", len(levels)).fit(Atr, ytr))
              for _ in range(pairs)]
    diff = np.abs(p_new - p_old).max() / max(np.ptp(p_old), 1e-300)
    return (Xtr.shape, len(levels), np.median(old), np.median(new), np.median(pooled),
            diff)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--pairs", type=int, default=9)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    print("set        rows x d, tasks   before ms  after ms  before/after  "
          "pooled ms  after/pooled  max |dpred|/range")
    for name in args.sets.split(","):
        shape, T, old, new, pooled, diff = run_set(name, args.pairs)
        print(f"{name:10s} {shape[0]:5d} x {shape[1]:3d}, {T:3d}  {1e3 * old:9.1f} "
              f"{1e3 * new:9.1f}  {old / new:12.2f}  {1e3 * pooled:9.1f}  "
              f"{new / pooled:12.1f}  {diff:.1e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
