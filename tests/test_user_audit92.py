"""Audit 92: a review of audits 88-90's merges.

The ``additive_chi2``/``hik`` hint on negative values read a module-level
context variable that the last ``standardize_fit`` set: a direct kernel call
or kernel list after an estimator's fit was told of that fit's
``standardize``.  The hint now comes from the fit itself (explicit argument).
"""

import warnings

import numpy as np
import pytest

from kernlearn import LowRankKernelRegressor, PNormMKLClassifier
from kernlearn.kernels import KernelList, additive_chi2_kernel


@pytest.fixture
def data():
    rng = np.random.default_rng(92)
    X = rng.random((40, 3))
    return X, X[:, 0] + 0.1 * rng.normal(size=40)


def test_direct_kernel_call_names_no_estimator_setting(data):
    """After a fit with ``standardize=True`` (or none), a direct kernel call
    was told "standardize=True centres the columns": no estimator was there."""
    X, y = data
    LowRankKernelRegressor(kernel="rbf").fit(X, y)  # (standardize=True)
    with pytest.raises(ValueError) as err:
        additive_chi2_kernel(X - 0.5, X)
    assert "standardize" not in str(err.value)
    assert "negative values" in str(err.value)


def test_kernel_list_after_a_fit_names_no_estimator_setting(data):
    """A kernel list fitted by itself took the last estimator fit's hint."""
    X, y = data
    PNormMKLClassifier(kernels=["rbf"]).fit(X, (y > y.mean()).astype(int))
    with pytest.raises(ValueError) as err:
        KernelList(["additive_chi2"]).fit(X - 0.5)
    assert "standardize" not in str(err.value)
    assert "negative values" in str(err.value)


def test_low_rank_hik_warns_of_negative_columns(data):
    """The kernel lists warn that ``hik`` sees negative values (x and -x look
    alike); the low-rank estimators fitted them without a word.  (Since the
    thirty-sixth pass the histogram kernels see the columns scaled, never
    centred: only the data's own negative values are warned of.)"""
    X, y = data
    with pytest.warns(UserWarning, match="hik sees have negative values.*never centred"):
        LowRankKernelRegressor(kernel="hik").fit(X - 0.5, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (non-negative columns: no warning)
        LowRankKernelRegressor(kernel="hik").fit(X, y)
        LowRankKernelRegressor(kernel="hik", standardize=False).fit(X, y)
