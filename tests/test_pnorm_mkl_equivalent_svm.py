"""The p-norm MKL fit is one SVM on the learned kernel, at a larger C.

Kloft et al.'s equivalence behind the ``C`` note of
:class:`kernlearn.PNormMKLClassifier`: minimising
:math:`\\frac12\\|w\\|_{2,p}^2 + C\\sum_i\\ell_i` over F kernels gives the same
classifier as the (bias-free, same loss) SVM on the single kernel
:math:`\\sum_j\\tilde\\beta_j K_j` (``kernel_weights_``, summing to one) with
:math:`C/\\|\\tilde\\beta\\|_r`, :math:`r = p/(2-p)`.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from kernlearn import PNormMKLClassifier
from kernlearn.kernels import rbf_kernel


def _fit(grams, y, C, p=1.5):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tight tol: a warning would not change the check
        return PNormMKLClassifier(kernels="precomputed", p=p, C=C, tol=1e-4,
                                  max_iter=20000, random_state=0).fit(grams, y)


@pytest.mark.parametrize("p", [1.5, 1.25])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_mkl_equals_single_kernel_svm_at_c_over_beta_r_norm(p, n_classes):
    X, y = make_classification(150, 6, n_informative=4, n_classes=n_classes,
                               flip_y=0.1, random_state=0)
    A = StandardScaler().fit_transform(X)
    grams = [rbf_kernel(A, A, gamma=g) for g in (0.05, 0.2, 1.0)]
    C = 1.0
    mkl = _fit(grams, y, C, p)
    beta = mkl.kernel_weights_
    assert np.isclose(beta.sum(), 1.0) and np.ptp(beta) > 0.05  # really weighted
    combined = sum(b * K for b, K in zip(beta, grams))
    c_equiv = C / np.linalg.norm(beta, p / (2 - p))
    assert c_equiv > 1.3 * C  # the equivalent SVM is less regularised
    f_mkl = mkl.decision_function(grams)
    f_eq = _fit([combined], y, c_equiv).decision_function([combined])
    f_same_c = _fit([combined], y, C).decision_function([combined])
    scale = np.abs(f_mkl).max()
    # within the solvers' optimisation error at tol=1e-4 ...
    assert np.abs(f_mkl - f_eq).max() < 0.01 * scale
    # ... and far from the SVM at the nominal C
    assert np.abs(f_mkl - f_same_c).max() > 0.1 * scale
