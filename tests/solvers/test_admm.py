"""GrFL masters: ADMM and FISTA against cvxpy, warm starts, KKT, layouts.

The loss and penalty proxes of Tables 1-2 are tested with every part in
``tests/losses`` and ``tests/penalties``."""

import numpy as np
import pytest

from kernlearn.losses import Hinge, Logistic, Square, SquaredHinge
from kernlearn.penalties import L1, GroupL1L2, L1Linf, L1Lq
from kernlearn.solvers import ADMM, SOLVERS, GrFLFISTA, check_compatible
from kernlearn.solvers._dirty import DirtyProblem, pad_state


# --------------------------------------------------------- masters vs cvxpy
def _tiny(rng, n=40, p=6, T=2, task_rows=False, loss=SquaredHinge()):
    Phi = rng.normal(size=(n, p))
    Phi /= np.linalg.norm(Phi, axis=0)
    if task_rows:
        rows = [np.arange(0, n, 2), np.arange(1, n, 2)]
        y = rng.choice([-1.0, 1.0], size=n)
        return Phi, y, rows
    Y = rng.choice([-1.0, 1.0], size=(n, T))
    if isinstance(loss, Square):
        Y = rng.normal(size=(n, T))
    return Phi, Y, None


def _cvxpy_objective(Phi, Y, rows, loss, pen, lam_p, lam_s, indptr):
    cp = pytest.importorskip("cvxpy")
    n, p = Phi.shape
    T = len(rows) if rows is not None else Y.shape[1]
    W, ws, b = cp.Variable((p, T)), cp.Variable(p), cp.Variable(T)
    terms = []
    for t in range(T):
        A = Phi[rows[t]] if rows is not None else Phi
        y = Y[rows[t]] if rows is not None else Y[:, t]
        m = A @ (W[:, t] + ws) + b[t]
        if isinstance(loss, SquaredHinge):
            terms.append(0.5 * cp.sum_squares(cp.pos(1 - cp.multiply(y, m))))
        elif isinstance(loss, Logistic):
            terms.append(cp.sum(cp.logistic(-cp.multiply(y, m))))
        else:
            terms.append(0.5 * cp.sum_squares(y - m))
    groups = [cp.vec(W[indptr[g]:indptr[g + 1]], order="C") for g in range(len(indptr) - 1)]
    if isinstance(pen, L1):
        reg = cp.sum(cp.abs(W))
    elif isinstance(pen, GroupL1L2):
        reg = sum(cp.norm(g, 2) for g in groups)
    else:
        reg = sum(cp.norm(g, "inf") for g in groups)
    obj = sum(terms) + lam_p * reg
    if lam_s is not None:
        obj = obj + lam_s * cp.norm1(ws)
    else:
        obj = obj + 1e6 * cp.norm1(ws)  # no shared part
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve()
    return prob.value


CASES = [
    (SquaredHinge(), GroupL1L2(0.5), 0.8, False),
    (Logistic(), L1Linf(0.5), None, False),
    (Square(), L1(0.5), 0.8, False),
    (SquaredHinge(), L1Linf(0.4), 0.6, True),
]


@pytest.mark.parametrize("loss, pen, lam_s, task_rows", CASES,
                         ids=["sqhinge-l1l2-shared", "logistic-l1linf", "square-l1-shared",
                              "sqhinge-l1linf-taskrows"])
def test_admm_and_fista_agree_with_cvxpy(loss, pen, lam_s, task_rows, rng):
    Phi, Y, rows = _tiny(rng, task_rows=task_rows, loss=loss)
    indptr = np.array([0, 2, 4, 6])
    P = DirtyProblem(Phi, Y, loss, pen, None if lam_s is None else L1(lam_s),
                     indptr=indptr, task_rows=rows)
    ref = _cvxpy_objective(Phi, Y, rows, loss, pen, pen.alpha, lam_s, indptr)
    ra = ADMM(tol=1e-7, max_iter=20000).solve(P)
    rf = GrFLFISTA(tol=1e-6, max_iter=800, check_every=100).solve(P)
    assert ra.converged
    assert ra.state.objective == pytest.approx(ref, rel=1e-6, abs=1e-6)
    assert rf.state.objective == pytest.approx(ref, rel=1e-5, abs=1e-5)
    # ADMM returns the exactly sparse split variable U
    U, us = ra.coef
    assert P.objective(U, us, ra.intercept) == pytest.approx(ra.state.objective)


def test_admm_fixed_paper_parameters_also_converge(rng):
    Phi, Y, _ = _tiny(rng)
    P = DirtyProblem(Phi, Y, SquaredHinge(), GroupL1L2(0.5), None,
                     indptr=np.array([0, 2, 4, 6]))
    fixed = ADMM(tol=1e-6, max_iter=20000, adaptive=False).solve(P)
    adapt = ADMM(tol=1e-6, max_iter=20000).solve(P)
    assert fixed.converged and adapt.converged
    assert fixed.state.n_factor == 1  # one factorisation per active set
    assert fixed.state.objective == pytest.approx(adapt.state.objective, rel=1e-6)


def test_warm_start_is_no_worse_and_padding_keeps_margins(rng):
    Phi, Y, _ = _tiny(rng, p=8)
    indptr = np.arange(0, 9, 2)
    full = DirtyProblem(Phi, Y, SquaredHinge(), GroupL1L2(0.3), L1(0.5), indptr=indptr)
    part = DirtyProblem(Phi[:, :6], Y, SquaredHinge(), GroupL1L2(0.3), L1(0.5),
                        indptr=indptr[:4])
    solver = ADMM(tol=1e-6, max_iter=20000)
    r6 = solver.solve(part)
    st = pad_state(r6.state, 8, Y.shape[1])
    assert st.W.shape == (8, 2) and np.all(st.W[6:] == 0)
    np.testing.assert_allclose(full.margins(st.U, st.us, st.b),
                               part.margins(r6.state.U, r6.state.us, r6.state.b))
    cold = solver.solve(full)
    warm = solver.solve(full, st)
    assert warm.state.objective == pytest.approx(cold.state.objective, rel=1e-6)
    assert warm.n_iter <= cold.n_iter
    # Prop. 3: adding columns never increases the exact master objective
    assert cold.state.objective <= r6.state.objective + 1e-8


def test_kkt_vanishes_at_optimum_only(rng):
    Phi, Y, _ = _tiny(rng)
    P = DirtyProblem(Phi, Y, Logistic(), GroupL1L2(0.5), L1(0.7),
                     indptr=np.array([0, 2, 4, 6]))
    r = ADMM(tol=1e-8, max_iter=20000).solve(P)
    U, us = r.coef
    assert P.kkt(U, us, r.intercept) < 1e-7
    assert P.kkt(*P.zeros()) > 1e-2


def test_solvers_registered_and_requirements():
    assert SOLVERS.resolve("admm").__class__ is ADMM
    assert SOLVERS.resolve("grfl_fista").__class__ is GrFLFISTA
    with pytest.raises(ValueError, match="prox"):
        check_compatible(ADMM(), Hinge(), L1())
    with pytest.raises(TypeError, match="DirtyProblem"):
        ADMM().solve(np.ones((3, 2)))


@pytest.mark.parametrize("q, alpha", [(1.5, 1.7), (3.0, 2.5)])
def test_admm_with_l1_lq_agrees_with_cvxpy(q, alpha, rng):
    # The l1-lq prox (regula falsi + Newton, Table 1) inside the ADMM master.
    cp = pytest.importorskip("cvxpy")
    Phi, Y, _ = _tiny(rng)
    indptr = np.array([0, 2, 4, 6])
    pen = L1Lq(alpha, q=q)
    P = DirtyProblem(Phi, Y, SquaredHinge(), pen, None, indptr=indptr)
    n, p = Phi.shape
    W, b = cp.Variable((p, 2)), cp.Variable(2)
    fit = sum(0.5 * cp.sum_squares(cp.pos(1 - cp.multiply(Y[:, t], Phi @ W[:, t] + b[t])))
              for t in range(2))
    reg = sum(cp.norm(cp.vec(W[a:e], order="C"), q) for a, e in zip(indptr[:-1], indptr[1:]))
    prob = cp.Problem(cp.Minimize(fit + pen.alpha * reg))
    prob.solve()
    res = ADMM(tol=1e-7, max_iter=20000).solve(P)
    assert res.converged
    assert res.state.objective == pytest.approx(prob.value, rel=1e-6, abs=1e-6)
    U, us = res.coef
    assert P.objective(U, us, res.intercept) == pytest.approx(res.state.objective)
    # KKT: the dual-norm conditions of each group hold at the returned point
    assert P.kkt(U, us, res.intercept) < 1e-5
    # alpha is chosen so that some, not all, groups are exactly zero
    norms = pen._norms(U.ravel(order="C"), np.array([0, 4, 8, 12]), q)
    assert 0 < np.count_nonzero(norms) < 3


# ------------------------------------------- vectorised multi-task master
@pytest.mark.parametrize("loss", [SquaredHinge(), Logistic()], ids=lambda l: type(l).__name__)
def test_vectorised_multitask_admm_equals_separate_task_solves(loss, rng):
    # With an l1 penalty and no shared part the T one-vs-all tasks decouple:
    # the joint master (all tasks in one (n, T) margin array, one factor, one
    # product per step) must return what T separate binary masters return.
    Phi, Y, _ = _tiny(rng, n=60, p=8, T=4, loss=loss)
    solver = ADMM(tol=1e-9, max_iter=50000)
    joint = solver.solve(DirtyProblem(Phi, Y, loss, L1(0.8), None))
    assert joint.converged
    W, _ = joint.coef
    assert 0 < np.count_nonzero(W) < W.size  # some, not all, weights are zero
    for t in range(Y.shape[1]):
        alone = solver.solve(DirtyProblem(Phi, Y[:, t], loss, L1(0.8), None))
        assert alone.converged
        np.testing.assert_allclose(W[:, t], alone.coef[0][:, 0], atol=1e-6)
        assert joint.intercept[t] == pytest.approx(alone.intercept[0], abs=1e-6)


def test_shared_rows_and_task_rows_layouts_agree(rng):
    # The (n, T) layout (tasks sharing rows) and the concatenated layout
    # (task_rows) are two code paths for the same coupled problem when every
    # task is given every row; group penalty across tasks plus shared weights.
    Phi, Y, _ = _tiny(rng, n=30, p=6, T=3)
    indptr = np.array([0, 2, 4, 6])
    y_cat = Y.T.ravel()  # task t's targets on its own copy of the rows
    Phi_cat = np.vstack([Phi] * 3)
    rows_cat = [np.arange(30 * t, 30 * (t + 1)) for t in range(3)]
    solver = ADMM(tol=1e-9, max_iter=50000)
    a = solver.solve(DirtyProblem(Phi, Y, SquaredHinge(), GroupL1L2(0.6), L1(0.9),
                                  indptr=indptr))
    b = solver.solve(DirtyProblem(Phi_cat, y_cat, SquaredHinge(), GroupL1L2(0.6), L1(0.9),
                                  indptr=indptr, task_rows=rows_cat))
    assert a.converged and b.converged
    np.testing.assert_allclose(a.coef[0], b.coef[0], atol=1e-6)
    np.testing.assert_allclose(a.coef[1], b.coef[1], atol=1e-6)
    np.testing.assert_allclose(a.intercept, b.intercept, atol=1e-6)
    assert a.state.objective == pytest.approx(b.state.objective, rel=1e-9)
