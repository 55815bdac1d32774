"""The words the command line ends with when a signal stops it.

One table for :mod:`kernlearn._cli_entry` (a signal during the start-up
import) and :mod:`kernlearn._cli_common` (a signal while a command runs), so
both say the same; light, as the entry point must stay.
"""

try:  # (the C module, loaded at start-up; ``signal`` imports enum, ~10 ms)
    import _signal as _sig
except ImportError:  # pragma: no cover - an interpreter without it
    import signal as _sig

# What the command line says when a signal ends it (exit status 128 + the signal)
_WORDS = {"SIGINT": "interrupted", "SIGTERM": "terminated", "SIGHUP": "hung up"}


def signal_word(signum):
    """The word of the command line's last line when signal ``signum`` ends it.

    Parameters
    ----------
    signum : int
        SIGINT, SIGTERM or SIGHUP.

    Returns
    -------
    word : str
        "interrupted", "terminated" or "hung up".
    """
    return next(word for name, word in _WORDS.items()
                if getattr(_sig, name, None) == signum)
