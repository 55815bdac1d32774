"""FGM at extreme scales (issue 21): no ``LinAlgError`` from the Newton master,
row blocks equal to the in-memory fit on columns at ``1e9 + 1e-3 z``."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from kernlearn import FGMClassifier, FGMRegressor


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
