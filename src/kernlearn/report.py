"""One self-contained HTML page describing a fitted model (``kernlearn report``).

The page holds a fit summary, the convergence of the fit (objective and its
bounds, violation / gap against iteration and time), what the model selected
(features and their scaling, kernel weights -- task-specific and shared for
multitask MKL --, Nystrom weights), the learned feature parameters (Fourier
bandwidths, Gabor filters drawn as images) and, given labelled test data, test
metrics and the test score (accuracy; R^2 and RMSE for regressors) against
the number of features kept, or per task for multitask models.  Figures
are PNG images inlined as base64 ``data:`` URIs, so the file can be mailed or
archived on its own.
"""

import base64
import html
import io
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .plotting import _drawn, _linear, _plain, _power_scaled, _scaled_label, _subplots

__all__ = ["build_report", "write_report"]


def _png(fig):
    buf = io.BytesIO()
    _drawn(fig, lambda: fig.savefig(buf, format="png", dpi=90))
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _histories(est):
    h = getattr(est, "history_", None)
    if isinstance(h, dict):
        return [("", h)]
    if isinstance(h, (list, tuple)):
        classes = list(getattr(est, "classes_", []))
        # one history per class (one-vs-rest), otherwise per output: a binary
        # classifier has one output, which is not its first class
        names = (
            [f"class {_plain(c)}" for c in classes]
            if len(classes) == len(h) and len(h) > 1
            else [f"output {t}" if len(h) > 1 else "" for t in range(len(h))]
        )
        return [(lab, d) for lab, d in zip(names, h) if isinstance(d, dict)]
    return []


_DIAGNOSTICS = ("gap", "violation", "kkt")
_LOG_CAP = 1e200  # the largest diagnostic drawn as it is on the log panel


def _convergence_figure(est):
    hists = [
        (lab, h)
        for lab, h in _histories(est)
        if "objective" in h and len(h["objective"])
    ]
    n_hists, hists = len(hists), hists[:10]
    if not hists:
        return None
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    diag = [k for k in _DIAGNOSTICS if any(k in h for _, h in hists)]
    # PNormMKL records no gap: its training error is the third panel then
    extra = [] if diag else [k for k in ("train_error",) if k in hists[0][1]]
    n_ax = 3 if diag or extra else 2
    fig, axes = _subplots(1, n_ax, figsize=(4.4 * n_ax, 3.6))
    # one colour per history (class / output); one line style per quantity
    style = {"gap": "-", "violation": "--", "kkt": ":", "train_error": "-"}
    several = len(hists) > 1
    objectives, bounds, drawn, capped = [], [], set(), 0
    for i, (lab, h) in enumerate(hists):
        colour = f"C{i}"
        obj = np.asarray(h["objective"], dtype=float)
        objectives.append(obj)
        it = np.arange(1, len(obj) + 1)
        t = np.asarray(h.get("time", it), dtype=float)
        lb = np.asarray(h.get("lower_bound", []), dtype=float)
        has_lb = lb.shape == obj.shape and np.isfinite(lb).any()
        if has_lb:
            bounds.append(lb)
        for ax, x in ((axes[0], it), (axes[1], t)):
            ax.plot(x, _linear(obj), "o-", ms=3, color=colour,
                    label=lab if several else "objective")
            if has_lb:
                ax.plot(x, _linear(lb), "s--", ms=3, color=colour if several else "C1",
                        label=None if several else "dual lower bound")
        for key in diag + extra:
            v = np.asarray(h.get(key, []), dtype=float)
            ok = np.isfinite(v) & (v > 0 if key in diag else True)
            if v.shape == obj.shape and ok.any():
                plot = axes[2].semilogy if key in diag else axes[2].plot
                if key in diag:
                    # matplotlib's log locator overflows on some 300 decades
                    # (a gap of 2e296 beside a violation of 2e148, from a
                    # column scaled by 1e150, was an OverflowError): larger
                    # values are drawn at the cap and counted in the title
                    capped += int(np.count_nonzero(v[ok] > _LOG_CAP))
                    v = np.minimum(v, _LOG_CAP)
                plot(it[ok], v[ok], ".", ls=style[key], ms=4,
                     color=colour if several else f"C{len(drawn)}",
                     label=None if several else key)
                drawn.add(key)
    from .plotting import _bounded_ylim

    ylim, n_clipped = _bounded_ylim(objectives, bounds)
    # a regressor's objective is that of its standardised targets: the same
    # numbers in any units of y, which the axis once left the reader to guess
    mean, scale = getattr(est, "y_mean_", None), getattr(est, "y_scale_", None)
    mapped = scale is not None and (np.any(scale != 1) or np.any(mean != 0))
    for ax in axes[:2]:
        ax.set_ylim(*ylim)
        ax.set_ylabel("objective (standardised y)" if mapped else "objective")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=ax is axes[0]))
        # absolute times with an offset text (+2.449e1) are unreadable; the
        # objective keeps matplotlib's scientific ticks beyond 1e6 (plain, an
        # objective of 1e50 wrote 50-digit labels: "Tight layout not applied")
        ax.ticklabel_format(axis="both", useOffset=False)
        ax.ticklabel_format(axis="x", style="plain")
        if n_clipped:  # a title, not a text inside the axes over the lines
            ax.set_title(f"{n_clipped} bound value(s) below the axis (min "
                         f"{min(float(np.nanmin(b)) for b in bounds):.3g})",
                         fontsize=8, color="tab:orange")
    # several histories: the classes on the first panel, the bound's style
    # there too; the line styles of the diagnostics on the third
    handles, labels = axes[0].get_legend_handles_labels()
    if several and bounds:
        handles.append(Line2D([], [], color="grey", ls="--", marker="s", ms=3))
        labels.append("dual lower bound")
    axes[0].legend(handles, labels, fontsize=7, ncol=2 if len(labels) > 5 else 1)
    if not several:
        axes[1].legend(fontsize=7)
    axes[0].set_xlabel("outer iteration / epoch")
    axes[1].set_xlabel("time (s)")
    if n_ax == 3:
        axes[2].set_xlabel("outer iteration / epoch")
        axes[2].set_ylabel("violation / gap (log)" if diag else "training error")
        axes[2].xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
        if capped:
            axes[2].set_title(f"{capped} value(s) above {_LOG_CAP:.0e} drawn at it",
                              fontsize=8, color="tab:orange")
        if not drawn:
            fig.delaxes(axes[2])
        elif several:
            axes[2].legend(
                [Line2D([], [], color="grey", ls=style[k]) for k in sorted(drawn)],
                sorted(drawn), fontsize=7)
        else:
            axes[2].legend(fontsize=7)
    # (100 classes drew 10 lines and a legend of 10 with nothing said of the rest)
    fig.suptitle("Convergence" + (f" of the first {len(hists)} of {n_hists} classes or "
                                  "outputs" if n_hists > len(hists) else ""))
    return fig


def _kernel_labels(est, meta):
    from .summary import selection_table

    _, rows = selection_table(est, meta)
    return [r[1] or str(r[0]) for r in rows]


def _selection_figure(est, meta):
    from matplotlib.ticker import MaxNLocator

    from .summary import feature_names, selected_weights

    if hasattr(est, "selected_features_"):
        n_sel = len(est.selected_features_)
        sel = np.asarray(est.selected_features_)[:60]
        if sel.size == 0:
            return None
        # weights near the float maximum drawn divided by a power of ten (their
        # ticks and bars overflowed), named on the axis
        w, exponent = _power_scaled(np.abs(selected_weights(est)[:, :60]).max(axis=0))
        names = feature_names(est, meta)
        labels = [
            _plain(names[j])
            if names and getattr(est, "family_", None) is None and j < len(names)
            else str(j)
            for j in sel
        ]
        fig, ax = _subplots(figsize=(min(13, 3 + 0.22 * len(sel)), 3.8))
        ax.bar(range(len(sel)), w, color="tab:blue")
        ax.set_xticks(range(len(sel)))
        ax.set_xticklabels(labels, rotation=90, fontsize=7)
        ax.set_ylabel(_scaled_label("max |coef|", exponent))
        # (300 selected drew 60 bars under this title, the rest unmentioned)
        ax.set_title("Selected features in order of inclusion"
                     + (f": the first {len(sel)} of {n_sel}" if n_sel > len(sel) else ""))
        return fig
    if hasattr(est, "kernel_weights_"):
        labels = [_plain(lab, 40) for lab in _kernel_labels(est, meta)]
        task_w = np.asarray(est.kernel_weights_, dtype=float)
        shared = np.asarray(getattr(est, "shared_kernel_weights_", []), dtype=float)
        shared = shared if shared.shape == task_w.shape and shared.any() else None
        # one factor for both sets of bars (weights of 1e308 drew an axis of
        # +-1e-12 and warned "overflow encountered in scalar subtract")
        both, exponent = _power_scaled(task_w if shared is None else np.r_[task_w, shared])
        task_w, shared = both[:len(task_w)], None if shared is None else both[len(task_w):]
        x = np.arange(len(task_w))
        fig, ax = _subplots(figsize=(max(5, 0.6 * len(task_w)), 3.5))
        if shared is None:
            ax.bar(x, task_w, color="tab:green")
            ax.set_title("Learned kernel weights")
        else:  # the shared blocks of multitask MKL carry the rest of the simplex
            ax.bar(x - 0.2, task_w, 0.4, color="tab:green", label="task-specific")
            ax.bar(x + 0.2, shared, 0.4, color="tab:olive", label="shared")
            ax.legend(fontsize=8)
            ax.set_title("Kernel weights: task-specific and shared")
        ax.set_xticks(x)
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(_scaled_label("weight", exponent))
        return fig
    if hasattr(est, "mu_"):
        # the classifier has one mu per output: show the columns' largest weight
        mu = np.sort(np.max(np.atleast_2d(est.mu_), axis=0))[::-1]
        nz = mu[mu > 0]
        if nz.size == 0:
            # an all-zero model drew an empty log axis (x ticks -0.045 ...
            # 0.045); the selection table's section says it kept nothing
            return None
        # (a log axis's decades beyond 1e308 raised "cannot convert float
        # infinity to integer")
        nz, exponent = _power_scaled(nz)
        fig, ax = _subplots(figsize=(6, 3.5))
        # zeros have no place on a log axis (a symlog axis put "0" onto "1e-4"):
        # the title counts them
        ax.semilogy(np.arange(len(nz)), nz, "o", ms=4)
        ax.vlines(np.arange(len(nz)), nz.min() / 2, nz, lw=1)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("sampled column (sorted by weight)")
        ax.set_ylabel(_scaled_label("mu (log)", exponent))
        ax.set_title(f"Nystrom column weights: {nz.size} of {len(mu)} non-zero")
        return fig
    if hasattr(est, "features_") and len(est.features_):
        from .summary import feature_weight_norms

        # the selection table's weight_norm (the bars summed the cos and sin
        # columns' norms: 11.5 against the table's 8.3)
        # (a norm beyond the float range is drawn at the float maximum)
        norms, exponent = _power_scaled(np.minimum(feature_weight_norms(est),
                                                   np.finfo(float).max))
        fig, ax = _subplots(figsize=(6, 3.5))
        ax.bar(range(len(norms)), norms, color="tab:purple")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("learned feature (order of inclusion)")
        ax.set_ylabel(_scaled_label("weight norm", exponent))
        ax.set_title("Learned features")
        return fig
    return None


def _feature_parameter_figure(est):
    from .families import GaborFeatures, RandomFourierFeatures

    fam = getattr(est, "family_", None)
    F = getattr(est, "features_", None)
    if fam is None or F is None or len(F) == 0:
        return None, ""
    if isinstance(fam, RandomFourierFeatures):
        from matplotlib.ticker import MaxNLocator

        bw = np.asarray(F)[:, -1]
        # one point per feature: a histogram of a single bandwidth is one bar
        # spanning an arbitrary range
        fig, ax = _subplots(figsize=(6, 3.5))
        ax.plot(np.arange(len(bw)), bw, "o", color="tab:orange")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("learned feature (order of inclusion)")
        ax.set_ylabel("bandwidth sigma")
        ax.set_title("Bandwidths of the learned Fourier features")
        return fig, "Learned Fourier bandwidths"
    if isinstance(fam, GaborFeatures):
        filt = fam.filters(F[:32])
        k = len(filt)
        cols = min(8, k)
        rows = int(np.ceil(k / cols))
        fig, axes = _subplots(
            rows, cols, figsize=(1.4 * cols, 1.4 * rows), squeeze=False
        )
        for a in axes.ravel()[k:]:
            fig.delaxes(a)  # a grid cell without a filter
        for a, f in zip(axes.ravel(), filt):
            a.axis("off")
            a.imshow(f.reshape(fam.filter_size, fam.filter_size), cmap="gray")
        fig.suptitle("Learned Gabor filters")
        return fig, "Learned Gabor filters"
    return None, ""


def _scores(est, y, pred):
    """Test scores of predictions: accuracy, or R^2 and RMSE for a regressor."""
    from sklearn import metrics

    from .summary import r2

    if hasattr(est, "classes_"):
        return {"accuracy": float(metrics.accuracy_score(y, pred))}
    # (R^2 of one test row is NaN, as the metrics table shows it, without
    # scikit-learn's "not well-defined" once per point of the score curve)
    return {"R^2": r2(y, pred), "RMSE": float(np.sqrt(metrics.mean_squared_error(y, pred)))}


def _truncated_scores(est, X, y):
    """Test scores of the model restricted to its first k features (inclusion order).

    Not a refit: the final weights of the first k features are kept and the
    others zeroed, which shows how much each added feature contributes.  An
    average of GrFL paths (``n_paths_`` above 1) has no single order of
    inclusion: its first k features are one path's at a fraction of their
    weight, so it gets no curve (``None``).
    """
    import copy

    if getattr(est, "n_paths_", 1) > 1:
        return None
    if hasattr(est, "selected_features_") and getattr(est, "family_", None) is None:
        order = np.asarray(est.selected_features_)
        attr = "coef_"
        index = [[j] for j in order]
    elif hasattr(est, "features_") and len(getattr(est, "features_", [])):
        n = len(est.features_)
        gs = max(1, np.atleast_2d(est.column_coef_).shape[1] // n)
        attr = "_coef_tasks" if hasattr(est, "_coef_tasks") else "column_coef_"
        index = [list(range(r * gs, (r + 1) * gs)) for r in range(n)]
    else:
        return None
    full = getattr(est, attr)
    if sp.issparse(full) or len(index) < 2:
        return None
    # FGM centres dense columns through its intercept (coef_ is on the raw
    # columns): a dropped feature keeps its share at the training mean, the
    # zero of the standardised model, or a column far from zero shifts every
    # score by coef * mean (R^2 -1e5 at a mean of 1,000)
    mean = getattr(est, "x_mean_", None) if attr == "coef_" else None
    steps = sorted(set(np.unique(np.linspace(1, len(index), 12).astype(int))))
    ks, scores = [], []
    for k in steps:
        trunc = copy.copy(est)
        keep = np.zeros(full.shape[-1], dtype=bool)
        keep[np.concatenate([index[i] for i in range(k)])] = True
        setattr(trunc, attr, np.where(keep, full, 0.0))
        if mean is not None:
            trunc.intercept_ = est.intercept_ + np.where(keep, 0.0, full) @ mean
        ks.append(k)
        scores.append(_scores(est, y, trunc.predict(X)))
    return ks, scores


def _score_axes(ax, x, scores, xlabel, line="-"):
    """Plot accuracy, or R^2 with RMSE on a second axis; returns the axes."""
    names = list(scores[0])
    ax.plot(x, [s[names[0]] for s in scores], "o" + line, color="tab:blue",
            label=f"test {names[0]}")
    ax.set_ylabel(f"test {names[0]}", color="tab:blue")
    ax.set_xlabel(xlabel)
    if len(names) > 1:  # a regressor: the error in the target's units as well
        ax2 = ax.twinx()
        ax2.plot(x, [s[names[1]] for s in scores], "s" + line * 2, color="tab:red",
                 label=f"test {names[1]}")
        ax2.set_ylabel(f"test {names[1]}", color="tab:red")
        return [ax, ax2]
    return [ax]


def _accuracy_figure(est, X, y, tasks=None):
    from matplotlib.ticker import MaxNLocator

    if tasks is not None:
        # multitask: one score per task (features are not selected)
        pred = est.predict(X, task_index=tasks)
        ids = [t for t in np.unique(tasks)]
        scores = [_scores(est, y[tasks == t], pred[tasks == t]) for t in ids]
        fig, ax = _subplots(figsize=(max(6, 0.35 * len(ids)), 3.5))
        _score_axes(ax, np.arange(len(ids)), scores, "task", line="")
        ax.set_xticks(np.arange(len(ids)))
        ax.set_xticklabels([_plain(t) for t in ids], rotation=90 if len(ids) > 12 else 0,
                           fontsize=7)
        ax.set_title("Test score per task")
        return fig
    res = _truncated_scores(est, X, y)
    if res is None:
        return None
    ks, scores = res
    fig, ax = _subplots(figsize=(6, 3.5))
    _score_axes(ax, ks, scores, "features kept (first k in order of inclusion)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Test score against number of features")
    return fig


def _figures(est, meta, data=None):
    """The report's figures: a list of ``(title, matplotlib figure, caption)``."""
    figures = []
    conv = _convergence_figure(est)
    if conv:
        figures.append(
            (
                "Convergence",
                conv,
                "objective (upper bound) and, when recorded, the dual lower bound "
                "per outer iteration and against time (bounds far below the "
                "objective are clipped and counted); right: violation / duality "
                "gap / KKT residual",
            )
        )
    sel = _selection_figure(est, meta)
    if sel:
        figures.append(("Selection", sel, "what the model kept"))
    fpar, title = _feature_parameter_figure(est)
    if fpar:
        figures.append((title, fpar, "parameters of the learned features"))
    if data is not None:
        X, y = data[:2]
        tasks = data[3] if len(data) > 3 else None
        acc = _accuracy_figure(est, X, np.asarray(y), tasks)
        if acc and tasks is None:
            figures.append(
                (
                    "Test score vs number of features",
                    acc,
                    "the final model restricted to its first k features "
                    "(others zeroed, no refit)",
                )
            )
        elif acc:
            figures.append(("Test score per task", acc, "test data of each task"))
    return figures


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
p.warning { color: #8a4b00; background: #fff4e0; padding: 0.4em 0.8em; }
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

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If ``est`` is not fitted.
    """
    from sklearn.utils.validation import check_is_fitted

    from . import __version__
    from .summary import evaluate_metrics, selection_table

    check_is_fitted(est)  # an unfitted model's report showed its parameters only
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
    for attr in ("n_iter_", "stop_reason_", "converged_", "objective_", "gap_",
                 "m0_", "R_", "shared_"):
        if hasattr(est, attr):
            summary.append((attr, getattr(est, attr)))
    if getattr(est, "converged_", True) is False:
        # (a row "converged_ False" in the table was all the page said of it)
        from .progress import STOP_REASONS

        reason = getattr(est, "stop_reason_", None)
        why = f": {STOP_REASONS.get(reason, reason)}" if reason else ""
        parts.append(f'<p class="warning">The fit stopped before meeting its convergence '
                     f"test (converged_ is False){html.escape(why)}; the model is the "
                     "one reached when it stopped.</p>")
    parts += ["<h2>Fit summary</h2>", _table(summary)]
    params = [(k, repr(v)) for k, v in est.get_params(deep=False).items()]
    parts += ["<h2>Parameters</h2>", _table(params, ["parameter", "value"])]

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
    # (figures pyplot never holds: nothing stays open when drawing fails)
    figures = [(t, _png(fig), c) for t, fig, c in _figures(est, meta, data)]
    for title, png, caption in figures:
        parts.append(
            f'<h2>{html.escape(title)}</h2><figure><img class="figure" '
            f'alt="{html.escape(title)}" src="data:image/png;base64,{png}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
    try:
        cols, rows = selection_table(est, meta)
        parts += ["<h2>Selection table</h2>", _table(rows[:200], cols)]
        if len(rows) > 200:  # (cut at 200 rows without a word: 300 selected)
            parts.append(f"<p>The first 200 of {len(rows)} rows; <code>kernlearn "
                         "select</code> lists them all.</p>")
        if not rows:
            parts.append("<p>The model kept nothing: no feature, learned feature or "
                         "column has a non-zero weight, so it predicts a constant.</p>")
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
        Output HTML file (written to a temporary file beside it, then renamed).
    data : tuple (X, y, name), optional
        Labelled test data.

    Returns
    -------
    path : str
    """
    from .io import write_atomically

    text = build_report(est, meta, data)
    return write_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
