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
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

from sklearn.utils.validation import check_is_fitted

import kernlearn as kl
from kernlearn.utils import _threads

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
# (the children import the package and tests/interrupt_fits.py)
CHILD_PATH = os.pathsep.join([str(SRC), str(ROOT / "tests")])

posix = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")


def _default_sigint():
    # (a background `make test &` ignores SIGINT, and an ignored signal stays
    # ignored across exec: Python would then install no handler at all; a
    # blocked one stays blocked, and the child never sees its Ctrl-C)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _run(code, timeout=120):
    """Run ``code`` in a fresh Python (the package on its path), SIGINT at its
    default; ``(returncode, stdout, stderr)``."""
    env = dict(os.environ, PYTHONPATH=CHILD_PATH, OMP_NUM_THREADS="1")
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


# ------------------------------------- a Ctrl-C in a threaded search stops the running fits
def _three_classes(n=90, p=5):
    X = np.random.RandomState(0).randn(n, p)
    return X, np.argmax(X[:, :3], axis=1)


def _tasks(n=80, p=4):
    X, _ = _three_classes(n, p)
    return X, X[:, 0] + 0.1 * X[:, 1], {"task_index": np.arange(n) % 2}


FITS = {
    "FGM (column generation)": (lambda: kl.FGMClassifier(B=1), _three_classes, {}),
    "FGM one-vs-rest, n_jobs=2 (the problems' threads)": (
        lambda: kl.FGMClassifier(B=1, multiclass="ovr", n_jobs=2), _three_classes, {}),
    "GrFL": (lambda: kl.InfiniteFeatureClassifier(max_features=3), _three_classes, {}),
    "OBSCURE (epochs)": (lambda: kl.PNormMKLClassifier(), _three_classes, {}),
    "SLKL": (lambda: kl.LowRankKernelRegressor(), lambda: _tasks()[:2], {}),
    "MK-MTFL (mirror descent)": (lambda: kl.MultitaskMKLRegressor(), _tasks, None),
    "MK-MTSFL": (lambda: kl.MultitaskMKLRegressor(formulation="mtsfl"), _tasks, None),
}


def _fit_in_a_thread(name, interrupt, show=False):
    """Fit ``FITS[name]`` in another thread while the main thread handles a
    ``KeyboardInterrupt`` (``interrupt``: one raised after the fit began, as a
    threaded search's wait gets; else one raised before) and waits for it,
    with ``show`` setting it as ``sys.last_value`` first (as a shell shows
    it).  ``(estimator, a fresh one, "fitted" or the fit's exception)``."""
    make, data, fit_kw = FITS[name]
    X, y, *kw = data()
    est, out, started, go = make(), [], threading.Event(), threading.Event()

    def run():
        # (the watch starts here, before the main thread's interrupt: the fit's
        # own entry, nested, keeps it)
        with _threads.interrupts_watched():
            started.set()
            assert go.wait(60)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X, y, **(kw[0] if fit_kw is None else fit_kw))
                out.append("fitted")
            except BaseException as error:
                out.append(error)

    def wait():
        thread = threading.Thread(target=run, name="fit")
        thread.start()
        assert started.wait(60)
        return thread

    if interrupt:
        thread = wait()
    shown = getattr(sys, "last_value", None)
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as error:
        if not interrupt:
            thread = wait()
        if show:
            sys.last_value = error
        go.set()
        thread.join(120)
    finally:
        sys.last_value = shown
    assert not thread.is_alive()
    return est, make(), out[0]


def _raised():
    """A ``KeyboardInterrupt`` raised in code, as a shell shows one (one with
    no traceback is the prompt's, ignored: ``tests/test_user_audit100.py``)."""
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as error:
        return error


@pytest.mark.parametrize("name", list(FITS))
def test_a_fit_in_another_thread_stops_when_the_main_thread_is_interrupted(name, monkeypatch):
    """Each method's loop stops at its next check (the second here: a handled
    interrupt is confirmed at the next look, every check a look here), the fit
    raising ``Interrupted``, a ``KeyboardInterrupt``, and the estimator is left
    as it was: not fitted.  Before, the fit ran to its end."""
    monkeypatch.setattr(_threads, "_LOOK_EVERY", 0.0)  # (these fits take milliseconds)
    est, fresh, result = _fit_in_a_thread(name, interrupt=True)
    assert isinstance(result, _threads.Interrupted), result
    assert isinstance(result, KeyboardInterrupt)
    assert vars(est).keys() == vars(fresh).keys()


def test_an_interrupt_from_before_the_fit_is_not_the_fits(monkeypatch):
    """A fit started in a thread while the main thread handles a Ctrl-C (an
    ``except KeyboardInterrupt`` fitting a fallback; that Ctrl-C then shown or
    not), or after one a notebook showed (``sys.last_value``), runs to its end."""
    # (every check a look: a handled interrupt counts at its second look, which
    # these fits of milliseconds would not reach at the look's real interval)
    monkeypatch.setattr(_threads, "_LOOK_EVERY", 0.0)
    for show in (False, True):  # (then shown: the same interrupt)
        est, _, result = _fit_in_a_thread("FGM (column generation)", False, show)
        assert result == "fitted"
    check_is_fitted(est)
    shown = getattr(sys, "last_value", None)
    sys.last_value = _raised()  # (a shell shows one raised in code: its traceback)
    try:
        est, _, result = _fit_in_a_thread("OBSCURE (epochs)", interrupt=False)
    finally:
        sys.last_value = shown
    assert result == "fitted"
    check_is_fitted(est)


def test_a_ctrl_c_a_notebook_shows_stops_the_fits_still_running():
    """An interactive session shows the main thread's ``KeyboardInterrupt``
    and sets ``sys.last_value`` (IPython too) without waiting for a
    ``ThreadPoolExecutor``'s futures: the fits still running stop."""
    make, data, _ = FITS["FGM (column generation)"]
    X, y = data()
    shown = getattr(sys, "last_value", None)
    result, started = [], threading.Event()

    def run():
        with _threads.interrupts_watched():
            started.set()
            assert go.wait(60)
            try:
                make().fit(X, y)
                result.append("fitted")
            except BaseException as error:
                result.append(error)

    go = threading.Event()
    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert started.wait(60)
        sys.last_value = _raised()
        go.set()
        thread.join(120)
    finally:
        sys.last_value = shown
    assert isinstance(result[0], _threads.Interrupted), result


# Fits that would run 30 s (3,000 column generation iterations of 10 ms, idle:
# tests/interrupt_fits.py) and a real SIGINT once two are running.
_SLOW = """
import signal, sys, threading, time
from interrupt_fits import Slow, X, y, ends, running

def interrupt_once_two_run():
    running.acquire(); running.acquire()
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

def report(what):
    deadline = time.monotonic() + 20
    while len(ends) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    print(what, sorted(ends), flush=True)

threading.Thread(target=interrupt_once_two_run, daemon=True).start()
"""


@posix
def test_a_real_ctrl_c_stops_the_fits_a_thread_pool_waits_for():
    """A ``ThreadPoolExecutor`` waits for its fits in its ``__exit__`` (a
    script's ``with``): the running fits stop (``Interrupted``) in about 0.05 s
    plus one iteration, where each ran on for 30 s, and their estimators are
    as created."""
    code, out, err = _run(_SLOW + """
from concurrent.futures import ThreadPoolExecutor
fits = [Slow() for _ in range(2)]
try:
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(est.fit, X, y) for est in fits]
        [f.result() for f in futures]
except KeyboardInterrupt:
    print("interrupted", flush=True)
report("fits")
print([type(f.exception()).__name__ for f in futures], [sorted(vars(est)) for est in fits])
""")
    assert (code, err) == (0, ""), (code, out, err)
    assert out.splitlines() == [
        "interrupted", "fits ['Interrupted', 'Interrupted']",
        "['Interrupted', 'Interrupted'] [['C', 'n'], ['C', 'n']]"], (out, err)


@posix
def test_a_real_ctrl_c_of_an_interactive_search_stops_its_fits():
    """``GridSearchCV`` under joblib's threading backend in an interactive
    session (``python -i``): the Ctrl-C stops the search and is shown; joblib
    waits for none of the running fits, which ran on for 30 s each: they stop.
    """
    env = dict(os.environ, PYTHONPATH=CHILD_PATH, OMP_NUM_THREADS="1")
    search = textwrap.dedent(_SLOW) + textwrap.dedent("""
        import joblib
        from sklearn.model_selection import GridSearchCV
        with joblib.parallel_backend("threading"):
            GridSearchCV(Slow(), {"C": [1.0, 2.0, 3.0, 4.0]}, cv=2, n_jobs=2).fit(X, y)
        """)
    proc = subprocess.run([sys.executable, "-i", "-c", search], env=env,
                          input='report("fits")\n', capture_output=True, text=True,
                          timeout=120, preexec_fn=_default_sigint)
    assert proc.stdout == "fits ['Interrupted', 'Interrupted']\n", (proc.stdout, proc.stderr)
    assert "KeyboardInterrupt" in proc.stderr
