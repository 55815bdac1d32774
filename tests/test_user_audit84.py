"""Audit 84: a review of loose33 and audit 81 (the thirty-second pass).

Each test names a defect found in the merged code and fails on it:

- the histogram kernels' ``block`` (``kernel_params={"block": -3}``) wrote no
  row of the kernel's uninitialised array: the model was fitted on whatever
  memory held, without a word (``0`` and ``2.5`` stopped on ``range()``'s
  bare errors);
- audit 81's check of ``kernel_params`` values refused a string option of a
  kernel added to ``KERNELS`` (the kernel's own parameter, not a number), and
  let NaN and infinity through to "The kernel is not positive semi-definite"
  (a list as ``gamma``: a bare TypeError), and ``{"degree": -1}`` (refused
  as ``degree=-1``) fitted a non-kernel; and ``LowRankKernel*`` took a
  kernel added to ``KERNELS`` only before its module's first import;
- ``LowRankKernelRegressor(kernel="precomputed", out_of_bounds=...)``: a
  Gram matrix has no input range, the setting changed nothing, and loose33's
  warnings of settings unread beside precomputed kernels did not name it.
"""

import functools
import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import kernlearn as kl
from kernlearn.estimators._renamed import UnusedParameterWarning
from kernlearn.kernels import KERNELS

_RNG = np.random.default_rng(84)
_X = np.abs(_RNG.normal(size=(40, 3)))
_Y = (_X[:, 0] > np.median(_X[:, 0])).astype(int)


@pytest.mark.parametrize("name", ["hik", "additive_chi2"])
@pytest.mark.parametrize("block", [-3, 0, 2.5, True])
def test_histogram_kernel_block_must_be_a_positive_integer(name, block):
    with pytest.raises(ValueError, match=r"block must be a positive integer.*got"):
        KERNELS[name](_X, _X, block=block)


def test_histogram_kernel_block_of_any_positive_size_is_the_same_kernel():
    full = KERNELS["hik"](_X, _X)
    assert np.array_equal(KERNELS["hik"](_X, _X, block=np.int64(7)), full)
    assert np.array_equal(KERNELS["additive_chi2"](_X, _X, block=1),
                          KERNELS["additive_chi2"](_X, _X))


def test_low_rank_kernel_params_block_is_refused_not_fitted_on_garbage():
    est = kl.LowRankKernelClassifier(kernel="hik", kernel_params={"block": -3},
                                     random_state=0, max_iter=5)
    with pytest.raises(ValueError, match=r"kernel_params\['block'\] must be a positive integer"):
        est.fit(_X, _Y)


def _option_kernel(X, Y, mode="dot", scale=1.0):
    K = X @ Y.T
    return scale * (K if mode == "dot" else (K + 1.0) ** 2)


def test_added_kernel_takes_its_own_non_numeric_option(monkeypatch):
    # audit 81 refused every kernel_params value that is not a number, of any
    # kernel named in KERNELS: a kernel added there with a string option was
    # refused ("kernel_params['mode'] must be a number"), where
    # PNormMKLClassifier took it; and the name itself was refused once the
    # estimator's module had been imported ("must be a str among {...}")
    kl.LowRankKernelClassifier(kernel="linear", max_iter=5).fit(_X, _Y)  # (imported)
    monkeypatch.setitem(KERNELS, "option_kernel", _option_kernel)
    with threadpool_limits(1):
        a = kl.LowRankKernelClassifier(kernel="option_kernel", kernel_params={"mode": "square"},
                                       random_state=0, max_iter=5).fit(_X, _Y)
        b = kl.LowRankKernelClassifier(kernel=functools.partial(_option_kernel, mode="square"),
                                       random_state=0, max_iter=5).fit(_X, _Y)
    assert np.array_equal(a.decision_function(_X), b.decision_function(_X))
    # its numeric parameter (a number by default) is still checked
    with pytest.raises(ValueError, match=r"kernel_params\['scale'\] must be a number for "
                                         r"kernel 'option_kernel'"):
        kl.LowRankKernelClassifier(kernel="option_kernel", kernel_params={"scale": "2"},
                                   random_state=0).fit(_X, _Y)


@pytest.mark.parametrize("kernel, params", [("poly", {"degree": float("nan")}),
                                            ("poly", {"coef0": float("inf")}),
                                            ("hik", {"beta": float("nan")}),
                                            ("rbf", {"gamma": float("nan")}),
                                            ("rbf", {"gamma": [1.0]})], ids=repr)
def test_low_rank_kernel_params_value_not_finite(kernel, params):
    # a NaN reached the kernel: "The kernel is not positive semi-definite:
    # k(x_m, x_m) < 0", naming neither the value nor where it was given; a
    # list as gamma stopped on "'<=' not supported between 'list' and 'int'"
    (name, value), = params.items()
    est = kl.LowRankKernelRegressor(kernel=kernel, kernel_params=params, n_columns=8,
                                    random_state=0)
    with pytest.raises(ValueError, match=rf"kernel_params\['{name}'\] must be a number "
                                         rf"for kernel '{kernel}', got .* \(a finite number"):
        est.fit(_X, _X[:, 0])


def test_low_rank_out_of_bounds_beside_a_gram_matrix_is_named():
    # loose33 named the settings unread beside precomputed kernels; the
    # regressor's out_of_bounds was not: a Gram matrix has no input range
    # (x_range_ is None), and "raise" refused nothing, the model unchanged
    K = _X @ _X.T
    Kt = 5.0 * K[:7]  # (beyond any training value)
    with threadpool_limits(1):
        ref = kl.LowRankKernelRegressor(kernel="precomputed", random_state=0).fit(K, _X[:, 0])
        for mode in ("raise", "clip", "extend"):
            est = kl.LowRankKernelRegressor(kernel="precomputed", out_of_bounds=mode,
                                            random_state=0)
            with pytest.warns(UnusedParameterWarning,
                              match=rf"out_of_bounds='{mode}' not used with "
                                    r"kernel='precomputed'; a Gram matrix has no input "
                                    r"range"):
                est.fit(K, _X[:, 0])
            assert est.x_range_ is None
            assert np.array_equal(est.predict(Kt), ref.predict(Kt))
            assert np.array_equal(est.dual_coef_, ref.dual_coef_)
    with warnings.catch_warnings():  # (at its default: no word)
        warnings.simplefilter("error", UnusedParameterWarning)
        kl.LowRankKernelRegressor(kernel="precomputed", random_state=0).fit(K, _X[:, 0])


def test_low_rank_kernel_params_degree_as_the_estimators_degree():
    # degree=-1 is refused by the estimator's parameter check; the same value
    # in kernel_params fitted (x'y + 1)^-1, not a kernel, without a word
    with pytest.raises(ValueError, match="degree"):
        kl.LowRankKernelRegressor(kernel="poly", degree=-1).fit(_X, _X[:, 0])
    # (audit 89: the kernel lists' rule and message, kernlearn/_kernel_rules.py)
    with pytest.raises(ValueError, match=r"kernel_params\['degree'\] must be a non-negative "
                                         r"integer for kernel 'poly' .*got -1"):
        kl.LowRankKernelRegressor(kernel="poly", kernel_params={"degree": -1},
                                  random_state=0).fit(_X, _X[:, 0])
