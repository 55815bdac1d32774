"""GrFL (InfiniteFeatureClassifier) in memory and on a 2-worker Dask cluster.

Part of issue 25 (the whole fit on the cluster): the same synthetic dense
problem fitted

* **in memory**: ``X`` as one NumPy array in the fitting process;
* **Dask**: ``X`` a ``dask.array`` generated chunk by chunk on a
  ``LocalCluster`` of 2 worker processes (1 thread each) and persisted there
  before the fit; pricing and the Newton master run on the partitions, the
  client receives sums of the size of the candidates, of ``|active|^2`` and
  the 2,000-row pricing subsample.

Data: ``n`` rows of ``d`` N(0, 1) inputs (chunks of ``--chunk`` rows, each
drawn from its own seed, so both paths see the same numbers) and labels
``sin(2 x0) + x1 x2 + 0.5 x3 > 0.2`` with 5 % flipped; a 20,000-row test set
from further seeds.  ``InfiniteFeatureClassifier(max_features, n_candidates,
random_state=0)``, the other settings at their defaults (standardised inputs,
random Fourier features with ``gamma="scale"``, Newton master).

Each (path, n) runs in its own subprocess so that its peak resident memory
(``VmHWM``, the client's only for Dask) is its own; fit times are medians of
``--repeats`` fits in that process, in wall-clock seconds and in CPU seconds
(for Dask: the client's, the workers' and the scheduler's, the work done
whatever else loads the machine; the scheduler of a ``LocalCluster`` runs in
the client's process and is counted once) and the round trips of a Dask fit
(the client's gathers and scheduler queries); the Dask fit time includes moving ``y`` to
the workers, not generating ``X``.

Usage::

    python benchmarks/grfl_dask.py [--n 100000 1000000] [--d 20]
        [--max-features 20] [--n-candidates 50] [--repeats 1]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402

N_TEST = 20_000


def _chunk(i, rows, d):
    """Chunk ``i`` of the inputs (its own seed: the same rows in every path)."""
    return np.random.default_rng([7, i]).standard_normal((rows, d))


def _labels(X):
    f = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * X[:, 3]
    flip = np.abs(np.sin(1e3 * X[:, 4])) > 0.95  # about 5 %, a function of the row
    return ((f > 0.2) ^ flip).astype(np.int8)


def _chunk_rows(n, chunk):
    return [min(chunk, n - s) for s in range(0, n, chunk)]


def _cluster_cpu(client):
    """CPU seconds of the client, the workers and the scheduler (counted once when
    it runs in the client's process, as in a ``LocalCluster``)."""
    import os

    own = client.run_on_scheduler(os.getpid) == os.getpid()

    def cpu():
        return (time.process_time() + sum(client.run(time.process_time).values())
                + (0.0 if own else client.run_on_scheduler(time.process_time)))

    return cpu


class _RoundTrips:
    """Counts the client's waits on the cluster: gathers (of results) and
    scheduler queries."""

    def __init__(self, client):
        self.count = 0
        for name in ("gather", "scheduler_info"):
            original = getattr(client, name)

            def counted(*args, _original=original, **kwargs):
                self.count += 1
                return _original(*args, **kwargs)

            setattr(client, name, counted)


def run_mode(mode, n, d, chunk, max_features, n_candidates, repeats):
    """One path at one ``n`` in this process; prints a JSON line."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from kernlearn import InfiniteFeatureClassifier
    from kernlearn.partitioned import peak_rss_mb

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    sizes = _chunk_rows(n, chunk)
    Xt = _chunk(10**6, N_TEST, d)
    yt = _labels(Xt)
    out = {"mode": mode, "n": n, "rss_start": peak_rss_mb()}

    def make():
        return InfiniteFeatureClassifier(max_features=max_features,
                                         n_candidates=n_candidates, random_state=0)

    times, cpus = [], []
    if mode == "memory":
        X = np.concatenate([_chunk(i, r, d) for i, r in enumerate(sizes)])
        y = _labels(X)
        out["rss_loaded"] = peak_rss_mb()
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            clf = make().fit(X, y)
            times.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
    else:
        import dask
        import dask.array as da
        import distributed

        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                           processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
        Xd = da.concatenate([
            da.from_delayed(dask.delayed(_chunk)(i, r, d), (r, d), dtype=float)
            for i, r in enumerate(sizes)])
        Xd = client.persist(Xd)
        y = Xd.map_blocks(_labels, drop_axis=1, dtype=np.int8).compute()
        out["rss_loaded"] = peak_rss_mb()
        cpu = _cluster_cpu(client)
        rounds = _RoundTrips(client)
        for _ in range(repeats):
            t0, c0, r0 = time.perf_counter(), cpu(), rounds.count
            clf = make().fit(Xd, y)
            times.append(time.perf_counter() - t0)
            cpus.append(cpu() - c0)
            out.setdefault("round_trips", []).append(rounds.count - r0)
        out["worker_rss_peak"] = sorted(client.run(peak_rss_mb).values())
        client.close()
        cluster.close()
    out["load"] = os.getloadavg()[0]
    out.update(time=statistics.median(times), times=times, cpu=statistics.median(cpus),
               cpus=cpus, rss_peak=peak_rss_mb(),
               accuracy=float(clf.score(Xt, yt)), features=clf.features_.tolist(),
               coef=clf.column_coef_.ravel().tolist(), n_iter=int(clf.n_iter_))
    print(json.dumps(out))


def _sub(mode, args, n):
    cmd = [sys.executable, __file__, "--mode", mode, "--n", str(n), "--d", str(args.d),
           "--chunk", str(args.chunk), "--max-features", str(args.max_features),
           "--n-candidates", str(args.n_candidates), "--repeats", str(args.repeats)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"{mode} at n={n} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--chunk", type=int, default=125_000)
    ap.add_argument("--max-features", type=int, default=20)
    ap.add_argument("--n-candidates", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--mode", choices=["memory", "dask"], default=None)
    args = ap.parse_args()
    if args.mode:
        return run_mode(args.mode, args.n[0], args.d, args.chunk, args.max_features,
                        args.n_candidates, args.repeats)
    rows = []
    for n in args.n:
        res = {mode: _sub(mode, args, n) for mode in ("memory", "dask")}
        ref = res["memory"]
        for mode, r in res.items():
            same = np.allclose(r["features"], ref["features"], rtol=1e-10, atol=1e-12)
            dcoef = (float(np.max(np.abs(np.subtract(r["coef"], ref["coef"])))
                           / np.max(np.abs(ref["coef"]))) if same else float("nan"))
            workers = ("/".join(f"{v:.0f}" for v in r["worker_rss_peak"])
                       if "worker_rss_peak" in r else "-")
            trips = (statistics.median(r["round_trips"]) if "round_trips" in r else "-")
            rows.append([f"{n:,}", mode, r["time"], r["time"] / ref["time"], r["cpu"],
                         r["cpu"] / ref["cpu"], trips, r["rss_peak"], r["rss_peak"] - r["rss_start"], workers,
                         r["accuracy"], len(r["features"]), "yes" if same else "no", dcoef])
            print(rows[-1], f"load {r['load']:.1f}", flush=True)
    print()
    print(f"InfiniteFeatureClassifier(max_features={args.max_features}, n_candidates="
          f"{args.n_candidates}, random_state=0); d = {args.d}, chunks of {args.chunk:,} "
          f"rows; 2 worker processes x 1 thread; median of {args.repeats} fit(s)")
    print(markdown_table(
        ["n", "path", "fit wall (s)", "vs memory", "fit CPU (s)", "vs memory", "round trips",
         "client peak RSS (MB)",
         "client RSS growth (MB)", "worker peak RSS (MB)", "test accuracy", "features",
         "same features", "max rel. coef diff"], rows))


if __name__ == "__main__":
    main()
