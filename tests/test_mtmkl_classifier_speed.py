"""``MultitaskMKLClassifierCV``: each fold's first C starts from the previous
fold's fit at that C (issue 24, twenty-ninth pass).

The first C of every fold (the grid's middle one) was solved from zero duals
and uniform kernel weights: those cold SVM solves were half of Turnout's
search.  A fold now starts from the previous fold's fit at the same C: its
duals on the rows both trained on, on the previous fold's validation rows
(training rows of this one) the duals its decision values give them by the
hinge's KKT conditions (the bound inside the margin, zero outside), made
feasible (each task's duals summing to zero, in the box), and its kernel
weights.  Every fit still stops on its own duality gap, so the models are the
cold path's optimum within ``tol``.
"""

import numpy as np
import pytest
from test_mtmkl_cv_path import KERNELS, _certified, _data, _feasible, starts  # noqa: F401
from test_mtmkl_cv_reuse import _folds

from kernlearn import MultitaskMKLClassifierCV
from kernlearn.methods.mtmkl import FactorStore
from kernlearn.methods.mtmkl._fold_starts import path_order

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

CS = (0.1, 1.0, 10.0)


@pytest.fixture
def leads(monkeypatch):
    """Every ``(start handed to the next fold, fold fit, validation rows)``."""
    calls = []
    original = MultitaskMKLClassifierCV._lead

    def recording(self, start, est, decision, yte, C, te):
        out = original(self, start, est, decision, yte, C, te)
        calls.append((out, est, np.asarray(te), C, start))
        return out

    monkeypatch.setattr(MultitaskMKLClassifierCV, "_lead", recording)
    return calls


@pytest.fixture
def row_starts(monkeypatch):
    """Every row start kept in a store, and every one a fit took."""
    kept, taken = [], []
    keep, take = FactorStore.keep_row_start, FactorStore.row_start

    def keeping(self, C, beta, gamma):
        kept.append((C, np.array(beta), None if gamma is None else np.array(gamma)))
        return keep(self, C, beta, gamma)

    def taking(self, blocks, C):
        out = take(self, blocks, C)
        taken.append(out[0] is not None)
        return out

    monkeypatch.setattr(FactorStore, "keep_row_start", keeping)
    monkeypatch.setattr(FactorStore, "row_start", taking)
    return kept, taken


def _cold_folds(monkeypatch):
    """The path before: every fold's first C from zero (no start handed on)."""
    monkeypatch.setattr(MultitaskMKLClassifierCV, "_lead", lambda self, *a: None)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_search_agrees_with_cold_folds_within_tol(monkeypatch, seed):
    X, y, t = _data(n_per_task=50, n_tasks=3, seed=seed)
    warm = MultitaskMKLClassifierCV(KERNELS, Cs=CS, cv=4).fit(X, y, task_index=t)
    _cold_folds(monkeypatch)
    cold = MultitaskMKLClassifierCV(KERNELS, Cs=CS, cv=4).fit(X, y, task_index=t)
    assert warm.C_ == cold.C_
    # (validation accuracies: a row's prediction can flip where the fold
    # models differ within tol; on these 150 rows none did)
    np.testing.assert_allclose(warm.cv_results_["mean_test_score"],
                               cold.cv_results_["mean_test_score"], atol=0.02)
    assert _certified(warm) and _certified(cold)
    assert abs(warm.objective_ - cold.objective_) <= max(warm.gap_, cold.gap_)
    dw, dc = (m.decision_function(X, task_index=t) for m in (warm, cold))
    assert np.abs(dw - dc).max() <= 0.05 * np.abs(dc).max()


def test_each_fold_after_the_first_starts_from_the_previous_fold(leads, row_starts, starts):  # noqa: F811
    X, y, t = _data(n_per_task=50, n_tasks=3, seed=3)
    folds = _folds(t, y, n_folds=4)
    cv = MultitaskMKLClassifierCV(KERNELS, Cs=CS, cv=folds).fit(X, y, task_index=t)
    kept, taken = row_starts
    # one start handed on by every fold but the last, each of the middle C
    assert len(leads) == len(folds) - 1 and all(c == 1.0 for *_, c, _ in leads)
    # every fold but the first took it (one dual per training row: the right
    # rows), then the refit took its own
    assert len(kept) == len(folds) and taken.count(True) == len(folds)
    fold_mids = [s for s in starts[:-1] if s[0] == 1.0]
    assert fold_mids[0][1] is None  # (the first fold: cold)
    for k in range(1, len(folds)):
        lead, est, te, _, start = leads[k - 1]
        tr_prev, te_prev = folds[k - 1]
        np.testing.assert_array_equal(te, te_prev)  # (the previous fold's fit...)
        # ...whose duals it carries on the rows that fold trained on
        np.testing.assert_array_equal(lead[0][tr_prev], start[0][tr_prev])
        np.testing.assert_array_equal(lead[1], est._model.kernel_weights[None, :])
        tr = np.asarray(folds[k][0])
        C, beta, gamma = kept[k - 1]
        assert C == 1.0 and len(beta) == len(tr)
        np.testing.assert_array_equal(gamma, lead[1])
        # the kept duals: the lead's on this fold's rows, each task's side
        # that outweighed the other scaled down (so zero where the lead is)
        assert np.all((beta == 0) | (np.sign(beta) == np.sign(lead[0][tr])))
        assert np.all(np.abs(beta) <= np.abs(lead[0][tr]) + 1e-15)
        for task in np.unique(t):
            assert abs(beta[t[tr] == task].sum()) <= 1e-12
        # and the solve of this fold's first C started from it (scaled by 1)
        beta0 = fold_mids[k][1]
        blocks = fold_mids[k][4]
        np.testing.assert_allclose(np.concatenate([b[m] for b, (_, _, m) in zip(
            beta0, blocks.buckets)]), np.concatenate([
                beta[np.asarray(i)[m]] for _, i, m in blocks.buckets]), rtol=0, atol=0)
    assert _certified(cv)


def test_a_lead_gives_the_validation_rows_their_kkt_duals(leads):
    X, y, t = _data(n_per_task=50, n_tasks=3, seed=4)
    folds = _folds(t, y, n_folds=3)
    MultitaskMKLClassifierCV(KERNELS, Cs=CS, cv=folds).fit(X, y, task_index=t)
    for lead, est, te, C, start in leads:
        f = est.decision_function(X[te], task_index=t[te])
        s = np.where(y[te] == est.classes_[1], 1.0, -1.0)
        want = np.where(s * f < 1.0, s * C, 0.0)
        np.testing.assert_array_equal(lead[0][te], want)
        assert np.any(want != 0) and np.any(want == 0)  # (both cases met)
        # the fit's own duals were zero there (it did not train on them)
        assert np.all(start[0][te] == 0) and np.all(start[2][te] == 0)


def test_the_kept_start_is_feasible_with_sample_weights(row_starts, starts):  # noqa: F811
    X, y, t = _data(n_per_task=50, n_tasks=3, seed=5)
    sw = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    sw[::7] = 0.0  # (rows of zero weight are no fit's: not in any start)
    folds = _folds(t, y, n_folds=3)
    cv = MultitaskMKLClassifierCV(KERNELS, Cs=CS, cv=folds).fit(
        X, y, task_index=t, sample_weight=sw)
    _, taken = row_starts
    assert taken.count(True) == 3  # (the two later folds and the refit)
    for k in (1, 2):  # (a fold's fits in the path's order: its middle C first)
        _, beta0, gamma0, _, blocks = starts[len(CS) * k]
        rows = np.asarray(folds[k][0])
        rows = rows[sw[rows] > 0]
        assert beta0 is not None and gamma0 is not None
        box = [np.where(m, 1.0 * w, 1.0) for w, (_, _, m) in zip(
            blocks.gather(sw[rows]), blocks.buckets)]
        _feasible(beta0, blocks, box, blocks.gather(2.0 * y[rows] - 1.0))
    assert _certified(cv)


def test_the_first_c_of_later_folds_takes_fewer_pair_updates(monkeypatch):
    import kernlearn.methods.mtmkl._smo as smo

    X, y, t = _data(n_per_task=150, n_tasks=2, seed=6)
    folds = _folds(t, y, n_folds=5)
    counts = []
    original = smo.smo_buckets

    def counting(*args, **kwargs):
        out = original(*args, **kwargs)
        counts.append(int(np.sum(out[2])))
        return out

    monkeypatch.setattr(smo, "smo_buckets", counting)
    MultitaskMKLClassifierCV(KERNELS, Cs=CS, cv=folds).fit(X, y, task_index=t)
    warm = sum(counts)
    counts.clear()
    _cold_folds(monkeypatch)
    MultitaskMKLClassifierCV(KERNELS, Cs=CS, cv=folds).fit(X, y, task_index=t)
    assert warm < sum(counts)


def test_the_lead_is_none_without_duals():
    est = MultitaskMKLClassifierCV(KERNELS)
    assert est._lead(None, None, None, None, 1.0, None) is None
    store = FactorStore()
    est._keep_start(store, None, 1.0, None, np.arange(3), np.zeros(3), None)
    assert store._row_start is None


def test_path_order_is_unchanged():
    np.testing.assert_array_equal(path_order(np.array(CS)), [1, 2, 0])
