"""FGM at 10^6 x 10^5 (sparse): in memory, out of core (chunked), on a 2-worker Dask cluster.

Part (c) of the scale benchmark (issue 16).  One run writes the FGM paper's
sparse synthetic data (:func:`kernlearn.datasets.write_fgm_synthetic_svmlight`,
N(0, 1) entries at density 1e-4, y = sign(Xw), 1,000 informative features)
to an svmlight file, chunk by chunk, plus a 100,000-row test file from the
same ground truth, then fits ``FGMClassifier(max_iter=5)`` (other
settings at their defaults; ``--max-outer-iter 15`` for the default) on the
same data

* **in memory**: the file loaded as one CSR matrix (load time not counted);
* **chunked**: :class:`~kernlearn.datasets.SvmlightChunks` with
  ``memory_budget="64MB"``, one chunk resident at a time (the first pass,
  which parses the text, reads the labels and caches binary chunks, is
  reported separately);
* **Dask**: ``SvmlightChunks(...).to_dask()`` on a ``LocalCluster`` of 2
  worker processes (1 thread each): the workers read the chunks, the client
  gets only n- and n_features-sized vectors and the active columns.

Each path runs in its own subprocess so that its peak resident memory
(``VmHWM``) is its own; fit times are medians of ``--repeats`` fits in that
process.  Peak memory of the chunked path is also measured at smaller ``n``
(prefixes of the same file) to show it does not grow with ``n``.

Usage::

    python benchmarks/fgm_scale_dask.py [--n 1000000] [--n-features 100000]
        [--density 1e-4] [--repeats 3] [--rss-n 250000 500000]
        [--max-outer-iter 5] [--tmp DIR]

Issue 25 (``--synthetic``): the master on the cluster.  The same sparse design
is generated *on the workers*, one row chunk per task (never whole in
memory; labels ``sign(Xw)`` of the sampled rows, ties by a coin:
``labels="sampled"``, because the dense-matrix labels cost ``n x
n_informative`` draws), on a ``LocalCluster`` of 2 worker processes with
``--worker-memory`` each; ``X`` and ``y`` are Dask arrays and stay there.
For each ``--sizes`` n one subprocess records the client's peak RSS (the
process also runs the scheduler), each worker's peak RSS and the fit time
(median of ``--repeats`` fits: wall, CPU of the client, scheduler and workers,
and the round trips to the cluster, as in ``benchmarks/grfl_dask.py``);
at ``--compare-n`` the same chunks are also stacked in memory and fitted
there (time ratio, same model).  Each process first runs a warm-up fit of
1,000 rows (imports and compiled kernels, on the workers too).  Accuracy on
100,000 held-out rows from the same ground truth::

    python benchmarks/fgm_scale_dask.py --synthetic [--sizes 100000 1000000 10000000]
        [--compare-n 1000000] [--max-outer-iter 5] [--worker-memory 8GB]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402

BUDGET = "64MB"


def _fit_repeats(make, X, y, repeats):
    times, clf = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        clf = make().fit(X, y)
        times.append(time.perf_counter() - t0)
    return clf, statistics.median(times), times


def _model(clf):
    return {"selected": clf.selected_features_.tolist(),
            "coef": clf.coef_.ravel()[clf.selected_features_].tolist(),
            "intercept": float(clf.intercept_[0]), "n_iter": int(clf.n_iter_)}


def run_mode(mode, train, test, n_features, repeats, max_outer_iter):
    """One path in this process; prints a JSON line."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from functools import partial

    from kernlearn import FGMClassifier as _FGM
    from kernlearn.datasets import SvmlightChunks

    FGMClassifier = partial(_FGM, max_iter=max_outer_iter)
    from kernlearn.partitioned import peak_rss_mb

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    out = {"mode": mode}
    t0 = time.perf_counter()
    chunks = SvmlightChunks(train, n_features=n_features, memory_budget=BUDGET,
                            zero_based=True)
    test_chunks = SvmlightChunks(test, n_features=n_features, memory_budget=BUDGET,
                                 zero_based=True)
    out["index_time"] = time.perf_counter() - t0
    out["n"], out["nnz"], out["n_chunks"] = chunks.shape[0], chunks.nnz, chunks.n_chunks
    out["rss_before_fit"] = peak_rss_mb()
    if mode == "memory":
        import scipy.sparse as sp

        X = sp.vstack([chunks.get_chunk(i) for i in range(chunks.n_chunks)], format="csr")
        Xt = sp.vstack([test_chunks.get_chunk(i) for i in range(test_chunks.n_chunks)],
                       format="csr")
        out["rss_loaded"] = peak_rss_mb()
        clf, med, times = _fit_repeats(FGMClassifier, X, chunks.y, repeats)
        out["accuracy"] = float(clf.score(Xt, test_chunks.y))
    elif mode == "chunked":
        clf, med, times = _fit_repeats(FGMClassifier, chunks, chunks.y, repeats)
        out["accuracy"] = float(clf.score(test_chunks, test_chunks.y))
    else:
        import distributed

        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                           processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
        out["worker_rss_start"] = sorted(client.run(peak_rss_mb).values())
        Xd = chunks.to_dask()
        clf, med, times = _fit_repeats(FGMClassifier, Xd, chunks.y, repeats)
        pred = clf.predict(test_chunks.to_dask()).compute()
        out["accuracy"] = float(np.mean(pred == test_chunks.y))
        out["worker_rss_peak"] = sorted(client.run(peak_rss_mb).values())
        client.close()
        cluster.close()
    out.update(time=med, times=times, rss_peak=peak_rss_mb(), model=_model(clf),
               majority=float(max(np.mean(test_chunks.y > 0), np.mean(test_chunks.y < 0))))
    print(json.dumps(out))


def _sub(mode, train, test, n_features, repeats, max_outer_iter):
    cmd = [sys.executable, __file__, "--mode", mode, "--train", str(train), "--test",
           str(test), "--n-features", str(n_features), "--repeats", str(repeats),
           "--max-outer-iter", str(max_outer_iter)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"{mode} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _prefix(src, dst, n_rows):
    """The first ``n_rows`` lines of ``src`` (read in blocks)."""
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        left = n_rows
        while left:
            block = fi.read(1 << 24)
            if not block:
                break
            nl = np.flatnonzero(np.frombuffer(block, np.uint8) == 10)
            if len(nl) >= left:
                fo.write(block[: nl[left - 1] + 1])
                break
            fo.write(block)
            left -= len(nl)


SYNTH_CHUNK = 250_000


def _synth_chunk(i, rows, w, density, seed):
    """Row chunk ``i`` of the synthetic design: CSR ``X`` and ``y`` (one task)."""
    from kernlearn.datasets import _gaussian_sign_data

    rng = np.random.default_rng([seed, i])
    return _gaussian_sign_data(rng, w, rows, 0, density, labels="sampled")


def _synth_bounds(n):
    step = max(1, min(SYNTH_CHUNK, n // 4))
    return np.append(np.arange(0, n, step), n)


def _synth_weights(n_features, n_informative):
    from kernlearn.datasets import _fgm_weights

    return _fgm_weights(np.random.default_rng(12345), n_features, n_informative, "I")


def _timed_fits(out, make, X, y, cpu, rounds, repeats):
    """``repeats`` fits: medians of wall and CPU seconds (and round trips) into ``out``."""
    times, cpus, trips = [], [], []
    for _ in range(repeats):
        t0, c0, r0 = time.perf_counter(), cpu(), rounds.count if rounds else 0
        clf = make().fit(X, y)
        times.append(time.perf_counter() - t0)
        cpus.append(cpu() - c0)
        trips.append(rounds.count - r0 if rounds else 0)
    out.update(time=statistics.median(times), times=times, cpu=statistics.median(cpus),
               cpus=cpus, round_trips=statistics.median(trips), load=os.getloadavg()[0])
    return clf


def run_synthetic(mode, n, n_features, n_informative, density, max_outer_iter,
                  worker_memory, repeats=1):
    """One synthetic fit in this process (``mode`` "dask" or "memory"); prints a JSON line."""
    import warnings

    import scipy.sparse as sp
    from sklearn.exceptions import ConvergenceWarning

    from kernlearn import FGMClassifier
    from kernlearn.partitioned import peak_rss_mb

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    w = _synth_weights(n_features, n_informative)
    Xt, yt = _synth_chunk(10**6, 100_000, w, density, seed=1)  # held out
    bounds = _synth_bounds(n)
    out = {"mode": mode, "n": n, "n_chunks": len(bounds) - 1}
    make = lambda: FGMClassifier(max_iter=max_outer_iter)  # noqa: E731
    # Warm-up fit of 1,000 rows in every process (imports, compiled kernels).
    Xw, yw = _synth_chunk(10**6 + 1, 1000, w, density, seed=2)
    if mode == "memory":
        make().fit(Xw, yw)
        parts = [_synth_chunk(i, b - a, w, density, seed=0)
                 for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))]
        X = sp.vstack([p[0] for p in parts], format="csr")
        y = np.concatenate([p[1] for p in parts])
        del parts
        out["nnz"] = int(X.nnz)
        out["rss_before_fit"] = peak_rss_mb()
        clf = _timed_fits(out, make, X, y, time.process_time, None, repeats)
    else:
        import dask
        import dask.array as da
        import distributed

        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           memory_limit=worker_memory,
                                           dashboard_address=None)
        client = distributed.Client(cluster)
        make().fit(da.from_array(Xw, chunks=(500, n_features), asarray=False), yw)
        gen = dask.delayed(_synth_chunk, pure=True, nout=2)
        meta_x = sp.csr_matrix((0, n_features))
        xs, ys = [], []
        for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
            Xi, yi = gen(i, int(b - a), w, density, 0)
            xs.append(da.from_delayed(Xi, (int(b - a), n_features), dtype=float, meta=meta_x))
            ys.append(da.from_delayed(yi, (int(b - a),), dtype=float))
        t0 = time.perf_counter()
        # X and y of a chunk come from one task: persist them together.
        Xd, yd = client.persist([da.concatenate(xs), da.concatenate(ys)])
        distributed.wait([Xd, yd])
        out["generate_time"] = time.perf_counter() - t0
        out["nnz"] = int(client.compute(Xd.map_blocks(
            lambda B: np.array([[B.nnz]]), chunks=(1, 1), dtype=np.int64,
            meta=np.zeros((0, 0), np.int64)).sum()).result())
        out["rss_before_fit"] = peak_rss_mb()
        out["worker_rss_data"] = sorted(client.run(peak_rss_mb).values())
        from grfl_dask import _cluster_cpu, _RoundTrips

        clf = _timed_fits(out, make, Xd, yd, _cluster_cpu(client), _RoundTrips(client),
                          repeats)
        out["worker_rss_peak"] = sorted(client.run(peak_rss_mb).values())
        out["workers_lost"] = float(clf.history_["dask_workers_lost"][-1])
        client.close()
        cluster.close()
    out["accuracy"] = float(clf.score(Xt, yt))
    out["majority"] = float(max(np.mean(yt > 0), np.mean(yt < 0)))
    out.update(rss_peak=peak_rss_mb(), model=_model(clf))
    print(json.dumps(out), flush=True)


def _sub_synthetic(mode, n, args):
    cmd = [sys.executable, __file__, "--synthetic-mode", mode, "--n", str(n),
           "--synth-features", str(args.synth_features),
           "--synth-informative", str(args.synth_informative),
           "--synth-density", str(args.synth_density),
           "--max-outer-iter", str(args.max_outer_iter), "--worker-memory", args.worker_memory,
           "--repeats", str(args.repeats)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"{mode} n={n} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main_synthetic(args):
    """Client and worker memory against n; in memory against Dask at ``--compare-n``."""
    rows, results = [], {}
    for n in args.sizes:
        r = results[("dask", n)] = _sub_synthetic("dask", n, args)
        print(f"dask n={n:,}: fit {r['time']:.1f} s ({r['cpu']:.1f} s CPU, "
              f"{r['round_trips']} round trips, load {r['load']:.1f}), client peak {r['rss_peak']:.0f} MB, "
              f"workers {r['worker_rss_peak']}, accuracy {r['accuracy']:.4f}", flush=True)
    if args.compare_n:
        r = results[("memory", args.compare_n)] = _sub_synthetic("memory", args.compare_n, args)
        print(f"memory n={args.compare_n:,}: fit {r['time']:.1f} s ({r['cpu']:.1f} s CPU, "
              f"load {r['load']:.1f}), peak {r['rss_peak']:.0f} "
              f"MB, accuracy {r['accuracy']:.4f}", flush=True)
    for (mode, n), r in results.items():
        ref = results.get(("memory", n))
        same, dcoef, ratio, cpu_ratio = "-", float("nan"), float("nan"), float("nan")
        if ref is not None and mode == "dask":
            same = "yes" if r["model"]["selected"] == ref["model"]["selected"] else "no"
            if same == "yes":
                dcoef = float(np.max(np.abs(np.subtract(r["model"]["coef"],
                                                        ref["model"]["coef"]))))
            ratio, cpu_ratio = r["time"] / ref["time"], r["cpu"] / ref["cpu"]
        workers = ("/".join(f"{v:.0f}" for v in r["worker_rss_peak"])
                   if "worker_rss_peak" in r else "-")
        rows.append([mode, f"{n:,}", f"{r['nnz']:,}", r.get("generate_time", float("nan")),
                     r["time"], ratio, r["cpu"], cpu_ratio, r["round_trips"], r["load"],
                     r["rss_before_fit"], r["rss_peak"], workers, r["accuracy"],
                     len(r["model"]["selected"]), same, dcoef])
    print()
    print(f"FGMClassifier(max_iter={args.max_outer_iter}); {args.synth_features:,} features, "
          f"density {args.synth_density:g}, {args.synth_informative} informative; majority-class "
          f"test accuracy {next(iter(results.values()))['majority']:.4f}")
    print(markdown_table(
        ["path", "n", "nnz", "generate (s)", "fit (s)", "Dask / in-memory", "fit CPU (s)",
         "Dask / in-memory (CPU)", "round trips", "load",
         "peak RSS before fit (MB)", "peak RSS, process (MB)", "peak RSS per worker (MB)", "test accuracy", "features",
         "same features", "max |coef - in-memory|"], rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--n-features", type=int, default=100_000)
    ap.add_argument("--n-informative", type=int, default=1000)
    ap.add_argument("--density", type=float, default=1e-4)
    ap.add_argument("--n-test", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rss-n", type=int, nargs="*", default=[250_000, 500_000])
    ap.add_argument("--max-outer-iter", type=int, default=5)
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--mode", choices=["memory", "chunked", "dask"], default=None)
    ap.add_argument("--train")
    ap.add_argument("--test")
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--synthetic-mode", choices=["dask", "memory"], default=None)
    ap.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    ap.add_argument("--compare-n", type=int, default=1_000_000)
    ap.add_argument("--worker-memory", default="8GB")
    # 10 non-zeros per row (10^8 at 10^7 rows), one informative entry per row on average
    ap.add_argument("--synth-features", type=int, default=1000)
    ap.add_argument("--synth-informative", type=int, default=100)
    ap.add_argument("--synth-density", type=float, default=0.01)
    args = ap.parse_args()
    if args.synthetic_mode:
        return run_synthetic(args.synthetic_mode, args.n, args.synth_features,
                             args.synth_informative, args.synth_density, args.max_outer_iter,
                             args.worker_memory, args.repeats)
    if args.synthetic:
        return main_synthetic(args)
    if args.mode:
        return run_mode(args.mode, args.train, args.test, args.n_features, args.repeats,
                        args.max_outer_iter)

    from kernlearn.datasets import write_fgm_synthetic_svmlight

    folder = Path(args.tmp or tempfile.mkdtemp(prefix="fgm-scale-dask-"))
    train, test = folder / "train.svm", folder / "test.svm"
    t0 = time.perf_counter()
    w = write_fgm_synthetic_svmlight(train, args.n, args.n_features, args.n_informative,
                                     density=args.density, random_state=0)
    write_fgm_synthetic_svmlight(test, args.n_test, w=w, density=args.density,
                                 random_state=1)
    print(f"wrote {args.n} x {args.n_features} (density {args.density:g}) to {train} "
          f"({train.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t0:.0f} s",
          flush=True)

    results = {}
    for mode in ("memory", "chunked", "dask"):
        results[mode] = _sub(mode, train, test, args.n_features, args.repeats,
                             args.max_outer_iter)
        r = results[mode]
        print(f"{mode}: fit {r['time']:.1f} s (runs {[round(t, 1) for t in r['times']]}), "
              f"peak RSS {r['rss_peak']:.0f} MB, accuracy {r['accuracy']:.4f}", flush=True)
    ref = results["memory"]["model"]
    rows = []
    for mode, r in results.items():
        same = r["model"]["selected"] == ref["selected"]
        dcoef = float(np.max(np.abs(np.subtract(r["model"]["coef"], ref["coef"])))) \
            if same else float("nan")
        workers = ("/".join(f"{v:.0f}" for v in r["worker_rss_peak"])
                   if "worker_rss_peak" in r else "-")
        rows.append([mode, r["time"], r["time"] / results["memory"]["time"],
                     r["rss_peak"], workers, r["accuracy"], len(r["model"]["selected"]),
                     "yes" if same else "no", dcoef])
    print()
    print(f"FGMClassifier(max_iter={args.max_outer_iter}); "
          f"n = {args.n:,}, {args.n_features:,} features, nnz = {results['memory']['nnz']:,}; "
          f"majority-class test accuracy {results['memory']['majority']:.4f}; "
          f"first pass (parse + cache) {results['chunked']['index_time']:.1f} s")
    print(markdown_table(
        ["path", "fit time (s, median)", "time / in-memory", "peak RSS, process (MB)",
         "peak RSS per worker (MB)", "test accuracy", "features", "same features",
         "max |coef - in-memory|"], rows))
    if "worker_rss_start" in results["dask"]:
        print(f"Dask workers' RSS after start-up: "
              f"{'/'.join(f'{v:.0f}' for v in results['dask']['worker_rss_start'])} MB")

    rss_rows = []
    for n in sorted(set(args.rss_n) | {args.n}):
        if n == args.n:
            r = results["chunked"]
            size = train.stat().st_size
        else:
            part = folder / f"train_{n}.svm"
            _prefix(train, part, n)
            r = _sub("chunked", part, test, args.n_features, 1, args.max_outer_iter)
            size = part.stat().st_size
            os.remove(part)
        csr = (12 * r["nnz"] + 4 * (n + 1)) / 2**20  # X as one CSR matrix
        rss_rows.append([f"{n:,}", size / 1e6, csr, r["rss_peak"], r["time"], r["accuracy"]])
    print()
    print("Chunked path (memory_budget=64MB): peak RSS against n")
    print(markdown_table(["n", "file (MB)", "X as CSR (MB)", "peak RSS (MB)",
                          "fit time (s)", "test accuracy"], rss_rows))
    for p in (train, test):
        os.remove(p)


if __name__ == "__main__":
    main()
