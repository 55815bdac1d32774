"""Every data-derived width goes through ``kernels.resolve_gamma``: the same
values as scikit-learn's ``"scale"``, and one clear error when it cannot be
computed (families and the Nystrom kernel parameters)."""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn.families import AdditiveKernelExpansion, RandomFourierFeatures
from kernlearn.families.nystrom import kernel_params_for
from kernlearn.kernels import convert_width


@pytest.fixture
def X():
    rng = np.random.default_rng(0)
    return np.abs(rng.normal(size=(60, 4))) * np.array([1.0, 3.0, 0.0, 7.0])


def test_fourier_scale_is_sklearns_scale(X):
    gamma = 1.0 / (X.shape[1] * X.var())
    np.testing.assert_allclose(RandomFourierFeatures().fit(X).widths_,
                               [convert_width(gamma=gamma)], rtol=1e-14)


def test_additive_gaussian_scale_is_per_column_and_sparse_equals_dense(X):
    var = X.var(axis=0)
    expected = 1.0 / np.where(var > 0, var, 1.0)  # a constant column gets 1
    dense = AdditiveKernelExpansion("additive_gaussian", gamma="scale").fit(X)
    np.testing.assert_allclose(dense.gamma_, expected, rtol=1e-13)
    sparse = AdditiveKernelExpansion("additive_gaussian", gamma="scale").fit(sp.csr_matrix(X))
    np.testing.assert_allclose(sparse.gamma_, expected, rtol=1e-13)


def test_nystrom_params_resolve_scale_weighted_and_only_when_taken(X):
    w = np.linspace(0.5, 2.0, len(X))
    Xw = np.repeat(X, [1, 2] * (len(X) // 2), axis=0)  # integer weights = repeated rows
    params = kernel_params_for("rbf", "scale", X=X, sample_weight=np.tile([1.0, 2.0], 30))
    assert params["gamma"] == pytest.approx(1.0 / (X.shape[1] * Xw.var()), rel=1e-12)
    assert kernel_params_for("rbf", 0.3)["gamma"] == 0.3
    assert "gamma" not in kernel_params_for("linear", "scale")  # not computed, no X needed
    assert kernel_params_for("rbf", None, X=X, sample_weight=w)["gamma"] > 0
    with pytest.raises(ValueError, match="needs the training data"):
        kernel_params_for("rbf", "scale")


@pytest.mark.parametrize("make", [
    lambda: RandomFourierFeatures(gamma="scale"),
    lambda: AdditiveKernelExpansion("additive_gaussian", gamma="scale"),
])
def test_overflowing_spread_is_a_clear_error(X, make):
    with pytest.raises(ValueError, match="cannot be computed.*overflows"):
        make().fit(X * 1e300)


def _offset_columns():
    # every entry non-zero (a CSR matrix of dense measurements): columns with
    # offsets and spreads far apart, as a year or a temperature in kelvin
    rng = np.random.RandomState(0)
    X = rng.randn(150, 5) * [1.0, 10.0, 0.1, 1.0, 3.0] + [2000.0, 500.0, 1.5, -40.0, 0.0]
    X[:, 4] = np.abs(X[:, 4]) + 0.1
    return X


@pytest.mark.parametrize("weighted", [False, True])
def test_scale_gamma_of_sparse_columns_ignores_their_offsets(weighted):
    from kernlearn.widths import scale_gamma

    X = _offset_columns()
    w = np.random.RandomState(1).uniform(0.5, 2.0, X.shape[0]) if weighted else None
    mean = np.average(X, axis=0, weights=w)
    # the mean of the columns' variances: that of the centred columns over all entries
    expected = scale_gamma(X - mean, w)
    assert scale_gamma(sp.csr_matrix(X), w) == pytest.approx(expected, rel=1e-10)
    assert scale_gamma(sp.csc_matrix(X + 7.0), w) == pytest.approx(expected, rel=1e-10)
    # (over all entries, the offsets' spread made the width ~5e4 times too small)
    assert scale_gamma(X, w) < 1e-3 * expected


def test_rbf_model_on_sparse_offset_columns_is_the_dense_one():
    # dense columns are centred, sparse ones only scaled; the RBF kernel does
    # not see the offsets, so the width must not either: the same model
    from kernlearn import LowRankKernelClassifier

    X = _offset_columns()
    y = (np.sin(X[:, 0] - 2000.0) + 10.0 * X[:, 2] - 15.0 > 0).astype(int)
    dense = LowRankKernelClassifier(random_state=0).fit(X, y)
    sparse = LowRankKernelClassifier(random_state=0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), rtol=1e-6, atol=1e-7)
