"""InfiniteFeatureRegressor's default family: GrFL-M over widths around "scale"."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import mean_squared_error

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.families import RandomFourierFeatures
from kernlearn.methods._grfl_select import GAMMA_FACTORS, multi_width_family
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
