"""FGM's pricing tests in floating point: Theorem 3, and the budget's growing groups."""

import numpy as np

__all__ = []


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
