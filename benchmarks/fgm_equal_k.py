"""FGM(max_features=k) against l1-SVM / l1-LR read off their C paths at equal k.

The comparison of issue 21: for k = 10, 30, 100, 300 on Reuters (sparse text,
``../shared/datasets/reuters``) and, with ``--synthetic``, on the FGM paper's
synthetic Types I-III (sec. 6.2.1, 1000 x 2000, 100 informative features),
FGM at its defaults with ``max_features=k`` against LIBLINEAR's l1 models
whose accuracy at ``k`` is interpolated in log k on a C path (C from the value
that first selects a feature, times 1.25 per step).  See
:func:`kernlearn.demo.compare_at_equal_k`.

``--suite`` adds the dense classification sets of ``../shared/datasets/suite/``
(raw values; FGM standardises them at its default, the l1 models get a
``StandardScaler`` fitted on the training rows as a user would give them), each
split 70/30 with a fixed seed (stratified) and capped at ``--max-rows`` training
rows, with ``k`` capped at the number of columns.  ``--json FILE`` stores every
row; ``--fgm key=value`` passes extra FGMClassifier parameters.  Multiclass
sets: LinearSVC's l1 model is one-vs-rest, l1-LR is wrapped in
``OneVsRestClassifier`` (LIBLINEAR's l1-LR is binary), and a feature counts
when any class uses it (as FGM's shared selection counts it).  When ``k`` is
the number of columns, the path stops at its first ``C`` using every column.

Times are wall seconds in one process (FGM fitted once per ``k``, after a
warm-up fit; each l1 time is the sum of its path's fits up to the first
``C`` with at least ``k`` features).

Usage::

    python benchmarks/fgm_equal_k.py [--synthetic] [--suite] [--no-reuters]
        [--ks 10 30 100 300] [--sets name ...] [--max-rows 5000] [--json FILE]
"""

import os

# One thread for both sides, before numpy loads its BLAS (as suite.py).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from kernlearn import FGMClassifier  # noqa: E402
from kernlearn.datasets import DatasetNotFoundError, make_fgm_synthetic  # noqa: E402
from kernlearn.demo import compare_at_equal_k, format_table, l1_paths  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _common import reuters_split  # noqa: E402
from suite import load_set, split_capped, suite_dir, suite_sets  # noqa: E402

def _reuters():
    X, y, Xt, yt = reuters_split()
    return sp.csc_matrix(X), y, Xt, yt


def _suite_set(name, max_rows, seed):
    """Raw dense train/test split of one suite classification set."""
    X, y, task = load_set(name, "clf")
    Xtr, ytr, Xte, yte = split_capped(X, y, task, max_rows, seed)
    return Xtr, ytr, Xte, yte


def _value(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", action="store_true")
    parser.add_argument("--suite", action="store_true")
    parser.add_argument("--no-reuters", action="store_true")
    parser.add_argument("--sets", nargs="+", help="only these suite sets")
    parser.add_argument("--ks", nargs="+", type=int, default=[10, 30, 100, 300])
    parser.add_argument("--max-rows", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fgm", nargs="*", default=[], metavar="KEY=VALUE")
    parser.add_argument("--json", help="write every row to this file")
    parser.add_argument("--l1-cache", help="folder keeping the l1 paths between runs "
                        "(they do not depend on FGM)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    fgm_params = dict((k, _value(v)) for k, v in (item.split("=", 1) for item in args.fgm))
    sets = [] if args.no_reuters else [("reuters", _reuters, False)]
    if args.synthetic:
        for kind in ("I", "II", "III"):
            sets.append((f"synthetic Type {kind}", lambda kind=kind: make_fgm_synthetic(
                1000, 2000, 100, weight_type=kind, n_test=1000, random_state=0)[:4], False))
    if args.suite and not suite_dir().is_dir():
        print(f"skip --suite: no suite folder {suite_dir()} (set KERNLEARN_DATA)")
    elif args.suite:
        for name, task in suite_sets(suite_dir()).items():
            if task == "clf" and (not args.sets or name in args.sets):
                sets.append((name, lambda name=name: _suite_set(
                    name, args.max_rows, args.seed), True))
    # compiled code loaded before anything is timed
    Xw, yw = make_fgm_synthetic(100, 30, 5, random_state=0)[:2]
    FGMClassifier(max_features=5, **fgm_params).fit(Xw, yw)
    out = []
    for name, load, dense in sets:
        try:
            X, y, Xt, yt = load()
        except DatasetNotFoundError as exc:  # absent data: say so, run the rest
            print(f"\nskip {name}: {exc}", flush=True)
            continue
        ks = sorted({min(k, X.shape[1]) for k in args.ks})
        print(f"\n=== {name}: {X.shape[0]} x {X.shape[1]}, {np.unique(y).size} classes ===")
        cache = (Path(args.l1_cache) / f"{name}-{max(ks)}-{args.max_rows}-{args.seed}.json"
                 if args.l1_cache else None)
        if cache is not None and cache.exists():
            paths = json.loads(cache.read_text())
        else:
            paths = l1_paths(X, y, Xt, yt, max(ks), scale_l1=dense)
            if cache is not None:
                cache.parent.mkdir(parents=True, exist_ok=True)
                cache.write_text(json.dumps(paths))
        rows = compare_at_equal_k(X, y, Xt, yt, ks, fgm_params=fgm_params, paths=paths)
        print(format_table(rows), flush=True)
        out += [{"set": name, **r} for r in rows]
    print("\n" + summary(out))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


def summary(rows):
    """One line: pairs where FGM >= the better l1 model, and where it is faster.

    Also the total shortfall (points summed over the pairs below the better l1
    model) and, of those pairs, how many are only below l1-LR: FGM's squared
    hinge at or above the l1-SVM's (the same loss), a loss difference rather
    than a selection one.
    """
    scored = [r for r in rows if np.isfinite(r["best l1"])]
    met = sum(r["FGM - best l1"] >= 0 for r in scored)
    short = [r for r in scored if r["FGM - best l1"] < 0]
    lr_only = sum(np.isfinite(r["l1-SVM"]) and r["FGM"] >= r["l1-SVM"] for r in short)
    faster = sum(r["FGM time"] <= np.nanmin([r["l1-SVM time"], r["l1-LR time"]])
                 for r in scored)
    worst = min(scored, key=lambda r: r["FGM - best l1"], default=None)
    text = (f"FGM >= better l1 model at {met}/{len(scored)} (set, k) pairs; FGM time <= "
            f"the faster l1 path to k at {faster}/{len(scored)}; total shortfall "
            f"{100 * sum(r['FGM - best l1'] for r in short):+.2f} points, {lr_only} of the "
            f"{len(short)} pairs below only l1-LR")
    if worst is not None:
        text += (f"; worst {100 * worst['FGM - best l1']:+.2f} points "
                 f"({worst['set']}, k={worst['k']})")
    return text


if __name__ == "__main__":
    sys.exit(main())
