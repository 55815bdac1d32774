"""``MultitaskMKLClassifierCV``'s validation scores are its fold fits' ``score()``.

Since the thirtieth pass each fold fit's validation rows are predicted once (the
decision values serve the score and the next fold's start) and the accuracy is
computed in NumPy, not by ``score()``: the table must hold what ``score()``
gives, weighted by ``sample_weight`` alone (rows of zero weight not predicted),
bit for bit.
"""

import numpy as np
import pytest

from kernlearn import MultitaskMKLClassifierCV

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

KERNELS = ["linear", ("rbf", {"gamma": 0.5})]
CS = (0.1, 1.0, 10.0)


def _data(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    t = rng.integers(0, 3, n)
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0, "yes", "no")
    return X, y, t


@pytest.mark.parametrize("weights", ["none", "positive", "zeros"])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_split_scores_are_the_fold_fits_own_scores(fold_fits, weights, class_weight):
    X, y, t = _data()
    rng = np.random.default_rng(1)
    sw = None if weights == "none" else rng.uniform(0.2, 3.0, len(y))
    if weights == "zeros":
        sw[::7] = 0.0  # (in the validation folds too: the folds are given)
    rows = np.arange(len(y))
    folds = [(rows[rows % 3 != k], rows[rows % 3 == k]) for k in range(3)]
    fits = fold_fits
    cv = MultitaskMKLClassifierCV(KERNELS, Cs=CS, cv=folds, class_weight=class_weight).fit(
        X, y, task_index=t, sample_weight=sw)
    assert len(fits) == len(CS) * len(folds)
    for C, train, est in fits:
        k = next(i for i, (tr, _) in enumerate(folds) if np.array_equal(tr, train))
        te = folds[k][1]
        want = est.score(X[te], y[te], task_index=t[te],
                         sample_weight=None if sw is None else sw[te])
        assert cv.cv_results_[f"split{k}_test_score"][CS.index(C)] == want
    # (the scores differ between C and between folds: a constant would not pass)
    assert len({float(v) for k in range(3) for v in cv.cv_results_[f"split{k}_test_score"]}) > 2
