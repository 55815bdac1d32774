"""Where a matrix's first NaN or infinite value is.

The estimators (:func:`kernlearn.estimators._base.validate_data`), the data
file reader (:mod:`kernlearn.datafiles`) and the commands
(:mod:`kernlearn._cli_common`) each name such a value in their own words; the
search itself is this one function.  It imports nothing of kernlearn, so that
all three may use it, and SciPy only when given a sparse matrix (the commands
start without it).
"""

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
