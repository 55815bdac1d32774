r"""Fitting a multitask kernel model end to end, and predicting with it.

:func:`fit_multitask` validates the choice of formulation once, fits the
kernels, builds the task buckets and the block list
(:class:`~kernlearn.methods.mtmkl.components.BlockLayout`), runs MK-MTFL
(:mod:`~kernlearn.methods.mtmkl.mtfl`) or MK-MTSFL
(:mod:`~kernlearn.methods.mtmkl.mtsfl`), and returns a
:class:`MultitaskModel`: what prediction needs.
"""

import time
from dataclasses import dataclass

import numpy as np

from ...solvers.mirror_descent import logsumexp
from ...utils._row_blocks import by_row_blocks
from .components import BlockLayout, bias_scale
from .inner import per_bucket
from .mtfl import merged_rows, packed_blocks, solve_mtfl, square_blocks
from .mtsfl import solve_mtsfl
from . import selection
from ._loo_eigen import distinct_blocks, distinct_inputs
from ._ridge_repeats import input_groups
from .selection import learn_loo_weights, loo_objective
from .task_kernels import FactorStore, TaskBuckets, gather_rows
from ...utils._warnings import warn

__all__ = ["FORMULATIONS", "MultitaskModel", "check_formulation", "fit_multitask"]

#: Formulations of :func:`fit_multitask`: MK-MTFL, MK-MTSFL and the baselines.
FORMULATIONS = ("mtfl", "mtsfl", "mkl", "independent")

#: Formulations that have shared components (``shared=True``).
SHARED_FORMULATIONS = ("mtfl", "mtsfl")


@dataclass
class MultitaskModel:
    """A fitted multitask kernel model: what prediction needs.

    Attributes
    ----------
    formulation : str
    kernel_weights : ndarray of shape (k,)
    task_kernel_weights : ndarray of shape (T, k)
    intercept : ndarray of shape (T,)
    coef : object
        ``("blocks", W (T, k), beta per bucket)`` for the within-task models,
        ``("full", list of (n, T) coefficient matrices, or of their factors
        (left, right) when smaller)`` for MK-MTSFL.
    objective : float
    gap : float
    history : dict
    n_iter : int
    converged : bool
    """

    formulation: str
    kernel_weights: np.ndarray
    task_kernel_weights: np.ndarray
    intercept: np.ndarray
    coef: tuple
    objective: float
    gap: float
    history: dict
    n_iter: int
    converged: bool
    shared_kernel_weights: np.ndarray = None
    shared_coef: list = None
    C: float = None

    def decision(self, kernels, blocks, X, task_pos):
        """Predictions ``f_t(x)`` of new rows, each for its own task.

        Parameters
        ----------
        kernels : TaskKernels
            Fitted on the training data.
        blocks : TaskBuckets
            The training buckets.
        X : ndarray
            New data (or precomputed test Grams ``(k, n_new, n_train)``).
        task_pos : ndarray of int of shape (n_new,)
            Task position (0..T-1) of each new row.

        Returns
        -------
        f : ndarray of shape (n_new,)
        """
        # by blocks of new rows: a bucket's kernel block is (tasks, new rows of
        # those tasks, training rows), n_new x n_train in all if built at once
        return by_row_blocks(
            lambda b: self._decision_block(
                kernels, blocks, X[:, b] if kernels.precomputed else X[b], task_pos[b]),
            len(task_pos))

    def _decision_block(self, kernels, blocks, X, task_pos):
        """:meth:`decision` of one block of new rows."""
        out = self.intercept[task_pos].astype(float)
        kind = self.coef[0]
        if kind == "blocks":
            _, W, beta = self.coef
            for (tasks, idx, mask), be in zip(blocks.buckets, beta):
                rows = [np.flatnonzero(task_pos == t) for t in tasks]
                m_new = max((len(r) for r in rows), default=0)
                if m_new == 0:
                    continue
                ia = np.zeros((len(tasks), m_new), np.int64)
                ma = np.zeros((len(tasks), m_new), bool)
                for a, r in enumerate(rows):
                    ia[a, : len(r)], ma[a, : len(r)] = r, True
                acc = np.zeros((len(tasks), m_new))
                for j in np.flatnonzero(W[tasks].max(0) > 0):
                    Kc = kernels.blocks(j, ia, ma, X_a=X, idx_b=idx, mask_b=mask)
                    acc += W[tasks, j][:, None] * np.einsum("tab,tb->ta", Kc, be)
                out[ia[ma]] += acc[ma]
        else:
            out += _full_kernel_terms(kernels, X, task_pos, self.coef[1])
        if self.shared_coef is not None:  # shared components, common to all tasks
            out += _full_kernel_terms(kernels, X, task_pos, self.shared_coef)
        return out


def _full_kernel_terms(kernels, X, task_pos, coefs):
    """``sum_j k_j(x, X_train) c_j`` of new rows (one block of :meth:`MultitaskModel.decision`).

    ``coefs[j]`` is ``None`` (kernel unused), an ``(n_train, T)`` matrix
    (one coefficient vector per task: row ``i`` uses column ``task_pos[i]``),
    a pair ``(left (n_train, r), right (r, T))`` whose product is that matrix
    (many tasks), or an ``(n_train,)`` vector common to all tasks.
    """
    out = np.zeros(len(task_pos))
    for j, Cj in enumerate(coefs):
        if Cj is None:
            continue
        Kc = kernels.full(j, X_a=X)
        if isinstance(Cj, tuple):
            left, right = Cj
            out += ((Kc @ left) * right.T[task_pos]).sum(axis=1)
        else:
            out += (Kc @ Cj if Cj.ndim == 1 else (Kc * Cj.T[task_pos]).sum(axis=1))
    return out


def _warn(name, res, max_iter, tol):
    if not res["converged"] and tol is not None:
        from sklearn.exceptions import ConvergenceWarning  # (not on import: Dask workers)

        warn(f"{name} stopped after max_iter={max_iter} iterations with a "
             f"relative duality gap of "
             f"{res['gap'] / max(abs(res['objective']), 1e-300):.2g} "
             f"> tol={tol}; increase max_iter.", ConvergenceWarning)


def check_formulation(formulation, shared=False):
    """Validate a formulation and whether it can have shared components.

    The one place this is checked: the estimators and :func:`fit_multitask`
    both call it.

    Parameters
    ----------
    formulation : str
        One of :data:`FORMULATIONS`.
    shared : bool, default=False
        Whether shared components are asked for.

    Raises
    ------
    ValueError
        If ``formulation`` is unknown, or ``shared`` is true and the
        formulation is a baseline (``"mkl"``, ``"independent"``).
    """
    if formulation not in FORMULATIONS:
        raise ValueError(f"formulation must be one of {FORMULATIONS}; got "
                         f"{formulation!r}.")
    if shared and formulation not in SHARED_FORMULATIONS:
        raise ValueError("shared components (shared=True) need formulation='mtfl' or "
                         f"'mtsfl'; got formulation={formulation!r}.")


def fit_multitask(kernels, X, y, task_rows, formulation="mtfl", loss="square", C=1.0,
                  p=2.0, q=1.5, epsilon=0.1, max_iter=100, tol=1e-3, max_inner=5,
                  max_rank=None, verbose=0, sample_weight=None, shared=False,
                  factor_store=None, C_grid=None):
    r"""Fit one of the multitask kernel formulations on validated inputs.

    Parameters
    ----------
    kernels : TaskKernels
        Unfitted kernels.
    X : ndarray
        Training data (or precomputed Grams ``(k, n, n)``).
    y : ndarray of shape (n,)
        Targets (labels in {-1, +1} for the hinge loss).
    task_rows : list of ndarray of int
        Rows of each task.
    formulation : {"mtfl", "mtsfl", "mkl", "independent"}, default="mtfl"
        MK-MTFL, MK-MTSFL, one l1-MKL per task, or one kernel machine per
        task on the average kernel.
    loss : {"square", "hinge", "epsilon_insensitive"}, default="square"
    C : float or "auto", default=1.0
        Loss weight.  ``"auto"``: the loss weight and the kernel weights
        (common to all tasks, MK-MTFL's model with ``p = 2``) minimise the
        closed-form leave-one-out error of every task's kernel ridge instead
        of the training objective
        (:func:`~kernlearn.methods.mtmkl.selection.learn_loo_weights`; square
        loss, ``formulation="mtfl"``, no shared components).
    p : float, default=2.0
        MK-MTFL's norm across tasks (``>= 2``).
    q : float, default=1.5
        MK-MTSFL's Schatten exponent (``[1, 2]``).
    epsilon : float, default=0.1
        SVR tube width.
    max_iter : int, default=100
    tol : float, default=1e-3
    max_inner : int, default=5
    max_rank : int, optional
        Rank cap of the kernel eigendecompositions (MK-MTSFL).
    verbose : int, default=0
        Report each mirror-descent iteration (:class:`kernlearn.progress.Progress`).
    sample_weight : ndarray of shape (n,), optional
        Positive weights of the samples' losses (per-sample :math:`C w_i`).
    shared : bool, default=False
        Shared components (an extension of the paper; MK-MTFL or MK-MTSFL;
        other losses than the square assemble the n x n kernel of all
        training rows for libsvm): every kernel gets a second block whose
        weight vector :math:`w_{0j}` is common to all tasks, and each task's
        bias becomes one free common bias plus a deviation :math:`d_t` on a
        constant task-specific kernel, so that
        :math:`f_t(x) = \sum_j\langle w_{0j} + w_{tj}, \phi_j(x)\rangle + b + d_t`
        (:mod:`~kernlearn.methods.mtmkl.components`).  The shared blocks
        enter the same mixed norm, as groups of a single "task"
        (:math:`\|w_{0j}\|_2`): MK-MTSFL's trace budget of :math:`R(\bar q)`,
        or MK-MTFL's simplex :math:`\gamma`, then decides how much of each
        kernel is common and how much task-specific (no extra
        hyper-parameter); with few points per task the common part is what
        lets tasks borrow strength.
    factor_store : FactorStore, optional
        Where the kernel factors of this fit are kept (MK-MTSFL, shared
        components); a store passed by the caller is reused by its other
        fits (a C grid on the same rows).  By default the fit makes its own,
        dropped with it.
    C_grid : array-like of float, optional
        ``C="auto"``: the starting loss weights of the search
        (:func:`~kernlearn.methods.mtmkl.selection.learn_loo_weights`).

    Returns
    -------
    kernels : TaskKernels
        Fitted.
    blocks : TaskBuckets
    model : MultitaskModel
    """
    check_formulation(formulation, shared)
    auto = isinstance(C, str)
    if auto and (C != "auto" or loss != "square" or formulation != "mtfl"):
        raise ValueError("C='auto' (kernel weights and C by leave-one-out) needs "
                         "loss='square' and formulation='mtfl'; got "
                         f"C={C!r}, loss={loss!r}, formulation={formulation!r}.")
    store = FactorStore() if factor_store is None else factor_store
    kernels.fit(X, sample_weight)
    layout = BlockLayout(kernels.n_kernels, bool(shared))
    blocks = TaskBuckets(task_rows)
    y_b = blocks.gather(np.asarray(y, dtype=float))
    warm = (C, sample_weight)  # (the loss weight before the samples' weights)
    if sample_weight is not None and not auto:
        # per-sample loss weights C w_i in the padded layout (C on padding)
        C = [np.where(mask, C * wb, C) for wb, (_, _, mask)
             in zip(blocks.gather(np.asarray(sample_weight, dtype=float)), blocks.buckets)]
    # (the constant kernel's scale: the leave-one-out route has no constant kernel)
    scale = bias_scale(y, blocks.task_rows, sample_weight) if shared and not auto else 1.0
    t0 = time.perf_counter()
    opts = dict(loss=loss, C=C, epsilon=epsilon, max_iter=max_iter, tol=tol,
                verbose=verbose)
    if auto:
        model = _fit_loo(kernels, blocks, y_b, sample_weight, C_grid, shared, store)
    elif formulation == "mtsfl":
        model = _fit_mtsfl(kernels, blocks, y_b, layout, scale, q, max_rank, store,
                           **opts)
    else:
        model = _fit_within_task(kernels, blocks, y_b, layout, scale, formulation, p,
                                 max_inner, max_rank, store, warm=warm, **opts)
    model.history["fit_time"] = np.array([time.perf_counter() - t0])
    return kernels, blocks, model


def _fit_loo(kernels, blocks, y_b, sample_weight, C_grid, shared, store):
    """Kernel ridge per task on the kernel weights and C of least leave-one-out error.

    With ``shared``, every linear kernel (exact factor of rank <= its
    columns) also gets a component common to all tasks, its weight learned
    by the same criterion (zero when the tasks do not share it).
    """
    k = kernels.n_kernels
    masks = [mask for _, _, mask in blocks.buckets]
    w_b = (None if sample_weight is None
           else blocks.gather(np.asarray(sample_weight, dtype=float)))
    lin = ([j for j in range(k) if kernels.specs_[j][0] == "linear"]
           if shared and not kernels.precomputed else [])
    Z = [store.get(kernels, j, None) for j in lin]
    Z_b = [gather_rows(blocks, A) for A in Z]
    # the linear kernels' exact factors (their scaled data): with one other
    # kernel, the criterion from one eigendecomposition per task of that kernel
    lf = [kernels.linear_factor(j) for j in range(k)]
    lf_b = [None if A is None else gather_rows(blocks, A) for A in lf]
    # (the plan loo_objective follows: the same function, looked up when called)
    dense = selection.eigen_plan(k, lf_b, masks, Z_b)
    # (the unfactored kernel on each task's distinct inputs, where they are read)
    distinct = [None if dense is None or dense is False
                else distinct_blocks(kernels, dense, idx, mask)
                for _, idx, mask in blocks.buckets]
    grams = _loo_grams(kernels, blocks, dense, distinct)
    # (the search's iterations and convergence are the model's: a fixed
    # n_iter_=1, converged_=True contradicted its ConvergenceWarning)
    w1 = [m.astype(float) for m in masks] if w_b is None else w_b
    # Each task's mean out of its targets: the bias-projected inverse P
    # annihilates a task's constant (its free bias), so beta = P y is the
    # same, but P y no longer cancels the offset's digits (targets near 1e6
    # with a spread of 8: C_ and the predictions lost 5 digits; near 1e12,
    # C_ moved by 2 %).
    levels = [(w * y).sum(1) / (w * mk).sum(1) for y, w, mk in zip(y_b, w1, masks)]
    y_b = [np.where(mk, y - c[:, None], 0.0) for y, c, mk in zip(y_b, levels, masks)]
    objective = loo_objective(grams, y_b, w1, masks, Z_b, lf_b, distinct)
    weights, C, sse, n_iter, converged = learn_loo_weights(
        grams, y_b, masks, w_b, C_grid, shared=Z_b, return_n_iter=True,
        objective=objective)
    mu = 2.0 * C * weights
    _, beta, res = objective(mu, grad=False, full=True)
    # fitted values K_mu beta + b = y - beta / w: each task's bias from its rows
    common = sum(m * (A @ (A.T @ blocks.scatter(beta, blocks.n_samples)))
                 for m, A in zip(mu[k:], Z))
    fit_b = [_kernel_terms(mu[:k], K, [None if F is None else F[b] for F in lf_b], be,
                           distinct=distinct[b])
             + be / np.where(mk, w, 1.0)
             for b, (K, be, w, mk) in enumerate(zip(grams, beta, w1, masks))]
    if len(Z):
        fit_b = [f + g for f, g in zip(fit_b, blocks.gather(common))]
    intercept = blocks.by_task([c + np.where(mk, y - f, 0).sum(1) / mk.sum(1)
                                for y, f, mk, c in zip(y_b, fit_b, masks, levels)])
    T = blocks.n_tasks
    shared_w, shared_coef = None, None
    if shared:
        shared_w = np.zeros(k)
        shared_w[lin] = weights[k:]
        b_all = blocks.scatter(beta, blocks.n_samples)
        shared_coef = [None] * k
        for j, m in zip(lin, mu[k:]):
            shared_coef[j] = m * b_all if m > 0 else None
    model = MultitaskModel(
        "mtfl", weights[:k], np.ones((T, k)), intercept,
        ("blocks", np.tile(mu[:k], (T, 1)), beta), sse, 0.0,
        # each task's share too: the caller maps it to the task's own units
        {"loo_sse": np.array([sse]),
         "loo_task_sse": blocks.by_task([(w * r * r).sum(1) for w, r in zip(w1, res)])},
        n_iter, converged,
        shared_kernel_weights=shared_w, shared_coef=shared_coef, C=C)
    return model


def _loo_grams(kernels, blocks, dense, distinct=None):
    """The within-task kernel blocks ``(k, T_b, m_b, m_b)`` per bucket that
    :func:`_fit_loo`'s criterion reads.

    All of them where the criterion inverts each task's system
    (``dense=False``, :func:`~kernlearn.methods.mtmkl._loo_eigen.eigen_plan`);
    otherwise only kernel ``dense``'s, the others left zero (the criterion
    takes those kernels through their exact factors, and so does
    :func:`_kernel_terms`): Star's 700 x 700 linear blocks and their copy
    into the stack were a sixth of the fit.  Nor kernel ``dense``'s where
    ``distinct`` (per bucket) has its blocks on the tasks' distinct inputs.
    """
    k = kernels.n_kernels
    if dense is False:
        return [np.stack([kernels.blocks(j, idx, mask) for j in range(k)])
                for _, idx, mask in blocks.buckets]
    out = []
    distinct = distinct or [None] * len(blocks.buckets)
    for (_, idx, mask), D in zip(blocks.buckets, distinct):
        G = np.zeros((k,) + mask.shape + mask.shape[1:])
        if dense is not None and D is None:
            G[dense] = kernels.blocks(dense, idx, mask)
        out.append(G)
    return out


def _kernel_terms(mu, K, factors, beta, distinct=None):
    r""":math:`\sum_j\mu_jK_j\beta_t` of each task of a bucket; a kernel with an exact
    factor ``factors[j]`` (``(T_b, m_b, r)``) through it (its block may be unbuilt:
    :func:`_loo_grams`), the unfactored one through ``distinct``
    (:func:`~kernlearn.methods.mtmkl._loo_eigen.distinct_blocks`) where given, the
    others through their blocks ``K[j]``."""
    out = np.zeros(beta.shape)
    for j, (m, F) in enumerate(zip(mu, factors)):
        if F is None and distinct is not None:
            # K = E K_u E': sum each distinct input's rows, multiply, spread back
            K_u, maps = distinct
            for t, (r, uniq, inv) in enumerate(maps):
                s = np.bincount(inv, weights=beta[t, r], minlength=len(uniq))
                out[t, r] += m * (K_u[t, :len(uniq), :len(uniq)] @ s)[inv]
        elif F is None:
            out += m * np.einsum("tab,tb->ta", K[j], beta)
        else:
            out += m * np.einsum("tar,tr->ta", F, np.einsum("tbr,tb->tr", F, beta))
    return out


def _fit_within_task(kernels, blocks, y_b, layout, scale, formulation, p, max_inner,
                     max_rank, store, loss, C, epsilon, max_iter, tol, verbose, warm=None):
    """MK-MTFL, per-task MKL or the average kernel: models on within-task blocks.

    ``warm``: ``(C, sample_weight)``; the SVM / SVR duals of the first
    evaluation start from those the store kept for the same problem at
    another C (a cross-validation's C grid on one fold), scaled.
    """
    k, T = layout.n_kernels, blocks.n_tasks
    # (each key hashes the training inputs: once per fit, for the store's keys)
    keys = store.kernel_keys(kernels)
    # (through the store: a cross-validation's fits on one fold's rows share them)
    if formulation == "independent" or layout.shared:
        grams = [np.stack([store.blocks(kernels, j, idx, mask) for j in range(k)])
                 for _, idx, mask in blocks.buckets]
        grams_tm = first_b = squares_b = groups_b = None
    else:
        grams, (grams_tm, first_b, squares_b, groups_b) = None, _packed_problem(
            kernels, blocks, y_b, loss, store, keys)
    if formulation == "independent":
        grams = [Kb.mean(axis=0, keepdims=True) for Kb in grams]
        res = solve_mtfl(blocks, grams, y_b, loss, C, 2.0, epsilon, max_iter=1, tol=tol)
        W = np.full((T, k), 1.0 / k)
        gamma, lam = np.full(k, 1.0 / k), np.ones((T, k))
    else:
        per_task = formulation == "mkl"
        factors = None
        if layout.shared:
            # the constant kernel (bias deviations) as one more within-task
            # block; the shared kernels through their factors over all rows
            # (layout.within_task: the k kernels, then layout.constant)
            grams = [np.concatenate([Kb, scale * (m[:, :, None] & m[:, None, :])[None]])
                     for Kb, (_, _, m) in zip(grams, blocks.buckets)]
            factors = [store.get(kernels, j, max_rank) for j in range(k)]
        key, beta0, gamma0 = None, None, None
        if warm is not None and loss != "square" and not layout.shared:
            # along a C grid: the solution at the nearest C fitted (duals
            # scaled, kernel weights as they were), else a start the caller
            # kept for these rows; the fit stops on its own gap all the same
            key = store.start_key(kernels, blocks, [*y_b, warm[1]],
                                  (loss, formulation, p, epsilon, max_inner), keys)
            beta0, gamma0 = store.start(key, warm[0]), store.start_weights(key, warm[0])
            if beta0 is None:
                beta0, gamma0 = store.row_start(blocks, warm[0])
            if beta0 is not None:  # (into the box: the scaling rounds)
                beta0 = [np.clip(b, -c, c) for b, c in zip(beta0, per_bucket(C, len(y_b)))]
        res = solve_mtfl(blocks, grams, y_b, loss, C, p, epsilon,
                         per_task_weights=per_task, max_iter=max_iter, tol=tol,
                         max_inner=max_inner, verbose=verbose, shared_factors=factors,
                         beta0=beta0, gamma0=gamma0, grams_tm=grams_tm, first_b=first_b,
                         squares_b=squares_b, groups_b=groups_b)
        store.keep_start(key, None if key is None else warm[0], res["beta"], res["gamma"])
        _warn("per-task MKL" if per_task else "MK-MTFL", res, max_iter, tol)
        g = res["gamma"]  # (1 or T, n_blocks): within-task blocks, then shared ones
        W = (g if per_task else g[np.zeros(T, np.int64)])[:, layout.within_task] \
            / res["lam"].T
        gamma = g.mean(axis=0) if per_task else g[0, layout.task_specific]
        lam = g if per_task else res["lam"].T[:, layout.task_specific]
    intercept, shared_coef, shared_w = res["b"].copy(), None, None
    if layout.shared:
        # the constant kernel's part of f_t is W_t,const * s * sum_i beta_ti
        sums = blocks.by_task([be.sum(1) for be in res["beta"]])
        intercept += W[:, layout.constant] * scale * sums
        W = W[:, layout.task_specific]
        shared_w = g[0, layout.shared_blocks]
        shared_coef = [w * (A / (A * A).sum(axis=0)) @ z if w > 0 else None
                       for w, A, z in zip(shared_w, factors, res["shared_z"])]
    return MultitaskModel(
        formulation, gamma, lam, intercept, ("blocks", W, res["beta"]),
        res["objective"], res["gap"], res["history"].as_dict(), res["n_iter"],
        res["converged"], shared_kernel_weights=shared_w, shared_coef=shared_coef)


def _packed_problem(kernels, blocks, y_b, loss, store, keys):
    """``(packed training blocks, repeated rows, unpacked blocks, input groups)``
    of a within-task fit (:func:`~kernlearn.methods.mtmkl.mtfl.packed_blocks`,
    :func:`~kernlearn.methods.mtmkl.mtfl.merged_rows`,
    :func:`~kernlearn.methods.mtmkl.mtfl.square_blocks`, ``None`` for the
    square loss; the square loss's :func:`_distinct_problem` per bucket: its
    packed blocks on the distinct inputs and their groups where it has them,
    the others ``None``).

    None depends on C: a store that keeps blocks (a cross-validation's
    fits on one fold's rows) derives them once for its C grid; they were
    stacked, packed and searched again for every C: over a quarter of the CV
    classifier's time outside its SVM solves (Default, Turnout).
    """
    k = kernels.n_kernels
    if loss == "square":
        key = store.start_key(kernels, blocks, [], ("distinct blocks",), keys)
        grams_tm, groups_b = zip(*store.kept(key, lambda: [
            _distinct_problem(kernels, idx, mask) for _, idx, mask in blocks.buckets],
            n_blocks=k * len(blocks.buckets)))
        return list(grams_tm), None, None, list(groups_b)
    key = store.start_key(kernels, blocks, [], ("packed blocks",), keys)
    grams_tm = store.kept(key, lambda: [
        packed_blocks(lambda j, i=idx, m=mask: kernels.blocks(j, i, m), idx.shape, k)
        for _, idx, mask in blocks.buckets], n_blocks=k * len(blocks.buckets))
    key = store.start_key(kernels, blocks, y_b, ("repeated rows",), keys)
    first_b = store.kept(key, lambda: merged_rows(blocks, grams_tm, y_b))
    key = store.start_key(kernels, blocks, [], ("square blocks",), keys)
    return grams_tm, first_b, store.kept(key, lambda: square_blocks(grams_tm)), None


def _distinct_problem(kernels, idx, mask):
    """A bucket's packed training blocks (:func:`~kernlearn.methods.mtmkl.mtfl.packed_blocks`)
    and ``None`` (its inputs not compared) or ``False`` (too many distinct
    ones), or, where its kernel ridge is solved on its tasks' distinct inputs
    (:func:`~kernlearn.methods.mtmkl._ridge_repeats.input_groups`), the packed
    blocks on those inputs and their ``(group, mask_u)``.

    Rows of equal inputs (on every kernel's view) have equal rows of every
    base kernel: the distinct rows are found from the inputs and only their
    blocks are built.  Star's three tasks of 700 rows have 140 distinct
    inputs: their whole 700 x 700 blocks, packed, unpacked and searched for
    repeated rows, were 50 of the plain regressor's 66 ms.
    """
    k = kernels.n_kernels
    maps = distinct_inputs(kernels, list(range(k)), idx, mask)
    groups = None if maps is None else input_groups(maps, mask)
    if groups is None:
        # (distinct inputs have distinct rows of a kernel but in degenerate
        # cases, so the blocks are not searched again: Carseats' 0.3 ms)
        return (packed_blocks(lambda j: kernels.blocks(j, idx, mask), idx.shape, k),
                None if maps is None else False)
    return packed_blocks(lambda j: distinct_blocks(kernels, j, idx, mask, maps)[0],
                         groups[1].shape, k), groups


def _fit_mtsfl(kernels, blocks, y_b, layout, scale, q, max_rank, store, loss, C, epsilon,
               max_iter, tol, verbose):
    """MK-MTSFL, with shared components when ``layout.shared``."""
    k, T = layout.n_kernels, blocks.n_tasks
    factors = [store.get(kernels, j, max_rank) for j in range(k)]
    # shared blocks reuse their kernel's factor; the constant block's factor
    # is the column sqrt(s) (the deviation of each task's bias)
    factors_all = layout.arrange(factors, np.full((blocks.n_samples, 1), np.sqrt(scale)),
                                 factors)
    res = solve_mtsfl(blocks, factors_all, y_b, loss, C, q, epsilon, max_iter, tol,
                      verbose, shared_blocks=layout.shared_mask(),
                      global_bias=layout.shared)
    _warn("MK-MTSFL", res, max_iter, tol)
    tr = np.array([np.exp(logsumexp(t)) for t in res["log_theta"]])
    live = tr > 1e-12 * max(tr.max(), 1e-300)

    def coef_of(jb, factored=False):  # V Sigma^-1 Q_j M_tj beta_t of block jb
        A = factors_all[jb]
        if not live[jb] or A.shape[1] == 0:
            return None  # (unused)
        Z, th, Zt = res["Z"][jb], np.exp(res["log_theta"][jb]), res["Zt"][jb]
        left = A / (A * A).sum(axis=0)
        # Q_j's eigen-directions that change no kernel entry (as in the solver)
        keep = th > 1e-12 * th.max()
        n_T, r_eff = A.shape[0] * Zt.shape[1], int(keep.sum())
        if factored and r_eff * (A.shape[0] + Zt.shape[1]) < n_T:
            # many tasks of few rows: the (n, T) product grows as T^2 (800
            # tasks of 6 rows, 3 kernels: 92 MB in the model and its file),
            # its factors through Q_j's live directions as (n + T) r_eff
            return left @ (Z[:, keep] * th[keep]), Z[:, keep].T @ Zt
        return left @ ((Z * th) @ (Z.T @ Zt))

    coefs = [coef_of(j, factored=True) for j in layout.task_specific]

    intercept, shared_coef = res["b"].copy(), None
    if layout.shared:
        # the constant block's part of f_t, sum_i c_ti * s: the bias deviation
        d = coef_of(layout.constant)
        intercept += 0.0 if d is None else scale * d.sum(axis=0)
        shared_coef = [None if c is None else c[:, 0]  # (n,): the one shared column
                       for c in (coef_of(j) for j in layout.shared_blocks)]
    task_w = np.zeros((T, k))
    for j in layout.task_specific:
        if coefs[j] is None:
            continue
        th = np.exp(res["log_theta"][j])
        # share of kernel j in each task's effective kernel vs its base kernel
        Fb = gather_rows(blocks, factors[j] @ (res["Z"][j] * np.sqrt(th)))
        eff = blocks.by_task([np.einsum("tir,tir->t", F, F) for F in Fb])
        base = blocks.by_task([np.einsum("tir,tir->t", F, F)
                               for F in gather_rows(blocks, factors[j])])
        task_w[:, j] = np.where(base > 0, eff / np.where(base > 0, base, 1), 0)
    return MultitaskModel(
        "mtsfl", tr[layout.task_specific] / tr.sum(), task_w, intercept,
        ("full", coefs), res["objective"], res["gap"], res["history"].as_dict(),
        res["n_iter"], res["converged"],
        shared_kernel_weights=(tr[layout.shared_blocks] / tr.sum() if layout.shared
                               else None),
        shared_coef=shared_coef)
