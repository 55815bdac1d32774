"""Every public class and function has a numpydoc docstring documenting its parameters."""

import importlib
import inspect
import pkgutil

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

import kernlearn  # noqa: E402

# GL08: no docstring; PR01: a parameter is not documented; PR02: an unknown
# parameter is documented; SS01: no summary.
CHECKED = {"GL08", "PR01", "PR02", "SS01"}


def _public_objects():
    seen = set()
    for info in pkgutil.walk_packages(kernlearn.__path__, "kernlearn."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        try:
            mod = importlib.import_module(info.name)
        except ImportError:
            continue
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if inspect.isclass(obj) or inspect.isfunction(obj):
                qual = f"{mod.__name__}.{name}"
                if qual not in seen:
                    seen.add(qual)
                    yield qual


def _is_dataclass(name):
    import dataclasses

    mod, _, attr = name.rpartition(".")
    return dataclasses.is_dataclass(getattr(importlib.import_module(mod), attr))


@pytest.mark.parametrize("name", sorted(_public_objects()))
def test_numpydoc(name):
    result = numpydoc_validate.validate(name)
    checked = CHECKED - {"PR01"} if _is_dataclass(name) else CHECKED  # fields = Attributes
    errors = [f"{code}: {msg}" for code, msg in result["errors"] if code in checked]
    # Dataclass / estimator constructors document their parameters on the class.
    errors = [e for e in errors if not (e.startswith("PR01") and "**" in e)]
    assert not errors, f"{name}: {errors}"
