"""The outputs of a classifier fit without its weighed-out classes.

A class whose rows all weigh zero is left out of the fit with its rows
(:func:`~kernlearn.estimators._base.check_weighted_classes`); the one-vs-rest
estimators fit the others' codes and give the model one output per class.
"""

import numpy as np


def present_outputs(codes, absent):
    """The +-1 one-vs-rest ``codes`` of the classes left in a fit.

    A class whose rows all weigh zero has, on the rows kept, the code -1
    everywhere: a column of its own that the fit without the rows does not
    have, and that moved the others' model where outputs share it (the
    low-rank kernel's common weights: 0.08 on the decision values and other
    predictions).  Its column is left out; two classes left are one binary
    column, the second's (the coding of a two-class fit).

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_classes)
        +1 on a row's class, -1 elsewhere.
    absent : ndarray of int or None
        Positions of the classes weighed out (``check_weighted_classes``).

    Returns
    -------
    ndarray of shape (n_samples, n_outputs)
        ``codes`` itself when no class is absent.
    """
    if absent is None:
        return codes
    present = np.setdiff1d(np.arange(codes.shape[1]), absent)
    return codes[:, present[1:]] if len(present) == 2 else codes[:, present]


def class_outputs(values, absent, n_classes, axis=-1):
    """``values`` of the outputs of :func:`present_outputs`, one per class.

    The absent classes' outputs are 0 (their decision values are set below
    the others' at prediction, ``below_others``); a binary output ``f`` is
    ``-f`` and ``f`` for the two classes left (one-vs-rest codes of two
    classes are each other's negatives, so the arg max is the sign's class).

    Parameters
    ----------
    values : ndarray
        One entry per fitted output along ``axis``.
    absent : ndarray of int or None
    n_classes : int
    axis : int, default=-1

    Returns
    -------
    ndarray
        ``values`` itself when no class is absent, else with ``n_classes``
        entries along ``axis``.
    """
    if absent is None:
        return values
    values = np.moveaxis(np.asarray(values), axis, -1)
    present = np.setdiff1d(np.arange(n_classes), absent)
    out = np.zeros(values.shape[:-1] + (n_classes,), dtype=values.dtype)
    if len(present) == 2 and values.shape[-1] == 1:
        out[..., present[0]], out[..., present[1]] = -values[..., 0], values[..., 0]
    else:
        out[..., present] = values
    return np.moveaxis(out, -1, axis)


def class_attributes(est, absent, **axes):
    """``est``'s fitted arrays named in ``axes`` (name: the outputs' axis) through
    :func:`class_outputs`, one output per class of ``est.classes_``."""
    if absent is None:
        return
    for name, axis in axes.items():
        setattr(est, name, class_outputs(getattr(est, name), absent, len(est.classes_),
                                         axis=axis))
