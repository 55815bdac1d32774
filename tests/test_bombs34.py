"""Issue 21: bzip2/LZMA decompression bombs in ``.npz`` data files, and the
parameters of older (0.1.0) model files.

Each test here failed on the code before its fix.
"""

import io
import json
import struct
import tracemalloc
import warnings
import zipfile
import zlib

import numpy as np
import pytest
from conftest import one_error as _one_error
from conftest import run_cli as _run

from kernlearn.datafiles import load_data_file
from kernlearn.utils import _npy_header

METHODS = [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]


def _header(shape):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return buf.getvalue()


def _zeros_member(path, method, shape, n_zeros, declared=None):
    """An ``.npz`` whose ``X.npy`` is the header of ``shape`` and ``n_zeros``
    zero bytes compressed by ``method``; its declared size and CRC rewritten
    to ``declared`` bytes when given (as anyone can)."""
    head = _header(shape)
    with zipfile.ZipFile(path, "w") as zf:
        info = zipfile.ZipInfo("X.npy")
        info.compress_type = method
        with zf.open(info, "w") as fh:
            fh.write(head)
            for _ in range(n_zeros // 2**20):
                fh.write(bytes(2**20))
            fh.write(bytes(n_zeros % 2**20))
    if declared is not None:
        data = bytearray(path.read_bytes())
        crc = zlib.crc32(bytes(max(declared - len(head), 0)), zlib.crc32(head[:declared]))
        i = data.find(b"PK\x01\x02")
        for crc_at, size_at in ((14, 22), (i + 16, i + 24)):  # (local, central)
            struct.pack_into("<I", data, crc_at, crc)
            struct.pack_into("<I", data, size_at, declared)
        path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("method", METHODS)
def test_a_small_member_unpacking_to_far_more_is_refused_unread(method, tmp_path, capsys):
    # A 2x2 X.npy (160 bytes declared) whose bzip2 stream goes on with zeros
    # (a 616-byte file, 1 GB behind it): zipfile unpacks such a member's whole
    # data in one read, so reading its 128-byte header held it all (1.9 s,
    # 1 GB), and NumPy's read again; the file then read as a 2x2 table.
    path = _zeros_member(tmp_path / "bomb.npz", method, (2, 2), 48 * 2**20, declared=160)
    assert path.stat().st_size < 2**15
    np.savez(tmp_path / "warm.npz", X=np.zeros((2, 2)))
    load_data_file(tmp_path / "warm.npz")  # (the imports, out of the count)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="X.npy unpacks to more than the bytes it "
                                             "declares"):
            load_data_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # (blocks of the stream, and LZMA's 8 MiB dictionary: not the 48 MiB)
    assert peak < 16 * 2**20, peak
    code, _, err = _run(["fit", "-e", "fgm", "-m", tmp_path / "m.npz", "-q", path], capsys)
    assert code == 3 and _one_error(err) and "unpacks to more than" in err, err


@pytest.mark.parametrize("method", METHODS)
def test_over_the_cap_a_member_is_counted_before_allocation(method, tmp_path,
                                                           monkeypatch):
    # Over the size cap, a bzip2/LZMA member was read on its declared size
    # (no ratio bounds them): one declaring 4 MB of a stream holding 32 bytes
    # allocated them first.  Its real size is now counted in blocks first;
    # honest zeros and genuine data (which zipfile writes so) still read.
    monkeypatch.setattr(_npy_header, "_MIN_CAP", 2**20)
    allocated = []
    real_read = np.lib.format.read_array
    monkeypatch.setattr(np.lib.format, "read_array",
                        lambda fh, **kw: allocated.append(fh) or real_read(fh, **kw))
    liar = _zeros_member(tmp_path / "liar.npz", method, (2**18, 2), 32,
                         declared=128 + 2**22)
    with pytest.raises(ValueError, match=r"X\.npy does not unpack to the 4194432 bytes"):
        load_data_file(liar)
    assert allocated == []
    honest = _zeros_member(tmp_path / "zeros.npz", method, (2**18, 2), 2**22)
    X, y, _ = load_data_file(honest)
    assert X.shape == (2**18, 1) and not X.any() and not y.any()
    rng = np.random.default_rng(0)
    table = rng.standard_normal((2**16, 3)).round(2)
    with zipfile.ZipFile(tmp_path / "real.npz", "w", compression=method) as zf:
        for name, a in (("X", table[:, :2]), ("y", table[:, 2])):
            buf = io.BytesIO()
            np.save(buf, a)
            zf.writestr(f"{name}.npy", buf.getvalue())
    X, y, _ = load_data_file(tmp_path / "real.npz")
    assert np.array_equal(X, table[:, :2]) and np.array_equal(y, table[:, 2])


def _as_old_file(est, path, absent, version="0.1.0"):
    """``est`` saved as kernlearn ``version`` (0.1.0) wrote it: labelled (and
    sealed) so, without the parameters ``absent`` added since (the rest as that
    code's)."""
    from kernlearn.io import _seal, save_model

    save_model(est, path)
    with np.load(path, allow_pickle=False) as d:
        arrays = {k: d[k] for k in d.files}
    meta = json.loads(bytes(arrays.pop("__meta__")).decode())
    params = meta["params"].get("$dict", meta["params"])
    for name in absent:
        del params[name]
    meta["kernlearn_version"] = version
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    path.write_bytes(_seal(buf.getvalue(), version))
    return path


@pytest.mark.parametrize("case", ["classifier", "regressor", "pnorm"])
def test_a_0_1_0_file_lacking_newer_parameters_describes_its_model(case, tmp_path):
    # 0.1.0 files of low-rank models before 11-26 lack standardize,
    # gamma_factors and (classifier) multiclass, p-norm MKL's before 11-26
    # 01:23 standardize: the old code fitted unstandardised, one kernel width,
    # one SLKL problem per one-vs-all output.  They loaded with today's
    # defaults in get_params (standardize=True...) while predicting as saved;
    # a clone refit was another model.  (Real files of commit 74d9b96c, 11-25,
    # load so too; their refit here draws other candidate columns from the
    # same random_state, so it is not that code's fit.)
    from sklearn.base import clone
    from threadpoolctl import threadpool_limits

    from kernlearn import (LowRankKernelClassifier, LowRankKernelRegressor,
                           PNormMKLClassifier)
    from kernlearn.io import load_model

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3)) * [1, 10, 100] + [0, 5, 50]
    y = np.digitize(X[:, 0] + X[:, 1] / 10, [-0.5, 0.5])
    old = {"standardize": False, "gamma_factors": (1.0,)}
    est = {"classifier": LowRankKernelClassifier(n_columns=20, random_state=0,
                                                 multiclass="ovr", **old),
           "regressor": LowRankKernelRegressor(n_columns=20, random_state=0, **old),
           "pnorm": PNormMKLClassifier(random_state=0, standardize=False)}[case]
    y = {"regressor": X[:, 0] - X[:, 1] / 10, "pnorm": y % 2}.get(case, y)
    absent = {"classifier": [*old, "multiclass"], "regressor": old,
              "pnorm": ["standardize"]}[case]
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (convergence on these 60 rows)
        est.fit(X, y)
        loaded = load_model(_as_old_file(est, tmp_path / "old.npz", absent))
        assert loaded.get_params() == est.get_params()
        refit = clone(loaded).fit(X, y)
        assert np.array_equal(refit.predict(X), est.predict(X))
        assert np.array_equal(loaded.predict(X), est.predict(X))

