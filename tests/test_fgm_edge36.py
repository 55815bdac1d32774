"""FGM at extreme scales (issue 21): no ``LinAlgError`` from the Newton master,
row blocks and Dask partitions equal to the in-memory fit on columns at ``1e9 + 1e-3 z``."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from kernlearn import FGMClassifier, FGMRegressor

# light workers in the test process (the fixture's cluster)
DASK_CLUSTER = dict(processes=False)


def _fit(est, X, y, **kw):
    """Fit under one BLAS thread; the model and its ConvergenceWarnings."""
    with warnings.catch_warnings(record=True) as seen, threadpool_limits(1):
        warnings.simplefilter("always")
        m = est.fit(X, y, **kw)
    return m, [w for w in seen if issubclass(w.category, ConvergenceWarning)]


@pytest.mark.parametrize("seed,C", [(0, 1e60), (1, 1e60), (0, 1e90)])
def test_huge_C_on_separable_data_fits(seed, C):
    # the squared hinge's optimum tends to the hard-margin SVM as C grows (finite);
    # the Newton master's Hessian, 1e60 along the data and 1 along the penalty,
    # rounded to an indefinite matrix: LinAlgError ("singular" or NaN) before
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((60, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    m, conv = _fit(FGMClassifier(C=C, B=2), X, y)
    assert np.all(np.isfinite(m.coef_)) and np.isfinite(m.intercept_).all()
    assert m.score(X, y) == 1.0
    assert m.converged_ or conv  # never "unconverged" without a word


@pytest.mark.parametrize("seed", [0, 2])
def test_no_intercept_far_offset_columns_fit(seed):
    # two columns at 1e9 and one at 1 + 1e-9 z, no intercept: the master's
    # Hessian has curvatures 1e18 apart (singular to machine precision before)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 100))
    X = rng.standard_normal((n, 5))
    X[:, 0] += 1e9
    X[:, 1] += 1e9
    X[:, 2] = 1 + 1e-9 * X[:, 2]
    t = X[:, 3] + rng.standard_normal(n)
    y = np.digitize(t, np.quantile(t, [0.33, 0.66]))
    m, conv = _fit(FGMClassifier(B=2, max_iter=2, C=10.0, fit_intercept=False,
                                 class_weight="balanced", multiclass="shared"), X, y)
    assert np.all(np.isfinite(m.coef_))
    assert m.converged_ or conv


def _offset_data(seed):
    """Three columns at ``1e9 + 1e-3 z`` (offset over spread 1e12) carrying the target."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 120))
    X = rng.standard_normal((n, 6))
    Z = rng.standard_normal((n, 3))
    X[:, :3] = 1e9 + 1e-3 * Z
    y = Z @ [1.0, -2.0, 0.5] + X[:, 3] + 0.1 * rng.standard_normal(n)
    return X, y, rng.uniform(0.2, 3, n)


def _same_model(ref, got):
    np.testing.assert_array_equal(np.sort(got.selected_features_),
                                  np.sort(ref.selected_features_))
    # the routes' documented equality (1e-6 of the largest coefficient); before:
    # 4e-6 to 3e-5 apart (the scaled columns near 1e12 kept a ten-thousandth of
    # their spread); now 1e-8 or closer (the masters' tolerance)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=0,
                               atol=1e-6 * np.abs(ref.coef_).max())
    # (the intercept, ~5e11, cancels terms of ~1e12: digits of the coefficients)
    np.testing.assert_allclose(got.intercept_, ref.intercept_, rtol=1e-6)


@pytest.mark.parametrize("seed", [0, 3, 6])
def test_row_blocks_equal_memory_on_columns_far_from_zero(seed):
    X, y, sw = _offset_data(seed)
    ref, _ = _fit(FGMRegressor(B=3, C=1.0), X, y, sample_weight=sw)
    got, _ = _fit(FGMRegressor(B=3, C=1.0, memory_budget=673), X, y, sample_weight=sw)
    _same_model(ref, got)


@pytest.mark.parametrize("seed", [1, 6])
def test_dask_equals_memory_on_columns_far_from_zero(client, seed):
    da = pytest.importorskip("dask.array")
    X, y, sw = _offset_data(seed)
    ref, _ = _fit(FGMRegressor(B=3, C=1.0), X, y, sample_weight=sw)
    got, _ = _fit(FGMRegressor(B=3, C=1.0), da.from_array(X, chunks=(25, 6)), y,
                  sample_weight=sw)
    _same_model(ref, got)


@pytest.mark.parametrize("sparse", [False, True])
def test_no_intercept_on_a_column_far_from_zero_warns(sparse):
    # a column at 1 + 1e-9 z acts as an intercept along its offset: curvatures
    # ~1e17 apart, coefficients 1e6 apart on 9.7e6 between routes (silent before)
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    X[:, 1] = 1 + 1e-9 * X[:, 1]
    y = X[:, 0] + 1e9 * (X[:, 1] - 1)
    Xi = sp.csr_matrix(X) if sparse else X
    said = {}
    for fit_intercept in (False, True):
        with warnings.catch_warnings(record=True) as seen, threadpool_limits(1):
            warnings.simplefilter("always")
            FGMRegressor(B=2, C=1.0, fit_intercept=fit_intercept).fit(Xi, y)
        said[fit_intercept] = [str(w.message) for w in seen
                               if "without an intercept" in str(w.message)]
    assert said[False] and "fit_intercept=True" in said[False][0]
    assert not said[True]


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_simplemkl_master_at_huge_C_fits(fit_intercept):
    # its SVM Newton system C A'DA + lambda I: lambda below the rounding of the
    # data part at C = 1e60 ("Singular matrix" before; damped now)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    m, conv = _fit(FGMClassifier(C=1e60, B=2, solver="simplemkl",
                                 fit_intercept=fit_intercept), X, y)
    assert np.all(np.isfinite(m.coef_)) and m.score(X, y) == 1.0
    assert m.converged_ or conv
