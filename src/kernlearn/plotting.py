"""Plots of fitted models, written to files (matplotlib, the ``plot`` extra)."""

import warnings

import numpy as np

__all__ = ["plot_accuracy_vs_features", "plot_convergence", "plot_kernel_weights"]


def _subplots(*args, figsize=None, **kwargs):
    """``plt.subplots(*args, figsize=figsize, **kwargs)`` on a figure pyplot never holds.

    The figure is drawn by Agg directly.  (``matplotlib.use("Agg")`` switched
    the backend of the whole process: a notebook's inline figures, or a desktop
    session's windows, stopped showing after the first plot; and pyplot kept
    every figure whose drawing failed.)  Nothing is left to close.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - optional extra
        raise ImportError('plotting needs matplotlib: pip install "kernlearn[plot]"') from exc
    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig, fig.subplots(*args, **kwargs)


def _plain(text, limit=30):
    """A name from the data as a figure label: shown as written, and short.

    Matplotlib reads text between two ``$`` as mathtext: a column named
    ``$^$`` made the report fail (ParseSyntaxException) and ``$x$`` drew an
    italic x.  Names longer than ``limit`` characters are cut (the tables keep
    them whole): a 300-character name as a tick label pushed the axes off the
    figure ("Tight layout not applied").  ``limit=None``: not cut (the plot
    functions' titles and axis labels, which the caller chose).
    """
    text = str(text)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    return text.replace("$", r"\$")


def _drawn(fig, write):
    """Lay ``fig`` out and ``write`` it, without a warning per glyph the font lacks.

    A name in a script the default font does not cover (a column named
    ``日本語``) drew placeholder boxes, as it must with that font, and warned
    "Glyph ... missing from font(s)" once per character and drawing pass; the
    tables of the report show such names whole.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from font",
                                category=UserWarning)
        fig.tight_layout()
        return write()


def _save(fig, path):
    """Save ``fig`` through a temporary file renamed into place (format from the suffix)."""
    from pathlib import Path

    from .io import write_atomically

    fmt = Path(path).suffix[1:].lower() or "png"
    _drawn(fig, lambda: write_atomically(
        path, lambda tmp: fig.savefig(tmp, dpi=100, format=fmt)))


_LINEAR_CAP = 1e300  # the largest objective magnitude drawn as it is


def _linear(values):
    """``values`` as floats, those beyond :data:`_LINEAR_CAP` in magnitude
    drawn at it: near the float maximum the span of the data overflowed
    (limits of inf, "arange: cannot compute length"; matplotlib's autoscale
    warned "overflow encountered in scalar subtract")."""
    return np.clip(np.asarray(values, dtype=float), -_LINEAR_CAP, _LINEAR_CAP)


def _power_scaled(values):
    """``values`` as floats, divided by a power of ten when beyond :data:`_LINEAR_CAP`.

    Near the float maximum matplotlib's tick steps (a power of ten times up
    to 10), the bars' geometry and a log axis's decades overflowed
    ("overflow encountered in multiply", limits of +-1e-12, "cannot convert
    float infinity to integer"); divided by ``10**exponent`` the values keep
    their ratios, all a chart shows, and the axis label names the factor.

    Parameters
    ----------
    values : array-like
        Values drawn on one axis (NaN or infinite ones are left as they are;
        the largest finite magnitude sets the factor).

    Returns
    -------
    scaled : ndarray
        ``values`` divided by ``10**exponent``.
    exponent : int
        0 when every magnitude is at most :data:`_LINEAR_CAP` (``values``
        unchanged), else the decimal exponent of the largest magnitude.
    """
    values = np.asarray(values, dtype=float)
    top = float(np.max(np.abs(values[np.isfinite(values)]), initial=0.0))
    if top <= _LINEAR_CAP:
        return values, 0
    exponent = int(np.floor(np.log10(top)))
    return values / 10.0 ** exponent, exponent


def _scaled_label(label, exponent):
    """Axis label ``label`` naming the factor :func:`_power_scaled` divided by.

    Parameters
    ----------
    label : str
        The quantity drawn.
    exponent : int
        The exponent :func:`_power_scaled` returned.

    Returns
    -------
    label : str
    """
    return f"{label} (\u00d7 1e{exponent})" if exponent else label


def _bounded_ylim(objectives, bounds):
    """Y-range of the objective panels: every objective, and the bounds near them.

    A dual lower bound of the first iterations can lie orders of magnitude
    below the objective (-1.2e7 against 30): on one axis it flattens the
    objective's path to a line.  The range covers the objectives plus one
    objective-span below them; bounds further down are clipped and counted.
    """
    objectives, bounds = [_linear(o) for o in objectives], [_linear(b) for b in bounds]
    obj = np.concatenate([o[np.isfinite(o)] for o in objectives] or [np.zeros(0)])
    if obj.size == 0:
        return None, 0
    lo, hi = float(obj.min()), float(obj.max())
    span = hi - lo if hi > lo else max(abs(hi), 1.0) * 0.1
    floor = lo - span
    low = [b[np.isfinite(b)] for b in bounds]
    kept = np.concatenate([b[b >= floor] for b in low] or [np.zeros(0)])
    n_clipped = int(sum(np.count_nonzero(b < floor) for b in low))
    bottom = min(lo, float(kept.min())) if kept.size else lo
    pad = 0.05 * (hi - bottom if hi > bottom else span)
    return (bottom - pad, hi + pad), n_clipped


def plot_convergence(history, path, title="Convergence"):
    """Objective (and the Theorem-2 lower bound, when recorded) per outer iteration.

    Bound values more than the objective's own span below its smallest value
    are left off the axis (and counted on it), so that the objective's path
    stays visible.

    Parameters
    ----------
    history : dict of ndarray
        A fitted ``history_`` with an ``objective`` column and optionally
        ``lower_bound`` and ``n_active`` (of a model with one history per
        class or output, one item of its list).
    path : str or path-like
        Output image file (format from the extension, e.g. ``.png``).
    title : str
        Figure title, shown as written (a ``$`` is not read as mathtext).

    Returns
    -------
    path : str

    Raises
    ------
    ValueError
        If ``history`` is a list of histories, has no finite ``objective``
        value, or an ``n_active`` column of another length.
    """
    if isinstance(history, (list, tuple)):
        # (a one-vs-rest or per-output history_ was "history has no
        # 'objective' column to plot")
        raise ValueError(
            f"history is a list of {len(history)} histories (a fitted history_ "
            "holds one per class or output): plot one of them, e.g. history_[0].")
    if "objective" not in history:
        raise ValueError("history has no 'objective' column to plot.")
    obj = np.asarray(history["objective"], dtype=float)
    # (an empty or all-NaN objective wrote an empty figure without a word)
    if not np.isfinite(obj).any():
        raise ValueError(f"history's objective has no finite value to plot ({obj.size} "
                         "values); a fit that recorded no iteration has no convergence.")
    # (matplotlib's "x and y must have same first dimension" named no column;
    # a lower_bound of another length is left out of the figure, as before)
    n = np.size(history.get("n_active", obj))
    if n != obj.size:
        raise ValueError(f"history's n_active has {n} values for {obj.size} objective "
                         "values.")
    fig, ax = _subplots(figsize=(5, 3.5))
    _draw_convergence(fig, ax, history, title)
    _save(fig, path)
    return str(path)


def _draw_convergence(fig, ax, history, title):
    """The axes of :func:`plot_convergence`."""
    obj = np.asarray(history["objective"], dtype=float)
    it = np.arange(1, len(obj) + 1)
    ax.plot(it, _linear(obj), "o-", label="objective (upper bound)")
    lb = np.asarray(history.get("lower_bound", []), dtype=float)
    bounds = [lb] if lb.shape == obj.shape and np.isfinite(lb).any() else []
    if bounds:
        ax.plot(it, _linear(lb), "s--", label="dual lower bound")
    ylim, n_clipped = _bounded_ylim([obj], bounds)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_xlabel("outer iteration")
    ax.set_ylabel("objective")
    # (the caller's title as written: mathtext of "$^$" failed the save,
    # after the figure was drawn, and "$x$" drew an italic x)
    title = _plain(title, None)
    ax.set_title(title if not n_clipped else f"{title}\n({n_clipped} bound value(s) "
                 f"below the axis, min {float(np.nanmin(lb)):.3g})", fontsize=9)
    ax.legend()
    if "n_active" in history:
        ax2 = ax.twinx()
        ax2.plot(it, history["n_active"], color="grey", alpha=0.5)
        ax2.set_ylabel("active columns", color="grey")


def plot_accuracy_vs_features(
    curves, path, title="Accuracy vs selected features", metric="test accuracy"
):
    """Test score against number of selected features, one line per method.

    Parameters
    ----------
    curves : dict of str -> (array-like, array-like)
        Method name to ``(n_features, accuracy)``.
    path : str or path-like
        Output image file.
    title : str
        Figure title, shown as written (a ``$`` is not read as mathtext).
    metric : str, default="test accuracy"
        Y-axis label: the score plotted (e.g. ``"test R^2"`` for regressors),
        shown as written.

    Returns
    -------
    path : str

    Raises
    ------
    ValueError
        If ``curves`` is empty, a curve's two sequences differ in length, or
        no curve has a finite point.
    """
    # (no curves wrote an empty figure with matplotlib's "No artists with
    # labels" warning; unequal lengths were an IndexError)
    if not curves:
        raise ValueError("curves is empty: give at least one method's "
                         "(n_features, scores).")
    lines = {}
    for name, (nf, acc) in curves.items():
        nf, acc = np.asarray(nf, dtype=float).ravel(), np.asarray(acc, dtype=float).ravel()
        if nf.size != acc.size:
            raise ValueError(f"curve {name!r} has {nf.size} feature counts for "
                             f"{acc.size} scores.")
        lines[name] = nf, acc
    if not any(np.isfinite(nf * acc).any() for nf, acc in lines.values()):
        raise ValueError("curves hold no finite point to plot.")
    fig, ax = _subplots(figsize=(5, 3.5))
    for name, (nf, acc) in lines.items():
        order = np.argsort(nf)
        ax.plot(nf[order], acc[order], "o-", label=_plain(name, 40))
    ax.set_xlabel("selected features")
    ax.set_ylabel(_plain(metric, None))
    ax.set_title(_plain(title, None))
    ax.legend()
    _save(fig, path)
    return str(path)


def plot_kernel_weights(weights, path, names=None, title="Kernel weights"):
    """Bar chart of learned kernel (or feature-group) weights.

    Parameters
    ----------
    weights : array-like of shape (n_kernels,)
        Learned weights.
    path : str or path-like
        Output image file.
    names : sequence of str, optional
        Bar labels, one per weight (default: the weights' positions).
    title : str
        Figure title, shown as written (a ``$`` is not read as mathtext).

    Returns
    -------
    path : str

    Raises
    ------
    ValueError
        If ``weights`` is empty or holds NaN, infinite values or numbers
        beyond the float range, or ``names`` has another length.

    Notes
    -----
    Weights beyond 1e300 in magnitude are drawn divided by a power of ten,
    which the axis label names.
    """
    try:
        with np.errstate(over="ignore"):  # (a long double beyond the float range: inf, refused below)
            weights = np.asarray(weights, dtype=float).ravel()
    except OverflowError:  # (an int beyond the float range: a bare numpy error)
        raise ValueError("weights must be finite numbers; one is beyond the float "
                         "range.") from None
    # any sequence of labels (an array's truth value was NumPy's "ambiguous"
    # error), one per bar (matplotlib's count error named no argument)
    names = [str(i) for i in range(len(weights))] if names is None else list(names)
    if len(names) != len(weights):
        raise ValueError(f"names has {len(names)} labels for {len(weights)} weights.")
    # (no weight drew an empty chart; an infinite one warned "invalid value
    # encountered in dot" from matplotlib's bar geometry)
    if not weights.size or not np.isfinite(weights).all():
        raise ValueError("weights must be a non-empty sequence of finite numbers; got "
                         f"{weights.size} value(s), {np.count_nonzero(~np.isfinite(weights))} "
                         "NaN or infinite.")
    fig, ax = _subplots(figsize=(max(4, 0.4 * len(weights)), 3))
    weights, exponent = _power_scaled(weights)
    if exponent:
        ax.set_ylabel(_scaled_label("weight", exponent))
    ax.bar(np.arange(len(weights)), weights)
    ax.set_xticks(np.arange(len(weights)))
    # names as written and short ("$^$" was a mathtext error, 300 characters
    # pushed the axes off the figure)
    ax.set_xticklabels([_plain(n) for n in names], rotation=45, ha="right")
    ax.set_title(_plain(title, None))
    _save(fig, path)
    return str(path)
