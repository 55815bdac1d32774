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


def parse_seeds(text):
    """Distinct integer seeds from a comma list such as ``"0,1,2"``.

    Raises
    ------
    ValueError
        If an item is not an integer, the list is empty or a seed repeats.
    """
    try:
        seeds = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--seeds {text!r}: expected integers like 0,1,2") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds {text!r}: give distinct integers like 0,1,2")
    return seeds
