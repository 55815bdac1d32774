"""FGM: Theorems 2-3 at the returned solution, recovery, input handling."""

import bz2

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from kernlearn import FGMClassifier, FGMRegressor
from kernlearn.datasets import load_svmlight, make_fgm_synthetic
from kernlearn.families import FeaturePool


@pytest.fixture(scope="module")
def small():
    return make_fgm_synthetic(200, 100, 10, random_state=0)


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_converged_fgm_meets_theorems_2_and_3(small, loss, fit_intercept):
    X, y, _ = small
    clf = FGMClassifier(B=5, C=1.0, loss=loss, tol=None, max_iter=100,
                        inner_tol=1e-12, inner_max_iter=200,
                        fit_intercept=fit_intercept).fit(X, y)
    h = clf.history_
    # Theorem 3: the worst-case analysis adds nothing new.
    assert clf.converged_ and clf.n_iter_ < 100
    upper, lower = h["objective"][-1], h["final_lower_bound"][0]
    # Theorem 2: beta_T <= theta* <= phi_T, and the bounds meet.
    assert lower <= upper * (1 + 1e-9)
    assert (upper - lower) / upper < 1e-4
    # The upper bound (restricted objective) decreases as constraints are added.
    assert np.all(np.diff(h["objective"]) <= 1e-8 * h["objective"][:-1])
    # Theorem 3 holds in floating point: once the worst-case constraint adds
    # nothing (ties among the selected features broken by round-off), the
    # loop stops; the exact-repeat test alone ran 6-39 such rounds here.
    obj = h["objective"]
    assert np.sum(-np.diff(obj) < 1e-10 * obj[1:]) <= 4


@pytest.mark.parametrize("K", [1, 2])
@pytest.mark.parametrize("groups", [None, [[0, 1, 2], [3, 4], [5], [6, 7, 8, 9]]])
def test_constraint_values_are_the_pricing_scores(small, rng, K, groups):
    # Theorem 3's floating-point test compares the new constraint's value
    # (from the scores) with the active constraints' (from their columns):
    # both must be the same quantity.
    from kernlearn.methods.fgm import _LocalRows

    X = small[0][:, :10]
    pool = FeaturePool(groups=groups).fit(X)
    g = rng.standard_normal((X.shape[0], K)) if K > 1 else rng.standard_normal(X.shape[0])
    cand = pool.price(g, 2, X=X)
    rows = _LocalRows(X, np.zeros(X.shape[0]), None, 1.0)
    blocks = [pool.columns(type(cand)([p], [s], cand.group_size, cand.extra), X)
              for p, s in zip(cand.params, cand.scores)]
    np.testing.assert_allclose(rows.constraint_values(blocks, g),
                               np.square(cand.scores), rtol=1e-12)


def test_regressor_bounds_meet(small):
    X, _, w = small
    reg = FGMRegressor(B=5, C=1.0, tol=None, max_iter=100, inner_tol=1e-12,
                       inner_max_iter=200).fit(X, X @ w)
    h = reg.history_
    assert reg.converged_
    assert (h["objective"][-1] - h["final_lower_bound"][0]) / h["objective"][-1] < 1e-4


def test_worst_case_analysis_is_exact_top_B(small, rng):
    X, y, _ = small
    pool = FeaturePool().fit(X)
    u = rng.standard_normal(X.shape[0])
    cand = pool.price(-u, 7, X=X)
    # Unit root-mean-square scaling: lambda_j = sqrt(n) / ||f_j||.
    scores = np.abs(X.T @ u) * np.sqrt(X.shape[0]) / np.linalg.norm(X, axis=0)
    assert set(cand.params) == set(np.argsort(-scores)[:7])
    np.testing.assert_allclose(cand.extra["sum_sq"], np.sort(scores**2)[-7:].sum())


def test_chunked_pricing_equals_full(small, rng):
    X, y, _ = small
    u = rng.standard_normal(X.shape[0])
    full = FeaturePool().fit(X).price(-u, 9, X=X)
    chunk = FeaturePool(chunk_size=7).fit(X).price(-u, 9, X=X)
    np.testing.assert_array_equal(full.params, chunk.params)


def test_tree_pruning_equals_brute_force(rng):
    X = rng.standard_normal((50, 16))
    groups = [list(range(16)), list(range(8)), list(range(8, 16)), [0, 1, 2, 3], [4, 5, 6, 7],
              [8, 9, 10, 11], [12, 13, 14, 15], [0, 1], [2, 3], [12, 13]]
    u = rng.standard_normal(50)
    tree = FeaturePool(groups=groups, tree=True).fit(X).price(-u, 3, X=X)
    flat = FeaturePool(groups=groups).fit(X).price(-u, 3, X=X)
    np.testing.assert_array_equal(tree.params, flat.params)
    np.testing.assert_allclose(tree.scores, flat.scores)


def test_non_nested_tree_is_rejected(rng):
    X = rng.standard_normal((10, 4))
    with pytest.raises(ValueError, match="not a tree"):
        FeaturePool(groups=[[0, 1, 2, 3], [0, 1], [1, 2]], tree=True).fit(X)


def test_group_selection_finds_planted_groups(rng):
    n, n_groups, size = 300, 40, 5
    X = rng.standard_normal((n, n_groups * size))
    groups = [list(range(g * size, (g + 1) * size)) for g in range(n_groups)]
    w = np.zeros(n_groups * size)
    planted = [3, 17, 29]
    for g in planted:
        w[groups[g]] = rng.standard_normal(size)
    y = np.sign(X @ w)
    clf = FGMClassifier(B=1, C=10.0, groups=groups, max_iter=3).fit(X, y)
    chosen = {j // size for j in clf.selected_features_}
    assert chosen == set(planted)


def test_overlapping_groups_duplicate_features(rng):
    X = rng.standard_normal((100, 6))
    y = np.sign(X[:, 1] + X[:, 2])
    clf = FGMClassifier(B=1, C=1.0, groups=[[0, 1], [1, 2], [3, 4, 5]], max_iter=3).fit(X, y)
    assert set(clf.selected_features_) <= {0, 1, 2}
    assert clf.score(X, y) > 0.9


def test_recovers_informative_features_on_paper_synthetic():
    # Measured (seed 1, 1000 x 2000, 100 informative, Type I of sec. 6.2.1):
    # B=10, T=5 selects 50 features of which 49 are informative, test accuracy
    # 0.819; l1-LR (liblinear, C=0.03) needs 67 features (51 informative) for 0.801.
    X, y, Xt, yt, w = make_fgm_synthetic(1000, 2000, 100, n_test=1000, random_state=1)
    clf = FGMClassifier(B=10, C=10.0, max_iter=5).fit(X, y)
    sel = clf.selected_features_
    precision = np.isin(sel, np.flatnonzero(w)).mean()
    assert precision >= 0.9
    l1 = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=0.03).fit(X, y)
    l1_sel = np.flatnonzero(l1.coef_)
    assert l1_sel.size >= sel.size
    assert precision > np.isin(l1_sel, np.flatnonzero(w)).mean()
    assert clf.score(Xt, yt) >= l1.score(Xt, yt)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_input_matches_dense(small, fmt):
    X, y, _ = small
    Xs = sp.random(200, 300, density=0.05, format=fmt, random_state=0)
    score = Xs @ np.r_[np.ones(10), np.zeros(290)]
    y = np.where(score > np.median(score), 1.0, -1.0)
    # Same maths on every container (the standardisation rules differ by design:
    # dense by standard deviation, sparse by max-abs).
    dense = FGMClassifier(B=3, inner_tol=1e-10, standardize=False).fit(Xs.toarray(), y)
    sparse = FGMClassifier(B=3, inner_tol=1e-10, standardize=False).fit(Xs, y)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, atol=1e-6)
    assert sp.issparse(sparse.transform(Xs))


def test_float32_input(small):
    X, y, _ = small
    clf = FGMClassifier(B=5).fit(X.astype(np.float32), y)
    assert clf.score(X.astype(np.float32), y) > 0.8


def test_multiclass_and_proba():
    X, y = load_wine(return_X_y=True)
    clf = FGMClassifier(B=3, C=100.0, loss="logistic", multiclass="ovr", n_jobs=2).fit(X, y)
    assert clf.coef_.shape == (3, 13) and clf.d_.shape[0] == 3
    assert clf.score(X, y) > 0.9
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    assert np.mean(clf.classes_[proba.argmax(1)] == clf.predict(X)) > 0.95
    with pytest.raises(AttributeError, match="predict_proba"):
        FGMClassifier(B=3).fit(X, y).predict_proba(X)


def test_d_and_selected_features(small):
    # Remark 2 of paper 002: d* = sum_t mu_t d_t with sum_t mu_t = 1 and each
    # worst-case d_t a 0/1 vector with sum d_t = B, so d* lies in the feasible set
    # D = {0 <= d <= 1, sum d <= B} (on its face sum d = B), and
    # B <= card(d*) <= T B.
    X, y, _ = small
    B = 5
    clf = FGMClassifier(B=B).fit(X, y)
    d, sel = clf.d_, clf.selected_features_
    assert d.shape == sel.shape
    assert np.all((d > 0) & (d <= 1 + 1e-12))
    assert d.sum() <= B * (1 + 1e-9)
    assert d.sum() == pytest.approx(B, rel=1e-6)
    assert B <= sel.size <= B * clf.n_iter_
    assert np.all(clf.coef_[0, sel] != 0)
    assert np.count_nonzero(clf.coef_) == sel.size


def test_refit_on_new_data_starts_over(small):
    # Fitting again on different data of the same shape must give exactly the
    # model a fresh estimator gives (no columns, duals or active set carried over).
    X, y, _ = small
    X2, y2, _ = make_fgm_synthetic(200, 100, 10, weight_type="III", random_state=7)
    reused = FGMClassifier(B=5).fit(X, y).fit(X2, y2)
    fresh = FGMClassifier(B=5).fit(X2, y2)
    np.testing.assert_array_equal(reused.selected_features_, fresh.selected_features_)
    np.testing.assert_allclose(reused.coef_, fresh.coef_)
    np.testing.assert_allclose(reused.d_, fresh.d_)
    np.testing.assert_allclose(reused.history_["objective"], fresh.history_["objective"])
    assert not np.array_equal(reused.selected_features_,
                              FGMClassifier(B=5).fit(X, y).selected_features_)


def test_refit_and_pipeline(small):
    X, y, _ = small
    pipe = make_pipeline(FGMClassifier(B=5, refit=True), LogisticRegression())
    pipe.fit(X, y)
    assert pipe.score(X, y) > 0.8
    assert pipe[0].transform(X).shape[1] == pipe[0].selected_features_.size


def test_iris_multiclass_stops_by_theorem_3():
    # With B=2 the worst-case analysis returns the active pair again at once:
    # the budget-2 problem is solved after one constraint per class.
    X, y = load_iris(return_X_y=True)
    # C=10 on the paper's unit-norm columns is C=10/n on unit-RMS columns.
    X_rms = X / np.sqrt((X**2).mean(0))
    clf = FGMClassifier(B=2, C=10.0 / len(y), multiclass="ovr",
                        standardize=False).fit(X_rms, y)
    assert clf.converged_ and np.all(clf.n_iter_ == 1)
    assert FGMClassifier(B=4, C=100.0).fit(X, y).score(X, y) > 0.9


def test_verbose_progress(small, capsys, monkeypatch):
    monkeypatch.setenv("KERNLEARN_PROGRESS", "lines")  # captured output is not a terminal
    X, y, _ = small
    FGMClassifier(B=5, verbose=1, max_iter=2).fit(X, y)
    out = capsys.readouterr().out
    assert "[FGM] iter   1" in out and "objective=" in out


@pytest.mark.parametrize(
    "X, y, match",
    [
        (np.array([[1.0, np.nan], [0.0, 1.0]]), [0, 1], "NaN"),
        (np.array([[1.0, np.inf], [0.0, 1.0]]), [0, 1], "infinite value"),
        (np.zeros((0, 3)), [], "0 sample"),
        (np.ones((4, 2)), [1, 1, 1, 1], "single class"),
        (np.ones((4, 2)), [0, 1, 0], "inconsistent numbers of samples"),
        (np.ones(4), [0, 1, 0, 1], "Expected 2D array"),
    ],
)
def test_bad_input_errors(X, y, match):
    with pytest.raises(ValueError, match=match):
        FGMClassifier().fit(X, y)


@pytest.mark.parametrize("params, match", [({"B": 0}, "'B' parameter"),
                                           ({"loss": "hinge"}, "'loss' parameter"),
                                           ({"C": -1.0}, "'C' parameter")])
def test_bad_parameters(small, params, match):
    X, y, _ = small
    with pytest.raises(ValueError, match=match):
        FGMClassifier(**params).fit(X, y)


def test_predict_with_wrong_width(small):
    X, y, _ = small
    clf = FGMClassifier(B=3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :50])


def test_bad_groups(small):
    X, y, _ = small
    with pytest.raises(ValueError, match="groups index features outside"):
        FGMClassifier(groups=[[0, 1000]]).fit(X, y)


def test_corrupt_svmlight_file(tmp_path):
    path = tmp_path / "bad.bz2"
    path.write_bytes(bz2.compress(b"1 1:0.5 2:x\n-1 3:1\n"))
    with pytest.raises(ValueError, match="corrupt svmlight file"):
        load_svmlight(path)


def test_out_of_core_memmap_with_chunked_pricing(tmp_path, small):
    X, y, _ = small
    path = tmp_path / "X.dat"
    mm = np.memmap(path, dtype=np.float64, mode="w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    ro = np.memmap(path, dtype=np.float64, mode="r", shape=X.shape)
    chunked = FGMClassifier(B=4, chunk_size=16).fit(ro, y)
    ref = FGMClassifier(B=4).fit(X, y)
    np.testing.assert_array_equal(chunked.selected_features_, ref.selected_features_)
    np.testing.assert_allclose(chunked.coef_, ref.coef_, atol=1e-10)


# --- issue 10: fast master, budget, shared multiclass selection, defaults ----------


@pytest.mark.parametrize("k", [1, 7, 23])
def test_max_features_returns_exactly_k(small, k):
    X, y, _ = small
    clf = FGMClassifier(B=5, max_features=k).fit(X, y)
    assert clf.selected_features_.size == k
    assert np.count_nonzero(clf.coef_) == k


def _smooth_features(seed, n=300, p=40, rho=0.95):
    """Strongly correlated neighbouring columns, the label spread over all (like hill-valley)."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, p))
    X = np.empty_like(Z)
    X[:, 0] = Z[:, 0]
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho ** 2) * Z[:, j]
    y = (X @ np.cos(2.5 * np.arange(p)) + 0.5 * rng.standard_normal(n) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("seed, n_selected", [(0, 32), (2, 40)])
def test_max_features_stops_short_only_at_the_budgets_optimum(seed, n_selected):
    # Issue 21 (hill-valley kept 60 of 100 features): a group of new features
    # too weak to enter is joined by the next best until it is violated; the
    # budget is left unused only when even the best remaining-budget's worth
    # of new features cannot enter.  Checked on the squared-hinge optimality
    # conditions at the fitted model: with disjoint groups and
    # d_j = ||W_t|| / S, S^2 = sum_j w_j^2 / d_j is every active constraint's
    # value, no active feature's score c_j = (x_j' u)^2 exceeds it, and the
    # best (k - |selected|) new scores sum to at most S^2.  Seed 2 stopped at
    # 32 features before the rule, its 8 others summing to 1.25 S^2.
    from kernlearn.losses import get_loss

    X, y = _smooth_features(seed)
    k = X.shape[1]
    clf = FGMClassifier(C=1.0, max_features=k).fit(X, y)  # the numbers were measured at C=1
    sel = clf.selected_features_
    assert sel.size == n_selected
    w = clf.coef_.ravel() * clf.x_scale_
    S2 = np.sum(w[sel] ** 2 / clf.d_)
    yy = np.where(y == clf.classes_[1], 1.0, -1.0)[:, None]
    u = -clf.C * get_loss("squared_hinge").grad_margin(clf.decision_function(X)[:, None], yy)
    c = (((X - X.mean(0)) / clf.x_scale_).T @ u).ravel() ** 2
    assert c[sel].max() <= S2 * (1 + 1e-3)
    rest = np.sort(np.delete(c, sel))[::-1]
    assert rest[:k - sel.size].sum() <= S2 * (1 + 1e-3)


def test_max_features_multiclass_shared_counts_features_once():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    clf = FGMClassifier(B=8, max_features=20).fit(X, y)
    assert clf.selected_features_.size == 20
    # One selection shared by the ten classes: every class uses the same columns.
    used = np.flatnonzero(np.any(clf.coef_ != 0, axis=0))
    np.testing.assert_array_equal(np.sort(used), np.sort(clf.selected_features_))
    assert clf.d_.shape == (20,)


def test_max_features_at_the_width_keeps_all_useful_features(rng):
    # Every feature carries signal: a budget of the full width keeps them all;
    # a budget above it is refused by name (issue 23 item 11: 10**9 gave a
    # MemoryError naming no parameter).
    X = rng.standard_normal((400, 12))
    y = np.sign(X @ (1 + rng.random(12)) + 0.1 * rng.standard_normal(400))
    clf = FGMClassifier(B=5, C=10.0, max_features=12).fit(X, y)
    assert clf.selected_features_.size == X.shape[1]
    for k in (13, 10**9):
        with pytest.raises(ValueError, match=f"max_features={k} exceeds the 12"):
            FGMClassifier(max_features=k).fit(X, y)


def test_shared_multiclass_meets_theorems_2_and_3():
    X, y = load_wine(return_X_y=True)
    clf = FGMClassifier(B=3, C=0.05, tol=None, max_iter=60,
                        inner_tol=1e-13).fit(X, y)
    h = clf.history_
    assert clf.converged_ and clf.n_iter_ < 60
    upper, lower = h["objective"][-1], h["final_lower_bound"][0]
    assert lower <= upper * (1 + 1e-9)
    assert (upper - lower) / upper < 1e-5


def test_lower_bound_valid_for_loosely_solved_masters_with_intercept(small):
    # Theorem 2 needs a feasible dual point; with an intercept that means
    # sum(alpha y) = 0, which a master stopped early does not meet.  Every
    # reported lower bound must stay below the optimum.
    X, y, _ = small
    y = np.where(y > 0, 1.0, -1.0)
    y[:60] = 1.0  # unbalanced: a large optimal intercept
    opt = FGMClassifier(B=5, C=1.0, tol=None, max_iter=100,
                        inner_tol=1e-13).fit(X, y)
    theta = opt.history_["objective"][-1]
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        loose = FGMClassifier(B=5, C=1.0, tol=None, max_iter=10, solver="apg",
                              inner_max_iter=3).fit(X, y)
    assert np.all(loose.history_["lower_bound"] <= theta * (1 + 1e-9))


def test_unconverged_master_warns(small):
    from sklearn.exceptions import ConvergenceWarning

    X, y, _ = small
    with pytest.warns(ConvergenceWarning, match="master"):
        FGMClassifier(B=5, inner_max_iter=1).fit(X, y)


@pytest.mark.parametrize("solver", ["newton", "apg", "simplemkl"])
def test_newton_and_apg_masters_reach_the_same_model(small, solver):
    X, y, _ = small
    ref = FGMClassifier(B=5, tol=None, max_iter=4, inner_tol=1e-12).fit(X, y)
    other = FGMClassifier(B=5, tol=None, max_iter=4, solver=solver,
                          inner_tol=1e-12, inner_max_iter=100_000).fit(X, y)
    np.testing.assert_array_equal(ref.selected_features_, other.selected_features_)
    np.testing.assert_allclose(ref.history_["objective"], other.history_["objective"],
                               rtol=1e-6)


def test_c_is_on_liblinears_scale_for_unscaled_data():
    # A LIBLINEAR user's C=1 on data with large, unequal feature scales must not
    # give a majority-class model.
    X, y = load_wine(return_X_y=True)
    X = X * np.logspace(0, 4, X.shape[1])
    assert FGMClassifier(C=1.0).fit(X, y).score(X, y) > 0.95


def test_defaults_on_pendigits_match_a_converged_solve():
    from kernlearn.datasets import DatasetNotFoundError, load_dataset
    from sklearn.model_selection import train_test_split

    try:
        pen = load_dataset("pendigits")
    except DatasetNotFoundError as exc:
        pytest.skip(str(exc))
    X, y = pen.data, pen.target
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0,
                                          stratify=y)
    default = FGMClassifier().fit(Xtr, ytr).score(Xte, yte)
    converged = FGMClassifier(tol=None, max_iter=40, inner_tol=1e-12).fit(
        Xtr, ytr).score(Xte, yte)
    assert abs(default - converged) <= 0.01
    assert default > 0.9


@pytest.mark.parametrize("name", ["squared_hinge", "logistic", "square"])
def test_dual_point_is_recentred_so_that_sum_alpha_y_is_zero(name, rng):
    from kernlearn.losses import get_loss
    from kernlearn.methods.fgm import _centre_intercepts

    loss = get_loss(name)
    Y = np.sign(rng.standard_normal((300, 3)) + 0.8)
    M = rng.standard_normal((300, 3))
    delta = _centre_intercepts(loss, M, Y)
    np.testing.assert_allclose(loss.grad_margin(M + delta, Y).sum(0), 0, atol=1e-9)


def test_refit_with_a_family_is_an_error_not_a_no_op(small):
    # Defect: refit=True silently did nothing with family=.
    from kernlearn.families import PolynomialPool

    X, y, _ = small
    with pytest.raises(ValueError, match="refit=True"):
        FGMClassifier(B=3, refit=True, family=PolynomialPool()).fit(X[:, :10], y)


def test_dual_bound_needs_the_recentred_point_when_an_intercept_is_fitted(rng):
    # Defect 6: with an intercept the FGM dual requires sum(alpha y) = 0.  At a
    # point where it fails (here the zero model on 95 % positive labels) the
    # formula of Theorem 2 exceeds the optimum, so it is no lower bound; at the
    # recentred point it is one.
    from kernlearn.losses import get_loss
    from kernlearn.methods.fgm import _centre_intercepts
    from kernlearn.penalties import SquaredGroupL1

    n, B, C = 300, 5, 0.01
    X = rng.standard_normal((n, 40))
    y = np.where(rng.random(n) < 0.95, 1.0, -1.0)
    opt = FGMClassifier(B=B, C=C, tol=None, max_iter=100, inner_tol=1e-13).fit(X, y)
    theta = opt.history_["objective"][-1]
    assert abs(theta - opt.history_["final_lower_bound"][0]) < 1e-6 * theta
    loss, pool, pen = get_loss("squared_hinge"), FeaturePool().fit(X), SquaredGroupL1()
    Y = y[:, None]

    def dual_value(M):
        grad = C * loss.grad_margin(M, Y)
        top = pool.price(grad[:, 0], B, X=X)
        return -C * float(loss.conjugate_at_grad(M, Y).sum()) - pen.conjugate(
            top.extra["sum_sq"])

    M = np.zeros((n, 1))
    assert dual_value(M) > theta * 1.5  # not a bound: sum(alpha y) != 0
    assert dual_value(M + _centre_intercepts(loss, M, Y)) <= theta * (1 + 1e-9)


@pytest.mark.parametrize("est", [FGMClassifier, FGMRegressor])
def test_gap_stop_skips_only_masters_that_cannot_matter(est):
    # Theorem 2: when the duality gap at a pricing step is below tol, no
    # master can lower the objective by more than tol relative, so the loop
    # stops before solving it.  The model kept is within tol of the optimum.
    from sklearn.datasets import make_classification, make_regression

    if est is FGMClassifier:
        X, y = make_classification(1000, 20, n_informative=10, n_redundant=0,
                                   random_state=0)
    else:
        X, y = make_regression(1000, 20, n_informative=10, noise=1.0, random_state=0)
    tol = 1e-2
    fast = est(tol=tol).fit(X, y)
    tight = est(tol=None, max_iter=60, inner_tol=1e-12).fit(X, y)
    upper = fast.history_["objective"][-1]
    assert fast.converged_
    if est is FGMClassifier:
        # here the gap rule stops it (the regressor stops on objective
        # change): the fit certifies its own stop, one master fewer
        assert upper - fast.history_["final_lower_bound"][0] <= tol * upper
        assert fast.n_iter_ == 2 and len(fast.history_["objective"]) == 2
    # the optimum is at least the tight fit's lower bound
    optimum_low = tight.history_["final_lower_bound"][0]
    assert optimum_low <= upper
    assert (upper - optimum_low) <= tol * upper
    # ... and the objective of the last master never increased
    assert np.all(np.diff(fast.history_["objective"]) <= 1e-9 * upper)


@pytest.mark.parametrize("name", ["squared_hinge", "logistic", "square"])
@pytest.mark.parametrize("p", [0.5, 0.9, 0.999])
def test_intercept_of_the_empty_model_minimises_the_loss(name, p, rng):
    from scipy.optimize import minimize_scalar

    from kernlearn.losses import get_loss, weighted
    from kernlearn.methods.fgm import _intercept_only

    n = 2000
    y = (np.where(rng.random(n) < p, 1.0, -1.0) if name != "square"
         else rng.standard_normal(n) * 2 + 3)
    loss = weighted(get_loss(name), rng.uniform(0.1, 3.0, n))
    b = _intercept_only(loss, y, 2.0)[0]
    F = lambda v: loss.value(np.full(n, v), y).sum()
    ref = minimize_scalar(F, bounds=(-20, 20), method="bounded",
                          options={"xatol": 1e-10}).x
    assert b == pytest.approx(ref, abs=1e-6)
    assert F(b) <= F(ref) + 1e-9 * abs(F(ref))



def _crawl_master(seed=0, K=6, n=120, C=10.0):
    """A shared multiclass master whose groups repeat features (the slow case)."""
    from kernlearn.losses import weighted
    from kernlearn.losses.binary import SquaredHinge
    from kernlearn.penalties import SquaredGroupL1
    from kernlearn.solvers import Problem

    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, 12))
    # groups of 4 columns; the later groups re-select columns of the earlier
    # ones, as FGM's worst-case analysis does at large C
    A = base[:, [0, 1, 2, 3, 4, 5, 6, 7, 1, 5, 8, 9, 2, 6, 10, 11]]
    Y = np.where(rng.normal(size=(n, K)) + base[:, :K] > 0, 1.0, -1.0)
    return Problem(A, Y, weighted(SquaredHinge(), C=C), SquaredGroupL1(1.0),
                   np.arange(0, 17, 4), True)


def test_newton_master_with_gain_stop_matches_a_tight_solve():
    """The sweeps' stop on the model's gain keeps the master's optimum."""
    from kernlearn.solvers import ProxNewtonState
    from kernlearn.solvers.prox_newton import ProxNewton

    for seed in range(3):
        prob = _crawl_master(seed)
        p, K = prob.A.shape[1], prob.y.shape[1]
        start = ProxNewtonState(np.zeros((p, K)), np.zeros(K))
        fast = ProxNewton().solve(prob, start)
        ref = ProxNewton(tol=1e-15, max_iter=200, max_sweeps=100_000,
                         sweep_tol=1e-15).solve(prob, start)
        F, Fref = fast.state["objective"], ref.state["objective"]
        assert fast.converged
        assert Fref <= F <= Fref * (1 + 1e-7)
        # the margins (hence FGM's dual point and scores) agree to sqrt(tol)
        M, Mref = fast.state["margin"], ref.state["margin"]
        assert np.max(np.abs(M - Mref)) <= 1e-3 * np.max(np.abs(Mref))


def test_subproblem_gain_stop_cuts_sweeps_not_the_model_value():
    """Stopping on a sweep's gain ends the crawl at an equal model value."""
    from kernlearn.solvers.prox_newton import _model_value, _subproblem

    prob = _crawl_master(1)
    A, K = prob.A, prob.y.shape[1]
    rng = np.random.default_rng(0)
    D = rng.uniform(0.0, 20.0, size=(K, A.shape[0])) * (rng.uniform(size=(K, A.shape[0])) < 0.5)
    H = np.einsum("ni,kn,nj->kij", A, D, A)
    g = 10.0 * rng.normal(size=(K, A.shape[1]))
    W0 = np.zeros((A.shape[1], K))
    indptr = prob.indptr.astype(np.int64)
    W_full, n_full = _subproblem(H, g, W0, indptr, 1.0, 100_000, 1e-12, 0.0)
    v_full = _model_value(H, g, W0, W_full, indptr, 1.0)
    ftol = 1e-9 * abs(v_full)
    W_gain, n_gain = _subproblem(H, g, W0, indptr, 1.0, 100_000, 1e-12, ftol)
    v_gain = _model_value(H, g, W0, W_gain, indptr, 1.0)
    assert n_gain < n_full
    assert v_full <= v_gain <= v_full + 1e-6 * abs(v_full)
