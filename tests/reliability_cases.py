"""The bad-input matrix of the ``kernlearn`` command and of model files.

Each case is ``Case(id, group, what, argv, code, message)``: the command
line (``{w}`` is the work folder), the exit status it must end with and a
fragment its one-line error must contain.  ``make_workspace`` writes the
small files the cases use.  ``tests/test_reliability.py`` runs every case;
``scripts/reliability.py`` runs them through real subprocesses and writes
RELIABILITY.md.
"""

import bz2
import gzip
import hashlib
import io
import json
import lzma
import zipfile
from collections import namedtuple
from pathlib import Path

import numpy as np
from reliability_probe import probe_cases, write_probe_files
from sklearn.datasets import dump_svmlight_file

# ``reference``: for the "same" group, the command whose output this one must
# reproduce exactly (exit 0 both); ``None`` for refusals.
Case = namedtuple("Case", "id group what argv code message reference", defaults=(None,))


def _svm_text(X, y, zero_based=False):
    buf = io.BytesIO()
    dump_svmlight_file(X, y, buf, zero_based=zero_based)
    return buf.getvalue()


def make_workspace(w):
    """Write the data files and models the cases need into folder ``w``."""
    from kernlearn.cli import main

    w = Path(w)
    rng = np.random.default_rng(0)
    X = np.round(rng.standard_normal((60, 8)), 3)
    X[:, 0] = 1.0 + np.abs(X[:, 0])  # a 1-based file always uses its first column
    y = np.where(X[:, 1] + X[:, 2] > 0, 1, -1)
    yr = X[:, 1] - 2 * X[:, 3]
    raw = _svm_text(X, y)
    (w / "train.svm").write_bytes(raw)
    (w / "train.svm.bz2").write_bytes(bz2.compress(raw))
    (w / "train.svm.gz").write_bytes(gzip.compress(raw))
    (w / "train.svm.xz").write_bytes(lzma.compress(raw))
    (w / "reg.svm").write_bytes(_svm_text(X, yr))
    (w / "zero.svm").write_bytes(_svm_text(X, y, zero_based=True))
    Xw = np.hstack([X, np.ones((60, 4))])
    (w / "wide.svm").write_bytes(_svm_text(Xw, y))
    (w / "drift.svm").write_bytes(_svm_text(X * 100, y))
    (w / "newlabels.svm").write_bytes(_svm_text(X, np.where(y > 0, 2, 3)))
    (w / "oneclass.svm").write_bytes(_svm_text(X, np.ones(60)))
    (w / "onerow.svm").write_bytes(_svm_text(X[:1], y[:1]))
    (w / "inf.svm").write_text("1 1:inf 2:1\n-1 1:2 2:1\n")
    (w / "empty.svm").write_text("")
    (w / "corrupt.svm").write_text("1 1:abc 2:0.5\n")
    (w / "truncated.svm.bz2").write_bytes(bz2.compress(raw)[:200])
    (w / "garbage.svm.gz").write_bytes(b"this is not gzip data at all")
    (w / "garbage.svm.xz").write_bytes(b"\xfd7zXZ\x00 broken")
    (w / "binary.svm").write_bytes(bytes(range(256)) * 4)
    (w / "folder").mkdir(exist_ok=True)

    names = [f"f{j}" for j in range(8)]
    header = ",".join(names + ["target"])
    rows = "\n".join(",".join(f"{v:g}" for v in r) + f",{t}" for r, t in zip(X, y))
    (w / "train.csv").write_text(header + "\n" + rows + "\n")
    (w / "reg.csv").write_text(
        header
        + "\n"
        + "\n".join(",".join(f"{v:g}" for v in r) + f",{t:g}" for r, t in zip(X, yr))
        + "\n"
    )
    (w / "ragged.csv").write_text(header + "\n1,2,3\n" + rows + "\n")
    (w / "text.csv").write_text(header + "\n" + rows.replace("0.", "x.", 1) + "\n")
    (w / "header_only.csv").write_text(header + "\n")
    (w / "nan.csv").write_text(header + "\n" + "nan," + rows.split(",", 1)[1] + "\n")
    (w / "missing.csv").write_text(header + "\n" + "," + rows.split(",", 1)[1] + "\n")
    (w / "narrow.csv").write_text(
        "\n".join(",".join(f"{v:g}" for v in r[:5]) for r in X) + "\n"
    )
    (w / "unlabelled.csv").write_text(
        "\n".join(",".join(f"{v:g}" for v in r) for r in X) + "\n"
    )
    (w / "textlabels.csv").write_text(
        header
        + "\n"
        + "\n".join(",".join(f"{v:g}" for v in r) + f",c{t}" for r, t in zip(X, y))
        + "\n"
    )
    tasks = np.arange(60) % 3
    (w / "tasks.csv").write_text(
        header.replace(",target", ",task,target")
        + "\n"
        + "\n".join(
            ",".join(f"{v:g}" for v in r) + f",t{k},{t:g}"
            for r, k, t in zip(X, tasks, yr)
        )
        + "\n"
    )
    (w / "latin1.csv").write_bytes("caf\xe9,1\n1,2\n".encode("latin-1"))
    np.save(w / "train.npy", np.hstack([X, y[:, None]]))
    np.save(w / "vector.npy", X[:, 0])
    np.save(
        w / "objects.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True
    )
    np.savez(w / "train.npz", X=X, y=y)
    np.savez(w / "noX.npz", A=X)
    np.savez(w / "badY.npz", X=X, y=y[:10])
    (w / "train.npy.gz").write_bytes(gzip.compress((w / "train.npy").read_bytes()))
    (w / "bad.toml").write_text("estimator = \n")
    (w / "extra.toml").write_text('estimator = "fgm"\nsolver = "x"\n')
    (w / "flat.toml").write_text('estimator = "fgm"\nparams = 3\n')
    (w / "good.toml").write_text('estimator = "fgm"\n[params]\nB = 2\n')
    _write_csv_variants(w, X, y, names)

    q = ["-q"]
    for argv in (
        [
            "fit",
            str(w / "train.svm"),
            "-e",
            "fgm",
            "-p",
            "B=2",
            "-m",
            str(w / "model.npz"),
        ]
        + q,
        [
            "fit",
            str(w / "reg.svm"),
            "-e",
            "fgm-regressor",
            "-p",
            "B=2",
            "-m",
            str(w / "reg.npz"),
        ]
        + q,
        [
            "fit",
            str(w / "train.csv"),
            "-e",
            "fgm",
            "-p",
            "B=2",
            "-m",
            str(w / "csv.npz"),
        ]
        + q,
        [
            "fit",
            str(w / "reg.csv"),
            "-e",
            "fgm-regressor",
            "-p",
            "B=2",
            "-m",
            str(w / "regcsv.npz"),
        ]
        + q,
    ):
        if main(argv) != 0:
            raise RuntimeError(f"workspace model failed: {argv}")
    argv = ["fit", str(w / "tasks.csv"), "--task-column", "task", "-e",
            "infinite-regressor", "-p", "max_features=3", "-p", "n_candidates=5",
            "-p", "random_state=0", "-m", str(w / "tasks.npz"), "-q"]
    if main(argv) != 0:
        raise RuntimeError(f"workspace model failed: {argv}")
    make_tampered(w)
    _write_composite(w, X, y)
    write_probe_files(w, X, y, names)


def _write_csv_variants(w, X, y, names):
    """CSV files in other layouts, and LIBSVM/CSV files with faults of issue 23."""
    cols = names + ["target"]
    table = [[f"{v:g}" for v in r] + [str(t)] for r, t in zip(X, y)]

    def write(name, header, rows, sep=","):
        lines = ([sep.join(header)] if header else []) + [sep.join(r) for r in rows]
        (w / name).write_text("\n".join(lines) + "\n")

    # the label first and the features in reverse: same data, other order
    order = [8] + list(range(7, -1, -1))
    write("reordered.csv", [cols[j] for j in order],
          [[r[j] for j in order] for r in table])
    write("semicolon.csv", cols, table, sep=";")
    write("renamed.csv", [c.replace("f3", "g3") for c in cols], table)
    write("extracol.csv", cols + ["note"], [r + ["x"] for r in table])
    write("numheader.csv", [str(j) for j in range(9)], table)
    write("dupcol.csv", cols[:7] + ["f0", "target"], table)
    qlabel = [list(r) for r in table]
    qlabel[4][-1] = "?"
    write("qlabel.csv", cols, qlabel)
    qfeat = [list(r) for r in table]
    qfeat[6][2] = "?"
    write("qfeature.csv", cols, qfeat)
    write("table", cols, table)  # a CSV file without extension
    (w / "hugeindex.svm").write_text("1 1:0.5 2000000000:1\n-1 1:1 2:1\n")
    (w / "nocolon.svm").write_text("1 1:0.5 2:1\n-1 1:1 abc\n")


def _write_composite(w, X, y):
    """A pipeline saved by kernlearn.io (valid, but not a model of `kernlearn fit`)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from kernlearn import FGMClassifier
    from kernlearn.io import save_model

    pipe = make_pipeline(StandardScaler(), FGMClassifier(B=2)).fit(X, y)
    save_model(pipe, w / "pipe.skops")
    # class_weight given as JSON (text keys) on float LIBSVM labels, and the
    # same weights given in Python: the same model
    from kernlearn.cli import main
    from kernlearn.io import load_model

    argv = ["fit", str(w / "train.svm"), "-e", "fgm", "-p", "B=2", "-p",
            'class_weight={"1": 5}', "-m", str(w / "cw.npz"), "-q"]
    if main(argv) != 0:
        raise RuntimeError(f"workspace model failed: {argv}")
    meta = load_model(w / "model.npz", return_metadata=True)[1]
    Xs, ys, _ = __import__("kernlearn.datasets").datasets.load_data_file(
        w / "train.svm")
    ref = FGMClassifier(B=2, class_weight={1.0: 5}).fit(Xs, ys)
    save_model(ref, w / "cw_ref.npz", metadata=meta)


# ----------------------------------------------------------- tampered models
def _read_npz(path):
    with np.load(path, allow_pickle=False) as d:
        arrays = {k: d[k] for k in d.files}
    meta = json.loads(bytes(arrays.pop("__meta__")).decode())
    return meta, arrays


def _write_npz(path, meta, arrays, seal=True):
    """Write a model file; sealed like ``save_model``'s so that a test reaches
    the checks behind the seal (an attacker can recompute a digest too)."""
    from kernlearn.io import _seal

    arrays = dict(arrays)
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    Path(path).write_bytes(_seal(buf.getvalue()) if seal else buf.getvalue())


def _node(meta, attr):
    return meta["state"]["$dict"][attr]


def _rehash(meta, arrays):
    """Recompute checksums so a test reaches the checks behind them."""

    def walk(node):
        if isinstance(node, dict):
            if "$array" in node and node["$array"] in arrays:
                a = np.ascontiguousarray(arrays[node["$array"]])
                node["sha256"] = hashlib.sha256(a.tobytes()).hexdigest()
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(meta)


def make_tampered(w):
    """Write the tampered copies of ``model.npz`` used by the ``T`` cases."""
    w = Path(w)
    src = w / "model.npz"

    def variant(name, edit, rehash=False):
        meta, arrays = _read_npz(src)
        edit(meta, arrays)
        if rehash:
            _rehash(meta, arrays)
        _write_npz(w / name, meta, arrays)

    def coef_key(meta):
        return _node(meta, "coef_")["$array"]

    def flip(meta, arrays):
        k = coef_key(meta)
        arrays[k] = arrays[k].copy()
        arrays[k].flat[0] += 1.0

    def nan(meta, arrays):
        k = coef_key(meta)
        arrays[k] = np.full_like(arrays[k], np.nan)

    variant("t_flip.npz", flip)
    variant("t_nan.npz", nan, rehash=True)
    variant("t_class.npz", lambda m, a: m.update({"class": "Ridge"}))
    variant("t_version.npz", lambda m, a: m.update({"version": 99}))
    variant("t_shape.npz", lambda m, a: _node(m, "coef_").update({"shape": [1, 3]}))
    variant("t_dtype.npz", lambda m, a: _node(m, "coef_").update({"dtype": "<i8"}))
    variant("t_missing.npz", lambda m, a: a.pop(coef_key(m)))
    variant("t_extra.npz", lambda m, a: a.update({"payload": np.zeros(3)}))
    variant(
        "t_object.npz",
        lambda m, a: m["state"]["$dict"].update(
            {"hook_": {"$object": "builtins/eval", "state": {"$dict": {}}}}
        ),
    )
    variant(
        "t_predict.npz",
        lambda m, a: m["state"]["$dict"].update({"predict": "not a method"}),
    )
    variant("t_param.npz", lambda m, a: m["params"]["$dict"].update({"C": -5.0}))
    variant(
        "t_unknown_param.npz", lambda m, a: m["params"]["$dict"].update({"evil": 1})
    )
    variant(
        "t_function.npz",
        lambda m, a: m["state"]["$dict"].update({"k_": {"$function": "os/system"}}),
    )
    variant(
        "t_tag.npz",
        lambda m, a: m["state"]["$dict"].update({"x_": {"$pickle": "gASV"}}),
    )

    def nofit(meta, arrays):
        meta["state"]["$dict"] = {}
        for k in [k for k in arrays if k.startswith("state.")]:
            del arrays[k]

    variant("t_nofit.npz", nofit)
    # meta that is not JSON, and an object array smuggled in
    meta, arrays = _read_npz(src)
    arrays["__meta__"] = np.frombuffer(b"{not json", dtype=np.uint8)
    with open(w / "t_json.npz", "wb") as fh:
        np.savez(fh, **arrays)
    meta, arrays = _read_npz(src)
    arrays[coef_key(meta)] = np.array([None, {"x": 1}], dtype=object)
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with open(w / "t_pickle.npz", "wb") as fh:
        np.savez(fh, **arrays)
    data = src.read_bytes()
    (w / "t_truncated.npz").write_bytes(data[: len(data) // 2])

    def bit(name, pos):
        flipped = bytearray(data)
        flipped[pos] ^= 0x10
        (w / name).write_bytes(bytes(flipped))

    bit("t_bit_first.npz", 0)
    bit("t_bit_middle.npz", len(data) // 2)
    bit("t_bit_digest.npz", len(data) - 1)
    bit("t_bit_seal.npz", data.rfind(b"kernlearn-seal"))
    # a member whose .npy header declares 10**12 floats over 16 bytes
    from kernlearn.io import _seal

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)}
    )
    buf = io.BytesIO()
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(buf, "w") as zout:
        for name in zin.namelist():
            zout.writestr(name, zin.read(name))
        zout.writestr("liar.npy", header.getvalue() + bytes(16))
    (w / "t_bigheader.npz").write_bytes(_seal(buf.getvalue()))
    with zipfile.ZipFile(w / "t_nometa.npz", "w") as z:
        z.writestr("coef_.npy", b"")
    (w / "t_garbage.npz").write_bytes(b"PK\x03\x04 garbage")


def cases():
    """All cases, CLI first then tampered model files.

    Returns
    -------
    cases : list of Case
    """
    W = "{w}"
    m = f"{W}/model.npz"
    fit = ["fit", f"{W}/train.svm", "-q", "-m", f"{W}/out.npz"]
    fite = fit + ["-e", "fgm"]
    c = []

    def add(group, what, argv, code, message, reference=None):
        prefix = {"tampered": "T", "same": "S"}.get(group, "C")
        n = sum(x.id[0] == prefix for x in c) + 1
        c.append(Case(f"{prefix}{n:02d}", group, what, argv, code, message, reference))

    # usage
    add("usage", "no command", [], 2, "required")
    add("usage", "unknown command", ["frobnicate"], 2, "invalid choice")
    add("usage", "unknown flag", fite + ["--frob"], 2, "unrecognized arguments")
    add(
        "usage",
        "fit without --model",
        ["fit", f"{W}/train.svm", "-e", "fgm"],
        2,
        "--model",
    )
    add("usage", "fit without --estimator", fit, 2, "no estimator given")
    add("usage", "unknown estimator", fit + ["-e", "svm"], 2, "unknown estimator 'svm'")
    add(
        "usage",
        "unknown parameter",
        fite + ["-p", "gamma=1"],
        2,
        "unknown parameter 'gamma'",
    )
    add("usage", "parameter without =", fite + ["-p", "B"], 2, "key=value")
    add(
        "usage",
        "parameter of wrong type",
        fite + ["-p", "B=abc"],
        2,
        "invalid parameter",
    )
    add("usage", "parameter out of range", fite + ["-p", "C=-1"], 2, "'C' parameter")
    add("usage", "invalid loss name", fite + ["-p", "loss=nope"], 2, "'loss' parameter")
    add(
        "usage",
        "unknown family name",
        fite + ["-p", "family=nope"],
        2,
        "Unknown family 'nope'",
    )
    add(
        "usage",
        "family object without name",
        fite + ["-p", 'family={"degree": 2}'],
        2,
        'needs a "name"',
    )
    add(
        "usage",
        "missing config file",
        fit + ["--config", f"{W}/none.toml"],
        2,
        "config file not found",
    )
    add(
        "usage",
        "malformed TOML",
        fit + ["--config", f"{W}/bad.toml"],
        2,
        "cannot read config file",
    )
    add(
        "usage",
        "unknown config key",
        fit + ["--config", f"{W}/extra.toml"],
        2,
        "unknown key",
    )
    add(
        "usage",
        "config params not a table",
        fit + ["--config", f"{W}/flat.toml"],
        2,
        "must be a table",
    )
    add(
        "usage",
        "bad --zero-based value",
        fite + ["--zero-based", "maybe"],
        2,
        "invalid choice",
    )
    add(
        "usage",
        "--proba on a squared-hinge model",
        ["predict", f"{W}/train.svm", "-m", m, "--proba"],
        2,
        "no predict_proba",
    )
    add(
        "usage",
        "bad select format",
        ["select", m, "--format", "xml"],
        2,
        "invalid choice",
    )
    add("usage", "report without model", ["report"], 2, "required")
    # data
    add(
        "data",
        "missing data file",
        ["fit", f"{W}/nope.svm", "-e", "fgm", "-m", f"{W}/o.npz"],
        3,
        "data file not found",
    )
    add(
        "data",
        "directory as data",
        ["fit", f"{W}/folder", "-e", "fgm", "-m", f"{W}/o.npz"],
        3,
        "is a directory",
    )
    for name, msg in (
        ("empty.svm", "is empty"),
        ("corrupt.svm", "corrupt svmlight"),
        ("truncated.svm.bz2", "cannot read"),
        ("garbage.svm.gz", "cannot read"),
        ("garbage.svm.xz", "cannot read"),
        ("binary.svm", "binary data"),
        ("inf.svm", "NaN or infinite"),
        ("ragged.csv", "fields"),
        ("text.csv", "is not a number"),
        ("header_only.csv", "no data rows"),
        ("nan.csv", "missing value"),
        ("missing.csv", "row 2, column f0: missing value"),
        ("latin1.csv", "not a UTF-8"),
        ("vector.npy", "2-D"),
        ("objects.npy", "pickle"),
        ("noX.npz", "no array named 'X'"),
        ("badY.npz", "y has shape"),
        ("train.npy.gz", "compressed NumPy"),
    ):
        add(
            "data",
            f"fit on {name}",
            ["fit", f"{W}/{name}", "-e", "fgm", "-q", "-m", f"{W}/o.npz"],
            3,
            msg,
        )
    add(
        "data",
        "CSV --label unknown column",
        ["fit", f"{W}/train.csv", "-e", "fgm", "-m", f"{W}/o.npz", "--label", "nope"],
        3,
        "no such column",
    )
    add(
        "data",
        "CSV --label index out of range",
        ["fit", f"{W}/train.csv", "-e", "fgm", "-m", f"{W}/o.npz", "--label", "40"],
        3,
        "out of range",
    )
    add(
        "data",
        "--label on a LIBSVM file",
        fite + ["--label", "0"],
        3,
        "--label applies to CSV",
    )
    add(
        "data",
        "unknown data set name",
        ["fit", "mnist", "-e", "fgm", "-m", f"{W}/o.npz"],
        3,
        "not a data set name",
    )
    add(
        "data",
        "data set without a test part",
        ["predict", "wine:test", "-m", m],
        3,
        "no test part",
    )
    add(
        "data",
        "non-tabular data set",
        ["fit", "brodatz", "-e", "fgm", "-m", f"{W}/o.npz"],
        3,
        "not a tabular data set",
    )
    add(
        "data",
        "text labels for a regressor",
        ["fit", f"{W}/textlabels.csv", "-e", "fgm-regressor", "-q", "-m", f"{W}/o.npz"],
        3,
        "numeric targets",
    )
    add(
        "data",
        "continuous targets for a classifier",
        ["fit", f"{W}/reg.svm", "-e", "fgm", "-q", "-m", f"{W}/o.npz"],
        3,
        "use a regressor",
    )
    add(
        "data",
        "evaluate on an unlabelled table",
        ["evaluate", f"{W}/unlabelled.csv", "--no-header", "-m", f"{W}/csv.npz"],
        3,
        "no labels",
    )
    add(
        "data",
        "report --data unlabelled",
        [
            "report",
            f"{W}/csv.npz",
            "--data",
            f"{W}/unlabelled.csv",
            "--no-header",
            "-o",
            f"{W}/r.html",
        ],
        3,
        "no labels",
    )
    add(
        "usage",
        "tasks for an estimator without task_index",
        ["fit", f"{W}/tasks.csv", "--task-column", "task", "-e", "fgm-regressor",
         "-q", "-m", f"{W}/o.npz"],
        2,
        "does not learn from tasks",
    )
    add(
        "data",
        "multitask model on a file without its task column",
        ["predict", f"{W}/reg.csv", "-m", f"{W}/tasks.npz"],
        3,
        "--task-column 'task': no such column",
    )
    # fit
    add(
        "fit",
        "single class",
        ["fit", f"{W}/oneclass.svm", "-e", "fgm", "-q", "-m", f"{W}/o.npz"],
        6,
        "single class",
    )
    add(
        "fit",
        "one sample",
        ["fit", f"{W}/onerow.svm", "-e", "fgm-regressor", "-q", "-m", f"{W}/o.npz"],
        6,
        "minimum of 2",
    )
    # output
    add(
        "output",
        "--model in a missing folder (checked before the fit)",
        fite + ["-m", f"{W}/no/such/m.npz"],
        7,
        "does not exist",
    )
    add(
        "output",
        "--model is a directory",
        fite + ["-m", f"{W}/folder"],
        7,
        "is a directory",
    )
    add(
        "output",
        "--model in an unwritable place",
        fite + ["-m", "/proc/m.npz"],
        7,
        "cannot write model",
    )
    add(
        "output",
        "predict --out in a missing folder",
        ["predict", f"{W}/train.svm", "-m", m, "-o", f"{W}/no/p.txt"],
        7,
        "does not exist",
    )
    add(
        "output",
        "evaluate --out is a directory",
        ["evaluate", f"{W}/train.svm", "-m", m, "-o", f"{W}/folder"],
        7,
        "is a directory",
    )
    add(
        "output",
        "select --out in a missing folder",
        ["select", m, "-o", f"{W}/no/s.csv"],
        7,
        "does not exist",
    )
    add(
        "output",
        "report --out in a missing folder",
        ["report", m, "-o", f"{W}/no/r.html"],
        7,
        "does not exist",
    )
    add(
        "output",
        "demo --out is a file",
        ["demo", "--out", f"{W}/train.svm"],
        7,
        "cannot create folder",
    )
    # model files
    add(
        "model",
        "missing model file",
        ["predict", f"{W}/train.svm", "-m", f"{W}/none.npz"],
        4,
        "model file not found",
    )
    add(
        "model",
        "model is a directory",
        ["predict", f"{W}/train.svm", "-m", f"{W}/folder"],
        4,
        "is a directory",
    )
    add(
        "model",
        "model is a data file",
        ["predict", f"{W}/train.svm", "-m", f"{W}/train.svm"],
        4,
        "not a readable",
    )
    add(
        "model",
        "model is a plain NumPy archive",
        ["select", f"{W}/train.npz"],
        4,
        "not a readable",
    )
    # mismatches
    add(
        "mismatch",
        "wider LIBSVM file than the model",
        ["predict", f"{W}/wide.svm", "-m", m],
        5,
        "beyond the model's 8 features",
    )
    add(
        "mismatch",
        "0-based file on a 1-based model",
        ["predict", f"{W}/zero.svm", "-m", m],
        5,
        "uses feature index 0",
    )
    add(
        "mismatch",
        "CSV of another width",
        ["predict", f"{W}/narrow.csv", "--no-header", "-m", f"{W}/csv.npz"],
        5,
        "has 5 columns",
    )
    add(
        "mismatch",
        "values unlike the training data",
        ["predict", f"{W}/drift.svm", "-m", m],
        5,
        "unlike the training values",
    )
    add(
        "mismatch",
        "labels never seen in training",
        ["evaluate", f"{W}/newlabels.svm", "-m", m],
        5,
        "never seen in training",
    )
    add(
        "mismatch",
        "LIBSVM file on a CSV-trained model",
        ["predict", f"{W}/train.svm", "-m", f"{W}/csv.npz"],
        5,
        "libsvm file",
    )
    add(
        "mismatch",
        "text labels on a regression model",
        ["evaluate", f"{W}/textlabels.csv", "-m", f"{W}/regcsv.npz"],
        5,
        "the model is a regressor",
    )
    add(
        "mismatch",
        "real data set of another width",
        ["predict", "wine", "-m", m],
        5,
        "has 13 features; the model expects 8",
    )
    add(
        "mismatch",
        "CSV table on a LIBSVM model",
        ["predict", f"{W}/train.csv", "-m", m],
        5,
        "csv file",
    )

    _issue_cases(add, W, m)

    # tampered model files, read by `kernlearn predict`
    for name, msg in (
        ("t_flip", "checksum mismatch"),
        ("t_nan", "contains NaN"),
        ("t_class", "not an allowed kernlearn estimator"),
        ("t_version", "format version 99"),
        ("t_shape", "has shape"),
        ("t_dtype", "has dtype"),
        ("t_missing", "missing from the file"),
        ("t_extra", "unexpected arrays"),
        ("t_object", "not in the allow-list"),
        ("t_predict", "'predict' is not allowed"),
        ("t_param", "invalid parameters"),
        ("t_unknown_param", "invalid parameters"),
        ("t_function", "not in the allow-list"),
        ("t_tag", "unknown value tag"),
        ("t_nofit", "no fitted attributes"),
        ("t_json", "not a readable"),
        ("t_pickle", "not a readable"),
        ("t_truncated", "not a readable"),
        ("t_nometa", "no __meta__"),
        ("t_garbage", "not a readable"),
        ("t_bit_first", "checksum mismatch"),
        ("t_bit_middle", "checksum mismatch"),
        ("t_bit_digest", "checksum mismatch"),
        ("t_bit_seal", "seal is missing"),
        ("t_bigheader", "declares"),
    ):
        add(
            "tampered",
            name,
            ["predict", f"{W}/train.svm", "-m", f"{W}/{name}.npz"],
            4,
            msg,
        )
    # the same answer whatever the layout of the CSV file
    csvm = f"{W}/csv.npz"
    ref = ["predict", f"{W}/train.csv", "-m", csvm]
    add("same", "columns in another order (matched by name)",
        ["predict", f"{W}/reordered.csv", "-m", csvm], 0, "", ref)
    add("same", "';' as separator (sniffed)",
        ["predict", f"{W}/semicolon.csv", "-m", csvm], 0, "", ref)
    add("same", "';' given with --sep",
        ["predict", f"{W}/semicolon.csv", "--sep", ";", "-m", csvm], 0, "", ref)
    add("same", "CSV without extension, --format csv",
        ["predict", f"{W}/table", "--format", "csv", "-m", csvm], 0, "", ref)
    add("same", "class_weight keys given as text on LIBSVM labels",
        ["predict", f"{W}/train.svm", "-m", f"{W}/cw.npz"], 0, "",
        ["predict", f"{W}/train.svm", "-m", f"{W}/cw_ref.npz"])
    probe_cases(add, W)
    return c


def _issue_cases(add, W, m):
    """Refusals added for issues 23 and 27 (CSV by name, outputs, faulty files)."""
    csvm = f"{W}/csv.npz"
    add("mismatch", "CSV with a renamed column",
        ["predict", f"{W}/renamed.csv", "-m", csvm], 5, "has no column 'f3'")
    add("mismatch", "CSV with a column the model does not know",
        ["predict", f"{W}/extracol.csv", "-m", csvm], 5,
        "'note' is not a feature of the model")
    add("data", "numeric header line",
        ["fit", f"{W}/numheader.csv", "-e", "fgm", "-q", "-m", f"{W}/o.npz"], 3,
        "first line is all numbers")
    add("data", "'?' as a label",
        ["fit", f"{W}/qlabel.csv", "-e", "fgm", "-q", "-m", f"{W}/o.npz"], 3,
        "row 6, column target: missing value")
    add("data", "'?' as a feature value",
        ["predict", f"{W}/qfeature.csv", "-m", csvm], 3,
        "row 8, column f2: missing value")
    add("data", "duplicate column name",
        ["fit", f"{W}/dupcol.csv", "-e", "fgm", "-q", "-m", f"{W}/o.npz"], 3,
        "'f0' appears twice")
    add("data", "CSV without extension read as LIBSVM",
        ["fit", f"{W}/table", "-e", "fgm", "-q", "-m", f"{W}/o.npz"], 3,
        "looks like a CSV table")
    add("data", "LIBSVM token without colon",
        ["fit", f"{W}/nocolon.svm", "-e", "fgm", "-q", "-m", f"{W}/o.npz"], 3,
        "line 2: token 'abc' is not index:value")
    add("data", "LIBSVM index of 2e9 over 4 values",
        ["fit", f"{W}/hugeindex.svm", "-e", "fgm", "-q", "-m", f"{W}/o.npz"], 3,
        "renumber the features")
    add("data", "/dev/zero as data",
        ["fit", "/dev/zero", "-e", "fgm", "-q", "-m", f"{W}/o.npz"], 3, "binary data")
    add("usage", "kernel spec error, before the data is read",
        ["fit", f"{W}/nope.svm", "-e", "pnorm-mkl", "-q", "-m", f"{W}/o.npz",
         "-p", 'kernels=[["rbf", {"gamma": -1}]]'], 2, "gamma must be a positive")
    add("usage", "unknown kernel parameter, before the data is read",
        ["fit", f"{W}/nope.svm", "-e", "pnorm-mkl", "-q", "-m", f"{W}/o.npz",
         "-p", 'kernels=[["poly", {"degre": 2}]]'], 2, "unknown parameter(s) ['degre']")
    add("usage", "class_weight naming no label of a LIBSVM file",
        ["fit", f"{W}/train.svm", "-e", "fgm", "-q", "-m", f"{W}/o.npz",
         "-p", 'class_weight={"7": 5}'], 2, "class_weight names class '7'")
    add("usage", "old flag --B", ["fit", f"{W}/train.svm", "-e", "fgm", "-m",
                                  f"{W}/o.npz", "--B", "3"], 2, "-p B=")
    add("usage", "old flag --C=2", ["fit", f"{W}/train.svm", "-e", "fgm", "-m",
                                    f"{W}/o.npz", "--C=2"], 2, "-p C=2")
    add("usage", "old flag --loss", ["fit", f"{W}/train.svm", "-e", "fgm", "-m",
                                     f"{W}/o.npz", "--loss", "logistic"], 2, "-p loss=")
    add("output", "--model naming the training data",
        ["fit", f"{W}/train.svm", "-e", "fgm", "-q", "-m", f"{W}/train.svm"], 7,
        "is the data file; refusing to overwrite")
    add("output", "predict -o naming the data",
        ["predict", f"{W}/train.svm", "-m", m, "-o", f"{W}/train.svm"], 7,
        "is the data file; refusing to overwrite")
    add("output", "predict -o naming the model",
        ["predict", f"{W}/train.svm", "-m", m, "-o", m], 7,
        "is the model file; refusing to overwrite")
    add("output", "evaluate -o naming the data",
        ["evaluate", f"{W}/train.svm", "-m", m, "-o", f"{W}/train.svm"], 7,
        "is the data file")
    add("output", "report -o naming the model",
        ["report", m, "-o", m], 7, "is the model file")
    add("output", "select -o naming the model",
        ["select", m, "-o", m], 7, "is the model file")
    add("model", "a saved pipeline is not a CLI model",
        ["predict", f"{W}/train.svm", "-m", f"{W}/pipe.skops"], 4,
        "not a model of `kernlearn fit`")


def run_in_process(case, w, argv=None, with_stdout=False):
    """Run ``case`` (or ``argv``) through :func:`kernlearn.cli.main` in this process.

    Returns
    -------
    code : int
    stderr : str
    stdout : str
        Only with ``with_stdout``.
    """
    import contextlib

    from kernlearn.cli import main

    err, out = io.StringIO(), io.StringIO()
    argv = [a.replace("{w}", str(w)) for a in (case.argv if argv is None else argv)]
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(argv)
    return (code, err.getvalue()) + ((out.getvalue(),) if with_stdout else ())


def run_subprocess(case, w, timeout=300, argv=None, with_stdout=False):
    """Run ``case`` (or ``argv``) as ``python -m kernlearn ...`` in a new process.

    Returns
    -------
    code : int
    stderr : str
    stdout : str
        Only with ``with_stdout``.
    """
    import subprocess
    import sys

    argv = [a.replace("{w}", str(w)) for a in (case.argv if argv is None else argv)]
    proc = subprocess.run(
        [sys.executable, "-m", "kernlearn", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return (proc.returncode, proc.stderr) + ((proc.stdout,) if with_stdout else ())
