"""Randomised hunt through the ``kernlearn`` command line (seeded).

Each case writes a random but plausible data file (CSV with or without a
header, the label column anywhere, quoted fields, a BOM, CRLF, ``;``/tab/``|``
separators, empty lines, trailing separators, NaN/inf/"NA"/empty cells,
thousands separators, exponents, long lines, unicode or duplicated names,
string/numeric/boolean labels, a single class, 1-3 rows; or a LIBSVM file
with 0/1-based, unsorted or duplicated indices, ``qid``, comments, gzip/bz2/xz,
truncated) and runs ``fit``, ``predict``, ``evaluate``, ``select`` and
``report`` on it and on altered copies (a column renamed, reordered or
dropped, a truncated file), with altered model files (truncated, bit-flipped,
empty, from another estimator), bad options and parameters, output paths in
missing or read-only folders or naming the input, and some runs interrupted
by SIGINT.  Every command runs in a subprocess.

Invariants checked on every run:

* the exit status is documented and never 1; stderr holds no traceback; a
  failure is one ``kernlearn: error:`` line; a fault of a known kind has its
  documented status (2 usage, 3 data, 4 model file, 5 mismatch, 7 output);
* exit 0 means a right output: one prediction per input row, every predicted
  class spelled as a label of the training file, ``predict`` on the training
  file equal to the Python API's ``predict`` on the file read by pandas,
  ``evaluate``'s accuracy / R^2 equal to scikit-learn's on those predictions;
* outputs are atomic: after a failure no new file and no temporary file is
  left in the output folder, and an existing output file keeps its bytes.

Usage::

    PYTHONPATH=src python benchmarks/fuzz_cli.py --cases 60 --seed 0

Prints one line per violation and a summary; exit status 1 if any.
"""

import argparse
import bz2
import csv
import gzip
import io
import json
import lzma
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# (whether a cell reads as a number, as the command line's own readers decide it)
from kernlearn._libsvm_lines import _is_number

DOCUMENTED = {0, 2, 3, 4, 5, 6, 7, 129, 130, 141, 143}
FAST = ["fgm", "fgm", "fgm", "fgm-regressor", "pnorm-mkl", "lowrank-classifier",
        "lowrank-regressor"]
REGRESSORS = {"fgm-regressor", "lowrank-regressor", "infinite-regressor"}
BAD_PARAMS = ["C=-1", "C=abc", "C=[1,2]", "max_iter=0", "max_iter=1.5", "tol=-3",
              "nonsense=1", "C=", "=3", "C", "random_state=xyz", "C=1e999",
              "C=NaN", "kernels=[]", "kernels=\"precomputed\"", "C={\"a\": 1}"]
UNICODE = ["é", "名前", "ß", "Ω", "🙂", "naïve"]


class Runner:
    """Runs the command and checks the invariants common to every run."""

    def __init__(self, python, cwd, env, log):
        self.python, self.cwd, self.env, self.log = python, cwd, env, log
        self.runs = 0
        self.violations = []
        self.codes = {}

    def violation(self, case, what, argv, res=None):
        text = f"case {case}: {what}\n    argv: {' '.join(map(str, argv))}"
        if res is not None:
            text += f"\n    rc={res.returncode} stderr={res.stderr.strip()[-600:]!r}"
        self.violations.append(text)
        print("VIOLATION", text, flush=True)

    def run(self, case, argv, expect=None, outputs=(), timeout=300, stdin=None):
        """Run ``kernlearn argv``; check status, stderr and the outputs' atomicity.

        ``expect``: a set of allowed statuses on failure (0 is always allowed
        unless ``expect`` holds "fail"); ``outputs``: paths the run may write.
        """
        snap = {}
        for out in outputs:
            p = Path(out)
            folder = p.parent
            snap[out] = (p.read_bytes() if p.is_file() else None,
                         set(os.listdir(folder)) if folder.is_dir() else None)
        cmd = [self.python, "-m", "kernlearn", *map(str, argv)]
        res = subprocess.run(cmd, cwd=self.cwd, env=self.env, capture_output=True,
                             text=True, errors="replace", timeout=timeout, input=stdin)
        self.runs += 1
        self.codes[res.returncode] = self.codes.get(res.returncode, 0) + 1
        if self.log:
            print(f"  [{res.returncode}] {' '.join(map(str, argv))[:200]}", flush=True)
            if res.returncode:
                print(f"      {res.stderr.strip()[-300:]}", flush=True)
        self.check(case, argv, res, expect, snap)
        return res

    def check(self, case, argv, res, expect, snap):
        rc, err = res.returncode, res.stderr
        if rc not in DOCUMENTED:
            self.violation(case, f"undocumented exit status {rc}", argv, res)
        if "Traceback" in err or "\n  File \"" in err:
            self.violation(case, "traceback on stderr", argv, res)
        errors = [ln for ln in err.splitlines() if ln.startswith("kernlearn: error")]
        if rc in (2, 3, 4, 5, 6, 7) and len(errors) != 1:
            self.violation(case, f"{len(errors)} error lines for exit {rc}", argv, res)
        if rc == 0 and errors:
            self.violation(case, "exit 0 with an error line", argv, res)
        if expect is not None:
            allowed = set(expect) - {"fail"} | ({0} if "fail" not in expect else set())
            if rc not in allowed:
                self.violation(case, f"exit {rc}, expected one of {sorted(allowed)}",
                               argv, res)
        if rc != 0:
            for out, (before, listing) in snap.items():
                p = Path(out)
                now = p.read_bytes() if p.is_file() else None
                if before is None and now is not None and rc != 130:
                    self.violation(case, f"failed run left output {out}", argv, res)
                if before is not None and now != before:
                    self.violation(case, f"failed run changed existing {out}", argv, res)
        for out, (before, listing) in snap.items():
            folder = Path(out).parent
            if listing is None or not folder.is_dir():
                continue
            new = set(os.listdir(folder)) - listing - {Path(out).name}
            new = {n for n in new if not n.endswith(".html")}
            if new:
                self.violation(case, f"stray files {sorted(new)} in {folder}", argv, res)


# ---------------------------------------------------------------- data files
def random_name(rng, i):
    r = rng.random()
    if r < 0.08:
        return rng.choice(UNICODE) + str(i)
    if r < 0.12:
        return f"col {i}"
    if r < 0.14:
        return f'we"ird,{i}'
    return f"x{i}"


def random_table(rng):
    """Features, labels and names of a random small problem."""
    n = int(rng.choice([1, 2, 3, 5, 8, 12, 20, 30, 40]))
    d = int(rng.integers(1, 6))
    X = rng.normal(size=(n, d))
    if rng.random() < 0.3:
        X[:, 0] = rng.integers(-5, 5, size=n)
    if rng.random() < 0.1:
        X *= 10.0 ** rng.integers(-8, 8)
    regression = rng.random() < 0.2
    w = rng.normal(size=d)
    score = X @ w
    if regression:
        y = (score + 0.1 * rng.normal(size=n)).round(6)
        kind = "float"
    else:
        kind = rng.choice(["int01", "pm1", "int3", "str", "bool", "float1", "zeros",
                           "unicode", "comma", "single"])
        hi = score > np.median(score)
        if kind == "int3":
            cls = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3])) + 1
        else:
            cls = hi.astype(int)
        spell = {
            "int01": ["0", "1"], "pm1": ["-1", "+1"], "int3": ["1", "2", "3", "4"],
            "str": ["cat", "dog"], "bool": ["False", "True"], "float1": ["1.0", "2.0"],
            "zeros": ["01", "02"], "unicode": ["sé", "名"], "comma": ["a,b", 'c"d'],
            "single": ["only", "only"],
        }[kind]
        if kind == "int3":
            y = np.array([spell[c - 1] for c in cls], dtype=object)
        else:
            y = np.array([spell[c] for c in cls], dtype=object)
    names = [random_name(rng, i) for i in range(d)]
    if d > 1 and rng.random() < 0.05:
        names[1] = names[0]  # duplicated column name
    return X, y, names, regression, kind


def number_text(rng, v, style):
    if style == "exp":
        return f"{v:.6e}"
    if style == "long":
        return repr(float(v)) + "0" * int(rng.integers(0, 200))
    if style == "int" and float(v).is_integer():
        return str(int(v))
    return repr(float(v))


def write_csv(rng, path, X, y, names, opts):
    """Write a CSV; return the (row -> label text) list actually written."""
    sep = opts["sep"]
    n, d = X.shape
    style = rng.choice(["plain", "plain", "exp", "long"]) if opts.get("mess") else "plain"
    cols = [[number_text(rng, v, style) for v in X[:, j]] for j in range(d)]
    if opts.get("mess"):
        for _ in range(int(rng.integers(1, 3))):
            if rng.random() < 0.5 and n:
                i, j = int(rng.integers(n)), int(rng.integers(d))
                cols[j][i] = str(rng.choice(["NaN", "nan", "inf", "-inf", "NA", "", "?",
                                             "1,234", "1 234", "0x10", "1e400"]))
    header = list(names)
    pos = opts["label_pos"]
    if pos is not None and y is not None:
        pos = min(pos, d)
        header.insert(pos, opts["label_name"])
        cols.insert(pos, [str(v) for v in y])
    rows = [list(r) for r in zip(*cols)] if cols else []
    buf = io.StringIO()
    quoting = csv.QUOTE_ALL if opts.get("quote_all") else csv.QUOTE_MINIMAL
    w = csv.writer(buf, delimiter=sep, quoting=quoting, lineterminator=opts["eol"])
    if opts["header"]:
        w.writerow(header)
    for r in rows:
        if opts.get("blank") and rng.random() < 0.2:
            buf.write(opts["eol"])
        w.writerow(r)
    text = buf.getvalue()
    if opts.get("trailing"):
        text = text.replace(opts["eol"], sep + opts["eol"])
    if opts.get("bom"):
        text = "\ufeff" + text
    data = text.encode("utf-8")
    if opts.get("truncate") and len(data) > 10:
        data = data[: int(rng.integers(len(data) // 2, len(data) - 1))]
    Path(path).write_bytes(data)


def write_libsvm(rng, path, X, y, opts):
    lines = []
    if opts.get("comment"):
        lines.append("# a comment line")
    base = opts["base"]
    for i in range(X.shape[0]):
        items = [(j + base, X[i, j]) for j in range(X.shape[1]) if X[i, j] != 0]
        if opts.get("unsorted"):
            items = items[::-1]
        if opts.get("dup") and items:
            items.append(items[0])
        head = [str(y[i])]
        if opts.get("qid"):
            head.append(f"qid:{i % 3 + 1}")
        lines.append(" ".join(head + [f"{j}:{float(v)!r}" for j, v in items]))
    data = ("\n".join(lines) + "\n").encode()
    if opts.get("truncate") and len(data) > 10:
        data = data[: int(rng.integers(len(data) // 2, len(data) - 1))]
    comp = opts.get("compress")
    if comp == "gz":
        data = gzip.compress(data)
    elif comp == "bz2":
        data = bz2.compress(data)
    elif comp == "xz":
        data = lzma.compress(data)
    Path(path).write_bytes(data)


# ---------------------------------------------------------------- one case
def pred_lines(text):
    return [r[0] if r else "" for r in csv.reader(io.StringIO(text))]


def same_value(a, b):
    try:
        fa, fb = float(a), float(b)
    except ValueError:
        return a == b
    return fa == fb or abs(fa - fb) <= 1e-9 * max(1.0, abs(fa))


def api_check(R, case, model, data, label_name, X_rows, cli_pred, sep):
    """``predict`` of the CLI equals the Python API's on the file read by pandas."""
    import pandas as pd

    from kernlearn.io import load_model

    try:
        est = load_model(model)
        df = pd.read_csv(data, sep=sep)
        Xdf = df.drop(columns=[label_name]) if label_name in df.columns else df
        api = est.predict(Xdf)
    except Exception as exc:  # noqa: BLE001 - reported
        R.violation(case, f"the Python API could not predict {data}: {exc!r}",
                    ["(api)", model, data])
        return
    api_text = [str(v.item() if hasattr(v, "item") else v) for v in api]
    bad = [i for i, (a, c) in enumerate(zip(api_text, cli_pred)) if not same_value(a, c)]
    if len(api_text) != len(cli_pred) or bad:
        R.violation(case, f"CLI and API predictions differ at rows {bad[:5]} "
                    f"(cli {cli_pred[:5]}, api {api_text[:5]})", ["(api)", model, data])


def run_case(R, case, rng, root, estimators):
    d = Path(root) / f"c{case}"
    d.mkdir()
    X, y, names, regression, kind = random_table(rng)
    n = X.shape[0]
    est = str(rng.choice(["fgm-regressor", "lowrank-regressor"]) if regression
              else rng.choice([e for e in estimators if e not in REGRESSORS]))
    libsvm = rng.random() < 0.25 and kind in ("int01", "pm1", "int3", "float1", "float")
    clean = rng.random() < 0.5  # a file every reader takes: exit 0 expected
    if libsvm:
        opts = {"base": int(rng.integers(0, 2)), "comment": rng.random() < 0.2,
                "unsorted": not clean and rng.random() < 0.3,
                "dup": not clean and rng.random() < 0.2,
                "qid": not clean and rng.random() < 0.2,
                "compress": rng.choice([None, None, "gz", "bz2", "xz"]),
                "truncate": not clean and rng.random() < 0.1}
        suffix = {"gz": ".svm.gz", "bz2": ".svm.bz2", "xz": ".svm.xz", None: ".svm"}
        data = d / ("train" + suffix[opts["compress"]])
        write_libsvm(rng, data, X, y, opts)
        label_name = None
        sep = None
    else:
        sep = "," if clean else str(rng.choice([",", ",", ";", "\t", "|"]))
        label_name = str(rng.choice(["target", "y", "label", "Klasse é"]))
        opts = {"sep": sep, "header": clean or rng.random() < 0.85,
                "label_pos": X.shape[1] if clean else int(rng.integers(0, X.shape[1] + 1)),
                "label_name": label_name, "eol": "\n" if clean else str(
                    rng.choice(["\n", "\r\n"])),
                "bom": not clean and rng.random() < 0.15,
                "quote_all": not clean and rng.random() < 0.15,
                "blank": not clean and rng.random() < 0.15,
                "trailing": not clean and rng.random() < 0.08,
                "mess": not clean and rng.random() < 0.3,
                "truncate": not clean and rng.random() < 0.05}
        if clean and (len(set(names)) < len(names) or label_name in names):
            names = [f"x{i}" for i in range(len(names))]
        data = d / "train.csv"
        write_csv(rng, data, X, y, names, opts)
    model = d / "m.model"
    argv = ["fit", "-q", "-e", est, data, "-m", model]
    expect = None
    if not libsvm:
        if opts["label_pos"] != X.shape[1] or rng.random() < 0.3:
            argv += ["--label", label_name if opts["header"] else str(opts["label_pos"])]
        if not opts["header"]:
            argv += ["--no-header"]
        if rng.random() < 0.2:
            argv += ["--sep", "tab" if sep == "\t" else sep]
    bad = rng.random()
    if bad < 0.12:
        argv += ["-p", str(rng.choice(BAD_PARAMS))]
        expect = {0, 2}
    elif bad < 0.16:
        argv += [str(rng.choice(["--frobnicate", "--C", "--model-file", "-z"]))]
        expect = {2, "fail"}
    elif bad < 0.22:
        where = rng.choice(["missing", "readonly", "same", "file_parent", "dir"])
        if where == "missing":
            model = d / "nope" / "m.model"
        elif where == "readonly":
            ro = d / "ro"
            ro.mkdir()
            os.chmod(ro, stat.S_IRUSR | stat.S_IXUSR)
            model = ro / "m.model"
        elif where == "same":
            model = data
        elif where == "file_parent":
            model = data / "m.model"
        else:
            model = d
        argv[argv.index("-m") + 1] = model
        if os.geteuid() != 0 or where != "readonly":
            expect = {7, 3, 2, "fail"} if where != "readonly" else {7, 3, 6, "fail"}
    existing = rng.random() < 0.1
    if existing and expect is None:
        model.write_bytes(b"old model bytes")
    if rng.random() < 0.05 and expect is None:
        return interrupt_fit(R, case, argv, model)
    outs = [model] if Path(model).parent.is_dir() and not Path(model).is_dir() \
        and model != data else []
    res = R.run(case, argv, expect=expect, outputs=outs)
    if clean and expect is None and not existing and res.returncode not in (0, 6):
        R.violation(case, "a clean file was refused", argv, res)
    if res.returncode != 0:
        return
    # ---- predict on the training file
    pargs = []
    if not libsvm:
        if "--no-header" in argv:
            pargs.append("--no-header")
        if "--sep" in argv:
            pargs += argv[argv.index("--sep"):argv.index("--sep") + 2]
        if "--label" in argv:
            pargs += argv[argv.index("--label"):argv.index("--label") + 2]
    out = d / "pred.txt"
    res = R.run(case, ["predict", "-m", model, data, "-o", out, *pargs], outputs=[out])
    if res.returncode == 0:
        preds = pred_lines(out.read_text(encoding="utf-8"))
        if len(preds) != n:
            R.violation(case, f"{len(preds)} predictions for {n} rows", ["predict", data])
        elif not regression:
            train_labels = set(str(v) for v in y)
            if libsvm:
                ok = all(any(same_value(p, t) for t in train_labels) for p in preds)
            else:
                ok = set(preds) <= train_labels
            if not ok:
                R.violation(case, f"predicted labels {sorted(set(preds))[:5]} not "
                            f"spelled as the training labels {sorted(train_labels)[:5]}",
                            ["predict", data])
        if clean and not libsvm and len(preds) == n:
            api_check(R, case, model, data, label_name, n, preds, sep)
        # ---- evaluate on the same file: metric equals scikit-learn's on preds
        res = R.run(case, ["evaluate", "-m", model, data, "--json", *pargs])
        if res.returncode == 0 and len(preds) == n and (clean or libsvm):
            check_metric(R, case, res.stdout, y, preds, regression, data)
    elif clean:
        R.violation(case, "predict refused the clean training file", ["predict"], res)
    # ---- predict on an altered file
    if not libsvm and opts["header"] and n >= 1:
        alt = d / ("alt" + str(rng.choice([".csv", ".csv", ".tsv", ".txt"])))
        change = str(rng.choice(["rename", "reorder", "drop_label", "extra", "drop_feat",
                                 "truncate", "empty", "header_only"]))
        names2, X2 = list(names), X.copy()
        o2 = dict(opts)
        if change == "rename":
            names2[0] = names2[0] + "_renamed"
        elif change == "reorder" and len(names2) > 1 and len(set(names2)) == len(names2):
            perm = rng.permutation(len(names2))
            names2, X2 = [names2[i] for i in perm], X[:, perm]
        elif change == "drop_label":
            o2["label_pos"] = None
        elif change == "extra":
            names2.append("extra_col")
            X2 = np.column_stack([X, np.ones(n)])
        elif change == "drop_feat" and len(names2) > 1:
            names2, X2 = names2[1:], X[:, 1:]
        elif change == "truncate":
            o2["truncate"] = True
        if change == "empty":
            alt.write_bytes(b"")
        elif change == "header_only":
            alt.write_text(sep.join(names + [label_name]) + "\n")
        else:
            write_csv(rng, alt, X2, y, names2, o2)
        palt = [a for a in pargs]
        if alt.suffix != ".csv":
            palt += ["--format", "csv"]
        if change == "drop_label" and "--label" in palt:
            i = palt.index("--label")
            del palt[i:i + 2]
        out2 = d / str(rng.choice(["p2.txt"] * 4 + ["sub/p2.txt", "old.txt", "alt"]))
        if out2.name == "old.txt":  # an existing file: kept whole by a failed run
            out2.write_bytes(b"old predictions\n")
        elif out2.name == "alt":
            out2 = alt  # the input itself: refused
        exp2 = {7, "fail"} if out2 == alt or "sub" in str(out2) else None
        if change in ("rename", "drop_feat", "empty", "header_only"):
            exp2 = (exp2 or set()) | {3, 5, 7, "fail"} if change != "drop_feat" or \
                len(names) > 1 else exp2
        res = R.run(case, ["predict", "-m", model, alt, "-o", out2, *palt],
                    expect=exp2, outputs=[out2])
        if res.returncode == 0:
            preds2 = pred_lines(out2.read_text(encoding="utf-8"))
            n2 = sum(1 for _ in preds2)
            if change in ("reorder", "extra", "drop_label") and n2 != n:
                R.violation(case, f"{n2} predictions for {n} rows ({change})",
                            ["predict", alt])
            if change == "reorder" and Path(out).exists():
                first = pred_lines(out.read_text(encoding="utf-8"))
                if first != preds2:
                    R.violation(case, "reordered columns gave other predictions",
                                ["predict", alt])
    # ---- select / report
    if rng.random() < 0.4:
        R.run(case, ["select", model, "--format", str(rng.choice(["csv", "json"]))])
    if rng.random() < 0.15:
        rep = d / "r.html"
        R.run(case, ["report", model, "-o", rep], outputs=[rep])
    # ---- damaged models
    damage_models(R, case, rng, d, model, data, pargs)


def check_metric(R, case, stdout, y, preds, regression, data):
    from sklearn import metrics

    try:
        got = json.loads(stdout)
    except ValueError:
        R.violation(case, f"evaluate --json printed no JSON: {stdout[:200]!r}",
                    ["evaluate", data])
        return
    if regression:
        want = metrics.r2_score(y.astype(float), np.array(preds, dtype=float)) \
            if len(y) > 1 and np.ptp(y.astype(float)) > 0 else None
        key = "r2"
    else:
        truth = [str(v) for v in y]
        if all(_is_number(t) for t in truth + list(preds)):  # a LIBSVM "+1" is 1
            truth, preds = [float(t) for t in truth], [float(p) for p in preds]
        want = metrics.accuracy_score(truth, preds)
        key = "accuracy"
    if want is not None and (got.get(key) is None or abs(got[key] - want) > 1e-9):
        R.violation(case, f"evaluate {key}={got.get(key)} but scikit-learn gives {want}",
                    ["evaluate", data])


def damage_models(R, case, rng, d, model, data, pargs):
    blob = Path(model).read_bytes()
    how = str(rng.choice(["truncate", "flip", "empty", "json", "zero", "other", "dir"]))
    bad = d / "bad.model"
    if how == "truncate":
        bad.write_bytes(blob[: int(rng.integers(0, len(blob)))])
    elif how == "flip":
        b = bytearray(blob)
        i = int(rng.integers(len(b)))
        b[i] ^= 1 << int(rng.integers(8))
        bad.write_bytes(bytes(b))
    elif how == "empty":
        bad.write_bytes(b"")
    elif how == "json":
        bad.write_text('{"estimator": "fgm"}')
    elif how == "zero":
        bad.write_bytes(b"\0" * 100)
    elif how == "dir":
        bad.mkdir()
    else:
        bad = None
    cmd = str(rng.choice(["predict", "evaluate", "select", "report"]))
    if bad is not None:
        argv = {"predict": ["predict", "-m", bad, data, *pargs],
                "evaluate": ["evaluate", "-m", bad, data, *pargs],
                "select": ["select", bad],
                "report": ["report", bad, "-o", d / "bad.html"]}[cmd]
        # a flipped bit in a padding byte may leave the model valid
        R.run(case, argv, expect={4} if how != "flip" else {0, 4})


def interrupt_fit(R, case, argv, model):
    cmd = [R.python, "-m", "kernlearn", *map(str, argv)]
    folder = Path(model).parent
    before = set(os.listdir(folder))
    p = subprocess.Popen(cmd, cwd=R.cwd, env=R.env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(float(np.random.default_rng(case).uniform(0.3, 3.0)))
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=300)
    R.runs += 1

    class Res:
        returncode, stderr, stdout = p.returncode, err, out

    R.codes[p.returncode] = R.codes.get(p.returncode, 0) + 1
    if p.returncode not in (0, 130, -2):
        R.violation(case, f"SIGINT gave exit {p.returncode}", ["(SIGINT)", *argv], Res)
    if "Traceback" in err:
        R.violation(case, "traceback after SIGINT", ["(SIGINT)", *argv], Res)
    new = set(os.listdir(folder)) - before
    if p.returncode != 0 and new:
        R.violation(case, f"SIGINT left {sorted(new)}", ["(SIGINT)", *argv], Res)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--first", type=int, default=0, help="index of the first case")
    ap.add_argument("--estimators", default=",".join(sorted(set(FAST))),
                    help="comma list of the estimators drawn (classification ones; "
                    "a regression target takes fgm-regressor or lowrank-regressor)")
    ap.add_argument("--keep", action="store_true", help="keep the case folders")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every command")
    args = ap.parse_args(argv)
    root = tempfile.mkdtemp(prefix="fuzz_cli_")
    src = Path(__file__).resolve().parents[1] / "src"
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1",
               PYTHONIOENCODING="utf-8")
    env.pop("KERNLEARN_DEBUG", None)
    R = Runner(sys.executable, root, env, args.verbose)
    estimators = args.estimators.split(",")
    t0 = time.time()
    for case in range(args.first, args.first + args.cases):
        rng = np.random.default_rng([args.seed, case])
        try:
            run_case(R, case, rng, root, estimators)
        except subprocess.TimeoutExpired as exc:
            R.violation(case, f"timed out: {exc}", [])
        print(f"case {case} done ({R.runs} runs, {time.time() - t0:.0f}s)", flush=True)
    print(f"{args.cases} cases, {R.runs} command lines, exit statuses "
          f"{dict(sorted(R.codes.items()))}, {len(R.violations)} violations")
    for v in R.violations:
        print(v)
    if not args.keep:
        for dirpath, dirnames, _ in os.walk(root):
            for dn in dirnames:
                os.chmod(os.path.join(dirpath, dn), 0o755)
        shutil.rmtree(root, ignore_errors=True)
    else:
        print("case folders in", root)
    return 1 if R.violations else 0


if __name__ == "__main__":
    sys.exit(main())
