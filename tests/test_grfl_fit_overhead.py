"""The short cuts of GrFL's per-fit and per-outer-iteration set-up give what the general paths give."""

import copy
import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.preprocessing import LabelEncoder

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.families import RandomFourierFeatures
from kernlearn.families._infinite import valid_scores
from kernlearn.losses import Square, SquaredHinge
from kernlearn.methods._grfl_master import _GrFLProblem
from kernlearn.methods.grfl import GrFL
from kernlearn.penalties import L1, GroupL1L2, L1Linf, PerTaskL1Lq
from kernlearn.solvers import ADMM
from kernlearn.solvers._dirty import DirtyState, pad_state
from kernlearn.solvers.grfl_fista import FISTAState
from kernlearn.solvers.grfl_newton import GrFLNewton, _Hessians


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _path(penalty, penalty_s=None, **kw):
    fam = RandomFourierFeatures(gamma=1.0)
    return GrFL(fam, SquaredHinge(), penalty, penalty_s, GrFLNewton(), **kw)


@pytest.mark.parametrize("gs, T", [(2, 1), (2, 3), (1, 4), (3, 2)])
def test_violation_of_the_group_lasso_is_its_dual_norm_by_the_general_path(gs, T, rng):
    H = rng.normal(size=(7, gs, T))
    H[2] = 0.0  # a candidate with no correlation at all
    pen = GroupL1L2(alpha=0.7)
    path = _path(pen)
    path.gs = gs
    general = pen.matrix_dual_norm(H.reshape(7 * gs, T), np.arange(0, 7 * gs + 1, gs))
    np.testing.assert_array_equal(path.violation(H), general / 0.7 - 1.0)
    assert path.violation(np.zeros((0, gs, T))).shape == (0,)


@pytest.mark.parametrize("pen", [L1(0.5), L1Linf(0.5), PerTaskL1Lq(0.5, q=2.0)])
def test_violation_of_other_penalties_keeps_their_own_dual_norm(pen, rng):
    H = rng.normal(size=(5, 2, 3))
    path = _path(pen)
    path.gs = 2
    general = pen.matrix_dual_norm(H.reshape(10, 3), np.arange(0, 11, 2))
    np.testing.assert_array_equal(path.violation(H), general / 0.5 - 1.0)


def test_valid_scores_masks_exactly_the_candidates_with_a_zero_column(rng):
    s = rng.normal(size=5)
    norms = rng.uniform(0.5, 1.0, size=(5, 2))
    assert valid_scores(s, norms) is s  # nothing to mask: no copy
    norms[1, 0] = 0.0
    norms[3, 1] = np.nan  # never a valid norm
    ref = np.where(np.all(norms > 0, axis=1), s, -np.inf)
    np.testing.assert_array_equal(valid_scores(s, norms), ref)
    assert np.isneginf(valid_scores(s, norms)[[1, 3]]).all()


def test_one_width_sampling_equals_the_per_candidate_widths(rng):
    X = rng.normal(size=(20, 4))
    one = RandomFourierFeatures(gamma=0.3).fit(X)
    many = RandomFourierFeatures(gamma=[0.3, 0.3]).fit(X)  # the general branch
    np.testing.assert_array_equal(one.sample(9, np.random.default_rng(5)),
                                  many.sample(9, np.random.default_rng(5)))


def test_the_capped_path_solver_is_kept_and_follows_changes_of_the_solver():
    path = _path(GroupL1L2(1.0), path_iter=2)
    path.solver = GrFLNewton(max_iter=100, max_sweeps=1000)
    capped = path._path_solver()
    assert (capped.max_iter, capped.max_sweeps) == (2, 50)
    assert path._path_solver() is capped  # one copy per path
    path.solver.max_iter = 1
    assert path._path_solver().max_iter == 1  # a changed solver is copied again
    path.solver.tol = 1e-6
    assert path._path_solver().tol == 1e-6 and path._path_solver().max_iter == 1
    path.solver = ADMM(max_iter=7)
    assert path._path_solver().max_iter == 2 and isinstance(path._path_solver(), ADMM)
    path.path_iter = None
    assert path._path_solver() is path.solver


@pytest.mark.parametrize("n_features", [3, 12])
def test_the_objective_of_a_newton_path_is_the_problems_objective(n_features, rng):
    X = rng.normal(size=(80, 3))
    y = np.sign(X[:, 0] * X[:, 1] + 0.1)
    path = _path(GroupL1L2(0.5), path_iter=2)
    path.family.fit(X)
    path.start(X, y[:, None], None, np.random.RandomState(0)).extend(n_features)
    prob = path.problem()
    U, us, b = path.coefficients()
    np.testing.assert_array_equal(path.margins, path.state.margins)
    np.testing.assert_allclose(path.objective, prob.objective(U, us, b), rtol=1e-12)


@pytest.mark.parametrize("state", [
    DirtyState(W=np.ones((2, 3)), ws=np.ones(2), b=np.zeros(3)),
    FISTAState(W=np.ones((2, 3)), ws=np.ones(2), b=np.zeros(3), L=2.0),
])
def test_pad_state_appends_zero_rows_to_every_row_field(state):
    for _ in range(2):  # the second call reads the fields remembered for the type
        out = pad_state(state, 5, 3)
        assert type(out) is type(state)
        np.testing.assert_array_equal(out.W, np.vstack([state.W, np.zeros((3, 3))]))
        np.testing.assert_array_equal(out.ws, np.r_[state.ws, np.zeros(3)])
        np.testing.assert_array_equal(out.b, state.b)
    assert out.L == 2.0 if isinstance(state, FISTAState) else True


def test_admm_state_padding_covers_its_split_copies_and_multipliers(rng):
    Phi = rng.normal(size=(40, 4))
    Y = rng.normal(size=(40, 2))
    P = _GrFLProblem(Phi, Y, Square(), GroupL1L2(0.2), L1(0.3), indptr=np.arange(0, 5, 2))
    st = ADMM(max_iter=5).solve(P).state
    out = pad_state(st, 6, 2)
    for key in ("W", "U", "N"):
        np.testing.assert_array_equal(getattr(out, key)[:4], getattr(st, key))
        assert not getattr(out, key)[4:].any()
    for key in ("ws", "us", "nus"):
        np.testing.assert_array_equal(getattr(out, key)[:4], getattr(st, key))
        assert not getattr(out, key)[4:].any()


@pytest.mark.parametrize("rtol", [0.0, 1e-3])
def test_started_hessians_are_already_at_the_curvature_they_started_from(rtol, rng):
    # the Newton master no longer calls update(D) right after start(D, state):
    # start leaves the Hessians where that update would
    Phi = rng.normal(size=(50, 8))
    Y = np.sign(rng.normal(size=(50, 2)))

    def problem(q):
        return _GrFLProblem(Phi[:, :q], Y, SquaredHinge(), GroupL1L2(0.3),
                            indptr=np.arange(0, q + 1, 2), gram=Phi[:, :q].T @ Phi[:, :q])

    small = GrFLNewton(tol=1e-8).solve(problem(6))
    D = SquaredHinge().hess_margin(small.state.margins + 0.3 * rng.normal(size=(50, 2)), Y)
    for state in (None, pad_state(small.state, 8, 2)):
        hess = _Hessians(problem(8), rtol).start(D, state)
        H, Dh = hess.H.copy(), hess.Dh.copy()
        hess.update(D)
        np.testing.assert_array_equal(hess.H, H)
        np.testing.assert_array_equal(hess.Dh, Dh)


@pytest.mark.parametrize("y", [np.array([3, 1, 2, 1, 3, 2] * 5), np.array(list("bacbca") * 5),
                               np.array([True, False, False] * 10)])
def test_plain_labels_are_encoded_as_label_encoder_encodes_them(y, rng):
    X = rng.normal(size=(30, 2))
    clf = InfiniteFeatureClassifier(max_features=4, n_candidates=10, random_state=0).fit(X, y)
    enc = LabelEncoder().fit(y)
    np.testing.assert_array_equal(clf.classes_, enc.classes_)
    assert clf.classes_.dtype == enc.classes_.dtype
    # the same model as with integer codes of the same order
    codes = InfiniteFeatureClassifier(max_features=4, n_candidates=10, random_state=0).fit(
        X, enc.transform(y).astype(float))
    np.testing.assert_array_equal(clf.decision_function(X), codes.decision_function(X))


@pytest.mark.parametrize("Est", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_plain_input_short_cut_records_what_validate_data_records(Est, rng):
    X = rng.normal(size=(40, 3))
    y = np.sign(X[:, 0]) if Est is InfiniteFeatureClassifier else X[:, 0]
    kw = dict(max_features=3, n_candidates=10, random_state=0)
    if Est is InfiniteFeatureRegressor:
        kw["lambda_p"] = 0.5
    est = Est(**kw).fit(pd.DataFrame(X, columns=["a", "b", "c"]), y)
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    est.fit(X, y)  # plain arrays: the short cut
    assert not hasattr(est, "feature_names_in_") and est.n_features_in_ == 3
    other = copy.deepcopy(est).fit(X.tolist(), list(y))  # general path, same numbers
    np.testing.assert_array_equal(est.predict(X), other.predict(X))
    with pytest.raises(ValueError, match="NaN"):
        bad = X.copy()
        bad[0, 0] = np.nan
        Est(**kw).fit(bad, y)


@pytest.mark.parametrize("Est", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_fit_reads_every_parameter_get_params_lists(Est, monkeypatch):
    # the names are cached per class: a subclass with its own parameters gets its own
    import kernlearn.estimators.infinite as inf

    seen = {}

    def spy(X, Y, **kw):
        seen.update(kw)
        raise RuntimeError("stop")

    monkeypatch.setattr(inf, "fit_grfl", spy)
    X = np.random.default_rng(0).normal(size=(20, 2))
    y = np.sign(X[:, 0]) if Est is InfiniteFeatureClassifier else X[:, 0]
    est = Est(n_candidates=17, random_state=3, max_features=4, lambda_p=0.5)
    with pytest.raises(RuntimeError, match="stop"):
        est.fit(X, y)
    params = est.get_params(deep=False)
    for k in ("n_candidates", "random_state", "lambda_s", "time_budget", "path_iter"):
        assert seen[k] == params[k]


@pytest.mark.parametrize("loss", [Square(), SquaredHinge()])
def test_model_curvatures_are_reused_exactly_while_the_hessians_stay(loss, rng, monkeypatch):
    n, p = 60, 12
    Phi = rng.normal(size=(n, p))
    Y = rng.normal(size=(n, 2)) if isinstance(loss, Square) else np.sign(rng.normal(size=(n, 2)))
    P = _GrFLProblem(Phi, Y, loss, GroupL1L2(0.05), indptr=np.arange(0, p + 1, 2))
    calls = {"curv": 0, "dir": 0}
    curvatures, direction = GrFLNewton._curvatures, GrFLNewton._direction

    def spy_curv(H, inner):
        calls["curv"] += 1
        return curvatures(H, inner)

    def spy_dir(self, *args):
        calls["dir"] += 1
        return direction(self, *args)

    monkeypatch.setattr(GrFLNewton, "_curvatures", staticmethod(spy_curv))
    monkeypatch.setattr(GrFLNewton, "_direction", spy_dir)
    # (the NumPy iteration, whose directions the spy sees; the compiled one
    # takes the same steps bit for bit: tests/test_grfl_newton_compiled.py)
    monkeypatch.setattr(GrFLNewton, "_compiled_path", False)
    cached = GrFLNewton(tol=1e-10).solve(P)
    if isinstance(loss, Square):  # one Hessian per master: one set of curvatures
        assert calls["curv"] == 1 < calls["dir"]
    else:
        assert 1 <= calls["curv"] <= calls["dir"]
    # the same iterates when every Newton iteration computes them afresh (a
    # version that differs at every reading)
    counter = itertools.count()
    monkeypatch.setattr(_Hessians, "version", property(lambda self: next(counter),
                                                       lambda self, value: None),
                        raising=False)
    calls.update(curv=0, dir=0)
    fresh = GrFLNewton(tol=1e-10).solve(P)
    assert calls["curv"] == calls["dir"]
    for a, b in zip((*cached.coef, cached.intercept), (*fresh.coef, fresh.intercept)):
        np.testing.assert_array_equal(a, b)
    assert cached.n_iter == fresh.n_iter


def test_pad_state_short_cut_equals_replace_and_keeps_a_post_init(rng):
    import dataclasses

    from kernlearn.solvers.grfl_newton import GrFLNewtonState

    st = GrFLNewtonState(W=rng.normal(size=(2, 3)), ws=rng.normal(size=2), b=np.ones(3),
                         objective=1.5, kkt=0.1, p=2, margins=rng.normal(size=(4, 3)))
    out = pad_state(st, 4, 3)
    ref = dataclasses.replace(st, W=np.vstack([st.W, np.zeros((2, 3))]),
                              ws=np.r_[st.ws, np.zeros(2)])
    assert type(out) is GrFLNewtonState
    for f in dataclasses.fields(st):
        a, b = getattr(out, f.name), getattr(ref, f.name)
        assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b or a is b
    assert out.margins is st.margins and out.W.dtype == np.float64
    calls = []

    @dataclasses.dataclass(frozen=True)
    class Checked(DirtyState):
        def __post_init__(self):
            calls.append(self.W.shape)

    pad_state(Checked(W=np.ones((1, 2)), ws=np.ones(1), b=np.zeros(2)), 3, 2)
    assert calls[-1] == (3, 2)  # a state with __post_init__ is rebuilt by replace


@pytest.mark.parametrize("n_features", [1, 9, 30])
def test_kept_column_sums_and_biases_are_those_computed_afresh(n_features, rng):
    from kernlearn.methods.grfl import intercept_only

    X = rng.normal(size=(70, 4))
    y = np.sign(X[:, 0] * X[:, 1] + 0.1)
    path = _path(GroupL1L2(0.3), path_iter=2)
    path.family.fit(X)
    path.start(X, y[:, None], None, np.random.RandomState(0)).extend(n_features)
    p = path.p
    np.testing.assert_array_equal(path._colsum[:p], path.Phi[:, :p].sum(axis=0))
    kept = path.problem()
    fresh = _GrFLProblem(path.Phi[:, :p], path.Y, path.loss, path.penalty_p, None,
                         indptr=np.arange(0, p + 1, 2), gram=path.gram[:p, :p])
    np.testing.assert_array_equal(kept.bordered_gram(), fresh.bordered_gram())
    b0 = np.array([intercept_only(path.loss, y)])
    np.testing.assert_array_equal(path.b0, b0)
    given = _path(GroupL1L2(0.3)).start(X, y[:, None], None, np.random.RandomState(0), b0=b0)
    np.testing.assert_array_equal(given.b0, b0)
    assert given.b0 is not b0  # (its own copy: a path may not share its state)
