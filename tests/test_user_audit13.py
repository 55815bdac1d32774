"""A thirteenth user's audit: self-consistency and composition with scikit-learn.

A data scientist checked that each estimator agrees with itself (``predict``
against ``decision_function`` and ``predict_proba``, ``score`` against
scikit-learn's metrics, refits, clones, pickles and model files) and that it
composes with scikit-learn's tools (pipelines, searches with a process pool,
``cross_val_predict``, calibration, one-vs-rest, bagging, stacking,
metadata routing).  Most of it held; each test here failed before its fix.
"""

import numpy as np
import pytest

from kernlearn import PNormMKLClassifier
from kernlearn.kernels import rbf_kernel


def _binary(n=60, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y


def test_the_rbf_kernel_function_without_a_width_is_its_default_width():
    # kernels=[rbf_kernel] (the library's own function, no parameters) fitted
    # the model and then stopped in a KeyError: 'gamma' while recording the
    # raw-unit widths (it runs with its default, gamma=1.0)
    X, y = _binary()
    a = PNormMKLClassifier(kernels=[rbf_kernel, "linear"], random_state=0).fit(X, y)
    b = PNormMKLClassifier(kernels=[(rbf_kernel, {"gamma": 1.0}), "linear"],
                           random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_allclose(a.rbf_gamma_raw_[0], b.rbf_gamma_raw_[0])
    assert a.rbf_gamma_raw_[1] is None
