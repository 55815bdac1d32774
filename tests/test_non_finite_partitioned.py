"""A NaN or infinity in row-partitioned X (a Dask cluster, out of core) is named
by its row over all of X and its column, in the in-memory fit's words.

The partitioned fits said "X contains NaN or infinity (2 entries)", naming no
row; the in-memory fit named the first one's row and column.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import FGMClassifier, FGMRegressor, InfiniteFeatureClassifier
from kernlearn.utils._finite import (block_first_non_finite, first_non_finite,
                                     first_non_finite_of_blocks, non_finite_message)

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")


def _data(n=40, d=4):
    X = np.random.default_rng(0).standard_normal((n, d))
    # partitions of 10 rows: the first bad value is local row 3 of the third
    X[23, 1] = np.nan
    X[31, 3] = np.inf
    return X, np.where(np.arange(n) % 2, 1, -1)


FIRST = r"X has a missing value \(NaN\) at row 23, column 1 \(2 in all\); "


def test_in_memory_words_are_the_shared_ones():
    X, y = _data()
    with pytest.raises(ValueError) as info:
        FGMClassifier().fit(X, y)
    assert str(info.value) == non_finite_message(first_non_finite(X), "FGMClassifier")


@pytest.mark.parametrize("standardize", [True, False])
def test_fgm_on_the_cluster_names_the_row(client, standardize):
    # (standardize=False: the check runs in the column norms of the pool)
    X, y = _data()
    with pytest.raises(ValueError, match=FIRST + "the fit needs a finite number"):
        FGMClassifier(standardize=standardize).fit(da.from_array(X, chunks=(10, 4)), y)


def test_grfl_on_the_cluster_names_the_row(client):
    X, y = _data()
    X[23, 1] = 0.0  # the first is now the infinity
    with pytest.raises(ValueError, match=r"an infinite value \(inf\) at row 31, column 3 "
                                         r"\(1 in all\)"):
        InfiniteFeatureClassifier(max_features=2).fit(da.from_array(X, chunks=(10, 4)), y)


def test_sparse_partitions_name_the_row(client):
    X, y = _data()
    Xs = sp.csr_matrix(X)
    with pytest.raises(ValueError, match=FIRST):
        FGMRegressor(C=1.0).fit(da.from_array(Xs, chunks=(10, 4), asarray=False),
                                y.astype(float))


def test_out_of_core_blocks_name_the_row():
    X, y = _data()
    with pytest.raises(ValueError, match=FIRST):
        FGMClassifier(memory_budget="1KB").fit(X, y)


def test_blocks_combine_to_the_whole_matrix_search():
    X, _ = _data()
    X[5, 0] = -np.inf
    bounds = [0, 7, 19, 40]
    parts = np.vstack([block_first_non_finite(X[a:b]) for a, b in zip(bounds, bounds[1:])])
    assert first_non_finite_of_blocks(parts, bounds) == (5, 0, -np.inf, 3)
    assert first_non_finite_of_blocks(block_first_non_finite(np.ones((3, 2))), [0, 3]) is None
