"""GrFL's restricted master: the problem on the active columns and the one call into a solver.

Kept apart from :mod:`kernlearn.methods.grfl` (the path: pricing, budgets, level
selection) so that the in-memory and the Dask paths share one problem class and
one place where an unconverged final master is reported.
"""

import warnings

from sklearn.exceptions import ConvergenceWarning

from ..solvers._dirty import DirtyProblem

__all__ = ["penalty_level", "solve_master"]


def penalty_level(penalty):
    """Regularisation level :math:`\\lambda` of a penalty: its ``alpha``, else 1.

    A penalty without ``alpha`` (a user's norm with its level built in) is
    used as it is: its ``dual_norm`` is then that of the whole penalty, and a
    zero feature violates the optimality conditions when that dual norm
    exceeds 1 (paper 000, eq. (7) with the level folded in).

    Parameters
    ----------
    penalty : BasePenalty

    Returns
    -------
    level : float
    """
    return float(getattr(penalty, "alpha", 1.0))


class _GrFLProblem(DirtyProblem):
    """The restricted master with levels read by :func:`penalty_level`."""

    def reg_scale(self):
        """Smallest regularisation level, the scale of the KKT measure."""
        lams = [penalty_level(self.penalty_p)]
        if self.has_shared:
            lams.append(penalty_level(self.penalty_s))
        return max(min(lams), 1e-12)


def solve_master(solver, problem, state, exact=False):
    """Run the restricted-master solver once (the only call into a master).

    Parameters
    ----------
    solver : BaseSolver
        ADMM, FISTA or any solver taking a :class:`DirtyProblem`.
    problem : DirtyProblem
        The restricted problem on the active columns.
    state : dict or None
        The previous solve's state, padded to the active columns.
    exact : bool, default=False
        A solve meant to reach the solver's ``tol`` (not a truncated path
        step): a ``ConvergenceWarning`` says when it does not.

    Returns
    -------
    result : SolverResult
    """
    res = solver.solve(problem, state)
    if exact and not res.converged:
        # named as the estimators name them: the master's are not theirs
        warnings.warn(f"GrFL's master stopped after max_iter={solver.max_iter} without "
                      f"meeting tol={solver.tol} (the estimator's inner_max_iter and "
                      "inner_tol); increase inner_max_iter.", ConvergenceWarning)
    return res
