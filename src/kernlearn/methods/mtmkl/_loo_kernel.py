r"""One evaluation of :class:`~kernlearn.methods.mtmkl._loo_eigen.EigenLOO`'s
criterion and gradient, compiled: a loop over the tasks.

An evaluation is a few dozen products of small matrices per task (``rho x rho``,
``m x rho``, ``n_a x rho``): in NumPy, batched over the tasks of a bucket, each
product cost a few microseconds of fixed overhead, about 150 calls a bucket,
0.4-1 ms an evaluation on Grunfeld's or Cigar's tasks of 14-21 rows, and the
search takes 20-40 of them.  Here every task's arrays are kept without padding
in flat buffers (``off``: each task's offsets into them, see
:func:`task_offsets`) and a call evaluates every task and the shared components'
Woodbury terms at once.  The formulas and their names are
:mod:`~kernlearn.methods.mtmkl._loo_eigen`'s.
"""

import numpy as np

from ...utils._numba_cache import njit_cached

__all__ = ["loo_criteria", "loo_evaluate", "task_offsets"]

#: columns of :func:`task_offsets`: rows, eigenvalues, ``G``, ``X``, ``B``,
#: basis columns, ``rho x rho`` blocks
ROWS, EIG, GM, XM, BM, RHO, RR = range(7)


def task_offsets(m, n_a, rho):
    """Offsets of every task's arrays in the flat buffers of :func:`loo_evaluate`.

    Parameters
    ----------
    m, n_a, rho : ndarray of int
        Per task: rows, eigenvalues kept, basis columns.

    Returns
    -------
    off : ndarray of shape (n_tasks + 1, 7)
        Cumulative sizes of ``m``, ``n_a``, ``m n_a``, ``n_a rho``, ``m rho``,
        ``rho``, ``rho^2`` (columns :data:`ROWS` ... :data:`RR`).
    """
    sizes = np.stack([m, n_a, m * n_a, n_a * rho, m * rho, rho, rho * rho], axis=1)
    return np.vstack([np.zeros((1, 7), np.int64), np.cumsum(sizes, axis=0)]).astype(np.int64)


@njit_cached
def _mm(A, B):
    """``np.dot`` of two matrices; small products in a loop (a BLAS call's fixed
    cost is most of a ``4 x 4`` product's)."""
    n, q, p = A.shape[0], B.shape[1], A.shape[1]
    if n * p * q > 512:
        return np.dot(A, B)
    out = np.zeros((n, q))
    for i in range(n):
        for a in range(p):
            x = A[i, a]
            for j in range(q):
                out[i, j] += x * B[a, j]
    return out


@njit_cached
def _mv(A, b):
    """``np.dot`` of a matrix and a vector (small ones in a loop)."""
    n, p = A.shape
    if n * p > 512:
        return np.dot(A, b)
    out = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for a in range(p):
            acc += A[i, a] * b[a]
        out[i] = acc
    return out


@njit_cached
def _right_factors(om, lm, dl, Xt, yh, narrow=False):
    """``[om X, om yh, lm dl^2 X]`` side by side: the right factors of the
    products with a task's ``G`` (``narrow``: the first two only)."""
    na, r = Xt.shape
    Y = np.empty((na, r + 1 if narrow else 2 * r + 1))
    for a in range(na):
        for j in range(r):
            Y[a, j] = om[a] * Xt[a, j]
        Y[a, r] = om[a] * yh[a]
        if narrow:
            continue
        s = lm[a] * dl[a] * dl[a]
        for j in range(r):
            Y[a, r + 1 + j] = s * Xt[a, j]
    return Y


@njit_cached
def _gt_pair(G, v, S):
    """``G' v`` and ``(G * G)' S`` in one pass over ``G`` (each row an axpy: the
    gradient's two products with the task's largest array)."""
    m, na = G.shape
    gv, gs = np.zeros(na), np.zeros(na)
    for i in range(m):
        vi, si = v[i], S[i]
        for a in range(na):
            x = G[i, a]
            gv[a] += x * vi
            gs[a] += x * x * si
    return gv, gs


@njit_cached
def _task(off, t):
    """Task ``t``'s rows, eigenvalues and basis columns, then where its rows,
    eigenvalues, ``m x rho`` block, basis columns and ``rho x rho`` blocks start."""
    i0, a0, b0, r0, q0 = off[t, ROWS], off[t, EIG], off[t, BM], off[t, RHO], off[t, RR]
    return (off[t + 1, ROWS] - i0, off[t + 1, EIG] - a0, off[t + 1, RHO] - r0,
            i0, a0, b0, r0, q0)


@njit_cached
def loo_evaluate(mu_e, sL, sF, grad, off, lam, G, GG, X, B, DB, d2, w, Dy, yh, RL, re, RZ,
                 low, eL, eZ, dense, g, be, res, narrow=False):
    """The weighted leave-one-out SSE (returned), its gradient (into ``g``, when
    ``grad``) and each row's ``beta`` and residual (into ``be``, ``res``).

    ``G``, ``GG`` (its squares), ``X``, ``B``, ``DB``, ``d2``, ``w``, ``Dy``,
    ``yh``, ``re``: each task's arrays of ``EigenLOO``, without padding.
    ``mu_e``: the unfactored kernel's weight (0 without one); ``sL``, ``sF``:
    the square roots of the factored kernels' and the shared components'
    weights, one per factor column; ``RL`` (``rho x q_L``), ``RZ``
    (``rho x R``) per task: the basis coordinates of the factors, unscaled;
    ``low``: the factored kernels, their columns ``eL[i]:eL[i + 1]`` of ``RL``;
    ``eZ``: each shared component's columns of ``RZ``; ``dense``: the
    unfactored kernel's index (-1: none).  ``narrow`` (criterion only, not
    with ``grad``): the products with ``G`` without the gradient's columns, a
    criterion that may round otherwise than the search's evaluations at the
    same point (:func:`loo_criteria`'s starts, which are only ranked).
    """
    T = off.shape[0] - 1
    qL, R, nS = sL.shape[0], sF.shape[0], eZ.shape[0] - 1
    W1s, W2s = np.zeros(off[T, 4]), np.zeros(off[T, 4])
    Gams, K2s, K3s = np.empty(off[T, 6]), np.empty(off[T, 6]), np.empty(off[T, 6])
    TFs = np.zeros(off[T, 5] * R)
    nys, cys, nvs = np.empty(off[T, 5]), np.empty(off[T, 5]), np.empty(off[T, 5])
    Bys, Ss, vs = np.empty(off[T, 0]), np.empty(off[T, 0]), np.empty(off[T, 0])
    dls, oms = np.empty(off[T, 1]), np.empty(off[T, 1])
    M, Uy, UZ = np.eye(R), np.zeros(R), np.zeros((R, R))
    for t in range(T):
        m, na, r, i0, a0, b0, r0, q0 = _task(off, t)
        lm, dl, om = lam[a0:a0 + na], dls[a0:a0 + na], oms[a0:a0 + na]
        for a in range(na):
            dl[a] = 1.0 / (1.0 + mu_e * lm[a])
            om[a] = mu_e * lm[a] * dl[a]  # 1 - delta, without its cancellation
        Gt = G[off[t, 2]:off[t + 1, 2]].reshape(m, na)
        Xt = X[off[t, 3]:off[t + 1, 3]].reshape(na, r)
        Bt = B[b0:b0 + m * r].reshape(m, r)
        # W1 = G Delta G' B (= D B - G_a (1 - Delta_a) G_a' B), Gam = B' W1;
        # W2 = G Lambda Delta^2 G' B (the gradient's); By = G Delta G' y
        W1 = W1s[b0:b0 + m * r].reshape(m, r)
        W1[:] = DB[b0:b0 + m * r].reshape(m, r)
        By = Bys[i0:i0 + m]
        By[:] = Dy[i0:i0 + m]
        if na > 0:
            # one product for the three (G is the largest array, read once):
            # G [om X, om yh, lm dl^2 X], the gradient's columns also without
            # it (the criterion's rounding must not depend on ``grad``: the
            # search's memory of the points seen, and a product of other widths
            # may round its columns differently)
            P1 = _mm(Gt, _right_factors(om, lm, dl, Xt, yh[a0:a0 + na], narrow and not grad))
            W1 -= P1[:, :r]
            By -= P1[:, r]
            if grad:
                W2s[b0:b0 + m * r].reshape(m, r)[:] = P1[:, r + 1:]
        Gam = Gams[q0:q0 + r * r].reshape(r, r)
        Gam[:] = _mm(Bt.T, W1)
        K2 = K2s[q0:q0 + r * r].reshape(r, r)
        K2[:] = 0.0
        if qL > 0:
            RLt = RL[r0 * qL:(r0 + r) * qL].reshape(r, qL) * sL.reshape(1, qL)
            C1 = np.linalg.inv(np.eye(qL) + _mm(RLt.T, _mm(Gam, RLt)))
            K2 += _mm(RLt, _mm(C1, RLt.T))
        # each task's free bias: P_B = H - H 1 1' H / (1' H 1)
        ret = re[r0:r0 + r]
        av = ret - _mv(K2, _mv(Gam, ret))
        K2 += np.outer(av, av) / np.dot(ret, _mv(Gam, av))
        ny = nys[r0:r0 + r]
        ny[:] = _mv(Bt.T, By)
        if R > 0:
            RZu = RZ[r0 * R:(r0 + r) * R].reshape(r, R)
            RZt = RZu * sF.reshape(1, R)
            TF = TFs[r0 * R:(r0 + r) * R].reshape(r, R)
            TF[:] = RZt - _mm(K2, _mm(Gam, RZt))  # P_B F = W1 TF
            GTF = _mm(Gam.T, TF)
            M += _mm(RZt.T, _mm(Gam, TF))
            Uy += _mv(TF.T, ny)
            UZ += _mm(GTF.T, RZu)
    Minv = np.eye(R)  # (C order: an F-order inverse would type it 'A')
    if R > 0:
        Minv[:] = np.linalg.inv(M)
    c = _mv(Minv, Uy)
    f, Uv = 0.0, np.zeros(R)
    for t in range(T):
        m, na, r, i0, a0, b0, r0, q0 = _task(off, t)
        W1 = W1s[b0:b0 + m * r].reshape(m, r)
        K2 = K2s[q0:q0 + r * r].reshape(r, r)
        K3 = K3s[q0:q0 + r * r].reshape(r, r)
        TF = TFs[r0 * R:(r0 + r) * R].reshape(r, R)
        K3[:] = K2 + _mm(TF, _mm(Minv, TF.T))
        cy = cys[r0:r0 + r]
        cy[:] = _mv(K2, nys[r0:r0 + r]) + _mv(TF, c)
        # the diagonal of P: D - (G*G) om - rows of (W1 K3) * W1
        dP = d2[i0:i0 + m] - np.sum((W1 * _mm(W1, K3)), axis=1)
        if na > 0:
            dP -= _mv(GG[off[t, 2]:off[t + 1, 2]].reshape(m, na), oms[a0:a0 + na])
        bt = Bys[i0:i0 + m] - _mv(W1, cy)
        rt = bt / dP
        be[i0:i0 + m], res[i0:i0 + m] = bt, rt
        wt = w[i0:i0 + m]
        f += np.sum(wt * rt * rt)
        if grad:
            v = vs[i0:i0 + m]
            v[:] = wt * rt / dP
            Ss[i0:i0 + m] = v * rt
            nv = nvs[r0:r0 + r]
            nv[:] = _mv(W1.T, v)
            Uv += _mv(TF.T, nv)
    if not grad:
        return f
    # the gradient: d f / d mu_j = -2 (Pv' K_j beta - <K_j, P S P>)
    g[:] = 0.0
    cv, ZM = _mv(Minv, Uv), _mm(Minv, UZ)
    n_k = g.shape[0] - nS
    Gsum, Qsum = np.zeros((R, R)), np.zeros((n_k, R, R))
    Zpv, Zb, quad = np.zeros(R), np.zeros(R), np.zeros(nS)
    for t in range(T):
        m, na, r, i0, a0, b0, r0, q0 = _task(off, t)
        W1 = W1s[b0:b0 + m * r].reshape(m, r)
        W2 = W2s[b0:b0 + m * r].reshape(m, r)
        Gam = Gams[q0:q0 + r * r].reshape(r, r)
        K2 = K2s[q0:q0 + r * r].reshape(r, r)
        K3 = K3s[q0:q0 + r * r].reshape(r, r)
        TF = TFs[r0 * R:(r0 + r) * R].reshape(r, R)
        nv, ny, cy = nvs[r0:r0 + r], nys[r0:r0 + r], cys[r0:r0 + r]
        S = Ss[i0:i0 + m]
        cv_ = _mv(K2, nv) + _mv(TF, cv)
        # B' P v and B' beta
        xpv, xb = nv - _mv(Gam, cv_), ny - _mv(Gam, cy)
        SW1 = S.reshape(m, 1) * W1
        Phi11, Phi12 = _mm(SW1.T, W1), _mm(SW1.T, W2)
        Gt = _mm(TF.T, _mm(Phi11, TF))
        Gsum += Gt
        # cross-task blocks of P S P within a task: U M^-1 (Gsum - Gt) M^-1 U',
        # traced against kernel j through Qm (the Gsum part after the loop)
        if dense >= 0 and na > 0:
            lm, dl = lam[a0:a0 + na], dls[a0:a0 + na]
            Gm = G[off[t, 2]:off[t + 1, 2]].reshape(m, na)
            N = dl.reshape(na, 1) * X[off[t, 3]:off[t + 1, 3]].reshape(na, r)
            gv, gs = _gt_pair(Gm, vs[i0:i0 + m], S)
            pv = dl * gv - _mv(N, cv_)
            bh = dl * yh[a0:a0 + na] - _mv(N, cy)
            LN = _mm(N.T, lm.reshape(na, 1) * N)  # N' Lambda N
            # G' K_e G = Lambda
            val = (np.sum(lm * pv * bh) - np.sum(gs * dl * dl * lm)
                   + 2.0 * np.sum(K3 * Phi12) - np.sum(_mm(K3, _mm(LN, K3)) * Phi11))
            g[dense] -= 2.0 * val
            if R > 0:
                Qm = _mm(Minv, _mm(_mm(TF.T, _mm(LN, TF)), Minv))
                Qsum[dense] += Qm
                g[dense] -= 2.0 * np.sum(Qm * Gt)
        for i in range(low.shape[0]):
            j = low[i]
            Rj = np.ascontiguousarray(
                RL[r0 * qL:(r0 + r) * qL].reshape(r, qL)[:, eL[i]:eL[i + 1]])
            GRj = _mm(Gam, Rj)
            Bj = Rj - _mm(K3, GRj)
            val = (np.sum(_mv(Rj.T, xpv) * _mv(Rj.T, xb))
                   - np.sum(Bj * _mm(Phi11, Bj)))
            g[j] -= 2.0 * val
            if R > 0:
                GR = _mm(TF.T, GRj)
                Qm = _mm(Minv, _mm(_mm(GR, GR.T), Minv))
                Qsum[j] += Qm
                g[j] -= 2.0 * np.sum(Qm * Gt)
        if R > 0:
            RZu = RZ[r0 * R:(r0 + r) * R].reshape(r, R)
            Zpv += _mv(RZu.T, xpv)
            Zb += _mv(RZu.T, xb)
            # rows of P Z_s over the task: W1 (Z_s - K2 Gam Z_s - TF M^-1 U'Z_s)
            C = RZu - _mm(K2, _mm(Gam, RZu)) - _mm(TF, ZM)
            PC = C * _mm(Phi11, C)
            for s in range(nS):
                quad[s] += np.sum(PC[:, eZ[s]:eZ[s + 1]])
    for j in range(n_k):
        g[j] += 2.0 * np.sum(Qsum[j] * Gsum)
    for s in range(nS):
        g[n_k + s] = -2.0 * (np.dot(Zpv[eZ[s]:eZ[s + 1]], Zb[eZ[s]:eZ[s + 1]]) - quad[s])
    return f


@njit_cached
def loo_criteria(mu_e, sL, sF, off, lam, G, GG, X, B, DB, d2, w, Dy, yh, RL, re, RZ,
                 low, eL, eZ, dense, n_w):
    """:func:`loo_evaluate`'s criterion at many points in one call (the search's
    starts): row ``i`` of ``mu_e``, ``sL``, ``sF`` is a point; ``n_w`` weights.

    Each point's products with the tasks' ``G`` have ``r + 1`` columns, not the
    gradient's ``2 r + 1`` (``narrow``): they are most of a criterion on tasks
    of hundreds of rows (Wage's 30 starts: 24 ms of a 180 ms fit)."""
    n = mu_e.shape[0]
    f = np.empty(n)
    g, be, res = np.zeros(n_w), np.empty(off[off.shape[0] - 1, 0]), np.empty(off[off.shape[0] - 1, 0])
    for i in range(n):
        f[i] = loo_evaluate(mu_e[i], sL[i], sF[i], False, off, lam, G, GG, X, B, DB, d2, w,
                            Dy, yh, RL, re, RZ, low, eL, eZ, dense, g, be, res, True)
    return f
