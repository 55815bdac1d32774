"""The cost of the column generation's cancellation check (``check_abandoned``,
once per outer iteration) on fits nobody abandons.

FGM's one-vs-rest fit (three classes, ``n_jobs=2``: the check reads the
problem's cancellation in its thread) and a binary fit (the check outside any
``parallel_until_error``: a no-op read), each with the check and with it
replaced by a function that does nothing, alternated ``--pairs`` times after a
warm-up.  Printed: the medians of the fit's CPU time (``time.process_time``),
their ratio, the check's own cost per call (``timeit``) against one outer
iteration's median time, and whether the models are equal bit for bit.

Usage::

    python benchmarks/colgen_abandon_check.py [--pairs 7] [--n 400] [--p 30]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import time
import timeit
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

import kernlearn.colgen as colgen
from kernlearn import FGMClassifier
from kernlearn.utils._threads import check_abandoned


def _fit(X, y, multiclass, n_jobs):
    t0 = time.process_time()
    est = FGMClassifier(B=1, multiclass=multiclass, n_jobs=n_jobs).fit(X, y)
    return time.process_time() - t0, est


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--p", type=int, default=30)
    args = parser.parse_args()
    X = np.random.RandomState(0).randn(args.n, args.p)
    y3 = np.argmax(X[:, :3], axis=1)
    warnings.simplefilter("ignore", ConvergenceWarning)
    per_call = min(timeit.repeat(check_abandoned, number=100_000, repeat=5)) / 100_000
    print(f"check_abandoned: {per_call * 1e9:.0f} ns per call (outside any thread task)")
    for label, y, multiclass, n_jobs in (("one-vs-rest, n_jobs=2", y3, "ovr", 2),
                                         ("binary", (y3 == 0).astype(int), "ovr", None)):
        times = {"check": [], "none": []}
        models = {}
        for k in range(args.pairs + 1):
            for route in ("check", "none") if k % 2 else ("none", "check"):
                colgen.check_abandoned = check_abandoned if route == "check" else (
                    lambda: None)
                t, est = _fit(X, y, multiclass, n_jobs)
                if k:  # (the first pair warms up)
                    times[route].append(t)
                models[route] = est
        colgen.check_abandoned = check_abandoned
        a, b = np.median(times["check"]), np.median(times["none"])
        its = int(np.sum(models["check"].n_iter_))
        equal = np.array_equal(models["check"].decision_function(X),
                               models["none"].decision_function(X))
        print(f"{label}: fit CPU median {a * 1e3:.1f} ms with the check, "
              f"{b * 1e3:.1f} ms without, ratio {a / b:.3f}; outer iterations {its}, "
              f"{a / max(its, 1) * 1e3:.2f} ms each against {per_call * 1e9:.0f} ns "
              f"per check; models equal bit for bit: {equal}")


if __name__ == "__main__":
    main()
