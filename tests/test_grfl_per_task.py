"""GrFL with the per-task penalties of paper 000, Table 1, and lambda on the paper's scale."""

import numpy as np
import pytest
from scipy.optimize import minimize

from kernlearn import InfiniteFeatureClassifier
from kernlearn.families import RandomFourierFeatures
from kernlearn.losses import Hinge, Logistic, Square, SquaredHinge
from kernlearn.methods.grfl import GrFL, paper_loss_factor
from kernlearn.penalties import PENALTIES, L1, GroupL1L2, PerTaskL1Lq
from kernlearn.solvers import ADMM
from kernlearn.solvers._dirty import DirtyProblem


def _block_norms(W, indptr, q=2.0):
    """||W[g rows, t]||_q of every (feature group, task) block, shape (n_groups, T)."""
    return np.array([[np.linalg.norm(W[a:e, t], ord=q) for t in range(W.shape[1])]
                     for a, e in zip(indptr[:-1], indptr[1:])])


# ------------------------------------------------------------------ prox
@pytest.mark.parametrize("q", [2.0, 1.5, np.inf])
def test_per_task_prox_matches_its_definition(q, rng):
    pen = PerTaskL1Lq(0.8, q=q)
    indptr = np.array([0, 2, 5])
    step = 0.9
    V = rng.normal(size=(5, 3))
    V[:2, 0], V[:2, 2] = [2.0, -1.5], [1.0, 1.8]
    V[:2, 1] = [0.2, -0.3]  # a block below the threshold, beside large ones
    got = pen.matrix_prox(V, step, indptr)

    def obj(x):
        X = x.reshape(V.shape)
        return 0.5 * np.sum((X - V) ** 2) + step * pen.matrix_value(X, indptr)

    best = minimize(obj, V.ravel(), method="Powell",
                    options={"xtol": 1e-10, "ftol": 1e-14, "maxiter": 200000})
    assert obj(got.ravel()) <= best.fun + 1e-9
    if np.isfinite(q):  # (Powell stalls on the kinks of the l-inf norm)
        np.testing.assert_allclose(got, best.x.reshape(V.shape), atol=2e-4)
    # optimality of the prox, block by block: R = (V - X) / step is a
    # subgradient, ||R_b||_q' <= alpha and <R_b, X_b> = alpha ||X_b||_q
    R = (V - got) / step
    qd = {2.0: 2.0, 1.5: 3.0, np.inf: 1.0}[q]
    for a, e in zip(indptr[:-1], indptr[1:]):
        for t in range(3):
            assert np.linalg.norm(R[a:e, t], ord=qd) <= 0.8 * (1 + 1e-8)
            assert R[a:e, t] @ got[a:e, t] == pytest.approx(
                0.8 * np.linalg.norm(got[a:e, t], ord=q), abs=1e-8)
    # per task: the first group is zeroed in task 1 only (a joint norm would
    # keep or zero the whole row block)
    norms = _block_norms(got, indptr)
    assert norms[0, 1] == 0 and norms[0, 0] > 0 and norms[0, 2] > 0
    # value: the sum over tasks of the per-task mixed norms
    assert pen.matrix_value(V, indptr) == pytest.approx(
        0.8 * _block_norms(V, indptr, q).sum())


@pytest.mark.parametrize("q", [2.0, 3.0])
def test_per_task_dual_norm_is_the_zero_threshold_of_the_prox(q, rng):
    # The pricing score of a feature (its row block H, all tasks) is
    # max_t ||h_t||_q'.  A zero block is optimal for the master iff its
    # gradient lies in alpha * (unit dual ball): prox(-s H, s) = 0 exactly when
    # the score is <= alpha.
    pen = PerTaskL1Lq(1.3, q=q)
    ip = np.array([0, 2])
    H = rng.normal(size=(2, 4))
    qd = q / (q - 1.0)
    per_task = np.array([np.linalg.norm(H[:, t], ord=qd) for t in range(4)])
    assert pen.matrix_dual_norm(H, ip)[0] == pytest.approx(per_task.max())
    for c, zero in ((0.99, True), (1.01, False)):
        Hc = H * (c * pen.alpha / per_task.max())
        X = pen.matrix_prox(-Hc, 1.0, ip)
        assert np.all(X == 0) == zero


def test_registry_and_single_task_is_l1lq(rng):
    assert type(PENALTIES.resolve("per_task_l1_lq")) is PerTaskL1Lq
    w = rng.normal(size=6)
    ip = np.array([0, 2, 6])
    np.testing.assert_allclose(PerTaskL1Lq(0.5).prox(w, 0.7, ip),
                               GroupL1L2(0.5).prox(w, 0.7, ip))
    # one task: per-task and joint penalties coincide
    W = w[:, None]
    np.testing.assert_allclose(PerTaskL1Lq(0.5).matrix_prox(W, 0.7, ip),
                               GroupL1L2(0.5).matrix_prox(W, 0.7, ip))


# ----------------------------------------------------- master: cvxpy, KKT
def test_per_task_master_agrees_with_cvxpy_and_satisfies_kkt(rng):
    cp = pytest.importorskip("cvxpy")
    n, p, T, lam, lam_s = 40, 6, 3, 0.6, 1.5
    Phi = rng.normal(size=(n, p))
    Phi /= np.linalg.norm(Phi, axis=0)
    Y = rng.choice([-1.0, 1.0], size=(n, T))
    indptr = np.array([0, 2, 4, 6])
    P = DirtyProblem(Phi, Y, SquaredHinge(), PerTaskL1Lq(lam), L1(lam_s), indptr=indptr)
    res = ADMM(tol=1e-8, max_iter=50000).solve(P)
    assert res.converged
    W, b = cp.Variable((p, T)), cp.Variable(T)
    ws = cp.Variable(p)
    fit = sum(0.5 * cp.sum_squares(cp.pos(1 - cp.multiply(Y[:, t], Phi @ (W[:, t] + ws)
                                                          + b[t]))) for t in range(T))
    reg = sum(cp.norm(W[a:e, t], 2) for a, e in zip(indptr[:-1], indptr[1:])
              for t in range(T))
    prob = cp.Problem(cp.Minimize(fit + lam * reg + lam_s * cp.norm1(ws)))
    prob.solve()
    assert res.state["objective"] == pytest.approx(prob.value, rel=1e-6, abs=1e-6)
    # KKT of each (group, task) block (paper 000, eq. (3) for this penalty)
    U, us = res.coef
    gW, gws, gb = P.gradients(P.margins(U, us, res.intercept))
    norms = _block_norms(U, indptr)
    for g, (a, e) in enumerate(zip(indptr[:-1], indptr[1:])):
        for t in range(T):
            if norms[g, t] == 0:
                assert np.linalg.norm(gW[a:e, t]) <= lam * (1 + 1e-4)
            else:
                np.testing.assert_allclose(gW[a:e, t] + lam * U[a:e, t] / norms[g, t], 0,
                                           atol=1e-4)
    np.testing.assert_allclose(gb, 0, atol=1e-5)
    # the per-task penalty lets a feature serve some tasks and not others
    assert np.any((norms == 0).any(axis=1) & (norms > 0).any(axis=1))


# --------------------------------------------------------------- pricing
def _path(rng, n=150, T=3, n_features=3):
    X = rng.normal(size=(n, 2))
    y = rng.integers(0, T, n)
    Y = np.where(y[:, None] == np.arange(T), 1.0, -1.0)
    fam = RandomFourierFeatures(bandwidth=1.0).fit(X)
    path = GrFL(fam, SquaredHinge(), PerTaskL1Lq(0.5), None, ADMM(tol=1e-8, max_iter=20000),
                n_candidates=40, eps=0.0).start(X, Y, None, np.random.default_rng(0))
    return path.extend(n_features), X


def test_pricing_picks_the_candidate_violating_its_conditions_most(rng):
    path, X = _path(rng)
    G = path.grad_matrix()
    params = path.family.sample(60, np.random.default_rng(1))
    H, _ = path.family.correlations(params, X, G)
    got = path.violation(H)
    # brute force, one candidate at a time: unit-norm columns, gradient block,
    # then the per-task condition ||Phi_c' g_t||_2 <= lambda of every task
    brute = np.empty(len(params))
    for c in range(len(params)):
        cols = path.family.columns(params[c : c + 1], X)
        cols = cols / np.linalg.norm(cols, axis=0)
        B = cols.T @ G
        brute[c] = np.linalg.norm(B, axis=0).max() / 0.5 - 1.0
        # it is a violation exactly when the zero block fails the master's
        # optimality: a prox-gradient step from zero moves the block
        moved = np.any(path.penalty_p.matrix_prox(-B, 1.0, np.array([0, 2])) != 0)
        assert moved == (brute[c] > 0)
    np.testing.assert_allclose(got, brute, rtol=1e-10, atol=1e-12)
    assert int(np.argmax(got)) == int(np.argmax(brute))
    # and the pricing step returns the best sampled candidate
    path._reserve(path.p // path.gs + 1)
    cand = path.price()
    assert cand.scores[0] == pytest.approx(path.last_violation)


def test_per_task_path_stops_at_kkt_of_the_full_problem(rng):
    # Proposition 1 for this penalty: at the end no fresh candidate violates
    # its per-task conditions by more than eps, and the master is solved.
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] ** 2 + X[:, 1] > 0.5).astype(int) + (X[:, 1] > 1).astype(int)
    Y = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
    fam = RandomFourierFeatures(bandwidth=1.0).fit(X)
    eps = 0.05
    path = GrFL(fam, SquaredHinge(), PerTaskL1Lq(2.0), None, ADMM(tol=1e-6, max_iter=20000),
                n_candidates=300, eps=eps).start(X, Y, None, np.random.default_rng(0))
    path.extend(60)
    assert path.stop_reason == "no_violation" and path.p > 0
    assert path.state["kkt"] <= 1e-6
    fresh = fam.sample(500, np.random.default_rng(7))
    H, _ = fam.correlations(fresh, X, path.grad_matrix())
    assert path.violation(H).max() <= 3 * eps


def test_estimator_accepts_per_task_penalty():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 2))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] ** 2, [-0.5, 0.7])
    clf = InfiniteFeatureClassifier(RandomFourierFeatures(bandwidth=1.0), max_features=15,
                                    penalty="per_task_l1_lq", lambda_p=1.0,
                                    random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.8
    used = np.abs(clf.task_coef_.reshape(3, -1, 2)).max(axis=2) > 0  # (task, feature)
    assert used.any(axis=0).all()  # kept features serve some task
    assert not used.all()  # but not every task uses every feature


# ------------------------------------------------------- lambda, paper scale
def test_paper_objective_equals_our_objective_times_the_factor(rng):
    # paper 000, eq. (1)/(18) and Table 2: L = (a)_+'(a)_+ with a = 1 - y m
    # (squared hinge), a'a with a = y - m (square), no factor 1/2
    n, p, T, lam_p, lam_s = 30, 4, 2, 0.7, 0.3
    Phi = rng.normal(size=(n, p))
    indptr = np.array([0, 2, 4])
    W, ws, b = rng.normal(size=(p, T)), rng.normal(size=p), rng.normal(size=T)
    M = Phi @ (W + ws[:, None]) + b
    for loss, Y, paper_loss in (
        (SquaredHinge(), rng.choice([-1.0, 1.0], size=(n, T)),
         lambda Y: np.sum(np.maximum(0, 1 - Y * M) ** 2)),
        (Square(), rng.normal(size=(n, T)), lambda Y: np.sum((Y - M) ** 2)),
        (Logistic(), rng.choice([-1.0, 1.0], size=(n, T)),
         lambda Y: np.sum(np.log1p(np.exp(-Y * M)))),
    ):
        c = paper_loss_factor(loss)
        paper = (paper_loss(Y) + lam_p * sum(np.linalg.norm(W[a:e]) for a, e in
                                             zip(indptr[:-1], indptr[1:]))
                 + lam_s * np.abs(ws).sum())
        ours = DirtyProblem(Phi, Y, loss, GroupL1L2(lam_p / c), L1(lam_s / c), indptr=indptr)
        assert c * ours.objective(W, ws, b) == pytest.approx(paper, rel=1e-12)
    with pytest.raises(ValueError, match="paper"):
        paper_loss_factor(Hinge())


def test_lambda_scale_paper_fits_the_papers_problem():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 2))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] > 0).astype(int)
    kw = dict(max_features=8, n_candidates=30, inner_tol=1e-8, inner_max_iter=20000,
              random_state=0)
    fam = RandomFourierFeatures(bandwidth=1.0)
    paper = InfiniteFeatureClassifier(fam, lambda_p=0.8, lambda_scale="paper", **kw).fit(X, y)
    ours = InfiniteFeatureClassifier(fam, lambda_p=0.4, **kw).fit(X, y)
    np.testing.assert_allclose(paper.column_coef_, ours.column_coef_, atol=1e-8)
    # the paper's objective of the fitted model, from its formula
    m = paper.decision_function(X)
    yy = np.where(y == 1, 1.0, -1.0)
    W = paper.column_coef_[0].reshape(-1, 2)
    formula = np.sum(np.maximum(0, 1 - yy * m) ** 2) + 0.8 * np.linalg.norm(W, axis=1).sum()
    assert 2.0 * paper.objective_ == pytest.approx(formula, rel=1e-9)
