"""Families of candidate columns (finite pools and infinite parametrised sets)."""

from .._component import Registry
from ._base import BaseFamily, Candidates
from .fourier import RandomFourierFeatures
from .gabor import GaborFeatures
from .nystrom import NystromColumns
from .explicit import AdditiveKernelExpansion
from .intersection import IntersectionKernelFeatures
from .polynomial import PolynomialPool
from .pool import FeaturePool

FAMILIES = Registry("family")
FAMILIES.register("pool")(FeaturePool)
FAMILIES.register("poly2")(PolynomialPool)
FAMILIES.register("additive")(AdditiveKernelExpansion)
FAMILIES.register("intersection")(IntersectionKernelFeatures)
FAMILIES.register("fourier")(RandomFourierFeatures)
FAMILIES.register("gabor")(GaborFeatures)
FAMILIES.register("nystrom")(NystromColumns)

__all__ = ["AdditiveKernelExpansion", "IntersectionKernelFeatures", "PolynomialPool", "BaseFamily", "Candidates", "FAMILIES", "FeaturePool", "GaborFeatures",
           "RandomFourierFeatures", "NystromColumns"]
