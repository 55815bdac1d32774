"""GrFL's restricted master: the problem on the active columns and the one call into a solver.

Kept apart from :mod:`kernlearn.methods.grfl` (the path: pricing, budgets, level
selection) so that the in-memory and the Dask paths share one problem class and
one place where an unconverged final master is reported; with the model without
features (:func:`intercept_only`) and the paper's scale of the levels
(:func:`paper_loss_factor`).
"""

import copy
import functools
import operator
import re

import numpy as np
from scipy.optimize import minimize_scalar
from sklearn.exceptions import ConvergenceWarning

from ..solvers._dirty import DirtyProblem
from ..utils._warnings import run_collected, warn

__all__ = ["block_norms", "capped_solver", "intercept_only", "n_kept", "n_params",
           "one_master_warning", "paper_loss_factor", "penalty_level", "prune",
           "solve_master"]

# what one unconverged master's warning says it missed (summed by one_master_warning)
_MISSED = re.compile(r"^GrFL's master stopped after (max_iter=\S+) without meeting "
                     r"(.*); increase inner_max_iter\.$")
# a path stopped on its time budget (colgen's words), summed over the paths
_TIMED_OUT = re.compile(r"^(.* stopped on time_budget=\S+ s after )(\d+)( .*?)(, before .*)$")


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


def block_norms(H):
    """Euclidean norm of each candidate's ``(group_size, T)`` block of ``H``.

    The squares of a block summed in order, as ``np.add.reduceat`` sums
    them; a block of two entries (a cos/sin pair, one task: every pricing
    step of a Fourier regression or binary fit) without its index array.

    Parameters
    ----------
    H : ndarray of shape (k, group_size, T)

    Returns
    -------
    ndarray of shape (k,)
    """
    k, gs, T = H.shape
    w = H.ravel()
    if gs * T == 2:
        w2 = w * w
        return np.sqrt(w2[0::2] + w2[1::2])
    return np.sqrt(np.add.reduceat(w * w, np.arange(0, w.size, gs * T)))


def capped_solver(solver, path_iter, path_sweeps, cached=None):
    """The solver of a path's intermediate masters: ``solver`` capped at
    ``path_iter`` iterations (and ``path_sweeps`` coordinate sweeps).

    One copy per path, not one per outer iteration, while the solver's
    attributes are the same objects (what a shallow copy would hold).

    Parameters
    ----------
    solver : BaseSolver
        The path's solver (with ``max_iter``).
    path_iter, path_sweeps : int
        The caps.
    cached : tuple or None
        What the last call returned, if any.

    Returns
    -------
    tuple
        ``(solver, capped, path_iter, names, values)``: the capped copy
        second, the whole tuple to pass back as ``cached``.
    """
    attrs = vars(solver)
    names, values = tuple(attrs), tuple(attrs.values())
    # (compared by C loops: a generator of pairs was a tenth of a master's set-up)
    if (cached is not None and cached[0] is solver and cached[2] == path_iter
            and cached[3] == names and all(map(operator.is_, values, cached[4]))):
        return cached
    capped = copy.copy(solver)
    capped.max_iter = min(int(solver.max_iter), int(path_iter))
    if hasattr(capped, "max_sweeps"):
        # an intermediate Newton master takes a few steps anyway: any
        # number of coordinate sweeps gives a descent direction, and the
        # last ones (up to 1000 on correlated Fourier columns) buy little
        capped.max_sweeps = min(int(solver.max_sweeps), path_sweeps)
    return solver, capped, path_iter, names, values


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
        Proximal Newton (:class:`~kernlearn.solvers.grfl_newton.GrFLNewton`,
        the default), ADMM, FISTA or any solver taking a :class:`DirtyProblem`.
    problem : DirtyProblem
        The restricted problem on the active columns.
    state : DirtyState or None
        The previous solve's state, padded to the active columns
        (:func:`~kernlearn.solvers._dirty.pad_state`).
    exact : bool, default=False
        A solve meant to reach the solver's ``tol`` (not a truncated path
        step): a ``ConvergenceWarning`` says when it does not.

    Returns
    -------
    result : SolverResult
    """
    res = solver.solve(problem, state)
    if exact and not res.converged:
        # named as the estimators name them: the master's are not theirs (the
        # folds choosing lambda_p="auto" loosen the tolerance: not the user's then)
        tol = getattr(solver, "tol_origin", "inner_tol")
        warn(f"GrFL's master stopped after max_iter={solver.max_iter} without "
             f"meeting tol={solver.tol} (the estimator's inner_max_iter and "
             f"{tol}); increase inner_max_iter.", ConvergenceWarning)
    return res


def one_master_warning(fit):
    """``fit`` with the warnings of its unconverged masters (:func:`solve_master`)
    summed up in one ``ConvergenceWarning``, given when it returns.

    A fit solves many masters (every fold's and every path's, at each level):
    one warning per capped solve gave a user 4 to 52 from one fit, where the
    other estimators say it once (FGM: "N of M master solves stopped").  Each
    tolerance missed (the folds' loosened one, the user's) and its count are
    named; any other warning passes once (the averaged paths each gave the
    same time-budget warning).

    Parameters
    ----------
    fit : callable

    Returns
    -------
    callable
    """
    def give(caught, error):  # (the fit's error, if it raised, propagates after)
        missed, cap, passed, timed = {}, None, set(), []
        for message, category in caught:
            m = _MISSED.match(message) if category is ConvergenceWarning else None
            t = _TIMED_OUT.match(message) if category is ConvergenceWarning else None
            if t is not None:
                timed.append(t)
            elif m is None:
                if (message, category) not in passed:
                    passed.add((message, category))
                    warn(message, category, during=error)
            else:
                cap = m.group(1)
                missed[m.group(2)] = missed.get(m.group(2), 0) + 1
        if missed:
            counts = ", and ".join(what + (f" in {k} solves" if k > 1 else "")
                                   for what, k in missed.items())
            warn(f"GrFL's master stopped after {cap} without meeting {counts}; "
                 "increase inner_max_iter.", ConvergenceWarning, during=error)
        if timed:
            # (one per path: the averaged paths, stopped after 0 and 1 outer
            # iterations, gave two warnings of one time budget)
            its = sorted({int(t.group(2)) for t in timed})
            span = str(its[0]) if len(its) == 1 else f"{its[0]} to {its[-1]}"
            where = f" (in {len(timed)} paths)" if len(timed) > 1 else ""
            warn(f"{timed[0].group(1)}{span}{timed[0].group(3)}{where}"
                 f"{timed[0].group(4)}", ConvergenceWarning, during=error)

    @functools.wraps(fit)
    def run(*args, **kwargs):
        return run_collected(lambda: fit(*args, **kwargs), give)
    return run


def paper_loss_factor(loss):
    r"""Ratio of paper 000's loss to ours, to read :math:`\lambda` on the paper's scale.

    The paper's square and squared hinge losses are :math:`a_t^\top a_t` and
    :math:`(a_t)_+^\top (a_t)_+` (Table 2, eq. (18)), twice our
    :math:`\tfrac12 (y - m)^2` and :math:`\tfrac12 \max(0, 1 - ym)^2`; its
    logistic loss :math:`\log(1 + e^{-ym})` is ours.  With ``c`` this factor,
    the paper's objective (1) at :math:`\lambda_p, \lambda_s` is ``c`` times
    ours at :math:`\lambda_p / c, \lambda_s / c`: same minimisers.

    Parameters
    ----------
    loss : BaseLoss
        One of the square, squared hinge or logistic losses.

    Returns
    -------
    c : float

    Raises
    ------
    ValueError
        For a loss the paper does not define.
    """
    from ..losses import Logistic, Square, SquaredHinge

    for cls, c in ((SquaredHinge, 2.0), (Square, 2.0), (Logistic, 1.0)):
        if type(loss) is cls:
            return c
    raise ValueError(
        "lambda_scale='paper' is defined for the square, squared hinge and logistic "
        f"losses of paper 000, not for {type(loss).__name__}."
    )


def intercept_only(loss, y):
    """Bias minimising :math:`\\sum_i \\ell(b, y_i)` (the model with no feature).

    Parameters
    ----------
    loss : BaseLoss
        Margin loss.
    y : ndarray of shape (n,)
        Targets of one task.

    Returns
    -------
    b : float
        The optimal constant margin.
    """
    res = minimize_scalar(lambda b: float(loss.value(np.full(len(y), b), y).sum()))
    return float(res.x)


def _kept_groups(path):
    """A path's weights ``U, us, b``, ``U + us`` and which features have a non-zero
    weight in some task."""
    gs, T = path.gs, path.T
    U, us, b = path.coefficients()
    coef_full = U + us[:, None]
    keep_group = (np.abs(coef_full).reshape(-1, gs * T).max(axis=1) > 0) if U.shape[0] \
        else np.zeros(0, bool)
    return U, us, b, coef_full, keep_group


def n_kept(path):
    """The number of features :func:`prune` keeps."""
    return int(np.count_nonzero(_kept_groups(path)[4]))


def n_params(path):
    """Length of the rows of ``path.features`` (a span's completed ones: its
    ``complete.n_params``)."""
    if path._seed is not None:
        return path._span[2].n_params
    return len(path.params[0]) if path.params else path.family.sample(1, 0).shape[1]


def prune(path, out=None):
    """Result fields of a path, keeping features with a non-zero weight in some task
    (their parameters written into ``out`` if given, ``n_kept(path)`` rows)."""
    gs = path.gs
    U, us, b, coef_full, keep_group = _kept_groups(path)
    keep_col = np.repeat(keep_group, gs)
    return dict(
        family=path.family, features=path.features(np.flatnonzero(keep_group), out=out),
        feature_scales=np.stack(path.scales)[keep_group] if U.shape[0] else np.zeros((0, gs)),
        task_coef=U[keep_col].T, shared_coef=us[keep_col],
        coef=coef_full[keep_col].T, intercept=b)
