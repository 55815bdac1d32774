"""A seventy-first user's audit: a hostile review of the twenty-ninth pass's
three speed changes (the CV classifier's cross-fold start, the CV regressor's
one-pass leave-one-out evaluation, the low-rank fit's kept mask and seed).

Defects found (each test here failed before its fix):

* ``MultitaskMKLClassifierCV(class_weight="balanced")``: every fold start
  (the previous fold's fit at the first C) and the refit's start were dropped
  by the solver, so those fits ran cold.  Each fit weighs its own rows
  (``"balanced"`` counts the classes of the fold's rows), so a kept dual
  could sit past the next fit's box :math:`C w_i`; it was clipped into the
  box after the per-task sums had been made zero, the sum was no longer
  zero, and the SVM solver, which takes a start only when it is feasible,
  started those tasks at zero.  The duals are now put in the fit's box first.
* ``formulation="mkl"`` with folds over other tasks (an iterable ``cv``): a
  fold's per-task kernel weights started the next fold's when the two
  trained on as many tasks, by position, so a fold on tasks 1 and 2 started
  from the weights of tasks 0 and 1 (and one on fewer tasks from uniform
  weights).  They are now matched by task id.  Both were starts only: every
  fit stops on its own duality gap, so no model was wrong, only slower.
* The low-rank fit's triangle mask (``_mirrored``) is kept at module level
  and grown to twice the largest active set seen, and it was never given
  back: one fit with ``m`` active columns left ``4 m^2`` bytes held for the
  life of the process (1.6 GB after ``m = 20000``).  Masks past 1,024 rows
  (1 MB) are now made for the call and not kept.
* ``MultitaskMKLClassifierCV`` with ``cv`` an iterable of boolean mask pairs
  (as ``GridSearchCV`` takes) stopped on NumPy's "boolean array indexing
  assignment cannot assign 150 input values to the 100 output values" (the
  fold fits' duals kept for the starts indexed by the masks); the masks are
  now read as the indices they select.

Checked clean (no fix needed) is listed in the tests named ``*_clean``.
"""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import kernlearn.methods.mtmkl.fit as mtfit
from kernlearn import MultitaskMKLClassifierCV
from kernlearn.methods.mtmkl.inner import per_bucket

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

KERNELS = ["linear", "rbf"]


def _data(n=150, n_tasks=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    t = rng.integers(0, n_tasks, n)
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y, t


@pytest.fixture
def handed(monkeypatch):
    """Per fit given a start: for each task, whether the SVM solver takes it
    (its rule in ``_smo_bucket``: every dual in its box with its class's
    sign, the task's duals summing to zero)."""
    log = []
    original = mtfit.solve_mtfl

    def recording(blocks, grams, y_b, loss, C, p, epsilon, **kw):
        if kw.get("beta0") is not None:
            taken = []
            for b, yb, c in zip(kw["beta0"], y_b, per_bucket(C, len(y_b))):
                c = np.broadcast_to(c, b.shape)
                for a in range(b.shape[0]):
                    inside = np.all(np.abs(b[a]) <= c[a]) and np.all(b[a] * yb[a] >= 0)
                    taken.append(bool(inside and abs(b[a].sum())
                                      <= 1e-12 * max(np.abs(b[a]).sum(), 1.0)))
            log.append(taken)
        return original(blocks, grams, y_b, loss, C, p, epsilon, **kw)

    monkeypatch.setattr(mtfit, "solve_mtfl", recording)
    return log


@pytest.mark.parametrize("formulation", ["mtfl", "mkl"])
def test_balanced_class_weight_fold_and_refit_starts_are_taken(handed, formulation):
    X, y, t = _data()
    clf = MultitaskMKLClassifierCV(KERNELS, Cs=[0.1, 1.0, 10.0], cv=3,
                                   class_weight="balanced", formulation=formulation)
    clf.fit(X, y, task_index=t)
    # 2 + 3 + 3 fold fits from a start (the first fold's middle C is cold), the refit
    assert len(handed) == 9
    assert all(all(taken) for taken in handed), handed


def _task_folds(t):
    """Folds over tasks: the first trains on tasks 0 and 1, the second on 1
    and 2 (as many tasks, other ones), the third on task 2 alone."""
    r = np.arange(len(t))
    half = [(r[t == k][::2], r[t == k][1::2]) for k in range(3)]
    return [(np.r_[half[0][0], half[0][1], half[1][0]], half[1][1]),
            (np.r_[half[1][1], half[2][0], half[2][1]], half[1][1][:0]),
            (half[2][0], half[2][1])]


def test_per_task_kernel_weights_start_the_same_tasks_of_the_next_fold(monkeypatch):
    from kernlearn.methods.mtmkl import FactorStore

    X, y, t = _data(240, seed=2)
    fits, kept = [], []
    fold_fit = MultitaskMKLClassifierCV._fold_fit
    keep = FactorStore.keep_row_start
    monkeypatch.setattr(MultitaskMKLClassifierCV, "_fold_fit",
                        lambda self, *a: fits.append(fold_fit(self, *a)) or fits[-1])
    monkeypatch.setattr(FactorStore, "keep_row_start",
                        lambda self, C, beta, gamma: kept.append(gamma) or keep(self, C, beta, gamma))
    folds = _task_folds(t)
    folds[1] = (folds[1][0], folds[1][0][:4])  # (validation rows of tasks it trained on)
    MultitaskMKLClassifierCV(KERNELS, Cs=[1.0], cv=folds, formulation="mkl").fit(
        X, y, task_index=t)
    # fold 2 (tasks 1, 2) had fold 1's rows of tasks 0 and 1 as its tasks 1 and 2:
    # a task it did not train on has no weights to start from
    assert kept[0] is None
    # fold 3 (task 2) starts from fold 2's weights of task 2 (it took uniform ones)
    np.testing.assert_array_equal(kept[1], fits[1].task_kernel_weights_[[1]])


def _fitted_state(clf):
    return (clf.C_, clf.cv_results_["mean_test_score"].tolist(),
            clf.task_kernel_weights_.tolist(), clf.intercept_.tolist())


def test_classifier_cv_refits_threads_and_determinism_clean():
    """Two fits equal; a refit of a fitted estimator (with other data in
    between) equals a fresh fit; two estimators fitted at once from two threads
    equal their fits one after the other (no start leaks between fits)."""
    from concurrent.futures import ThreadPoolExecutor

    X, y, t = _data(150, seed=3)
    X2, y2, t2 = _data(120, seed=4)
    sw = np.random.default_rng(5).uniform(0.0, 2.0, len(y))
    sw[::6] = 0.0

    def make():
        return MultitaskMKLClassifierCV(KERNELS, Cs=[0.1, 1.0, 10.0], cv=3,
                                        formulation="mkl", class_weight="balanced")

    first = _fitted_state(make().fit(X, y, task_index=t, sample_weight=sw))
    assert _fitted_state(make().fit(X, y, task_index=t, sample_weight=sw)) == first
    clf = make().fit(X2, y2, task_index=t2)
    assert _fitted_state(clf.fit(X, y, task_index=t, sample_weight=sw)) == first
    other = _fitted_state(make().fit(X2, y2, task_index=t2))
    with ThreadPoolExecutor(2) as pool:
        a = pool.submit(lambda: make().fit(X, y, task_index=t, sample_weight=sw))
        b = pool.submit(lambda: make().fit(X2, y2, task_index=t2))
        assert _fitted_state(a.result()) == first and _fitted_state(b.result()) == other


@pytest.mark.parametrize("case", ["str-ids-labels", "unequal-folds", "one-C", "mkl",
                                  "shared", "weights"])
def test_classifier_cv_matches_the_cold_path_clean(monkeypatch, case):
    """The fold starts change where a fit stops, not what it finds: with a
    tight ``tol`` every validation score and ``C_`` equal the path without
    kept starts (``_keep_start`` off), on hostile inputs."""
    from sklearn.model_selection import KFold

    X, y, t = _data(150, seed=6)
    kw, fk = dict(Cs=[0.1, 1.0, 10.0], cv=3, tol=1e-7, max_iter=2000), {"task_index": t}
    if case == "str-ids-labels":
        y, fk["task_index"] = np.where(y == 1, "no", "yes"), np.array(["z", "a", "m"])[t]
    elif case == "unequal-folds":
        kw["cv"] = list(KFold(7, shuffle=True, random_state=1).split(X))
    elif case == "one-C":
        kw["Cs"] = [3.0]
    elif case == "mkl":
        kw["formulation"] = "mkl"
    elif case == "shared":  # (no start kept)
        kw["shared"] = True
    else:
        w = np.random.default_rng(2).uniform(0, 2, len(y))
        w[::5], w[1::9] = 0.0, 1e-3
        fk["sample_weight"] = w

    def scores(clf):
        res = clf.cv_results_
        return clf.C_, np.array([res[f"split{k}_test_score"] for k in range(clf.n_splits_)])

    warm = scores(MultitaskMKLClassifierCV(KERNELS, **kw).fit(X, y, **fk))
    monkeypatch.setattr(MultitaskMKLClassifierCV, "_keep_start", lambda self, *a: None)
    cold = scores(MultitaskMKLClassifierCV(KERNELS, **kw).fit(X, y, **fk))
    assert warm[0] == cold[0]
    np.testing.assert_array_equal(warm[1], cold[1])


@pytest.mark.parametrize("mu", [[0.4, 2.0], [0.0, 1.3], [2.0, 0.0], [30.0, 0.02]])
def test_loo_gradient_on_weighted_small_tasks_matches_differences_clean(mu):
    """The one-pass evaluation's gradient on tasks of 2 and 5 rows beside one
    of 150, weighted, without shared components, at kernel weights at zero
    (one-sided differences there), and its criterion and gradient equal the
    inverse-based ones."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_mtmkl_loo_fast import _eigen, _old, _problem

    p = _problem([150, 2, 5], True, False, seed=31)
    ev, mu = _eigen(p), np.asarray(mu, dtype=float)
    f, g = ev(mu)
    f0, g0, _ = _old(p, mu, full=True)
    assert f == pytest.approx(f0, rel=1e-12)
    np.testing.assert_allclose(g, g0, rtol=1e-10, atol=1e-12 * np.abs(g0).max())
    for j in range(len(mu)):
        e = np.zeros_like(mu)
        e[j] = h = 1e-6 * max(mu[j], 1.0)
        back = mu - e if mu[j] > 0 else mu
        fd = (ev(mu + e, grad=False) - ev(back, grad=False)) / (h * (2 if mu[j] > 0 else 1))
        assert g[j] == pytest.approx(fd, rel=1e-4, abs=1e-4 * np.abs(g).max())


def test_loo_search_refuses_a_task_of_one_row_clean():
    """A task of one row has no leave-one-out fit (the inverse-based numbers are
    NaN there): refused by name before the search."""
    from kernlearn import MultitaskMKLRegressorCV

    rng = np.random.default_rng(5)
    t = np.r_[[0], [1, 1], np.full(60, 2)]
    X = rng.normal(size=(len(t), 3))
    with pytest.raises(ValueError, match="at least 2 samples; task.*have one"):
        MultitaskMKLRegressorCV().fit(X, X[:, 0], task_index=t)


def test_the_kept_triangle_mask_is_bounded(monkeypatch):
    import kernlearn.methods._slkl_state as state

    monkeypatch.setattr(state, "_UPPER", [np.zeros((0, 0), dtype=bool)])
    rng = np.random.default_rng(0)
    for m in (3, 700, 1500, 40):
        A = rng.normal(size=(m, m))
        for lower in (True, False):
            want = np.tril(A) + np.tril(A, -1).T if lower else np.triu(A) + np.triu(A, 1).T
            assert state._mirrored(A, lower).tobytes() == want.tobytes()
        assert state._UPPER[0].nbytes <= 2**20  # (was 4 * 1500**2 bytes, kept)


def test_lowrank_seeds_and_threads_clean():
    """NumPy integer seeds give the int's model, ``True`` the model of
    ``RandomState(True)``, seeds outside [0, 2**32) are refused by name, a
    changed ``random_state`` refits with the new one, a pickled or cloned
    estimator keeps its model, and fits of different sizes in four threads
    (the kept mask grown while others read it) equal their fits one by one."""
    import pickle
    import threading

    from sklearn.base import clone

    from kernlearn import LowRankKernelRegressor
    from kernlearn.estimators import lowrank

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=200)

    def pred(rs, **kw):
        return LowRankKernelRegressor(random_state=rs, **kw).fit(X, y).predict(X)

    ref = pred(3)
    for rs in (np.int64(3), np.uint8(3), np.int32(3)):
        np.testing.assert_array_equal(pred(rs), ref)
    np.testing.assert_array_equal(pred(True), pred(np.random.RandomState(1)))
    for rs in (-1, 2**32, np.uint64(2**63)):
        with pytest.raises(ValueError, match="random_state"):
            pred(rs)
    est = LowRankKernelRegressor(random_state=3).fit(X, y)
    p4 = est.set_params(random_state=4).fit(X, y).predict(X)
    np.testing.assert_array_equal(p4, pred(4))
    assert not np.array_equal(p4, ref)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict(X), p4)
    np.testing.assert_array_equal(clone(est).fit(X, y).predict(X), p4)
    assert lowrank._int_seed.cache_info().maxsize == 64
    jobs = [(1, 20), (2, 150), (3, 60), (4, 200)]
    # (at one BLAS thread: a threaded BLAS called from four threads at once
    # takes other code paths, and its rounding is not the lone fit's)
    with threadpool_limits(1):
        alone = {job: pred(job[0], n_columns=job[1]) for job in jobs}
        got = {}
        threads = [threading.Thread(target=lambda j=job: got.__setitem__(
            j, pred(j[0], n_columns=j[1]))) for job in jobs]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    for job in jobs:
        np.testing.assert_array_equal(got[job], alone[job])


@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_boolean_mask_folds_are_the_folds_they_select(class_weight):
    X, y, t = _data(150, seed=7)
    r = np.arange(len(y))
    masks = [(r % 3 != k, r % 3 == k) for k in range(3)]
    index = [(np.flatnonzero(a), np.flatnonzero(b)) for a, b in masks]
    kw = dict(Cs=[0.1, 1.0], class_weight=class_weight)
    by_mask = MultitaskMKLClassifierCV(KERNELS, cv=masks, **kw).fit(X, y, task_index=t)
    by_index = MultitaskMKLClassifierCV(KERNELS, cv=index, **kw).fit(X, y, task_index=t)
    assert by_mask.C_ == by_index.C_
    for key in ("split0_test_score", "split2_test_score", "mean_test_score"):
        np.testing.assert_array_equal(by_mask.cv_results_[key], by_index.cv_results_[key])
    np.testing.assert_array_equal(by_mask.decision_function(X, task_index=t),
                                  by_index.decision_function(X, task_index=t))
