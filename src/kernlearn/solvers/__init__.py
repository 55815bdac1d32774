"""Restricted-master solvers and their name registry ``SOLVERS``."""

from .._component import Registry
from ._base import BaseSolver, History, SolverResult, check_compatible
from .admm import ADMM
from .apg import APG
from .grfl_fista import GrFLFISTA
from .coordinate_newton import CoordinateNewton

SOLVERS = Registry("solver")
SOLVERS.register("apg")(APG)
SOLVERS.register("admm")(ADMM)
SOLVERS.register("grfl_fista")(GrFLFISTA)
SOLVERS.register("coordinate_newton")(CoordinateNewton)

__all__ = ["ADMM", "APG", "GrFLFISTA", "CoordinateNewton", "BaseSolver", "History", "SOLVERS", "SolverResult", "check_compatible"]
