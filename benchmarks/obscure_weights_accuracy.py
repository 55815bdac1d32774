"""OBSCURE with ``class_weight="balanced"`` against a balanced SVC, on the suite's imbalanced sets.

Audit 116: audit 115 changed how OBSCURE's epochs visit rows of unequal weight
(systematic visits in proportion to the weight instead of i.i.d. draws).  This
script fits ``PNormMKLClassifier(class_weight="balanced")`` and
``StandardScaler + SVC(class_weight="balanced")`` on every suite classification
set whose largest class has at least 1.5 times the rows of its smallest, on a
stratified 70/30 split per seed (training rows capped at ``--max-train``,
stratified), and prints one JSON line per (set, seed) with the held-out
accuracy, balanced accuracy, CPU seconds (``time.process_time``, one thread),
OBSCURE's epochs and whether it warned unconverged.  Run it once per code
version (``PYTHONPATH`` selects the library) and compare the lines::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/obscure_weights_accuracy.py \
        --seeds 0,1,2 [--sets kc1,pc1] [--max-train 1500] [--no-svc]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.metrics import accuracy_score, balanced_accuracy_score  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _common import parse_seeds  # noqa: E402

from kernlearn import PNormMKLClassifier  # noqa: E402
from kernlearn.datafiles import _open  # noqa: E402
from kernlearn.datasets import data_home  # noqa: E402


def imbalanced_sets(suite, ratio=1.5):
    """Suite classification sets whose largest class has ``ratio`` times the smallest's rows."""
    rows = (suite / "MANIFEST.md").read_text().splitlines()
    names = [r.split("|")[1].strip() for r in rows if "| classification |" in r]
    out = []
    for name in names:
        counts = pd.read_csv(_open(suite / f"{name}.csv.xz"))["target"].value_counts()
        if counts.max() >= ratio * counts.min():
            out.append(name)
    return out


def split(suite, name, seed, max_train, max_test=3000):
    df = pd.read_csv(_open(suite / f"{name}.csv.xz"))
    X, y = df.iloc[:, :-1].to_numpy(float), df["target"].astype(str).to_numpy()
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed,
                                          stratify=y)
    if len(ytr) > max_train:
        Xtr, _, ytr, _ = train_test_split(Xtr, ytr, train_size=max_train,
                                          random_state=seed, stratify=ytr)
    return Xtr, Xte[:max_test], ytr, yte[:max_test]


def measure(model, Xtr, ytr, Xte, yte):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.process_time()
        model.fit(Xtr, ytr)
        cpu = time.process_time() - t0
    pred = model.predict(Xte)
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return dict(acc=accuracy_score(yte, pred), bacc=balanced_accuracy_score(yte, pred),
                cpu=cpu, warned=warned)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--sets", default=None)
    ap.add_argument("--max-train", type=int, default=1500)
    ap.add_argument("--no-svc", action="store_true")
    args = ap.parse_args(argv)
    suite = data_home() / "suite"
    if not (suite / "MANIFEST.md").exists():
        print(f"skip: no suite data in {suite}")
        return 0
    names = args.sets.split(",") if args.sets else imbalanced_sets(suite)
    # compile the loops once (steady-state CPU times)
    Xw = np.random.default_rng(0).normal(size=(60, 3))
    PNormMKLClassifier(class_weight="balanced").fit(Xw, Xw[:, 0] > 0.5)
    for name in names:
        for seed in parse_seeds(args.seeds):
            Xtr, Xte, ytr, yte = split(suite, name, seed, args.max_train)
            mkl = PNormMKLClassifier(class_weight="balanced", random_state=seed)
            row = dict(set=name, seed=seed, n=len(ytr),
                       mkl=measure(mkl, Xtr, ytr, Xte, yte), epochs=int(mkl.n_iter_))
            if not args.no_svc:
                svc = make_pipeline(StandardScaler(), SVC(class_weight="balanced"))
                row["svc"] = measure(svc, Xtr, ytr, Xte, yte)
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
