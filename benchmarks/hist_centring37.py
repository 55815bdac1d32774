"""Accuracy of ``kernel="hik"`` on dense non-negative suite sets: centred (before) vs scaled only (after).

Issue 21, thirty-sixth pass: under ``standardize=True`` the histogram kernels
now see the columns scaled, never centred, on dense input as on sparse.
Before, dense columns were centred first (``hik`` then compared absolute
values of centred columns, ``x`` and ``-x`` alike, and warned).

"Before" is computed in the same run as the former code computed it: the
estimator with ``standardize=False`` on the columns centred and scaled by the
library's own map (:func:`kernlearn.preprocessing.fit_standardization`), which
is the input the former code gave ``hik`` (the low-rank classifier's +-1
codes are not standardised either way).  "After" is the estimator at its
defaults on the raw columns.  Each set: a stratified 70/30 split per seed, at
most ``--max-train`` training rows and 2,000 test rows; printed per set and
seed the test accuracies and their difference, then the median difference per
estimator.

Usage::

    python benchmarks/hist_centring37.py [--seeds 0,1,2] [--max-train 1000]
        [--sets mfeat-pixel,semeion,...]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table, parse_seeds  # noqa: E402

from kernlearn import LowRankKernelClassifier, PNormMKLClassifier  # noqa: E402
from kernlearn.datafiles import _open  # noqa: E402
from kernlearn.datasets import DatasetNotFoundError, data_home  # noqa: E402
from kernlearn.preprocessing import fit_standardization  # noqa: E402

# count / pixel / histogram-like sets of the suite whose features are all >= 0
SETS = ("mfeat-pixel", "semeion", "pendigits", "letter", "one-hundred-plants-texture", "kc1")
ESTIMATORS = {
    "PNormMKL hik": lambda **kw: PNormMKLClassifier(kernels=["hik"], random_state=0, **kw),
    "LowRank hik": lambda **kw: LowRankKernelClassifier(kernel="hik", random_state=0, **kw),
}


def split(name, seed, max_train):
    """Training and test rows of suite set ``name`` (raw values, target last)."""
    path = data_home() / "suite" / f"{name}.csv.xz"
    if not path.exists():
        raise DatasetNotFoundError(f"{path} is absent")
    df = pd.read_csv(_open(path))
    X, y = df.iloc[:, :-1].to_numpy(np.float64), df["target"].astype(str).to_numpy()
    assert (X >= 0).all(), name
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
    if len(ytr) > max_train:
        Xtr, _, ytr, _ = train_test_split(Xtr, ytr, train_size=max_train, random_state=seed,
                                          stratify=ytr)
    return Xtr, Xte[:2000], ytr, yte[:2000]


def accuracies(make, Xtr, Xte, ytr, yte):
    """(before, after): centred-and-scaled columns as the former code's, scaled only."""
    st = fit_standardization(Xtr)  # (the former dense map: centred and scaled)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (before: hik's negative values; convergence)
        before = make(standardize=False).fit(st.transform(Xtr), ytr)
        after = make().fit(Xtr, ytr)
    return (float(np.mean(before.predict(st.transform(Xte)) == yte)),
            float(np.mean(after.predict(Xte) == yte)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--max-train", type=int, default=1000)
    ap.add_argument("--sets", default=",".join(SETS))
    args = ap.parse_args()
    rows, diffs = [], {k: [] for k in ESTIMATORS}
    for name in args.sets.split(","):
        for seed in parse_seeds(args.seeds):
            try:
                data = split(name, seed, args.max_train)
            except DatasetNotFoundError as e:
                print(f"skipped {name}: {e}")
                break
            for label, make in ESTIMATORS.items():
                b, a = accuracies(make, *data)
                diffs[label].append(a - b)
                rows.append([name, seed, label, f"{b:.4f}", f"{a:.4f}", f"{a - b:+.4f}"])
                print(*rows[-1], flush=True)
    print(markdown_table(["set", "seed", "estimator", "before (centred)", "after (scaled)",
                          "after - before"], rows))
    for label, d in diffs.items():
        if d:
            print(f"{label}: median {np.median(d):+.4f}, mean {np.mean(d):+.4f}, "
                  f"better {sum(x > 0 for x in d)}, worse {sum(x < 0 for x in d)}, "
                  f"equal {sum(x == 0 for x in d)} of {len(d)}")


if __name__ == "__main__":
    main()
