"""Audit 80: a review of the audit-76 and low-rank merges.

Each test pins a defect found in the merges of the randomised-invariants audit
(zero-weight standardisation and cadence, the overflow refusal at predict,
empty CSR row hashes) and of the width rule's bounded spread ratio; each
failed before its fix.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kernlearn import FGMClassifier, MultitaskMKLClassifier, PNormMKLClassifier
from kernlearn.preprocessing import fit_standardization
from kernlearn.widths import pairwise_spread_ratio, scale_gamma


def test_spread_ratio_at_most_decides_as_the_exact_ratio_on_subnormal_distances():
    # squared distances near 1e-322 are subnormal: ``mean / at_most`` rounds to a
    # multiple of 5e-324 there, far past the count's 1e-6 margin, so a ratio of
    # 3.05 (above the low-rank width rule's 3) was reported as "at most 3"
    X = np.array([1, 2, 4, 1, 4, 2, 1, 2, 4, 2], dtype=float)[:, None] * 1e-161
    exact = pairwise_spread_ratio(X)
    assert exact > 3.0
    assert pairwise_spread_ratio(X, at_most=3.0) == exact


def _poly_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    return X, (X[:, 0] > 0).astype(int)


def test_normalised_poly_kernel_overflow_at_predict_is_refused_without_a_numpy_warning():
    # the normalised polynomial kernel's diagonal (g |x|^2 + c)^2 overflows for
    # entries past ~1e77: predict refused the row, but NumPy's "overflow
    # encountered in square" came first (an error under -W error)
    X, y = _poly_data()
    clf = PNormMKLClassifier(random_state=0, kernels=[("poly", {"degree": 2})]).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=r"kernels\[0\] produced NaN or infinite"):
            clf.decision_function(np.full((1, 4), 1e153))


@pytest.mark.parametrize("Est", [PNormMKLClassifier, MultitaskMKLClassifier])
def test_fit_refuses_an_overflowing_kernel_diagonal_as_predict_does(Est):
    # the audit-76 refusal at predict was said to be "the error fit gives for
    # the same diagonal"; fit said only "produced non-finite values on X"
    # (no kernel named in the multitask one, no remedy), after NumPy's warning
    X, y = _poly_data()
    X = np.vstack([X, np.full((1, 4), 1e153)])
    y = np.r_[y, 1]
    kw = {"task_index": np.arange(61) % 2} if Est is MultitaskMKLClassifier else {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=r"kernels\[0\] produced NaN or infinite.*rescale X"):
            Est(standardize=False, kernels=[("poly", {"degree": 2})]).fit(X, y, **kw)


def test_sparse_zero_weight_row_whose_square_overflows_leaves_the_scale_of_the_rows_removed():
    # the sparse standardisation summed the squares of every row, weighted:
    # a zero-weight row at 1e200 squared to inf, and 0 * inf = NaN hid a
    # column near 1e-160 (squares underflowed) from the recomputation of its
    # spread: another scale (1.5e-4 apart) than without the row, where a zero
    # weight removes its row
    rng = np.random.default_rng(0)
    X = np.where(rng.random((20, 3)) < 0.5, 0, rng.normal(size=(20, 3)) * 1e-160)
    X[2, 0] = 1e200
    keep = np.ones(20, bool)
    keep[[2, 5, 11]] = False
    weighted = fit_standardization(sp.csr_matrix(X), keep * 1.0)
    removed = fit_standardization(sp.csr_matrix(X[keep]))
    np.testing.assert_array_equal(weighted.scale, removed.scale)


def _far_zero_weight_row(n=80):
    """Rows with one of zero weight far out (1e200): a removed row."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] > 0).astype(int)
    X[3, 1] = 1e200
    w = np.ones(n)
    w[3] = 0.0
    return X, y, w, w > 0


def test_fgm_zero_weight_row_far_out_is_removed():
    # its margin overflowed, its squared hinge loss was inf, and the weighted
    # loss 0 * inf = NaN poisoned the objective of the rows kept: decision
    # values 0.94 from those of the fit without the row, silently
    X, y, w, keep = _far_zero_weight_row()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (the removed row's overflow)
        weighted = FGMClassifier(B=2).fit(X, y, sample_weight=w)
        removed = FGMClassifier(B=2).fit(X[keep], y[keep])
    np.testing.assert_allclose(weighted.decision_function(X[keep]),
                               removed.decision_function(X[keep]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
def test_scale_width_leaves_out_zero_weight_rows(sparse):
    # gamma='scale' weighted the squares of every row: a zero-weight row at
    # 1e200 made them inf, 0 * inf = NaN, and the GrFL and low-rank fits
    # (and the default RBF kernels) refused "cannot be computed" where the
    # fit without the row has a width; the rows of positive weight alone
    # also give the removed rows' width bit for bit
    X, _, w, keep = _far_zero_weight_row()
    conv = sp.csr_matrix if sparse else np.asarray
    assert scale_gamma(conv(X), w) == scale_gamma(conv(X[keep]), w[keep])
    rng = np.random.default_rng(1)
    X, w = 1e3 + rng.normal(size=(50, 4)), rng.integers(0, 3, 50).astype(float)
    assert scale_gamma(conv(X), w) == scale_gamma(conv(X[w > 0]), w[w > 0])


def test_fgm_dask_zero_weight_row_far_out_is_removed():
    # the Dask path's dense blocks weighted every row's squares: 0 * inf = NaN
    # for the removed row at 1e200, refused as "variance overflows" where the
    # fit in memory (and the Dask fit without the row) succeeds
    da = pytest.importorskip("dask.array")
    X, y, w, keep = _far_zero_weight_row()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (the removed row's overflow)
        lazy = FGMClassifier(B=2).fit(da.from_array(X, chunks=(20, 5)), y, sample_weight=w)
        removed = FGMClassifier(B=2).fit(X[keep], y[keep])
    np.testing.assert_allclose(lazy.decision_function(X[keep]),
                               removed.decision_function(X[keep]), rtol=0, atol=1e-9)
