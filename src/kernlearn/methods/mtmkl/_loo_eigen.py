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
:math:`\rho\times\rho` traces.
"""

import numpy as np

__all__ = ["EigenLOO", "eigen_plan"]

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


def _eigenpairs(K, d2, mask):
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
    falls fast: about 70 of 700 on a task of Star).

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
    rows, maps = [mask[t].nonzero()[0] for t in range(T)], []
    for t, r in enumerate(rows):
        uniq, inv = _distinct_rows(K[t][np.ix_(r, r)])
        maps.append((uniq, inv, np.bincount(inv, weights=d2[t, r])))
    m_u = max(len(u) for u, _, _ in maps)
    H = np.zeros((T, m_u, m_u))
    for t, (r, (uniq, _, c)) in enumerate(zip(rows, maps)):
        ru, sc = r[uniq], np.sqrt(c)
        H[t, :len(uniq), :len(uniq)] = sc[:, None] * K[t][np.ix_(ru, ru)] * sc[None, :]
    lam, U = _above_round_off(*np.linalg.eigh(H), m)
    G = np.zeros((T, m, lam.shape[1]))
    for t, (r, (_, inv, c)) in enumerate(zip(rows, maps)):
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


def _tr(A, B):
    """Per-task traces :math:`\\mathrm{tr}(A^\\top B)` of ``(T, p, q)`` stacks."""
    return (A * B).sum((1, 2))


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
    """

    def __init__(self, grams, y_b, w_b, masks, shared, factors, dense):
        self.k, self.dense, self.S = grams[0].shape[0], dense, len(shared)
        self.low = [j for j in range(self.k) if j != dense]
        self.R = sum(Z[0].shape[2] for Z in shared)
        self.eye_R = np.eye(self.R)
        self._memo = {}
        self.parts = [self._part(b, K, y, w, mask, shared, factors)
                      for b, (K, y, w, mask) in enumerate(zip(grams, y_b, w_b, masks))]

    def _part(self, b, K, y, w, mask, shared, factors):
        """Bucket ``b``'s eigenpairs, factor basis and their products with the targets."""
        T, m = mask.shape
        d2 = np.where(mask, w, 1.0)  # D (one on padding)
        lam, G = np.zeros((T, 0)), np.zeros((T, m, 0))
        if self.dense is not None:
            lam, G = _eigenpairs(K[self.dense], d2, mask)
        cols = ([factors[j][b] for j in self.low] + [mask[:, :, None].astype(float)]
                + [Z[b] for Z in shared])
        # an orthonormal basis of the task's factor columns: B = U (sv Vt)
        U, sv, Vt = np.linalg.svd(np.concatenate(cols, axis=2), full_matrices=False)
        rho = max(1, int((sv > _BASIS_RTOL * sv[:, :1]).sum(1).max()))
        R = sv[:, :rho, None] * Vt[:, :rho]  # (T, rho, q): B = U[..., :rho] R
        B = U[:, :, :rho]
        e = np.cumsum([0] + [c.shape[2] for c in cols])
        n_l = len(self.low)
        RL = [R[:, :, e[i]:e[i + 1]] for i in range(n_l)]
        RZ = [R[:, :, e[n_l + 1 + s]:e[n_l + 2 + s]] for s in range(self.S)]
        self.widths = ([r.shape[2] for r in RL], [r.shape[2] for r in RZ])
        # (everything that does not depend on the weights, once per search: an
        # evaluation is a few dozen small products, whose fixed costs dominate)
        return {"RLc": R[:, :, :e[n_l]], "RZc": R[:, :, e[n_l + 1]:],
                "eye_L": np.eye(e[n_l]),
                "mask": mask, "w": w, "d2": d2, "lam": lam, "G": G, "GG": G * G, "B": B,
                "Bt": _T(B),
                "DB": d2[:, :, None] * B, "X": _T(G) @ B, "Dy": d2 * y,
                "yh": (_T(G) @ y[:, :, None])[:, :, 0],
                "RL": RL, "re": R[:, :, e[n_l]], "RZ": RZ}

    def __call__(self, mu, grad=True, full=False):
        """``f``, ``(f, g)``; ``full``: ``(f, beta, res)`` / ``(f, g, beta)``.

        ``mu`` of shape ``(n_points, n_weights)`` (no ``grad``, no ``full``): the
        criterion at every row at once, an array (the search's starts, in one
        pass of batched products).
        """
        mu = np.asarray(mu, dtype=float)
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
            return (f, g.copy()) if grad else f
        return self._evaluate(mu, grad, full)

    def _evaluate(self, mu, grad, full):
        """:meth:`__call__` without its memory of the points seen."""
        batch = mu.ndim == 2
        if batch and (grad or full):
            raise ValueError("a batch of points gives the criterion only")
        mu = np.atleast_2d(mu)
        k, R, n_s = self.k, self.R, len(mu)
        mu_e = (np.zeros(n_s) if self.dense is None else mu[:, self.dense])[:, None, None]
        sL = np.sqrt(np.repeat(mu[:, self.low], self.widths[0], axis=1))[:, None, None]
        sF = np.sqrt(np.repeat(mu[:, k:], self.widths[1], axis=1))[:, None, None]
        M, Uy, st = np.broadcast_to(self.eye_R, (n_s, R, R)), np.zeros((n_s, R)), []
        UZ = [np.zeros((n_s, R, Rs.shape[2])) for Rs in self.parts[0]["RZ"]]
        for p in self.parts:
            lam, X = p["lam"], p["X"]
            delta = 1.0 / (1.0 + mu_e * lam)  # (n_s, T, n_a)
            om = mu_e * lam * delta  # 1 - delta, without its cancellation
            # W1 = G Delta G' B (= D B - G_a (1 - Delta_a) G_a' B), Gam = B' W1
            # (W2 = G Lambda Delta^2 G' B for the gradient: a product of its own,
            # so that the criterion's rounding does not depend on ``grad``)
            W1 = p["DB"] - p["G"] @ (om[..., None] * X)
            W2 = p["G"] @ ((lam * delta * delta)[..., None] * X) if grad else None
            Gam = p["Bt"] @ W1
            K1 = np.zeros_like(Gam)
            if self.low:
                RL = p["RLc"] * sL
                C1 = np.linalg.inv(p["eye_L"] + _T(RL) @ Gam @ RL)
                K1 = RL @ C1 @ _T(RL)
            # each task's free bias: P_B = H - H 1 1' H / (1' H 1)
            re = p["re"][..., None]
            a = re - K1 @ (Gam @ re)
            K2 = K1 + a @ _T(a) / (_T(re) @ Gam @ a)
            TF = np.zeros(Gam.shape[:-1] + (R,))
            if R:
                RZ = p["RZc"] * sF
                TF = RZ - K2 @ (Gam @ RZ)  # P_B F = W1 TF
                M = M + (_T(RZ) @ Gam @ TF).sum(1)
            By = p["Dy"] - (p["G"] @ (om * p["yh"])[..., None])[..., 0]  # G Delta G' y
            ny = (p["Bt"] @ By[..., None])[..., 0]
            Uy += (_T(TF) @ ny[..., None]).sum((1, 3))
            for s, Rs in enumerate(p["RZ"]):
                UZ[s] += (_T(TF) @ Gam @ Rs).sum(1)
            st.append({"delta": delta, "om": om, "W2": W2, "W1": W1, "Gam": Gam, "K2": K2,
                       "TF": TF, "ny": ny, "By": By})
        Minv = np.linalg.inv(M)
        c = (Minv @ Uy[..., None])[:, None]  # (n_s, 1, R, 1)
        f, beta, res, Uv = np.zeros(n_s), [], [], np.zeros(R)
        for p, q in zip(self.parts, st):
            K3 = q["K2"] + q["TF"] @ Minv[:, None] @ _T(q["TF"])
            cy = q["K2"] @ q["ny"][..., None] + q["TF"] @ c
            W1, mask, w = q["W1"], p["mask"], p["w"]
            dP = (p["d2"] - (p["GG"] @ q["om"][..., None])[..., 0]
                  - ((W1 @ K3) * W1).sum(-1))
            dP = np.where(mask, dP, 1.0)
            be = np.where(mask, q["By"] - (W1 @ cy)[..., 0], 0.0)
            r = np.where(mask, be / dP, 0.0)
            f += (w * r * r).sum((1, 2))
            beta.append(be[0])
            res.append(r[0])
            if grad:
                v = w * r[0] / dP[0]
                nv = (_T(W1[0]) @ v[:, :, None])[:, :, 0]
                Uv += (_T(q["TF"][0]) @ nv[:, :, None]).sum((0, 2))
                q.update({key: q[key][0] for key in ("delta", "W1", "W2", "Gam", "K2", "TF",
                                                      "ny")})
                q.update(K3=K3[0], cy=cy[0], S=v * r[0], v=v, nv=nv)
        if batch:
            return f
        f = float(f[0])
        if not grad:
            return (f, beta, res) if full else f
        g = self._gradient(mu[0], st, Minv[0], Minv[0] @ Uv, [U[0] for U in UZ])
        return (f, g, beta) if full else (f, g)

    def _gradient(self, mu, st, Minv, cv, UZ):
        """The gradient of :meth:`__call__` from its per-bucket intermediates."""
        k, R = self.k, self.R
        g = np.zeros(len(mu))
        Gsum, Qsum = np.zeros((R, R)), np.zeros((len(mu), R, R))
        Zpv = [np.zeros(Rs.shape[2]) for Rs in self.parts[0]["RZ"]]
        Zb = [np.zeros(Rs.shape[2]) for Rs in self.parts[0]["RZ"]]
        quad = np.zeros(self.S)
        ZM = [Minv @ U for U in UZ]
        for p, q in zip(self.parts, st):
            K2, K3, TF, Gam, S = q["K2"], q["K3"], q["TF"], q["Gam"], q["S"]
            lam, delta, X = p["lam"], q["delta"], p["X"]
            cv_ = K2 @ q["nv"][:, :, None] + (TF @ cv)[:, :, None]
            # B' P v and B' beta, and (active eigen coordinates) G_a' P v, G_a' beta
            xpv, xb = q["nv"] - (Gam @ cv_)[:, :, 0], q["ny"] - (Gam @ q["cy"])[:, :, 0]
            W1, W2 = q["W1"], q["W2"]
            SW1 = S[:, :, None] * W1
            Phi11, Phi12 = _T(SW1) @ W1, _T(SW1) @ W2
            Gt = _T(TF) @ Phi11 @ TF
            Gsum += Gt.sum(0)
            # cross-task blocks of P S P within a task: U M^-1 (Gsum - Gt) M^-1 U',
            # traced against a kernel through Q (linear in Gsum: added below)
            Q = []
            if self.dense is not None:
                N = delta[:, :, None] * X
                pv = delta * (q["v"][:, None, :] @ p["G"])[:, 0, :] - (N @ cv_)[:, :, 0]
                bh = delta * p["yh"] - (N @ q["cy"])[:, :, 0]
                LN = _T(N) @ (lam[:, :, None] * N)  # N' Lambda N
                # d f / d mu_e = -2 (Pv' K_e beta - <K_e, P S P>), G' K_e G = Lambda
                val = ((lam * pv * bh).sum(1)
                       - ((S[:, None, :] @ p["GG"])[:, 0, :] * delta * delta * lam).sum(1)
                       + 2.0 * _tr(K3, Phi12) - _tr(K3 @ LN @ K3, Phi11))
                g[self.dense] -= 2.0 * val.sum()
                Q.append((self.dense, _T(TF) @ LN @ TF))
            for j, Rj in zip(self.low, p["RL"]):
                Bj = Rj - K3 @ (Gam @ Rj)
                val = (((_T(Rj) @ xpv[:, :, None]) * (_T(Rj) @ xb[:, :, None])).sum((1, 2))
                       - _tr(Bj, Phi11 @ Bj))
                g[j] -= 2.0 * val.sum()
                GR = _T(TF) @ (Gam @ Rj)
                Q.append((j, GR @ _T(GR)))
            for j, Qj in Q:
                # <K_j, U M^-1 (Gsum - Gt) M^-1 U'>: the Gsum part after the loop
                Qm = Minv @ Qj @ Minv
                Qsum[j] += Qm.sum(0)
                g[j] -= 2.0 * _tr(Qm, Gt).sum()
            for s, Rs in enumerate(p["RZ"]):
                Zpv[s] += (_T(Rs) @ xpv[:, :, None]).sum((0, 2))
                Zb[s] += (_T(Rs) @ xb[:, :, None]).sum((0, 2))
                Cs = Rs - K2 @ (Gam @ Rs) - TF @ ZM[s]
                quad[s] += _tr(Cs, Phi11 @ Cs).sum()
        g += 2.0 * (Qsum * Gsum).sum((1, 2))
        for s in range(self.S):
            g[k + s] = -2.0 * (Zpv[s] @ Zb[s] - quad[s])
        return g
