"""``MultitaskMKLClassifierCV`` along its C grid (issue 24, twenty-fifth pass).

Within a fold (the first C of a fold after the first from the previous fold's
fit at it: ``test_mtmkl_classifier_speed.py``), each C of the grid (the middle one first, then up, then
down) starts from the nearest C's solution fitted: its SVM duals scaled to the new box and its kernel
weights; the refit on all rows starts from its fold fits at the chosen C
(their mean duals of every row, made feasible, and their mean kernel
weights).  Every fit still stops on its own duality gap, so the models are
the cold fits' optimum within ``tol``.
"""

import numpy as np
import pytest

import kernlearn.methods.mtmkl.fit as mtfit
from kernlearn import MultitaskMKLClassifier, MultitaskMKLClassifierCV
from kernlearn.methods.mtmkl._fold_starts import path_order as _path_order
from kernlearn.methods.mtmkl import FactorStore, TaskBuckets
from test_mtmkl_cv_reuse import _folds  # (same folder: folds holding both classes of every task)

KERNELS = ["linear", ("rbf", {"gamma": 0.5})]
CS = (0.1, 1.0, 10.0)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _data(n_per_task=40, seed=0, n_tasks=2):
    rng = np.random.default_rng(seed)
    t = np.repeat(np.arange(n_tasks), n_per_task)
    X = rng.normal(size=(len(t), 3))
    y = (X[:, 0] * (2 * (t % 2) - 1) + 0.3 * X[:, 1] ** 2
         + 0.8 * rng.normal(size=len(t)) > 0).astype(int)
    return X, y, t


@pytest.fixture
def starts(monkeypatch):
    """Every MK-MTFL solve's ``(C, beta0, gamma0, result)``."""
    calls = []
    original = mtfit.solve_mtfl

    def recording(blocks, grams, y_b, loss, C, *args, **kwargs):
        res = original(blocks, grams, y_b, loss, C, *args, **kwargs)
        calls.append((C, kwargs.get("beta0"), kwargs.get("gamma0"), res, blocks))
        return res

    monkeypatch.setattr(mtfit, "solve_mtfl", recording)
    return calls


def _certified(est, tol=1e-3):
    """The fit's own stopping certificate: converged, relative gap within tol."""
    return est.converged_ and est.gap_ <= tol * abs(est.objective_)


def _same_optimum(a, b):
    """Each objective is within its gap above the optimum: so within the larger
    gap of each other."""
    return abs(a.objective_ - b.objective_) <= max(a.gap_, b.gap_)


@pytest.mark.parametrize("seed", [0, 1])
def test_warm_fold_fits_reach_the_cold_optimum_within_tol(starts, seed):
    X, y, t = _data(seed=seed)
    tr = _folds(t, y)[0][0]
    store = FactorStore(max_block_rows=2000)  # (one fold's store, as the CV's)
    previous = None
    for i, C in enumerate(CS):
        warm = MultitaskMKLClassifier(KERNELS, C=C)
        warm._fit_classification(X[tr], y[tr], t[tr], None, factor_store=store)
        _, beta0, gamma0, res, _ = starts[-1]
        # the first C starts cold; every later one from the previous (nearest) C's
        assert (gamma0 is None) == (i == 0) and (beta0 is None) == (i == 0)
        if i:
            np.testing.assert_array_equal(gamma0, previous)
        previous = res["gamma"]
        cold = MultitaskMKLClassifier(KERNELS, C=C).fit(X[tr], y[tr], task_index=t[tr])
        assert starts[-1][1] is None and starts[-1][2] is None  # (a plain fit: cold)
        assert _certified(warm) and _certified(cold)
        assert _same_optimum(warm, cold)
    assert store.start_hits == len(CS) - 1


def test_the_cv_fits_each_fold_from_the_middle_C_out_each_from_the_nearest(starts):
    X, y, t = _data()
    folds = _folds(t, y)
    cv = MultitaskMKLClassifierCV(KERNELS, Cs=(10.0, 0.1, 1.0), cv=folds).fit(
        X, y, task_index=t)
    fold_calls = starts[:-1]
    # the middle C, then up the grid, then down
    assert [c for c, *_ in fold_calls] == [1.0, 10.0, 0.1] * len(folds)
    for k in range(len(folds)):
        mid, up, down = fold_calls[3 * k: 3 * k + 3]
        # (the first fold's first C: cold; a later fold's from the previous
        # fold's fit at it, test_mtmkl_classifier_speed.py)
        assert (mid[1] is None) == (k == 0) and (mid[2] is None) == (k == 0)
        for call in (up, down):  # both from C = 1, the nearest fitted
            np.testing.assert_array_equal(call[2], mid[3]["gamma"])
            for b0, b in zip(call[1], mid[3]["beta"]):
                np.testing.assert_allclose(b0, b * call[0] / mid[0], rtol=1e-12)
    # cv_results_ keeps the order of Cs as given, and its structure
    assert set(cv.cv_results_) == {"param_C", "params", "mean_test_score", "std_test_score",
                                   "rank_test_score", *(f"split{k}_test_score"
                                                        for k in range(len(folds)))}
    np.testing.assert_array_equal(cv.cv_results_["param_C"], [10.0, 0.1, 1.0])
    assert all(np.shape(v) == (3,) for k, v in cv.cv_results_.items() if k != "params")
    assert cv.cv_results_["params"] == [{"C": 10.0}, {"C": 0.1}, {"C": 1.0}]
    assert cv.cv_results_["rank_test_score"].dtype == np.int32
    assert cv.n_splits_ == len(folds)
    best = int(np.argmax(cv.cv_results_["mean_test_score"]))
    assert cv.C_ == cv.cv_results_["param_C"][best]
    assert cv.best_score_ == cv.cv_results_["mean_test_score"][best]


def _at(fold_calls, Cs, C):
    """The kernel weights of the fold fits at ``C`` (fitted in the path's order;
    with sample weights the solver's C is per sample)."""
    path = [Cs[i] for i in _path_order(np.asarray(Cs))]
    return [r["gamma"] for k, (_, _, _, r, _) in enumerate(fold_calls)
            if path[k % len(path)] == C]


def _feasible(beta, blocks, C, y_b):
    """The SMO's test of a start: in the box, the labels' signs, 1'beta_t = 0."""
    for b, (_, _, mask), c, yb in zip(beta, blocks.buckets, C, y_b):
        assert np.all(np.abs(b) <= c + 0.0) and np.all(b * yb >= 0)
        assert np.all(b[~mask] == 0)
        sums, scale = b.sum(axis=1), np.abs(b).sum(axis=1)
        assert np.all(np.abs(sums) <= 1e-12 * np.maximum(scale, 1.0))


@pytest.mark.parametrize("weighted", [False, True])
def test_the_refit_starts_from_its_fold_fits_and_meets_its_certificate(starts, weighted):
    X, y, t = _data(n_per_task=45, n_tasks=3, seed=2)
    sw = None
    if weighted:  # (rows of zero weight are in no fold and not in the refit)
        sw = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
        sw[::9] = 0.0
    cv = MultitaskMKLClassifierCV(KERNELS, Cs=CS, cv=3).fit(
        X, y, task_index=t, sample_weight=sw)
    _, beta0, gamma0, _, blocks = starts[-1]  # the refit
    fold_gammas = _at(starts[:-1], CS, cv.C_)
    assert len(fold_gammas) == 3
    np.testing.assert_allclose(gamma0, np.mean(fold_gammas, axis=0), rtol=1e-12)
    assert beta0 is not None and any(np.any(b != 0) for b in beta0)
    box = [np.where(m, cv.C_ * w, cv.C_) for w, (_, _, m) in zip(
        blocks.gather(np.ones(blocks.n_samples) if sw is None else sw[sw > 0]),
        blocks.buckets)]
    labels = blocks.gather(2.0 * (y if sw is None else y[sw > 0]) - 1.0)
    _feasible(beta0, blocks, box, labels)  # (else the SMO would start at zero)
    cold = MultitaskMKLClassifier(KERNELS, C=cv.C_).fit(X, y, task_index=t,
                                                        sample_weight=sw)
    assert starts[-1][1] is None  # (the plain classifier: cold)
    assert _certified(cv) and _certified(cold) and _same_optimum(cv, cold)


def test_the_refit_start_of_per_task_weights(starts):
    X, y, t = _data(n_tasks=3)
    cv = MultitaskMKLClassifierCV(KERNELS, Cs=(0.5, 2.0), cv=3, formulation="mkl").fit(
        X, y, task_index=t)
    gamma0 = starts[-1][2]
    assert gamma0.shape == (3, len(KERNELS))  # (one weight vector per task)
    np.testing.assert_allclose(
        gamma0, np.mean(_at(starts[:-1], (0.5, 2.0), cv.C_), axis=0), rtol=1e-12)
    assert _certified(cv)


@pytest.mark.parametrize("kw", [{"formulation": "mtsfl"}, {"shared": True},
                                {"formulation": "independent"}])
def test_formulations_without_duals_to_reuse_fit_cold(starts, kw):
    X, y, t = _data()
    cv = MultitaskMKLClassifierCV(KERNELS, Cs=(0.5, 2.0), cv=3, **kw).fit(
        X, y, task_index=t)
    assert all(b0 is None and g0 is None for _, b0, g0, _, _ in starts)
    ref = MultitaskMKLClassifier(KERNELS, C=cv.C_, **kw).fit(X, y, task_index=t)
    np.testing.assert_array_equal(cv.decision_function(X, task_index=t),
                                  ref.decision_function(X, task_index=t))


def test_a_row_start_serves_only_a_fit_on_as_many_rows():
    store = FactorStore()
    rows = TaskBuckets([np.arange(3), np.arange(3, 5)])
    assert store.row_start(rows, 1.0) == (None, None)  # (nothing kept)
    store.keep_row_start(0.5, [0.5, -0.25, -0.25, 0.5, -0.5], [[0.3, 0.7]])
    beta, gamma = store.row_start(rows, 1.0)  # (scaled to the new C: by 2)
    np.testing.assert_array_equal(rows.scatter(beta, 5), [1.0, -0.5, -0.5, 1.0, -1.0])
    np.testing.assert_array_equal(gamma, [[0.3, 0.7]])
    assert store.row_start(TaskBuckets([np.arange(4)]), 1.0) == (None, None)
    store.clear()
    assert store.row_start(rows, 1.0) == (None, None)


def test_the_mirror_descent_starts_at_a_given_point_and_keeps_its_rule():
    from kernlearn.solvers.mirror_descent import _START_MIX, simplex_mirror_descent

    target = np.array([0.7, 0.2, 0.1])
    seen = []

    def oracle(x, it):  # f(x) = 1 + |x - target|^2: linearisations are lower bounds
        seen.append(x.copy())
        d = x - target
        val = 1.0 + (d * d).sum(1)
        grad = 2 * d
        low = val + (grad * (np.eye(3)[None] - x[:, None])).sum(2).min(1)
        return val, low, grad

    cold = simplex_mirror_descent(oracle, 1, 3, max_iter=500, tol=1e-3)
    first_cold = seen[0]
    seen.clear()
    warm = simplex_mirror_descent(oracle, 1, 3, max_iter=500, tol=1e-3,
                                  x0=np.array([[0.69, 0.21, 0.10]]))
    np.testing.assert_allclose(first_cold, [[1 / 3] * 3])
    np.testing.assert_allclose(seen[0], (1 - _START_MIX) * np.array([[0.69, 0.21, 0.10]])
                               + _START_MIX / 3, rtol=1e-12)
    # the same stopping rule from either start; near the optimum, sooner
    assert cold.converged and warm.converged and warm.n_iter < cold.n_iter
    assert warm.value.sum() - warm.lower.sum() <= 1e-3 * abs(warm.value.sum()) + 1e-12


def test_per_task_weights_of_a_fold_without_a_task_do_not_start_the_refit(starts):
    # (a fold may leave out a task from both parts: its per-task weights have
    # fewer rows; averaging them with the others' stopped on NumPy's
    # "inhomogeneous shape")
    X, y, t = _data(n_tasks=3, n_per_task=30)
    r2, third = np.flatnonzero(t != 2), np.flatnonzero(t == 2)
    folds = [(r2[::2], r2[1::2]), (np.r_[r2[1::2], third], r2[::2])]
    cv = MultitaskMKLClassifierCV(KERNELS, Cs=(0.5, 2.0), cv=folds,
                                  formulation="mkl").fit(X, y, task_index=t)
    _, beta0, gamma0, _, _ = starts[-1]
    assert beta0 is not None and gamma0 is None  # (the duals alone, uniform weights)
    assert _certified(cv)
