"""The cost of watching the main thread's interrupts in a fit run in another
thread (``check_abandoned`` with :func:`~kernlearn.utils._threads.interrupts_watched`),
and how soon each method's fit stops after a Ctrl-C.

Cost: each fit is run in a worker thread (as a threaded search runs it) with
the watch and with it replaced by a no-op, alternated ``--pairs`` times after
a warm-up; printed are the medians of the fit's CPU time
(``time.process_time``, all threads), their ratio, and whether the models are
equal bit for bit.  Per call: ``check_abandoned`` outside a watched fit, inside
one (a clock read; the look itself at most every 0.05 s), and the look
(``_main_interrupts``) alone.

Latency: a longer fit of each method in a worker thread; once it has run
``--after`` seconds the main thread raises a ``KeyboardInterrupt`` and waits
for it in its ``except`` (as joblib's threading backend and a
``ThreadPoolExecutor`` do); printed: the seconds from the interrupt to the
fit's end, and the CPU seconds the fit had run (what the interrupt saved is
the rest of the fit).

``--latency-only --repeats 5`` skips the cost and prints the median and the
largest of five interrupted fits per method (audit 107: a handled interrupt
is confirmed at the next look, up to ``_LOOK_EVERY`` later).

Usage::

    python benchmarks/interrupt_watch_check.py [--pairs 7] [--after 1.0] [--only FGM ...]
        [--latency-only] [--repeats 1]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import contextlib
import threading
import time
import timeit
import warnings

import numpy as np

import kernlearn as kl
import kernlearn.estimators._base as base
from kernlearn.utils import _threads

WATCH = base.interrupts_watched


def _data(n, p, tasks=False):
    X = np.random.RandomState(0).randn(n, p)
    if tasks:
        return X, X[:, 0] + 0.3 * np.sin(3 * X[:, 1]), {"task_index": np.arange(n) % 4}
    return X, (X[:, :5].sum(1) + np.random.RandomState(1).randn(n) > 0).astype(int), {}


# name: (estimator, data size for the cost, longer fit for the latency: data
# size and parameters that keep the loop going)
METHODS = {
    "FGM": (lambda **kw: kl.FGMClassifier(B=2, max_iter=200, tol=1e-9, **kw),
            (400, 30), ((1500, 150), {})),
    "OBSCURE": (lambda **kw: kl.PNormMKLClassifier(random_state=0, **kw),
                (300, 10), ((1500, 10), dict(max_iter=10**6, tol=1e-12))),
    "MK-MTFL": (lambda **kw: kl.MultitaskMKLRegressor(**kw),
                (200, 5), ((1200, 5), dict(max_iter=10**6, tol=1e-15))),
    "SLKL": (lambda **kw: kl.LowRankKernelRegressor(random_state=0, **kw),
             (400, 10), ((20000, 10), dict(max_iter=10**4, tol=1e-15))),
}


def _in_a_thread(func):
    """Run ``func()`` in a worker thread; its result or exception."""
    out = []

    def run():
        try:
            out.append(func())
        except BaseException as error:
            out.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return out[0]


def _fit(make, size, name):
    X, y, kw = _data(*size, tasks=name.startswith("MK"))
    if name == "SLKL":
        y = y.astype(float)
    est = make()
    t0 = time.process_time()
    result = _in_a_thread(lambda: est.fit(X, y, **kw))
    assert result is est, result
    return time.process_time() - t0, est.predict(X, **kw)


def _latency(make, long, name, after):
    size, params = long
    X, y, kw = _data(*size, tasks=name.startswith("MK"))
    if name == "SLKL":
        y = y.astype(float)
    out, t0 = [], time.process_time()

    def run():
        try:
            make(**params).fit(X, y, **kw)
            out.append("ran to its end")
        except BaseException as error:
            out.append(type(error).__name__)
        out.append(time.perf_counter())

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(after)
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        t_int = time.perf_counter()
        thread.join()
    return out[0], out[1] - t_int, time.process_time() - t0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--after", type=float, default=1.0)
    parser.add_argument("--only", nargs="*", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--latency-only", action="store_true")
    parser.add_argument("--repeats", type=int, default=1, help="interrupted fits per method")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.latency_only:
        _latencies(args)
        return
    n = 200_000
    per = min(timeit.repeat(_threads.check_abandoned, number=n, repeat=5)) / n

    def watched():
        with _threads.interrupts_watched():
            return min(timeit.repeat(_threads.check_abandoned, number=n, repeat=5)) / n

    per_watched = _in_a_thread(watched)
    look = min(timeit.repeat(_threads._main_interrupts, number=20_000, repeat=5)) / 20_000
    print(f"check_abandoned: {per * 1e9:.0f} ns a call unwatched (the main thread), "
          f"{per_watched * 1e9:.0f} ns watched (a worker's fit); the look "
          f"{look * 1e6:.2f} us (at most every {_threads._LOOK_EVERY} s)")
    for name in args.only:
        make, small, large = METHODS[name]
        times, preds = {"watch": [], "none": []}, {}
        for k in range(args.pairs + 1):
            for route in ("watch", "none") if k % 2 else ("none", "watch"):
                base.interrupts_watched = WATCH if route == "watch" else contextlib.nullcontext
                t, preds[route] = _fit(make, small, name)
                if k:  # (the first pair warms up)
                    times[route].append(t)
        base.interrupts_watched = WATCH
        a, b = np.median(times["watch"]), np.median(times["none"])
        print(f"{name} {small[0]}x{small[1]}: fit CPU median {a * 1e3:.1f} ms watched, "
              f"{b * 1e3:.1f} ms not, ratio {a / b:.3f}; predictions equal bit for bit: "
              f"{np.array_equal(preds['watch'], preds['none'])}", flush=True)
    _latencies(args)


def _latencies(args):
    """Print how soon each method's fit stops after the interrupt (``args.repeats`` fits)."""
    for name in args.only:
        make, small, large = METHODS[name]
        # (a first fit's imports took 1.3 s before its watch began: a Ctrl-C
        # in them is from before the fit, which then ran to its end)
        _fit(make, small, name)
        runs = [_latency(make, large, name, args.after) for _ in range(args.repeats)]
        took = [t for _, t, _ in runs]
        print(f"{name} {large[0][0]}x{large[0][1]} {large[1]}, interrupted after {args.after} s: "
              f"{sorted({how for how, _, _ in runs})} {np.median(took):.3f} s after the "
              f"interrupt (median of {len(runs)}, largest {max(took):.3f}; the fit's CPU "
              f"{np.median([c for _, _, c in runs]):.2f} s)", flush=True)


if __name__ == "__main__":
    main()
