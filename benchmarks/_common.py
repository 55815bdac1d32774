"""Helpers shared by the benchmark scripts: timing medians, table printing, Reuters."""

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


def reuters_split():
    """Reuters' official training and test split, CSR, from the data folder.

    The folder is :func:`kernlearn.datafiles.data_home`'s (``$KERNLEARN_DATA``
    overrides ``../shared/datasets``).

    Returns
    -------
    X, y, X_test, y_test

    Raises
    ------
    kernlearn.datafiles.DatasetNotFoundError
        If a file is missing (naming it), as every named set's loader raises,
        so that the scripts skip the set with that reason.
    """
    import scipy.sparse as sp
    from sklearn.datasets import load_svmlight_file

    from kernlearn.datafiles import _open, data_home

    folder = data_home() / "reuters"
    X, y = load_svmlight_file(_open(folder / "reuters.trn.bz2"))
    Xt, yt = load_svmlight_file(_open(folder / "reuters.tst.bz2"), n_features=X.shape[1])
    return sp.csr_matrix(X), y, sp.csr_matrix(Xt), yt
