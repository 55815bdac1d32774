"""Data files as the command line reads them: CSV (through pandas), LIBSVM, NumPy.

:func:`load_data_file` turns a path or a data set name into ``X, y, info``.
CSV tables are read by pandas: the first line is a header unless told
otherwise, columns are matched to a model *by name*, missing values (empty,
``?``, ``NA``...) are refused with their row, the separator is sniffed and
labels keep their type.  LIBSVM files are parsed in blocks, so the text of a
large file is never held whole, and the width is checked against the data
before anything allocates by it.  Every reader reads a bounded first block
and refuses binary data (NUL bytes) there, so ``/dev/zero`` is an error, not
an endless read.
"""

import collections
import csv
import functools
import io
import lzma
import os
import re
import zipfile
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._columns import column_choice, column_name as _name, column_position as _label_position
from ._csv_labels import class_spellings, codes_as_written as _codes_as_written
from ._csv_labels import leading_zero_anywhere as _leading_zero_anywhere
from ._libsvm_lines import _is_number, first_bad_line
from .utils._finite import first_non_finite
from .utils._npy_header import check_numpy_file, npz_member
from .utils._packed_text import OPENERS, TextBound

__all__ = [
    "ColumnNameError",
    "FeatureCountError",
    "IndexBaseError",
    "check_libsvm_width",
    "iter_libsvm",
    "load_data_file",
]

_BLOCK = 16 * 2**20  # bytes of text read at a time
# LIBSVM text parsed at a time: parsing takes about 5 times its text in
# temporaries, which sit on top of the matrix being assembled, so the block
# is kept small (the parse speed does not depend on it above a few MB).
_LIBSVM_BLOCK = 4 * 2**20
_SNIFF = 2**16  # bytes looked at to decide the format and the separator
_MAX_LINE = 2**28  # a "line" longer than this is not a data file
#: Cells read as missing (pandas' defaults and ``?``, the UCI marker).
NA_MARKERS = ["?"]
_SEPARATORS = ",;\t|"
# LIBSVM widths are data, not promises: past this many columns (and many more
# than the file's non-zeros), models would allocate by an index, not the data.
_MIN_WIDTH_CAP = 2**24
_WIDTH_PER_NONZERO = 16


class FeatureCountError(ValueError):
    """A data file's width does not match the model's feature count."""


class IndexBaseError(ValueError):
    """A LIBSVM file's index base does not match the model's."""


class ColumnNameError(ValueError):
    """A CSV header does not name the columns the model was fitted on."""


def data_home():
    """Folder holding the real data sets.

    Returns
    -------
    path : pathlib.Path
        ``$KERNLEARN_DATA`` if set, else ``<checkout>/../shared/datasets``.
    """
    env = os.environ.get("KERNLEARN_DATA")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        cand = parent.parent / "shared" / "datasets"
        if (parent / "pyproject.toml").exists() and cand.is_dir():
            return cand
    return Path.cwd().parent / "shared" / "datasets"


class DatasetNotFoundError(FileNotFoundError):
    """A named data set is not in the data folder."""


def _open(path, bound=None):
    path = Path(path)
    if not path.exists():
        raise DatasetNotFoundError(f"data file not found: {path}")
    if bound is not None:  # (its packed bytes counted: see TextBound.open)
        return bound.open()
    # (by the lower-cased suffix, as the format is read: "DATA.CSV.GZ" was
    # opened uncompressed and refused as "binary data (NUL bytes)")
    return OPENERS.get(path.suffix.lower(), open)(path, "rb")


def _base_suffix(path):
    """Format suffix of a file name, ignoring a compression suffix."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in (".bz2", ".gz", ".xz"):
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def _check_text(block, path):
    if block[:2] in (b"\xff\xfe", b"\xfe\xff"):
        # Excel's "Unicode text": its NUL bytes were called binary data
        raise ValueError(f"{path} is UTF-16 text; save it as UTF-8 (e.g. Excel's "
                         "\"CSV UTF-8\", or iconv -f UTF-16 -t UTF-8).")
    if b"\0" in block:
        raise ValueError(f"{path} holds binary data (NUL bytes), not a text data file.")


# what a damaged or truncated (compressed) file raises while it is read; a
# corrupt gzip stream's zlib.error was an internal error (exit 1)
_READ_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error)


def _blocks(path, size=_BLOCK, check_start=None, bound=None):
    """The decompressed text of ``path`` in blocks ending at a line end.

    The first block is small and checked for binary data, and by
    ``check_start(first, path)`` if given, before more is read: in the same
    reading (a pipe, ``<(zcat f.svm.gz)`` or ``/dev/stdin``, cannot be read
    twice: a check that opened the file first had taken its first 64 KiB away).
    Compressed text is counted by ``bound`` (a
    :class:`~kernlearn.utils._packed_text.TextBound`) as it is read.
    """
    bound = bound or TextBound(path, "libsvm")
    try:
        with _open(path, bound) as fh:
            first = fh.read(_SNIFF)
            _check_text(first, path)
            if check_start is not None:
                check_start(first, path)
            bound.count(first)
            rest = first
            while True:
                chunk = fh.read(size)
                if not chunk:
                    break
                bound.count(chunk)
                buf = rest + chunk
                cut = buf.rfind(b"\n") + 1
                if cut == 0:
                    if len(buf) > _MAX_LINE:
                        raise ValueError(
                            f"{path} has a line longer than {_MAX_LINE} bytes; "
                            "it is not a data file."
                        )
                    rest = buf
                    continue
                yield buf[:cut]
                rest = buf[cut:]
            if rest:
                yield rest
    except _READ_ERRORS as exc:
        raise ValueError(f"cannot read {path}: {exc}") from exc


def _read_bytes(path, bound=None):
    return b"".join(_blocks(path, bound=bound))


# ------------------------------------------------------------------------ CSV
def _labels(y):
    """Labels in their type: numbers stay numbers (integers integers), text is str."""
    y = np.asarray(y)
    if y.dtype.kind in "biuf":
        return y
    try:
        return np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        return np.asarray([str(v).strip() for v in y])


_DECIMAL_COMMA = re.compile(r"[+-]?(\d+\.)*\d*,\d+")  # 1,5 and 1.234,5
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?")  # 1,304 and 12,345.5


def _check_label_kinds(y, column, path, line):
    """Refuse a label column mixing numbers and text: a typo ("a" among 1 and
    -1) would otherwise become a class of its own without a word."""
    numeric = np.array([_is_number(v) for v in y])
    if numeric.any() and not numeric.all():
        i, j = np.flatnonzero(~numeric)[0], np.flatnonzero(numeric)[0]
        raise ValueError(
            f"{path}: row {line[i]}, column {column}: label {y[i]!r} is text "
            f"but row {line[j]} holds the number {y[j]!r}; use one kind of "
            "label in the whole column."
        )


def _is_integer(text):
    try:
        int(text)
    except (TypeError, ValueError):
        return False
    return True


def _sniff_separator(sample, sep):
    if sep is not None:
        return sep
    text = sample.decode("utf-8", "replace")
    lines = [ln for ln in text.splitlines()[:50] if ln.strip()]
    if len(lines) > 1 and not text.endswith("\n"):
        lines = lines[:-1]  # the sample may end inside a line
    try:
        return csv.Sniffer().sniff("\n".join(lines), delimiters=_SEPARATORS).delimiter
    except csv.Error:
        counts = {s: lines[0].count(s) for s in _SEPARATORS} if lines else {}
        best = max(counts, key=counts.get) if counts else ","
        return best if counts.get(best) else ","


def _check_layout(text, sep, path, header):
    """Field counts of every line (pandas pads short lines with missing values).

    Returns the first record and the file line on which each record starts:
    messages name rows by file line, which blank lines skipped and quoted line
    breaks made differ from the record count.
    """
    from array import array

    # (newline="": a line may end in \r\n, \n or a lone \r, as old Mac
    # exports write; the lone \r was "new-line character seen in unquoted
    # field", an internal error)
    rows = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    first, width, starts = None, None, array("q")
    while True:
        start = rows.line_num + 1
        try:
            row = next(rows)
        except StopIteration:
            break
        if not row or len(row) == 1 and not row[0].strip():
            continue  # (a line of spaces is blank to pandas: it was "line 8 has 1 fields")
        starts.append(start)
        if first is None:
            first, width = row, len(row)
            continue
        if len(row) != width:
            raise ValueError(
                f"{path}: line {start} has {len(row)} fields, line 1 has {width} "
                f"(separator {sep!r})"
                # (a note above the table, as some exports write)
                + ("; line 1 is a comment (it starts with '#'): remove it."
                   if first[0].lstrip().startswith("#") else ".")
            )
    if first is None:
        raise ValueError(f"CSV file {path} is empty.")
    if width == 1 and any(c in text[:_SNIFF] for c in _SEPARATORS + " " if c != sep):
        # e.g. a comma file read with --sep ';', or a space-separated file
        raise ValueError(
            f"{path}: every line is one field when split on {sep!r}; give the "
            "separator with --sep (e.g. --sep ';', --sep ' ' or --sep tab)."
        )
    numbers = [v for v in first if _is_number(v)]
    if header is None and numbers:
        # a data row ("5.1,3.5,setosa") or a header naming columns by number:
        # guessing either way loses a row or invents one, so ask
        what = "all numbers" if len(numbers) == len(first) else (
            f"numbers ({numbers[0].strip()!r}...) among names"
        )
        raise ValueError(
            f"{path}: the first line is {what}: pass --no-header if the file "
            "has no header line, --header if the line names the columns."
        )
    if header is not False:
        # (as compared later: "café" composed and decomposed are one name, which
        # passed here and was an internal error; counted once: names.count per
        # column took 10 s on 20,000 columns)
        names = [_name(v) for v in first]
        dup = sorted(n for n, k in collections.Counter(names).items() if k > 1)
        if dup:
            raise ValueError(
                f"{path}: column name {dup[0]!r} appears twice in the header."
            )
    return first, np.frombuffer(starts, dtype=np.int64)


def _first_missing(frame, path, line, skip=None):
    """Refuse a missing value of ``frame`` (of a column other than ``skip``),
    naming the first by row and column and counting them all."""
    missing = frame.isna().to_numpy()
    if skip is not None:
        # (a copy: under pandas' copy-on-write the array may be a read-only view)
        missing = missing.copy()
        missing[:, frame.columns.get_loc(skip)] = False
    if not missing.any():
        return
    i, j = np.argwhere(missing)[0]
    # how many, and where: dropping 2 rows and dropping half the file (or a
    # column) are different decisions, which the first cell alone hid
    rows = int(missing.any(axis=1).sum())
    cols = [str(c) for c, m in zip(frame.columns, missing.any(axis=0)) if m]
    more = "" if missing.sum() == 1 else (
        f" ({int(missing.sum())} missing values in {rows} of {len(frame)} rows; columns "
        f"{', '.join(cols[:8])}{'...' if len(cols) > 8 else ''})")
    raise ValueError(
        f"{path}: row {line[i]}, column {frame.columns[j]}: missing value "
        f"(empty, {', '.join(NA_MARKERS)}, NA, ...){more}; fill or drop it first."
    )


def _row_numbers(column):
    """Whether ``column`` holds distinct whole numbers from 0 up (a written
    row index: 0, 1, 2... or, for a shuffled or sliced frame, any distinct ones)."""
    values = column.to_numpy()
    if values.dtype.kind not in "iu" or values.min() < 0:
        return False
    return np.unique(values).size == values.size


def _numeric(frame, path, line, label_hint=False, sep=","):
    """The feature columns as float64.  A typo among numbers is named by row
    and column; columns of text (categories, dates) are all named at once,
    with what to do, so that a user does not learn of them one fit at a time
    (``label_hint``: the label was taken by default, the last column)."""
    import pandas as pd

    bad = []  # (column, rows of text, first such value)
    # (the kinds at once: a Series per column took 3 s on 20,000 numeric columns)
    kinds = [dtype.kind for dtype in frame.dtypes]
    for j, col in enumerate(frame.columns):
        if kinds[j] in "biuf":
            continue
        column = frame.iloc[:, j]
        # (missing cells are not text: they are named after the text columns,
        # whose removal may take them along, e.g. a "Comments" column)
        present = column.notna().to_numpy()
        rows = np.flatnonzero(pd.to_numeric(column, errors="coerce").isna().to_numpy()
                              & present)
        if not rows.size:  # numbers (or bools) and missing values
            continue
        value = str(column.iloc[rows[0]])
        bad.append((col, rows, value if len(value) <= 20 else value[:20] + "..."))
    if not bad:
        return frame.to_numpy(dtype=np.float64)
    col, rows, value = bad[0]
    if sep != "," and _DECIMAL_COMMA.fullmatch(value.strip()):
        # "1,5" in a ';' file: a number to the user, "text" to be encoded here
        raise ValueError(
            f"{path}: row {line[rows[0]]}, column {col}: {value!r} is written with "
            "a decimal comma; kernlearn reads numbers with a decimal point: convert the "
            "file (e.g. pandas.read_csv(..., decimal=',').to_csv(...)).")
    if sep == "," and _THOUSANDS.fullmatch(value.strip()):
        # (quoted "1,304" in a ',' file, as spreadsheets export: a column of
        # them was a category column to encode)
        raise ValueError(
            f"{path}: row {line[rows[0]]}, column {col}: {value!r} is not a number: "
            "it is written with thousands separators, which kernlearn does not read: "
            "convert the file (e.g. pandas.read_csv(..., thousands=',').to_csv(...)).")
    if len(bad) == 1:
        where = f"{path}: row {line[rows[0]]}, column {col}: {value!r} is not a number."
        if rows.size < present.sum():  # numbers with a stray text cell: the row is the news
            raise ValueError(where)
        raise ValueError(
            where + (f" If it is the label, pass --label {col} (by default the label is "
                     f"the last column); if it holds each row's task, --task-column {col}."
                     if label_hint else "")
            + f" {'Otherwise e' if label_hint else 'E'}ncode the text column {col} as "
            "numbers (e.g. one 0/1 column per category) or drop it.")
    named = ", ".join(f"{c} ({v!r}...)" if r.size == frame[c].notna().sum()
                      else f"{c} (row {line[r[0]]}: {v!r})" for c, r, v in bad[:8])
    raise ValueError(
        f"{path}: {len(bad)} columns hold text, not numbers: {named}"
        f"{' and ' + ', '.join(c for c, _, _ in bad[8:]) if len(bad) > 8 else ''}; "
        + ("if one is the label, pass --label NAME (by default the label is the last "
           "column); " if label_hint else "")
        + "encode them as numbers (e.g. one 0/1 column per category) or drop them."
    )


def _read_csv(path, label, n_features, task_column=None, header=None, sep=None,
              feature_names=None, labels_needed=True, budget=None):
    """``X, y, names, tasks, info`` of a CSV file (see :func:`load_data_file`)."""
    import pandas as pd

    raw = _read_bytes(path, TextBound(path, "csv", budget, sep))
    try:
        # (a byte-order mark, as Excel writes, is not part of the first name)
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        # (Latin-1 / Windows-1252 exports: where, and what to do)
        line = raw[:exc.start].count(b"\n") + 1
        raise ValueError(
            f"{path} is not a UTF-8 text (CSV) file: byte 0x{raw[exc.start]:02x} on line "
            f"{line}; "
            "save it as UTF-8 (e.g. iconv -f WINDOWS-1252 -t UTF-8, or "
            "pandas.read_csv(..., encoding='latin-1').to_csv(...)).") from None
    sep = _sniff_separator(raw[:_SNIFF], sep)
    first, lines = _check_layout(text, sep, path, header)
    has_header = header is not False
    line = lines[1:] if has_header else lines  # file line of each data row
    try:
        frame = pd.read_csv(
            io.StringIO(text), sep=sep, header=0 if has_header else None,
            na_values=NA_MARKERS, skipinitialspace=True, skip_blank_lines=True,
            dtype=None, engine="c",
        )
    except (ValueError, pd.errors.ParserError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"cannot read CSV file {path}: {msg}") from None
    if frame.shape[0] == 0:
        raise ValueError(f"CSV file {path} has a header but no data rows.")
    if line.size != frame.shape[0]:  # (a record pandas skipped: count them instead)
        line = np.arange(frame.shape[0]) + 1 + has_header
    if has_header:
        for j, name in enumerate(first):
            if not name.strip() and frame.iloc[:, j].isna().all():
                # e.g. every line ending with the separator: pandas would
                # report missing values of a column it named "Unnamed: j"
                raise ValueError(
                    f"{path}: column {j + 1} has no name and no values (does every "
                    f"line end with {sep!r}?); remove it.")
            unnamed = not name.strip() or re.fullmatch(r"Unnamed: \d+", name.strip())
            if j == 0 and unnamed and _row_numbers(frame.iloc[:, j]):
                # pandas would call it "Unnamed: 0" and fit on it: a row index
                # (pandas' to_csv, R's write.csv; written again, it is named
                # "Unnamed: 0") became a feature without a word (an unnamed
                # column of other values stays a feature)
                raise ValueError(
                    f"{path}: column 1 "
                    + ("has no name in the header line" if not name.strip() else
                       f"is named {name.strip()!r} (pandas' name for a column without one)")
                    + " and holds "
                    "distinct row numbers: a row index (as pandas' to_csv and R's write.csv "
                    "write by default), not a feature; write the file without it "
                    "(index=False, row.names=FALSE) or remove the column.")
        frame.columns = [_name(c) for c in frame.columns]
        names = list(frame.columns)
    else:
        if len(first) > 1 and not first[-1].strip() and frame.iloc[:, -1].isna().all():
            # (as a header's unnamed empty column above: it was "missing value"
            # in every row of a column the file does not have, e.g. usps' lines
            # ending with a space)
            raise ValueError(
                f"{path}: the last field of every line is empty (does every line end "
                f"with {sep!r}?); remove the separator at the line ends.")
        frame.columns = [str(j) for j in range(frame.shape[1])]
        names = None
    width = frame.shape[1]
    columns = list(frame.columns)  # the file's columns, task column included
    zeros = functools.cache(lambda: _leading_zero_anywhere(text, sep))
    tasks = None
    if task_column is not None:
        tpos = _label_position(task_column, names, width, path, "--task-column")
        tcol = frame.columns[tpos]
        _first_missing(frame[[tcol]], path, line)
        tasks = _codes_as_written(_labels(frame[tcol].to_numpy()), text, sep, has_header,
                                  tpos, zeros)
        frame = frame.drop(columns=[tcol])
        names = None if names is None else [n for n in names if n != tcol]
        width -= 1
    if feature_names is not None and names is not None:
        feats, ycol = _match_names(names, feature_names, label, path)
    else:
        if feature_names is not None and n_features is None:
            n_features = len(feature_names)
        if n_features is not None and width not in (n_features, n_features + 1):
            raise FeatureCountError(
                f"{path} has {width} columns; the model expects {n_features} features "
                "(plus optionally a label column)."
            )
        with_label = n_features is None or width == n_features + 1
        if with_label and label is None and tasks is not None and tpos == width:
            # the task column took the default label's place (the last): the
            # label silently became the column before it, a feature
            raise ValueError(
                f"{path}: --task-column {task_column} is the last column, where the "
                "label is read by default; name the label column with --label.")
        pos = _label_position(label, names, width, path) if with_label else None
        ycol = None if pos is None else frame.columns[pos]
        feats = [c for c in frame.columns if c != ycol]
    if not has_header and len(frame) > 1 and not any(_is_number(v) for v in first):
        _header_read_as_data(frame, first, path, line[0])
    # a text column while the default label (the last column) holds numbers:
    # perhaps the label is elsewhere
    X = _numeric(frame[feats], path, line, sep=sep,
                 label_hint=label is None and ycol is not None and names is not None
                 and frame[ycol].dtype.kind in "biuf")
    # rows to predict are often those whose label is unknown (Hitters' missing
    # salaries): predict does not read labels, so blanks among them were
    # refused for nothing; its column is passed over (not dropped: a copy of
    # the whole table)
    unread = not labels_needed and ycol is not None and frame[ycol].isna().any()
    _first_missing(frame, path, line, skip=ycol if unread else None)
    if unread:
        ycol = None
    bad = first_non_finite(X)  # ("inf", "1e400": named as a missing value is)
    if bad is not None:
        i, j, value, _ = bad
        raise ValueError(f"{path}: row {line[i]}, column {feats[j]}: "
                         f"{value} is not a finite number.")
    y = None if ycol is None else _codes_as_written(
        _labels(frame[ycol].to_numpy()), text, sep, has_header, columns.index(ycol), zeros)
    if y is not None and y.dtype.kind == "f":
        bad = first_non_finite(y[:, None])  # ("inf", "1e400": as for the features)
        if bad is not None and labels_needed:
            raise ValueError(f"{path}: row {line[bad[0]]}, column {ycol}: "
                             f"{bad[2]} is not a finite label.")
        y = None if bad is not None else y  # (predict does not read labels)
    if y is not None and y.dtype.kind == "U":
        _check_label_kinds(y, ycol, path, line)
    info = {"sep": sep, "header": has_header,
            "class_spellings": None if y is None or not labels_needed else class_spellings(
                y, text, sep, has_header, columns.index(ycol)),
            "label_name": None if ycol is None or names is None else ycol,
            "task_column_name": None if tasks is None or names is None else tcol}
    return X, y, (None if names is None else feats), tasks, info


def _header_read_as_data(frame, first, path, at):
    """Refuse a line of names read as a data row: "7 columns hold text" named
    every column, not the line (a model fitted on a file without a header
    reads its test files without one)."""
    import pandas as pd

    rest = frame.iloc[1:]
    if any(pd.to_numeric(rest.iloc[:, j], errors="coerce").notna().all()
           for j in range(rest.shape[1])):
        shown = ", ".join(v.strip() for v in first[:4]) + ("..." if len(first) > 4 else "")
        raise ValueError(
            f"{path}: line {at} ({shown}) names the columns, but the file is read without "
            "a header line (--no-header, or a model fitted on a file without one); "
            "pass --header to skip it (the columns are then taken by position).")


def _match_names(names, model_names, label, path):
    """The model's feature columns (in its order) and the label column, by name."""
    model_names = [_name(n) for n in model_names]
    kind, text = column_choice(label)  # ("name:target": the model's label, by default)
    # (sets: list lookups made matching quadratic, 10 s on 20,000 columns)
    in_file, in_model = set(names), set(model_names)
    missing = [n for n in model_names if n not in in_file]
    if missing:
        # a renamed column ("income" now "Income") is a missing one and an
        # unknown one: name the unknown ones as the likely new names
        unknown = [n for n in names
                   if n not in in_model and (label is None or n != _name(text))]
        raise ColumnNameError(
            f"{path} has no column {missing[0]!r} of the model "
            f"({len(missing)} of {len(model_names)} missing; the file has "
            f"{', '.join(names[:8])}{'...' if len(names) > 8 else ''}): columns "
            "are matched by name"
            + (f"; renamed? the model does not know {', '.join(map(repr, unknown[:3]))}"
               if unknown else "") + "."
        )
    if label is not None and (kind == "index" or kind is None and _is_integer(text)):
        # a number names the column at that position, as when fitting (unless
        # the file names another column so: ambiguous); a name the file lacks
        # (the model's label, by default) leaves it unlabelled (it was
        # "--label 'target': no such column" for every unlabelled file)
        label = names[_label_position(label, names, len(names), path)]
    elif label is not None:
        label = _name(text)
    extra = [n for n in names if n not in in_model]
    if label is not None and str(label) in extra:
        ycol = str(label)
    elif len(extra) == 1 and label is None:
        ycol = extra[0]
    elif not extra:
        ycol = None
    else:
        raise ColumnNameError(
            f"{path}: column {next(n for n in extra if n != str(label))!r} is not a "
            f"feature of the model" + (f" nor its label {label!r}" if label else "")
            + "; drop it (columns are matched by name)."
        )
    others = [n for n in extra if n != ycol]
    if others:
        raise ColumnNameError(
            f"{path}: column {others[0]!r} is not a feature of the model"
            + (f" nor its label {label!r}" if label else "") + "; drop it (columns are "
            "matched by name)."
        )
    return model_names, ycol


# --------------------------------------------------------------------- NumPy
def _read_numpy(path, label, n_features, suffix):
    # a text file read as .npy would otherwise be reported as "pickled data"
    magic = b"PK" if suffix == ".npz" else b"\x93NUMPY"
    with open(path, "rb") as fh:
        start = fh.read(len(magic))
        if start != magic:
            raise ValueError(f"{path} is not a NumPy {suffix} file (it does not start "
                             f"with the {suffix} signature); pass --format if it is "
                             "another kind of file.")
        # a pipe (<(cat X.npy), /dev/stdin) is read once, here: opened again, it
        # was "not a readable NumPy file: No data left in file"
        source = path if Path(path).is_file() else io.BytesIO(start + fh.read())
    try:
        # (a header of 10**12 rows was "MemoryError: Unable to allocate 7.28 TiB")
        check_numpy_file(source, suffix == ".npz")
        if suffix == ".npz":
            with np.load(source, allow_pickle=False) as data:
                files = data.files
                # (a bzip2 or LZMA member read in bounded blocks, not whole)
                X = npz_member(data, "X") if "X" in files else None
                y = npz_member(data, "y") if "y" in files and X is not None else None
        else:
            X, y = np.load(source, allow_pickle=False), None
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise ValueError(f"{path} holds Python objects (pickle); only numeric "
                             "arrays are read.") from exc
        raise ValueError(f"{path} is not a readable NumPy file: "
                         f"{str(exc).splitlines()[0]}") from exc
    except (*_READ_ERRORS, zipfile.BadZipFile) as exc:
        # (a truncated or damaged .npz raised BadZipFile: an internal error)
        raise ValueError(f"{path} is not a readable NumPy file: {exc}") from exc
    except MemoryError as exc:  # (the sizes were checked: a genuinely large array)
        raise ValueError(f"{path}: not enough memory to read it ({exc})") from exc
    if X is None:  # (scipy.sparse.save_npz writes data, format, shape and no labels)
        raise ValueError(f"{path} has no array named 'X' (found: {', '.join(files) or 'none'})" + (
            "; it is a SciPy sparse matrix (scipy.sparse.save_npz), without labels: write X "
            "and y as a LIBSVM file, sklearn.datasets.dump_svmlight_file(X, y, 'data.svm')."
            if {"data", "format", "shape"} <= set(files) else "."))
    if X.ndim != 2:
        raise ValueError(f"{path}: X must be a 2-D array, got shape {X.shape}.")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{path}: X must be numeric, got dtype {X.dtype}.")
    if y is None:
        width = X.shape[1]
        with_label = n_features is None or width == n_features + 1
        if n_features is not None and width not in (n_features, n_features + 1):
            raise FeatureCountError(
                f"{path} has {width} columns; the model expects {n_features} features "
                "(plus optionally a label column).")
        if with_label:
            if width < 2:
                raise ValueError(f"{path}: a table with a label column needs at least "
                                 "2 columns.")
            pos = _label_position(label, None, width, path)
            keep = [j for j in range(width) if j != pos]
            X, y = X[:, keep], X[:, pos]
    else:
        if label is not None:  # (it was passed over: y was fitted on, not the column)
            raise ValueError(f"--label {label}: {path} holds its labels in its array "
                             "'y'; --label picks a column of a table (CSV, .npy, or an "
                             ".npz without 'y').")
        if y.shape != (X.shape[0],):
            raise ValueError(f"{path}: y has shape {y.shape}, expected ({X.shape[0]},).")
        if n_features is not None and X.shape[1] != n_features:
            # (an .npz with y skipped this check: an internal error followed)
            raise FeatureCountError(
                f"{path}: X has {X.shape[1]} columns; the model expects {n_features} "
                "features.")
    return np.asarray(X, dtype=np.float64), y


# -------------------------------------------------------------------- LIBSVM
def _parse_block(raw, path, line0):
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(io.BytesIO(raw), zero_based=True)
    except Exception as exc:  # sklearn raises ValueError / RuntimeError variants
        bad = first_bad_line(raw)
        if bad is not None:
            raise ValueError(
                f"corrupt svmlight file {path}: line {line0 + bad[0] + 1}: {bad[1]}."
            ) from None
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"corrupt svmlight file {path}: {msg}") from exc
    X = sp.csr_matrix(X)
    itype = np.int32 if X.shape[1] < 2**31 else np.int64
    return X.data, X.indices.astype(itype, copy=False), X.indptr, X.shape[1], y


def _looks_like_csv(block):
    line = block.split(b"\n", 1)[0].split(b"#", 1)[0].strip()
    return bool(line) and b":" not in line and any(
        s.encode() in line for s in _SEPARATORS
    )


def _grow(arr, need, hint):
    """``arr`` with room for ``need`` entries, resized in place (``realloc``).

    Growing by half again keeps the copies few; a large block is usually
    remapped, not copied, so the peak stays near the final size.
    """
    if need <= len(arr):
        return arr
    arr.resize(max(need, int(1.5 * len(arr)), hint), refcheck=False)
    return arr


def _size_hint(path):
    """Bytes of text, or ``None`` for a compressed file (its size says little)."""
    path = Path(path)
    compressed = path.suffix.lower() in (".bz2", ".gz", ".xz")
    return None if compressed else path.stat().st_size


def _check_libsvm_start(first, path):
    """Refuse a LIBSVM file by its first block ``first`` (empty, or a table)."""
    if not first.strip():
        raise ValueError(f"svmlight file {path} is empty.")
    if _looks_like_csv(first):
        raise ValueError(
            f"{path} looks like a CSV table (its first line has no index:value "
            "pairs), not a LIBSVM file: name it .csv or pass --format csv."
        )
    tokens = first.split(b"\n", 1)[0].split(b"#", 1)[0].split()
    if len(tokens) > 1 and all(_is_number(t.decode("utf-8", "replace")) for t in tokens):
        # (UCI and ESL .data/.txt files, e.g. usps: it was "corrupt svmlight
        # file: token '-1.0000' is not index:value")
        raise ValueError(
            f"{path} looks like a table of numbers separated by spaces (its first line "
            "has no index:value pairs), not a LIBSVM file: read it with --format csv "
            "--sep ' ' (and --no-header when it has no header line).")


def check_libsvm_width(path, width, nnz, zero_based):
    """Refuse a LIBSVM width far beyond the data (models allocate by it).

    Parameters
    ----------
    path : str or path-like
        The file, for the message.
    width : int
        Columns (largest index, base removed).
    nnz : int
        Stored values of the file.
    zero_based : bool
        Index base, for the message.

    Raises
    ------
    ValueError
        ``width`` exceeds ``max(2**24, 16 * nnz)``.
    """
    if width > max(_MIN_WIDTH_CAP, _WIDTH_PER_NONZERO * nnz):
        raise ValueError(
            f"{path} uses feature index {width - 1 + (not zero_based)} but holds only "
            f"{nnz} values: models would allocate by that index, not by the data; "
            "renumber the features."
        )


def iter_libsvm(path, n_features, zero_based, block=_LIBSVM_BLOCK, max_table_size=None):
    """The rows of a LIBSVM file as consecutive CSR blocks, never the whole file.

    Parameters
    ----------
    path : str or path-like
        Plain or compressed (``.bz2``, ``.gz``, ``.xz``) LIBSVM file.
    n_features : int
        Width of every block; a larger index is refused.
    zero_based : bool
        Index base (a 1-based file using index 0 is refused).
    block : int, optional
        Bytes of text parsed at a time.
    max_table_size : int or str, optional
        Memory (``"8GB"``) a compressed file's reading may take (its labels and
        predictions, a line each; see :func:`load_data_file`).  Past what
        reading it in memory would take within it, a file unpacking to more
        than 1032 bytes of text a byte (tighter than gzip packs) is refused.

    Yields
    ------
    X : scipy.sparse.csr_matrix of shape (rows of the block, n_features)
    y : ndarray of shape (rows of the block,)

    Raises
    ------
    FeatureCountError, IndexBaseError
        The file does not match ``n_features`` / ``zero_based``.
    ValueError
        Unreadable, empty or malformed content.
    """
    line0, n = 0, 0
    bound = TextBound(path, "stream", max_table_size)
    for raw in _blocks(path, block, _check_libsvm_start, bound):
        d, ind, ptr, _, yb = _parse_block(raw, path, line0)
        line0 += raw.count(b"\n")
        if len(ind) and ind.min() == 0 and not zero_based:
            raise IndexBaseError(f"{path} uses feature index 0, but the model was "
                                 "trained on a 1-based file.")
        if len(ind) and ind.max() - (not zero_based) >= n_features:
            raise FeatureCountError(
                f"{path} uses feature index {ind.max()}, beyond the model's "
                f"{n_features} features.")
        if not zero_based:
            ind = ind - 1
        n += len(yb)
        if len(yb):
            yield sp.csr_matrix((d, ind, ptr), shape=(len(yb), n_features)), yb
    if n == 0:
        raise ValueError(f"svmlight file {path} is empty.")


def _read_libsvm(path, n_features, zero_based, budget=None):
    # The matrix is assembled in place, block by block, so the peak is the
    # matrix plus one parsed block (not a list of blocks plus their
    # concatenation).  The first block's density sizes the arrays for the
    # whole file; a wrong guess costs a resize, trimmed at the end.
    text = _size_hint(path)
    data, indices = np.empty(0, np.float64), np.empty(0, np.int64)
    indptr, y = np.zeros(1, np.int64), np.empty(0, np.float64)
    raw_width, nnz, n, line0, has_zero, done = 0, 0, 0, 0, False, 0
    bound = TextBound(path, "libsvm", budget)
    for raw in _blocks(path, _LIBSVM_BLOCK, _check_libsvm_start, bound):
        d, ind, ptr, w, yb = _parse_block(raw, path, line0)
        line0 += raw.count(b"\n")
        done += len(raw)
        if len(data) == 0 and len(d):
            # per byte of text so far, times the file (or 4 blocks, compressed)
            scale = text / done if text else 4.0
            indices = np.empty(0, ind.dtype)
            data = _grow(data, len(d), int(1.05 * scale * len(d)) + 1)
            indices = _grow(indices, len(d), len(data))
            rows_hint = int(1.05 * scale * len(yb)) + 2
            indptr = _grow(indptr, len(yb) + 1, rows_hint)
            y = _grow(y, len(yb), rows_hint)
        if ind.dtype != indices.dtype:  # an index past int32 in a later block
            indices = indices.astype(np.int64)
        data = _grow(data, nnz + len(d), 0)
        indices = _grow(indices, nnz + len(d), 0)
        indptr = _grow(indptr, n + len(yb) + 1, 0)
        y = _grow(y, n + len(yb), 0)
        data[nnz:nnz + len(d)] = d
        indices[nnz:nnz + len(d)] = ind
        indptr[n + 1:n + 1 + len(yb)] = ptr[1:]
        indptr[n + 1:n + 1 + len(yb)] += nnz
        y[n:n + len(yb)] = yb
        has_zero |= bool(len(ind) and ind.min() == 0)
        nnz += len(d)
        n += len(yb)
        raw_width = max(raw_width, w)
        del d, ind, ptr, yb
    if n == 0:
        raise ValueError(f"svmlight file {path} is empty.")
    for arr, size in ((data, nnz), (indices, nnz), (indptr, n + 1), (y, n)):
        arr.resize(size, refcheck=False)  # trims in place
    if zero_based == "auto":
        zero_based = has_zero
    elif not zero_based and has_zero:
        raise IndexBaseError(f"{path} uses feature index 0, but the model was trained "
                             "on a 1-based file.")
    if not zero_based:
        indices -= 1
    width = max(raw_width - (not zero_based), 0)
    if n_features is not None:
        if width > n_features:
            raise FeatureCountError(
                f"{path} uses feature index {width - 1 + (not zero_based)}, beyond the "
                f"model's {n_features} features.")
        width = n_features
    else:
        check_libsvm_width(path, width, nnz, zero_based)
    small = nnz < 2**31 and width < 2**31
    itype = np.int32 if small else np.int64
    X = sp.csr_matrix(
        (data, indices.astype(itype, copy=False), indptr.astype(itype)),
        shape=(n, width), copy=False,
    )
    return X, y, zero_based


def load_data_file(source, label=None, n_features=None, zero_based="auto", fmt=None,
                   task_column=None, header=None, sep=None, feature_names=None,
                   labels_needed=True, max_table_size=None):
    """Read a labelled (or unlabelled) table from a file or a data set name.

    Formats: LIBSVM/svmlight (plain, ``.bz2``, ``.gz``, ``.xz``), CSV (read
    by pandas; ``label`` names or numbers the label column, default the
    last), NumPy ``.npy`` (a 2-D array, label column as for CSV) and ``.npz``
    (arrays ``X`` and optionally ``y``), or a name from
    :func:`~kernlearn.datasets.available_datasets` (``"a9a"`` is its training
    part, ``"a9a:test"`` its test part).

    Parameters
    ----------
    source : str or path-like
        File path or data set name.
    label : str or int, optional
        Label column of CSV/``.npy`` tables.
    n_features : int, optional
        Expected feature count (the model's).  A table with exactly
        ``n_features`` columns is read as unlabelled; LIBSVM files are widened
        to it and rejected when they use a larger index.
    zero_based : bool or "auto", default="auto"
        LIBSVM index base; ``"auto"`` decides from the file (index 0 present).
    fmt : {"libsvm", "csv", "npy", "npz"}, optional
        File format; by default from the file name (``.csv``, ``.npy``,
        ``.npz``, anything else LIBSVM, unless its first line looks like CSV),
        ignoring ``.bz2/.gz/.xz``.
    task_column : str or int, optional
        CSV column holding each row's task (not a feature); returned as
        ``info["tasks"]``.  The ``school`` data set carries its tasks.
    header : bool, optional
        Whether a CSV file's first line names its columns.  ``None``: yes,
        unless a field of that line is a number, which is refused as
        ambiguous (a data row, or names that are numbers).
    sep : str, optional
        CSV separator (default: sniffed among ``, ; tab |``).
    feature_names : list of str, optional
        The model's feature columns: a CSV file with a header is matched to
        them by name (reordered; a missing or unknown column is an error).
    labels_needed : bool, default=True
        Whether missing labels are an error.  ``False`` (predicting): a CSV
        label column with missing values is not read (``y`` is ``None``).
    max_table_size : int or str, optional
        Memory (``"8GB"``) that reading a compressed text file (``.bz2``,
        ``.gz``, ``.xz``) may take, its text held and its parsed table as
        counted while it streams in; a file over it, or whose text holds
        almost no values (blank lines), is refused early as a decompression
        bomb.  Default: half the memory available when reading starts.

    Returns
    -------
    X : ndarray or scipy.sparse.csr_matrix
    y : ndarray or None
        Labels in their type: numbers, or text (CSV labels, and tasks, that are
        integers written with leading zeros such as ``007`` keep their text).
    info : dict
        ``format``, ``n_features``, ``zero_based`` (LIBSVM),
        ``feature_names``, ``label_name``, ``task_column_name``, ``header``
        and ``sep`` (CSV) and ``tasks`` (or ``None``) of the source.

    Raises
    ------
    DatasetNotFoundError
        Neither a file nor a data set name.
    FeatureCountError, IndexBaseError, ColumnNameError
        The source does not match ``n_features`` / ``zero_based`` /
        ``feature_names``.
    ValueError
        Unreadable or malformed content.
    """
    path = Path(source)
    info = {"format": None, "zero_based": None, "feature_names": None, "tasks": None,
            "label_name": None, "task_column_name": None, "header": None, "sep": None}
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a data file.")
    if not path.exists():
        raise DatasetNotFoundError(
            f"data file not found: {source} (and not a data set name; see "
            "`kernlearn datasets`)")
    suffix = _base_suffix(path) if fmt is None else "." + fmt
    if task_column is not None and suffix != ".csv":
        raise ValueError("--task-column applies to CSV files (the school data set "
                         "carries its tasks).")
    if fmt is not None and fmt not in ("libsvm", "csv", "npy", "npz"):
        raise ValueError(
            f"unknown data format {fmt!r}; choose libsvm, csv, npy or npz."
        )
    if max_table_size is not None:
        from .partitioned import parse_bytes

        max_table_size = parse_bytes(max_table_size)
    if suffix == ".csv":
        X, y, names, tasks, csv_info = _read_csv(
            path, label, n_features, task_column, header, sep, feature_names,
            labels_needed, max_table_size,
        )
        info.update(format="csv", feature_names=names, tasks=tasks, **csv_info)
    elif suffix in (".npy", ".npz"):
        if path.suffix.lower() in (".bz2", ".gz", ".xz"):
            raise ValueError(f"{path}: compressed NumPy files are not supported; "
                             "use .npz (compressed already).")
        X, y = _read_numpy(path, label, n_features, suffix)
        info.update(format=suffix[1:])
    else:
        if label is not None:
            raise ValueError("--label applies to CSV and .npy files; LIBSVM files "
                             "carry the label first on each line.")
        X, y, zb = _read_libsvm(path, n_features, zero_based, max_table_size)
        info.update(format="libsvm", zero_based=zb)
    if X.shape[0] == 0:
        raise ValueError(f"{source} has no rows.")
    if X.shape[1] == 0:
        raise ValueError(f"{source} has no feature columns.")
    info["n_features"] = X.shape[1]
    return X, y, info
