"""A seventeenth user's audit: the distributed and out-of-core paths as a user meets them.

A user fitted FGM and GrFL on a Dask cluster (a ``LocalCluster``) and out of
core, on the in-memory fit's data in every container such a user holds, and
compared the models, the predictions and what reached the client.  Each test
here failed before its fix.  The Dask DataFrame tests need ``dask.dataframe``
(``pip install "dask[dataframe]"``: it needs pyarrow) and are skipped without it.
"""

import warnings

import numpy as np
import pytest
from conftest import one_error, run_cli
from sklearn.exceptions import ConvergenceWarning

from kernlearn import FGMClassifier, FGMRegressor, InfiniteFeatureClassifier

pd = pytest.importorskip("pandas")


# conftest's module-scoped client: one light LocalCluster (two one-thread workers in
# this process: what is gathered is what a cluster of processes gathers)
DASK_CLUSTER = dict(n_workers=2, processes=False)


def _table(n=240, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 6))
    X[:, 2] = 50 + 10 * X[:, 2]  # a column in other units
    y = np.where(X[:, 0] - 0.1 * (X[:, 2] - 50) + 0.3 * rng.standard_normal(n) > 0,
                 "yes", "no")
    return pd.DataFrame(X, columns=[f"c{j}" for j in range(6)]), y


def _fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y, **kw)


def _same_model(a, b):
    np.testing.assert_array_equal(b.selected_features_, a.selected_features_)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-7, atol=1e-10)


def _computed(a):
    return np.asarray(a.compute() if hasattr(a, "compute") else a)


@pytest.mark.parametrize("container", ["DataFrame", "list"])
def test_memory_budget_on_a_dataframe_or_list_fits_the_in_memory_model(container):
    # FGM(memory_budget=...) read anything but an array by blocks and failed on
    # an attribute it lacks: "'DataFrame' object has no attribute 'dtype'",
    # "'list' object has no attribute 'ndim'" (in fit, predict and transform)
    df, y = _table()
    X = df if container == "DataFrame" else df.to_numpy().tolist()
    ref = _fit(FGMClassifier(B=2, max_iter=4), X, y)
    got = _fit(FGMClassifier(B=2, max_iter=4, memory_budget="2KB"), X, y)
    _same_model(ref, got)
    np.testing.assert_array_equal(got.predict(X), ref.predict(X))
    np.testing.assert_array_equal(got.transform(X), ref.transform(X))
    if container == "DataFrame":  # its column names kept, and checked at predict time
        np.testing.assert_array_equal(got.feature_names_in_, df.columns)
        with pytest.raises(ValueError, match="another order"):
            got.predict(df[df.columns[::-1]])
    reg = _fit(FGMRegressor(B=2, max_iter=3, C=1.0, memory_budget="2KB"), X, df["c0"])
    ref = _fit(FGMRegressor(B=2, max_iter=3, C=1.0), X, df["c0"])
    np.testing.assert_allclose(reg.predict(X), ref.predict(X), rtol=1e-7, atol=1e-10)


def test_fgm_probabilities_on_a_dask_array_ship_no_estimator_to_the_workers(tmp_path):
    # predict_proba mapped the bound method self._proba over the blocks: each
    # task carried the whole estimator, and unpickling it imported
    # scikit-learn on every worker (FGM's fit, predict and decision_function
    # import none there)
    import subprocess
    import sys

    da = pytest.importorskip("dask.array")
    cloudpickle = pytest.importorskip("cloudpickle")
    df, y = _table()
    X = df.to_numpy()
    check = ("import pickle, sys; pickle.loads(open(sys.argv[1], 'rb').read()); "
             "print('sklearn' in sys.modules)")
    graphs = []
    for est in (FGMClassifier(B=2, max_iter=3, loss="logistic"),  # its own sigmoid
                FGMClassifier(B=2, max_iter=3, probability=True)):  # Platt's
        _fit(est, X, y)
        lazy = est.predict_proba(da.from_array(X, chunks=(80, 6)))
        np.testing.assert_allclose(lazy.compute(), est.predict_proba(X), rtol=1e-12)
        graphs.append(dict(lazy.__dask_graph__()))
    (tmp_path / "tasks").write_bytes(cloudpickle.dumps(graphs))
    out = subprocess.run([sys.executable, "-c", check, str(tmp_path / "tasks")],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stdout


def test_the_smallest_chunk_memory_is_named_in_bytes(tmp_path, capsys):
    # "--chunk-memory '4KB' is below 4KB": KB is 1000 bytes, the floor 4096
    path = tmp_path / "train.svm"
    path.write_text("1 1:0.5 2:1\n-1 1:-0.5 2:2\n1 1:0.7\n-1 2:3\n")
    code, _, err = run_cli(["fit", path, "-e", "fgm", "-m", tmp_path / "m.npz",
                            "--out-of-core", "--chunk-memory", "4KB"], capsys)
    assert code == 2 and one_error(err), err
    assert "'4KB' is 4000 bytes, below the smallest chunk, 4KiB (4096 bytes)" in err
    code, _, err = run_cli(["fit", path, "-e", "fgm", "-m", tmp_path / "m.npz", "-q",
                            "--out-of-core", "--chunk-memory", "4KiB"], capsys)
    assert code == 0, err


@pytest.mark.parametrize("est", [FGMClassifier(B=2, max_iter=3),
                                 InfiniteFeatureClassifier(max_features=6, n_candidates=10,
                                                           random_state=0)],
                         ids=["FGM", "GrFL"])
def test_a_dask_array_of_complex_numbers_is_refused_as_in_memory(client, est):
    # GrFL fitted the real parts of a complex Dask array (the imaginary parts
    # silently dropped); FGM failed on a worker with NumPy's "Iterator operand
    # 0 dtype could not be cast from dtype('complex128') to dtype('float64')
    # according to the rule 'safe'".  In memory both refuse it by name.
    da = pytest.importorskip("dask.array")
    df, y = _table()
    Z = df.to_numpy() + 1j
    with pytest.raises(ValueError, match="Complex data not supported: X holds complex"):
        est.fit(Z, y)
    with pytest.raises(ValueError, match="Complex data not supported: X holds complex"):
        est.fit(da.from_array(Z, chunks=(80, 6)), y)


def test_fgm_on_text_numbers_by_blocks_is_the_in_memory_model(client):
    # Text that holds numbers is read as numbers in memory; by blocks (a Dask
    # array, or an array with memory_budget) FGM failed with "Iterator operand
    # 0 dtype could not be cast from dtype('<U32') to dtype('float64')"
    da = pytest.importorskip("dask.array")
    df, y = _table()
    text = df.to_numpy().astype(str)
    ref = _fit(FGMClassifier(B=2, max_iter=3), text, y)
    _same_model(ref, _fit(FGMClassifier(B=2, max_iter=3), da.from_array(text, chunks=(80, 6)), y))
    _same_model(ref, _fit(FGMClassifier(B=2, max_iter=3, memory_budget="2KB"), text, y))
    np.testing.assert_array_equal(
        _computed(ref.predict(da.from_array(text, chunks=(80, 6)))), ref.predict(text))


# ------------------------------------------------------------- Dask DataFrames
def test_a_dask_dataframe_is_fitted_on_the_cluster_with_its_column_names(client, dd):
    # A Dask DataFrame was not recognised as Dask data: scikit-learn's
    # validation computed all of it into the client (np.asarray), the fit ran
    # in memory, and its column names were dropped (no feature_names_in_)
    df, y = _table()
    ddf = dd.from_pandas(df, npartitions=3)
    ref = _fit(FGMClassifier(B=2, max_iter=4), df, y)
    got = _fit(FGMClassifier(B=2, max_iter=4), ddf, y)
    assert "dask_workers_lost" in got.history_  # the master ran on the partitions
    _same_model(ref, got)
    np.testing.assert_array_equal(got.feature_names_in_, df.columns)
    lazy = got.predict(ddf)
    assert hasattr(lazy, "dask")  # a lazy Dask result, as for a Dask array
    np.testing.assert_array_equal(_computed(lazy), ref.predict(df))
    np.testing.assert_array_equal(got.predict(df), ref.predict(df))
    np.testing.assert_array_equal(got.transform(ddf), ref.transform(df))
    with pytest.raises(ValueError, match="another order"):
        got.predict(ddf[list(df.columns[::-1])])
    # a Dask Series target stays on the cluster too: the same model
    ys = dd.from_pandas(pd.Series(y), npartitions=3)
    _same_model(ref, _fit(FGMClassifier(B=2, max_iter=4), ddf, ys))
    text = df.assign(kind="a")
    with pytest.raises(ValueError, match="non-numeric column.*'kind'"):
        FGMClassifier().fit(dd.from_pandas(text, npartitions=2), y)


def test_grfl_on_a_dask_dataframe_keeps_its_column_names(client, dd):
    df, y = _table()
    kw = dict(max_features=8, n_candidates=10, random_state=0)
    ref = InfiniteFeatureClassifier(**kw).fit(df, y)
    got = InfiniteFeatureClassifier(**kw).fit(dd.from_pandas(df, npartitions=3), y)
    np.testing.assert_array_equal(got.feature_names_in_, df.columns)
    np.testing.assert_allclose(got.column_coef_, ref.column_coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(got.predict(df), ref.predict(df))
