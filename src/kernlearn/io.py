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
    containers; ``{"$items": [[key, value], ...]}`` a dict with number keys
    (``class_weight={1: 5.0}``);
``{"$float": "nan"|"inf"|"-inf"}``, ``{"$np": dtype, "value"}``
    non-finite floats and NumPy scalars;
``{"$slice": [start, stop, step]}``
    a slice (kernel views);
``{"$object": tag, "state": {...}}``
    a component (feature family, kernel list, loss, penalty, solver) whose
    class is in the allow-list below, or a scikit-learn cross-validation
    splitter (``cv=KFold(5)``); it is rebuilt without calling any
    code but ``object.__new__`` and attribute assignment;
``{"$random_state": {"keys", "pos", "has_gauss", "cached_gaussian"}}``
    a ``numpy.random.RandomState`` (``random_state``), its exact state;
``{"$function": tag}``
    an allow-listed kernel function; ``{"$class": tag}`` a scikit-learn
    splitter class (``RepeatedKFold`` holds ``KFold``, the class it repeats).

Anything outside this schema (open files, NumPy ``Generator`` objects, user
callables, object arrays other than strings) makes :func:`save_model` raise a
``TypeError`` naming the attribute; anything unexpected in a file makes
:func:`load_model` raise a ``ValueError`` naming the problem.

Every file ends with a *seal*: the archive's comment holds the kernlearn
version that wrote it and the SHA-256 digest of every byte before the digest,
so any change to the file (a single flipped bit included) is refused before
anything in it is parsed.  Declared array sizes are read from the ``.npy``
headers and capped before any array is allocated.  The rebuilt estimator's
fitted state is then checked against its class's declaration
(``kernlearn._model_state``: attributes, kinds, sizes that agree, finiteness).
The seal is a digest anyone can recompute: it detects damage, not a deliberate
edit, and a file rewritten consistently into another valid model loads as
that model; trust a model file's numbers as far as its source.

Composites (a :class:`~sklearn.pipeline.Pipeline`, a fitted
:class:`~sklearn.model_selection.GridSearchCV`, a
:class:`~sklearn.compose.ColumnTransformer` holding kernlearn estimators) are
saved by the same :func:`save_model` through ``skops.io``, scikit-learn's
safe persistence format, with the same seal; :func:`trusted_types` lists the
kernlearn types ``skops.io.load`` must be told to trust.
"""

import hashlib
import importlib
import inspect
import io
import json
import math
import os
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import kernlearn

from ._io_values import (plain_objects, random_state_fields, random_state_from,
                         splitter_class_from, splitter_class_tag, splitter_classes, unsavable)
from ._model_state import check_fitted_state, nonfinite_allowed, older_parameters
from .utils._atomic import write_atomically
from .utils._npy_header import read_npz_checked

__all__ = [
    "FORMAT_VERSION",
    "load_model",
    "read_metadata",
    "register_safe_class",
    "save_model",
    "trusted_types",
    "write_atomically",
]

FORMAT_NAME = "kernlearn-model"
# 3: sealed files (whole-file digest); version-2 files (unsealed) are still read.
FORMAT_VERSION = 3
_READABLE_VERSIONS = (2, 3)

# Attributes that are caches, not fitted state: never written, never read.
# GrFL's warm-start path holds the training columns and a random generator.
_TRANSIENT = frozenset({"_path"})
# Which float arrays may hold NaN or infinity (a fit's history_, +inf in the
# column scales): the declaration's one rule, _model_state.nonfinite_allowed.
_ARRAY_KINDS = "biufU"  # bool, int, uint, float, unicode: never object arrays
_MAX_META_BYTES = 64 * 2**20
# Arrays a file may declare on its word: 256 MB (_npy_header's floor) or 100x
# the file; over that their real sizes are counted first (deflate packs dense
# zeros ~1000:1: a wide FGM's coef_ of mostly zeros is a genuine such file).
_ARRAY_BYTES_PER_FILE_BYTE = 100
_SEAL_PREFIX = b"kernlearn-seal "
_KEY_TYPES = (str, int, float, bool, np.integer, np.floating, np.bool_)
_DIGEST_HEX = 64

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


def _qualified(obj):
    return f"{obj.__module__}.{obj.__qualname__}"


def trusted_types():
    """The kernlearn types a ``skops.io`` file of a composite model may hold.

    ``skops.io.load`` refuses every type it is not told to trust; scikit-learn's
    own types it trusts already.  Pass this list to trust kernlearn's
    estimators and their fitted components (kernel lists, feature families,
    losses, penalties, solvers, the named kernel functions) and nothing else.
    (A fitted ``GridSearchCV`` also holds scikit-learn types skops does not
    trust by default, its scorer and splitter; :func:`load_model` trusts
    scikit-learn's own classes, plain ``skops.io.load`` needs them added.)

    Returns
    -------
    types : list of str
        Fully qualified names, e.g. ``"kernlearn.estimators.fgm.FGMClassifier"``.

    Examples
    --------
    >>> import skops.io as sio
    >>> from kernlearn.io import trusted_types
    >>> # pipe = sio.load("pipe.skops", trusted=trusted_types())
    >>> "kernlearn.kernels.KernelList" in trusted_types()
    True
    """
    names = set()
    for cls_name, module in kernlearn._ESTIMATORS.items():
        try:
            names.add(_qualified(getattr(importlib.import_module(module), cls_name)))
        except (ImportError, AttributeError):
            continue  # an estimator missing from this build is trusted by nobody
    names.update(_qualified(cls) for cls in _safe_classes().values())
    names.update(_qualified(fn) for fn in _safe_functions().values())
    return sorted(names)


# ----------------------------------------------------------------------- seal
def _seal(body, version=None):
    """``body`` (a zip archive without comment) with the sealing comment appended.

    The comment is ``kernlearn-seal <version> sha256=<hex>``; the digest covers
    every byte of the result before it (the archive and the comment's length
    field included), so any change anywhere is detected.
    """
    if len(body) < 22 or body[-22:-18] != b"PK\x05\x06" or body[-2:] != b"\0\0":
        raise ValueError("internal: not a zip archive without comment")
    version = kernlearn.__version__ if version is None else version
    head = _SEAL_PREFIX + str(version).encode() + b" sha256="
    n_comment = len(head) + _DIGEST_HEX
    sealed = body[:-2] + n_comment.to_bytes(2, "little") + head
    return sealed + hashlib.sha256(sealed).hexdigest().encode()


def _read_seal(fh, size):
    """``(version, ok)`` of the seal of the open file ``fh`` of ``size`` bytes;
    ``(None, False)`` if unsealed.

    Reads the file once, in blocks (model files can be large).
    """
    if size <= _DIGEST_HEX:
        return None, False
    h = hashlib.sha256()
    fh.seek(0)
    left = size - _DIGEST_HEX
    tail_start = max(0, left - 512)
    tail = b""
    while left > 0:
        block = fh.read(min(left, 2**20))
        if not block:
            return None, False
        h.update(block)
        if fh.tell() > tail_start:
            tail = (tail + block)[-512:]
        left -= len(block)
    digest = fh.read()
    at = tail.rfind(_SEAL_PREFIX)
    if at < 0:
        return None, False
    head = tail[at + len(_SEAL_PREFIX):]
    version, sep, rest = head.partition(b" sha256=")
    version = version.decode("ascii", "replace") if sep and not rest else None
    return version, h.hexdigest().encode() == digest


def _write_sealed(path, body):
    """Write ``body`` sealed, through a temporary file renamed into place."""
    write_atomically(path, lambda tmp: Path(tmp).write_bytes(_seal(body)))


def _other_version(path, version, detail):
    """The message for a file another kernlearn version wrote, else ``None``."""
    if version in (None, kernlearn.__version__):
        return None
    return (
        f"{path} was saved by kernlearn {version} (this is kernlearn "
        f"{kernlearn.__version__}) and cannot be read here ({detail}); refit and "
        f"save it again, or load it with kernlearn {version}."
    )


# --------------------------------------------------------------------- encode
class _Encoder:
    def __init__(self):
        self.arrays = {}
        classes = {**_safe_classes(), **splitter_classes()}  # (a *CV's cv=KFold(5))
        self.classes = {cls: tag for tag, cls in classes.items()}
        self.functions = {id(fn): tag for tag, fn in _safe_functions().items()}

    def array(self, value, where):
        # (the layout too: GrFL's coefficients are Fortran-ordered, and the
        # loaded model's C-ordered copy summed its products in another order,
        # 1e-15 from the fitted model's decision values)
        fortran = isinstance(value, np.ndarray) and value.ndim > 1 and \
            value.flags.f_contiguous and not value.flags.c_contiguous
        value = np.ascontiguousarray(value)
        as_object = value.dtype == object and plain_objects(value)
        if as_object:
            # column names (feature_names_in_) are object arrays of str in
            # scikit-learn, task ids of a pandas object column may be ints:
            # stored as one plain dtype and restored as objects
            value = value.astype(as_object) if value.size else value.astype("<U1")
        if value.dtype.kind not in _ARRAY_KINDS:
            raise TypeError(
                f"cannot save {where}: arrays of dtype {value.dtype} "
                "are not allowed (only bool, int, float, str)."
            )
        finite = bool(value.dtype.kind != "f" or np.all(np.isfinite(value)))
        if not finite and not nonfinite_allowed(where, value):
            raise ValueError(f"refusing to save {where}: it contains NaN or infinity.")
        key = f"{where}#{len(self.arrays)}"
        self.arrays[key] = value
        node = {
            "$array": key,
            "dtype": value.dtype.str,
            "shape": list(value.shape),
            "finite": finite,
            "sha256": hashlib.sha256(value.tobytes()).hexdigest(),
        }
        if as_object:
            node["object"] = True
        if fortran:
            node["order"] = "F"
        return node

    def encode(self, value, where):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int) and not isinstance(value, np.integer):
            return value
        if isinstance(value, float):
            if math.isfinite(value):
                return value
            return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
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
            if not all(isinstance(k, str) for k in value):
                # e.g. class_weight={1: 5.0}: keys kept in their type
                bad = [k for k in value if not isinstance(k, _KEY_TYPES)]
                if bad:
                    raise TypeError(
                        f"cannot save {where}: dict keys must be strings or "
                        f"numbers, got {bad[0]!r}."
                    )
                return {
                    "$items": [
                        [self.encode(k, where), self.encode(v, f"{where}[{k!r}]")]
                        for k, v in value.items()
                    ]
                }
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
        if type(value) is np.random.RandomState:  # random_state=RandomState(0)
            return {"$random_state": self.encode(random_state_fields(value), where)}
        tag = self.classes.get(type(value))
        if tag is not None:
            state = {k: v for k, v in vars(value).items() if k not in _TRANSIENT}
            return {"$object": tag, "state": self.encode(state, where)}
        if (tag := splitter_class_tag(value, self.classes)) is not None:
            return {"$class": tag}  # (RepeatedKFold's cv=KFold, the class it repeats)
        raise unsavable(value, where)


def _fitted_state(estimator):
    params = estimator.get_params(deep=False)
    # (a holds_state descriptor's value as read: GrFL's features_, completed when first read)
    cls = type(estimator)
    return {
        k: getattr(estimator, k) if getattr(
            inspect.getattr_static(cls, k, None), "holds_state", 0) else v
        for k, v in vars(estimator).items()
        if k not in params and k not in _TRANSIENT
    }


def _is_kernlearn_estimator(obj):
    cls = type(obj)
    return cls.__name__ in kernlearn._ESTIMATORS and cls.__module__.split(".")[0] == (
        "kernlearn"
    )


def save_model(estimator, path, metadata=None):
    """Save a fitted kernlearn estimator, or a composite holding them, without pickle.

    A kernlearn estimator is written in kernlearn's own format (JSON and
    NumPy arrays, see the module docstring).  Anything else built from
    scikit-learn and kernlearn parts (a ``Pipeline``, a fitted
    ``GridSearchCV``, a ``ColumnTransformer``...) is written with
    ``skops.io``.  Both are sealed with a digest of the whole file and
    written to a temporary name in the destination folder, then renamed, so
    an interrupted save never leaves a half-written model.

    Parameters
    ----------
    estimator : estimator
        A fitted estimator listed in ``kernlearn.__all__``, or a
        scikit-learn composite of scikit-learn and kernlearn parts.
    path : str or path-like
        Destination file (conventionally ``.npz`` for a kernlearn estimator,
        ``.skops`` for a composite).
    metadata : dict, optional
        Extra information stored with a kernlearn estimator (strings as
        keys; values within the same schema as the fitted state); read it
        back with :func:`read_metadata` or ``load_model(...,
        return_metadata=True)``.

    Raises
    ------
    TypeError
        If the estimator holds a value the schema cannot store (the message
        names the attribute), a composite holds a type that is neither
        scikit-learn's nor kernlearn's, or ``metadata`` is not a dict.
    ValueError
        If a fitted array contains NaN or infinity.
    sklearn.exceptions.NotFittedError
        If a kernlearn estimator is not fitted (nothing is written).
    """
    if metadata is not None and not isinstance(metadata, dict):
        # a list was dict()'s "dictionary update sequence element #0 has length 1"
        raise TypeError(f"metadata must be a dict, got {type(metadata).__name__}.")
    if not _is_kernlearn_estimator(estimator):
        if metadata:
            raise TypeError(
                "metadata is stored with kernlearn estimators only, not with "
                f"a {type(estimator).__name__}."
            )
        _write_sealed(path, _dump_composite(estimator))
        return
    from sklearn.utils.validation import check_is_fitted

    # an unfitted estimator was written without a word, and every load of
    # the file then failed ("the model holds no fitted attributes")
    check_is_fitted(estimator)
    enc = _Encoder()
    meta = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "kernlearn_version": kernlearn.__version__,
        "class": type(estimator).__name__,
        "params": enc.encode(estimator.get_params(deep=False), "params"),
        "state": enc.encode(_fitted_state(estimator), "state"),
        "metadata": enc.encode(dict(metadata or {}), "metadata"),
    }
    arrays = dict(enc.arrays)
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    _write_sealed(path, buf.getvalue())


def _skops():
    try:
        import skops.io as sio
    except ImportError as exc:  # pragma: no cover - skops is a dependency
        raise ImportError(
            "saving composites (pipelines, searches) needs skops: pip install skops"
        ) from exc
    return sio


def _dump_composite(obj):
    from sklearn.base import BaseEstimator

    if not isinstance(obj, BaseEstimator):
        raise TypeError(
            f"{type(obj).__name__} is neither a kernlearn estimator nor a "
            "scikit-learn estimator (pipeline, search, column transformer)."
        )
    sio = _skops()
    try:
        body = sio.dumps(obj, compression=zipfile.ZIP_DEFLATED)
    except Exception as exc:
        raise TypeError(
            f"cannot save this {type(obj).__name__}: {exc}"
        ) from exc
    foreign = sorted(set(sio.get_untrusted_types(data=body)) - set(_trusted(body)))
    if foreign:
        raise TypeError(
            f"cannot save this {type(obj).__name__}: it holds {', '.join(foreign)}, "
            "neither a scikit-learn nor a kernlearn type, which a safe file cannot "
            "be trusted to rebuild."
        )
    return body


# --------------------------------------------------------------------- decode
class _Decoder:
    def __init__(self, path, arrays):
        self.path = path
        self.arrays = arrays
        self.used = set()
        self.classes = {**_safe_classes(), **splitter_classes()}
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
            if node.get("finite", True) or not nonfinite_allowed(where, arr):
                self.fail(f"{where} contains NaN or infinity.")
        if hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest() != node.get(
            "sha256"
        ):
            self.fail(f"{where}: checksum mismatch (the array was modified).")
        if node.get("object", False) is not False:
            if node["object"] is not True or arr.dtype.kind not in "Ubif":
                self.fail(f"{where}: malformed object array.")
            arr = arr.astype(object)
        if node.get("order", "C") not in ("C", "F"):
            self.fail(f"{where}: malformed memory order {node.get('order')!r}.")
        return np.asfortranarray(arr) if node.get("order") == "F" else arr

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
        if tag == "$items":
            if not isinstance(body, list) or not all(
                isinstance(kv, list) and len(kv) == 2 for kv in body
            ):
                self.fail(f"{where}: malformed mapping.")
            out = {}
            for k, v in body:
                key = self.decode(k, where)
                if not isinstance(key, _KEY_TYPES):
                    self.fail(f"{where}: mapping key of type {type(key).__name__}.")
                out[key] = self.decode(v, f"{where}[{key!r}]")
            return out
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
        if tag == "$random_state":
            return random_state_from(self.decode(body, where), self.fail, where)
        if tag == "$class":
            return splitter_class_from(body, self.classes, self.fail, where)
        if tag == "$object":
            if body not in self.classes:
                self.fail(
                    f"{where}: class {body!r} is not in the allow-list (a family of "
                    "your own: import the module registering it before loading)."
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
        renamed = getattr(cls, "_renamed_attributes", {})
        if callable(renamed):  # a rename that depends on the model (e.g. family_)
            renamed = renamed(state)
        pairs = ((renamed.get(k, k), v) for k, v in state.items())  # (None: dropped)
        for name, value in ((n, v) for n, v in pairs if n is not None):
            # An attribute may not shadow a method, property or other descriptor
            # of the class (a tampered file must not replace ``predict``); plain
            # class-level defaults (numbers, strings) and ``holds_state`` descriptors
            # (they store it as an attribute: GrFL's ``features_``) may be set.
            member = inspect.getattr_static(cls, name, None)
            if not name.isidentifier() or name.startswith("__") or callable(member) or (
                    hasattr(member, "__get__") and not getattr(member, "holds_state", 0)):
                self.fail(f"{where}: attribute name {name!r} is not allowed.")
            setattr(obj, name, value)


def _read(path):
    """``(path, meta, arrays, kind, seal_version)`` of a kernlearn file.

    ``kind`` is ``"npz"`` (then ``meta`` and ``arrays`` are filled) or
    ``"skops"`` (a composite; ``meta`` holds the raw bytes).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"model file not found: {path}")
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a model file.")
    if not path.is_file():
        raise ValueError(f"{path} is not a regular file, not a model file.")
    # Everything from one open file: a model renamed into place by another
    # `fit` between a size, a seal and the arrays read by name was "checksum
    # mismatch", or mixed the two files.
    with open(path, "rb") as fh:
        return _read_open(path, fh)


def _read_open(path, fh):
    size = os.fstat(fh.fileno()).st_size
    version, sealed = _read_seal(fh, size)
    if version is not None and not sealed:
        raise ValueError(
            f"{path}: checksum mismatch: the file was modified after it was saved "
            "(or is damaged)."
        )
    try:
        with zipfile.ZipFile(fh) as zf:
            names = zf.namelist()
            if "schema.json" in names and "__meta__.npy" not in names:
                if not sealed:
                    raise ValueError("a skops file not sealed by kernlearn")
                fh.seek(0)
                return path, fh.read(), None, "skops", version
            if "__meta__.npy" not in names:
                raise ValueError("no __meta__ entry")
            arrays = read_npz_checked(zf, size, _ARRAY_BYTES_PER_FILE_BYTE)
        raw = arrays.pop("__meta__")
        if raw.dtype != np.uint8 or raw.ndim != 1 or raw.size > _MAX_META_BYTES:
            raise ValueError("__meta__ is not a JSON byte string")
        meta = json.loads(bytes(raw).decode("utf-8"))
    except Exception as exc:  # any fault of an untrusted file is a refusal
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        fh.seek(0)
        start = fh.read(4)
        if not start:
            raise ValueError(f"{path} is not a readable kernlearn model file: it is "
                             "empty.") from exc
        if start == b"PK\x03\x04" and isinstance(exc, zipfile.BadZipFile):
            # a model file cut short (an interrupted copy or download) was "not
            # a readable kernlearn model file (File is not a zip file)"
            raise ValueError(
                f"{path} is not a readable kernlearn model file: it starts as one but "
                f"is truncated or damaged ({msg}); save or copy it again."
            ) from exc
        raise ValueError(
            f"{path} is not a readable kernlearn model file ({msg})."
        ) from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise ValueError(f"{path} is not a kernlearn model file.")
    file_version = meta.get("version")
    if file_version not in _READABLE_VERSIONS:
        detail = f"model format version {file_version!r}"
        raise ValueError(
            _other_version(path, version or meta.get("kernlearn_version"), detail)
            or f"{path}: {detail} is not supported (this kernlearn reads version "
            f"{FORMAT_VERSION}); refit and save again."
        )
    if file_version >= 3 and not sealed:
        raise ValueError(
            f"{path}: the file's seal is missing or damaged (the file was modified "
            "after it was saved)."
        )
    return path, meta, arrays, "npz", version or meta.get("kernlearn_version")


def _trusted(body):
    """kernlearn's types, and scikit-learn's own and SciPy's sparse matrices that
    ``body`` names.

    skops trusts only part of scikit-learn by default (a fitted search holds
    a scorer and a splitter it does not); a class defined by scikit-learn is
    data, as ours are.  skops stores a sparse matrix as arrays (read back
    without pickle) but trusts none by default, so a pipeline holding one (an
    FGM model of a feature family, its ``column_coef_``; a kernel list fitted
    on sparse input) could not be saved.  Functions and classes from anywhere
    else stay refused.
    """
    own = [
        t
        for t in _skops().get_untrusted_types(data=body)
        if (t.startswith("sklearn.") and _is_sklearn_class(t))
        or (t.startswith("scipy.sparse.") and _is_sparse_class(t))
    ]
    return trusted_types() + own


def _is_sparse_class(name):
    """Whether ``name`` is a SciPy sparse matrix or array class."""
    import scipy.sparse as sp

    cls = _class_named(name)
    return cls is not None and issubclass(cls, (sp.spmatrix, sp.sparray))


def _class_named(name):
    """The class a fully qualified ``name`` designates, or None."""
    module, _, attr = name.rpartition(".")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError, ValueError):
        return None
    return obj if isinstance(obj, type) else None


def _is_sklearn_class(name):
    cls = _class_named(name)
    return cls is not None and cls.__module__.startswith("sklearn.")


def _load_composite(path, raw, version):
    sio = _skops()
    try:
        return sio.loads(raw, trusted=_trusted(raw))
    except Exception as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(
            _other_version(path, version, detail)
            or f"{path}: cannot rebuild the saved composite ({detail})."
        ) from exc


def load_model(path, return_metadata=False):
    """Load an estimator or composite saved by :func:`save_model`.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save_model`.
    return_metadata : bool, default=False
        Also return the ``metadata`` dict given to :func:`save_model` (empty
        for composites).

    Returns
    -------
    estimator : estimator
        The fitted estimator (or pipeline, search, ...).
    metadata : dict
        Only when ``return_metadata`` is true.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the file is not a kernlearn model file, was changed after it was
        saved (its seal), declares arrays larger than the file can hold, was
        written by another kernlearn version that this one cannot read (the
        message names both versions), names a class outside the allow-list,
        any array differs from the metadata in dtype, shape, finiteness or
        checksum, or the fitted state is not one the estimator's class
        declares (an attribute missing or unknown, of another kind, of a size
        that disagrees with the others, or non-finite; the message names it).
    """
    path, meta, arrays, kind, version = _read(path)
    if kind == "skops":
        est = _load_composite(path, meta, version)
        return (est, {}) if return_metadata else est
    try:
        return _build(path, meta, arrays, return_metadata, version)
    except ValueError as exc:
        msg = _other_version(path, version, str(exc).removeprefix(f"{path}: "))
        if msg is None:
            raise
        raise ValueError(msg) from exc
    except RecursionError:
        raise ValueError(f"{path}: the metadata is nested too deeply.") from None
    except (TypeError, KeyError, IndexError, AttributeError, OverflowError) as exc:
        # a malformed value the schema checks did not name
        raise ValueError(
            f"{path}: malformed model file ({type(exc).__name__}: {exc})."
        ) from exc


def _build(path, meta, arrays, return_metadata, version=None):
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
    # (a parameter an earlier 0.2.0 development file lacks takes today's
    # default, chosen to be that code's behaviour, e.g. ``out_of_bounds``)
    params = older_parameters(params, cls_name, version)
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
    # (a resealed file rewritten consistently: its state must still be a model's)
    check_fitted_state(est, _fitted_state(est), dec.fail, version)
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
