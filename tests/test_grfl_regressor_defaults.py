"""InfiniteFeatureRegressor's defaults: GrFL-M over widths around "scale", the level
chosen on held-out rows (``lambda_p="auto"``: folds below CV_BELOW rows, the budget's
held-out part up to LEVEL_BELOW, with a budget of LEVEL_MAX_FEATURES), pricing on
all rows up to twice REGRESSOR_PRICING_ROWS."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import mean_squared_error

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.families import RandomFourierFeatures
from kernlearn.methods._grfl_select import (
    AUTO_LEVELS,
    AUTO_MAX_FEATURES,
    CV_BELOW,
    DEFAULT_LEVEL,
    GAMMA_FACTORS,
    LEVEL_BELOW,
    LEVEL_MAX_FEATURES,
    REGRESSOR_PRICING_ROWS,
    auto_budget,
    multi_width_family,
    regressor_pricing_subsample,
    select_level,
)
from kernlearn.methods.grfl import AUTO_PRICING_ROWS
from kernlearn.widths import convert_width, scale_gamma


def _widths_of(gammas):
    return np.sort(np.atleast_1d(convert_width(gamma=np.asarray(gammas, dtype=float))))


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_width_family_is_scale_times_the_factors(sparse, weighted):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 5)) * [1, 2, 3, 4, 5]
    X = sp.csr_matrix(np.where(np.abs(X) > 1, X, 0)) if sparse else X
    w = rng.uniform(0.1, 3, size=80) if weighted else None
    fam = multi_width_family(X, w)
    g = scale_gamma(X, w)
    assert isinstance(fam, RandomFourierFeatures)
    np.testing.assert_allclose(fam.gamma, [f * g for f in GAMMA_FACTORS], rtol=1e-12)
    # the widths differ from the unweighted ones when weighted (the weights count)
    if weighted:
        assert not np.isclose(g, scale_gamma(X))
    fam.fit(X)
    np.testing.assert_allclose(np.sort(fam.widths_), _widths_of(fam.gamma), rtol=1e-12)


def test_regressor_default_family_spans_three_widths_on_standardised_inputs():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 4)) * [1e-3, 1, 1e3, 5] + [0, 7, -1e4, 2]
    y = np.sin(X[:, 1]) + X[:, 3] / 5
    est = InfiniteFeatureRegressor(max_features=5, n_candidates=20, random_state=0).fit(X, y)
    # standardised columns have unit variance: "scale" is 1 / n_features
    expected = _widths_of([f / X.shape[1] for f in GAMMA_FACTORS])
    np.testing.assert_allclose(np.sort(est.family_.widths_), expected, rtol=1e-8)
    # the kept features' widths (last parameter column) are among them
    assert np.all(np.isin(np.round(est.features_[:, -1], 10), np.round(expected, 10)))
    # a family given by the user is used as it is; the classifier keeps "scale"
    mine = InfiniteFeatureRegressor(family=RandomFourierFeatures(gamma=0.3), max_features=5,
                                    n_candidates=20, random_state=0).fit(X, y)
    np.testing.assert_allclose(mine.family_.widths_, _widths_of([0.3]))
    clf = InfiniteFeatureClassifier(max_features=5, n_candidates=20, random_state=0)
    clf.fit(X, y > np.median(y))
    np.testing.assert_allclose(clf.family_.widths_, _widths_of([1 / X.shape[1]]), rtol=1e-8)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_several_widths_fit_a_target_with_a_short_length_scale_better(seed):
    # one coordinate oscillates at frequency 4 per standard deviation: the
    # single "scale" width (frequencies ~ N(0, 2/d)) rarely samples such a
    # direction; the widest of the default's spectra (2 x "scale") does
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(600, 3))
    f = np.sin(4 * X[:, 0]) + 0.5 * X[:, 1]
    y = f + 0.1 * rng.normal(size=600)
    Xt = rng.normal(size=(400, 3))
    ft = np.sin(4 * Xt[:, 0]) + 0.5 * Xt[:, 1]
    kw = dict(max_features=40, random_state=seed)
    multi = InfiniteFeatureRegressor(**kw).fit(X, y)
    single = InfiniteFeatureRegressor(family=RandomFourierFeatures(gamma="scale"), **kw)
    single.fit(X, y)
    e_multi = mean_squared_error(ft, multi.predict(Xt))
    e_single = mean_squared_error(ft, single.predict(Xt))
    assert e_multi < 0.8 * e_single


# ------------------------------------------------- lambda_p="auto" (the level)


class _FakePath:
    """A path whose held-out loss is a known function of its level."""

    def __init__(self, level):
        self.penalty_p = type("Pen", (), {"alpha": level})()
        self.p, self._found, self.extended, self.history = 0, None, [], []

    def extend(self, max_features):
        self.extended.append((self.penalty_p.alpha, max_features))
        return self

    def _solve(self, exact):
        raise AssertionError("no features: nothing to re-solve")


class _FakeMonitor:
    def __init__(self, path, best):
        self.path, self.best_level, self.losses = path, best, []

    def __call__(self):
        self.losses.append((np.log(self.path.penalty_p.alpha / self.best_level)) ** 2)


@pytest.mark.parametrize("best, expected, n_runs", [(0.4, 0.4, 5), (3.0, 3.2, 2), (0.1, 0.1, 6)])
def test_select_level_descends_to_the_lowest_held_out_loss_and_stops(best, expected, n_runs):
    runs = []

    def start(tr, val, level):
        path = _FakePath(level)
        runs.append(path)
        return path, _FakeMonitor(path, best)

    folds = [(np.arange(3), np.arange(3, 5))] * 3
    level, losses = select_level(start, folds, max_features=7)
    assert level == expected
    # every fold ran the same levels, each to the budget, from the largest down,
    # and the descent stopped at the first level whose loss did not fall
    assert len(losses) == n_runs
    assert all(b < a for a, b in itertools.pairwise(losses[:-1]))
    for path in runs:
        np.testing.assert_allclose([a for a, _ in path.extended], AUTO_LEVELS[:n_runs])
        assert {m for _, m in path.extended} == {7}
    np.testing.assert_allclose(losses, [3 * np.log(lv / best) ** 2 for lv in AUTO_LEVELS[:n_runs]])


def test_regressor_chooses_a_larger_level_for_a_noisier_target():
    # below CV_BELOW rows the folds choose lambda_p: pure noise wants a strong
    # penalty, a smooth noiseless signal a weak one
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 3))
    smooth = np.sin(X[:, 0]) + X[:, 1] ** 2 / 2
    noise = rng.normal(size=150)
    assert InfiniteFeatureRegressor().lambda_p == "auto"
    lam_smooth = InfiniteFeatureRegressor(random_state=0).fit(X, smooth).lambda_p_
    lam_noise = InfiniteFeatureRegressor(random_state=0).fit(X, noise).lambda_p_
    assert lam_smooth in AUTO_LEVELS and lam_noise in AUTO_LEVELS
    assert lam_smooth <= 0.2 and lam_noise >= 1.6
    # from LEVEL_BELOW rows, and with a budget given, "auto" is DEFAULT_LEVEL;
    # a number is used as it is
    kw = {"n_candidates": 20, "random_state": 0}
    Xb = rng.normal(size=(LEVEL_BELOW, 3))
    assert InfiniteFeatureRegressor(**kw).fit(Xb, np.sin(Xb[:, 0])).lambda_p_ == DEFAULT_LEVEL
    assert InfiniteFeatureRegressor(max_features=3, **kw).fit(X, smooth).lambda_p_ == DEFAULT_LEVEL
    assert InfiniteFeatureRegressor(lambda_p=0.7, **kw).fit(X, smooth).lambda_p_ == 0.7


def test_held_out_part_chooses_the_level_and_count_from_cv_below_rows():
    # CV_BELOW <= n < LEVEL_BELOW: the budget's one held-out part chooses the
    # level too (before, DEFAULT_LEVEL there): a smooth noiseless signal gets a
    # lower level than pure noise, and the count kept is the held-out minimiser
    # along the descending path
    rng = np.random.default_rng(1)
    n = 400
    assert CV_BELOW <= n < LEVEL_BELOW
    X = rng.normal(size=(n, 3))
    smooth = np.sin(X[:, 0]) + X[:, 1] ** 2 / 2
    noise = rng.normal(size=n)
    a = InfiniteFeatureRegressor(random_state=0).fit(X, smooth)
    b = InfiniteFeatureRegressor(random_state=0).fit(X, noise)
    assert a.lambda_p_ in AUTO_LEVELS and b.lambda_p_ in AUTO_LEVELS
    assert a.lambda_p_ < DEFAULT_LEVEL < b.lambda_p_
    for est in (a, b):
        h = est.history_
        assert np.isfinite(h["validation_loss"]).all()
        assert est.max_features_ == h["n_active"][int(np.argmin(h["validation_loss"]))]
        assert len(est.features_) <= est.max_features_
    # the level's model beats DEFAULT_LEVEL's on fresh rows of the smooth signal
    Xt = rng.normal(size=(2000, 3))
    ft = np.sin(Xt[:, 0]) + Xt[:, 1] ** 2 / 2
    fixed = InfiniteFeatureRegressor(lambda_p=DEFAULT_LEVEL, random_state=0).fit(X, smooth)
    assert (mean_squared_error(ft, a.predict(Xt))
            < mean_squared_error(ft, fixed.predict(Xt)))


def test_auto_budget_with_a_level_that_admits_no_feature():
    # the held-out path adds nothing: the model is the mean (this raised
    # "argmin of an empty sequence" before)
    rng = np.random.default_rng(2)
    X = rng.normal(size=(CV_BELOW + 50, 3))
    y = X[:, 0] + 5.0
    est = InfiniteFeatureRegressor(lambda_p=1e6, n_candidates=20, random_state=0).fit(X, y)
    assert est.max_features_ == 0 and est.column_coef_.size == 0
    np.testing.assert_allclose(est.predict(X[:5]), np.full(5, y.mean()), rtol=1e-6)


# ------------------------------------- pricing_subsample="auto" (the regressor's)


def test_regressor_pricing_subsample_auto_is_all_rows_up_to_twice_its_rows():
    R = REGRESSOR_PRICING_ROWS
    assert R >= 10 * AUTO_PRICING_ROWS  # the classifier's estimates use 2,000 rows
    assert regressor_pricing_subsample(2 * R) is None
    assert regressor_pricing_subsample(2 * R + 1) == R
    assert regressor_pricing_subsample(10 ** 7, "auto") == R
    # a number or None is the user's: kept
    assert regressor_pricing_subsample(10 ** 7, None) is None
    assert regressor_pricing_subsample(500, 100) == 100


def test_regressor_passes_its_pricing_rows_and_the_classifier_keeps_auto(monkeypatch):
    import kernlearn.estimators.infinite as mod

    seen = []
    real = mod.fit_grfl

    def spy(X, Y, **kw):
        seen.append(kw["pricing_subsample"])
        return real(X, Y, **kw)

    monkeypatch.setattr(mod, "fit_grfl", spy)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2 * AUTO_PRICING_ROWS + 10, 3))
    y = np.sin(X[:, 0])
    kw = {"max_features": 2, "n_candidates": 10, "random_state": 0}
    InfiniteFeatureRegressor(**kw).fit(X, y)
    InfiniteFeatureRegressor(pricing_subsample=300, **kw).fit(X, y)
    InfiniteFeatureClassifier(**kw).fit(X, y > 0)
    # the regressor: all rows (more than twice the classifier's 2,000 rows
    # would have been subsampled); a number stays; the classifier keeps "auto"
    assert seen == [None, 300, "auto"]


def test_pricing_on_all_rows_learns_a_regression_better_than_on_2000():
    # the regressor's default (all rows at this size) against the classifier's
    # rule (2,000 pricing rows): late in the path the candidates' correlations
    # with the residual are small, and on 2,000 rows their estimates' noise
    # ranks them; every seed, the same budget, a lower error on fresh rows
    f = lambda X: (np.sin(2 * X[:, 0]) * np.cos(X[:, 1]) + 0.5 * np.sin(3 * X[:, 2] + X[:, 3])
                   + 0.3 * X[:, 4] * X[:, 5])
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(9000, 6))
        y = f(X) + 0.5 * rng.normal(size=9000)
        Xt = rng.normal(size=(3000, 6))
        kw = {"max_features": 60, "random_state": seed}
        auto = InfiniteFeatureRegressor(**kw).fit(X, y)
        sub = InfiniteFeatureRegressor(pricing_subsample=AUTO_PRICING_ROWS, **kw).fit(X, y)
        e_auto = mean_squared_error(f(Xt), auto.predict(Xt))
        e_sub = mean_squared_error(f(Xt), sub.predict(Xt))
        assert e_auto < 0.95 * e_sub


# ------------------------------- the budget of the held-out level descent


def test_auto_budget_is_larger_only_where_the_held_out_part_chooses_the_level():
    one, folds = [(np.arange(8), np.arange(8, 10))], [(np.arange(8), np.arange(8, 10))] * 5
    assert LEVEL_MAX_FEATURES > AUTO_MAX_FEATURES
    assert auto_budget(500, one, True) == LEVEL_MAX_FEATURES
    assert auto_budget(500, one, False) == AUTO_MAX_FEATURES  # a level given
    assert auto_budget(200, folds, True) == AUTO_MAX_FEATURES  # the folds' regime
    assert auto_budget(30, None, True) == 5  # too few rows to hold out: n // 6


def test_held_out_level_descent_may_grow_past_the_default_budget():
    # a noiseless target with many oscillations, CV_BELOW <= n < LEVEL_BELOW:
    # the descent's low levels still gain from features past 100 (cut at 100
    # before); with the level given, the budget stays AUTO_MAX_FEATURES
    rng = np.random.default_rng(0)
    n = 700
    assert CV_BELOW <= n < LEVEL_BELOW
    X = rng.normal(size=(n, 4))
    y = np.sin(3 * X[:, 0]) * np.cos(2 * X[:, 1]) + np.sin(2 * X[:, 2] + 2 * X[:, 3])
    est = InfiniteFeatureRegressor(random_state=0).fit(X, y)
    assert AUTO_MAX_FEATURES < max(est.history_["n_active"]) <= LEVEL_MAX_FEATURES
    assert est.max_features_ > AUTO_MAX_FEATURES
    fixed = InfiniteFeatureRegressor(lambda_p=est.lambda_p_, random_state=0).fit(X, y)
    assert max(fixed.history_["n_active"]) <= AUTO_MAX_FEATURES


def test_cross_validated_level_validates_each_array_once(monkeypatch):
    # the five folds' paths alternate among ten training and held-out arrays
    # (and the final path adds the whole one): each is validated once, not at
    # every pricing step and held-out measurement
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 5))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(120)
    seen = []
    check = RandomFourierFeatures._check_X

    def counted(self, X):
        seen.append(id(X))
        return check(self, X)

    monkeypatch.setattr(RandomFourierFeatures, "_check_X", counted)
    est = InfiniteFeatureRegressor(random_state=0).fit(X, y)
    assert est.lambda_p_ in AUTO_LEVELS
    assert len(seen) <= 14, len(seen)
