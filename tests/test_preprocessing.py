"""The standardisation step of the fit pipeline, checked against its definition."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LinearRegression

from kernlearn.estimators._base import canonical_sparse
from kernlearn.preprocessing import (
    fit_standardization,
    fit_target_standardization,
    standardization_from_moments,
)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5)) * [1e-3, 1.0, 1e4, 5.0, 0.2] + [1e6, 0, -3, 7, 0]
    return X, rng.uniform(0.1, 3.0, 40)


def test_dense_is_weighted_zscore(data):
    X, w = data
    st = fit_standardization(X, w)
    mean = np.average(X, axis=0, weights=w)
    std = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=w))
    np.testing.assert_allclose(st.mean, mean, rtol=1e-12)
    np.testing.assert_allclose(st.scale, std, rtol=1e-8)
    Z = st.transform(X)
    # (the 1e6-offset column keeps ~1e6 * eps / 1e-3 of rounding in its mean)
    np.testing.assert_allclose(np.average(Z, axis=0, weights=w), 0, atol=1e-6)
    np.testing.assert_allclose(np.average(Z**2, axis=0, weights=w), 1, rtol=1e-7)


def test_weights_equal_repetition(data):
    X, _ = data
    k = np.arange(40) % 3 + 1
    a = fit_standardization(X, k.astype(float))
    b = fit_standardization(np.repeat(X, k, axis=0))
    np.testing.assert_allclose(a.mean, b.mean, rtol=1e-12)
    np.testing.assert_allclose(a.scale, b.scale, rtol=1e-8)


def test_sparse_scaled_not_centred_and_stays_sparse(data):
    X, w = data
    X = np.where(np.abs(X) > 1.0, X, 0.0)
    for fmt in ("csr", "csc"):
        S = sp.random(30, 6, density=0.3, format=fmt, random_state=1) * 50
        st = fit_standardization(S, None)
        assert st.mean is None
        T = st.transform(S)
        assert sp.issparse(T) and T.format == fmt and T.nnz == S.nnz
        dense = S.toarray()
        std = dense.std(axis=0)
        np.testing.assert_allclose(st.scale, np.where(std > 0, std, np.inf), rtol=1e-10)
        np.testing.assert_allclose(T.toarray(), dense / st.scale, rtol=1e-12)
        assert S.toarray() is not T  # caller's matrix untouched
        np.testing.assert_array_equal(S.toarray(), dense)


def test_constant_column_is_ignored_at_predict():
    # a column constant in training carries no information: its scale is
    # infinite, so it maps to zero on the training rows and on any new row
    X = np.column_stack([np.full(10, 3.7), np.arange(10.0)])
    st = fit_standardization(X)
    assert st.scale[0] == np.inf
    np.testing.assert_array_equal(st.transform(X)[:, 0], 0.0)
    new = np.array([[1e6, 2.0], [-3.0, 5.0]])
    np.testing.assert_array_equal(st.transform(new)[:, 0], 0.0)
    coef, b = st.coef_to_original(np.array([0.0, 2.0]), 1.0)
    assert coef[0] == 0.0 and np.isfinite(b)
    S = fit_standardization(sp.csr_matrix(np.column_stack([np.zeros(10), np.arange(10.0)])))
    assert S.scale[0] == np.inf
    T = S.transform(sp.csr_matrix(new))
    np.testing.assert_array_equal(T.toarray()[:, 0], 0.0)


def test_overflowing_column_is_an_error():
    X = np.column_stack([np.array([1e300, -1e300, 5e299]), np.arange(3.0)])
    with pytest.raises(ValueError, match=r"column\(s\) \[0\]"):
        fit_standardization(X)
    with pytest.raises(ValueError, match="y is too large"):
        fit_target_standardization(np.array([1e300, -1e300, 0.0]))


def test_coef_to_original_equals_raw_fit(data):
    # least squares is affine-equivariant: fitting on standardised inputs and
    # mapping back must give the raw-input fit exactly
    X, w = data
    y = X @ np.array([1e3, 2.0, 1e-4, -1.0, 3.0]) + 5.0
    st = fit_standardization(X, w)
    lr = LinearRegression().fit(st.transform(X), y, sample_weight=w)
    coef, b = st.coef_to_original(lr.coef_, lr.intercept_)
    # noiseless targets: the raw-scale fit is the generating model (a raw
    # least-squares solve is too ill-conditioned here to serve as reference)
    np.testing.assert_allclose(coef, [1e3, 2.0, 1e-4, -1.0, 3.0], rtol=1e-6)
    np.testing.assert_allclose(X @ coef + b, lr.predict(st.transform(X)), rtol=1e-9)


def test_target_round_trip():
    rng = np.random.default_rng(2)
    Y = rng.standard_normal((20, 3)) * [1e5, 1, 1e-3] + [4, -2, 1e3]
    ts = fit_target_standardization(Y)
    Z = ts.transform(Y)
    np.testing.assert_allclose(Z.mean(0), 0, atol=1e-10)
    np.testing.assert_allclose(Z.std(0), 1, rtol=1e-10)
    np.testing.assert_allclose(ts.inverse_transform(Z), Y, rtol=1e-12)
    y1 = Y[:, 0]
    ts1 = fit_target_standardization(y1)
    np.testing.assert_allclose(ts1.inverse_transform(ts1.transform(y1)), y1, rtol=1e-12)


def test_moments_match_in_memory(data):
    # the moments' map of the out-of-core and distributed paths (squares about
    # the mean, a second pass) is the in-memory sparse map; column 0 (offset
    # 1e9 times its spread) is not lost to one-pass moments, which called it
    # constant (scale 1)
    X, w = data
    a = fit_standardization(sp.csr_matrix(X), w)
    mean = w @ X / w.sum()
    b = standardization_from_moments(w.sum(), w @ X, w @ (X - mean) ** 2, center=False,
                                     centred=True)
    np.testing.assert_allclose(a.scale, b.scale, rtol=1e-12)
    std = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=w))
    np.testing.assert_allclose(a.scale, std, rtol=1e-8)


def test_identity_when_disabled(data):
    X, _ = data
    st = fit_standardization(X, standardize=False)
    assert st.is_identity and st.transform(X) is X


def test_canonical_sparse_sums_duplicates_on_a_copy():
    A = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]), np.array([0, 3])),
                      shape=(1, 2))
    assert not A.has_canonical_format
    B = canonical_sparse(A)
    assert B.nnz == 2 and A.nnz == 3
    np.testing.assert_array_equal(B.toarray(), [[3.0, 3.0]])


def test_sparse_maxabs_rule_is_the_largest_weighted_entry():
    S = sp.random(30, 6, density=0.3, format="csc", random_state=2) * 50
    S[:, 5] = 0.0
    w = np.ones(30)
    w[0] = 0.0  # a zero-weight row is absent from the data
    st = fit_standardization(S, w, sparse_rule="maxabs")
    dense = np.abs(S.toarray())[1:]
    expect = np.where(dense.max(0) > 0, dense.max(0), np.inf)  # empty: ignored
    assert st.mean is None
    np.testing.assert_array_equal(st.scale, expect)
