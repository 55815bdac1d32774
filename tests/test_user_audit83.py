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
