"""The ``kernlearn`` console script and ``python -m kernlearn``: a Ctrl-C from
the start is the command line's one line and exit status 130.

:func:`kernlearn.cli.main` catches ``KeyboardInterrupt`` only once its module
is imported, and that import (NumPy and what the commands share) takes about
0.15 s: a Ctrl-C in that time printed Python's traceback of the import, or,
landing in NumPy's C code, an ``ImportError`` ("Importing the numpy
C-extensions failed").  This module imports nothing heavy (the package's
``__init__`` is light too) and, while :mod:`kernlearn.cli` is imported, makes
SIGINT end the process at once with the one line: nothing has been written
yet.  What remains is the interpreter's own start (about 15 ms, before any of
the package runs): a Ctrl-C there kills Python before it installs its handler
(no output, status -2, which a shell shows as 130) or interrupts its import of
``site`` (Python's own fatal error).
"""

import os
import sys

try:  # (the C module, loaded at start-up; ``signal`` imports enum, ~10 ms)
    import _signal as _sig
except ImportError:  # pragma: no cover - an interpreter without it
    import signal as _sig

_INTERRUPTED = 130  # kernlearn.cli.EXIT_CODES, not imported: that module is the heavy one


def _say_interrupted():
    if sys.stderr is not None:  # (`2>&-`: print would write to stdout)
        print("kernlearn: interrupted", file=sys.stderr, flush=True)


def _interrupted_while_importing(signum, frame):
    """SIGINT during the import: one line, exit 130, no half-imported state
    to unwind (a ``KeyboardInterrupt`` inside NumPy's C import code came out
    as an ``ImportError``)."""
    _say_interrupted()
    os._exit(_INTERRUPTED)


def _import_run():
    """:func:`kernlearn.cli.main`, imported with SIGINT ending the process.

    The handler is set only if SIGINT has Python's default handler (an
    ignored SIGINT, as in a background job, stays ignored; a handler of a
    program calling :func:`main` stays), in the main thread, on the first
    import (later ones take no time).
    """
    if "kernlearn.cli" in sys.modules:
        from .cli import main as run

        return run
    try:
        previous = _sig.getsignal(_sig.SIGINT)
        if previous is _sig.default_int_handler:
            _sig.signal(_sig.SIGINT, _interrupted_while_importing)
    except ValueError:  # (not the main thread: no handler can be set)
        previous = None
    try:
        from .cli import main as run
    finally:
        if previous is _sig.default_int_handler:
            _sig.signal(_sig.SIGINT, previous)
    return run


def main(argv=None):
    """Run the ``kernlearn`` command, a Ctrl-C at any point giving one line.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    status : int
        One of :data:`kernlearn.cli.EXIT_CODES`.
    """
    try:
        # (cli.main says its own "interrupted" while a command runs; this
        # catches its lines outside its ``try``)
        return _import_run()(argv)
    except KeyboardInterrupt:
        _say_interrupted()
        return _INTERRUPTED
