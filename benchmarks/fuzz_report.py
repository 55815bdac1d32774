"""Randomised hostile models through the HTML report and the plot functions (seeded).

Every public estimator (all eleven, the multitask and CV ones included) is
fitted with the random valid settings of ``fuzz_options.py`` (which reach
unconverged stops, single kernels, sparse input, sample weights with zeros)
on data made hostile at random: one column or 1,000 columns, float32, values
scaled to 1e150 / 1e-150, up to 40 classes, class labels and DataFrame column
names built of ``<>&"'``, ``</script>``, unicode and empty-looking text,
regression targets at a 1e9 offset, every sample weight zeroed but a few.
Each fitted model's report is built with :func:`kernlearn.report.write_report`
(without data and with the training data as test data, named hostilely) and,
saved with :func:`kernlearn.io.save_model`, by ``kernlearn report``; a few
models are also fitted by ``kernlearn fit`` on a hostile CSV file and reported
with ``--data``.  Checks:

* the file is written atomically (an existing file is replaced whole, no
  temporary file is left) and parses with ``html.parser`` into the page's own
  tags only (no tag, attribute or script from the data: every name and label
  shown as text), with exactly one ``<script>`` (the page's render check);
* every ``<img>`` is a base64 PNG that Pillow decodes;
* the numbers the page shows equal the model's own: the summary rows
  (``n_iter_``, ``objective_`` ...), the test accuracy / RMSE recomputed with
  scikit-learn from ``predict``, the kernel weights, ``mu`` and the selected
  feature ids;
* no warning of any kind while the report is built; no pyplot figure left
  open (``plt.get_fignums()``);
* CPU time and peak memory growth of one report under ``--max-seconds`` /
  ``--max-grow`` MB;
* every ``--chromium-every``-th report (when Chromium is installed) decodes
  all its figures in ``chromium --headless --dump-dom`` (the page's
  render-check element).

Plot functions (:mod:`kernlearn.plotting`): each model's histories, kernel
weights and score curves are plotted, plus bad input (an empty history, NaN
or infinite objectives, a history without an objective, a list of
histories, names of the wrong length, empty or NaN weights, empty curves,
curves of unequal lengths): each either writes a decodable image or raises a
``ValueError`` naming the problem, leaves an existing file untouched on
failure and no temporary file, warns of nothing and leaves no figure open.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fuzz_report.py --cases 3 --seed 0

Prints one line per violation and a summary; exit status 1 if any violation.
"""

import argparse
import base64
import collections
import contextlib
import html.parser
import io
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_options import SPACES, draw_case  # noqa: E402

from kernlearn.cli import main as cli_main  # noqa: E402
from kernlearn.io import save_model  # noqa: E402

#: Text a user's data may hold: markup, quotes, unicode, empty-looking names.
HOSTILE = ['<b>bold</b>', 'a&b', '"quoted"', "it's", '</script><script>alert(1)</script>',
           '<img src=x onerror=alert(1)>', '&amp;', 'ünïcødé ✓', '日本語', ' ', '',
           'x' * 300, '$x$', '$^$', '\\n', '<!--', ']]>', 'NaN', '-0', 'tab\there']

#: The page's own tags (report.py); anything else came from the data.
PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "table", "tr",
             "th", "td", "figure", "img", "figcaption", "p", "code", "div", "script"}

CLI_MODELS = [("fgm", False), ("fgm-regressor", False), ("infinite-classifier", False),
              ("infinite-regressor", False), ("pnorm-mkl", False), ("lowrank-regressor", False),
              ("lowrank-classifier", False), ("mtmkl-classifier", True),
              ("mtmkl-regressor", True)]


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class Tally:
    def __init__(self):
        self.counts = collections.Counter()
        self.violations = []

    def bad(self, where, what):
        self.violations.append(f"{where}: {what}")
        print(f"VIOLATION {where}: {what}"[:600], flush=True)


# ---------------------------------------------------------------- hostile data
def _labels(rng, k):
    """``k`` distinct hostile class labels."""
    pool = list(dict.fromkeys(HOSTILE))
    rng.shuffle(pool)
    out = pool[:k]
    while len(out) < k:
        out.append(f"<c{len(out)}>&'\"")
    return np.array(out, dtype=object)


def hostilise(rng, name, params, X, y, task, fit_kw):
    """The case's data made hostile; returns ``(X, y, fit_kw, tags)``."""
    tags = []
    pre = isinstance(X, list) or "precomputed" in (params.get("kernel"), params.get("kernels"))
    grouped = "groups" in params
    regression = "Regressor" in name
    if not pre and not grouped and rng.rand() < 0.5:
        d = X.shape[1]
        how = rng.choice(["one", "wide"])
        if how == "one":
            X = X[:, :1]
            tags.append("1-column")
        else:
            extra = rng.randn(X.shape[0], 1000 - d)
            if sp.issparse(X):
                extra[rng.rand(*extra.shape) < 0.95] = 0.0
                X = sp.hstack([X, sp.csr_matrix(extra)]).tocsr()
            else:
                X = np.hstack([X, extra])
            tags.append("1000-columns")
    scale = 1.0
    if not pre and rng.rand() < 0.25:
        scale = float(rng.choice([1e150, 1e-150, 1e9]))
        X = X * scale
        tags.append(f"scale{scale:g}")
    if not pre and rng.rand() < 0.3 and 1e-30 < scale < 1e30:  # float32 holds it
        X = X.astype(np.float32)
        tags.append("float32")
    if regression and rng.rand() < 0.5:
        y = np.asarray(y, dtype=float) + 1e9
        tags.append("y+1e9")
    elif not regression:
        y = np.asarray(y)
        if rng.rand() < 0.25:
            # many classes: quantiles of a random projection
            k = int(rng.choice([12, 40]))
            m = rng.randn(len(y))
            y = np.digitize(m, np.quantile(m, np.linspace(0, 1, k + 1)[1:-1]))
            tags.append(f"{k}-classes")
        if rng.rand() < 0.7:
            classes = np.unique(y)
            lab = _labels(rng, len(classes))
            y = lab[np.searchsorted(classes, y)]
            tags.append("hostile-labels")
        if "class_weight" in params and isinstance(params["class_weight"], dict):
            params["class_weight"] = "balanced"
    if fit_kw.get("sample_weight") is not None and rng.rand() < 0.5:
        sw = np.zeros(len(y))
        keep = rng.choice(len(y), size=max(4, len(y) // 5), replace=False)
        sw[keep] = rng.choice([0.5, 1.0, 3.0], size=len(keep))
        fit_kw = dict(fit_kw, sample_weight=sw)
        tags.append("mostly-zero-weights")
    if not pre and not sp.issparse(X) and rng.rand() < 0.5:
        import pandas as pd

        # markup in most names (the first eight entries), whatever is selected
        cols = [f"{HOSTILE[rng.randint(8 if rng.rand() < 0.7 else len(HOSTILE))]}#{j}"
                for j in range(X.shape[1])]
        X = pd.DataFrame(X, columns=cols)
        tags.append("hostile-columns")
    return X, y, fit_kw, tags


# ----------------------------------------------------------------- the page
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = collections.Counter()
        self.attrs = []
        self.imgs = []
        self.cells = []  # (table number, row, cell text)
        self.tables = 0
        self.row = None
        self.cell = None
        self.text = []
        self.heads = []
        self.in_h2 = False

    def handle_starttag(self, tag, attrs):
        self.tags[tag] += 1
        self.attrs.extend(a for a, _ in attrs)
        if tag == "img":
            self.imgs.append(dict(attrs).get("src", ""))
        elif tag == "table":
            self.tables += 1
        elif tag == "tr":
            self.row = []
            self.cells.append((self.tables, self.heads[-1] if self.heads else "", self.row))
        elif tag in ("td", "th"):
            self.cell = []
        elif tag == "h2":
            self.in_h2 = True
            self.heads.append("")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append("".join(self.cell))
            self.cell = None
        elif tag == "h2":
            self.in_h2 = False

    def handle_data(self, data):
        self.text.append(data)
        if self.cell is not None:
            self.cell.append(data)
        if self.in_h2:
            self.heads[-1] += data

    def section(self, head):
        """Rows of the table under the heading starting with ``head``."""
        return [r for _, h, r in self.cells if h.startswith(head)]


def _png_ok(src):
    from PIL import Image

    m = re.match(r"data:image/png;base64,(.*)\Z", src, re.S)
    if not m:
        return False
    try:
        img = Image.open(io.BytesIO(base64.b64decode(m.group(1), validate=True)))
        img.verify()
        return img.format == "PNG"
    except Exception:  # noqa: BLE001 - any decoding failure is the finding
        return False


def _num(text):
    try:
        return float(text)
    except ValueError:
        return None


def _close(shown, value, where, tally, what):
    """``shown`` (6 significant digits) is ``value``."""
    s = _num(shown)
    v = float(value)
    # the page rounds to 6 significant digits (report._fmt): compare the rounded value
    if s is None or not (np.isnan(s) and np.isnan(v) or s == float(f"{v:.6g}")):
        tally.bad(where, f"{what} shown {shown!r}, model's {v!r}")


def check_page(text, est, data, where, tally):
    """Markup, figures and numbers of one report page."""
    page = Page()
    page.feed(text)
    page.close()
    tally.counts["pages parsed"] += 1
    foreign = set(page.tags) - PAGE_TAGS
    if foreign:
        tally.bad(where, f"tags from the data in the page: {sorted(foreign)}")
    if page.tags["script"] != 1:
        tally.bad(where, f"{page.tags['script']} script elements (the page has one)")
    odd = set(page.attrs) - {"charset", "class", "alt", "src", "id"}
    if odd:
        tally.bad(where, f"attributes from the data: {sorted(odd)}")
    if not text.rstrip().endswith("</html>"):
        tally.bad(where, "page does not end with </html>")
    for src in page.imgs:
        tally.counts["figures decoded"] += 1
        if not _png_ok(src):
            tally.bad(where, "a figure that is no decodable PNG")
    # the summary rows: the model's own attributes
    summary = {r[0]: r[1] for r in page.section("Fit summary") if len(r) == 2}
    for attr in ("n_iter_", "objective_", "gap_", "m0_", "R_"):
        if attr in summary and attr in vars(est):
            v = getattr(est, attr)
            if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
                _close(summary[attr], v, where, tally, attr)
                tally.counts["numbers compared"] += 1
    if "converged_" in summary and str(getattr(est, "converged_")) != summary["converged_"]:
        tally.bad(where, f"converged_ shown {summary['converged_']!r}")
    # the selection table against the fitted attributes
    rows = page.section("Selection table")
    body = rows[1:] if rows else []
    if hasattr(est, "selected_features_"):
        sel = [int(v) for v in np.asarray(est.selected_features_)[:200]]
        if [int(r[1]) for r in body] != sel:
            tally.bad(where, "selection table's feature ids differ from selected_features_")
        tally.counts["numbers compared"] += len(sel)
    elif hasattr(est, "features_"):
        F = np.asarray(est.features_)[:200]
        for r, f in zip(body, F):
            for s, v in zip(r[2:], f):
                _close(s, v, where, tally, "learned feature parameter")
                tally.counts["numbers compared"] += 1
        if len(body) != len(F):
            tally.bad(where, f"{len(body)} rows for {len(F)} learned features")
    elif hasattr(est, "kernel_weights_"):
        w = np.asarray(est.kernel_weights_, dtype=float)
        if len(body) != len(w):
            tally.bad(where, f"{len(body)} rows for {len(w)} kernel weights")
        for r, v in zip(body, w):
            _close(r[2], v, where, tally, "kernel weight")
            tally.counts["numbers compared"] += 1
    elif hasattr(est, "mu_"):
        mu = np.atleast_2d(est.mu_)
        nz = [m for row in mu for m in row if m > 0][:200]
        for r, v in zip(body, nz):
            _close(r[-1], v, where, tally, "mu")
            tally.counts["numbers compared"] += 1
    if data is not None:
        X, y = data[0], np.asarray(data[1])
        tasks = data[3] if len(data) > 3 else None
        pk = {"task_index": tasks} if tasks is not None else {}
        metrics = {r[0]: r[1] for r in page.section("Test metrics") if len(r) == 2}
        pred = est.predict(X, **pk)
        from sklearn import metrics as skm

        if hasattr(est, "classes_"):
            if "accuracy" not in metrics:
                tally.bad(where, f"no accuracy among the test metrics {sorted(metrics)}")
            else:
                _close(metrics["accuracy"], skm.accuracy_score(y, pred), where, tally,
                       "accuracy")
                tally.counts["numbers compared"] += 1
        else:
            key = next((k for k in metrics if k.lower() == "rmse"), None)
            if key is None:
                tally.bad(where, f"no RMSE among the test metrics {sorted(metrics)}")
            else:
                rmse = np.sqrt(np.mean((np.asarray(y, float) - pred) ** 2))
                _close(metrics[key], rmse, where, tally, "RMSE")
                tally.counts["numbers compared"] += 1


def _open_figures():
    import matplotlib.pyplot as plt

    return list(plt.get_fignums())


@contextlib.contextmanager
def watched(where, tally, max_seconds=None, max_grow=None):
    """No warning, no open figure, bounded time and memory inside the block."""
    rss0, t0 = rss_mb(), time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        tally.bad(where, f"warning {w.category.__name__}: {w.message}")
    if _open_figures():
        tally.bad(where, f"figures left open: {_open_figures()}")
        import matplotlib.pyplot as plt

        plt.close("all")
    took, grew = time.process_time() - t0, rss_mb() - rss0
    tally.counts["max report seconds"] = round(max(tally.counts["max report seconds"], took), 2)
    tally.counts["max MB grown"] = round(max(tally.counts["max MB grown"], grew), 1)
    if max_seconds and took > max_seconds:
        tally.bad(where, f"{took:.1f} s CPU")
    if max_grow and grew > max_grow:
        tally.bad(where, f"peak memory grew {grew:.0f} MB")


def _no_tmp(folder, where, tally):
    left = [p.name for p in Path(folder).iterdir() if ".tmp" in p.name]
    if left:
        tally.bad(where, f"temporary files left: {left}")


# -------------------------------------------------------------------- rounds
def report_round(est, data, where, tmp, tally, args):
    from kernlearn.report import write_report

    out = tmp / "report.html"
    out.write_text("old")
    try:
        with watched(where, tally, args.max_seconds, args.max_grow):
            write_report(est, {}, out, data=data)
    except Exception as exc:  # noqa: BLE001 - every failure is a finding
        tally.bad(where, f"write_report raised {type(exc).__name__}: {exc}"
                  + ("" if not args.tb else traceback.format_exc()))
        if out.read_text() != "old":
            tally.bad(where, "a failed report replaced the existing file")
        return None
    _no_tmp(tmp, where, tally)
    text = out.read_text(encoding="utf-8")
    try:
        check_page(text, est, data, where, tally)
    except Exception as exc:  # noqa: BLE001
        tally.bad(where, f"check failed: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    tally.counts["reports"] += 1
    return out


def run_cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli_main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def cli_report_round(model, where, tmp, tally, extra=()):
    out = tmp / "cli.html"
    out.write_text("old")
    with watched(where, tally):
        code, _, err = run_cli(["report", model, "--out", out, *extra])
    if code != 0:
        tally.bad(where, f"kernlearn report exit {code}: {err.strip()[-300:]}")
        if out.read_text() != "old":
            tally.bad(where, "a failed report replaced the existing file")
        return None
    _no_tmp(tmp, where, tally)
    page = Page()
    page.feed(out.read_text(encoding="utf-8"))
    if set(page.tags) - PAGE_TAGS or page.tags["script"] != 1:
        tally.bad(where, f"CLI page tags {dict(page.tags)}")
    for src in page.imgs:
        tally.counts["figures decoded"] += 1
        if not _png_ok(src):
            tally.bad(where, "a CLI figure that is no decodable PNG")
    tally.counts["CLI reports"] += 1
    return out


def chromium_check(path, where, tmp, tally):
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser",
                                                 "google-chrome") if shutil.which(b)), None)
    if browser is None:
        return
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu",
         f"--user-data-dir={tmp / 'profile'}", "--virtual-time-budget=5000", "--dump-dom",
         Path(path).resolve().as_uri()], capture_output=True, text=True, timeout=120)
    m = re.search(r'id="render-check" data-loaded="(\d+)" data-total="(\d+)"', proc.stdout)
    if not m:
        tally.bad(where, "Chromium: the page's load script did not run")
    elif m.group(1) != m.group(2):
        tally.bad(where, f"Chromium decoded {m.group(1)} of {m.group(2)} figures")
    tally.counts["Chromium renders"] += 1


def plot_round(est, rng, where, tmp, tally):
    """The plot functions on the model's own values and on bad input."""
    from kernlearn import plotting

    cases = []
    h = getattr(est, "history_", None)
    hs = h if isinstance(h, (list, tuple)) else [h] if isinstance(h, dict) else []
    for k in hs[:3]:
        # (a closed-form fit records no objective: a refusal is its due)
        cases.append(("convergence", lambda p, k=k: plotting.plot_convergence(k, p),
                      isinstance(k, dict) and "objective" in k))
    w = getattr(est, "kernel_weights_", None)
    if w is not None:
        names = [HOSTILE[rng.randint(len(HOSTILE))] for _ in range(len(w))]
        # a title is the caller's own text, which matplotlib reads as mathtext
        # between two "$" (kept: "$R^2$" is a title one may want)
        title = HOSTILE[rng.randint(len(HOSTILE))].replace("$", "")
        cases.append(("kernel weights", lambda p: plotting.plot_kernel_weights(
            w, p, names=names, title=title), True))
    bad_hist = [{"objective": []}, {"objective": [np.nan, np.nan]},
                {"objective": [1.0, np.nan, 0.5]}, {"objective": [np.inf, 1.0]},
                {"objective": [1.0, 0.5], "lower_bound": [np.nan, -np.inf]},
                {"objective": [1.0, 0.5], "n_active": [1]}, {"time": [1.0]}, [{"objective": [1]}],
                {"objective": [1e300, -1e300]}]
    for b in bad_hist:
        cases.append((f"bad history {b}", lambda p, b=b: plotting.plot_convergence(b, p), False))
    for ws, nm in (([], None), ([np.nan, 1.0], None), ([1.0, 2.0], ["a"]),
                   ([np.inf, 1.0], None), ([[1.0, 2.0], [3.0, 4.0]], None)):
        cases.append((f"bad weights {ws} {nm}",
                      lambda p, ws=ws, nm=nm: plotting.plot_kernel_weights(ws, p, names=nm),
                      False))
    for cv in ({}, {"<b>m</b>": ([1, 2, 3], [0.5, 0.6])}, {"m": ([], [])},
               {"m": ([1, 2], [np.nan, np.nan])}, {"a&b": ([3, 1, 2], [0.1, 0.3, 0.2])}):
        cases.append((f"curves {cv}",
                      lambda p, cv=cv: plotting.plot_accuracy_vs_features(cv, p), False))
    for what, call, must_work in cases:
        sub = f"{where} plot {what}"[:200]
        out = tmp / "plot.png"
        out.write_bytes(b"old")
        err = None
        try:
            with watched(sub, tally):
                call(out)
        except ValueError as exc:
            err = exc
            if must_work:
                tally.bad(sub, f"ValueError on the model's own values: {exc}")
        except Exception as exc:  # noqa: BLE001
            tally.bad(sub, f"{type(exc).__name__} (not a clear ValueError): {exc}")
            err = exc
        _no_tmp(tmp, sub, tally)
        if err is not None:
            tally.counts["plot refusals"] += 1
            if out.read_bytes() != b"old":
                tally.bad(sub, "a failed plot replaced the existing file")
        else:
            tally.counts["plots written"] += 1
            from PIL import Image

            try:
                Image.open(out).verify()
            except Exception as exc:  # noqa: BLE001
                tally.bad(sub, f"written plot does not decode: {exc}")


def fit_case(name, case):
    rng, params, data, est, X, y, task, fit_kw = draw_case(name, case)
    X, y, fit_kw, tags = hostilise(rng, name, params, X, y, task, fit_kw)
    est = type(est)(**params)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        est.fit(X, y, **fit_kw)
    if getattr(est, "converged_", True) is False:
        tags.append("unconverged")
    if sp.issparse(X):
        tags.append("sparse")
    if len(np.ravel(getattr(est, "kernel_weights_", [0, 0]))) == 1:
        tags.append("one-kernel")
    try:
        from kernlearn.summary import selection_table

        if not selection_table(est)[1]:
            tags.append("nothing-kept")
    except ValueError:
        pass
    return rng, est, X, y, task, tags


def python_cases(args, tmp, tally):
    for name in args.estimators:
        for k in range(args.cases):
            case = args.seed * 1000 + k
            where = f"{name} case {case}"
            try:
                rng, est, X, y, task, tags = fit_case(name, case)
            except Exception as exc:  # noqa: BLE001 - fit's business is fuzz_options'
                tally.counts["fits refused"] += 1
                print(f"  skip {where}: fit {type(exc).__name__}: {str(exc)[:120]}")
                continue
            tally.counts["models"] += 1
            tally.counts.update(f"tag {t}" for t in tags)
            print(f"  {where} {tags}", flush=True)
            where = f"{where} {tags}"
            report_round(est, None, where + " no data", tmp, tally, args)
            source = HOSTILE[rng.randint(len(HOSTILE))] + ".csv"
            data = (X, y, source) if task is None else (X, y, source, task)
            out = report_round(est, data, where + " with data", tmp, tally, args)
            if out is not None and args.chromium_every and \
                    tally.counts["reports"] % args.chromium_every == 0:
                chromium_check(out, where, tmp, tally)
            model = tmp / "model.npz"
            try:
                save_model(est, model)
            except Exception as exc:  # noqa: BLE001
                tally.bad(where, f"save_model {type(exc).__name__}: {exc}")
            else:
                cli_report_round(model, where + " CLI", tmp, tally)
            plot_round(est, rng, where, tmp, tally)


def _csv(rng, regression, task_column):
    n, d = int(rng.randint(30, 120)), int(rng.choice([1, 3, 8]))
    X = rng.randn(n, d)
    m = X @ rng.randn(d) + 0.3 * rng.randn(n)
    if regression:
        y = [repr(float(v)) for v in 1e9 + 3 * m]
    else:
        # (a CSV column of labels is one kind: text, not "-0" or "NaN")
        lab = [s for s in _labels(rng, 6) if s.strip() and "," not in s and "\n" not in s
               and '"' not in s and s not in ("-0", "NaN")][:2]
        lab = lab if len(lab) == 2 else ["<a>", "&b"]
        y = [lab[int(v > np.median(m))] for v in m]
    cols = [f"{HOSTILE[rng.randint(4)]}{j}".replace(",", ";").replace('"', "'")
            for j in range(d)]
    head = cols + (["task"] if task_column else []) + ["label"]
    lines = [",".join(head)]
    for i in range(n):
        cells = [repr(float(v)) for v in X[i]] + ([str(i % 2)] if task_column else [])
        lines.append(",".join(cells + [y[i]]))
    return "\n".join(lines) + "\n"


def cli_cases(args, tmp, tally):
    rng = np.random.RandomState(args.seed)
    for est_name, tasks in CLI_MODELS:
        csv = tmp / "train <&>.csv"
        csv.write_text(_csv(rng, "regressor" in est_name, tasks), encoding="utf-8")
        model = tmp / "cli.model.npz"
        extra = ["--task-column", "task"] if tasks else []
        code, _, err = run_cli(["fit", csv, "-e", est_name, "--model", model, "--quiet",
                                "--label", "label", *extra])
        where = f"CLI {est_name}"
        if code != 0:
            tally.bad(where, f"kernlearn fit exit {code}: {err.strip()[-300:]}")
            continue
        tally.counts["CLI models"] += 1
        cli_report_round(model, where, tmp, tally)
        cli_report_round(model, where + " --data", tmp, tally,
                         ["--data", csv, "--label", "label", *extra])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=3, help="models per estimator")
    ap.add_argument("--estimators", default=",".join(SPACES))
    ap.add_argument("--max-seconds", type=float, default=60.0,
                    help="CPU seconds one report may take")
    ap.add_argument("--max-grow", type=float, default=400.0,
                    help="MB the peak memory may grow by in one report")
    ap.add_argument("--chromium-every", type=int, default=10,
                    help="render every N-th report in headless Chromium (0: never)")
    ap.add_argument("--no-cli", action="store_true")
    ap.add_argument("--tb", action="store_true", help="print tracebacks")
    args = ap.parse_args(argv)
    args.estimators = args.estimators.split(",")
    os.environ.setdefault("MPLBACKEND", "Agg")
    t0 = time.time()
    tally = Tally()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        python_cases(args, tmp, tally)
        if not args.no_cli:
            cli_cases(args, tmp, tally)
    if not shutil.which("chromium") and not shutil.which("chromium-browser"):
        print("Chromium: not installed, rendering not checked")
    print(f"\n{dict(tally.counts)}")
    print(f"{len(tally.violations)} violation(s) in {time.time() - t0:.0f} s")
    return 1 if tally.violations else 0


if __name__ == "__main__":
    sys.exit(main())
