"""Predictions on many rows: what they copy, and rows scored the same whatever their company.

``benchmarks/predict_cost.py`` times them (BENCHMARKS.md, "Prediction cost per
call"); these tests pin the behaviour the speed-ups rest on, never a time:

- FGM on sparse ``X`` reads the stored entries where they are: the selected
  columns were gathered into a copy (``X[:, selected]``, up to all of ``X``'s
  entries) before the product.
- FGM's decision value of a row depends on that row alone: BLAS's matrix
  product summed a row in an order depending on its position among the rows
  predicted with it, so a row predicted alone (or in a Dask block of another
  size) could differ from the same row in a batch in the last bits.
- The kernel models standardise (and clip) the rows of a prediction block by
  block: the whole ``n x d`` standardised copy of ``X`` was made first.
"""

import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import FGMClassifier, FGMRegressor, InfiniteFeatureRegressor, \
    LowRankKernelRegressor


def _peak(fn, *args):
    """Peak bytes NumPy allocated during ``fn(*args)`` (tracemalloc), and its result."""
    tracemalloc.start()
    try:
        out = fn(*args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, out


def _classification(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_fgm_predicts_sparse_rows_without_copying_their_entries(fmt):
    X, y = _classification(600, 30)
    est = FGMClassifier(B=30).fit(sp.csr_matrix(X), y)
    assert est.selected_features_.size >= 20  # most columns: their copy is most of X
    rng = np.random.default_rng(1)
    big = sp.random(200_000, 30, density=0.5, format=fmt, random_state=rng)
    entries = big.data.nbytes + big.indices.nbytes  # 24 MB
    est.decision_function(big[:5])  # (lazy imports)
    peak, scores = _peak(est.decision_function, big)
    # the scores (1.6 MB) and one product's output at a time; the gathered
    # columns were 15-24 MB
    assert peak < 0.25 * entries, f"peak {peak / 1e6:.1f} MB for {entries / 1e6:.1f} MB of X"
    ref = np.asarray(big[:, est.selected_features_].toarray()
                     @ est.coef_.ravel()[est.selected_features_]) + est.intercept_
    np.testing.assert_allclose(scores, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("make", [FGMClassifier, FGMRegressor])
@pytest.mark.parametrize("sparse", [False, True])
def test_fgm_scores_a_row_the_same_alone_or_among_others(make, sparse):
    rng = np.random.default_rng(3)
    n_classes = 3 if make is FGMClassifier else None
    for d in (7, 13, 29, 45):
        X = rng.standard_normal((150, d)) * 10 ** rng.uniform(-2, 2, d)
        y = (rng.integers(0, n_classes, 150) if n_classes
             else X[:, :5] @ rng.standard_normal(5) + rng.standard_normal(150))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (unconverged on noise: not the point)
            est = make(B=d, max_iter=5, C=10.0).fit(sp.csr_matrix(X) if sparse else X, y)
        Xt = rng.standard_normal((101, d)) * 10 ** rng.uniform(-2, 2, d)
        Xt = sp.csr_matrix(Xt) if sparse else Xt
        score = getattr(est, "decision_function", est.predict)
        whole = score(Xt)
        alone = np.array([score(Xt[i:i + 1])[0] for i in range(Xt.shape[0])])
        in_sevens = np.concatenate([score(Xt[i:i + 7]) for i in range(0, Xt.shape[0], 7)])
        np.testing.assert_array_equal(alone, whole, err_msg=f"d={d}, one row at a time")
        np.testing.assert_array_equal(in_sevens, whole, err_msg=f"d={d}, by 7 rows")
        # Fortran-ordered and float32 rows alike (the float32 ones cast first)
        if not sparse:
            np.testing.assert_array_equal(score(np.asfortranarray(Xt)), whole)
            X32 = Xt.astype(np.float32)
            np.testing.assert_array_equal(
                np.array([score(X32[i:i + 1])[0] for i in range(X32.shape[0])]), score(X32))


@pytest.mark.parametrize("make", [InfiniteFeatureRegressor, LowRankKernelRegressor])
@pytest.mark.parametrize("sparse", [False, True])
def test_kernel_models_standardise_the_rows_by_blocks(make, sparse):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 20)) + 3.0
    y = np.sin(X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(300)
    settings = dict(random_state=0, max_features=10, n_paths=1) \
        if make is InfiniteFeatureRegressor else dict(random_state=0, n_columns=30)
    X = sp.csr_matrix(X * (rng.random(X.shape) < 0.5)) if sparse else X
    est = make(**settings).fit(X, y)
    big = rng.standard_normal((200_000, 20)) * 1.5 + 3.0  # (some beyond the range: clipped)
    big = sp.random(200_000, 20, density=0.5, format="csr", random_state=rng) if sparse \
        else big
    size = big.data.nbytes + big.indices.nbytes if sparse else big.nbytes
    est.predict(big[:5])
    peak, got = _peak(est.predict, big)
    # the predictions (1.6 MB) and one block's arrays (sparse: 8 blocks mapped at
    # once, about 10 MB); before, the standardised copy of all of X and its
    # clipping's masks and copies: 64 (dense) and 113 MB (sparse)
    bound = 0.75 if sparse else 0.3
    assert peak < bound * size, f"peak {peak / 1e6:.1f} MB for {size / 1e6:.1f} MB of X"
    # the numbers of the whole X standardised (and clipped) at once, bit for bit
    decision = est._decision_function()
    Xt = decision._inputs(big)
    decision.standardization = None  # (Xt is standardised)
    np.testing.assert_array_equal(est._decision_function()(big), decision(Xt))
