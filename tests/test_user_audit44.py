"""A forty-fourth user's audit: the command in scripts and pipelines, on real file systems.

A user ran ``kernlearn`` from shell scripts, batch jobs and pipelines, with
their paths, pipes, links and signals, and looked at what was left on disk.

What held (checked by hand on small files, not all pinned here):

- Outputs: a folder that does not exist, a folder as the output file, the
  data or model file as the output (also through a symbolic or a hard
  link), names with spaces, accents or a leading dash (``-o=-x.txt``,
  ``--out=-x.txt``; ``-o -x.txt`` is argparse's "expected one argument";
  data named ``-x.csv`` after ``--``), ``-o -`` for standard output, a
  symbolic link (the file it names is written, the link stays), a link
  loop (replaced by the file); two runs writing one output at once (three
  tries: one whole output, no temporary file); SIGINT during a fit or a
  block-by-block write (exit 130, "kernlearn: interrupted", no temporary
  file or cache folder left); a closed pipe from ``--out-of-core`` (141).
  A read-only folder could not be tried (the audit ran as root).
- Inputs: an empty file, a header without rows, a UTF-8 byte order mark,
  CRLF line ends, trailing blank lines, ``.csv.gz``, a gzip file named
  ``.csv`` ("holds binary data"), UTF-16 ("save it as UTF-8"), a folder,
  a CSV file from a FIFO or ``/dev/stdin`` (``--format csv``), a model
  from a pipe ("not a regular file", exit 4); ``-`` as the data is "data
  file not found" (the docs do not offer it).
- Model files: one written by a future format version names both versions
  (exit 4); a model of 1000 features on a 3-column file is exit 5.
- Exit statuses: a missing model 4 (also at ``select``), a missing data file
  3 (also at ``report --data``), an output into no folder 7 at every
  command, ``demo --out`` an existing file 7; doc/cli.md's table is the
  ``--help`` one (test_docs).

What did not hold; each test below failed before its fix: ``fit --config
X -m X`` wrote the model over the config file; a symbolic link into a
missing folder was refused only after the fit; ``-o preds/`` wrote a file
named ``preds``; a file written over lost its mode (0600 became 0644);
LIBSVM and NumPy files from a pipe were read twice (rows lost without a
word, or a valid file refused, or a FIFO waited for ever); standard output
on a full disk, or closed (``>&-``), was an internal error (exit 1); SIGTERM left a ``.tmp``
file and the ``--out-of-core`` cache behind.

Seen by reading and left to the next audit (fixed there, ``test_user_audit46.py``):
``load_model`` took the file's size, then opened it, then opened it again for
the arrays (a model replaced by another ``fit`` between them read as
"checksum mismatch"); SIGHUP (a terminal closed) ended the process at once.
"""

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from kernlearn.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _csv(path, n=40):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 3))
    lines = ["a,b,c,label"] + [f"{r[0]:.3f},{r[1]:.3f},{r[2]:.3f},{'yes' if r[0] > 0 else 'no'}"
                               for r in X]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_model_is_never_written_over_the_config_file(tmp_path, capsys):
    """``fit --config fgm.toml -m fgm.toml`` replaced the config file by the
    model (exit 0): the data and model files were protected, the config file,
    an input too, was not."""
    data = _csv(tmp_path / "toy.csv")
    cfg = tmp_path / "fgm.toml"
    cfg.write_text('estimator = "fgm"\n[params]\nB = 2\n')
    before = cfg.read_bytes()
    code = main(["fit", str(data), "--config", str(cfg), "-q", "-m", str(cfg)])
    err = capsys.readouterr().err
    assert code == 7 and "is the config file; refusing to overwrite it" in err
    assert cfg.read_bytes() == before


def test_a_link_into_a_missing_folder_is_refused_before_the_fit(tmp_path, capsys,
                                                                 monkeypatch):
    """An output that is a symbolic link is written through (the file it names
    is replaced); a link into a folder that does not exist passed the early
    check (the link's own folder exists), so the fit ran to its end before the
    save failed, where doc/cli.md says output paths are checked before any
    fit starts."""
    from kernlearn import FGMClassifier

    data = _csv(tmp_path / "toy.csv")
    link = tmp_path / "model.npz"
    link.symlink_to(tmp_path / "gone" / "model.npz")

    def no_fit(self, *args, **kwargs):
        raise AssertionError("the fit started")

    monkeypatch.setattr(FGMClassifier, "fit", no_fit)
    code = main(["fit", str(data), "-e", "fgm", "-q", "-m", str(link)])
    err = capsys.readouterr().err
    assert code == 7 and f"folder {tmp_path / 'gone'} does not exist" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "gone").exists()


@pytest.mark.parametrize("argv", [["fit", "{data}", "-e", "fgm", "-q", "-m", "{out}"],
                                  ["predict", "{data}", "-m", "{model}", "-o", "{out}"],
                                  ["select", "{model}", "-o", "{out}"],
                                  ["report", "{model}", "-o", "{out}"]])
def test_an_output_name_ending_with_a_slash_is_not_written_as_a_file(tmp_path, capsys,
                                                                     argv):
    """``-o preds/`` (a folder meant, not made yet) wrote a file named
    ``preds`` and said "wrote 40 predictions to preds/"; ``open`` refuses such
    a name, and so does the command now, before any work."""
    data = _csv(tmp_path / "toy.csv")
    model = tmp_path / "m.npz"
    assert main(["fit", str(data), "-e", "fgm", "-q", "-m", str(model)]) == 0
    capsys.readouterr()
    out = str(tmp_path / "preds") + "/"
    code = main([a.format(data=data, model=model, out=out) for a in argv])
    err = capsys.readouterr().err
    assert code == 7 and "ends with '/', as a folder's name does" in err
    assert not (tmp_path / "preds").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_a_rewritten_output_keeps_its_permissions(tmp_path, capsys):
    """Outputs are replaced through a new file (written whole, then renamed),
    which had the mode of a new file: a model or predictions file its owner
    had made private (``chmod 600``) became readable by all (0644) at the next
    run.  A file replaced keeps its mode; a new one has the umask's."""
    data = _csv(tmp_path / "toy.csv")
    model, pred = tmp_path / "m.npz", tmp_path / "pred.txt"
    umask = os.umask(0o022)
    try:
        for run in range(2):  # the second run replaces both files
            assert main(["fit", str(data), "-e", "fgm", "-q", "-m", str(model)]) == 0
            assert main(["predict", str(data), "-m", str(model), "-o", str(pred)]) == 0
            for path in (model, pred):
                assert path.stat().st_mode & 0o777 == (0o644 if run == 0 else 0o600)
                path.chmod(0o600)
    finally:
        os.umask(umask)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz", "pred.txt", "toy.csv"]


def _libsvm_rows(n):
    """``n`` rows of 16 bytes each: 65536 bytes (the first block a reader looks
    at) end at a line end, so a second reading starts at row 4097."""
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 100, n) / 10, rng.integers(0, 1000, n) / 100
    lab = np.where(a + b > 10, 1, -1)
    rows = [f"{s:+d} 1:{u:.1f} 2:{v:.2f}\n" for s, u, v in zip(lab, a % 10, b % 10)]
    assert {len(r) for r in rows} == {16}
    return "".join(rows)


def _through_a_pipe(content, argv):
    """``main(argv)`` on the data ``content`` written into a pipe, named
    ``/dev/fd/N`` as bash's process substitution names it."""
    r, w = os.pipe()

    def feed():
        try:
            with os.fdopen(w, "wb") as fh:
                fh.write(content)
        except BrokenPipeError:  # (the reader stopped early: its failure shows below)
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        return main([argv[0], f"/dev/fd/{r}", *argv[1:]])
    finally:
        os.close(r)
        writer.join(timeout=60)


@pytest.mark.parametrize("extra", [[], ["--out-of-core"]])
def test_a_libsvm_file_read_from_a_pipe_loses_no_rows(tmp_path, capsys, extra):
    """``kernlearn predict <(zcat test.svm.gz) -m model.npz`` (or
    ``/dev/stdin``): the LIBSVM reader opened the file twice, once for a look
    at its first 64 KiB and once to parse it, so from a pipe the second
    reading began where the first stopped: 6000 rows gave 1904 predictions
    (exit 0) when the look ended at a line end, else a "corrupt svmlight
    file" error for a valid file; from a FIFO (``mkfifo``) the second opening
    waited for a writer for ever.  The file is now read once."""
    text = _libsvm_rows(6000)
    data = tmp_path / "test.svm"
    data.write_text(text)
    model = tmp_path / "m.npz"
    assert main(["fit", str(data), "-e", "fgm", "-q", "-m", str(model)]) == 0
    capsys.readouterr()
    assert main(["predict", str(data), "-m", str(model), *extra]) == 0
    expected = capsys.readouterr().out
    assert expected.count("\n") == 6000
    code = _through_a_pipe(text.encode(), ["predict", "--format", "libsvm", "-m",
                                           str(model), *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == expected


@pytest.mark.parametrize("fmt", ["npy", "npz"])
def test_a_numpy_file_read_from_a_pipe_is_read(tmp_path, capsys, fmt):
    """``predict <(cat test.npy) --format npy``: the file was opened once for
    its signature and again by NumPy, which found the pipe emptied: "not a
    readable NumPy file: No data left in file" (exit 3) for a valid file."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    y = (X[:, 0] > 0).astype(float)
    data = tmp_path / f"t.{fmt}"
    if fmt == "npy":
        np.save(data, np.c_[X, y])
    else:
        np.savez(data, X=X, y=y)
    model = tmp_path / "m.npz"
    assert main(["fit", str(data), "-e", "fgm", "-q", "-m", str(model)]) == 0
    capsys.readouterr()
    assert main(["predict", str(data), "-m", str(model)]) == 0
    expected = capsys.readouterr().out
    code = _through_a_pipe(data.read_bytes(), ["predict", "--format", fmt, "-m", str(model)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == expected and out.count("\n") == 30


class _FullDisk:
    """Standard output redirected to a file on a full disk (``> out.txt``)."""

    encoding = "utf-8"

    def write(self, text):
        import errno

        raise OSError(errno.ENOSPC, "No space left on device")

    flush = write

    def fileno(self):
        import io

        raise io.UnsupportedOperation("no file descriptor here")


@pytest.mark.parametrize("argv", [["predict", "{data}", "-m", "{model}"],
                                  ["evaluate", "{data}", "-m", "{model}", "--json"],
                                  ["select", "{model}"], ["estimators"]])
def test_standard_output_on_a_full_disk_is_an_output_error(tmp_path, capsys,
                                                           monkeypatch, argv):
    """``kernlearn predict data.csv -m m.npz > pred.txt`` with the disk full was
    "internal error: OSError: [Errno 28] No space left on device ... please
    report it" (exit 1), and so was every command's output; it is exit 7, "an
    output file cannot be written", in one line."""
    data = _csv(tmp_path / "toy.csv")
    model = tmp_path / "m.npz"
    assert main(["fit", str(data), "-e", "fgm", "-q", "-m", str(model)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", _FullDisk())
    code = main([a.format(data=data, model=model) for a in argv])
    err = capsys.readouterr().err
    assert code == 7, err
    assert err == "kernlearn: error: cannot write standard output: No space left on device\n"
    assert isinstance(sys.stdout, _FullDisk)  # (put back as it was)


def test_a_closed_standard_output_is_an_output_error(tmp_path, capsys, monkeypatch):
    """``kernlearn predict ... >&-`` (Python then has no ``sys.stdout``) was
    "internal error: AttributeError: 'NoneType' object has no attribute
    'write'" (exit 1)."""
    data = _csv(tmp_path / "toy.csv")
    model = tmp_path / "m.npz"
    assert main(["fit", str(data), "-e", "fgm", "-q", "-m", str(model)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", None)
    code = main(["predict", str(data), "-m", str(model)])
    err = capsys.readouterr().err
    assert (code, err) == (7, "kernlearn: error: cannot write standard output: it is "
                              "closed\n")
    assert sys.stdout is None


# Runs a command with one step made to wait (after saying "ready") until the
# test sends SIGTERM: a write half-done, or a fit after its data cache is made.
_WAIT_IN = r"""
import sys, time
import pathlib
from kernlearn import FGMClassifier
from kernlearn.cli import main

def wait(*args, **kwargs):
    print("ready", flush=True)
    # (short sleeps: a signal the system hands to a thread other than the main one
    # does not wake a long sleep, and Python runs its handler in the main thread
    # only when that sleep ends: the rare fresh-clone timeouts of this test)
    for _ in range(12000):
        time.sleep(0.05)

if sys.argv[1] == "write":
    real = pathlib.Path.write_text

    def write_text(self, text, *args, **kwargs):
        real(self, text[: len(text) // 2], *args, **kwargs)
        wait()

    pathlib.Path.write_text = write_text
else:
    FGMClassifier.fit = wait
sys.exit(main(sys.argv[2:]))
"""


def _terminated(tmp_path, step, argv):
    """Run ``argv`` until ``step`` waits, send SIGTERM; ``(code, stderr)``."""
    import signal

    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "PYTHONPATH": str(ROOT / "src"),
           "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", _WAIT_IN, step, *argv], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        ready = proc.stdout.readline()
        assert ready == "ready\n", proc.stderr.read()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_leaves_no_temporary_file_or_cache(tmp_path, capsys):
    """``timeout``, ``kill`` and batch schedulers stop a job with SIGTERM, on
    which Python ended the process at once (status -15, no word): no cleanup
    ran, so a half-written output's ``.tmp`` file stayed beside it, and
    ``fit --out-of-core``'s binary copy of the data (as large as the data) in
    the temporary folder.  SIGTERM now unwinds as an interrupt does: the old
    output stays whole, nothing is left, exit 143 with one line."""
    assert_signal_leaves_nothing(tmp_path, _terminated, (143, "kernlearn: terminated\n"))


def assert_signal_leaves_nothing(tmp_path, signalled, expected):
    """A prediction stopped mid-write and an out-of-core fit stopped before its
    fit, each by ``signalled(tmp_path, step, argv)`` (a runner sending the
    signal): ``(exit code, stderr)`` is ``expected``, the old output whole,
    no ``.tmp`` file, nothing left in the temporary folder."""
    (tmp_path / "tmp").mkdir()
    data = tmp_path / "test.svm"
    data.write_text(_libsvm_rows(300))
    model = tmp_path / "m.npz"
    assert main(["fit", str(data), "-e", "fgm", "-q", "-m", str(model)]) == 0
    (tmp_path / "out").mkdir()
    old = tmp_path / "out" / "pred.txt"
    old.write_text("old\n")
    assert signalled(tmp_path, "write", ["predict", str(data), "-m", str(model),
                                         "-o", str(old)]) == expected
    assert old.read_text() == "old\n" and os.listdir(tmp_path / "out") == ["pred.txt"]
    assert signalled(tmp_path, "fit", ["fit", str(data), "-e", "fgm", "-q", "-m",
                                       str(tmp_path / "out" / "m2.npz"),
                                       "--out-of-core", "--chunk-memory", "4KiB"]) == expected
    assert os.listdir(tmp_path / "tmp") == [] and os.listdir(tmp_path / "out") == ["pred.txt"]


def test_exit_143_is_listed():
    """In ``kernlearn --help`` (test_docs checks doc/cli.md's table against it)."""
    from kernlearn.cli import EXIT_CODES

    assert "SIGTERM" in EXIT_CODES.get(143, "")
