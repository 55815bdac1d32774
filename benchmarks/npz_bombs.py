"""Reading ``.npz`` data files with bzip2/LZMA members: bombs and genuine data.

Each case is read by ``kernlearn.datafiles.load_data_file`` in a fresh
process (CPU seconds, peak resident memory), this checkout's code alternated
with ``--baseline-src`` (another checkout's ``src``, e.g. main before the
bounded reader) when given; the anchor is NumPy's own ``np.load`` of the same
file.  Medians of ``--repeats`` runs.  Run with ``OMP_NUM_THREADS=1``::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/npz_bombs.py --baseline-src /path/to/main/src
"""

import argparse
import io
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[1] / "src"
PROBE = """
import resource, sys, time
import numpy as np
t = time.process_time()
try:
    if sys.argv[2] == "numpy":
        with np.load(sys.argv[1]) as d:
            X = d["X"]
    else:
        from kernlearn.datafiles import load_data_file
        X = load_data_file(sys.argv[1])[0]
    r = "read"
except Exception as e:
    r = "refused"
print(time.process_time() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, r)
"""


def _member(zf, name, method, head, n_zeros=0, body=b""):
    info = zipfile.ZipInfo(name)
    info.compress_type = method
    with zf.open(info, "w") as fh:  # (under 2 GiB: no zip64 fields)
        fh.write(head)
        fh.write(body)
        for _ in range(n_zeros // 2**24):
            fh.write(bytes(2**24))


def _header(shape):
    h = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        h, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return h.getvalue()


def small_declared_bomb(path, method):
    """``X.npy`` declares 2x2 (160 bytes) and its stream unpacks to 1 GiB."""
    head = _header((2, 2))
    with zipfile.ZipFile(path, "w") as zf:
        _member(zf, "X.npy", method, head, 2**30)
    data = bytearray(path.read_bytes())
    crc = zlib.crc32(bytes(32), zlib.crc32(head))
    i = data.find(b"PK\x01\x02")
    # (the CRC and unpacked size, in the local header and the central entry)
    for crc_at, size_at in ((14, 22), (i + 16, i + 24)):
        struct.pack_into("<I", data, crc_at, crc)
        struct.pack_into("<I", data, size_at, 160)
    path.write_bytes(bytes(data))


def honest_zeros(path, method):
    """``X.npy`` is truly 2**26 x 2 zeros (1 GiB), ``y`` absent."""
    with zipfile.ZipFile(path, "w") as zf:
        _member(zf, "X.npy", method, _header((2**26, 2)), 2**30)


def genuine(path, method):
    """100 MB of real-valued data (1.25M x 10 normal draws and labels)."""
    rng = np.random.default_rng(0)
    X = np.round(rng.standard_normal((1_250_000, 10)), 3)
    with zipfile.ZipFile(path, "w", compression=method) as zf:
        for name, a in (("X", X), ("y", (X[:, 0] > 0).astype(float))):
            buf = io.BytesIO()
            np.save(buf, a)
            zf.writestr(f"{name}.npy", buf.getvalue())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-src", help="another checkout's src directory")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--build", nargs=2, help=argparse.SUPPRESS)  # (case index, path)
    args = ap.parse_args()
    sides = [("ours", str(SRC))] + ([("base", args.baseline_src)] if args.baseline_src else [])
    cases = [("small-declared bzip2 bomb", small_declared_bomb, zipfile.ZIP_BZIP2),
             ("small-declared LZMA bomb", small_declared_bomb, zipfile.ZIP_LZMA),
             ("honest 1 GiB bzip2 zeros", honest_zeros, zipfile.ZIP_BZIP2),
             ("genuine 100 MB bzip2", genuine, zipfile.ZIP_BZIP2),
             ("genuine 100 MB LZMA", genuine, zipfile.ZIP_LZMA)]
    if args.build:  # (in a child: a child's peak memory counts its parent's at fork)
        _, build, method = cases[int(args.build[0])]
        return build(Path(args.build[1]), method)
    with tempfile.TemporaryDirectory() as tmp:
        for k, (label, build, method) in enumerate(cases):
            path = Path(tmp) / "d.npz"
            subprocess.run([sys.executable, __file__, "--build", str(k), str(path)],
                           check=True)
            runs = {s: [] for s, _ in sides + [("numpy", str(SRC))]}
            for _ in range(args.repeats):  # (alternated)
                for side, src in sides + [("numpy", str(SRC))]:
                    env = dict(os.environ, PYTHONPATH=src)
                    out = subprocess.run([sys.executable, "-c", PROBE, str(path),
                                          side], env=env, capture_output=True,
                                         text=True, check=True).stdout.split()
                    runs[side].append((float(out[0]), float(out[1]), out[2]))
            print(f"{label} ({path.stat().st_size} bytes):")
            for side, r in runs.items():
                cpu = statistics.median(x[0] for x in r)
                mem = statistics.median(x[1] for x in r)
                ratio = cpu / max(statistics.median(x[0] for x in runs["ours"]), 1e-9)
                print(f"  {side:5s} {cpu:7.2f} s CPU ({ratio:5.2f}x ours)  "
                      f"{mem:7.0f} MB peak  {r[0][2]}")


if __name__ == "__main__":
    main()
