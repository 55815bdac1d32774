"""Compressed text data files (``.bz2``, ``.gz``, ``.xz``): their openers and
the bound on what they unpack to.

Text has no declared size to check before it is read, as an ``.npy`` header
has (:mod:`kernlearn.utils._npy_header`): a 349-byte ``.csv.bz2`` of 400 MB
of blank lines took 39 s CPU and 2.5 GB to read as "no data rows", and ten
times more was past the machine's memory.  The text read is counted against
the same cap as archive members (:func:`~kernlearn.utils._npy_header.too_large`:
the 256 MB floor, beyond it the most deflate packs per byte of file); gzip
never reaches it, real tables pack 5-25:1.
"""

import bz2
import gzip
import lzma
from pathlib import Path

from . import _npy_header
from ._memory import format_bytes

#: Opener of each compression suffix (lower case).
OPENERS = {".bz2": bz2.open, ".gz": gzip.open, ".xz": lzma.open}
_UNPACKERS = {".bz2": "bunzip2", ".gz": "gunzip", ".xz": "unxz"}


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
    if packed is None or _npy_header.too_large(unpacked, packed) is None:
        return
    path = Path(path)
    raise ValueError(
        f"{path} unpacks to more than {format_bytes(unpacked)} of text, over "
        f"{_npy_header._DEFLATE_RATIO} times its {packed} bytes: a decompression bomb, "
        "or text far more repetitive than a data table; if it is genuine, decompress it "
        f"first (e.g. {_UNPACKERS[path.suffix.lower()]} -k {path.name}) and read the "
        "plain file.")
