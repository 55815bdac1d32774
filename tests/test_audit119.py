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

from kernlearn import FGMClassifier, PNormMKLClassifier


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


# ------------------------------------------------ FGM at huge C: a stalled master

def _blobs(seed, k, n=60, p=5):
    """``k`` classes around a polygon's corners: each separable from the others."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = rng.integers(0, k, n)
    X[:, 0] += 3 * np.cos(2 * np.pi * y / k)
    X[:, 1] += 3 * np.sin(2 * np.pi * y / k)
    return X, y


def _hard_margin(X, y, B):
    r"""The ``C -> inf`` limit of FGM's problem over every ``B``-subset of the
    columns (cvxpy): :math:`\tfrac12(\sum_S \|V_S\|_F)^2` with every one-vs-rest
    margin at least 1, an upper bound of the optimum at any finite ``C``."""
    import itertools

    cp = pytest.importorskip("cvxpy")
    classes = np.unique(y)
    Y = np.where(y[:, None] == classes, 1.0, -1.0)[:, 1 if len(classes) == 2 else 0:]
    subsets = list(itertools.combinations(range(X.shape[1]), B))
    V = [cp.Variable((B, Y.shape[1])) for _ in subsets]
    b = cp.Variable(Y.shape[1])
    M = sum(X[:, list(s)] @ v for s, v in zip(subsets, V)) + np.ones((len(X), 1)) @ b[None, :]
    prob = cp.Problem(cp.Minimize(sum(cp.norm(v, "fro") for v in V)),
                      [cp.multiply(Y, M) >= 1])
    prob.solve(solver="CLARABEL")
    return 0.5 * prob.value ** 2


@pytest.mark.parametrize("seed, k", [(9, 2), (9, 3)])
def test_a_stalled_newton_master_is_not_reported_converged(seed, k):
    # the last master stopped at the squared hinge's kink with a new group at weight
    # zero whose score exceeded S by 1-5 % (6e-4 to 9e-4 of the Cauchy-Schwarz bound
    # ||A_t|| ||u||); the check allowed 10 times score_rtol (1e-3) of that bound, the
    # objective stopped falling and the path said converged 0.5-1.8 % above the optimum
    from sklearn.exceptions import ConvergenceWarning

    X, y = _blobs(seed, k)
    best = _hard_margin(X, y, 2)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        m = FGMClassifier(C=1e10, B=2, multiclass="shared", standardize=False).fit(X, y)
    assert m.converged_
    assert m.history_["objective"][-1] <= best * (1 + 1e-4)
