"""Sparse inputs are centred implicitly where a model is not shift-invariant.

Standardisation centres dense columns but only scales sparse ones (never
densified).  The linear (cosine-normalised) kernel of the default MKL list and
GrFL's Fourier features, whose two columns are each scaled to unit norm, are
not invariant to a shift of the inputs, so the same numbers gave another model
as CSR.  They now subtract the columns' means themselves (``center``).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn.preprocessing import implicit_center
from kernlearn.estimators.infinite import (
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
)
from kernlearn.estimators.pnorm_mkl import PNormMKLClassifier
from kernlearn.families import RandomFourierFeatures
from kernlearn.io import load_model, save_model
from kernlearn.kernels import KernelList
from kernlearn.methods._obscure_steps import _RowCache
from kernlearn.preprocessing import check_center

ESTIMATORS = [PNormMKLClassifier, InfiniteFeatureClassifier, InfiniteFeatureRegressor]


def _offset_data(n=160, d=6, seed=0):
    """Columns with large offsets and mixed spreads, no zeros (a measurement table
    held in a sparse container); a nonlinear two-class target."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d))
    X = 500.0 + 40.0 * np.arange(d) + Z * np.geomspace(0.5, 20.0, d)
    y = (Z[:, 0] * Z[:, 1] + 0.5 * Z[:, 2] > 0).astype(int)
    return X, y, Z[:, 0] + np.sin(2 * Z[:, 1])


def _target(Est, y, t):
    return t if Est is InfiniteFeatureRegressor else y


def _margins(est, X):
    return est.predict(X) if isinstance(est, InfiniteFeatureRegressor) \
        else est.decision_function(X)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_sparse_offset_columns_give_the_dense_model(Est):
    X, y, t = _offset_data()
    Xtr, Xte, ytr = X[:120], X[120:], _target(Est, y, t)[:120]
    dense = Est(random_state=0).fit(Xtr, ytr)
    sparse = Est(random_state=0).fit(sp.csr_matrix(Xtr), ytr)
    np.testing.assert_allclose(_margins(sparse, sp.csr_matrix(Xte)), _margins(dense, Xte),
                               rtol=1e-6, atol=1e-7)
    if Est is not InfiniteFeatureRegressor:
        np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(Xte)), dense.predict(Xte))


def test_without_standardize_sparse_is_not_centred():
    # dense columns are not centred either with standardize=False
    X, y, t = _offset_data()
    assert implicit_center(sp.csr_matrix(X), standardize=False) is None
    assert implicit_center(X) is None  # dense: centred directly
    np.testing.assert_allclose(implicit_center(sp.csr_matrix(X)), X.mean(axis=0))


def test_implicit_center_is_the_weighted_mean():
    X, _, _ = _offset_data()
    w = np.random.default_rng(1).uniform(0.0, 3.0, len(X))
    np.testing.assert_allclose(implicit_center(sp.csr_matrix(X), w),
                               np.average(X, axis=0, weights=w))


@pytest.mark.parametrize("offset, warned", [(1e3, False), (1e8, True)])
def test_offsets_a_sparse_container_cannot_centre_exactly_are_named(offset, warned):
    # measured: dense and sparse fits agree at offsets of 1e6 spreads, not at 1e7
    X, y, _ = _offset_data()
    X[:, 4] = offset + X[:, 4] / X[:, 4].std()
    Xs = sp.csr_matrix(X / X.std(axis=0))
    import warnings

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        implicit_center(Xs)
    named = [w for w in rec if "column(s) [4]" in str(w.message)]
    assert bool(named) == warned
    if warned:
        with pytest.warns(UserWarning, match=r"column\(s\) \[4\] hold an offset"):
            PNormMKLClassifier(random_state=0, max_iter=2).fit(sp.csr_matrix(X), y)


@pytest.mark.parametrize("kernel", ["linear", ("poly", {"degree": 2, "gamma": 0.1}),
                                    ("rbf", {"gamma": 0.05})])
@pytest.mark.parametrize("view", [None, [0, 2, 5]])
def test_centred_kernel_list_is_the_list_of_the_centred_dense_rows(kernel, view):
    X, _, _ = _offset_data(n=40)
    X = X / X.std(axis=0)
    c = X.mean(axis=0)
    spec = [kernel if view is None else (kernel[0] if isinstance(kernel, tuple) else kernel,
                                          kernel[1] if isinstance(kernel, tuple) else {},
                                          view)]
    ref = KernelList(spec, precompute=False).fit(X - c)
    got = KernelList(spec, precompute=False).fit(sp.csr_matrix(X), center=c)
    ids = np.array([3, 0, 17])
    np.testing.assert_allclose(got.rows(ids), ref.rows(ids), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got.diag_, ref.diag_, rtol=1e-9)
    new = X[:7] + 0.3
    np.testing.assert_allclose(got.cross(sp.csr_matrix(new)), ref.cross(new - c),
                               rtol=1e-9, atol=1e-9)
    support = np.array([1, 4, 9, 30])
    got.restrict(support)
    ref.restrict(support)
    np.testing.assert_allclose(got.cross(sp.csr_matrix(new)), ref.cross(new - c),
                               rtol=1e-9, atol=1e-9)


def test_obscure_row_cache_reads_the_centred_products():
    # the compiled loop computes sparse rows from the list's products itself
    X, _, _ = _offset_data(n=50)
    X = X / X.std(axis=0)
    c = X.mean(axis=0)
    specs = [("rbf", {"gamma": 0.1}), "linear"]
    ref = KernelList(specs, precompute=False).fit(X - c)
    got = KernelList(specs, precompute=False).fit(sp.csr_matrix(X), center=c)
    cache = _RowCache(got)
    assert cache.plan is not None
    ids = np.arange(5)
    cache._compute(ids, np.arange(len(ids)))
    np.testing.assert_allclose(cache.rows[:, : len(ids)], ref.rows(ids), rtol=2e-6, atol=2e-6)


def test_fourier_center_gives_the_columns_of_the_centred_rows():
    X, _, _ = _offset_data(n=30)
    c = X.mean(axis=0)
    ref = RandomFourierFeatures(gamma=1e-3).fit(X - c)
    got = RandomFourierFeatures(gamma=1e-3).fit(sp.csr_matrix(X), center=c)
    params = ref.sample(4, rng=0)
    np.testing.assert_allclose(got.columns(params, sp.csr_matrix(X)),
                               ref.columns(params, X - c), atol=1e-9)
    assert got.in_span(X) is None  # (never priced in a span: that basis ignores c)


@pytest.mark.parametrize("make", [lambda X, c: (c, X), lambda X, c: (c[:-1], sp.csr_matrix(X)),
                                  lambda X, c: (c * np.nan, sp.csr_matrix(X))])
def test_check_center_refuses_what_it_cannot_use(make):
    X, _, _ = _offset_data(n=10)
    with pytest.raises(ValueError, match="center must be the finite means"):
        check_center(*make(X, X.mean(axis=0)))


@pytest.mark.parametrize("Est", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_reported_frequencies_and_phases_are_the_features_on_raw_sparse_inputs(Est):
    X, y, t = _offset_data()
    est = Est(random_state=0).fit(sp.csr_matrix(X), _target(Est, y, t))
    P = X @ est.frequencies_.T + est.phases_
    Z = est.transform(sp.csr_matrix(X)) / est.feature_scales_.ravel()
    np.testing.assert_allclose(Z[:, 0::2], np.cos(P), atol=1e-7)
    np.testing.assert_allclose(Z[:, 1::2], np.sin(P), atol=1e-7)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_sparse_fitted_models_keep_their_center_in_model_files(Est, tmp_path):
    X, y, t = _offset_data()
    est = Est(random_state=0).fit(sp.csr_matrix(X), _target(Est, y, t))
    save_model(est, tmp_path / "m.kl")
    back = load_model(tmp_path / "m.kl")
    np.testing.assert_array_equal(_margins(back, sp.csr_matrix(X)),
                                  _margins(est, sp.csr_matrix(X)))


@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf"])
@pytest.mark.parametrize("regression", [False, True])
def test_low_rank_kernels_on_sparse_offset_columns_give_the_dense_model(kernel, regression,
                                                                        tmp_path):
    # before, the polynomial regressor on these CSR columns broke down
    # (kernel values ~1e10) and the linear one had 3.7x the dense MSE
    from kernlearn.estimators.lowrank import LowRankKernelClassifier, LowRankKernelRegressor

    X, y, t = _offset_data(n=200)
    Est = LowRankKernelRegressor if regression else LowRankKernelClassifier
    target = t if regression else y
    dense = Est(kernel, random_state=0).fit(X[:150], target[:150])
    sparse = Est(kernel, random_state=0).fit(sp.csr_matrix(X[:150]), target[:150])
    assert dense.kernel_center_ is None
    assert sparse.kernel_center_ is not None  # (kept: the RBF kernel ignores it)
    out = (lambda m, Z: m.predict(Z)) if regression else (lambda m, Z: m.decision_function(Z))
    np.testing.assert_allclose(out(sparse, sp.csr_matrix(X[150:])), out(dense, X[150:]),
                               rtol=1e-7, atol=1e-8)
    save_model(sparse, tmp_path / "m.kl")
    np.testing.assert_array_equal(out(load_model(tmp_path / "m.kl"), sp.csr_matrix(X[150:])),
                                  out(sparse, sp.csr_matrix(X[150:])))


def test_kernel_block_centres_only_the_dot_product_kernels():
    from kernlearn.families.nystrom import kernel_block
    from kernlearn.kernels import pairwise_kernel

    X, _, _ = _offset_data(n=20)
    X = X / X.std(axis=0)
    c = X.mean(axis=0)
    A, B = sp.csr_matrix(X[:5]), sp.csr_matrix(X[5:])
    for kernel, params in [("linear", {}), ("poly", {"degree": 3, "gamma": 0.2, "coef0": 0.5}),
                           ("rbf", {"gamma": 0.3})]:
        np.testing.assert_allclose(kernel_block(A, B, kernel, params, c),
                                   pairwise_kernel(X[:5] - c, X[5:] - c, kernel, **params),
                                   rtol=1e-9, atol=1e-9)
    # a kernel for histograms sees the rows as given
    np.testing.assert_allclose(kernel_block(A, B, "hik", {}, c), pairwise_kernel(A, B, "hik"))


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_weighted_sparse_fit_is_the_weighted_dense_fit(Est):
    # the implicit centre is the weighted mean, as the dense standardisation's
    X, y, t = _offset_data()
    w = np.random.default_rng(3).uniform(0.2, 3.0, 120)
    target = _target(Est, y, t)[:120]
    dense = Est(random_state=0).fit(X[:120], target, sample_weight=w)
    sparse = Est(random_state=0).fit(sp.csr_matrix(X[:120]).astype(np.float64), target,
                                     sample_weight=w)
    np.testing.assert_allclose(_margins(sparse, sp.csc_matrix(X[120:])), _margins(dense, X[120:]),
                               rtol=1e-6, atol=1e-7)
