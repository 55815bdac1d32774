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

``--new-process-only`` times the last two alone (the precompile step once, then
``--runs`` new processes per estimator, interleaved): a quick check of the
goal for a new process.  Besides "new proc - warm" the tables give the same
with the import of the estimator's module counted in, and the worst run.

``--fresh-venv`` adds the whole path a new user takes: a new virtual
environment in a temporary folder, ``pip install`` of this repository into
it (not editable: the package is copied into its ``site-packages``, as a
user's install is), the precompile step run there, then the first fit of
each estimator in the first process of that environment (``venv first``)
and in a later one (``venv new proc``), both against the warm fits of that
same later process.  Installing needs the package index (or pip's cache)
and takes a few minutes; the environment is deleted afterwards.

Each process imports the estimator's module first (``import`` column, not part
of any fit; ``import kernlearn``: the package alone, part of it).  Every figure
is the median over ``--runs`` repetitions, each with its own empty cache
directory (``NUMBA_CACHE_DIR``), so the repository's own cache is left alone.  Wall-clock seconds are printed and, because a loaded
machine stretches them, CPU seconds of the process as well.  The goals
(issue 24): first fit after a fresh install at most 1 s slower than a warm
one, first fit in a new process at most 0.2 s slower.

Usage::

    python benchmarks/fgm_cold_start.py [--runs 3] [--only FGMClassifier ...]
        [--fresh-venv] [--new-process-only [--cache-dir DIR]] [--src DIR]
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
    "MultitaskMKLClassifier": "mtmkl",
}

CHILD = r"""
import json, sys, time, warnings
name, module = sys.argv[1], sys.argv[2]
clock = lambda: (time.perf_counter(), time.process_time())
c0 = clock()
import importlib
import kernlearn
ck = clock()
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
print(json.dumps({"import": [c1[0] - c0[0], c1[1] - c0[1]],
                  "import kernlearn": [ck[0] - c0[0], ck[1] - c0[1]], "first": first,
                  "warm": [sorted(w[i] for w in warm)[1] for i in (0, 1)]}))
"""


REPO = Path(__file__).resolve().parents[1]


# The package source the child processes import (``--src`` changes it, to time
# another version of the code against the same interpreter).
SRC = REPO / "src"


def _run(args, cache_dir, python=None):
    """Run ``python args`` with one thread; ``SRC`` first on the path and
    numba's cache in ``cache_dir`` unless ``python`` is another environment's
    interpreter (which uses its own installed copy and cache)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    # Python's bytecode cache on, as in an installed copy (pip compiles it): with
    # PYTHONDONTWRITEBYTECODE every process compiled kernlearn's sources again,
    # 0.012 s of GrFL's first fit (it imports its solver then) and part of "import"
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if python is None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
        env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    else:
        for var in ("NUMBA_CACHE_DIR", "PYTHONPATH", "VIRTUAL_ENV"):
            env.pop(var, None)
    out = subprocess.run([python or sys.executable, *args], capture_output=True, text=True,
                         env=env, check=True).stdout
    return out


def _child(name, cache_dir, python=None):
    return json.loads(_run(["-c", CHILD, name, ESTIMATORS[name]], cache_dir, python)
                      .strip().splitlines()[-1])


def _precompile(cache_dir, python=None):
    t0 = time.perf_counter()
    _run(["-m", "kernlearn._precompile", "--strict"], cache_dir, python)
    return time.perf_counter() - t0


def fresh_venv(names):
    """A new virtual environment with this repository installed into it (see the
    module docstring); per estimator the timings of its first process
    (``venv first``) and of a later one (``venv new proc``), and the seconds
    the install and the precompile step took."""
    res = {n: {} for n in names}
    with tempfile.TemporaryDirectory(prefix="kl-venv-") as tmp:
        venv = Path(tmp) / "venv"
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = str(venv / ("Scripts" if os.name == "nt" else "bin") / "python")
        subprocess.run([python, "-m", "pip", "install", "--quiet", str(REPO)], check=True)
        install = time.perf_counter() - t0
        pre = _precompile(None, python)
        for key in ("venv first", "venv new proc"):
            for n in names:
                res[n][key] = [_child(n, None, python)]
    return res, install, pre


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


def measure_new_process(names, runs, cache_dir=None):
    """Only the ``new proc`` scenario: the precompile step once (into
    ``cache_dir``, kept, or a temporary folder), then ``runs`` rounds of one new
    process per estimator, the estimators interleaved so that a change of the
    machine's load spreads over all of them."""
    res = {n: {"new proc": []} for n in names}
    with tempfile.TemporaryDirectory(prefix="kl-cold-") as tmp:
        cache = Path(cache_dir) if cache_dir else Path(tmp) / "installed"
        pre = [_precompile(cache)]
        for n in names:  # (a first process after the step; not timed)
            _child(n, cache)
        for r in range(runs):
            for n in names:
                res[n]["new proc"].append(_child(n, cache))
            print(f"run {r + 1}/{runs} done", file=sys.stderr, flush=True)
    return res, pre


def table(res, clock, keys=("no cache", "install", "new proc"), later="new proc"):
    """Rows of medians for one clock (0 = wall, 1 = CPU): per estimator the
    import and warm-fit seconds of the ``later`` process, each scenario's first
    fit minus that warm fit, and the ``later`` process's first / warm ratio."""
    med = lambda rows, key: statistics.median(row[key][clock] for row in rows)
    out = []
    for name, sc in res.items():
        warm = med(sc[later], "warm")
        row = [name, med(sc[later], "import kernlearn"), med(sc[later], "import"), warm]
        for key in keys:
            first = med(sc[key], "first")
            row += [first - warm]
        # the import of the estimator's module (kernlearn with it) counted in
        row += [statistics.median(r["import"][clock] + r["first"][clock] - r["warm"][clock]
                                  for r in sc[later])]
        row += [max(r["first"][clock] - r["warm"][clock] for r in sc[later])]
        row += [med(sc[later], "first") / max(warm, 1e-9)]
        out.append(row)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", nargs="*", choices=sorted(ESTIMATORS))
    parser.add_argument("--fresh-venv", action="store_true",
                        help="also install this repository into a new virtual environment "
                             "and time the first fits there")
    parser.add_argument("--new-process-only", action="store_true",
                        help="time only first fits in new processes after one precompile "
                             "step (quick; no empty-cache or first-install runs)")
    parser.add_argument("--cache-dir", help="with --new-process-only: numba's cache folder "
                        "(filled by the precompile step if needed, and kept)")
    parser.add_argument("--src", help="the package source to time (default: this checkout's)")
    args = parser.parse_args(argv)
    if args.src:
        global SRC
        SRC = Path(args.src).resolve()
    names = args.only or list(ESTIMATORS)
    if args.new_process_only:
        res, pre = measure_new_process(names, args.runs, args.cache_dir)
        keys = ("new proc",)
    else:
        res, pre = measure(names, args.runs)
        keys = ("no cache", "install", "new proc")
    header = (["estimator", "import kernlearn s", "import s", "warm fit s"] + [f"{k} - warm" for k in keys]
              + ["import + new proc - warm", "worst new proc - warm", "new proc / warm"])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"medians of {args.runs} runs, 100 x 10 data, OMP_NUM_THREADS=1, "
          f"load average {load:.1f}; precompile step {statistics.median(pre):.1f} s wall")
    print("\nwall-clock seconds\n")
    print(markdown_table(header, table(res, 0, keys)))
    print("\nCPU seconds of the process\n")
    print(markdown_table(header, table(res, 1, keys)))
    if args.fresh_venv:
        venv, install, pre = fresh_venv(names)
        print(f"\nfresh virtual environment: pip install {install:.0f} s, "
              f"precompile step {pre:.1f} s (wall)")
        header = ["estimator", "import kernlearn s", "import s", "warm fit s",
                  "venv first - warm",
                  "venv new proc - warm", "import + new proc - warm",
                  "worst new proc - warm", "new proc / warm"]
        for clock, label in ((0, "wall-clock"), (1, "CPU")):
            print(f"\n{label} seconds, one run\n")
            print(markdown_table(header, table(venv, clock, ("venv first", "venv new proc"),
                                               "venv new proc")))
    print("\ngoals: install - warm <= 1 s, new proc - warm <= 0.2 s")


if __name__ == "__main__":
    main()
