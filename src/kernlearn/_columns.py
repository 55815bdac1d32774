"""Which column of a table ``--label`` / ``--task-column`` picks.

A value is a column's name or its 0-based number (negative from the end).
``name:TEXT`` and ``index:N`` say which reading is meant: a header may name
a column like a number (a column named "2"), and ``--label 2`` then reads
both ways; that is refused, naming both columns and the two spellings (the
name was taken silently, although column 2 may be another column).
"""

import unicodedata

__all__ = ["column_choice", "column_position", "column_name"]

_KINDS = ("name", "index")


def column_name(name):
    """A column name as compared: stripped, in Unicode's composed form (macOS
    writes "é" as "e" and a combining accent: the same name on screen, which
    did not match, and the error named two names that looked alike)."""
    return unicodedata.normalize("NFC", str(name).strip())


def column_choice(value):
    """``(kind, text)`` of a column option's value.

    Parameters
    ----------
    value : str
        ``NAME_OR_NUMBER``, ``name:NAME`` or ``index:N``.

    Returns
    -------
    kind : {"name", "index"} or None
        The reading the prefix asks for; None for either.
    text : str
        The value without its prefix.
    """
    if isinstance(value, str):
        for kind in _KINDS:
            if value.startswith(kind + ":"):
                return kind, value[len(kind) + 1:]
    return None, value


def column_position(value, names, width, path, flag="--label"):
    """The position of the column ``value`` picks among ``width`` columns.

    Parameters
    ----------
    value : str or None
        The option's value (see :func:`column_choice`); None is the last
        column.
    names : list of str or None
        The columns' names (:func:`column_name`); None for a table without
        a header.
    width : int
        Number of columns.
    path : str
        The file, for the messages.
    flag : str, default="--label"
        The option, for the messages.

    Returns
    -------
    int
        In ``0 .. width - 1``.

    Raises
    ------
    ValueError
        No such column, a number out of range, or a value that names one
        column and numbers another.
    """
    if value is None:
        return width - 1
    kind, text = column_choice(value)
    by_name = None
    if kind != "index" and names is not None and column_name(text) in names:
        by_name = names.index(column_name(text))
    try:
        number = None if kind == "name" else int(text)
    except (TypeError, ValueError):
        number = None
    if by_name is not None and number is not None and -width <= number < width \
            and number % width != by_name:
        raise ValueError(
            f"{flag} {text} is ambiguous in {path}: the column named {text!r} (number "
            f"{by_name}) or column number {number} ({names[number]!r}); say {flag} "
            f"name:{text} or {flag} index:{text}.")
    if by_name is not None:
        return by_name
    if number is None:
        raise ValueError(
            f"{flag} {value if kind == 'index' else text!r}: no such column in {path}"
            + (f" (columns: {', '.join(names[:8])}...)" if names else "")
            + ("; index: takes a column number" if kind == "index" else "")
            + ".")
    if not -width <= number < width:
        raise ValueError(f"{flag} {number}: column out of range for {width} columns in "
                         f"{path}.")
    return number % width
