r"""The proximal Newton master's subproblem where its quadratic model breaks down.

At a loss weight ``C`` of 1e60 and more on separable data, or on far-offset
columns without an intercept, the model's Hessian ``H = A' D A`` (after the
intercept's Schur complement) is huge and singular: the rounding of its
entries, a relative 1e-16, leaves eigenvalues of either sign about the zero
ones (measured: -1.7e44 next to 5.1e60), the support's Newton system is then
singular and the compiled subproblem met ``LinAlgError`` ("singular", or NaN
fed to the next solve).  The minimiser of the model plus penalty with the
Levenberg term :math:`\tfrac{\mu}{2}\|W - W_0\|^2` added is still a descent
direction of the true objective, and its fixed point is the optimum (a
proximal Newton step in another metric), so the line search and the stopping
rule keep their meaning: only the speed differs.
"""

import numpy as np

__all__ = ["damped_solve", "guarded_subproblem"]

# Levenberg damping tried in turn, relative to each output's largest Hessian
# diagonal entry: 1e-12 is ten thousand times the rounding of the entries
# (the negative eigenvalues measured were 3e-17 of the largest).
_DAMPING = (1e-12, 1e-8, 1e-4)


def guarded_subproblem(subproblem, H, g, W0, indptr, alpha, max_sweeps, tol, ftol):
    """The subproblem's minimiser, damped (Levenberg) where the plain model fails.

    Parameters
    ----------
    subproblem : callable
        :func:`kernlearn.solvers.prox_newton._subproblem` (passed in: this
        module sits below it).
    H : ndarray of shape (K, p, p)
        The model's Hessians (intercepts eliminated).
    g : ndarray of shape (K, p)
        The model's gradients.
    W0 : ndarray of shape (p, K)
        The current point.
    indptr : ndarray of int64
        Group boundaries.
    alpha : float
        Penalty weight.
    max_sweeps : int
        Block sweeps cap.
    tol, ftol : float
        The sweeps' relative coordinate and absolute model tolerances.

    Returns
    -------
    W : ndarray of shape (p, K) or None
        The minimiser (None when every damping failed too: the caller stops,
        unconverged).
    sweeps : int
        Sweeps run by the last attempt.
    """
    try:
        W, sweeps = subproblem(H, g, W0, indptr, alpha, max_sweeps, tol, ftol)
        if np.all(np.isfinite(W)):
            return W, sweeps
    except (np.linalg.LinAlgError, ZeroDivisionError):
        sweeps = 0
    K, p = g.shape
    diag = np.einsum("kii->ki", H)
    top = np.max(np.abs(diag), axis=1) if p else np.zeros(K)
    top = np.where(np.isfinite(top) & (top > 0), top, 1.0)
    for rel in _DAMPING:
        Hd = np.array(H, dtype=float)
        Hd[:, np.arange(p), np.arange(p)] += (rel * top)[:, None]
        # (the support's Newton steps last: damped, plain sweeps are safe)
        for newton in (True, False):
            try:
                W, sweeps = subproblem(Hd, g, W0, indptr, alpha, max_sweeps, tol, ftol,
                                       newton)
            except (np.linalg.LinAlgError, ZeroDivisionError):
                continue
            if np.all(np.isfinite(W)):
                return W, sweeps
    return None, sweeps


def damped_solve(H, g):
    r"""``H^{-1} g``, Levenberg-damped where ``H`` is singular to working precision.

    SimpleMKL's SVM Newton system :math:`H = C A' D A + \lambda I` is
    positive definite, but at ``C`` of 1e60 the ``lambda`` is below the
    rounding of the data part: ``LinAlgError`` ("Singular matrix") before.

    Parameters
    ----------
    H : ndarray of shape (p, p)
        A symmetric positive semi-definite matrix (in exact arithmetic).
    g : ndarray of shape (p,)
        The right-hand side.

    Returns
    -------
    ndarray of shape (p,) or None
        The solution (undamped wherever ``H`` allows one, bit for bit); None
        when every damping failed too.
    """
    try:
        x = np.linalg.solve(H, g)
        if np.all(np.isfinite(x)):
            return x
    except np.linalg.LinAlgError:
        pass
    diag = np.abs(np.diagonal(H))
    top = float(np.max(diag, initial=0.0))
    top = top if np.isfinite(top) and top > 0 else 1.0
    for rel in _DAMPING:
        try:
            x = np.linalg.solve(H + rel * top * np.eye(len(g)), g)
        except np.linalg.LinAlgError:
            continue
        if np.all(np.isfinite(x)):
            return x
    return None
