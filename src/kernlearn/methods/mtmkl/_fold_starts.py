r"""Starts of the SVM fits of a cross-validated C search, from fits on other rows.

:class:`~kernlearn.MultitaskMKLClassifierCV` fits MK-MTFL (or
per-task MKL) with the hinge loss at every C of a grid on every training fold,
then refits on all rows.  Each fit solves, per task :math:`t`, the SVM dual

.. math:: \max_{\beta_t}\ \sum_i |\beta_{ti}| - \tfrac12\beta_t^\top K_t\beta_t
          \quad\text{s.t.}\quad y_{ti}\beta_{ti}\in[0, C w_{ti}],\
          \mathbf 1^\top\beta_t = 0,

(:math:`w` the fit's sample and class weights, :math:`y\in\{-1, +1\}`) inside
the mirror descent over the kernel weights :math:`\gamma`.  A fit on other rows
gives a start: its duals :math:`\beta` per row of ``X`` and its kernel weights.

* :func:`path_order`: the order of a fold's C grid (each C from the nearest
  one fitted).
* :func:`row_duals`: a fold fit's duals over all rows of ``X`` (zero on rows it
  did not train on) and its kernel weights.
* :func:`lead_start`: the next fold's start from a fold fit: on its validation
  rows, which the next fold trains on, the duals its decision values
  :math:`f(x_i)` give them by the hinge's KKT conditions,
  :math:`\beta_i = y_i C_i` where :math:`y_i f(x_i) < 1`, else 0.
* :func:`mean_start`: the refit's start, the mean of its fold fits' starts.
* :func:`keep_start`: a start made feasible for one fit (clipped to its box,
  each task's sum made zero, per-task kernel weights matched by task id) and
  kept in its :class:`~kernlearn.methods.mtmkl.FactorStore`.

Every fit still stops on its own duality gap: a start changes where the
solver begins, not the optimum it certifies.
"""

import numpy as np

__all__ = ["keep_start", "lead_start", "mean_start", "path_order", "row_duals"]


def path_order(Cs):
    """Order of a fold's fits along the grid.

    The middle C first (from uniform kernel weights), then up the grid, then
    down, each C starting from the nearest one fitted.  Ascending from the
    smallest C carried its kernel weights, at the other end of the simplex on
    VerbAgg, into the next C's first SVM solves (rows of an RBF-heavy kernel
    at a 10x larger box: 3-40x their pair updates); from the middle,
    VerbAgg's fold fits took 25 % fewer updates in all (BENCHMARKS.md).

    Parameters
    ----------
    Cs : ndarray of shape (n_C,)
        The grid.

    Returns
    -------
    order : ndarray of int of shape (n_C,)
        Positions in ``Cs``, in the order they are fitted.
    """
    order = np.argsort(Cs, kind="stable")
    mid = len(order) // 2
    return np.r_[order[mid:], order[:mid][::-1]].astype(int)


def row_duals(model, blocks, train, n, kept=None):
    r"""A fold fit's duals and kernel weights over all rows of ``X``.

    Parameters
    ----------
    model : MultitaskModel
        The fold fit's model.
    blocks : TaskBuckets
        Its task buckets (its training rows, in its order).
    train : array-like of int
        The fold's training rows (positions in ``X``).
    n : int
        Number of rows of ``X``.
    kept : ndarray of int or None, default=None
        Positions in ``train`` of the rows the fit kept (those of positive
        weight), ``None``: all.

    Returns
    -------
    start : tuple or None
        ``(beta, gamma, used)``: the SVM duals per row of ``X`` (zero on rows
        the fit did not train on), the kernel weights the mirror descent ends
        on (one row: MK-MTFL's shared :math:`\gamma`; one per task:
        per-task MKL's), and the indicator of the fit's rows.  ``None`` for
        formulations without per-task duals (MK-MTSFL, ``"independent"``).
    """
    if model.coef[0] != "blocks" or model.formulation not in ("mtfl", "mkl"):
        return None
    rows = train if kept is None else np.asarray(train)[kept]
    beta, used = np.zeros(n), np.zeros(n)
    beta[rows] = blocks.scatter(model.coef[2], len(rows))
    used[rows] = 1.0
    gamma = (model.task_kernel_weights if model.formulation == "mkl"
             else model.kernel_weights[None, :])
    return beta, gamma, used


def lead_start(start, decision, sign, bound, rows):
    r"""The next fold's start from a fold fit's (:func:`row_duals`).

    The fit's duals are zero on its validation rows ``rows`` (it did not
    train on them), which are training rows of the next fold.  There its
    decision values give the duals of the hinge's KKT conditions: a row
    inside the margin, :math:`y_i f(x_i) < 1`, is at its bound
    :math:`\beta_i = y_i C_i`, one outside it at zero (rows on the margin are
    taken as outside).  On Turnout the next fold's solve took 67-80 % of a
    cold one's pair updates from the fit's duals with zeros there, and about
    5 % fewer again with these.

    Parameters
    ----------
    start : tuple or None
        ``(beta, gamma, used)`` of the fold fit (:func:`row_duals`).
    decision : ndarray of shape (n_rows,)
        Its decision values :math:`f(x_i)` on ``rows``.
    sign : ndarray of shape (n_rows,)
        The rows' labels :math:`y_i` in {-1, +1}.
    bound : float or ndarray of shape (n_rows,)
        The rows' box :math:`C_i` (C times the row's weight).
    rows : ndarray of int of shape (n_rows,)
        The validation rows (positions in ``X``).

    Returns
    -------
    start : tuple or None
        ``(beta, gamma, used)`` with ``beta`` filled in on ``rows``
        (``None`` when ``start`` is).
    """
    if start is None:
        return None
    beta = start[0].copy()
    beta[rows] = np.where(sign * decision < 1.0, sign * bound, 0.0)
    return beta, start[1], start[2]


def mean_start(starts):
    """The refit's start: the mean of its fold fits' starts at its C.

    Each row's dual is the mean over the folds that trained on it (zero on
    rows none did), the kernel weights the folds' mean (``None`` when the
    folds' per-task weights are of different shapes: folds on other tasks).
    The refit then starts near its solution (fits on 4/5 of the rows at the
    same C).

    Parameters
    ----------
    starts : list of tuple or None
        :func:`row_duals` of each fold fit at the refit's C.

    Returns
    -------
    start : tuple or None
        ``(beta, gamma, used)`` over all rows of ``X``; ``None`` when some fold
        fit has no duals (or there are none).
    """
    if not starts or any(s is None for s in starts):
        return None
    beta = sum(s[0] for s in starts)
    count = sum(s[2] for s in starts)
    beta = np.where(count > 0, beta / np.maximum(count, 1), 0.0)
    gammas = [s[1] for s in starts]
    same = len({g.shape for g in gammas}) == 1
    return beta, np.mean(gammas, axis=0) if same else None


def _feasible(beta, tasks, n_tasks):
    r"""Each task's duals made to satisfy the bias constraint
    :math:`\mathbf 1^\top\beta_t = 0`, in place, within their box: the heavier
    side (positive or negative duals) scaled down to the lighter one's sum."""
    for t in range(n_tasks):
        b = beta[tasks == t]
        # (the start's sums were over other rows: not zero on these)
        up, down = b[b > 0].sum(), -b[b < 0].sum()
        if up > down:
            b[b > 0] *= down / up
        elif down > up:
            b[b < 0] *= up / down
        beta[tasks == t] = b
    return beta


def _task_weights(gamma, task_index, rows, used):
    """Per-task kernel weights ``gamma`` of a fit on the rows ``used > 0``,
    matched by task id to the tasks of ``rows`` (``None`` when some task of
    ``rows`` was not one of that fit's: it has no weights to start from)."""
    ids = np.asarray(task_index)
    ids, src = np.unique(ids[rows]), np.unique(ids[used > 0])
    at = np.minimum(np.searchsorted(src, ids), len(src) - 1)
    return gamma[at] if np.array_equal(src[at], ids) else None


def keep_start(store, start, C, rows, weights, task_index):
    r"""Keep in ``store`` a start made feasible for a fit at ``C`` on ``rows``.

    The fit's box is :math:`|\beta_i| \le C w_i`.  The duals are clipped into
    it first, then each task's sum is made zero (:func:`_feasible`: the side
    that outweighs the other scaled down, which stays in the box).  In the
    other order a dual past the box (with ``class_weight="balanced"`` each
    fit's :math:`w_i` are its own), clipped after, left its task's sum
    nonzero, and the solver, which takes a start only when it is feasible,
    started that task at zero.  Per-task kernel weights of a fit on other
    tasks are matched by task id; where that fit lacked a task of this one,
    the duals are kept alone (uniform weights).

    Parameters
    ----------
    store : FactorStore
        The fit's store (:meth:`~kernlearn.methods.mtmkl.FactorStore.keep_row_start`).
    start : tuple or None
        ``(beta, gamma)`` or ``(beta, gamma, used)``: duals per row of ``X``
        (zero on rows the fits it came from did not train on), kernel
        weights (one row, or one per task; ``None``: uniform) and, for
        weights from another fold, the indicator of that fold's rows.
        ``None``: nothing is kept.
    C : float
        The fit's loss weight.
    rows : ndarray of int
        The fit's rows (positions in ``X``).
    weights : ndarray of shape (len(rows),) or None
        The fit's row weights :math:`w_i` (sample times class weights;
        ``None``: all 1); rows of zero weight are no fit's and are dropped.
    task_index : array-like or None
        Task id of every row of ``X`` (``None``: one task).
    """
    if start is None:
        return
    if weights is not None:
        rows, weights = rows[weights > 0], weights[weights > 0]
    box = C * (1.0 if weights is None else weights)
    tasks = (np.zeros(len(rows), np.int64) if task_index is None
             else np.unique(np.asarray(task_index)[rows], return_inverse=True)[1])
    n_tasks = int(tasks.max()) + 1 if len(rows) else 0
    beta = _feasible(np.clip(start[0][rows], -box, box), tasks, n_tasks)
    gamma = start[1]
    if gamma is not None and gamma.shape[0] > 1 and len(start) > 2:
        gamma = _task_weights(gamma, task_index, rows, start[2])
    fits = gamma is not None and gamma.shape[0] in (1, n_tasks)
    store.keep_row_start(C, beta, gamma if fits else None)
