r"""MK-MTSFL (sec. 4 of paper 004): shared low-dimensional subspaces of few kernels.

The (l1, lq) Schatten norm, :math:`1 \le q < 2`:
:math:`\min_{Q\in R(\bar q)} \sum_t \max_{\beta_t} L_t(\beta_t) - \tfrac12
\beta_t^\top(\sum_j M_{tj}^\top Q_j M_{tj})\beta_t`, with
:math:`M_{tj} = \Sigma_j V_j[I_t]^\top` from the compact eigendecomposition
:math:`K_j = V_j\Sigma_j^2V_j^\top`
(:func:`~kernlearn.methods.mtmkl.task_kernels.kernel_factor`),
:math:`R(\bar q) = \{Q_j \succeq 0, \sum_j(\mathrm{tr}\,Q_j)^{\bar q}\le 1\}`,
:math:`\bar q = q/(2-q)`; solved by mirror descent with
:math:`\omega(Q)=\mathrm{tr}\,Q\log Q`
(:func:`kernlearn.solvers.mirror_descent.schatten_entropic_step`).  With one
kernel it is MTSFL [Argyriou et al. 2008], also solvable by that paper's
alternating minimisation (:func:`solve_mtsfl_altmin`).
"""

import numpy as np

from ...penalties.squared import lp_norm
from ...progress import Progress
from ...solvers._base import History
from ...solvers.mirror_descent import logsumexp, schatten_entropic_step, step_size
from ...utils._threads import check_abandoned
from .inner import solve_all
from .task_kernels import gather_rows, task_products

__all__ = ["solve_mtsfl", "solve_mtsfl_altmin"]


def solve_mtsfl(blocks, factors, y_b, loss, C, q=1.5, epsilon=0.1, max_iter=100,
                tol=1e-3, verbose=0, shared_blocks=None, global_bias=False,
                step="adaptive"):
    r"""MK-MTSFL by mirror descent over the block-diagonal :math:`Q` (sec. 4).

    Each :math:`Q_j` is kept as its eigendecomposition
    :math:`Z_j\,\mathrm{diag}(e^{\theta_j})Z_j^\top` (log-eigenvalues, so that
    :math:`\log Q_j` is exact and nothing underflows).  A step forms
    :math:`H_j = \log Q_j + \tfrac{s}{2}B_j` (:math:`B_j=\sum_t M_{tj}\beta_t
    \beta_t^\top M_{tj}^\top`, i.e. :math:`-2\nabla_{Q_j}f`), diagonalises it,
    and sets :math:`Q_j = \rho_j\,\mathrm{expm}(H_j)/\mathrm{tr}(\cdot)`
    (:func:`~kernlearn.solvers.mirror_descent.schatten_entropic_step`).
    Start: :math:`Q_j = (k^{-1/\bar q}/r_j)I`.

    The step size (``step="adaptive"``, an extension of the paper) starts at
    Nemirovski's :math:`s_1` (:func:`~kernlearn.solvers.mirror_descent.step_size`)
    and is tested on the objective, which every iteration evaluates exactly:
    after a decrease it grows by 10 %; after an increase the next step
    restarts from the best point with half the step.  It never falls below
    the paper's :math:`s_l \propto 1/\sqrt l`; a step at that floor is kept
    whatever its value, as in the paper.  The paper's schedule shrinks the
    step on a smooth objective that needs none: the MK-MTSFL classifier on
    50-400 School tasks of 8 rows stopped after 56-100 iterations (the cap),
    33-43 with this rule, at objectives as close to the optimum.

    Parameters
    ----------
    blocks : TaskBuckets
    factors : list of ndarray of shape (n, r_j)
        :math:`A_j = V_j\Sigma_j` of each kernel (:func:`kernel_factor`).
    y_b : list of ndarray
        Padded targets per bucket.
    loss : str
    C : float
    q : float, default=1.5
        Schatten mixed-norm exponent in ``[1, 2]``.
    epsilon : float, default=0.1
    max_iter : int, default=100
    tol : float, default=1e-3
        Relative duality gap; the lower bound is the larger of
        :math:`\sum_tL_t - \tfrac12\|(\lambda_{\max}(B_j))_j\|_{\bar q^*}`
        at the current duals and at their running average (weights halving
        per iteration; the dual is concave, so any average of feasible duals
        bounds the optimum: it cancels the duals' oscillation between steps).
    verbose : int, default=0
        Report each iteration (:class:`kernlearn.progress.Progress`).
    shared_blocks : array-like of bool of shape (k,), optional
        Blocks whose weight vector is common to all tasks (an extension of
        the paper, see :class:`~kernlearn.methods.mtmkl.components.BlockLayout`):
        block ``j``
        contributes :math:`\langle w_{0j}, L_j^\top\phi_j(x)\rangle` to every
        task, its regulariser is :math:`\|w_{0j}\|_2` (the Schatten norm of a
        single column) and its :math:`B_j = z_jz_j^\top` with
        :math:`z_j = \sum_t M_{tj}\beta_t`.  The inner problem couples the
        tasks (:func:`~kernlearn.methods.mtmkl.inner.solve_coupled`).
    global_bias : bool, default=False
        One free bias for all tasks instead of one per task (required with
        shared blocks for the hinge and epsilon-insensitive losses).
    step : {"adaptive", "nemirovski"}, default="adaptive"
        Step-size rule: the tested one above, or the paper's
        :math:`s_l = \sqrt{2\ln d}/(\|g\|_\infty\sqrt l)` (and the lower
        bound at the current duals only), as until the eighteenth pass.

    Returns
    -------
    result : dict
        ``Z``, ``log_theta`` (per kernel), ``beta``, ``b``, ``objective``,
        ``gap``, ``history``, ``n_iter``, ``converged``; ``Zt`` holds the
        columns :math:`M_{tj}\beta_t` (one summed column for shared blocks).
    """
    if step not in ("adaptive", "nemirovski"):
        raise ValueError(f"step must be 'adaptive' or 'nemirovski', got {step!r}")
    k = len(factors)
    shared = (np.zeros(k, bool) if shared_blocks is None
              else np.asarray(shared_blocks, bool))
    spec, shr = np.flatnonzero(~shared), np.flatnonzero(shared)
    qbar = np.inf if q >= 2 else q / (2.0 - q)
    qstar = 1.0 if np.isinf(qbar) else (np.inf if qbar == 1 else qbar / (qbar - 1.0))
    ranks = [A.shape[1] for A in factors]
    Zs = [np.eye(r) for r in ranks]
    t0 = 0.0 if np.isinf(qbar) else -np.log(k) / qbar
    log_th = [np.full(r, t0 - np.log(max(r, 1))) for r in ranks]
    gathered = {}  # a shared block reuses its kernel's factor: gather it once
    for A in factors:
        if id(A) not in gathered:
            gathered[id(A)] = gather_rows(blocks, A)
    A_b = [gathered[id(A)] for A in factors]
    hist = History()
    best_value, best_lower, best_state = np.inf, -np.inf, {}
    progress = Progress("MK-MTSFL", max_iter, level=verbose) if verbose else None
    converged, n_iter, beta = False, 0, None
    s_adapt, avg = None, None  # adaptive step; decayed sums of (1, L, Zt)
    for it in range(1, max_iter + 1):
        check_abandoned()  # (a threaded search's Ctrl-C: utils._threads)
        n_iter = it
        # effective per-task kernels F F' with F = [A_j Z_j e^{theta_j/2}]_j
        # Q_j is low-rank after a few steps: eigen-directions below 1e-12 of
        # the largest eigenvalue change no kernel entry, and dropping them
        # cuts the n r^2 products to n r r_eff
        top = max(float(t.max()) for t in log_th if t.size) if any(
            t.size for t in log_th) else 0.0
        live = [t > top + np.log(1e-12) for t in log_th]
        Fj = [Zs[j][:, live[j]] * np.exp(0.5 * log_th[j][live[j]]) for j in range(k)]
        # one (T_b m_b, r) x (r, r_eff) product per bucket and kernel on the
        # row blocks gathered once (zero on padding): a single large BLAS
        # call, no per-iteration gather
        def padded(js, bi, idx):
            return np.concatenate([np.zeros(idx.shape + (0,))] + [
                (A_b[j][bi].reshape(-1, ranks[j]) @ Fj[j]).reshape(idx.shape + (-1,))
                for j in js], axis=2)

        F_b = [padded(spec, bi, idx) for bi, (_, idx, _) in enumerate(blocks.buckets)]
        G_b = ([padded(shr, bi, idx) for bi, (_, idx, _) in enumerate(blocks.buckets)]
               if shr.size else None)
        # the SVM / SVR solves start from the previous iteration's duals
        # (feasible for any kernel): near the optimum a task needs a few pair
        # updates, not a solve from zero
        beta, bias, L = solve_all(blocks, F_b, y_b, loss, C, epsilon, G_b, global_bias,
                                  beta0=beta)
        # columns M_tj beta_t, (r_j, T): each task's beta touches only its own
        # m_t rows, so a gathered contraction (n r flops) replaces the dense
        # A' B product (n r T flops); a shared block has the one column
        # sum_t M_tj beta_t
        Zt = [task_products(blocks, Ab, beta) for Ab in A_b]
        Zt = [Z.sum(axis=1, keepdims=True) if shared[j] else Z for j, Z in enumerate(Zt)]
        quad = np.array([float((np.exp(log_th[j])[:, None]
                                * (Zs[j].T @ Zt[j]) ** 2).sum()) for j in range(k)])
        lmax = _top_eigenvalues(Zt)
        val = float(L.sum() - 0.5 * quad.sum())
        norm = lp_norm(lmax, qstar)
        low = float(L.sum() - 0.5 * norm)
        improved = val < best_value
        if improved:
            best_value = val
            best_state = dict(Z=[Z.copy() for Z in Zs],
                              log_theta=[t.copy() for t in log_th],
                              beta=[b.copy() for b in beta], b=bias.copy(),
                              Zt=[Z.copy() for Z in Zt])
        if step == "adaptive":
            # Zt and sum_t L_t are linear, resp. concave, in the duals
            avg = ([1.0, float(L.sum()), Zt] if avg is None else
                   [0.5 * avg[0] + 1.0, 0.5 * avg[1] + float(L.sum()),
                    [0.5 * a + Z for a, Z in zip(avg[2], Zt)]])
            low = max(low, avg[1] / avg[0] - 0.5 * lp_norm(
                _top_eigenvalues([a / avg[0] for a in avg[2]]), qstar))
        best_lower = max(best_lower, low)
        gap = best_value - best_lower
        n_active = int(sum(np.exp(logsumexp(t)) > 1e-6 for t in log_th))
        hist.append(objective=val, best=best_value, gap=gap, n_active=n_active)
        if progress is not None:
            progress.update(dict(iter=it, objective=val, gap=gap, n_active=n_active))
        if gap <= tol * abs(best_value):
            converged = True
            break
        s_it = step_size(it, sum(ranks), 0.5 * lmax.max())
        if step == "adaptive":
            s_adapt = (s_it if s_adapt is None
                       else s_adapt * 1.1 if improved else 0.5 * s_adapt)
            if s_adapt > s_it and not improved:
                # the step from here raised the objective: retry from the
                # best point with half the step (its duals' gradient)
                Zs, log_th, Zt = best_state["Z"], best_state["log_theta"], best_state["Zt"]
            s_adapt = max(s_adapt, s_it)
            s_it = s_adapt
        Zs, log_th = schatten_entropic_step(Zs, log_th, Zt, s_it, qbar)
    if progress is not None:
        progress.close("tol" if converged else "max_iter", n_iter)
    return dict(best_state, objective=best_value, gap=best_value - best_lower,
                history=hist, n_iter=n_iter, converged=converged)


def _top_eigenvalues(Zt):
    r"""Largest eigenvalue of each :math:`Z Z^\top` (0 for an empty block)."""
    return np.array([np.linalg.eigvalsh(Z.T @ Z if Z.shape[1] < Z.shape[0]
                                        else Z @ Z.T)[-1] if Z.size else 0.0
                     for Z in Zt])


def solve_mtsfl_altmin(blocks, factor, y_b, loss, C, max_iter=100, tol=1e-3,
                       eps=1e-10, verbose=0):
    r"""MTSFL (one kernel) by the alternating minimisation of Argyriou et al.

    Alternates the per-task solves for fixed :math:`D` and
    :math:`D \leftarrow (WW^\top + \varepsilon_l I)^{1/2}/\mathrm{tr}(\cdot)`,
    :math:`\varepsilon_l = \max(\varepsilon, 2^{-l})\,\mathrm{tr}(WW^\top)/r`,
    :math:`W = [D M_t\beta_t]_t` (Algorithm 1 of Argyriou et al., kernelised
    through the same factor as :func:`solve_mtsfl`).  The baseline of the
    paper's Fig. 1.

    Parameters
    ----------
    blocks : TaskBuckets
    factor : ndarray of shape (n, r)
        :math:`A = V\Sigma` of the kernel.
    y_b : list of ndarray
    loss : str
    C : float
    max_iter : int, default=100
    tol : float, default=1e-3
        Relative decrease of the objective that ends the loop.
    eps : float, default=1e-10
        Final relative perturbation keeping :math:`D` invertible.
    verbose : int, default=0
        Report each iteration (:class:`kernlearn.progress.Progress`).

    Returns
    -------
    result : dict
        ``Z``, ``log_theta`` (one block), ``beta``, ``b``, ``objective``,
        ``history``, ``n_iter``, ``converged``.
    """
    r = factor.shape[1]
    Z, d = np.eye(r), np.full(r, 1.0 / r)
    A_b = gather_rows(blocks, factor)
    hist = History()
    prev, converged, it = np.inf, False, 0
    state = {}
    progress = Progress("MTSFL altmin", max_iter, level=verbose) if verbose else None
    for it in range(1, max_iter + 1):
        check_abandoned()
        Fj = Z * np.sqrt(d)
        beta, bias, L = solve_all(blocks, [Ab @ Fj for Ab in A_b], y_b, loss, C, 0.1)
        Zt = task_products(blocks, A_b, beta)
        Y = Z.T @ Zt
        val = float(L.sum() - 0.5 * (d[:, None] * Y ** 2).sum())
        hist.append(objective=val)
        state = dict(Z=[Z.copy()], log_theta=[np.log(np.maximum(d, 1e-300))], beta=beta,
                     b=bias, Zt=[Zt])
        if progress is not None:
            progress.update(dict(iter=it, objective=val))
        if prev - val <= tol * abs(val):
            converged = True
            break
        prev = val
        W = (Z * d) @ Y  # D M_t beta_t
        WW = W @ W.T
        # epsilon continuation: with a fixed tiny epsilon, directions where D
        # vanished after the first steps can never come back
        e_l = max(eps, 0.5**it) * max(np.trace(WW), 1e-300) / r
        w2, U = np.linalg.eigh(WW + e_l * np.eye(r))
        sq = np.sqrt(np.maximum(w2, 0.0))
        Z, d = U, sq / sq.sum()
    if progress is not None:
        progress.close("tol" if converged else "max_iter", it)
    return dict(state, objective=val, history=hist, n_iter=it, converged=converged)


