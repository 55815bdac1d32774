"""A thirty-seventh audit: three loose ends of the parallel and Dask passes.

A data scientist fitted with ``probability=True`` in threads and converted
Dask DataFrames there, predicted FGM on a Dask array holding rows too large
for float64, and read the prediction methods' help.  Platt's folds and the
Dask DataFrame conversion still hid a warning with
``warnings.catch_warnings``, whose filters are the whole process's: two
threads overlapping in it could leave its ignore filter for good.  FGM's
lazy Dask prediction (and its prediction by row blocks with
``memory_budget``) returned ``inf`` decision values, and labels from them,
where the in-memory prediction refuses the row in words.  The help of
``predict`` and its kin did not say that they take Dask input.  Each test
here failed before its fix.
"""

import warnings

import numpy as np
import pytest


def _fgm_and_a_row_too_large(**params):
    from kernlearn import FGMClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    est = FGMClassifier(**params).fit(X, (X[:, 0] + X[:, 1] > 0).astype(int))
    Z = X[:10].copy()
    Z[6] = 1.7e308  # (finite, but its dot product with the weights overflows)
    return est, Z


# ------------------------------------------- FGM's outputs by row blocks
@pytest.mark.parametrize("method", ["decision_function", "predict", "predict_proba"])
@pytest.mark.parametrize("chunks", [4, "unknown"])
def test_fgm_dask_prediction_refuses_overflowing_rows_as_in_memory(method, chunks):
    # the lazy Dask prediction gave inf decision values, and labels from them,
    # under NumPy's overflow warning only; in memory the row is refused
    da = pytest.importorskip("dask.array")
    est, Z = _fgm_and_a_row_too_large(
        **({"loss": "logistic"} if method == "predict_proba" else {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError) as in_memory:
            getattr(est, method)(Z)
        lazy = da.from_array(Z, chunks=(4, 4))
        if chunks == "unknown":  # (the row is then named within its block)
            lazy = lazy[lazy[:, 0] == lazy[:, 0]]
        with pytest.raises(ValueError) as by_blocks:
            getattr(est, method)(lazy).compute()
    expected = str(in_memory.value)
    if chunks == "unknown":
        expected = expected.replace("row 6 of X", "row 2 of row block 1 of X")
    assert str(by_blocks.value) == expected
    assert "row 6 of X" in str(in_memory.value) and "too large" in expected


@pytest.mark.parametrize("method", ["decision_function", "predict"])
def test_fgm_prediction_by_row_blocks_of_a_memory_budget_refuses_them_too(method):
    # with memory_budget the blocks' labels came from inf decision values
    est, Z = _fgm_and_a_row_too_large()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError) as in_memory:
            getattr(est, method)(Z)
        with pytest.raises(ValueError) as by_blocks:
            getattr(est.set_params(memory_budget=1), method)(Z)
    # (the column is named in memory only: the blocks are not kept)
    assert str(by_blocks.value) == str(in_memory.value).replace(
        " (largest in column 0)", "")
