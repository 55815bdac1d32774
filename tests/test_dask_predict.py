"""Fitted estimators predicting a Dask array or DataFrame by row blocks.

Every estimator computed a ``dask.array`` into the client before predicting
(``X.compute()`` in its input validation): an ``X`` larger than the client's
memory could not be predicted, although it had been fitted on the cluster.
Predictions now run block by block over the rows (the column chunks merged
first) and equal those of the computed array; the in-memory checks of ``X``
(its number of columns, a DataFrame's column names, NaN and infinity named by
row and column) are made on the blocks.
"""

import re
import threading
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from kernlearn import (
    FGMClassifier,
    FGMRegressor,
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
    MultitaskMKLClassifier,
    MultitaskMKLRegressor,
    PNormMKLClassifier,
)

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

N, M = 90, 6
# Row blocks of 32, 32, 26 and the columns split in two.  Blocks of a multiple
# of 32 rows give the computed array's numbers to the last bit: BLAS sums a
# row of a matrix product in an order that depends on its position modulo its
# kernel's row unrolling (4 to 16), and the last rows' (the remainder) are
# the last rows here too.  Other blocks: the same up to rounding (1e-15).
CHUNKS = (32, 4)


# conftest's client: one light cluster for the module (two one-thread workers in
# this process)
DASK_CLUSTER = dict(n_workers=2, processes=False)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, M))
    X[:, 3] = 20 + 5 * X[:, 3]  # a column in other units
    f = X[:, 0] - 0.5 * X[:, 1] + 0.1 * (X[:, 3] - 20) + 0.3 * rng.standard_normal(N)
    return X, f


def _fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y, **kw)


FAST_MKL = dict(max_iter=5, max_iter_online=2, random_state=0)
# name: (estimator, classification, fitted with task ids)
ESTIMATORS = {
    "FGMClassifier": (lambda: FGMClassifier(B=2, max_iter=3, loss="logistic"), True, False),
    "FGMRegressor": (lambda: FGMRegressor(B=2, max_iter=3, C=1.0), False, False),
    "InfiniteFeatureClassifier": (lambda: InfiniteFeatureClassifier(
        max_features=5, n_candidates=10, loss="logistic", random_state=0), True, False),
    "InfiniteFeatureRegressor": (lambda: InfiniteFeatureRegressor(
        max_features=5, n_candidates=10, random_state=0), False, False),
    "InfiniteFeatureClassifier-tasks": (lambda: InfiniteFeatureClassifier(
        max_features=5, n_candidates=10, random_state=0), True, True),
    "PNormMKLClassifier": (lambda: PNormMKLClassifier(probability=True, **FAST_MKL),
                           True, False),
    "LowRankKernelRegressor": (lambda: LowRankKernelRegressor(
        max_iter=4, tol=1e-2, random_state=0), False, False),
    "LowRankKernelClassifier": (lambda: LowRankKernelClassifier(
        max_iter=4, tol=1e-2, random_state=0, probability=True), True, False),
    "MultitaskMKLClassifier": (lambda: MultitaskMKLClassifier(probability=True), True, True),
    "MultitaskMKLRegressor": (lambda: MultitaskMKLRegressor(), False, True),
}
METHODS = ("predict", "decision_function", "predict_proba", "transform")


def _tasks():
    return np.where(np.arange(N) % 3 == 0, "a", "b")


@pytest.fixture(scope="module")
def fitted():
    """Each estimator fitted once in memory, with its test rows (and task ids)."""
    X, f = _data()
    out = {}
    for name, (make, classification, with_tasks) in ESTIMATORS.items():
        y = np.where(f > 0, "yes", "no") if classification else 3 * f + 1
        kw = {"task_index": _tasks()} if with_tasks else {}
        out[name] = _fit(make(), X, y, **kw), kw
    return out


class _NoWholeX:
    """Fails when the Dask array ``Xd`` (or it with its columns merged) is
    computed or made a NumPy array in the client, as the in-memory validation
    did (``X.compute()``)."""

    def __init__(self, monkeypatch, Xd):
        self.names = {Xd.name, Xd.rechunk({1: -1}).name}
        for attr in ("compute", "__array__"):
            orig = getattr(da.Array, attr)
            monkeypatch.setattr(da.Array, attr, self._guard(orig))

    def _guard(self, orig):
        def guarded(arr, *args, **kwargs):
            if arr.name in self.names:
                raise AssertionError(f"the whole X {arr.shape} was computed in the client")
            return orig(arr, *args, **kwargs)

        return guarded


def _computed(a):
    return a.compute() if hasattr(a, "compute") else a


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_every_prediction_of_a_dask_array_is_the_in_memory_one_by_blocks(
        client, fitted, name, monkeypatch):
    est, kw = fitted[name]
    X, _ = _data(seed=1)
    Xd = da.from_array(X, chunks=CHUNKS)
    methods = [m for m in METHODS if hasattr(est, m)]
    args = {m: {} if m == "transform" else kw for m in methods}
    expected = {m: getattr(est, m)(X, **args[m]) for m in methods}
    _NoWholeX(monkeypatch, Xd)
    for m in methods:
        got = getattr(est, m)(Xd, **args[m])
        # the return type: lazy, computed on the workers (FGM's since kernlearn
        # 0.2, the others' since their decision functions travel there, GrFL's
        # learned features too), but for FGM's transform (its selected columns)
        lazy = m != "transform" or not name.startswith("FGM")
        assert hasattr(got, "dask") == lazy, (m, type(got))
        got = _computed(got)
        assert got.dtype == expected[m].dtype and got.shape == expected[m].shape, m
        np.testing.assert_array_equal(got, expected[m], err_msg=m)


@pytest.mark.parametrize("name", ["FGMClassifier", "InfiniteFeatureRegressor",
                                  "MultitaskMKLClassifier"])
def test_a_non_finite_value_is_named_by_its_row_over_all_blocks(client, fitted, name):
    est, kw = fitted[name]
    X, _ = _data(seed=1)
    X[70, 2] = np.nan  # in the third row block
    X[80, 1] = np.inf
    with pytest.raises(ValueError, match=r"missing value \(NaN\) at row 70, column 2 "
                                         r"\(2 in row block 2\)"):
        _computed(est.predict(da.from_array(X, chunks=CHUNKS), **kw))
    X[70, 2] = 0.0
    with pytest.raises(ValueError, match=r"infinite value \(inf\) at row 80, column 1"):
        _computed(est.predict(da.from_array(X, chunks=CHUNKS), **kw))


def test_sparse_rows_for_a_dense_grfl_transform_are_refused_at_once(client, fitted):
    # GrFL's transform of a Dask array maps the blocks on the workers: sparse
    # rows for a model fitted on dense X are refused when transform is called,
    # in the in-memory words (mapped in the client, the first block's error
    # said which rows of X it held)
    est, _ = fitted["InfiniteFeatureRegressor"]
    X, _ = _data(seed=1)
    S = sp.csr_matrix(X)
    with pytest.raises(ValueError, match="X is sparse, but the model was fitted on dense X"
                       ) as in_memory:
        est.transform(S)
    with pytest.raises(ValueError) as lazy:
        est.transform(da.from_array(S, chunks=(25, M), asarray=False))
    assert str(lazy.value) == str(in_memory.value)


@pytest.mark.parametrize("name", ["LowRankKernelClassifier", "PNormMKLClassifier",
                                  "MultitaskMKLRegressor"])
def test_a_lazy_prediction_names_an_overflowing_row_as_in_memory(client, fitted, name):
    # on the workers each block's decision values are checked with the block's
    # place in X: a value too large for the model's arithmetic in row 70 of X
    # is row 70 (the prediction of the block in the client said "row 6 of X");
    # the kernel regressors clip their inputs to the training range instead
    est, kw = fitted[name]
    X, _ = _data(seed=1)
    X[70, 1] = 1e308
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match="for row 70 of X|kernels\\[0\\] produced"
                           ) as in_memory:
            est.predict(X, **kw)
        lazy = est.predict(da.from_array(X, chunks=CHUNKS), **kw)
        with pytest.raises(ValueError) as on_workers:
            lazy.compute()
    assert str(on_workers.value) == str(in_memory.value)


@pytest.mark.parametrize("name", ["FGMRegressor", "LowRankKernelRegressor",
                                  "InfiniteFeatureClassifier-tasks"])
def test_unknown_block_sizes_are_predicted_and_named(client, fitted, name):
    # rows filtered by a condition: Dask knows neither the blocks' sizes nor
    # where a row of them is in X
    est, kw = fitted[name]
    X, _ = _data(seed=1)
    keep = X[:, 0] > -0.5
    Xd = da.from_array(X, chunks=CHUNKS)
    unknown = Xd[da.from_array(keep, chunks=CHUNKS[0])]
    assert np.isnan(unknown.shape[0])
    sub = {k: v[keep] for k, v in kw.items()}
    np.testing.assert_array_equal(_computed(est.predict(unknown, **sub)),
                                  est.predict(X[keep], **sub))
    X[keep.nonzero()[0][30], 4] = np.nan  # the 31st row kept
    bad = da.from_array(X, chunks=CHUNKS)[da.from_array(keep, chunks=CHUNKS[0])]
    # (with task ids the blocks' sizes are computed first: the row is X's)
    where = (r"row \d+ of row block \d+, column 4 \(1 in that block\)"
             if not kw else r"row 30, column 4 \(1 in row block \d\)")
    with pytest.raises(ValueError, match=where):
        _computed(est.predict(bad, **sub))


@pytest.mark.parametrize("name", ["FGMClassifier", "PNormMKLClassifier"])
def test_the_number_of_columns_is_checked_before_anything_is_read(client, fitted, name):
    est, _ = fitted[name]
    with pytest.raises(ValueError, match="X has 5 features .* expects 6 features"):
        est.predict(da.from_array(np.ones((20, 5)), chunks=5))
    with pytest.raises(ValueError, match="2-D array of 6 features"):
        est.predict(da.ones(20, chunks=5))
    # a DataFrame's values whose columns' sizes are unknown
    odd = da.ones((20, 6), chunks=(5, 3)).map_blocks(lambda b: b,
                                                     chunks=((5,) * 4, (np.nan, np.nan)))
    with pytest.raises(ValueError, match="unknown number of columns"):
        est.predict(odd)


def test_task_ids_are_split_with_the_rows(client, fitted):
    est, kw = fitted["MultitaskMKLRegressor"]
    X, _ = _data(seed=1)
    tasks = kw["task_index"]
    np.testing.assert_array_equal(
        est.predict(da.from_array(X, chunks=CHUNKS), task_index=da.from_array(tasks, 30)),
        est.predict(X, task_index=tasks))
    with pytest.raises(ValueError, match=r"task_index must have shape \(90,\), got \(89,\)"):
        est.predict(da.from_array(X, chunks=CHUNKS), task_index=tasks[:-1])


def test_sparse_blocks_are_predicted_as_the_sparse_matrix(client, fitted):
    X, _ = _data(seed=1)
    X[np.abs(X) < 0.8] = 0.0
    S = sp.csr_matrix(X)
    Sd = da.from_array(S, chunks=(25, M), asarray=False)
    for name in ("FGMClassifier", "InfiniteFeatureRegressor", "LowRankKernelClassifier"):
        est, _ = fitted[name]
        try:
            expected = est.predict(S)
        except ValueError as exc:  # (GrFL fitted on dense X refuses sparse X)
            with pytest.raises(ValueError, match=re.escape(str(exc))):
                est.predict(Sd)  # (at once, though the prediction is lazy)
            continue
        np.testing.assert_array_equal(_computed(est.predict(Sd)), expected)
    fgm = fitted["FGMClassifier"][0]
    got = fgm.transform(Sd)
    assert sp.issparse(got)
    np.testing.assert_array_equal(got.toarray(), fgm.transform(S).toarray())


def test_a_dask_dataframe_is_predicted_by_blocks_with_its_names_checked(client, dd):
    pd = pytest.importorskip("pandas")
    X, f = _data()
    df = pd.DataFrame(X, columns=[f"c{j}" for j in range(M)])
    est = _fit(LowRankKernelRegressor(max_iter=4, tol=1e-2, random_state=0), df, f)
    ddf = dd.from_pandas(df, chunksize=CHUNKS[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no "X does not have valid feature names")
        got = est.predict(ddf)
    np.testing.assert_array_equal(got, est.predict(df))
    with pytest.raises(ValueError, match="another order"):
        est.predict(ddf[list(df.columns[::-1])])
    # a Dask array of a model fitted with names: scikit-learn's warning, once
    with pytest.warns(UserWarning, match="does not have valid feature names") as record:
        est.predict(da.from_array(X, chunks=CHUNKS))
    assert sum("feature names" in str(w.message) for w in record) == 1


def test_fgm_predictions_carry_no_estimator_to_the_workers(tmp_path, fitted):
    # the block check added to FGM's lazy map must not import scikit-learn where
    # it is unpickled (the workers)
    import subprocess
    import sys

    cloudpickle = pytest.importorskip("cloudpickle")
    est, _ = fitted["FGMClassifier"]
    X, _ = _data(seed=1)
    lazy = est.predict_proba(da.from_array(X, chunks=CHUNKS))
    (tmp_path / "tasks").write_bytes(cloudpickle.dumps(dict(lazy.__dask_graph__())))
    check = ("import pickle, sys; pickle.loads(open(sys.argv[1], 'rb').read()); "
             "print('sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", check, str(tmp_path / "tasks")],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stdout


@pytest.mark.parametrize("name", ["LowRankKernelRegressor", "InfiniteFeatureRegressor"])
def test_rows_beyond_the_training_range_are_clipped_on_the_workers(client, fitted, name):
    # the kernel regressors predict on inputs clipped to the training range;
    # the decision object the workers evaluate clips too (it predicted the
    # unclipped model's values there, not the in-memory ones)
    est, _ = fitted[name]
    X, _ = _data(seed=1)
    far = 6.0 * X - 2.0
    assert np.any(far > est.x_range_[1]) and np.any(far < est.x_range_[0])
    edge = np.clip(far, *est.x_range_)
    lazy = est.predict(da.from_array(far, chunks=CHUNKS))
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), est.predict(far))
    np.testing.assert_allclose(lazy.compute(), est.predict(edge), rtol=1e-12, atol=1e-12)


_RELEASED = threading.Event()


def _read_block(T, k):
    """Rows ``32k`` to ``32k + 31`` of ``T``; block 1 once ``_RELEASED`` is set (the
    cluster runs in this process) or a minute passed, its worker's thread free."""
    if k == 1:
        from distributed import rejoin, secede

        secede()  # (its worker's thread free meanwhile: the other blocks go on)
        _RELEASED.wait(timeout=60)
        rejoin()
    return T[32 * k:32 * (k + 1)]


@pytest.mark.parametrize("transform", [False, True], ids=["predict", "transform"])
def test_out_of_bounds_raise_names_the_first_offending_row_whatever_finishes_first(
        client, transform):
    # out_of_bounds="raise" with rows beyond the training range in blocks 1 and
    # 3: each block refused its own rows and compute() raised whichever block's
    # error reached the client first; block 1 is read last here (its reader waits
    # until the result is ready or a few seconds passed), and the error must
    # still name its row, the first offending row of X, as in memory
    import dask

    X, f = _data()
    est = _fit(InfiniteFeatureRegressor(max_features=5, n_candidates=10, random_state=0,
                                        out_of_bounds="raise"), X, 3 * f + 1)
    T, _ = _data(seed=1)
    T = np.clip(T, *est.x_range_)
    T[40, 2] = est.x_range_[1, 2] + 1.0  # block 1 (rows 32 to 63)
    T[70, 0] = est.x_range_[0, 0] - 1.0  # block 2 (rows 64 to 89)
    _RELEASED.clear()
    Td = da.concatenate([da.from_delayed(dask.delayed(_read_block)(T, k),
                                         (len(T[32 * k:32 * (k + 1)]), M), dtype=float)
                         for k in range(3)])
    with pytest.raises(ValueError, match="at row 40, column 2") as in_memory:
        est.transform(T) if transform else est.predict(T)
    future = client.compute(est.transform(Td) if transform else est.predict(Td))
    distributed = pytest.importorskip("distributed")
    try:
        distributed.wait(future, timeout=3)
    except distributed.TimeoutError:
        pass  # (block 1's error cannot come before block 1 is read)
    _RELEASED.set()
    with pytest.raises(ValueError) as on_cluster:
        future.result()
    # (the count is the block's: the other blocks' rows are not read for it)
    expected = str(in_memory.value).replace("(2 row(s) beyond it in all)",
                                            "(1 row(s) beyond it in row block 1)")
    assert str(on_cluster.value) == expected


def test_the_memory_benchmark_predicts_the_multitask_models_with_their_task_ids(capsys):
    # benchmarks/predict_memory.py passed no task_index: the multitask models
    # (fitted on tasks, they need the rows' ids) could not be measured
    from bench_scripts import load_script

    for module in load_script("predict_memory"):
        assert module.main(["--estimators", "MultitaskMKLRegressor", "--train", "80x3",
                            "--rows", "64", "--dask", "32"]) == 0
    row = [line for line in capsys.readouterr().out.splitlines()
           if line.startswith("| MultitaskMKLRegressor |")][-1]
    cells = [c.strip() for c in row.strip("|").split("|")]
    # lazy result, client peak, wall seconds, equal to the in-memory prediction
    assert cells[4] == "True" and cells[-1] == "True", row


def test_dask_task_ids_stay_on_the_cluster(client, fitted, monkeypatch):
    # the ids were computed into the client and their positions sent back with
    # the graph (n values each: a multitask prediction's client peak 11 MB
    # against the other models' 4 MB on 393,216 rows); only the distinct ids
    # reach it now, checked at once, and each block's positions are made there
    X, _ = _data(seed=1)
    for name in ("MultitaskMKLClassifier", "InfiniteFeatureClassifier-tasks"):
        est, kw = fitted[name]
        tasks = da.from_array(kw["task_index"], chunks=25)  # (other chunks than X's)
        for attr in ("compute", "__array__"):
            orig = getattr(da.Array, attr)

            def guarded(arr, *args, _orig=orig, **kwargs):
                assert arr.name != tasks.name, "the task ids were computed in the client"
                return _orig(arr, *args, **kwargs)

            monkeypatch.setattr(da.Array, attr, guarded)
        lazy = est.predict(da.from_array(X, chunks=CHUNKS), task_index=tasks)
        monkeypatch.undo()
        np.testing.assert_array_equal(lazy.compute(), est.predict(X, **kw), err_msg=name)
        with pytest.raises(ValueError, match=r"task_index has tasks unseen in fit: \['c'\]"):
            est.predict(da.from_array(X, chunks=CHUNKS),
                        task_index=da.from_array(np.where(kw["task_index"] == "a", "c", "b"),
                                                 chunks=25))
