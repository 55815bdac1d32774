"""A forty-sixth user's audit: what the forty-fourth left, a model file replaced
while it is read, a closed terminal, a closed standard error.

Each test below failed before its fix: a model renamed into place by another
``fit`` while ``load_model`` read it was "checksum mismatch" (the size was
taken from one file, the bytes from the other, and the arrays from a third
opening); SIGHUP ended a command at once, leaving a half-written output's
``.tmp`` file and ``fit --out-of-core``'s data cache; with standard error
closed (``2>&-``) an error message was written into standard output (Python's
``print(file=None)``), i.e. into the predictions file.
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kernlearn import FGMClassifier
from kernlearn.io import load_model, save_model

from test_user_audit44 import ROOT, _csv, assert_signal_leaves_nothing

posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and descriptors")


def _model(n_features, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, n_features))
    return FGMClassifier(B=2).fit(X, (X[:, 0] > 0).astype(int)), X


def test_a_model_replaced_while_it_is_read_loads_whole(tmp_path, monkeypatch):
    """Our own writes replace a model by renaming a new file over it; a
    ``load_model`` between its steps (the size, the seal, the arrays, each
    from the path again) read "checksum mismatch", or a seal from one file and
    arrays from the other.  The file is opened once and read from that
    opening: the model loaded is the one opened, whole."""
    first, X1 = _model(3, 0)
    second, _ = _model(7, 1)
    path, other = tmp_path / "m.npz", tmp_path / "other.npz"
    save_model(first, path, metadata={"which": "first"})
    save_model(second, other, metadata={"which": "second"})
    assert path.stat().st_size != other.stat().st_size
    replaced = []

    def replace_once(real):
        def step(*args, **kwargs):
            out = real(*args, **kwargs)
            if not replaced:  # (the concurrent fit's rename lands here)
                replaced.append(True)
                os.replace(other, path)
            return out
        return step

    # the first step after the name is resolved: the size of the path (before
    # the fix), or of the open file (after it)
    monkeypatch.setattr(os.path, "getsize", replace_once(os.path.getsize))
    monkeypatch.setattr(os, "fstat", replace_once(os.fstat))
    est, meta = load_model(path, return_metadata=True)
    monkeypatch.undo()
    assert replaced and not other.exists()
    assert meta == {"which": "first"} and est.n_features_in_ == 3
    np.testing.assert_array_equal(est.decision_function(X1), first.decision_function(X1))
    assert load_model(path, return_metadata=True)[1] == {"which": "second"}


# As test_user_audit44's SIGTERM runner: one step waits (after saying "ready")
# for a line on its standard input, which the test sends after the signal (a
# signal not ignored stops the wait first); `ignore` starts it as nohup does.
_WAIT_IN = r"""
import sys
import pathlib
from kernlearn import FGMClassifier
from kernlearn.cli import main

def wait(*args, **kwargs):
    print("ready", flush=True)
    sys.stdin.readline()
    return real_fit(*args, **kwargs) if sys.argv[1] == "fit" else None

real_fit = FGMClassifier.fit
if sys.argv[1] == "write":
    real = pathlib.Path.write_text

    def write_text(self, text, *args, **kwargs):
        real(self, text[: len(text) // 2], *args, **kwargs)
        wait()
        real(self, text, *args, **kwargs)

    pathlib.Path.write_text = write_text
else:
    FGMClassifier.fit = wait
sys.exit(main(sys.argv[2:]))
"""


def _hung_up(tmp_path, step, argv, ignore=False):
    """Run ``argv`` until ``step`` waits, send SIGHUP; ``(code, stderr)``."""
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "PYTHONPATH": str(ROOT / "src"),
           "OMP_NUM_THREADS": "1"}

    def disposition():  # (ignored: what `nohup` does before it runs the command;
        # else the default, even when the tests themselves run under nohup, whose
        # ignored SIGHUP a child inherits)
        signal.signal(signal.SIGHUP, signal.SIG_IGN if ignore else signal.SIG_DFL)

    proc = subprocess.Popen([sys.executable, "-c", _WAIT_IN, step, *argv],
                            cwd=tmp_path, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=disposition)
    try:
        ready = proc.stdout.readline()
        assert ready == "ready\n", proc.stderr.read()
        proc.send_signal(signal.SIGHUP)
        _, err = proc.communicate("go\n", timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


@posix
def test_sighup_leaves_no_temporary_file_or_cache(tmp_path):
    """A command run in a terminal that is closed (an ssh session lost, a
    window shut) gets SIGHUP, on which Python ended the process at once
    (status -1, no word): a half-written output's ``.tmp`` file stayed beside
    it and ``fit --out-of-core``'s copy of the data in the temporary folder.
    SIGHUP now unwinds as SIGTERM does: exit 129, one line, nothing left."""
    assert_signal_leaves_nothing(tmp_path, _hung_up, (129, "kernlearn: hung up\n"))


@posix
def test_sighup_ignored_by_nohup_stays_ignored(tmp_path):
    """``nohup kernlearn fit ...`` ignores SIGHUP so that the fit outlives the
    terminal: the command must not put its own handler in its place."""
    (tmp_path / "tmp").mkdir()
    data = _csv(tmp_path / "toy.csv")
    model = tmp_path / "m.npz"
    code, err = _hung_up(tmp_path, "fit", ["fit", str(data), "-e", "fgm", "-q", "-m",
                                           str(model)], ignore=True)
    assert (code, err) == (0, "")
    assert load_model(model).n_features_in_ == 3


def test_exit_129_is_listed():
    """In ``kernlearn --help`` (test_docs checks doc/cli.md's table against it)."""
    from kernlearn.cli import EXIT_CODES

    assert "SIGHUP" in EXIT_CODES.get(129, "")


@posix
@pytest.mark.parametrize("argv", [["predict", "{data}", "-m", "{missing}"],
                                  ["predict", "{data}", "--bogus"]])
def test_an_error_with_standard_error_closed_is_not_written_to_standard_output(tmp_path,
                                                                              argv):
    """``kernlearn predict data.csv -m m.npz > pred.txt 2>&-``: Python has no
    ``sys.stderr`` then, and ``print(..., file=None)`` wrote "kernlearn:
    error: model file not found" into pred.txt, as if it were a prediction.
    As grep and git, the command now says nothing and keeps its exit status."""
    data = _csv(tmp_path / "toy.csv")
    argv = [a.format(data=data, missing=tmp_path / "gone.npz") for a in argv]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}
    with open(tmp_path / "pred.txt", "w") as out:
        code = subprocess.run([sys.executable, "-m", "kernlearn.cli", *argv], env=env,
                              stdout=out, preexec_fn=lambda: os.close(2),
                              timeout=120).returncode
    assert (code, Path(tmp_path / "pred.txt").read_text()) == (4 if "-m" in argv else 2, "")
