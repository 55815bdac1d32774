"""FGM on data that is not in memory: Dask arrays on a LocalCluster, row chunks out of core."""

import bz2
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
import dask  # noqa: E402

from kernlearn import FGMClassifier, FGMRegressor  # noqa: E402
from kernlearn.datasets import (  # noqa: E402
    SvmlightChunks,
    load_svmlight,
    make_fgm_group_synthetic,
    make_fgm_synthetic,
    write_fgm_synthetic_svmlight,
)
from kernlearn.families import PolynomialPool  # noqa: E402
from kernlearn.partitioned import LocalRows, as_row_partitioned, parse_bytes  # noqa: E402


def _on_workers(X, rows):
    """A dask array whose partitions are cut from ``X`` by tasks (not sent from here)."""
    bounds = list(range(0, X.shape[0], rows)) + [X.shape[0]]
    cut = dask.delayed(lambda a, b: X[a:b], pure=True)
    meta = X[:0]
    return da.concatenate([da.from_delayed(cut(a, b), shape=(b - a, X.shape[1]),
                                           dtype=X.dtype, meta=meta)
                           for a, b in zip(bounds[:-1], bounds[1:])])


def _same_model(a, b, atol=1e-7):
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=atol)
    np.testing.assert_allclose(a.intercept_, b.intercept_, atol=atol)
    np.testing.assert_allclose(a.history_["objective"], b.history_["objective"], rtol=1e-9)


# --- Dask ---------------------------------------------------------------------------


def test_dask_binary_sparse_equals_in_memory(client):
    X, y, _ = make_fgm_synthetic(500, 300, 10, density=0.2, random_state=0)
    ref = FGMClassifier(B=5, max_iter=5).fit(X, y)
    Xd = da.from_array(X, chunks=(130, 300), asarray=False)
    dist = FGMClassifier(B=5, max_iter=5).fit(Xd, y)
    _same_model(dist, ref)
    scores = dist.decision_function(Xd)
    assert isinstance(scores, da.Array)  # lazy, computed block by block
    np.testing.assert_allclose(scores.compute(), ref.decision_function(X), atol=1e-8)
    np.testing.assert_array_equal(dist.predict(Xd).compute(), ref.predict(X))


def test_dask_regression_dense_equals_in_memory(client, rng):
    X = rng.standard_normal((400, 120))
    y = X[:, :6] @ np.arange(1.0, 7.0) + 0.1 * rng.standard_normal(400)
    # a fixed C: C="auto" cross-validates in memory only (Dask input: C=1)
    ref = FGMRegressor(B=3, max_iter=4, C=1.0).fit(X, y)
    dist = FGMRegressor(B=3, max_iter=4, C=1.0).fit(da.from_array(X, chunks=(100, 60)), y)
    _same_model(dist, ref)
    np.testing.assert_allclose(dist.predict(da.from_array(X, chunks=(150, 120))).compute(),
                               ref.predict(X), atol=1e-6)


def test_dask_groups_and_multiclass_equal_in_memory(client):
    X, y, _, groups = make_fgm_group_synthetic(300, 200, 10, 4, random_state=1)
    ref = FGMClassifier(B=2, max_iter=4, groups=groups).fit(X, y)
    dist = FGMClassifier(B=2, max_iter=4, groups=groups).fit(
        da.from_array(X, chunks=(70, 200)), y)
    _same_model(dist, ref)
    y3 = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5])  # three classes: shared selection
    ref3 = FGMClassifier(B=3, max_iter=3).fit(X, y3)
    dist3 = FGMClassifier(B=3, max_iter=3).fit(da.from_array(X, chunks=(100, 200)), y3)
    _same_model(dist3, ref3)
    np.testing.assert_allclose(dist3.decision_function(da.from_array(X, chunks=100)).compute(),
                               ref3.decision_function(X), atol=1e-8)


def test_dask_client_never_receives_X(client, monkeypatch):
    """Everything the client gathers is n-, n_features- or n x |active|-sized."""
    X, y, _ = make_fgm_synthetic(2000, 400, 10, random_state=2)
    received = []
    real_gather = distributed.Client.gather

    def spy(self, futures, *args, **kwargs):
        out = real_gather(self, futures, *args, **kwargs)
        if not kwargs.get("asynchronous") and not getattr(self, "asynchronous", False):
            received.append(sum(np.asarray(v).nbytes if not sp.issparse(v) else v.data.nbytes
                                for v in _leaves(out)))
        return out

    monkeypatch.setattr(distributed.Client, "gather", spy)
    clf = FGMClassifier(B=5, max_iter=4, tol=None).fit(_on_workers(X, 250), y)
    n_active = clf.selected_features_.size
    assert clf.n_iter_ == 4 and received
    # Per call at most the active block (n x |active|) or a few n-vectors ...
    assert max(received) <= 8 * X.shape[0] * (n_active + 2)
    # ... and over the whole fit much less than X itself (2000 x 400 doubles).
    assert sum(received) < X.nbytes / 2
    ref = FGMClassifier(B=5, max_iter=4, tol=None).fit(X, y)
    _same_model(clf, ref)


def _leaves(obj):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _leaves(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _leaves(o)
    elif isinstance(obj, np.ndarray) or sp.issparse(obj) or np.isscalar(obj):
        yield obj


def test_dask_bad_input_is_named(client):
    X = np.ones((20, 4))
    X[3, 2] = np.nan
    y = np.where(np.arange(20) % 2, 1, -1)
    with pytest.raises(ValueError, match=r"missing value \(NaN\) at row 3, column 2"):
        FGMClassifier().fit(da.from_array(X, chunks=5), y)
    with pytest.raises(ValueError, match="y has shape"):
        FGMClassifier().fit(da.from_array(np.ones((20, 4)), chunks=5), y[:-1])
    with pytest.raises(ValueError, match="family= needs an in-memory X"):
        FGMClassifier(family=PolynomialPool()).fit(da.from_array(np.ones((20, 4))), y)
    clf = FGMClassifier(B=1, max_iter=2).fit(np.eye(20, 4) + np.arange(20)[:, None], y)
    with pytest.raises(ValueError, match="expects 4 features"):
        clf.predict(da.from_array(np.ones((20, 5)), chunks=5))


# --- out of core --------------------------------------------------------------------


@pytest.fixture(scope="module")
def svm_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("svm") / "train.svm"
    write_fgm_synthetic_svmlight(path, 1500, 300, 15, density=0.05, chunk_rows=400,
                                 random_state=3)
    return path


@pytest.mark.parametrize("cache", [True, False])
def test_svmlight_chunks_equal_in_memory(svm_file, cache):
    X, y = load_svmlight(svm_file, n_features=300)
    chunks = SvmlightChunks(svm_file, n_features=300, chunk_rows=350, cache=cache)
    assert chunks.n_chunks == 5 and chunks.nnz == X.nnz
    np.testing.assert_array_equal(chunks.y, y)
    for _ in range(2):  # readable more than once
        rows = sp.vstack([chunks.get_chunk(i) for i in range(chunks.n_chunks)])
        assert abs(rows - X).max() == 0
    ref = FGMClassifier(B=4, max_iter=5).fit(X, y)
    out = FGMClassifier(B=4, max_iter=5).fit(chunks, chunks.y)
    _same_model(out, ref)
    np.testing.assert_array_equal(out.predict(chunks), ref.predict(X))
    assert np.all(out.history_["peak_rss_mb"] > 0)


def test_svmlight_chunks_by_budget_and_one_based(tmp_path):
    text = b"1 1:0.5 3:1\n-1 2:2\n# a comment\n1 1:4 3:-1\n-1 2:1\n"
    (tmp_path / "a.svm").write_bytes(text)
    (tmp_path / "a.svm.bz2").write_bytes(bz2.compress(text))
    ref, y = load_svmlight(tmp_path / "a.svm")
    for path in ("a.svm", "a.svm.bz2"):
        chunks = SvmlightChunks(tmp_path / path, memory_budget=40)  # 10-byte chunks
        assert chunks.n_chunks == 4 and not chunks.zero_based and chunks.shape == (4, 3)
        got = sp.vstack([chunks.get_chunk(i) for i in range(chunks.n_chunks)])
        assert abs(got - ref).max() == 0
        np.testing.assert_array_equal(chunks.y, y)


def test_svmlight_chunks_bad_files(tmp_path):
    (tmp_path / "bad.svm").write_bytes(b"1 1:0.5\n-1 2:x\n")
    with pytest.raises(ValueError, match="corrupt svmlight file"):
        SvmlightChunks(tmp_path / "bad.svm")
    (tmp_path / "empty.svm").write_bytes(b"\n")
    with pytest.raises(ValueError, match="empty"):
        SvmlightChunks(tmp_path / "empty.svm")
    (tmp_path / "c.svm.gz").write_bytes(b"")
    with pytest.raises(ValueError, match="needs cache=True"):
        SvmlightChunks(tmp_path / "c.svm.gz", cache=False)
    with pytest.raises(FileNotFoundError):
        SvmlightChunks(tmp_path / "missing.svm")


def test_memmap_with_memory_budget_equals_in_memory(tmp_path):
    X, y, _ = make_fgm_synthetic(600, 80, 8, random_state=4)
    np.save(tmp_path / "X.npy", X)
    mm = np.load(tmp_path / "X.npy", mmap_mode="r")
    rows = as_row_partitioned(mm, memory_budget=80 * 8 * 100 * 2)  # 100 rows per block
    assert isinstance(rows, LocalRows) and rows.n_blocks == 6
    ref = FGMClassifier(B=4, max_iter=4).fit(X, y)
    out = FGMClassifier(B=4, max_iter=4, memory_budget=80 * 8 * 100 * 2).fit(mm, y)
    _same_model(out, ref)
    np.testing.assert_array_equal(out.predict(mm), ref.predict(X))
    reg = FGMRegressor(B=4, max_iter=3, refit=True, memory_budget="20KB",
                       C=1.0).fit(mm, X[:, 3])
    reg_ref = FGMRegressor(B=4, max_iter=3, refit=True, C=1.0).fit(X, X[:, 3])
    np.testing.assert_allclose(reg.coef_, reg_ref.coef_, atol=1e-8)


def test_sample_weights_on_chunked_and_dask_data_equal_in_memory(tmp_path, client):
    # the weighted feature scaling is map-reduced over the row blocks, and the
    # weights enter the loss on the client: the same model as in memory
    X, y, _ = make_fgm_synthetic(600, 80, 8, random_state=5)
    w = np.random.default_rng(0).integers(0, 4, size=600).astype(float)
    ref = FGMClassifier(B=4, max_iter=4).fit(X, y, sample_weight=w)
    unweighted = FGMClassifier(B=4, max_iter=4).fit(X, y)
    assert not np.allclose(ref.coef_, unweighted.coef_)  # the weights matter here
    np.save(tmp_path / "X.npy", X)
    mm = np.load(tmp_path / "X.npy", mmap_mode="r")
    # the weighted root-mean-square scaling, from its definition, on every layout
    from kernlearn.families import FeaturePool

    expected = np.sqrt(w.sum() / (w @ X**2))
    for data in (X, sp.csr_matrix(X), sp.csc_matrix(X), as_row_partitioned(mm, "20KB")):
        np.testing.assert_allclose(FeaturePool().fit(data, w).scale_, expected, rtol=1e-12)
    chunked = FGMClassifier(B=4, max_iter=4, memory_budget="20KB").fit(
        mm, y, sample_weight=w)
    _same_model(chunked, ref)
    dist = FGMClassifier(B=4, max_iter=4).fit(
        da.from_array(X, chunks=(130, 80)), y, sample_weight=w)
    _same_model(dist, ref)


@pytest.mark.parametrize("size, expected", [("2GB", 2 * 10**9), ("512 MiB", 2**29),
                                            (1000, 1000), ("1.5kb", 1500)])
def test_parse_bytes(size, expected):
    assert parse_bytes(size) == expected


@pytest.mark.parametrize("size", ["2 parsecs", "-1GB", 0, "GB"])
def test_parse_bytes_rejects(size):
    with pytest.raises(ValueError, match="memory size"):
        parse_bytes(size)


_RSS_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    from kernlearn import FGMClassifier
    X = np.load(sys.argv[1], mmap_mode="r")
    y = np.load(sys.argv[2])
    clf = FGMClassifier(B=3, max_iter=2, tol=None, memory_budget="4MB").fit(X, y)
    print(json.dumps({"peak": float(clf.history_["peak_rss_mb"][-1]),
                      "n_features": int(clf.selected_features_.size)}))
""")


def _write_rows(path, n, m, seed):
    """A float32 .npy of ``n x m`` N(0, 1) rows written in blocks; labels by 5 features."""
    rng = np.random.default_rng(seed)
    mm = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, m))
    y = np.empty(n)
    for a in range(0, n, 10_000):
        block = rng.standard_normal((min(10_000, n - a), m)).astype(np.float32)
        mm[a : a + len(block)] = block
        y[a : a + len(block)] = np.sign(block[:, :5].sum(1) + 1e-9)
    mm.flush()
    del mm
    return y


@pytest.mark.slow
def test_chunked_peak_rss_does_not_grow_with_n(tmp_path):
    """Peak RSS of a subprocess fitting n and 4n rows read in 4 MB chunks."""
    peaks, sizes = [], []
    for n in (10_000, 40_000):
        xp, yp = tmp_path / f"X{n}.npy", tmp_path / f"y{n}.npy"
        np.save(yp, _write_rows(xp, n, 500, n))
        out = subprocess.run([sys.executable, "-c", _RSS_SCRIPT, str(xp), str(yp)],
                             capture_output=True, text=True, check=True)
        res = json.loads(out.stdout.strip().splitlines()[-1])
        assert res["n_features"] > 0
        peaks.append(res["peak"])
        sizes.append(xp.stat().st_size / 2**20)
    growth_data = sizes[1] - sizes[0]  # 57 MB more data (115 MB as float64)
    assert growth_data > 55
    # The master's n-sized vectors and n x |active| block may grow (about 13 MB
    # here); reading all of X would add at least growth_data.
    assert peaks[1] - peaks[0] < 0.5 * growth_data, (peaks, sizes)


def test_svmlight_chunks_to_dask_equals_in_memory(client, svm_file):
    """The workers read the cached chunks themselves (the doc's pipeline)."""
    X, y = load_svmlight(svm_file, n_features=300)
    chunks = SvmlightChunks(svm_file, n_features=300, chunk_rows=400)
    Xd = chunks.to_dask()
    assert Xd.numblocks == (4, 1) and Xd.shape == X.shape
    ref = FGMClassifier(B=4, max_iter=4).fit(X, y)
    _same_model(FGMClassifier(B=4, max_iter=4).fit(Xd, chunks.y), ref)
