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
