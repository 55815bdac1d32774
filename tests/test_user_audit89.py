"""Audit 89: a review of audit 84 (kernel settings checked against the
kernel's signature, histogram kernels' ``block``) and the merges' mends.

The named kernels' settings follow one rule in the kernel lists and the
low-rank estimators (``kernlearn._kernel_rules``); ``kernel_params`` takes
what a kernel takes; the ``additive_chi2`` hint no longer tells the user to
pass the ``standardize=False`` they set; ``block`` changes no kernel bit.
"""

from fractions import Fraction

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from kernlearn import MultitaskMKLClassifier, PNormMKLClassifier
from kernlearn import kernels as K
from kernlearn.estimators.lowrank import LowRankKernelClassifier, LowRankKernelRegressor
from kernlearn.families.nystrom import kernel_params_for
from kernlearn.kernels import KernelList


@pytest.fixture
def data():
    rng = np.random.default_rng(89)
    X = rng.random((40, 3))
    return X, X[:, 0] + 0.1 * rng.normal(size=40)


# the low-rank path took these where the kernel lists refused them
@pytest.mark.parametrize("kernel, kwargs, kp, name, match", [
    ("poly", {"degree": 2.5}, None, "degree", "degree must be a non-negative integer"),
    ("poly", {"coef0": -1.0}, None, "coef0", "coef0 must be a finite non-negative"),
    ("poly", {}, {"degree": 2.5}, "degree",
     r"kernel_params\['degree'\] must be a non-negative integer"),
    ("poly", {}, {"coef0": -0.5}, "coef0", r"kernel_params\['coef0'\] must be a finite non-negative"),
    ("hik", {}, {"beta": -1.0}, "beta", r"kernel_params\['beta'\] must be a finite positive"),
    ("hik", {}, {"beta": 0}, "beta", r"kernel_params\['beta'\] must be a finite positive"),
    ("rbf", {}, {"gamma": -1.0}, "gamma", r"kernel_params\['gamma'\] must be a positive"),
])
def test_low_rank_refuses_what_the_kernel_lists_refuse(kernel, kwargs, kp, name, match, data):
    X, y = data
    with pytest.raises(ValueError, match=match):
        LowRankKernelRegressor(kernel=kernel, kernel_params=kp, **kwargs).fit(X, y)
    with pytest.raises(ValueError, match=rf"kernels\[0\]: ({kernel} )?{name} must be"):
        KernelList([(kernel, dict(kwargs, **(kp or {})))]).fit(X)


@pytest.mark.parametrize("params", [
    {"degree": 0}, {"degree": 2.0}, {"degree": np.int64(3)},
    {"coef0": np.float32(0.5)}, {"coef0": 0},
])
def test_both_paths_take_psd_polynomials(params, data):
    """A whole degree >= 0 (0: the constant kernel; 2.0: the integer 2) and a
    coef0 >= 0 of any real type, in both paths."""
    X, y = data
    LowRankKernelRegressor(kernel="poly", kernel_params=params, random_state=0).fit(X, y)
    KernelList([("poly", params)]).fit(X)


def test_kernel_params_takes_an_array_where_the_default_is_a_number(data, monkeypatch):
    """Per-column weights of a kernel added to KERNELS were refused as "must
    be a number" (the lists took them); a non-finite entry still is."""
    X, y = data

    def weighted(A, B, w=1.0):
        return (A * w) @ B.T

    monkeypatch.setitem(K.KERNELS, "weighted", weighted)
    w = np.array([1.0, 2.0, 0.5])
    assert kernel_params_for("weighted", kernel_params={"w": w}, X=X)["w"] is w
    LowRankKernelRegressor(kernel="weighted", kernel_params={"w": w}).fit(X, y)
    with pytest.raises(ValueError, match=r"kernel_params\['w'\] must be a number"):
        kernel_params_for("weighted", kernel_params={"w": np.array([1.0, np.nan, 1.0])}, X=X)
    KernelList([("weighted", {"w": w})]).fit(X)


@pytest.mark.parametrize("value", [None, "2", np.nan])
def test_kernel_lists_check_values_against_the_signature_too(value, data, monkeypatch):
    """The lists passed a None, a string or a NaN to a kernel added to KERNELS
    whose parameter is a number: its bare TypeError or a NaN kernel; the
    same check and message as kernel_params."""
    X, y = data

    def scaled(A, B, s=1.0):
        return s * (A @ B.T)

    monkeypatch.setitem(K.KERNELS, "scaled", scaled)
    with pytest.raises(ValueError, match=r"kernels\[0\]: scaled s must be a number for kernel "
                                         r"'scaled', got .* \(a finite number\)"):
        PNormMKLClassifier(kernels=[("scaled", {"s": value})]).fit(X, np.arange(40) % 2)
    with pytest.raises(ValueError, match=r"kernel_params\['s'\] must be a number for kernel "
                                         r"'scaled', got .* \(a finite number\)"):
        LowRankKernelRegressor(kernel="scaled", kernel_params={"s": value}).fit(X, y)


@pytest.mark.parametrize("value", [Fraction(1, 2), 10 ** 400], ids=["fraction", "huge_int"])
def test_a_fraction_or_huge_int_is_a_clear_message(value, data):
    """np.isfinite's bare TypeError ("ufunc 'isfinite' not supported");
    a Fraction would reach the kernel's float arithmetic as an object."""
    X, y = data
    with pytest.raises(ValueError, match=r"kernel_params\['coef0'\] must be a number"):
        LowRankKernelRegressor(kernel="poly", kernel_params={"coef0": value}).fit(X, y)
    with pytest.raises(ValueError, match=r"kernels\[0\]: poly coef0 must be a number"):
        KernelList([("poly", {"coef0": value})]).fit(X)


@pytest.mark.parametrize("make", [
    lambda s: LowRankKernelClassifier(kernel="additive_chi2", standardize=s),
    lambda s: PNormMKLClassifier(kernels=["additive_chi2"], standardize=s),
    lambda s: MultitaskMKLClassifier(kernels=["additive_chi2"], standardize=s),
], ids=["low-rank", "p-norm", "multitask"])
def test_additive_chi2_hint_follows_standardize(make, data):
    """With standardize=False set, the hint said "pass standardize=False"; since
    histogram kernels see the columns scaled, never centred (thirty-sixth pass),
    a negative value is the data's under either setting, and no hint blames
    ``standardize``."""
    X, _ = data
    X = X.copy()
    X[0, 0] = -1.0
    y = np.arange(40) % 2
    kw = {"task_index": np.arange(40) // 20} if "Multitask" in repr(make(True)) else {}
    for standardize in (True, False):
        with pytest.raises(ValueError) as err:
            make(standardize).fit(X, y, **kw)
        assert "pass standardize=False" not in str(err.value)
        assert "negative values as given" in str(err.value)


@pytest.mark.parametrize("kernel", ["hik", "additive_chi2"])
def test_block_changes_no_bit(kernel, data):
    """``block`` is memory only: every block size gives the same kernel bits,
    and the same low-rank model."""
    X, y = data
    ref = K.KERNELS[kernel](X, X[:25])
    for block in (1, 7, 40, 1000):
        assert np.array_equal(K.KERNELS[kernel](X, X[:25], block=block), ref)
    with threadpool_limits(1):  # (additive_chi2: the columns as given, non-negative)
        a, b = (LowRankKernelRegressor(kernel=kernel, kernel_params=kp, standardize=False,
                                       random_state=0).fit(X, y)
                for kp in ({"block": 3}, None))
    assert np.array_equal(a.predict(X), b.predict(X))
