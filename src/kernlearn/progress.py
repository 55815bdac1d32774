"""Progress output of long fits: a bar with ETA on a terminal, plain lines otherwise.

Solvers and the column-generation driver report each outer iteration (or
epoch) to a :class:`Progress`; it never changes what is computed.  On a
terminal the current line is redrawn in place (a bar, the last metrics, the
elapsed time and an ETA); anywhere else (a log file, a pipe, a notebook) one
line per iteration is printed, so logs stay greppable.
"""

import sys
import time

__all__ = ["Progress", "STOP_REASONS"]

#: What each stop reason of an iterative fit means, in words.
STOP_REASONS = {
    "no_violation": "no candidate violates the optimality conditions",
    "active_set": "the most violating candidates are already in the model (the "
    "worst-case constraint is active)",
    "tol": "the relative objective change fell below tol",
    "max_iter": "the iteration cap was reached",
    "max_features": "the feature budget max_features was reached",
    "max_steps": "the budget of stochastic steps max_steps ran out",
    "time_budget": "the time budget ran out",
    "callback": "the callback asked to stop",
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


class Progress:
    """Report iterations of a fit.

    Parameters
    ----------
    name : str
        Prefix, e.g. ``"FGM"``.
    total : int
        Cap on the number of iterations (the loop may stop earlier, so the
        ETA is an upper bound).
    stream : file, optional
        Where to write (default ``sys.stdout``).
    bar : bool, optional
        Redraw a bar in place; default: when ``stream`` is a terminal.
    """

    def __init__(self, name, total, stream=None, bar=None):
        self.name = name
        self.total = max(int(total), 1)
        self.stream = stream if stream is not None else sys.stdout
        isatty = getattr(self.stream, "isatty", lambda: False)
        self.bar = bool(isatty()) if bar is None else bar
        self.t0 = time.perf_counter()
        self._drawn = False

    def update(self, row):
        """Report one finished iteration.

        Parameters
        ----------
        row : dict
            ``iter`` (1-based) and metrics (``objective``, ``violation``,
            ``n_active``, ``gap``, ``time``).
        """
        it = int(row["iter"])
        if not self.bar:
            print(
                f"[{self.name}] iter {it:3d}  {_format_metrics(row)}",
                file=self.stream,
                flush=True,
            )
            return
        elapsed = time.perf_counter() - self.t0
        eta = elapsed / it * max(self.total - it, 0)
        width = 20
        done = min(width, round(width * it / self.total))
        bar = "#" * done + "." * (width - done)
        short = {
            k: v
            for k, v in row.items()
            if k in ("stage", "objective", "violation", "n_active")
        }
        self.stream.write(
            f"\r[{self.name}] [{bar}] {it}/{self.total}  "
            f"{_format_metrics(short)}  {elapsed:.1f}s, "
            f"ETA <= {eta:.1f}s\x1b[K"
        )
        self.stream.flush()
        self._drawn = True

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
        if self._drawn:
            self.stream.write("\n")
        words = STOP_REASONS.get(reason, reason)
        detail = f" ({detail})" if detail else ""
        print(
            f"[{self.name}] stop: {reason}{detail} after {n_iter} iterations, "
            f"{time.perf_counter() - self.t0:.2f}s: {words}",
            file=self.stream,
            flush=True,
        )
