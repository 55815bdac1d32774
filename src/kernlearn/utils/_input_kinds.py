"""Refusals of NumPy inputs whose numbers are not what they seem.

scikit-learn's validation converts a NumPy array with ``np.asarray`` and
``astype``: a masked array's masked cells were read as the values under the
mask (a missing-value code such as -999 became a measurement), dates and
durations became counts of their unit (the same dates in seconds and in
nanoseconds gave two models; in a DataFrame they were refused), and complex
numbers or a structured array were refused in NumPy's words, naming neither
the argument nor what to do.  :func:`refuse_unlike_array` names each of
them (and a DataFrame's complex columns; complex numbers in scikit-learn's
words first, which its estimator checks look for); :func:`first_non_number`
finds the cell an object or text array cannot give a number for
(:func:`block_floats` in a row block of a Dask array, on its worker), and
:func:`ragged_rows` two rows of a list that differ in length and
:func:`first_bad_weight` the first weight that is not a non-negative
number.  The estimators' validation (:func:`kernlearn.estimators._base.validate_data`,
:func:`~kernlearn.estimators._base.fit_sample_weight`) and that of
precomputed Gram matrices (:func:`kernlearn.gram.check_gram_list`) call
them.  This module imports only NumPy.
"""

import numpy as np

from ._messages import plain_value


def refuse_unlike_array(values, name, owner, dates=True):
    """Raise if NumPy array ``values`` holds something other than plain numbers.

    Parameters
    ----------
    values : object
        An argument as given (of other containers only a pandas DataFrame's
        complex columns and a complex Series are refused).
    name : str
        The argument's name for the message (``"X"``, ``"y"``, ``"sample_weight"``).
    owner : str
        Who needs numbers (the estimator's class name).
    dates : bool, default=True
        Refuse dates and durations (a classifier's labels may be dates).

    Raises
    ------
    ValueError
        ``values`` is a masked array with masked cells, holds dates or
        durations, complex numbers, or is a structured array.
    """
    if not isinstance(values, np.ndarray):
        _refuse_complex_pandas(values, name, owner)
        return
    if isinstance(values, np.ma.MaskedArray):
        masked = np.ma.getmaskarray(values)
        if masked.any():
            where = _first_cell(masked)
            raise ValueError(
                f"{name} is a masked array with {int(masked.sum())} masked value(s) (the "
                f"first {where}); {owner} would read the values under the mask: fill them "
                f"({name}.filled(...)) or drop those rows.")
        return
    kind = values.dtype.kind
    if values.dtype.names is not None:
        raise ValueError(
            f"{name} is a structured array (fields {', '.join(values.dtype.names[:5])}"
            + (" ..." if len(values.dtype.names) > 5 else "")
            + f"); {owner} needs a 2-D array of numbers: "
            "numpy.lib.recfunctions.structured_to_unstructured makes one.")
    if kind in "mM" and dates:
        raise ValueError(
            f"{name} holds dates or durations ({values.dtype}); {owner} needs numbers "
            "(as numbers, dates count their unit, which changes the model): encode them, "
            "e.g. as days since a reference date, or drop them.")
    if kind == "c":
        raise ValueError(f"Complex data not supported: {name} holds complex numbers "
                         f"({values.dtype}); " + _real_advice(name, owner))


def _refuse_complex_pandas(values, name, owner):
    """The complex-number refusal for a pandas DataFrame's columns or a Series
    (scikit-learn's message printed the whole frame and named no column)."""
    columns, dtypes = getattr(values, "columns", None), getattr(values, "dtypes", None)
    if columns is not None and dtypes is not None:
        bad = [repr(plain_value(c)) for c, d in zip(columns, dtypes)
               if getattr(d, "kind", "") == "c"]
        if bad:
            raise ValueError(f"Complex data not supported: {name} has complex column(s) "
                             + ", ".join(bad[:5])
                             + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
                             + f"; {owner} needs real numbers: keep their real parts if the "
                             "imaginary parts are zero, or split each into two columns.")
    elif getattr(getattr(values, "dtype", None), "kind", "") == "c":
        raise ValueError(f"Complex data not supported: {name} holds complex numbers "
                         f"({values.dtype}); {owner} needs real numbers: keep their real "
                         "parts if the imaginary parts are zero.")


def _real_advice(name, owner):
    """The end of a complex-number refusal: what ``owner`` needs, what to pass."""
    return (f"{owner} needs real numbers: pass {name}.real if the imaginary parts are "
            "zero" + (", or the real and imaginary parts as two columns." if name == "X"
                      else "."))


def ragged_rows(values):
    """Two rows of different lengths of a list (or tuple) of rows, or None.

    NumPy's "setting an array element with a sequence. The requested array
    has an inhomogeneous shape after 1 dimensions" named neither the
    argument nor the rows.

    Parameters
    ----------
    values : object
        An argument as given.

    Returns
    -------
    str or None
        ``"row 0 has 4 values, row 5 has 3"``, or None when ``values`` is not
        a list or tuple of sized rows or its rows have one length.
    """
    if not isinstance(values, (list, tuple)) or not values:
        return None
    try:
        lengths = [len(row) for row in values]
    except TypeError:  # (a row that is a number: NumPy's own message)
        return None
    first = next((i for i, k in enumerate(lengths) if k != lengths[0]), None)
    if first is None:
        return None
    return f"row 0 has {lengths[0]} values, row {first} has {lengths[first]}"


def first_non_number(values):
    """Where the first cell of a text or object array that is not a number is.

    Parameters
    ----------
    values : object
        An argument as given.

    Returns
    -------
    str or None
        ``"'x' at row 2, column 1"`` (``float()`` refuses that cell), or None
        when ``values`` is not a 1-D or 2-D NumPy array of text or objects or
        every cell converts.
    """
    found = _first_non_number_index(values)
    if found is None:
        return None
    index, v = found
    position = f"row {index[0]}" + (f", column {index[1]}" if len(index) > 1 else "")
    return f"{plain_value(v)!r} at {position}"


def _first_non_number_index(values):
    """``(index, value)`` of :func:`first_non_number`'s cell, or None."""
    if not (isinstance(values, np.ndarray) and values.dtype.kind in "OUS"
            and values.ndim in (1, 2)):
        return None
    for index, v in np.ndenumerate(values):
        if v is None:  # (a missing value: named as such by the finiteness check)
            continue
        try:
            float(v)
        except (TypeError, ValueError):
            return index, v
    return None


def not_a_number_message(cell, exc, who):
    """The sentence refusing ``X`` for a cell that is not a number.

    Parameters
    ----------
    cell : str
        The cell, as :func:`first_non_number` names it.
    exc : Exception
        NumPy's refusal (its words kept: scikit-learn's checks look for them).
    who : str
        The estimator's name.

    Returns
    -------
    str
    """
    return (f"X has a value that is not a number ({cell}: {exc}); "
            f"{who} needs numbers: encode or drop it.")


def block_floats(block, who, block_info=None):
    """A row block of text or objects of a Dask ``X`` as float64, on its worker.

    A cell that is not a number is refused as in memory, by its row over all
    of ``X`` (within its row block when the blocks' sizes are unknown) and
    its column (NumPy's "could not convert string to float" named neither).

    Parameters
    ----------
    block : ndarray of shape (n_rows, n_columns)
    who : str
        The estimator's name.
    block_info : dict, optional
        Dask's description of the block (its position), given by ``map_blocks``.

    Returns
    -------
    ndarray of float64
    """
    try:
        return block.astype(np.float64)
    except (TypeError, ValueError) as exc:
        found = _first_non_number_index(block)
        if found is None or block.ndim != 2:
            raise
        (i, j), v = found
        (row0, _), (col0, _) = (block_info[0]["array-location"] if block_info
                                else ((0, 0), (0, 0)))
        row = (f"row {i} of row block {block_info[0]['chunk-location'][0]}"
               if block_info and row0 != row0 else f"row {int(row0) + i}")
        cell = f"{plain_value(v)!r} at {row}, column {int(col0) + j}"
        raise type(exc)(not_a_number_message(cell, exc, who)) from exc


def _first_cell(marks):
    """``"at row i, column j"`` of the first True of ``marks`` (1-D: the row only)."""
    index = np.unravel_index(int(np.argmax(marks)), marks.shape)
    return f"at row {index[0]}" + (f", column {index[1]}" if len(index) > 1 else "")


def first_bad_weight(weights):
    """What is wrong with the first weight of 1-D ``weights`` that is wrong, or None.

    scikit-learn's refusals ("Input sample_weight contains NaN", "Negative
    values in data passed to sample_weight", NumPy's "could not convert
    string to float") named no row; a target's missing value was named by
    row.

    Parameters
    ----------
    weights : array-like of shape (n,)
        Sample weights as given (a pandas Series of nullable floats too).

    Returns
    -------
    str or None
        ``"a missing value (NaN) at row 4 (1 in all)"``, ``"an infinite value
        (inf) at row 2 ..."``, ``"a negative value (-1.0) at row 7 ..."`` or
        ``"a value that is not a number ('x' at row 3)"``; None if none is
        found (or ``weights`` is not 1-D).
    """
    try:
        if hasattr(weights, "to_numpy"):  # (pandas: pd.NA is a missing value)
            w = weights.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        values = np.asarray(weights)
        cell = first_non_number(values) if values.ndim == 1 else None
        return None if cell is None else f"a value that is not a number ({cell})"
    if w.ndim != 1:
        return None
    for marks, what in ((np.isnan(w), "a missing value (NaN)"),
                        (np.isinf(w), "an infinite value"), (w < 0, "a negative value")):
        if marks.any():
            i = int(np.argmax(marks))
            value = "" if what.endswith("(NaN)") else f" ({w[i]})"
            return f"{what}{value} at row {i} ({int(marks.sum())} in all)"
    return None
