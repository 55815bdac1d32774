"""Compressed text files whose reading the bound's estimate undercounted.

Each case reads one small compressed file in a fresh subprocess and reports its
CPU time (``time.process_time``) and peak resident memory (Linux's ``VmHWM``,
the interpreter's baseline shown apart), and whether it was read or refused,
under a ``max_table_size`` below what the reading really takes:

* ``wide``: a ``.csv.gz`` of 2 rows of 400,000 zeros (1.6 kB of gzip), read
  with ``header=False`` (pandas keeps some 3 KiB a column), under 1 GB;
* ``quoted``: a ``.csv.gz`` of 6,000 rows whose label is a quoted string of
  10,000 characters and an emoji (Python's strings then take 4 bytes a
  character), 57 MiB of text, under 512 MB;
* ``stream``: a ``.svm.xz`` of 256 MiB of 1,000-pair lines (41 kB of xz)
  parsed as predicting out of core parses it (``iter_libsvm``), under 256 MB.

``--src`` names the source tree to measure (several: before/after in one run,
alternated); the medians of ``--repeats`` runs are printed.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/packed_bombs.py --src src --src /old/src
"""

import argparse
import gzip
import json
import lzma
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_CASE = """
import json, sys, time
sys.path.insert(0, {src!r})
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
import numpy as np, pandas as pd
from kernlearn.datafiles import iter_libsvm, load_data_file
base = hwm()
t0 = time.process_time()
try:
    if {reader!r} == "stream":
        rows = sum(X.shape[0] for X, _ in iter_libsvm({path!r}, 1001, "auto",
                                                       max_table_size={budget!r}))
        status = f"read {{rows}} rows"
    else:
        shape = load_data_file({path!r}, max_table_size={budget!r}, **{kw!r})[0].shape
        status = f"read {{shape[0]}} x {{shape[1]}}"
except (ValueError, MemoryError) as exc:
    status = "refused: " + str(exc).split(": ", 1)[-1][:80]
print(json.dumps({{"cpu": time.process_time() - t0, "peak": hwm(), "base": base,
                  "status": status}}))
"""


def make_files(folder):
    """The cases' files in ``folder``: ``{name: (path, reader, budget, kwargs)}``."""
    folder = Path(folder)
    row = b",".join([b"0"] * 400_000) + b"\n"
    (folder / "wide.csv.gz").write_bytes(gzip.compress(row + row, 6))
    quoted = '1,2,"' + "x" * 10_000 + '\U0001F600"\n'
    (folder / "quoted.csv.gz").write_bytes(
        gzip.compress(("a,b,y\n" + quoted * 6000).encode(), 6))
    line = b"1" + b"".join(b" %d:0" % j for j in range(1, 1001)) + b"\n"
    block = lzma.compress(line * (2**26 // len(line)), preset=6)
    (folder / "stream.svm.xz").write_bytes(block * 4)  # (4 xz streams, read as one)
    return {"wide": (str(folder / "wide.csv.gz"), "load", 10**9, {"header": False}),
            "quoted": (str(folder / "quoted.csv.gz"), "load", 512 * 10**6, {}),
            "stream": (str(folder / "stream.svm.xz"), "stream", 256 * 10**6, {})}


def run(src, reader, path, budget, kw):
    """One case in a fresh subprocess: its measurements (a dict)."""
    script = _CASE.format(src=str(src), reader=reader, path=path, budget=budget, kw=kw)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    return json.loads(out.stdout.splitlines()[-1])


def main(argv=None):
    """Run the cases and print a table of medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", action="append", help="source tree(s) (default: src)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    srcs = args.src or [str(Path(__file__).resolve().parents[1] / "src")]
    results = {}
    with tempfile.TemporaryDirectory(prefix="kernlearn-bombs-") as tmp:
        cases = make_files(tmp)
        for name, (path, *_) in cases.items():
            print(f"{name}: {Path(path).stat().st_size / 1024:.1f} KiB of file")
        for _ in range(args.repeats):  # (alternated: the machine's load shared out)
            for name, (path, reader, budget, kw) in cases.items():
                for src in srcs:
                    results.setdefault((name, budget, src), []).append(
                        run(src, reader, path, budget, kw))
    print("| file | source | CPU s | peak MiB (baseline) | outcome |")
    print("|---|---|---|---|---|")
    for (name, budget, src), runs in results.items():
        cpu = statistics.median(r["cpu"] for r in runs)
        peak = statistics.median(r["peak"] for r in runs)
        print(f"| {name}@{budget / 1e6:.0f}MB | {src} | {cpu:.2f} | {peak:.0f} ({runs[0]['base']:.0f}) "
              f"| {runs[-1]['status']} |")


if __name__ == "__main__":
    main()
