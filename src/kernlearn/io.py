"""Safe model files: JSON metadata + NumPy arrays, versioned, never pickled.

Unpickling a file from an untrusted source runs arbitrary code, so a
kernlearn model file is a ``.npz`` archive read with ``allow_pickle=False``.
Its ``__meta__`` entry is JSON holding

* ``format`` / ``version``: the file format and its version;
* ``class``: the estimator's class name, checked on load against the
  allow-list ``kernlearn._ESTIMATORS``;
* ``params``: the constructor parameters;
* ``state``: the fitted state (every instance attribute that is not a
  constructor parameter, e.g. ``coef_`` or ``_y_ndim``);
* ``metadata``: free information from the caller (the command line stores the
  feature count and the index base of the training file there).

Values are encoded by a small declared schema.  JSON numbers, strings,
booleans and ``None`` are stored as they are; anything else is a tagged JSON
object:

``{"$array": key, "dtype", "shape", "finite", "sha256"}``
    a NumPy array stored in the archive under ``key`` (booleans, integers,
    floats, unicode strings only); on load its dtype, shape, finiteness and
    SHA-256 digest must match;
``{"$sparse": "csr"|"csc", "shape", "data", "indices", "indptr"}``
    a SciPy sparse matrix (its parts are arrays), checked with
    ``check_format(full_check=True)``;
``{"$dict": {...}}``, ``{"$list": [...]}``, ``{"$tuple": [...]}``
    containers;
``{"$float": "nan"|"inf"|"-inf"}``, ``{"$np": dtype, "value"}``
    non-finite floats and NumPy scalars;
``{"$slice": [start, stop, step]}``
    a slice (kernel views);
``{"$object": tag, "state": {...}}``
    a component (feature family, kernel list, loss, penalty, solver) whose
    class is in the allow-list below; it is rebuilt without calling any
    code but ``object.__new__`` and attribute assignment;
``{"$function": tag}``
    an allow-listed kernel function.

Anything outside this schema (open files, random generators, user
callables, object arrays) makes :func:`save_model` raise a ``TypeError``
naming the attribute; anything unexpected in a file makes :func:`load_model`
raise a ``ValueError`` naming the problem.
"""

import hashlib
import importlib
import inspect
import json
import math
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import kernlearn

__all__ = [
    "FORMAT_VERSION",
    "load_model",
    "read_metadata",
    "register_safe_class",
    "save_model",
]

FORMAT_NAME = "kernlearn-model"
FORMAT_VERSION = 2

# Attributes that are caches, not fitted state: never written, never read.
# GrFL's warm-start path holds the training columns and a random generator.
_TRANSIENT = frozenset({"_path"})
# Float arrays under these attributes may hold NaN (missing history entries);
# every other float array of a model must be finite.
_MAY_BE_NONFINITE = ("state.history_",)
_ARRAY_KINDS = "biufU"  # bool, int, uint, float, unicode: never object arrays
_MAX_META_BYTES = 64 * 2**20

_EXTRA_CLASSES = {}


def register_safe_class(tag, cls):
    """Allow instances of ``cls`` inside model files under the name ``tag``.

    Components living in the registries (families, losses, penalties,
    solvers) and the kernel lists are allowed already; a new kind of fitted
    component registers itself here.

    Parameters
    ----------
    tag : str
        Stable name written in model files (e.g. ``"mtmkl/State"``).
    cls : type
        A class whose instances hold only data this module can encode.
    """
    _EXTRA_CLASSES[tag] = cls


def _safe_classes():
    """Allow-list of component classes: tag -> class."""
    from .families import FAMILIES
    from .kernels import KernelList, PrecomputedKernelList
    from .losses import LOSSES
    from .penalties import PENALTIES
    from .solvers import SOLVERS

    out = {}
    for prefix, reg in (
        ("family", FAMILIES),
        ("loss", LOSSES),
        ("penalty", PENALTIES),
        ("solver", SOLVERS),
    ):
        for name in reg.names():
            out[f"{prefix}/{name}"] = reg._classes[name]
    from .methods.mtmkl import MultitaskModel, TaskBuckets, TaskKernels

    out["kernels/KernelList"] = KernelList
    out["kernels/PrecomputedKernelList"] = PrecomputedKernelList
    out["mtmkl/TaskKernels"] = TaskKernels
    out["mtmkl/TaskBuckets"] = TaskBuckets
    out["mtmkl/MultitaskModel"] = MultitaskModel
    out.update(_EXTRA_CLASSES)
    return out


def _safe_functions():
    """Allow-list of functions: tag -> function (the named kernels)."""
    from .kernels import KERNELS

    return {f"kernel/{name}": fn for name, fn in KERNELS.items()}


# --------------------------------------------------------------------- encode
class _Encoder:
    def __init__(self):
        self.arrays = {}
        self.classes = {cls: tag for tag, cls in _safe_classes().items()}
        self.functions = {id(fn): tag for tag, fn in _safe_functions().items()}

    def array(self, value, where):
        value = np.ascontiguousarray(value)
        if value.dtype.kind not in _ARRAY_KINDS:
            raise TypeError(
                f"cannot save {where}: arrays of dtype {value.dtype} "
                "are not allowed (only bool, int, float, str)."
            )
        finite = bool(value.dtype.kind != "f" or np.all(np.isfinite(value)))
        if not finite and not where.startswith(_MAY_BE_NONFINITE):
            raise ValueError(f"refusing to save {where}: it contains NaN or infinity.")
        key = f"{where}#{len(self.arrays)}"
        self.arrays[key] = value
        return {
            "$array": key,
            "dtype": value.dtype.str,
            "shape": list(value.shape),
            "finite": finite,
            "sha256": hashlib.sha256(value.tobytes()).hexdigest(),
        }

    def encode(self, value, where):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int) and not isinstance(value, np.integer):
            return value
        if isinstance(value, float):
            if math.isfinite(value):
                return value
            return {
                "$float": "nan"
                if math.isnan(value)
                else ("inf" if value > 0 else "-inf")
            }
        if isinstance(value, (np.bool_, np.integer, np.floating)):
            return {"$np": value.dtype.str, "value": self.encode(value.item(), where)}
        if isinstance(value, np.ndarray):
            return self.array(value, where)
        if sp.issparse(value):
            fmt = value.format
            if fmt not in ("csr", "csc"):
                value, fmt = value.tocsr(), "csr"
            return {
                "$sparse": fmt,
                "shape": list(value.shape),
                "data": self.array(value.data, f"{where}.data"),
                "indices": self.array(value.indices, f"{where}.indices"),
                "indptr": self.array(value.indptr, f"{where}.indptr"),
            }
        if isinstance(value, dict):
            bad = [k for k in value if not isinstance(k, str)]
            if bad:
                raise TypeError(
                    f"cannot save {where}: dict keys must be strings, got {bad[0]!r}."
                )
            return {
                "$dict": {k: self.encode(v, f"{where}.{k}") for k, v in value.items()}
            }
        if isinstance(value, list):
            return {
                "$list": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
            }
        if isinstance(value, tuple):
            return {
                "$tuple": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
            }
        if isinstance(value, slice):
            return {
                "$slice": [
                    self.encode(v, where) for v in (value.start, value.stop, value.step)
                ]
            }
        if id(value) in self.functions:
            return {"$function": self.functions[id(value)]}
        tag = self.classes.get(type(value))
        if tag is not None:
            state = {k: v for k, v in vars(value).items() if k not in _TRANSIENT}
            return {"$object": tag, "state": self.encode(state, where)}
        raise TypeError(
            f"cannot save {where}: values of type {type(value).__name__} are outside "
            "the model-file schema (arrays, numbers, strings, lists, dicts and "
            "kernlearn components only)."
        )


def _fitted_state(estimator):
    params = estimator.get_params(deep=False)
    return {
        k: v
        for k, v in vars(estimator).items()
        if k not in params and k not in _TRANSIENT
    }


def save_model(estimator, path, metadata=None):
    """Save a fitted kernlearn estimator without pickle.

    The file is written to a temporary name in the destination folder and
    renamed, so an interrupted save never leaves a half-written model.

    Parameters
    ----------
    estimator : estimator
        A fitted estimator listed in ``kernlearn.__all__``.
    path : str or path-like
        Destination file (conventionally ``.npz``).
    metadata : dict, optional
        Extra information stored with the model (strings as keys; values
        within the same schema as the fitted state); read it back with
        :func:`read_metadata` or ``load_model(..., return_metadata=True)``.

    Raises
    ------
    TypeError
        If the estimator is not a kernlearn estimator, or holds a value the
        schema cannot store (the message names the attribute).
    ValueError
        If a fitted array contains NaN or infinity.
    """
    cls = type(estimator).__name__
    if (
        cls not in kernlearn._ESTIMATORS
        or type(estimator).__module__.split(".")[0] != "kernlearn"
    ):
        raise TypeError(f"{cls} is not a kernlearn estimator.")
    enc = _Encoder()
    meta = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "kernlearn_version": kernlearn.__version__,
        "class": cls,
        "params": enc.encode(estimator.get_params(deep=False), "params"),
        "state": enc.encode(_fitted_state(estimator), "state"),
        "metadata": enc.encode(dict(metadata or {}), "metadata"),
    }
    arrays = dict(enc.arrays)
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    path = Path(path)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.",
        suffix=".tmp",
        dir=path.parent if str(path.parent) else ".",
    )
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, **arrays)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# --------------------------------------------------------------------- decode
class _Decoder:
    def __init__(self, path, arrays):
        self.path = path
        self.arrays = arrays
        self.used = set()
        self.classes = _safe_classes()
        self.functions = _safe_functions()

    def fail(self, msg):
        raise ValueError(f"{self.path}: {msg}")

    def array(self, node, where):
        key = node.get("$array")
        if not isinstance(key, str) or key not in self.arrays:
            self.fail(f"array {key!r} of {where} is missing from the file.")
        arr = self.arrays[key]
        self.used.add(key)
        try:
            dtype = np.dtype(node["dtype"])
        except Exception:
            self.fail(f"{where}: invalid dtype {node.get('dtype')!r} in the metadata.")
        if dtype.kind not in _ARRAY_KINDS:
            self.fail(f"{where}: dtype {dtype} is not allowed.")
        if arr.dtype != dtype:
            self.fail(f"{where} has dtype {arr.dtype}, the metadata says {dtype}.")
        if list(arr.shape) != list(node.get("shape", [])):
            self.fail(
                f"{where} has shape {arr.shape}, the metadata says "
                f"{tuple(node.get('shape', []))}."
            )
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            if node.get("finite", True) or not where.startswith(_MAY_BE_NONFINITE):
                self.fail(f"{where} contains NaN or infinity.")
        if hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest() != node.get(
            "sha256"
        ):
            self.fail(f"{where}: checksum mismatch (the array was modified).")
        return arr

    def decode(self, node, where):
        if node is None or isinstance(node, (bool, str, int, float)):
            return node
        if isinstance(node, list):
            self.fail(f"{where}: untagged list in the metadata.")
        if (
            not isinstance(node, dict)
            or len([k for k in node if k.startswith("$")]) != 1
        ):
            self.fail(f"{where}: malformed value in the metadata.")
        tag = next(k for k in node if k.startswith("$"))
        body = node[tag]
        if tag == "$array":
            return self.array(node, where)
        if tag == "$float":
            if body not in ("nan", "inf", "-inf"):
                self.fail(f"{where}: invalid float {body!r}.")
            return float(body)
        if tag == "$np":
            try:
                dtype = np.dtype(body)
            except Exception:
                self.fail(f"{where}: invalid scalar dtype {body!r}.")
            if dtype.kind not in "biuf":
                self.fail(f"{where}: scalar dtype {dtype} is not allowed.")
            return dtype.type(self.decode(node.get("value"), where))
        if tag == "$dict":
            if not isinstance(body, dict):
                self.fail(f"{where}: malformed dict.")
            return {k: self.decode(v, f"{where}.{k}") for k, v in body.items()}
        if tag in ("$list", "$tuple"):
            if not isinstance(body, list):
                self.fail(f"{where}: malformed {tag[1:]}.")
            items = [self.decode(v, f"{where}[{i}]") for i, v in enumerate(body)]
            return items if tag == "$list" else tuple(items)
        if tag == "$slice":
            if (
                not isinstance(body, list)
                or len(body) != 3
                or not all(v is None or type(v) is int for v in body)
            ):
                self.fail(f"{where}: malformed slice.")
            return slice(*body)
        if tag == "$function":
            if body not in self.functions:
                self.fail(f"{where}: function {body!r} is not in the allow-list.")
            return self.functions[body]
        if tag == "$sparse":
            return self.sparse(node, where)
        if tag == "$object":
            if body not in self.classes:
                self.fail(
                    f"{where}: class {body!r} is not in the allow-list of "
                    "model components."
                )
            state = self.decode(node.get("state"), where)
            if not isinstance(state, dict):
                self.fail(f"{where}: malformed component state.")
            obj = object.__new__(self.classes[body])
            self.set_attributes(obj, state, where)
            return obj
        self.fail(f"{where}: unknown value tag {tag!r}.")

    def sparse(self, node, where):
        fmt = node["$sparse"]
        if fmt not in ("csr", "csc"):
            self.fail(f"{where}: sparse format {fmt!r} is not allowed.")
        parts = {
            k: self.decode(node.get(k), f"{where}.{k}")
            for k in ("data", "indices", "indptr")
        }
        if not all(isinstance(v, np.ndarray) for v in parts.values()):
            self.fail(f"{where}: malformed sparse matrix.")
        try:
            shape = tuple(int(s) for s in node["shape"])
            cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
            mat = cls((parts["data"], parts["indices"], parts["indptr"]), shape=shape)
            mat.check_format(full_check=True)
        except Exception as exc:
            self.fail(f"{where}: invalid sparse matrix ({exc}).")
        return mat

    def set_attributes(self, obj, state, where):
        cls = type(obj)
        for name, value in state.items():
            # An attribute may not shadow a method, property or other descriptor
            # of the class (a tampered file must not replace ``predict``); plain
            # class-level defaults (numbers, strings) may be overridden.
            member = inspect.getattr_static(cls, name, None)
            if (
                not name.isidentifier()
                or name.startswith("__")
                or callable(member)
                or hasattr(member, "__get__")
            ):
                self.fail(f"{where}: attribute name {name!r} is not allowed.")
            setattr(obj, name, value)


def _read(path):
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"model file not found: {path}")
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a model file.")
    try:
        with np.load(path, allow_pickle=False) as data:
            if "__meta__" not in data.files:
                raise ValueError("no __meta__ entry")
            raw = data["__meta__"]
            if raw.dtype != np.uint8 or raw.ndim != 1 or raw.size > _MAX_META_BYTES:
                raise ValueError("__meta__ is not a JSON byte string")
            meta = json.loads(bytes(raw).decode("utf-8"))
            arrays = {k: data[k] for k in data.files if k != "__meta__"}
    except (
        OSError,
        ValueError,
        EOFError,
        zipfile.BadZipFile,
        UnicodeDecodeError,
        KeyError,
    ) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(
            f"{path} is not a readable kernlearn model file ({msg})."
        ) from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise ValueError(f"{path} is not a kernlearn model file.")
    if meta.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"{path}: model format version {meta.get('version')!r} is not supported "
            f"(this kernlearn reads version {FORMAT_VERSION}); refit and save again."
        )
    return path, meta, arrays


def load_model(path, return_metadata=False):
    """Load an estimator saved by :func:`save_model`.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save_model`.
    return_metadata : bool, default=False
        Also return the ``metadata`` dict given to :func:`save_model`.

    Returns
    -------
    estimator : estimator
        The fitted estimator.
    metadata : dict
        Only when ``return_metadata`` is true.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the file is not a kernlearn model file, has another format
        version, names a class outside the allow-list, or any array differs
        from the metadata in dtype, shape, finiteness or checksum.
    """
    path, meta, arrays = _read(path)
    cls_name = meta.get("class")
    if not isinstance(cls_name, str) or cls_name not in kernlearn._ESTIMATORS:
        raise ValueError(
            f"{path}: class {cls_name!r} is not an allowed kernlearn estimator."
        )
    try:
        cls = getattr(
            importlib.import_module(kernlearn._ESTIMATORS[cls_name]), cls_name
        )
    except (ImportError, AttributeError) as exc:
        raise ValueError(
            f"{path}: estimator {cls_name} is not available in this kernlearn ({exc})."
        ) from exc
    dec = _Decoder(path, arrays)
    params = dec.decode(meta.get("params"), "params")
    state = dec.decode(meta.get("state"), "state")
    metadata = dec.decode(meta.get("metadata", {"$dict": {}}), "metadata")
    if not all(isinstance(x, dict) for x in (params, state, metadata)):
        dec.fail("params, state and metadata must be dicts.")
    unused = set(arrays) - dec.used
    if unused:
        dec.fail(
            f"unexpected arrays not described by the metadata: {sorted(unused)[:3]}."
        )
    try:
        est = cls(**params)
    except TypeError as exc:
        dec.fail(f"invalid parameters for {cls_name}: {exc}.")
    if hasattr(est, "_validate_params"):
        try:
            est._validate_params()
        except (ValueError, TypeError) as exc:
            dec.fail(f"invalid parameters for {cls_name}: {exc}")
    dec.set_attributes(est, state, "state")
    if not any(k.endswith("_") and not k.startswith("_") for k in state):
        dec.fail("the model holds no fitted attributes.")
    return (est, metadata) if return_metadata else est


def read_metadata(path):
    """The ``metadata`` dict stored with a model, without building the estimator.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save_model`.

    Returns
    -------
    metadata : dict
    """
    return load_model(path, return_metadata=True)[1]
