"""``MultitaskMKLClassifierCV`` builds each fold's kernel blocks once (twenty-third pass).

Every C of the grid was fitted on every fold with the fold's within-task
kernel blocks computed again (3 times per fold with the default grid), and
every fit's SVM duals started at zero; a fold's fits now share one
:class:`FactorStore` that keeps the blocks and each C's solution, which
starts the next C's (twenty-fifth pass: its duals scaled and its kernel
weights).  The models are the same optimum within the fits' duality gaps:
the same blocks, each fit's certificate met; the refit on all rows starts
from its fold fits (tests/test_mtmkl_cv_path.py).
"""

import numpy as np
import pytest

from kernlearn import MultitaskMKLClassifier, MultitaskMKLClassifierCV
from kernlearn.methods.mtmkl import FactorStore, TaskBuckets
from kernlearn.methods.mtmkl.task_kernels import TaskKernels

KERNELS = ["linear", ("rbf", {"gamma": 0.5})]
CS = (0.1, 1.0, 10.0)

# (small problems at the default max_iter: some fits stop on it, alike in
# the compared fits)
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _data(n_per_task=40, seed=0):
    rng = np.random.default_rng(seed)
    t = np.repeat([0, 1], n_per_task)
    X = rng.normal(size=(len(t), 3))
    y = (X[:, 0] * (2 * t - 1) + 0.8 * rng.normal(size=len(t)) > 0).astype(int)
    return X, y, t


def _folds(t, y, n_folds=3):
    """Folds holding every task's two classes in each training part."""
    strata = 2 * t + y
    fold = np.zeros(len(t), dtype=int)
    for s in np.unique(strata):
        rows = np.flatnonzero(strata == s)
        fold[rows] = np.arange(len(rows)) % n_folds
    return [(np.flatnonzero(fold != k), np.flatnonzero(fold == k)) for k in range(n_folds)]


def test_scores_C_and_refit_equal_separate_fits_of_every_candidate():
    X, y, t = _data()
    folds = _folds(t, y)
    cv = MultitaskMKLClassifierCV(KERNELS, Cs=CS, cv=folds).fit(X, y, task_index=t)
    # (as before: every candidate fitted on its own, no store shared)
    scores = np.array([[MultitaskMKLClassifier(KERNELS, C=C)
                        .fit(X[tr], y[tr], task_index=t[tr])
                        .score(X[te], y[te], task_index=t[te]) for tr, te in folds]
                       for C in CS])
    for k in range(len(folds)):
        np.testing.assert_array_equal(cv.cv_results_[f"split{k}_test_score"], scores[:, k])
    assert cv.C_ == CS[int(np.argmax(scores.mean(axis=1)))]
    ref = MultitaskMKLClassifier(KERNELS, C=cv.C_).fit(X, y, task_index=t)
    # (the refit starts from its fold fits: the same optimum, each within its gap)
    assert cv.converged_ and ref.converged_
    assert abs(cv.objective_ - ref.objective_) <= max(cv.gap_, ref.gap_)


@pytest.mark.parametrize("C", [1.0, 10.0])
def test_a_fit_on_kept_blocks_and_a_warm_start_is_the_cold_fit(C):
    X, y, t = _data(seed=1)
    store = FactorStore(max_block_rows=2000)
    MultitaskMKLClassifier(KERNELS, C=0.1)._fit_classification(
        X, y, t, None, factor_store=store)
    misses = store.block_misses
    assert store.start_hits == 0  # (nothing kept before the first C)
    again = MultitaskMKLClassifier(KERNELS, C=C)
    again._fit_classification(X, y, t, None, factor_store=store)
    assert store.block_hits == misses and store.block_misses == misses  # all reused
    assert store.start_hits == 1  # it started from C = 0.1's solution
    fresh = MultitaskMKLClassifier(KERNELS, C=C).fit(X, y, task_index=t)
    # the same optimum, reached from another start: each within its own gap
    assert again.converged_ and fresh.converged_
    assert abs(again.objective_ - fresh.objective_) <= max(again.gap_, fresh.gap_)


def test_kept_duals_start_only_the_same_problem_at_another_C():
    X, y, t = _data()
    rows = TaskBuckets([np.flatnonzero(t == 0), np.flatnonzero(t == 1)])
    store = FactorStore(max_block_rows=2000)
    lab = rows.gather(2.0 * y - 1.0)
    params = ("hinge", "mtfl", 2.0, 0.1, 5)
    key = store.start_key(_fitted(X), rows, [*lab, None], params)
    assert key == store.start_key(_fitted(X), rows, [*lab, None], params)
    others = [
        store.start_key(_fitted(X + 0.1), rows, [*lab, None], params),  # other inputs
        store.start_key(_fitted(X, KERNELS[:1]), rows, [*lab, None], params),  # kernels
        store.start_key(_fitted(X), rows, [*rows.gather(1.0 - 2.0 * y), None], params),
        store.start_key(_fitted(X), rows, [*lab, np.full(len(y), 2.0)], params),  # weights
        store.start_key(_fitted(X), rows, [*lab, None], ("hinge", "mkl", 2.0, 0.1, 5)),
        store.start_key(_fitted(X), TaskBuckets([np.arange(len(y))]), [*lab, None], params),
    ]
    assert key is not None and None not in others and len({key, *others}) == 7
    assert store.start(key, 1.0) is None  # nothing kept yet
    beta = [np.array([[0.5, -0.25]])]
    store.keep_start(key, 0.5, beta)
    np.testing.assert_array_equal(store.start(key, 2.0)[0], [[2.0, -1.0]])  # scaled by 4
    assert all(store.start(k, 2.0) is None for k in others) and store.start_hits == 1
    # a store that keeps no blocks keeps no duals either (a plain fit's own store)
    assert FactorStore().start_key(_fitted(X), rows, [*lab, None], params) is None


def test_the_cv_builds_each_folds_training_blocks_once(monkeypatch):
    X, y, t = _data()
    folds = _folds(t, y)
    built = []
    original = TaskKernels.blocks

    def counting(self, j, idx_a, mask_a, X_a=None, idx_b=None, mask_b=None):
        if X_a is None:  # (training blocks; the validation rows' are not kept)
            built.append(j)
        return original(self, j, idx_a, mask_a, X_a, idx_b, mask_b)

    monkeypatch.setattr(TaskKernels, "blocks", counting)
    MultitaskMKLClassifierCV(KERNELS, Cs=CS, cv=folds).fit(X, y, task_index=t)
    # equal task sizes: one bucket; each fold's 2 kernels once (not once per
    # C: 3 x 3 x 2 = 18), then the refit's 2
    assert len(built) == len(folds) * len(KERNELS) + len(KERNELS)


def _fitted(X, kernels=KERNELS):
    return TaskKernels(kernels).fit(X)


def test_kept_blocks_are_never_served_for_other_rows_or_parameters():
    X, _, t = _data()
    rows = TaskBuckets([np.flatnonzero(t == 0), np.flatnonzero(t == 1)])
    _, idx, mask = rows.buckets[0]
    store = FactorStore(max_block_rows=2000)
    K = store.blocks(_fitted(X), 1, idx, mask)
    assert (store.block_hits, store.block_misses) == (0, 1)
    np.testing.assert_array_equal(K, _fitted(X).blocks(1, idx, mask))
    assert store.blocks(_fitted(X), 1, idx, mask) is K  # the same kernel and rows
    assert store.block_hits == 1
    other = [  # other inputs, kernel parameters, kernel, and other rows of a bucket
        (_fitted(X + 0.1), 1, idx, mask),
        (_fitted(X, ["linear", ("rbf", {"gamma": 0.25})]), 1, idx, mask),
        (_fitted(X), 0, idx, mask),
        (_fitted(X), 1, idx[:, ::-1].copy(), mask),
    ]
    for kernels, j, i, m in other:
        got = store.blocks(kernels, j, i, m)
        np.testing.assert_array_equal(got, kernels.blocks(j, i, m))
    assert store.block_hits == 1 and store.block_misses == 1 + len(other)
    with pytest.raises(ValueError, match="read-only"):
        K[0, 0, 0] = 1.0  # shared by the store's fits: nobody writes into it


def test_blocks_are_not_kept_past_the_row_bound_nor_by_default():
    X, _, t = _data()
    _, idx, mask = TaskBuckets([np.flatnonzero(t == 0), np.flatnonzero(t == 1)]).buckets[0]
    for store in (FactorStore(max_block_rows=len(X) - 1), FactorStore()):
        first = store.blocks(_fitted(X), 0, idx, mask)
        second = store.blocks(_fitted(X), 0, idx, mask)
        np.testing.assert_array_equal(first, second)
        assert (store.block_hits, store.block_misses, len(store)) == (0, 2, 0)
