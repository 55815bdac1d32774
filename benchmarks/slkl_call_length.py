"""How long the low-rank fit stays in compiled code between its checks for Python.

A Ctrl-C (and a problem abandoned in its thread) is seen only between the
compiled calls of ``methods._slkl_state.gram_sweeps``; the Python sweep driver
(``kernlearn.colgen.ColumnGeneration``, selected here by a no-op callback) sees
it once a sweep.  For each size this fits ``LowRankKernelRegressor`` with the
given options once on each driver and prints the compiled calls (count,
longest, median, wall seconds) and the Python driver's longest sweep (the gap
between two of its per-sweep callbacks), with the fits' CPU seconds.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/slkl_call_length.py --sizes 5000x50,20000x20 \\
        --options "n_columns=2000, nu=1e-4, max_iter=1000"
"""

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from kernlearn import LowRankKernelRegressor
from kernlearn.methods import _slkl_state, slkl


def _data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.sin(X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(n)


def compiled_calls(X, y, options):
    """CPU seconds of the default fit and the wall seconds of each compiled call."""
    calls, compiled = [], _slkl_state._gram_sweeps

    def timed(*args):
        t0 = time.perf_counter()
        out = compiled(*args)
        calls.append(time.perf_counter() - t0)
        return out

    _slkl_state._gram_sweeps = timed
    try:
        t0 = time.process_time()
        LowRankKernelRegressor(random_state=0, **options).fit(X, y)
        return time.process_time() - t0, np.array(calls)
    finally:
        _slkl_state._gram_sweeps = compiled


def python_sweeps(X, y, options):
    """CPU seconds of the fit on the Python driver and its gaps between sweeps."""
    stamps, init = [], slkl.CoordinateNewton.__init__

    def with_callback(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.callback = lambda row: stamps.append(time.perf_counter())

    slkl.CoordinateNewton.__init__ = with_callback
    try:
        t0 = time.process_time()
        start = time.perf_counter()
        LowRankKernelRegressor(random_state=0, **options).fit(X, y)
        return time.process_time() - t0, np.diff([start] + stamps)
    finally:
        slkl.CoordinateNewton.__init__ = init


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000x50,20000x20")
    parser.add_argument("--options", default="n_columns=2000, nu=1e-4, max_iter=1000",
                        help="LowRankKernelRegressor keyword arguments, as Python")
    args = parser.parse_args(argv)
    options = eval(f"dict({args.options})")  # (a benchmark's own command line)
    print(f"LowRankKernelRegressor({args.options}); seconds")
    print("size | compiled: fit CPU, calls, longest call, median call | "
          "Python driver: fit CPU, sweeps, longest sweep | longest call / longest sweep")
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        LowRankKernelRegressor(random_state=0).fit(*_data(60, 3))  # (loads the code)
        for size in args.sizes.split(","):
            X, y = _data(*map(int, size.split("x")))
            fit_c, calls = compiled_calls(X, y, options)
            fit_p, gaps = python_sweeps(X, y, options)
            print(f"{size} | {fit_c:.2f}, {len(calls)}, {calls.max():.3f}, "
                  f"{np.median(calls):.4f} | {fit_p:.2f}, {len(gaps)}, {gaps.max():.3f} | "
                  f"{calls.max() / gaps.max():.2f}", flush=True)


if __name__ == "__main__":
    main()
