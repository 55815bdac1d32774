"""The kernlearn modules the documentation tests walk (a helper, not a test file)."""

import importlib
import pkgutil

import kernlearn


def kernlearn_modules(public=True):
    """Yield each importable module of the package.

    Parameters
    ----------
    public : bool
        Only the public modules (no part of the dotted name after ``kernlearn``
        starts with an underscore); otherwise every module but ``__main__``, which
        runs the command line on import.
    """
    for info in pkgutil.walk_packages(kernlearn.__path__, "kernlearn."):
        parts = info.name.split(".")[1:]
        if (any(p.startswith("_") for p in parts) if public
                else info.name.endswith("__main__")):
            continue
        try:
            yield importlib.import_module(info.name)
        except ImportError:
            continue
