"""Randomised tampering with model files and data files (seeded).

Model files: every public estimator is fitted on small random data with the
random settings of ``fuzz_options.py`` (dense or sparse input, binary,
multiclass or regression targets, sample weights, precomputed kernels, tasks)
and saved with :func:`kernlearn.io.save_model`; a few are also fitted by
``kernlearn fit`` on a CSV file.  Each saved file is then mutated at random:

* raw bytes: a bit flipped, a byte set, a span zeroed, two bytes swapped,
  bytes inserted, the file cut short or extended (the seal must refuse all);
* the same with the seal recomputed (as anyone can: it is a digest, not a
  signature), which reaches the archive and ``.npy`` readers;
* the JSON metadata rewritten and resealed: a number, string or tag replaced,
  an array node's dtype, shape, finiteness, digest, key or order edited, the
  format, version, class or kernlearn version changed, a key dropped, a list
  item duplicated, the text cut, made invalid UTF-8 or nested 100,000 deep;
  an unsealed version-2 file;
* arrays: replaced by one of another shape or dtype (with or without the
  metadata updated to match), dropped, added, stored twice; a ``.npy`` header
  declaring 10**12 elements.

Each mutated file is loaded with :func:`~kernlearn.io.load_model` and (the
``kernlearn fit`` models) read by ``kernlearn predict`` on a CSV file.  Data
files: a valid CSV (and ``.npy`` / ``.npz``) gets a cell set to ``nan``,
``inf``, text, empty or ``1e400``, a ragged row, a BOM, CRLF line ends, a
quoted field holding a newline, a header renamed, duplicated or reordered, a
column dropped, NUL bytes, invalid UTF-8, a ``.npy`` header declaring 10**12
rows; each is read by ``kernlearn predict`` (and the library's reader).

Invariants:

* a load refuses with the library's own error naming the file (a
  ``ValueError`` whose message holds the path; not a bare ``KeyError`` or
  NumPy, zipfile or json error, not ``RecursionError`` / ``MemoryError``),
  within ``--timeout`` seconds and without growing the process by more than
  ``--max-grow`` MB; or the loaded model predicts exactly as the original;
* a loaded model predicting otherwise is a defect, unless the mutation was a
  rewrite within the schema, resealed (a value of the parameters, fitted state
  or metadata replaced by another value, an array together with its
  metadata, an array's order/object/finite flag, an entry dropped or a list
  item duplicated): such a file is a valid file of another model, which no
  digest can tell, and the format declares no type per fitted attribute
  (counted as ``accepted-edit``, or ``edit-breaks-predict`` when the
  estimator's ``predict`` fails on the values; not violations);
* the command line: exit status documented and never 1, a failure is one
  ``kernlearn: error:`` line and no traceback; a model-file fault is status
  4; exit 0 writes the original predictions (or, for a coherent rewrite,
  predictions of the rewritten model);
* data files: a bad cell, ragged row, NUL byte or invalid text is refused
  (status 3, or 5 for a header that no longer names the model's columns), a
  cell-level fault naming its line, row or column; a BOM, CRLF or reordered
  columns read as the original (same predictions).

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fuzz_files.py --minutes 5 --seed 0

Prints one line per violation and a summary of outcomes by mutation kind;
exit status 1 if any violation.
"""

import argparse
import collections
import contextlib
import hashlib
import io
import json
import resource
import signal
import sys
import tempfile
import time
import traceback
import warnings
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_options import SPACES, draw_case  # noqa: E402

import kernlearn  # noqa: E402
from kernlearn.cli import EXIT_CODES  # noqa: E402
from kernlearn.cli import main as cli_main  # noqa: E402
from kernlearn.io import load_model, save_model  # noqa: E402

CLI_MODELS = [("fgm", "classification"), ("fgm-regressor", "regression"),
              ("lowrank-classifier", "classification"), ("pnorm-mkl", "classification"),
              ("infinite-classifier", "classification")]


class Hang(Exception):
    """A load that did not finish within the timeout."""


@contextlib.contextmanager
def deadline(seconds):
    def on_alarm(signum, frame):
        raise Hang()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ------------------------------------------------------------------- outputs
def outputs(est, X, pk):
    """predict, decision_function and predict_proba of ``est`` (those it has)."""
    out = {"predict": np.asarray(est.predict(X, **pk))}
    for name in ("decision_function", "predict_proba"):
        try:
            method = getattr(est, name)
        except AttributeError:
            continue
        try:
            out[name] = np.asarray(method(X, **pk))
        except (AttributeError, NotImplementedError):
            continue
    return out


def same_outputs(a, b):
    if set(a) != set(b):
        return False
    for k in a:
        x, y = a[k], b[k]
        if x.shape != y.shape or x.dtype.kind != y.dtype.kind:
            return False
        if x.dtype.kind == "f":
            if not np.array_equal(x, y, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


# ---------------------------------------------------------- model file parts
def seal_head():
    return b"kernlearn-seal " + kernlearn.__version__.encode() + b" sha256="


def unseal(data):
    """The zip archive of a sealed file, without its comment."""
    n = len(seal_head()) + 64
    body = data[:-n]
    return body[:-2] + b"\0\0"


def reseal(body):
    """``body`` sealed as :func:`kernlearn.io.save_model` does (no checks)."""
    head = seal_head()
    sealed = body[:-2] + (len(head) + 64).to_bytes(2, "little") + head
    return sealed + hashlib.sha256(sealed).hexdigest().encode()


def unpack(data):
    """``(meta, arrays)`` of a sealed model file (arrays without ``__meta__``)."""
    arrays = {}
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for name in zf.namelist():
            with zf.open(name) as fh:
                arrays[name[:-4]] = np.lib.format.read_array(fh, allow_pickle=False)
    meta = json.loads(bytes(arrays.pop("__meta__")).decode())
    return meta, arrays


def pack(meta, arrays, meta_bytes=None, sealed=True, members=None):
    """A model file of ``meta`` and ``arrays``; ``members`` adds raw members."""
    buf = io.BytesIO()
    raw = meta_bytes if meta_bytes is not None else json.dumps(meta).encode()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, arr in list(arrays.items()) + [("__meta__", np.frombuffer(raw, np.uint8))]:
            b = io.BytesIO()
            np.lib.format.write_array(b, np.asarray(arr), allow_pickle=False)
            zf.writestr(name + ".npy", b.getvalue())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (a duplicate name is the point)
            for name, payload in members or ():
                zf.writestr(name, payload)
    body = buf.getvalue()
    return reseal(body) if sealed else body


def walk(obj, path=()):
    yield path, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from walk(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from walk(v, path + (i,))


def set_at(obj, path, value):
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


def get_at(obj, path):
    for k in path:
        obj = obj[k]
    return obj


VALUES = [0, -1, 1, 2, 1.5, -1e-300, 1e308, 10**12, 2**63, -2**63 - 1, 10**400,
          True, False, None, "", "x", "rbf", "auto", [], {}, [1, 2], {"$list": []},
          {"$float": "nan"}, {"$np": "<f8", "value": 1e308}, {"$np": "|O", "value": 1},
          {"$object": "os/system", "state": {"$dict": {}}}, {"$function": "builtins/eval"},
          {"$slice": [0, 10**12, 1]}, {"$random_state": {"$dict": {}}},
          {"$class": "sklearn/KFold"}, {"$items": [[1, 2], [1, 3]]},
          {"$sparse": "coo", "shape": [2, 2]}, {"$dict": {"__class__": 1}},
          float("nan"), float("inf")]
DTYPES = ["<f4", "<f8", ">f8", "<i8", "<i4", "|b1", "<U3", "|O", "V8", "<c16", "S3",
          "garbage", 7, None, "<M8[s]", [["a", "<f8"]]]
SHAPES = [[10**12], [10**12, 10**12], [], [0], [-1], [1], [2, 3], ["a"], None, 3,
          [2**63], [1.5]]


ARRAY_FIELDS = ("dtype", "shape", "finite", "sha256", "order", "object")


def array_nodes(meta):
    return [p for p, v in walk(meta) if isinstance(v, dict) and "$array" in v]


def plain_nodes(meta):
    """Paths of plain values (numbers, strings, booleans) in params/state/metadata."""
    out = []
    for p, v in walk(meta):
        if not p or p[0] not in ("params", "state", "metadata"):
            continue
        if isinstance(p[-1], str) and (p[-1] == "$array" or p[-1] in ARRAY_FIELDS):
            continue
        if isinstance(v, (int, float, str)) and not (isinstance(p[-1], str)
                                                      and p[-1].startswith("$")):
            out.append(p)
    return out


def mutate_model(rng, data):
    """``(kind, bytes, coherent, what)``: a random mutation of the sealed model ``data``.

    ``coherent``: the file was rewritten consistently (a valid file of another
    model may result); ``what`` says what was changed.
    """
    kind = str(rng.choice(MODEL_KINDS))
    what = kind
    if kind.startswith("raw-") or kind.startswith("resealed-"):
        body = unseal(data) if kind.startswith("resealed-") else data
        body = raw_mutation(rng, kind.split("-", 1)[1], body)
        return kind, reseal(body) if kind.startswith("resealed-") else body, False, what
    meta, arrays = unpack(data)
    coherent = False
    extra = None
    meta_bytes = None
    sealed = True
    if kind == "json-value":
        paths = [p for p, _ in walk(meta) if p]
        p = paths[rng.randint(len(paths))]
        new = VALUES[rng.randint(len(VALUES))]
        # A value of params, state or metadata replaced by another value of the
        # schema is a rewrite: a valid file of another model (the format declares
        # no type per fitted attribute, so a list where an array was loads too).
        # An array node's fields, a tag or the header replaced is an inconsistency.
        # (a container's body is data too: {"$dict": {"$np": ...}} is a dict of two keys)
        coherent = p[0] in ("params", "state", "metadata") and not (
            isinstance(p[-1], str) and (p[-1].startswith("$") or p[-1] in ARRAY_FIELDS)
            and p[-1] not in ("$dict", "$list", "$tuple"))
        set_at(meta, p, new)
        what = f"{'.'.join(map(str, p))} = {new!r}"
    elif kind == "json-plain":  # a plain value rewritten: a coherent edit
        paths = plain_nodes(meta)
        if not paths:
            return mutate_model(rng, data)
        p = paths[rng.randint(len(paths))]
        old = get_at(meta, p)
        if isinstance(old, bool):
            new = not old
        elif isinstance(old, (int, float)):
            new = [0, -1, 1, old * 2, old + 1, -old, 1e308, 10**12][rng.randint(8)]
        else:
            new = [old + "x", "", "auto", "rbf", "1"][rng.randint(5)]
        set_at(meta, p, new)
        coherent = True
        what = f"{'.'.join(map(str, p))} = {new!r}"
    elif kind == "json-array-field":
        paths = array_nodes(meta)
        p = paths[rng.randint(len(paths))]
        node = get_at(meta, p)
        field = str(rng.choice(["dtype", "shape", "finite", "sha256", "$array", "order",
                                "object", "extra", "drop"]))
        old = dict(node)
        if field == "dtype":
            node["dtype"] = DTYPES[rng.randint(len(DTYPES))]
        elif field == "shape":
            node["shape"] = SHAPES[rng.randint(len(SHAPES))]
        elif field == "finite":
            node["finite"] = [False, True, "no", None, 0][rng.randint(5)]
        elif field == "sha256":
            node["sha256"] = ["0" * 64, node["sha256"][:-1], node["sha256"].upper(), None,
                              ""][rng.randint(5)]
        elif field == "$array":
            keys = list(arrays)
            node["$array"] = [keys[rng.randint(len(keys))], "__meta__", "nope", 3, None,
                              ""][rng.randint(6)]
        elif field == "order":
            node["order"] = ["F", "C", "A", 1, None][rng.randint(5)]
        elif field == "object":
            node["object"] = [True, False, 1, "yes"][rng.randint(4)]
        elif field == "extra":
            node["$dict"] = {}
        else:
            del node[rng.choice(["dtype", "shape", "sha256", "$array"])]
        # (the flags' other valid values: a valid file of a model read otherwise)
        coherent = field in ("order", "object", "finite") and node.get(field) in (
            "C", "F", True, False) and type(node.get(field)) is type(old.get(field, node.get(field)))
        what = f"{'.'.join(map(str, p))}: {field}: " + ", ".join(
            f"{k} {old.get(k)!r} -> {node.get(k)!r}" for k in set(old) | set(node)
            if old.get(k) != node.get(k))
    elif kind == "json-top":
        field = rng.choice(["format", "version", "class", "kernlearn_version", "params",
                            "state", "metadata"])
        choice = rng.randint(4)
        if field == "class":
            meta["class"] = [rng.choice(list(kernlearn._ESTIMATORS)), "os.system",
                             "Pipeline", None][choice]
        elif field == "version":
            meta["version"] = [1, 2, 4, "3"][choice]
        elif field == "format":
            meta["format"] = ["kernlearn-model2", None, 3, ""][choice]
        elif field == "kernlearn_version":
            meta["kernlearn_version"] = ["0.0.1", "99.0", None, 3][choice]
        elif choice < 2:
            del meta[field]
        else:
            meta[field] = [None, {"$list": []}][choice - 2]
    elif kind == "json-drop":
        paths = [p for p, v in walk(meta) if p and isinstance(get_at(meta, p[:-1]), (dict, list))]
        p = paths[rng.randint(len(paths))]
        parent = get_at(meta, p[:-1])
        del parent[p[-1]]
        what = f"dropped {'.'.join(map(str, p))}"
        # (a parameter, fitted attribute or list item dropped leaves a file of valid
        # form: the default, a model without the attribute, a shorter list)
        coherent = p[0] in ("params", "state", "metadata")
    elif kind == "json-dup":
        lists = [p for p, v in walk(meta) if isinstance(v, list) and v]
        if not lists:
            return mutate_model(rng, data)
        p = lists[rng.randint(len(lists))]
        lst = get_at(meta, p)
        lst.append(lst[rng.randint(len(lst))])
        what = f"duplicated an item of {'.'.join(map(str, p))}"
        coherent = True  # (a longer list: a valid file of another model)
    elif kind == "json-text":
        text = json.dumps(meta).encode()
        how = rng.randint(5)
        if how == 0:
            meta_bytes = text[:rng.randint(len(text))]
        elif how == 1:
            at = rng.randint(len(text))
            meta_bytes = text[:at] + b"\xff\xfe" + text[at:]
        elif how == 2:
            meta_bytes = b"[" * 100000 + b"]" * 100000
        elif how == 3:
            deep = b'{"$list": [' * 100000 + b"1" + b"]}" * 100000
            meta_bytes = json.dumps({**meta, "state": "@@"}).encode().replace(b'"@@"', deep)
        else:
            meta_bytes = text.replace(b'"finite": true', b'"finite": NaN', 1)
    elif kind == "v2-unsealed":
        meta["version"] = 2
        paths = plain_nodes(meta)
        if paths and rng.rand() < 0.7:
            p = paths[rng.randint(len(paths))]
            old = get_at(meta, p)
            set_at(meta, p, (not old) if isinstance(old, bool) else
                   old * 2 + 1 if isinstance(old, (int, float)) else old + "x")
        sealed = False
        coherent = True  # (an unsealed old-format file cannot show an edit)
    elif kind in ("array-replace", "array-coherent"):
        key = list(arrays)[rng.randint(len(arrays))]
        arr = arrays[key]
        arrays[key] = other_array(rng, arr)
        what = f"{kind} {key}: {arr.dtype}{arr.shape} -> {arrays[key].dtype}{arrays[key].shape}"
        if kind == "array-coherent":
            for p in array_nodes(meta):
                node = get_at(meta, p)
                if node["$array"] == key:
                    new = arrays[key]
                    node.update(dtype=new.dtype.str, shape=list(new.shape),
                                finite=bool(new.dtype.kind != "f" or np.isfinite(new).all()),
                                sha256=hashlib.sha256(new.tobytes()).hexdigest())
            coherent = True
    elif kind == "array-drop":
        del arrays[list(arrays)[rng.randint(len(arrays))]]
    elif kind == "array-extra":
        arrays["state.extra#999"] = np.zeros(3)
    elif kind == "array-twice":
        key = list(arrays)[rng.randint(len(arrays))]
        b = io.BytesIO()
        np.lib.format.write_array(b, other_array(rng, arrays[key]))
        extra = [(key + ".npy", b.getvalue())]
    elif kind == "npy-header":
        key = list(arrays)[rng.randint(len(arrays))]
        arr = arrays.pop(key)
        extra = [(key + ".npy", npy_with_header(rng, arr))]
    else:
        raise AssertionError(kind)
    return kind, pack(meta, arrays, meta_bytes, sealed, extra), coherent, what


def other_array(rng, arr):
    how = rng.randint(6)
    if how == 0:
        return np.zeros(arr.size + 1, arr.dtype)
    if how == 1:
        return arr.reshape(-1)[:max(arr.size - 1, 0)]
    if how == 2:
        return arr.astype(np.float32) if arr.dtype.kind in "biuf" else arr.astype("<U1")
    if how == 3:
        return np.full(arr.shape, np.nan) if arr.dtype.kind == "f" else arr.astype(np.float64
                                                                                 ) + 0.5 if arr.dtype.kind in "biu" else arr
    if how == 4:
        out = arr.copy()
        if out.size and out.dtype.kind in "iuf":
            out.flat[rng.randint(out.size)] += 1
        elif out.size and out.dtype.kind == "b":
            out.flat[0] = not out.flat[0]
        return out
    return np.asarray(arr).T.copy() if arr.ndim == 2 else arr.reshape(1, -1)


def npy_with_header(rng, arr):
    """``arr`` written with a tampered ``.npy`` header."""
    header = {"descr": arr.dtype.str, "fortran_order": False, "shape": arr.shape}
    how = rng.randint(5)
    if how == 0:
        header["shape"] = (10**12,)
    elif how == 1:
        header["shape"] = (10**6, 10**6)
    elif how == 2:
        header["descr"] = "|O"
    elif how == 3:
        header["fortran_order"] = True
        header["shape"] = tuple(reversed(arr.shape))
    else:
        header["shape"] = (-1,)
    b = io.BytesIO()
    b.write(np.lib.format.magic(1, 0))
    text = repr(header).encode()
    pad = 64 - (10 + len(text) + 1) % 64
    text = text + b" " * pad + b"\n"
    b.write(len(text).to_bytes(2, "little") + text)
    b.write(np.ascontiguousarray(arr).tobytes())
    return b.getvalue()


def raw_mutation(rng, how, data):
    b = bytearray(data)
    n = len(b)
    if how == "bitflip":
        i = rng.randint(n)
        b[i] ^= 1 << rng.randint(8)
    elif how == "byte":
        b[rng.randint(n)] = rng.randint(256)
    elif how == "zero":
        i = rng.randint(n)
        j = i + rng.randint(1, 64)
        b[i:j] = bytes(len(b[i:j]))
    elif how == "swap":
        i, j = rng.randint(n, size=2)
        b[i], b[j] = b[j], b[i]
    elif how == "insert":
        i = rng.randint(n)
        b[i:i] = bytes(rng.randint(256, size=rng.randint(1, 16)).astype(np.uint8))
    elif how == "truncate":
        del b[rng.randint(n):]
    elif how == "append":
        b += bytes(rng.randint(256, size=rng.randint(1, 64)).astype(np.uint8))
    return bytes(b)


RAW = ["bitflip", "byte", "zero", "swap", "insert", "truncate", "append"]
MODEL_KINDS = ([f"raw-{k}" for k in RAW] + [f"resealed-{k}" for k in RAW]
               + ["json-value"] * 3 + ["json-plain"] * 2 + ["json-array-field"] * 3
               + ["json-top", "json-drop", "json-dup", "json-text", "v2-unsealed",
                  "array-replace", "array-coherent", "array-drop", "array-extra",
                  "array-twice", "npy-header", "npy-header"])


# ----------------------------------------------------------------- outcomes
class Tally:
    def __init__(self):
        self.by_kind = collections.defaultdict(collections.Counter)
        self.violations = []
        self.defects = collections.Counter()
        self.count = 0

    def add(self, kind, outcome, detail=None, defect=False):
        self.count += 1
        self.by_kind[kind][outcome] += 1
        if defect:
            text = f"{kind}: {outcome}: {detail}"
            self.defects[f"{kind}: {outcome}"] += 1
            self.violations.append(text)
            print("VIOLATION", text[:700], flush=True)


def library_outcome(path, base, coherent, timeout, max_grow):
    """``(outcome, detail, defect)`` of loading the mutated model at ``path``."""
    before = rss_mb()
    try:
        with deadline(timeout), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = load_model(path)
    except Hang:
        return "hang", f"load took over {timeout} s", True
    except (ValueError, FileNotFoundError) as exc:
        grow = rss_mb() - before
        if grow > max_grow:
            return "huge-allocation", f"{grow:.0f} MB: {exc}", True
        if str(path) not in str(exc):
            return "bare-error", f"{type(exc).__name__}: {exc}", True
        return "refused", None, False
    except BaseException as exc:  # noqa: BLE001 - any other type is the finding
        if isinstance(exc, KeyboardInterrupt):
            raise
        tb = traceback.format_exc(limit=-2)
        return "bare-error", f"{type(exc).__name__}: {exc}\n{tb}", True
    grow = rss_mb() - before
    if grow > max_grow:
        return "huge-allocation", f"{grow:.0f} MB while loading", True
    try:
        with deadline(timeout), warnings.catch_warnings(), \
                contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            got = outputs(est, base["X"], base["pk"])
    except Hang:
        return "loaded-hangs", "predict hangs", True
    except Exception as exc:  # noqa: BLE001
        return ("edit-breaks-predict" if coherent else "loaded-broken",
                f"{type(exc).__name__}: {str(exc)[:200]}", not coherent)
    if same_outputs(got, base["ref"]):
        return "loaded-same", None, False
    if coherent:
        return "accepted-edit", None, False
    return "silent-different", "loaded and predicts differently", True


def run_cli(argv):
    """``(status, stdout, stderr)`` of ``kernlearn argv`` run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def cli_problem(code, err):
    """The violated CLI invariant, or None."""
    if code not in EXIT_CODES or code == 1:
        return f"exit {code}: {err.strip()[-400:]}"
    if "Traceback" in err or '\n  File "' in err:
        return f"traceback: {err[-400:]}"
    lines = [ln for ln in err.splitlines() if ln.startswith("kernlearn: error")]
    if code and len(lines) != 1:
        return f"{len(lines)} error lines for exit {code}: {err[-400:]}"
    return None


# ------------------------------------------------------------------- bases
def make_csv(rng, kind, n=40, d=4):
    X = np.round(rng.randn(n, d), 4)
    m = X @ rng.randn(d)
    y = np.round(3 * m + 1, 4) if kind == "regression" else np.where(m > 0, "yes", "no")
    lines = [",".join([f"f{j}" for j in range(d)] + ["label"])]
    lines += [",".join([repr(float(v)) for v in X[i]] + [str(y[i])]) for i in range(n)]
    return "\n".join(lines) + "\n"


def fit_bases(seed, per_estimator, tmp, log):
    bases = []
    for name in SPACES:
        got, k = 0, 0
        while got < per_estimator and k < 4 * per_estimator:
            case = seed * 1000 + k
            k += 1
            _, params, data, est, X, y, task, fit_kw = draw_case(name, case)
            try:
                with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                    warnings.simplefilter("ignore")
                    est.fit(X, y, **fit_kw)
                    pk = {"task_index": task} if task is not None else {}
                    ref = outputs(est, X, pk)
                path = tmp / f"{name}-{case}.npz"
                save_model(est, path)
            except Exception as exc:  # noqa: BLE001 - that case is fuzz_options' business
                if log:
                    print(f"  skip {name} case {case}: {type(exc).__name__}: {exc}"[:200])
                continue
            tags = [t for t, on in (("sparse", sp.issparse(X)),
                                    ("precomputed", isinstance(X, list) or "precomputed"
                                     in (params.get("kernel"), params.get("kernels"))),
                                    ("multiclass", data["kind"] == "multiclass"),
                                    ("weights", "sample_weight" in fit_kw),
                                    ("tasks", task is not None)) if on]
            bases.append({"name": f"{name}#{case}", "path": path, "bytes": path.read_bytes(),
                          "X": X, "pk": pk, "ref": ref, "tags": tags})
            got += 1
            print(f"  base {name} case {case} {tags} ({len(bases[-1]['bytes'])} bytes)",
                  flush=True)
    return bases


def fit_cli_bases(rng, tmp):
    bases = []
    for est_name, kind in CLI_MODELS:
        csv = tmp / f"{est_name}.csv"
        csv.write_text(make_csv(rng, kind))
        model = tmp / f"{est_name}.model.npz"
        code, _, err = run_cli(["fit", csv, "--model", model, "--quiet", "-e", est_name])
        if code:
            print(f"  cli fit {est_name} failed: {err.strip()}")
            continue
        out = tmp / f"{est_name}.pred.csv"
        code, _, err = run_cli(["predict", csv, "--model", model, "--out", out])
        if code:
            print(f"  cli predict {est_name} failed: {err.strip()}")
            continue
        bases.append({"name": est_name, "csv": csv, "model": model, "bytes":
                      model.read_bytes(), "pred": out.read_text(), "kind": kind})
    return bases


# ------------------------------------------------------------ model rounds
def model_round(rng, base, tmp, tally, args):
    kind, data, coherent, what = mutate_model(rng, base["bytes"])
    path = tmp / "mutated.npz"
    path.write_bytes(data)
    outcome, detail, defect = library_outcome(path, base, coherent, args.timeout,
                                              args.max_grow)
    tally.add(kind, outcome, f"{base['name']} [{what}] {detail}", defect)
    if defect and args.keep:
        keep = Path(args.keep) / f"{len(tally.violations)}-{kind}.npz"
        keep.write_bytes(data)


def cli_model_round(rng, base, tmp, tally, args):
    kind, data, coherent, what = mutate_model(rng, base["bytes"])
    path = tmp / "mutated-cli.npz"
    path.write_bytes(data)
    out = tmp / "out.csv"
    out.unlink(missing_ok=True)
    try:
        with deadline(args.timeout):
            code, _, err = run_cli(["predict", base["csv"], "--model", path, "--out", out])
    except Hang:
        tally.add("cli:" + kind, "hang", base["name"], True)
        return
    problem = cli_problem(code, err)
    if problem and coherent and code == 1 and "internal error" in err:
        # a consistent rewrite of nonsense values: the estimator's predict fails on them
        tally.add("cli:" + kind, "edit-breaks-predict", f"{base['name']} [{what}] {problem}")
    elif problem:
        tally.add("cli:" + kind, "cli-defect", f"{base['name']} [{what}] {problem}", True)
    elif code == 0:
        same = out.read_text() == base["pred"]
        if same:
            tally.add("cli:" + kind, "exit0-same")
        elif coherent:
            tally.add("cli:" + kind, "accepted-edit")
        else:
            tally.add("cli:" + kind, "silent-different", f"{base['name']} [{what}]", True)
    else:
        if code not in (4, 5):
            # (a coherent edit of the stored label or column names: a data error)
            tally.add("cli:" + kind, f"exit{code}", f"{base['name']} [{what}] {err.strip()}",
                      not (coherent and code == 3))
        else:
            tally.add("cli:" + kind, f"exit{code}")


# ------------------------------------------------------------- data rounds
CELL_VALUES = ["nan", "NaN", "inf", "-inf", "abc", "", "1e400", "-1e400", " ", "1,5",
               "0x10", "1e-400", '"1.0"', "１"]


def mutate_csv(rng, text):
    """``(kind, bytes, expect)``; ``expect``: "same" (reads as the original),
    "refuse" (must be refused), "refuse-or-same" or "any" (no fixed answer)."""
    lines = text.splitlines()
    header, rows = lines[0].split(","), [ln.split(",") for ln in lines[1:]]
    d = len(header) - 1
    kind = rng.choice(["cell", "cell-label", "ragged-long", "ragged-short", "bom", "crlf",
                       "quoted-newline", "header-rename", "header-dup", "header-reorder",
                       "column-drop", "nul", "bad-utf8", "blank-line", "trailing-sep",
                       "quoted-number", "truncate"])
    i = rng.randint(len(rows))
    expect = "refuse"

    def join(h, rs, end="\n"):
        return (end.join([",".join(h)] + [",".join(r) for r in rs]) + end).encode()

    if kind == "cell":
        value = CELL_VALUES[rng.randint(len(CELL_VALUES))]
        rows[i][rng.randint(d)] = value
        if value == "1e-400":  # (underflows to 0.0: a number, read)
            expect = "any"
        if value == '"1.0"':
            expect = "any"
        return f"{kind}:{value or 'empty'}", join(header, rows), expect
    if kind == "cell-label":
        rows[i][d] = CELL_VALUES[rng.randint(len(CELL_VALUES))]
        return kind, join(header, rows), "refuse-or-same"
    if kind == "ragged-long":
        rows[i].append("1.0")
        return kind, join(header, rows), "refuse"
    if kind == "ragged-short":
        del rows[i][rng.randint(d + 1)]
        return kind, join(header, rows), "refuse"
    if kind == "bom":
        return kind, b"\xef\xbb\xbf" + join(header, rows), "same"
    if kind == "crlf":
        return kind, join(header, rows, "\r\n"), "same"
    if kind == "quoted-newline":
        rows[i][rng.randint(d)] = '"1.0\n2.0"'
        return kind, join(header, rows), "refuse"
    if kind == "header-rename":
        header[rng.randint(d)] = "renamed"
        return kind, join(header, rows), "refuse"
    if kind == "header-dup":
        j, k = rng.choice(d, 2, replace=False)
        header[j] = header[k]
        return kind, join(header, rows), "refuse"
    if kind == "header-reorder":
        perm = rng.permutation(d + 1)
        return (kind, join([header[p] for p in perm], [[r[p] for p in perm] for r in rows]),
                "same")
    if kind == "column-drop":
        j = rng.randint(d)
        return (kind, join(header[:j] + header[j + 1:], [r[:j] + r[j + 1:] for r in rows]),
                "refuse")
    if kind == "nul":
        b = bytearray(join(header, rows))
        b[rng.randint(len(b))] = 0
        return kind, bytes(b), "refuse"
    if kind == "bad-utf8":
        rows[i][rng.randint(d)] = "1.@@5"
        return kind, join(header, rows).replace(b"@@", b"\xff"), "refuse"
    if kind == "blank-line":
        rows.insert(i, [""])
        return kind, join(header, rows), "any"
    if kind == "trailing-sep":
        rows[i].append("")
        return kind, join(header, rows), "any"
    if kind == "quoted-number":
        j = rng.randint(d)
        rows[i][j] = '"' + rows[i][j] + '"'
        return kind, join(header, rows), "same"
    if kind == "truncate":
        b = join(header, rows)
        return kind, b[:rng.randint(len(lines[0]) + 2, len(b))], "any"
    raise AssertionError(kind)


NAMING = ("line", "row", "column", "header", "byte", "encoding", "utf", "binary", "NUL",
          "label", "names", "field", "value", "missing", "non-finite", "infinite")


def data_round(rng, base, tmp, tally, args):
    kind, data, expect = mutate_csv(rng, base["csv"].read_text())
    path = tmp / "mutated.csv"
    path.write_bytes(data)
    out = tmp / "out.csv"
    out.unlink(missing_ok=True)
    before = rss_mb()
    try:
        with deadline(args.timeout):
            code, _, err = run_cli(["predict", path, "--model", base["model"], "--out", out])
    except Hang:
        tally.add("csv:" + kind, "hang", base["name"], True)
        return
    if rss_mb() - before > args.max_grow:
        tally.add("csv:" + kind, "huge-allocation", base["name"], True)
    problem = cli_problem(code, err)
    tag = "csv:" + kind
    if problem:
        tally.add(tag, "cli-defect", f"{base['name']} {problem}", True)
        return
    if code == 0:
        got = out.read_text()
        if got == base["pred"]:
            tally.add(tag, "exit0-same", f"{base['name']} accepted, expected a refusal",
                      expect == "refuse")
        elif expect in ("same", "refuse-or-same", "refuse"):
            tally.add(tag, "silent-different", f"{base['name']} expected {expect}", True)
        else:
            tally.add(tag, "exit0-different")
        return
    if expect == "same":
        tally.add(tag, f"exit{code}", f"{base['name']} should read: {err.strip()}", True)
        return
    vague = not any(w.lower() in err.lower() for w in NAMING)
    bad_code = code not in (3, 5)
    tally.add(tag, f"exit{code}" + ("-vague" if vague else ""),
              f"{base['name']} {err.strip()}", bad_code or (vague and kind.startswith("cell")))


def npy_round(rng, base, tmp, tally, args):
    """A ``.npy`` / ``.npz`` data file with a tampered header or content."""
    from kernlearn.datasets import load_data_file

    lines = base["csv"].read_text().splitlines()[1:]
    table = np.array([[float(v) if v not in ("yes", "no") else float(v == "yes")
                       for v in ln.split(",")] for ln in lines])
    how = rng.choice(["npy-huge", "npy-huge2", "npy-object", "npy-fortran", "npy-negative",
                      "npy-truncate", "npz-huge", "npz-truncate", "npy-1d", "npy-nan"])
    path = tmp / ("mutated.npz" if how.startswith("npz") else "mutated.npy")
    if how in ("npy-huge", "npy-huge2", "npy-object", "npy-fortran", "npy-negative"):
        sub = {"npy-huge": 0, "npy-huge2": 1, "npy-object": 2, "npy-fortran": 3,
               "npy-negative": 4}[how]
        path.write_bytes(npy_with_header(_Fixed(sub), table))
    elif how == "npy-truncate":
        b = io.BytesIO()
        np.save(b, table)
        path.write_bytes(b.getvalue()[:rng.randint(8, len(b.getvalue()))])
    elif how == "npz-huge":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("X.npy", npy_with_header(_Fixed(0), table))
        path.write_bytes(buf.getvalue())
    elif how == "npz-truncate":
        b = io.BytesIO()
        np.savez_compressed(b, X=table)
        path.write_bytes(b.getvalue()[:rng.randint(4, len(b.getvalue()))])
    elif how == "npy-1d":
        np.save(path, table.ravel())
    else:
        t = table.copy()
        t[rng.randint(len(t)), rng.randint(t.shape[1] - 1)] = np.nan
        np.save(path, t)
    before = rss_mb()
    try:
        with deadline(args.timeout):
            load_data_file(path)
        outcome, detail, defect = "read", None, how not in ("npy-fortran",)
    except Hang:
        outcome, detail, defect = "hang", None, True
    except ValueError as exc:
        outcome, detail = "refused", str(exc)
        defect = str(path) not in str(exc)
    except BaseException as exc:  # noqa: BLE001
        if isinstance(exc, KeyboardInterrupt):
            raise
        outcome, detail, defect = "bare-error", f"{type(exc).__name__}: {exc}", True
    if rss_mb() - before > args.max_grow:
        outcome, defect = "huge-allocation", True
    if how == "npy-nan" and outcome == "read":
        # (NaN in a .npy table: the estimators refuse it at predict; here it is data)
        defect = False
    if how == "npy-fortran" and outcome == "read":
        defect = False
    tally.add("data:" + how, outcome, detail, defect)


class _Fixed:
    """A stand-in random generator whose ``randint`` returns a chosen value."""

    def __init__(self, value):
        self.value = value

    def randint(self, *args, **kwargs):
        return self.value


# -------------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=3.0, help="time budget (CPU + waits)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-estimator", type=int, default=2,
                    help="fitted models per estimator")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per load")
    ap.add_argument("--max-grow", type=float, default=1024.0,
                    help="MB a load may grow the process by")
    ap.add_argument("--log", action="store_true")
    ap.add_argument("--keep", help="folder to copy the model files of violations to")
    args = ap.parse_args(argv)
    rng = np.random.RandomState(args.seed)
    tally = Tally()
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        print("fitting the models to tamper with", flush=True)
        bases = fit_bases(args.seed, args.per_estimator, tmp, args.log)
        cli_bases = fit_cli_bases(rng, tmp)
        print(f"{len(bases)} library models, {len(cli_bases)} command-line models; "
              f"setup {time.monotonic() - start:.0f} s", flush=True)
        end = time.monotonic() + 60 * args.minutes  # (the budget is for the tampering)
        rounds = 0
        while time.monotonic() < end:
            r = rng.rand()
            if r < 0.55:
                model_round(rng, bases[rng.randint(len(bases))], tmp, tally, args)
            elif r < 0.7:
                cli_model_round(rng, cli_bases[rng.randint(len(cli_bases))], tmp, tally,
                                args)
            elif r < 0.93:
                data_round(rng, cli_bases[rng.randint(len(cli_bases))], tmp, tally, args)
            else:
                npy_round(rng, cli_bases[rng.randint(len(cli_bases))], tmp, tally, args)
            rounds += 1
            if rounds % 200 == 0:
                print(f"  {rounds} files, {len(tally.violations)} violations, "
                      f"{time.monotonic() - start:.0f} s", flush=True)
    print(f"\n{tally.count} mutated files in {time.monotonic() - start:.0f} s "
          f"(seed {args.seed}); outcomes by kind:")
    totals = collections.Counter()
    for kind in sorted(tally.by_kind):
        counts = tally.by_kind[kind]
        totals.update(counts)
        print(f"  {kind:28s} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print("totals: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())))
    print(f"{len(tally.violations)} violations" + (": " + ", ".join(
        f"{k} x{n}" for k, n in tally.defects.most_common()) if tally.defects else ""))
    return 1 if tally.violations else 0


if __name__ == "__main__":
    sys.exit(main())
