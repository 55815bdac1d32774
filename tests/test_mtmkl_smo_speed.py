"""Chained face steps in the multitask SVM / SVR duals (issue 24, verbagg).

The compiled SMO of :mod:`kernlearn.methods.mtmkl._smo` takes a Newton step
on the face of the free duals when its pair updates have paid for one; a step
that the box cuts (a free dual reaches its bound) is now followed at once by
the step on the smaller face, as an active-set method would, while the face
steps cost at most ``_CHAIN_RATIO`` times the pair updates.  On verbagg's
tasks (overlapping classes, many repeated rows, C = 10) the pair updates
between two cut steps had mostly undone and redone the free duals' part.
Only the path changes: these tests hold the duals to the KKT conditions
recomputed from scratch, to the unchained solver's and to libsvm's
(scikit-learn's ``SVC(kernel="precomputed")``), check the face step's new
return codes against what it did, and that the chains are what saves the
pair updates (they fail if the rule is removed).
"""

from types import SimpleNamespace

import numpy as np
import pytest
from conftest import assert_same_task_decisions

from kernlearn.methods.mtmkl import _smo
from kernlearn.methods.mtmkl._smo import libsvm_buckets, smo_buckets
from test_mtmkl_svm_speed import _dual, _kkt_violation  # (same folder; its EPS is 0.1 too)

EPS = 0.1


def _survey_bucket(seed=2, T=2, m=500, n_people=60, n_items=8):
    """verbagg's shape: rows of (person's anger and gender, item), so many rows
    repeat, and labels that the inputs explain only in part (overlapping
    classes); half linear, half Gaussian kernel, as the default estimator's."""
    rng = np.random.default_rng(seed)
    K = np.zeros((T, m, m))
    labels, targets = np.zeros((T, m)), np.zeros((T, m))
    sizes = np.array([m - 13 * a for a in range(T)])
    for a, mt in enumerate(sizes):
        anger, gender = rng.integers(11, 40, n_people), rng.integers(0, 2, n_people)
        person, item = rng.integers(0, n_people, mt), rng.integers(0, n_items, mt)
        X = np.column_stack([anger[person], gender[person], np.eye(n_items)[item]])
        X = (X - X.mean(0)) / X.std(0)
        score = 0.05 * (anger[person] - 25) + 0.5 * (item % 3 - 1) + rng.normal(size=mt)
        D = ((X[:, None] - X[None]) ** 2).sum(-1)
        K[a, :mt, :mt] = 0.5 * X @ X.T / X.shape[1] + 0.5 * np.exp(-D / X.shape[1])
        labels[a, :mt] = np.where(score > 0, 1.0, -1.0)
        targets[a, :mt] = score
    return K, labels, targets, sizes


def test_chains_save_pair_updates_on_repeated_overlapping_rows():
    # the rule under test: without the chains (face_chain=False, the rule
    # before) the same tasks take over twice the pair updates
    K, labels, _, sizes = _survey_bucket()
    chained = smo_buckets(K, labels, sizes, 30.0, tol=1e-8, return_face_steps=True)
    plain = smo_buckets(K, labels, sizes, 30.0, tol=1e-8, return_face_steps=True,
                        face_chain=False)
    assert chained[3].all() and plain[3].all()
    assert chained[2].sum() < 0.5 * plain[2].sum(), (chained[2], plain[2])
    # the chained steps are counted as face steps
    assert chained[4].sum() > plain[4].sum() > 0
    # the same optimum (the same stopping rule on the same tol)
    mask = np.arange(K.shape[1])[None] < sizes[:, None]
    for beta, _, _, _, _ in (chained, plain):
        assert np.all(_kkt_violation(K, labels, beta, 30.0, sizes, False) < 1e-8 + 1e-10)
        np.testing.assert_allclose(beta.sum(1), 0.0, atol=1e-10)
        assert np.all(beta * labels >= 0) and np.all(np.abs(beta) <= 30.0 * (1 + 1e-12))
    np.testing.assert_allclose(_dual(K, labels, chained[0], False),
                               _dual(K, labels, plain[0], False), rtol=1e-10)
    f_c = np.einsum("tij,tj->ti", K, chained[0]) + chained[1][:, None]
    f_p = np.einsum("tij,tj->ti", K, plain[0]) + plain[1][:, None]
    np.testing.assert_allclose(f_c[mask], f_p[mask], atol=1e-5)


@pytest.mark.parametrize("regression", [False, True])
def test_chained_duals_agree_with_libsvm(regression):
    # scikit-learn's SVC / SVR(kernel="precomputed") on each task, tol 1e-8
    K, labels, targets, sizes = _survey_bucket(seed=0, m=240)
    y = targets if regression else labels
    beta, b, _, ok, n_face = smo_buckets(K, y, sizes, 10.0, regression, EPS, tol=1e-8,
                                         return_face_steps=True)
    assert ok.all() and n_face.sum() > 0
    assert np.all(_kkt_violation(K, y, beta, 10.0, sizes, regression) < 1e-8 + 1e-10)
    ref, ref_b, *_ = libsvm_buckets(K, y, sizes, 10.0, regression, EPS, tol=1e-8)
    np.testing.assert_allclose(_dual(K, y, beta, regression),
                               _dual(K, y, ref, regression), rtol=1e-9)
    mask = np.arange(K.shape[1])[None] < sizes[:, None]
    f = np.einsum("tij,tj->ti", K, beta) + b[:, None]
    f_ref = np.einsum("tij,tj->ti", K, ref) + ref_b[:, None]
    np.testing.assert_allclose(f[mask], f_ref[mask], atol=1e-5)


def test_a_zero_chain_budget_is_the_unchained_solver(monkeypatch):
    # the cost bound: with no budget for chains the path is the old rule's, bit
    # for bit (so a chain is taken only within it)
    K, labels, _, sizes = _survey_bucket(seed=3, m=300)
    plain = smo_buckets(K, labels, sizes, 30.0, tol=1e-8, return_face_steps=True,
                        face_chain=False)
    monkeypatch.setattr(_smo, "_CHAIN_RATIO", 0.0)
    capped = smo_buckets(K, labels, sizes, 30.0, tol=1e-8, return_face_steps=True)
    for a, b in zip(plain, capped):
        np.testing.assert_array_equal(a, b)
    monkeypatch.setattr(_smo, "_CHAIN_RATIO", 16.0)
    chained = smo_buckets(K, labels, sizes, 30.0, tol=1e-8, return_face_steps=True)
    assert chained[4].sum() > plain[4].sum()


def _face_problem(C):
    """Three free duals of an SVM (labels +1, +1, -1) on a positive definite
    kernel, with the running gradient ``G = Q alpha + p`` and what
    :func:`_smo._face_step` needs (an assembled kernel: no packed rows)."""
    K = np.array([[2.0, 0.5, 0.2], [0.5, 1.5, 0.1], [0.2, 0.1, 1.0]], np.float32)
    s = np.array([1.0, 1.0, -1.0])
    alpha = np.array([0.05, 0.05, 0.1])
    Cv = np.full(3, C)
    Q = s[:, None] * s[None] * K.astype(float)
    G = Q @ alpha - 1.0
    lazy = (np.zeros(0, np.bool_), np.zeros(0), np.zeros((0, 1)), 3, np.arange(3),
            np.zeros((0, 1, 1)), np.zeros(0))
    return K, s, Cv, alpha, G, Q, lazy


def _dual_value(Q, alpha):
    return alpha.sum() - 0.5 * alpha @ Q @ alpha


def test_face_step_reports_a_step_to_the_minimum_and_a_cut_one():
    free, active = np.arange(3), np.arange(3)
    # a large box: the step reaches the face's minimum (1), where the free
    # duals' s_i G_i are equal (the equality constraint's multiplier)
    K, s, Cv, alpha, G, Q, lazy = _face_problem(100.0)
    before = _dual_value(Q, alpha)
    moved = _smo._face_step(K, s, Cv, alpha, G, 3, free, 1e-8, active, lazy)
    assert moved == 1
    assert np.all((alpha > 0) & (alpha < 100.0))
    np.testing.assert_allclose(s @ alpha, 0.05 + 0.05 - 0.1, atol=1e-15)
    np.testing.assert_allclose(G, Q @ alpha - 1.0, atol=1e-12)  # the kept gradient
    np.testing.assert_allclose(s * G, (s * G).mean(), atol=1e-10)
    assert _dual_value(Q, alpha) > before
    minimum = alpha.copy()
    # a box that cuts the way there: a dual stops at its bound (2), exactly
    K, s, Cv, alpha, G, Q, lazy = _face_problem(0.12)
    assert minimum.max() > 0.12
    moved = _smo._face_step(K, s, Cv, alpha, G, 3, free, 1e-8, active, lazy)
    assert moved == 2
    assert np.any(alpha == 0.12) or np.any(alpha == 0.0)
    assert np.all((alpha >= 0) & (alpha <= 0.12))
    np.testing.assert_allclose(G, Q @ alpha - 1.0, atol=1e-12)
    assert _dual_value(Q, alpha) > before


def test_the_multitask_classifier_fit_is_the_same_optimum(monkeypatch):
    # a whole MultitaskMKLClassifier fit on repeated, overlapping rows: with
    # and without the chains the same MK-MTFL objective and decision values
    # to the tolerances (the stop and its certificate are unchanged)
    from kernlearn import MultitaskMKLClassifier

    rng = np.random.default_rng(0)
    n, people = 600, 70
    anger, gender = rng.integers(11, 40, people), rng.integers(0, 2, people)
    person, item = rng.integers(0, people, n), rng.integers(0, 6, n)
    X = np.column_stack([anger[person], gender[person], item]).astype(float)
    tasks = item % 2
    y = np.where(0.05 * (X[:, 0] - 25) + 0.4 * (item % 3 - 1) + rng.normal(size=n) > 0,
                 "yes", "no")
    calls = []
    real = _smo.smo_buckets

    def counted(*args, **kw):
        out = real(*args, **kw)
        calls.append(int(out[2].sum()))
        return out

    monkeypatch.setattr(_smo, "smo_buckets", counted)
    new = MultitaskMKLClassifier().fit(X, y, task_index=tasks)
    chained_updates = sum(calls)
    calls.clear()
    monkeypatch.setattr(_smo, "_CHAIN_RATIO", 0.0)
    old = MultitaskMKLClassifier().fit(X, y, task_index=tasks)
    assert chained_updates < sum(calls)
    np.testing.assert_allclose(new.objective_, old.objective_, rtol=1e-9)
    np.testing.assert_allclose(new.decision_function(X, task_index=tasks),
                               old.decision_function(X, task_index=tasks), atol=1e-5)
    np.testing.assert_array_equal(new.predict(X, task_index=tasks),
                                  old.predict(X, task_index=tasks))


def _repeated_bucket(seed=0, T=2, m=180):
    """Packed linear and Gaussian base kernels of tasks whose rows repeat (a
    few distinct categorical rows), labels that overlap, per-row bounds."""
    from kernlearn.methods.mtmkl import mtfl

    rng = np.random.default_rng(seed)
    grams = np.zeros((2, T, m, m))
    labels, targets, Cs = np.zeros((T, m)), np.zeros((T, m)), np.zeros((T, m))
    sizes = np.array([m - 9 * a for a in range(T)])
    for a, mt in enumerate(sizes):
        X = np.column_stack([rng.integers(0, 3, mt), rng.integers(0, 4, mt),
                             rng.integers(0, 2, mt)]).astype(float)
        X = (X - X.mean(0)) / X.std(0)
        score = X @ [0.6, -0.4, 0.3] + rng.normal(size=mt)
        grams[0, a, :mt, :mt] = X @ X.T / 3
        grams[1, a, :mt, :mt] = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 3)
        labels[a, :mt] = np.where(score > 0, 1.0, -1.0)
        targets[a, :mt] = score.round(0)  # (repeated rows with equal targets too)
        Cs[a, :mt] = rng.choice([0.1, 0.3, 0.7], mt)  # (shares of sums: rounded)
    Gp = mtfl._task_major([grams])[0]
    W = np.array([[0.7, 1.3], [1.1, 0.4]])[:T]
    K = np.einsum("tk,ktij->tij", W, grams)
    return grams, Gp, W, K, labels, targets, Cs, sizes


def test_repeated_rows_are_exactly_the_equal_rows_and_labels():
    grams, Gp, _, _, labels, _, _, sizes = _repeated_bucket()
    first = _smo.repeated_rows(Gp, labels, sizes)
    for a, mt in enumerate(sizes):
        # by brute force: the first row with the same rows of both kernels and label
        rows = np.concatenate([grams[0, a, :mt, :mt], grams[1, a, :mt, :mt],
                               labels[a, :mt, None]], axis=1)
        same = (rows[:, None] == rows[None]).all(-1)
        np.testing.assert_array_equal(first[a, :mt], same.argmax(1))
        np.testing.assert_array_equal(first[a, mt:], np.arange(mt, first.shape[1]))
        assert (first[a, :mt] < np.arange(mt)).sum() > mt // 2  # (many repeat)
    # a row that differs in the last bit of one entry, or in its label, is its own
    Gp2, y2 = Gp.copy(), labels.copy()
    r = int(np.flatnonzero(first[0, :sizes[0]] < np.arange(sizes[0]))[0])
    y2[0, r] = -y2[0, r]
    assert _smo.repeated_rows(Gp, y2, sizes)[0, r] == r
    m = labels.shape[1]
    q = r * m - (r * (r - 1)) // 2 - r + max(r, m - 1)  # packed (r, last)
    Gp2[0, 1, q] = np.nextafter(Gp2[0, 1, q], np.inf)
    assert _smo.repeated_rows(Gp2, labels, sizes)[0, r] == r


@pytest.mark.parametrize("regression", [False, True])
def test_merged_repeated_rows_solve_the_same_dual(regression):
    # merging is the same problem: each row's dual meets the KKT conditions of
    # the unmerged one (recomputed from scratch), the dual value and the
    # decision values are the unmerged solver's and libsvm's, and a merged
    # variable is shared in proportion to the rows' C_i
    _, Gp, W, K, labels, targets, Cs, sizes = _repeated_bucket(seed=1)
    y = targets if regression else labels
    first = _smo.repeated_rows(Gp, y, sizes)
    merged = smo_buckets(None, y, sizes, Cs, regression, EPS, tol=1e-8,
                         packed=(W, Gp, first))
    plain = smo_buckets(None, y, sizes, Cs, regression, EPS, tol=1e-8, packed=(W, Gp))
    ref, ref_b, *_ = libsvm_buckets(K, y, sizes, Cs, regression, EPS, tol=1e-8)
    assert merged[3].all() and plain[3].all()
    beta = merged[0]
    assert np.all(_kkt_violation(K, y, beta, Cs, sizes, regression) < 1e-8 + 1e-10)
    np.testing.assert_allclose(beta.sum(1), 0.0, atol=1e-10)
    assert np.all(np.abs(beta) <= Cs * (1 + 1e-12))
    for other in (plain[0], ref):
        np.testing.assert_allclose(_dual(K, y, beta, regression),
                                   _dual(K, y, other, regression), rtol=1e-10)
    assert_same_task_decisions(K, sizes, [(beta, merged[1]), plain[:2], (ref, ref_b)],
                               atol=1e-5)
    for a, mt in enumerate(sizes):
        share = beta[a, :mt] / Cs[a, :mt]
        np.testing.assert_allclose(share, share[first[a, :mt]], rtol=1e-12, atol=0)
    # a row of a merged variable at its bound is exactly at its own (no share
    # rounded past C_i): the solution, and the start scaled from it along a C
    # grid, stay feasible; restarted from itself the solve makes no pair update
    # (a start 1 ulp past a bound is infeasible: a cold start)
    at = np.abs(beta) >= Cs * (1 - 1e-9)
    assert at.any() and np.all(np.abs(beta[at]) == Cs[at]) and np.all(np.abs(beta) <= Cs)
    again = smo_buckets(None, y, sizes, Cs, regression, EPS, tol=1e-8, beta0=beta,
                        packed=(W, Gp, first))
    assert again[2].tolist() == [0] * len(sizes)
    # without repeats (all rows their own) the path is the unmerged one, bit for bit
    own = np.broadcast_to(np.arange(y.shape[1]), y.shape)
    alone = smo_buckets(None, y, sizes, Cs, regression, EPS, tol=1e-8,
                        packed=(W, Gp, own))
    for u, v in zip(alone, plain):
        np.testing.assert_array_equal(u, v)


def test_mtfl_hands_the_repeated_rows_to_the_solver(monkeypatch):
    # the rule under test: MK-MTFL finds the repeated rows once and every SVM
    # solve merges them (fewer variables); the fit is the unmerged optimum
    from kernlearn.methods.mtmkl import mtfl

    grams, _, _, _, labels, _, _, sizes = _repeated_bucket(seed=2)

    mask = np.arange(labels.shape[1])[None] < sizes[:, None]
    # (one bucket: what solve_mtfl reads of TaskBuckets)
    blocks = SimpleNamespace(n_tasks=len(sizes), buckets=[(np.arange(len(sizes)), None,
                                                           mask)],
                             by_task=np.concatenate)

    seen = []
    real = _smo.smo_buckets

    def spy(K, y, sizes_, C, *args, packed=None, **kw):
        seen.append(packed)
        return real(K, y, sizes_, C, *args, packed=packed, **kw)

    monkeypatch.setattr(_smo, "smo_buckets", spy)
    new = mtfl.solve_mtfl(blocks, [grams], [labels], "hinge", 10.0, tol=1e-4)
    assert seen and all(len(p) == 3 and p[2] is not None for p in seen)
    first = seen[0][2]
    assert (first[0, :sizes[0]] < np.arange(sizes[0])).any()
    monkeypatch.setattr(_smo, "smo_buckets",
                        lambda *a, packed=None, **kw: real(
                            *a, packed=None if packed is None else packed[:2], **kw))
    old = mtfl.solve_mtfl(blocks, [grams], [labels], "hinge", 10.0, tol=1e-4)
    np.testing.assert_allclose(new["objective"], old["objective"], rtol=1e-9)
    np.testing.assert_allclose(new["gamma"], old["gamma"], atol=1e-6)
    K = np.einsum("tk,ktij->tij", new["gamma"][0][None], grams)
    assert_same_task_decisions(K, sizes, [(new["beta"][0], new["b"]),
                                          (old["beta"][0], old["b"])], atol=1e-5)
