"""GrFL on wide sparse rows completes its kept features when they are first read.

A fit priced in the span of sparse rows (at most 1,000 distinct rows on at least
twice as many columns) keeps its features in the span's coordinates; completing
them to all columns (one row of normal numbers per kept feature and column: 29 M
numbers and a 235 MB array on 200 x 100,000) was half of a default fit.  The fit
now records the completions (``_grfl_average.DeferredRows``) and ``features_`` runs
them on its first read: the same calls into the same rows, so every number equals
the eager fit's (``_grfl_average.DEFER = False``, the reference here).  Pickles and
model files hold the completed array; deep copies not yet read stay deferred; two
threads reading at once complete it once.
"""

import copy
import pickle
import threading
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor
from kernlearn.families import fourier
from kernlearn.io import load_model, save_model
from kernlearn.methods import _grfl_average
from kernlearn.methods._grfl_average import DeferredRows

ROWS, COLS = 60, 2000


def _wide(seed, rows=ROWS, d=COLS, per_row=8):
    """Sparse counts of two topics (the benchmark's kind of rows, smaller), ``rows``
    training and 40 test rows."""
    rng, n = np.random.default_rng(seed), rows + 40
    y = np.where(rng.random(n) < 0.5, 1, 0)
    topics = np.stack([rng.choice(d, 40, replace=False) for _ in range(2)])
    cols = np.hstack([rng.integers(0, d, (n, per_row - 3)),
                      topics[y[:, None], rng.integers(0, 40, (n, 3))]])
    X = sp.csr_matrix((np.ones(cols.size), (np.repeat(np.arange(n), per_row), cols.ravel())),
                      shape=(n, d))
    X.sum_duplicates()
    return X[:rows], y[:rows], X[rows:], y[rows:]


X, Y, XT, YT = _wide(0)
MODELS = {  # name: estimator (three averaged paths, one path, the regressor's three)
    "classifier": lambda: InfiniteFeatureClassifier(max_features=10, n_paths=3,
                                                    random_state=0),
    "one-path": lambda: InfiniteFeatureClassifier(max_features=10, n_paths=1,
                                                  random_state=1),
    "regressor": lambda: InfiniteFeatureRegressor(max_features=8, n_paths=3,
                                                  random_state=2),
}


def _fit(est, monkeypatch=None, defer=True, X=X, y=Y):
    if monkeypatch is not None:
        monkeypatch.setattr(_grfl_average, "DEFER", defer)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y if isinstance(est, InfiniteFeatureClassifier) else 2.0 * y - 1)


def _outputs(est):
    """What must not change: predictions, features and the attributes made of them."""
    out = {"predict": est.predict(XT), "transform": est.transform(XT),
           "features_": est.features_, "frequencies_": est.frequencies_,
           "phases_": est.phases_, "feature_importances_": est.feature_importances_}
    if hasattr(est, "decision_function"):
        out["decision_function"] = est.decision_function(XT)
    return out


def _assert_same(got, expected):
    assert got.keys() == expected.keys()
    for k in expected:
        assert got[k].dtype == expected[k].dtype and got[k].shape == expected[k].shape, k
        np.testing.assert_array_equal(got[k], expected[k], err_msg=k)


@pytest.fixture(scope="module")
def eager():
    """The reference: each model fitted with its features completed in the fit."""
    mp = pytest.MonkeyPatch()
    try:
        fitted = {name: _fit(make(), mp, defer=False) for name, make in MODELS.items()}
    finally:
        mp.undo()
    for est in fitted.values():
        assert type(vars(est)["features_"]) is np.ndarray
    return fitted


@pytest.fixture(scope="module")
def expected(eager):
    return {name: _outputs(est) for name, est in eager.items()}


def _deferred(name):
    est = _fit(MODELS[name]())
    assert isinstance(vars(est)["features_"], DeferredRows), name  # (not completed yet)
    return est


@pytest.mark.parametrize("name", list(MODELS))
def test_the_deferred_model_is_the_eager_one_bit_for_bit(name, expected):
    est = _deferred(name)
    assert est.n_paths_ == (1 if name == "one-path" else 3)
    assert len(vars(est)["features_"]) == len(est.feature_scales_) > 0
    got = _outputs(est)  # (the first read: predict)
    assert type(vars(est)["features_"]) is np.ndarray  # (completed once, kept)
    _assert_same(got, expected[name])


@pytest.mark.parametrize("read", ["features_", "frequencies_", "phases_",
                                  "feature_importances_", "transform"])
def test_each_first_read_completes_the_same_features(read, expected):
    est = _deferred("classifier")
    first = est.transform(XT) if read == "transform" else getattr(est, read)
    np.testing.assert_array_equal(first, expected["classifier"][read])
    _assert_same(_outputs(est), expected["classifier"])


def test_dense_input_and_long_sparse_input_are_not_deferred():
    # (only a span's completion is deferred: dense rows are completed as before)
    dense = _fit(InfiniteFeatureClassifier(max_features=5, random_state=0), X=X.toarray())
    assert type(vars(dense)["features_"]) is np.ndarray
    Xl, yl, _, _ = _wide(1, rows=300, d=200, per_row=5)  # (fewer than twice the rows' columns)
    long = _fit(InfiniteFeatureClassifier(max_features=5, random_state=0), X=Xl, y=yl)
    assert type(vars(long)["features_"]) is np.ndarray


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("name", ["classifier", "one-path"])
def test_pickles_before_and_after_the_first_read_hold_the_completed_array(
        name, when, expected, eager):
    est = _deferred(name)
    if when == "after":
        est.features_
    loaded = pickle.loads(pickle.dumps(est))
    # (the array, not the recipe: NumPy does not promise its normals across versions)
    assert type(vars(loaded)["features_"]) is np.ndarray
    _assert_same(_outputs(loaded), expected[name])
    _assert_same(_outputs(est), expected[name])
    # a pickle of the eager model (the former code's) loads as it did
    _assert_same(_outputs(pickle.loads(pickle.dumps(eager[name]))), expected[name])


@pytest.mark.parametrize("when", ["before", "after"])
def test_model_files_before_and_after_the_first_read(when, expected, eager, tmp_path):
    import reliability_cases as rc

    est = _deferred("classifier")
    if when == "after":
        est.features_
    save_model(est, tmp_path / "lazy.npz")
    loaded = load_model(tmp_path / "lazy.npz")
    assert type(vars(loaded)["features_"]) is np.ndarray
    _assert_same(_outputs(loaded), expected["classifier"])
    # a file of the eager model (what the former code wrote: features_ an array) loads
    save_model(eager["classifier"], tmp_path / "eager.npz")
    _assert_same(_outputs(load_model(tmp_path / "eager.npz")), expected["classifier"])
    # the files' contents: the same metadata and arrays
    (m1, a1), (m2, a2) = rc._read_npz(tmp_path / "lazy.npz"), rc._read_npz(tmp_path / "eager.npz")
    m1["state"]["$dict"].pop("history_"), m2["state"]["$dict"].pop("history_")  # (times)
    assert m1 == m2 and a1.keys() == a2.keys()
    assert all(np.array_equal(a1[k], a2[k]) for k in a1 if not k.startswith("state.history_"))


def test_a_model_file_may_set_features_but_no_other_descriptor(tmp_path, eager, expected):
    # (features_ is set through its descriptor; a property or a method still may not be)
    import reliability_cases as rc

    save_model(eager["classifier"], tmp_path / "m.npz")
    meta, arrays = rc._read_npz(tmp_path / "m.npz")
    assert "features_" in meta["state"]["$dict"]  # (the file names it as before)
    for name in ("feature_importances_", "_n_features_out", "predict"):
        meta["state"]["$dict"][name] = 1
        rc._write_npz(tmp_path / "t.npz", meta, arrays)
        with pytest.raises(ValueError, match=f"attribute name '{name}' is not allowed"):
            load_model(tmp_path / "t.npz")
        del meta["state"]["$dict"][name]
    rc._write_npz(tmp_path / "t.npz", meta, arrays)
    _assert_same(_outputs(load_model(tmp_path / "t.npz")), expected["classifier"])


def test_deep_copies_stay_deferred_until_read(expected):
    est = _deferred("classifier")
    twin = copy.deepcopy(est)
    assert isinstance(vars(twin)["features_"], DeferredRows)
    assert vars(twin)["features_"] is not vars(est)["features_"]
    _assert_same(_outputs(twin), expected["classifier"])
    assert isinstance(vars(est)["features_"], DeferredRows)  # (the original: not read)
    _assert_same(_outputs(est), expected["classifier"])
    again = copy.deepcopy(est)  # (after the read: a copy of the array)
    assert type(vars(again)["features_"]) is np.ndarray
    assert not np.shares_memory(again.features_, est.features_)
    _assert_same(_outputs(again), expected["classifier"])
    shallow = copy.copy(_deferred("classifier"))
    _assert_same(_outputs(shallow), expected["classifier"])


def test_clone_refits_the_same_model(expected):
    est = _deferred("classifier")
    refit = _fit(clone(est))
    assert isinstance(vars(refit)["features_"], DeferredRows)
    _assert_same(_outputs(refit), expected["classifier"])


def test_warm_start_continues_as_the_eager_path(monkeypatch):
    def run(defer):
        est = InfiniteFeatureClassifier(max_features=5, warm_start=True, random_state=0)
        first = _fit(est, monkeypatch, defer)
        out1 = _outputs(first) if not defer else None
        kinds = [type(vars(est)["features_"])]
        est.set_params(max_features=9)
        _fit(est, monkeypatch, defer)
        kinds.append(type(vars(est)["features_"]))
        return out1, _outputs(est), kinds

    eager1, eager2, eager_kinds = run(False)
    _, lazy2, lazy_kinds = run(True)
    assert eager_kinds == [np.ndarray] * 2 and lazy_kinds == [DeferredRows] * 2
    _assert_same(lazy2, eager2)
    # and the warm path read before its continuation
    est = _fit(InfiniteFeatureClassifier(max_features=5, warm_start=True, random_state=0))
    _assert_same(_outputs(est), eager1)
    est.set_params(max_features=9)
    _assert_same(_outputs(_fit(est)), eager2)


def test_two_threads_reading_at_once_complete_the_features_once(monkeypatch, expected):
    calls = []
    complete = fourier._SparseSpanCompletion.__call__

    def slow(self, *args, **kw):
        calls.append(threading.get_ident())
        time.sleep(0.05)  # (room for the other thread to start its own completion)
        return complete(self, *args, **kw)

    est = _deferred("classifier")
    monkeypatch.setattr(fourier._SparseSpanCompletion, "__call__", slow)
    barrier, got = threading.Barrier(2), [None, None]

    def predict(i):
        barrier.wait()
        got[i] = (est.decision_function(XT), est.features_)

    threads = [threading.Thread(target=predict, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == est.n_paths_ == 3  # (one completion per path, by one thread)
    assert len(set(calls)) == 1
    assert got[0][1] is got[1][1] is est.features_
    for d, _ in got:
        np.testing.assert_array_equal(d, expected["classifier"]["decision_function"])


def test_deferred_rows_record_once_and_slice_consecutively():
    rows = DeferredRows((5, 3))
    part = rows[1:4]
    assert len(part) == 3 and part.whole is rows
    with pytest.raises(IndexError, match="consecutive"):
        rows[::2]
    seen = []

    def fill(params, rngs, out):
        seen.append((params, rngs))
        out[:] = params
        return out

    part.defer(fill, 7.0, [])
    rows[0:1].defer(fill, 1.0, [])
    rows[4:5].defer(fill, 2.0, [])
    np.testing.assert_array_equal(np.asarray(part), np.full((3, 3), 7.0))
    np.testing.assert_array_equal(rows.array()[[0, 4], 0], [1.0, 2.0])
    assert np.asarray(rows) is rows.array() and not np.shares_memory(np.array(rows), rows.array())
    assert len(seen) == 3  # (run once)
    with pytest.raises(ValueError, match="completed already"):
        rows[0:1].defer(fill, 3.0, [])
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):  # (pickled as its array is)
        assert pickle.dumps(rows, protocol) == pickle.dumps(rows.array(), protocol)
    assert type(pickle.loads(pickle.dumps(rows))) is np.ndarray


def test_a_failed_completion_runs_again_with_fresh_generators():
    # (a first read that failed, say out of memory, after drawing from the generators
    # must not complete the rows from where they stopped)
    attempts = []

    def draw(params, rngs, out):
        out[:] = [g.standard_normal(out.shape[1]) for g in rngs]
        attempts.append(len(rngs))
        if len(attempts) == 1:
            raise MemoryError("the first time")
        return out

    rows = DeferredRows((2, 4))
    rows.defer(draw, None, [(5, 0), (5, 1)])
    with pytest.raises(MemoryError):
        rows.array()
    expected = [np.random.default_rng((5, i)).standard_normal(4) for i in range(2)]
    np.testing.assert_array_equal(rows.array(), expected)
    assert attempts == [2, 2]


def test_dask_transform_and_predict_on_the_workers_of_a_deferred_model(expected):
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    from test_dask_predict_workers import _WORKER_MODULES

    est = _deferred("classifier")
    Xd = da.from_array(XT, chunks=(16, COLS), asarray=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        got_t, got_d = est.transform(Xd), est.decision_function(Xd)
        assert isinstance(got_t, da.Array) and isinstance(got_d, da.Array)
        np.testing.assert_array_equal(got_t.compute(), expected["classifier"]["transform"])
        np.testing.assert_array_equal(got_d.compute(),
                                      expected["classifier"]["decision_function"])
        (after,) = client.run(eval, _WORKER_MODULES).values()
    assert not [m for m in after if m.startswith("sklearn")], after
    assert "kernlearn.estimators.infinite" not in after
