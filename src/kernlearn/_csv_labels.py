"""A CSV label (or task) column as written: the text of its cells, next to the
values pandas read.

Read as numbers, "007" came back as 7 and "1.0" as 1; the command line keeps
such labels as the file spells them (:func:`codes_as_written`,
:func:`class_spellings`).
"""

import io
import re

import numpy as np

_LEADING_ZERO = re.compile(r"[+-]?0\d")


def leading_zero_anywhere(text, sep):
    """Whether any cell of the CSV ``text`` starts like "01" or "-007" (one scan
    of the text by the regex engine: a file without one is not read again)."""
    cell = re.compile(r'(?:^|' + re.escape(sep) + r')[ \t]*"?[+-]?0\d', re.MULTILINE)
    return cell.search(text) is not None


def _column_text(text, sep, has_header, index):
    """Column ``index`` of the CSV ``text``, every cell as its stripped text
    (pandas' C reader: no Python list of every cell of a large file)."""
    import pandas as pd

    return pd.read_csv(
        io.StringIO(text), sep=sep, header=0 if has_header else None, usecols=[index],
        dtype=str, na_filter=False, skipinitialspace=True, skip_blank_lines=True,
        engine="c",
    ).iloc[:, 0].str.strip()


def codes_as_written(values, text, sep, has_header, index, zeros):
    """``values`` (a label or task column as pandas read it), or the text of its
    cells when it holds integers written with leading zeros ("007", "01").

    Read as numbers, "007" came back as 7 in every prediction, and "01" and
    "1" became one class (or one task), without a word.  ``zeros()`` says
    whether any cell of the file could be one (else the column is not read
    again).
    """
    if values.dtype.kind not in "iu" or not zeros():
        return values
    column = _column_text(text, sep, has_header, index)
    if len(column) != len(values) or not column.str.match(_LEADING_ZERO).any():
        return values
    return column.to_numpy(dtype=str)


def class_spellings(y, text, sep, has_header, index):
    """The text each class of the label column ``y`` is written as, or ``None``.

    Numbers and booleans are written back the way Python spells them ("1.0"
    as 1, "TRUE" as True, "+1" as 1); a model's predictions then no longer
    matched the training file's labels as text.  Only columns whose cells may
    be spelled otherwise are read again: booleans, whole-number floats of a
    few distinct values (a classifier's; a regressor's continuous target is
    not read twice) and integers in a file holding a "+".

    Returns
    -------
    dict or None
        ``{class: text}`` for the classes of ``y`` written one way only
        (a class written as both "1" and "1.0" is left out), or ``None``
        when ``y`` is text or the column was not read again.
    """
    kind = y.dtype.kind
    if not (kind == "b" or kind in "iu" and "+" in text or kind == "f" and np.all(
            y == np.round(y)) and np.unique(y).size <= max(50, 0.5 * y.size)):
        return None
    import pandas as pd

    column = _column_text(text, sep, has_header, index)
    if column.size != y.size:
        return None
    pairs = pd.DataFrame({"value": y, "text": column.to_numpy()}).drop_duplicates()
    once = ~pairs["value"].duplicated(keep=False)  # (a class written one way only)
    return {v.item(): str(t) for v, t in zip(pairs["value"].to_numpy()[once.to_numpy()],
                                            pairs["text"].to_numpy()[once.to_numpy()])}
