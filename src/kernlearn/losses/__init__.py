"""Losses (datafits) on margins and their name registry ``LOSSES``."""

from .._component import Registry
from ._base import BaseLoss, WeightedLoss, weighted
from .binary import Hinge, Logistic, SquaredHinge
from .multiclass import MulticlassHinge
from .regression import Square

LOSSES = Registry("loss")
for _name, _cls in [
    ("squared_hinge", SquaredHinge),
    ("logistic", Logistic),
    ("hinge", Hinge),
    ("square", Square),
    ("multiclass_hinge", MulticlassHinge),
]:
    LOSSES.register(_name)(_cls)


def get_loss(spec, allowed=None):
    """Return a loss instance from a name or an instance.

    Parameters
    ----------
    spec : str or BaseLoss
        Registered name (see ``LOSSES.names()``) or a loss object.
    allowed : iterable of str, optional
        Names accepted by the caller.

    Returns
    -------
    loss : BaseLoss
    """
    loss = LOSSES.resolve(spec, allowed=allowed)
    if not isinstance(loss, BaseLoss):
        raise TypeError(f"loss must be a name or a BaseLoss, got {type(loss).__name__}.")
    return loss


__all__ = ["BaseLoss", "Hinge", "LOSSES", "Logistic", "MulticlassHinge", "Square", "SquaredHinge", "WeightedLoss", "get_loss", "weighted"]
