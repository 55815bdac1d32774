"""Audit 95: the fits on a Dask cluster, drawn at random (``benchmarks/fuzz_dask.py``).

Random cases (data kinds, partitionings, weights, classes, options) were fitted
on a ``distributed.LocalCluster`` and compared with the same fits in memory.
Each test here failed before its fix:

* the targets of rows of zero weight (which a fit by row blocks keeps and
  skips) were standardised with the others: one near 1e308 overflowed, with
  NumPy's bare ``RuntimeWarning`` (from a worker for a Dask ``y``, from the
  client for a NumPy ``y`` beside a Dask ``X``) where the in-memory fit, which
  removes such rows, says nothing;
* with a Dask ``y``, the standardisation's deviation of a removed target from
  the mean was computed (and discarded): a removed target of the other sign
  than a mean near 1e308 overflowed, with NumPy's warning from the worker;
* a Dask ``y`` of targets near 1e-300 had its squares underflow: the target
  scale was 0 (the model all zeros, with "divide by zero" warnings from the
  workers) where the in-memory fit recomputes the spread from the scaled
  deviations;
* a NaN or infinite regression target of a fit by row blocks (a Dask ``y``,
  or a NumPy ``y`` beside a Dask ``X`` or with ``memory_budget``) was refused
  with "y contains NaN or infinity" alone, where the in-memory fit names its
  first row and their count;
* FGM on CSR blocks (Dask partitions or ``memory_budget`` chunks) with a
  row of zero weight holding a value near 1e300 squared it for the pool's
  weighted column norms: NumPy's bare "overflow encountered in square" and
  "invalid value encountered in multiply" (inf * 0), where the in-memory fit
  removes the row (the dense blocks said nothing);
* GrFL on CSR partitions whose columns sit at an offset over 1e6 times their
  spread fitted without the in-memory fit's warning that a sparse container
  cannot centre them exactly.
"""

import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import scipy.sparse as sp

from kernlearn import FGMClassifier, FGMRegressor, InfiniteFeatureClassifier

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

# light workers in this process: their warnings reach the test's record
DASK_CLUSTER = dict(processes=False)
N, CHUNK = 200, 50


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 5))
    return X, X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.standard_normal(N)


def _fit(X, y, sample_weight=None):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with threadpool_limits(1):
            model = FGMRegressor(B=2, max_iter=3, C=1.0).fit(X, y, sample_weight=sample_weight)
    bare = [f"{w.message} ({w.filename})" for w in seen if w.category is RuntimeWarning]
    return model, bare


def _same(a, b):
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_allclose(b.y_mean_, a.y_mean_, rtol=1e-12)
    np.testing.assert_allclose(b.y_scale_, a.y_scale_, rtol=1e-12)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-7, atol=1e-9 * np.abs(a.coef_).max())
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-7)


@pytest.mark.parametrize("dask_y", [False, True], ids=["numpy_y", "dask_y"])
def test_removed_rows_far_targets_fit_without_a_bare_warning(client, dask_y):
    X, y = _data()
    y = 0.1 * y  # (a spread under 1: a far target divided by it overflows)
    sw = np.ones(N)
    sw[::7] = 0.0
    y[::7] = 1.7e308  # (rows of zero weight: never read by the fit)
    ref, bare_ref = _fit(X, y, sw)
    assert bare_ref == []
    yd = da.from_array(y, chunks=CHUNK) if dask_y else y
    got, bare = _fit(da.from_array(X, chunks=CHUNK), yd, sw)
    # (on main: "overflow encountered in divide" from the target map)
    assert bare == []
    _same(ref, got)


def test_dask_target_deviation_of_a_removed_row_does_not_overflow(client):
    X, _ = _data()
    y = np.full(N, 1.5e308)  # a constant target near the top of float64
    sw = np.full(N, 1e-3)  # (small weights: the weighted sum does not overflow)
    sw[3::10] = 0.0
    y[3::10] = -1.5e308  # removed rows of the other sign
    ref, _ = _fit(X, y, sw)
    got, bare = _fit(da.from_array(X, chunks=CHUNK), da.from_array(y, chunks=CHUNK), sw)
    # (on main: "overflow encountered in subtract" from the worker)
    assert bare == []
    np.testing.assert_array_equal([got.y_mean_, got.y_scale_], [ref.y_mean_, ref.y_scale_])


def test_tiny_dask_targets_are_standardised_as_in_memory(client):
    X, y = _data(1)
    y = 1e-300 * y  # squares underflow: the spread is recomputed scaled
    ref, _ = _fit(X, y)
    got, bare = _fit(da.from_array(X, chunks=CHUNK), da.from_array(y, chunks=CHUNK))
    # (on main: y_scale_ 0, coef_ all zeros, "divide by zero" on the workers)
    assert bare == []
    assert np.abs(ref.coef_).max() > 0
    _same(ref, got)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("how", ["dask_y", "numpy_y", "memory_budget"])
def test_a_non_finite_target_is_named_by_its_row(client, bad, how):
    X, y = _data()
    y[[57, 120]] = bad
    with pytest.raises(ValueError) as want:
        FGMRegressor(C=1.0).fit(X, y)
    assert "row 57 (2 rows" in str(want.value)
    Xd = X if how == "memory_budget" else da.from_array(X, chunks=CHUNK)
    yd = da.from_array(y, chunks=CHUNK) if how == "dask_y" else y
    est = FGMRegressor(C=1.0, memory_budget="8KB" if how == "memory_budget" else None)
    # (on main: "y contains NaN or infinity.")
    with pytest.raises(ValueError) as got:
        est.fit(Xd, yd)
    assert str(got.value) == str(want.value)


def test_grfl_on_far_sparse_columns_warns_as_in_memory(client):
    X, y = _data(2)
    X = sp.csr_matrix(X + np.array([0.0, 3e7, 0.0, 0.0, 0.0]))
    y = np.where(y > 0, "yes", "no")
    kw = dict(max_features=2, n_candidates=5, random_state=0)
    with pytest.warns(UserWarning, match=r"sparse and its column\(s\) \[1\] hold an offset"):
        InfiniteFeatureClassifier(**kw).fit(X, y)
    # (on main: no warning on the cluster)
    with pytest.warns(UserWarning, match=r"sparse and its column\(s\) \[1\] hold an offset"):
        InfiniteFeatureClassifier(**kw).fit(da.from_array(X, chunks=(CHUNK, 5), asarray=False), y)


@pytest.mark.parametrize("how", ["dask", "memory_budget"])
def test_sparse_blocks_leave_a_far_removed_row_out_of_the_column_norms(client, how):
    X, y = _data(3)
    y = np.where(y > 0, 1, 0)
    sw = np.ones(N)
    sw[::9] = 0.0
    X[::9, 2] = 1e300  # (rows of zero weight: removed in memory)
    ref = FGMClassifier(B=2, max_iter=3).fit(X, y, sample_weight=sw)
    Xs = sp.csr_matrix(X)
    Xin = da.from_array(Xs, chunks=(CHUNK, 5), asarray=False) if how == "dask" else Xs
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = FGMClassifier(B=2, max_iter=3, memory_budget=None if how == "dask" else "8KB"
                            ).fit(Xin, y, sample_weight=sw)
    # (on main: "overflow encountered in square" from partitioned.py)
    assert [str(w.message) for w in seen if w.category is RuntimeWarning] == []
    np.testing.assert_array_equal(got.selected_features_, ref.selected_features_)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-8, atol=1e-12)
