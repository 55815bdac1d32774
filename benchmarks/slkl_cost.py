"""Where a default low-rank fit's CPU goes: the compiled steps, the path, the set-up.

Issue 24 (thirty-first pass): ``LowRankKernelRegressor`` costs 3-8x
``Nystroem(100) + Ridge()`` on the ``benchmarks/small_fits.py`` data.  For each
``--sizes`` entry this script fits the regressor (``--task reg``) or the
classifier (``clf``) at its defaults and prints three tables:

1. **Phases** (CPU ms, medians of ``--repeats`` fits): timers wrapped around
   the compiled coordinate steps (``_gram_steps``: every sweep's work), the
   refreshes (``SLKLState.refresh``), the leave-one-out errors of the ``nu``
   path and the path itself (``_solve_one``); the path minus those three is
   the sweep driver's Python (pricing draws, history, per-solve set-up), the
   fit minus the path its set-up (content sample, spread ratio, columns,
   Gram product, validation).
2. **The path** of one fit, per ``nu`` value: sweeps, coordinate steps, the
   update cases (24)-(27) (1: weight unchanged, 2: an active weight changed,
   3: one left, 4: one entered), the mean active-set size ``m0`` a sweep
   started with, and the refreshes forced by the round-off check.
3. **One sweep** at the state each ``nu`` value ends with (us, medians of 7):
   ``--sweeps`` sweeps of fresh random coordinates from a copy of that state,
   with the every-8-updates round-off check (the default) and without it,
   the refreshes it would trigger switched off (``refresh_tol`` infinite) so
   that both runs do the same steps; the difference is the check's cost, and
   the last column the cost of one weight change (case 2: the rank-one
   updates of ``G`` and ``V``, O(m0^2 + m0 T)) without the check.

``--paired`` prints instead, per size, the fit's CPU ms (medians of
``--repeats`` rounds, each fitting in turn the default, the same fit with the
sweeps driven in Python (:class:`~kernlearn.colgen.ColumnGeneration`'s loop
over the pricing and master closures, as before the thirty-second pass: a
no-op ``callback`` selects it; the models are equal) and the
``small_fits.py`` anchor), with the ratios to the anchor.  (The thirty-first
pass's second column, the width rule's spread ratio computed exactly, is in
this file's history.)

Since the thirty-second pass a solve's sweeps run compiled
(:func:`~kernlearn.methods._slkl_compiled._gram_sweeps`, which calls the
steps inside compiled code): the phase table's "compiled steps" time that
function (steps, draws, history rows), so its "sweep driver" is what is left
of the per-solve Python; the path table counts its steps on the Python
driver (the same steps: :func:`python_sweeps`).

The timers wrap module functions for the run (restored at exit); they add a
few microseconds a call.  One thread (``OMP_NUM_THREADS=1`` and friends, set
before numpy loads), ``time.process_time``.

Usage: ``python benchmarks/slkl_cost.py [--task reg] [--sizes 400x8,1000x20]
[--repeats 15] [--sweeps 10] [--paired]``; under a minute for the defaults.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import markdown_table  # noqa: E402
from small_fits import PAIRS, make_data  # noqa: E402

import kernlearn  # noqa: E402
from kernlearn.methods import _slkl_state, slkl  # noqa: E402

#: (module or class, attribute, phase name) of the timed functions
TIMED = ((_slkl_state, "_gram_steps", "compiled steps"),
         (_slkl_state, "_gram_sweeps", "compiled steps"),
         (_slkl_state.SLKLState, "refresh", "refreshes"),
         (slkl, "_loo_errors", "LOO errors"),
         (slkl, "_solve_one", "nu path"))


@contextlib.contextmanager
def phase_timers(clock=time.process_time):
    """Wrap :data:`TIMED` in CPU timers; yield the ``{phase: seconds}`` dict."""
    spent, saved = defaultdict(float), []

    def timer(fn, name):
        def run(*args, **kwargs):
            t0 = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += clock() - t0
        return run

    for owner, attr, name in TIMED:
        saved.append((owner, attr, owner.__dict__[attr]))
        setattr(owner, attr, timer(getattr(owner, attr), name))
    try:
        yield spent
    finally:
        for owner, attr, fn in saved:
            setattr(owner, attr, fn)


def _no_stop(row):
    return None


@contextlib.contextmanager
def python_sweeps():
    """Solves driven by :class:`~kernlearn.colgen.ColumnGeneration`'s Python loop.

    A ``callback`` (here one that never stops) keeps a solve on the Python
    driver, which runs the same steps in the same order as the compiled one.
    """
    init = slkl.CoordinateNewton.__init__

    def with_callback(self, *args, **kwargs):
        init(self, *args, **kwargs)
        if self.callback is None:
            self.callback = _no_stop

    slkl.CoordinateNewton.__init__ = with_callback
    try:
        yield
    finally:
        slkl.CoordinateNewton.__init__ = init


def phases(est, X, y, repeats):
    """Medians (ms) of the fit and its phases over ``repeats`` fits."""
    rows = []
    est.fit(X, y)  # (warm-up: compiled code loaded)
    with phase_timers() as spent:
        for _ in range(repeats):
            spent.clear()
            t0 = time.process_time()
            est.fit(X, y)
            rows.append(dict(spent, fit=time.process_time() - t0))
    med = {k: 1e3 * statistics.median(r.get(k, 0.0) for r in rows) for k in rows[0]}
    med["sweep driver"] = med["nu path"] - sum(
        med[k] for k in ("compiled steps", "refreshes", "LOO errors"))
    med["set-up"] = med["fit"] - med["nu path"]
    return med


def path_record(est, X, y):
    """Per ``nu`` value of one fit: counts of the steps, and the final state's copy."""
    record, calls = [], []
    steps, extract = _slkl_state._gram_steps, slkl.extract_fit

    def counted(coords, start, *args):
        cases, scal = args[11], args[12]
        before, m0 = cases.copy(), int(scal[0])
        pos, why = steps(coords, start, *args)
        calls.append((len(coords) - start if start == 0 else 0, m0 if start == 0 else None,
                      cases - before, why))
        return pos, why

    def kept(state, res, family, rel, start=0.0):
        done = list(calls)
        calls.clear()
        cases = sum(c[2] for c in done)
        m0s = [c[1] for c in done if c[1] is not None]
        record.append(dict(nu=rel, sweeps=res.n_iter, steps=sum(c[0] for c in done),
                           cases=cases, m0=float(np.mean(m0s)) if m0s else 0.0,
                           checks=sum(c[3] == 2 for c in done), state=state.copy()))
        return extract(state, res, family, rel, start)

    _slkl_state._gram_steps, slkl.extract_fit = counted, kept
    try:
        with python_sweeps():  # (per-call counts: the compiled driver's calls are inside)
            est.fit(X, y)
    finally:
        _slkl_state._gram_steps, slkl.extract_fit = steps, extract
    return record


def sweep_cost(state, n_sweeps, seed=0):
    """Median us of one sweep from ``state``, round-off check on and off; weight changes."""
    coords = np.random.default_rng(seed).integers(0, state.n_columns,
                                                  (n_sweeps, state.n_columns))
    times = {8: [], 0: []}
    for _ in range(7):
        for every in (8, 0):  # (alternating: a change of load hits both)
            s = state.copy()
            s.check_every, s.refresh_tol, s._floor = every, np.inf, 0.0
            before = s.case_counts.copy()
            t0 = time.process_time()
            for c in coords:
                s.sweep(c, None)
            times[every].append(time.process_time() - t0)
    changes = (s.case_counts - before)[1:].sum() / n_sweeps
    return ({k: 1e6 * statistics.median(v) / n_sweeps for k, v in times.items()}, changes)


def paired(name, X, y, repeats):
    """Medians (ms) of the default fit, the fit with the Python sweep driver, the anchor."""
    def default():
        getattr(kernlearn, name)(random_state=0).fit(X, y)

    def python_driven():
        with python_sweeps():
            default()

    sides = {"default": default, "python sweeps": python_driven,
             "anchor": lambda: PAIRS[name][2]().fit(X, y)}
    times = {k: [] for k in sides}
    for run in sides.values():
        run()  # (warm-up)
    for _ in range(repeats):
        for key, run in sides.items():  # (in turn: a change of load hits all)
            t0 = time.process_time()
            run()
            times[key].append(time.process_time() - t0)
    return {k: 1e3 * statistics.median(v) for k, v in times.items()}


def main(argv=None):
    """Print the three tables for each size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", choices=("reg", "clf"), default="reg")
    parser.add_argument("--sizes", default="400x8,1000x20")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--sweeps", type=int, default=10)
    parser.add_argument("--paired", action="store_true")
    args = parser.parse_args(argv)
    name = "LowRankKernelRegressor" if args.task == "reg" else "LowRankKernelClassifier"
    keys = ("fit", "set-up", "nu path", "compiled steps", "refreshes", "LOO errors",
            "sweep driver")
    pairs = []
    with threadpool_limits(1):
        for size in args.sizes.split(","):
            n, d = (int(v) for v in size.split("x"))
            X, y, _ = make_data(args.task, n, d)
            if args.paired:
                t = paired(name, X, y, args.repeats)
                a = t["anchor"]
                py = t["python sweeps"]
                pairs.append([name, size, f"{py:.1f} ({py / a:.2f}x)",
                              f"{t['default']:.1f} ({t['default'] / a:.2f}x)", round(a, 2),
                              f"{t['default'] / py:.3f}"])
                continue
            est = getattr(kernlearn, name)(random_state=0)
            med = phases(est, X, y, args.repeats)
            print(f"\n{name} {size}: phases, CPU ms (medians of {args.repeats} fits)\n")
            print(markdown_table(list(keys), [[round(med[k], 2) for k in keys]]))
            rows = []
            for r in path_record(est, X, y):
                cost, changes = sweep_cost(r["state"], args.sweeps)
                per_change = cost[0] / max(changes, 1e-300)
                rows.append([f"{r['nu']:g}", r["sweeps"], r["steps"], *map(int, r["cases"]),
                             round(r["m0"], 1), r["checks"], r["state"].m0,
                             round(cost[8], 1), round(cost[0], 1),
                             round(changes, 1), round(per_change, 2)])
            print(f"\n{name} {size}: the nu path of one fit, and one sweep at each "
                  "value's final state (us)\n")
            print(markdown_table(
                ["nu", "sweeps", "steps", "case 1", "case 2", "case 3", "case 4",
                 "mean m0", "check refreshes", "final m0", "sweep us", "without check",
                 "changes/sweep", "us/change w/o check"], rows))
    if pairs:
        print(markdown_table(["estimator", "data", "python sweeps ms (x anchor)",
                              "default ms (x anchor)", "anchor ms", "default / python"],
                             pairs))


if __name__ == "__main__":
    main()
