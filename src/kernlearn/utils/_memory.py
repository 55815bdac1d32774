"""Size-like parameters refused up front when what they ask cannot fit in memory.

A huge ``n_candidates`` (GrFL) or ``n_bins`` (the additive kernel
expansion) died inside NumPy with a bare ``MemoryError`` ("Unable to allocate
37.3 GiB for an array with shape (1000000000, 5)") that named neither the
parameter nor a way out, after minutes of work.  :func:`refuse_oversized` is
the one rule: the caller computes (a lower bound of) the bytes its setting
needs and the budget it is held to, and a setting over it is refused with a
``ValueError`` naming the parameter, its value and both sizes.
"""

import os
import re

import numpy as np

__all__ = ["available_memory", "format_bytes", "parse_bytes", "physical_memory",
           "refuse_oversized"]


def physical_memory():
    """The machine's physical memory in bytes, or ``None`` where it cannot be read."""
    try:
        pages, size = int(os.sysconf("SC_PHYS_PAGES")), int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):  # (not POSIX: no bound)
        return None
    # (sysconf answers -1 for a limit it does not know, without an error: a
    # negative budget refused every setting)
    return pages * size if pages > 0 and size > 0 else None


def available_memory():
    """Memory a new allocation can take now, in bytes, or ``None`` if unknown.

    Linux's ``MemAvailable`` (free memory plus the page cache it can drop),
    else the free pages (``SC_AVPHYS_PAGES``, which leaves the cache out),
    else the physical memory.

    Returns
    -------
    n_bytes : int or None
    """
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024  # (counted in kB)
    except (OSError, ValueError, IndexError):
        pass
    try:
        pages, size = int(os.sysconf("SC_AVPHYS_PAGES")), int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return physical_memory()
    return pages * size if pages > 0 and size > 0 else physical_memory()


def format_bytes(n_bytes):
    """``n_bytes`` for a message: ``"37.3 GiB"``."""
    size = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} PiB"  # pragma: no cover - (the loop returns)


def refuse_oversized(owner, name, value, n_bytes, budget, what, budget_name=None):
    """Refuse a size-like parameter whose memory need exceeds a budget.

    Parameters
    ----------
    owner : object
        The estimator or family (its class name starts the message).
    name : str
        The parameter, e.g. ``"n_candidates"``.
    value : int
        Its value.
    n_bytes : float
        The memory the setting needs (a lower bound is enough: the refusal
        is then certain).
    budget : float or None
        The bytes allowed; ``None`` (unknown) refuses nothing.
    what : str
        What the memory holds, for the message ("the sampled parameters").
    budget_name : str, optional
        What the budget is ("the machine's physical memory"); default the
        plain size.

    Raises
    ------
    ValueError
        When ``n_bytes > budget``.
    """
    if budget is None or n_bytes <= budget:
        return
    limit = format_bytes(budget) + (f", {budget_name}" if budget_name else "")
    raise ValueError(
        f"{type(owner).__name__}: {name}={value} would need {format_bytes(n_bytes)} "
        f"of memory for {what}, more than {limit}; lower {name}.")


# (here, below every reader and the partitioned rows that take a size: the
# compressed-text bound of ``utils._packed_text`` reads one too)
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_bytes(size):
    """Bytes in a memory size such as ``"2GB"``, ``"512 MiB"`` or ``10**9``.

    Parameters
    ----------
    size : int, float or str
        A number of bytes (at least 1), or a number with a unit (B, KB, MB, GB,
        TB, KiB, MiB, GiB, TiB; case-insensitive).

    Returns
    -------
    n_bytes : int
    """
    if isinstance(size, (int, float, np.integer, np.floating)) and not isinstance(size, bool):
        value = float(size)
    else:
        m = re.fullmatch(r"\s*([0-9.]+(?:e[0-9]+)?)\s*([a-zA-Z]*)\s*", str(size))
        if m is None or m.group(2).lower() not in _UNITS:
            raise ValueError(f"memory size {size!r} is not a number of bytes such as "
                             "'2GB' or '512MiB'.")
        value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not np.isfinite(value) or value < 1:
        # (under a byte, "0.5" was 0 bytes: a max_table_size of 0 bounded nothing)
        raise ValueError(f"memory size must be a finite number of bytes, at least 1, "
                         f"got {size!r}.")
    return int(value)
