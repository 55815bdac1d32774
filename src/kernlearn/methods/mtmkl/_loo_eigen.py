r"""The leave-one-out criterion of :func:`~kernlearn.methods.mtmkl.selection.learn_loo_weights`
from one eigendecomposition per task.

Each task's system is :math:`A = \mu_eK_e + \sum_j\mu_jL_jL_j^\top + D^{-1}`
(``D`` the row weights): one kernel without a factor (``K_e``, the default
list's RBF; none when every kernel has one) and kernels with exact factors of
few columns (:math:`L_j`, the linear kernels' data), plus the shared
components :math:`\sum_s\mu_sZ_sZ_s^\top` over all rows.  With
:math:`D^{1/2}K_eD^{1/2} = V\Lambda V^\top` and :math:`G = D^{1/2}V`,
:math:`G^\top AG = I + \mu_e\Lambda + (\text{low rank})`: the inverse of the
dense part is :math:`G\Delta G^\top`, :math:`\Delta = (I + \mu_e\Lambda)^{-1}`,
for every :math:`\mu_e`, and the factors, each task's bias and the shared
components enter by Woodbury identities in a basis :math:`\hat X = G^\top B`
of their columns (``B``: an orthonormal basis of the span of
:math:`[L_j, \mathbf 1, Z_s]` on the task's rows, :math:`\rho` columns).
Every bias-projected block is then :math:`P = G(\Delta - NKN^\top)G^\top`,
:math:`N = \Delta\hat X`, with a :math:`\rho\times\rho` matrix :math:`K`, so an
evaluation costs :math:`O(mn_a\rho)` per task (its rows :math:`GN`; only the
:math:`n_a \le m` eigenvalues above round-off enter, as :math:`\Delta = 1`
elsewhere and :math:`G\Delta G^\top = D - G_a(I - \Delta_a)G_a^\top`) instead of
the :math:`O(m^3)` inverse and :math:`P\,\mathrm{diag}(s)\,P` of
:func:`~kernlearn.methods.mtmkl.selection._loo_objective`, whose criterion and
gradient it equals to round-off.  The gradient's traces need no
:math:`m\times m` product: :math:`G^\top K_eG = \Lambda`, so
:math:`\langle K_e, PSP\rangle` is a sum over :math:`GN`'s rows and
:math:`\rho\times\rho` traces.  An evaluation is one compiled call over every
task (:func:`~kernlearn.methods.mtmkl._loo_kernel.loo_evaluate`, on each task's
arrays without padding, set up once per search).
"""

import numpy as np

from ._loo_kernel import loo_criteria, loo_evaluate, task_offsets

__all__ = ["EigenLOO", "distinct_blocks", "distinct_inputs", "eigen_plan"]

#: singular values of a task's factor columns below this fraction of the
#: largest are dropped from its basis (their share of the Gram matrices is
#: below the round-off of forming them)
_BASIS_RTOL = 1e-13

#: points whose criterion and gradient :class:`EigenLOO` keeps (a search's
#: evaluations: a few dozen)
_MEMO = 256

#: tasks of this many rows and more are decomposed by their distinct rows (one
#: call each); smaller ones in one batched call
_DISTINCT_FROM = 64


def eigen_plan(k, factors, masks, shared):
    """The kernel :class:`EigenLOO` decomposes, or ``False`` where it does not apply
    or would not be cheaper.

    Parameters
    ----------
    k : int
        Number of within-task kernels.
    factors : list of (None or list of ndarray), optional
        Per kernel: ``None``, or its per-bucket factors ``(T_b, m_b, r)``.
    masks : list of ndarray of shape (T_b, m_b)
    shared : list of list of ndarray of shape (T_b, m_b, r_s)

    Returns
    -------
    dense : int or None or False
        The one kernel without a factor (``None``: every kernel has one);
        ``False`` with two or more kernels without one, or where the tasks
        are so small that their factor columns span them (School's schools:
        an evaluation's ``rho x rho`` products then cost more than the
        ``m x m`` inverse of :func:`~kernlearn.methods.mtmkl.selection._loo_objective`).
    """
    dense = [j for j in range(k) if factors is None or factors[j] is None]
    if len(dense) > 1:
        return False
    q = (sum(factors[j][0].shape[2] for j in range(k) if factors[j] is not None)
         + 1 + sum(Z[0].shape[2] for Z in shared))
    # flops of an evaluation per task (measured constants): m^2 rho + rho^3
    # against the inverse and P S P's m^3
    sizes = [(mask.shape[0], mask.shape[1], min(mask.shape[1], q)) for mask in masks]
    eig = sum(T * (2 * m * m * rho + 4 * rho ** 3) for T, m, rho in sizes)
    if eig >= sum(4 * T * m ** 3 for T, m, _ in sizes):
        return False
    return dense[0] if dense else None


def _distinct_rows(A):
    """Representatives and inverse of the bitwise-equal rows of ``A`` (``np.unique``'s
    ``first`` and ``inverse``), from a hash of each row checked against the row.

    The hash is an integer one of the rows' bits (products by odd weights,
    summed modulo 2^64: equal rows, equal hashes); a floating-point product
    with weights rounded equal rows apart where the product's blocking
    differed between them (20 distinct inputs were 22 distinct rows).
    """
    w = np.random.default_rng(0).integers(1, 2 ** 63, A.shape[1], dtype=np.uint64)
    h = (np.ascontiguousarray(A, dtype=np.float64).view(np.uint64) * (w | np.uint64(1))).sum(1)
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    rep = first[inv.ravel()]
    bad = ~(A == A[rep]).all(1)  # (a hash collision: its own row)
    rep[bad] = np.flatnonzero(bad)
    uniq, inv = np.unique(rep, return_inverse=True)
    return uniq, inv.ravel()


def distinct_inputs(kernels, js, idx, mask):
    """Each task's distinct inputs of a bucket on the views of kernels ``js``
    (rows equal on every view are one), or ``None`` where they are not read.

    Parameters
    ----------
    kernels : TaskKernels
        Fitted.
    js : list of int
        Kernels whose views are compared (none precomputed or a callable).
    idx, mask : ndarray of shape (T, m)
        The bucket's rows and valid positions.

    Returns
    -------
    maps : list of tuple or None
        Per task: its valid positions ``r``, the positions among them of its
        distinct inputs (ascending) and each valid row's distinct input;
        ``None`` for tasks of fewer than :data:`_DISTINCT_FROM` rows, sparse
        data, precomputed or callable kernels.
    """
    if mask.shape[1] < _DISTINCT_FROM or kernels.precomputed \
            or not isinstance(kernels.X_, np.ndarray) \
            or any(not isinstance(kernels.specs_[j][0], str) for j in js):
        return None  # (sparse data: the whole blocks)
    # The views of the bucket's valid rows only (row (t, i) is at[t, i] of
    # idx[mask]): the views of all of X, built again for each bucket, were 5 %
    # of a fit of 8 buckets and 10 kernels on 10 columns each.
    X, at = kernels.X_[idx[mask]], (np.cumsum(mask.ravel()) - 1).reshape(mask.shape)
    views = {}
    for j in js:  # (the default kernels all read X itself: compared once)
        V = kernels._views(X, j)
        views[id(V)] = V
    V = next(iter(views.values())) if len(views) == 1 else np.hstack(list(views.values()))
    maps = []
    for t in range(mask.shape[0]):
        r = mask[t].nonzero()[0]
        maps.append((r, *_distinct_rows(V[at[t, r]])))
    return maps


def distinct_blocks(kernels, j, idx, mask, maps=None):
    r"""Kernel ``j``'s blocks of a bucket on each task's distinct inputs, for
    :func:`_eigenpairs` (``None`` where it decomposes the whole blocks).

    Rows of equal inputs have equal kernel rows, so the blocks on the distinct
    inputs are all :func:`_eigenpairs` reads of tasks of
    :data:`_DISTINCT_FROM` rows and more: Star's three 700 x 700 RBF blocks
    (140 distinct inputs each) were a third of the fit.  Inputs equal to the
    bit are one row; the blocks' entries are those of the whole blocks to
    round-off (another product's blocking).

    Parameters
    ----------
    kernels : TaskKernels
        Fitted (neither precomputed nor a callable kernel ``j``).
    j : int
    idx, mask : ndarray of shape (T, m)
        The bucket's rows and valid positions.
    maps : list of tuple, optional
        :func:`distinct_inputs` to use (those of several kernels' views: the
        plain regressor's distinct rows); by default those of kernel ``j``.

    Returns
    -------
    K_u : ndarray of shape (T, m_u, m_u)
        Each task's blocks on its distinct inputs (zero on padding).
    maps : list of tuple
        Per task: its valid positions ``r``, the positions among them of its
        distinct inputs, and each valid row's distinct input.
    """
    if maps is None:
        maps = distinct_inputs(kernels, [j], idx, mask)
        if maps is None:
            return None
    T = mask.shape[0]
    m_u = max(len(u) for _, u, _ in maps)
    idx_u, mask_u = np.zeros((T, m_u), dtype=idx.dtype), np.zeros((T, m_u), dtype=bool)
    for t, (r, uniq, _) in enumerate(maps):
        idx_u[t, :len(uniq)], mask_u[t, :len(uniq)] = idx[t, r[uniq]], True
    return kernels.blocks(j, idx_u, mask_u), maps


def _eigenpairs(K, d2, mask, distinct=None):
    r"""Eigenvalues above round-off and :math:`G = D^{1/2}V` of every task's
    :math:`D^{1/2}KD^{1/2}`, from its distinct rows.

    A task with repeated inputs repeats rows of its kernel: with :math:`E` the
    map of rows to distinct rows, :math:`K = EK_uE^\top` and
    :math:`C = E^\top DE` (the weight of each distinct row), the nonzero
    eigenpairs are those of :math:`C^{1/2}K_uC^{1/2} = U\Lambda U^\top`, with
    :math:`G = DEC^{-1/2}U` (the others are zero): Star's tasks of 700 rows
    have 140 distinct ones.  Eigenvalues below eigh's round-off (numpy's rank
    tolerance, ``m`` eps times the largest) are zeros: there
    :math:`\Delta = 1`, so only the others are kept (a smooth kernel's spectrum
    falls fast: about 70 of 700 on a task of Star).  ``distinct``
    (:func:`distinct_blocks`): :math:`K_u` and :math:`E` from the inputs (``K``
    is not read); otherwise from the bitwise-distinct rows of ``K``.

    Returns
    -------
    lam : ndarray of shape (T, n_a)
    G : ndarray of shape (T, m, n_a)
        Zero on padding.
    """
    T, m = mask.shape
    if m < _DISTINCT_FROM:  # small tasks: one batched call, no loop over the tasks
        d = np.sqrt(d2)
        lam, U = _above_round_off(*np.linalg.eigh(d[:, :, None] * K * d[:, None, :]), m)
        return lam, d[:, :, None] * U
    if distinct is None:
        maps = []
        for t in range(T):
            r = mask[t].nonzero()[0]
            maps.append((r, *_distinct_rows(K[t][np.ix_(r, r)])))
    else:
        K_u, maps = distinct
    m_u = max(len(u) for _, u, _ in maps)
    H = np.zeros((T, m_u, m_u))
    for t, (r, uniq, inv) in enumerate(maps):
        n_u, sc = len(uniq), np.sqrt(np.bincount(inv, weights=d2[t, r]))
        Ku = (K_u[t, :n_u, :n_u] if distinct is not None
              else K[t][np.ix_(r[uniq], r[uniq])])
        H[t, :n_u, :n_u] = sc[:, None] * Ku * sc[None, :]
    lam, U = _above_round_off(*np.linalg.eigh(H), m)
    G = np.zeros((T, m, lam.shape[1]))
    for t, (r, _, inv) in enumerate(maps):
        c = np.bincount(inv, weights=d2[t, r])
        G[t, r] = (d2[t, r] / np.sqrt(c[inv]))[:, None] * U[t, inv]
    return lam, G


def _above_round_off(lam, U, m):
    """The eigenpairs whose eigenvalue exceeds ``m`` eps times the largest (the
    others zero), as many per task as the most of any task."""
    tol = m * np.finfo(float).eps * np.maximum(lam[:, -1:], 0.0)
    lam = np.where(lam > tol, lam, 0.0)
    n_a = int((lam > 0).sum(1).max())
    return lam[:, lam.shape[1] - n_a:], U[:, :, U.shape[2] - n_a:]


def _T(A):
    return A.swapaxes(-1, -2)


class EigenLOO:
    r"""Weighted leave-one-out SSE and its gradient, as ``_loo_objective``'s.

    Parameters
    ----------
    grams : list of ndarray of shape (k, T_b, m_b, m_b)
    y_b, w_b, masks : list of ndarray of shape (T_b, m_b)
    shared : list of list of ndarray of shape (T_b, m_b, r_s)
    factors : list of (None or list of ndarray of shape (T_b, m_b, r_j))
        Exact factors :math:`K_{tj} = L_{tj}L_{tj}^\top` of the within-task
        kernels that have one (zero on padding).
    dense : int or None
        :func:`eigen_plan`'s kernel.
    distinct : list of (None or tuple), optional
        Per bucket, :func:`distinct_blocks` of kernel ``dense`` (its blocks in
        ``grams`` are then not read).
    """

    def __init__(self, grams, y_b, w_b, masks, shared, factors, dense, distinct=None):
        self.k, self.dense, self.S = grams[0].shape[0], dense, len(shared)
        self.low = [j for j in range(self.k) if j != dense]
        self._low = np.array(self.low, dtype=np.int64)
        self._memo, self._full = {}, None
        self.masks = masks
        distinct = distinct or [None] * len(grams)
        parts = [self._part(b, K, y, w, mask, shared, factors, distinct[b])
                 for b, (K, y, w, mask) in enumerate(zip(grams, y_b, w_b, masks))]
        # every task's arrays without their padding, one after the other (the
        # compiled evaluation's flat buffers, set up once per search: a bucket's
        # valid rows in task order are its arrays indexed by its mask)
        self.off = task_offsets(
            np.concatenate([p["mask"].sum(1) for p in parts]),
            np.concatenate([np.full(len(p["mask"]), p["lam"].shape[1]) for p in parts]),
            np.concatenate([np.full(len(p["mask"]), p["B"].shape[2]) for p in parts]))

        def flat(key, per_row=True):
            return np.concatenate([(p[key][p["mask"]] if per_row else p[key]).ravel()
                                   for p in parts])

        self.bufs = (flat("lam", False), flat("G"), flat("GG"), flat("X", False), flat("B"),
                     flat("DB"), flat("d2"), flat("w"), flat("Dy"), flat("yh", False),
                     flat("RL", False), flat("re", False), flat("RZ", False))
        self.eL = np.cumsum([0] + parts[0]["wL"]).astype(np.int64)
        self.eZ = np.cumsum([0] + parts[0]["wZ"]).astype(np.int64)
        self.n_rows = int(self.off[-1, 0])

    def _part(self, b, K, y, w, mask, shared, factors, distinct=None):
        """Bucket ``b``'s eigenpairs, factor basis and their products with the targets."""
        T, m = mask.shape
        d2 = np.where(mask, w, 1.0)  # D (one on padding)
        lam, G = np.zeros((T, 0)), np.zeros((T, m, 0))
        if self.dense is not None:
            lam, G = _eigenpairs(K[self.dense], d2, mask, distinct)
        cols = ([factors[j][b] for j in self.low] + [mask[:, :, None].astype(float)]
                + [Z[b] for Z in shared])
        # an orthonormal basis of the task's factor columns: B = U (sv Vt)
        U, sv, Vt = np.linalg.svd(np.concatenate(cols, axis=2), full_matrices=False)
        rho = max(1, int((sv > _BASIS_RTOL * sv[:, :1]).sum(1).max()))
        R = sv[:, :rho, None] * Vt[:, :rho]  # (T, rho, q): B = U[..., :rho] R
        B = U[:, :, :rho]
        e = np.cumsum([0] + [c.shape[2] for c in cols])
        n_l = len(self.low)
        # (everything that does not depend on the weights, once per search)
        return {"RL": R[:, :, :e[n_l]], "RZ": R[:, :, e[n_l + 1]:], "re": R[:, :, e[n_l]],
                "wL": [c.shape[2] for c in cols[:n_l]], "wZ": [c.shape[2] for c in cols[n_l + 1:]],
                "mask": mask, "w": w, "d2": d2, "lam": lam, "G": G, "GG": G * G, "B": B,
                "DB": d2[:, :, None] * B, "X": _T(G) @ B, "Dy": d2 * y,
                "yh": (_T(G) @ y[:, :, None])[:, :, 0]}

    def __call__(self, mu, grad=True, full=False):
        """``f``, ``(f, g)``; ``full``: ``(f, beta, res)`` / ``(f, g, beta)``.

        ``mu`` of shape ``(n_points, n_weights)`` (no ``grad``, no ``full``): the
        criterion at every row, an array (the search's starts).
        """
        mu = np.asarray(mu, dtype=float)
        if mu.shape[-1] != self.k + self.S:  # (the compiled call reads by position)
            raise ValueError(f"{mu.shape[-1]} weights for {self.k} kernels and {self.S} "
                             "shared components")
        if mu.ndim == 1 and not grad:
            key = mu.tobytes()
            if key in self._memo and not full:
                return self._memo[key][0]
            # the criterion alone (it rounds as with the gradient) with beta and the
            # residuals, kept for the next call: the search's result is evaluated
            # once, for its criterion and for the refit's beta
            # (read once: another thread's point may replace it; and the caller
            # gets copies, so that changing them changes no later call's)
            kept = self._full
            if kept is None or kept[0] != key:
                kept = self._full = (key, self._evaluate(mu, False, True))
            f, beta, res = kept[1]
            return (f, [b.copy() for b in beta], [r.copy() for r in res]) if full else f
        if mu.ndim == 1 and not full:
            # L-BFGS-B evaluates some points more than once (Grunfeld: 11 of 39
            # evaluations repeat a point bit for bit): the criterion and gradient
            # of the points seen, kept (the same numbers as evaluating again; the
            # criterion's rounding does not depend on ``grad``)
            key = mu.tobytes()
            if key not in self._memo:
                if len(self._memo) >= _MEMO:
                    del self._memo[next(iter(self._memo))]
                f, g = self._evaluate(mu, True, False)
                self._memo[key] = (f, g)
            f, g = self._memo[key]
            return f, g.copy()
        return self._evaluate(mu, grad, full)

    def _evaluate(self, mu, grad, full):
        """:meth:`__call__` without its memory of the points seen."""
        k, dense = self.k, -1 if self.dense is None else self.dense
        mu_e = np.zeros(mu.shape[:-1]) if self.dense is None else mu[..., self.dense]
        sL = np.sqrt(np.repeat(mu[..., self.low], np.diff(self.eL), axis=-1))
        sF = np.sqrt(np.repeat(mu[..., k:], np.diff(self.eZ), axis=-1))
        if mu.ndim == 2:  # the starts: every point in one call
            if grad or full:
                raise ValueError("a batch of points gives the criterion only")
            # (all contiguous: the unfactored kernel's column of the points is
            # strided, the zeros without one are not, and the two layouts were
            # two compiled signatures, one of them not in the precompile step)
            sF = np.ascontiguousarray(sF)
            return loo_criteria(np.ascontiguousarray(mu_e), np.ascontiguousarray(sL), sF,
                                self.off, *self.bufs, self._low, self.eL, self.eZ, dense,
                                mu.shape[1])
        mu_e = float(mu_e)
        g, be, res = np.zeros(len(mu)), np.empty(self.n_rows), np.empty(self.n_rows)
        f = loo_evaluate(mu_e, sL, sF, grad, self.off, *self.bufs,
                         self._low, self.eL, self.eZ, dense, g, be, res)
        if not full:
            return (f, g) if grad else f
        beta, resid, i = [], [], 0
        for mask in self.masks:  # back to the buckets' padded rows (zero on padding)
            n = int(mask.sum())
            beta.append(np.zeros(mask.shape))
            resid.append(np.zeros(mask.shape))
            beta[-1][mask], resid[-1][mask] = be[i:i + n], res[i:i + n]
            i += n
        return (f, g, beta) if grad else (f, beta, resid)
