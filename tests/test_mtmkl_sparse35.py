"""Multitask MKL on sparse X (issue 21): the kernels are evaluated on sparse
rows, never densified, and the model is that of the same numbers dense."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from peak_memory import peak_and_dense_mb
from kernlearn import (MultitaskMKLClassifier, MultitaskMKLClassifierCV,
                       MultitaskMKLRegressor, MultitaskMKLRegressorCV)
from kernlearn.io import load_model, save_model

KERNELS = {
    "linear": ["linear"],
    "rbf": [("rbf", {"gamma": "mean"})],
    "poly": [("poly", {"degree": 2, "gamma": 0.1})],
    "default": None,  # ("rbf", gamma "mean") and "linear"
}


def _data(n=60, d=25, seed=0):
    """Counts (every column's mean far from 0: the centring matters), 3 tasks."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.3, random_state=seed, format="csr",
                  data_rvs=lambda k: rng.poisson(3.0, k) + 1.0)
    X = X @ sp.diags(rng.uniform(0.5, 20.0, d))  # (columns in other units)
    t = np.arange(n) % 3
    Xd = X.toarray()
    y = Xd[:, 0] / Xd[:, 0].std() * (t - 1) + Xd[:, 1] / Xd[:, 1].std() \
        + 0.2 * rng.normal(size=n)
    return sp.csr_matrix(X), y, t


def _quiet(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (iteration caps of these small fits)
        return fit()


def _make(name, kernels, **kw):
    Est = {"reg": MultitaskMKLRegressor, "clf": MultitaskMKLClassifier,
           "regcv": MultitaskMKLRegressorCV, "clfcv": MultitaskMKLClassifierCV}[name]
    if name.endswith("cv"):
        kw = {"Cs": (0.1, 1.0, 10.0), **kw}
        if name == "clfcv":
            kw["cv"] = 3
    return Est(kernels, max_iter=30, **kw)


def _target(name, y):
    return (y > np.median(y)).astype(int) if name.startswith("clf") else y


def _out(est, X, t):
    f = est.decision_function if hasattr(est, "decision_function") else est.predict
    return f(X, task_index=t)


def _pair(name, kernels, X, y, t, sample_weight=None, **kw):
    """The fits of sparse ``X`` and of ``X.toarray()``."""
    fits = []
    for Xf in (X, X.toarray()):
        est = _make(name, kernels, **kw)
        fits.append(_quiet(lambda: est.fit(Xf, _target(name, y), task_index=t,
                                           sample_weight=sample_weight)))
    return fits


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("name", ["reg", "clf", "regcv", "clfcv"])
def test_sparse_fit_is_the_dense_fit(name, kernel):
    X, y, t = _data()
    sparse, dense = _pair(name, KERNELS[kernel], X, y, t)
    assert sp.issparse(sparse.kernels_.X_)  # (the sparse path, not a dense copy)
    Xte, tte = X[:20], t[:20]
    np.testing.assert_allclose(_out(sparse, Xte, tte), _out(dense, Xte.toarray(), tte),
                               rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(sparse.kernel_weights_, dense.kernel_weights_, atol=1e-8)
    np.testing.assert_allclose(sparse.C_, dense.C_, rtol=1e-6)
    if name.startswith("clf"):
        np.testing.assert_array_equal(sparse.predict(Xte, task_index=tte),
                                      dense.predict(Xte.toarray(), task_index=tte))


@pytest.mark.parametrize("settings", [
    {"formulation": "mtsfl"}, {"formulation": "mkl"}, {"formulation": "independent"},
    {"shared": True}, {"shared": True, "formulation": "mtsfl"},
    {"C": "auto"}, {"C": "auto", "shared": True}, {"loss": "epsilon_insensitive"},
    {"standardize": False}, {"weights": True},
])
def test_sparse_fit_is_the_dense_fit_in_every_formulation(settings):
    X, y, t = _data(seed=1)
    settings = dict(settings)
    sw = (np.random.default_rng(2).uniform(0.0, 2.0, len(y))
          if settings.pop("weights", False) else None)
    kernels = ["linear", ("rbf", {"gamma": 0.05}), ("poly", {"degree": 2, "gamma": 0.05})]
    sparse, dense = _pair("reg", kernels, X, y, t, sample_weight=sw, **settings)
    np.testing.assert_allclose(sparse.predict(X, task_index=t),
                               dense.predict(X.toarray(), task_index=t), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(sparse.kernel_weights_, dense.kernel_weights_, atol=1e-7)


@pytest.mark.parametrize("settings", [{}, {"shared": True}, {"probability": True}])
def test_sparse_classifier_is_the_dense_one(settings):
    X, y, t = _data(seed=3)
    sparse, dense = _pair("clf", ["linear", ("rbf", {"gamma": 0.05})], X, y, t, **settings)
    f = "predict_proba" if settings.get("probability") else "decision_function"
    np.testing.assert_allclose(getattr(sparse, f)(X, task_index=t),
                               getattr(dense, f)(X.toarray(), task_index=t), atol=1e-7)


@pytest.mark.parametrize("kernels", [["hik", "additive_chi2"],
                                     [lambda A, B: (A @ B.T) if not sp.issparse(A)
                                      else (A @ B.T).toarray()]])
def test_histogram_kernels_and_callables_on_sparse_rows(kernels):
    # they see the columns as given (standardize=False: nothing to centre),
    # the same numbers dense or sparse
    X, y, t = _data(seed=4)
    sparse, dense = _pair("reg", kernels, X, y, t, standardize=False)
    np.testing.assert_allclose(sparse.predict(X, task_index=t),
                               dense.predict(X.toarray(), task_index=t), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", ["reg", "clf"])
def test_positive_column_scales_leave_the_predictions(name):
    # standardize=True divides every column by its spread: X diag(a) is X
    X, y, t = _data(seed=5)
    a = np.random.default_rng(6).uniform(0.01, 100.0, X.shape[1])
    Xa = sp.csr_matrix(X @ sp.diags(a))
    kernels = ["linear", ("rbf", {"gamma": "mean"}), ("poly", {"degree": 2, "gamma": 0.1})]
    plain = _quiet(lambda: _make(name, kernels).fit(X, _target(name, y), task_index=t))
    scaled = _quiet(lambda: _make(name, kernels).fit(Xa, _target(name, y), task_index=t))
    np.testing.assert_allclose(_out(scaled, Xa, t), _out(plain, X, t), rtol=1e-6, atol=1e-7)


def _halves(X):
    """The numbers of CSR ``X`` as unsorted duplicate entries (two halves each)."""
    parts = [slice(a, b) for a, b in zip(X.indptr[:-1], X.indptr[1:])]
    data = np.concatenate([np.r_[X.data[r][::-1], X.data[r]] / 2 for r in parts])
    indices = np.concatenate([np.r_[X.indices[r][::-1], X.indices[r]] for r in parts])
    H = sp.csr_matrix((data, indices.astype(np.int64), 2 * X.indptr), shape=X.shape)
    assert not H.has_canonical_format
    return H


@pytest.mark.parametrize("fmt", ["csc", "coo", "halves"])
def test_sparse_formats_give_one_model(fmt):
    # (audit 111: "csr" was X itself, an assertion that could not fail; CSR
    # of unsorted duplicate halves with int64 indices is read as its sums)
    X, y, t = _data(seed=7)
    as_fmt = _halves if fmt == "halves" else lambda A: A.asformat(fmt)
    ref = _quiet(lambda: MultitaskMKLRegressor().fit(X, y, task_index=t))
    est = _quiet(lambda: MultitaskMKLRegressor().fit(as_fmt(X), y, task_index=t))
    np.testing.assert_allclose(est.predict(as_fmt(X), task_index=t),
                               ref.predict(X, task_index=t), rtol=1e-12, atol=1e-12)
    if fmt == "halves":  # (and the caller's matrix left as it was)
        H = _halves(X)
        _quiet(lambda: MultitaskMKLRegressor(max_iter=5).fit(H, y, task_index=t))
        assert not H.has_canonical_format
    # dense rows predicted by a sparse fit: the same
    np.testing.assert_allclose(est.predict(X.toarray(), task_index=t),
                               ref.predict(X, task_index=t), rtol=1e-9, atol=1e-9)


def test_a_dense_fit_refuses_sparse_rows_it_would_centre():
    X, y, t = _data(seed=8)
    dense = _quiet(lambda: MultitaskMKLRegressor().fit(X.toarray(), y, task_index=t))
    with pytest.raises(ValueError, match="fitted on dense X, whose columns it centres"):
        dense.predict(X, task_index=t)
    raw = _quiet(lambda: MultitaskMKLRegressor(standardize=False).fit(X.toarray(), y,
                                                                      task_index=t))
    np.testing.assert_allclose(raw.predict(X, task_index=t),
                               raw.predict(X.toarray(), task_index=t), rtol=1e-12)


@pytest.mark.parametrize("name", ["reg", "clfcv"])
def test_sparse_models_round_trip_through_model_files(name, tmp_path):
    X, y, t = _data(seed=9)
    est = _quiet(lambda: _make(name, None).fit(X, _target(name, y), task_index=t))
    save_model(est, tmp_path / "m.kl")
    back = load_model(tmp_path / "m.kl")
    assert back.kernels_.center_ is not None
    np.testing.assert_array_equal(_out(back, X, t), _out(est, X, t))


@pytest.mark.parametrize("name", ["reg", "clf"])
def test_a_sparse_fit_predicts_dask_sparse_chunks_as_in_memory(name):
    da = pytest.importorskip("dask.array")
    X, y, t = _data(seed=10)
    est = _quiet(lambda: _make(name, None).fit(X, _target(name, y), task_index=t))
    lazy = _out(est, da.from_array(X, chunks=(20, X.shape[1]), asarray=False), t)
    np.testing.assert_allclose(lazy.compute(scheduler="sync"), _out(est, X, t),
                               rtol=1e-12, atol=1e-12)


_MEMORY = """
import tracemalloc, warnings
import numpy as np, scipy.sparse as sp
from kernlearn import (MultitaskMKLClassifier, MultitaskMKLClassifierCV, MultitaskMKLRegressor,
                       MultitaskMKLRegressorCV)
n, d = 240, 50000  # dense: 96 MB
rng = np.random.default_rng(0)
X = sp.random(n, d, density=40 / d, random_state=0, format="csr",
              data_rvs=lambda k: rng.poisson(2.0, k) + 1.0)
t = np.arange(n) % 3
y = np.asarray(X[:, :5000].sum(axis=1)).ravel() + t
yc = (y > np.median(y)).astype(int)
tracemalloc.start()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    kern = [("rbf", {"gamma": "mean"}), "linear", ("poly", {"degree": 2})]
    for est, target in [(MultitaskMKLRegressor(kern, formulation="mtsfl", max_iter=10), y),
                        (MultitaskMKLRegressor(kern, C="auto", shared=True), y),
                        (MultitaskMKLClassifierCV(kern, Cs=(0.1, 1.0), cv=3, max_iter=10), yc),
                        # (audit 111: Platt's folds and the LOO search, too)
                        (MultitaskMKLClassifier(kern, probability=True, max_iter=10), yc),
                        (MultitaskMKLRegressorCV(kern, Cs=(0.1, 1.0), max_iter=10), y)]:
        est.fit(X, target, task_index=t)
        est.predict(X, task_index=t)
        if hasattr(est, "predict_proba"):
            est.predict_proba(X, task_index=t)
print(tracemalloc.get_traced_memory()[1] / 1e6, n * d * 8 / 1e6)
"""


def test_sparse_x_is_never_made_dense():
    # a text-sized X (240 x 50,000, 40 words a row): the fits and predictions
    # hold the tasks' dense kernel blocks (n x n), never X dense (96 MB)
    peak_mb, dense_mb = peak_and_dense_mb(_MEMORY)
    assert peak_mb < dense_mb / 4, f"peak {peak_mb:.0f} MB, X dense {dense_mb:.0f} MB"
