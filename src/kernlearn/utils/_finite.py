"""Where a matrix's first NaN or infinite value is.

The estimators (:func:`kernlearn.estimators._base.validate_data`), the data
file reader (:mod:`kernlearn.datafiles`) and the commands
(:mod:`kernlearn._cli_common`) each name such a value in their own words; the
search itself is :func:`first_non_finite`.  A fit's refusal of ``X``, in
memory or on row partitions (a Dask cluster, out of core), is one sentence,
:func:`non_finite_message`; on partitions the search runs on each partition
(:func:`block_first_non_finite`, on the workers) and only its few numbers
come back (:func:`first_non_finite_of_blocks`).  The module imports nothing
of kernlearn (so that all of them, and the workers, may use it), and SciPy
only when given a sparse matrix (the commands start without it).
It also holds the test of a finite number setting (:func:`is_finite_number`),
shared by the kernel rules and the histogram kernels' own checks.
"""

import math
import numbers

import numpy as np


def first_non_finite(X):
    """The first NaN or infinite value of ``X``, by row and then column.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_rows, n_columns)
        Numbers.  A sparse matrix's stored values are searched (its implicit
        zeros are finite).

    Returns
    -------
    tuple of (int, int, float, int) or None
        ``(row, column, value, count)``: the 0-based position of the first
        non-finite value in row-major order, that value, and how many
        non-finite values ``X`` holds in all; None if every value is finite.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D.
    TypeError
        If its values are not numbers (NumPy's ``isfinite`` refuses them).
    """
    if X.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got {X.ndim} dimension(s)")
    if not isinstance(X, np.ndarray) and hasattr(X, "tocoo"):
        import scipy.sparse as sp  # (only now: a sparse matrix means SciPy is loaded)

        if sp.issparse(X):
            return _first_stored(X)
    bad = ~np.isfinite(X)
    if not bad.any():
        return None
    # (argmax counts in C order whatever the memory layout: the first row wins)
    i, j = np.unravel_index(int(np.argmax(bad)), bad.shape)
    return int(i), int(j), X[i, j], int(np.count_nonzero(bad))


def _first_stored(X):
    """:func:`first_non_finite` of a SciPy sparse matrix."""
    if np.isfinite(X.data).all():  # (no conversion when all is well)
        return None
    coo = X.tocoo()
    k = np.flatnonzero(~np.isfinite(coo.data))
    if not k.size:  # (a DIA matrix's padding: stored, yet outside the matrix)
        return None
    # stored entries need not be in row order (CSC, or an unsorted COO)
    first = k[np.lexsort((coo.col[k], coo.row[k]))[0]]
    return int(coo.row[first]), int(coo.col[first]), coo.data[first], int(k.size)


def non_finite_message(found, who, row_label=None, column_name=None, row_block=None):
    """The sentence refusing ``X`` for its first NaN or infinite value.

    Parameters
    ----------
    found : tuple of (int, int, float, int)
        ``(row, column, value, count)`` as :func:`first_non_finite` gives it
        (the row counted over all of ``X``, or over its row block).
    who : str
        What needs finite values (an estimator's name, "the fit").
    row_label : object, optional
        The row's index label (a DataFrame's), shown when it is not the row.
    column_name : object, optional
        The column's name (a DataFrame's); its position otherwise.
    row_block : tuple of (int, bool), optional
        For one row block of ``X`` checked alone (a prediction by blocks):
        its number, and whether ``found``'s row is counted within it (the
        blocks' sizes unknown) rather than over all of ``X``; ``count`` is
        then the block's.

    Returns
    -------
    str
    """
    i, j, value, count = found
    what = "a missing value (NaN)" if np.isnan(value) else f"an infinite value ({value})"
    label = "" if row_label is None or row_label == i else f" (index {row_label!r})"
    column = repr(column_name) if column_name is not None else j
    counted, row = "in all", f"row {i}"
    if row_block is not None:
        number, local = row_block
        counted = "in that block" if local else f"in row block {number}"
        row = f"row {i} of row block {number}" if local else row
    return (f"X has {what} at {row}{label}, column {column} ({count} {counted}); "
            f"{who} needs a finite number in every cell: fill or drop it.")


def refuse_non_finite_outputs(values, X, who, what, names=None, row_block=None):
    """Refuse a model's outputs on finite ``X`` when one of them is NaN or infinite.

    Values of ``X`` finite but near float64's limit overflow in the model's
    arithmetic; the first such row is named, with the column of its largest
    value (:func:`kernlearn.estimators._base.finite_outputs` in memory, each
    row block of a Dask prediction on its worker).

    Parameters
    ----------
    values : ndarray of shape (n_rows,) or (n_rows, k)
        The outputs, one row per row of ``X``.
    X : ndarray or scipy sparse matrix of shape (n_rows, n_features) or None
        The rows the outputs are of (None: no column is named).
    who : str
        The estimator's name.
    what : str
        What the outputs are ("decision values").
    names : array-like of str, optional
        The columns' names.
    row_block : tuple of (int or None, int), optional
        For one row block of ``X``: its first row in ``X`` (None or NaN:
        unknown, the row is named within the block) and its number.

    Returns
    -------
    values : ndarray
        Unchanged.

    Raises
    ------
    ValueError
        If an output is NaN or infinite.
    """
    values = np.asarray(values)
    if values.dtype.kind != "f" or np.isfinite(values).all():
        return values
    bad = ~np.isfinite(values.reshape(values.shape[0], -1)).all(axis=1)
    i = int(np.argmax(bad))
    where = ""
    if X is not None and getattr(X, "ndim", 0) == 2 and X.shape[0] == values.shape[0]:
        row = X[i]
        row = row.toarray().ravel() if hasattr(row, "toarray") else np.asarray(row, float)
        j = int(np.argmax(np.abs(row)))
        column = repr(str(names[j])) if names is not None and j < len(names) else j
        where = f" (largest in column {column})"
    n = int(bad.sum())
    more = f" (and {n - 1} more row{'s' if n > 2 else ''})" if n > 1 else ""
    row = f"row {i}"
    if row_block is not None:
        start, number = row_block
        local = start is None or start != start  # (NaN: Dask's unknown chunk sizes)
        row = f"row {i} of row block {number}" if local else f"row {int(start) + i}"
        more = more and f"{more[:-1]} in row block {number})"
    raise ValueError(
        f"{who}'s {what} for {row} of X{more} are NaN or infinite: "
        f"its values{where} are finite but too large for float64 arithmetic in this "
        "model (they overflow); rescale X (other units) or drop such rows.")


def refuse_non_finite_block(block, who, start, number, names=None):
    """Refuse one row block of ``X`` that holds a NaN or infinite value.

    Parameters
    ----------
    block : ndarray or scipy sparse matrix of shape (n_rows, n_features)
    who : str
        What needs finite values (an estimator's name).
    start : int or None
        The block's first row in ``X`` (None: unknown, the row is named
        within the block).
    number : int
        The block's position among ``X``'s row blocks.
    names : array-like of str, optional
        The columns' names.

    Raises
    ------
    ValueError
        Naming the first such value's row and column.
    """
    found = first_non_finite(block)
    if found is None:
        return
    i, j, value, count = found
    local = start is None or start != start  # (NaN: Dask's unknown chunk sizes)
    row = i if local else int(start) + i
    name = names[j] if names is not None and j < len(names) else None
    raise ValueError(non_finite_message((row, j, value, count), who, column_name=name,
                                        row_block=(number, local)))


def checked_rows(block, *args, block_info=None, fn, who, names=None, what=None, post=None):
    """``fn(block, *args)`` once the block holds no NaN or infinite value.

    The function a prediction maps over a Dask array's row blocks
    (``map_blocks``, which passes ``block_info``): the in-memory prediction's
    checks of ``X`` and of its outputs, on the worker holding the block.

    Parameters
    ----------
    block : ndarray or scipy sparse matrix of shape (n_rows, n_features)
    *args
        Further arguments of ``fn`` (the blocks of other arrays of the map).
    block_info : dict, optional
        Dask's description of the block (its rows and position).
    fn : callable
        The prediction of a block; it must not carry the estimator (unpickling
        one imports scikit-learn on the worker).
    who : str
        The estimator's name, for the error.
    names : array-like of str, optional
        The columns' names.
    what : str, optional
        What ``fn``'s outputs are, when they are refused if NaN or infinite
        (:func:`refuse_non_finite_outputs`).
    post : callable, optional
        Applied to ``fn``'s outputs once checked (labels from decision values).

    Returns
    -------
    object
        ``fn(block, *args)``, or ``post`` of it.
    """
    start, number = None, 0
    if block_info is not None and 0 in block_info:
        start = block_info[0]["array-location"][0][0]
        number = block_info[0]["chunk-location"][0]
    refuse_non_finite_block(block, who, start, number, names)
    if isinstance(block, np.ndarray) and not block.flags.c_contiguous:
        # C-ordered, as the in-memory validation gives X (order="C"): a Dask
        # DataFrame's partitions are Fortran-ordered, and BLAS sums them in
        # another order (decision values differing in the last bits, labels on ties)
        block = np.ascontiguousarray(block)
    try:
        out = fn(block, *args)
    except ValueError as exc:
        if not hasattr(exc, "named"):
            raise
        # a row error of the model's, its row within the block (out_of_bounds="raise":
        # kernlearn.estimators._input_range): named in all of X
        raise exc.named(who, names, start, number) from None
    if what is not None:
        refuse_non_finite_outputs(out, block, who, what, names, (start, number))
    return out if post is None else post(out)


def block_refusal(block, *args, block_info, fn, who, names=None):
    """The error :func:`checked_rows` would raise for ``X``'s inputs in one block, or None.

    The first task of a prediction whose refusals must name the first
    offending row of ``X`` (:func:`gated_rows`): ``fn(block, *args)`` checks
    the inputs only (a regressor's training range with
    ``out_of_bounds="raise"``) and raises as the prediction would.

    Returns
    -------
    ValueError or None
        Naming the row over all of ``X`` (within the block if its place is
        unknown) and the column.
    """
    try:
        checked_rows(block, *args, block_info=block_info, fn=fn, who=who, names=names)
    except ValueError as exc:
        return exc
    return None


def earlier_refusal(before, here):
    """The refusal of the earliest block so far: ``before`` (of the blocks above
    this one, in row order) if any, else this block's ``here``."""
    return here if before is None else before


def gated_rows(refusal, block, *args, block_info, **check):
    """:func:`checked_rows` of a block once no block up to it is refused.

    ``refusal`` is :func:`earlier_refusal` over the blocks up to this one:
    every block's task that fails raises the error of the first refused
    block in row order, whichever of them a cluster finishes first (each
    block refusing its own rows named whichever block failed first, a matter
    of timing).
    """
    if refusal is not None:
        raise refusal
    return checked_rows(block, *args, block_info=block_info, **check)


def block_first_non_finite(block):
    """:func:`first_non_finite` of one row block, as a row of four numbers.

    Parameters
    ----------
    block : ndarray or scipy sparse matrix of shape (n_rows, n_columns)

    Returns
    -------
    ndarray of shape (1, 4)
        ``[[row, column, value, count]]`` within the block (the row local to
        it); ``count`` 0 if every value is finite.  A small fixed-size row, so
        that a cluster sends back a few numbers per partition.
    """
    found = first_non_finite(block)
    return np.array([[-1.0, -1.0, 0.0, 0.0] if found is None else found], dtype=np.float64)


def first_non_finite_of_blocks(parts, bounds):
    """:func:`first_non_finite` of a matrix from its row blocks' results.

    Parameters
    ----------
    parts : array-like of shape (n_blocks, 4)
        :func:`block_first_non_finite` of each block, in row order.
    bounds : array-like of int of shape (n_blocks + 1,)
        The blocks' row offsets.

    Returns
    -------
    tuple of (int, int, float, int) or None
        As :func:`first_non_finite`, the row counted over all blocks.
    """
    parts = np.asarray(parts, dtype=np.float64).reshape(-1, 4)
    bad = np.flatnonzero(parts[:, 3] > 0)
    if not bad.size:
        return None
    p = int(bad[0])  # (the first block holding one holds the first row with one)
    row, col, value, _ = parts[p]
    return (int(bounds[p]) + int(row), int(col), float(value), int(parts[:, 3].sum()))


def missing_rows_message(i, k, what="a missing value", name="y", label=None):
    """The in-memory fit's words for missing targets: row ``i``, first of ``k`` rows
    holding ``what`` (``label``: its index label, when not ``i``).

    Parameters
    ----------
    i, k : int
    what : str, default="a missing value"
    name : str, default="y"
    label : object, optional

    Returns
    -------
    str
    """
    return (f"{name} has {what} at row {i}"
            + ("" if label is None or label == i else f" (index {label!r})")
            + f" ({k} row{'s' if k > 1 else ''} with one in all); drop those rows or fill them.")


def is_number(value):
    """Whether ``value`` is an int or a float (numpy's included), not a bool.

    (A ``Fraction`` is a ``numbers.Real`` the kernels' in-place float
    arithmetic cannot take: "Cannot cast ufunc 'add' output from dtype('O')".)
    """
    return (isinstance(value, (numbers.Integral, float, np.floating))
            and not isinstance(value, (bool, np.bool_)))


def is_finite_number(value):
    """An int or float that is finite (a 400-digit int, beyond the float
    range, is not: ``np.isfinite`` refused it with a bare TypeError)."""
    if not is_number(value):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:  # (an int beyond the float range: not a usable setting)
        return False
