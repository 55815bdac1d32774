"""Compressed text data files (``.bz2``, ``.gz``, ``.xz``): their openers and
the bound on what reading them builds.

Text has no declared size to check before it is read, as an ``.npy`` header
has (:mod:`kernlearn.utils._npy_header`): a 349-byte ``.csv.bz2`` of 400 MB
of blank lines took 39 s CPU and 2.5 GB to read as "no data rows", and a
1 MB ``.csv.gz`` of 250 MB of zero rows 23 s and 3.6 GB (gzip packs up to
1032:1, bzip2 and xz far more).  The last pass held the text to 100 bytes per
byte of file past 64 MB; but a genuine table of mostly zeros packs further
(a document-term matrix of counts, 0.5 % non-zero, as a dense CSV 114:1 by
gzip -6; a9a's CSV ten times over 313:1 by xz -6), and a ratio cannot tell
it from a bomb.  What hurts is what the reading builds, and the time spent
on text that builds nothing.  :class:`TextBound` counts the text as it
streams in, with its values (the separators of a CSV line, the ``index:value``
pairs of a LIBSVM line, and one per line) and lines, and refuses, at the
first block past either bound, before the big allocation:

* the memory the reading needs (:data:`COSTS`, bytes per byte of text held,
  per value and per line: 1.1-1.5 times the peak measured on CSV and LIBSVM
  tables of 57-250 MB, ``benchmarks/packed_tables.py``) over
  a budget: ``max_table_size``, by default half the memory available when
  reading starts (out of core, half the free disk space of the chunk cache,
  where the parsed table goes);
* text that builds (almost) no values: past 64 MB (:data:`_TEXT_FLOOR`), more
  than 128 bytes of text per value (:data:`_TEXT_PER_VALUE`; real tables
  write 2-30: a LIBSVM pair ``123456:0.123456789012345 `` is 25 bytes), as
  blank lines and comments: its time to read is not bounded by the budget.

* read as it streams (predicting ``--out-of-core``, the chunk cache), the
  text builds nothing the budget holds, and a bomb was parsed without end (a
  41 kB ``.svm.xz`` of 256 MiB took 17 s CPU, 67 s a GB: 2 MB of it hours):
  past what reading it in memory would take within the budget, it is held to
  :data:`_TEXT_RATIO` (1032) bytes of text per byte of file, the most gzip
  packs: a bomb's time is bounded as a reading in memory is, and a genuine
  file larger than the memory reads whole unless it packs tighter than gzip
  ever does.

Plain files and uncompressed pipes are read as before: their text is what
they hold.
"""

import bz2
import contextlib
import gzip
import lzma
import re
import shutil
import tempfile
from pathlib import Path

from ._memory import available_memory, format_bytes, parse_bytes

#: Opener of each compression suffix (lower case).
OPENERS = {".bz2": bz2.open, ".gz": gzip.open, ".xz": lzma.open}
_UNPACKERS = {".bz2": "bunzip2", ".gz": "gunzip", ".xz": "unxz"}
#: Text any compressed file may hold beyond its values (blank lines, comments).
_TEXT_FLOOR = 64 * 2**20
#: Bytes of text per value allowed past the floor.
_TEXT_PER_VALUE = 128
#: Bytes of text per byte of file a streaming reading may take past what a
#: reading in memory would (deflate's limit: a gzip file never packs more).
_TEXT_RATIO = 1032
#: What a reading builds, in bytes per byte of text held, per value and per
#: line: a CSV holds its text (the bytes, the decoded string, the 4 bytes a
#: character of ``io.StringIO`` and the string cells: 9 a byte measured on
#: quoted text; see :data:`_WIDE_TEXT` and :data:`_PER_COLUMN`) and builds a
#: frame, its float64 copy and masks; the LIBSVM
#: reader streams its text into float64 values with int32 indices (arrays
#: grown by half again: up to 1.5 times that) and a label and row pointer a
#: line; predicting streams, keeping a label and a prediction a line; out of
#: core, the chunk cache on disk takes a value and an index per pair and a
#: row pointer a line (the labels stay in memory).
COSTS = {"csv": (9, 24, 16), "libsvm": (1, 18, 24), "stream": (0, 0, 16),
         "chunks": (0, 12, 16)}
#: More per byte of CSV text once a character is not ASCII: Python's strings
#: then take 2 or 4 bytes a character (one emoji makes a string UCS-4: 14
#: bytes a byte of text measured, against 8 in ASCII).
_WIDE_TEXT = 6
#: Bytes per column of a CSV table (pandas keeps an array, a block and a
#: name a column: 2.9 KiB measured on 100,000-400,000 columns of 2 rows,
#: whose 24 bytes a cell had counted 50 times less than the 1.2 GB peak).
_PER_COLUMN = 4096
#: Memory kept a line by the readers that stream (its label, a prediction).
_PER_LINE_HELD = 16
_SEPARATORS = (b",", b";", b"\t", b"|")
_SPACE = b" \t\r\n\x0b\x0c"


def default_budget(kind):
    """The default ``max_table_size`` of a reading of ``kind`` (see :data:`COSTS`).

    Parameters
    ----------
    kind : {"csv", "libsvm", "stream", "chunks"}
        What the reading builds.

    Returns
    -------
    budget : int or None
        Half the memory available now (the model's fit needs the rest), or
        for ``"chunks"`` half the free disk space of the temporary folder
        (the chunk cache's); None when unknown (then only the text is bounded).
    """
    if kind == "chunks":
        return shutil.disk_usage(tempfile.gettempdir()).free // 2
    avail = available_memory()
    return None if avail is None else avail // 2


class _Counted:
    """A binary stream whose bytes read are counted (``count``)."""

    def __init__(self, fh):
        self.fh, self.count = fh, 0

    def read(self, size=-1):
        data = self.fh.read(size)
        self.count += len(data)
        return data


class TextBound:
    """The text of a compressed data file counted as it is read, and refused
    past the bounds (see the module's notes).

    Parameters
    ----------
    path : path-like
        The file (or pipe); a plain one is not bounded.
    kind : {"csv", "libsvm", "stream", "chunks"}
        What the reading builds (:data:`COSTS`).
    budget : int or str, optional
        Bytes the reading may take (``max_table_size``: ``"8GB"``); default
        :func:`default_budget`, taken when the first block arrives.
    sep : str, optional
        A CSV file's separator, when given (else any of ``, ; tab |`` counts).
    """

    def __init__(self, path, kind, budget=None, sep=None):
        if budget is not None:  # ("8GB": iter_libsvm's was compared as a string)
            budget = parse_bytes(budget)
        self.path, self.kind, self.budget = Path(path), kind, budget
        self.active = self.path.suffix.lower() in OPENERS
        if kind != "csv":
            self._marks = (b":",)
        else:
            self._marks = _SEPARATORS if sep is None else (sep.encode(),)
        marks = re.escape(b"".join(self._marks))
        self._opens = re.compile(rb'(?:^|[' + marks + rb']) *"')
        self._closes = re.compile(rb'" *(?:[' + marks + rb']|\r?$)')
        self.text = self.marks = self.lines = self.filled = 0
        # a CSV's columns: the separators of its first record, quotes closed
        self._head, self._quotes, self.width, self.ascii = 0, 0, None, True
        self._started, self._packed, self._memory = False, lambda: None, None

    @contextlib.contextmanager
    def open(self):
        """Open the file, decompressed by its suffix, its packed bytes counted.

        Yields
        ------
        stream : binary file
            The text.
        """
        opener = OPENERS.get(self.path.suffix.lower())
        if opener is None or self.path.is_file():
            size = self.path.stat().st_size if opener is not None else None
            self._packed = lambda: size
            with (opener or open)(self.path, "rb") as fh:
                yield fh
            return
        # (a pipe declares no size: its compressed bytes are counted as read)
        with open(self.path, "rb") as raw:
            counted = _Counted(raw)
            self._packed = lambda: counted.count
            with opener(counted, "rb") as fh:
                yield fh

    @property
    def values(self):
        """Values counted so far: a line holds one more than its marks."""
        return self.marks + self.lines

    def need(self, kind=None):
        """Bytes the reading needs for the text counted so far.

        Parameters
        ----------
        kind : str, optional
            Count as a reading of this kind (:data:`COSTS`); default its own.

        Returns
        -------
        n_bytes : int
        """
        kind = kind or self.kind
        per_text, per_value, per_line = COSTS[kind]
        need = per_text * self.text + per_value * self.values + per_line * self.lines
        if kind == "csv":
            width = self.width or self._head + 1
            need += (not self.ascii) * _WIDE_TEXT * self.text + _PER_COLUMN * width
        return need

    def _first_record(self, block):
        """Count the separators of the first record (its columns), as it arrives."""
        if not self._started:
            block = block.lstrip()  # (pandas skips blank lines before it)
            self._started = bool(block)
        pos = 0
        while block:
            nl = block.find(b"\n", pos)
            part = block[pos:] if nl < 0 else block[pos:nl]
            self._head += sum(part.count(m) for m in self._marks)
            # (a quote opens a field at its start and closes it before a
            # separator or the line's end; one inside a field is a character:
            # 'height_in"' counted as open had made the whole file one record)
            self._quotes += (len(self._opens.findall(part))
                             - len(self._closes.findall(part)))
            if nl < 0:
                return
            if self._quotes <= 0:  # (a line break in quotes is in the record)
                self.width = self._head + 1
                return
            pos = nl + 1

    def count(self, block):
        """Count ``block`` (the next text read) and refuse past a bound.

        Parameters
        ----------
        block : bytes
            Text just read.

        Raises
        ------
        ValueError
            The reading would need more than the budget, or the text holds
            (almost) no values: a message naming the file and the remedy.
        """
        if not self.active or not block:
            return
        if self.kind == "csv":
            if self.width is None:
                self._first_record(block)
            self.ascii = self.ascii and block.isascii()
        self.marks += sum(block.count(m) for m in self._marks)
        lines = block.count(b"\n")
        if self.kind == "csv":
            # a CSV line with no separator is one value when it is not blank (a
            # one-column table, e.g. predicting with one feature, was refused as
            # "blank lines" past 64 MiB): at most one a byte that is not space
            self.filled += min(lines + 1, len(block.translate(None, _SPACE)))
        self.text, self.lines = self.text + len(block), self.lines + lines
        if self.budget is None:
            self.budget = default_budget(self.kind) or False
        name, unpack = self.path.name, _UNPACKERS[self.path.suffix.lower()]
        # (the marks alone, and a CSV's filled lines: a blank line is a line,
        # but no value; a LIBSVM comment is no value either)
        if self.text > _TEXT_FLOOR + _TEXT_PER_VALUE * (self.marks + self.filled):
            raise ValueError(
                f"{self.path}: {format_bytes(self.text)} of its text hold only "
                f"{self.marks + self.filled} values (more than {_TEXT_PER_VALUE} bytes of "
                f"text a value past {format_bytes(_TEXT_FLOOR)}: blank lines or comments): a "
                "decompression bomb, not a data table; if it is genuine, decompress it "
                f"first (e.g. {unpack} -k {name}) and read the plain file.")
        need = self.need()
        if self.budget and need > self.budget:
            where = {"chunks": "disk space for its chunk cache",
                     "stream": "memory"}.get(self.kind, "memory")
            raise ValueError(
                f"{self.path}: reading it would take more than {format_bytes(need)} of "
                f"{where} ({format_bytes(self.text)} of text so far, {self.values} values "
                f"in {self.lines} lines), over the budget of {format_bytes(self.budget)} "
                "(max_table_size; by default half the "
                + ("free disk space" if self.kind == "chunks" else "available memory")
                + "): a decompression bomb, or a table larger than the budget; if it is "
                "genuine and fits, raise the budget (--max-table-size SIZE on the "
                "command line)"
                + (", or read it out of core (--out-of-core)" if self.kind == "libsvm"
                   else "") + ".")
        if self.kind in ("stream", "chunks"):
            self._check_streamed(name, unpack)

    def _check_streamed(self, name, unpack):
        """The bounds of a reading that holds no table: the lines it keeps in
        memory, and its time past what a reading in memory would take."""
        memory = self.budget if self.kind == "stream" else None
        if not memory:
            if self._memory is None:
                self._memory = default_budget("libsvm") or False
            memory = self._memory
        if not memory:
            return
        held = _PER_LINE_HELD * self.lines
        if self.kind == "chunks" and held > memory:
            raise ValueError(
                f"{self.path}: its {self.lines} lines so far would keep "
                f"{format_bytes(held)} of labels in memory, over half the available "
                f"memory ({format_bytes(memory)}): a decompression bomb, or a table "
                "of more rows than this machine holds labels for.")
        packed = self._packed()
        if (packed is not None and self.need("libsvm") > memory
                and self.text > _TEXT_FLOOR + _TEXT_RATIO * packed):
            raise ValueError(
                f"{self.path}: {format_bytes(self.text)} of text from "
                f"{format_bytes(packed)} of file, more than {_TEXT_RATIO} times (the most "
                "gzip packs) and more than reading it in memory would take within "
                f"{format_bytes(memory)}: a decompression bomb (read as it streams, no "
                "memory bound stops it); if it is genuine, decompress it first "
                f"(e.g. {unpack} -k {name}) and read the plain file.")
