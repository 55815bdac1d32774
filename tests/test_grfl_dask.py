"""GrFL on a dask.array: the in-memory model, with only small sums reaching the client."""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

# 8,000 rows: above twice the pricing subsample (2,000 rows), so the default
# estimate-then-verify pricing runs; four partitions of 2,000 rows
N, D, CHUNK = 8000, 5, 2000
# 12 features: one per outer iteration up to 7, then batches of 2 or 3
# (GrFL.batch_size), appended together on the partitions
SMALL = dict(max_features=12, n_candidates=20, random_state=0)


def _data(n=N, seed=0):
    rng = np.random.default_rng(seed)
    # columns on different scales and offsets: the standardisation matters
    X = rng.standard_normal((n, D)) * np.arange(1, D + 1) + np.arange(D)
    f = np.sin(X[:, 0]) + 0.2 * X[:, 1] - 0.1 * X[:, 2] ** 2 / 9
    return X, f, rng


def _assert_same_model(a, b, X_test, what="decision_function"):
    # the same path, with outer iterations that added several features
    steps = np.diff(np.r_[0, a.history_["n_active"]])
    assert steps.max() >= 2
    np.testing.assert_array_equal(b.history_["n_active"], a.history_["n_active"])
    np.testing.assert_allclose(b.features_, a.features_, rtol=1e-12, atol=1e-12)
    if a.x_mean_ is None:  # sparse input: scaled, not centred
        assert b.x_mean_ is None
    else:
        np.testing.assert_allclose(b.x_mean_, a.x_mean_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.x_scale_, a.x_scale_, rtol=1e-12)
    np.testing.assert_allclose(b.feature_scales_, a.feature_scales_, rtol=1e-10)
    np.testing.assert_allclose(b.column_coef_, a.column_coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-8, atol=1e-10)
    assert b.n_iter_ == a.n_iter_
    np.testing.assert_allclose(b.objective_, a.objective_, rtol=1e-10)
    np.testing.assert_allclose(getattr(b, what)(X_test), getattr(a, what)(X_test),
                               rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic"])
def test_binary_on_cluster_equals_in_memory(client, loss):
    from kernlearn.solvers.grfl_newton import GrFLNewton

    X, f, _ = _data()
    y = np.where(f > 0.3, "yes", "no")
    # The logistic curvature is continuous: the Newton master refreshes a row's
    # Hessian term when it moved by more than curvature_rtol, and rounding of
    # the partitioned sums flips rows at that threshold (coefficients then
    # agree to ~1e-8 only); with the exact Hessian the two paths agree to
    # rounding.  The squared hinge's curvatures are 0 or 1: exact at the default.
    solver = "auto" if loss == "squared_hinge" else GrFLNewton(curvature_rtol=0.0)
    a = InfiniteFeatureClassifier(loss=loss, solver=solver, **SMALL).fit(X, y)
    b = InfiniteFeatureClassifier(loss=loss, solver=solver, **SMALL).fit(
        da.from_array(X, chunks=(CHUNK, 3)), y)
    assert len(a.features_) >= 3  # a model with features, not the intercept alone
    np.testing.assert_array_equal(b.classes_, a.classes_)
    _assert_same_model(a, b, X[:300])


def test_regression_on_cluster_equals_in_memory(client):
    X, f, rng = _data()
    y = 50.0 + 10.0 * (f + 0.1 * rng.standard_normal(N))  # standardised on the client
    a = InfiniteFeatureRegressor(**SMALL).fit(X, y)
    b = InfiniteFeatureRegressor(**SMALL).fit(da.from_array(X, chunks=(CHUNK, D)), y)
    assert len(a.features_) >= 3
    np.testing.assert_allclose([b.y_mean_, b.y_scale_], [a.y_mean_, a.y_scale_])
    _assert_same_model(a, b, X[:300], what="predict")
    # the training range is reduced on the cluster, and rows beyond it are
    # clipped as in memory (a fit on the cluster recorded none: its far
    # predictions were the unclipped model's)
    np.testing.assert_array_equal(b.x_range_, a.x_range_)
    far = 4.0 * X[:50] + 3.0
    assert np.any(far > a.x_range_[1])
    np.testing.assert_allclose(b.predict(far), a.predict(far), rtol=1e-8, atol=1e-10)


def test_auto_budget_is_chosen_on_the_same_held_out_rows_as_in_memory(client):
    # the regressor's default max_features="auto": the path runs on 80 % of
    # the rows, the held-out 20 % (kept on the cluster) pick the count, and the
    # master is refitted on all rows -- the same rows, count and model as in
    # memory (before, a dask.array took min(100, n // 6) = 100 features here)
    n = 1000
    X, f, rng = _data(n=n)
    y = f + rng.standard_normal(n)  # noisy: the held-out loss turns up early
    a = InfiniteFeatureRegressor(n_candidates=20, random_state=0).fit(X, y)
    b = InfiniteFeatureRegressor(n_candidates=20, random_state=0).fit(
        da.from_array(X, chunks=(250, D)), y)
    assert a.stop_reason_ == b.stop_reason_ == "validation"
    assert b.max_features_ == a.max_features_ < min(100, n // 6)
    # the path went past the chosen count (patience), the model stopped at it
    assert a.history_["n_active"][-1] > a.max_features_ >= len(a.features_) >= 3
    np.testing.assert_allclose(b.history_["validation_loss"], a.history_["validation_loss"],
                               rtol=1e-12)
    _assert_same_model(a, b, X[:300], what="predict")


def test_sparse_chunks_and_pricing_on_all_rows_equal_in_memory(client):
    # sparse partitions (scaled; centred in the phases) and n below the subsample
    # threshold: every candidate priced on the partitions
    X, f, _ = _data(n=1500, seed=1)
    X[np.abs(X - np.arange(D)) < 1.0] = 0.0
    Xs = sp.csr_matrix(X)
    y = (f > 0.3).astype(int)
    a = InfiniteFeatureClassifier(**SMALL).fit(Xs, y)
    b = InfiniteFeatureClassifier(**SMALL).fit(
        da.from_array(Xs, chunks=(400, D), asarray=False), y)
    _assert_same_model(a, b, X[:200])


def test_without_a_distributed_client_the_same_multiclass_model(monkeypatch):
    # no client: dask's local scheduler computes the partitions into this process
    import kernlearn.methods._grfl_dask as grfl_dask

    monkeypatch.setattr(grfl_dask, "_current_client", lambda: None)
    # (three classes: one-vs-all tasks sharing the features, T = 3)
    X, f, _ = _data(n=1200, seed=2)
    y = np.digitize(f, [-0.2, 0.6])
    a = InfiniteFeatureClassifier(**SMALL).fit(X, y)
    assert a.column_coef_.shape[0] == 3
    b = InfiniteFeatureClassifier(**SMALL).fit(da.from_array(X, chunks=(500, D)), y)
    _assert_same_model(a, b, X[:200])


@pytest.mark.parametrize("cls", [InfiniteFeatureClassifier, InfiniteFeatureRegressor])
def test_defaults_below_cv_rows_fit_one_path(monkeypatch, cls):
    # below CV_BELOW rows n_paths="auto" averages 3 paths in memory; on a
    # cluster the master's margins stay on the partitions, so "auto" is one
    # path there (the defaults used to stop with a TypeError adding margins)
    import kernlearn.methods._grfl_dask as grfl_dask
    from kernlearn.methods._grfl_select import CV_BELOW

    monkeypatch.setattr(grfl_dask, "_current_client", lambda: None)
    n = CV_BELOW - 100
    X, f, _ = _data(n=n, seed=3)
    y = f if cls is InfiniteFeatureRegressor else (f > 0.3).astype(int)
    kw = dict(n_candidates=20, random_state=0)
    assert cls(**kw).fit(X, y).n_paths_ == 3
    a = cls(n_paths=1, **kw).fit(X, y)
    b = cls(**kw).fit(da.from_array(X, chunks=(n // 4, D)), y)
    assert b.n_paths_ == a.n_paths_ == 1
    # the same path (partitioned sums round differently: the regressor's
    # level search solves many masters, so agreement to rounding, not 1e-10)
    np.testing.assert_array_equal(b.history_["n_active"], a.history_["n_active"])
    np.testing.assert_allclose(b.features_, a.features_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.predict(X[:50]), a.predict(X[:50]), rtol=1e-6, atol=1e-8)


def _n_numbers(obj):
    """Numbers held by a gathered result (arrays inside lists, tuples, objects)."""
    if isinstance(obj, (list, tuple)):
        return sum(_n_numbers(o) for o in obj)
    if isinstance(obj, np.ndarray):
        return obj.size
    if sp.issparse(obj):
        return obj.nnz
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return sum(_n_numbers(v) for v in vars(obj).values())
    return 1


def test_nothing_n_sized_reaches_the_client(client, monkeypatch):
    X, f, _ = _data()
    y = (f > 0.3).astype(int)
    Xd = da.from_array(X, chunks=(CHUNK, D))
    sizes = []
    # every way a result reaches the client (gather, Future.result,
    # compute(sync=True)) goes through Client._gather
    inner = client._gather

    async def recording(futures, *args, **kwargs):
        out = await inner(futures, *args, **kwargs)
        sizes.append(_n_numbers(out))
        return out

    monkeypatch.setattr(client, "_gather", recording)
    clf = InfiniteFeatureClassifier(**SMALL).fit(Xd, y)
    monkeypatch.undo()
    assert len(clf.features_) >= 3
    assert len(sizes) > 20  # the fit did gather (the wrapper sees it)
    # the largest result: the pricing subsample's 2,000 rows of X (drawn once);
    # every other one is at most the subsample's 2,000 loss gradients (which
    # come with the master's last pass) plus |active|- and n_candidates-sized
    # sums: gradients, Hessians ((p + 1)^2), candidate scores
    assert max(sizes) == 2000 * D < N * D
    p = 2 * SMALL["max_features"]
    rest = sorted(sizes)[:-1]
    assert 2000 < max(rest) <= 2000 + (p + 1) ** 2 < N


def test_unsupported_combinations_say_so(client):
    from kernlearn.families import GaborFeatures

    X, f, _ = _data(n=400)
    y = (f > 0.3).astype(int)
    Xd = da.from_array(X, chunks=(100, D))
    cases = [
        (dict(solver="admm"), {}, ValueError, "Newton master"),
        (dict(warm_start=True), {}, ValueError, "warm_start"),
        (dict(n_paths=2), {}, ValueError, "n_paths=2 is not supported"),
        (dict(probability=True), {}, ValueError, "probability"),
        (dict(family=GaborFeatures()), {}, TypeError, "RandomFourierFeatures"),
        (dict(class_weight="balanced"), {}, ValueError, "class_weight"),
        ({}, dict(sample_weight=np.ones(400)), ValueError, "sample_weight"),
        ({}, dict(task_index=np.arange(400) % 2), ValueError, "task_index"),
    ]
    for params, fit_kw, err, match in cases:
        with pytest.raises(err, match=match):
            InfiniteFeatureClassifier(**SMALL, **params).fit(Xd, y, **fit_kw)
    with pytest.raises(ValueError, match="2-D y"):
        InfiniteFeatureRegressor(**SMALL).fit(Xd, np.column_stack([f, f]))
    Xn = X.copy()
    Xn[7, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        InfiniteFeatureClassifier(**SMALL).fit(da.from_array(Xn, chunks=(100, D)), y)
    with pytest.raises(ValueError, match="rows"):
        InfiniteFeatureClassifier(**SMALL).fit(Xd, y[:-1])


# A worker's kernlearn and scikit-learn modules, as eval runs it there: a function
# of this module would import the module (and the estimators) on the worker.
_WORKER_MODULES = ("sorted(m for m in __import__('sys').modules "
                   "if m.split('.')[0] in ('sklearn', 'kernlearn'))")


def test_the_workers_of_a_fit_import_no_scikit_learn():
    # A fresh worker imports the modules of the functions and objects its
    # tasks carry; the row tasks lived in _grfl_dask, which imports GrFL's
    # client-side algorithm, and the family, standardisation and kernels
    # modules imported scikit-learn at their top: every worker of a GrFL fit
    # imported it (about 1.6 s each; the project's rule: never on a worker).
    # Its own cluster of one worker process: the module's workers have run
    # other tests' tasks.
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        (before,) = c.run(eval, _WORKER_MODULES).values()
        assert "sklearn" not in before
        X, f, rng = _data()
        # the classifier with the pricing subsample; the regressor's "auto"
        # count on held-out rows; sparse partitions (scaled, centred in phases)
        few = dict(SMALL, max_features=4)
        clf = InfiniteFeatureClassifier(**few).fit(da.from_array(X, chunks=(CHUNK, D)),
                                                   (f > 0.3).astype(int))
        reg = InfiniteFeatureRegressor(n_candidates=20, random_state=0).fit(
            da.from_array(X[:1000], chunks=(250, D)), f[:1000] + rng.standard_normal(1000))
        Xs = X[:1500].copy()
        Xs[np.abs(Xs - np.arange(D)) < 1.0] = 0.0
        InfiniteFeatureClassifier(**few).fit(
            da.from_array(sp.csr_matrix(Xs), chunks=(400, D), asarray=False),
            (f[:1500] > 0.3).astype(int))
        assert reg.stop_reason_ == "validation" and len(clf.features_) >= 3
        clf.predict(da.from_array(X[:300], chunks=(100, D)))
        (after,) = c.run(eval, _WORKER_MODULES).values()
    assert not [m for m in after if m.split(".")[0] == "sklearn"], after
    # the tasks ran there, without GrFL's client-side algorithm
    assert "kernlearn.methods._grfl_rows" in after
    assert "kernlearn.methods.grfl" not in after and "kernlearn.colgen" not in after
