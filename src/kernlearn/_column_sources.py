"""Where FGM's scaled column blocks came from: the raw columns and their scales.

FGM's master shifts an active column far from zero to zero
(:func:`kernlearn.methods._fgm_rows.shifted_block`).  Shifting the scaled
column ``fl(x * lam)`` keeps its rounding: at ``x = 1e9 + 1e-3 z`` the scaled
values sit near 1e12, whose spacing (1.2e-4) is a ten-thousandth of the
spread, and the rows round differently when ``lam``'s last bit differs (as it
does between the in-memory and the row-block or Dask standardisation sums):
coefficients 4e-5 apart.  ``(x - c) * lam`` with ``c`` near ``x`` is exact up to
one rounding of the small result, the same on every route.  The blocks are
plain arrays (the solvers read them), so their origin is kept here, by
identity, for as long as the block lives.
"""

import weakref

__all__ = ["register_source", "source_of"]

_SOURCES = {}


def register_source(block, raw, weights):
    """Remember that ``block`` is ``raw() * weights`` (column by column).

    Parameters
    ----------
    block : ndarray, sparse matrix or RowFutures
        A scaled column block.
    raw : callable
        ``raw()`` returns the unscaled columns, on the block's rows (an
        ndarray or sparse matrix; on a cluster, RowFutures of the partitions).
    weights : ndarray of shape (n_columns,)
        The columns' scales.

    Returns
    -------
    block
        The same object.
    """
    key = id(block)
    _SOURCES[key] = (weakref.ref(block, lambda _ref: _SOURCES.pop(key, None)), raw, weights)
    return block


def source_of(block):
    """``(raw, weights)`` registered for ``block`` (this very object), or None.

    Parameters
    ----------
    block : object
        A column block.

    Returns
    -------
    tuple or None
    """
    entry = _SOURCES.get(id(block))
    if entry is None or entry[0]() is not block:
        return None
    return entry[1], entry[2]
