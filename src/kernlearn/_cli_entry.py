"""The ``kernlearn`` console script and ``python -m kernlearn``: a Ctrl-C from
the start is the command line's one line and exit status 130.

:func:`kernlearn.cli.main` catches ``KeyboardInterrupt`` only once its module
is imported, and that import (NumPy and what the commands share) takes about
0.15 s: a Ctrl-C in that time printed Python's traceback of the import, or,
landing in NumPy's C code, an ``ImportError`` ("Importing the numpy
C-extensions failed").  This module imports nothing heavy (the package's
``__init__`` is light too) and, while :mod:`kernlearn.cli` is imported, makes
SIGINT end the process at once with the one line: nothing has been written
yet.  SIGTERM and SIGHUP, which killed Python silently then, say their line
too (exit 143, 129), as they do while a command runs.  What remains is the
interpreter's own start (20-30 ms, before any of the package runs): a Ctrl-C
there kills Python before it installs its handler (no output, status -2,
which a shell shows as 130) or interrupts its import of ``site`` (Python's
own fatal error).

Only the console script and ``python -m kernlearn`` (``main()`` without
arguments) take these start-up handlers: a program calling ``main([...])`` (a
notebook, a test harness) keeps its own signal handling while the import runs,
and finds its handlers as they were when the call returns, however it returns.
"""

import atexit
import os
import sys

from ._signal_words import _sig, signal_word  # (the light C module: see there)

_INTERRUPTED = 130  # kernlearn.cli.EXIT_CODES, not imported: that module is the heavy one


def _say(word):
    if sys.stderr is not None:  # (`2>&-`: print would write to stdout)
        print(f"kernlearn: {word}", file=sys.stderr, flush=True)


def _ended_while_importing(signum, frame):
    """A signal during the import: one line, exit 128 + signum, no
    half-imported state to unwind (a ``KeyboardInterrupt`` inside NumPy's C
    import code came out as an ``ImportError``)."""
    _say(signal_word(signum))
    os._exit(128 + signum)


def _import_run(startup=True):
    """:func:`kernlearn.cli.main`, imported with SIGINT, SIGTERM and SIGHUP
    ending the process when ``startup``.

    A handler is set only where the signal has Python's default (an ignored
    SIGINT, as in a background job, or SIGHUP under ``nohup``, stays ignored;
    a handler of a program calling :func:`main` stays), in the main thread,
    on the first import (later ones take no time), and only for the console
    script's start-up (``startup``): a program calling ``main([...])`` was
    ended by a signal that came while the import ran, with the command line's
    line instead of its own handling (its ``except KeyboardInterrupt``, its
    SIGTERM's default).
    """
    if "kernlearn.cli" in sys.modules or not startup:
        from .cli import main as run

        return run
    defaults = {"SIGINT": _sig.default_int_handler, "SIGTERM": _sig.SIG_DFL,
                "SIGHUP": _sig.SIG_DFL}
    caught = {}
    try:
        for name, default in defaults.items():
            signum = getattr(_sig, name, None)  # (no SIGHUP on Windows)
            if signum is not None and _sig.getsignal(signum) == default:
                _sig.signal(signum, _ended_while_importing)
                caught[signum] = default
    except ValueError:  # (not the main thread: no handler can be set)
        pass
    try:
        from .cli import main as run
    finally:
        for signum, default in caught.items():
            _sig.signal(signum, default)
    return run


def main(argv=None):
    """Run the ``kernlearn`` command, a Ctrl-C at any point giving one line.

    Parameters
    ----------
    argv : list of str, optional
        Arguments.  None (the console script, ``python -m kernlearn``) reads
        ``sys.argv[1:]`` and, the command done, ignores SIGINT once Python
        exits (see below); a list, as a program calling this passes, leaves
        SIGINT as it is, sets no start-up handler, and puts back the
        program's handlers of SIGINT, SIGTERM and SIGHUP however the call
        ends (while the command runs, SIGTERM and SIGHUP at their default
        end it as :func:`kernlearn.cli.main` says).

    Returns
    -------
    status : int
        One of :data:`kernlearn.cli.EXIT_CODES`.
    """
    hosts = None if argv is None else _handlers()  # (a program's call: see _put_back)
    try:
        # (cli.main says its own "interrupted" while a command runs; this
        # catches its lines outside its ``try``)
        return _import_run(startup=argv is None)(argv)
    except KeyboardInterrupt:
        _say(signal_word(_sig.SIGINT))
        return _INTERRUPTED
    finally:  # (also after --help, --version, a usage error: SystemExit)
        if hosts is not None:
            _put_back(hosts)
        if argv is None:
            # at the exit, not now: a process that runs the command and goes
            # on (``runpy.run_module("kernlearn")``, IPython's ``%run -m``)
            # kept SIGINT ignored, Ctrl-C dead there.  Registered last, the
            # hook runs first among the exit handlers (once however many runs)
            atexit.unregister(_ignore_sigint_at_exit)
            atexit.register(_ignore_sigint_at_exit)


def _handlers():
    """The handlers of SIGINT, SIGTERM and SIGHUP now, by signal number (those
    Python can put back: not one set outside Python, which reads as None)."""
    signals = (getattr(_sig, name, None) for name in ("SIGINT", "SIGTERM", "SIGHUP"))
    handlers = {signum: _sig.getsignal(signum) for signum in signals if signum is not None}
    return {signum: handler for signum, handler in handlers.items() if handler is not None}


def _put_back(handlers):
    """Set ``handlers`` (:func:`_handlers`) again where one was changed: a
    program calling :func:`main` gets its own back on every way out (a
    result, ``SystemExit``, an interrupt), whatever the command set."""
    try:
        for signum, handler in handlers.items():
            if _sig.getsignal(signum) is not handler:
                _sig.signal(signum, handler)
    except ValueError:  # (not the main thread: nothing was set there either)
        pass


def _ignore_sigint_at_exit():
    """The command's outputs are complete and flushed: a Ctrl-C while the
    interpreter exits (its modules torn down, about 50 ms after a fit) killed
    it by SIGINT without a word once Python had put the default handler back
    (a shell saw 130 next to a complete model), or printed a traceback from an
    exit handler.  Ignored (Python's exit leaves an ignored signal ignored),
    the status stays the command's; SIGTERM still ends a stuck exit."""
    try:
        if _sig.getsignal(_sig.SIGINT) == _sig.default_int_handler:
            _sig.signal(_sig.SIGINT, _sig.SIG_IGN)
    except ValueError:  # (not the main thread)
        pass
