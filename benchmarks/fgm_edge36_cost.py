"""What rebuilding FGM's far-offset columns from their raw values costs (issue 21).

The master's shift (``_fgm_rows.shifted_block``) now rebuilds an active
column far from zero as ``(x - c) * lam`` from the raw column, one pass over
the active block's raw columns per master solve, only when such a column is
active.  Measured: the CPU time (``time.process_time``) of ``shifted_block``
and its share of the whole fit, medians of ``--repeats`` fits, on columns at
``1e9 + 1e-3 z`` (three of six carry the target) tiled to ``--rows`` rows, in
memory and by 64 KB row blocks; against the old path (the shift of the scaled
columns: ``source_of`` answering None, ``--old``) and on the same data without
the offset (nothing shifted).

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fgm_edge36_cost.py --repeats 5
"""

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

import kernlearn.methods._fgm_rows as R
import kernlearn.methods.fgm as F
from kernlearn import FGMRegressor


def data(rows, offset, seed=0):
    """Three columns at ``offset + 1e-3 z`` carrying the target, three plain ones."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, 6))
    Z = rng.standard_normal((rows, 3))
    X[:, :3] = offset + 1e-3 * Z
    y = Z @ [1.0, -2.0, 0.5] + X[:, 3] + 0.1 * rng.standard_normal(rows)
    return X, y


def one_fit(X, y, **kw):
    """CPU of the fit and of its ``shifted_block`` calls; the calls."""
    spent, calls = [0.0], [0]
    inner = F.shifted_block

    def timed(A, fit_intercept):
        t = time.process_time()
        out = inner(A, fit_intercept)
        spent[0] += time.process_time() - t
        calls[0] += 1
        return out

    F.shifted_block = timed
    try:
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore")
            t = time.process_time()
            FGMRegressor(B=3, C=1.0, **kw).fit(X, y)
            total = time.process_time() - t
    finally:
        F.shifted_block = inner
    return total, spent[0], calls[0]


def main():
    """Print the medians per setting."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rows", type=int, default=4500)
    a = ap.parse_args()
    print("| data | route | fit CPU ms | shifted_block ms | share | calls |")
    print("|---|---|---|---|---|---|")
    real = R.source_of
    for name, offset, old in (("1e9 + 1e-3 z", 1e9, False), ("1e9 + 1e-3 z, old path", 1e9, True),
                              ("1e-3 z (no offset)", 0.0, False)):
        X, y = data(a.rows, offset)
        R.source_of = (lambda block: None) if old else real
        for route, kw in (("memory", {}), ("64 KB blocks", {"memory_budget": "64KB"})):
            runs = np.array([one_fit(X, y, **kw) for _ in range(a.repeats)])
            total, spent = np.median(runs[:, 0]), np.median(runs[:, 1])
            print(f"| {name} | {route} | {1e3 * total:.1f} | {1e3 * spent:.2f} | "
                  f"{100 * spent / total:.1f} % | {int(runs[0, 2])} |")
    R.source_of = real


if __name__ == "__main__":
    main()
