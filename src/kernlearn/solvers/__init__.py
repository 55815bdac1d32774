"""Restricted-master solvers and their name registry ``SOLVERS``."""

from .._component import Registry
from ._base import BaseSolver, History, SolverResult, check_compatible
from .admm import ADMM
from .apg import APG
from .grfl_fista import GrFLFISTA

SOLVERS = Registry("solver")
SOLVERS.register("apg")(APG)
SOLVERS.register("admm")(ADMM)
SOLVERS.register("grfl_fista")(GrFLFISTA)

__all__ = ["ADMM", "APG", "GrFLFISTA", "BaseSolver", "History", "SOLVERS", "SolverResult", "check_compatible"]
