"""GrFL's short cuts for small fits give exactly what the work they replace gives.

Pricing keeps its best candidate by ``argmax`` instead of a full sort and reads
the loss gradients the compiled Newton master kept at its margins instead of
computing them again; the Hessians' column test is compiled and families find
the arrays they validated by id: the same numbers, hence the same models.
"""

import dataclasses

import numpy as np
import pytest

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.families import RandomFourierFeatures
from kernlearn.families._infinite import top_k
from kernlearn.losses import Square, SquaredHinge
from kernlearn.methods.grfl import GrFL
from kernlearn.penalties import GroupL1L2
from kernlearn.solvers._dirty import DirtyProblem
from kernlearn.solvers.grfl_newton import GrFLNewton


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize("n", [0, 1, 7, 40, 400])
@pytest.mark.parametrize("k", [1, 2, 3, 9, 39, 400, 500])
@pytest.mark.parametrize("kind", ["distinct", "ties", "infinite", "nan"])
def test_top_k_is_the_head_of_the_stable_descending_sort(n, k, kind, rng):
    s = rng.normal(size=n)
    if kind == "ties":
        s = np.round(s)  # many equal scores: the first index first
        s[: n // 3] = -0.0
    elif kind == "infinite":
        s[::5] = -np.inf  # candidates with an all-zero column
        s[1:2] = np.inf
    elif kind == "nan":
        s[::4] = np.nan  # last in the sort
    got = top_k(s, k)
    np.testing.assert_array_equal(got, (-s).argsort(kind="stable")[:k])
    assert got.dtype == np.intp


def _no_kept_gradients(monkeypatch, used):
    """Pricing computes the loss gradients itself (what it did before they
    were kept); ``used`` counts the states that held them."""
    grad_matrix = GrFL.grad_matrix

    def recomputing(self):
        kept = getattr(self.state, "loss_grad", None)
        if kept is not None:
            used.append(kept)
            self.state = dataclasses.replace(self.state, loss_grad=None)
        return grad_matrix(self)

    monkeypatch.setattr(GrFL, "grad_matrix", recomputing)


def _clf_data(rng, n=70):
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def _reg_data(rng, n=70):
    X = rng.normal(size=(n, 4))
    return X, np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=n)


def _fits(make, X, y, **fit_kw):
    """Decision values (or predictions) of the fits ``make`` lists, in order."""
    out = []
    for est in make():
        est.fit(X, y, **fit_kw)
        f = getattr(est, "decision_function", est.predict)
        out.append(np.asarray(f(X), dtype=float))
    return out


CASES = {
    "classifier": (lambda: [InfiniteFeatureClassifier(max_features=12, random_state=0)],
                   _clf_data, False),
    "classifier, three classes": (
        lambda: [InfiniteFeatureClassifier(max_features=8, n_paths=1, random_state=1)],
        None, False),
    "classifier, weighted": (
        lambda: [InfiniteFeatureClassifier(max_features=10, n_paths=1, random_state=0)],
        _clf_data, True),
    "regressor (levels by folds)": (
        lambda: [InfiniteFeatureRegressor(random_state=0)], _reg_data, False),
    "regressor, weighted": (
        lambda: [InfiniteFeatureRegressor(lambda_p=0.3, max_features=10, n_paths=1,
                                          random_state=0)], _reg_data, True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_kept_loss_gradients_give_the_recomputed_models(case, rng, monkeypatch):
    make, data, weighted = CASES[case]
    if data is None:
        X = rng.normal(size=(90, 4))
        y = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.5, 0.5])
    else:
        X, y = data(rng)
    kw = {"sample_weight": rng.integers(1, 4, size=len(y)).astype(float)} if weighted else {}
    kept = _fits(make, X, y, **kw)
    used = []
    _no_kept_gradients(monkeypatch, used)
    recomputed = _fits(make, X, y, **kw)
    for a, b in zip(kept, recomputed):
        np.testing.assert_array_equal(a, b)
    if not weighted:
        assert used  # (the unweighted fits did read kept gradients)


def test_kept_loss_gradients_give_the_recomputed_warm_started_path(rng, monkeypatch):
    X, y = _reg_data(rng)

    def warm_fits():
        est = InfiniteFeatureRegressor(lambda_p=0.3, max_features=4, n_paths=1,
                                       warm_start=True, random_state=0)
        out = []
        for m in (4, 9):  # the second fit continues the first one's path
            est.set_params(max_features=m).fit(X, y)
            out.append(est.predict(X))
        return out

    kept = warm_fits()
    used = []
    _no_kept_gradients(monkeypatch, used)
    for a, b in zip(kept, warm_fits()):
        np.testing.assert_array_equal(a, b)
    assert used


@pytest.mark.parametrize("loss", [Square(), SquaredHinge()], ids=["square", "squared-hinge"])
def test_the_kept_gradients_are_the_loss_gradients_at_the_returned_margins(loss, rng):
    n, p = 60, 12
    Phi = rng.normal(size=(n, p))
    Y = (np.sign(rng.normal(size=(n, 1))) if isinstance(loss, SquaredHinge)
         else rng.normal(size=(n, 1)))
    P = DirtyProblem(Phi, Y, loss, GroupL1L2(0.05), indptr=np.arange(0, p + 1, 2))
    state = GrFLNewton(tol=1e-8).solve(P).state
    assert state.loss_grad is not None
    np.testing.assert_array_equal(state.loss_grad, P.loss_gradients(state.margins))
    # not kept by the NumPy iteration, whose steps compute no such array
    solver = GrFLNewton(tol=1e-8)
    solver._compiled_path = False
    assert solver.solve(P).state.loss_grad is None


def test_pricing_recomputes_when_the_state_holds_other_margins(rng):
    X, y = _clf_data(rng)
    family = RandomFourierFeatures(gamma=0.5).fit(X)
    path = GrFL(family, SquaredHinge(), GroupL1L2(0.5), None, GrFLNewton())
    path.start(X, y[:, None].astype(float), None, np.random.default_rng(0))
    path.extend(3)
    G = path.grad_matrix()
    assert G is path.state.loss_grad  # the kept array, read as it is
    path.margins = path.margins.copy()  # (margins no longer the state's)
    G2 = path.grad_matrix()
    assert G2 is not path.state.loss_grad
    np.testing.assert_array_equal(G2, G)


def test_the_compiled_head_test_is_numpys(rng):
    from kernlearn.solvers._grfl_newton_kernels import _same_head

    Phi = np.asfortranarray(rng.normal(size=(5, 9)))  # (GrFL's column buffer layout)

    def numpy_test(check, A):
        q = check.shape[1]
        return (q <= A.shape[1] and check.shape == A[:2, :q].shape
                and not np.count_nonzero(check != A[:2, :q]))

    cases = [Phi[:2, :4].copy(), Phi[:2, :9].copy(), Phi[:2, :0].copy(), Phi[:1, :3].copy(),
             np.zeros((2, 10))]
    changed = Phi[:2, :6].copy()
    changed[1, 5] = np.nextafter(changed[1, 5], np.inf)  # (the last bit differs)
    with_nan = Phi[:2, :3].copy()
    with_nan[0, 1] = np.nan
    cases += [changed, with_nan]
    nan_phi = Phi.copy(order="F")
    nan_phi[0, 1] = np.nan
    for A in (Phi, np.ascontiguousarray(Phi), Phi[:1], nan_phi):
        for check in cases:
            assert _same_head(check, A) == numpy_test(check, A)
    assert _same_head(Phi[:2, :4].copy(), Phi) and not _same_head(changed, Phi)


def test_arrays_are_validated_once_each_and_the_oldest_forgotten_first(rng):
    from kernlearn.families import _infinite

    class Counting(RandomFourierFeatures):
        def _check_X(self, X):
            self.checks = getattr(self, "checks", 0) + 1
            return X

    fam = Counting(gamma=1.0)
    arrays = [rng.normal(size=(5, 3)) for _ in range(_infinite._N_REMEMBERED + 1)]
    for A in arrays[:-1]:
        assert fam._checked(A) is A
    assert fam.checks == _infinite._N_REMEMBERED
    for A in arrays[:-1]:  # all remembered: none checked again
        fam._checked(A)
    assert fam.checks == _infinite._N_REMEMBERED
    fam._checked(arrays[-1])  # one more: the first one is forgotten
    fam._checked(arrays[1])
    assert fam.checks == _infinite._N_REMEMBERED + 1
    fam._checked(arrays[0])
    assert fam.checks == _infinite._N_REMEMBERED + 2
    # a converted copy, and a new array in a dead one's place, are checked
    fam._checked(arrays[2].copy())
    assert fam.checks == _infinite._N_REMEMBERED + 3
    del arrays[3]
    fam._checked(rng.normal(size=(5, 3)))
    assert fam.checks == _infinite._N_REMEMBERED + 4


# ---------------------------------------------------------------------------
# The regressor below CV_BELOW rows: its level folds' models are the model
# (their average at the chosen level), not new paths on all rows.

def _counting(monkeypatch, n_all):
    """Pricing steps and master solves on all ``n_all`` rows and on fewer (the folds)."""
    counts = {"all": 0, "folds": 0}
    best, solve = GrFL._best_candidate, GrFL._solve

    def counted(method):
        def run(self, *a, **k):
            counts["all" if self.n == n_all else "folds"] += 1
            return method(self, *a, **k)
        return run

    monkeypatch.setattr(GrFL, "_best_candidate", counted(best))
    monkeypatch.setattr(GrFL, "_solve", counted(solve))
    return counts


def _fold_models(monkeypatch):
    """The folds' models each level choice kept (``select_level``'s ``models``)."""
    from kernlearn.methods import grfl

    kept, select = [], grfl.select_level

    def spy(start, split, max_features, **kw):
        out = select(start, split, max_features, **kw)
        kept.append((kw.get("models"), kw.get("fold_tol")))
        return out

    monkeypatch.setattr(grfl, "select_level", spy)
    return kept


def test_the_small_regressor_runs_no_path_on_all_rows(rng, monkeypatch):
    from kernlearn.methods._grfl_select import CV_BELOW, CV_FOLDS

    X, y = _reg_data(rng, n=120)
    assert X.shape[0] < CV_BELOW
    counts = _counting(monkeypatch, X.shape[0])
    auto = InfiniteFeatureRegressor(n_candidates=30, random_state=0).fit(X, y)
    work_auto = dict(counts)
    counts.update(all=0, folds=0)
    three = InfiniteFeatureRegressor(n_candidates=30, n_paths=3, random_state=0).fit(X, y)
    # the default prices and solves on the folds' rows only; three paths on all
    # rows (the model before) add their own steps to folds of the same kind
    assert work_auto["all"] == 0 and work_auto["folds"] > 0
    assert counts["all"] > 0
    assert auto.n_paths_ == CV_FOLDS and three.n_paths_ == 3
    assert sum(work_auto.values()) < sum(counts.values())


def test_the_small_regressor_is_the_mean_of_its_folds_models(rng, monkeypatch):
    from kernlearn.losses import get_loss
    from kernlearn.methods import grfl
    from kernlearn.methods._grfl_select import AUTO_LEVELS, FOLD_TOL
    from kernlearn.penalties import get_penalty

    X, y = _reg_data(rng, n=110)
    Xs, ys = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    kept = _fold_models(monkeypatch)
    res = grfl.fit_grfl(Xs, ys[:, None], loss=get_loss("square"),
                        penalty=get_penalty("group_l1_l2"), lambda_p="auto",
                        max_features="auto", n_candidates=30, random_state=0, tol=1e-4)
    (folds, fold_tol), = kept
    assert res.lambda_p in AUTO_LEVELS and res.n_paths == len(folds) > 1
    # the folds were solved to the model's tol (they are the model), not FOLD_TOL
    assert fold_tol == 0.0 and {f.path.solver.tol for f in folds} == {1e-4}
    assert FOLD_TOL > 1e-4
    # the model's margins are the mean of the folds' models' (at the chosen
    # level, not where their paths went on to), on any rows
    Z = res.family.columns(res.features, Xs) * res.feature_scales.ravel()
    m = Z @ res.coef[0] + res.intercept[0]
    margins = []
    for f in folds:
        U, us, b = f.coef
        params, scales = np.array(f.path.params[: f.k]), np.concatenate(f.path.scales[: f.k])
        margins.append(f.path.family.columns(params, Xs) * scales @ (U[:, 0] + us) + b[0])
    np.testing.assert_allclose(m, np.mean(margins, axis=0), rtol=1e-10, atol=1e-12)
    # its columns are unit-norm on all training rows, and its objective is
    # eq. (17) there at the chosen level
    np.testing.assert_allclose(np.linalg.norm(Z, axis=0), 1.0, rtol=1e-12)
    groups = res.coef[0].reshape(-1, 2)
    direct = 0.5 * np.sum((ys - m) ** 2) + res.lambda_p * np.linalg.norm(groups, axis=1).sum()
    assert res.objective == pytest.approx(direct, rel=1e-10)
    assert not np.any(np.all(groups == 0, axis=1))  # (features of zero weight dropped)


def test_a_given_path_count_keeps_the_folds_as_rankers(rng, monkeypatch):
    from kernlearn.methods._grfl_select import FOLD_TOL

    X, y = _reg_data(rng, n=100)
    kept = _fold_models(monkeypatch)
    one = InfiniteFeatureRegressor(n_candidates=30, n_paths=1, random_state=0).fit(X, y)
    (models, fold_tol), = kept
    # n_paths given: the folds only rank the levels (their masters at FOLD_TOL),
    # the model is that many paths on all rows at the chosen level
    assert models is None and fold_tol == FOLD_TOL and one.n_paths_ == 1
