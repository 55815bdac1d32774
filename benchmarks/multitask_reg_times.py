"""Fit times of the two multitask regressors at defaults on the breadth benchmark's
regression sets, next to the pooled and per-task ``RidgeCV()`` baselines.

The sets, grouping and split are ``multitask_breadth.py``'s (seed 0, at most
2,000 training rows); each model is fitted ``--repeats`` times after one
warm-up fit, on the process CPU clock, and its median time is printed (the
fixed per-fit costs that matter when thousands of small models are fitted).
With ``--save`` the models' test predictions are written to an ``.npz`` file,
with ``--check`` compared with such a file (``rtol=1e-8``): run it on two
versions of the code to see that a change of speed left the models as they
were.

Usage::

    python benchmarks/multitask_reg_times.py [--sets carseats,wage] [--repeats 5]
        [--json out.json] [--save preds.npz | --check preds.npz]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import multitask_breadth as mb

from kernlearn import MultitaskMKLRegressor, MultitaskMKLRegressorCV

SETS = [name for name, spec in mb.SETS.items() if spec[0] == "reg"]
OURS = {"MultitaskMKLRegressor": MultitaskMKLRegressor,
        "MultitaskMKLRegressorCV": MultitaskMKLRegressorCV}


def cpu_median(fit, repeats):
    """Median CPU seconds of ``repeats`` calls of ``fit`` (after one untimed call)."""
    fit()
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fit()
        times.append(time.process_time() - t0)
    return float(np.median(times))


def load_split(name):
    """``name``'s split at seed 0: ``Xtr, ytr, ttr, ttr_i, Xte, tte_i, levels``.

    ``ttr`` are the training rows' task ids, ``ttr_i``/``tte_i`` the training and
    test rows' task numbers (positions in ``levels``, the sorted ids).
    """
    X, y, tasks, task, _ = mb.load(name)
    (Xtr, ytr, ttr), (Xte, _, tte) = mb.split(X, y, tasks, task, 2000, 0)
    levels = np.unique(tasks)
    ttr_i, tte_i = np.searchsorted(levels, ttr), np.searchsorted(levels, tte)
    return Xtr, ytr.astype(float), ttr, ttr_i, Xte, tte_i, levels


def run_set(name, repeats):
    """``{model: median CPU s}`` and ``{key: test predictions}`` of one set."""
    Xtr, ytr, ttr, ttr_i, Xte, tte_i, levels = load_split(name)
    times, preds = {}, {}
    for label, cls in OURS.items():
        times[label] = cpu_median(lambda cls=cls: cls().fit(Xtr, ytr, task_index=ttr_i),
                                  repeats)
        model = cls().fit(Xtr, ytr, task_index=ttr_i)
        preds[f"{name}|{label}"] = model.predict(Xte, task_index=tte_i)
    Atr = mb.with_tasks(Xtr, ttr, levels)
    for kind in ("pooled", "per task"):
        times[kind] = cpu_median(
            lambda kind=kind: mb.make_baseline("reg", kind, len(levels)).fit(Atr, ytr),
            repeats)
    return {"rows": list(Xtr.shape), "tasks": len(levels), "cpu": times}, preds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="write the times here")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--save", help="write the test predictions to this .npz file")
    group.add_argument("--check", help="compare the test predictions with this .npz file")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    out, preds = {}, {}
    for name in args.sets.split(","):
        out[name], p = run_set(name, args.repeats)
        preds.update(p)
        cpu = out[name]["cpu"]
        print(f"{name:10s} " + "  ".join(f"{k} {1e3 * v:.1f} ms" for k, v in cpu.items()),
              flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    if args.save:
        np.savez(args.save, **preds)
    if args.check:
        ref = np.load(args.check)
        bad = [k for k, v in preds.items()
               if not np.allclose(v, ref[k], rtol=1e-8, atol=0)]
        print("predictions: " + (f"DIFFERENT {bad}" if bad else "all equal (rtol 1e-8)"))
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
