r"""FGM's de-biasing refit (paper 002, sec. 6.2.2): an l2 model on the selected features.

The refit minimises FGM's own objective with every selected feature in one
constraint,

.. math:: \min_{w, b}\ \tfrac12\|w\|^2 + C\sum_i s_i\,\ell(w'x_i + b,\ y_i),

with FGM's loss (the squared hinge :math:`\tfrac12\max(0, 1 - ym)^2`, the
logistic loss, the square loss :math:`\tfrac12(y - m)^2`) and an
unpenalised intercept, so that ``refit_C`` is a ``C`` on FGM's scale.  With one
group the master's squared group-l1 penalty is :math:`\tfrac12\|w\|^2`, so FGM's own
master solves it, to its ``inner_tol``.  (scikit-learn's ``LinearSVC`` solved
another problem, its squared hinge twice FGM's and its intercept penalised; its
``LogisticRegression`` and, on sparse blocks, ``Ridge`` stopped at a tolerance
of 1e-4: decision values up to 1.8e-2 from the optimum.)
"""

from dataclasses import replace

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from .._column_sources import register_source
from ..losses import get_loss, weighted
from ..partitioned import _scaled_columns
from ..penalties import SquaredGroupL1
from ..solvers import choose_master
from ._fgm_pricing import MASTER_STOP_CAUSES
from ._fgm_rows import active_block, sparse_work
from ..utils._warnings import warn

__all__ = ["refit_l2"]


def refit_l2(X, y, sel, kind, pool, settings, sample_weight=None, solve_master=None,
             intercept=0.0):
    r"""De-bias (paper 002, sec. 6.2.2): l2 model on the selected features only.

    Fitted on the columns FGM saw (scaled by the pool's :math:`\lambda_j`),
    at FGM's ``C`` convention, and mapped back to the original features.

    Parameters
    ----------
    X : ndarray, sparse matrix or RowPartitioned of shape (n_samples, n_features)
        The training data FGM was fitted on.
    y : ndarray of shape (n_samples,)
        Targets: ``+-1`` labels or (standardised) real values.
    sel : ndarray of int
        Selected columns of ``X``.
    kind : {"square", "logistic", "squared_hinge"}
        The refit's loss.
    pool : FeaturePool
        The fitted pool (its ``scale_`` and ``raw_columns``).
    settings : FGMSettings
        FGM's settings with ``C`` the refit's ``C`` (its ``master_tol`` and
        ``master_max_iter``, the estimator's ``inner_tol`` and
        ``inner_max_iter``, bound the refit).
    sample_weight : ndarray of shape (n_samples,), optional
        Row weights of the loss.
    solve_master : callable
        FGM's master solve (``methods.fgm._solve_master``).
    intercept : float, default=0.0
        FGM's intercept: with no feature selected it is the refit's optimum
        already (the intercept-only model, whatever ``C``).

    Returns
    -------
    coef : ndarray of shape (n_features,)
    intercept : float
    converged : bool
        False when the master stopped at its iteration cap (it warned).
    """
    coef = np.zeros(X.shape[1])
    if sel.size == 0:  # (it returned 0: a constant classifier of the wrong class)
        return coef, float(intercept) if settings.fit_intercept else 0.0, True
    scale = pool.scale_[sel]
    Xs = pool.raw_columns(sel, X)
    if sample_weight is not None and np.ndim(sample_weight) and not np.all(sample_weight > 0):
        # by row blocks the rows of zero weight are kept: a kept row's values
        # there, as in the cutting planes' master (partitioned.kept_row_columns)
        first = int(np.argmax(np.asarray(sample_weight) > 0))
        filler = (sp.csr_matrix(Xs[first], dtype=float).reshape(1, -1) if sp.issparse(Xs)
                  else np.array(Xs[first], dtype=float))
        Xs = _scaled_columns(Xs, sample_weight, ids=np.arange(sel.size), filler=filler)
    raw = Xs
    Xs = Xs @ sp.diags(scale) if sp.issparse(Xs) else Xs * scale
    # (the raw columns: the master shifts far-offset ones before scaling them)
    Xs = register_source(Xs, lambda: raw, scale)
    Xs = active_block([Xs]) if sp.issparse(Xs) else Xs
    w, b, converged = _one_constraint(Xs, y, get_loss(kind), settings, sample_weight,
                                      solve_master)
    coef[sel] = w * scale
    return coef, b, converged


def _one_constraint(A, y, loss, settings, sample_weight, solve_master):
    """FGM's l2 problem on ``A``, by FGM's master with one constraint.

    (The master also shifts far-offset columns itself.)
    """
    n, p = A.shape
    loss = weighted(loss, sample_weight)
    # SimpleMKL's weights have nothing to choose between with one group
    solver = "auto" if settings.solver == "simplemkl" else settings.solver
    flops, nnz = sparse_work([A], 1, sample_weight)
    kind = choose_master(n, p, 1, loss, solver, hessian_flops=flops, nnz=nnz).name
    out = solve_master(kind, A, np.asarray(y, dtype=float).reshape(n, 1), loss,
                       SquaredGroupL1(1.0), replace(settings, solver=kind),
                       np.array([0, p]), np.zeros((p, 1)), np.zeros(1), 0.1 * n * settings.C)
    if not out["converged"]:
        warn(f"the de-biasing refit's master stopped after {out['n_iter']} "
             f"iterations before meeting its tolerance, {MASTER_STOP_CAUSES[out['cause']]}.",
             ConvergenceWarning, stacklevel="user")
    b = float(out["b"][0]) if settings.fit_intercept else 0.0
    return out["W"][:, 0], b, bool(out["converged"])
