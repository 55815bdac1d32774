"""Compressed text data files (``.bz2``, ``.gz``, ``.xz``): their openers and
the bound on what they unpack to.

Text has no declared size to check before it is read, as an ``.npy`` header
has (:mod:`kernlearn.utils._npy_header`): a 349-byte ``.csv.bz2`` of 400 MB
of blank lines took 39 s CPU and 2.5 GB to read as "no data rows", and ten
times more was past the machine's memory.  The text read is counted against
a cap of its own (:func:`check_unpacked`).  The archives' cap
(:func:`~kernlearn.utils._npy_header.too_large`: 256 MB, beyond it 1100
bytes per byte of file, the most deflate packs) never stopped gzip (1032:1
at most): a 1 MB ``.csv.gz`` of 250 MB of zero rows read (23 s CPU, 3.6 GB)
and one of 4 MB would have filled 24 GB.  Dense tables pack 2-60:1 (the 70
compressed tables of the breadth suite and the data sets; a9a as a dense 0/1
CSV 30:1 by gzip, 54:1 by bzip2); wide tables of mostly zeros and repeated
rows pack more (a document-term matrix of counts, 0.5 % non-zero, as a dense
CSV 114:1 by gzip -6; a9a's CSV ten times over 313:1 by xz -6), and past the
floor they are refused, with the remedy: text is read up to ``_TEXT_FLOOR`` (64 MB:
0.9 GB and 5 s to read as a table), beyond it up to ``_TEXT_RATIO`` (100)
times the file's bytes, the ratio Apache POI's zip-bomb check allows.
"""

import bz2
import contextlib
import gzip
import lzma
from pathlib import Path

from . import _npy_header
from ._memory import format_bytes

#: Opener of each compression suffix (lower case).
OPENERS = {".bz2": bz2.open, ".gz": gzip.open, ".xz": lzma.open}
_UNPACKERS = {".bz2": "bunzip2", ".gz": "gunzip", ".xz": "unxz"}
#: Bytes of text any compressed file may unpack to, and per byte of file beyond.
_TEXT_FLOOR = 64 * 2**20
_TEXT_RATIO = 100


def packed_size(path):
    """Bytes of ``path`` when it is a compressed regular file, else None.

    Parameters
    ----------
    path : path-like
        A data file.

    Returns
    -------
    size : int or None
        None for a plain file or a pipe (their text is what they hold).
    """
    path = Path(path)
    if path.suffix.lower() not in OPENERS or not path.is_file():
        return None
    return path.stat().st_size


class _Counted:
    """A binary stream whose bytes read are counted (``count``)."""

    def __init__(self, fh):
        self.fh, self.count = fh, 0

    def read(self, size=-1):
        data = self.fh.read(size)
        self.count += len(data)
        return data


@contextlib.contextmanager
def open_packed(path):
    """Open ``path`` (decompressed by its suffix) with its packed bytes, for
    :func:`check_unpacked`.

    A pipe has no size: a named pipe called ``x.csv.gz`` was unpacked without
    bound; its compressed bytes are counted as they are read instead (the
    text so far is held to 100 times the bytes so far).

    Parameters
    ----------
    path : path-like
        A data file, or a pipe.

    Yields
    ------
    stream : binary file
        The text.
    packed : callable
        The bytes of the file, or read so far from a pipe; None if plain.
    """
    path = Path(path)
    opener = OPENERS.get(path.suffix.lower())
    if opener is None or path.is_file():
        size = packed_size(path)
        with (opener or open)(path, "rb") as fh:
            yield fh, lambda: size
        return
    with open(path, "rb") as raw:
        counted = _Counted(raw)
        with opener(counted, "rb") as fh:
            yield fh, lambda: counted.count


def check_unpacked(path, unpacked, packed):
    """Refuse compressed text of ``packed`` bytes unpacking to ``unpacked``
    bytes past the cap, naming the remedy (decompress it first).

    Parameters
    ----------
    path : path-like
        The compressed file.
    unpacked : int
        Bytes of text read so far.
    packed : int or None
        Bytes of the file (:func:`packed_size`); None: not bounded.

    Raises
    ------
    ValueError
        Over the cap.
    """
    if packed is None or _npy_header.too_large(unpacked, packed, _TEXT_RATIO,
                                               _TEXT_FLOOR) is None:
        return
    path = Path(path)
    raise ValueError(
        f"{path} unpacks to more than {format_bytes(unpacked)} of text, over "
        # (not "real tables pack 2-25:1": a9a's 0/1 CSV packs 54:1 by bzip2, a
        # document-term matrix of counts, 0.5 % non-zero, 114:1 by gzip -6)
        f"{_TEXT_RATIO} times its {packed} bytes (dense tables pack 2-60:1, wide ones of "
        "mostly zeros more): a decompression bomb, or text more repetitive than most "
        "data tables; if it is genuine, decompress it "
        f"first (e.g. {_UNPACKERS[path.suffix.lower()]} -k {path.name}) and read the "
        "plain file.")
