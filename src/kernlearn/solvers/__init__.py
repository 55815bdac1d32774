"""Restricted-master solvers and their name registry ``SOLVERS``.

Every solver has the signature ``solve(problem, warm_state=None) ->
SolverResult`` (see :mod:`kernlearn.solvers._base`).
"""

from .._component import Registry
from ._base import (
    BaseSolver,
    History,
    Problem,
    SolverResult,
    SolverState,
    check_compatible,
)
from ._dirty import DirtyProblem, DirtyState, pad_state
from .admm import ADMM, ADMMState
from .apg import APG, APGState
from .choice import MASTER_REASONS, MasterChoice, choose_master
from .grfl_fista import FISTAState, GrFLFISTA
from .prox_newton import ProxNewton, ProxNewtonState
from .simplemkl import SimpleMKL, SimpleMKLState

SOLVERS = Registry("solver")
SOLVERS.register("apg")(APG)
SOLVERS.register("prox_newton")(ProxNewton)
SOLVERS.register("admm")(ADMM)
SOLVERS.register("grfl_fista")(GrFLFISTA)
SOLVERS.register("simplemkl")(SimpleMKL)

__all__ = [
    "ADMM", "ADMMState", "APG", "APGState", "BaseSolver", "DirtyProblem", "DirtyState",
    "FISTAState", "GrFLFISTA", "History", "MASTER_REASONS", "MasterChoice", "Problem",
    "ProxNewton", "ProxNewtonState", "SOLVERS", "SimpleMKL", "SimpleMKLState", "SolverResult", "SolverState",
    "check_compatible", "choose_master", "pad_state",
]
