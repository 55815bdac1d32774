"""GrFL's proximal Newton master against ADMM, cvxpy and its own Hessian cache."""

import numpy as np
import pytest

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.losses import Logistic, Square, SquaredHinge
from kernlearn.penalties import L1, GroupL1L2, L1Linf, L1Lq, PerTaskL1Lq
from kernlearn.solvers import ADMM
from kernlearn.solvers._dirty import DirtyProblem
from kernlearn.solvers.admm import pad_state
from kernlearn.solvers.grfl_newton import GrFLNewton, _Hessians, hessian_block


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _problem(rng, loss, pen, lam_s=None, n=300, p=20, T=3, task_rows=False,
             fit_intercept=True):
    Phi = rng.normal(size=(n, p))
    Phi /= np.linalg.norm(Phi, axis=0)
    rows = None
    if task_rows:
        rows = [np.arange(t, n, T) for t in range(T)]
        Y = rng.choice([-1.0, 1.0], size=n)
    elif isinstance(loss, Square):
        Y = Phi[:, :4] @ rng.normal(size=(4, T)) * 5 + 0.3 * rng.normal(size=(n, T))
    else:
        Y = np.sign(Phi[:, :4] @ rng.normal(size=(4, T)) * 5 + 0.3 * rng.normal(size=(n, T)))
    return DirtyProblem(Phi, Y, loss, pen, None if lam_s is None else L1(lam_s),
                        indptr=np.arange(0, p + 1, 2), task_rows=rows,
                        fit_intercept=fit_intercept)


CASES = [
    (SquaredHinge(), GroupL1L2(0.5), None, False, True),
    (SquaredHinge(), GroupL1L2(0.3), 0.6, False, True),
    (Logistic(), L1(0.5), None, False, True),
    (Logistic(), L1Linf(0.5), 0.8, False, True),
    (Square(), PerTaskL1Lq(0.5), None, False, True),
    (Square(), GroupL1L2(0.5), None, False, False),
    (SquaredHinge(), GroupL1L2(0.4), None, True, True),
    (Logistic(), L1Lq(0.5, q=3.0), None, False, True),  # generic (uncompiled) path
]
IDS = ["sqhinge-l1l2", "sqhinge-l1l2-shared", "logistic-l1", "logistic-l1linf-shared",
       "square-pertask", "square-l1l2-nobias", "sqhinge-taskrows", "logistic-l1l3"]


@pytest.mark.parametrize("loss, pen, lam_s, task_rows, fit_b", CASES, ids=IDS)
def test_newton_agrees_with_admm(loss, pen, lam_s, task_rows, fit_b, rng):
    P = _problem(rng, loss, pen, lam_s, task_rows=task_rows, fit_intercept=fit_b)
    ra = ADMM(tol=1e-9, max_iter=200000).solve(P)
    rn = GrFLNewton(tol=1e-9).solve(P)
    assert rn.converged
    assert rn.n_iter <= 30  # a few Newton steps, where ADMM needs hundreds
    assert rn.state["objective"] == pytest.approx(ra.state["objective"], rel=1e-9)
    np.testing.assert_allclose(rn.coef[0], ra.coef[0], atol=1e-5)
    np.testing.assert_allclose(rn.coef[1], ra.coef[1], atol=1e-5)
    np.testing.assert_allclose(rn.intercept, ra.intercept, atol=1e-5)
    # its objective is the problem's at the returned (exactly sparse) point
    assert P.objective(*rn.coef, rn.intercept) == pytest.approx(rn.state["objective"])
    assert P.kkt(*rn.coef, rn.intercept) <= 1e-9


def _cvxpy_value(P, lam_s):
    cp = pytest.importorskip("cvxpy")
    W, ws, b = cp.Variable((P.p, P.T)), cp.Variable(P.p), cp.Variable(P.T)
    terms = []
    for t in range(P.T):
        m = P.Phi @ (W[:, t] + ws) + b[t]
        y = P.Ys[:, t]
        if isinstance(P.loss, SquaredHinge):
            terms.append(0.5 * cp.sum_squares(cp.pos(1 - cp.multiply(y, m))))
        else:
            terms.append(cp.sum(cp.logistic(-cp.multiply(y, m))))
    groups = [cp.vec(W[P.indptr[g]:P.indptr[g + 1]], order="C")
              for g in range(len(P.indptr) - 1)]
    reg = P.penalty_p.alpha * sum(cp.norm(g, 2) for g in groups)
    reg = reg + (lam_s * cp.norm1(ws) if lam_s is not None else 1e6 * cp.norm1(ws))
    prob = cp.Problem(cp.Minimize(sum(terms) + reg))
    prob.solve()
    return prob.value


@pytest.mark.parametrize("loss, lam_s", [(SquaredHinge(), 0.7), (Logistic(), None)],
                         ids=["sqhinge-shared", "logistic"])
def test_newton_agrees_with_cvxpy_on_a_tiny_problem(loss, lam_s, rng):
    P = _problem(rng, loss, GroupL1L2(0.5), lam_s, n=40, p=6, T=2)
    ref = _cvxpy_value(P, lam_s)
    r = GrFLNewton(tol=1e-8).solve(P)
    assert r.state["objective"] == pytest.approx(ref, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("loss", [SquaredHinge(), Logistic()], ids=["sqhinge", "logistic"])
def test_hessians_reused_across_added_columns_equal_fresh_ones(loss, rng):
    full = _problem(rng, loss, GroupL1L2(0.3), 0.5, p=12)
    part = DirtyProblem(full.Phi[:, :8], full.Ys, loss, GroupL1L2(0.3), L1(0.5),
                        indptr=np.arange(0, 9, 2))
    solver = GrFLNewton(tol=1e-9, curvature_rtol=0.0)
    r8 = solver.solve(part)
    warm = solver.solve(full, pad_state(r8.state, 12, full.T))
    cold = solver.solve(full)
    assert warm.state["objective"] == pytest.approx(cold.state["objective"], rel=1e-10)
    # the cached Hessians (extended by the new columns, rank-updated on the rows
    # whose curvature changed) are those of the last Newton iterate, whose
    # margins differ from the final ones by the last step (within tol)
    st = warm.state["hess"]
    M = full.margins(warm.state["W"], warm.state["ws"], warm.state["b"])
    D = full.loss.hess_margin(M, full.Ys)
    np.testing.assert_allclose(st["D"], D, rtol=1e-4, atol=1e-12)
    fresh = _Hessians(full, 0.0).start(st["D"], None).H
    np.testing.assert_allclose(st["H"], fresh, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("curvature", ["zero-one", "mostly-zero", "positive", "signed",
                                       "all-zero"])
def test_hessian_block_equals_the_plain_product(curvature, rng):
    # the rows of zero curvature left out, the symmetric product for d >= 0,
    # the general one for signed differences (rank updates): all equal to
    # [Phi 1]' diag(d) [Phi 1] up to rounding
    n, p = 80, 9
    Phi = rng.normal(size=(n, p))
    d = {"zero-one": (rng.random(n) < 0.5).astype(float),
         "mostly-zero": (rng.random(n) < 0.1) * rng.uniform(0.5, 2.0, n),
         "positive": rng.uniform(0.1, 2.0, n),
         "signed": rng.normal(size=n) * (rng.random(n) < 0.5),
         "all-zero": np.zeros(n)}[curvature]
    A = np.column_stack([Phi, np.ones(n)])
    want = A.T @ (d[:, None] * A)
    got = hessian_block(Phi, d)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert np.array_equal(got, got.T) or curvature == "signed"
    cols = np.array([2, 5, 6, p])  # some columns and the intercept, last
    np.testing.assert_allclose(hessian_block(Phi, d, cols), want[:, cols],
                               rtol=1e-12, atol=1e-12)


def test_unit_curvature_hessians_are_read_from_the_supplied_gram(rng, monkeypatch):
    # the unweighted square loss: [Phi 1]'[Phi 1], read from the Gram the
    # caller supplies (no product with the rows), fresh and with added columns
    import kernlearn.solvers.grfl_newton as gn

    Phi = rng.normal(size=(60, 10))
    Y = rng.normal(size=(60, 2))
    A = np.column_stack([Phi, np.ones(60)])

    def problem(q):
        return DirtyProblem(Phi[:, :q], Y, Square(), GroupL1L2(0.3),
                            indptr=np.arange(0, q + 1, 2), gram=Phi[:, :q].T @ Phi[:, :q])

    small = GrFLNewton(tol=1e-8).solve(problem(6))
    monkeypatch.setattr(gn, "hessian_block", None)  # any product would fail
    D = np.ones((60, 2))
    fresh = _Hessians(problem(10), 0.0).start(D, None).H
    grown = _Hessians(problem(10), 0.0).start(D, pad_state(small.state, 10, 2)).H
    for H in (fresh, grown):
        np.testing.assert_allclose(H, np.stack([A.T @ A] * 2), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("Est, y_kind", [(InfiniteFeatureClassifier, "multiclass"),
                                         (InfiniteFeatureRegressor, "task_index")])
def test_grfl_with_the_newton_master_follows_the_admm_path(Est, y_kind, rng):
    X = rng.normal(size=(200, 3))
    f = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2]
    kw = {}
    if y_kind == "multiclass":
        y = np.digitize(f, [-0.5, 0.5])
    else:
        y, kw = f, {"task_index": rng.integers(0, 2, size=200)}
    common = dict(max_features=12, n_candidates=30, inner_tol=1e-9,
                  inner_max_iter=100000,
                  path_iter=None, random_state=0)
    a = Est(solver="admm", **common).fit(X, y, **kw)
    b = Est(solver="newton", **common).fit(X, y, **kw)
    np.testing.assert_allclose(b.features_, a.features_)
    assert b.objective_ == pytest.approx(a.objective_, rel=1e-8)
    out = "decision_function" if Est is InfiniteFeatureClassifier else "predict"
    np.testing.assert_allclose(getattr(b, out)(X, **kw), getattr(a, out)(X, **kw),
                               rtol=1e-5, atol=1e-6)
    assert np.sum(b.history_["master_iter"]) < np.sum(a.history_["master_iter"]) / 5


def test_newton_needs_the_loss_curvature():
    from kernlearn.losses import Hinge
    from kernlearn.solvers import check_compatible

    with pytest.raises(ValueError, match="hess_margin"):
        check_compatible(GrFLNewton(), Hinge(), GroupL1L2())
    with pytest.raises(TypeError, match="DirtyProblem"):
        GrFLNewton().solve(np.ones((3, 2)))


def test_auto_picks_newton_where_it_is_compiled_and_records_the_choice(rng):
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    kw = dict(max_features=3, n_candidates=10, random_state=0)
    assert InfiniteFeatureClassifier(**kw).fit(X, y).solver_ == "GrFLNewton"
    assert InfiniteFeatureClassifier(penalty=L1Lq(q=3.0), **kw).fit(X, y).solver_ == "ADMM"
    assert InfiniteFeatureClassifier(solver="fista", **kw).fit(X, y).solver_ == "GrFLFISTA"


@pytest.mark.parametrize("loss, pen, lam_s, task_rows, fit_b", CASES[:-1], ids=IDS[:-1])
def test_compiled_penalty_and_kkt_equal_the_penalties_methods(loss, pen, lam_s, task_rows,
                                                             fit_b, rng):
    from kernlearn.solvers.grfl_newton import _penalty_kind

    P = _problem(rng, loss, pen, lam_s, task_rows=task_rows, fit_intercept=fit_b)
    assert _penalty_kind(P.penalty_p) is not None  # the compiled path is the one tested
    pen_of, kkt_of = GrFLNewton._measures(P)
    W, ws, b = P.zeros()
    W[:] = rng.normal(size=W.shape)
    W[4:8] = 0.0  # two zero groups: the prox's kink
    W[10, 0] = 0.0
    ws[:] = rng.normal(size=ws.shape) * (ws.size > 0)
    ws[::3] = 0.0
    b[:] = rng.normal(size=b.shape)
    assert pen_of(W, ws) == pytest.approx(P.penalty_value(W, ws), rel=1e-12)
    M = P.margins(W, ws, b)
    gW, gws, gb = P.gradients(M)
    for step in (1.0 / P.lipschitz(), 0.05, 3.0):
        got = kkt_of(W, ws, gW, gws, gb, step) / P.reg_scale()
        want = P.kkt(W, ws, b, M, step=step)
        assert got == pytest.approx(want, rel=1e-12)
        assert got > 0  # a random point is not optimal


def test_compiled_kkt_vanishes_at_the_newton_solution(rng):
    P = _problem(rng, SquaredHinge(), GroupL1L2(0.3), 0.6)
    res = GrFLNewton(tol=1e-10).solve(P)
    _, kkt_of = GrFLNewton._measures(P)
    W, ws = res.coef
    gW, gws, gb = P.gradients(P.margins(W, ws, res.intercept))
    assert kkt_of(W, ws, gW, gws, gb, 1.0 / P.lipschitz()) / P.reg_scale() <= 1e-10
    assert res.state["kkt"] <= 1e-10


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("p", [10, 60, 150])
def test_lipschitz_bound_is_above_the_top_eigenvalue_and_tight(p, intercept, rng):
    from kernlearn.solvers._dirty import LIP_RTOL

    n, T = 200, 2
    X = rng.normal(size=(n, 3))
    Om = rng.normal(size=(3, p // 2))
    Phi = np.hstack([np.cos(X @ Om + 1.0), np.sin(X @ Om + 1.0)])
    Phi /= np.linalg.norm(Phi, axis=0)
    Y = rng.normal(size=(n, T))
    A = np.column_stack([Phi, np.ones(n)]) if intercept else Phi
    lam = np.linalg.eigvalsh(A.T @ A)[-1]
    P = DirtyProblem(Phi, Y, Square(), GroupL1L2(0.1), indptr=np.arange(0, p + 1, 2),
                     fit_intercept=intercept)
    L = P.lipschitz()  # Square: loss curvature 1, no shared part
    assert lam <= L <= lam * (1 + 2 * LIP_RTOL) + 1e-12
    # the bound of the problem with more columns, warm-started from this one's
    Om2 = rng.normal(size=(3, 3))
    Phi2 = np.hstack([Phi, np.cos(X @ Om2), np.sin(X @ Om2)])
    Phi2[:, p:] /= np.linalg.norm(Phi2[:, p:], axis=0)
    A2 = np.column_stack([Phi2, np.ones(n)]) if intercept else Phi2
    lam2 = np.linalg.eigvalsh(A2.T @ A2)[-1]
    P2 = DirtyProblem(Phi2, Y, Square(), GroupL1L2(0.1),
                      indptr=np.arange(0, p + 7, 2), fit_intercept=intercept)
    L2 = P2.lipschitz(P.lip_vectors)
    assert lam2 <= L2 <= lam2 * (1 + 2 * LIP_RTOL) + 1e-12
    assert P2.lipschitz() is L2 or P2.lipschitz() == L2  # computed once


def test_top_eigenvalue_bound_falls_back_when_the_start_is_misleading(rng):
    from kernlearn.solvers._dirty import LIP_RTOL, top_eigenvalue_bound

    # a start exactly orthogonal to the top eigenvector: the power
    # iterations converge to the second eigenvalue, which the Cholesky
    # certificate rejects
    Q, _ = np.linalg.qr(rng.normal(size=(80, 80)))
    lam = np.linspace(1.0, 50.0, 80)
    lam[-1] = 100.0
    G = (Q * lam) @ Q.T
    u, _ = top_eigenvalue_bound(G, start=Q[:, -2])
    assert 100.0 <= u <= 100.0 * (1 + 2 * LIP_RTOL)
    # a Gram without eigengap (Gaussian columns): exact, still a bound
    A = rng.normal(size=(300, 120))
    G = A.T @ A
    top = np.linalg.eigvalsh(G)[-1]
    u, _ = top_eigenvalue_bound(G)
    assert top <= u <= top * (1 + 2 * LIP_RTOL)


@pytest.mark.parametrize("fit_b", [True, False])
def test_model_curvatures_are_the_blocks_top_eigenvalues(fit_b, rng):
    from kernlearn.solvers.grfl_newton import _model_curvatures

    T, p = 3, 9
    A = rng.normal(size=(T, 40, p + 1))
    H = np.einsum("tni,tnj->tij", A, A)
    H[1, 3:5, :] = H[1, :, 3:5] = 0.0  # a flat block in one task
    indptr = np.array([0, 1, 3, 6, 9])  # groups of 1, 2, 3 and 3 columns
    Hd, Lw, Ls = _model_curvatures(H, indptr, fit_b)
    eps = 1e-10 * np.max(np.diagonal(H, axis1=1, axis2=2)) + 1e-300
    want = H + eps * np.eye(p + 1)
    if not fit_b:
        want[:, p, :] = want[:, :, p] = 0.0
    np.testing.assert_allclose(Hd, want, rtol=1e-14, atol=0)
    for g in range(4):
        blk = (H + eps * np.eye(p + 1))[:, indptr[g]:indptr[g + 1], indptr[g]:indptr[g + 1]]
        assert Lw[g] == pytest.approx(np.linalg.eigvalsh(blk)[:, -1].max(), rel=1e-12)
    np.testing.assert_allclose(Ls, np.diagonal(H, axis1=1, axis2=2)[:, :p].sum(axis=0)
                               + T * eps, rtol=1e-13)
    assert H[1, 3, 3] == 0.0  # the input is not modified


@pytest.mark.parametrize("pen", [GroupL1L2(0.7), L1(0.7), PerTaskL1Lq(0.7), L1Linf(0.7)],
                         ids=["l1l2", "l1", "pertask", "l1linf"])
def test_compiled_block_prox_equals_the_penalties_prox(pen, rng):
    from kernlearn.solvers.grfl_newton import _penalty_kind, _prox_in_place

    W = rng.normal(size=(12, 3))
    W[6:9] *= 0.05  # a block the prox zeroes
    indptr = np.array([0, 3, 6, 9, 12])
    want = pen.matrix_prox(W, 0.8, indptr)
    got = W.copy()
    for g in range(4):
        blk = got[indptr[g]:indptr[g + 1]]
        _prox_in_place(blk, 0.8 * pen.alpha, _penalty_kind(pen))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    assert np.any(got != W)


def _spectrum_matrix(rng, lam):
    Q, _ = np.linalg.qr(rng.normal(size=(len(lam), len(lam))))
    return (Q * lam) @ Q.T


@pytest.mark.parametrize("case", ["kato-temple", "cholesky", "exact"])
def test_top_eigenvalue_bound_by_each_certificate(case, rng, monkeypatch):
    from kernlearn.solvers._dirty import LIP_RTOL, top_eigenvalue_bound

    calls = {"cholesky": 0, "eigvalsh": 0}
    for name in calls:
        real = getattr(np.linalg, name)

        def spy(*a, _real=real, _name=name, **k):
            calls[_name] += 1
            return _real(*a, **k)

        monkeypatch.setattr(np.linalg, name, spy)
    lam = np.full(120, 10.0)
    if case == "kato-temple":  # one dominant eigenvalue, like a Gram with intercept
        lam[-1] = 300.0
    elif case == "cholesky":  # a clear gap, but the rest too heavy for Kato-Temple
        lam[-1] = 100.0
    else:  # no gap: the power iterations give up
        lam = np.linspace(1.0, 100.0, 120)
    G = _spectrum_matrix(rng, lam)
    u, v = top_eigenvalue_bound(G)
    top = lam.max()
    assert top <= u <= top * (1 + 2 * LIP_RTOL)
    used = {"kato-temple": (0, 0), "cholesky": (1, 0), "exact": (0, 1)}[case]
    assert (calls["cholesky"], calls["eigvalsh"]) == used
    if case != "exact":  # (the exact case returns the last iterate, a rough warm start)
        assert v @ G @ v == pytest.approx(top, rel=1e-5)


def _fourier_problem(n=60, pairs=80, lam=0.05, seed=0):
    """Square loss on correlated low-frequency cos/sin pairs, more columns
    than rows: the ill-conditioned masters GrFL meets at small levels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    Om = rng.normal(size=(3, pairs)) * 0.3
    Phi = np.empty((n, 2 * pairs))
    Phi[:, 0::2], Phi[:, 1::2] = np.cos(X @ Om), np.sin(X @ Om)
    Phi /= np.linalg.norm(Phi, axis=0)
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    return DirtyProblem(Phi, y[:, None], Square(), GroupL1L2(lam), None,
                        indptr=np.arange(0, 2 * pairs + 1, 2))


@pytest.mark.parametrize("lam_s", [None, 0.6], ids=["plain", "shared"])
def test_inner_residual_is_the_outer_kkt_at_the_new_point(lam_s, rng):
    # for the square loss the Newton model is the objective: the residual the
    # inner solve stops on must be the outer KKT measure at the point it returns
    from kernlearn.solvers.grfl_newton import _bcd, _model_curvatures, _penalty_kind

    P = _problem(rng, Square(), GroupL1L2(0.5), lam_s, T=2)
    step = 1.0 / P.lipschitz()
    W, ws, b = P.zeros()
    gW, _, gb = P.gradients(P.margins(W, ws, b))
    H = _Hessians(P, 0.0).start(P.loss.hess_margin(P.margins(W, ws, b), P.Ys), None).H
    indptr = P.indptr.astype(np.int64)
    Hd, Lw, Ls = _model_curvatures(H, indptr, True)
    tol = 1e-4 * P.reg_scale()
    sweeps, res = _bcd(Hd, gW, gb, W, ws, b, indptr, Lw, Ls, _penalty_kind(P.penalty_p),
                       0.5, 0.0 if lam_s is None else lam_s, P.has_shared, True, 1000,
                       tol, step)
    assert sweeps < 1000 and res <= tol
    # (up to the model's damping of 1e-10 times the largest curvature)
    assert P.kkt(W, ws, b, step=step) * P.reg_scale() == pytest.approx(res, rel=1e-3)


def test_ill_conditioned_master_converges_without_capped_inner_solves():
    P = _fourier_problem()
    r = GrFLNewton(tol=1e-3).solve(P)
    assert r.converged and P.kkt(*r.coef, r.intercept) <= 1e-3
    sweeps = r.history.as_dict()["sweeps"]
    assert np.nanmax(sweeps) < 1000  # no inner solve runs to its cap
    # and it is the optimum: a far tighter solve moves the objective by little
    tight = GrFLNewton(tol=1e-9, max_sweeps=100000).solve(P)
    assert tight.converged
    assert r.state["objective"] == pytest.approx(tight.state["objective"], rel=1e-5)


def anderson_sweeps(rng, mix, p, K):
    """K + 1 plain gradient steps on a penalty-free model of one task, packed as the
    inner solve's Anderson history: columns ``A[:, 1] = A[:, 0] + mix * A[:, 1]``
    (the smaller ``mix``, the more correlated and the larger the extrapolation's
    coefficients), the intercept last.  Returns ``H, g, W, ws, b, x0, Xh, Rh, d``
    (``d`` the last step of (w, b))."""
    from kernlearn.solvers.grfl_newton import _pack

    T = 1
    A = rng.normal(size=(20, p + 1))
    A[:, 1] = A[:, 0] + mix * A[:, 1]  # correlated: slow plain iterates
    A[:, p] = 1.0
    H = (A.T @ A)[None]  # intercept last
    g = rng.normal(size=(p + 1))
    W, ws, b = np.zeros((p, T)), np.zeros(p), np.zeros(T)
    nx = p * T + p + T
    x0 = np.empty(nx)
    _pack(W, ws, b, x0)
    Xh, Rh = np.empty((K + 1, nx)), np.empty((K + 1, T, p + 1))
    L = np.linalg.eigvalsh(H[0])[-1]
    d = np.zeros(p + 1)
    for k in range(K + 1):
        d = d - (g + H[0] @ d) / L
        W[:, 0], b[:] = d[:p], d[p:]
        _pack(W, ws, b, Xh[k])
        Rh[k] = H[0] @ d
    return H, g, W, ws, b, x0, Xh, Rh, d


def test_anderson_extrapolation_of_a_linear_iteration_is_its_fixed_point(rng):
    # K >= moved coordinates + 1: the extrapolation of a linear fixed-point
    # iteration (gradient steps on the penalty-free model) is its fixed point
    # (up to the small ridge that keeps the singular system solvable), where
    # its coefficients' magnitudes sum to at most _ANDERSON_MAX_COEF (47 here;
    # more correlated columns, A[:, 0] + 0.3 * A[:, 1], need 192: skipped, see
    # test_user_audit47)
    from kernlearn.solvers.grfl_newton import _extrapolate

    p, T, K = 3, 1, 5
    H, g, W, ws, b, x0, Xh, Rh, d = anderson_sweeps(rng, 1.0, p, K)
    nx = len(x0)
    GW, Gb = g[:p, None].copy(), g[p:].copy()
    R = Rh[K].copy()
    indptr = np.arange(p + 1, dtype=np.int64)
    _extrapolate(Xh, Rh, x0, np.empty(nx), np.empty((T, p + 1)), GW, Gb, W, ws, b, R,
                 indptr, 0, 0.0, 0.0, False)
    star = -np.linalg.solve(H[0], g)
    scale = np.abs(star).max()
    np.testing.assert_allclose(np.r_[W[:, 0], b], star, atol=1e-4 * scale)
    np.testing.assert_allclose(R[0], H[0] @ np.r_[W[:, 0], b], rtol=1e-10, atol=1e-12)
    assert np.abs(star - d).max() > 1e-2 * scale  # (the plain iterates were far)


def _final_master_fit(solver):
    from kernlearn.losses import Square
    from kernlearn.methods.grfl import fit_grfl
    from kernlearn.penalties import GroupL1L2

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = np.sin(2 * X[:, 0]) * X[:, 1] + 0.1 * rng.normal(size=120)
    return fit_grfl(X, y[:, None], loss=Square(), penalty=GroupL1L2(), lambda_p=0.05,
                    max_features=12, n_candidates=30, random_state=0, solver=solver)


def test_unconverged_final_master_warns_and_a_converged_one_does_not():
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    # one Newton step cannot reach tol=1e-12 on the final master: say so
    with pytest.warns(ConvergenceWarning, match="GrFL's master stopped after max_iter=1"):
        _final_master_fit(GrFLNewton(tol=1e-12, max_iter=1))
    # the default solver converges there: no warning (truncated path masters
    # are not exact solves and never warn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        _final_master_fit(GrFLNewton())


@pytest.mark.parametrize("loss, pen, lam_s, task_rows, fit_b", CASES[:4], ids=IDS[:4])
def test_armijo_test_reads_the_penalty_at_the_current_point(loss, pen, lam_s, task_rows,
                                                            fit_b, rng, monkeypatch):
    # the penalty at the current point is kept from the line search that
    # reached it (or the prox's point after a full step), not recomputed: at
    # every Newton iteration it must still be the penalty at that point
    P = _problem(rng, loss, pen, lam_s, task_rows=task_rows, fit_intercept=fit_b)
    points, olds = [], []
    direction, decrease = GrFLNewton._direction, GrFLNewton._model_decrease

    def spy_direction(self, P_, H, gW, gb, W, ws, *args):
        points.append((W.copy(), ws.copy()))
        return direction(self, P_, H, gW, gb, W, ws, *args)

    def spy_decrease(*args):
        olds.append(args[-1])
        return decrease(*args)

    monkeypatch.setattr(GrFLNewton, "_direction", spy_direction)
    monkeypatch.setattr(GrFLNewton, "_model_decrease", staticmethod(spy_decrease))
    # (the NumPy iteration, which the spies see; the compiled one takes the
    # same steps bit for bit: tests/test_grfl_newton_compiled.py)
    monkeypatch.setattr(GrFLNewton, "_compiled_path", False)
    res = GrFLNewton(tol=1e-9).solve(P)
    assert res.converged and len(olds) == len(points) >= 3
    for (W, ws), pen0 in zip(points, olds):
        assert pen0 == pytest.approx(P.penalty_value(W, ws), rel=1e-12, abs=1e-14)
    assert any(np.any(W != 0) for W, _ in points)  # the penalty did move


@pytest.mark.parametrize("task_rows", [False, True], ids=["shared-rows", "task-rows"])
def test_hessian_update_skips_an_unchanged_curvature_and_applies_a_changed_one(
        task_rows, rng, monkeypatch):
    P = _problem(rng, SquaredHinge(), GroupL1L2(0.3), None, p=8, task_rows=task_rows)
    D = P.loss.hess_margin(P.margins(*P.zeros()), P.Ys)
    hess = _Hessians(P, 1e-3).start(D, None)
    H0 = hess.H.copy()
    blocks = []
    block = _Hessians._block
    monkeypatch.setattr(_Hessians, "_block",
                        lambda self, *a, **k: blocks.append(a) or block(self, *a, **k))
    hess.update(D.copy())  # equal values, another array: no block is recomputed
    assert not blocks
    np.testing.assert_array_equal(hess.H, H0)
    D2 = D.copy()
    D2.flat[:3] = 0.0 if D.flat[0] else 1.0  # a few rows change curvature
    hess.update(D2)
    assert blocks
    fresh = _Hessians(P, 0.0).start(D2, None).H
    np.testing.assert_allclose(hess.H, fresh, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(hess.Dh, D2)
