"""Progress of long fits: a widget in notebooks, a bar on terminals, silence elsewhere.

Solvers and the column-generation driver report each outer iteration (or
epoch) to a :class:`Progress`; it never changes what is computed.  What it
shows depends on where the fit runs (``verbose=1`` means the same in every
estimator):

* in a Jupyter notebook, a ``tqdm`` widget;
* on a terminal, a ``tqdm`` bar (on standard error, so it never mixes with
  data written to standard output) with the last metrics, then one line
  saying why the fit stopped;
* anywhere else (a pipe, a log file, a test, a batch job): nothing.

One line per iteration, the form logs want, is asked for with
``KERNLEARN_PROGRESS=lines`` in the environment, ``bar=False``, or by a
caller passing ``level=2`` (``verbose=2``).  ``KERNLEARN_PROGRESS=off``
silences everything, ``=bar`` forces the bar.
"""

import os
import sys
import threading
import time
import weakref

__all__ = ["Progress", "STOP_REASONS", "close_bars_opened_since", "open_bars", "path_bar"]

# The bars (and widgets) not yet closed, with the thread that opened each.
_OPEN = weakref.WeakKeyDictionary()
# (held to add, remove or list them: a thread listing its bars while another
# opened or closed one raised "dictionary changed size during iteration",
# and every fit lists them as it starts)
_OPEN_LOCK = threading.Lock()

#: What each stop reason of an iterative fit means, in words.
STOP_REASONS = {
    "no_violation": "no candidate violates the optimality conditions",
    "active_set": "the most violating candidates are already in the model (the "
    "worst-case constraint is active)",
    "tol": "the relative objective change or duality gap fell below tol",
    "max_iter": "the iteration cap was reached",
    "max_features": "the feature budget max_features was reached",
    "max_steps": "the budget of stochastic steps max_steps ran out",
    "time_budget": "the time budget ran out",
    "callback": "the callback asked to stop",
    "validation": "the loss on held-out rows stopped improving",
    # (OBSCURE's stage 2: its stop line read "stop: duality gap ...: duality gap")
    "duality gap": "the best iterate's relative duality gap fell below tol",
    # (OBSCURE with online_only=True: its stop line repeated the reason too)
    "online_only": "online_only=True: the online first stage only, no refinement",
    "nu_path": "the leave-one-out error chose nu along the path",
}

_METRICS = [
    ("stage", "d"),
    ("objective", ".6g"),
    ("violation", ".3g"),
    ("n_active", "d"),
    ("gap", ".3g"),
    ("train_error", ".4f"),
    ("time", ".2f"),
]
_MODES = ("auto", "bar", "lines", "off")


def _format_metrics(row):
    parts = []
    for key, fmt in _METRICS:
        val = row.get(key)
        if val is None:
            continue
        if key == "violation" and not val < float("inf"):
            parts.append(
                "violation=n/a"
            )  # not measured yet (e.g. unvisited coordinates)
            continue
        parts.append(f"{key}={int(val) if fmt == 'd' else val:{fmt}}")
    return "  ".join(parts)


def _in_notebook():
    """Whether this process is a Jupyter kernel (where tqdm shows a widget)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # an IPython too old or half-imported: not a notebook
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _isatty(stream):
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _mode(stream, bar, level):
    """``"widget"``, ``"bar"``, ``"lines"`` or ``"off"``."""
    env = os.environ.get("KERNLEARN_PROGRESS", "auto").strip().lower()
    env = env if env in _MODES else "auto"
    if env == "off":
        return "off"
    if bar is not None:
        return "bar" if bar else "lines"
    if env in ("bar", "lines"):
        return env
    if level is not None and level >= 2:
        return "lines"
    if stream is None and _in_notebook():
        return "widget"
    return "bar" if _isatty(sys.stderr if stream is None else stream) else "off"


class Progress:
    """Report iterations of a fit.

    Parameters
    ----------
    name : str
        Prefix, e.g. ``"FGM"``.
    total : int
        Cap on the number of iterations (the loop may stop earlier, so the
        bar's estimate is an upper bound).
    stream : file, optional
        Where to write.  Default: standard error for the bar, standard
        output for lines; a notebook shows a widget.
    bar : bool, optional
        ``True``: a bar even when ``stream`` is not a terminal; ``False``:
        one line per iteration.  Default: decided by where the fit runs (see
        the module docstring) and ``KERNLEARN_PROGRESS``.
    level : int, optional
        The caller's ``verbose``; 2 or more asks for one line per iteration.

    Attributes
    ----------
    mode : {"widget", "bar", "lines", "off"}
        What this object shows.
    """

    def __init__(self, name, total, stream=None, bar=None, level=None):
        self.name = name
        self.total = max(int(total), 1)
        self.mode = _mode(stream, bar, level)
        if stream is None:
            stream = sys.stdout if self.mode == "lines" else sys.stderr
        self.stream = stream
        self.t0 = time.perf_counter()
        self._tqdm = None
        if self.mode in ("bar", "widget"):
            if self.mode == "widget":
                from tqdm.auto import tqdm
            else:
                from tqdm import tqdm
            self._tqdm = tqdm(
                total=self.total,
                desc=f"[{name}]",
                file=None if self.mode == "widget" else stream,
                leave=True,
                dynamic_ncols=True,
                bar_format="{desc} {bar} {n}/{total} [{elapsed}<{remaining}] {postfix}",
            )
            with _OPEN_LOCK:
                _OPEN[self] = threading.get_ident()

    @property
    def bar(self):
        """Whether a bar (or widget) is drawn, as in earlier versions."""
        return self._tqdm is not None

    def update(self, row):
        """Report one finished iteration.

        Parameters
        ----------
        row : dict
            ``iter`` (1-based) and metrics (``objective``, ``violation``,
            ``n_active``, ``gap``, ``time``).
        """
        it = int(row["iter"])
        if self.mode == "lines":
            print(
                f"[{self.name}] iter {it:3d}  {_format_metrics(row)}",
                file=self.stream,
                flush=True,
            )
        elif self._tqdm is not None:
            short = {
                k: v
                for k, v in row.items()
                if k in ("stage", "objective", "violation", "n_active")
            }
            self._tqdm.n = min(it, self.total)
            self._tqdm.set_postfix_str(_format_metrics(short), refresh=False)
            self._tqdm.refresh()

    def close(self, reason, n_iter, detail=""):
        """Report why the fit stopped.

        Parameters
        ----------
        reason : str
            A key of :data:`STOP_REASONS`.
        n_iter : int
            Iterations run.
        detail : str, optional
            Extra words (e.g. ``"max_iter=15"``).
        """
        if self._tqdm is not None:
            self._tqdm.close()
            with _OPEN_LOCK:
                _OPEN.pop(self, None)
        if self.mode == "off":
            return
        words = STOP_REASONS.get(reason, reason)
        detail = f" ({detail})" if detail else ""
        line = (
            f"[{self.name}] stop: {reason}{detail} after {n_iter} iterations, "
            f"{time.perf_counter() - self.t0:.2f}s: {words}"
        )
        if self.mode == "widget":
            print(line, flush=True)
        else:
            print(line, file=self.stream, flush=True)


def open_bars():
    """The bars (and widgets) this thread opened and has not closed.

    Returns
    -------
    bars : list of Progress
    """
    me = threading.get_ident()
    with _OPEN_LOCK:
        return [bar for bar, thread in list(_OPEN.items()) if thread == me]


def close_bars_opened_since(before):
    """Close the bars this thread opened after :func:`open_bars` gave ``before``.

    A fit stopped by an error or Ctrl-C never reached its bar's ``close``: the
    bar stayed registered with ``tqdm`` as long as the error was kept (a
    notebook keeps the last one), so the next fit's bar was drawn a line lower
    and each of its updates went to a new line, the terminal's line was left
    unended, and at exit the old bar was drawn again.  Closed here, it stays
    as it was when the fit stopped (a notebook's widget turns red); no stop
    line is written (the error says why the fit stopped).

    Parameters
    ----------
    before : list of Progress
    """
    for bar in open_bars():
        if bar not in before:
            bar._tqdm.close()
            with _OPEN_LOCK:
                _OPEN.pop(bar, None)


def path_bar(name, n_runs, verbose):
    """A :class:`Progress` over the runs of a path (one update per run), or ``None``.

    At ``verbose=1`` a path of several solves shows one bar and one stop line
    (a bar and a stop line per solve were six for one SLKL fit, 130 for 26
    one-vs-rest classes); when lines are asked for (``verbose=2`` or
    ``KERNLEARN_PROGRESS=lines``) the solves keep their own and this is ``None``.

    Parameters
    ----------
    name : str
        Prefix, as in :class:`Progress`.
    n_runs : int
        Solves on the path.
    verbose : int
        The caller's ``verbose``.

    Returns
    -------
    bar : Progress or None
        ``None`` when each solve should report itself.
    """
    if n_runs < 2 or verbose != 1:
        return None
    bar = Progress(name, n_runs, level=verbose)
    return None if bar.mode == "lines" else bar
