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
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

import kernlearn as kl
from kernlearn.families import RandomFourierFeatures


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
    np.testing.assert_allclose(far, near, rtol=1e-6)
