"""One self-contained HTML page describing a fitted model (``kernlearn report``).

The page holds a fit summary, the convergence of the fit (objective and its
bounds, violation / gap against iteration and time), what the model selected
(features and their scaling, kernel weights, Nystrom weights), the learned
feature parameters (Fourier bandwidths, Gabor filters drawn as images) and,
given labelled test data, test metrics and accuracy against the number of
features kept.  Figures are PNG images inlined as base64 ``data:`` URIs, so
the file can be mailed or archived on its own.
"""

import base64
import html
import io

import numpy as np
import scipy.sparse as sp

__all__ = ["build_report", "write_report"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig):
    plt = _pyplot()
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _histories(est):
    h = getattr(est, "history_", None)
    if isinstance(h, dict):
        return [("", h)]
    if isinstance(h, (list, tuple)):
        classes = getattr(est, "classes_", range(len(h)))
        return [(f"class {c}", d) for c, d in zip(classes, h) if isinstance(d, dict)]
    return []


def _convergence_figure(est):
    hists = [
        (lab, h)
        for lab, h in _histories(est)
        if "objective" in h and len(h["objective"])
    ]
    if not hists:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for lab, h in hists[:10]:
        it = np.arange(1, len(h["objective"]) + 1)
        t = h.get("time", it)
        for ax, x in ((axes[0], it), (axes[1], t)):
            ax.plot(x, h["objective"], "o-", ms=3, label=f"objective {lab}".strip())
            if "lower_bound" in h and np.isfinite(h["lower_bound"]).any():
                ax.plot(
                    x,
                    h["lower_bound"],
                    "s--",
                    ms=3,
                    label=f"dual lower bound {lab}".strip(),
                )
        for key in ("gap", "violation", "kkt"):
            if key in h:
                v = np.asarray(h[key], dtype=float)
                ok = np.isfinite(v) & (v > 0)
                if ok.any():
                    axes[2].semilogy(it[ok], v[ok], ".-", label=f"{key} {lab}".strip())
    axes[0].set_xlabel("outer iteration / epoch")
    axes[1].set_xlabel("time (s)")
    for ax in axes[:2]:
        ax.set_ylabel("objective")
        ax.legend(fontsize=7)
    axes[2].set_xlabel("outer iteration / epoch")
    axes[2].set_ylabel("violation / gap (log)")
    if axes[2].lines:
        axes[2].legend(fontsize=7)
    else:
        axes[2].text(
            0.5,
            0.5,
            "no violation or gap recorded",
            ha="center",
            transform=axes[2].transAxes,
        )
    fig.suptitle("Convergence")
    return _png(fig)


def _selection_figure(est, meta):
    plt = _pyplot()
    if hasattr(est, "selected_features_"):
        sel = np.asarray(est.selected_features_)[:60]
        if sel.size == 0:
            return None
        coef = (
            est.coef_.toarray() if sp.issparse(est.coef_) else np.atleast_2d(est.coef_)
        )
        w = np.abs(coef[:, sel]).max(axis=0)
        names = meta.get("feature_names")
        labels = [
            names[j]
            if names and getattr(est, "family_", None) is None and j < len(names)
            else str(j)
            for j in sel
        ]
        fig, ax = plt.subplots(figsize=(min(13, 3 + 0.22 * len(sel)), 3.8))
        ax.bar(range(len(sel)), w, color="tab:blue")
        ax.set_xticks(range(len(sel)))
        ax.set_xticklabels(labels, rotation=90, fontsize=7)
        ax.set_ylabel("max |coef|")
        ax.set_title("Selected features in order of inclusion")
        return _png(fig)
    if hasattr(est, "kernel_weights_"):
        from .summary import selection_table

        _, rows = selection_table(est, meta)
        fig, ax = plt.subplots(figsize=(max(5, 0.5 * len(rows)), 3.5))
        ax.bar(range(len(rows)), [r[2] for r in rows], color="tab:green")
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([r[1] or str(r[0]) for r in rows], rotation=30, fontsize=8)
        ax.set_ylabel("weight")
        ax.set_title("Learned kernel weights")
        return _png(fig)
    if hasattr(est, "mu_"):
        # the classifier has one mu per output: show the columns' largest weight
        mu = np.sort(np.max(np.atleast_2d(est.mu_), axis=0))[::-1]
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.stem(np.arange(len(mu)), mu)
        ax.set_yscale("symlog", linthresh=max(mu.max(), 1e-12) * 1e-4)
        ax.set_xlabel("sampled column (sorted)")
        ax.set_ylabel("mu")
        ax.set_title(
            f"Nystrom column weights: {int(np.count_nonzero(mu))} of {len(mu)} non-zero"
        )
        return _png(fig)
    if hasattr(est, "features_") and len(est.features_):
        w = np.linalg.norm(np.atleast_2d(est.coef_), axis=0)
        gs = max(1, w.size // len(est.features_))
        norms = w.reshape(len(est.features_), gs).sum(axis=1)
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.bar(range(len(norms)), norms, color="tab:purple")
        ax.set_xlabel("learned feature (order of inclusion)")
        ax.set_ylabel("weight norm")
        ax.set_title("Learned features")
        return _png(fig)
    return None


def _feature_parameter_figure(est):
    from .families import GaborFeatures, RandomFourierFeatures

    fam = getattr(est, "family_", None)
    F = getattr(est, "features_", None)
    if fam is None or F is None or len(F) == 0:
        return None, ""
    plt = _pyplot()
    if isinstance(fam, RandomFourierFeatures):
        bw = np.asarray(F)[:, -1]
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.hist(bw, bins=min(30, max(5, len(np.unique(bw)))), color="tab:orange")
        ax.set_xlabel("bandwidth sigma")
        ax.set_ylabel("learned features")
        ax.set_title("Bandwidths of the learned Fourier features")
        return _png(fig), "Learned Fourier bandwidths"
    if isinstance(fam, GaborFeatures):
        filt = fam.filters(F[:32])
        k = len(filt)
        cols = min(8, k)
        rows = int(np.ceil(k / cols))
        fig, axes = plt.subplots(
            rows, cols, figsize=(1.4 * cols, 1.4 * rows), squeeze=False
        )
        for a in axes.ravel():
            a.axis("off")
        for a, f in zip(axes.ravel(), filt):
            a.imshow(f.reshape(fam.filter_size, fam.filter_size), cmap="gray")
        fig.suptitle("Learned Gabor filters")
        return _png(fig), "Learned Gabor filters"
    return None, ""


def _truncated_scores(est, X, y):
    """Test score of the model restricted to its first k features (inclusion order).

    Not a refit: the final weights of the first k features are kept and the
    others zeroed, which shows how much each added feature contributes.
    """
    import copy

    if hasattr(est, "selected_features_") and getattr(est, "family_", None) is None:
        order = np.asarray(est.selected_features_)
        attr = "coef_"
        index = [[j] for j in order]
    elif hasattr(est, "features_") and len(getattr(est, "features_", [])):
        n = len(est.features_)
        gs = max(1, np.atleast_2d(est.coef_).shape[1] // n)
        attr = "_coef_tasks" if hasattr(est, "_coef_tasks") else "coef_"
        index = [list(range(r * gs, (r + 1) * gs)) for r in range(n)]
    else:
        return None
    full = getattr(est, attr)
    if sp.issparse(full) or len(index) < 2:
        return None
    steps = sorted(set(np.unique(np.linspace(1, len(index), 12).astype(int))))
    ks, scores = [], []
    for k in steps:
        trunc = copy.copy(est)
        keep = np.zeros(full.shape[-1], dtype=bool)
        keep[np.concatenate([index[i] for i in range(k)])] = True
        setattr(trunc, attr, np.where(keep, full, 0.0))
        ks.append(k)
        scores.append(float(trunc.score(X, y)))
    return ks, scores


def _accuracy_figure(est, X, y):
    res = _truncated_scores(est, X, y)
    if res is None:
        return None
    plt = _pyplot()
    ks, scores = res
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(ks, scores, "o-")
    ax.set_xlabel("features kept (first k in order of inclusion)")
    ax.set_ylabel("test accuracy" if hasattr(est, "classes_") else "test R^2")
    ax.set_title("Test score against number of features")
    return _png(fig)


def _table(rows, header=None):
    out = ["<table>"]
    if header:
        out.append(
            "<tr>"
            + "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
            + "</tr>"
        )
    for r in rows:
        out.append(
            "<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in r) + "</tr>"
        )
    out.append("</table>")
    return "\n".join(out)


def _fmt(v):
    if isinstance(v, (float, np.floating)):
        return f"{v:.6g}"
    return str(v)


_STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 1250px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
figure { margin: 1em 0; } img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
"""

# Written into the page so that a headless browser's DOM dump says whether
# every figure decoded (tests/test_report.py reads it).
_CHECK_SCRIPT = """
<script>
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.querySelectorAll("img.figure"));
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; });
  var boxes = imgs.map(function (i) { var r = i.getBoundingClientRect();
    return [Math.round(r.left), Math.round(r.top + window.scrollY),
            Math.round(r.width), Math.round(r.height)].join(","); });
  var el = document.getElementById("render-check");
  el.setAttribute("data-loaded", ok.length);
  el.setAttribute("data-total", imgs.length);
  el.setAttribute("data-boxes", boxes.join(";"));
});
</script>
"""


def build_report(est, meta=None, data=None):
    """HTML text of the report.

    Parameters
    ----------
    est : estimator
        A fitted kernlearn estimator.
    meta : dict, optional
        Model metadata (as stored by ``kernlearn fit``).
    data : tuple (X, y, name) or (X, y, name, tasks), optional
        Labelled test data (with each sample's task for multitask models).

    Returns
    -------
    html : str
    """
    from . import __version__
    from .summary import evaluate_metrics, selection_table

    meta = meta or {}
    name = type(est).__name__
    parts = [f"<h1>kernlearn model report: {html.escape(name)}</h1>"]
    summary = [
        ("estimator", f"{name} ({meta.get('cli_estimator', 'Python API')})"),
        ("kernlearn", __version__),
    ]
    for key, label in (
        ("source", "training data"),
        ("n_samples", "training samples"),
        ("n_features", "features"),
        ("format", "file format"),
        ("fit_seconds", "fit time (s)"),
        ("train_score", "training score"),
    ):
        if meta.get(key) is not None:
            summary.append((label, meta[key]))
    for attr in ("n_iter_", "stop_reason_", "converged_", "objective_", "m0_", "R_"):
        if hasattr(est, attr):
            summary.append((attr, getattr(est, attr)))
    parts += ["<h2>Fit summary</h2>", _table(summary)]
    params = [(k, repr(v)) for k, v in est.get_params(deep=False).items()]
    parts += ["<h2>Parameters</h2>", _table(params, ["parameter", "value"])]

    figures = []
    conv = _convergence_figure(est)
    if conv:
        figures.append(
            (
                "Convergence",
                conv,
                "objective (upper bound) and, when "
                "recorded, the dual lower bound per outer iteration and against "
                "time; right: violation / duality gap / KKT residual",
            )
        )
    sel = _selection_figure(est, meta)
    if sel:
        figures.append(("Selection", sel, "what the model kept"))
    fpar, title = _feature_parameter_figure(est)
    if fpar:
        figures.append((title, fpar, "parameters of the learned features"))
    if data is not None:
        X, y, source = data[:3]
        tasks = data[3] if len(data) > 3 else None
        task = meta.get("task") or (
            "classification" if hasattr(est, "classes_") else "regression"
        )
        metrics = evaluate_metrics(est, X, y, task, tasks)
        parts += [
            f"<h2>Test metrics on {html.escape(source)}</h2>",
            _table(list(metrics.items())),
        ]
        acc = _accuracy_figure(est, X, y) if tasks is None else None
        if acc:
            figures.append(
                (
                    "Test score vs number of features",
                    acc,
                    "the final model restricted to its first k features "
                    "(others zeroed, no refit)",
                )
            )
    for title, png, caption in figures:
        parts.append(
            f'<h2>{html.escape(title)}</h2><figure><img class="figure" '
            f'alt="{html.escape(title)}" src="data:image/png;base64,{png}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
    try:
        cols, rows = selection_table(est, meta)
        parts += ["<h2>Selection table</h2>", _table(rows[:200], cols)]
    except ValueError:  # an estimator without a selection has no table
        pass
    parts.append('<div id="render-check"></div>')
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>kernlearn report: {html.escape(name)}</title>"
        f"<style>{_STYLE}</style></head><body>\n"
        + "\n".join(parts)
        + _CHECK_SCRIPT
        + "</body></html>\n"
    )


def write_report(est, meta, path, data=None):
    """Write :func:`build_report` to ``path``.

    Parameters
    ----------
    est : estimator
        A fitted kernlearn estimator.
    meta : dict or None
        Model metadata.
    path : str or path-like
        Output HTML file.
    data : tuple (X, y, name), optional
        Labelled test data.

    Returns
    -------
    path : str
    """
    text = build_report(est, meta, data)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return str(path)
