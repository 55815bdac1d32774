"""The kernel regressors predict on inputs clipped to their training range.

An RBF model's prediction falls back to its intercept away from the training
rows and a random Fourier feature oscillates there, so a test row beyond the
range of a column (one income 2.1 times the largest seen on ``engel``) was
predicted far worse than by the edge of the fitted function: that row alone
made seed 0's MSE 1.16x / 1.41x the baseline's (BENCHMARKS.md, "Test rows
beyond the training range").  Before, the prediction at a far-out input
differed from the one at the edge (the tests below failed on it).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import (
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
)

REGRESSORS = [
    (InfiniteFeatureRegressor, dict(max_features=20, n_candidates=20, random_state=0)),
    (LowRankKernelRegressor, dict(random_state=0)),
]


def _linear_1d(n=120, seed=0):
    """A near-linear 1-D truth seen on [0, 3]."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 3.0, (n, 1))
    return X, 2.0 * X[:, 0] + 0.1 * rng.standard_normal(n)


@pytest.mark.parametrize("cls, kw", REGRESSORS)
def test_far_input_is_predicted_as_the_edge_not_the_intercept(cls, kw):
    X, y = _linear_1d()
    model = cls(**kw).fit(X, y)
    edge, far = model.predict([[X.max()]]), model.predict([[2.1 * X.max()]])
    assert abs(edge[0] - 2.0 * X.max()) < 0.5  # (the fit is right at the edge)
    # before: the low-rank model fell towards its intercept, the Fourier one went on
    # (here near the linear truth 12.6: clipping gives up such luck for a bounded guess)
    np.testing.assert_array_equal(far, edge)
    below = model.predict([[X.min() - 5.0]])
    np.testing.assert_array_equal(below, model.predict([[X.min()]]))
    np.testing.assert_array_equal(model.x_range_, [[X.min()], [X.max()]])


@pytest.mark.parametrize("cls, kw", REGRESSORS)
def test_rows_inside_the_range_are_not_changed(cls, kw):
    X, y = _linear_1d()
    model = cls(**kw).fit(X, y)
    inside = model.predict(X)
    del model.x_range_  # a model file written before the range was recorded
    np.testing.assert_array_equal(model.predict(X), inside)
    assert not np.array_equal(model.predict([[6.3]]), model.predict([[3.0]]))


@pytest.mark.parametrize("cls, kw", REGRESSORS)
def test_zero_weight_rows_do_not_widen_the_range(cls, kw):
    X, y = _linear_1d()
    Xw, yw = np.r_[X, [[9.0]]], np.r_[y, 0.0]  # a far row, weight zero: removed
    w = np.r_[np.ones(len(y)), 0.0]
    model = cls(**kw).fit(Xw, yw, sample_weight=w)
    np.testing.assert_array_equal(model.predict([[9.0]]), model.predict([[X.max()]]))
    np.testing.assert_array_equal(model.x_range_, [[X.min()], [X.max()]])


@pytest.mark.parametrize("cls, kw", REGRESSORS)
def test_sparse_input_is_clipped_as_dense(cls, kw):
    """A sparse column with no zero in training: its implicit zeros lie outside the range."""
    rng = np.random.default_rng(1)
    X = np.c_[rng.uniform(1.0, 2.0, 150), np.where(rng.random(150) < 0.5, 0.0,
                                                   rng.standard_normal(150))]
    y = X[:, 0] + X[:, 1] + 0.1 * rng.standard_normal(150)
    new = np.array([[0.0, 0.0], [5.0, -7.0], [1.5, 0.3], [0.0, 4.0]])
    dense = cls(**kw).fit(X, y)
    sparse = cls(**kw).fit(sp.csr_matrix(X), y)
    clipped = np.clip(new, X.min(axis=0), X.max(axis=0))
    for fmt in ("csr", "csc"):
        Xs = sp.csr_matrix(new).asformat(fmt)
        np.testing.assert_allclose(sparse.predict(Xs), sparse.predict(clipped),
                                   rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dense.predict(new), dense.predict(clipped), rtol=0, atol=0)
    np.testing.assert_allclose(sparse.x_range_, dense.x_range_)


@pytest.mark.parametrize("cls", [InfiniteFeatureClassifier, LowRankKernelClassifier])
def test_classifiers_are_not_clipped(cls):
    X, y = _linear_1d()
    model = cls(random_state=0).fit(X, (y > 3.0).astype(int))
    assert not hasattr(model, "x_range_")


def test_the_range_of_row_blocks_is_the_range_of_their_rows():
    # a fit on a cluster reduces the range block by block (sparse blocks: their
    # implicit zeros count; a block without rows adds nothing)
    from kernlearn._partitioned_linear import block_column_range, combined_ranges

    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 4)) + 5.0
    X[:, 2] = np.where(rng.random(30) < 0.7, 0.0, X[:, 2])
    for A in (X, sp.csr_matrix(X)):
        parts = [block_column_range(A[i:j]) for i, j in ((0, 7), (7, 7), (7, 30))]
        assert parts[1] is None
        np.testing.assert_array_equal(combined_ranges(parts),
                                      np.vstack([X.min(axis=0), X.max(axis=0)]))
