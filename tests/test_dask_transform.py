"""GrFL's ``transform`` of a Dask array or DataFrame runs on the workers, lazily.

``InfiniteFeatureClassifier/Regressor.transform`` (the learned features)
computed each row block of a Dask ``X`` on the cluster and mapped it in the
client (its code imports scikit-learn, which the workers never do), one block
at a time, and returned a NumPy array: the learned columns of an ``X`` on a
cluster (``n x n_kept`` doubles) were all made in the client.  The learned
features are now an object without scikit-learn
(``kernlearn.estimators._decisions.LearnedColumns``), sent to the workers once
as one key of the graph and evaluated there on each block, as the
predictions' decision objects are; the result is a lazy Dask array of ``X``'s
row chunks, equal to the in-memory ``transform`` (which calls the same
object) to the last bit.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

N, M = 96, 5
CHUNKS = (32, 3)  # (row blocks of 32: the products' rounding that of the whole X)
GRFL = dict(max_features=5, n_candidates=10, random_state=0)
# name: (estimator, fitted on sparse X)
MODELS = {
    "InfiniteFeatureClassifier": (lambda: InfiniteFeatureClassifier(loss="logistic", **GRFL),
                                  False),
    "InfiniteFeatureRegressor": (lambda: InfiniteFeatureRegressor(**GRFL), False),
    "InfiniteFeatureRegressor-sparse": (lambda: InfiniteFeatureRegressor(**GRFL), True),
}
# the worker's module list and the data of the predictions' tests (their N rows
# here: multiples of 32, one rounding for any blocks)
from test_dask_predict_workers import _WORKER_MODULES  # noqa: E402
from test_dask_predict_workers import _data as _rows  # noqa: E402


# conftest's client: a cluster of one worker process (its modules are its own,
# not the tests')
DASK_CLUSTER = dict(n_workers=1)


def _data(seed, sparse=False):
    return _rows(seed, sparse, n=N)


@pytest.fixture(scope="module")
def fitted():
    out = {}
    for name, (make, sparse) in MODELS.items():
        X, f = _data(0, sparse)
        y = np.where(f > 0, "yes", "no") if "Classifier" in name else 3 * f + 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            out[name] = make().fit(X, y)
    return out


def test_transform_runs_on_the_workers_lazily_and_equals_the_in_memory_one(client, fitted):
    (before,) = client.run(eval, _WORKER_MODULES).values()
    assert not [m for m in before if m.startswith("sklearn")], before
    for name, est in fitted.items():
        X, _ = _data(1, sparse=name.endswith("sparse"))
        Xd = da.from_array(X, chunks=CHUNKS, asarray=False)
        expected = est.transform(X)
        got = est.transform(Xd)
        assert isinstance(got, da.Array), (name, type(got))  # (nothing computed yet)
        assert got.chunks == (Xd.chunks[0], (est.feature_scales_.size,)), name
        value = got.compute()
        assert value.dtype == expected.dtype and value.shape == expected.shape, name
        np.testing.assert_array_equal(value, expected, err_msg=name)
    (after,) = client.run(eval, _WORKER_MODULES).values()
    # the blocks were mapped there, by the learned features' object, without
    # scikit-learn (the client-side path imported nothing on the workers)
    assert not [m for m in after if m.startswith("sklearn")], after
    assert "kernlearn.estimators._decisions" in after
    assert "kernlearn.estimators.infinite" not in after


def test_the_learned_features_are_one_key_of_the_graph(fitted):
    # sent to the workers once, not within each block's task
    from kernlearn.estimators._decisions import LearnedColumns

    est = fitted["InfiniteFeatureClassifier"]
    X, _ = _data(1)
    graph = dict(est.transform(da.from_array(X, chunks=(8, M))).__dask_graph__())
    holders = [k for k, v in graph.items() if isinstance(v, LearnedColumns)
               or isinstance(getattr(v, "value", None), LearnedColumns)]
    assert len(holders) == 1, holders


def test_a_dask_dataframe_with_an_empty_partition_is_transformed_as_in_memory(client):
    # names checked at once; a DataFrame's partitions (Fortran-ordered) and an
    # empty one (rows filtered out) give the in-memory columns to the last bit
    pd = pytest.importorskip("pandas")
    try:
        import dask.dataframe as dd
    except ImportError as exc:  # (dask.dataframe imports pyarrow)
        pytest.skip(f"dask.dataframe is not importable: {exc}")
    X, f = _data(0)
    df = pd.DataFrame(X, columns=[f"c{j}" for j in range(M)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = InfiniteFeatureRegressor(**GRFL).fit(df, 3 * f + 1)
    T, _ = _data(1)
    tf = pd.DataFrame(T, columns=df.columns)
    ddf = dd.from_pandas(tf, npartitions=3)
    assert [len(p) for p in ddf.partitions] == [32, 32, 32]
    keep = ~tf.index.isin(range(32, 64))  # the second partition emptied
    filtered = ddf.map_partitions(lambda p: p[~p.index.isin(range(32, 64))])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no "X does not have valid feature names")
        got = est.transform(ddf)
        got_filtered = est.transform(filtered)
    assert isinstance(got, da.Array) and isinstance(got_filtered, da.Array)
    np.testing.assert_array_equal(got.compute(), est.transform(tf))
    np.testing.assert_array_equal(got_filtered.compute(), est.transform(tf[keep]))
    with pytest.raises(ValueError, match="another order"):
        est.transform(ddf[list(df.columns[::-1])])  # (at once: nothing is read)


def test_rows_beyond_the_training_range_are_clipped_on_the_workers(client, fitted):
    # the regressor's transform clips its inputs to the training range, as its
    # predictions do, on the workers too
    est = fitted["InfiniteFeatureRegressor"]
    X, _ = _data(1)
    far = 6.0 * X - 2.0
    assert np.any(far > est.x_range_[1]) and np.any(far < est.x_range_[0])
    lazy = est.transform(da.from_array(far, chunks=CHUNKS))
    np.testing.assert_array_equal(lazy.compute(), est.transform(far))
    np.testing.assert_array_equal(lazy.compute(), est.transform(np.clip(far, *est.x_range_)))


def test_out_of_bounds_raise_on_partitions_of_unknown_sizes(client):
    # with out_of_bounds="raise" the blocks' inputs are checked in row order
    # first; partitions of unknown sizes (rows filtered, one emptied) are mapped
    # as without it, and a row beyond the range is named within its block
    pd = pytest.importorskip("pandas")
    try:
        import dask.dataframe as dd
    except ImportError as exc:  # (dask.dataframe imports pyarrow)
        pytest.skip(f"dask.dataframe is not importable: {exc}")
    X, f = _data(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = InfiniteFeatureRegressor(out_of_bounds="raise", **GRFL).fit(X, 3 * f + 1)
    T = np.clip(_data(1)[0], *est.x_range_)
    ddf = dd.from_pandas(pd.DataFrame(T), npartitions=3)
    filtered = ddf.map_partitions(lambda p: p[~p.index.isin(range(32, 64))]).to_dask_array()
    assert np.isnan(filtered.shape[0])
    keep = ~np.isin(np.arange(N), range(32, 64))
    for method in ("transform", "predict"):
        got = getattr(est, method)(filtered)
        np.testing.assert_array_equal(got.compute(), getattr(est, method)(T[keep]),
                                      err_msg=method)
    T[70, 1] = est.x_range_[1, 1] + 1.0  # row 6 of the third partition
    T[90, 0] = est.x_range_[1, 0] + 1.0
    far = dd.from_pandas(pd.DataFrame(T), npartitions=3).map_partitions(
        lambda p: p[~p.index.isin(range(32, 64))]).to_dask_array()
    with pytest.raises(ValueError, match=r"at row 6 of row block 2, column 1: .* \(2 row\(s\) "
                                         r"beyond it in that block\)"):
        est.transform(far).compute()
