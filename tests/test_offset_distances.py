"""Squared distances of rows far from zero keep their digits (``standardize=False``).

The RBF kernels compute :math:`\\|x - y\\|^2` as
:math:`\\|x\\|^2 + \\|y\\|^2 - 2x^\\top y`, whose rounding is about the machine
epsilon times :math:`\\|x\\|^2`: on columns at 1e9 with a unit spread it left
no digit (the multitask regressor scored R^2 = -583 on its own training data;
OBSCURE, the multitask classifier and the low-rank models were noise).  Every
distance computation now subtracts the training rows' mean first when it is
far from zero relative to their spread (``utils._sparse.distance_shift``, one
rule), so a model of ``c + Z`` is the model of ``Z``; a sparse matrix, which is
not shifted, is warned of.  ``gamma="scale"`` with row weights takes a second
pass over such rows (its one-pass variance lost them).  Ordinary data keep their
numbers bit for bit (the rule is false on them; ``benchmarks/small_fits.py
--check-predictions``).

Only translation-invariant models are compared: the linear kernel (in the
default kernel lists of OBSCURE and the multitask estimators) and random
Fourier features (whose random phases meet ``c`` differently) give other
models of shifted data by design.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import kernlearn as K
from kernlearn.kernels import KernelList, rbf_kernel

RBF = [("rbf", {"gamma": "scale"}), ("rbf", {"gamma": "mean"})]


def _data(n=90, d=4, seed=0):
    rng = np.random.RandomState(seed)
    Z = rng.randn(n, d)
    y = Z[:, 0] + np.sin(2 * Z[:, 1]) + 0.1 * rng.randn(n)
    return Z, y, rng.randn(30, d)


# (name, estimator factory, classifier?, multitask?)
ESTIMATORS = [
    ("PNormMKLClassifier",
     lambda: K.PNormMKLClassifier(kernels=RBF, standardize=False, random_state=0),
     True, False),
    ("LowRankKernelRegressor",
     lambda: K.LowRankKernelRegressor(standardize=False, random_state=0), False, False),
    ("LowRankKernelClassifier",
     lambda: K.LowRankKernelClassifier(standardize=False, random_state=0), True, False),
    ("MultitaskMKLRegressor",
     lambda: K.MultitaskMKLRegressor(kernels=RBF, standardize=False), False, True),
    ("MultitaskMKLClassifier",
     lambda: K.MultitaskMKLClassifier(kernels=RBF, standardize=False), True, True),
]


def _outputs(make, classifier, multitask, c):
    Z, y, Zt = _data()
    target = (y > np.median(y)).astype(int) if classifier else y
    kw = {"task_index": np.arange(len(Z)) % 2} if multitask else {}
    kt = {"task_index": np.arange(len(Zt)) % 2} if multitask else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (convergence notes: the same on both sides)
        model = make().fit(c + Z, target, **kw)
        out = (model.decision_function(c + Zt, **kt) if classifier
               else model.predict(c + Zt, **kt))
    return np.asarray(out, dtype=float)


@pytest.mark.parametrize("c", [1e6, 1e9])
@pytest.mark.parametrize("name,make,classifier,multitask", ESTIMATORS,
                         ids=[e[0] for e in ESTIMATORS])
def test_far_offset_gives_the_model_of_the_centred_data(name, make, classifier, multitask, c):
    """``c + Z`` is predicted as ``Z`` is, to the digits ``c + Z`` keeps of ``Z``.

    Before: 1e9 moved the predictions by 0.5 (OBSCURE) to 15 (multitask) times
    their spread, 1e6 by up to 0.15.  ``c + Z`` holds ``Z`` to ``c * 2.2e-16``
    (2e-7 at 1e9): the tolerance is 1e-4 of the outputs' spread at 1e9, 1e-6
    at 1e6 (measured: at most 1.3e-7 and 1.2e-8).
    """
    base = _outputs(make, classifier, multitask, 0.0)
    shifted = _outputs(make, classifier, multitask, c)
    tol = 1e-4 if c > 1e8 else 1e-6
    assert np.max(np.abs(shifted - base)) <= tol * np.ptp(base), name


def test_rbf_kernel_and_kernel_list_on_far_rows_match_the_centred_ones():
    """The public kernel and the kernel list's training and test Grams."""
    Z, _, Zt = _data()
    c = 1e9
    exact = rbf_kernel(Zt, Z, gamma=0.3)
    np.testing.assert_allclose(rbf_kernel(c + Zt, c + Z, gamma=0.3), exact, atol=1e-6)
    kl0 = KernelList([("rbf", {"gamma": 0.3}), "linear"]).fit(Z)
    kl = KernelList([("rbf", {"gamma": 0.3}), "linear"]).fit(c + Z)
    np.testing.assert_allclose(kl.gram_[0], kl0.gram_[0], atol=1e-6)
    np.testing.assert_allclose(kl.cross(c + Zt)[0], exact, atol=1e-6)
    np.testing.assert_allclose(kl.cross(c + Zt)[0], kl0.cross(Zt)[0], atol=1e-6)


def test_ordinary_data_are_not_shifted():
    """The rule is false on standardised, unit-interval and pixel-like columns, and
    a single row (a centre) is never a reference."""
    from kernlearn.utils._sparse import DISTANCE_OFFSET, distance_shift

    rng = np.random.RandomState(1)
    Z = rng.randn(200, 5)
    for X in (Z, rng.rand(200, 5), rng.randint(0, 256, (200, 5)).astype(float),
              Z + 50.0):
        assert distance_shift(X) is None
    assert distance_shift(Z[:1] + 1e9) is None
    # (just past the rule: shifted)
    assert distance_shift(Z + 2 * np.sqrt(DISTANCE_OFFSET * 5 / 5)) is not None


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_sparse_far_offset_is_warned_of():
    """A sparse matrix cannot be shifted (it would be densified): the fit says so."""
    Z, y, _ = _data()
    X = sp.csr_matrix(1e9 + Z)
    with pytest.warns(UserWarning, match="sit far from zero relative to their spread"):
        K.LowRankKernelRegressor(standardize=False, random_state=0).fit(X, y)
    with pytest.warns(UserWarning, match="sit far from zero relative to their spread"):
        K.PNormMKLClassifier(kernels=RBF, standardize=False, max_iter=5).fit(
            X, (y > 0).astype(int))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (ordinary sparse data: no word)
        K.LowRankKernelRegressor(standardize=False, random_state=0).fit(sp.csr_matrix(Z), y)


@pytest.mark.parametrize("c", [1e6, 1e9])
def test_weighted_scale_width_of_far_rows_is_their_spread(c):
    """``gamma="scale"`` with row weights took the variance in one pass, which lost
    it at 1e9 (the fallback width 1 / D: 0.25 for 0.2509) and 1e-4 of it at 1e6."""
    from kernlearn.widths import scale_gamma

    Z, y, Zt = _data()
    w = np.random.RandomState(2).rand(len(Z)) + 0.5
    np.testing.assert_allclose(scale_gamma(c + Z, w), scale_gamma(Z, w), rtol=1e-7)
    base, far = (K.LowRankKernelRegressor(standardize=False, random_state=0)
                 .fit(s + Z, y, sample_weight=w).predict(s + Zt) for s in (0.0, c))
    assert np.max(np.abs(far - base)) <= 1e-4 * np.ptp(base)


def test_sparse_far_offset_is_warned_of_once_per_fit():
    """Three RBF kernels on one view: one warning, not three."""
    Z = _data()[0]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        KernelList([("rbf", {"gamma": g}) for g in (0.1, 0.5, 1.0)]).fit(sp.csr_matrix(1e9 + Z))
    assert sum("sit far from zero" in str(w.message) for w in rec) == 1
