"""FGM's pricing tests in floating point: Theorem 3, and the budget's growing groups."""

import numpy as np

from ._fgm_rows import frobenius_norm

__all__ = ["MASTER_STOP_CAUSES", "unconverged_warning"]


def _positive(cand, m):
    """The first ``m`` candidates with a positive score."""
    keep = np.flatnonzero(np.asarray(cand.scores) > 0)[:m]
    return type(cand)(np.asarray(cand.params)[keep], np.asarray(cand.scores)[keep],
                      cand.group_size, cand.extra)


def _grow_group(pool, grad, cand, remaining, X, exclude, rows, st):
    r"""Budget mode: a new constraint large enough to violate the optimality condition.

    At the restricted optimum every active constraint has the value
    :math:`\|A_t' u\|^2 = S^2` (:math:`S` the sum of the group norms), and a
    new group enters with weight only if its value :math:`\sum_j c_j`
    exceeds :math:`S^2`.  When the best ``want`` new features do not, the
    master would give them no weight and they would be dropped for good,
    although the next ones could enter together (on hill-valley at
    ``max_features=100`` FGM stopped at 60 features: each group of 10 of the
    other 40 scored 31 or less against 34, all 40 together 65).  The group is
    doubled with the next best new features until it is violated; if even
    the best ``remaining`` new features are not, no set of new features the
    budget allows can enter (Theorem 3 restricted to the budget).

    Returns
    -------
    Candidates or None
        The violated group, or ``None`` when there is none.
    """
    m = len(cand)
    while m < remaining:
        m = min(2 * m, remaining)
        bigger = _positive(pool.price(grad, m, X=X, exclude=exclude), m)
        if len(bigger) <= len(cand):
            return None
        cand = bigger
        if not _not_violated(cand, rows, st, grad):
            return cand
    return None


def _not_violated(cand, rows, st, grad):
    r"""Theorem 3 in floating point: the worst-case constraint is not above the active ones.

    The exact test -- the new top-``B`` set is an active constraint -- holds
    at the optimum only if ties are broken the same way twice.  At the
    optimum of the squared group-l1 problem every selected feature has the
    same score (as in the l1 problem), so when more than ``B`` features carry
    weight the top-``B`` set among them is picked by round-off: the loop then
    adds equal-valued constraints that cannot lower the objective (measured:
    30 rounds with the objective unchanged in 12 digits and the new value
    above the best active one by 3e-8 to 2e-6, until a set happened to
    repeat).  The condition of Theorem 3 is that the new constraint's value
    :math:`\sum_{j \in d_T} c_j` does not exceed that of the active ones;
    compared at the accuracy the master fixed the scores to (``score_rtol``).
    Rows on a cluster without the per-constraint values keep the exact test.
    """
    values = getattr(rows, "constraint_values", None)
    if values is None or not st.blocks:
        return False
    new = float(np.sum(np.square(np.asarray(cand.scores, dtype=float))))
    best = float(np.max(values(st.blocks, grad)))
    return new <= best * (1.0 + st.score_rtol) ** 2


def _master_not_optimal(rows, st, fit_intercept, rtol=0.0):
    r"""Whether a master's point breaks its own optimality condition.

    At the optimum of the restricted problem every active constraint has
    :math:`\|A_t' u\| \le S` (:math:`u = C\,\ell'(m)`, :math:`S` the sum of
    the group norms), with equality where the group has weight.  The Newton
    master stops on its model's predicted decrease; at a kink of the squared
    hinge's curvature that model may not see a descent that changes which rows
    sit at margin 1: at ``C = 1e10`` on separable data a new group entered
    with :math:`\|A_t' u\| = 333` against :math:`S = 18.7`, the model
    predicted no decrease and the path stopped 2.7 times above the optimum.
    The excess counts only above the accuracy the master fixed the scores
    to, ``score_rtol`` times the Cauchy-Schwarz bound
    :math:`\|A_t\|_F \|u\|` (at ``C = 1e10`` on non-separable data a
    converged master's excess is 3e-6 of that bound, its objective equal to
    APG's; the case above 0.14), and above ``rtol S``.  It counted above ten
    times that: on two- and three-class blobs at ``C = 1e10`` a last master
    stalled with a new group at weight zero 1-5 % above ``S`` (6e-4 to 9e-4
    of the bound), the objective stopped falling and the path said converged
    0.5-1.8 % above the optimum; converged Newton masters of the suite at
    ``C`` 1e-3 to 1e9 stay under 2.4e-6 of it.  ``rtol`` was 0.1:
    with three outputs at ``C = 1e10`` a master stalled with an excess of
    0.074 S (17 times the accuracy bound) and the path stopped 2.7 % above
    the optimum; no default fit measured (binary, regression, iris, wine,
    breast cancer, digits at ``C`` 1 to 1e6) has an excess above the
    accuracy bound.

    Parameters
    ----------
    rows : _LocalRows or DaskMasterRows
        The cutting planes' rows, in memory or on a cluster (there the check
        costs two reductions: the dual vectors' norm and a new block's).
    st : FGMState
        The state after the master (``M``, ``W``, ``blocks``, ``score_rtol``);
        its ``dual`` and ``block_norms`` are set.
    fit_intercept : bool
        Re-centre the intercepts as the pricing does.
    rtol : float, default=0.0
        Allowed relative excess of a constraint over ``S`` (beyond the
        accuracy bound).

    Returns
    -------
    bool
        True when some active constraint exceeds ``S`` by more than allowed.
    """
    if not st.blocks:
        return False
    from ..solvers.prox_newton import group_norms_2d

    S = float(group_norms_2d(st.W, st.indptr()).sum())
    # the next pricing's dual point (kept for it while the margins stay these)
    grad, conjugate = rows.dual_point(st.M, fit_intercept)
    st.dual = (st.M, grad, conjugate)
    excess = np.sqrt(rows.constraint_values(st.blocks, grad)) - S
    # the blocks' Frobenius norms, once per block (kept in step by drop_zero_groups)
    st.block_norms += [frobenius_norm(b) for b in st.blocks[len(st.block_norms):]]
    size = np.array(st.block_norms) * frobenius_norm(grad)
    return bool(np.any(excess > np.maximum(rtol * S, st.score_rtol * size)))


#: What each cause of an unconverged master tells the user (with its remedy).
MASTER_STOP_CAUSES = {
    "cap": "at the iteration cap (increase inner_max_iter)",
    "no_model_step": ("where the Newton model gave no step even with Levenberg damping (its "
                      "Hessian is singular to working precision, e.g. at a huge C: lower C, "
                      "or fit an intercept to columns far from zero)"),
    "kink": ("at a Newton stop that failed the optimality check (the squared hinge's kink "
             "at a huge C; on a cluster no other master re-solves it: lower C, or fit in "
             "memory)"),
}


def unconverged_warning(name, causes):
    """The warning of a path whose masters stopped before their tolerance, by cause.

    Parameters
    ----------
    name : str
        The method's name.
    causes : list of str or None
        Per master, ``None`` (it met its tolerance) or a key of ``MASTER_STOP_CAUSES``.

    Returns
    -------
    str
    """
    counts = {c: causes.count(c) for c in MASTER_STOP_CAUSES if c in causes}
    parts = "; ".join(f"{k} {MASTER_STOP_CAUSES[c]}" for c, k in counts.items())
    return (f"{name}: {sum(counts.values())} of {len(causes)} master solves stopped before "
            f"meeting their tolerance: {parts}.")
