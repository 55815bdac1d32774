"""Compressed text data files: a bound on what reading builds, not on the ratio (issue 21).

The last pass held compressed text to 100 bytes per byte of file past 64 MB:
it stopped decompression bombs, but a genuine table of mostly zeros packs
114-313:1 and was refused.  The text is counted as it streams in, with its
values and lines, and refused when the table it builds would exceed a memory
budget (``max_table_size``, ``--max-table-size``; out of core, the chunk
cache's disk), or when it holds almost no values (blank lines).
"""

import gzip
import os
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import one_error as _one_error
from conftest import run_cli as _run
from peak_memory import peak_and_dense_mb

from kernlearn.datafiles import load_data_file
from kernlearn.datasets import SvmlightChunks
from kernlearn.utils import _packed_text

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
try:
    from packed_tables import mostly_zero_csv
finally:
    sys.path.remove(str(BENCH))

_ZERO_ROWS = b"0,0,0,0,1\n" * (2**23 // 10)  # 8 MiB, some 1000:1 by gzip


def _bomb(path, members=1, rows=_ZERO_ROWS):
    """``path`` (``.csv.gz``): gzip members of ``rows`` (8 MiB of zero rows) each,
    concatenated (one stream to a reader), after a header."""
    one = gzip.compress(rows, 6)
    path.write_bytes(gzip.compress(b"a,b,c,d,y\n", 6) + one * members)
    return path


def test_a_mostly_zero_table_packed_past_100_to_1_reads(tmp_path):
    # 69 MB of text (past the old floor of 64 MB), 0.2 % non-zero, packed some
    # 300:1 by gzip -6: refused by the ratio before ("over 100 times its bytes"),
    # read now (its table, 0.1 GB of float64, is far within half the memory).
    text = mostly_zero_csv(12000, 1000, 0.002, width=5)
    path = tmp_path / "counts.csv.gz"
    path.write_bytes(gzip.compress(text, 6))
    assert len(text) > 64 * 2**20 and len(text) > 250 * path.stat().st_size
    X, y, info = load_data_file(path)
    assert X.shape == (12000, 999) and info["format"] == "csv"
    assert 0.001 < np.count_nonzero(X) / X.size < 0.003
    assert set(np.unique(y)) == {0.0, 1.0}


def test_a_table_over_the_budget_is_refused_naming_the_remedy(tmp_path, capsys):
    # (a 0,0,0,0,1 table of 2 MiB of text: the reading would take some 35 MB, 3
    # bytes a byte of text, 24 a cell and 16 a line)
    path = _bomb(tmp_path / "zeros.csv.gz", rows=_ZERO_ROWS[:10 * 2**18])
    with pytest.raises(ValueError, match=r"zeros\.csv\.gz: reading it would take more than "
                                         r".* over the budget of 16\.0 MiB "
                                         r"\(max_table_size.*raise the budget"):
        load_data_file(path, max_table_size="16MiB")
    X, _, _ = load_data_file(path, max_table_size="64MiB")
    assert X.shape == (2**18, 4)
    code, _, err = _run(["fit", "-e", "fgm", "-m", tmp_path / "m.npz", "-q",
                         "--max-table-size", "16MiB", path], capsys)
    assert code == 3 and _one_error(err), err
    assert "zeros.csv.gz" in err and "--max-table-size SIZE" in err
    code, _, err = _run(["fit", "-e", "fgm", "-m", tmp_path / "m.npz", "-q",
                         "--max-table-size", "lots", path], capsys)
    assert code == 2 and "--max-table-size: memory size 'lots' is not a number" in err, err


def test_a_plain_file_is_not_bounded(tmp_path):
    # (its text is what it holds: the budget is for compressed text)
    path = tmp_path / "zeros.csv"
    path.write_bytes(b"a,b,c,d,y\n" + _ZERO_ROWS[:10 * 2**17])
    X, _, _ = load_data_file(path, max_table_size=4096)
    assert X.shape == (2**17, 4)


def test_the_default_budget_is_half_the_available_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(_packed_text, "available_memory", lambda: 2**26)
    path = _bomb(tmp_path / "zeros.csv.gz")
    with pytest.raises(ValueError, match=r"over the budget of 32\.0 MiB \(max_table_size; "
                                         r"by default half the available memory\)"):
        load_data_file(path)


_READ_BOMB = """
import tracemalloc
from kernlearn.datafiles import load_data_file
tracemalloc.start()
try:
    load_data_file({path!r}, max_table_size="256MB")
    raise SystemExit("read: not refused")
except ValueError as exc:
    if "over the budget" not in str(exc):
        raise
print(tracemalloc.get_traced_memory()[1] / 2**20, {text_mb})
"""


def test_a_bomb_is_refused_in_bounded_memory(tmp_path):
    # 256 MiB of zero rows in 0.5 MB of gzip: they would parse into a table of
    # some 4 GB in memory (read whole, about 30 s); under a budget of 256 MB it
    # is refused at the first block past it (some 16 MB of text), before the
    # table is built.  Measured in a fresh process.
    path = _bomb(tmp_path / "bomb.csv.gz", 32)
    assert path.stat().st_size < 2**20
    peak_mb, text_mb = peak_and_dense_mb(_READ_BOMB.format(path=str(path), text_mb=256))
    # (the text read before the refusal, 16 MB, and its block buffers: not the table)
    assert peak_mb < text_mb / 4, peak_mb


@pytest.fixture
def svm_bomb(tmp_path):
    """A ``.svm.gz`` of 4 MiB of one repeated line, some 500:1."""
    path = tmp_path / "lines.svm.gz"
    path.write_bytes(gzip.compress(b"1 1:0 2:0 3:0\n" * (2**22 // 14), 6))
    return path


def test_out_of_core_the_budget_bounds_the_chunk_cache(svm_bomb, tmp_path, capsys):
    # out of core the parsed table goes to the chunk cache on disk: bounded there
    with pytest.raises(ValueError, match=r"lines\.svm\.gz: reading it would take more than "
                                         r".* of disk space for its chunk cache .* over "
                                         r"the budget of 2\.0 MiB"):
        SvmlightChunks(svm_bomb, max_table_size="2MiB")
    chunks = SvmlightChunks(svm_bomb, max_table_size="256MiB")
    assert chunks.shape == (2**22 // 14, 3) and chunks.nnz == 3 * chunks.shape[0]
    code, _, err = _run(["fit", "-e", "fgm", "-m", tmp_path / "m.npz", "-q",
                         "--out-of-core", "--max-table-size", "2MiB", svm_bomb], capsys)
    assert code == 3 and _one_error(err) and "chunk cache" in err, err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
@pytest.mark.parametrize("budget, refused", [("2MiB", True), ("256MiB", False)])
def test_a_named_pipe_is_bounded_as_its_file(svm_bomb, tmp_path, budget, refused):
    fifo = tmp_path / "pipe.svm.gz"
    os.mkfifo(fifo)
    packed = svm_bomb.read_bytes()

    def write():
        try:
            with open(fifo, "wb") as fh:
                fh.write(packed)
        except BrokenPipeError:  # (the reader stopped: refused)
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        if refused:
            with pytest.raises(ValueError, match=r"pipe\.svm\.gz: reading it would take "
                                                 r"more than .* over the budget of 2\.0 MiB"):
                load_data_file(fifo, max_table_size=budget)
        else:  # (a table of 300,000 rows within the budget: read)
            X, y, _ = load_data_file(fifo, max_table_size=budget)
            assert X.shape == (2**22 // 14, 3) and (y == 1).all()
    finally:
        writer.join(10)
