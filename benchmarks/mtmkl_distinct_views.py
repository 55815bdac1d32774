"""The plain ``MultitaskMKLRegressor``'s search for repeated inputs
(``_loo_eigen.distinct_inputs``) with kernels on column subsets and many task
buckets: its views of each bucket's rows only against the route before (the
kernels' views of all of ``X`` built again for each bucket, kept below as the
reference): paired CPU times and the models' agreement.

Synthetic tasks (``--tasks`` of sizes spread geometrically over ``--sizes``
rows: several buckets of 64 rows and more, the sizes where repeated inputs
are searched), ``--d`` columns rounded to one decimal, ten RBF kernels on ten
consecutive column subsets.  The two routes alternate ``--pairs`` times after
a warm-up of each; the medians of the fit's CPU time and of the search's,
their ratios and the largest difference of the predictions are printed.

Usage::

    python benchmarks/mtmkl_distinct_views.py [--tasks 200] [--sizes 64,400] [--d 100]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import sys
import time
import warnings

import numpy as np

from kernlearn import MultitaskMKLRegressor
from kernlearn.methods.mtmkl import _loo_eigen
from kernlearn.methods.mtmkl import fit as mtfit


def distinct_inputs_before(kernels, js, idx, mask):
    """The route before: the views of all of ``X`` for each bucket (reference)."""
    if mask.shape[1] < _loo_eigen._DISTINCT_FROM or kernels.precomputed \
            or any(not isinstance(kernels.specs_[j][0], str) for j in js):
        return None
    views = {}
    for j in js:
        V = kernels._views(kernels.X_, j)
        if not isinstance(V, np.ndarray):
            return None
        views[id(V)] = V
    V = next(iter(views.values())) if len(views) == 1 else np.hstack(list(views.values()))
    maps = []
    for t in range(mask.shape[0]):
        r = mask[t].nonzero()[0]
        maps.append((r, *_loo_eigen._distinct_rows(V[idx[t, r]])))
    return maps


def timed(search, spent):
    """``search``, its CPU time added to ``spent[0]``."""
    def run(*args):
        t0 = time.process_time()
        out = search(*args)
        spent[0] += time.process_time() - t0
        return out
    return run


def data(n_tasks, lo, hi, d, seed=0):
    rng = np.random.RandomState(seed)
    sizes = np.geomspace(lo, hi, n_tasks).astype(int)
    t = np.repeat(np.arange(n_tasks), sizes)
    X = np.round(rng.randn(len(t), d), 1)
    y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.randn(len(t))
    w = d // 10
    kernels = [("rbf", {}, list(range(w * i, w * i + w))) for i in range(10)]
    return X, y, t, kernels


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--sizes", default="64,400")
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    lo, hi = map(int, args.sizes.split(","))
    X, y, t, kernels = data(args.tasks, lo, hi, args.d)
    real = mtfit.distinct_inputs
    routes = {"before": distinct_inputs_before, "after": real}
    fits, searches, preds = {r: [] for r in routes}, {r: [] for r in routes}, {}
    try:
        for i in range(args.pairs + 1):  # (the first pair: the warm-up)
            for name, search in routes.items():
                spent = [0.0]
                mtfit.distinct_inputs = timed(search, spent)
                t0 = time.process_time()
                est = MultitaskMKLRegressor(kernels=kernels).fit(X, y, task_index=t)
                fit = time.process_time() - t0
                preds[name] = est.predict(X[::7], task_index=t[::7])
                if i:
                    fits[name].append(fit)
                    searches[name].append(spent[0])
    finally:
        mtfit.distinct_inputs = real
    med = {r: (np.median(fits[r]), np.median(searches[r])) for r in routes}
    print(f"{len(t)} rows x {args.d}, {args.tasks} tasks of {lo}-{hi} rows, "
          f"{args.pairs} pairs (CPU medians)")
    for r in routes:
        print(f"  {r:6s}  fit {med[r][0]:7.3f} s  search {1e3 * med[r][1]:7.1f} ms "
              f"({100 * med[r][1] / med[r][0]:.1f} % of the fit)")
    print(f"  before/after: fit {med['before'][0] / med['after'][0]:.3f}, search "
          f"{med['before'][1] / med['after'][1]:.2f}; predictions equal bit for bit: "
          f"{np.array_equal(preds['before'], preds['after'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
