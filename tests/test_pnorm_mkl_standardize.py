"""PNormMKLClassifier's standardize step (issue 21): invariance to column
scales and shifts, sparse input never densified, equality with a manual
scale-then-fit, and the result object carrying every fitted attribute."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from kernlearn import PNormMKLClassifier
from kernlearn.methods import obscure


def _data(n_classes=2, seed=0):
    X, y = make_classification(160, 6, n_informative=4, n_classes=n_classes,
                               random_state=seed)
    return X[:120], y[:120], X[120:]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_same_model_on_affinely_rescaled_columns(n_classes):
    X, y, Xt = _data(n_classes)
    rng = np.random.default_rng(1)
    a = np.exp(rng.uniform(-4, 6, size=X.shape[1]))  # scales 0.02 .. 400
    b = rng.normal(scale=100, size=X.shape[1])
    ref = PNormMKLClassifier(random_state=0).fit(X, y)
    moved = PNormMKLClassifier(random_state=0).fit(a * X + b, y)
    np.testing.assert_allclose(moved.decision_function(a * Xt + b),
                               ref.decision_function(Xt), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(moved.kernel_weights_, ref.kernel_weights_, rtol=1e-6)


def test_same_model_on_rescaled_sparse_columns():
    rng = np.random.default_rng(0)
    X = sp.random(150, 30, density=0.2, random_state=1, format="csr")
    y = (np.asarray(X[:, :10].sum(axis=1)).ravel() > 0.9).astype(int)
    a = np.exp(rng.uniform(-3, 5, size=30))
    Xa = sp.csr_matrix(X @ sp.diags(a))
    ref = PNormMKLClassifier(random_state=0).fit(X, y)
    scaled = PNormMKLClassifier(random_state=0).fit(Xa, y)
    np.testing.assert_allclose(scaled.decision_function(Xa[:40]),
                               ref.decision_function(X[:40]), rtol=1e-6, atol=1e-8)
    assert ref.x_mean_ is None  # sparse columns are scaled, not centred


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_sparse_input_is_never_densified(monkeypatch):
    X = sp.random(200, 5000, density=0.002, random_state=0, format="csr")
    y = np.arange(200) % 2

    def refuse(self, *args, **kwargs):
        raise AssertionError("sparse input was densified")

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
    with pytest.raises(AssertionError, match="densified"):
        X.toarray()  # the trap is set
    clf = PNormMKLClassifier(random_state=0, max_iter=20).fit(X, y)
    assert clf.decision_function(X[:10]).shape == (10,)


def test_equals_manual_scaling_then_fit_without_standardize():
    X, y, Xt = _data(3, seed=2)
    X = X * np.array([1e-3, 1.0, 1e3, 5.0, 1e2, 0.1]) + 7.0
    Xt = Xt * np.array([1e-3, 1.0, 1e3, 5.0, 1e2, 0.1]) + 7.0
    sc = StandardScaler().fit(X)
    auto = PNormMKLClassifier(random_state=0).fit(X, y)
    manual = PNormMKLClassifier(random_state=0, standardize=False)
    manual.fit(sc.transform(X), y)
    np.testing.assert_allclose(auto.x_mean_, sc.mean_, rtol=1e-12)
    np.testing.assert_allclose(auto.x_scale_, sc.scale_, rtol=1e-12)
    np.testing.assert_array_equal(auto.support_, manual.support_)
    np.testing.assert_allclose(auto.kernel_weights_, manual.kernel_weights_, rtol=1e-8)
    np.testing.assert_allclose(auto.dual_coef_, manual.dual_coef_, rtol=1e-8,
                               atol=1e-12)
    np.testing.assert_allclose(auto.decision_function(Xt),
                               manual.decision_function(sc.transform(Xt)), rtol=1e-8,
                               atol=1e-10)


def test_precomputed_kernels_are_used_as_given():
    X, y, _ = _data()
    K = X @ X.T
    a = PNormMKLClassifier(kernels="precomputed", random_state=0).fit([K], y)
    b = PNormMKLClassifier(kernels="precomputed", random_state=0, standardize=False).fit(
        [K], y)
    assert a.x_mean_ is None and a.x_scale_ is None
    np.testing.assert_array_equal(a.decision_function([K[:5]]),
                                  b.decision_function([K[:5]]))


def test_result_object_carries_every_fitted_attribute():
    X, y, _ = _data(3)
    clf = PNormMKLClassifier(random_state=0).fit(X, y)
    klist = obscure.kernel_list(StandardScaler().fit_transform(X))
    res = obscure.fit_obscure(klist, y, random_state=0)
    assert isinstance(res, obscure.MethodResult)
    with pytest.raises(AttributeError):
        res.n_iter = 0  # frozen
    for attr, field in [("classes_", "classes"), ("kernel_weights_", "kernel_weights"),
                        ("support_", "support"), ("dual_coef_", "dual_coef"), ("R_", "R"),
                        ("n_iter_", "n_iter")]:
        np.testing.assert_allclose(getattr(clf, attr) if attr != "classes_" else
                                   clf.classes_.astype(float),
                                   getattr(res, field) if attr != "classes_" else
                                   res.classes.astype(float), rtol=1e-10)
    for key, col in clf.history_.items():
        if key != "time":
            np.testing.assert_allclose(col, res.history[key], rtol=1e-10)
    assert res.converged and res.stop_reason == "duality gap"


def test_rbf_widths_in_raw_units_give_the_fitted_kernel():
    # issue 21: widths are resolved on the standardised columns; rbf_gamma_raw_
    # must be the same kernel written on the user's columns
    X, y, Xt = _data()
    rng = np.random.default_rng(2)
    a = np.exp(rng.uniform(-4, 6, size=X.shape[1]))
    Xr, Xtr = a * X + 3.0, a * Xt + 3.0
    specs = [("rbf", {"gamma": "scale"}), ("rbf", {"gamma": 0.7}, [1, 4]), "linear"]
    clf = PNormMKLClassifier(kernels=specs, random_state=0).fit(Xr, y)
    assert clf.rbf_gamma_raw_[2] is None
    K = clf.kernel_list_.cross(
        (Xtr - clf.x_mean_) / clf.x_scale_)  # the fitted kernels, vs the support
    sv = Xr[clf.support_]
    for j in (0, 1):
        g = clf.rbf_gamma_raw_[j]
        raw = np.exp(-np.einsum("d,tsd->ts", g, (Xtr[:, None, :] - sv[None]) ** 2))
        np.testing.assert_allclose(raw, K[j], rtol=1e-9, atol=1e-12)
    # the view's unseen columns get no width; the standardised widths are kept
    assert np.flatnonzero(clf.rbf_gamma_raw_[1]).tolist() == [1, 4]
    assert clf.kernel_params_[1]["gamma"] == 0.7
    # without standardisation the raw widths are the resolved width everywhere
    plain = PNormMKLClassifier(kernels=specs, standardize=False, random_state=0).fit(
        Xr, y)
    np.testing.assert_allclose(plain.rbf_gamma_raw_[0], plain.kernel_params_[0]["gamma"])
    pre = PNormMKLClassifier(kernels="precomputed", random_state=0).fit(
        [Xr @ Xr.T], y)
    assert pre.rbf_gamma_raw_ is None and pre.kernel_params_ is None


def test_default_kernels_are_rbf_at_the_width_grid_times_scale_and_linear():
    # the default list: RBF at DEFAULT_RBF_WIDTHS x scikit-learn's "scale",
    # 1 / (D Var(X)) of the standardised columns (1 / D), then the linear kernel
    X, y, _ = _data()
    Xr = np.exp(np.random.default_rng(3).uniform(-3, 3, X.shape[1])) * X - 5.0
    clf = PNormMKLClassifier(random_state=0).fit(Xr, y)
    Z = StandardScaler().fit_transform(Xr)
    scale = 1.0 / (Z.shape[1] * Z.var())
    widths = obscure.DEFAULT_RBF_WIDTHS
    assert [p["gamma"] for p in clf.kernel_params_[:len(widths)]] == pytest.approx(
        [c * scale for c in widths], rel=1e-9)
    assert clf.rbf_gamma_raw_[len(widths)] is None  # the last kernel: linear
    assert len(clf.kernel_weights_) == len(widths) + 1
    # the grid reaches SVC()'s width and at most 2x narrower (the learned
    # weights favour narrow kernels: the combination is centred near "scale")
    assert 1.0 in widths and max(widths) == 2.0 and min(widths) < 1.0


@pytest.mark.parametrize("kernels", [None, [("rbf", {"gamma": "scale"}), "linear"]])
def test_weighted_widths_are_those_of_repeated_rows(kernels):
    # "scale" uses the weights, as the standardisation does: integer weights give
    # the widths of the repeated rows (before, the unweighted variance of the
    # weighted-centred columns, which also made sparse and dense fits differ)
    X, y, _ = _data()
    w = np.random.default_rng(0).integers(1, 4, len(y))
    weighted = PNormMKLClassifier(kernels=kernels, max_iter=2, random_state=0).fit(
        X, y, sample_weight=w)
    repeated = PNormMKLClassifier(kernels=kernels, max_iter=2, random_state=0).fit(
        np.repeat(X, w, axis=0), np.repeat(y, w))
    got = [p.get("gamma") for p in weighted.kernel_params_]
    want = [p.get("gamma") for p in repeated.kernel_params_]
    assert got[0] is not None
    np.testing.assert_allclose(np.array(got, dtype=float), np.array(want, dtype=float),
                               rtol=1e-12)
