"""Families of candidate columns (finite pools and infinite parametrised sets)."""

from .._component import Registry
from ._base import BaseFamily, Candidates
from .fourier import RandomFourierFeatures
from .gabor import GaborFeatures
from .nystrom import NystromColumns
from .pool import FeaturePool

FAMILIES = Registry("family")
FAMILIES.register("pool")(FeaturePool)
FAMILIES.register("fourier")(RandomFourierFeatures)
FAMILIES.register("gabor")(GaborFeatures)
FAMILIES.register("nystrom")(NystromColumns)

__all__ = ["BaseFamily", "Candidates", "FAMILIES", "FeaturePool", "GaborFeatures",
           "RandomFourierFeatures", "NystromColumns"]
