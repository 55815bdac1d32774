"""Audit 108 (issue 21): model and data files after the thirty-third pass.

Each test failed on the code before its fix (the hang, checked here by a
bounded count of empty reads, and the text bombs).
"""

import bz2
import gzip
import lzma
import re
import zipfile

import numpy as np
import pytest
from bench_scripts import load_script
from conftest import one_error as _one_error
from conftest import run_cli as _run

from kernlearn.datafiles import load_data_file
from kernlearn.utils import _npy_header, _packed_text

METHODS = [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]


def _member_last(path, method, X, cut):
    """An ``.npz`` whose ``X.npy`` (local header and data) is the last thing in
    the file (in the end record's comment, as zip allows), its compressed data
    cut by ``cut`` bytes: its declared compressed size reaches past the end of
    the file.  A stored member comes first, so the file starts as a zip.
    (The layout of ``benchmarks/hunt_archives.py``, which draws these at random.)"""
    for hunt in load_script("hunt_archives"):
        first, local, central, x_entry = hunt.npz_parts(X, method)
        path.write_bytes(hunt.npz_layout(first, local[:len(local) - cut], central,
                                         x_entry, last=True))
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


def _compressed(path, text):
    opener = {".bz2": bz2.open, ".xz": lzma.open, ".gz": gzip.open}[path.suffix]
    with opener(path, "wb", **({"preset": 1} if path.suffix == ".xz" else {})) as fh:
        fh.write(text)
    return path


@pytest.fixture
def floor_1mb(monkeypatch):
    """The size floors lowered to 1 MiB (256 MiB and 64 MiB of text in use), to keep
    tests small."""
    monkeypatch.setattr(_npy_header, "_MIN_CAP", 2**20)
    monkeypatch.setattr(_packed_text, "_TEXT_FLOOR", 2**20)


@pytest.mark.parametrize("name", ["d.csv.bz2", "d.csv.xz", "d.svm.bz2", "d.svm.xz"])
def test_compressed_text_of_blank_lines_is_refused_at_the_cap(name, tmp_path, capsys,
                                                               floor_1mb):
    # A 349-byte .csv.bz2 of 400 MB of blank lines took 39 s CPU and 2.5 GB
    # to read as "no data rows" (the LIBSVM reader 18 s); ten times more was
    # past this machine's memory.  Text has no declared size: what it unpacks
    # to is now counted: text that holds (almost) no values is refused past
    # the floor (64 MiB, lowered here), at 128 bytes of text a value.
    head = b"a,b\n1,2\n" if ".csv" in name else b"1 1:1\n"
    path = _compressed(tmp_path / name, head + b"\n" * (24 * 2**20))
    assert path.stat().st_size < 2**12
    with pytest.raises(ValueError, match=r"([\d.]+) MiB of its text hold only \d+ values "
                                         r".*decompress it first") as info:
        load_data_file(path)
    # (refused at the first block past the cap, not at the end of the text)
    assert float(re.search(r"([\d.]+) MiB of its", str(info.value))[1]) < 20
    code, _, err = _run(["fit", "-e", "fgm", "-m", tmp_path / "m.npz", "-q", path], capsys)
    assert code == 3 and _one_error(err) and "decompression bomb" in err, err


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".xz"])
def test_genuine_text_over_the_floor_still_reads(suffix, tmp_path, floor_1mb):
    # (1.1 MB of random rows: packed some 2-3:1, far under the ratio; and the
    # same blank-line text uncompressed, a file as large as its text, reads)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40000, 3)).round(6)
    text = b"a,b,c\n" + "".join(f"{a},{b},{c}\n" for a, b, c in X).encode()
    assert len(text) > 2**20
    path = tmp_path / f"d.csv{suffix}"
    if suffix:
        _compressed(path, text)
    else:
        path.write_bytes(text + b"\n" * (2 * 2**20))
    X2, y2, _ = load_data_file(path)
    assert np.array_equal(np.column_stack([X2, y2]), X)


@pytest.mark.parametrize("suffix", [".GZ", ".Bz2", ".XZ"])
def test_a_compressed_file_is_read_whatever_the_case_of_its_suffix(suffix, tmp_path):
    # The format was read from the lower-cased suffix, the file opened by the
    # suffix as written: DATA.CSV.GZ was read uncompressed and refused as
    # "binary data (NUL bytes)".
    text = b"a,b,y\n1,2,0\n3,4,1\n5,6,0\n"
    path = tmp_path / f"DATA.CSV{suffix}"
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}[suffix.lower()]
    with opener(path, "wb") as fh:
        fh.write(text)
    X, y, info = load_data_file(path)
    assert info["format"] == "csv" and X.tolist() == [[1, 2], [3, 4], [5, 6]]
    assert y.tolist() == [0, 1, 0]
    svm = tmp_path / f"d.svm{suffix}"
    with opener(svm, "wb") as fh:
        fh.write(b"1 1:1\n0 2:3\n")
    X, y, info = load_data_file(svm)
    assert info["format"] == "libsvm" and X.toarray().tolist() == [[1, 0], [0, 3]]


@pytest.mark.parametrize("name", ["LowRankKernelClassifier", "LowRankKernelRegressor"])
@pytest.mark.parametrize("drop", [("x_mean_", "x_scale_"), ("x_scale_",)])
def test_an_older_low_rank_file_lacking_the_input_map_its_parameters_declare_is_refused(
        name, drop, tmp_path):
    # 0.1.0 low-rank files may lack x_mean_/x_scale_ (written before
    # standardisation, and before the `standardize` parameter, which came with
    # them).  One holding standardize=True without them loaded: get_params said
    # standardize=True, predict read the inputs unstandardised (labels or values
    # other than the model saved), a clone refit was another model.
    import kernlearn
    from kernlearn.io import load_model
    from test_loose_ends34 import YR, Y3, X, _fit, _save_as

    est = _fit(getattr(kernlearn, name)(), Y3 if "Classifier" in name else YR)
    assert est.standardize is True and est.x_scale_ is not None
    with pytest.raises(ValueError, match=r"kernlearn 0\.1\.0 .*state lacks "
                       + " and ".join(drop) + r" \(the input map\) while "
                       r"params\.standardize is True"):
        load_model(_save_as(est, tmp_path / "m.npz", "0.1.0", drop))
    # (without standardisation the same file is the old code's: it loads)
    est = _fit(getattr(kernlearn, name)(standardize=False), Y3 if "Classifier" in name
               else YR)
    back = load_model(_save_as(est, tmp_path / "m.npz", "0.1.0", ("x_mean_", "x_scale_")))
    np.testing.assert_array_equal(back.predict(X), est.predict(X))


def test_an_older_low_rank_file_of_a_standardised_fit_lacking_standardize_is_refused(
        tmp_path):
    # The other side: a 0.1.0 file lacking the `standardize` parameter is read
    # with the old code's False (OLDER_PARAMETERS), right for the files that
    # code wrote (no x_mean_/x_scale_, or x_scale_ None).  One holding the
    # scales of a standardised fit loaded, predicted standardised and said
    # standardize=False: a clone refit was another model.
    from kernlearn import LowRankKernelRegressor
    from kernlearn.io import load_model
    from test_bombs34 import _as_old_file
    from test_loose_ends34 import X, YR, _fit

    est = _fit(LowRankKernelRegressor(), YR)
    with pytest.raises(ValueError, match=r"kernlearn 0\.1\.0 .*state\.x_scale_ holds the "
                       r"scales of a standardised fit while params\.standardize is False"):
        load_model(_as_old_file(est, tmp_path / "m.npz", ["standardize"]))
    est = _fit(LowRankKernelRegressor(standardize=False), YR)
    back = load_model(_as_old_file(est, tmp_path / "m.npz", ["standardize"]))
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
