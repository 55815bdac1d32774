"""An eighty-second audit: a review of the last pass's audit fixes (audits 76, 77, 80).

Each test here failed before its fix:

* a row of zero weight far out (entries past 1e38) in a sparse ``X`` changed
  ``InfiniteFeatureClassifier``'s model: the float32 ranking of the Fourier
  candidates rounded its phases to inf, whose cosine is NaN, and NaN times
  the row's zero gradient poisoned every candidate's score;
* a normalised kernel fitted on a sparse float32 ``X`` refused at ``predict``
  a row of entries 1e20 ("too large for float64"): its squared norm was summed
  in float32, whose range ends at 3.4e38; the model fitted on float64 predicts
  that row;
* a zero-weight target far out (1e160) was refused, "y is too large to
  standardise", by every regressor standardising its targets in memory and on
  Dask (``0 * inf``: the audit-80 repair of X's statistics had left y's), and
  zero weights moved the rounding of the targets' mean;
* zero-weight rows far out gave NumPy's overflow and invalid-value
  ``RuntimeWarning`` s (the weighted losses, the RBF distance shift, the width
  rule's checks), which the fit without them does not give;
* ``gamma="scale"``'s warnings read the zero-weight rows unweighted: a removed
  row at 1e3 in one column warned that this column holds 100% of the variance;
* the multitask polynomial kernel's overflow at ``predict`` gave NumPy's
  overflow warning before the refusal that names it.
"""

import warnings

import dask.array as da

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

import kernlearn as kl
from kernlearn.families import RandomFourierFeatures


def _seeded(name):
    Est = getattr(kl, name)
    return Est(random_state=0) if "random_state" in Est().get_params() else Est()


def _binary(n=60, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = np.abs(rng.normal(size=(n, d)))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0.8).astype(int)
    return X, y


# ------------------------------------ zero-weight rows far out: the float32 ranking
@pytest.mark.parametrize("big", [1e50, 1e200])
def test_a_zero_weight_row_past_float32s_range_leaves_the_fourier_model(big):
    X, y = _binary()
    n, d = X.shape
    Xw = np.vstack([X, np.full((2, d), big)])
    yw, w = np.r_[y, y[:2]], np.r_[np.ones(n), 0.0, 0.0]
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = kl.InfiniteFeatureClassifier(random_state=0).fit(sp.csr_matrix(X), y)
        b = kl.InfiniteFeatureClassifier(random_state=0).fit(
            sp.csr_matrix(Xw), yw, sample_weight=w)
    np.testing.assert_allclose(b.decision_function(sp.csr_matrix(X)),
                               a.decision_function(sp.csr_matrix(X)), rtol=1e-9, atol=1e-12)


def test_the_float32_ranking_of_a_far_row_is_finite():
    # the family's own sums: a phase past 3.4e38 gives finite columns (reduced
    # modulo 2 pi), and a zero weight then adds exactly nothing to the norms
    fam = RandomFourierFeatures(gamma=1.0).fit(np.random.default_rng(1).normal(size=(5, 3)))
    X = np.array([[0.1, 0.2, 0.3], [1e60, 1e60, 1e60]])
    params = fam.sample(4, np.random.default_rng(0))
    G = np.array([[1.0], [0.0]])
    H, sq = fam.correlation_sums(params, X, G, np.array([1.0, 0.0]), low_precision=True)
    H1, sq1 = fam.correlation_sums(params, X[:1], G[:1], np.array([1.0]),
                                   low_precision=True)
    assert np.isfinite(H).all() and np.isfinite(sq).all()
    np.testing.assert_array_equal(sq, sq1)
    np.testing.assert_allclose(H, H1, rtol=1e-6)


# ------------------------------------- the overflow refusal's threshold for float32
@pytest.mark.parametrize("kernels", [None, ["linear", "poly"]])
def test_a_sparse_float32_model_predicts_a_row_float64_holds(kernels):
    # a row c * x far out: the normalised dot-product kernels are those of its
    # direction, the RBF kernels zero, so c = 1e20 (squares past float32's
    # range) predicts as c = 1e15 (squares within it) does
    X, y = _binary()
    X[np.random.default_rng(1).random(X.shape) < 0.5] = 0.0
    x = np.linspace(1.0, 2.0, X.shape[1])
    kw = {} if kernels is None else {"kernels": kernels}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = kl.PNormMKLClassifier(**kw).fit(sp.csr_matrix(X, dtype=np.float32), y)
        far, near = (m.decision_function(sp.csr_matrix(np.vstack([X[:3], c * x]),
                                                       dtype=np.float32))
                     for c in (1e20, 1e15))
    # (float32 kernel values: each carries ~1e-7 of round-off, and a decision
    # value near 0 is a sum of O(1) terms, so the tolerance is absolute too; the
    # defect refused the far row outright)
    np.testing.assert_allclose(far, near, rtol=1e-6, atol=1e-6)


# --------------------------------------------- zero-weight targets: standardisation
REGRESSORS = ["FGMRegressor", "InfiniteFeatureRegressor", "LowRankKernelRegressor"]


def _regression(n=60, d=5):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    return X, X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("name", REGRESSORS)
def test_a_zero_weight_target_far_out_is_a_removed_row(name):
    X, y = _regression()
    n = len(y)
    Xw, yw = np.vstack([X, X[:2]]), np.r_[y, 1e200, -1e160]
    w = np.r_[np.ones(n), 0.0, 0.0]
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", RuntimeWarning)
        a = _seeded(name).fit(X, y)
        b = _seeded(name).fit(Xw, yw, sample_weight=w)
    np.testing.assert_array_equal(b.y_mean_, a.y_mean_)
    np.testing.assert_array_equal(b.y_scale_, a.y_scale_)
    np.testing.assert_allclose(b.predict(X), a.predict(X), rtol=1e-12, atol=1e-12)


def test_zero_weights_leave_the_targets_map_bitwise():
    # summed without the removed rows, as X's statistics: the zeros moved the
    # rounding of a target at an offset of 1e8
    from kernlearn.preprocessing import fit_target_standardization

    rng = np.random.default_rng(3)
    Y = 1e8 + rng.normal(size=(1000, 2))
    w = rng.integers(0, 3, 1000).astype(float)
    a = fit_target_standardization(Y, w)
    b = fit_target_standardization(Y[w > 0], w[w > 0])
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_array_equal(a.scale, b.scale)


def test_a_zero_weight_target_far_out_on_dask():
    # the lazy targets' map (a Dask y that stays on the cluster) as in memory
    from kernlearn._dask_master import dask_target_standardization
    from kernlearn.preprocessing import fit_target_standardization

    _, y = _regression()
    yw, w = np.r_[y, 1e200, -1e160], np.r_[np.ones(len(y)), 0.0, 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = dask_target_standardization(da.from_array(yw, chunks=20), w)
    want = fit_target_standardization(y)
    np.testing.assert_allclose(got.mean, want.mean, rtol=1e-14)
    np.testing.assert_allclose(got.scale, want.scale, rtol=1e-14)


# ---------------------------------------- zero-weight rows far out: no NumPy warnings
@pytest.mark.parametrize("name", ["FGMRegressor", "FGMClassifier", "InfiniteFeatureClassifier",
                                  "LowRankKernelClassifier"])
def test_zero_weight_rows_far_out_give_no_numpy_warning(name):
    X, y = _regression()
    n, d = X.shape
    if "Classifier" in name:
        Xw, yw = np.vstack([X, np.full((2, d), 1e200)]), np.r_[y > 0, True, False].astype(int)
    else:
        Xw, yw = np.vstack([X, X[:2]]), np.r_[y, 1e200, -1e200]
    w = np.r_[np.ones(n), 0.0, 0.0]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        getattr(kl, name)().fit(Xw, yw, sample_weight=w)
    said = {(w.filename, str(w.message)) for w in seen if issubclass(w.category, RuntimeWarning)}
    assert not said, said


# -------------------------------------- the width rule's warnings: kept rows only
@pytest.mark.parametrize("name", ["InfiniteFeatureClassifier", "LowRankKernelClassifier"])
def test_a_removed_row_does_not_make_a_column_dominate_the_width(name):
    X, y = _regression()
    y = (y > 0).astype(int)
    far = np.zeros((1, X.shape[1]))
    far[0, 0] = 1e3
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        getattr(kl, name)().fit(np.vstack([X, far]), np.r_[y, 0],
                                sample_weight=np.r_[np.ones(len(y)), 0.0])
    said = [str(w.message) for w in seen if "of the variance" in str(w.message)]
    assert not said, said


# -------------------------------------- the multitask kernels' refusal at predict
def test_the_multitask_poly_kernels_overflow_is_refused_without_numpys_warning():
    X, y = _binary(n=40, d=4)
    tasks = np.arange(40) % 2
    m = kl.MultitaskMKLClassifier(kernels=["poly"]).fit(X, y, task_index=tasks)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="kernels\\[0\\] produced NaN or infinite"):
            m.decision_function(np.full((1, 4), 1e200), task_index=[0])
