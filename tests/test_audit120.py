"""Audit of the bound on compressed data files (issue 21, thirty-sixth pass).

The bound counts what the reading of a compressed text file builds.  Its
estimate was far below the peak on some tables (a CSV's columns: 23 MiB
counted for a 1.2 GB read of 2 rows x 400,000 columns; text that is not
ASCII, 4 bytes a character), the readers that stream held nothing the
budget counts (a 41 kB ``.svm.xz`` parsed 256 MiB in 17 s CPU, 2 MB of it
hours), and a line without end was held whole out of core.
"""

import bz2
import gzip
import os
import threading

import numpy as np
import pytest
from conftest import one_error as _one_error
from conftest import run_cli as _run
from peak_memory import peak_and_dense_mb

from kernlearn import datasets
from kernlearn.datafiles import iter_libsvm, load_data_file
from kernlearn.datasets import SvmlightChunks
from kernlearn.partitioned import parse_bytes
from kernlearn.utils import _packed_text
from kernlearn.utils._packed_text import TextBound


def _wide_csv(path, columns, before=b""):
    """``path`` (``.csv.gz``): two rows of ``columns`` zeros after ``before``."""
    row = b",".join([b"0"] * columns) + b"\n"
    path.write_bytes(gzip.compress(before + row + row, 6))
    return path


@pytest.mark.parametrize("before", [b"", b"\n" * 100_000, b" \r\n" * 30_000],
                         ids=["plain", "blank-lines-first", "crlf-blanks-first"])
def test_a_wide_csv_counts_its_columns(tmp_path, before):
    # 2 rows of 100,000 columns (0.4 MB of text, 0.4 kB of gzip) read in 4.5 s
    # CPU to a 300 MB peak (pandas keeps an array and a name a column) while
    # the estimate said 6 MiB: under a budget of 256 MB it was read.  Blank
    # lines before it (pandas skips them) do not hide its width.
    path = _wide_csv(tmp_path / "wide.csv.gz", 100_000, before)
    with pytest.raises(ValueError, match=r"wide\.csv\.gz: reading it would take more "
                                         r"than (39|40)\d\.\d MiB of memory .* over the budget"):
        load_data_file(path, header=False, max_table_size="256MB")


def test_a_quoted_line_break_does_not_end_the_first_record():
    # a header whose first name holds a line break: its record is the 3 fields
    bound = TextBound("x.csv.gz", "csv", "1GB")
    bound.count(b'"a\nb",c,d\n1,2,3\n')
    assert bound.width == 3
    bound = TextBound("x.csv.gz", "csv", "1GB")
    bound.count(b'"a\n')
    bound.count(b'b",' + b"c," * 999 + b"d\n")
    assert bound.width == 1001
    # a quote inside a field is a character: the record ends at its line
    bound = TextBound("x.csv.gz", "csv", "1GB")
    bound.count(b'height_in",w,"x ""y"" z",q\n' + b"1,2,3,4\n" * 1000)
    assert bound.width == 4


_READ = """
import tracemalloc
import pandas
from kernlearn.datafiles import load_data_file
tracemalloc.start()
load_data_file({path!r})
print(tracemalloc.get_traced_memory()[1] / 2**20, {need_mb})
"""


@pytest.mark.parametrize("cell", ["x" * 2000, "x" * 2000 + "\U0001F600"],
                         ids=["ascii", "one-emoji-a-cell"])
def test_the_estimate_covers_the_peak_of_quoted_text(tmp_path, cell):
    # a label of long quoted strings: the bytes, the decoded string (4 bytes a
    # character once one is an emoji), io.StringIO's copy (4 bytes a
    # character) and the cells: 8-14 bytes a byte of text measured, against
    # 3 counted (a 57 MiB file: 172 MiB counted, 475-807 MiB peak)
    text = ("a,b,y\n" + f'1,2,"{cell}"\n' * 3000).encode()
    path = tmp_path / "quoted.csv.gz"
    path.write_bytes(gzip.compress(text, 1))
    bound = TextBound(path, "csv", 2**60)
    bound.count(text)
    need_mb = bound.need() / 2**20
    peak_mb, _ = peak_and_dense_mb(_READ.format(path=str(path), need_mb=need_mb))
    assert peak_mb <= need_mb <= 2.5 * peak_mb, (peak_mb, need_mb)


_LINE = b"1" + b"".join(b" %d:0" % j for j in range(1, 21)) + b"\n"  # (110 bytes)
_LINES = 2**22 // len(_LINE)


def _bz2_lines(path, members):
    """``path``: ``members`` bzip2 streams of 4 MiB of LIBSVM lines each (some 10,000:1)."""
    one = bz2.compress(_LINE * _LINES, 9)
    path.write_bytes(one * members)
    return path


@pytest.fixture
def small_floor(monkeypatch):
    """The floor past which the ratio counts, lowered from 64 MiB to 1 MiB."""
    monkeypatch.setattr(_packed_text, "_TEXT_FLOOR", 2**20)


def test_predicting_as_it_streams_a_bomb_is_refused_by_its_ratio(tmp_path, small_floor):
    # predicting out of core parses block by block and keeps 16 bytes a line:
    # 16 MiB of lines (a table of 73 MiB in memory) from 2 kB of bzip2 were
    # parsed whole under a budget of 4 MiB; past the budget and 1032:1 they
    # are refused
    path = _bz2_lines(tmp_path / "lines.svm.bz2", 4)
    with pytest.raises(ValueError, match=r"lines\.svm\.bz2: .* of text from .* of file, "
                                         r"more than 1032 times .* decompress it first"):
        for _ in iter_libsvm(path, 21, "auto", max_table_size="4MiB"):
            pass
    # the same lines by gzip (at most 1032:1): read whole, past the budget
    plain = tmp_path / "lines.svm.gz"
    plain.write_bytes(gzip.compress(_LINE * (2 * _LINES), 6))
    rows = sum(X.shape[0] for X, _ in iter_libsvm(plain, 21, "auto",
                                                  max_table_size="4MiB"))
    assert rows == 2 * _LINES


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_counts_its_packed_bytes(tmp_path, small_floor):
    fifo = tmp_path / "pipe.svm.bz2"
    os.mkfifo(fifo)
    packed = _bz2_lines(tmp_path / "lines.svm.bz2", 4).read_bytes()

    def write():
        try:
            with open(fifo, "wb") as fh:
                fh.write(packed)
        except BrokenPipeError:  # (the reader stopped: refused)
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        with pytest.raises(ValueError, match=r"pipe\.svm\.bz2: .* more than 1032 times"):
            for _ in iter_libsvm(fifo, 21, "auto", max_table_size="4MiB"):
                pass
    finally:
        writer.join(10)


def test_out_of_core_a_bomb_is_bounded_by_memory_too(tmp_path, small_floor, monkeypatch):
    # out of core the budget is the disk (36 GB here): the labels stay in
    # memory, 16 bytes a line, and the bomb's time was bounded by the disk only
    monkeypatch.setattr(_packed_text, "available_memory", lambda: 2 * 2**20)
    path = _bz2_lines(tmp_path / "lines.svm.bz2", 4)
    with pytest.raises(ValueError, match=r"lines\.svm\.bz2: its \d+ lines so far would "
                                         r"keep .* of labels in memory, over half"):
        SvmlightChunks(path, max_table_size="1GB")
    monkeypatch.setattr(_packed_text, "available_memory", lambda: 32 * 2**20)
    with pytest.raises(ValueError, match=r"more than 1032 times"):
        SvmlightChunks(path, max_table_size="1GB")


def test_out_of_core_a_line_without_end_is_refused(tmp_path, monkeypatch):
    # (a line longer than _MAX_LINE, lowered here to 1 MiB: held whole before)
    monkeypatch.setattr(datasets, "_MAX_LINE", 2**20)
    path = tmp_path / "long.svm.gz"
    path.write_bytes(gzip.compress(b"1" + b"".join(b" %d:1" % j for j in range(1, 300_000))))
    with pytest.raises(ValueError, match=r"long\.svm\.gz has a line longer than 1048576"):
        SvmlightChunks(path, memory_budget="1MB")


@pytest.mark.parametrize("size", ["0.5", 0.5, "0.9B"])
def test_a_size_under_a_byte_is_refused(size):
    # (it was 0 bytes, and a budget of 0 bounded nothing)
    with pytest.raises(ValueError, match="at least 1"):
        parse_bytes(size)


def test_the_option_names_itself_once(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("a,y\n1,0\n2,1\n")
    code, _, err = _run(["fit", "-e", "fgm", "-m", tmp_path / "m.npz", "-q",
                         "--max-table-size", "0.5", path], capsys)
    assert code == 2 and _one_error(err), err
    assert err.count("--max-table-size") == 1 and "at least 1" in err, err


def test_iter_libsvm_takes_a_size_with_its_unit(tmp_path):
    # (it compared the text's need with the string "8GB": a TypeError)
    path = tmp_path / "t.svm.gz"
    path.write_bytes(gzip.compress(b"1 1:1\n0 2:1\n"))
    blocks = list(iter_libsvm(path, 3, "auto", max_table_size="8GB"))
    assert sum(X.shape[0] for X, _ in blocks) == 2


def test_a_one_column_csv_is_not_blank_lines(tmp_path, small_floor):
    # a table of one column (predicting with a one-feature model) has no
    # separator: its 1.7 MiB of text, past the floor (lowered here to 1 MiB
    # from 64), held "0 values" and was refused as blank lines; lines of spaces
    # still are
    text = b"x\n" + b"".join(b"%.6f\n" % v for v in np.linspace(0, 1, 200_000))
    path = tmp_path / "one.csv.gz"
    path.write_bytes(gzip.compress(text))
    X, y, _ = load_data_file(path, n_features=1, labels_needed=False)
    assert X.shape == (200_000, 1) and y is None
    blank = tmp_path / "blank.csv.gz"
    blank.write_bytes(gzip.compress(b"x\n1\n" + b" \n" * 2**20))
    with pytest.raises(ValueError, match=r"blank\.csv\.gz: 2\.0 MiB of its text hold only "
                                         r"\d values"):
        load_data_file(blank, n_features=1, labels_needed=False)
