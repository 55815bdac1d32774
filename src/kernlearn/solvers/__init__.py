"""Restricted-master solvers and their name registry ``SOLVERS``."""

from .._component import Registry
from ._base import BaseSolver, History, SolverResult, check_compatible
from .apg import APG

SOLVERS = Registry("solver")
SOLVERS.register("apg")(APG)

__all__ = ["APG", "BaseSolver", "History", "SOLVERS", "SolverResult", "check_compatible"]
