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


# ---- twenty-sixth pass: what a fold derives from its rows, once for its C grid
#
# Each fold's packed training blocks and repeated rows (the duals merged into
# one variable) were packed and searched again for every C, and its kernel
# blocks between validation and training rows computed again for every C's
# score.  The store and the fold's scoring keep them; the models are the same,
# bit for bit, as with every one recomputed (the same arrays).


def _cases():
    """``(X, y, t, sample_weight, folds)``: weighted rows; a task absent from a
    fold; repeated rows (categorical inputs)."""
    X, y, t = _data(n_per_task=30, seed=2)
    t = np.repeat([0, 1, 2], 20)
    sw = np.random.default_rng(3).uniform(0.2, 3.0, len(y))
    sw[::11] = 0.0  # (rows weighed out: in no fold)
    folds = _folds(t, y)
    # task 2 in neither part of the last fold: its fits train on tasks 0 and 1
    tr, te = folds[-1]
    gone = [tr[t[tr] != 2], te[t[te] != 2]]
    rep = np.repeat(np.arange(0, len(y), 2), 2)  # (every other row twice, with its label)
    return {
        "weighted": (X, y, t, sw, folds),
        "task missing from a fold": (X, y, t, None, [*folds[:-1], tuple(gone)]),
        "repeated rows": (X[rep], y[rep], t[rep], None, _folds(t[rep], y[rep])),
    }


def _cv_fit(X, y, t, sw, folds):
    return MultitaskMKLClassifierCV(KERNELS, Cs=CS, cv=folds).fit(
        X, y, task_index=t, sample_weight=sw)


def _recomputing(monkeypatch):
    """Nothing derived kept: each fit packs its blocks and finds its repeated
    rows again, each score computes its validation blocks again."""
    from kernlearn.estimators import mtmkl_cv

    monkeypatch.setattr(FactorStore, "kept", lambda self, key, make, n_blocks=0: make())
    monkeypatch.setattr(mtmkl_cv._KeptCross, "blocks",
                        lambda self, *args, **kw: self.kernels.blocks(*args, **kw))


@pytest.mark.parametrize("case", ["weighted", "task missing from a fold", "repeated rows"])
def test_kept_fold_quantities_give_the_models_of_recomputed_ones(case, monkeypatch):
    X, y, t, sw, folds = _cases()[case]
    if case == "repeated rows":  # (the duals of the copies merged: it is that case)
        from kernlearn.methods.mtmkl.mtfl import merged_rows, packed_blocks

        rows, kern = TaskBuckets([np.flatnonzero(t == k) for k in range(3)]), _fitted(X)
        Gp = [packed_blocks(lambda j, i=idx, m=mask: kern.blocks(j, i, m), idx.shape, 2)
              for _, idx, mask in rows.buckets]
        first = merged_rows(rows, Gp, rows.gather(2.0 * y - 1.0))
        assert sum(int((f != np.arange(f.shape[1])).sum()) for f in first) == len(y) // 2
    kept = _cv_fit(X, y, t, sw, folds)
    _recomputing(monkeypatch)
    again = _cv_fit(X, y, t, sw, folds)
    assert kept.C_ == again.C_
    for key in kept.cv_results_:
        np.testing.assert_array_equal(kept.cv_results_[key], again.cv_results_[key])
    # the refit (started from the folds' duals) and its decision values, bit for bit
    np.testing.assert_array_equal(kept.decision_function(X, task_index=t),
                                  again.decision_function(X, task_index=t))
    np.testing.assert_array_equal(kept.kernel_weights_, again.kernel_weights_)
    assert kept.objective_ == again.objective_ and kept.n_iter_ == again.n_iter_


def test_each_fold_packs_searches_and_scores_its_rows_once(monkeypatch):
    from kernlearn.methods.mtmkl import _smo

    X, y, t, _, folds = _cases()["repeated rows"]
    searched, scored = [], []
    search, blocks = _smo.repeated_rows, TaskKernels.blocks

    def counting_search(Gp, yb, sizes):
        searched.append(Gp.shape)
        return search(Gp, yb, sizes)

    def counting_blocks(self, j, idx_a, mask_a, X_a=None, idx_b=None, mask_b=None):
        if X_a is not None:  # (validation rows against training rows)
            scored.append((j, np.asarray(X_a).tobytes(), idx_a.tobytes(), idx_b.tobytes()))
        return blocks(self, j, idx_a, mask_a, X_a, idx_b, mask_b)

    monkeypatch.setattr(_smo, "repeated_rows", counting_search)
    monkeypatch.setattr(TaskKernels, "blocks", counting_blocks)
    _cv_fit(X, y, t, None, folds)
    # equal task sizes: one bucket; once per fold and once for the refit (not
    # once per C: 3 x 3 + 1 = 10)
    assert len(searched) == len(folds) + 1
    # every fold's validation blocks computed once, whatever the C (they were
    # computed for each of the 3)
    assert scored and len(scored) == len(set(scored))


def test_packing_kernel_by_kernel_is_the_upper_triangles():
    from kernlearn.methods.mtmkl.mtfl import _task_major, packed_blocks

    X, _, t = _data()
    rows = TaskBuckets([np.flatnonzero(t == 0), np.flatnonzero(t == 1)[:30]])
    kern = _fitted(X)
    for _, idx, mask in rows.buckets:
        K = np.stack([kern.blocks(j, idx, mask) for j in range(2)])
        up = np.triu_indices(idx.shape[1])
        want = np.stack([[K[j, a][up] for j in range(2)] for a in range(len(idx))])
        got = packed_blocks(lambda j, i=idx, m=mask: kern.blocks(j, i, m), idx.shape, 2)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(_task_major([K])[0], want)


def test_kept_values_only_for_their_own_problem():
    X, y, t = _data()
    rows = TaskBuckets([np.flatnonzero(t == 0), np.flatnonzero(t == 1)])
    store = FactorStore(max_block_rows=2000)
    lab = rows.gather(2.0 * y - 1.0)
    key = store.start_key(_fitted(X), rows, lab, ("repeated rows",))
    made = []
    first = store.kept(key, lambda: made.append(1) or [np.arange(3)])
    assert store.kept(key, lambda: made.append(1) or [np.arange(5)]) is first
    # other labels, another derived value, other inputs: not served it
    for other in (store.start_key(_fitted(X), rows, rows.gather(1.0 - 2.0 * y),
                                  ("repeated rows",)),
                  store.start_key(_fitted(X), rows, lab, ("packed blocks",)),
                  store.start_key(_fitted(X + 0.5), rows, lab, ("repeated rows",))):
        assert other != key
        assert store.kept(other, lambda: [np.arange(4)])[0].size == 4
    assert len(made) == 1
    # a plain fit's store (no blocks kept) keeps nothing
    plain = FactorStore()
    assert plain.start_key(_fitted(X), rows, lab, ("repeated rows",)) is None
    assert plain.kernel_keys(_fitted(X)) is None
    assert plain.kept(None, lambda: [np.arange(2)])[0].size == 2 and len(plain) == 0


def test_kept_validation_blocks_are_never_served_for_other_rows():
    from kernlearn.estimators.mtmkl_cv import _KeptCross

    X, _, t = _data()
    rows = TaskBuckets([np.flatnonzero(t == 0), np.flatnonzero(t == 1)])
    _, idx, mask = rows.buckets[0]
    ia, ma = idx[:, :5].copy(), mask[:, :5].copy()
    kept = {}
    a = _KeptCross(_fitted(X), kept)
    K = a.blocks(1, ia, ma, X_a=X, idx_b=idx, mask_b=mask)
    np.testing.assert_array_equal(K, _fitted(X).blocks(1, ia, ma, X_a=X, idx_b=idx,
                                                       mask_b=mask))
    # another fit of the same kernels on the same rows (another C) is served it
    assert _KeptCross(_fitted(X), kept).blocks(1, ia, ma, X_a=X, idx_b=idx,
                                               mask_b=mask) is K
    others = [(_fitted(X), 0, ia, X), (_fitted(X), 1, ia[:, ::-1].copy(), X),
              (_fitted(X), 1, ia, X + 1.0), (_fitted(X + 0.1), 1, ia, X)]
    for kern, j, i, Xa in others:
        got = _KeptCross(kern, kept).blocks(j, i, ma, X_a=Xa, idx_b=idx, mask_b=mask)
        np.testing.assert_array_equal(got, kern.blocks(j, i, ma, X_a=Xa, idx_b=idx,
                                                       mask_b=mask))
    assert len(kept) == 1 + len(others)
    # the same fit's kernels on another block of new rows (its digest is taken anew)
    moved = X + 2.0
    np.testing.assert_array_equal(
        a.blocks(1, ia, ma, X_a=moved, idx_b=idx, mask_b=mask),
        _fitted(X).blocks(1, ia, ma, X_a=moved, idx_b=idx, mask_b=mask))
    assert len(kept) == 2 + len(others)
    # every kernel's key at once hashes the training data once: the same keys
    kern = _fitted(X)
    assert kern.cache_keys() == [kern.cache_key(j) for j in range(2)]
    assert len(set(kern.cache_keys() + _fitted(X + 0.1).cache_keys())) == 4
