"""Audit 67: a hostile review of the twenty-seventh pass's merges.

Each test fails on the code as merged and passes with its fix.
"""


import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn.widths import pairwise_spread_ratio


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_spread_ratio_of_integer_and_boolean_sparse_rows(dtype):
    """``pairwise_spread_ratio`` (public in ``kernlearn.widths``) of an integer
    or boolean sparse matrix is that of the same rows as floats.  A boolean
    one's inner products were logical (1 for any overlap): a wrong ratio, 0.97
    for 1.10 here; and the in-place doubling of the inner products (this
    pass's low-rank speed-up) raised NumPy's UFuncTypeError ("Cannot cast
    ufunc 'multiply' output") on integer ones too."""
    X = np.random.default_rng(0).poisson(1.0, size=(60, 5)).astype(dtype)
    want = pairwise_spread_ratio(sp.csr_matrix(X.astype(float)))
    got = pairwise_spread_ratio(sp.csr_matrix(X))
    assert got == pytest.approx(want, rel=1e-12)
    assert got != 1.0  # (a spread, not the ratio of a zero median)
