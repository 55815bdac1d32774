"""The first GrFL fit on a fresh Dask cluster: what the workers import costs.

Each run starts a new ``LocalCluster`` of worker processes (1 thread each),
persists a dense ``dask.array`` there, and times one
``InfiniteFeatureClassifier`` fit: wall-clock seconds and CPU seconds (the
client's and the workers'; the scheduler runs in the client's process).  A
fresh worker imports the modules of the tasks' functions and objects on the
first task that needs them, so the first fit pays for those imports; it
also reports whether scikit-learn was imported on the workers (the project's
rule: it must not be).  Medians over ``--runs`` fresh clusters.

Usage::

    python benchmarks/grfl_dask_first_fit.py [--n 20000] [--d 10] [--workers 2]
        [--runs 3]
"""

import argparse
import statistics
import time

import numpy as np


def _worker_state():
    import sys
    import time

    return time.process_time(), "sklearn" in sys.modules


def run(n, d, workers, max_features):
    import dask.array as da
    import distributed

    from kernlearn import InfiniteFeatureClassifier

    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        rng = np.random.default_rng(0)
        X = rng.standard_normal((n, d))
        y = (np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] > 0.2).astype(int)
        Xd = da.from_array(X, chunks=(n // (2 * workers), d)).persist()
        client.wait_for_workers(workers)
        distributed.wait(Xd)
        before = client.run(_worker_state)
        assert not any(s for _, s in before.values()), "scikit-learn already on a worker"
        t0, c0 = time.perf_counter(), time.process_time()
        InfiniteFeatureClassifier(max_features=max_features, n_candidates=50,
                                  random_state=0).fit(Xd, y)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        after = client.run(_worker_state)
        cpu += sum(after[w][0] - before[w][0] for w in after)
        return wall, cpu, any(s for _, s in after.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--max-features", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    rows = [run(args.n, args.d, args.workers, args.max_features) for _ in range(args.runs)]
    for wall, cpu, sk in rows:
        print(f"first fit: wall {wall:.2f} s, CPU {cpu:.2f} s, "
              f"scikit-learn on the workers: {sk}")
    print(f"median of {args.runs}: wall {statistics.median(r[0] for r in rows):.2f} s, "
          f"CPU {statistics.median(r[1] for r in rows):.2f} s")


if __name__ == "__main__":
    main()
