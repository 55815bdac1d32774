"""``njit_cached``: numba's on-disk cache, entries loaded without parsing their bitcode.

Each scenario runs in fresh processes against an empty cache directory
(``NUMBA_CACHE_DIR``): one process compiles and writes the cache, the next
loads it, as a new process after ``python -m kernlearn._precompile`` does.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import pytest
from numba.core.caching import FunctionCache

import kernlearn
from kernlearn.utils import _numba_cache
from kernlearn.utils._numba_cache import njit_cached

PACKAGE = Path(kernlearn.__file__).parent

# A callee with an allocation and a division (their error paths put globals in
# the bitcode) and a caller that links it.
MODULE = '''
import numpy as np
from kernlearn.utils._numba_cache import njit_cached

@njit_cached
def inner(x, k):
    out = np.empty(x.size)
    for i in range(x.size):
        out[i] = x[i] ** k + 1.0 / (1.0 + x[i] * x[i])
    return out

@njit_cached
def outer(x):
    return inner(x, 3).sum() + np.dot(x, x)
'''

# Calls ``outer``, then reports how it was obtained, what its library holds and
# how often numba's compiler set-up ran; with "link", compiles a new (uncached)
# function that calls it; with "old entries", writes entries as kernlearn did
# before they stored the external symbol names; with "unknown symbol", writes
# entries that name an external symbol nothing registers.
PROBE = r'''
import json, sys
import numpy as np
import llvmlite.binding as ll
from numba.core.base import BaseContext
from kernlearn.utils import _numba_cache
set_ups = []
_refresh = BaseContext.refresh
def refresh(self):
    set_ups.append(1)
    return _refresh(self)
BaseContext.refresh = refresh
if "old entries" in sys.argv:
    _reduce = _numba_cache._LazyLinkingImpl.reduce
    _numba_cache._LazyLinkingImpl.reduce = lambda self, cres: _reduce(self, cres)[:2]
if "unknown symbol" in sys.argv:
    _external = _numba_cache._external_names
    _numba_cache._external_names = lambda lib: _external(lib) + ("kernlearn_not_a_symbol",)
import kern
x = np.linspace(-2.0, 3.0, 37)
set_ups.clear()
value = kern.outer(x)
lib = kern.outer.overloads[kern.outer.signatures[0]].library
out = {"value": value.hex(), "hits": sum(kern.outer.stats.cache_hits.values()),
       "library": type(lib).__name__, "parsed": lib._shared_module is not None,
       "set-ups": len(set_ups)}
if lib._shared_module is None:
    module = ll.parse_bitcode(lib._linking_bitcode)
    names = {v.name for vs in (module.functions, module.global_variables) for v in vs
             if not v.is_declaration}
    out["names"] = len(names)
    out["names recorded"] = names <= lib.codegen._engine._defined_symbols
# numba's implementation modules the loaded code's environments name (np.empty's is
# numba.np.arrayobj): imported only by a later import (here, or a compilation's set-up)
out["arrayobj imported"] = "numba.np.arrayobj" in sys.modules
if "import later" in sys.argv:
    import numba.np.arrayobj as arrayobj
    from numba.core.environment import Environment
    envs = [e for e in Environment._memo.values()
            if e.env_name.startswith("_ZN08NumbaEnv5numba2np8arrayobj")]
    out["arrayobj envs"] = len(envs)
    out["envs hold the module"] = all(e.globals is vars(arrayobj) for e in envs)
    out["module ran"] = callable(vars(arrayobj).get("make_array"))
    out["again"] = kern.outer(x).hex()
if "link" in sys.argv:
    import numba
    @numba.njit
    def caller(x):
        return 2.0 * kern.outer(x)
    out["caller"] = caller(x).hex()
    out["parsed after linking"] = lib._shared_module is not None
print(json.dumps(out))
'''


def _run(tmp_path, *args):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), OMP_NUM_THREADS="1",
               PYTHONHASHSEED="0")  # (the string hash of HASHING, equal across processes)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(PACKAGE.parent),
                                         env.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, "-c", PROBE, *args], check=False,
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


# On a numba whose loader differs, njit_cached is numba.njit(cache=True) (the
# fallback is tested below); the tests of the fast path then do not apply.
fast_path = pytest.mark.skipif(
    not _numba_cache._SUPPORTED,
    reason=f"numba {numba.__version__}'s cache loader is not the one njit_cached "
    "reproduces (it falls back to numba.njit(cache=True))",
)


@fast_path
def test_the_installed_numba_takes_the_fast_path():
    # (if numba's loader changes, njit_cached silently becomes numba.njit(cache=True))
    assert _numba_cache._numba_matches()
    assert type(njit_cached(lambda x: x)._cache) is _numba_cache._LazyLinkingCache
    # (and loading skips numba's compiler set-up only while its loader is the known one)
    assert _numba_cache._SKIP_SETUP
    # (and defers numba's implementation modules only while its entry reader is)
    assert _numba_cache._DEFER_ENVS


@fast_path
def test_a_new_process_loads_the_machine_code_and_defers_the_bitcode(tmp_path):
    (tmp_path / "kern.py").write_text(MODULE)
    first = _run(tmp_path)
    assert first["hits"] == 0 and first["library"] != "_LazyLinkingLibrary"
    files = sorted(p.name for p in (tmp_path / "cache").rglob("*.nbi"))
    assert len(files) == 2 and all(f.startswith("lazylink-kern.") for f in files), files

    later = _run(tmp_path)
    assert later["hits"] == 1
    assert later["library"] == "_LazyLinkingLibrary" and not later["parsed"]
    # the same machine code: the same value to the last bit
    assert later["value"] == first["value"]
    # every symbol the bitcode defines is known to the engine, as numba's loader does
    assert later["names"] > 2 and later["names recorded"]


@fast_path
def test_a_new_process_loads_without_the_compiler_set_up(tmp_path):
    # numba's loader runs target_context.refresh() (its ~80 implementation
    # modules and registries) before reading an entry; loaded code needs none
    (tmp_path / "kern.py").write_text(MODULE)
    first = _run(tmp_path)
    assert first["hits"] == 0 and first["set-ups"] > 0  # compiling runs it
    later = _run(tmp_path)
    assert later["hits"] == 1 and later["set-ups"] == 0
    assert later["value"] == first["value"]


# A cached function hashing a string: its code reads numba's hash secret, a
# symbol registered by a module of numba's implementations (imported while the
# entry's environments are rebuilt), not by numba's core.
HASHING = '''
from kernlearn.utils._numba_cache import njit_cached

@njit_cached
def inner(x, k):
    return x

@njit_cached
def outer(x):
    return float(hash("kernlearn" + str(x.size)) % 1000) + x.sum()
'''


@fast_path
def test_an_entry_calling_a_symbol_of_numba_s_implementations_loads(tmp_path):
    (tmp_path / "kern.py").write_text(HASHING)
    first = _run(tmp_path)
    # (an unresolved symbol would abort the process in LLVM's linker)
    later = _run(tmp_path)
    assert later["hits"] == 1 and later["value"] == first["value"]


@fast_path
def test_an_entry_calling_an_unknown_symbol_runs_the_set_up_first(tmp_path):
    # (the set-up may register it: numba's extensions, its implementations)
    (tmp_path / "kern.py").write_text(MODULE)
    first = _run(tmp_path, "unknown symbol")
    later = _run(tmp_path)
    assert later["hits"] == 1 and later["set-ups"] > 0
    assert later["value"] == first["value"]


@fast_path
def test_entries_without_the_external_names_load_after_the_set_up(tmp_path):
    # entries written by an earlier kernlearn (defined names only) still load
    (tmp_path / "kern.py").write_text(MODULE)
    first = _run(tmp_path, "old entries")
    later = _run(tmp_path)
    assert later["hits"] == 1 and later["set-ups"] > 0
    assert later["library"] == "_LazyLinkingLibrary" and not later["parsed"]
    assert later["value"] == first["value"]


@fast_path
def test_a_new_process_loads_without_importing_numba_s_implementations(tmp_path):
    # rebuilding the entry's environments imported numba.np.arrayobj and the
    # like (0.04-0.07 s of each estimator's first fit); loaded code never runs them
    (tmp_path / "kern.py").write_text(MODULE)
    first = _run(tmp_path)
    assert first["arrayobj imported"]  # (compiling imports it)
    later = _run(tmp_path)
    assert later["hits"] == 1 and not later["arrayobj imported"]
    assert later["value"] == first["value"]


@fast_path
def test_a_deferred_module_runs_into_the_globals_its_environments_hold(tmp_path):
    # imported later, the module is the object whose dictionary the
    # environments were given, and it has run
    (tmp_path / "kern.py").write_text(MODULE)
    first = _run(tmp_path)
    later = _run(tmp_path, "import later")
    assert later["arrayobj envs"] > 0 and later["envs hold the module"]
    assert later["module ran"] and later["again"] == first["value"]
    # and a compilation after loading (the set-up imports every deferred module)
    linked = _run(tmp_path, "link")
    assert float.fromhex(linked["caller"]) == 2.0 * float.fromhex(first["value"])


@fast_path
def test_a_loaded_function_links_into_a_new_caller(tmp_path):
    (tmp_path / "kern.py").write_text(MODULE)
    first = _run(tmp_path)
    later = _run(tmp_path, "link")
    assert later["hits"] == 1 and not later["parsed"]
    # compiling the caller parsed the bitcode it links, and the caller is right
    assert later["parsed after linking"]
    assert float.fromhex(later["caller"]) == 2.0 * float.fromhex(first["value"])


def test_options_pass_through_and_an_unknown_numba_gets_numba_s_cache(monkeypatch):
    def f(x):
        return x + 1.0

    fast = njit_cached(fastmath=True)(f)
    assert fast.targetoptions["fastmath"]
    assert isinstance(fast._cache, FunctionCache)
    monkeypatch.setattr(_numba_cache, "_SUPPORTED", False)
    plain = njit_cached(f)
    assert type(plain._cache) is FunctionCache
    assert isinstance(plain, numba.core.registry.CPUDispatcher)


@fast_path
@pytest.mark.parametrize("module", ["kernlearn.solvers._grfl_newton_kernels",
                                    "kernlearn.solvers._dirty_kernels",
                                    "kernlearn.solvers.prox_newton",
                                    "kernlearn.methods._obscure_steps",
                                    "kernlearn.methods._obscure_dual",
                                    "kernlearn.methods._slkl_compiled",
                                    "kernlearn.families.polynomial"])
def test_compiled_kernels_use_it(module):
    import importlib

    mod = importlib.import_module(module)
    dispatchers = [v for v in vars(mod).values()
                   if isinstance(v, numba.core.registry.CPUDispatcher)]
    assert dispatchers
    assert all(type(d._cache) is _numba_cache._LazyLinkingCache for d in dispatchers)
