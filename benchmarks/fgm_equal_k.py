"""FGM(max_features=k) against l1-SVM / l1-LR read off their C paths at equal k.

The comparison of issue 21: for k = 10, 30, 100, 300 on Reuters (sparse text,
``../shared/datasets/reuters``) and, with ``--synthetic``, on the FGM paper's
synthetic Types I-III (sec. 6.2.1, 1000 x 2000, 100 informative features),
FGM at its defaults with ``max_features=k`` against LIBLINEAR's l1 models
whose accuracy at ``k`` is interpolated in log k on a C path (C from the value
that first selects a feature, times 1.25 per step).  See
:func:`kernlearn.demo.compare_at_equal_k`.

Usage::

    python benchmarks/fgm_equal_k.py [--synthetic] [--ks 10 30 100 300]
"""

import argparse
import bz2
import sys
import warnings
from pathlib import Path

import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from kernlearn.datasets import make_fgm_synthetic
from kernlearn.demo import compare_at_equal_k, format_table

REUTERS = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "reuters"


def _reuters():
    X, y = load_svmlight_file(bz2.open(REUTERS / "reuters.trn.bz2"))
    Xt, yt = load_svmlight_file(bz2.open(REUTERS / "reuters.tst.bz2"), n_features=X.shape[1])
    return sp.csc_matrix(X), y, sp.csr_matrix(Xt), yt


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", action="store_true")
    parser.add_argument("--ks", nargs="+", type=int, default=[10, 30, 100, 300])
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    sets = [("reuters", _reuters)]
    if args.synthetic:
        for kind in ("I", "II", "III"):
            sets.append((f"synthetic Type {kind}", lambda kind=kind: make_fgm_synthetic(
                1000, 2000, 100, weight_type=kind, n_test=1000, random_state=0)[:4]))
    for name, load in sets:
        X, y, Xt, yt = load()
        print(f"\n=== {name}: {X.shape[0]} x {X.shape[1]} ===")
        print(format_table(compare_at_equal_k(X, y, Xt, yt, args.ks)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
