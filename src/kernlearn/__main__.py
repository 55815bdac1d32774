"""``python -m kernlearn`` runs the command line."""

import sys

from ._cli_entry import main

status = main()
# A KeyboardInterrupt that left code run by ``exec(<string>)`` (a dataclass's
# generated __init__, say) sets CPython's "unhandled interrupt" flag even when
# the command caught it; under ``-m`` (not under the console script, whose
# sys.exit ends the process at once) the interpreter then killed itself with
# SIGINT after the one-line message, status -2 instead of 130.  Each
# ``exec`` of a string clears that flag first.
exec("")
sys.exit(status)
