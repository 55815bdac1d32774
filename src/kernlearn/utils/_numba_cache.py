"""``numba.njit(cache=True)`` whose cached code loads without parsing its bitcode.

numba's on-disk cache keeps two forms of each compiled signature: the machine
code, which a call runs, and the LLVM bitcode of the whole call tree (every
callee, every error message).  numba needs the bitcode only to compile *another*
function that calls this one: the bitcode is linked into the caller.  Yet
loading an entry parses the bitcode and then walks every symbol it defines, to
record their names.  In a new process, GrFL's first fit loaded 1.6 MB of bitcode
this way: 0.06 s to parse it and 0.025 s to walk it (the Newton step alone is
0.64 MB).  At fit time none of that bitcode is linked into anything.

numba's loader also runs the compiler's whole set-up before it reads an entry
(``target_context.refresh()``: it imports about 80 modules of numba's
implementations and fills the typing and lowering registries), although code
loaded from the cache is neither typed nor lowered: it needs numba's runtime and
the external symbols it calls.  In a new process that set-up cost the first
GrFL fit about 0.06 s and left ~27,000 more objects for Python's cyclic garbage
collector to walk.

:func:`njit_cached` compiles and caches as ``numba.njit(cache=True)`` does.
Each cache entry also stores the names of the symbols the bitcode defines: the
names numba's loader would have read from it.  Loading an entry then maps the
same machine code, records those names and keeps the bitcode as bytes, parsed
only when a compilation links it.  Before an entry is loaded, numba's runtime
is initialised (what the set-up does for loaded code); the set-up itself runs
only if a symbol the code calls is not yet known to LLVM (the entry stores
their names too), and any compilation still runs it first, as numba's compiler
always does.  The code that runs is unchanged, so the results are too.  The
entries are stored under their own file names (prefix ``lazylink-``), so an
entry written by ``numba.njit(cache=True)`` is never read as one of these.
Entries are unpickled by :func:`._numba_envs.load_entry`, which leaves the
modules of numba's implementations that the code's environments name to be
imported when something needs them (see that module).
With a numba whose internals differ from the ones this relies on (checked at
import), :func:`njit_cached` is ``numba.njit(cache=True)`` (and if only
numba's ``Cache.load_overload`` differs, loading runs numba's set-up as before).
"""

import ast
import functools
import inspect
import os
import textwrap
import warnings

import numba
from numba.core import caching, codegen, compiler
from numba.core.runtime import nrt

from . import _numba_envs

__all__ = ["njit_cached"]

# What ``CompileResult._rebuild`` takes after the target context (the fields of
# ``CompileResult._reduce``), and the fields of a ``CompileResult``: the
# loader below rebuilds one as numba's does, from the same pieces.
_PAYLOAD = ("libdata", "fndesc", "env", "signature", "objectmode", "lifted", "typeann",
            "reload_init", "referenced_envs")
_FIELDS = ("typing_context", "target_context", "entry_point", "typing_error",
           "type_annotation", "signature", "objectmode", "lifted", "fndesc", "library",
           "call_helper", "environment", "metadata", "reload_init", "referenced_envs")
# File names of the entries (see the module docstring).
_PREFIX = "lazylink"


def _numba_matches():
    """Whether numba's loader is the one :func:`_rebuild` reproduces."""
    try:
        params = tuple(inspect.signature(compiler.CompileResult._rebuild).parameters)
        return (params == ("target_context",) + _PAYLOAD
                and tuple(compiler.CR_FIELDS) == _FIELDS
                and codegen.JITCPUCodegen._library_class is codegen.JITCodeLibrary
                and all(hasattr(codegen.JITCodeLibrary, name) for name in (
                    "_get_module_for_linking", "enable_object_caching",
                    "_set_compiled_object", "_finalize_final_module"))
                and hasattr(caching.FunctionCache, "_impl_class"))
    except (AttributeError, TypeError, ValueError):
        return False


def _numba_load_overload_is_known():
    """Whether numba's ``Cache.load_overload`` is the compiler's set-up, then the
    load: what :meth:`_LazyLinkingCache.load_overload` replaces."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(caching.Cache.load_overload)))
    except (OSError, TypeError, SyntaxError):
        return False
    body = tree.body[0].body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # (the docstring)
    return [ast.unparse(node) for node in body] == [
        "target_context.refresh()",
        ("with self._guard_against_spurious_io_errors():\n"
         "    return self._load_overload(sig, target_context)")]


def _numba_load_data_is_known():
    """Whether numba's ``IndexDataCacheFile._load_data`` is the plain read and
    unpickle that :class:`_EnvDeferringCacheFile` replaces."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(
            caching.IndexDataCacheFile._load_data)))
    except (OSError, TypeError, SyntaxError):
        return False
    return [ast.unparse(node) for node in tree.body[0].body] == [
        "path = self._data_path(name)",
        "with open(path, 'rb') as f:\n    data = f.read()",
        "tup = pickle.loads(data)",
        "_cache_log('[cache] data loaded from %r', path)",
        "return tup"]


_SUPPORTED = _numba_matches()
# Whether entries may be unpickled by ``_numba_envs`` (see ``_EnvDeferringCacheFile``).
_DEFER_ENVS = _numba_envs.SUPPORTED and _numba_load_data_is_known()
# Whether loading may skip the compiler's set-up (otherwise numba's loader runs).
_SKIP_SETUP = (_numba_load_overload_is_known()
               and callable(getattr(nrt.rtsys, "initialize", None)))


class _LazyLinkingLibrary(codegen.JITCodeLibrary):
    """A library loaded from the cache whose linking bitcode is parsed on demand."""

    _linking_bitcode = None

    def _get_module_for_linking(self):
        # (numba's loader sets ``_shared_module`` from the bitcode up front)
        if self._shared_module is None and self._linking_bitcode is not None:
            self._shared_module = codegen.ll.parse_bitcode(self._linking_bitcode)
            self._linking_bitcode = None
        return super()._get_module_for_linking()


def _defined_names(library):
    """Names of the functions and globals the library's linking module defines."""
    module = library._get_module_for_linking()
    return tuple(v.name for values in (module.functions, module.global_variables)
                 for v in values if not v.is_declaration)


def _external_names(library):
    """Names of the functions and globals the library's linking module calls or
    reads but does not define (LLVM's intrinsics, which no linker resolves, left out)."""
    module = library._get_module_for_linking()
    return tuple(v.name for values in (module.functions, module.global_variables)
                 for v in values if v.is_declaration and not v.name.startswith("llvm."))


def _unknown_symbols(names):
    """Those of ``names`` that no library or registration has made known to LLVM."""
    return [name for name in names if not codegen.ll.address_of_symbol(name)]


def _load_library(target_context, libdata, names):
    """numba's ``CPUCodeLibrary._unserialize`` of object code, but the bitcode
    kept unparsed and the symbol names taken from ``names``."""
    cg = target_context.codegen()
    defined = getattr(getattr(cg, "_engine", None), "_defined_symbols", None)
    name, kind, data = libdata
    if (kind != "object" or type(cg)._library_class is not codegen.JITCodeLibrary
            or not isinstance(defined, set)):
        return cg.unserialize_library(libdata)
    library = _LazyLinkingLibrary(cg, name)
    object_code, library._linking_bitcode = data
    library.enable_object_caching()
    library._set_compiled_object(object_code)
    library._finalize_final_module()
    # what numba's loader records from the parsed bitcode (the engine needs
    # them to find the entry point)
    defined.update(names)
    return library


def _rebuild(target_context, names, libdata, fndesc, env, signature, objectmode, lifted,
             typeann, reload_init, referenced_envs):
    """``CompileResult._rebuild`` with the library from :func:`_load_library`."""
    for init in reload_init or ():
        init()
    library = _load_library(target_context, libdata, names)
    cres = compiler.CompileResult(
        target_context=target_context, typing_context=target_context.typing_context,
        library=library, environment=env,
        entry_point=target_context.get_executable(library, fndesc, env),
        fndesc=fndesc, type_annotation=typeann, signature=signature, objectmode=objectmode,
        lifted=lifted, typing_error=None, call_helper=None, metadata=None,
        reload_init=reload_init, referenced_envs=referenced_envs)
    for ref in referenced_envs:
        library.codegen.set_env(ref.env_name, ref)
    return cres


class _LazyLinkingImpl(caching.CompileResultCacheImpl):
    """numba's cache of compile results, the defined symbol names stored too."""

    def reduce(self, cres):
        # (``_reduce`` serialises the linking module; its names are read after)
        payload = cres._reduce()
        return payload, _defined_names(cres.library), _external_names(cres.library)

    def rebuild(self, target_context, reduced):
        payload, names, *external = reduced
        # An entry written before the external names were stored (no third
        # item), or code calling a symbol nothing has registered yet (the
        # set-up imports numba's implementations and extensions, which may):
        # run the set-up first.  (Symbols of numba's implementation modules are
        # usually known by now: unpickling the entry's environments imports them.)
        if not external or _unknown_symbols(external[0]):
            target_context.refresh()
        return _rebuild(target_context, names, *payload)

    def get_filename_base(self, fullname, abiflags):
        return f"{_PREFIX}-{super().get_filename_base(fullname, abiflags)}"


class _EnvDeferringCacheFile(caching.IndexDataCacheFile):
    """numba's cache files, entries unpickled by :func:`_numba_envs.load_entry`."""

    def _load_data(self, name):
        with open(self._data_path(name), "rb") as f:
            return _numba_envs.load_entry(f.read())


class _ShippedCacheFile(caching.IndexDataCacheFile):
    """The package's precompiled entries, read only: a file that cannot be read (not
    readable by this user, as when installed by root with umask 077; truncated) is a
    miss, compiled and saved where numba chose, as numba did before this fallback
    existed.  (Its error stopped every first call; the user cannot repair the
    package's folder as they could their own cache.)"""

    def _load_index(self):
        try:
            return super()._load_index()
        except Exception:  # (any failure to read it: a miss)
            return {}

    def load(self, key):
        try:
            return super().load(key)
        except Exception:  # (the data file, as the index above)
            return None


class _EnvDeferringShippedCacheFile(_ShippedCacheFile, _EnvDeferringCacheFile):
    """:class:`_ShippedCacheFile` whose entries unpickle as :class:`_EnvDeferringCacheFile`'s."""


def _shipped_cache_file(py_func, impl):
    """The entries precompiled into the package's own ``__pycache__`` when numba chose
    the user's cache folder instead, to be read (never written) after a miss there;
    else ``None`` (also with ``NUMBA_CACHE_DIR`` set: the cache the user chose).

    numba uses a cache folder only if it can write to it: on a read-only install
    (a system ``site-packages``, a container image) it chose the user's cache
    folder, and the first process of each user compiled for tens of seconds what
    ``python -m kernlearn._precompile`` had compiled (48 s for a first FGM and GrFL
    fit).  Signatures missing from both are compiled and saved where numba chose.
    """
    try:
        if isinstance(impl.locator, (caching.InTreeCacheLocator,
                                     caching.UserProvidedCacheLocator)):
            return None
        tree = caching.InTreeCacheLocator(py_func, inspect.getfile(py_func))
        if not os.path.isdir(tree.get_cache_path()):
            return None
        return (_EnvDeferringShippedCacheFile if _DEFER_ENVS else _ShippedCacheFile)(
            cache_path=tree.get_cache_path(), filename_base=impl.filename_base,
            source_stamp=tree.get_source_stamp())
    except (AttributeError, OSError, TypeError):  # (a numba that differs, a zipped file)
        return None


class _LazyLinkingCache(caching.FunctionCache):
    """A dispatcher's cache whose entries load without parsing their bitcode
    (nor importing numba's implementation modules, see :mod:`._numba_envs`)."""

    _impl_class = _LazyLinkingImpl

    def __init__(self, py_func):
        super().__init__(py_func)
        if _DEFER_ENVS:
            self._cache_file.__class__ = _EnvDeferringCacheFile
        self._shipped = _shipped_cache_file(py_func, self._impl)

    def _load_overload(self, sig, target_context):
        data = super()._load_overload(sig, target_context)
        if data is None and self._shipped is not None and self._enabled:
            # (what the install precompiled, where numba would not look)
            data = self._shipped.load(self._index_key(sig, target_context.codegen()))
            if data is not None:
                data = self._impl.rebuild(target_context, data)
        return data

    def load_overload(self, sig, target_context):
        """numba's ``Cache.load_overload`` without the compiler's set-up: the
        runtime the loaded code calls is initialised; :meth:`_LazyLinkingImpl.rebuild`
        runs the set-up when the entry needs more (see the module docstring)."""
        if not _SKIP_SETUP:
            return super().load_overload(sig, target_context)
        nrt.rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)


def njit_cached(func=None, **options):
    """``numba.njit(cache=True, **options)`` whose cache entries load faster.

    Compiles, caches and runs exactly as ``numba.njit(cache=True)``; a cache
    entry loaded in a new process keeps the LLVM bitcode of its call tree
    unparsed until a compilation links it into a caller (see the module
    docstring).  Use it as ``@njit_cached`` or ``@njit_cached(fastmath=...)``.

    Parameters
    ----------
    func : function, optional
        The function to compile (omitted when options are given).
    **options
        Options of ``numba.njit`` (``cache`` is implied).

    Returns
    -------
    dispatcher : numba dispatcher, or a decorator when ``func`` is omitted
    """
    if func is None:
        return functools.partial(njit_cached, **options)
    try:
        if not _SUPPORTED:
            return numba.njit(cache=True, **options)(func)
        dispatcher = numba.njit(**options)(func)
        if hasattr(dispatcher, "enable_caching"):  # (not with NUMBA_DISABLE_JIT)
            # what ``enable_caching`` does, with this cache class
            dispatcher._cache = _LazyLinkingCache(dispatcher.py_func)
        return dispatcher
    except RuntimeError as exc:
        # numba found no folder it can write its cache to (the package's
        # folder read-only, NUMBA_CACHE_DIR and the user's cache folder read-only
        # or missing): its error stopped ``import kernlearn``, and so the loading
        # of a pickled model, in a read-only container.  Compiled without a cache.
        if "no locator available" not in str(exc):
            raise
        _warn_uncached(exc)
        return numba.njit(**options)(func)


_UNCACHED_SAID = []


def _warn_uncached(exc):
    """Say once per process that compiled code is not cached, and why."""
    if _UNCACHED_SAID:
        return
    _UNCACHED_SAID.append(True)
    warnings.warn(
        f"kernlearn's compiled code cannot be cached ({exc}): numba needs a writable "
        "folder, and the package's folder, NUMBA_CACHE_DIR "
        f"({os.environ.get('NUMBA_CACHE_DIR', 'not set')}) and the user's cache "
        "folder are read-only or missing. Each process compiles it again, so its "
        "first fits take seconds longer; set NUMBA_CACHE_DIR to a writable folder.",
        RuntimeWarning, stacklevel=3)
