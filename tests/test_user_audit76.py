"""Audit 76: randomised invariants of every public estimator at its defaults.

``benchmarks/fuzz_invariants.py`` drew a few hundred small hostile-but-valid
data sets per estimator (mixed column kinds, float32, sparse with empty rows and
columns, string/bool/negative labels of 2-12 unequal classes, offset and tiny
targets) and checked the library's promises: clear errors, finite outputs of the
right shape and labels, ``predict`` the arg max of the decision values, affine
(dense) and scale (sparse) invariance, weights of ones, zero and integer
weights, repeated fits, a row alone and in a batch, pickle and model files.
The defects it found are pinned here (each test failed before its fix).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor


@pytest.mark.parametrize("Est", [LowRankKernelRegressor, LowRankKernelClassifier])
def test_lowrank_fits_a_sparse_matrix_without_stored_values(Est):
    # a CSR matrix with no stored value (one empty column: the fuzzer's
    # seed 184) hashed its rows for the column sample with
    # ``np.add.reduceat`` of nothing: a bare IndexError from NumPy.  Its rows
    # are the dense zeros', so the model is the dense zeros' model.
    y = np.arange(40) % 3 if Est is LowRankKernelClassifier else np.linspace(-1, 1, 40)
    sparse = Est(random_state=0).fit(sp.csr_matrix((40, 1)), y)
    dense = Est(random_state=0).fit(np.zeros((40, 1)), y)
    out = getattr(sparse, "decision_function", sparse.predict)(sp.csr_matrix((3, 1)))
    ref = getattr(dense, "decision_function", dense.predict)(np.zeros((3, 1)))
    np.testing.assert_allclose(out, ref, rtol=1e-12)
