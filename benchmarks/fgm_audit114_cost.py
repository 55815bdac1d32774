"""What audit 114's FGM changes cost: the bound's offset recheck and Dask's constraint values.

Two measurements, CPU time (``time.process_time``, the in-process Dask
workers' threads included), medians of ``--repeats`` runs in ABBA order:

1. The re-pricing of a bound above the objective on shifted columns
   (``_fgm_rows.offset_rounding``): how often it runs and its share of the
   fit's CPU, on audit 109's far-offset data (a column ``1 + 1e-9 z``, zero
   weights) tiled to 4,500 rows, in memory and by 64 KB row blocks.
2. The active constraints' values on a cluster
   (``DaskMasterRows.constraint_values``, which lets ``max_features`` grow a
   group as in memory and Theorem 3 compare values): FGM on 20,000 x 30 in
   four Dask partitions, with the method and with it removed (the exact test
   of before), the same models checked.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fgm_audit114_cost.py --repeats 5
"""

import argparse
import collections
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import kernlearn._dask_master as DM  # noqa: E402
import kernlearn.methods.fgm as F  # noqa: E402
from kernlearn import FGMClassifier, FGMRegressor  # noqa: E402


def recheck_share(repeats):
    """Calls of the recheck and its share of the fits' CPU, in memory and by row blocks."""
    from test_fgm_audit109 import _offset_data

    spent = collections.Counter()
    orig = F.offset_rounding

    def timed(*a, **kw):
        t0 = time.process_time()
        try:
            return orig(*a, **kw)
        finally:
            spent["calls"] += 1
            spent["cpu"] += time.process_time() - t0

    F.offset_rounding = timed
    try:
        for route, kw in (("in memory", {}), ("row blocks 64KB", {"memory_budget": "64KB"})):
            fit_cpu, calls, cpu, fits = [], [], [], 0
            for _ in range(repeats):
                spent.clear()
                t0 = time.process_time()
                for seed in range(8):
                    X, t, sw = _offset_data(seed)
                    X, t, sw = np.tile(X, (50, 1)), np.tile(t, 50), np.tile(sw, 50)
                    for make, y in ((FGMRegressor, t),
                                    (FGMClassifier, (t > np.median(t)).astype(int))):
                        make(B=2, C=10.0, max_iter=4, **kw).fit(X, y, sample_weight=sw)
                        fits += 1
                fit_cpu.append(time.process_time() - t0)
                calls.append(spent["calls"])
                cpu.append(spent["cpu"])
            print(f"recheck, {route}: {calls[0]} calls in {fits // repeats} fits, "
                  f"{1e3 * np.median(cpu):.2f} ms of {1e3 * np.median(fit_cpu):.0f} ms CPU "
                  f"({100 * np.median(cpu) / np.median(fit_cpu):.2f} %)")
    finally:
        F.offset_rounding = orig


def dask_constraint_values(repeats):
    """Dask FGM's CPU with the constraint values and without them (the old exact test)."""
    import dask.array as da
    import distributed

    values = DM.DaskMasterRows.constraint_values
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20000, 30))
    t = X[:, :8] @ rng.standard_normal(8) + rng.standard_normal(20000)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        Xd = da.from_array(X, chunks=(5000, 30)).persist()
        for make, y in ((FGMRegressor, t), (FGMClassifier, (t > 0).astype(int))):
            for kw in ({"B": 2}, {"B": 2, "max_features": 8}):
                cpu, models = {"with": [], "without": []}, {}
                for r in range(repeats):
                    # (ABBA: a fit right after another pays for releasing its futures,
                    # which biased a fixed order by 20-30 %)
                    for mode in (("with", "without"), ("without", "with"))[r % 2]:
                        if mode == "without":
                            del DM.DaskMasterRows.constraint_values
                        try:
                            t0 = time.process_time()
                            m = make(C=1.0, **kw).fit(Xd, y)
                            cpu[mode].append(time.process_time() - t0)
                        finally:
                            DM.DaskMasterRows.constraint_values = values
                        models[mode] = np.sort(m.selected_features_)
                a, b = np.median(cpu["with"]), np.median(cpu["without"])
                same = np.array_equal(models["with"], models["without"])
                print(f"Dask {make.__name__} {kw}: {a:.3f} s CPU with the values, {b:.3f} s "
                      f"without, ratio {a / b:.2f}; same selection: {same}")


def main():
    """Both measurements."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    recheck_share(a.repeats)
    dask_constraint_values(a.repeats)


if __name__ == "__main__":
    main()
