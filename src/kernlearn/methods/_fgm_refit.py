r"""FGM's de-biasing refit (paper 002, sec. 6.2.2): an l2 model on the selected features.

The refit minimises FGM's own objective with every selected feature in one
constraint,

.. math:: \min_{w, b}\ \tfrac12\|w\|^2 + C\sum_i s_i\,\ell(w'x_i + b,\ y_i),

with FGM's loss (the squared hinge :math:`\tfrac12\max(0, 1 - ym)^2`, the
logistic loss, the square loss :math:`\tfrac12(y - m)^2`) and an
unpenalised intercept, so that ``refit_C`` is a ``C`` on FGM's scale.
"""

import warnings
from dataclasses import replace

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ..losses import SquaredHinge, weighted
from ..penalties import SquaredGroupL1
from ..solvers import choose_master
from ._fgm_rows import active_block, offset_shift

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
        FGM's settings with ``C`` the refit's ``C`` (the squared hinge is
        solved by FGM's master, with its ``inner_tol`` and
        ``inner_max_iter``).
    sample_weight : ndarray of shape (n_samples,), optional
        Row weights of the loss.
    solve_master : callable
        FGM's master solve (``methods.fgm._solve_master``), for the squared
        hinge: scikit-learn's ``LinearSVC`` penalises the intercept and
        its ``C`` is twice FGM's for this loss, so it fitted another problem.
    intercept : float, default=0.0
        FGM's intercept: with no feature selected it is the refit's optimum
        already (the intercept-only model, whatever ``C``).

    Returns
    -------
    coef : ndarray of shape (n_features,)
    intercept : float
    converged : bool
        False when the squared hinge's master stopped at its iteration cap
        (it warned).
    """
    from sklearn.linear_model import LogisticRegression, Ridge

    C, fit_intercept = settings.C, settings.fit_intercept
    coef = np.zeros(X.shape[1])
    if sel.size == 0:  # (it returned 0: a constant classifier of the wrong class)
        return coef, float(intercept) if settings.fit_intercept else 0.0, True
    scale = pool.scale_[sel]
    Xs = pool.raw_columns(sel, X)
    Xs = Xs @ sp.diags(scale) if sp.issparse(Xs) else Xs * scale
    Xs = active_block([Xs]) if sp.issparse(Xs) else Xs
    if kind == "squared_hinge":
        w, b, converged = _squared_hinge(Xs, y, settings, sample_weight, solve_master)
        coef[sel] = w * scale
        return coef, b, converged
    # (far-offset columns shifted as in the master: with a Unix-time column
    # the refit fell to chance; dense-enough sparse blocks too)
    shift = offset_shift(Xs) if fit_intercept else None
    if shift is not None:
        Xs -= shift
    if kind == "square":  # sum (y - m)^2 + ||w||^2 / C: FGM's objective times 2 / C
        model = Ridge(alpha=1.0 / C, fit_intercept=fit_intercept)
    else:
        # Newton-Cholesky: a few Newton steps on the small selected block.
        model = LogisticRegression(C=C, fit_intercept=fit_intercept,
                                   solver="newton-cholesky", max_iter=100)
    model.fit(Xs, y, sample_weight=sample_weight)
    coef[sel] = np.ravel(model.coef_) * scale
    b = float(np.ravel(model.intercept_)[0]) if fit_intercept else 0.0
    return coef, b - (0.0 if shift is None else float(shift @ np.ravel(model.coef_))), True


def _squared_hinge(A, y, settings, sample_weight, solve_master):
    """FGM's l2 squared-hinge problem on ``A``, by FGM's master with one constraint.

    With a single group the squared group-l1 penalty is :math:`\\tfrac12\\|w\\|^2`,
    so the master solves exactly the refit's problem (the master also shifts
    far-offset columns itself).
    """
    n, p = A.shape
    loss = weighted(SquaredHinge(), sample_weight)
    # SimpleMKL's weights have nothing to choose between with one group
    solver = "auto" if settings.solver == "simplemkl" else settings.solver
    kind = choose_master(n, p, 1, loss, solver).name
    out = solve_master(kind, A, np.asarray(y, dtype=float).reshape(n, 1), loss,
                       SquaredGroupL1(1.0), replace(settings, solver=kind),
                       np.array([0, p]), np.zeros((p, 1)), np.zeros(1), 0.1 * n * settings.C)
    if not out["converged"]:
        warnings.warn(f"the de-biasing refit's master stopped after {out['n_iter']} "
                      "iterations before meeting its tolerance; increase inner_max_iter.",
                      ConvergenceWarning, stacklevel=4)
    b = float(out["b"][0]) if settings.fit_intercept else 0.0
    return out["W"][:, 0], b, bool(out["converged"])
