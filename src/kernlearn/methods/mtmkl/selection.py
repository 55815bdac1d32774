r"""Closed-form leave-one-out residuals of the square loss (model selection).

For fixed kernel weights every task's inner problem is a kernel ridge
regression with a free bias: with :math:`D = \mathrm{diag}(1/(2Cw_i))`,
:math:`(K_t + D)\beta + b\mathbf 1 = y`, :math:`\mathbf 1^\top\beta = 0`, so
:math:`\beta = Py` with :math:`P` the top-left block of the inverse of the
bordered matrix, and the fitted values are :math:`\hat y = y - D\beta`, a
linear smoother with hat matrix :math:`H = I - DP`.  Removing a point from a
penalised least-squares fit with an unpenalised bias changes its residual by
the factor :math:`1/(1 - H_{ii})` (the leave-one-out lemma), so the
leave-one-out residual is

.. math:: y_i - f^{(-i)}(x_i) = \frac{D_{ii}\beta_i}{D_{ii}P_{ii}}
          = \frac{\beta_i}{P_{ii}},

one batched factorisation per bucket of tasks instead of :math:`m_t` refits.

:func:`loo_residuals` scores a fitted model at its kernel weights (learned on
all rows, not refitted per left-out row).  :func:`learn_loo_weights` learns
the kernel weights themselves by this criterion instead of the training
objective: with :math:`A_t = \sum_j\mu_jK_{tj} + \mathrm{diag}(1/w)`
(:math:`\mu = 2C\gamma`, so :math:`C = \sum_j\mu_j/2` and
:math:`\gamma = \mu/\sum_j\mu_j`; the residuals are invariant to a common
scale of :math:`A`) it minimises the leave-one-out squared error
:math:`\sum_i w_i r_i^2`, :math:`r = \beta/\mathrm{diag}(P)`, over
:math:`\mu \ge 0`, with the gradient

.. math:: \frac{\partial}{\partial\mu_j}\sum_i w_ir_i^2 = -2\Big[(Pv)^\top
          K_j\beta - \langle K_j, P\,\mathrm{diag}(v\odot r)\,P\rangle\Big],
          \qquad v = w\odot r/\mathrm{diag}(P)

(:math:`dP = -PK_jP`, as :math:`P` is a block of the inverse of the bordered
matrix).  The training objective rewards kernels that interpolate the few
rows of each task (a very narrow RBF fits them exactly); the left-out
residuals do not: such a kernel predicts nothing at a left-out row, so it is
at best a ridge term, which the learned scale already provides.
"""


import numpy as np
from scipy.optimize import minimize

from ._loo_eigen import EigenLOO, eigen_plan
from .inner import per_bucket
from ...utils._linalg import spd_inverse
from ...utils._warnings import warn

__all__ = ["kernel_ridge_loo", "learn_loo_weights", "loo_objective", "loo_residuals"]


def kernel_ridge_loo(K, y, mask, C):
    r"""Leave-one-out residuals of per-task kernel ridge with a free bias.

    Parameters
    ----------
    K : ndarray of shape (T_b, m, m)
        Kernels of a bucket of tasks (zero on padding).
    y : ndarray of shape (T_b, m)
        Targets (zero on padding).
    mask : ndarray of shape (T_b, m)
        Valid rows.
    C : float or ndarray of shape (T_b, m)
        Loss weight(s) :math:`C w_i` (:math:`C\sum_i w_i(y_i - f(x_i))^2 +
        \tfrac12\|f\|^2`).

    Returns
    -------
    residuals : ndarray of shape (T_b, m)
        :math:`y_i - f^{(-i)}(x_i)` (zero on padding).
    """
    m = mask.shape[1]
    e = mask.astype(float)
    # P annihilates each task's constant (its free bias): centred targets give
    # the same beta without cancelling the digits of a far offset in A^-1 y
    y = np.where(mask, y - (y * e).sum(1, keepdims=True) / e.sum(1, keepdims=True), 0.0)
    A = K.copy()
    ar = np.arange(m)
    A[:, ar, ar] += np.where(mask, 0.5 / C, 1.0)  # padding: unit diagonal
    Ainv = np.linalg.inv(A)
    u = np.einsum("tij,tj->ti", Ainv, e)  # A^-1 1 (valid rows)
    s = (e * u).sum(1)
    # P = A^-1 - A^-1 1 1' A^-1 / (1' A^-1 1) on the valid rows
    diag_P = np.einsum("tii->ti", Ainv) - u * u / s[:, None]
    beta = np.einsum("tij,tj->ti", Ainv, y * e) - u * ((u * y * e).sum(1) / s)[:, None]
    return np.where(mask, beta / np.where(mask, diag_P, 1.0), 0.0)


def loo_residuals(kernels, blocks, model, y, C, sample_weight=None):
    r"""Leave-one-out residuals of a fitted within-task model at its kernel weights.

    Each task's kernel is the learned :math:`\sum_j W_{tj}K_{tj}`
    (``model.coef``, formulations ``"mtfl"``, ``"mkl"``, ``"independent"``
    without shared components); see :func:`kernel_ridge_loo`.

    Parameters
    ----------
    kernels : TaskKernels
        Fitted.
    blocks : TaskBuckets
        The training buckets.
    model : MultitaskModel
        Fitted with the square loss.
    y : ndarray of shape (n,)
        Training targets.
    C : float
        Loss weight of the fit.
    sample_weight : ndarray of shape (n,), optional
        Positive sample weights of the fit.

    Returns
    -------
    residuals : ndarray of shape (n,)
        :math:`y_i - f^{(-i)}(x_i)` of every training row.
    """
    if model.coef[0] != "blocks" or model.shared_coef is not None:
        raise ValueError("closed-form leave-one-out needs a within-task model "
                         "(formulation 'mtfl', 'mkl' or 'independent', no shared "
                         "components).")
    W = model.coef[1]
    y_b = blocks.gather(np.asarray(y, dtype=float))
    if sample_weight is not None:
        C = [np.where(mask, C * wb, C) for wb, (_, _, mask)
             in zip(blocks.gather(np.asarray(sample_weight, dtype=float)), blocks.buckets)]
    out = []
    for (tasks, idx, mask), yb, Cb in zip(blocks.buckets, y_b,
                                          per_bucket(C, len(y_b))):
        K = np.zeros(mask.shape + mask.shape[1:])
        for j in np.flatnonzero(W[tasks].max(0) > 0):
            K += W[tasks, j][:, None, None] * kernels.blocks(j, idx, mask)
        out.append(kernel_ridge_loo(K, yb, mask, Cb))
    return blocks.scatter(out, blocks.n_samples)


def _loo_objective(mu, grams, y_b, w_b, masks, grad=True, shared=None, full=False):
    r"""Weighted leave-one-out SSE of per-task kernel ridge at ``mu``, and its gradient.

    ``grams[b]`` is ``(k, T_b, m, m)``; the system matrix is
    :math:`A = B + FF^\top` with :math:`B` block diagonal,
    :math:`\sum_j\mu_jK_{tj} + \mathrm{diag}(1/w)` on each task (identity on
    padding), and :math:`F = [\sqrt{\mu_{k+s}}Z_s]_s` the shared
    components' factors over all rows (``shared[s][b]``: padded rows
    ``(T_b, m, r_s)``).  Each task's bias is free, so :math:`P` is the
    bias-projected inverse: :math:`P = P_B - UM^{-1}U^\top`, :math:`U = P_BF`,
    :math:`M = I + F^\top U` (Woodbury), and every quantity below is formed
    from within-task blocks and :math:`n \times r` products.  ``full``: also
    return ``beta`` and the leave-one-out residuals, per bucket.
    """
    shared = shared or []
    k = grams[0].shape[0]
    mu_t, mu_s = mu[:k], mu[k:]
    f, g = 0.0, np.zeros(len(mu))
    PB, Fb = [], []
    for K, mask, w in zip(grams, masks, w_b):
        m = mask.shape[1]
        e = mask.astype(float)
        A = np.tensordot(mu_t, K, axes=1)
        ar = np.arange(m)
        A[:, ar, ar] += np.where(mask, 1.0 / np.where(mask, w, 1.0), 1.0)
        Ainv = spd_inverse(A)  # kernel plus a positive diagonal
        u = (Ainv @ e[:, :, None])[:, :, 0]
        sb = (e * u).sum(1)
        PB.append((Ainv - u[:, :, None] * u[:, None, :] / sb[:, None, None])
                  * (mask[:, :, None] & mask[:, None, :]))
    R = sum(Z[0].shape[2] for Z in shared)
    if R:
        Fb = [np.concatenate([np.sqrt(ms) * Z[b] for ms, Z in zip(mu_s, shared)], axis=2)
              for b in range(len(grams))]
        U = [P @ F for P, F in zip(PB, Fb)]
        Minv = np.linalg.inv(np.eye(R) + sum(F.reshape(-1, R).T @ Ub.reshape(-1, R)
                                             for F, Ub in zip(Fb, U)))
        c = Minv @ sum(Ub.reshape(-1, R).T @ y.ravel() for Ub, y in zip(U, y_b))
        UM = [Ub @ Minv for Ub in U]
    beta, diag = [], []
    for b, (P, y, mask) in enumerate(zip(PB, y_b, masks)):
        be = (P @ y[:, :, None])[:, :, 0]
        dP = np.einsum("tii->ti", P)
        if R:
            be = be - U[b] @ c
            dP = dP - (UM[b] * U[b]).sum(2)
        beta.append(be)
        diag.append(np.where(mask, dP, 1.0))
    res = [np.where(mask, be / dP, 0.0) for be, dP, mask in zip(beta, diag, masks)]
    f = float(sum((w * r * r).sum() for w, r in zip(w_b, res)))
    if not grad:
        return (f, beta, res) if full else f
    v = [w * r / dP for w, r, dP in zip(w_b, res, diag)]
    S = [vb * r for vb, r in zip(v, res)]
    Pv = [(P @ vb[:, :, None])[:, :, 0] for P, vb in zip(PB, v)]
    if R:
        cv = Minv @ sum(Ub.reshape(-1, R).T @ vb.ravel() for Ub, vb in zip(U, v))
        Pv = [p - Ub @ cv for p, Ub in zip(Pv, U)]
        Gt = [Ub.transpose(0, 2, 1) @ (Sb[:, :, None] * Ub) for Ub, Sb in zip(U, S)]
        G = sum(g_.sum(0) for g_ in Gt)
    for b, (K, P, Sb) in enumerate(zip(grams, PB, S)):
        # (batched products, not einsum: its three-operand loops were 80 % of a
        # CV fit on 2,000 rows)
        Q = P
        if R:
            Q = P - UM[b] @ U[b].transpose(0, 2, 1)
        # within-task blocks of P S P
        PSP = (Q * Sb[:, None, :]) @ Q
        if R:
            PSP += (UM[b] @ (G[None] - Gt[b])) @ UM[b].transpose(0, 2, 1)
        # d f / d mu_j = -2 (Pv' K_j beta - <K_j, PSP>): one pass over the kernels
        g[:k] -= 2.0 * (K.reshape(k, -1) @ (Pv[b][:, :, None] * beta[b][:, None, :]
                                             - PSP).ravel())
    off = 0
    for s_, Z in enumerate(shared):
        r_s = Z[0].shape[2]
        # every shared factor empty (linear kernels of constant columns): their
        # gradient is zero (U, M were never formed: an UnboundLocalError)
        if R == 0:
            break
        ZPv = sum(np.einsum("tir,ti->r", Zb, p) for Zb, p in zip(Z, Pv))
        Zb_ = sum(np.einsum("tir,ti->r", Zb, be) for Zb, be in zip(Z, beta))
        # rows of P Z_s: P_B Z_s - U M^-1 (U' Z_s)
        UZ = sum(np.einsum("tir,tiq->rq", Ub, Zb) for Ub, Zb in zip(U, Z))
        quad = 0.0
        for P, Zb, Ub, Sb in zip(PB, Z, U, S):
            PZ = P @ Zb - Ub @ (Minv @ UZ)
            quad += float(np.einsum("ti,tiq,tiq->", Sb, PZ, PZ))
        g[k + s_] = -2.0 * (ZPv @ Zb_ - quad)
        off += r_s
    return (f, g, beta) if full else (f, g)


def loo_objective(grams, y_b, w_b, masks, shared=None, factors=None, distinct=None):
    r"""The criterion of :func:`learn_loo_weights` as a function of :math:`\mu`.

    With exact factors of all within-task kernels but (at most) one, the
    criterion comes from one eigendecomposition per task of that kernel
    (:class:`~kernlearn.methods.mtmkl._loo_eigen.EigenLOO`: :math:`O(mn_a\rho)` an
    evaluation, :math:`\rho` the rank of a task's factor columns and :math:`n_a`
    the kernel's eigenvalues above round-off, instead of the :math:`O(m^3)`
    inverse), unless the tasks are so small that the inverse is cheaper;
    otherwise it is :func:`_loo_objective`.  Both give the same values to
    round-off.

    Parameters
    ----------
    grams, y_b, w_b, masks, shared
        As :func:`learn_loo_weights`'s (``w_b`` not None: zero on padding).
    factors : list of (None or list of ndarray of shape (T_b, m_b, r_j)), optional
        Per within-task kernel, its exact factors :math:`K_{tj} = L_{tj}L_{tj}^\top`
        per bucket (zero on padding), or ``None``.
    distinct : list of (None or tuple), optional
        Per bucket, the unfactored kernel's blocks on each task's distinct
        inputs (:func:`~kernlearn.methods.mtmkl._loo_eigen.distinct_blocks`;
        read instead of its blocks in ``grams``).

    Returns
    -------
    objective : callable
        ``objective(mu, grad=True, full=False)``, as :func:`_loo_objective`'s.
    """
    shared = shared or []
    dense = eigen_plan(grams[0].shape[0], factors, masks, shared)
    if dense is not False:
        return EigenLOO(grams, y_b, w_b, masks, shared, factors, dense, distinct)

    def objective(mu, grad=True, full=False):
        return _loo_objective(mu, grams, y_b, w_b, masks, grad=grad, shared=shared,
                              full=full)
    return objective


def _eig_solve(G, inv_d, X):
    """:math:`G\\,\\mathrm{diag}(d)\\,G^\\top X` per task (:func:`_loo_on_a_ray`'s inverse)."""
    return G @ (inv_d[:, :, None] * (G.transpose(0, 2, 1) @ X))


def _loo_on_a_ray(grams, y_b, w_b, masks, shared, weights, scales):
    r"""Leave-one-out SSE (:func:`_loo_objective`, no gradient) at ``c * weights``
    for every ``c`` in ``scales``, from one eigendecomposition per task.

    The within-task weights of ``weights`` must be equal (the uniform starts of
    :func:`learn_loo_weights`): each task's system is then
    :math:`cw_0\bar K + D^{-1}` with :math:`\bar K = \sum_jK_j` and
    :math:`D` the row weights, so with :math:`D^{1/2}\bar KD^{1/2} = V\Lambda
    V^\top` and :math:`G = D^{1/2}V` its inverse is
    :math:`G\,\mathrm{diag}(1/(cw_0\lambda + 1))\,G^\top` for every
    :math:`c`: one ``eigh`` replaces an inverse per scale, and each scale costs
    matrix-vector products (:math:`m \times r` products with the shared
    factors).  Equal to :func:`_loo_objective` to round-off.

    Returns
    -------
    sse : list of float
        One per entry of ``scales``.
    """
    k = grams[0].shape[0]
    w0 = float(weights[0])
    if not np.allclose(weights[:k], w0):
        raise ValueError("the within-task weights of a ray must be equal")
    eig = []
    for K, mask, w in zip(grams, masks, w_b):
        d = np.where(mask, np.sqrt(np.where(mask, w, 1.0)), 1.0)
        lam, V = np.linalg.eigh(d[:, :, None] * K.sum(0) * d[:, None, :])
        eig.append((np.maximum(lam, 0.0), d[:, :, None] * V, mask.astype(float)))
    Fb = [np.concatenate([np.sqrt(ms) * Z[b] for ms, Z in zip(weights[k:], shared)],
                         axis=2) for b in range(len(grams))] if shared else []
    R = Fb[0].shape[2] if Fb else 0
    out = []
    for c in scales:
        parts, Ms, Uy = [], np.eye(R), np.zeros(R)
        for b, ((lam, G, e), y) in enumerate(zip(eig, y_b)):
            inv_d = 1.0 / (c * w0 * lam + 1.0)
            u = _eig_solve(G, inv_d, e[:, :, None])[:, :, 0] * e
            sb = (e * u).sum(1)

            def pb(X, G=G, inv_d=inv_d, u=u, sb=sb, e=e):
                # the bias-projected inverse P_B X (zero on padding)
                return (_eig_solve(G, inv_d, X)
                        - u[:, :, None] * (u[:, None, :] @ X) / sb[:, None, None]) * e[:, :, None]

            be = pb(y[:, :, None])[:, :, 0]
            dP = (G * G) @ inv_d[:, :, None]
            dP = dP[:, :, 0] - u * u / sb[:, None]
            U = pb(np.sqrt(c) * Fb[b]) if R else None
            if R:
                F = np.sqrt(c) * Fb[b]
                Ms += F.reshape(-1, R).T @ U.reshape(-1, R)
                Uy += U.reshape(-1, R).T @ y.ravel()
            parts.append((be, dP, U))
        Minv = np.linalg.inv(Ms) if R else None
        cR = Minv @ Uy if R else None
        f = 0.0
        for (be, dP, U), w, mask in zip(parts, w_b, masks):
            if R:
                be = be - U @ cR
                dP = dP - ((U @ Minv) * U).sum(2)
            r = np.where(mask, be / np.where(mask, dP, 1.0), 0.0)
            f += float((w * r * r).sum())
        out.append(f)
    return out


def learn_loo_weights(grams, y_b, masks, w_b=None, C_grid=None, penalty=1e-4,
                      max_iter=200, shared=None, return_n_iter=False, factors=None,
                      objective=None):
    r"""Kernel weights and loss weight that minimise the leave-one-out error.

    Per-task kernel ridge regressions with a free bias share the kernel
    :math:`\sum_j\gamma_jK_{tj}` and the loss weight :math:`C`; both are
    chosen to minimise the closed-form leave-one-out squared error summed
    over all tasks' rows (module docstring), by L-BFGS-B over
    :math:`\mu = 2C\gamma \ge 0` from the best point of ``C_grid`` at
    uniform weights (restarted in the units of its result when it ends more
    than ten times above its start, or higher when it falls to zero:
    :func:`_search_in_units`).  ``penalty`` times :math:`\sum_j\mu_j` (in units of
    the start, relative to the criterion, which is scaled to 1 at the
    per-task means) breaks ties towards smaller weights: a kernel that only
    adds a ridge term (an interpolating kernel: a delta or a very narrow
    RBF) leaves the criterion unchanged when the other weights shrink with
    it, so it gets none.

    With ``shared`` factors :math:`Z_s` (kernels over all rows,
    :math:`Z_sZ_s^\top`), each also gets a weight :math:`\mu_{k+s}`: a
    component common to all tasks (the shared components of
    :func:`~kernlearn.methods.mtmkl.fit_multitask`), learned by the same
    criterion; its weight is zero when the tasks do not share it.

    Parameters
    ----------
    grams : list of ndarray of shape (k, T_b, m_b, m_b)
        Within-task base kernel blocks per bucket (zero on padding).
    y_b : list of ndarray of shape (T_b, m_b)
        Padded targets.
    masks : list of ndarray of shape (T_b, m_b)
        Valid rows.
    w_b : list of ndarray of shape (T_b, m_b), optional
        Padded positive sample weights (ones by default).
    C_grid : array-like of float, optional
        Starting loss weights (uniform kernel weights); default
        ``logspace(-3, 4, 15)``.
    penalty : float, default=1e-4
        Tie-break towards small weights (see above).
    max_iter : int, default=200
        L-BFGS-B iterations (a ``ConvergenceWarning`` when they run out).
    shared : list of list of ndarray of shape (T_b, m_b, r_s), optional
        Padded row blocks (:func:`~kernlearn.methods.mtmkl.gather_rows`) of
        the factors of the shared components.
    return_n_iter : bool, default=False
        Also return the search's L-BFGS-B iterations and whether it stopped
        on its tolerances rather than on ``max_iter``.
    factors : list of (None or list of ndarray of shape (T_b, m_b, r_j)), optional
        Exact factors of the within-task kernels that have one
        (:func:`loo_objective`: the criterion from one eigendecomposition per
        task when every kernel but one has one).
    objective : callable, optional
        :func:`loo_objective` of these arguments, when the caller has it
        (built here otherwise).

    Returns
    -------
    gamma : ndarray of shape (k + n_shared,)
        Weights on the simplex, the k within-task kernels then the shared
        components (exact zeros for unused ones).
    C : float
        Loss weight.
    loo_sse : float
        Weighted leave-one-out squared error at the optimum.
    n_iter : int
        L-BFGS-B iterations (``return_n_iter``).
    converged : bool
        Whether the search stopped before ``max_iter`` (``return_n_iter``).
    """
    k = grams[0].shape[0]
    shared = shared or []
    n_w = k + len(shared)
    if w_b is None:
        w_b = [m.astype(float) for m in masks]
    C_grid = np.logspace(-3, 4, 15) if C_grid is None else np.asarray(C_grid, float)
    # scale: the criterion of the per-task means (their leave-one-out SSE)
    base = 0.0
    for y, w, mask in zip(y_b, w_b, masks):
        sw = (w * mask).sum(1)
        mean = (w * y).sum(1) / sw
        # leave-one-out mean residual: (y_i - mean) / (1 - w_i / sum w)
        base += float((w * ((y - mean[:, None]) * mask / np.where(
            mask, 1.0 - w / sw[:, None], 1.0)) ** 2).sum())
    scale = 1.0 / max(base, 1e-300)

    obj = objective or loo_objective(grams, y_b, w_b, masks, shared, factors)

    # starts: uniform weights, without and with the shared components
    shapes = [np.r_[np.full(k, 1.0 / k), np.zeros(len(shared))]]
    if shared:
        shapes.append(np.full(n_w, 1.0 / n_w))
    if isinstance(obj, EigenLOO):  # the grid of each shape in one batched evaluation
        values = [obj(2.0 * C_grid[:, None] * shape, grad=False) for shape in shapes]
    else:  # (one eigendecomposition per task for the whole grid of each shape)
        values = [_loo_on_a_ray(grams, y_b, w_b, masks, shared, shape, 2.0 * C_grid)
                  for shape in shapes]
    starts = [(values[i][j], C, i) for j, C in enumerate(C_grid) for i in range(len(shapes))]
    _, C0, i0 = min(starts)
    unit = 2.0 * C0 / k  # optimise in units of the start (L-BFGS-B is not scale-free)
    x0 = 2.0 * C0 * shapes[i0] / unit
    if shared and i0 == 0:
        x0[k:] = 1e-3  # off the bound, so that the gradient can switch them on

    start = x0 * unit  # (the search may return a unit per weight: its own result's)
    res, unit, nit = _search_in_units(obj, x0, unit, scale, penalty, max_iter)
    if res.status == 1:  # iteration cap (not a stop on the tolerances)
        from sklearn.exceptions import ConvergenceWarning  # (not on import: Dask workers)

        # (it named max_iter, which the estimators' max_iter does not set: raising
        # that changed nothing but an unused-parameter warning)
        warn(f"the leave-one-out search over C and the kernel weights (L-BFGS-B) "
             f"stopped at its own cap of {max_iter} iterations (projected gradient "
             f"{np.abs(res.jac).max():.2g}); the model is its last point.  The "
             "estimator's max_iter and tol do not apply to this search: list fewer "
             "kernels (one weight each), or learn the weights by the training "
             "objective (a numeric C; kernel_selection='objective' in "
             "MultitaskMKLRegressorCV), where max_iter applies.", ConvergenceWarning)
    mu = np.maximum(res.x, 0.0) * unit
    if mu.sum() <= 0:
        mu = start
    mu[mu < 1e-8 * mu.max()] = 0.0
    sse = obj(mu, grad=False)
    out = (mu / mu.sum(), float(mu.sum() / 2.0), sse)
    return out + (nit, res.status != 1) if return_n_iter else out


#: restarts of the search in new units (:func:`_search_in_units`)
_RESTARTS = 8
#: a search whose weights shrink below this fraction of its start's fell to zero
_FELL = 1e-8
#: a weight's unit in a restart is at least this fraction of the largest weight
_FLOOR = 1e-3


def _search_in_units(obj, x0, unit, scale, penalty, max_iter):
    """L-BFGS-B on the criterion in ``unit`` s of the weights, restarted in the units
    of its result while that is more than ten times larger than its start.

    The tie-break ``penalty`` counts the weights in units of the start, so from a
    start far below the optimum it was no tie-break: ``Cs=(1e-4,)`` on 200
    diabetes rows stopped at ``C`` = 0.031 (the penalty a tenth of the criterion)
    where the starts from 0.1 to 1e6 reach 0.25; from ``Cs=(1e-6,)``, where the
    criterion's slope is below the penalty's, the weights fell to zero and the
    start came back as the model (the per-task means: R^2 0).  A search that
    falls to zero is restarted from a start ten times larger (at most
    ``_RESTARTS`` times; if every one falls, the first start is kept, as before).
    A search that falls more than ten times (not to zero) is restarted in the
    units of its result too, and the restart kept only where it lowers the
    criterion.  A start within a factor ten of its result (a grid that brackets
    the optimum) runs once, as before.

    Returns
    -------
    res : OptimizeResult
        Of the last run; ``res.x`` in the returned units (the first start's
        ``x0`` when every run fell to zero).
    unit : float
    n_iter : int
        L-BFGS-B iterations of all runs.
    """
    def run(x, unit, per_weight=None):
        def fun(z):
            f, g = obj(z * unit)
            return f * scale + penalty * z.sum(), g * scale * unit + penalty

        def fun_per_weight(z):  # (the same function in units of each weight)
            f, g = obj(z * per_weight)
            d = per_weight / unit
            return f * scale + penalty * (z * d).sum(), (g * scale * unit + penalty) * d

        if per_weight is not None:
            fun = fun_per_weight

        return minimize(fun, x, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * len(x),
                        options={"maxiter": max_iter, "ftol": 1e-15, "gtol": 1e-10})

    first, unit0, nit, x = x0, unit, 0, x0
    for attempt in range(_RESTARTS + 1):
        res = run(x, unit)
        nit += int(res.nit)
        grow = res.x.sum() / x.sum()
        if res.status == 1 or _FELL < grow <= 10.0 or attempt == _RESTARTS:
            break
        if grow <= _FELL:  # fell to zero: restart ten times higher
            unit *= 10.0
        else:  # climbed: restart in the units of the result
            x, unit = res.x / grow, unit * grow
    if res.x.sum() <= _FELL * x.sum():  # every start fell: the first one, as before
        res.x, unit = first, unit0
        return res, unit, nit
    # A fall of more than ten times (not to zero) may have been stopped short by the
    # penalty in the start's units too (Cs=(1e6,) stopped at C = 5,583 where the
    # other starts reach 0.22), but a default fit whose weights go sparse falls that
    # far as well: a restart in the result's units is kept only where it lowers the
    # criterion itself (restarting every such fall changed a default model for a
    # slightly worse criterion)
    #
    # The restart runs in units of each weight (the penalty still in units of
    # the result's sum): weights of very different sizes (Cs=(1e6,): the RBF's
    # 0.04 and a shared component's 34,052, 2.5e-6 and 2 in units of their
    # sum) made L-BFGS-B's first step, along the gradient, lower the criterion
    # by less than ``ftol``, and the restart stopped where it began or went on
    # by the round-off of the first run's end point.
    pen_unit = unit
    for _ in range(_RESTARTS):
        mu = res.x * unit
        grow = mu.sum() / (x * unit).sum()
        if res.status == 1 or not _FELL < grow < 0.1:
            break
        per = np.maximum(mu, _FLOOR * mu.max())  # (a weight at zero: a small unit)
        x2 = mu / per
        res2 = run(x2, pen_unit * grow, per)
        nit += int(res2.nit)
        before = obj(mu)[0]
        if not obj(res2.x * per)[0] < before - 1e-9 * abs(before):
            break
        res, x, unit, pen_unit = res2, x2, per, pen_unit * grow
    return res, unit, nit
