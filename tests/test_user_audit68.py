"""A sixty-eighth user's audit: fits, saves and loads that fail or are stopped part way.

A user relying on the estimators in long notebooks, grid searches and
services stopped fits with Ctrl-C at every step of their code, refitted
fitted estimators on data refused late, made user callables raise, filled
the disk while a model was saved and read truncated model files.  Each test
here failed before its fix.

Checked clean (no fix needed): every public estimator (binary, three-class,
weighted, DataFrame, Dask, ``probability=True``, ``warm_start=True``, FGM's
``refit`` and one-vs-rest threads), refitted on other data with Ctrl-C raised
at evenly spread calls of its Python code (20 to 150 points per case): its
pickle and predictions were those before, the user's arrays, ``np.geterr``,
the warnings filters, the environment and ``/tmp`` unchanged, no thread
left (a one-vs-rest worker ends its current problem, then stops),
and a warm refit after a stopped one gave the uninterrupted model; refits
refused late (one class left by the weights, NaN, an infinite target, a
non-PSD precomputed kernel, a kernel callable or a splitter raising part
way) left the earlier model whole; no fit changed its parameters (nested
dicts and lists included); ``GridSearchCV(error_score=np.nan)`` with failing
candidates (multitask ones routed ``task_index``) scored the others and named
each failure; ``save_model`` on a full disk or interrupted kept the old file
and no temporary one, and truncated model files are refused in words; the
command line's failed fits (one class, a non-finite cell, a corrupt later
chunk out of core) and failed predictions wrote no file, with one line and
their exit codes.
"""

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController, threadpool_info, threadpool_limits

from kernlearn.solvers import _base


def _blas_threads():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def _stop_part_way(monkeypatch, count):
    """Make a BLAS thread-count change to ``count`` raise ``KeyboardInterrupt`` once
    another library's count was changed to ``count`` (so one is left changed, one not)."""
    cls = type(ThreadpoolController().select(user_api="blas").lib_controllers[0])
    real, done = cls.set_num_threads, []

    def set_num_threads(self, n):
        if n == count and self.num_threads != count:
            if done:
                raise KeyboardInterrupt
            done.append(self)
        return real(self, n)

    monkeypatch.setattr(cls, "set_num_threads", set_num_threads)


def _two_threaded_libraries():
    """The BLAS thread counts under a limit of 2 (a library built single-threaded
    stays at 1), skipping unless two libraries run threads."""
    counts = _blas_threads()
    if sum(n > 1 for n in counts) < 2:
        pytest.skip("needs two BLAS libraries seen by threadpoolctl that run threads")
    return counts


def test_a_fit_stopped_while_blas_is_limited_gives_blas_its_threads_back(monkeypatch):
    # Ctrl-C while a fit's solver limited BLAS to one thread, after the first
    # library was limited: that library stayed at one thread for the rest of
    # the session (the next limit took 1 for its original count), so every
    # later matrix product of the process ran on one core
    from kernlearn import PNormMKLClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    with threadpool_limits(limits=2, user_api="blas"):
        want = _two_threaded_libraries()
        _stop_part_way(monkeypatch, 1)
        with pytest.raises(KeyboardInterrupt):
            PNormMKLClassifier(random_state=0).fit(X, y)
        monkeypatch.undo()
        assert _blas_threads() == want
        PNormMKLClassifier(random_state=0).fit(X, y)
        assert _blas_threads() == want


def test_a_limit_whose_restore_was_stopped_is_finished_by_the_next_block(monkeypatch):
    # Ctrl-C while the last block left gave the libraries their threads back:
    # the next block took the one library still at one thread for its count
    # and restored that, one thread, for good
    with threadpool_limits(limits=2, user_api="blas"):
        want = _two_threaded_libraries()
        with pytest.raises(KeyboardInterrupt), _base.single_blas_thread():
            _stop_part_way(monkeypatch, 2)  # (a restore)
        monkeypatch.undo()
        assert _blas_threads() != want  # (the process as the interrupt left it)
        with _base.single_blas_thread():
            assert _blas_threads() == [1] * len(want)
        assert _blas_threads() == want
        assert _base._LIMITER is None


@pytest.mark.parametrize("case", ["corrupt-line", "n_features"])
def test_svmlight_chunks_refused_part_way_leave_no_parsed_chunks_on_disk(tmp_path, monkeypatch,
                                                                         case):
    # SvmlightChunks parses a file into a temporary folder of binary chunks;
    # refused part way (a corrupt line in a later chunk, or more features than
    # n_features, found after the whole file was parsed), the folder stayed
    # on disk as long as the error was kept (by a notebook, a log, pytest),
    # since the error's traceback holds the half-built object
    import tempfile

    from kernlearn.datasets import FeatureCountError, SvmlightChunks

    cache = tmp_path / "tmp"
    cache.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(cache))
    path = tmp_path / "data.svm"
    rows = "1 1:0.5\n-1 2:2\n1 1:1\n-1 3:1\n"
    path.write_text(rows + "1 1:x\n" if case == "corrupt-line" else rows)
    expected = ValueError if case == "corrupt-line" else FeatureCountError
    with pytest.raises(expected) as kept:
        SvmlightChunks(path, chunk_rows=2, n_features=None if case == "corrupt-line" else 2)
    assert kept.value is not None  # (the error, and with it the object, still held)
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize("stop", [KeyboardInterrupt, RuntimeError])
def test_a_fit_stopped_part_way_closes_its_progress_bar(monkeypatch, capsys, stop):
    # FGMClassifier(verbose=1) on a terminal, stopped at its third iteration
    # (Ctrl-C, or an error): the bar was never closed and stayed registered
    # with tqdm while the error was kept (as a notebook keeps it, as
    # pytest.raises does here), so the next fit's bar was drawn a line lower,
    # every update of it moving the cursor up ("\x1b[A") and onto a new line
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from tqdm import tqdm

    from kernlearn import FGMClassifier, colgen

    monkeypatch.setenv("KERNLEARN_PROGRESS", "bar")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 30))
    y = (X[:, :5].sum(axis=1) > 0).astype(int)
    real, calls = colgen._pricing, []

    def pricing(*args):
        calls.append(1)
        if len(calls) == 3:
            raise stop
        return real(*args)

    monkeypatch.setattr(colgen, "_pricing", pricing)
    with pytest.raises(stop) as kept:
        FGMClassifier(verbose=1, max_features=20).fit(X, y)
    monkeypatch.setattr(colgen, "_pricing", real)
    assert kept.value is not None  # (the error, and the fit's frames, still held)
    assert list(getattr(tqdm, "_instances", ())) == []
    assert capsys.readouterr().err.endswith("\n")  # (the bar's line ended)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        FGMClassifier(verbose=1, max_features=5).fit(X, y)
    assert "\x1b[A" not in capsys.readouterr().err


@pytest.mark.parametrize("failure", ["disk-full", "refused"])
def test_a_model_file_that_cannot_be_written_is_named_and_the_old_one_kept(tmp_path, monkeypatch,
                                                                           failure):
    # save_model on a full disk raised "[Errno 28] No space left on device"
    # naming no file, and a refused write named the hidden temporary file
    # (".model.npz.k3j_x.tmp", already removed), never the file asked for;
    # the old model file stays whole and no temporary file is left
    import errno
    from pathlib import Path

    from kernlearn import FGMClassifier
    from kernlearn.io import load_model, save_model

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    path = tmp_path / "model.npz"
    save_model(FGMClassifier().fit(X, y), path)
    old = path.read_bytes()

    def write_bytes(self, data):
        with open(self, "wb") as fh:
            fh.write(data[: len(data) // 2])
        if failure == "disk-full":
            raise OSError(errno.ENOSPC, "No space left on device")
        raise PermissionError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    with pytest.raises(OSError) as info:
        save_model(FGMClassifier(C=5.0).fit(X, 1 - y), path)
    monkeypatch.undo()
    assert info.value.filename == str(path), str(info.value)
    assert info.value.errno == (errno.ENOSPC if failure == "disk-full" else errno.EACCES)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.npz"]
    assert path.read_bytes() == old
    load_model(path)
