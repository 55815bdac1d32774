"""FGM's standardize=True (issue 21 item 2): invariance, units, sparse never densified."""

import dataclasses
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import FGMClassifier, FGMRegressor
from kernlearn.families import FeaturePool
from kernlearn.losses import get_loss
from kernlearn.methods._result import MethodResult
from kernlearn.methods.fgm import FGMResult, FGMSettings, fit_fgm

TIGHT = dict(inner_tol=1e-12, inner_max_iter=500)


def _data(rng, n=150, p=30):
    X = rng.standard_normal((n, p))
    w = np.zeros(p)
    w[:6] = [3, -2, 2, 1.5, -1, 1]
    return X, X @ w + 0.3 * rng.standard_normal(n)


def _affine(rng, p):
    return rng.uniform(0.01, 100.0, p), rng.uniform(-50, 50, p)


@pytest.mark.parametrize("est", [FGMClassifier(B=3, **TIGHT), FGMRegressor(B=3, **TIGHT)])
def test_dense_predictions_invariant_to_column_affine_maps(rng, est):
    X, t = _data(rng)
    y = np.sign(t) if isinstance(est, FGMClassifier) else t
    a, b = _affine(rng, X.shape[1])
    f = est.fit(X, y)
    ref, sel = (f.decision_function(X) if hasattr(f, "decision_function") else f.predict(X),
                f.selected_features_.copy())
    g = est.fit(a * X + b, y)
    out = g.decision_function(a * X + b) if hasattr(g, "decision_function") else g.predict(a * X + b)
    np.testing.assert_array_equal(g.selected_features_, sel)
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize("est", [FGMClassifier(B=3, **TIGHT), FGMRegressor(B=3, **TIGHT)])
def test_sparse_predictions_invariant_to_column_scaling(rng, est):
    X, t = _data(rng)
    X[np.abs(X) < 0.8] = 0
    y = np.sign(t) if isinstance(est, FGMClassifier) else t
    a, _ = _affine(rng, X.shape[1])
    Xs, Xa = sp.csr_matrix(X), sp.csr_matrix(X * a)
    pred = (lambda m, Z: m.decision_function(Z)) if isinstance(est, FGMClassifier) else \
        (lambda m, Z: m.predict(Z))
    ref = pred(est.fit(Xs, y), Xs)
    out = pred(est.fit(Xa, y), Xa)
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())


def test_regression_targets_are_standardised(rng):
    X, y = _data(rng)
    ref = FGMRegressor(B=3, **TIGHT).fit(X, y).predict(X)
    out = FGMRegressor(B=3, **TIGHT).fit(X, 1000.0 * y + 7.0).predict(X)
    np.testing.assert_allclose(out, 1000.0 * ref + 7.0, rtol=1e-6)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("cls", [FGMClassifier, FGMRegressor])
def test_coefficients_equal_manual_scale_fit_unscale(rng, sparse, cls):
    X, t = _data(rng)
    y = np.sign(t) if cls is FGMClassifier else t
    X = X * rng.uniform(0.1, 10, X.shape[1]) + (0 if sparse else 3.0)
    if sparse:
        X[np.abs(X) < 0.5] = 0
        # columns stored in at least 90 % of the rows are measurements: their
        # spread; the sparser ones their largest value
        measured = (X != 0).mean(0) >= 0.9
        assert measured.any() and not measured.all()
        scale = np.where(measured, X.std(0), np.abs(X).max(0))
        X = sp.csr_matrix(X)
        mean = np.zeros(X.shape[1])
        Xm = X @ sp.diags(1 / scale)
    else:
        mean, scale = X.mean(0), X.std(0)
        Xm = (X - mean) / scale
    # (15 rounds, the default before the thirty-fifth pass: over 21 rounds the
    # two paths of the same problem break a tie between top sets differently)
    kw = dict(TIGHT, max_iter=15)
    auto = cls(B=3, **kw).fit(X, y)
    if cls is FGMRegressor:
        ym, ys = y.mean(), y.std()
        manual = cls(B=3, standardize=False, **kw).fit(Xm, (y - ym) / ys)
        coef = np.ravel(manual.coef_) * ys / scale
        b = manual.intercept_ * ys + ym - coef @ mean
    else:
        manual = cls(B=3, standardize=False, **kw).fit(Xm, y)
        coef = np.ravel(manual.coef_) / scale
        b = manual.intercept_[0] - coef @ mean
    np.testing.assert_allclose(np.ravel(auto.coef_), coef, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.ravel(auto.intercept_)[0], b, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(auto.x_scale_, scale, rtol=1e-12)


def test_feature_scaling_is_a_deprecated_alias(rng):
    X, t = _data(rng)
    y = np.sign(t)
    with pytest.warns(FutureWarning, match="standardize"):
        old = FGMClassifier(B=3, feature_scaling=False).fit(X, y)
    new = FGMClassifier(B=3, standardize=False).fit(X, y)
    np.testing.assert_array_equal(old.coef_, new.coef_)
    assert old.x_scale_ is None


def test_sparse_input_is_never_densified():
    # 400 x 1,000,000 sparse: its dense form is 3.2 GB; the fit must stay far
    # below that (a child process measures its own peak).  A small fit first
    # compiles the numba code (without a cache, LLVM's peak is several hundred
    # MB); the peak is then reset where Linux allows it, so only the fit counts.
    code = textwrap.dedent("""
        import resource, warnings, numpy as np, scipy.sparse as sp
        from kernlearn import FGMClassifier
        rng = np.random.default_rng(0)
        signal = rng.random((400, 5)) * (rng.random((400, 5)) < 0.3)
        nnz = 8000  # (sp.random would draw from all 4e8 positions: 3 GB by itself)
        noise = sp.csr_matrix((rng.random(nnz), (rng.integers(0, 400, nnz),
                               rng.integers(0, 1_000_000, nnz))), shape=(400, 1_000_000))
        X = sp.hstack([sp.csr_matrix(signal), noise], format="csr")
        y = np.where(signal.sum(1) > 0.4, 1, -1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            FGMClassifier(B=3, max_iter=3).fit(X[:, :2000], y)
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            reset = True
        except OSError:
            reset = False
        FGMClassifier(B=3, max_iter=3).fit(X, y)
        hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")] if reset else []
        peak_kb = (int(hwm[0].split()[1]) if hwm
                   else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        print(peak_kb // 1024)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) < 800  # MB; dense would need 3,200


@pytest.mark.parametrize("multiclass", ["shared", "ovr"])
def test_result_object_carries_everything_the_estimator_exposes(rng, multiclass):
    X, t = _data(rng)
    y = np.digitize(t, np.quantile(t, [0.33, 0.66]))
    clf = FGMClassifier(B=3, multiclass=multiclass, standardize=False).fit(X, y)
    res = fit_fgm(X, y, FeaturePool(feature_scaling=False), get_loss("squared_hinge"),
                  FGMSettings(B=3, C=clf.C), n_classes=3, multiclass=multiclass)
    assert isinstance(res, FGMResult) and isinstance(res, MethodResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.coef = None
    np.testing.assert_array_equal(res.coef, clf.coef_)
    np.testing.assert_array_equal(res.intercept, clf.intercept_)
    np.testing.assert_array_equal(res.selected, clf.selected_features_)
    np.testing.assert_array_equal(res.d, clf.d_)
    np.testing.assert_array_equal(res.n_iter, clf.n_iter_)
    assert res.converged == clf.converged_ and res.stop_reason
    hist = res.history if multiclass == "shared" else res.history[0]
    ref = clf.history_ if multiclass == "shared" else clf.history_[0]
    np.testing.assert_array_equal(hist["objective"], ref["objective"])


def _measurements_as_csr(rng):
    # dense measurements with offsets (every entry stored) next to sparse counts
    X = rng.standard_normal((300, 8)) * [1, 10, 0.1, 1, 3, 1, 1, 1] \
        + [2000, 500, 1.5, -40, 0, 5, 5, 5]
    counts = rng.poisson(0.05, size=(300, 4)).astype(float)
    y = (10 * X[:, 2] - 15 + (X[:, 1] - 500) / 10 + counts[:, 0]
         + 0.3 * rng.standard_normal(300) > 0).astype(int)
    return X, counts, y


def test_measurements_in_a_sparse_matrix_fit_as_dense_ones(rng):
    # max-abs scaling is for counts; a column stored in every row scaled by its
    # largest value (mostly its offset) was nearly muted, so the same numbers
    # passed as CSR gave another, worse model (hill-valley 0.742 -> 0.657)
    X, _, y = _measurements_as_csr(rng)
    dense = FGMClassifier().fit(X, y)
    sparse = FGMClassifier().fit(sp.csr_matrix(X), y)
    # (sparse spreads come from one-pass moments: ~1e-9 on a column at 2000 +- 1)
    np.testing.assert_allclose(sparse.x_scale_, X.std(0), rtol=1e-8)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), rtol=1e-6, atol=1e-8)


def test_sparse_rule_is_the_same_in_memory_and_by_row_blocks(rng):
    X, counts, y = _measurements_as_csr(rng)
    Xs = sp.csr_matrix(np.hstack([X, counts]))
    w = rng.uniform(0.0, 2.0, Xs.shape[0])
    w[:20] = 0.0  # rows of zero weight count neither as rows nor as entries
    for sw in (None, w):
        mem = FGMClassifier().fit(Xs, y, sample_weight=sw)
        ooc = FGMClassifier(memory_budget="2KB").fit(Xs, y, sample_weight=sw)
        np.testing.assert_allclose(ooc.x_scale_, mem.x_scale_, rtol=1e-8)
        # the counts keep their largest value, the measurements their spread
        kept = np.ones(Xs.shape[0], bool) if sw is None else sw > 0
        np.testing.assert_allclose(mem.x_scale_[8:], np.abs(counts[kept]).max(0))
        assert np.all(mem.x_scale_[:8] < 0.5 * np.abs(X).max(0))


@pytest.mark.parametrize("cls", [FGMClassifier, FGMRegressor])
def test_offsets_far_beyond_the_spread_fit_as_the_unshifted_data(rng, cls):
    # columns shifted by 1e6 x their spread, one by 1e9 x (data_kinds.py's
    # "offset"): implicit centring through the intercept broke the master solve
    X, t = _data(rng, n=200, p=12)
    y = (t > 0).astype(int) + (t > 2) if cls is FGMClassifier else t
    shift = 1e6 * X.std(axis=0)
    shift[0] = 1e9 * X[:, 0].std()
    ref = cls().fit(X, y)
    far = cls().fit(X + shift, y)
    assert far.x_mean_ == pytest.approx(X.mean(axis=0) + shift, rel=1e-12)
    np.testing.assert_allclose(far.coef_, ref.coef_, rtol=1e-4, atol=1e-6)
    if cls is FGMClassifier:
        np.testing.assert_array_equal(far.predict(X + shift), ref.predict(X))
        np.testing.assert_allclose(far.decision_function(X + shift),
                                   ref.decision_function(X), atol=1e-3)
    else:
        np.testing.assert_allclose(far.predict(X + shift), ref.predict(X), atol=1e-3)
