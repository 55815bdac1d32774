"""A sixth user's audit: the same numbers through FGM's other input paths.

FGM accepts row-partitioned (out-of-core) data and Dask arrays and promises
the model of the plain in-memory dense fit.  A column far from zero (a Unix
time varying by about one) broke that promise on both paths; each test here
failed before its fix.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from kernlearn import FGMClassifier, FGMRegressor
from kernlearn.methods.fgm import fgm_standardization
from kernlearn.partitioned import as_row_partitioned


def _far_offset(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 6))
    t = rng.uniform(0.0, 1.0, n)
    X[:, 0] = 1.7e9 + t  # a Unix time varying by about a second
    y = np.where(t + 0.3 * X[:, 1] > 0.5, 1, 0)
    y_reg = 3 * t + X[:, 1] + 0.1 * rng.standard_normal(n)
    return X, y, y_reg


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


def _same_model(a, b, X):
    np.testing.assert_array_equal(b.selected_features_, a.selected_features_)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(b.history_["objective"], a.history_["objective"], rtol=1e-7)
    pred = b.predict(X)
    pred = np.asarray(pred.compute() if hasattr(pred, "compute") else pred)
    np.testing.assert_allclose(pred, a.predict(np.asarray(X)), rtol=1e-6, atol=1e-6)


def test_row_partitioned_scale_of_a_far_offset_column_is_its_spread(tmp_path):
    # The out-of-core (and Dask) standardisation summed x and x^2 in one pass:
    # E[x^2] - E[x]^2 of a Unix-time column is below the rounding of E[x^2]
    # (~1e3 against a variance of 1/12), so its scale was noise and FGM fitted
    # a far worse model (objective 127 against 69) on other features.
    X, y, y_reg = _far_offset()
    np.save(tmp_path / "X.npy", X)
    mm = np.load(tmp_path / "X.npy", mmap_mode="r")
    w = np.random.default_rng(1).integers(0, 3, len(X)).astype(float)
    for weight in (None, w):
        st = fgm_standardization(as_row_partitioned(mm, "2KB"), weight)
        ww = np.ones(len(X)) if weight is None else weight
        mean = ww @ X / ww.sum()
        spread = np.sqrt(ww @ (X - mean) ** 2 / ww.sum())  # the definition, two-pass
        np.testing.assert_allclose(st.scale, spread, rtol=1e-6)
    for est, target in ((FGMClassifier(B=2, max_iter=4), y),
                        (FGMRegressor(B=2, max_iter=4, C=1.0), y_reg)):
        ref = _fit(est, X, target)
        out = _fit(est.set_params(memory_budget="2KB"), mm, target)
        _same_model(ref, out, X)


def test_dask_master_shifts_a_far_offset_column_as_in_memory(client):
    # The in-memory master shifts active columns far from zero
    # (_fgm_rows.offset_shift); the Dask master did not (its active block is
    # held on the workers), so its Newton master met a Hessian with a
    # condition number ~1e18: accuracy 0.75 against 0.997 in memory.
    da = pytest.importorskip("dask.array")
    X, y, _ = _far_offset()
    est = FGMClassifier(B=2, max_iter=4, standardize=False)
    ref = _fit(est, X, y)
    assert (ref.predict(X) == y).mean() > 0.95
    out = _fit(FGMClassifier(B=2, max_iter=4, standardize=False),
               da.from_array(X, chunks=(100, 6)), y)
    _same_model(ref, out, da.from_array(X, chunks=(100, 6)))


def test_an_empty_dask_partition_fits_the_same_model(client):
    # Rows filtered out of a partition leave an empty chunk; FGM's and GrFL's
    # per-partition work assumed rows and failed on a worker ("cannot reshape
    # array of size 0").  Empty chunks are merged away: the same model.
    da = pytest.importorskip("dask.array")
    from kernlearn import InfiniteFeatureRegressor

    rng = np.random.default_rng(3)
    X = rng.standard_normal((240, 8))
    y = 2 * X[:, 0] - X[:, 2] + 0.1 * rng.standard_normal(240)
    holed = da.from_array(X, chunks=((120, 0, 120), 8))
    ref = _fit(FGMRegressor(B=2, max_iter=3, C=1.0), X, y)
    _same_model(ref, _fit(FGMRegressor(B=2, max_iter=3, C=1.0), holed, y), holed)
    grfl = {"max_features": 6, "n_candidates": 10, "random_state": 0}
    plain = InfiniteFeatureRegressor(**grfl).fit(da.from_array(X, chunks=(120, 8)), y)
    out = InfiniteFeatureRegressor(**grfl).fit(holed, y)
    np.testing.assert_allclose(out.column_coef_, plain.column_coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out.predict(X), plain.predict(X), rtol=1e-10, atol=1e-12)


def test_sparse_far_offset_column_is_scaled_by_its_spread(client):
    # Sparse columns were scaled by one-pass moments, E[x^2] - E[x]^2: a Unix
    # time stored in a CSR matrix got a scale 150 times its spread (noise), in
    # memory, block by block and on a cluster, and FGM fell from 0.99 to 0.78
    # accuracy (GrFL to 0.73).  Squares about the mean (implicit zeros
    # included) are taken in a second pass now, on every path.
    import scipy.sparse as sp

    from kernlearn import InfiniteFeatureClassifier
    from kernlearn.preprocessing import fit_standardization

    da = pytest.importorskip("dask.array")
    X, y, _ = _far_offset(200)
    X[np.random.default_rng(2).random(X.shape) < 0.5] = 0.0
    X[:, 0] = 1.7e9 + np.random.default_rng(3).uniform(0.0, 1.0, len(X))
    y = np.where(X[:, 0] - 1.7e9 + 0.3 * X[:, 1] > 0.5, 1, 0)
    Xs = sp.csr_matrix(X)
    w = np.random.default_rng(1).integers(0, 3, len(X)).astype(float)
    for weight in (None, w):
        ww = np.ones(len(X)) if weight is None else weight
        spread = np.sqrt(ww @ (X - ww @ X / ww.sum()) ** 2 / ww.sum())  # two-pass, dense
        np.testing.assert_allclose(fit_standardization(Xs, weight, True).scale, spread,
                                   rtol=1e-6)
        # FGM's rule on sparse blocks: the measurement column 0 by its spread
        st = fgm_standardization(as_row_partitioned(Xs, "2KB"), weight)
        np.testing.assert_allclose(st.scale[0], spread[0], rtol=1e-6)
    grfl = InfiniteFeatureClassifier(max_features=4, n_candidates=10, random_state=0).fit(
        da.from_array(Xs, chunks=(70, X.shape[1]), asarray=False), y)
    np.testing.assert_allclose(grfl.x_scale_, np.std(X, axis=0), rtol=1e-6)
    dense = _fit(FGMClassifier(), X, y)
    sparse = _fit(FGMClassifier(), Xs, y)
    assert (sparse.predict(Xs) == y).mean() >= (dense.predict(X) == y).mean() - 0.02


@pytest.mark.parametrize("name", ["InfiniteFeatureClassifier", "PNormMKLClassifier",
                                  "LowRankKernelClassifier"])
def test_predict_on_a_dask_array_of_sparse_chunks_is_the_sparse_prediction(name):
    # (NumPy's conversion made such an array a 0-d object array: scikit-learn's
    # "Expected 2D array, got scalar array" with the whole matrix printed)
    da = pytest.importorskip("dask.array")
    import scipy.sparse as sp

    import kernlearn

    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 5))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    est = getattr(kernlearn, name)(random_state=0).fit(sp.csr_matrix(X), y)
    Xd = da.from_array(X, chunks=(40, 5)).map_blocks(sp.csr_matrix)
    np.testing.assert_array_equal(est.predict(Xd), est.predict(sp.csr_matrix(X)))
    np.testing.assert_allclose(est.decision_function(Xd),
                               est.decision_function(sp.csr_matrix(X)))
