"""A fifth user's audit: the estimators as a demanding data scientist uses them.

Silent wrong results and unhelpful errors found by probing the estimators with
scikit-learn's meta-estimators, unusual containers and dtypes, and awkward
numbers, each fixed and pinned here (every test failed before its fix).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression

from kernlearn import FGMClassifier, FGMRegressor


def _classification(n=120, p=6, seed=0):
    return make_classification(n, p, n_informative=3, n_redundant=0,
                               n_clusters_per_class=1, random_state=seed)


# ------------------------------------------------- sparse storage, same numbers
@pytest.mark.parametrize("Est", [FGMClassifier, FGMRegressor])
def test_explicitly_stored_zeros_do_not_change_the_model(Est):
    # FGM scales a sparse column by its largest |x| unless it holds a value in
    # 90 % of the rows (a measurement).  The count was of *stored* entries, so
    # the same matrix with its zeros stored (built from triplets, or values
    # zeroed in place) made column 0 a measurement and fitted another model.
    if Est is FGMClassifier:
        X, y = _classification()
    else:
        X, y = make_regression(120, 6, n_informative=3, noise=1.0, random_state=0)
    X = X.copy()
    X[:, 0] = np.where(np.arange(len(X)) % 2 == 0, X[:, 0] + 10.0, 0.0)  # half zeros
    X[:, 1:] = np.where(np.abs(X[:, 1:]) > 0.8, X[:, 1:], 0.0)
    plain = sp.csr_matrix(X)
    stored = sp.csr_matrix(np.where(X == 0, 1.0, X))
    stored.data[stored.data == 1.0] = 0.0  # every entry stored, the same numbers
    assert stored.nnz == X.size and plain.nnz < X.size
    np.testing.assert_array_equal(stored.toarray(), X)
    out = "decision_function" if Est is FGMClassifier else "predict"
    a = getattr(Est(B=3).fit(stored, y), out)(plain)
    b = getattr(Est(B=3).fit(plain, y), out)(plain)
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_column_nonzeros_counts_values_not_storage():
    from kernlearn.methods._fgm_rows import block_stored
    from kernlearn.preprocessing import column_nonzeros

    # duplicates summing to zero, an explicit zero, a duplicate pair summing to 3
    X = sp.csr_matrix((np.array([1.0, -1.0, 0.0, 1.0, 2.0, 4.0]), np.array([0, 0, 1, 2, 2, 1]),
                       np.array([0, 2, 3, 5, 6])), shape=(4, 3))
    assert not X.has_canonical_format
    np.testing.assert_array_equal(column_nonzeros(X), [0, 1, 1])
    assert X.nnz == 6 and not X.has_canonical_format  # the caller's matrix is untouched
    # the out-of-core / cluster pass counts the same way (weights drop row 3)
    np.testing.assert_array_equal(block_stored(X, np.array([1.0, 1.0, 1.0, 0.0])),
                                  [[0, 0, 1, 3]])
