"""An eleventh user's audit: numerical edge cases real data brings.

Each estimator was fitted on extreme shapes, scales, weights and kernels
(n << d, a few rows, one-row classes, 1 % classes, duplicated and collinear
columns, 1e12 and 1e-12 magnitudes, far-offset and tiny targets, perfectly
separable data, extreme ``C`` and sample weights, float32 input, degenerate
kernels) and compared with scikit-learn's baselines.  Most cases fitted a
sensible model; these did not.
"""

import warnings

import numpy as np
import pytest

from kernlearn import (
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
    MultitaskMKLRegressor,
    PNormMKLClassifier,
)


def _weighted_data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 6))
    y = X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.standard_normal(n)
    heavy = rng.random(n) >= 0.5
    return X, y, heavy


@pytest.mark.parametrize("Est", [LowRankKernelRegressor, LowRankKernelClassifier])
def test_slkl_auto_nu_does_not_depend_on_a_common_factor_of_the_weights(Est):
    # Survey or count weights of 1 to 1e8: nu="auto" tried its grid at 1e-16
    # of the weighted loss's scale, the kernel weights grew to 1e24 and more,
    # and the regressor predicted 1e16 (R^2 -1e28) and the classifier worse
    # than chance, under overflow warnings.  The same relative weights at
    # 1e-8 to 1 fitted well.
    X, y, heavy = _weighted_data()
    if Est is LowRankKernelClassifier:
        y = (y > 0).astype(int)
    small = np.where(heavy, 1.0, 1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = Est(random_state=0).fit(X, y, sample_weight=small * 1e8)
        ref = Est(random_state=0).fit(X, y, sample_weight=small)
        scores = big.decision_function(X) if Est is LowRankKernelClassifier else big.predict(X)
    assert np.all(np.isfinite(scores))
    ref_scores = ref.decision_function(X) if Est is LowRankKernelClassifier else ref.predict(X)
    np.testing.assert_allclose(scores, ref_scores, rtol=1e-6, atol=1e-8)
    if Est is LowRankKernelClassifier:
        assert np.mean(big.predict(X)[heavy] == y[heavy]) > 0.9
    else:
        assert big.score(X[heavy], y[heavy]) > 0.95


@pytest.mark.parametrize("Est", [PNormMKLClassifier, InfiniteFeatureClassifier,
                                 LowRankKernelClassifier])
def test_scale_width_set_by_column_offsets_is_warned_of(Est):
    # A time-stamp column (near 1.6e9) beside unit columns, not standardised:
    # gamma="scale" (the variance over all entries, as scikit-learn computes
    # it) made every kernel value 1 and the model a constant, 0.525 accuracy
    # where the standardised fit scores 1.0, without a word.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    X[:, 2] += 1.6e9
    kw = {"random_state": 0} if Est is not PNormMKLClassifier else {}
    with pytest.warns(UserWarning, match="columns' means differ"):
        Est(standardize=False, **kw).fit(X, y)
    # centred (or standardised) columns: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Est(standardize=False, **kw).fit(X - X.mean(axis=0), y)
        Est(**kw).fit(X, y)


def test_grfl_regressor_at_a_level_admitting_no_feature_predicts_the_mean():
    # lambda_p=1e6 is above every candidate's score: no fold's path adds a
    # feature, and max_features="auto" crashed choosing among no counts
    # ("attempt to get argmin of an empty sequence").
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 6))
    y = X[:, 0] + 0.1 * rng.standard_normal(120) + 3.0
    est = InfiniteFeatureRegressor(lambda_p=1e6, random_state=0).fit(X, y)
    assert est.max_features_ == 0
    np.testing.assert_allclose(est.predict(X), y.mean())


@pytest.mark.parametrize("kw", [{"formulation": "mtfl"}, {"formulation": "mkl"},
                                {"formulation": "mtsfl"}, {"shared": True}],
                         ids=["mtfl", "mkl", "mtsfl", "shared"])
def test_multitask_regressor_learns_its_kernel_weights_on_far_offset_targets(kw):
    # Targets near 1e9 with a unit spread: the inner solves' dual values
    # y'beta cancelled nine digits (1'beta = 0), the duality gap looked closed
    # after 1-2 iterations and the kernel weights stayed at their start
    # (0.5, 0.5 instead of 0.001, 0.999), without a warning.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((90, 4))
    t = rng.integers(0, 3, 90)
    y = X[:, 0] + 0.5 * t + 0.1 * rng.standard_normal(90)
    ref = MultitaskMKLRegressor(**kw).fit(X, y, task_index=t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        far = MultitaskMKLRegressor(**kw).fit(X, y + 1e9, task_index=t)
    np.testing.assert_allclose(far.kernel_weights_, ref.kernel_weights_, atol=1e-4)
    np.testing.assert_allclose(far.predict(X, task_index=t) - 1e9,
                               ref.predict(X, task_index=t), atol=1e-4)


def test_slkl_auto_nu_breaking_down_at_its_first_value_names_the_kernels_scale():
    # A linear kernel on inputs near 1e40, not standardised: the first value
    # of the nu="auto" path broke down and the error said "Increase nu (or
    # use nu='auto')", which the user had.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 5))
    y = X[:, 0] + 0.1 * rng.standard_normal(80)
    # (whether the path breaks down at its first value depends on the coordinate
    # sequence: at random_state=0 it did before the twenty-fifth pass's content
    # order of the sampled columns, now at 1; at 0 the fit now ends without an
    # error, as it did before at 1, 3, 4 and 5)
    est = LowRankKernelRegressor(kernel="linear", standardize=False, random_state=1)
    with pytest.raises(ValueError, match=r"diagonal on the training rows reaches [\d.]+e\+81"
                       r"; standardise the inputs") as info:
        est.fit(X * 1e40, y)
    assert "use nu='auto'" not in str(info.value)
