"""Small helpers for the wording of error messages."""

import numpy as np


def plain_value(v):
    """``v`` as a Python scalar if it is a NumPy one, for messages.

    NumPy 2 writes a scalar's type in its ``repr`` (``np.str_('yes')``,
    ``np.int64(4)``); a message names a label as the user wrote it.

    Parameters
    ----------
    v : object

    Returns
    -------
    object
    """
    return v.item() if isinstance(v, np.generic) else v
