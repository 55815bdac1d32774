"""The size an ``.npy`` header declares, checked before any array is allocated.

NumPy's reader allocates the array a header declares before it reads the data
(``numpy.fromfile`` for a file, ``numpy.ndarray(count)`` for an archive
member), so a few bytes declaring 10**12 elements are a ``MemoryError``
("Unable to allocate 7.28 TiB"), or a large allocation that then fails on
the missing data.  The data size a header declares is known exactly (the
product of the shape times the item size) and must equal the bytes stored
after the header; model files (:mod:`kernlearn.io`) and NumPy data files
(:mod:`kernlearn.datafiles`) both check it here first.
"""

import bz2
import contextlib
import lzma
import math
import os
import struct
import zipfile
import zlib

import numpy as np

from ._memory import format_bytes, physical_memory

__all__ = ["check_numpy_file", "declared_npy", "npz_member", "read_npz_checked", "too_large"]

# Deflate packs at most about 1032:1 (a 258-byte match in two bits), so an
# archive member cannot hold more than this many bytes per byte of archive; a
# larger declared size is a lie.  bzip2 and LZMA members, which ``zipfile``
# and NumPy read too, pack zeros far tighter: they are not bounded so.
_DEFLATE_RATIO = 1100
_BOUNDED = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
_MIN_CAP = 256 * 2**20


def declared_npy(fh, stored, name, exact=True):
    """``(nbytes, header_len)`` of the ``.npy`` stream ``fh``, its size checked.

    Reads only the magic string and the header of ``fh`` (left positioned at
    the start of the data).

    Parameters
    ----------
    fh : file object
        Positioned at the start of the ``.npy`` data (a file or an archive
        member).
    stored : int
        Bytes the file or member holds (header and data).
    name : str
        The file or member, for the messages.
    exact : bool, default=True
        Whether the data must fill what is stored exactly (a model file's
        member); else more stored bytes are allowed: NumPy reads the first
        array of a file that ``numpy.save`` wrote several arrays into.

    Returns
    -------
    nbytes : int
        Bytes of array data the header declares (what is stored, or at most
        that when not ``exact``).
    header_len : int
        Bytes of the magic string and header.

    Raises
    ------
    ValueError
        An unknown ``.npy`` version, a malformed header, Python objects, or a
        declared size other than the data stored.
    """
    read_header = {
        (1, 0): np.lib.format.read_array_header_1_0,
        (2, 0): np.lib.format.read_array_header_2_0,
        # version 3 is version 2 with a UTF-8 header (NumPy writes it for
        # field names Latin-1 cannot spell); read as Latin-1, only such names
        # differ, not the shape nor the item size
        (3, 0): np.lib.format.read_array_header_2_0,
    }.get(np.lib.format.read_magic(fh))
    if read_header is None:
        raise ValueError(f"{name}: unsupported .npy version")
    shape, _, dtype = read_header(fh, max_header_size=10000)
    header_len = fh.tell()
    if dtype.hasobject:
        raise ValueError(f"{name} holds Python objects (pickle)")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes + header_len > stored or (exact and nbytes + header_len != stored):
        raise ValueError(
            f"{name} declares {nbytes} bytes of data but holds "
            f"{max(stored - header_len, 0)}"
        )
    return nbytes, header_len


def too_large(declared, file_size, per_byte=_DEFLATE_RATIO, floor=None):
    """The cap ``declared`` bytes exceed for a file of ``file_size`` bytes, or None.

    Parameters
    ----------
    declared : int
        Bytes the arrays of an archive declare, in total.
    file_size : int
        Bytes of the archive.
    per_byte : int, optional
        Bytes an archive byte may hold (default: the most deflate packs).
    floor : int, optional
        Bytes any archive may declare (default ``_MIN_CAP``, 256 MB, read at
        the call: model files and data files share it).

    Returns
    -------
    cap : int or None
    """
    cap = max(_MIN_CAP if floor is None else floor, per_byte * file_size)
    return cap if declared > cap else None


def check_numpy_file(source, npz):
    """Refuse a NumPy data file whose headers declare more data than it holds.

    The ``.npy`` header of the file, or those of an ``.npz``'s ``X`` and
    ``y``, are read and checked (:func:`declared_npy`, and the total against
    :func:`too_large`) before NumPy allocates anything.  bzip2 and LZMA
    members (a user's ``zipfile`` writes them; NumPy reads them) pack zeros
    without a ratio bound: their headers are read from a bounded stream
    (:class:`_Unpacked`), and over the cap their real unpacked sizes are
    counted, never held, and must be what they declare.

    Parameters
    ----------
    source : path-like or binary file object
        The file (a file object is read from its start and rewound).
    npz : bool
        Whether it is an ``.npz`` archive (else a ``.npy`` file).

    Raises
    ------
    ValueError
        A malformed or lying header (the message names it).
    """
    opened = isinstance(source, (str, os.PathLike))
    with open(source, "rb") if opened else contextlib.nullcontext(source) as fh:
        size = fh.seek(0, os.SEEK_END)
        fh.seek(0)
        if not npz:
            declared_npy(fh, size, "the .npy header", exact=False)
        else:
            with zipfile.ZipFile(fh) as zf:
                members = [i for i in map(lambda k: _member_info(zf, k), ("X", "y")) if i]
                for info in members:
                    with _open_member(zf, info) as member:
                        declared_npy(member, info.file_size, info.filename, exact=False)
                total = sum(i.file_size for i in members)
                # (the module's constants read now: a test lowers the floor)
                cap = too_large(total, size, _DEFLATE_RATIO, _MIN_CAP)
                if cap is not None:
                    _check_over_cap(zf, members, total, cap, size)
        fh.seek(0)


def _check_over_cap(zf, members, total, cap, size):
    """Refuse ``members`` declaring ``total`` bytes over the ``cap`` of a
    ``size``-byte archive unless they are bzip2 or LZMA members (no ratio
    bounds them) that truly unpack to what they declare, within memory."""
    over = f"its arrays declare {total} bytes, more than the {cap} bytes a file of " \
           f"{size} bytes can hold"
    if all(i.compress_type in _BOUNDED for i in members):
        raise ValueError(over)
    memory = physical_memory()
    if memory is not None and total > memory:  # (refused before any count)
        raise ValueError(f"its arrays declare {format_bytes(total)}, more than this "
                         f"machine's memory ({format_bytes(memory)})")
    # (counted in blocks, none kept; a member holding other than it declares
    # is the lie, found before the reader allocates what it declares)
    for info in members:
        if info.compress_type not in _BOUNDED and _inflated_size(zf, info) != info.file_size:
            raise ValueError(f"{over}, and {info.filename} does not unpack to the "
                             f"{info.file_size} bytes it declares")


def npz_member(npz, key):
    """Array ``key`` of the open ``numpy.load`` archive ``npz``, a bzip2 or
    LZMA member read from a bounded stream (``zipfile`` unpacks such a
    member's whole remaining data in one read, whatever its declared size).

    Parameters
    ----------
    npz : numpy.lib.npyio.NpzFile
        Checked by :func:`check_numpy_file` first.
    key : str
        The array's name (``"X"``).

    Returns
    -------
    array : numpy.ndarray
    """
    info = _member_info(npz.zip, key)
    if info is None or info.compress_type in _BOUNDED:
        return npz[key]
    with _open_member(npz.zip, info) as fh:
        return np.lib.format.read_array(fh, allow_pickle=False)


def _member_info(zf, key):
    """The member ``numpy.load`` reads as array ``key`` (``key`` itself, else
    ``key + ".npy"``), or None."""
    names = set(zf.namelist())
    name = key if key in names else key + ".npy"
    return zf.getinfo(name) if name in names else None


def _open_member(zf, info):
    """A read-only stream of member ``info``: ``zipfile``'s for stored and
    deflated members (it inflates in bounded blocks), else :class:`_Unpacked`."""
    return zf.open(info) if info.compress_type in _BOUNDED else _Unpacked(zf, info)


def read_npz_checked(zf, size, per_byte):
    """Arrays of an open ``.npz`` archive (a model file), their sizes checked first.

    Each member's ``.npy`` header (dtype, shape) is read before its data; the
    sizes they declare must agree with the archive's and stay under the cap
    (:func:`too_large` at ``per_byte`` bytes per byte of the ``size``-byte
    archive), so a small file cannot make the reader allocate gigabytes.  Over
    that cap the members' real inflated sizes are counted first: a genuine
    model of mostly zeros packs up to ~1000:1, and deflate's ratio bounds the
    count by the file.  Members must be stored or deflated (as NumPy writes
    them): zipfile inflates a bzip2 or LZMA read whole, so a 1 kB member
    opened for its header alone became a gigabyte in memory.

    Parameters
    ----------
    zf : zipfile.ZipFile
        The open archive.
    size : int
        Bytes of the archive file.
    per_byte : int
        Bytes of arrays an archive byte may declare without a count.

    Returns
    -------
    arrays : dict
        ``{member name without ".npy": array}``.

    Raises
    ------
    ValueError
        A member that is not ``.npy``, a malformed or lying header, or arrays
        over the cap that are not shown to be genuine (the message names it).
    """
    total = 0
    headers = {}
    for info in zf.infolist():
        if not info.filename.endswith(".npy"):
            raise ValueError(f"unexpected member {info.filename!r}")
        if info.compress_type not in _BOUNDED:
            raise ValueError(f"member {info.filename!r} is compressed by method "
                             f"{info.compress_type}, not stored or deflated")
        with zf.open(info) as fh:
            total += declared_npy(fh, info.file_size, info.filename)[0]
        headers[info.filename[:-4]] = info
    cap = too_large(total, size, per_byte)
    if cap is not None:
        over = f"the arrays declare {total} bytes, more than the {cap} bytes a model " \
               "file of this size may hold"
        if too_large(total, size, _DEFLATE_RATIO) is not None:  # (more than deflate packs)
            raise ValueError(f"{over} (more than deflate packs into {size} bytes)")
        # (counted, never held, before any array is allocated; a member that
        # holds less than it declares is the lie refused)
        short = next((i for i in headers.values() if _inflated_size(zf, i) != i.file_size),
                     None)
        if short is not None:
            raise ValueError(f"{over} ({short.filename} holds fewer than it declares)")
    arrays = {}
    for name, info in headers.items():
        with zf.open(info) as fh:
            arrays[name] = np.lib.format.read_array(fh, allow_pickle=False)
    return arrays


def _inflated_size(zf, info, chunk=2**20):
    """Bytes the archive member ``info`` really inflates to (read in chunks of
    ``chunk`` bytes, none kept; at most one past its declared size), or -1 when
    its stream is broken."""
    n = 0
    try:
        with _open_member(zf, info) as fh:
            while n <= info.file_size:
                block = fh.read(chunk)
                if not block:
                    break
                n += len(block)
    except (EOFError, zipfile.BadZipFile, zlib.error, OSError, ValueError):
        return -1
    return n


class _Unpacked:
    """A bzip2 or LZMA archive member, unpacked at most the bytes each read asks.

    ``zipfile`` hands such a decompressor its whole input with no output
    bound, so a 616-byte member unpacking to 1 GB of zeros was held whole by
    a read of its 128-byte header.  Here the raw bytes after the member's
    local header are fed ``_CHUNK`` at a time to a decompressor given a
    ``max_length``, and the stream stops at the size the member declares:
    more data behind it is refused (a bomb behind a small declared size), as
    is a stream that ends early or fails its CRC.

    Parameters
    ----------
    zf : zipfile.ZipFile
        The open archive (its file is read at its own positions).
    info : zipfile.ZipInfo
        A bzip2 or LZMA member, not encrypted.
    """

    _CHUNK = 2**16

    def __init__(self, zf, info):
        if info.flag_bits & 0x1:
            raise ValueError(f"{info.filename} is encrypted")
        # (zipfile's own checks of the local header, which NumPy's read makes:
        # the name it repeats, features it cannot read; opening reads no data)
        try:
            zf.open(info).close()
        except NotImplementedError as exc:
            raise ValueError(f"{info.filename}: {exc}") from exc
        self._fp, self._name, self._left = zf.fp, info.filename, info.file_size
        self._fp.seek(info.header_offset)
        head = self._fp.read(30)
        if len(head) != 30 or head[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"{info.filename}: bad local file header")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        self._pos = info.header_offset + 30 + name_len + extra_len
        self._raw_left, self._crc, self._expected_crc = info.compress_size, 0, info.CRC
        self._told = 0
        if info.compress_type == zipfile.ZIP_BZIP2:
            self._dec = bz2.BZ2Decompressor()
        elif info.compress_type == zipfile.ZIP_LZMA:
            # (zip's LZMA: 2 version bytes, the properties' length, then the
            # LZMA1 properties: one byte (pb*5 + lp)*9 + lc and the dictionary size)
            start = self._raw(4)
            props = self._raw(struct.unpack("<H", start[2:4])[0]) if len(start) == 4 else b""
            if len(props) < 5:
                raise zipfile.BadZipFile(f"{info.filename}: bad LZMA header")
            pb_lp, lc = divmod(props[0], 9)
            pb, lp = divmod(pb_lp, 5)
            self._dec = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[{
                "id": lzma.FILTER_LZMA1, "lc": lc, "lp": lp, "pb": pb,
                "dict_size": struct.unpack("<I", props[1:5])[0]}])
        else:
            raise ValueError(f"{info.filename}: unsupported compression method "
                             f"{info.compress_type}")

    def _raw(self, n):
        self._fp.seek(self._pos)
        data = self._fp.read(min(n, self._raw_left))
        self._pos += len(data)
        # (the file ends before the member's declared compressed size: its bytes
        # end here, else an empty read was fed forever (a hang); what was read
        # is then checked as any stream's end, its size and CRC)
        self._raw_left = self._raw_left - len(data) if data or n <= 0 else 0
        return data

    def _ended(self):
        # (the end marker read, or all the member's bytes fed and unpacked: a
        # stream without an end marker, as 7-Zip writes LZMA, ends so; zipfile
        # and NumPy read it, its size and CRC checked as any other's)
        return self._dec.eof or (self._raw_left == 0 and self._dec.needs_input)

    def _unpack(self, n):
        """At most ``n`` more bytes of the stream (fewer only at its end)."""
        if self._ended():
            return b""
        return self._dec.decompress(self._raw(self._CHUNK) if self._dec.needs_input
                                    else b"", n)

    def read(self, n=-1):
        """Up to ``n`` bytes (all that is left when ``n`` < 0) of the member."""
        want = self._left if n is None or n < 0 else min(n, self._left)
        parts = []
        while want > 0:
            block = self._unpack(want)
            if not block and self._ended():
                raise EOFError(f"{self._name}: compressed data ends early")
            parts.append(block)
            want -= len(block)
        data = b"".join(parts)
        self._left -= len(data)
        self._told += len(data)
        self._crc = zlib.crc32(data, self._crc)
        if self._left == 0:
            self._finish()
        return data

    def _finish(self):
        # (the declared size read: the stream must end here, its CRC right)
        while not self._ended():
            if self._unpack(1):
                raise ValueError(f"{self._name} unpacks to more than the bytes it "
                                 "declares")
        if self._crc != self._expected_crc:
            raise zipfile.BadZipFile(f"Bad CRC-32 for file {self._name!r}")

    def tell(self):
        return self._told

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
