"""Audit 117: an independent review of this pass's loose ends and histogram-kernel fixes.

Compressed text read out of core (``SvmlightChunks``, the command line's
``--out-of-core``) was not counted against the bound on what compressed text
unpacks to; GrFL's Platt message with tasks named every class in every task,
where a task of three classes may lack one.
"""

import gzip
import os
import threading

import numpy as np
import pytest
from conftest import one_error as _one_error
from conftest import run_cli as _run

from kernlearn import InfiniteFeatureClassifier
from kernlearn.datafiles import load_data_file
from kernlearn.datasets import SvmlightChunks
from kernlearn.utils import _npy_header, _packed_text


@pytest.fixture
def bomb(tmp_path, monkeypatch):
    """A ``.svm.gz`` of 8 MiB of one repeated line (some 400:1), the floors and the
    default budget (of the parsed table) at 1 MiB."""
    monkeypatch.setattr(_npy_header, "_MIN_CAP", 2**20)
    monkeypatch.setattr(_packed_text, "_TEXT_FLOOR", 2**20)
    monkeypatch.setattr(_packed_text, "default_budget", lambda kind: 2**20)
    path = tmp_path / "lines.svm.GZ"  # (upper case: opened as gzip all the same)
    with gzip.open(path, "wb") as fh:
        fh.write(b"1 1:0 2:0 3:0\n" * (2**23 // 14))
    assert 100 * path.stat().st_size < 2**23
    return path


def test_out_of_core_reading_is_bounded_as_in_memory_reading(bomb, tmp_path, capsys):
    # Out of core the text was read whole: a 0.6 MB .svm.gz of 300 MB read in 35 s
    # CPU and 1.1 GB (labels and chunk bounds grow with the rows) where the same file
    # in memory is refused.  Both refuse it now past their budget (out of core: of
    # the disk the chunk cache takes).
    with pytest.raises(ValueError, match=r"of disk space for its chunk cache .* over the "
                                         r"budget of 1\.0 MiB .*decompression bomb.*raise "
                                         r"the budget \(--max-table-size SIZE"):
        SvmlightChunks(bomb, chunk_rows=10_000)
    code, _, err = _run(["fit", "-e", "fgm", "-m", tmp_path / "m.npz", "-q",
                         "--out-of-core", bomb], capsys)
    assert code == 3 and _one_error(err) and "decompression bomb" in err, err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_of_compressed_text_is_bounded_as_the_file(bomb, tmp_path):
    # A pipe has no size: one named lines.svm.gz was unpacked without bound (the
    # file itself refused).  Its text is counted as it is read, as the file's.
    fifo = tmp_path / "pipe.svm.gz"
    os.mkfifo(fifo)
    packed = bomb.read_bytes()

    def write():
        try:
            with open(fifo, "wb") as fh:
                fh.write(packed)
        except BrokenPipeError:  # (the reader stopped: refused)
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    with pytest.raises(ValueError, match=r"pipe\.svm\.gz: reading it would take more than "
                                         r".* over the budget of 1\.0 MiB"):
        load_data_file(fifo)
    writer.join(10)


def test_an_upper_case_compressed_suffix_is_compressed_out_of_core_too(bomb):
    # (".GZ" was opened as gzip but not known as compressed: cache=False was taken,
    # and every pass would have decompressed the file again)
    with pytest.raises(ValueError, match="is compressed: reading its chunks again needs "
                                         "cache=True"):
        SvmlightChunks(bomb, cache=False)


def test_grfl_platt_message_names_the_classes_a_task_holds():
    # GrFL's tasks need two classes, not every class: the refusal said "every class
    # in every task" of a fit whose task 1 lacks "r" (accepted); it names the classes
    # a task holds now.  (The multitask MKL classifier's tasks need every class.)
    rng = np.random.RandomState(0)
    X, t = rng.randn(90, 3), np.repeat([0, 1, 2], 30)
    y = np.array(["p", "q", "r"])[np.arange(90) % 3]
    y[t == 1] = np.where(y[t == 1] == "r", "p", y[t == 1])  # (task 1: p and q)
    y[np.flatnonzero((t == 2) & (y == "r"))[1:]] = "q"  # (task 2: one r)
    with pytest.raises(ValueError, match=r"every class in every task holding it \(task 2 "
                                         r"has one of class 'r'\)"):
        InfiniteFeatureClassifier(probability=True, max_features=3, n_candidates=5,
                                  n_paths=1, random_state=0).fit(X, y, task_index=t)
