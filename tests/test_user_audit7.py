"""A seventh user's audit: multitask estimators, invariances, model files, kernels.

A demanding user fitted the multitask MKL estimators with task ids of other
types and orders, checked every estimator's predictions against relabelled,
reordered and reweighted copies of the same data, saved and reloaded models,
and handed the precomputed-kernel estimators matrices that are not kernels.
Each test here failed before its fix.
"""

import numpy as np
import pytest

from kernlearn import (
    MultitaskMKLClassifier,
    MultitaskMKLRegressor,
    MultitaskMKLRegressorCV,
)
from kernlearn.kernels import linear_kernel, rbf_kernel


def _tasks_data(n=60, seed=1):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, 4))
    t = rng.randint(0, 3, n)
    y = X[:, 0] + 0.5 * t + 0.1 * rng.standard_normal(n)
    return X, y, t


@pytest.mark.parametrize("Est, formulation", [
    (Est, f) for Est in (MultitaskMKLRegressor, MultitaskMKLClassifier)
    for f in ("mtfl", "mkl", "independent")] + [(MultitaskMKLRegressorCV, "mtfl")])
def test_multitask_precomputed_indefinite_kernel_is_refused(Est, formulation):
    # 2 I - K has a unit diagonal but eigenvalues down to about -15: not a
    # kernel.  MK-MTSFL's eigendecomposition refused it; the other
    # formulations checked the diagonal only and fitted it without a word,
    # while PNormMKLClassifier and the low-rank estimators refuse it.
    X, y, t = _tasks_data()
    K = rbf_kernel(X, X, gamma=0.3)
    bad = 2 * np.eye(len(X)) - K
    if Est is MultitaskMKLClassifier:
        y = (y > np.median(y)).astype(int)
    with pytest.raises(ValueError, match=r"X\[0\] is not positive semi-definite"):
        Est(kernels="precomputed", formulation=formulation).fit([bad, linear_kernel(X, X)], y, t)
