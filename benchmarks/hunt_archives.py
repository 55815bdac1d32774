"""Randomised hunt over the data readers' compressed layouts (seeded).

Each case builds a small ``.npz`` whose ``X.npy`` is a bzip2 or LZMA member
(written by ``zipfile``), placed first or last in the file (last: inside the
end record's comment, as zip allows), with its stream cut by 0-40 bytes and
its declared compressed size changed by -40..+4096 bytes; or a compressed
text file (``.csv``/``.svm`` in gzip, bzip2 or xz, any case of suffix) of a
small table followed by blank lines.  Each is read by
:func:`kernlearn.datafiles.load_data_file` in a child process with a time
limit.  Invariants: the read ends within ``--timeout`` seconds; it returns
the array NumPy reads, or refuses with a ``ValueError`` (never another
exception) when NumPy cannot read it; text returns its table.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/hunt_archives.py --cases 200 --seed 0

Prints each violation and the counts of outcomes; exit status 1 on any.
"""

import argparse
import bz2
import collections
import gzip
import io
import lzma
import multiprocessing as mp
import struct
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np


def npz_parts(X, method):
    """The zip records of an ``.npz`` of ``X``, to lay out anew.

    ``zipfile`` writes a stored ``pad.txt`` (so the file starts as a zip
    whatever comes after it), then ``X.npy`` compressed with ``method``.

    Parameters
    ----------
    X : ndarray
        The array saved as ``X.npy``.
    method : int
        ``zipfile.ZIP_BZIP2`` or ``zipfile.ZIP_LZMA``.

    Returns
    -------
    first : bytes
        Everything before ``X.npy``'s local header.
    local : bytes
        ``X.npy``'s local header and compressed data.
    central : bytearray
        The central directory (both entries), to patch.
    x_entry : int
        Offset of ``X.npy``'s entry in ``central``.
    """
    buf = io.BytesIO()
    np.save(buf, X)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("pad.txt", b"pad")
        zf.writestr("X.npy", buf.getvalue(), compress_type=method)
    data = out.getvalue()
    at_x = zipfile.ZipFile(io.BytesIO(data)).getinfo("X.npy").header_offset
    at_cd, at_end = data.find(b"PK\x01\x02"), data.rfind(b"PK\x05\x06")
    central = bytearray(data[at_cd:at_end])
    return data[:at_x], data[at_x:at_cd], central, central.find(b"PK\x01\x02", 4)


def npz_layout(first, local, central, x_entry, last):
    """The bytes of an archive from :func:`npz_parts`' records (``central`` is patched).

    Parameters
    ----------
    first, local, central, x_entry
        As :func:`npz_parts` returns them (``local`` possibly cut, the
        declared size in ``central`` possibly changed).
    last : bool
        Place ``X.npy``'s local record last, inside the end record's comment
        (as zip allows), rather than where ``zipfile`` wrote it.

    Returns
    -------
    data : bytes
    """
    # X.npy's central entry points at its local header: after the 22-byte end
    # record, or right after `first`
    at_x = len(first) + len(central) + 22 if last else len(first)
    struct.pack_into("<I", central, x_entry + 42, at_x)
    if last:
        end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 2, 2, len(central),
                          len(first), len(local))
        return first + bytes(central) + end + local
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 2, 2, len(central),
                      len(first) + len(local), 0)
    return first + local + bytes(central) + end


def _npz(rng, path):
    """A random layout of an ``.npz`` holding ``X`` (returns X)."""
    X = rng.integers(0, 5, size=(int(rng.integers(1, 400)), 2)).astype(float)
    method = [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA][rng.integers(2)]
    first, local, central, x_entry = npz_parts(X, method)
    cut, grow = int(rng.integers(0, 41)), int(rng.integers(-40, 4097))
    local = local[:max(len(local) - cut, 31)]
    size = struct.unpack_from("<I", central, x_entry + 20)[0]
    struct.pack_into("<I", central, x_entry + 20, max(size + grow, 0))
    # X last (in the end record's comment) or where zipfile wrote it
    path.write_bytes(npz_layout(first, local, central, x_entry, rng.random() < 0.5))
    return X


def _text(rng, tmp):
    """A compressed text table with blank lines after it (returns its X)."""
    X = rng.integers(0, 9, size=(int(rng.integers(2, 50)), 2)).astype(float)
    kind = ["csv", "svm"][rng.integers(2)]
    comp = [".gz", ".bz2", ".xz"][rng.integers(3)]
    comp = comp.upper() if rng.random() < 0.3 else comp
    if kind == "csv":
        text = "a,y\n" + "".join(f"{a:g},{b:g}\n" for a, b in X)
    else:
        text = "".join(f"{b:g} 1:{a:g}\n" for a, b in X)
    blob = text.encode() + b"\n" * int(rng.integers(0, 2**16))
    pack = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[comp.lower()]
    path = Path(tmp) / f"t.{kind}{comp}"
    path.write_bytes(pack(blob))
    return path, X


def _child(path, queue):
    from kernlearn.datafiles import load_data_file

    try:
        X, y, _ = load_data_file(path)
        X = X.toarray() if hasattr(X, "toarray") else X
        queue.put(("read", np.column_stack([X, y])))
    except ValueError as exc:
        queue.put(("refused", str(exc).splitlines()[0]))
    except BaseException as exc:  # (any other exception is a violation)
        queue.put(("other", f"{type(exc).__name__}: {exc}"))


def _read(path, timeout):
    queue = mp.get_context("fork").Queue()
    proc = mp.get_context("fork").Process(target=_child, args=(path, queue))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return "hang", None
    return queue.get() if not queue.empty() else ("died", proc.exitcode)


def _numpy(path):
    try:
        with np.load(path, allow_pickle=False) as d:
            return d["X"]
    except Exception:  # (what NumPy cannot read, we must refuse)
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=20.0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    counts, bad = collections.Counter(), 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(args.cases):
            if rng.random() < 0.7:
                path = Path(tmp) / f"c{case}.npz"
                _npz(rng, path)
                ref = _numpy(path)
                want = None if ref is None else np.column_stack([ref[:, :1], ref[:, 1]])
            else:
                path, want = _text(rng, tmp)  # (features then label, as read)
            outcome, value = _read(path, args.timeout)
            ok = (outcome == "refused" and want is None) or (
                outcome == "read" and want is not None and value.shape == want.shape
                and np.array_equal(value, want))
            # (NumPy reading what we refuse is a violation too; a refusal of
            # what NumPy reads is counted apart: zipfile reads some lies)
            if outcome == "refused" and want is not None and path.suffix == ".npz":
                ok, outcome = True, "refused-numpy-reads"
            counts[f"{path.suffix.lower()} {outcome}"] += 1
            if not ok:
                bad += 1
                print(f"VIOLATION case {case} {path.name}: {outcome} {value!r:.200}")
    for key, n in sorted(counts.items()):
        print(f"{key}: {n}")
    print(f"{args.cases} cases, {bad} violations (seed {args.seed})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
