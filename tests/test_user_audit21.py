"""A twenty-first user's audit: kernels a researcher brings.

A researcher brought her own kernels: scikit-learn's pairwise functions,
``functools.partial`` with fixed parameters, lambdas, precomputed Gram
matrices, kernel specs with data-derived widths, and her own feature
families written by ``doc/extending.md``.  Most of it held (the precomputed
path equals the callable path on the same Grams, train and test, for the MKL
estimators; malformed callables are refused naming their position); each
test here failed before its fix.
"""

import functools

import numpy as np
import pytest
from sklearn.metrics import pairwise

from kernlearn import LowRankKernelClassifier


def _binary(n=80, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.standard_normal(n) > 0.4).astype(int)
    return X, y


# ------------------------------------------- SLKL and the width the user fixed
def test_low_rank_keeps_the_width_a_partial_kernel_binds():
    # kernel=partial(rbf_kernel, gamma=0.03): gamma="scale" (1/5 here) was
    # passed over the bound 0.03 and half the columns put at a tenth of it;
    # the model differed from the one on the same kernel precomputed by up to
    # 0.85 in the decision values
    X, y = _binary()
    k = functools.partial(pairwise.rbf_kernel, gamma=0.03)
    a = LowRankKernelClassifier(kernel=k, standardize=False, random_state=0).fit(X, y)
    b = LowRankKernelClassifier(kernel="precomputed", random_state=0).fit(k(X, X), y)
    assert a.kernel_params_ == {"gamma": 0.03}
    X_new = X[:7] + 0.1
    np.testing.assert_allclose(a.decision_function(X_new),
                               b.decision_function(k(X_new, X)), atol=1e-8)


@pytest.mark.parametrize("kw", [
    {"kernel_params": {"gamma": 0.03}},
    {"kernel": pairwise.rbf_kernel, "kernel_params": {"gamma": 0.03}},
], ids=["rbf", "callable"])
def test_low_rank_width_given_in_kernel_params_is_the_only_width(kw):
    # gamma_factors="auto" spreads the columns over several widths around
    # the default width only; a width given in kernel_params had half its
    # columns at gamma / 10 without a word (gamma=0.03 had not)
    X, y = _binary()
    a = LowRankKernelClassifier(standardize=False, random_state=0, **kw).fit(X, y)
    b = LowRankKernelClassifier(gamma=0.03, standardize=False, random_state=0).fit(X, y)
    np.testing.assert_array_equal(np.unique(a.center_factors_), [1.0])
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-10)


# -------------------------------------------------- kernel callables' failures
def _nonnegative(n=60, d=4, seed=1):
    """Histogram-like data: non-negative counts (what chi2 kernels are for)."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(3.0, size=(n, d)).astype(float)
    return X, (X[:, 0] > X[:, 1]).astype(int)


def _estimators(kernel):
    from kernlearn import LowRankKernelRegressor, MultitaskMKLClassifier, PNormMKLClassifier

    return [(PNormMKLClassifier(kernels=["linear", kernel]), {}, r"kernels\[1\]"),
            (MultitaskMKLClassifier(kernels=["linear", kernel]),
             {"task_index": np.arange(60) % 2}, r"kernels\[1\]"),
            (LowRankKernelRegressor(kernel=kernel), {}, "")]


@pytest.mark.parametrize("which", [0, 1, 2], ids=["pnorm", "multitask", "low_rank"])
def test_an_exception_a_kernel_callable_raises_names_the_kernel(which):
    # scikit-learn's chi2_kernel on the standardised (centred) columns said
    # "X contains negative values." of an X that has none, naming no kernel
    X, y = _nonnegative()
    est, kw, where = _estimators(pairwise.chi2_kernel)[which]
    with pytest.raises(ValueError, match=where + r".*chi2_kernel.*raised ValueError .*"
                       r"standardize=True centres .*X contains negative values"):
        est.fit(X, y, **kw)
    est.set_params(standardize=False).fit(X, y, **kw)  # the kernel's own data: fitted


@pytest.mark.parametrize("which", [0, 1, 2], ids=["pnorm", "multitask", "low_rank"])
def test_a_kernel_callable_returning_complex_numbers_is_refused(which):
    # the MKL estimators kept the real parts under a ComplexWarning (a
    # precomputed complex matrix is refused); SLKL stopped in a numba
    # "No definition for lowering" error
    X, y = _nonnegative()
    est, kw, where = _estimators(lambda A, B: pairwise.rbf_kernel(A, B).astype(complex))[
        which]
    with pytest.raises(ValueError, match=where + ".*returned complex numbers"):
        est.fit(X, y, **kw)
