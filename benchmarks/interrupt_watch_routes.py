"""How the interrupt watch (``kernlearn.utils._threads``) reads a few routes.

Three parts, each printing counts:

* ``routes``: a fit queued in a one-worker ``ThreadPoolExecutor`` behind a
  0.1 s task when the main thread raises a ``KeyboardInterrupt``, for each way
  a program waits for the pool: its ``with`` (stops), ``pool.shutdown()`` in a
  ``finally`` or an ``except`` (runs its 0.4 s to its end: the watch knows only
  the ``with``'s exit), a fallback pool in the ``except`` (runs, as it must);
* ``starved``: fits in N threads of pure-Python iterations while the main
  thread catches a raised ``KeyboardInterrupt`` for a millisecond (a prompt
  written in Python) 20 times at random intervals: the fits stopped (0 is
  right; the GIL shared by N busy threads might stretch the millisecond past
  the confirming look);
* ``cost``: CPU microseconds of one look (``_main_interrupts``) with N idle
  threads alive.

Run: ``OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/interrupt_watch_routes.py``.
"""

import random
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from kernlearn.utils import _threads


def _fit(seconds=0.4):
    with _threads.interrupts_watched():
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            _threads.check_abandoned()
            time.sleep(0.001)
    return "ran to its end"


def _route(route):
    """How the queued fit ended under ``route``."""
    queued = []

    def start(pool):
        pool.submit(time.sleep, 0.1)
        queued.append(pool.submit(_fit))

    try:
        if route == "with":
            with ThreadPoolExecutor(1) as pool:
                start(pool)
                raise KeyboardInterrupt
        elif route in ("finally: shutdown()", "except: shutdown()"):
            pool = ThreadPoolExecutor(1)
            try:
                start(pool)
                raise KeyboardInterrupt
            except KeyboardInterrupt:
                if route.startswith("except"):
                    pool.shutdown()
                raise
            finally:
                pool.shutdown()
        else:  # (a fallback fitted by a pool of its own in the except)
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt:
                with ThreadPoolExecutor(1) as pool:
                    start(pool)
    except KeyboardInterrupt:
        pass
    error = queued[0].exception(30)
    return type(error).__name__ if error is not None else queued[0].result()


def _starved(n_threads, seed, n_prompts=20):
    """Fits stopped in ``n_threads`` busy threads by ``n_prompts`` caught interrupts."""
    rng, done, stopped = random.Random(seed), threading.Event(), []

    def fit():
        try:
            with _threads.interrupts_watched():
                while not done.is_set():
                    _threads.check_abandoned()
                    sum(range(2000))  # (about 0.1 ms of Python, holding the GIL)
        except _threads.Interrupted:
            stopped.append(1)

    threads = [threading.Thread(target=fit) for _ in range(n_threads)]
    for thread in threads:
        thread.start()
    for _ in range(n_prompts):
        time.sleep(rng.uniform(0.05, 0.15))  # (typing: the GIL released)
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            end = time.perf_counter() + 0.001
            while time.perf_counter() < end:
                pass
    done.set()
    for thread in threads:
        thread.join()
    return len(stopped)


def _cost(n_threads, reps=20000):
    """Median CPU microseconds of one look with ``n_threads`` idle threads alive."""
    done = threading.Event()
    threads = [threading.Thread(target=done.wait) for _ in range(n_threads)]
    for thread in threads:
        thread.start()
    runs = []
    for _ in range(5):
        start = time.process_time()
        for _ in range(reps):
            _threads._main_interrupts()
        runs.append((time.process_time() - start) / reps * 1e6)
    done.set()
    for thread in threads:
        thread.join()
    return statistics.median(runs)


if __name__ == "__main__":
    for route in ("with", "finally: shutdown()", "except: shutdown()", "fallback pool in except"):
        print(f"routes {route:24s} {_route(route)}")
    for n in (1, 4, 16, 50):
        print(f"starved {n:2d} threads, seeds 0-2: fits stopped",
              [_starved(n, seed) for seed in range(3)])
    for n in (0, 10, 50, 200):
        print(f"cost {n:3d} idle threads: {_cost(n):.2f} us per look")
