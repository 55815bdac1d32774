"""SLKL's options that are sequences of numbers (``nu`` and ``gamma_factors``) and
its solver's declared parameter constraints.

Private to :mod:`kernlearn.methods.slkl` (kept apart: that module is at its
size limit).
"""

from numbers import Integral, Real

import numpy as np


def coordinate_newton_constraints():
    """:class:`~kernlearn.methods.slkl.CoordinateNewton`'s declared parameter constraints.

    ``CoordinateNewton(max_iter=0)`` (or ``fit_slkl(max_iter=0)``) failed with
    ``KeyError: 'objective'``, ``max_iter=2.5`` with "'float' object cannot be
    interpreted as an integer", and a negative ``tol`` or ``refresh`` ran as
    given.  Built when a solve starts (see
    :func:`kernlearn.solvers._base.iteration_constraints`).

    Returns
    -------
    dict
        scikit-learn's format, checked by ``BaseSolver.check_params``.
    """
    from sklearn.utils._param_validation import Interval, StrOptions

    from ..solvers._base import iteration_constraints

    return iteration_constraints(
        lam=[Interval(Real, 0, None, closed="neither")],
        rule=[StrOptions({"newton", "exact"})],
        refresh=[Interval(Integral, 0, None, closed="left")],
        # (numpy.random.default_rng's seeds: a Generator is used as it is)
        random_state=[Interval(Integral, 0, None, closed="left"), np.random.Generator, None],
        callback=[callable, None],
        time_budget=[Interval(Real, 0, None, closed="left"), None],
        verbose=["verbose"], warn=["boolean"], label=[str])


def positive_numbers(name, values, allowed):
    """The entries of a non-empty sequence, each checked to be a positive finite number.

    Parameters
    ----------
    name : str
        The option's name, for the message.
    values : sequence
        The option's value.
    allowed : str
        What the option takes, for the message (``"'auto' or a sequence of
        positive numbers"``).

    Returns
    -------
    numbers : list of float

    Raises
    ------
    ValueError
        Naming the first entry that is not a positive finite number (a
        string, a nested sequence, a boolean, zero, a negative number, NaN or
        infinity), or saying that the sequence is empty.
    """
    values = list(values)
    if not values:
        raise ValueError(f"{name} is an empty sequence; it must be {allowed}.")
    for v in values:
        if not (isinstance(v, Real) and not isinstance(v, (bool, np.bool_))
                and np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be {allowed}; {v!r} in {name}={values!r} is "
                             "not a positive finite number.")
    return [float(v) for v in values]


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
        A positive finite number, ``"auto"``, or a non-empty sequence of
        positive finite numbers.

    Returns
    -------
    nu : float, "auto" or tuple of float
        ``"auto"`` and single numbers as given; a sequence as a tuple of
        floats in decreasing order.

    Raises
    ------
    ValueError
        Naming the entry that is not a positive finite number, before any
        fit: an entry's error came only once the values before it had been
        solved, and named it multiplied by the targets' mean square.
    """
    allowed = "a positive number, 'auto' or a sequence of positive numbers"
    if isinstance(nu, str):
        if nu != "auto":
            raise ValueError(f"nu must be {allowed}, got {nu!r}.")
        return nu
    if np.ndim(nu) == 0:
        return positive_numbers("nu", [nu], allowed)[0]
    return tuple(sorted(positive_numbers("nu", nu, allowed), reverse=True))
