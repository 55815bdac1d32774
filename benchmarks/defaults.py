"""Every estimator at its default settings against the one-line scikit-learn baseline.

In one run, on the real data sets of the data folder (held-out test split: the
official one where the set has it, else a stratified 25 % split with seed 0),
fit each kernlearn estimator with no argument and the scikit-learn estimator a
user would otherwise type, and print test accuracy (classification) or MSE
(regression), fit time (median of ``--repeats``) and the ratios.

GrFL, OBSCURE and SLKL are run by ``benchmarks/defaults_kernel.py`` (their
baselines: ``Nystroem + LinearSVC / RidgeCV``, ``SVC()``), which this script
calls after FGM unless ``--only fgm`` is given.

Usage::

    python benchmarks/defaults.py [--repeats 3] [--only fgm|grfl|obscure|slkl]
        [--out benchmarks/out]
"""

import os

# One BLAS thread for both sides, set before numpy loads (as suite.py): on a
# shared machine neither side's time then counts threads the other does not use.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import sys
import warnings
from pathlib import Path

from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LassoCV
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import train_test_split
from sklearn.svm import LinearSVC

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table, timed  # noqa: E402

from kernlearn import FGMClassifier, FGMRegressor  # noqa: E402
from kernlearn.datasets import DatasetNotFoundError, load_dataset  # noqa: E402


def split(name, classification=True):
    """``Xtr, ytr, Xte, yte`` of a named set: its own test file, else a 25 % split."""
    data = load_dataset(name)
    if "data_test" in data:
        return data.data, data.target, data.data_test, data.target_test
    X, y = data.data, data.target
    X = X.toarray() if hasattr(X, "toarray") and name not in ("abalone", "housing") else X
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, test_size=0.25, random_state=0, stratify=y if classification else None)
    return Xtr, ytr, Xte, yte


# (method, kernlearn estimator, baseline name, baseline, data sets, task)
CASES = [
    ("fgm", FGMClassifier, "LinearSVC()", LinearSVC,
     ["pendigits", "letter", "usps", "a9a", "ijcnn1", "mfeat", "wine"], "clf"),
    ("fgm", FGMRegressor, "LassoCV()", LassoCV,
     ["abalone", "housing", "cal_housing"], "reg"),
]


def run_case(est_cls, base_cls, name, task, repeats):
    """One row: scores and median fit times of our estimator and its baseline."""
    Xtr, ytr, Xte, yte = split(name, task == "clf")
    row = [name, f"{Xtr.shape[0]}x{Xtr.shape[1]}"]
    scores, times = [], []
    for cls in (est_cls, base_cls):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            model, t = timed(lambda: cls().fit(Xtr, ytr), repeats)
        warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
        if task == "clf":
            s = float(model.score(Xte, yte))
        else:
            s = float(mean_squared_error(yte, model.predict(Xte)))
        scores.append(s)
        times.append(t)
        row += [s, t, "yes" if warned else ""]
    diff = scores[0] - scores[1] if task == "clf" else scores[0] / scores[1]
    return row + [diff, times[0] / times[1]]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default=None, help="a method name, e.g. fgm")
    parser.add_argument("--out", default="benchmarks/out")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = []
    for method, est_cls, base_name, base_cls, names, task in CASES:
        if args.only and method != args.only:
            continue
        metric = "acc" if task == "clf" else "MSE"
        header = ["data", "n x d", f"{est_cls.__name__}() {metric}", "s", "warned",
                  f"{base_name} {metric}", "s", "warned",
                  "acc diff" if task == "clf" else "MSE ratio", "time ratio"]
        rows = []
        for name in names:
            try:
                rows.append(run_case(est_cls, base_cls, name, task, args.repeats))
            except DatasetNotFoundError as exc:
                print(f"skip {name}: {exc}")
                continue
            print(markdown_table(header, rows[-1:]).splitlines()[-1], flush=True)
        md = markdown_table(header, rows)
        print(f"\n{est_cls.__name__}() vs {base_name}\n{md}\n", flush=True)
        report.append(f"### {est_cls.__name__}() vs {base_name}\n\n{md}\n")
    (out / "defaults.md").write_text("\n".join(report))
    print(f"markdown written to {out / 'defaults.md'}")
    if args.only != "fgm":
        import defaults_kernel

        kernel_args = ["--repeats", str(args.repeats)]
        if args.only:
            kernel_args += ["--methods", args.only]
        defaults_kernel.main(kernel_args)


if __name__ == "__main__":
    main()
