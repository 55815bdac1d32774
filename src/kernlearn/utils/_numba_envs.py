"""numba's implementation modules, imported only when something uses them.

A compiled function's cache entry holds the *environments* of every function
in its call tree (``referenced_envs``): for each, the name of the module whose
globals it carries.  Most are numba's own implementations (``numba.np.arrayobj``
for ``np.zeros``, ``numba.np.linalg``, ``numba.cpython.unicode`` ...), and
numba's loader rebuilds each one by importing its module.  Code loaded from the
cache does not run those modules (their functions are compiled into it), yet in
a new process the imports cost each estimator's first fit 0.04-0.07 s CPU
(``numba.np.arrayobj`` alone 0.04 s) and leave their objects to Python's cyclic
garbage collector.

:func:`load_entry` unpickles an entry as numba's loader does, except that the
environment of a function of a ``numba.`` module not imported yet is built on
the globals of that module *as a module object not yet run*
(``importlib.util.module_from_spec``).  A finder first on ``sys.meta_path``
hands that very object to the import system when the module is imported later
(numba's compiler set-up imports them before any compilation), so the module
runs into the dictionary the environment already holds, as if it had been
imported first.  Until then, the environment's globals hold only the module's
name, file and spec: compiled code never reads them (it reads an environment
only to box values for an exception or a ``print``, from the constants).  A
module already imported is used as numba's loader would use it.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import io
import inspect
import pickle
import sys

from numba.core import environment

__all__ = ["load_entry"]

# Modules whose environments may be rebuilt before they run (numba's own
# implementations: loaded code never reads their globals).
_DEFERRABLE = "numba."

# name -> module object created from its spec, not run yet
_PENDING = {}


def _matches():
    """Whether numba's environments are rebuilt as :func:`_rebuild_env` expects."""
    try:
        params = tuple(inspect.signature(environment._rebuild_env).parameters)
    except (TypeError, ValueError):
        return False
    return (params == ("modname", "consts", "env_name")
            and hasattr(environment.Environment, "_memo")
            and callable(getattr(environment, "lookup_environment", None)))


SUPPORTED = _matches()


class _Loader(importlib.abc.Loader):
    """Runs a pending module into the object its environments already hold."""

    def __init__(self, module, loader):
        self._module = module
        self._loader = loader

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        self._loader.exec_module(module)


class _Finder(importlib.abc.MetaPathFinder):
    """Hands a pending module's object to the import system (see the module docstring)."""

    def find_spec(self, fullname, path, target=None):
        module = _PENDING.pop(fullname, None)
        if module is None:
            return None
        spec = module.__spec__
        out = importlib.machinery.ModuleSpec(fullname, _Loader(module, spec.loader),
                                             origin=spec.origin)
        out.submodule_search_locations = spec.submodule_search_locations
        out.has_location = spec.has_location
        return out


_FINDER = _Finder()


def _pending_module(modname):
    """The module object (not run) that environments of ``modname`` share, or
    None when it cannot be made without running code."""
    module = _PENDING.get(modname)
    if module is not None:
        return module
    try:
        # (imports the parent packages, as an import of ``modname`` would)
        spec = importlib.util.find_spec(modname)
    except (ImportError, ValueError):
        return None
    # (a module of Python source only: an extension module runs code when created)
    if (modname in sys.modules or spec is None
            or not isinstance(spec.loader, importlib.machinery.SourceFileLoader)):
        return None
    module = importlib.util.module_from_spec(spec)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    _PENDING[modname] = module
    return module


def _rebuild_env(modname, consts, env_name):
    """numba's ``environment._rebuild_env``, a numba module not imported yet
    left to run when something imports it."""
    env = environment.lookup_environment(env_name)
    if env is not None:
        return env
    module = None
    if (isinstance(modname, str) and modname.startswith(_DEFERRABLE)
            and modname not in sys.modules):
        module = _pending_module(modname)
    if module is None:
        return environment._rebuild_env(modname, consts, env_name)
    env = environment.Environment(module.__dict__)
    env.consts[:] = consts
    env.env_name = env_name
    environment.Environment._memo[env_name] = env
    return env


class _Unpickler(pickle.Unpickler):
    """numba's entries, environments rebuilt by :func:`_rebuild_env`."""

    def find_class(self, module, name):
        if module == "numba.core.environment" and name == "_rebuild_env":
            return _rebuild_env
        return super().find_class(module, name)


def load_entry(data):
    """``pickle.loads`` of a cache entry, environments rebuilt by :func:`_rebuild_env`.

    Parameters
    ----------
    data : bytes
        The pickled entry (what numba's ``IndexDataCacheFile`` reads).

    Returns
    -------
    object
        The unpickled entry.
    """
    if not SUPPORTED:
        return pickle.loads(data)
    return _Unpickler(io.BytesIO(data)).load()
