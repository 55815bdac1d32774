r"""MK-MTFL (sec. 3 of paper 004): kernel weights shared by all tasks.

The (l1, lp) mixed norm, :math:`p \ge 2`: :math:`\min_{\gamma\in\Delta_k}
f(\gamma)` with

.. math:: f(\gamma) = \max_{\lambda_j\in\Delta_{T,\bar p},\,\beta_t}
          \sum_t\Big[L_t(\beta_t) - \tfrac12\sum_j \tfrac{\gamma_j}{\lambda_{jt}}
          \beta_t^\top K_{tj}\beta_t\Big],\qquad \bar p = \tfrac{p}{p-2},

evaluated by alternating the per-task solves in :math:`\beta` with the closed
form of Lemma 3.1 (:func:`lemma31`) in :math:`\lambda`; :math:`\gamma` moves
by entropic mirror descent (2.2)
(:func:`kernlearn.solvers.mirror_descent.simplex_mirror_descent`) with
:math:`\partial_j f = -\tfrac12\sum_t S_{jt}/\lambda_{jt}`,
:math:`S_{jt} = \beta_t^\top K_{tj}\beta_t`.  With every task its own
:math:`\gamma_t` this is one l1-MKL per task (``formulation="mkl"``).
"""

import numpy as np

from ...solvers.mirror_descent import simplex_mirror_descent
from ...utils._numba_cache import njit_cached
from ._ridge_repeats import _FROM_ROWS, grouped_ridge, ridge_repeats
from .inner import per_bucket, ridge_linear_part, solve_coupled, solve_inner
from .task_kernels import gather_rows, task_products

__all__ = ["evaluate_mtfl", "lemma31", "merged_rows", "packed_blocks", "solve_mtfl",
           "square_blocks"]


def lemma31(a, r):
    r"""Lemma 3.1: :math:`\min_{\eta\in\Delta_{d,r}} \sum_i a_i/\eta_i`.

    .. math:: \eta_i = \frac{a_i^{1/(r+1)}}{(\sum_l a_l^{r/(r+1)})^{1/r}},\qquad
              \min = \Big(\sum_i a_i^{r/(r+1)}\Big)^{(r+1)/r},

    over :math:`\Delta_{d,r} = \{\eta\ge0: \sum_i\eta_i^r\le1\}`, with
    :math:`0/0 = 0`.  ``r = inf`` gives :math:`\eta \equiv 1` and the sum.

    Parameters
    ----------
    a : ndarray of shape (..., d)
        Non-negative numerators; the lemma is applied along the last axis.
    r : float
        Exponent, ``1 <= r <= inf``.

    Returns
    -------
    eta : ndarray of shape (..., d)
        The minimiser.
    value : ndarray of shape (...)
        The minimum.
    """
    a = np.maximum(np.asarray(a, dtype=float), 0.0)
    if np.isinf(r):
        return np.ones_like(a), a.sum(axis=-1)
    # scale by the max so that a**e neither under- nor overflows; eta is
    # scale invariant and the value scales linearly
    mx = a.max(axis=-1, keepdims=True)
    safe = np.where(mx > 0, mx, 1.0)
    ah = a / safe
    s = (ah ** (r / (r + 1.0))).sum(axis=-1, keepdims=True)
    s_safe = np.where(s > 0, s, 1.0)
    eta = ah ** (1.0 / (r + 1.0)) / s_safe ** (1.0 / r)
    value = (safe * s ** ((r + 1.0) / r))[..., 0]
    return eta, value


def evaluate_mtfl(blocks, grams, y_b, loss, C, gamma_t, pbar, lam=None, epsilon=0.1,
                  max_inner=5, inner_tol=1e-6, shared_factors=None):
    r"""Evaluate :math:`f(\gamma)` of (3.3) by alternating task solves and Lemma 3.1.

    For fixed :math:`\lambda` the tasks are independent kernel machines on
    :math:`\sum_j(\gamma_j/\lambda_{jt})K_{tj}`; for fixed :math:`\beta`
    the :math:`\lambda_{j\cdot}` are Lemma 3.1's minimisers with
    :math:`r=\bar p` and :math:`a_t = S_{jt}`.  Both steps increase the
    (jointly concave) objective.

    Parameters
    ----------
    blocks : TaskBuckets
    grams : list of ndarray of shape (k, T_b, m_b, m_b)
    y_b : list of ndarray
    loss : str
    C : float
    gamma_t : ndarray of shape (T, k)
        Kernel weights of each task (rows equal for MK-MTFL); need not lie on
        the simplex (finite differences).
    pbar : float
        :math:`\bar p = p/(p-2)` (``inf`` for ``p = 2``: :math:`\lambda\equiv1`).
    lam : ndarray of shape (k, T), optional
        Warm start of :math:`\lambda`.
    epsilon : float, default=0.1
    max_inner : int, default=5
    inner_tol : float, default=1e-6
    shared_factors : list of ndarray of shape (n, r_j), optional
        Shared components (see :func:`solve_mtfl`): ``gamma_t`` then has one
        more column per factor, and :math:`\|A_j^\top\beta\|^2` of each is
        returned last.

    Returns
    -------
    value : float
        :math:`f(\gamma)` (the last alternation's dual value).
    S : ndarray of shape (k, T)
        :math:`S_{jt} = \beta_t^\top K_{tj}\beta_t`.
    lam : ndarray of shape (k, T)
    L : ndarray of shape (T,)
    beta : list of ndarray
    bias : ndarray of shape (T,)
    """
    shared_b = (None if shared_factors is None
                else [gather_rows(blocks, A) for A in shared_factors])
    return _evaluate(blocks, _task_major(grams), y_b, loss, C, gamma_t, pbar, lam,
                     epsilon, max_inner, inner_tol, shared_b)


def _task_major(grams):
    """Task-major, packed copies of ``(k, T_b, m_b, m_b)`` kernel blocks.

    Each bucket becomes ``(T_b, k, m_b (m_b + 1) / 2)``: the upper triangles
    (the blocks are symmetric), tasks first.  In this layout both
    per-iteration contractions over the k kernels (the effective kernels and
    the quadratic forms :math:`S_{jt}`) are compiled passes over contiguous
    memory (:func:`_unpack_effective`, :func:`_packed_quadratic`), instead of
    strided ``einsum`` loops that were 80 % of a feature-wise (189-kernel)
    fit, and they stream half the memory of full blocks.
    """
    return [packed_blocks(lambda j, Kb=Kb: Kb[j], Kb.shape[1:3], Kb.shape[0])
            for Kb in grams]


def packed_blocks(block, shape, k):
    """One bucket's :func:`_task_major` layout, ``(T_b, k, m_b (m_b + 1) / 2)``,
    filled kernel by kernel from ``block(j)`` (``(T_b, m_b, m_b)``).

    A fit packs each kernel's blocks as they are computed: stacked first into
    ``(k, T_b, m_b, m_b)``, they were one more copy of the kernels, twice the
    memory of the packed ones.

    Parameters
    ----------
    block : callable
        ``block(j)``: kernel ``j``'s within-task blocks, ``(T_b, m_b, m_b)``.
    shape : tuple of int
        ``(T_b, m_b)``: the bucket's tasks and rows per task.
    k : int
        Number of kernels.

    Returns
    -------
    packed : ndarray of shape (T_b, k, m_b (m_b + 1) / 2)
    """
    T, m = shape
    out = np.empty((T, k, m * (m + 1) // 2))
    for j in range(k):
        _pack_upper(np.ascontiguousarray(block(j), dtype=float), j, out)
    return out


@njit_cached
def _pack_upper(Kj, j, out):
    """``out[t, j]``: the rows of the upper triangle of ``Kj[t]``, concatenated
    (a copy; a gather by ``triu_indices`` took 20 ms a kernel on 1,400 rows)."""
    T, m, _ = Kj.shape
    for t in range(T):
        q = 0
        for a in range(m):
            for b in range(a, m):
                out[t, j, q] = Kj[t, a, b]
                q += 1


#: The buckets' base kernels are also kept unpacked for the SVM / SVR solver's
#: rows (:func:`square_blocks`) up to this many bytes in all (Turnout's fold,
#: 957 rows and 2 kernels: 15 MB; twice the packed ones' memory)
_SQUARE_BYTES = 64 * 2**20


def square_blocks(grams_tm):
    """Each bucket's packed base kernels unpacked, ``(T_b, k, m_b, m_b)``, for
    the rows the SVM / SVR solver reads (``None`` for the buckets past
    :data:`_SQUARE_BYTES` in all, taken in order).

    A row's part left of the diagonal is a column of the packed upper
    triangles: read there, it was about 15 % of the cross-validated
    classifier's time on Turnout; read along a row of these, the same
    entries (so the same duals, bit for bit) cost a fifth.

    Parameters
    ----------
    grams_tm : list of ndarray of shape (T_b, k, m_b (m_b + 1) / 2)
        :func:`packed_blocks` of each bucket.

    Returns
    -------
    squares : list of ndarray of shape (T_b, k, m_b, m_b) or None
    """
    out, room = [], _SQUARE_BYTES
    for Gb in grams_tm:
        T, k, P = Gb.shape
        m = round((np.sqrt(8.0 * P + 1.0) - 1.0) / 2.0)
        if T * k * m * m * 8 > room:
            out.append(None)
            continue
        room -= T * k * m * m * 8
        Gs = np.empty((T, k, m, m))
        _unpack_base(Gb, Gs)
        out.append(Gs)
    return out


@njit_cached
def _unpack_base(Gb, out):
    """``out[t, j]``: the symmetric matrix of the packed rows ``Gb[t, j]``."""
    T, k, _ = Gb.shape
    m = out.shape[2]
    for t in range(T):
        for j in range(k):
            for a in range(m):
                row = a * m - (a * (a - 1)) // 2 - a  # packed (a, b) = row + b
                for b in range(a, m):
                    v = Gb[t, j, row + b]
                    out[t, j, a, b] = v
                    out[t, j, b, a] = v


def merged_rows(blocks, grams_tm, y_b):
    """:func:`~kernlearn.methods.mtmkl._smo.repeated_rows` of every bucket: the
    rows whose SVM / SVR duals are one variable (``first_b`` of :func:`_evaluate`).

    They depend on the rows, kernels and targets only, not on C: a C grid on
    one fold's rows finds them once (:class:`FactorStore`'s kept values).

    Parameters
    ----------
    blocks : TaskBuckets
        The tasks' rows in buckets (its ``buckets`` hold each bucket's row mask).
    grams_tm : list of ndarray of shape (T_b, k, m_b (m_b + 1) / 2)
        Each bucket's kernels in the packed layout (:func:`packed_blocks`).
    y_b : list of ndarray of shape (T_b, m_b)
        Each bucket's targets.

    Returns
    -------
    first : list of ndarray of int of shape (T_b, m_b)
        Per bucket, the smallest row of its task that each row repeats (itself
        if none): the row whose dual it shares.
    """
    from ._smo import repeated_rows

    return [repeated_rows(Gb, yb, mask.sum(1))
            for (_, _, mask), Gb, yb in zip(blocks.buckets, grams_tm, y_b)]


@njit_cached
def _unpack_effective(W, Gb, out):
    """``out[t]``: the symmetric matrix of the packed rows ``W[t] @ Gb[t]``.

    One pass instead of a batched product and two scatters by fancy index
    (about 45 ms an evaluation on tasks of 1,400 rows, most of a fit whose
    mirror descent runs 100 iterations); the same sums, in the same order.
    """
    T, k, _ = Gb.shape
    m = out.shape[1]
    tile = 64  # (both writes of a tile stay in cache: the transposed one is strided)
    for t in range(T):
        for a0 in range(0, m, tile):
            for b0 in range(a0, m, tile):
                for a in range(a0, min(a0 + tile, m)):
                    row = a * m - (a * (a - 1)) // 2 - a  # packed (a, b) = row + b
                    for b in range(max(a, b0), min(b0 + tile, m)):
                        v = 0.0
                        for j in range(k):
                            v += W[t, j] * Gb[t, j, row + b]
                        out[t, a, b] = v
                        out[t, b, a] = v


def _unpacked(Gp, m):
    """The base kernels ``(k, T_b, m, m)`` of packed task-major blocks ``Gp``."""
    T, k, _ = Gp.shape
    out = np.empty((k, T, m, m))
    for j in range(k):
        W = np.zeros((T, k))
        W[:, j] = 1.0
        _unpack_effective(W, Gp, out[j])
    return out


@njit_cached
def _packed_quadratic(Gb, beta, S):
    """``S[j, t] = beta_t' K_tj beta_t`` from the packed upper triangles ``Gb``.

    Over the nonzero duals only (the support vectors of an SVM, often a
    fraction of the rows): the terms of the zero ones are exact zeros, so
    the sums are the full ones, bit for bit, in the same order.
    """
    T, k, _ = Gb.shape
    m = beta.shape[1]
    nz = np.empty(m, np.int64)
    for t in range(T):
        n = 0
        for a in range(m):
            if beta[t, a] != 0.0:
                nz[n] = a
                n += 1
        for j in range(k):
            acc = 0.0
            for ia in range(n):
                a = nz[ia]
                ba = beta[t, a]
                q = a * m - (a * (a - 1)) // 2 - a  # packed (a, b) = q + b
                acc += Gb[t, j, q + a] * ba * ba
                row = 0.0
                for ib in range(ia + 1, n):
                    b = nz[ib]
                    row += Gb[t, j, q + b] * beta[t, b]
                acc += 2.0 * ba * row
            S[j, t] = acc


def _evaluate(blocks, grams_tm, y_b, loss, C, gamma_t, pbar, lam, epsilon, max_inner,
              inner_tol, shared_b=None, beta0=None, first_b=None, repeats=None,
              squares_b=None):
    r""":func:`evaluate_mtfl` on task-major blocks (:func:`_task_major`).

    ``shared_b`` (padded row blocks of the shared kernels' factors, one list
    per kernel) adds shared components: ``gamma_t`` then has one more column
    per shared kernel, the tasks' solves are coupled with one common bias
    (:func:`solve_coupled`), and the quadratic terms
    :math:`\|A_j^\top\beta\|^2` of the shared kernels are returned too.
    ``first_b`` (per bucket, :func:`~kernlearn.methods.mtmkl._smo.repeated_rows`)
    merges the SVM / SVR duals of repeated rows; ``repeats`` (per bucket, ``None``
    or :func:`~kernlearn.methods.mtmkl._ridge_repeats.ridge_repeats`'s) solves the
    kernel ridge of a bucket on its distinct rows; ``squares_b`` (per bucket,
    :func:`square_blocks`') the base kernels the SVM / SVR solver reads its rows from.
    """
    k, T = grams_tm[0].shape[1], blocks.n_tasks
    lam = np.ones((k, T)) if lam is None else lam
    prev = -np.inf
    S_sh = np.zeros(0)
    for _ in range(max_inner):
        W = gamma_t[:, :k] / lam.T
        beta, bias, Ls, K_b = [], [], [], []
        starts = [None] * len(y_b) if beta0 is None else beta0
        firsts = [None] * len(y_b) if first_b is None else first_b
        reps = [None] * len(y_b) if repeats is None else repeats
        squares = [None] * len(y_b) if squares_b is None else squares_b
        quad = []  # (packed kernels, duals) of S_jt per bucket
        for (tasks, _, mask), Gb, yb, Cb, b0, fb, rp, sq in zip(
                blocks.buckets, grams_tm, y_b, per_bucket(C, len(y_b)), starts, firsts,
                reps, squares):
            Wb = np.ascontiguousarray(W[tasks])
            if rp is not None:  # (square loss, no shared components)
                Ku = np.empty(rp.mask.shape + rp.mask.shape[1:])
                _unpack_effective(Wb, rp.Gp, Ku)
                u, bb, _ = solve_inner(loss, Ku, rp.y, rp.mask, rp.C)
                be = rp.expand(u)
                beta.append(be), bias.append(bb)
                Ls.append(ridge_linear_part(yb, mask, be, Cb))
                quad.append((rp.Gp, u))
                continue
            quad.append((Gb, None))
            if shared_b is None and loss != "square":
                # the SVM / SVR solver computes the effective kernel's rows it
                # reads (with warm starts, those of the support vectors): the
                # whole kernel, assembled at every evaluation, was over half
                # of a cross-validated fit (Default, C grid 0.1-10)
                be, bb, Lb = solve_inner(loss, None, yb, mask, Cb, epsilon, b0,
                                         packed=(Wb, Gb, fb) if sq is None
                                         else (Wb, Gb, fb, sq))
                beta.append(be), bias.append(bb), Ls.append(Lb)
                continue
            Keff = np.empty(mask.shape + mask.shape[1:])
            _unpack_effective(Wb, Gb, Keff)
            if shared_b is not None:
                K_b.append(Keff)
                continue
            be, bb, Lb = solve_inner(loss, Keff, yb, mask, Cb, epsilon, b0)
            beta.append(be), bias.append(bb), Ls.append(Lb)
        if shared_b is not None:
            g_sh = gamma_t[0, k:]
            G_b = [np.concatenate([np.zeros(m.shape + (0,))] + [
                np.sqrt(g) * Ab[bi] for g, Ab in zip(g_sh, shared_b) if g > 0], axis=2)
                for bi, (_, _, m) in enumerate(blocks.buckets)]
            beta, bias_t, L = solve_coupled(blocks, K_b, G_b, y_b, C, True, loss,
                                             epsilon)
        if shared_b is None:
            beta0 = beta
        S = np.zeros((k, T))
        for (tasks, _, _), (Gb, u), be in zip(blocks.buckets, quad, beta):
            Sb = np.empty((k, len(tasks)))
            _packed_quadratic(Gb, np.ascontiguousarray(be if u is None else u, dtype=float),
                              Sb)
            S[:, tasks] = Sb
        S = np.maximum(S, 0.0)
        if shared_b is not None:
            S_sh = np.array([float(np.sum(task_products(blocks, Ab, beta).sum(1) ** 2))
                             for Ab in shared_b])
        if not np.isinf(pbar):
            lam, _ = lemma31(S, pbar)
            # S_jt = 0 gives lambda_jt = 0 (0/0 = 0); a floor keeps the
            # effective kernel weight gamma/lambda finite
            top = lam.max(axis=1, keepdims=True)
            lam = np.where(top > 0, np.maximum(lam, 1e-6 * top), 1.0)
        if shared_b is None:
            L, bias_t = blocks.by_task(Ls), blocks.by_task(bias)
        val = (L.sum() - 0.5 * float((gamma_t[:, :k].T * S / lam).sum())
               - 0.5 * float(gamma_t[0, k:] @ S_sh))
        if np.isinf(pbar) or abs(val - prev) <= inner_tol * abs(val):
            break
        prev = val
    if shared_b is not None:
        return val, S, lam, L, beta, bias_t, S_sh
    return val, S, lam, L, beta, bias_t


def solve_mtfl(blocks, grams, y_b, loss, C, p=2.0, epsilon=0.1, per_task_weights=False,
               max_iter=100, tol=1e-3, max_inner=5, inner_tol=1e-6, verbose=0,
               shared_factors=None, beta0=None, gamma0=None, grams_tm=None, first_b=None,
               squares_b=None, groups_b=None):
    r"""MK-MTFL (or, ``per_task_weights=True``, one l1-MKL per task) by mirror descent.

    Parameters
    ----------
    blocks : TaskBuckets
    grams : list of ndarray of shape (k, T_b, m_b, m_b), or None
        Within-task base kernel blocks per bucket (``None`` with ``grams_tm``).
    y_b : list of ndarray of shape (T_b, m_b)
        Padded targets per bucket.
    loss : str
        Inner loss (see :func:`~kernlearn.methods.mtmkl.inner.solve_inner`).
    C : float
    p : float, default=2.0
        Norm across tasks, ``p >= 2`` (``inf`` allowed).
    epsilon : float, default=0.1
    per_task_weights : bool, default=False
        Give every task its own kernel weights :math:`\gamma_t` (one l1-MKL
        per task, ``formulation="mkl"``) instead of one :math:`\gamma` for
        all tasks (MK-MTFL).
    max_iter : int, default=100
        Mirror-descent iterations.
    tol : float, default=1e-3
        Stop when the duality gap (best value minus the best lower bound
        :math:`\sum_t L_t - \tfrac12\max_j G_j`) is below ``tol`` times the
        best value.
    max_inner : int, default=5
        Alternations :math:`\beta \leftrightarrow \lambda` per evaluation of
        :math:`f` (one when ``p = 2``: :math:`\lambda \equiv 1`).
    inner_tol : float, default=1e-6
        Relative change of the alternation's value that ends it.
    verbose : int, default=0
        Report each iteration (:class:`kernlearn.progress.Progress`).
    shared_factors : list of ndarray of shape (n, r_j), optional
        Shared components (an extension of the paper; not with
        ``per_task_weights``): kernel :math:`A_jA_j^\top` over all training
        rows with a weight vector common to all tasks.  Each is one more
        coordinate of the simplex :math:`\gamma` (a group of one "task", so
        no :math:`\lambda`), with :math:`\partial_j f = -\tfrac12\|A_j^\top
        \beta\|^2`; the tasks share one free bias.
    beta0 : list of ndarray of shape (T_b, m_b), optional
        SVM / SVR duals (per bucket) the first evaluation starts from (a
        solve at another C, scaled into its box); the optimum is the same.
    gamma0 : ndarray of shape (G, k), optional
        Kernel weights the mirror descent starts from (those of ``beta0``'s
        solve; :func:`~kernlearn.solvers.mirror_descent.simplex_mirror_descent`'s
        ``x0``) instead of uniform ones; the stopping rule is the same.
    grams_tm : list of ndarray of shape (T_b, k, m_b (m_b + 1) / 2), optional
        ``grams`` already in the packed task-major layout (:func:`packed_blocks`),
        which the solver reads only: computed once for the fits of a C grid.
    first_b : list of ndarray of int of shape (T_b, m_b), optional
        :func:`merged_rows` of these blocks and targets, found once for a C grid
        (SVM / SVR without shared factors; found here when not given).
    squares_b : list of ndarray of shape (T_b, k, m_b, m_b) or None, optional
        :func:`square_blocks` of ``grams_tm``: the SVM / SVR solver reads its
        rows there (the same rows, faster); derived once for a C grid.
    groups_b : list of (None or tuple), optional
        With ``grams_tm`` (square loss, no shared factors): per bucket, ``None``
        (the repeated rows are searched in its blocks), ``False`` (its inputs
        are too many distinct ones: solved on all rows) or
        :func:`~kernlearn.methods.mtmkl._ridge_repeats.input_groups`'
        ``(group, mask_u)`` of its tasks' distinct inputs, its ``grams_tm``
        then the packed kernels on those inputs only: the bucket's kernel
        ridge is solved on them (:func:`~kernlearn.methods.mtmkl._ridge_repeats.grouped_ridge`).

    Returns
    -------
    result : dict
        ``gamma (G, k)``, ``lam (k, T)``, ``beta`` (per bucket), ``b (T,)``,
        ``objective``, ``gap``, ``history``
        (:class:`~kernlearn.solvers._base.History`), ``n_iter``, ``converged``,
        ``first_beta`` (the duals of the first evaluation);
        with shared factors ``gamma`` has ``k + k_s`` columns
        and ``shared_z`` holds :math:`A_j^\top\beta` of each shared kernel.
    """
    _check_groups(groups_b, grams_tm, blocks, loss, shared_factors)
    k = grams[0].shape[0] if grams_tm is None else grams_tm[0].shape[1]
    shared_b = None
    if shared_factors is not None:
        if per_task_weights:
            raise ValueError("shared components need one kernel weight vector for "
                             "all tasks (per_task_weights=False, MK-MTFL).")
        shared_b = [gather_rows(blocks, A) for A in shared_factors]
    k_all = k + (0 if shared_b is None else len(shared_b))
    T = blocks.n_tasks
    repeats = None
    if shared_b is None and loss == "square":
        # repeated inputs: each task's kernel ridge on its distinct rows (Star's
        # 700 rows per task are 140 distinct: a 700 x 700 solve per evaluation
        # made the plain fit slower than the leave-one-out search's); also from
        # packed blocks, which the plain fits pass (without them, the fit on
        # all rows was 4x slower on Star-like tasks); where the repeats were
        # found from the inputs (groups_b), the blocks are the distinct rows';
        # where the inputs are too many (False), the blocks are not searched
        groups = groups_b or [None] * len(y_b)
        full = grams or [_unpacked(G, mask.shape[1])
                         if mask.shape[1] >= _FROM_ROWS and D is None else None
                         for G, D, (_, _, mask) in zip(grams_tm, groups, blocks.buckets)]
        repeats = [grouped_ridge(G, *D, yb, mask, Cb) if D
                   else None if K is None else ridge_repeats(K, yb, mask, Cb)
                   for (_, _, mask), G, D, K, yb, Cb
                   in zip(blocks.buckets, grams_tm or full, groups, full, y_b,
                          per_bucket(C, len(y_b)))]
    if grams_tm is None:
        # (a bucket solved on its distinct rows reads their packed kernels only)
        grams_tm = [_task_major([K])[0] if rp is None else rp.Gp
                    for K, rp in zip(grams, repeats or [None] * len(grams))]
    if shared_b is not None or loss == "square":
        first_b = None
    elif first_b is None:
        # repeated rows (categorical inputs: verbagg's 667 rows per task are 320-370
        # distinct with their labels) share one SVM / SVR dual, found once for all
        # evaluations: the same problem without the degenerate directions the
        # solver crawled along
        first_b = merged_rows(blocks, grams_tm, y_b)
    common = not per_task_weights
    pbar = np.inf if (not common or p == 2 or np.isinf(p)) else p / (p - 2.0)
    if common and np.isinf(p):
        pbar = 1.0
    n_groups = 1 if common else T
    group = np.zeros(T, dtype=np.int64) if common else np.arange(T)
    lam = np.ones((k, T))
    best = {"lam": lam.copy(), "beta": [np.zeros_like(y) for y in y_b],
            "b": np.zeros(T), "shared_z": []}
    last = {"lam": lam}  # what the oracle computed at the current point
    if beta0 is not None:
        last["beta"] = beta0

    def oracle(gamma, it):
        gt = gamma[group]  # (T, k_all)
        out = _evaluate(blocks, grams_tm, y_b, loss, C, gt, pbar, last["lam"], epsilon,
                        max_inner, inner_tol, shared_b, last.get("beta"), first_b,
                        repeats, None if first_b is None else squares_b)
        _, S, lam_, L, beta, bias = out[:6]
        Gj = np.zeros((n_groups, k_all))
        np.add.at(Gj[:, :k], group, (S / lam_).T)
        if shared_b is not None:
            Gj[0, k:] = out[6]
        Lg = np.bincount(group, weights=L, minlength=n_groups)
        last.update(lam=lam_, beta=beta, bias=bias)
        last.setdefault("first_beta", beta)
        return Lg - 0.5 * (gamma * Gj).sum(1), Lg - 0.5 * Gj.max(1), -0.5 * Gj

    def keep(better):
        tb = better[group]
        best["lam"][:, tb] = last["lam"][:, tb]
        best["b"][tb] = last["bias"][tb]
        for bi, ((tasks, _, _), be) in enumerate(zip(blocks.buckets, last["beta"])):
            sel = tb[tasks]
            best["beta"][bi][sel] = be[sel]
        if shared_b is not None:
            best["shared_z"] = [task_products(blocks, Ab, last["beta"]).sum(1)
                                for Ab in shared_b]

    res = simplex_mirror_descent(oracle, n_groups, k_all, max_iter, tol, keep,
                                 verbose, "MK-MTFL" if common else "per-task MKL",
                                 x0=gamma0)
    return dict(best, gamma=res.x, objective=res.objective, gap=res.gap,
                history=res.history, n_iter=res.n_iter, converged=res.converged,
                first_beta=last.get("first_beta"))


def _check_groups(groups_b, grams_tm, blocks, loss, shared_factors):
    """Raise unless every bucket's ``groups_b`` fits :func:`solve_mtfl`'s call.

    A bucket with groups has ``grams_tm`` on its distinct inputs only: only the
    square loss's kernel ridge without shared factors solves on them (the SVR,
    or shared factors over all rows, read them as the whole blocks, and the
    compiled solver does not check the sizes: out of bounds).
    """
    if groups_b is None or not any(D is not None and D is not False for D in groups_b):
        return
    if grams_tm is None or loss != "square" or shared_factors is not None:
        raise ValueError("groups_b (kernels on the distinct inputs) needs grams_tm, "
                         f"loss='square' and no shared_factors; got loss={loss!r}, "
                         f"grams_tm {'absent' if grams_tm is None else 'given'}, "
                         f"shared_factors {'absent' if shared_factors is None else 'given'}.")
    if len(groups_b) != len(blocks.buckets) or len(grams_tm) != len(blocks.buckets):
        raise ValueError(f"groups_b and grams_tm need one entry per bucket "
                         f"({len(blocks.buckets)}); got {len(groups_b)} and {len(grams_tm)}.")
    for b, (G, D, (_, _, mask)) in enumerate(zip(grams_tm, groups_b, blocks.buckets)):
        if D is None or D is False:
            continue
        group, mask_u = D
        m_u = mask_u.shape[1]
        if (group.shape != mask.shape or mask_u.shape[0] != mask.shape[0]
                or G.shape[::2] != (mask.shape[0], m_u * (m_u + 1) // 2)
                or group[mask].max(initial=0) >= m_u):
            raise ValueError(f"groups_b[{b}] does not fit bucket {b}: groups of shape "
                             f"{group.shape} on {m_u} distinct rows, the bucket's rows "
                             f"{mask.shape}, its packed kernels {G.shape}.")
