"""The cost on normal fits of the row-block FGM fix (issue 21, audit 105).

Merge ``70da6cc3`` added, on every fit: the pool's screening scoring a group
whose bound is NaN (one comparison per group and pricing), the dense weighted
column norms leaving zero-weight rows out (a mask per block), and, by row
blocks with rows of zero weight, the master's active columns filled with the
first kept row's values (:func:`kernlearn.partitioned.kept_row_columns`, one
row read per pricing).  This script times three normal fits under the source
tree before the merge (the anchor, ``--anchor-src``) and the current one, each
fit in its own process, A/B alternated, and prints CPU-time medians and ratios.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/fgm_row_blocks_cost.py \\
        --anchor-src /path/to/checkout-before/src [--repeats 5]
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CASES = ("groups_screening", "row_blocks_weighted", "row_blocks_plain")


def _one(case):
    """CPU seconds of one fit of ``case`` (run in a child process)."""
    import time
    import warnings

    from kernlearn import FGMClassifier, FGMRegressor

    rng = np.random.default_rng(0)
    if case == "groups_screening":
        # 500 groups of 4: the screening's bounds are computed at every pricing
        n, d = 1500, 2000
        X = rng.standard_normal((n, d))
        y = (X[:, :8].sum(1) + rng.standard_normal(n) > 0).astype(int)
        groups = [list(range(j, j + 4)) for j in range(0, d, 4)]
        model, kw = FGMClassifier(B=2, max_iter=10, groups=groups), {}
    else:
        n, d = 60000, 40
        X = rng.standard_normal((n, d))
        y = X[:, :5] @ np.arange(1.0, 6.0) + 0.3 * rng.standard_normal(n)
        sw = rng.uniform(0.5, 2.0, n)
        if case == "row_blocks_weighted":
            sw[rng.random(n) < 0.2] = 0.0
        model, kw = FGMRegressor(B=2, C=1.0, max_iter=10, memory_budget="2MB"), \
            {"sample_weight": sw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)  # (warm-up: numba and imports)
        t0 = time.process_time()
        model.fit(X, y, **kw)
        return time.process_time() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--anchor-src", help="the src/ directory of the checkout before the merge")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--case", choices=CASES, help=argparse.SUPPRESS)  # (a child's run)
    args = ap.parse_args(argv)
    if args.case:
        print(json.dumps(_one(args.case)))
        return
    if not args.anchor_src:
        ap.error("--anchor-src is required")
    trees = {"anchor": args.anchor_src, "ours": str(HERE.parent / "src")}
    env = dict(os.environ, OMP_NUM_THREADS="1")
    print(f"{'case':22s} {'anchor s':>9s} {'ours s':>9s} {'ours/anchor':>11s}")
    for case in CASES:
        times = {k: [] for k in trees}
        for _ in range(args.repeats):
            for name, src in trees.items():  # (A/B alternated)
                out = subprocess.run([sys.executable, __file__, "--case", case],
                                     env=dict(env, PYTHONPATH=src), check=True,
                                     capture_output=True, text=True).stdout
                times[name].append(json.loads(out.strip().splitlines()[-1]))
        a, o = np.median(times["anchor"]), np.median(times["ours"])
        print(f"{case:22s} {a:9.3f} {o:9.3f} {o / a:11.3f}", flush=True)


if __name__ == "__main__":
    main()
