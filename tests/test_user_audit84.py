"""Audit 84: a review of loose33 and audit 81 (the thirty-second pass).

Each test names a defect found in the merged code and fails on it:

- the histogram kernels' ``block`` (``kernel_params={"block": -3}``) wrote no
  row of the kernel's uninitialised array: the model was fitted on whatever
  memory held, without a word (``0`` and ``2.5`` stopped on ``range()``'s
  bare errors);
"""

import numpy as np
import pytest

import kernlearn as kl
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
    with pytest.raises(ValueError, match="block must be a positive integer"):
        est.fit(_X, _Y)
