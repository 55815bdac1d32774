"""Audit 105 of the row-block FGM fix (issue 21): what the review found.

The review compared row-block fits with rows of zero weight (ordinary values)
to in-memory fits (dense and CSR, classifier and regressor, ``groups=``,
``refit=True``: equal to 1e-13), counted the new bound warning on normal fits
(none in 431) and timed the NaN screening bound
(``benchmarks/fgm_row_blocks_cost.py``).  It found one defect, older than the
fix: the support-Newton step of the group master solved ``I + N'Y M`` (a
Woodbury correction) with numba's ``solve``, which raises on a singular
system where the code expected a non-finite step, so a one-vs-rest fit by row
blocks at ``tol=1e-10`` stopped with ``LinAlgError``.
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from kernlearn import FGMClassifier


def test_a_singular_woodbury_system_skips_the_newton_step():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 15))
    t = X[:, 0] - X[:, 3] + 0.5 * X[:, 5] + 0.2 * rng.standard_normal(300)
    y = np.digitize(t, np.quantile(t, np.linspace(0, 1, 13)[1:-1]))
    make = lambda **kw: FGMClassifier(B=2, C=1.0, max_iter=10, multiclass="ovr",  # noqa: E731
                                      tol=1e-10, **kw)
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = make().fit(X, y)
        # (before: LinAlgError "Matrix is singular to machine precision")
        got = make(memory_budget="8KB").fit(X, y)
    np.testing.assert_array_equal(got.predict(X), ref.predict(X))
    # (both stop at max_iter; their masters meet inner_tol in another order)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=0, atol=1e-6 * np.abs(ref.coef_).max())
