"""Defects found by tampering with model files and data files at random
(``benchmarks/fuzz_files.py``); each test names what went wrong."""

import io
import zipfile

import numpy as np
import pytest
from conftest import one_error as _one_error
from conftest import run_cli as _run

from kernlearn.datafiles import load_data_file


def _npy_declaring(shape, data):
    """An ``.npy`` file whose header declares ``shape`` over the bytes of ``data``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return buf.getvalue() + np.ascontiguousarray(data, dtype="<f8").tobytes()


@pytest.mark.parametrize("shape", [(10**12, 5), (10**6, 10**6)])
def test_npy_data_header_declaring_terabytes_is_refused_before_allocating(tmp_path, shape):
    # a .npy data file of 1 kB whose header declares 10**12 rows was
    # "MemoryError: Unable to allocate 7.28 TiB" (the command line: "out of
    # memory"), or an allocation as large as the machine allows
    path = tmp_path / "liar.npy"
    path.write_bytes(_npy_declaring(shape, np.zeros((20, 5))))
    with pytest.raises(ValueError, match=r"declares \d+ bytes of data but holds 800"):
        load_data_file(path)
    # the check reads the headers only: honest files read as before
    table = np.column_stack([np.arange(12.0).reshape(6, 2), [0, 1] * 3])
    np.save(tmp_path / "t.npy", table)
    np.savez_compressed(tmp_path / "t.npz", X=table[:, :2], y=table[:, 2])
    for name in ("t.npy", "t.npz"):
        X, y, _ = load_data_file(tmp_path / name)
        assert np.array_equal(X, table[:, :2]) and np.array_equal(y, table[:, 2])


def test_npz_data_member_declaring_terabytes_is_refused(tmp_path, capsys):
    path = tmp_path / "liar.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("X.npy", _npy_declaring((10**12,), np.zeros(100)))
    with pytest.raises(ValueError, match=r"X\.npy declares 8000000000000 bytes"):
        load_data_file(path)
    # the command line: one line naming the fault, the data error status
    code, _, err = _run(["fit", "-e", "fgm", "-m", tmp_path / "m.npz", "-q", path], capsys)
    assert code == 3 and _one_error(err) and "declares 8000000000000 bytes" in err, err


@pytest.fixture
def fuzzer():
    from bench_scripts import load_script

    yield from load_script("fuzz_files")


def test_file_fuzzer_flags_planted_defects(fuzzer, tmp_path, monkeypatch):
    # the script's checks can fail: a tampered file that loads and predicts
    # otherwise, a bare error out of the loader, an unsealed change that loads
    from kernlearn import FGMClassifier, FGMRegressor
    from kernlearn.io import save_model

    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    y = (X[:, 0] > 0).astype(int)
    est = FGMClassifier(max_iter=3).fit(X, y)
    path = tmp_path / "m.npz"
    save_model(est, path)
    base = {"X": X, "pk": {}, "ref": fuzzer.outputs(est, X, {})}
    check = lambda p, coherent=False: fuzzer.library_outcome(p, base, coherent, 30, 1024)  # noqa: E731
    assert check(path)[0] == "loaded-same"
    data = path.read_bytes()
    flipped = tmp_path / "flipped.npz"
    flipped.write_bytes(data[:100] + bytes([data[100] ^ 1]) + data[101:])
    assert check(flipped)[:3:2] == ("refused", False)
    # a file of another model: different predictions, a defect unless a rewrite
    other = tmp_path / "other.npz"
    save_model(FGMRegressor(max_iter=3).fit(X, X[:, 1]), other)
    assert check(other)[::2] == ("silent-different", True)
    assert check(other, coherent=True)[::2] == ("accepted-edit", False)
    # the mutators' resealing makes files the loader reads as sealed
    meta, arrays = fuzzer.unpack(data)
    (tmp_path / "repacked.npz").write_bytes(fuzzer.pack(meta, arrays))
    assert check(tmp_path / "repacked.npz")[0] == "loaded-same"

    def bare(p):
        raise KeyError("coef_")

    monkeypatch.setattr(fuzzer, "load_model", bare)
    assert check(path)[::2] == ("bare-error", True)
