"""Class weights and probabilities against scikit-learn's one-liners (issue 14).

In one run, on real data from the data folder:

1. ``class_weight="balanced"`` on a9a and ijcnn1 (24 % and 10 % positives):
   ``FGMClassifier`` against ``LinearSVC(class_weight="balanced")``, test
   balanced accuracy and fit time, with the unweighted fits for reference;
2. probabilities on a9a: ``FGMClassifier(probability=True)`` (Platt by
   internal 5-fold CV) against ``CalibratedClassifierCV(LinearSVC(),
   method="sigmoid", cv=5)``, and ``FGMClassifier(loss="logistic")`` against
   ``LogisticRegression()``: test log-loss and fit time;
3. probabilities of a kernel machine on an ijcnn1 subsample (n = 3000):
   ``PNormMKLClassifier(probability=True)`` against
   ``CalibratedClassifierCV(SVC(), ensemble=False)`` (what scikit-learn 1.9
   recommends instead of the deprecated ``SVC(probability=True)``; the same
   5-fold Platt scaling).

Prints markdown tables with ratios ours / anchor (medians of ``--repeats``).

Usage::

    python benchmarks/weights_probability.py [--repeats 3]
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

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score, log_loss
from sklearn.svm import SVC, LinearSVC

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table, timed  # noqa: E402

from kernlearn import FGMClassifier, PNormMKLClassifier  # noqa: E402
from kernlearn.datasets import DatasetNotFoundError, load_dataset  # noqa: E402

warnings.filterwarnings("ignore", category=ConvergenceWarning)


def _int32(X):
    X = X.tocsr()
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X


def _load(name):
    d = load_dataset(name)
    Xtr, ytr, Xte, yte = d.data, d.target, d.data_test, d.target_test
    return _int32(Xtr), ytr, _int32(Xte), yte


def class_weights(repeats):
    rows = []
    for name in ("a9a", "ijcnn1"):
        Xtr, ytr, Xte, yte = _load(name)
        res = {}
        for label, est in [
            ("FGM", FGMClassifier()),
            ("FGM balanced", FGMClassifier(class_weight="balanced")),
            ("LinearSVC", LinearSVC()),
            ("LinearSVC balanced", LinearSVC(class_weight="balanced")),
        ]:
            model, t = timed(lambda est=est: est.fit(Xtr, ytr), repeats)
            res[label] = (balanced_accuracy_score(yte, model.predict(Xte)), t)
        for label in ("FGM", "FGM balanced", "LinearSVC", "LinearSVC balanced"):
            rows.append([name, label, res[label][0], res[label][1]])
        rows.append([name, "ratio balanced FGM / LinearSVC",
                     res["FGM balanced"][0] / res["LinearSVC balanced"][0],
                     res["FGM balanced"][1] / res["LinearSVC balanced"][1]])
    print("### class_weight='balanced': test balanced accuracy, fit seconds\n")
    print(markdown_table(["data", "model", "balanced acc", "fit s"], rows))


def probabilities(repeats):
    Xtr, ytr, Xte, yte = _load("a9a")
    pairs = [
        ("FGM probability=True", FGMClassifier(probability=True),
         "CalibratedClassifierCV(LinearSVC, sigmoid, cv=5)",
         CalibratedClassifierCV(LinearSVC(), method="sigmoid", cv=5)),
        ("FGM loss='logistic'", FGMClassifier(loss="logistic"),
         "LogisticRegression", LogisticRegression(max_iter=1000)),
    ]
    rows = []
    for ours_name, ours, ref_name, ref in pairs:
        out = []
        for est in (ours, ref):
            model, t = timed(lambda est=est: est.fit(Xtr, ytr), repeats)
            out.append((log_loss(yte, model.predict_proba(Xte)), t))
        rows.append(["a9a", ours_name, ref_name, out[0][0], out[1][0],
                     out[0][0] / out[1][0], out[0][1] / out[1][1]])
    Xtr, ytr, Xte, yte = _load("ijcnn1")
    rng = np.random.default_rng(0)
    tr = rng.choice(Xtr.shape[0], 3000, replace=False)
    te = rng.choice(Xte.shape[0], 5000, replace=False)
    Xs, ys, Xv, yv = Xtr[tr].toarray(), ytr[tr], Xte[te].toarray(), yte[te]
    out = []
    for est in (PNormMKLClassifier(probability=True, random_state=0),
                CalibratedClassifierCV(SVC(), ensemble=False)):
        model, t = timed(lambda est=est: est.fit(Xs, ys), repeats)
        out.append((log_loss(yv, model.predict_proba(Xv)), t))
    rows.append(["ijcnn1 (3000)", "PNormMKL probability=True",
                 "CalibratedClassifierCV(SVC(), ensemble=False)",
                 out[0][0], out[1][0], out[0][0] / out[1][0], out[0][1] / out[1][1]])
    print("\n### Probabilities: test log-loss, ratios ours / anchor\n")
    print(markdown_table(["data", "ours", "anchor", "log-loss ours", "log-loss anchor",
                          "log-loss ratio", "fit time ratio"], rows))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        class_weights(args.repeats)
        probabilities(args.repeats)
    except DatasetNotFoundError as err:
        print(f"skipped: {err}")


if __name__ == "__main__":
    main()
