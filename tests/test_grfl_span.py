"""GrFL on data wider than long prices in the span of the rows (RandomFourierFeatures.in_span)."""

import numpy as np
import scipy.sparse as sp

from kernlearn import InfiniteFeatureClassifier
from kernlearn.families import RandomFourierFeatures
from kernlearn.families.fourier import SPAN_MAX_ROWS


def _wide(n=6, d=14, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


def test_only_data_at_least_twice_as_wide_as_long():
    fam = RandomFourierFeatures(gamma=0.5).fit(_wide(6, 14))
    assert fam.in_span(_wide(6, 14)) is not None
    assert fam.in_span(_wide(6, 11)) is None  # not twice as wide
    # (sparse data too, without densifying it: tests/test_grfl_sparse_pricing.py)
    assert fam.in_span(sp.csr_matrix(_wide(6, 14))) is not None
    assert fam.in_span(sp.csr_matrix(_wide(6, 11))) is None
    tall = _wide(SPAN_MAX_ROWS + 1, 2 * SPAN_MAX_ROWS + 2)
    big = RandomFourierFeatures(gamma=0.5).fit(tall)
    assert big.in_span(tall) is None  # (the basis would cost too much)
    # what counts is the distinct rows of positive weight: repeats and zero
    # weights do not make data longer
    X = _wide(6, 14)
    assert fam.in_span(np.vstack([X, X, X])) is not None
    assert fam.in_span(np.vstack([X, _wide(6, 14, seed=9)])) is None
    assert fam.in_span(np.vstack([X, _wide(6, 14, seed=9)]),
                       sample_weight=np.repeat([1.0, 0.0], 6)) is not None


def test_integer_weights_draw_as_repeated_rows():
    # the same basis (hence the same completed directions) for weighted rows and
    # for the rows repeated, in any order
    rng = np.random.default_rng(5)
    X = rng.standard_normal((8, 30))
    w = np.array([1, 0, 2, 3, 1, 0, 1, 2])
    Xr = np.repeat(X, w, axis=0)[::-1]
    fam = RandomFourierFeatures(gamma=0.5).fit(X)
    red_w, _, complete_w = fam.in_span(X, sample_weight=w)
    red_r, _, complete_r = fam.in_span(Xr)
    params_r = red_w.sample(4, np.random.default_rng(6))
    np.testing.assert_allclose(complete_w(params_r, np.random.default_rng(7)),
                               complete_r(params_r, np.random.default_rng(7)), atol=1e-12)


def test_completed_directions_have_the_reduced_phases():
    X = _wide()
    fam = RandomFourierFeatures(gamma=[0.5, 2.0]).fit(X)
    reduced, XQ, complete = fam.in_span(X)
    assert reduced.n_features_in_ == XQ.shape[1] == X.shape[0]  # (rank n)
    rng = np.random.default_rng(1)
    params_r = reduced.sample(7, rng)
    params = complete(params_r, rng)
    assert params.shape == (7, X.shape[1] + 1)
    np.testing.assert_array_equal(params[:, -1], params_r[:, -1])  # the widths
    np.testing.assert_allclose(X @ params[:, :-1].T, XQ @ params_r[:, :-1].T,
                               rtol=1e-10, atol=1e-12)
    # and the family's own phases / columns on X are those of the reduced family on XQ
    np.testing.assert_allclose(fam._columns(params, X), reduced._columns(params_r, XQ),
                               rtol=1e-9, atol=1e-12)


def test_completed_directions_are_drawn_as_the_family_draws_them():
    # v = Q z + (I - QQ') h with z, h ~ N(0, I / sigma^2): v ~ N(0, I / sigma^2) in R^D
    X = _wide(3, 8, seed=2)
    fam = RandomFourierFeatures(gamma=0.5).fit(X)  # sigma = 1
    reduced, _, complete = fam.in_span(X)
    rng = np.random.default_rng(3)
    V = complete(reduced.sample(40000, rng), rng)[:, :-1] * fam.widths_[0]
    np.testing.assert_allclose(V.mean(0), 0.0, atol=0.03)
    np.testing.assert_allclose(np.cov(V.T), np.eye(8), atol=0.04)


def test_wide_classifier_prices_in_the_span_and_learns(span_calls):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 400))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    clf = InfiniteFeatureClassifier(random_state=0).fit(X, y)
    assert span_calls and all(span_calls)
    assert clf.features_.shape[1] == X.shape[1] + 1
    assert clf.score(X, y) >= 0.95
