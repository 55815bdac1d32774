"""The ``nu`` of SLKL as given: one value, ``"auto"`` or a path of values.

Private to :mod:`kernlearn.methods.slkl` (kept apart: that module is at its
size limit).
"""

from numbers import Real

import numpy as np


def nu_values(nu):
    """Check ``nu`` and put a path of values in the order the path rule needs.

    The path rule of :func:`kernlearn.methods.slkl._solve_one` (stop once the
    leave-one-out error rises, keep the sparsest value within a fraction of a
    standard error of the smallest) reads the values from the largest (the
    sparsest model) down; a sequence in another order chose by another rule
    (``[1e-3, 0.01, 0.1, 1.0]`` kept 1e-3 where ``[1.0, 0.1, 0.01, 1e-3]``
    kept 0.01), so the values are sorted, largest first.

    Parameters
    ----------
    nu : float, "auto" or sequence of float
        A positive finite number, ``"auto"``, or a non-empty sequence of them.

    Returns
    -------
    nu : float, "auto" or tuple of float
        ``"auto"`` and single numbers as given; a sequence as a tuple of
        floats in decreasing order.

    Raises
    ------
    ValueError
        Naming the entry that is not a positive finite number (an empty
        sequence, a string, a nested sequence, zero, a negative number, NaN
        or infinity), before any fit: an entry's error came only once the
        values before it had been solved, and named it multiplied by the
        targets' mean square.
    """
    if isinstance(nu, str):
        if nu != "auto":
            raise ValueError(f"nu must be 'auto', a positive number or a sequence of "
                             f"them, got {nu!r}.")
        return nu
    if np.ndim(nu) == 0:
        values, single = [nu], True
    else:
        values, single = list(nu), False
        if not values:
            raise ValueError("nu is an empty sequence: give the values of the path "
                             "(or nu='auto').")
    for v in values:
        ok = isinstance(v, Real) and not isinstance(v, bool) and np.isfinite(v) and v > 0
        if not ok:
            raise ValueError(f"nu must be a positive number, 'auto' or a sequence of "
                             f"positive numbers; {v!r} in nu={nu!r} is not a positive "
                             "finite number.")
    if single:
        return float(values[0])
    return tuple(sorted((float(v) for v in values), reverse=True))
