"""Audit 119: the histogram kernels' scaling (thirty-sixth pass) and FGM's
multi-output optimality check, hunted for silent wrong results.

Found: ``PNormMKLClassifier`` on dense float32 input with ``hik`` or
``additive_chi2``.  Its float32 model rounded the centred columns
:math:`(x-\\mu)/s` to float32 before the histogram kernels added
:math:`\\mu/s` back, so the zeros came back as :math:`\\pm 10^{-8}` of
:math:`\\mu/s`: ``additive_chi2`` refused non-negative counts, ``hik`` warned
of negative values (``NegativeFeaturesWarning``), and ``hik`` with
``beta=0.5`` moved the decision values by 3e-2 against the float64 fit.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kernlearn import PNormMKLClassifier


def _counts(seed=0, n=60, d=5):
    """Non-negative counts with zeros, column scales far apart, a binary target."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(rng.uniform(0.5, 5.0, d), (n, d)) * rng.uniform(0.1, 10, d)
    y = (X[:, 0] / X[:, 0].std() + X[:, 1] / X[:, 1].std() > 1.5).astype(int)
    return X, y


def _pnorm(kernel):
    return PNormMKLClassifier(kernels=["rbf", kernel], tol=None, max_iter=20, random_state=0)


@pytest.mark.parametrize("kernel", ["hik", "additive_chi2", ("hik", {"beta": 0.5}),
                                    ("additive_chi2", {}, [0, 2, 3])])
def test_float32_counts_fit_the_float64_model_without_a_word(kernel):
    X, y = _counts()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("error")  # (no NegativeFeaturesWarning, no refusal)
        ref = _pnorm(kernel).fit(X, y)
        got = _pnorm(kernel).fit(X.astype(np.float32), y)
        want = ref.decision_function(X)
        for Xp in (X, X.astype(np.float32)):
            np.testing.assert_allclose(got.decision_function(Xp), want, rtol=1e-6,
                                       atol=1e-6 * np.abs(want).max())
        # the same numbers as CSR, float32: the scaled columns without centring
        sparse = _pnorm(kernel).fit(sp.csr_matrix(X.astype(np.float32)), y)
        np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)), want,
                                   rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_float32_without_histogram_kernels_keeps_its_precision():
    # only a histogram kernel's centred view needs float64: other models stay float32
    X, y = _counts()
    m = PNormMKLClassifier(kernels=["rbf", "linear"], tol=None, max_iter=5).fit(X.astype(np.float32), y)
    assert m._x_dtype == "float32"
    m = _pnorm("hik").fit(X.astype(np.float32), y)
    assert m._x_dtype == "float64"
