"""Helpers for the tests of the scripts under ``benchmarks/``."""

import importlib.util
import lzma
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_script(name):
    """Import ``benchmarks/<name>.py`` as a module; yield it, then forget it.

    The module is registered in ``sys.modules`` while in use so that pool
    workers (forked) can unpickle its functions.
    """
    spec = importlib.util.spec_from_file_location(f"kernlearn_bench_{name}",
                                                  BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def write_set(folder, name, df):
    """Write ``df`` as the suite's ``<name>.csv.xz``."""
    with lzma.open(folder / f"{name}.csv.xz", "wt") as fh:
        df.to_csv(fh, index=False, lineterminator="\n")
