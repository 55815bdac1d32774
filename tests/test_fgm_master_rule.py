"""FGM's master chosen by cost on wide active sets (issue 24 item 2).

Every active set with more columns than rows used to take APG ("singular
Hessian"), although proximal Newton was the cheaper master on most of them
(audit 62: on the wide benchmark, n=100 and p up to 300, Newton on every
master took half the time of ``"auto"``).  Wide sets are now decided by a
documented cost model (:func:`kernlearn.solvers.choice.wide_costs`), and a
sparse active block's Hessian is costed by its stored entries (documented,
but FGM never passed it).  No timing here: the rule's choices are checked
against the cost model, and the two masters against each other.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import FGMClassifier, FGMRegressor
from kernlearn.losses import get_loss, weighted
from kernlearn.methods._fgm_rows import active_block, sparse_work
from kernlearn.methods.fgm import FGMSettings, _solve_master
from kernlearn.penalties import SquaredGroupL1
from kernlearn.solvers import MASTER_REASONS, choose_master
from kernlearn.solvers import choice as ch


def documented_costs(n, p, loss, nnz=None, row_sq=None):
    """The module docstring's wide estimate, written out (K = 1)."""
    flops = n * p * p if row_sq is None else row_sq
    step = 250e3 + 90 * n + 25 * p * p + 0.012 * flops
    steps = {"square": 4, "squared_hinge": 7, "logistic": 5}[loss]
    iters = {"square": 25, "squared_hinge": 40, "logistic": 12}[loss] * (1 + p / n)
    if nnz is None:
        iteration = 140e3 + 33 * n + 0.55 * n * p
    else:
        iters *= 4.0
        iteration = 140e3 + 33 * n + 7.0 * nnz
    return steps * step, iters * iteration


@pytest.mark.parametrize("n, p, loss, sparse_density, name", [
    (100, 300, "square", None, "newton"),         # the wide benchmark: sweeps cheap
    (100, 300, "squared_hinge", None, "newton"),
    (100, 300, "logistic", None, "apg"),          # few APG iterations on logistic
    (500, 750, "square", None, "apg"),            # skglm's design: Hessian n p^2
    (500, 600, "squared_hinge", None, "apg"),
    (500, 600, "squared_hinge", 0.045, "newton"),  # Reuters-like sparse rows
    (500, 550, "squared_hinge", 0.045, "newton"),
])
def test_wide_choice_follows_the_documented_cost_model(n, p, loss, sparse_density, name):
    nnz = row_sq = None
    if sparse_density is not None:
        per_row = sparse_density * p
        nnz, row_sq = n * per_row, n * per_row ** 2
    newton, apg = documented_costs(n, p, loss, nnz, row_sq)
    assert ch.wide_costs(n, p, 1, get_loss(loss), row_sq, nnz) == pytest.approx((newton, apg))
    choice = choose_master(n, p, 1, weighted(get_loss(loss), C=2.0), "auto", row_sq, nnz)
    assert choice.name == ("newton" if newton <= apg else "apg") == name
    assert choice.code == (9 if name == "newton" else 8)
    assert choice.reason.startswith("wide active set: estimated cost of Newton")


def test_reason_codes_keep_their_meaning():
    # histories store the code: old codes keep their words, new ones are appended
    assert MASTER_REASONS[3] == "wide active set: more columns than rows (singular Hessian)"
    assert MASTER_REASONS[7] == "estimated cost of Newton above that of APG"
    assert MASTER_REASONS[8:] == ("wide active set: estimated cost of Newton above that of APG",
                                  "wide active set: estimated cost of Newton below that of APG")


def test_narrow_choices_unchanged():
    # p <= n keeps the flop estimate: Newton up to 218 columns at n = 500
    assert [choose_master(500, p).code for p in (40, 218, 219, 500)] == [6, 6, 7, 7]
    assert choose_master(10**5, 3000, 1, get_loss("logistic")).code == 4  # caps first
    assert choose_master(50, 400, 3, get_loss("logistic")).code == 2      # K > 1: Newton


def _wide_data(n=100, p=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X[:, 1:] = 0.5 * X[:, :-1] + np.sqrt(0.75) * X[:, 1:]  # neighbouring columns correlated
    y = X[:, rng.choice(p, 15, replace=False)].sum(1) + 0.3 * rng.standard_normal(n)
    return X, y


def test_wide_benchmark_masters_take_newton_and_record_why():
    # the benchmark's wide shape (fewer rows): on the old rule masters 6..10
    # (p = 120..200 > n = 100) took APG with code 3
    X, y = _wide_data()
    h = FGMRegressor(B=20, C=1.0, max_iter=10, tol=None).fit(X, y).history_
    p = 20 * np.arange(1, len(h["objective"]) + 1)
    assert len(p) == 10 and np.all(h["newton_master"] == 1)
    np.testing.assert_array_equal(h["master_reason"], np.where(p > 100, 9, 6))


def _kkt_violation(A, Y, loss, C, indptr, W, b):
    """Relative KKT violation of 0.5 (sum_t ||W_t||)^2 + C sum l(A W + b, y)."""
    M = A @ W + b
    G = np.asarray(A.T @ weighted(loss, C=C).grad_margin(M, Y))
    norms_w = np.array([np.linalg.norm(W[a:z]) for a, z in zip(indptr[:-1], indptr[1:])])
    norms_g = np.array([np.linalg.norm(G[a:z]) for a, z in zip(indptr[:-1], indptr[1:])])
    S = norms_w.sum()
    active = norms_w > 1e-8 * max(S, 1e-300)
    viol = np.concatenate([np.abs(norms_g[active] - S), np.maximum(norms_g[~active] - S, 0)])
    grad_b = float(weighted(loss, C=C).grad_margin(M, Y).sum())
    return max(viol.max() / S, abs(grad_b) / max(np.abs(G).max(), 1e-300))


@pytest.mark.parametrize("loss_name, sparse", [("square", False), ("logistic", False),
                                               ("squared_hinge", True)])
def test_newton_and_apg_reach_the_same_wide_optimum(loss_name, sparse):
    rng = np.random.default_rng(1)
    n, p, group = 60, 180, 6
    if sparse:
        A = sp.random(n, p, density=0.08, random_state=2, format="csc")
        A = active_block([A])
        assert sp.issparse(A)
    else:
        A = np.asfortranarray(rng.standard_normal((n, p)))
    z = np.asarray(A[:, :12].sum(axis=1)).ravel() + 0.2 * rng.standard_normal(n)
    Y = (z if loss_name == "square" else np.where(z > np.median(z), 1.0, -1.0))[:, None]
    loss = get_loss(loss_name)
    indptr = np.arange(0, p + 1, group)
    s = FGMSettings(C=1.0, master_tol=1e-12, master_max_iter=100_000)
    out = {kind: _solve_master(kind, A, Y, weighted(loss), SquaredGroupL1(1.0), s, indptr,
                               np.zeros((p, 1)), np.zeros(1), 0.1 * n)
           for kind in ("newton", "apg")}
    assert all(o["converged"] for o in out.values())
    fn, fa = out["newton"]["objective"], out["apg"]["objective"]
    assert abs(fn - fa) <= 1e-6 * abs(fn)
    for o in out.values():
        assert _kkt_violation(A, Y, loss, 1.0, indptr, o["W"], o["b"]) < 1e-3


def test_sparse_work_counts_the_stored_entries():
    rows = sp.csc_matrix(np.array([[1.0, 0, 0, 2], [0, 0, 0, 0], [3, 4, 0, 0],
                                   [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0],
                                   [0, 0, 5, 0], [0, 0, 0, 0]]))
    # rows hold 2, 0, 2, 0, 0, 0, 1, 0 entries: 9 Hessian flops per output, 5 stored
    assert sparse_work([rows[:, :2], rows[:, 2:]], K=2) == (18.0, 5)
    # a block active_block densifies (above _DENSE_ABOVE) is costed as dense
    assert sparse_work([sp.csc_matrix(np.ones((4, 3)))]) == (None, None)
    assert sparse_work([np.ones((4, 3))]) == (None, None)


def test_sparse_rows_cost_their_hessian_by_stored_entries():
    # 400 rows, up to 400 active sparse columns (3 % dense): the dense flop
    # estimate took APG from about 220 columns on (code 7) although the
    # Hessian costs K sum_i nnz_i^2, a few per cent of n p^2
    X = sp.random(400, 4000, density=0.03, random_state=0, format="csr")
    w = np.zeros(4000)
    w[:40] = 1.0
    y = (X @ w > np.median(X @ w)).astype(int)
    h = FGMClassifier(B=50, C=10.0, max_iter=8, tol=None).fit(X, y).history_
    p = 50 * np.arange(1, len(h["objective"]) + 1)
    assert p.max() >= 300
    assert np.all(h["master_reason"] == 6) and np.all(h["newton_master"] == 1)


def test_sparse_costing_ignores_rows_of_weight_zero():
    # the master is chosen by the rows of positive weight (audit 51): their
    # stored entries alone size the sparse Hessian
    X = sp.random(300, 3000, density=0.03, random_state=1, format="csr")
    y = (np.asarray(X[:, :30].sum(axis=1)).ravel() > 0.2).astype(int)
    w = np.ones(300)
    w[:120] = 0.0
    rows = sp.csc_matrix(X[:, :400])
    full, kept = sparse_work([rows], sample_weight=w), sparse_work([rows[120:]])
    assert full == kept and full[1] < rows.nnz
    est = FGMClassifier(B=60, C=10.0, max_iter=6, tol=None)
    a = est.fit(X, y, sample_weight=w).history_["master_reason"]
    b = FGMClassifier(**est.get_params()).fit(X[120:], y[120:]).history_["master_reason"]
    np.testing.assert_array_equal(a, b)
    assert set(a.tolist()) & {8, 9}  # wide masters (p > 180 rows) were decided
