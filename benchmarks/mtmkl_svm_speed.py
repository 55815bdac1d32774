"""Fit time of the multitask classifiers' SVM duals: this code against an older one.

``MultitaskMKLClassifier()`` and ``MultitaskMKLClassifierCV()`` at defaults on
the seven classification sets of ``multitask_breadth.py`` (its loader, grouping
rule and split, one seed), next to the pooled ``SVC()`` one-liner of that
benchmark (``StandardScaler()``, inputs plus one-hot task columns), and the
CV classifier next to that benchmark's ``GridSearchCV(SVC())`` over the same C
grid and folds.  Each fit
is timed on the process CPU clock, ``OMP_NUM_THREADS=1``, after one tiny
warm-up fit; the median of ``--repeats`` fits is reported.

The older code runs in a child process whose ``PYTHONPATH`` is ``--old`` (the
``src`` folder of another checkout, e.g. ``git worktree add /tmp/old 7f4cb50``):
the child writes its times, test accuracies, objectives and test decision
values to a file, and the table puts both side by side with the largest
difference of the decision values on the test rows.

Usage::

    python benchmarks/mtmkl_svm_speed.py --old /tmp/old/src [--sets verbagg,oj]
        [--estimators plain,cv] [--seed 0] [--repeats 3] [--rounds 1] [--md out.md]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).parent))
import multitask_breadth as mb
from _common import markdown_table

SETS = ("penguins", "oj", "cowles", "caravan", "default", "turnout", "verbagg")
ESTIMATORS = {"plain": "MultitaskMKLClassifier", "cv": "MultitaskMKLClassifierCV"}


def _estimator(which):
    import kernlearn

    return getattr(kernlearn, ESTIMATORS[which])()


def _median_cpu(make, repeats, *fit_args, **fit_kw):
    """``(last fitted model, median CPU s)`` of ``make().fit(*fit_args, **fit_kw)``."""
    times = []
    for _ in range(repeats):
        c0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = make().fit(*fit_args, **fit_kw)
        times.append(time.process_time() - c0)
    return out, statistics.median(times)


def measure(sets, estimators, seed, repeats, baseline=True):
    """``{set: {which: {cpu, acc, objective, C, decision}, "svc": cpu}}``."""
    rng = np.random.default_rng(0)
    Xw, tw = rng.normal(size=(60, 3)), np.arange(60) % 2
    yw = np.where(Xw[:, 0] > 0, "a", "b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for which in estimators:  # compiled code loaded before the timed fits
            _estimator(which).fit(Xw, yw, task_index=tw)
    out = {}
    for name in sets:
        X, y, tasks, task, _ = mb.load(name)
        (Xtr, ytr, ttr), (Xte, yte, tte) = mb.split(X, y, tasks, task, 2000, seed)
        levels = np.unique(tasks)
        t_tr, t_te = np.searchsorted(levels, ttr), np.searchsorted(levels, tte)
        row = {}
        if baseline:
            n_tasks = len(levels)
            _, row["svc"] = _median_cpu(lambda n=n_tasks: mb.Pooled(SVC, n), repeats,
                                        mb.with_tasks(Xtr, ttr, levels), ytr)
            if "cv" in estimators:  # (the CV's own baseline: its grid and folds)
                _, row["grid"] = _median_cpu(
                    lambda n=n_tasks: mb.make_baseline("clf", "grid", n), repeats,
                    mb.with_tasks(Xtr, ttr, levels), ytr)
        for which in estimators:
            est, cpu = _median_cpu(lambda w=which: _estimator(w), repeats, Xtr, ytr,
                                   task_index=t_tr)
            row[which] = {
                "cpu": cpu,
                "acc": float((est.predict(Xte, task_index=t_te) == yte).mean()),
                "objective": float(est.objective_), "C": float(est.C_),
                "decision": est.decision_function(Xte, task_index=t_te).tolist()}
        out[name] = row
    return out


def table(new, old, estimators):
    """Markdown rows: CPU s and ratios against the pooled ``SVC()``, agreement.

    The objective is MK-MTFL's (minimised over the kernel weights): a
    negative difference is a better one.
    """
    grid = "cv" in estimators and all("grid" in r for r in (*new.values(), *old.values()))
    header = ["set", "SVC() CPU s old / new"] + ["grid search CPU s old / new"] * grid
    for w in estimators:
        header += [f"{ESTIMATORS[w]} old / new CPU s", "ratio to SVC old / new"]
        header += ["ratio to grid search old / new"] * (grid and w == "cv")
        header += ["speed-up", "accuracy old / new", "max |decision diff|",
                   "objective (new - old) / old"]
    rows = []
    ratios = {(w, base): [] for w in estimators for base in ("svc", "grid")
              if base == "svc" or (grid and w == "cv")}
    for name, r in new.items():
        # (each side's ratio to its own process's baselines)
        line = [name, f"{old[name]['svc']:.3g} / {r['svc']:.3g}"]
        if grid:  # (not measured without the CV estimator)
            line.append(f"{old[name]['grid']:.3g} / {r['grid']:.3g}")
        for w in estimators:
            a, b = old[name][w], r[w]
            diff = np.abs(np.subtract(a["decision"], b["decision"])).max()
            rel = (b["objective"] - a["objective"]) / abs(a["objective"])
            line.append(f"{a['cpu']:.3g} / {b['cpu']:.3g}")
            for base in ("svc", "grid"):
                if (w, base) in ratios:
                    pair = (a["cpu"] / old[name][base], b["cpu"] / r[base])
                    ratios[w, base].append(pair)
                    line.append(f"{pair[0]:.3g} / {pair[1]:.3g}")
            line += [f"{a['cpu'] / b['cpu']:.3g}x",
                     f"{100 * a['acc']:.2f} / {100 * b['acc']:.2f} %", f"{diff:.2g}",
                     f"{rel:.1e}"]
        rows.append(line)
    lines = [markdown_table(header, rows), ""]
    label = {"svc": "pooled SVC()", "grid": "the grid search"}
    for (w, base), rs in ratios.items():
        o, n = np.array(rs).T
        lines.append(f"- {ESTIMATORS[w]}: CPU time / {label[base]} median "
                     f"{np.median(o):.3g} -> {np.median(n):.3g}, max {o.max():.3g} -> "
                     f"{n.max():.3g}")
    return "\n".join(lines)


def combine(results):
    """One result of several rounds' (:func:`measure`'s): the median CPU time of
    each fit over the rounds, the rest of the last round."""
    out = json.loads(json.dumps(results[-1]))
    for name, row in out.items():
        for key, val in row.items():
            if isinstance(val, dict):
                val["cpu"] = statistics.median(r[name][key]["cpu"] for r in results)
            else:
                row[key] = statistics.median(r[name][key] for r in results)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", help="src folder of the older checkout (child process)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--estimators", default="plain,cv")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1,
                    help="alternate the older and this code's children this many "
                         "times (each --repeats fits), the median of the rounds")
    ap.add_argument("--md", default=None, help="write the table here")
    ap.add_argument("--old-result", default=None,
                    help="reuse the older code's measurements written by a previous "
                         "child (--worker-out) instead of running it")
    ap.add_argument("--new-result", default=None,
                    help="likewise for this code: only print the table of the two files")
    ap.add_argument("--worker-out", default=None,
                    help="child mode: measure this process's code, write them here")
    args = ap.parse_args(argv)
    sets = [s for s in args.sets.split(",") if s]
    estimators = [e for e in args.estimators.split(",") if e]
    bad = [s for s in sets if s not in SETS] + [e for e in estimators if e not in ESTIMATORS]
    if bad:
        ap.error(f"unknown set(s) or estimator(s): {', '.join(bad)}")
    if args.worker_out:  # the child: the older code (the baseline's time too)
        res = measure(sets, estimators, args.seed, args.repeats)
        Path(args.worker_out).write_text(json.dumps(res))
        return
    if args.rounds > 1 and args.old and not (args.old_result or args.new_result):
        # (alternating, so that both codes see the same load of a shared machine)
        here = str(Path(__file__).resolve().parents[1] / "src")
        both = [[_run_old(src, sets, estimators, args.seed, args.repeats)
                 for src in (args.old, here)] for _ in range(args.rounds)]
        old, new = combine([b[0] for b in both]), combine([b[1] for b in both])
    else:
        if args.old_result:
            old = json.loads(Path(args.old_result).read_text())
        elif not args.old:
            ap.error("--old (the src folder of the checkout to compare with) is needed")
        else:
            old = _run_old(args.old, sets, estimators, args.seed, args.repeats)
        new = (json.loads(Path(args.new_result).read_text()) if args.new_result
               else measure(sets, estimators, args.seed, args.repeats))
    text = table(new, old, estimators)
    print(text)
    if args.md:
        Path(args.md).write_text(text + "\n")


def _run_old(src, sets, estimators, seed, repeats):
    """The older code's :func:`measure` in a child process on ``src``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "old.json"
        env = dict(os.environ, PYTHONPATH=str(Path(src).resolve()))
        subprocess.run([sys.executable, __file__, "--sets", ",".join(sets), "--estimators",
                        ",".join(estimators), "--seed", str(seed), "--repeats",
                        str(repeats), "--worker-out", str(path)], env=env, check=True)
        return json.loads(path.read_text())


if __name__ == "__main__":
    main()
