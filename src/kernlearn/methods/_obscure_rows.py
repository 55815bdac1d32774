"""OBSCURE's rows of positive weight: a zero weight removes its row.

The stochastic steps never draw a row of zero weight, but every row was read
before them: the standardisation, the widths (``gamma="scale"``), the
normalised kernels' diagonal, the linear kernel's overflow check, and the
sampling distribution's indices (weighted draws index all rows, so the same
kept rows gave another sequence).  The estimator therefore fits on the rows
of positive weight only and maps the model back to the user's rows and
classes here.
"""

import numpy as np

from ..kernels import PrecomputedKernelList


def positive_rows(sample_weight):
    """The rows of positive weight, or None when every row has weight.

    Parameters
    ----------
    sample_weight : ndarray of shape (n,) or None

    Returns
    -------
    rows : ndarray of int or None
        None keeps the unweighted and the all-positive fits' code path.
    """
    if sample_weight is None or np.all(sample_weight > 0):
        return None
    return np.flatnonzero(sample_weight > 0)


def gram_rows(klist, rows):
    """The precomputed kernel list of the training samples ``rows`` only.

    Parameters
    ----------
    klist : PrecomputedKernelList
        Fitted (validated) on every training sample.
    rows : ndarray of int

    Returns
    -------
    PrecomputedKernelList
        Its Gram matrices' ``rows`` x ``rows`` blocks (a principal sub-matrix
        of a valid Gram matrix is one: not validated again).
    """
    sub = PrecomputedKernelList(None, cache_size=klist.cache_size)
    sub.gram_ = klist.gram_[:, rows][:, :, rows]
    sub.diag_ = sub.kdiag_ = klist.diag_[:, rows].copy()
    return sub


def class_rows(dual_coef, present, classes):
    """Dual coefficients of a fit on the ``present`` classes, one row per class.

    A class whose rows all weigh zero was left out of the fit with its rows;
    its row of coefficients is zero (its decision values are then set below
    the others', :func:`~kernlearn.estimators._decisions.below_others`).  Two
    present classes of a multiclass label set were fitted with the hinge
    loss, :math:`f = w\\cdot\\phi(x)`; written as Crammer-Singer outputs they
    are :math:`\\mp f/2` (the multiclass margin :math:`f_1 - f_0` is the
    binary one, and the arg max is the sign's class).

    Parameters
    ----------
    dual_coef : ndarray of shape (n_outputs, n_support)
        As fitted on the present classes (one row for two).
    present, classes : ndarray
        The sorted classes fitted and those of the labels.

    Returns
    -------
    dual_coef : ndarray
        ``dual_coef`` itself when every class was fitted, else of shape
        ``(len(classes), n_support)`` (a class is left out of three or more
        only: two classes need both).
    """
    if len(present) == len(classes):
        return dual_coef
    out = np.zeros((len(classes), dual_coef.shape[1]))
    at = np.searchsorted(classes, present)
    if len(present) == 2:
        out[at[0]], out[at[1]] = -0.5 * dual_coef[0], 0.5 * dual_coef[0]
    else:
        out[at] = dual_coef
    return out


def _sampling(sample_weight, n):
    """Rows an epoch visits and their drawing probabilities (``None``: a permutation).

    Unweighted, or equal positive weights: a permutation of the rows with
    positive weight, exactly as if the others were removed.  Otherwise each
    row's share of an epoch's visits is proportional to its weight (see
    :class:`EpochOrder`).

    Parameters
    ----------
    sample_weight : ndarray of shape (n,) or None
    n : int
        Number of rows.

    Returns
    -------
    rows : ndarray of int
        The rows of positive weight.
    prob : ndarray of shape (n,) or None
        ``w / w.sum()``, or None for a permutation.
    """
    if sample_weight is None:
        return np.arange(n), None
    w = np.asarray(sample_weight, dtype=float)
    rows = np.flatnonzero(w > 0)
    if np.all(w[rows] == w[rows[0]]):
        return rows, None
    return rows, w / w.sum()


class EpochOrder:
    """The rows each epoch visits, in the order of its steps.

    Unweighted (``prob`` None): a permutation of ``rows`` per epoch.
    Weighted: row ``i`` is expected ``e_i = len(rows) * prob[i]`` times per
    epoch and is visited ``floor(e_i (k + 1) + u_i) - floor(e_i k + u_i)``
    times in epoch ``k`` (``u_i`` uniform, drawn once per fit), in a random
    order: each epoch's expected visits, hence each step's expected
    sub-gradient, are those of i.i.d. draws proportional to the weights, and
    after ``k`` epochs every row has been visited ``e_i k`` times to within
    one.  With i.i.d. draws a row's coefficient followed its random number of
    visits, whose spread the decreasing steps never average out, so the dual
    candidate ``alpha_i ~ A_i / w_i`` of
    :func:`~kernlearn.methods._obscure_dual.dual_bound` scattered around its
    value and the gap stayed above ``tol``: ``class_weight="balanced"`` ran to
    ``max_iter`` with a warning on fits that had converged.

    Parameters
    ----------
    rows : ndarray of int
        The rows of positive weight.
    prob : ndarray of shape (n,) or None
        Visiting probabilities over all rows (zero off ``rows``).
    """

    def __init__(self, rows, prob):
        self.rows = rows
        self.expect = None if prob is None else len(rows) * prob[rows]
        self.phase, self.k = None, 0

    def __call__(self, rng):
        """The next epoch's rows (``rng`` a ``numpy.random.Generator``).

        Parameters
        ----------
        rng : numpy.random.Generator

        Returns
        -------
        order : ndarray of int
        """
        if self.expect is None:
            return self.rows[rng.permutation(len(self.rows))]
        if self.phase is None:
            self.phase = rng.random(len(self.rows))
        e, k, u = self.expect, self.k, self.phase
        counts = (np.floor(e * (k + 1) + u) - np.floor(e * k + u)).astype(np.int64)
        self.k += 1
        order = np.repeat(self.rows, counts)
        return order[rng.permutation(len(order))]

    def unvisited(self):
        """The rows of positive weight no epoch so far has visited.

        Weighted, row ``i`` was visited ``floor(e_i k + u_i) - floor(u_i)``
        times in ``k`` epochs (a last epoch cut short by ``max_steps`` is
        counted whole, so every row returned was indeed never visited);
        unweighted, an epoch visits every row.

        Returns
        -------
        rows : ndarray of int
        """
        if self.expect is None:
            return self.rows[:0]
        if self.phase is None:  # (no epoch yet)
            return self.rows
        u = self.phase
        return self.rows[np.floor(self.expect * self.k + u) == np.floor(u)]


def unvisited_note(order, row_loss, sample_weight, objective, gap, tol):
    """Why the duality gap cannot close: rows never drawn that carry the objective.

    The steps draw rows in proportion to their weight (:class:`EpochOrder`),
    so a row whose weight is a tiny share of the total is visited once in
    ``1 / e_i`` epochs: before that it has no coefficient, so neither the
    model nor the certificate's dual candidate (``alpha_i ~ A_i / w_i``,
    :func:`~kernlearn.methods._obscure_dual.dual_bound`) accounts for it,
    and its weighted loss stays in the objective and out of the dual bound.
    (With one row at 1e6 times the others' weight, whose margin the model
    meets, the others' losses are most of the objective.)

    Parameters
    ----------
    order : EpochOrder
        The fit's sampling, after its epochs.
    row_loss : ndarray of shape (n,)
        Each row's loss under the returned model.
    sample_weight : ndarray of shape (n,) or None
    objective : float
        The returned model's objective (5).
    gap : float
        Its relative duality gap.
    tol : float
        The solver's relative tolerance.

    Returns
    -------
    note : str
        The warning's explanation, or ``""`` when the rows never drawn carry
        less of the objective (their weighted mean loss) than ``tol`` and than
        the gap's excess over ``tol``.
    """
    miss = order.unvisited()
    if sample_weight is None or not miss.size or not objective > 0:
        return ""
    w = np.asarray(sample_weight, dtype=float)
    share = float(w[miss] @ row_loss[miss]) / float(w.sum()) / objective
    if not share >= min(tol, gap - tol):
        return ""
    every = 1.0 / float(np.min(order.expect[np.isin(order.rows, miss)]))
    return (f"{miss.size} rows of positive weight carrying {share:.0%} of the objective were "
            f"never drawn: the steps draw rows in proportion to their weight (the "
            f"lightest about once in {every:.3g} epochs), and a row never drawn has "
            "no dual coefficient, so its loss stays out of the certificate's dual "
            "bound; more epochs do not help before then (weights spread this wide "
            "leave these rows almost out of the fit).")
