"""Predictions by blocks of rows: memory bounded whatever the number of new rows.

Scoring new rows builds, per row, a vector as long as the model's learned
columns (kernel values against landmarks or training rows, random features).
Built for all rows at once that is an ``n_new x n_columns`` array: 100,000
rows against 2,000 landmarks are 1.6 GB.  Every estimator that predicts
through such an array calls :func:`by_row_blocks` instead, so that the
array is at most ``PREDICT_ROWS x n_columns`` at a time.
"""

import numpy as np

__all__ = ["PREDICT_ROWS", "by_row_blocks"]

#: New rows scored at once in predictions (a block of PREDICT_ROWS x n_columns).
PREDICT_ROWS = 2048


def by_row_blocks(score, n, rows=None):
    """``score(slice(0, n))``, computed by blocks of ``rows`` rows.

    Each row's arithmetic is the block's own, so the result is the one of a
    single call whenever ``score`` treats rows independently (it must).

    Parameters
    ----------
    score : callable
        ``score(sl)`` returns the values (stacked along axis 0) of the rows
        ``sl`` (a ``slice``); it slices its own inputs.
    n : int
        Number of rows.
    rows : int, optional
        Rows per block (default: :data:`PREDICT_ROWS`, read at each call).

    Returns
    -------
    ndarray
        ``score`` of all the rows, blocks concatenated along axis 0 (one call,
        not copied, when ``n <= rows``).
    """
    rows = PREDICT_ROWS if rows is None else rows
    if n <= rows:
        return score(slice(0, n))
    return np.concatenate([score(slice(s, min(n, s + rows))) for s in range(0, n, rows)])
