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

Plain files and uncompressed pipes are read as before: their text is what
they hold.
"""

import bz2
import gzip
import lzma
import shutil
import tempfile
from pathlib import Path

from ._memory import available_memory, format_bytes

#: Opener of each compression suffix (lower case).
OPENERS = {".bz2": bz2.open, ".gz": gzip.open, ".xz": lzma.open}
_UNPACKERS = {".bz2": "bunzip2", ".gz": "gunzip", ".xz": "unxz"}
#: Text any compressed file may hold beyond its values (blank lines, comments).
_TEXT_FLOOR = 64 * 2**20
#: Bytes of text per value allowed past the floor.
_TEXT_PER_VALUE = 128
#: What a reading builds, in bytes per byte of text held, per value and per
#: line: a CSV holds its text (the bytes, the decoded string and pandas'
#: buffers) and builds a frame, its float64 copy and masks; the LIBSVM
#: reader streams its text into float64 values with int32 indices (arrays
#: grown by half again: up to 1.5 times that) and a label and row pointer a
#: line; predicting streams, keeping a label and a prediction a line; out of
#: core, the chunk cache on disk takes a value and an index per pair and a
#: row pointer a line (the labels stay in memory).
COSTS = {"csv": (3, 24, 16), "libsvm": (1, 18, 24), "stream": (0, 0, 16),
         "chunks": (0, 12, 16)}
_SEPARATORS = (b",", b";", b"\t", b"|")


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


class TextBound:
    """The text of a compressed data file counted as it is read, and refused
    past the bounds (see the module's notes).

    Parameters
    ----------
    path : path-like
        The file (or pipe); a plain one is not bounded.
    kind : {"csv", "libsvm", "stream", "chunks"}
        What the reading builds (:data:`COSTS`).
    budget : int, optional
        Bytes the reading may take (``max_table_size``, parsed); default
        :func:`default_budget`, taken when the first block arrives.
    sep : str, optional
        A CSV file's separator, when given (else any of ``, ; tab |`` counts).
    """

    def __init__(self, path, kind, budget=None, sep=None):
        self.path, self.kind, self.budget = Path(path), kind, budget
        self.active = self.path.suffix.lower() in OPENERS
        if kind != "csv":
            self._marks = (b":",)
        else:
            self._marks = _SEPARATORS if sep is None else (sep.encode(),)
        self.text = self.marks = self.lines = 0

    @property
    def values(self):
        """Values counted so far: a line holds one more than its marks."""
        return self.marks + self.lines

    def need(self):
        """Bytes the reading needs for the text counted so far.

        Returns
        -------
        n_bytes : int
        """
        per_text, per_value, per_line = COSTS[self.kind]
        return per_text * self.text + per_value * self.values + per_line * self.lines

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
        self.marks += sum(block.count(m) for m in self._marks)
        self.text, self.lines = self.text + len(block), self.lines + block.count(b"\n")
        if self.budget is None:
            self.budget = default_budget(self.kind) or False
        name, unpack = self.path.name, _UNPACKERS[self.path.suffix.lower()]
        # (the marks alone: a blank line is a line, but no value)
        if self.text > _TEXT_FLOOR + _TEXT_PER_VALUE * self.marks:
            raise ValueError(
                f"{self.path}: {format_bytes(self.text)} of its text hold only "
                f"{self.marks} values (more than {_TEXT_PER_VALUE} bytes of text a value "
                f"past {format_bytes(_TEXT_FLOOR)}: blank lines or comments): a "
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
