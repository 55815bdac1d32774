"""Audit 108 (issue 21): model and data files after the thirty-third pass.

Each test failed on the code before its fix (the hang, checked here by a
bounded count of empty reads, and the text bombs).
"""

import io
import struct
import zipfile

import numpy as np
import pytest
from conftest import one_error as _one_error
from conftest import run_cli as _run

from kernlearn.datafiles import load_data_file
from kernlearn.utils import _npy_header

METHODS = [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]


def _member_last(path, method, X, cut):
    """An ``.npz`` whose ``X.npy`` (local header and data) is the last thing in
    the file (in the end record's comment, as zip allows), its compressed data
    cut by ``cut`` bytes: its declared compressed size reaches past the end of
    the file.  A stored member comes first, so the file starts as a zip."""
    buf = io.BytesIO()
    np.save(buf, X)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("pad.txt", b"pad")
        zf.writestr("X.npy", buf.getvalue(), compress_type=method)
    data = out.getvalue()
    at_x = zipfile.ZipFile(io.BytesIO(data)).getinfo("X.npy").header_offset
    at_cd, at_end = data.find(b"PK\x01\x02"), data.rfind(b"PK\x05\x06")
    first, local = data[:at_x], data[at_x:at_cd][:at_cd - at_x - cut]
    central = bytearray(data[at_cd:at_end])
    # (X.npy's central entry: its local header now follows the end record)
    struct.pack_into("<I", central, central.find(b"PK\x01\x02", 4) + 42,
                     len(first) + len(central) + 22)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 2, 2, len(central), len(first),
                      len(local))
    path.write_bytes(first + bytes(central) + end + local)
    return path


@pytest.fixture
def no_endless_feed(monkeypatch):
    """Fail, rather than hang, when the bounded reader is fed empty reads on
    and on (the file ended, the member's declared bytes did not)."""
    raw, empty = _npy_header._Unpacked._raw, [0]

    def counted(self, n):
        data = raw(self, n)
        empty[0] = 0 if data else empty[0] + 1
        assert empty[0] < 1000, "the reader was fed empty reads without end"
        return data

    monkeypatch.setattr(_npy_header._Unpacked, "_raw", counted)


@pytest.mark.parametrize("method", METHODS)
def test_a_member_reaching_past_the_end_of_the_file_reads_as_numpy_reads_it(
        method, tmp_path, no_endless_feed):
    # Its last 5 bytes gone (the end marker and check, the data all there):
    # NumPy reads it; the bounded reader hung (an empty read fed forever).
    X = np.arange(2000.0).reshape(1000, 2)
    path = _member_last(tmp_path / "d.npz", method, X, cut=5)
    with np.load(path) as d:
        assert np.array_equal(d["X"], X)
    X2, y2, _ = load_data_file(path)
    assert np.array_equal(X2, X[:, :1]) and np.array_equal(y2, X[:, 1])


@pytest.mark.parametrize("method", METHODS)
def test_a_member_cut_short_at_the_end_of_the_file_is_refused(method, tmp_path, capsys,
                                                              no_endless_feed):
    # (20 bytes gone: data is missing; NumPy raises EOFError, we name it)
    path = _member_last(tmp_path / "d.npz", method, np.arange(2000.0).reshape(1000, 2),
                        cut=20)
    with pytest.raises(EOFError):
        with np.load(path) as d:
            d["X"]
    with pytest.raises(ValueError, match="not a readable NumPy file: X.npy: compressed "
                                         "data ends early"):
        load_data_file(path)
    code, _, err = _run(["fit", "-e", "fgm", "-m", tmp_path / "m.npz", "-q", path], capsys)
    assert code == 3 and _one_error(err) and "ends early" in err, err
