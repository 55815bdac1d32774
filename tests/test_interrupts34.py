"""Interrupts the thirty-second pass left (issue 24).

* ``kernlearn._cli_entry.main([...])`` called by a program (a notebook, a test
  harness) set the console script's start-up handlers while it imported the
  command line: a signal then ended the program with the command line's one
  line (``os._exit``) instead of its own handling.  A program's call now sets
  none, and finds its handlers as they were however the call ends.
* A Ctrl-C while a threaded search (``GridSearchCV`` under joblib's threading
  backend, a ``ThreadPoolExecutor``) waits for its fits stopped the main thread
  only: the fits ran on to their end in their threads.  They now stop at their
  next outer iteration, raising :class:`~kernlearn.utils._threads.Interrupted`
  (a ``KeyboardInterrupt``), their estimators left as they were.
"""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

posix = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")


def _default_sigint():
    # (a background `make test &` ignores SIGINT, and an ignored signal stays
    # ignored across exec: Python would then install no handler at all)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run(code, timeout=120):
    """Run ``code`` in a fresh Python (the package on its path), SIGINT at its
    default; ``(returncode, stdout, stderr)``."""
    env = dict(os.environ, PYTHONPATH=str(SRC), OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_default_sigint)
    return proc.returncode, proc.stdout, proc.stderr


# A finder that sends the process ``SIGNAL`` once, when ``kernlearn.cli`` is
# imported: a real signal inside the import window of a first ``main([...])``.
_SIGNAL_WHILE_IMPORTING = """
import os, signal, sys

class SignalOnImport:
    def find_spec(self, name, path=None, target=None):
        if name == "kernlearn.cli":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.{signal})
        return None

sys.meta_path.insert(0, SignalOnImport())
from kernlearn._cli_entry import main
"""


# ------------------------------------------ main([...]) keeps the program's signal handling
@posix
def test_sigterm_while_a_library_call_imports_is_the_programs_default():
    """SIGTERM at its default kills the program by SIGTERM (status -15), as
    it would have without the call; it was ``os._exit(143)`` with
    "kernlearn: terminated"."""
    code, out, err = _run(_SIGNAL_WHILE_IMPORTING.format(signal="SIGTERM") + """
status = main(["--version"])
print("the program went on", status)
""")
    assert (code, out) == (-signal.SIGTERM, ""), (code, out, err)
    assert "kernlearn:" not in err


@posix
def test_ctrl_c_while_a_library_call_imports_reaches_the_program():
    """A Ctrl-C in the import is the program's ``KeyboardInterrupt`` (the call
    says "interrupted" and returns 130, as for one while its command runs),
    and the program goes on; it was ended at once by ``os._exit(130)``."""
    code, out, err = _run(_SIGNAL_WHILE_IMPORTING.format(signal="SIGINT") + """
status = main(["--version"])
print("the program went on", status)
""")
    assert (code, out) == (0, "the program went on 130\n"), (code, out, err)
    assert err == "kernlearn: interrupted\n"


@posix
def test_a_library_call_leaves_the_programs_handlers_on_every_way_out():
    """After a result, ``SystemExit`` (``--version``), a usage error, a Ctrl-C
    and a SIGTERM during the command, and a SIGTERM escaping ``cli.main``
    before its ``try`` (its handler left set there), the handlers of SIGINT, SIGTERM and SIGHUP are the
    program's (its own SIGHUP handler, the defaults of the others): a real
    SIGHUP then runs the program's handler, a real SIGTERM kills it."""
    code, out, err = _run("""
import os, signal, time
from kernlearn._cli_entry import main

def own(signum, frame):
    print("@ own handler", flush=True)

signal.signal(signal.SIGHUP, own)
names = ("SIGINT", "SIGTERM", "SIGHUP")
before = {n: signal.getsignal(getattr(signal, n)) for n in names}

def same(what):
    after = {n: signal.getsignal(getattr(signal, n)) for n in names}
    print("@", what, after == before, flush=True)

def call(argv):
    try:
        print("@ returned", main(argv), flush=True)
    except SystemExit as exc:  # (argparse's --version, a usage error)
        print("@ exit", exc.code, flush=True)

same("start")
call(["--version"]); same("--version")
call(["estimators"]); same("result")
call(["no-such-command"]); same("usage error")

import kernlearn.cli as cli
parser = cli.build_parser

def signalled(signum):
    def build():
        p = parser()
        def command(args):
            os.kill(os.getpid(), signum)
            time.sleep(5)  # (the signal arrives first)
            return 0
        p.set_defaults(func=command)
        for action in p._subparsers._group_actions:
            for sub in action.choices.values():
                sub.set_defaults(func=command)
        return p
    return build

for name in ("SIGINT", "SIGTERM"):
    cli.build_parser = signalled(getattr(signal, name))
    call(["estimators"]); same(name)
cli.build_parser = parser

# a SIGTERM before cli.main's ``try`` (its handler set, not yet put back)
silenced = cli.closed_stderr_silenced
def killed_first():
    os.kill(os.getpid(), signal.SIGTERM)
    return silenced()
cli.closed_stderr_silenced = killed_first
try:
    call(["estimators"])
except BaseException as exc:
    print("@ raised", type(exc).__name__, flush=True)
same("escaped")
cli.closed_stderr_silenced = silenced

os.kill(os.getpid(), signal.SIGHUP)
time.sleep(0.2)
os.kill(os.getpid(), signal.SIGTERM)
time.sleep(5)
print("not killed")
""")
    assert code == -signal.SIGTERM, (code, out, err)
    lines = [line[2:] for line in out.splitlines() if line.startswith("@ ")]
    assert lines == [
        "start True", "exit 0", "--version True", "returned 0", "result True", "returned 2",
        "usage error True", "returned 130", "SIGINT True", "returned 143", "SIGTERM True",
        "raised Terminated", "escaped True", "own handler"], out
    assert err.endswith("kernlearn: interrupted\nkernlearn: terminated\n"), err
