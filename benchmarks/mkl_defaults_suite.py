"""PNormMKLClassifier's default kernels and C, measured on the suite's classification sets.

How the defaults of issue 21 were chosen: every classification set of
``../shared/datasets/suite`` (raw values, target last), a 70/30 split (seed 0),
at most ``--max-train`` training rows (stratified subsample) and 2,000 test
rows; the baseline is ``make_pipeline(StandardScaler(), SVC())``.  Each variant
is ``PNormMKLClassifier`` on the same standardised columns with RBF kernels at
multiples of ``gamma="scale"`` (:math:`1/D` there) plus the linear kernel:

* ``default``: the estimator at its defaults on the raw columns;
* ``w1``, ``w2``, ``w3``: RBF at (1,), (0.5, 2), (0.25, 1, 4) x scale, at ``--C``.

Printed per set: accuracy gap to the baseline and the fit-time ratio; then per
variant the share of sets within one point, the worst gap and the median / max
time ratio.

Usage::

    python benchmarks/mkl_defaults_suite.py [--max-train 1000] [--C 1]
        [--variants default,w1,w2,w3] [--sets iris,wdbc,...]
"""

import os

# One thread for both sides, before numpy loads its BLAS (as suite.py).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402

from kernlearn import PNormMKLClassifier  # noqa: E402
from kernlearn.datafiles import _open  # noqa: E402
from kernlearn.datasets import DatasetNotFoundError, data_home  # noqa: E402
from kernlearn.kernels import resolve_gamma  # noqa: E402

WIDTHS = {"w1": (1.0,), "w2": (0.5, 2.0), "w3": (0.25, 1.0, 4.0)}


def classification_sets(suite):
    """Names of the classification sets listed in the suite's MANIFEST."""
    rows = (suite / "MANIFEST.md").read_text().splitlines()
    return [r.split("|")[1].strip() for r in rows if "| classification |" in r]


def split(name, max_train):
    df = pd.read_csv(_open(data_home() / "suite" / f"{name}.csv.xz"))
    X, y = df.iloc[:, :-1].to_numpy(float), df["target"].astype(str).to_numpy()
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
    if len(ytr) > max_train:
        Xtr, _, ytr, _ = train_test_split(Xtr, ytr, train_size=max_train,
                                          random_state=0, stratify=ytr)
    return Xtr, Xte[:2000], ytr, yte[:2000]


def fit_variant(variant, Xtr, ytr, C):
    if variant == "default":
        return PNormMKLClassifier(random_state=0).fit(Xtr, ytr)
    g = resolve_gamma("scale", Xtr)
    kernels = [("rbf", {"gamma": c * g}) for c in WIDTHS[variant]] + ["linear"]
    return PNormMKLClassifier(kernels=kernels, C=C, standardize=False,
                              random_state=0).fit(Xtr, ytr)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-train", type=int, default=1000)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--variants", default="default,w1,w2,w3")
    ap.add_argument("--sets", default=None)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    variants = args.variants.split(",")
    suite = data_home() / "suite"  # $KERNLEARN_DATA honoured, as suite.py
    if not (suite / "MANIFEST.md").exists():
        print(f"skip: no suite data in {suite} (set KERNLEARN_DATA to the folder that "
              "holds suite/)")
        return
    names = args.sets.split(",") if args.sets else classification_sets(suite)
    # load the compiled loops once (steady-state times, as the suite benchmark)
    rng = np.random.default_rng(0)
    PNormMKLClassifier(random_state=0).fit(rng.normal(size=(30, 3)), np.arange(30) % 3)
    gaps = {v: [] for v in variants}
    ratios = {v: [] for v in variants}
    for name in names:
        try:
            Xtr, Xte, ytr, yte = split(name, args.max_train)
        except DatasetNotFoundError as exc:  # absent data: say so, run the rest
            print(f"skip {name}: {exc}", flush=True)
            continue
        t0 = time.perf_counter()
        base = make_pipeline(StandardScaler(), SVC()).fit(Xtr, ytr)
        t_base = max(time.perf_counter() - t0, 1e-3)
        acc_base = base.score(Xte, yte)
        line = [f"{name:32s} n={len(ytr):5d} SVC {acc_base:.3f}"]
        for v in variants:
            sc = None if v == "default" else StandardScaler().fit(Xtr)
            A = Xtr if sc is None else sc.transform(Xtr)
            B = Xte if sc is None else sc.transform(Xte)
            t0 = time.perf_counter()
            clf = fit_variant(v, A, ytr, args.C)
            t = time.perf_counter() - t0
            gaps[v].append(clf.score(B, yte) - acc_base)
            ratios[v].append(t / t_base)
            line.append(f"{v} {gaps[v][-1]:+.3f} ({ratios[v][-1]:.1f}x)")
        print(" | ".join(line), flush=True)
    if not gaps[variants[0]]:
        return  # every set skipped
    rows = []
    for v in variants:
        g, r = np.array(gaps[v]), np.array(ratios[v])
        rows.append([v, f"{np.mean(g >= -0.01) * 100:.0f} %", f"{g.min():+.3f}",
                     f"{np.median(r):.1f}", f"{r.max():.1f}"])
    print(markdown_table(["variant", "within 1 point", "worst gap", "median time ratio",
                          "max time ratio"], rows))


if __name__ == "__main__":
    main()
