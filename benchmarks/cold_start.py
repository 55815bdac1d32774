"""Cold start: each estimator's first fit after a fresh install and in a new process.

Numba writes compiled code to an on-disk cache (``cache=True``); a fresh install
has none, and ``python -m kernlearn._precompile`` (run by ``make install``,
``make demo`` and ``make test``) fills it.  For every estimator this script
times, in separate Python processes with ``OMP_NUM_THREADS=1``:

* ``no cache``: the first fit with an empty cache (an install without the
  precompile step: the fit compiles);
* ``install``: the first fit in the first process after the precompile step
  ran on an empty cache (a fresh ``make install``);
* ``new proc``: the first fit in a later process (cache written, files in the
  OS cache);
* ``warm``: the median of three more fits in that same process.

Each process imports the estimator's module first (``import`` column, not part
of any fit).  Every figure is the median over ``--runs`` repetitions, each with
its own empty cache directory (``NUMBA_CACHE_DIR``), so the repository's own
cache is left alone.  Wall-clock seconds are printed and, because a loaded
machine stretches them, CPU seconds of the process as well.  The goals
(issue 24): first fit after a fresh install at most 1 s slower than a warm
one, first fit in a new process at most 0.2 s slower.

Usage::

    python benchmarks/cold_start.py [--runs 3] [--only FGMClassifier ...]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import markdown_table

ESTIMATORS = {
    "FGMClassifier": "fgm",
    "FGMRegressor": "fgm",
    "InfiniteFeatureClassifier": "infinite",
    "InfiniteFeatureRegressor": "infinite",
    "PNormMKLClassifier": "pnorm_mkl",
    "LowRankKernelClassifier": "lowrank",
    "LowRankKernelRegressor": "lowrank",
    "MultitaskMKLRegressor": "mtmkl",
}

CHILD = r"""
import json, sys, time, warnings
name, module = sys.argv[1], sys.argv[2]
clock = lambda: (time.perf_counter(), time.process_time())
c0 = clock()
import importlib
est = getattr(importlib.import_module("kernlearn.estimators." + module), name)
import numpy as np
c1 = clock()
rng = np.random.default_rng(0)
X = rng.standard_normal((100, 10))
task = np.arange(100) % 3
y = X[:, 0] - X[:, 1] + 0.1 * rng.standard_normal(100)
if "Classifier" in name:
    y = (y > 0).astype(int)
kw = {"task_index": task} if name.startswith("Multitask") else {}
warnings.simplefilter("ignore")
def fit():
    a = clock(); est().fit(X, y, **kw); b = clock()
    return [b[0] - a[0], b[1] - a[1]]
first = fit()
warm = [fit() for _ in range(3)]
print(json.dumps({"import": [c1[0] - c0[0], c1[1] - c0[1]], "first": first,
                  "warm": [sorted(w[i] for w in warm)[1] for i in (0, 1)]}))
"""


def _run(args, cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), OMP_NUM_THREADS="1")
    src = Path(__file__).resolve().parents[1] / "src"
    env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                         env=env, check=True).stdout
    return out


def _child(name, cache_dir):
    return json.loads(_run(["-c", CHILD, name, ESTIMATORS[name]], cache_dir)
                      .strip().splitlines()[-1])


def _precompile(cache_dir):
    t0 = time.perf_counter()
    _run(["-m", "kernlearn._precompile", "--strict"], cache_dir)
    return time.perf_counter() - t0


def measure(names, runs):
    """Per estimator and scenario, the list over runs of the child's timings."""
    res = {n: {"no cache": [], "install": [], "new proc": []} for n in names}
    pre = []
    for r in range(runs):
        with tempfile.TemporaryDirectory(prefix="kl-cold-") as tmp:
            tmp = Path(tmp)
            for n in names:
                res[n]["no cache"].append(_child(n, tmp / f"empty-{n}"))
            pre.append(_precompile(tmp / "installed"))
            for n in names:
                res[n]["install"].append(_child(n, tmp / "installed"))
            for n in names:
                res[n]["new proc"].append(_child(n, tmp / "installed"))
        print(f"run {r + 1}/{runs} done", file=sys.stderr, flush=True)
    return res, pre


def table(res, clock):
    """Rows of medians for one clock (0 = wall, 1 = CPU)."""
    med = lambda rows, key: statistics.median(row[key][clock] for row in rows)
    out = []
    for name, sc in res.items():
        warm = med(sc["new proc"], "warm")
        row = [name, med(sc["new proc"], "import"), warm]
        for key in ("no cache", "install", "new proc"):
            first = med(sc[key], "first")
            row += [first - warm]
        row += [med(sc["new proc"], "first") / max(warm, 1e-9)]
        out.append(row)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", nargs="*", choices=sorted(ESTIMATORS))
    args = parser.parse_args(argv)
    names = args.only or list(ESTIMATORS)
    res, pre = measure(names, args.runs)
    header = ["estimator", "import s", "warm fit s", "no cache - warm", "install - warm",
              "new proc - warm", "new proc / warm"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"medians of {args.runs} runs, 100 x 10 data, OMP_NUM_THREADS=1, "
          f"load average {load:.1f}; precompile step {statistics.median(pre):.1f} s wall")
    print("\nwall-clock seconds\n")
    print(markdown_table(header, table(res, 0)))
    print("\nCPU seconds of the process\n")
    print(markdown_table(header, table(res, 1)))
    print("\ngoals: install - warm <= 1 s, new proc - warm <= 0.2 s")


if __name__ == "__main__":
    main()
