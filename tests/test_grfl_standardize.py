"""GrFL estimators with ``standardize=True``: affine invariance, sparse kept
sparse, learned frequencies on the raw scale, one target scale per output."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.estimators._base import input_standardization
from kernlearn.losses import SquaredHinge
from kernlearn.methods.grfl import GrFLResult, fit_grfl
from kernlearn.penalties import GroupL1L2


def _data(seed=0, n=150, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    f = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2]
    return X, f, rng


def _out(est, X):
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)


@pytest.mark.parametrize("Est", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_same_predictions_on_affinely_mapped_dense_inputs(Est):
    X, f, rng = _data()
    y = (f > 0).astype(int) if Est is InfiniteFeatureClassifier else f
    a = rng.uniform(0.01, 100.0, size=X.shape[1])
    b = rng.normal(scale=1e3, size=X.shape[1])
    est = Est(max_features=10, n_candidates=30, random_state=0)
    m1 = clone(est).fit(X, y)
    m2 = clone(est).fit(a * X + b, y)
    d1, d2 = _out(m1, X), _out(m2, a * X + b)
    np.testing.assert_allclose(d2, d1, rtol=1e-6, atol=1e-6 * np.abs(d1).max())
    # without standardisation the same maps change the model
    raw = clone(est).set_params(standardize=False)
    assert not np.allclose(_out(clone(raw).fit(a * X + b, y), a * X + b),
                           _out(clone(raw).fit(X, y), X), rtol=1e-3)


@pytest.mark.parametrize("Est", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_same_predictions_on_column_scaled_sparse_inputs(Est):
    X = sp.random(200, 30, density=0.15, random_state=3, format="csr")
    rng = np.random.default_rng(1)
    f = np.asarray(X[:, :4].sum(axis=1)).ravel()
    y = (f > np.median(f)).astype(int) if Est is InfiniteFeatureClassifier else f
    a = rng.uniform(0.01, 100.0, size=X.shape[1])
    Xa = sp.csr_matrix(X @ sp.diags(a))
    est = Est(max_features=8, n_candidates=30, random_state=0)
    d1 = _out(clone(est).fit(X, y), X)
    d2 = _out(clone(est).fit(Xa, y), Xa)
    np.testing.assert_allclose(d2, d1, rtol=1e-6, atol=1e-6 * np.abs(d1).max())


@pytest.mark.parametrize("Est", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_sparse_input_is_never_densified(Est, monkeypatch):
    X = sp.random(150, 50, density=0.1, random_state=0, format="csr")
    f = np.asarray(X[:, :3].sum(axis=1)).ravel()
    y = (f > np.median(f)).astype(int) if Est is InfiniteFeatureClassifier else f

    def refuse(self, *args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    from scipy.sparse._base import _spbase
    monkeypatch.setattr(_spbase, "toarray", refuse)
    monkeypatch.setattr(_spbase, "todense", refuse)
    est = Est(max_features=5, n_candidates=20, random_state=0).fit(X, y)
    assert est.x_mean_ is None and est.x_scale_.shape == (50,)
    assert np.all(np.isfinite(_out(est, X)))


def test_frequencies_and_phases_give_the_features_on_raw_inputs():
    X, f, rng = _data(2)
    X = 50.0 * X + 300.0
    clf = InfiniteFeatureClassifier(max_features=8, n_candidates=30,
                                    random_state=0).fit(X, f > 0)
    P = X @ clf.frequencies_.T + clf.phases_
    Z = np.empty((len(X), 2 * P.shape[1]))
    Z[:, 0::2], Z[:, 1::2] = np.cos(P), np.sin(P)
    np.testing.assert_allclose(Z * clf.feature_scales_.ravel(), clf.transform(X),
                               rtol=1e-9, atol=1e-12)


def test_learned_quantities_equal_a_manual_scale_fit_unscale():
    X, f, rng = _data(3)
    X = X * rng.uniform(0.1, 10.0, size=4) + rng.normal(size=4) * 10
    Y = np.column_stack([f, 1e3 * f ** 2 + 7.0])
    reg = InfiniteFeatureRegressor(max_features=8, n_candidates=30, random_state=0).fit(X, Y)
    mu, s = X.mean(axis=0), X.std(axis=0)
    ym, ys = Y.mean(axis=0), Y.std(axis=0)
    man = InfiniteFeatureRegressor(max_features=8, n_candidates=30, standardize=False,
                                   random_state=0).fit((X - mu) / s, (Y - ym) / ys)
    V = man.features_[:, :-1] / s
    np.testing.assert_allclose(reg.frequencies_, V, rtol=1e-8)
    np.testing.assert_allclose(reg.phases_, -V @ mu, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(reg.column_coef_, man.column_coef_ * ys[:, None], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(reg.intercept_, man.intercept_ * ys + ym, rtol=1e-6)
    np.testing.assert_allclose(reg.column_coef_, reg.task_coef_ + reg.shared_coef_, rtol=1e-12)


def test_each_output_has_its_own_target_scale():
    X, f, rng = _data(4)
    g = np.cos(X[:, 3]) + 0.1 * rng.normal(size=len(f))
    est = InfiniteFeatureRegressor(max_features=10, n_candidates=30, random_state=0)
    p1 = clone(est).fit(X, np.column_stack([f, g])).predict(X)
    p2 = clone(est).fit(X, np.column_stack([f, 1e4 * g])).predict(X)
    np.testing.assert_allclose(p2[:, 0], p1[:, 0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(p2[:, 1], 1e4 * p1[:, 1], rtol=1e-6, atol=1e-4)


def test_the_result_object_carries_everything_the_classifier_exposes():
    X, f, _ = _data(5)
    y = (f > 0).astype(int)
    clf = InfiniteFeatureClassifier(max_features=6, n_candidates=20, lambda_s=0.5,
                                    random_state=0).fit(X, y)
    res = fit_grfl(input_standardization(clf).transform(X), (2.0 * y - 1.0)[:, None],
                   loss=SquaredHinge(), penalty=GroupL1L2(), lambda_s=0.5, max_features=6,
                   n_candidates=20, random_state=0)
    assert isinstance(res, GrFLResult) and dataclasses.is_dataclass(res)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.objective = 0.0
    for field, attr in [("features", "features_"), ("feature_scales", "feature_scales_"),
                        ("coef", "column_coef_"), ("intercept", "intercept_"),
                        ("task_coef", "task_coef_"), ("shared_coef", "shared_coef_"),
                        ("objective", "objective_"), ("last_violation", "last_violation_"),
                        ("n_iter", "n_iter_"), ("stop_reason", "stop_reason_"),
                        ("converged", "converged_"), ("master", "solver_")]:
        np.testing.assert_array_equal(getattr(res, field), getattr(clf, attr), err_msg=field)
