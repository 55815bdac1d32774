"""A forty-seventh user's audit: stability under harmless changes.

A user changed the input in ways that must not change a model, or only by
rounding -- ``X`` times ``1 + 1e-15``, ``y`` cast from float32 to float64, the
rows or the columns in another order, an exact copy of a column, integer
weights of 2 on every row, one BLAS thread or two -- and measured each
estimator's test outputs (max change over their spread; 160 training rows).
Audit 16 covered seeds, clones, pickles, row subsets and memory layouts; audit
43 found the change of GrFL's predictions under ``X * (1 + 1e-15)``, said to
come "through near-ties in which features are chosen"
(doc/reproducibility.md).

What held (measured on 160 rows of a synthetic set, of ``airfoil`` and of
``diabetes``; documented in doc/reproducibility.md):

- ``y`` as float32 or as the same values in float64, integer weights or the
  same float weights, one thread or two: the same model bit for bit for
  every estimator (SLKL's regressor: threads 2e-12, as documented).
- ``X * (1 + 1e-15)``: at most 3e-15 of the outputs' spread for FGM,
  OBSCURE and the multitask estimators, 1e-10 for SLKL (its smallest ``nu``
  nearly singular); GrFL: see below.
- Columns in another order: the same model to rounding but for GrFL, whose
  candidates draw their frequencies coordinate by coordinate (another
  column order is another seed: 0.05 to 0.16 of the spread; now documented).
- Rows in another order: FGM at a numeric ``C`` and the multitask
  estimators to their tolerance; ``FGMRegressor(C="auto")``'s folds, OBSCURE's
  sampling order, SLKL's columns and GrFL's folds follow the row positions,
  as documented.
- Weights all equal to 2 are the documented rescaling to 3e-16: twice the
  ``C`` for FGM, OBSCURE and the multitask estimators, ``lambda_p /
  sqrt(2)`` for GrFL, and no change for SLKL (its ``nu`` path is tried at
  the weights' scale: 1e-10).
- An exact copy of a column changes every model (a kernel counts the column
  twice; FGM's copy is a feature of its own): not a harmless change.

What was wrong (each test below failed before its fix):

- The root of audit 43's finding: the Anderson extrapolation of the GrFL
  Newton master's inner block coordinate descent took combinations of the
  last sweeps whose coefficients summed, in magnitude, up to 1.5e4 (their
  sum is one).  Such coefficients come from sweeps whose differences are
  nearly parallel, so they follow the differences' rounding; a last-bit
  change of ``X`` moved the extrapolated point by the size of the inner
  solve's remaining error, the masters' margins then differed by 1e-6 within
  a few outer iterations, and a near-tie among candidates or a ``kkt <=
  tol`` test later took another branch.  With the extrapolation switched
  off, 40 fits of four data sets stayed at rounding (3e-15), and in three
  traced fits not one candidate, level or count changed: the choices were
  not ill-posed, the noise fed to them was.  Extrapolations whose
  coefficients' magnitudes sum to more than 100 are now skipped: 100 fits of
  five data sets at most 5e-14 (before: 0.13, 49 of them above 1e-10).
"""

import numpy as np


def _smooth(seed, n=150):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 4))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 / 2 + 0.3 * X[:, 2] + 0.1 * rng.standard_normal(n)
    return X, y


def test_grfl_regressor_predictions_do_not_follow_the_last_bit_of_x():
    # X * (1 + 1e-15) moved the default regressor's predictions by 3e-8,
    # 2.9e-7 and 1.9e-6 of their spread on these three sets (13 % on 300 rows
    # of autompg): the Anderson steps of the master's inner solve amplified the
    # last bits to the solve's own error, and later choices of features
    # followed.  Standardising X times 1 + 1e-15 changes its values by
    # rounding only, so the model may differ by rounding only.
    from kernlearn import InfiniteFeatureRegressor

    for seed in range(3):
        X, y = _smooth(seed)
        Xp = X * (1 + 1e-15)
        a = InfiniteFeatureRegressor(random_state=seed).fit(X, y)
        b = InfiniteFeatureRegressor(random_state=seed).fit(Xp, y)
        pa, pb = a.predict(X), b.predict(Xp)
        assert np.max(np.abs(pa - pb)) / np.ptp(pa) < 1e-12, seed
        assert a.lambda_p_ == b.lambda_p_ and a.max_features_ == b.max_features_


def test_anderson_steps_with_coefficients_set_by_rounding_are_skipped():
    # the inner solve's extrapolation from the last K + 1 sweeps: where the
    # combination needs coefficients whose magnitudes sum to more than
    # _ANDERSON_MAX_COEF (192 here, sweeps of strongly correlated columns) the
    # point and the model gradient R are left as the sweeps left them (before,
    # such steps were taken; on GrFL's masters they reached 1.5e4 and followed
    # the sweeps' rounding)
    from kernlearn.solvers._grfl_newton_kernels import _ANDERSON_MAX_COEF
    from kernlearn.solvers.grfl_newton import _extrapolate

    from test_grfl_newton import anderson_sweeps

    p, T, K = 3, 1, 5
    H, g, W, ws, b, x0, Xh, Rh, _ = anderson_sweeps(np.random.default_rng(0), 0.3, p, K)
    nx = len(x0)
    U = np.diff(Xh, axis=0)
    G = U @ U.T
    z = np.linalg.solve(G + 1e-10 * np.trace(G) * np.eye(K), np.ones(K))
    assert np.abs(z).sum() / abs(z.sum()) > _ANDERSON_MAX_COEF
    R = Rh[K].copy()
    W0, b0, R0 = W.copy(), b.copy(), R.copy()
    _extrapolate(Xh, Rh, x0, np.empty(nx), np.empty((T, p + 1)), g[:p, None].copy(),
                 g[p:].copy(), W, ws, b, R, np.arange(p + 1, dtype=np.int64), 0, 0.0, 0.0,
                 False)
    np.testing.assert_array_equal(W, W0)
    np.testing.assert_array_equal(b, b0)
    np.testing.assert_array_equal(R, R0)
