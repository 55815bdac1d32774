"""Every public class and function has a numpydoc docstring documenting its parameters."""

import importlib
import inspect
import pathlib
import re

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

import kernlearn  # noqa: E402
from package_modules import kernlearn_modules  # noqa: E402

# GL08: no docstring; PR01: a parameter is not documented; PR02: an unknown
# parameter is documented; SS01: no summary.
CHECKED = {"GL08", "PR01", "PR02", "SS01"}


def _public_objects():
    seen = set()
    for mod in kernlearn_modules():
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


def test_the_platt_attribute_is_documented_from_one_source():
    # the platt_ entry was written out in three class docstrings (FGM, SLKL,
    # OBSCURE) beside the composed one of the others: edits reached some only
    # (multitask MKL's said "and the loss is not logistic", a loss it lacks)
    import pathlib

    words = "Slope and offset of the Platt sigmoids"
    src = pathlib.Path(kernlearn.__file__).parent
    assert [p.name for p in sorted(src.rglob("*.py")) if words in p.read_text()] == [
        "_platt.py"]
    from kernlearn.estimators._platt import ProbabilityMixin, platt_attr_doc

    entries = 0
    for name in kernlearn._ESTIMATORS:
        cls = getattr(kernlearn, name)
        # (the *CV estimators refer to their base's entry by name)
        if issubclass(cls, ProbabilityMixin) and "\n    platt_ :" in cls.__doc__:
            entries += 1
            losses = {o for c in cls._parameter_constraints.get("loss", [])
                      for o in getattr(c, "options", ())}
            assert platt_attr_doc("logistic" in losses) in cls.__doc__, name
    assert entries == 5  # FGM, OBSCURE, GrFL, SLKL, multitask MKL


# -- the private code too: a Parameters section names what the code takes ----
#
# The check above reads the public names.  The algorithms live in private
# modules and functions (``kernlearn.methods._obscure_steps``, ``GrFL.price``,
# ...) whose docstrings outlived renamed and removed parameters.  Every
# function, class and method of the package, private ones included, that has
# a numpydoc ``Parameters`` section must document exactly its signature's
# parameters (numpydoc's PR01/PR02), with three conventions of the code base:
# keyword parameters named ``_x`` are internal (callers within the class), a
# dataclass documents the fields it adds (inherited ones are its base's), and
# the classes below document their parameters by reference.

_BY_REFERENCE = {
    # "*args, **kwargs: as GrFL": the inherited constructor's parameters
    "kernlearn.methods._grfl_dask.DaskGrFL",
}


def _with_parameters_section():
    seen = set()
    for mod in kernlearn_modules(public=False):
        for name, obj in vars(mod).items():
            # (a compiled function through its Python function: numba's dispatcher
            # is no function to inspect)
            obj = getattr(obj, "py_func", obj)
            if getattr(obj, "__module__", None) != mod.__name__:
                continue
            found = []
            if inspect.isfunction(obj):
                found.append((name, obj))
            elif inspect.isclass(obj):
                found.append((name, obj))
                # (static and class methods through their functions)
                found += [(f"{name}.{m}", getattr(f, "__func__", f))
                          for m, f in vars(obj).items()
                          if inspect.isfunction(getattr(f, "__func__", f))]
            for qual, o in found:
                qual = f"{mod.__name__}.{qual}"
                if qual not in seen and "\nParameters\n" in "\n" + inspect.cleandoc(
                        o.__doc__ or "") + "\n":
                    seen.add(qual)
                    yield qual, o


def _parameter_mismatches(obj):
    """``(undocumented, unknown)`` parameter names of ``obj``'s docstring."""
    import dataclasses

    doc = numpydoc_validate.Validator(numpydoc_validate.get_doc_object(obj))
    signature = set(doc.signature_parameters)
    documented = {p.replace("\\", "") for p in doc.doc_all_parameters}
    if inspect.isfunction(obj) and "." not in obj.__qualname__:
        # (numpydoc drops a first parameter named cls or self as a method's own;
        # a module-level function's is a parameter like any other)
        first = next(iter(inspect.signature(obj).parameters), None)
        signature |= {first} & {"cls", "self"}
    missing = {p for p in signature - documented if not p.startswith("_")}
    if inspect.isclass(obj) and dataclasses.is_dataclass(obj):
        inherited = {f.name for base in obj.__mro__[1:] if dataclasses.is_dataclass(base)
                     for f in dataclasses.fields(base)}
        missing -= inherited
    return missing, documented - signature


_PRIVATE_DOCS = sorted(_with_parameters_section())


@pytest.mark.parametrize("name,obj", _PRIVATE_DOCS, ids=[n for n, _ in _PRIVATE_DOCS])
def test_every_parameters_section_matches_its_signature(name, obj):
    if name in _BY_REFERENCE:
        pytest.skip("documents its parameters by reference")
    missing, unknown = _parameter_mismatches(obj)
    assert not missing and not unknown, (
        f"{name}: undocumented {sorted(missing)}, documented but not taken {sorted(unknown)}")


def test_the_private_check_reaches_the_methods_private_code():
    # the parametrisation above must see the private modules and names of
    # kernlearn.methods (a walk that skipped them would pass vacuously)
    names = {n for n, _ in _PRIVATE_DOCS}
    for want in ("kernlearn.methods.grfl.GrFL.start", "kernlearn.methods.fgm.FGMSettings",
                 "kernlearn.methods._obscure_steps._RowCache.dual_bound",
                 "kernlearn.methods.mtmkl.task_kernels.TaskKernels.cache_key",
                 # (compiled: numba's dispatcher, read through its py_func)
                 "kernlearn.solvers.prox_newton._support_newton"):
        assert want in names, want
    assert sum(n.startswith("kernlearn.methods.") for n in names) > 100


def test_the_private_check_fails_on_a_renamed_parameter():
    # a documented parameter renamed in the signature: both directions are named
    def solve(problem, warm_state=None):
        """Solve.

        Parameters
        ----------
        problem : Problem
        warm_start : State, optional
        """

    assert _parameter_mismatches(solve) == ({"warm_state"}, {"warm_start"})


# -- cross-references name what exists -------------------------------------
#
# ":func:`fit_grfl`" in a module that does not define it, or
# ":class:`~kernlearn.estimators.PNormMKLClassifier`" (that package exports
# nothing), points a reader at nothing.  Every :func:, :class:, :mod: and
# :data: target in the package must resolve: absolutely, from kernlearn, from
# the module's namespace, or from its package (a leading dot: relative to the
# package).  (:meth: and :attr: are left out: they name the documented class's
# own members.)

_ROLE = re.compile(r":(func|class|mod|data):`~?([^`<]+?)(?:\s*<([^>]+)>)?`")
_ELSEWHERE = ("numpy", "np.", "scipy", "sklearn", "dask", "distributed", "joblib", "numba",
              "threadpoolctl", "pandas", "matplotlib", "cvxpy")


def _resolves(dotted):
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _unresolved_references(modname, text):
    is_package = modname.endswith("__init__")
    modname = modname.removesuffix(".__init__")
    package = modname if is_package else modname.rpartition(".")[0]
    bad = []
    for m in _ROLE.finditer(text):
        # (a reference may break across lines)
        target = re.sub(r"\s+", "", m.group(3) or m.group(2)).removesuffix("()")
        if target.startswith(_ELSEWHERE):
            continue
        if target.startswith("."):
            up = len(target) - len(target.lstrip("."))
            base = package.split(".")[: len(package.split(".")) - (up - 1)]
            candidates = [".".join(base) + "." + target.lstrip(".")]
        else:
            candidates = [target, f"kernlearn.{target}", f"{modname}.{target}",
                          f"{package}.{target}"]
        if not any(_resolves(c) for c in candidates):
            bad.append(m.group(0))
    return bad


def _source_modules():
    src = pathlib.Path(kernlearn.__file__).parent
    for path in sorted(src.rglob("*.py")):
        if path.name == "__main__.py":
            continue
        rel = path.relative_to(src.parent).with_suffix("")
        yield ".".join(rel.parts), path


def test_every_cross_reference_names_something_that_exists():
    bad = {}
    for modname, path in _source_modules():
        found = _unresolved_references(modname, path.read_text())
        if found:
            bad[modname] = found
    assert not bad, bad


def test_the_reference_check_fails_on_a_missing_target():
    # a renamed function, a class named through a package that does not export it,
    # a relative module that does not exist; the existing ones pass
    text = (":func:`fit_grfl` :func:`~kernlearn.methods.grfl.fit_grfl_old` "
            ":class:`~kernlearn.estimators.PNormMKLClassifier` :mod:`.no_such_module` "
            ":class:`~kernlearn.PNormMKLClassifier` :mod:`.inner`")
    assert _unresolved_references("kernlearn.methods.mtmkl.__init__", text) == [
        ":func:`fit_grfl`", ":func:`~kernlearn.methods.grfl.fit_grfl_old`",
        ":class:`~kernlearn.estimators.PNormMKLClassifier`", ":mod:`.no_such_module`"]
    assert _unresolved_references("kernlearn.methods.grfl", ":func:`fit_grfl`") == []
