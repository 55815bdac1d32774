"""A warm-started GrFL run left as it was when its extension does not finish.

``InfiniteFeature*(warm_start=True)`` keeps the fit's run (:class:`~.grfl.GrFL`)
and extends it on the next fit.  An extension changes the run in place: the
new columns are added before the master is re-solved, and the random
generator advances.  A fit interrupted part way (Ctrl-C, a ``MemoryError``)
kept the previous model, but the run it would continue from held columns
whose master was never solved, and the next warm fit returned another model
than the uninterrupted fits (decision values 0.37 apart on 120 rows).
"""

import contextlib
import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["GrFLWarmStart", "continue_path", "kept_on_failure", "kept_path"]


def kept_path(warm, key, random_state):
    """The kept run a warm fit continues, or ``None`` when it starts over.

    The run continues when the fit's data and settings hash to its ``key``
    and, for a seed given as a random generator, when that generator is the
    one the run draws from (its state advances: the same object continues).
    The object is matched, not its ``id()``: a pickled or deep-copied
    estimator holds its own copy of the generator, the one its copied run
    draws from, and started over from that advanced generator (another model
    than the original's warm refit).

    Parameters
    ----------
    warm : GrFLWarmStart or None
        What the previous fit kept.
    key : str
        Hash of this fit's data and settings.
    random_state : int, RandomState, Generator or None
        This fit's seed.

    Returns
    -------
    path : GrFL or None
    """
    if warm is None or warm.key != key:
        return None
    if isinstance(random_state, (np.random.RandomState, np.random.Generator)) and \
            warm.path.rng is not random_state:
        return None
    return warm.path


def continue_path(path, max_features, time_budget, verbose):
    """Extend a kept run to ``max_features`` for a warm fit.

    A run whose pricing found no violating feature stopped where a cold run
    stops at any larger budget (Algorithm 1 ends there): it is kept as it is.
    Extending it again drew new candidates and added features, so each
    identical warm refit changed the model (a 2-feature model became a
    5-feature one with other labels), which no cold fit gives.  A run
    stopped by its feature or time budget is extended; one stopped part way
    is left as it was (:func:`kept_on_failure`).

    Parameters
    ----------
    path : GrFL
        The kept run (``max_features`` is at least its size).
    max_features : int
        The new feature budget.
    time_budget : float or None
    verbose : int
        This fit's settings (the run's others are those of the hash).

    Returns
    -------
    path : GrFL
    """
    if path.stop_reason == "no_violation":
        path._budget = max_features  # (the model's max_features_: this fit's budget)
        return path
    path.time_budget, path.verbose = time_budget, verbose
    with kept_on_failure(path):  # (a fit stopped part way continues from it later)
        return path.extend(max_features)


@contextlib.contextmanager
def kept_on_failure(path):
    """Put ``path`` back as it was when the block raises (any exception).

    Its attributes are restored, its lists (the active features and their
    scales) refilled, and its random generator rewound.  The column and Gram
    buffers keep what the block wrote past the run's active columns, which
    the run never reads.

    Parameters
    ----------
    path : GrFL
        A started run.

    Yields
    ------
    path : GrFL
    """
    before = dict(vars(path))
    lists = {key: list(value) for key, value in before.items() if isinstance(value, list)}
    rng = path.rng
    # (the generator itself is rewound, not replaced: a user's generator is
    # identified by the object, see kept_path)
    generator = isinstance(rng, np.random.Generator)
    rng_state = rng.bit_generator.state if generator else rng.get_state()
    try:
        yield path
    except BaseException:
        vars(path).clear()
        vars(path).update(before)
        for key, items in lists.items():
            before[key][:] = items
        if generator:
            rng.bit_generator.state = rng_state
        else:
            rng.set_state(rng_state)
        raise


@dataclass
class GrFLWarmStart:
    """A GrFL run kept for a warm start, with the key of what it solved.

    Parameters
    ----------
    key : str
        Hash of the data and of every setting that changes the problem or
        the path (all of :func:`~kernlearn.methods.grfl.fit_grfl`'s arguments except
        ``max_features``, ``time_budget`` and ``verbose``).
    path : GrFL
        The run (active columns, master state, random generator).
    """

    key: str
    path: object


def _setting_key(value):
    """A hashable stand-in for a setting (a random generator: which one, :func:`kept_path`)."""
    if value is None or isinstance(value, (numbers.Number, str, np.ndarray)):
        return value
    if isinstance(value, (np.random.RandomState, np.random.Generator)):
        return "rng"  # its state advances: the same object continues
    return value
