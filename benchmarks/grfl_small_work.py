"""Where a small GrFL fit's work and time go, per data size (issue 24).

``small_fits.py`` times the default ``InfiniteFeatureRegressor`` (and
classifier) against its anchor; this script says what such a fit does at each
size and what its CPU time is made of, on the same synthetic data
(``small_fits.make_data``, ``random_state=0``, one thread).

Each size is fitted once to warm up, then ``--repeats`` times with the library's
functions wrapped to count and time them (the counts are the same every fit; the
times are medians over the fits).  Printed per size:

* the **route** the defaults take: below ``CV_BELOW`` rows the folds choose
  ``lambda_p`` (``CV_FOLDS`` folds, each a path down the levels) and
  ``n_paths="auto"`` averages ``FINAL_DRAWS`` paths on all rows at the chosen
  level; from ``CV_BELOW`` to ``LEVEL_BELOW`` rows one held-out part chooses the
  level and the count, and one master on all rows is solved with that path's
  first features;
* the **work**: levels run, paths, outer iterations, master solves (those solved
  to ``tol``), Newton steps, coordinate-descent sweeps, pricing steps and
  candidates drawn;
* the **CPU** of the phases (choosing the level, the model's paths or master,
  the rest) and of the kinds of work: the compiled Newton step (sweeps and line
  search), the rest of the master solves (Hessians, curvatures, the Lipschitz
  bound, set-up), pricing (the candidates' draws, their cos/sin sums and
  phases, the rest), the new columns of a master (columns, norms, Gram
  entries), the held-out monitors, and what is outside all of these.

The wrappers cost about a microsecond a call, so the instrumented fits are a few
per cent slower than ``small_fits.py``'s (the uninstrumented median of the same
number of fits is printed next to them).

Usage::

    python benchmarks/grfl_small_work.py [--sizes 100x10,400x8,1000x20]
        [--estimator InfiniteFeatureRegressor] [--repeats 7]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import functools  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402
from small_fits import make_data, ours, parse_sizes  # noqa: E402

from kernlearn.families import fourier  # noqa: E402
from kernlearn.methods import _grfl_average, _grfl_select, grfl  # noqa: E402
from kernlearn.solvers import _dirty, grfl_newton  # noqa: E402

# (label, owner, attribute): the functions timed, each as one kind of work.  A
# time is the wrapped call's, less the time of wrapped calls inside it (so the
# kinds add up to the fit); "phase:" ones are the fit's phases instead (their
# own totals, not subtracted from anything).
KINDS = [
    ("Newton step kernel (sweeps, line search)", grfl_newton, "_newton_step"),
    ("master: Lipschitz bound", _dirty.DirtyProblem, "lipschitz"),
    ("master: Hessians (built or appended)", grfl_newton._Hessians, "start"),
    ("master: curvatures of the model", grfl_newton.GrFLNewton, "_curvatures"),
    ("master: rest of the solve (gradients, Hessian updates, Python)", grfl_newton.GrFLNewton, "solve"),
    ("master: new columns, norms, Gram (GrFL's side)", grfl.GrFL, "master"),
    ("pricing: candidates' draws", fourier, "scaled_normals"),
    ("pricing: cos/sin sums", fourier, "_cos_sin_sums"),
    ("phases X V' (pricing and new columns)", fourier.RandomFourierFeatures, "_phases"),
    ("pricing: rest (scores, Python)", grfl.GrFL, "price"),
    ("held-out monitors", _grfl_select._HoldOut, "__call__"),
]
# (the labels whose call counts are read: outer iterations, held-out monitors)
MASTERS, MONITORS = KINDS[5][0], KINDS[10][0]
PHASES = [
    ("phase: folds choosing lambda_p", grfl, "select_level"),
    ("phase: held-out path (level and count)", grfl, "select_level_held_out"),
    ("phase: averaged paths on all rows", _grfl_average, "average_draws"),
    ("phase: extend (all paths)", grfl.GrFL, "extend"),
]


class Recorder:
    """Counts and exclusive CPU times of the wrapped functions, per fit."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.time = defaultdict(float)
        self.calls = defaultdict(int)
        self.stack = []  # child time of the wrapped calls running
        self.work = defaultdict(int)

    def wrap(self, label, fn, exclusive=True):
        rec = self

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            t0 = time.process_time()
            if exclusive:
                rec.stack.append(0.0)
            try:
                return fn(*args, **kwargs)
            finally:
                dt = time.process_time() - t0
                rec.calls[label] += 1
                if exclusive:
                    inner = rec.stack.pop()
                    rec.time[label] += dt - inner
                    if rec.stack:
                        rec.stack[-1] += dt
                else:
                    rec.time[label] += dt
        return wrapper


@contextlib.contextmanager
def instrumented(rec):
    """The library's functions of :data:`KINDS` and :data:`PHASES` wrapped, plus
    counters of the work (restored on exit)."""
    saved = []

    def patch(owner, name, new):
        saved.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, new)

    for label, owner, name in KINDS + PHASES:
        raw = owner.__dict__[name]
        fn = raw.__func__ if isinstance(raw, staticmethod) else raw
        new = rec.wrap(label, fn, exclusive=not label.startswith("phase:"))
        patch(owner, name, staticmethod(new) if isinstance(raw, staticmethod) else new)

    # the work: masters (and those meant to reach tol), Newton steps, sweeps,
    # pricing steps and candidates drawn, levels run
    solve = grfl.GrFL.__dict__["_solve"]

    def counted_solve(self, exact):
        res = solve(self, exact)
        w = rec.work
        w["masters"] += 1
        to_tol = bool(exact or self.path_iter is None)
        sweeps = int(sum(r.get("sweeps", 0) for r in res.history.rows))
        w["masters to tol"] += to_tol
        w["Newton steps"] += int(res.n_iter)
        w["sweeps"] += sweeps
        w["sweeps to tol"] += sweeps if to_tol else 0
        w["columns per master"] += self.p
        return res

    sample = fourier.RandomFourierFeatures.__dict__["sample"]

    def counted_sample(self, k, rng=None):
        rec.work["pricing steps"] += 1
        rec.work["candidates drawn"] += int(k)
        return sample(self, k, rng)

    relevel = _grfl_select.__dict__["_relevel"]

    def counted_relevel(path, factor):
        rec.work["level changes"] += 1
        return relevel(path, factor)

    start = grfl.GrFL.__dict__["start"]

    def counted_start(self, *args, **kwargs):
        rec.work["paths"] += 1
        return start(self, *args, **kwargs)

    patch(grfl.GrFL, "_solve", counted_solve)
    patch(fourier.RandomFourierFeatures, "sample", counted_sample)
    patch(_grfl_select, "_relevel", counted_relevel)
    patch(grfl.GrFL, "start", counted_start)
    try:
        yield rec
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


OUTSIDE = "outside these (validation, family, folds' set-up, results)"


def route(calls):
    """The route a fit took, in words, from the phases it called."""
    if calls.get(PHASES[0][0]):
        return (f"{_grfl_select.CV_FOLDS} folds choose lambda_p, then the paths on all rows "
                "averaged")
    if calls.get(PHASES[1][0]):
        return "one held-out part chooses lambda_p and the count, then one master on all rows"
    if calls.get(MONITORS):
        return "one held-out part chooses the count at the default level, then one master"
    if calls.get(PHASES[2][0]):
        return "level and budget fixed: the paths on all rows averaged"
    return "level and budget fixed: one path on all rows"


def measure(name, X, y, repeats):
    """Work and CPU of ``repeats`` default fits of ``name`` on ``(X, y)``.

    Returns
    -------
    result : dict
        ``route``, ``lambda_p``, ``n_paths``, ``work`` (counts of the last
        instrumented fit), ``plain`` and ``instrumented`` (median CPU seconds of
        the plain and instrumented fits, alternating), ``times`` (median
        seconds of each label of :data:`KINDS`, :data:`PHASES` and
        :data:`OUTSIDE`) and ``estimators`` (the last plain and instrumented fits).
    """
    rec = Recorder()
    ours(name).fit(X, y)  # warm-up (compiled code loaded)
    plain, per_fit, times = [], [], defaultdict(list)
    for _ in range(repeats):
        # plain and instrumented fits in turn (a load change hits both)
        t0 = time.process_time()
        est_plain = ours(name).fit(X, y)
        plain.append(time.process_time() - t0)
        rec.reset()
        with instrumented(rec):
            t0 = time.process_time()
            est = ours(name).fit(X, y)
            total = time.process_time() - t0
        per_fit.append(total)
        for label, _, _ in KINDS + PHASES:
            times[label].append(rec.time.get(label, 0.0))
        times[OUTSIDE].append(total - sum(rec.time.get(k[0], 0.0) for k in KINDS))
    work = dict(rec.work)
    work["outer iterations"] = rec.calls.get(MASTERS, 0)
    return dict(route=route(rec.calls), lambda_p=getattr(est, "lambda_p_", None),
                n_paths=est.n_paths_, work=work, plain=statistics.median(plain),
                instrumented=statistics.median(per_fit),
                times={k: statistics.median(v) for k, v in times.items()},
                estimators=(est_plain, est))


WORK_COLUMNS = ["paths", "level changes", "outer iterations", "masters", "masters to tol",
                "Newton steps", "sweeps", "sweeps to tol", "pricing steps",
                "candidates drawn"]


def main(argv=None):
    """Run the benchmark; return the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100x10,400x8,1000x20")
    parser.add_argument("--estimator", default="InfiniteFeatureRegressor",
                        choices=["InfiniteFeatureRegressor", "InfiniteFeatureClassifier"])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    sizes = parse_sizes(parser, args.sizes)
    warnings.simplefilter("ignore")
    task = "reg" if args.estimator.endswith("Regressor") else "clf"
    results = {}
    for n, d in sizes:
        X, y, _ = make_data(task, n, d)
        results[f"{n}x{d}"] = measure(args.estimator, X, y, args.repeats)
        print(f"{n}x{d} done", flush=True)
    print()
    print(markdown_table(
        ["data", "route", "lambda_p_", "n_paths_", *WORK_COLUMNS, "mean columns per master"],
        [[s, r["route"], r["lambda_p"], r["n_paths"],
          *(r["work"].get(c, 0) for c in WORK_COLUMNS),
          round(r["work"].get("columns per master", 0) / max(r["work"].get("masters", 0), 1),
                1)] for s, r in results.items()]))
    print()
    names = list(results)
    rows = [["fit, plain"] + [1e3 * results[s]["plain"] for s in names],
            ["fit, instrumented"] + [1e3 * results[s]["instrumented"] for s in names]]
    order = [k[0] for k in KINDS] + [OUTSIDE] + [k[0] for k in PHASES]
    for label in order:
        rows.append([label] + [
            f"{1e3 * results[s]['times'][label]:.1f} "
            f"({100 * results[s]['times'][label] / results[s]['instrumented']:.0f} %)"
            for s in names])
    print(markdown_table([f"{args.estimator}, CPU ms (medians)"] + names, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
