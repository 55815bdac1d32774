"""Audit 87: a review of the command line's entry point (cli33) and of the
NumPy header checks (audit 83); each test names what went wrong."""

import io
import os
import signal
import subprocess
import sys
import textwrap
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from kernlearn.datafiles import load_data_file
from kernlearn.utils import _npy_header

SRC = Path(__file__).resolve().parents[1] / "src"
TABLE = np.column_stack([np.arange(12.0).reshape(6, 2), [0, 1] * 3])


def test_running_the_command_in_process_leaves_ctrl_c_working(tmp_path):
    # the command run by a process that goes on (runpy, IPython's %run -m)
    # left SIGINT ignored: Ctrl-C did nothing there afterwards
    script = textwrap.dedent("""\
        import os, runpy, signal, sys
        sys.argv = ["kernlearn", "--version"]
        try:
            runpy.run_module("kernlearn", run_name="__main__", alter_sys=True)
        except SystemExit as exc:
            print("status", exc.code)
        print("handler", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
        try:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10**6):
                pass
            print("not interrupted")
        except KeyboardInterrupt:
            print("interrupted")
        """)
    env = dict(os.environ, PYTHONPATH=str(SRC))
    # (a background `make test` ignores SIGINT, and a child inherits that: Python
    # then installs no handler; the child starts as from a terminal)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                         ).stdout.splitlines()
    assert out[-3:] == ["status 0", "handler True", "interrupted"], out


def _npy_v3(array):
    buf = io.BytesIO()
    with warnings.catch_warnings():  # ("Stored array in format 3.0")
        warnings.simplefilter("ignore", UserWarning)
        np.lib.format.write_array(buf, array, version=(3, 0))
    assert np.lib.format.read_magic(io.BytesIO(buf.getvalue())) == (3, 0)
    return buf.getvalue()


def test_npy_version_3_data_file_reads(tmp_path):
    # NumPy writes version 3.0 for field names Latin-1 cannot spell, and any
    # array when asked; np.load reads it, the header check refused it
    # ("unsupported .npy version")
    (tmp_path / "t.npy").write_bytes(_npy_v3(TABLE))
    X, y, _ = load_data_file(tmp_path / "t.npy")
    assert np.array_equal(X, TABLE[:, :2]) and np.array_equal(y, TABLE[:, 2])
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("X.npy", _npy_v3(TABLE[:, :2]))
        zf.writestr("y.npy", _npy_v3(TABLE[:, 2]))
    (tmp_path / "t.npz").write_bytes(buf.getvalue())
    X, y, _ = load_data_file(tmp_path / "t.npz")
    assert np.array_equal(X, TABLE[:, :2]) and np.array_equal(y, TABLE[:, 2])


def test_npy_file_with_a_second_array_after_the_first_reads(tmp_path):
    # numpy.save called twice on one open file (as NumPy's docs show): np.load
    # reads the first array, the header check refused the file ("declares 144
    # bytes of data but holds 192"): only more data declared than held is a lie
    with open(tmp_path / "t.npy", "wb") as fh:
        np.save(fh, TABLE)
        np.save(fh, TABLE[:, 0])
    X, y, _ = load_data_file(tmp_path / "t.npy")
    assert np.array_equal(X, TABLE[:, :2]) and np.array_equal(y, TABLE[:, 2])
    # a model file's members must still fill their bytes exactly
    raw = io.BytesIO()
    np.save(raw, np.zeros(0))
    raw.write(b"\0" * 8)
    raw.seek(0)
    with pytest.raises(ValueError, match="declares 0 bytes of data but holds 8"):
        _npy_header.declared_npy(raw, len(raw.getvalue()), "m.npy")


def test_object_npy_data_file_still_says_pickle(tmp_path):
    # the header check's message was "is not a readable NumPy file: the .npy
    # header holds Python objects" where the reader said what to do
    np.save(tmp_path / "o.npy", np.array([[1, None]], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match=r"holds Python objects \(pickle\); only numeric"):
        load_data_file(tmp_path / "o.npy")


def _zeros_npz(path, method, level=None):
    X = np.zeros((10000, 100))
    with zipfile.ZipFile(path, "w", compression=method, compresslevel=level) as zf:
        for name, a in (("X", X), ("y", np.zeros(10000))):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, a)
            zf.writestr(f"{name}.npy", buf.getvalue())
    return os.path.getsize(path)


def test_npz_compression_ratio_bound(tmp_path, monkeypatch):
    # the ratio bound, tested without the 256 MB floor: zeros deflated at the
    # highest level (about 1030:1) read; bzip2 and LZMA members (which NumPy
    # reads) pack zeros thousands of times tighter than deflate can, and an
    # honest file of them was refused as a lie
    monkeypatch.setattr(_npy_header, "_MIN_CAP", 0)
    stored = 10000 * 101 * 8
    size = _zeros_npz(tmp_path / "d.npz", zipfile.ZIP_DEFLATED, 9)
    assert 900 < stored / size < 1100
    assert load_data_file(tmp_path / "d.npz")[0].shape == (10000, 100)
    for method in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        size = _zeros_npz(tmp_path / "b.npz", method)
        assert stored / size > 1100
        assert load_data_file(tmp_path / "b.npz")[0].shape == (10000, 100)
    # a deflated archive declaring more than deflate can pack is still refused
    with zipfile.ZipFile(tmp_path / "d.npz") as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    with zipfile.ZipFile(tmp_path / "l.npz", "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    monkeypatch.setattr(_npy_header, "_DEFLATE_RATIO", 10)
    with pytest.raises(ValueError, match="more than the"):
        load_data_file(tmp_path / "l.npz")
