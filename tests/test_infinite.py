"""GrFL estimators: Algorithm 1 properties, multitask layouts, bad input."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_moons
from sklearn.utils._param_validation import InvalidParameterError

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.families import GaborFeatures, RandomFourierFeatures
from kernlearn.losses import SquaredHinge
from kernlearn.penalties import L1Lq


def _moons(n=300, seed=0):
    X, y = make_moons(n, noise=0.2, random_state=seed)
    return X, y


def test_learns_moons_and_transform_is_the_feature_map():
    X, y = _moons(400)
    clf = InfiniteFeatureClassifier(RandomFourierFeatures(bandwidth=0.5), max_features=30,
                                    n_candidates=100, random_state=0).fit(X[:300], y[:300])
    assert clf.score(X[300:], y[300:]) > 0.9
    Z = clf.transform(X[300:])
    assert Z.shape == (100, 2 * len(clf.features_))
    np.testing.assert_allclose(clf.decision_function(X[300:]),
                               Z @ clf.column_coef_[0] + clf.intercept_[0])
    # training columns are unit-norm (paper 000, sec. 3.1)
    np.testing.assert_allclose(np.linalg.norm(clf.transform(X[:300]), axis=0), 1.0)
    assert set(clf.history_) >= {"objective", "violation", "n_active", "kkt", "time"}


def test_objective_decreases_with_each_added_feature_prop3():
    X, y = _moons(200, seed=1)
    clf = InfiniteFeatureClassifier(RandomFourierFeatures(bandwidth=0.7), max_features=12,
                                    n_candidates=50, inner_tol=1e-7, inner_max_iter=20000,
                                    tol=0.0, random_state=0).fit(X, y)
    obj = clf.history_["objective"]
    assert len(obj) >= 5
    assert np.all(clf.history_["violation"] > 0)  # every added feature violated (7)
    assert np.all(np.diff(obj) < 0)


def _violations(clf, X, y, params):
    """Relative violation of condition (7) by fresh candidates at the solution."""
    m = clf.decision_function(X)
    g = SquaredHinge().grad_margin(m, np.where(y == clf.classes_[1], 1.0, -1.0))
    H, _ = clf.family_.correlations(params, X, g)
    return np.sqrt((H**2).sum(axis=(1, 2))) / clf.lambda_p - 1.0


def test_no_fresh_candidate_violates_after_convergence():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(200, 1))
    y = (np.sin(2 * X[:, 0]) + 0.8 * np.sin(5 * X[:, 0] + 1) > 0).astype(int)
    eps = 0.05
    clf = InfiniteFeatureClassifier(RandomFourierFeatures(bandwidth=1.0), max_features=60,
                                    n_candidates=300, lambda_p=1.0, tol=eps, inner_tol=1e-6,
                                    inner_max_iter=20000, standardize=False,
                                    random_state=0).fit(X, y)
    assert clf.stop_reason_ == "no_violation" and clf.n_iter_ >= 3
    assert clf.last_violation_ <= eps
    fresh = clf.family_.sample(3000, np.random.default_rng(123))
    viol = _violations(clf, X, y, fresh)
    # measured (seed 123): 0.023 over 3000 fresh directions, below eps = 0.05
    assert viol.max() <= eps + 1e-3, viol.max()
    # the violation of the active features themselves is about 0 (conditions (5)/(6))
    act = _violations(clf, X, y, clf.features_)
    assert act.max() <= 1e-3


def test_multiclass_one_vs_all_tasks_share_features_with_shared_part():
    X, y = make_classification(300, n_features=6, n_informative=4, n_classes=3,
                               random_state=0)
    clf = InfiniteFeatureClassifier(max_features=10, n_candidates=40, lambda_p=0.5,
                                    lambda_s=1.0, inner_max_iter=200, random_state=0).fit(X, y)
    k = 2 * len(clf.features_)
    assert clf.column_coef_.shape == (3, k) and clf.intercept_.shape == (3,)
    np.testing.assert_allclose(clf.column_coef_, clf.task_coef_ + clf.shared_coef_)
    assert clf.decision_function(X).shape == (300, 3)
    assert clf.score(X, y) > 0.7
    assert set(clf.predict(X)) <= set(clf.classes_)


@pytest.mark.parametrize("penalty, solver, q", [
    ("l1", "admm", None), ("l1", "fista", None), ("l1_linf", "admm", np.inf),
    (L1Lq(q=1.5), "admm", 1.5)], ids=str)
def test_penalties_and_logistic_and_fista(penalty, solver, q):
    # At the returned solution the restricted problem (17) with the logistic
    # loss is solved: with g = dl/dm at the margins and the unit-norm columns
    # Phi_v of each kept feature (a cos/sin pair), the optimality conditions
    # (5)-(6) of paper 000 hold: sum g = 0 (bias), and Phi_v'g = -lambda_p *
    # (subgradient of the penalty at w_v), i.e. |phi_j'g| = lambda_p where w_j != 0
    # (l1), ||Phi_v'g||_q' = lambda_p for the groups kept (l1-lq).
    X, y = _moons(120, seed=2)
    lam = 1.0
    clf = InfiniteFeatureClassifier(RandomFourierFeatures(bandwidth=0.5), max_features=3,
                                    n_candidates=30, loss="logistic", lambda_p=lam,
                                    penalty=penalty, solver=solver, inner_tol=1e-5,
                                    inner_max_iter=3000, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.8
    ys = np.where(y == clf.classes_[1], 1.0, -1.0)
    m = clf.decision_function(X)
    g = -ys / (1.0 + np.exp(ys * m))  # logistic dl/dm
    assert abs(g.sum()) < 1e-4 * np.abs(g).sum()
    Phi, w = clf.transform(X), clf.column_coef_[0]
    np.testing.assert_allclose(np.linalg.norm(Phi, axis=0), 1.0)
    h = Phi.T @ g
    assert w.size >= 4  # at least two features kept
    if q is None:
        nz = np.abs(w) > 1e-8
        assert nz.any()
        np.testing.assert_allclose(np.abs(h[nz]), lam, rtol=1e-3)
        np.testing.assert_allclose(np.sign(h[nz]), -np.sign(w[nz]))
        assert np.all(np.abs(h) <= lam * (1 + 1e-3))
    else:
        q_dual = 1.0 if np.isinf(q) else q / (q - 1.0)
        hv = np.linalg.norm(h.reshape(-1, 2), ord=q_dual, axis=1)
        np.testing.assert_allclose(hv, lam, rtol=1e-3)  # every kept group is non-zero
        # and -h_v is aligned with w_v: <h_v, w_v> = -lambda ||w_v||_q (Hoelder equality)
        wv = w.reshape(-1, 2)
        inner = (h.reshape(-1, 2) * wv).sum(axis=1)
        np.testing.assert_allclose(inner, -lam * np.linalg.norm(wv, ord=q, axis=1),
                                   rtol=1e-3)
    assert isinstance(penalty, str) or penalty.alpha == 1.0  # not modified by fit


def test_multi_output_and_task_index_regression():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(200, 2))
    Y = np.column_stack([np.sin(2 * X[:, 0]), np.sin(2 * X[:, 0]) + 0.5 * X[:, 1]])
    reg = InfiniteFeatureRegressor(RandomFourierFeatures(bandwidth=0.7), max_features=12,
                                   n_candidates=40, lambda_p=0.1, inner_max_iter=200,
                                   random_state=0).fit(X, Y)
    assert reg.predict(X).shape == (200, 2) and reg.score(X, Y) > 0.8
    task = np.repeat([0, 1], 100)
    y = np.where(task == 0, Y[:, 0], Y[:, 1])
    reg = InfiniteFeatureRegressor(RandomFourierFeatures(bandwidth=0.7), max_features=12,
                                   n_candidates=40, lambda_p=0.1, lambda_s=0.1,
                                   inner_max_iter=200,
                                   random_state=0).fit(X, y, task_index=task)
    pred = reg.predict(X, task_index=task)
    assert pred.shape == (200,) and np.mean((pred - y) ** 2) < 0.2 * np.var(y)
    with pytest.raises(ValueError, match="task_index"):
        reg.predict(X)
    with pytest.raises(ValueError, match="unseen"):
        reg.predict(X[:3], task_index=[0, 1, 7])
    with pytest.raises(ValueError, match="shape"):
        reg.fit(X, y, task_index=task[:10])


def test_single_output_regression_sinc():
    rng = np.random.default_rng(1)
    X = rng.uniform(-5, 5, size=(300, 1))
    y = np.sinc(X[:, 0] / np.pi) + 0.05 * rng.normal(size=300)
    reg = InfiniteFeatureRegressor(max_features=25, n_candidates=80, lambda_p=0.05,
                                   random_state=0).fit(X, y)
    assert reg.column_coef_.ndim == 1 and isinstance(reg.intercept_, float)
    assert reg.score(X, y) > 0.9


def test_gabor_family_in_the_classifier():
    rng = np.random.default_rng(0)
    # vertical vs horizontal stripes, 8x8 patches with noise
    n = 60
    zz = np.arange(8)
    vert = np.tile(np.cos(2 * np.pi * 0.25 * zz), (8, 1))
    X = np.concatenate([vert + 0.5 * rng.normal(size=(n, 8, 8)),
                        vert.T + 0.5 * rng.normal(size=(n, 8, 8))]).reshape(2 * n, -1)
    y = np.repeat([0, 1], n)
    clf = InfiniteFeatureClassifier(GaborFeatures(image_shape=(8, 8), filter_size=5),
                                    max_features=5, n_candidates=40,
                                    standardize=False, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.9
    assert clf.features_.shape[1] == 4


def test_bad_input():
    X, y = _moons(50)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        InfiniteFeatureClassifier(max_features=2).fit(Xn, y)
    with pytest.raises(InvalidParameterError, match="lambda_p"):
        InfiniteFeatureClassifier(lambda_p=-1.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="penalty"):
        InfiniteFeatureClassifier(penalty="l3").fit(X, y)
    with pytest.raises(InvalidParameterError, match="loss"):
        InfiniteFeatureClassifier(loss="square").fit(X, y)
    with pytest.raises(ValueError, match="bandwidth"):
        InfiniteFeatureClassifier(RandomFourierFeatures(bandwidth=[])).fit(X, y)
    with pytest.raises(ValueError, match="bandwidth_range"):
        InfiniteFeatureClassifier(RandomFourierFeatures(bandwidth_range=(2, 1))).fit(X, y)
    with pytest.raises(ValueError, match="image_shape"):
        InfiniteFeatureClassifier(GaborFeatures(image_shape=(4, 4))).fit(X, y)
    with pytest.raises(ValueError, match="single class"):
        InfiniteFeatureClassifier().fit(X, np.zeros(50))
    clf = InfiniteFeatureClassifier(max_features=2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(np.ones((3, 5)))
    with pytest.raises(ValueError, match="fitted without"):
        clf.predict(X, task_index=np.zeros(50))


def test_warm_start_continues_the_same_feature_path():
    X, y = _moons(200, seed=3)
    # the path is the cold one with masters solved to inner_tol (path_iter=None,
    # as documented): an intermediate master is finished when a warm fit stops
    kw = dict(family=RandomFourierFeatures(bandwidth=0.5), n_candidates=30, inner_tol=1e-6,
              inner_max_iter=5000, tol=0.0, path_iter=None, random_state=0)
    cold = InfiniteFeatureClassifier(max_features=8, **kw).fit(X, y)
    warm = InfiniteFeatureClassifier(max_features=4, warm_start=True, **kw).fit(X, y)
    assert warm.n_iter_ == 4
    warm.set_params(max_features=8).fit(X, y)
    assert warm.n_iter_ == cold.n_iter_ == 8
    np.testing.assert_allclose(warm.features_, cold.features_)
    np.testing.assert_allclose(warm.history_["objective"], cold.history_["objective"],
                               rtol=1e-6)
    np.testing.assert_allclose(warm.decision_function(X), cold.decision_function(X),
                               atol=1e-5)


def test_pricing_subsample_adds_only_true_violators_and_finishes_masters():
    # pricing estimated on 150 of 600 rows, the 25 best re-scored on all rows:
    # every added feature violates (7) on the full data (Proposition 3), and
    # the returned model solves its master to tol despite 10-iteration masters
    X, y = make_classification(600, n_features=5, n_informative=4, n_redundant=0,
                               random_state=1)
    tol = 1e-4
    clf = InfiniteFeatureClassifier(RandomFourierFeatures(bandwidth=1.5), max_features=15,
                                    n_candidates=60, pricing_subsample=150, path_iter=10,
                                    inner_tol=tol, inner_max_iter=5000, tol=1e-3,
                                    random_state=0).fit(X, y)
    assert clf.n_iter_ >= 5
    assert np.all(clf.history_["violation"] > 1e-3)
    assert np.all(clf.history_["master_iter"][:-1] <= 10)
    assert clf.history_["kkt"][-1] <= tol
    exact = InfiniteFeatureClassifier(RandomFourierFeatures(bandwidth=1.5),
                                      max_features=15, n_candidates=60,
                                      pricing_subsample=None, path_iter=None, inner_tol=tol,
                                      inner_max_iter=5000, tol=1e-3, random_state=0).fit(X, y)
    # same accuracy class as exact pricing with exact masters
    assert clf.score(X, y) >= exact.score(X, y) - 0.02


def test_warm_start_on_new_data_starts_over():
    # issue 13, defect 3: a warm start on other data of the same shape must not
    # reuse the columns computed on the previous data
    XA, yA = _moons(200, seed=1)
    XB, yB = _moons(200, seed=2)
    kw = dict(n_candidates=30, pricing_subsample=None, path_iter=None, random_state=0)
    fam = RandomFourierFeatures(bandwidth=0.7)
    warm = InfiniteFeatureClassifier(fam, max_features=4, warm_start=True, **kw).fit(XA, yA)
    warm.set_params(max_features=8).fit(XB, yB)
    cold = InfiniteFeatureClassifier(fam, max_features=8, **kw).fit(XB, yB)
    np.testing.assert_allclose(warm.objective_, cold.objective_, rtol=1e-10)
    np.testing.assert_allclose(warm.decision_function(XB), cold.decision_function(XB),
                               rtol=1e-8, atol=1e-10)
    assert warm.n_iter_ == cold.n_iter_


def test_regressor_does_not_depend_on_the_units_of_y():
    # with y in large units the square loss swamped lambda_p (cal_housing at
    # defaults: MSE 6x that of the mean); targets are now standardised
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(150, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=150)
    kw = dict(max_features=10, n_candidates=30, random_state=0)
    a = InfiniteFeatureRegressor(**kw).fit(X, y)
    b = InfiniteFeatureRegressor(**kw).fit(X, 1e5 * y + 3e5)
    np.testing.assert_allclose(b.predict(X), 1e5 * a.predict(X) + 3e5, rtol=1e-6)
    assert b.y_scale_ == pytest.approx(1e5 * a.y_scale_)


def test_predict_proba_with_the_logistic_loss():
    # Issue 13, part 9: probabilities from GrFL's logistic model.
    from sklearn.datasets import make_moons

    from kernlearn import InfiniteFeatureClassifier

    X, y = make_moons(200, noise=0.2, random_state=0)
    clf = InfiniteFeatureClassifier(loss="logistic", max_features=5, n_candidates=20,
                                    random_state=0).fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-clf.decision_function(X))))
    np.testing.assert_array_equal(clf.classes_[proba.argmax(1)], clf.predict(X))
    with pytest.raises(AttributeError, match="predict_proba"):
        InfiniteFeatureClassifier(loss="squared_hinge", max_features=2).fit(X, y).predict_proba(X)


@pytest.mark.parametrize("n, budget", [(40, 6), (5, 1)])
def test_auto_budget_on_data_too_small_to_hold_out_is_n_over_6(n, budget):
    # fewer than MIN_VALIDATION_ROWS held-out rows: min(100, max(1, n // 6))
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, 3))
    y = np.sin(2 * X[:, 0]) + rng.normal(size=n)
    kw = dict(n_candidates=10, lambda_p=1e-3, random_state=0)
    auto = InfiniteFeatureRegressor(**kw).fit(X, y)
    assert InfiniteFeatureRegressor().max_features == "auto"
    fixed = InfiniteFeatureRegressor(max_features=budget, **kw).fit(X, y)
    np.testing.assert_allclose(auto.predict(X), fixed.predict(X), rtol=1e-12)
    assert auto.stop_reason_ == "max_features" and auto.max_features_ == budget


def _auto_fit(y_kind, n=400, **kw):
    from sklearn.preprocessing import StandardScaler

    from kernlearn.losses import Square
    from kernlearn.methods.grfl import fit_grfl
    from kernlearn.penalties import GroupL1L2

    rng = np.random.default_rng(3)
    X = StandardScaler().fit_transform(rng.normal(size=(n, 4)))
    y = rng.normal(size=n) if y_kind == "noise" else np.sin(2 * X[:, 0]) * X[:, 1]
    res = fit_grfl(X, y[:, None], loss=Square(), penalty=GroupL1L2(), lambda_p=0.05,
                   max_features="auto", n_candidates=30, random_state=0, **kw)
    return X, y, res


def test_auto_budget_on_small_data_is_the_cross_validated_count(monkeypatch):
    # below CV_BELOW rows: CV_FOLDS folds, the count of lowest summed held-out
    # loss, then a path on all rows to that count
    from kernlearn.methods import grfl

    folds = []
    orig = grfl._HoldOut.__init__

    def spy(self, *a, **k):
        orig(self, *a, **k)
        folds.append(self)

    monkeypatch.setattr(grfl._HoldOut, "__init__", spy)
    n = 200
    assert n < grfl.CV_BELOW
    X, y, res = _auto_fit("signal", n=n)
    assert len(folds) == grfl.CV_FOLDS
    assert sum(m.X.shape[0] for m in folds) == n  # every row held out once
    counts = np.unique(np.concatenate([m.counts for m in folds]))
    total = sum(grfl._curve_at(m, counts) for m in folds)
    assert res.max_features == counts[int(np.argmin(total))]
    top = max(r["n_active"] for r in res.history)
    assert top == res.max_features  # the final path stops at the chosen count
    assert np.isfinite([r["validation_loss"] for r in res.history]).all()


def test_auto_budget_is_the_held_out_minimiser_refit_on_all_rows():
    from kernlearn.families import RandomFourierFeatures  # noqa: F401
    from kernlearn.losses import Square
    from kernlearn.methods.grfl import GrFL
    from kernlearn.penalties import GroupL1L2
    from kernlearn.solvers.grfl_newton import GrFLNewton
    from kernlearn.families._base import Candidates

    X, y, res = _auto_fit("signal", tol=1e-10)
    h = res.history
    counts = [r["n_active"] for r in h]
    losses = [r["validation_loss"] for r in h]
    assert res.max_features == counts[int(np.argmin(losses))]
    assert 1 <= len(res.features) <= res.max_features
    # the returned model is the master on ALL rows with the chosen features
    # (features with zero weight at the optimum can be dropped)
    path = GrFL(res.family, Square(), GroupL1L2(alpha=0.05), None,
                GrFLNewton(tol=1e-10)).start(X, y[:, None], None, np.random.default_rng(0))
    path._reserve(len(res.features))
    path.master(Candidates(params=res.features, scores=np.ones(len(res.features)),
                           group_size=2))
    U, us, b = path.coefficients()
    np.testing.assert_allclose(res.coef[0], (U + us[:, None])[:, 0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(res.intercept, b, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res.feature_scales, np.array(path.scales), rtol=1e-12)


def test_auto_budget_stops_early_on_noise():
    # pure noise: the held-out loss is lowest with few features, and the path
    # stops at PATIENCE_FACTOR x that count + PATIENCE_EXTRA, far below 100
    from kernlearn.methods import grfl

    _, _, res = _auto_fit("noise")
    assert res.stop_reason == "validation"
    top = max(r["n_active"] for r in res.history)
    assert top < grfl.AUTO_MAX_FEATURES
    assert top >= grfl.PATIENCE_FACTOR * res.max_features + grfl.PATIENCE_EXTRA
    assert res.max_features <= 10


def test_batches_of_features_all_violate_and_grow_with_the_active_set():
    # batch="auto": several features per outer iteration once 8 are active, each
    # one an exact violator of condition (7) (Proposition 3 still applies)
    import copy

    from sklearn.utils import check_random_state

    from kernlearn.losses import Square
    from kernlearn.methods.grfl import GrFL
    from kernlearn.penalties import GroupL1L2
    from kernlearn.solvers.grfl_newton import GrFLNewton

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    Y = (np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2])[:, None]
    fam = RandomFourierFeatures(gamma=0.5).fit(X)
    path = GrFL(fam, Square(), GroupL1L2(alpha=0.05), None, GrFLNewton(tol=1e-8),
                n_candidates=100, eps=1e-3, batch="auto").start(
        X, Y, None, check_random_state(0))
    path.extend(12)
    assert path.p // 2 == 12
    assert len(path.history) < 12  # fewer outer iterations than features
    assert path.batch_size(100) == 3  # floor(12 / 4)
    path._reserve(20)  # room for the next batch
    cand = path.price()
    assert len(cand.params) == 3
    H, _ = fam.correlations(cand.params, X, path.grad_matrix())
    exact = np.sqrt((H ** 2).sum(axis=(1, 2))) / 0.05 - 1.0
    np.testing.assert_allclose(cand.scores, exact, rtol=1e-10)
    assert np.all(exact > 1e-3)
    assert path._found is None  # every step so far found as many as asked
    path.master(cand)
    # a pricing step that finds fewer violators than asked (2 of 3): the path
    # then asks for as many as it found, not one at a time, and never more
    asked = path.batch_size(100)
    assert asked == 3  # floor(15 / 4)
    probe = copy.deepcopy(path)  # the same generator state: the same sample
    s = probe._best_candidate(asked).scores
    assert s[1] > s[2]
    path.eps = (s[1] + s[2]) / 2  # exactly two of the three violate
    path._reserve(40)
    sizes = []  # pricing-sample sizes from here on
    price_sample = path.family.price
    path.family.price = lambda *a, **kw: sizes.append(kw["n_sample"]) or price_sample(*a, **kw)
    out = path.price()
    assert len(out.params) == 2 and path._found == 2
    np.testing.assert_allclose(out.scores, s[:2], rtol=1e-10)
    assert np.all(out.scores > path.eps)  # Proposition 3: each added one violates
    assert path.batch_size(100) == 2
    path.master(out)
    assert path.p // 2 == 17 and path.batch_size(100) == 2  # floor(17 / 4) = 4 > 2
    # the next sample is n_candidates * ceil(sqrt(2)); its size then follows
    # what each step finds, down to one at a time
    out = path.price()
    assert len(sizes) >= 2 and set(sizes) == {100 * 2}
    found = 0 if out is None else len(out.params)
    assert found <= 2 and path.batch_size(100) == max(1, found)
    del path.family.price
    # batch=1 is Algorithm 1: one feature per outer iteration
    one = GrFL(fam, Square(), GroupL1L2(alpha=0.05), None, GrFLNewton(tol=1e-8),
               n_candidates=100, batch=1).start(X, Y, None, check_random_state(0))
    one.extend(12)
    assert len(one.history) == 12


def test_family_validates_each_new_array_once_and_still_rejects_bad_ones():
    import pickle

    X = np.random.default_rng(0).normal(size=(30, 3))
    calls = []
    orig = RandomFourierFeatures._check_X

    def counting(self, X):
        calls.append(1)
        return orig(self, X)

    RandomFourierFeatures._check_X, saved = counting, orig
    try:
        fam = RandomFourierFeatures(gamma=1.0).fit(X)
        params = fam.sample(4, 0)
        fam.columns(params, X)
        fam.correlations(params, X, np.ones(30))
        fam.columns(params, X)
        assert len(calls) == 1  # the same array (fit's included): checked once
        # a cross-validated path alternates between training and validation
        # rows: each array is still checked only once
        Xv = X[:10].copy()
        for _ in range(3):
            fam.columns(params, X)
            fam.columns(params, Xv)
        assert len(calls) == 2
        bad = X.copy()
        bad[0, 0] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            fam.columns(params, bad)
        with pytest.raises(ValueError, match="features"):
            fam.columns(params, X[:, :2])
    finally:
        RandomFourierFeatures._check_X = saved
    # the remembered array is not part of the family (pickles, model files)
    import weakref

    assert not any(isinstance(v, weakref.ref) for v in vars(fam).values())
    again = pickle.loads(pickle.dumps(fam))
    np.testing.assert_allclose(again.columns(params, X), fam.columns(params, X))


@pytest.mark.parametrize("make", [
    lambda X: X, lambda X: X.astype(np.float32), lambda X: np.asfortranarray(X),
    lambda X: X[:, ::2], lambda X: X.tolist(), lambda X: (X * 10).astype(int),
    lambda X: sp.csr_matrix(X)])
def test_family_check_short_cut_returns_what_check_array_returns(make):
    from sklearn.utils.validation import check_array

    from kernlearn.families._infinite import plain_float_matrix

    X = make(np.random.default_rng(0).normal(size=(12, 4)))
    fam = RandomFourierFeatures(gamma=1.0)
    ours = fam._check_X(X)
    ref = check_array(X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32])
    assert type(ours) is type(ref) and ours.dtype == ref.dtype and ours.shape == ref.shape
    dense = ours.toarray() if sp.issparse(ours) else ours
    np.testing.assert_array_equal(dense, ref.toarray() if sp.issparse(ref) else ref)
    # plain float matrices skip the check and come back as they are (no copy)
    if plain_float_matrix(X):
        assert ours is X and ref is X


@pytest.mark.parametrize("bad, match", [(np.nan, "NaN"), (np.inf, "infinity"),
                                        (1e308, None)])
def test_family_check_short_cut_sends_non_finite_sums_to_check_array(bad, match):
    from kernlearn.families._infinite import plain_float_matrix

    X = np.ones((5, 3))
    X[2, 1] = bad
    X[3, 2] = bad
    assert not plain_float_matrix(X)
    fam = RandomFourierFeatures(gamma=1.0)
    if match is None:  # a finite matrix whose sum overflows: accepted by the full check
        assert fam._check_X(X) is X
    else:
        with pytest.raises(ValueError, match=match):
            fam._check_X(X)


def test_auto_lambda_level_follows_the_row_count():
    # lambda_p="auto": 1 up to 2000 rows, sqrt(2000 / n) beyond
    from kernlearn.methods._grfl_select import AUTO_LAMBDA_ROWS, classifier_level

    assert AUTO_LAMBDA_ROWS == 2000
    assert classifier_level(150) == 1.0 and classifier_level(2000) == 1.0
    np.testing.assert_allclose(classifier_level(8000), 0.5)
    np.testing.assert_allclose(classifier_level(20000), np.sqrt(0.1))
    kw = dict(max_features=3, n_candidates=20, random_state=0)
    X, y = _moons(300)
    assert InfiniteFeatureClassifier(**kw).fit(X, y).lambda_p_ == 1.0
    assert InfiniteFeatureClassifier(lambda_p=0.3, **kw).fit(X, y).lambda_p_ == 0.3
    X, y = _moons(3200)
    np.testing.assert_allclose(InfiniteFeatureClassifier(**kw).fit(X, y).lambda_p_,
                               np.sqrt(2000 / 3200))


def test_auto_lambda_reaches_the_solver():
    # the resolved level is the one solved: the same model as that level given
    # as a number, a different one from the old default 1.0
    X, y = _moons(4500, seed=1)
    kw = dict(max_features=6, n_candidates=20, random_state=0)
    auto = InfiniteFeatureClassifier(**kw).fit(X, y)
    assert auto.lambda_p_ < 0.7
    same = InfiniteFeatureClassifier(lambda_p=auto.lambda_p_, **kw).fit(X, y)
    one = InfiniteFeatureClassifier(lambda_p=1.0, **kw).fit(X, y)
    np.testing.assert_allclose(auto.decision_function(X), same.decision_function(X))
    assert np.max(np.abs(auto.decision_function(X) - one.decision_function(X))) > 1e-3
    # a weaker level keeps larger weights on the same first features
    assert np.abs(auto.column_coef_).sum() > np.abs(one.column_coef_).sum()


def test_auto_lambda_counts_integer_weights_as_rows():
    # weights of 2 are repeated rows for the automatic level too (weight sum)
    X, y = _moons(1500, seed=2)
    kw = dict(max_features=4, n_candidates=20, random_state=0, pricing_subsample=None,
              inner_tol=1e-10)
    w = InfiniteFeatureClassifier(**kw).fit(X, y, sample_weight=np.full(len(y), 2.0))
    rep = InfiniteFeatureClassifier(**kw).fit(np.vstack([X, X]), np.r_[y, y])
    np.testing.assert_allclose(w.lambda_p_, np.sqrt(2000 / 3000))
    assert w.lambda_p_ == rep.lambda_p_
    # same level, problem and sampled features: the same model
    np.testing.assert_allclose(w.decision_function(X), rep.decision_function(X), atol=1e-8)


@pytest.mark.parametrize("d, budget", [(3, 100), (150, 150), (260, 200)])
def test_default_budget_is_one_feature_per_column_within_bounds(d, budget):
    # max_features=None: the number of input columns clipped to [100, 200];
    # random labels at a weak level keep features violating until the budget
    rng = np.random.RandomState(0)
    X, y = rng.randn(240, d), rng.randint(0, 2, 240)
    clf = InfiniteFeatureClassifier(n_candidates=10, lambda_p=1e-3, random_state=0).fit(X, y)
    assert clf.stop_reason_ == "max_features"
    assert clf.history_["n_active"][-1] == budget
    # an explicit budget is kept as given
    clf = InfiniteFeatureClassifier(max_features=7, n_candidates=10, lambda_p=1e-3,
                                    random_state=0).fit(X, y)
    assert clf.history_["n_active"][-1] == 7


def test_default_budget_grows_with_the_rows_from_1000(monkeypatch):
    # max_features=None: one feature per 10 rows counts too, whichever of
    # columns and rows / 10 is more, within [100, 200]
    from kernlearn.estimators import infinite
    from kernlearn.methods._grfl_select import classifier_budget

    assert classifier_budget(3, 999) == 100 and classifier_budget(3, 1000) == 100
    assert classifier_budget(3, 1500) == 150 and classifier_budget(150, 1500) == 150
    assert classifier_budget(170, 1500) == 170 and classifier_budget(3, 2000) == 200
    assert classifier_budget(3, 20000) == 200 and classifier_budget(260, 1500) == 200

    # the budget the method receives (a full path to 130 features is slow)
    seen = []

    class _Stop(Exception):
        pass

    def fake_fit_grfl(X, Y, **kw):
        seen.append(kw["max_features"])
        raise _Stop

    monkeypatch.setattr(infinite, "fit_grfl", fake_fit_grfl)
    rng = np.random.RandomState(0)
    X, y = rng.randn(2600, 3), rng.randint(0, 2, 2600)
    fits = [lambda: InfiniteFeatureClassifier().fit(X[:1300], y[:1300]),
            # integer weights count as rows, as for lambda_p="auto"
            lambda: InfiniteFeatureClassifier().fit(X[:650], y[:650],
                                                    sample_weight=np.full(650, 2.0)),
            lambda: InfiniteFeatureClassifier().fit(X[:650], y[:650]),
            lambda: InfiniteFeatureClassifier().fit(X, y),
            lambda: InfiniteFeatureClassifier(max_features=7).fit(X, y)]
    for fit in fits:
        with pytest.raises(_Stop):
            fit()
    assert seen == [130, 130, 100, 200, 7]


def test_selectors_read_input_importances_not_the_learned_columns_weights(tmp_path):
    # coef_ held the learned columns' weights: SelectFromModel read them as one
    # weight per input and, with as many columns as inputs (5 features x cos/sin
    # on 10 inputs), silently kept inputs by column position; RFE raised an
    # IndexError.  They now read feature_importances_.
    from sklearn.feature_selection import RFE, SelectFromModel

    from kernlearn.io import load_model, save_model

    X, y = make_classification(300, 10, n_informative=3, n_redundant=0, shuffle=False,
                               random_state=0)
    est = InfiniteFeatureClassifier(max_features=5, random_state=0).fit(X, y)
    assert est.column_coef_.shape == (1, 10)
    with pytest.raises(AttributeError, match="column_coef_"):
        est.coef_
    imp = est.feature_importances_
    assert imp.shape == (10,) and abs(imp.sum() - 1) < 1e-12
    W = est.column_coef_ * est.feature_scales_.ravel()
    amp = np.linalg.norm(W.reshape(5, 2), axis=1)
    ref = amp @ np.abs(est.features_[:, :-1])
    np.testing.assert_allclose(imp, ref / ref.sum(), rtol=1e-12)
    sel = SelectFromModel(InfiniteFeatureClassifier(max_features=5, random_state=0),
                          max_features=3, threshold=-1.0).fit(X, y)
    np.testing.assert_array_equal(sel.get_support().nonzero()[0], [0, 1, 2])
    rfe = RFE(InfiniteFeatureClassifier(random_state=0), n_features_to_select=3).fit(X, y)
    np.testing.assert_array_equal(rfe.support_.nonzero()[0], [0, 1, 2])
    # a model file written before the rename (state key coef_) still loads
    old = InfiniteFeatureClassifier(max_features=5, random_state=0).fit(X, y)
    old.__dict__["coef_"] = old.__dict__.pop("column_coef_")
    save_model(old, tmp_path / "old.npz")
    back = load_model(tmp_path / "old.npz")
    np.testing.assert_array_equal(back.column_coef_, est.column_coef_)
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))


def test_feature_importances_need_the_fourier_family():
    rng = np.random.default_rng(0)
    X = rng.random((60, 64))
    y = (X[:, :32].mean(1) > X[:, 32:].mean(1)).astype(int)
    est = InfiniteFeatureClassifier(GaborFeatures((8, 8), filter_size=3), max_features=3,
                                    random_state=0).fit(X, y)
    with pytest.raises(AttributeError, match="random Fourier family only"):
        est.feature_importances_
