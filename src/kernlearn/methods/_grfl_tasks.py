"""GrFL with tasks of their own rows (``task_rows``): the weighted loss in the master's layout.

With ``task_rows`` the restricted master (:class:`~kernlearn.solvers._dirty.DirtyProblem`)
holds the tasks' margins concatenated task by task (its *margin layout*), not in the
order of the rows.  Sample weights are given per row; this module puts them where the
master, the model without features and the held-out rows read them, so that a weighted
fit with tasks is the same problem per row as the single-task route's (paper 000,
eq. (17) with :math:`w_i \\ell(m_i, y_i)` in each task's datafit): integer weights are
repeated rows, zero weights removed rows.  The pricing step and the columns' unit norms
keep reading the weights in row order (the columns live on the rows, not on the layout).
"""

import numpy as np

from ..losses import weighted
from ..losses._base import WeightedLoss
from ..solvers._dirty import task_targets
from ._class_outputs import class_attributes, present_outputs
from ._grfl_master import intercept_only

__all__ = ["class_problem_outputs", "classifier_outputs", "classifier_problems",
           "layout_weights", "ovr_tasks", "task_intercepts", "task_weighted_loss"]


def layout_weights(sample_weight, task_rows):
    """Row weights in the master's margin layout.

    Parameters
    ----------
    sample_weight : ndarray of shape (n_samples,) or None
        Weights of the rows.
    task_rows : list of ndarray or None
        Rows of each task (``None``: every task on every row, the weights stay per row).

    Returns
    -------
    ndarray or None
        ``sample_weight[concatenate(task_rows)]``: entry ``j`` weighs the ``j``-th
        margin of the concatenated tasks (``None`` when unweighted).
    """
    if sample_weight is None or task_rows is None:
        return sample_weight
    if not task_rows:
        return sample_weight[:0]
    return sample_weight[np.concatenate(task_rows)]


def task_weighted_loss(loss, sample_weight, task_rows):
    """``loss`` weighted per row, with the weights where the master reads the margins.

    Parameters
    ----------
    loss : BaseLoss
        The unweighted loss.
    sample_weight : ndarray of shape (n_samples,) or None
        Weights of the rows.
    task_rows : list of ndarray or None
        Rows of each task.

    Returns
    -------
    BaseLoss
        :func:`~kernlearn.losses.weighted` of the weights in the margin layout
        (:func:`layout_weights`); ``loss`` itself when unweighted.
    """
    return weighted(loss, layout_weights(sample_weight, task_rows))


def task_intercepts(loss, Y, task_rows):
    """Each task's bias of the model without features (:func:`intercept_only`).

    Parameters
    ----------
    loss : BaseLoss
        The master's loss (weighted in the margin layout with ``task_rows``).
    Y : ndarray
        ``(n, T)`` targets (``task_rows`` ``None``), or ``(n,)`` or ``(n, T)`` with
        ``task_rows`` (:func:`~kernlearn.solvers._dirty.task_targets`).
    task_rows : list of ndarray or None
        Rows of each task.

    Returns
    -------
    ndarray of shape (T,)
    """
    if task_rows is None:
        return np.array([intercept_only(loss, Y[:, t]) for t in range(Y.shape[1])])
    ends = np.cumsum([len(r) for r in task_rows], dtype=int)
    # each task's slice of the layout carries its rows' weights (an unweighted loss
    # is the same on every slice)
    return np.array([intercept_only(loss.rows(slice(e - len(r), e))
                                    if isinstance(loss, WeightedLoss) else loss, y)
                     for e, r, y in zip(ends, task_rows, task_targets(Y, task_rows))])


def ovr_tasks(codes, task_rows, sample_weight=None):
    """One-vs-rest within tasks: a binary problem per (task, class) of the task's rows.

    The single-task multiclass route's one-vs-all codes (one task per class, every
    row in each: sec. 6.1 of paper 000), here within each task: the problem of task
    ``t`` and class ``c`` holds the rows of ``t`` with the codes of ``c``.  All the
    problems are the dirty model's tasks (eq. (1)): they share the features (the
    group penalty :math:`\\Omega_p` runs over every (task, class) weight vector of a
    feature) and, with ``lambda_s``, one vector of shared weights.  A class with no
    row (of positive weight) in a task has no problem there (all its codes would be
    -1: a model of that task never asked to find the class); the estimator puts its
    decision values below the task's other classes'.

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_classes)
        +1 on a row's class, -1 elsewhere.
    task_rows : list of ndarray
        Rows of each task.
    sample_weight : ndarray of shape (n_samples,) or None
        Weights of the rows (a class whose rows in a task all weigh zero is absent).

    Returns
    -------
    Y : ndarray of shape (n_samples, n_problems)
        The codes of each problem's class (column ``j``: problem ``j``), task by
        task, classes in order within a task.
    rows : list of ndarray
        Each problem's rows (its task's: the same array for the classes of a task).
    fitted : ndarray of bool of shape (n_tasks, n_classes)
        Which (task, class) problems are fitted.
    """
    pos = codes > 0
    if sample_weight is not None:
        pos &= (sample_weight > 0)[:, None]
    fitted = np.array([pos[r].any(axis=0) for r in task_rows]).reshape(len(task_rows), -1)
    t, c = np.nonzero(fitted)  # (task-major: row order of the outputs)
    return codes[:, c], [task_rows[k] for k in t], fitted


def class_problem_outputs(values, fitted):
    """``values`` of the fitted problems of :func:`ovr_tasks` on a row per (task, class).

    Parameters
    ----------
    values : ndarray of shape (n_problems, ...)
        One entry per fitted problem along the first axis.
    fitted : ndarray of bool of shape (n_tasks, n_classes)

    Returns
    -------
    ndarray of shape (n_tasks * n_classes, ...)
        Row ``t * n_classes + c`` for task ``t`` and class ``c``; zero where not fitted.
        With one entry per task (two classes left, every task's binary problem),
        ``-values`` and ``values`` on the rows of the two classes fitted.
    """
    values = np.asarray(values)
    out = np.zeros((fitted.size,) + values.shape[1:], dtype=values.dtype)
    if len(values) == np.count_nonzero(fitted):
        out[fitted.ravel()] = values
        return out
    # two classes left by weighed-out ones (:func:`classifier_problems`): one binary
    # problem per task, ``f`` of the second class and ``-f`` of the first, as
    # :func:`~kernlearn.methods._class_outputs.class_outputs` codes two classes
    first, second = np.flatnonzero(fitted[0])
    K = fitted.shape[1]
    out[first::K], out[second::K] = -values, values
    return out


def classifier_problems(codes, task_rows, absent, sample_weight=None):
    """The GrFL classifier's targets and tasks from its +-1 ``codes``.

    Binary: the second class's codes (one task, or one per ``task_rows`` entry);
    multiclass: one-vs-all tasks of the classes kept (``absent``: weighed out,
    :func:`~kernlearn.methods._class_outputs.present_outputs`), or with ``task_rows``
    one-vs-rest within tasks (:func:`ovr_tasks`; two classes kept: the binary problem
    of each task, as the fit without the weighed-out rows).

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_classes)
        +1 on a row's class, -1 elsewhere.
    task_rows : list of ndarray or None
        Rows of each task.
    absent : ndarray of int or None
        Classes whose rows all weigh zero.
    sample_weight : ndarray of shape (n_samples,) or None
        Weights of the rows.

    Returns
    -------
    Y : ndarray
        Targets for :func:`~kernlearn.methods.grfl.fit_grfl`.
    task_rows : list of ndarray or None
        Its ``task_rows``.
    fitted : ndarray of bool of shape (n_tasks, n_classes) or None
        The (task, class) outputs fitted (with ``task_rows`` and more than two
        classes only).
    """
    K = codes.shape[1]
    if task_rows is not None and K > 2:
        left = np.setdiff1d(np.arange(K), [] if absent is None else absent)
        if len(left) > 2:
            return ovr_tasks(codes, task_rows, sample_weight)
        # two classes left by weighed-out ones: the binary fit without their rows (as
        # :func:`present_outputs` keeps the second's codes without tasks), its decision
        # values in every task's two columns (:func:`class_problem_outputs`)
        fitted = np.zeros((len(task_rows), K), dtype=bool)
        fitted[:, left] = True
        return codes[:, left[1]], task_rows, fitted
    if codes.shape[1] > 2:
        return present_outputs(codes, absent), None, None
    return (codes[:, 1] if task_rows is not None else codes[:, 1:]), task_rows, None


def classifier_outputs(est, fitted):
    """``est``'s per-output arrays (``_coef_tasks``, ``_intercept_tasks``,
    ``task_coef_``) with one output per class: for classes weighed out
    (:func:`~kernlearn.methods._class_outputs.class_attributes`), or one per
    (task, class) with ``fitted`` (:func:`class_problem_outputs`)."""
    names = ("_coef_tasks", "_intercept_tasks", "task_coef_")
    if fitted is None:
        class_attributes(est, getattr(est, "_absent_classes", None), **dict.fromkeys(names, 0))
        return
    for name in names:
        setattr(est, name, class_problem_outputs(getattr(est, name), fitted))
