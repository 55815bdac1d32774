"""Penalties on grouped weight vectors and their name registry ``PENALTIES``."""

from .._component import Registry
from ._base import BasePenalty
from .group import GroupL1L2, L1Linf, L1Lq, PerTaskL1Lq
from .separable import L1
from .squared import SquaredGroupL1, SquaredGroupNorm2p

PENALTIES = Registry("penalty")
for _name, _cls in [
    ("l1", L1),
    ("group_l1_l2", GroupL1L2),
    ("squared_group_l1", SquaredGroupL1),
    ("squared_group_norm_2p", SquaredGroupNorm2p),
    ("l1_linf", L1Linf),
    ("l1_lq", L1Lq),
    ("per_task_l1_lq", PerTaskL1Lq),
]:
    PENALTIES.register(_name)(_cls)


def get_penalty(spec, allowed=None, **kwargs):
    """Return a penalty instance from a name or an instance.

    Parameters
    ----------
    spec : str or BasePenalty
        Registered name (see ``PENALTIES.names()``) or a penalty object.
    allowed : iterable of str, optional
        Names accepted by the caller.
    **kwargs : dict
        Constructor arguments when ``spec`` is a name.

    Returns
    -------
    penalty : BasePenalty
    """
    pen = PENALTIES.resolve(spec, allowed=allowed, **kwargs)
    if not isinstance(pen, BasePenalty):
        raise TypeError(
            f"penalty must be a name or a BasePenalty, got {type(pen).__name__}."
        )
    return pen


__all__ = ["BasePenalty", "GroupL1L2", "L1", "L1Linf", "L1Lq", "PENALTIES", "PerTaskL1Lq", "SquaredGroupL1", "SquaredGroupNorm2p", "get_penalty"]
