r"""Inner kernel machines of the multitask formulations: the per-task dual solves.

For fixed kernel parameters every formulation is a kernel machine per task
(or, with shared components, one machine of all tasks on a coupled kernel).
:func:`solve_inner` solves a bucket of tasks at once: kernel ridge in closed
form (one batched LAPACK call), SVM / SVR by libsvm's SMO compiled over
all tasks of a bucket (:mod:`._smo`);
:func:`solve_coupled` adds a kernel over all training rows through Woodbury's
identity.  Each returns the signed dual coefficients :math:`\beta_t`, the
biases and the linear part :math:`L_t(\beta_t)` of each task's dual
:math:`L_t(\beta_t) - \tfrac12\beta_t^\top K_t\beta_t`.
"""

import numpy as np

from ...utils._linalg import spd_solve
from ...utils._warnings import warn

__all__ = ["per_bucket", "solve_all", "solve_coupled", "solve_inner"]


def per_bucket(C, n_buckets):
    """``C`` of each bucket: a list of padded per-sample arrays, or one scalar.

    Parameters
    ----------
    C : float or list of ndarray
        One loss weight, or padded per-sample weights per bucket.
    n_buckets : int

    Returns
    -------
    C_b : list
        One entry per bucket.
    """
    return C if isinstance(C, list) else [C] * n_buckets


def solve_inner(loss, K, y, mask, C, epsilon=0.1, beta0=None, packed=None):
    r"""Per-task dual solves on one bucket of tasks with effective kernels ``K``.

    Returns the signed dual coefficients :math:`\beta_t`, biases and the
    linear part :math:`L_t(\beta_t)` of each task's dual
    :math:`L_t(\beta_t) - \tfrac12\beta_t^\top K_t\beta_t`.

    Parameters
    ----------
    loss : {"square", "hinge", "epsilon_insensitive"}
        Kernel ridge (closed form, batched), SVM or SVR (libsvm's SMO,
        compiled, all tasks of the bucket in one call:
        :func:`~kernlearn.methods.mtmkl._smo.smo_buckets`).
    K : ndarray of shape (T_b, m, m)
        Effective kernels, zero on padding.
    y : ndarray of shape (T_b, m)
        Targets (labels in {-1, +1} for the hinge), zero on padding.
    mask : ndarray of shape (T_b, m)
        Valid rows.
    C : float or ndarray of shape (T_b, m)
        Loss weight: :math:`C\sum_i\ell_i + \tfrac12\|w\|^2`; an array gives
        each sample its own weight :math:`C_i` (sample weights; positive).
    epsilon : float, default=0.1
        Width of the epsilon-insensitive tube.
    beta0 : ndarray of shape (T_b, m), optional
        SVM / SVR: signed duals to start from (a previous solve's ``beta``,
        feasible whatever the kernel); the optimum is the same, reached in
        fewer steps when the kernel changed little.  Ignored by the square
        loss (closed form).
    packed : tuple of ndarray, optional
        SVM / SVR: ``(W (T_b, k), Gp (T_b, k, m (m + 1) / 2))``, the effective
        kernels as weights of packed base kernels, ``K`` not given
        (:func:`~kernlearn.methods.mtmkl._smo.smo_buckets`: the solver
        computes the rows it reads; the same result).

    Returns
    -------
    beta : ndarray of shape (T_b, m)
    b : ndarray of shape (T_b,)
    L : ndarray of shape (T_b,)
    """
    if packed is not None and loss == "square":
        raise ValueError("packed kernels are read by the SVM / SVR solver only; the "
                         "square loss's closed form needs the assembled K.")
    T, m = mask.shape
    e = mask.astype(float)
    shift = np.zeros(T)
    if loss != "hinge":
        # the regression duals do not see a shift of a task's targets (1'beta
        # = 0: its bias takes it): solved on centred targets, beta and
        # L = y'beta keep the digits an offset would cancel (targets near 1e9
        # with a unit spread: L off by ~100, the kernel weights never left
        # their start, without a word)
        shift, y = _centred(y, e)
    if loss == "square":
        # (K + I/2C) beta + b 1 = y, 1'beta = 0; padding: unit diagonal, no 1
        A = K.copy()
        ar = np.arange(m)
        A[:, ar, ar] += np.where(mask, 0.5 / C, 1.0)
        # (symmetric positive definite: Cholesky, half the LU solve's flops)
        sol = spd_solve(A, np.stack([y, e], axis=-1))
        u, v = sol[..., 0], sol[..., 1]
        b = (e * u).sum(1) / (e * v).sum(1)
        beta = (u - b[:, None] * v) * e
        return beta, b + shift, _ridge_linear(y, beta, C)
    from ._smo import smo_buckets

    # one compiled SMO over the bucket's tasks (libsvm's algorithm and
    # stopping rule), each task started from beta0 when given; tol 1e-8, not
    # the 1e-5 of the SVC / SVR calls it replaces: at 1e-5 a fit with integer
    # sample weights and one on repeated rows stopped at two points 1e-5 apart
    # (scikit-learn's weight check), and the tighter stop costs no measurable
    # time on these small duals
    sizes = mask.sum(axis=1)
    Cb = C if np.ndim(C) == 0 else np.where(mask, C, 0.0)
    beta, b, _, converged = smo_buckets(K, y, sizes, Cb, regression=loss != "hinge",
                                        epsilon=epsilon, tol=1e-8, beta0=beta0,
                                        packed=packed)
    if not converged.all():
        from sklearn.exceptions import ConvergenceWarning  # (not on import: Dask workers)

        # (it named no remedy; the cap, 10^7 pair updates, is reached on kernels of
        # very large values, where each pair update moves the duals very little:
        # a poly kernel on raw columns of size 100 at C = 100 and at C = 1e4 alike)
        warn(f"the SVM / SVR dual (SMO) of {int((~converged).sum())} task(s) "
             "stopped at libsvm's iteration cap before its tolerance 1e-8.  Kernels "
             "of very large values are the usual cause: keep normalize=True and "
             "standardize=True (the defaults), or scale the inputs or precomputed "
             "kernels.", ConvergenceWarning)
    L = np.abs(beta).sum(1)
    if loss != "hinge":
        L = (y * beta).sum(1) - epsilon * L
    return beta, b + shift, L


def _centred(y, e):
    """Each task's mean of ``y`` over its rows ``e`` and the targets less it (zero on padding)."""
    shift = (y * e).sum(1) / np.maximum(e.sum(1), 1.0)
    return shift, (y - shift[:, None]) * e


def _ridge_linear(y, beta, C):
    """The kernel ridge dual's linear part :math:`y^\\top\\beta - \\sum_i\\beta_i^2/(4C_i)`
    per task, ``y`` centred (:func:`_centred`)."""
    return (y * beta).sum(1) - (beta * beta / (4.0 * C)).sum(1)


def ridge_linear_part(y, mask, beta, C):
    """:func:`solve_inner`'s linear parts ``L`` (square loss) of the duals ``beta``.

    Parameters
    ----------
    y : ndarray of shape (T_b, m)
        Targets, zero on padding.
    mask : ndarray of shape (T_b, m)
        Valid rows.
    beta : ndarray of shape (T_b, m)
        Duals (zero on padding).
    C : float or ndarray of shape (T_b, m)
        Loss weights.

    Returns
    -------
    L : ndarray of shape (T_b,)
    """
    return _ridge_linear(_centred(y, mask.astype(float))[1], beta, C)


def solve_all(blocks, F_b, y_b, loss, C, epsilon, G_b=None, global_bias=False,
              beta0=None):
    r"""Inner solves with effective kernels ``F F'`` per task (F: padded factors).

    ``G_b`` (padded rows of a factor :math:`G`, ``(T_b, m_b, r_s)`` per
    bucket) adds the shared kernel :math:`GG^\top` over *all* training rows,
    which couples the tasks, and ``global_bias`` one bias for all tasks: see
    :func:`solve_coupled`.

    Parameters
    ----------
    blocks : TaskBuckets
    F_b : list of ndarray of shape (T_b, m_b, r)
        Padded factors of the within-task effective kernels.
    y_b : list of ndarray of shape (T_b, m_b)
        Padded targets.
    loss : {"square", "hinge", "epsilon_insensitive"}
    C : float or list of ndarray
        Loss weight(s), see :func:`per_bucket`.
    epsilon : float
        Width of the epsilon-insensitive tube.
    G_b : list of ndarray of shape (T_b, m_b, r_s), optional
        Padded rows of the shared factor.
    global_bias : bool, default=False
        One bias for all tasks.
    beta0 : list of ndarray of shape (T_b, m_b), optional
        Per-task solves: duals to start from (:func:`solve_inner`).

    Returns
    -------
    beta : list of ndarray of shape (T_b, m_b)
    bias : ndarray of shape (T,)
    L : ndarray of shape (T,)
        Linear parts of the tasks' duals.
    """
    if global_bias or (G_b is not None and G_b[0].shape[2] > 0):
        if G_b is None:
            G_b = [np.zeros(Fb.shape[:2] + (0,)) for Fb in F_b]
        return solve_coupled(blocks, [Fb @ Fb.transpose(0, 2, 1) for Fb in F_b], G_b,
                             y_b, C, global_bias, loss, epsilon)
    beta, bias, Ls = [], [], []
    starts = [None] * len(y_b) if beta0 is None else beta0
    for (_, _, mask), Fb, yb, Cb, b0 in zip(blocks.buckets, F_b, y_b,
                                            per_bucket(C, len(y_b)), starts):
        Keff = Fb @ Fb.transpose(0, 2, 1)
        be, bb, Lb = solve_inner(loss, Keff, yb, mask, Cb, epsilon, b0)
        beta.append(be), bias.append(bb), Ls.append(Lb)
    return beta, blocks.by_task(bias), blocks.by_task(Ls)


def solve_coupled(blocks, K_b, G_b, y_b, C, global_bias=False, loss="square",
                  epsilon=0.1):
    r"""Kernel machine of all tasks on ``blockdiag(K_t) + G G'``.

    Other losses than the square (hinge, epsilon-insensitive) go to
    :func:`_solve_coupled_libsvm`; the rest of this docstring is the square
    loss's closed form.

    ``K_b``: the within-task effective kernels per bucket ``(T_b, m_b, m_b)``
    (zero on padding); ``G_b``: padded rows of the shared factor ``G``.
    The dual's stationarity conditions are, for every task,
    :math:`(K_t + D_t)\beta_t + G_t G^\top\beta + b_t\mathbf 1 = y_t`,
    with :math:`D_t = I/(2C)` and either :math:`\mathbf 1^\top\beta_t = 0` for
    every task (free per-task biases) or, ``global_bias``, one bias
    :math:`b_t = b` for all tasks and :math:`\sum_t\mathbf 1^\top\beta_t = 0`.
    Writing :math:`H` for the symmetric PSD map that solves the per-task
    systems (bordered by their bias constraint, or not), Woodbury's identity
    gives :math:`P = (H^{-1} + GG^\top)^{-1} = H - HG(I + G^\top HG)^{-1}G^\top H`,
    so the coupled problem costs batched per-task solves with
    :math:`r_s + 2` right-hand sides and one :math:`r_s\times r_s` system, not
    an :math:`n\times n` factorisation.  With a global bias,
    :math:`\beta = Py - bP\mathbf 1` and :math:`b = \mathbf 1^\top Py /
    \mathbf 1^\top P\mathbf 1`.

    Parameters
    ----------
    blocks : TaskBuckets
    K_b : list of ndarray of shape (T_b, m_b, m_b)
        Within-task effective kernels per bucket (zero on padding).
    G_b : list of ndarray of shape (T_b, m_b, r_s)
        Padded rows of the shared factor :math:`G`.
    y_b : list of ndarray of shape (T_b, m_b)
        Padded targets.
    C : float or list of ndarray
        Loss weight(s), see :func:`per_bucket`.
    global_bias : bool, default=False
        One bias for all tasks instead of one per task.
    loss : {"square", "hinge", "epsilon_insensitive"}, default="square"
    epsilon : float, default=0.1
        Width of the epsilon-insensitive tube.

    Returns
    -------
    beta : list of ndarray of shape (T_b, m_b)
    bias : ndarray of shape (T,)
    L : ndarray of shape (T,)
        Each task's :math:`y_t^\top\beta_t - \sum_i\beta_{ti}^2/(4C_i)`.
    """
    if loss == "hinge":
        return _solve_coupled_libsvm(blocks, K_b, G_b, y_b, C, global_bias, loss,
                                     epsilon)
    # one shift of all targets, which the bias(es) take (as in solve_inner):
    # the solves keep the digits an offset of the targets would cancel.  A
    # task's y_t'beta_t moves by shift * 1'beta_t, zero with per-task biases,
    # summing to zero over the tasks with a global one: added back exactly.
    masks = [mask for _, _, mask in blocks.buckets]
    shift = (sum(float((yb * mk).sum()) for yb, mk in zip(y_b, masks))
             / max(sum(int(mk.sum()) for mk in masks), 1))
    y_b = [(yb - shift) * mk for yb, mk in zip(y_b, masks)]
    beta, bias, L = (_solve_coupled_square(blocks, K_b, G_b, y_b, C, global_bias)
                     if loss == "square" else
                     _solve_coupled_libsvm(blocks, K_b, G_b, y_b, C, global_bias, loss,
                                           epsilon))
    return beta, bias + shift, L + shift * blocks.by_task([be.sum(1) for be in beta])


def _solve_coupled_square(blocks, K_b, G_b, y_b, C, global_bias):
    """:func:`solve_coupled`'s closed form of the square loss."""
    parts, S, GH = [], 0.0, 0.0
    for (_, _, mask), Kb, Gb, yb, Cb in zip(blocks.buckets, K_b, G_b, y_b,
                                            per_bucket(C, len(y_b))):
        m = mask.shape[1]
        e = mask.astype(float)
        A = Kb.copy()
        ar = np.arange(m)
        A[:, ar, ar] += np.where(mask, 0.5 / Cb, 1.0)
        # right-hand sides [y, 1, G] (zero on padding)
        rhs = np.concatenate([(yb * e)[..., None], e[..., None], Gb * e[..., None]],
                             axis=2)
        sol = np.linalg.solve(A, rhs) * e[..., None]
        if global_bias:
            H, b = sol, np.zeros(sol.shape[::2])  # no per-task border
        else:
            b = np.einsum("tm,tmc->tc", e, sol) / (e * sol[..., 1]).sum(1)[:, None]
            H = (sol - b[:, None, :] * sol[..., 1:2]) * e[..., None]
        # G'H[y, 1, G] over all rows: one GEMM per bucket
        Gf = Gb.reshape(-1, Gb.shape[2])
        prod = Gf.T @ H.reshape(-1, H.shape[2])
        GH = GH + prod[:, :2]
        S = S + prod[:, 2:]
        parts.append((H, b))
    r = GH.shape[0]
    coef = (np.linalg.solve(np.eye(r) + 0.5 * (S + S.T), GH) if r  # (r, 2): y and 1
            else np.zeros((0, 2)))
    P = [(H[..., :2] - H[..., 2:] @ coef, b[:, :2] - b[:, 2:] @ coef) for H, b in parts]
    b0 = 0.0
    if global_bias:  # 1'(Py) / 1'(P1) over all rows
        b0 = sum(Pb[..., 0].sum() for Pb, _ in P) / sum(Pb[..., 1].sum() for Pb, _ in P)
    beta, bias, Ls = [], [], []
    for (Pb, bb), yb, Cb in zip(P, y_b, per_bucket(C, len(y_b))):
        be = Pb[..., 0] - b0 * Pb[..., 1]
        beta.append(be)
        bias.append(np.full(len(be), b0) if global_bias else bb[:, 0])
        Ls.append((yb * be).sum(1) - (be * be / (4.0 * np.asarray(Cb))).sum(1))
    return beta, blocks.by_task(bias), blocks.by_task(Ls)


def _solve_coupled_libsvm(blocks, K_b, G_b, y_b, C, global_bias, loss, epsilon):
    """SVM or SVR of all tasks at once on ``blockdiag(K_t) + G G'`` (libsvm).

    libsvm has one bias, so only ``global_bias`` is possible; the kernel is
    assembled over all n training rows (:math:`O(n^2)` memory), which is why
    shared components are not the default for these losses.  Returns what
    :func:`solve_coupled` does, with :func:`solve_inner`'s linear parts.
    """
    if not global_bias:
        raise ValueError("coupled hinge / epsilon-insensitive solves have one bias "
                         "for all tasks (libsvm).")
    from sklearn.svm import SVC, SVR

    n, r = blocks.n_samples, G_b[0].shape[2]
    G, y, w = np.zeros((n, r)), np.zeros(n), np.ones(n)
    for (_, idx, mask), Gb, yb, Cb in zip(blocks.buckets, G_b, y_b,
                                          per_bucket(C, len(y_b))):
        G[idx[mask]], y[idx[mask]] = Gb[mask], yb[mask]
        w[idx[mask]] = np.broadcast_to(Cb, mask.shape)[mask]
    K = G @ G.T
    for (_, idx, mask), Kb in zip(blocks.buckets, K_b):
        for a in range(len(idx)):
            rows = idx[a, mask[a]]
            K[np.ix_(rows, rows)] += Kb[a][np.ix_(mask[a], mask[a])]
    # per-sample C_i as libsvm's C = 1 times sample_weight (as solve_inner)
    if loss == "hinge":
        est = SVC(kernel="precomputed", C=1.0, tol=1e-5).fit(K, y, sample_weight=w)
    else:
        est = SVR(kernel="precomputed", C=1.0, epsilon=epsilon, tol=1e-5).fit(
            K, y, sample_weight=w)
    beta_full = np.zeros(n)
    beta_full[est.support_] = est.dual_coef_[0]
    beta = blocks.gather(beta_full)
    Ls = [np.abs(be).sum(1) if loss == "hinge"
          else (yb * be).sum(1) - epsilon * np.abs(be).sum(1)
          for be, yb in zip(beta, y_b)]
    return beta, np.full(blocks.n_tasks, est.intercept_[0]), blocks.by_task(Ls)


