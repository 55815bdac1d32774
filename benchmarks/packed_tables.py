"""Compressed text data files: a genuine mostly-zero table against bombs.

Each case reads one ``.csv.gz`` (or ``.csv.bz2``) in a fresh subprocess and
reports its CPU time (``time.process_time``) and peak resident memory (Linux's
``VmHWM``, the interpreter's own baseline shown apart), and whether the file was
read or refused:

* ``table``: a document-term-like table of counts (0.1 % non-zero, one digit a
  cell) of a few hundred MB of text, some 300:1 by gzip -6: it must read.  Read
  by :func:`kernlearn.datafiles.load_data_file` and by ``pandas.read_csv`` (the
  anchor) on the same file;
* ``bomb250``: gzip holding 250 MB of zero rows (``0,0,0,0,1``), as the bomb
  the last passes' tests recall (1 MB of file there; 0.25 MB here, as gzip
  packs these rows 1000:1); ``bomb1000``: 1 GB of them; ``blank``: a bzip2
  file of 400 MB of blank lines; ``bomb250@256MB``: the first under
  ``max_table_size="256MB"``.

``--src`` names the source tree to measure (several: before/after in one run,
alternated); the medians of ``--repeats`` runs are printed.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/packed_tables.py --src src --src /old/src
"""

import argparse
import bz2
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

_CASE = """
import json, sys, time
sys.path.insert(0, {src!r})
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
import numpy as np, pandas as pd
from kernlearn.datafiles import load_data_file
base = hwm()
t0 = time.process_time()
try:
    if {reader!r} == "pandas":
        shape = pd.read_csv({path!r}).shape
    else:
        kw = {{}} if {budget!r} is None else {{"max_table_size": {budget!r}}}
        shape = load_data_file({path!r}, **kw)[0].shape
    status = f"read {{shape[0]}} x {{shape[1]}}"
except (ValueError, MemoryError) as exc:
    status = "refused: " + str(exc)[:90]
print(json.dumps({{"cpu": time.process_time() - t0, "peak": hwm(), "base": base,
                  "status": status}}))
"""


def mostly_zero_csv(n_rows, n_cols, density, width=1, seed=0):
    """A dense CSV table of mostly zeros, as a document-term matrix of counts.

    Parameters
    ----------
    n_rows, n_cols : int
        Rows and columns (the last, ``y``, a 0/1 label; no zero there).
    density : float
        Fraction of the other cells that are non-zero (a digit 1-9).
    width : int, default=1
        Characters a cell: ``0``, or ``0.000`` for ``width=5``.
    seed : int, default=0

    Returns
    -------
    text : bytes
        The table with a header line ``f0,...,y``.
    """
    rng = np.random.default_rng(seed)
    cell = np.frombuffer((b"0." + b"0" * (width - 2))[:width] + b",", np.uint8)
    cells = np.tile(cell, (n_rows, n_cols)).reshape(n_rows, n_cols, width + 1)
    mask = rng.random((n_rows, n_cols - 1)) < density
    cells[:, :-1, 0][mask] = rng.integers(ord("1"), ord("9") + 1, mask.sum())
    cells[:, -1, 0] = rng.integers(ord("0"), ord("2"), n_rows)
    cells[:, -1, -1] = ord("\n")
    head = (",".join(f"f{j}" for j in range(n_cols - 1)) + ",y\n").encode()
    return head + cells.tobytes()


def _gzip(text, level=6):
    packer = zlib.compressobj(level, zlib.DEFLATED, 31)  # (31: the gzip format)
    return packer.compress(text) + packer.flush()


def make_files(folder, table_mb=200):
    """The cases' files in ``folder``: ``{name: path}``."""
    folder = Path(folder)
    rows = 2000  # (columns of the table)
    table = mostly_zero_csv(int(table_mb * 2**20 / (2 * rows)), rows, 0.001)
    (folder / "table.csv.gz").write_bytes(_gzip(table))
    # the bombs: gzip members of 8 MiB of zero rows each, concatenated (gzip
    # reads them as one stream), 1 and 4 MB of file
    head = _gzip(b"a,b,c,d,y\n" + b"0,0,0,0,1\n" * (2**23 // 10))
    rest = _gzip(b"0,0,0,0,1\n" * (2**23 // 10))
    for text_mb in (250, 1000):
        (folder / f"bomb{text_mb}.csv.gz").write_bytes(head + rest * (text_mb // 8 - 1))
    (folder / "blank.csv.bz2").write_bytes(
        bz2.compress(b"a,b\n1,2\n" + b"\n" * (400 * 2**20), 9))
    sizes = {p.name: (p.stat().st_size, _text_size(p)) for p in folder.iterdir()}
    return {p.name.split(".")[0]: str(p) for p in folder.iterdir()}, sizes


def _text_size(path):
    opener = gzip.open if path.suffix == ".gz" else bz2.open
    n = 0
    with opener(path, "rb") as fh:
        while block := fh.read(2**24):
            n += len(block)
    return n


def run(src, reader, path, budget=None):
    """One case in a fresh subprocess: its measurements (a dict)."""
    script = _CASE.format(src=str(src), reader=reader, path=path, budget=budget)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    return json.loads(out.stdout.splitlines()[-1])


def main(argv=None):
    """Run the cases and print a table of medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", action="append", help="source tree(s) (default: src)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--table-mb", type=float, default=200)
    args = parser.parse_args(argv)
    srcs = args.src or [str(Path(__file__).resolve().parents[1] / "src")]
    with tempfile.TemporaryDirectory(prefix="kernlearn-packed-") as tmp:
        files, sizes = make_files(tmp, args.table_mb)
        for name, (packed, text) in sorted(sizes.items()):
            print(f"{name}: {packed / 2**20:.2f} MiB of file, {text / 2**20:.0f} MiB of "
                  f"text ({text / packed:.0f}:1)")
        cases = [("table", "pandas", None, srcs[:1])]
        cases += [(name, "kernlearn", budget, srcs) for name, budget in
                  (("table", None), ("bomb250", None), ("bomb1000", None),
                   ("blank", None), ("bomb250", "256MB"))]
        results = {}
        for _ in range(args.repeats):  # (alternated: the machine's load shared out)
            for name, reader, budget, trees in cases:
                for src in trees:
                    if budget is not None and src != srcs[0]:
                        continue  # (an older tree has no max_table_size)
                    key = (name, reader, budget, src)
                    results.setdefault(key, []).append(run(src, reader, files[name], budget))
    print("| file | reader | source | CPU s | peak MiB (baseline) | outcome |")
    print("|---|---|---|---|---|---|")
    anchor = None
    for (name, reader, budget, src), runs in results.items():
        cpu = statistics.median(r["cpu"] for r in runs)
        peak = statistics.median(r["peak"] for r in runs)
        if name == "table" and reader == "pandas":
            anchor = (cpu, peak)
        ratio = (f" ({cpu / anchor[0]:.1f}x, {peak / anchor[1]:.1f}x pandas)"
                 if name == "table" and reader != "pandas" and anchor else "")
        print(f"| {name}{'@' + budget if budget else ''} | {reader} | {src} | {cpu:.2f} | "
              f"{peak:.0f} ({runs[0]['base']:.0f}){ratio} | {runs[-1]['status']} |")


if __name__ == "__main__":
    main()
