"""Helpers shared by the benchmark scripts: timing medians and table printing."""

import statistics
import time


def timed(fn, repeats=3, clock=time.perf_counter):
    """Run ``fn`` ``repeats`` times; return (last result, median seconds of ``clock``)."""
    times, out = [], None
    for _ in range(repeats):
        t0 = clock()
        out = fn()
        times.append(clock() - t0)
    return out, statistics.median(times)


def markdown_table(header, rows):
    """A GitHub markdown table from a header and rows of values."""
    fmt = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
