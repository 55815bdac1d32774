"""Families of candidate columns (finite pools and infinite parametrised sets)."""

from .._component import Registry
from ._base import BaseFamily, Candidates
from .pool import FeaturePool

FAMILIES = Registry("family")
FAMILIES.register("pool")(FeaturePool)

__all__ = ["BaseFamily", "Candidates", "FAMILIES", "FeaturePool"]
