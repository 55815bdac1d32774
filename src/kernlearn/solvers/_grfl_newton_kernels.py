"""Compiled kernels of the proximal Newton master of GrFL (:mod:`.grfl_newton`).

The block proxes, penalty values and KKT residuals of the penalties with a
compiled block prox, the model's curvatures, and the block coordinate descent
(with Anderson extrapolation) that minimises the quadratic model.  Kept apart
from the solver (the Python driver of the Newton iterations) so that each
module stays small.
"""

import numpy as np

from ..utils._numba_cache import njit_cached

__all__ = []

# The inner residual is checked when a sweep's largest movement is below the
# target, and every so many sweeps (see ``_bcd``).
_CHECK_EVERY = 8
# Sweeps combined by the Anderson extrapolation of the inner BCD (0: none).
_ANDERSON = 5
# Largest sum of the extrapolation's coefficients' magnitudes (their sum is 1)
# taken.  Larger ones come from sweeps whose differences are nearly parallel:
# the coefficients then follow the differences' rounding, and the sum of the
# iterates multiplies it (up to 1.5e4 seen on a 150-row path).  Unguarded,
# X times 1 + 1e-15 moved InfiniteFeatureRegressor's predictions by up to
# 13 % of their spread (autompg, 300 rows; 19 of 20 seeds above 1e-10) through
# such steps, which then flipped the choice of features; at this bound, 5e-14
# at most over 5 data sets x 20 seeds (300: 1.6e-9, 1e3: 3.3e-6; ridges,
# damping and other histories: BENCHMARKS.md, "GrFL: Anderson steps and the
# last bit of X").  The skipped steps cost about 1.2x the unguarded fit CPU.
_ANDERSON_MAX_COEF = 100.0
# Hessian blocks leave out the rows of zero curvature unless more than this
# share of the rows has a non-zero one (the copy of the rest then costs more).
_DENSE_CURVATURE = 0.75


@njit_cached
def _l1_ball_residual(Z, r):
    """``Z - P(Z)`` with ``P`` the projection on the l1 ball of radius ``r``
    (the prox of ``r * ||.||_inf`` by the Moreau decomposition)."""
    a = np.abs(Z.ravel())
    if a.sum() <= r:
        return np.zeros_like(Z)
    u = np.sort(a)[::-1]
    css, theta = 0.0, 0.0
    for j in range(u.size):
        css += u[j]
        t = (css - r) / (j + 1)
        if u[j] - t > 0:
            theta = t
    out = np.empty_like(Z)
    for i in range(Z.shape[0]):
        for k in range(Z.shape[1]):
            z = Z[i, k]
            m = min(abs(z), theta)
            out[i, k] = m if z >= 0 else -m
    return out


@njit_cached
def _max_group(indptr):
    """Size of the largest group."""
    m = 0
    for g in range(indptr.size - 1):
        m = max(m, indptr[g + 1] - indptr[g])
    return m


@njit_cached
def _prox_in_place(Z, thr, kind):
    """Overwrite the block ``Z`` (rows of a group, all tasks) with the prox of
    ``thr * norm`` at ``Z`` (no allocation but for the l-infinity norm)."""
    m, T = Z.shape
    if kind == 0:
        sq = 0.0
        for i in range(m):
            for t in range(T):
                sq += Z[i, t] * Z[i, t]
        nrm = np.sqrt(sq)
        s = max(0.0, 1.0 - thr / nrm) if nrm > 0 else 0.0
        for i in range(m):
            for t in range(T):
                Z[i, t] *= s
    elif kind == 1:
        for i in range(m):
            for t in range(T):
                z = Z[i, t]
                Z[i, t] = np.sign(z) * max(abs(z) - thr, 0.0)
    elif kind == 2:
        for t in range(T):
            sq = 0.0
            for i in range(m):
                sq += Z[i, t] * Z[i, t]
            nrm = np.sqrt(sq)
            s = max(0.0, 1.0 - thr / nrm) if nrm > 0 else 0.0
            for i in range(m):
                Z[i, t] *= s
    else:
        Z[:, :] = _l1_ball_residual(Z, thr)


@njit_cached
def _penalty_value(W, ws, indptr, kind, alpha, alpha_s, has_shared):
    """``P.penalty_value(W, ws)`` for a penalty with a compiled block prox
    (``kind``) and an l1 (or no) shared penalty, without Python overhead."""
    val = 0.0
    for g in range(indptr.size - 1):
        r0, r1 = indptr[g], indptr[g + 1]
        Z = W[r0:r1]
        # (kinds 0 and 1 summed in place, in the order of np.sum: no temporary
        # per group; the value is read a few times per Newton iteration)
        if kind == 0:
            sq = 0.0
            for i in range(r0, r1):
                for t in range(W.shape[1]):
                    sq += W[i, t] * W[i, t]
            val += np.sqrt(sq)
        elif kind == 1:
            sa = 0.0
            for i in range(r0, r1):
                for t in range(W.shape[1]):
                    sa += abs(W[i, t])
            val += sa
        elif kind == 2:
            for t in range(Z.shape[1]):
                val += np.sqrt(np.sum(Z[:, t] ** 2))
        elif Z.size:
            val += np.max(np.abs(Z))
    val *= alpha
    if has_shared:
        sa = 0.0
        for i in range(ws.size):
            sa += abs(ws[i])
        val += alpha_s * sa
    return val


@njit_cached
def _kkt_residual(W, ws, gW, gws, gb, step, indptr, kind, alpha, alpha_s, has_shared,
                  fit_b):
    """Max-norm of the prox-gradient mapping at ``(W, ws, b)`` with step
    ``step`` (before the division by the levels' scale; see ``GrFLNewton._measures``)."""
    res = 0.0
    T = W.shape[1]
    Zb = np.empty((_max_group(indptr), T))
    for g in range(indptr.size - 1):
        r0, r1 = indptr[g], indptr[g + 1]
        for i in range(r0, r1):
            for t in range(T):
                Zb[i - r0, t] = W[i, t] - step * gW[i, t]
        if kind == 0:
            # (_prox_in_place's joint l2 prox inline on the rows of Zb: a view
            # per block cost as much as the prox; see ``_bcd``)
            sq = 0.0
            for i in range(r1 - r0):
                for t in range(T):
                    sq += Zb[i, t] * Zb[i, t]
            nrm = np.sqrt(sq)
            sc = max(0.0, 1.0 - step * alpha / nrm) if nrm > 0 else 0.0
            for i in range(r1 - r0):
                for t in range(T):
                    Zb[i, t] *= sc
        else:
            _prox_in_place(Zb[: r1 - r0], step * alpha, kind)
        for i in range(r0, r1):
            for t in range(T):
                res = max(res, abs(W[i, t] - Zb[i - r0, t]))
    res /= step
    if has_shared:
        thr = step * alpha_s
        for i in range(ws.size):
            z = ws[i] - step * gws[i]
            u = np.sign(z) * max(abs(z) - thr, 0.0)
            res = max(res, abs(ws[i] - u) / step)
    if fit_b:
        for t in range(gb.size):
            res = max(res, abs(gb[t]))
    return res


@njit_cached
def _model_curvatures(H, indptr, fit_b):
    """The quadratic model's Hessians, damped, and its block curvatures.

    Returns a damped copy of the ``(T, p+1, p+1)`` Hessians ``H`` (a little
    damping, relative to the largest diagonal entry, keeps flat blocks well
    posed; without intercept its row and column are zero), ``Lw`` the largest
    eigenvalue of every group's diagonal block over the tasks (closed form
    for groups of one and two columns, the cos/sin pairs) and ``Ls`` the sum
    over the tasks of each column's curvature (the shared weights' steps).
    """
    T, p1 = H.shape[0], H.shape[1]
    p = p1 - 1
    Hd = H.copy()
    top = 0.0
    for t in range(T):
        for i in range(p1):
            top = max(top, H[t, i, i])
    eps = 1e-10 * max(top, 1e-300) + 1e-300
    Ls = np.zeros(p)
    for t in range(T):
        for i in range(p1):
            Hd[t, i, i] += eps
        for i in range(p):
            Ls[i] += Hd[t, i, i]
        if not fit_b:
            Hd[t, p, :] = 0.0
            Hd[t, :, p] = 0.0
    n_groups = indptr.size - 1
    Lw = np.zeros(n_groups)
    for g in range(n_groups):
        r0, r1 = indptr[g], indptr[g + 1]
        for t in range(T):
            if r1 - r0 == 1:
                lam = Hd[t, r0, r0]
            elif r1 - r0 == 2:
                a, c, d = Hd[t, r0, r0], Hd[t, r0 + 1, r0 + 1], Hd[t, r0, r0 + 1]
                lam = 0.5 * (a + c) + np.sqrt(0.25 * (a - c) ** 2 + d * d)
            elif r1 > r0:
                lam = np.linalg.eigvalsh(Hd[t, r0:r1, r0:r1].copy())[-1]
            else:
                lam = 0.0
            Lw[g] = max(Lw[g], lam)
    return Hd, np.maximum(Lw, 1e-300), np.maximum(Ls, 1e-300)


@njit_cached
def _bcd(H, GW, Gb, W, ws, b, indptr, Lw, Ls, kind, alpha, alpha_s, has_shared,
         fit_b, max_sweeps, tol, step_kkt):
    """Block coordinate descent on the quadratic model plus the penalties.

    ``H[t]`` is task ``t``'s ``(p+1, p+1)`` Hessian (intercept last), ``GW``
    ``(p, T)`` and ``Gb`` ``(T,)`` the gradient at the starting point, which
    ``W, ws, b`` hold on entry (updated in place).  ``R[t] = H[t] @ Delta_t``
    tracks the model gradient's change, ``Delta_t`` the step of task ``t``'s
    effective weights ``[w_t + ws; b_t]``.

    Stops when the model's own KKT residual -- the outer measure
    (:func:`_kkt_residual` with step ``step_kkt``) evaluated on the model
    gradient ``G + R`` -- is at most ``tol``, or when a sweep moves nothing
    (a fixed point: further sweeps repeat it).  The residual is the quantity
    the outer test reads at the new point (exactly so for the square loss,
    whose model is the objective), so the sweeps stop as soon as the step
    can pass that test; a bound on the sweep's movement instead (the former
    rule) is a different, Gauss-Seidel measure that on ill-conditioned
    models (correlated Fourier pairs, more columns than rows) decays
    slowly long after the model's residual is small.  The check costs about
    a late sweep (``O(pT)``: few blocks still move), so it runs only when
    the sweep's largest movement ``dmax`` (in the same gradient units, and
    within a small factor of the residual) is below the target, and every
    :data:`_CHECK_EVERY` sweeps (where the two differ, at most that many
    sweeps too many).  Returns the sweeps and the model's last
    checked residual (``inf`` if none was).
    ``H[t]`` is symmetric: column ``i`` is read as row ``i`` (contiguous; the
    column walk was cache-bound at ``p`` in the hundreds and ten tasks).
    """
    T, p1 = H.shape[0], H.shape[1]
    p = p1 - 1
    R = np.zeros((T, p1))
    n_groups = indptr.size - 1
    Zb = np.empty((_max_group(indptr), T))  # the block being updated
    gWm, gwsm, gbm = np.empty((p, T)), np.empty(p), np.empty(T)  # model gradient
    # Anderson extrapolation: the last K+1 sweeps' points (flattened) and R
    K = _ANDERSON
    nx = p * T + p + T
    Xh, Rh = np.empty((K + 1, nx)), np.empty((K + 1, T, p1))
    x0 = np.empty(nx)
    _pack(W, ws, b, x0)
    xe, Re = np.empty(nx), np.empty((T, p1))  # the extrapolated point and its R
    n_hist = 0
    R0, H0 = R[0], H[0]  # (the first task's, read directly by the one-task blocks)
    sweep, res = 0, np.inf
    for sweep in range(1, max_sweeps + 1):
        dmax = 0.0
        if fit_b:
            for t in range(T):
                h = H[t, p, p]
                if h > 0:
                    d = -(Gb[t] + R[t, p]) / h
                    b[t] += d
                    for j in range(p1):
                        R[t, j] += H[t, p, j] * d
                    dmax = max(dmax, abs(d) * h)
        for g in range(n_groups):
            r0, r1 = indptr[g], indptr[g + 1]
            L = Lw[g]
            if T == 1 and kind == 0 and r1 - r0 == 2:
                # GrFL's common block (a cos/sin pair, one task, the group l2
                # prox): the general steps below on scalars, in their order
                w0, w1 = W[r0, 0], W[r0 + 1, 0]
                z0 = w0 - (GW[r0, 0] + R[0, r0]) / L
                z1 = w1 - (GW[r0 + 1, 0] + R[0, r0 + 1]) / L
                thr = alpha / L
                sq = 0.0
                sq += z0 * z0
                sq += z1 * z1
                nrm = np.sqrt(sq)
                sc = max(0.0, 1.0 - thr / nrm) if nrm > 0 else 0.0
                z0 *= sc
                z1 *= sc
                d0, d1 = z0 - w0, z1 - w1
                if d0 != 0.0 or d1 != 0.0:
                    W[r0, 0], W[r0 + 1, 0] = z0, z1
                    for j in range(p1):
                        R0[j] += H0[r0, j] * d0 + H0[r0 + 1, j] * d1
                    dmax = max(dmax, max(abs(d0), abs(d1)) * L)
                continue
            for i in range(r0, r1):
                for t in range(T):
                    Zb[i - r0, t] = W[i, t] - (GW[i, t] + R[t, i]) / L
            if kind == 0:
                # the joint l2 prox of _prox_in_place, inline on the rows of
                # Zb (no view per block: its reference counting cost as much
                # as the prox)
                thr = alpha / L
                sq = 0.0
                for i in range(r1 - r0):
                    for t in range(T):
                        sq += Zb[i, t] * Zb[i, t]
                nrm = np.sqrt(sq)
                sc = max(0.0, 1.0 - thr / nrm) if nrm > 0 else 0.0
                for i in range(r1 - r0):
                    for t in range(T):
                        Zb[i, t] *= sc
            else:
                _prox_in_place(Zb[: r1 - r0], alpha / L, kind)
            Zn = Zb
            if r1 - r0 == 2:
                # a cos/sin pair: one pass over R for both columns
                for t in range(T):
                    d0, d1 = Zn[0, t] - W[r0, t], Zn[1, t] - W[r0 + 1, t]
                    if d0 != 0.0 or d1 != 0.0:
                        W[r0, t], W[r0 + 1, t] = Zn[0, t], Zn[1, t]
                        for j in range(p1):
                            R[t, j] += H[t, r0, j] * d0 + H[t, r0 + 1, j] * d1
                        dmax = max(dmax, max(abs(d0), abs(d1)) * L)
                continue
            for i in range(r0, r1):
                for t in range(T):
                    d = Zn[i - r0, t] - W[i, t]
                    if d != 0.0:
                        W[i, t] = Zn[i - r0, t]
                        for j in range(p1):
                            R[t, j] += H[t, i, j] * d
                        dmax = max(dmax, abs(d) * L)
        if has_shared:
            for i in range(p):
                L = Ls[i]
                gsum = 0.0
                for t in range(T):
                    gsum += GW[i, t] + R[t, i]
                z = ws[i] - gsum / L
                zn = np.sign(z) * max(abs(z) - alpha_s / L, 0.0)
                d = zn - ws[i]
                if d != 0.0:
                    ws[i] = zn
                    for t in range(T):
                        for j in range(p1):
                            R[t, j] += H[t, i, j] * d
                    dmax = max(dmax, abs(d) * L)
        if dmax == 0.0:
            break  # nothing moved: later sweeps would repeat this one
        if dmax <= tol or sweep % _CHECK_EVERY == 0:
            for i in range(p):
                gwsm[i] = 0.0
                for t in range(T):
                    gWm[i, t] = GW[i, t] + R[t, i]
                    gwsm[i] += gWm[i, t]
            for t in range(T):
                gbm[t] = Gb[t] + R[t, p]
            res = _kkt_residual(W, ws, gWm, gwsm, gbm, step_kkt, indptr, kind, alpha,
                                alpha_s, has_shared, fit_b)
            if res <= tol:
                break
        if K > 0:
            _pack(W, ws, b, Xh[n_hist])
            Rh[n_hist] = R
            n_hist += 1
            if n_hist == K + 1:
                n_hist = 0
                _extrapolate(Xh, Rh, x0, xe, Re, GW, Gb, W, ws, b, R, indptr, kind,
                             alpha, alpha_s, has_shared)
    return sweep, res


@njit_cached
def _pack(W, ws, b, out):
    """Write ``(W, ws, b)`` into the flat vector ``out``."""
    p, T = W.shape
    for i in range(p):
        for t in range(T):
            out[i * T + t] = W[i, t]
    out[p * T: p * T + p] = ws
    out[p * T + p:] = b


@njit_cached
def _model_value(x, x0, R, GW, Gb, indptr, kind, alpha, alpha_s, has_shared):
    """The quadratic model plus the penalties at the flat point ``x`` (start
    ``x0``), with ``R[t] = H[t] @ Delta_t`` at ``x`` (no product with ``H``)."""
    T, p1 = R.shape
    p = p1 - 1
    q = 0.0
    for t in range(T):
        for i in range(p):
            # the step of task t's effective weight (w_t + ws)
            e = x[i * T + t] - x0[i * T + t] + x[p * T + i] - x0[p * T + i]
            q += (GW[i, t] + 0.5 * R[t, i]) * e
        e = x[p * T + p + t] - x0[p * T + p + t]
        q += (Gb[t] + 0.5 * R[t, p]) * e
    W = x[: p * T].reshape((p, T))
    return q + _penalty_value(W, x[p * T: p * T + p], indptr, kind, alpha, alpha_s,
                              has_shared)


@njit_cached
def _extrapolate(Xh, Rh, x0, xe, Re, GW, Gb, W, ws, b, R, indptr, kind, alpha,
                 alpha_s, has_shared):
    """Anderson extrapolation of the last sweeps (Bertrand and Massias 2021).

    The affine combination ``sum c_i Xh[i+1]`` (``sum c_i = 1``) whose
    combined differences ``sum c_i (Xh[i+1] - Xh[i])`` are smallest, taken
    (in place, into ``W, ws, b, R``) when it lowers the model.  ``R`` is
    linear in the point, so the combination's ``R`` is the same combination
    of the sweeps' ``Rh``: no product with ``H``.  ``xe, Re`` are work space.
    """
    K, nx = Xh.shape[0] - 1, Xh.shape[1]
    # the coordinates that moved (most weights stay at zero), their differences
    idx = np.empty(nx, dtype=np.int64)
    n_idx = 0
    for m in range(nx):
        for i in range(1, K + 1):
            if Xh[i, m] != Xh[0, m]:
                idx[n_idx] = m
                n_idx += 1
                break
    U = np.empty((K, n_idx))
    for i in range(K):
        for k in range(n_idx):
            U[i, k] = Xh[i + 1, idx[k]] - Xh[i, idx[k]]
    # (U U', every entry summed over k in order as one dot product would, but
    # the K(K+1)/2 sums advanced together: independent chains, not one
    # latency-bound chain after the other)
    A = np.zeros((K, K))
    for k in range(n_idx):
        for i in range(K):
            u = U[i, k]
            for j in range(i, K):
                A[i, j] += u * U[j, k]
    for i in range(K):
        for j in range(i + 1, K):
            A[j, i] = A[i, j]
    tr = np.trace(A)
    if not tr > 0.0:
        return
    # (U'U + ridge) z = 1 by Cholesky: U'U is singular once the sweeps stall
    Lc = np.zeros((K, K))
    for i in range(K):
        A[i, i] += 1e-10 * tr
        for j in range(i + 1):
            v = A[i, j]
            for m in range(j):
                v -= Lc[i, m] * Lc[j, m]
            if i == j:
                if not v > 0.0:
                    return
                Lc[i, i] = np.sqrt(v)
            else:
                Lc[i, j] = v / Lc[j, j]
    z = np.ones(K)
    for i in range(K):
        for m in range(i):
            z[i] -= Lc[i, m] * z[m]
        z[i] /= Lc[i, i]
    for i in range(K - 1, -1, -1):
        for m in range(i + 1, K):
            z[i] -= Lc[m, i] * z[m]
        z[i] /= Lc[i, i]
    zs = z.sum()
    if not (np.isfinite(zs) and zs != 0.0):
        return
    # (coefficients decided by rounding: see _ANDERSON_MAX_COEF)
    if np.abs(z).sum() > _ANDERSON_MAX_COEF * abs(zs):
        return
    # (the coordinates that did not move keep their value)
    xe[:] = Xh[K]
    Re[:, :] = 0.0
    for k in range(n_idx):
        xe[idx[k]] = 0.0
    T, p1 = Re.shape
    for i in range(K):
        c = z[i] / zs
        for k in range(n_idx):
            xe[idx[k]] += c * Xh[i + 1, idx[k]]
        for t in range(T):  # (Re += c * Rh[i + 1], without the temporary)
            for j in range(p1):
                Re[t, j] += c * Rh[i + 1, t, j]
    fe = _model_value(xe, x0, Re, GW, Gb, indptr, kind, alpha, alpha_s, has_shared)
    fk = _model_value(Xh[K], x0, Rh[K], GW, Gb, indptr, kind, alpha, alpha_s,
                      has_shared)
    if fe < fk:
        p, T = W.shape
        for i in range(p):
            for t in range(T):
                W[i, t] = xe[i * T + t]
        ws[:] = xe[p * T: p * T + p]
        b[:] = xe[p * T + p:]
        R[:, :] = Re


# ------------------------------------------------- the compiled Newton iteration
# Losses with a compiled value and gradient (``loss_kind``): the square loss
# and the squared hinge (see ``GrFLNewton``'s compiled path).
_SQUARE, _SQUARED_HINGE = 0, 1
# Sums of at most this many terms are unrolled eight ways, longer ones split
# in halves (NumPy's pairwise summation, PW_BLOCKSIZE in its sources).
_PW_BLOCK = 128


@njit_cached
def _pairwise_block(a, lo, n):
    """NumPy's sum of at most :data:`_PW_BLOCK` terms ``a[lo:lo + n]``."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - (n % 8):
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit_cached
def _pairwise_sum(a, lo, n):
    """``a[lo:lo + n].sum()`` summed as NumPy sums a contiguous array (its
    pairwise summation: blocks of at most :data:`_PW_BLOCK` terms, longer
    runs split in halves at a multiple of eight), hence equal to it bit for
    bit: the compiled iteration then takes the steps of the NumPy one, whose
    inner solver's discrete choices (sweeps, extrapolations kept) a rounding
    change can flip.  The halving recursion runs on an explicit stack (a
    cached recursive compiled function crashed when loaded back).
    """
    if n <= _PW_BLOCK:
        return _pairwise_block(a, lo, n)
    # frames (start, length, stage: 0 new, 1 left half done, 2 both done)
    f_lo, f_n = np.empty(64, dtype=np.int64), np.empty(64, dtype=np.int64)
    f_stage = np.zeros(64, dtype=np.int64)
    vals = np.empty(64)
    top, n_vals = 0, 0
    f_lo[0], f_n[0], f_stage[0] = lo, n, 0
    while top >= 0:
        m = f_n[top]
        if m <= _PW_BLOCK:
            vals[n_vals] = _pairwise_block(a, f_lo[top], m)
            n_vals += 1
            top -= 1
            continue
        half = m // 2
        half -= half % 8
        if f_stage[top] == 0:
            f_stage[top] = 1
            top += 1
            f_lo[top], f_n[top], f_stage[top] = f_lo[top - 1], half, 0
        elif f_stage[top] == 1:
            f_stage[top] = 2
            top += 1
            f_lo[top], f_n[top], f_stage[top] = f_lo[top - 1] + half, m - half, 0
        else:
            n_vals -= 1
            vals[n_vals - 1] = vals[n_vals - 1] + vals[n_vals]
            top -= 1
    return vals[0]


@njit_cached
def _loss_value(M, Y, loss_kind):
    """``loss.value(M, Y).sum()`` of the square loss or the squared hinge
    (``M``, ``Y`` C-contiguous, of one shape), as NumPy computes it."""
    m, y = M.ravel(), Y.ravel()
    v = np.empty(m.size)
    for i in range(m.size):
        if loss_kind == _SQUARE:
            r = y[i] - m[i]
        else:
            r = max(0.0, 1.0 - y[i] * m[i])
        v[i] = 0.5 * r * r
    return _pairwise_sum(v, 0, v.size)


@njit_cached
def _gradients_kkt(Phi, Y, M, loss_kind, W, ws, step, indptr, kind, alpha, alpha_s,
                   has_shared, fit_b):
    """``DirtyProblem.gradients(M)`` (every task on every row), the KKT
    residual of :func:`_kkt_residual` there, with NumPy's products and sums,
    the loss's curvatures ``loss.hess_margin(M, Y)`` and its gradients
    ``loss.grad_margin(M, Y)`` (what GrFL's next pricing step reads)."""
    n, T = M.shape
    G = np.empty((n, T))
    D = np.empty((n, T))
    for i in range(n):
        for t in range(T):
            if loss_kind == _SQUARE:
                G[i, t] = M[i, t] - Y[i, t]
                D[i, t] = 1.0
            else:
                y, m = Y[i, t], M[i, t]
                G[i, t] = -y * max(0.0, 1.0 - y * m)
                D[i, t] = y * y if y * m < 1.0 else 0.0
    if not fit_b:
        gb = np.zeros(T)
    elif T == 1:  # (what ``np.ones(n) @ G`` calls for one column: a dot product)
        gb = np.array([np.dot(np.ones(n), np.ascontiguousarray(G[:, 0]))])
    else:
        gb = np.dot(np.ones(n), G)
    gW = np.dot(Phi.T, G)
    p = gW.shape[0]
    gws = np.empty(p)
    flat = gW.ravel()  # (one view: a row view each cost more than its sum)
    for i in range(p):
        gws[i] = _pairwise_sum(flat, i * T, T)
    res = _kkt_residual(W, ws, gW, gws, gb, step, indptr, kind, alpha, alpha_s,
                        has_shared, fit_b)
    return gW, gws, gb, res, D, G


@njit_cached
def _newton_step(Phi, Y, loss_kind, M, F, pen0, W, ws, b, gW, gws, gb, Hd, Lw, Ls,
                 indptr, kind, alpha, alpha_s, has_shared, fit_b, max_sweeps, tol,
                 step_kkt, sigma, max_halvings, round_):
    """One proximal Newton step from ``(W, ws, b)`` (margins ``M``, objective
    ``F``, penalty ``pen0``): the direction by :func:`_bcd` on the damped
    Hessians ``Hd`` (curvatures ``Lw``, ``Ls``) to the model residual ``tol``,
    then the Armijo backtracking of ``GrFLNewton.solve`` along its margins,
    with the products and sums of its NumPy steps.

    Returns whether a step was accepted, its length ``s``, the sweeps, the
    model's minimiser ``(Wn, wsn, bn)``, the bias step ``db``, the trial point
    ``(Ws, wss)`` with its margins, objective and penalty, the penalty at the
    minimiser, and :func:`_gradients_kkt` at the new point (the minimiser
    after a full step, else the trial point; the current point's gradients,
    without curvatures and loss gradients, when no step was accepted).
    """
    Wn, wsn, bn = W.copy(), ws.copy(), b.copy()
    sweeps, _ = _bcd(Hd, gW, gb, Wn, wsn, bn, indptr, Lw, Ls, kind, alpha, alpha_s,
                     has_shared, fit_b, max_sweeps, tol, step_kkt)
    p, T = W.shape
    dW, dws, db = Wn - W, wsn - ws, bn - b
    pen_n = _penalty_value(Wn, wsn, indptr, kind, alpha, alpha_s, has_shared)
    # the model's predicted decrease (the Armijo test's delta)
    delta = (np.dot(gW.ravel(), dW.ravel()) + np.dot(gws, dws) + np.dot(gb, db) + pen_n
             - pen0)
    V = np.empty((p, T))
    for i in range(p):
        for t in range(T):
            V[i, t] = dW[i, t] + dws[i]
    dM = np.dot(Phi, V)
    n = dM.shape[0]
    for i in range(n):
        for t in range(T):
            dM[i, t] += db[t]
    s = 1.0
    Ws, wss, Ms = W + dW, ws + dws, M + dM
    pen_s, Fs = pen0, F
    for _ in range(max_halvings):
        # (the full step first: x + 1.0 * dx is x + dx)
        if s != 1.0:
            Ws, wss, Ms = W + s * dW, ws + s * dws, M + s * dM
        pen_s = _penalty_value(Ws, wss, indptr, kind, alpha, alpha_s, has_shared)
        Fs = _loss_value(Ms, Y, loss_kind) + pen_s
        if Fs <= F + sigma * s * min(delta, 0.0) + round_ * abs(F):
            if s == 1.0:
                grads = _gradients_kkt(Phi, Y, Ms, loss_kind, Wn, wsn, step_kkt, indptr,
                                       kind, alpha, alpha_s, has_shared, fit_b)
            else:
                grads = _gradients_kkt(Phi, Y, Ms, loss_kind, Ws, wss, step_kkt, indptr,
                                       kind, alpha, alpha_s, has_shared, fit_b)
            return (True, s, sweeps, Wn, wsn, bn, db, Ws, wss, Ms, Fs, pen_s, pen_n,
                    grads)
        s *= 0.5
    return (False, s, sweeps, Wn, wsn, bn, db, Ws, wss, Ms, Fs, pen_s, pen_n,
            (gW, gws, gb, -1.0, np.empty((0, 0)), np.empty((0, 0))))


@njit_cached
def _append_block(Phi, d, q):
    """``hessian_block(Phi, d, cols)`` for the columns ``q..p`` (the new ones,
    then the intercept), as it computes them: the rows of zero curvature left
    out when they are at least a quarter, the intercept's row as a sum."""
    n, p = Phi.shape
    new = p + 1 - q
    nz = 0
    for i in range(n):
        if d[i] != 0.0:
            nz += 1
    C = np.empty((p + 1, new))
    if nz <= _DENSE_CURVATURE * n:
        rows = np.empty(nz, dtype=np.int64)
        k = 0
        for i in range(n):
            if d[i] != 0.0:
                rows[k] = i
                k += 1
        Pf = np.empty((nz, p))  # (C order: what NumPy's Phi[rows] gives)
        for k in range(nz):
            for j in range(p):
                Pf[k, j] = Phi[rows[k], j]
        B = np.empty((nz, new))
        for k in range(nz):
            for j in range(new - 1):
                B[k, j] = Pf[k, q + j] * d[rows[k]]
            B[k, new - 1] = d[rows[k]]
        C[:p] = np.dot(Pf.T, B)
    else:
        B = np.empty((n, new))
        for i in range(n):
            for j in range(new - 1):
                B[i, j] = Phi[i, q + j] * d[i]
            B[i, new - 1] = d[i]
        C[:p] = np.dot(Phi.T, B)
    C[p] = 0.0
    for k in range(B.shape[0]):
        for j in range(new):
            C[p, j] += B[k, j]
    return C


@njit_cached
def _hessian_append(Ho, H, Phi, Dh, B, use_B):
    """The Hessians ``H`` (``(T, p+1, p+1)``, every task on every row, at
    curvature ``Dh``) from those ``Ho`` of the first ``q`` columns: their
    blocks copied, the new columns' and the intercept's from
    :func:`_append_block` (read from the bordered Gram ``B`` when ``use_B``
    and every curvature is one) -- the column append of ``_Hessians.start``.

    The rows of the new columns and of the intercept are the columns ``C``
    (not ``C``'s rows: the Gram's block of the new columns, a product, need
    not be symmetric to the last bit).  Written row by row, each entry once.
    """
    T, q1, p1 = Ho.shape[0], Ho.shape[1], H.shape[1]
    q = q1 - 1
    n = Phi.shape[0]
    new = p1 - q
    for t in range(T):
        ones = use_B
        for i in range(n):
            ones = ones and Dh[i, t] == 1.0
        # the new columns and the intercept's: columns c0.. of C
        if ones:
            C, c0 = B, q
        else:
            C, c0 = _append_block(Phi, np.ascontiguousarray(Dh[:, t]), q), 0
        Ht, Hot = H[t], Ho[t]
        for i in range(q):
            Hi, Hoi, Ci = Ht[i], Hot[i], C[i]
            for j in range(q):
                Hi[j] = Hoi[j]
            for j in range(new):
                Hi[q + j] = Ci[c0 + j]
        for j in range(new):
            Hj = Ht[q + j]
            for i in range(p1):
                Hj[i] = C[i, c0 + j]


@njit_cached
def _same_head(check, Phi):
    """Whether ``check`` equals ``Phi[:2, :check.shape[1]]`` (shapes and
    entries; NaN differs from itself): the test that a state's Hessians
    belong to the first columns of ``Phi`` (``_Hessians.start``), without
    NumPy's slices, comparison array and count (a few microseconds per
    master solve)."""
    r, q = check.shape
    if r != min(2, Phi.shape[0]) or q > Phi.shape[1]:
        return False
    for i in range(r):
        for j in range(q):
            if not check[i, j] == Phi[i, j]:
                return False
    return True


@njit_cached
def _curvature_change(D, Dh):
    """Whether the curvatures ``D`` equal ``Dh`` everywhere, and the scale of
    the rows' change test, ``max(|D|.max(), 1e-300)``."""
    same, scale = True, 0.0
    for i in range(D.shape[0]):
        for t in range(D.shape[1]):
            same = same and D[i, t] == Dh[i, t]
            scale = max(scale, abs(D[i, t]))
    return same, max(scale, 1e-300)


@njit_cached
def _changed_rows(D, Dh, t, thr):
    """The rows whose curvature of task ``t`` moved by more than ``thr``."""
    n = D.shape[0]
    idx = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        if abs(D[i, t] - Dh[i, t]) > thr:
            idx[m] = i
            m += 1
    return idx[:m].copy()


@njit_cached
def _rank_block(Phi, D, Dh, t, idx):
    """``hessian_block(Phi[idx], D[idx, t] - Dh[idx, t])`` but for its ``S'S``
    (a BLAS syrk in NumPy, which the compiled products would not reproduce):
    returns the block with its intercept row and column and, with
    non-negative steps, ``S`` (else an empty ``S`` and the block complete)."""
    m, p = idx.size, Phi.shape[1]
    Pr = np.empty((m, p))  # (C order, as NumPy's Phi[idx])
    dd = np.empty(m)
    nonneg = True
    for k in range(m):
        i = idx[k]
        dd[k] = D[i, t] - Dh[i, t]
        nonneg = nonneg and dd[k] >= 0
        for j in range(p):
            Pr[k, j] = Phi[i, j]
    out = np.empty((p + 1, p + 1))
    if nonneg:
        S = np.empty((m, p))
        for k in range(m):
            r = np.sqrt(dd[k])
            for j in range(p):
                S[k, j] = Pr[k, j] * r
    else:
        Pd = np.empty((m, p))
        for k in range(m):
            for j in range(p):
                Pd[k, j] = Pr[k, j] * dd[k]
        out[:p, :p] = np.dot(Pd.T, Pr)
        S = np.empty((0, p))
    border = np.dot(Pr.T, dd)
    for j in range(p):
        out[j, p] = border[j]
        out[p, j] = border[j]
    out[p, p] = _pairwise_sum(dd, 0, m)
    return out, S


@njit_cached
def _add_rank_block(H, t, out, D, Dh, idx):
    """``H[t] += out`` and the curvature of the rows ``idx`` recorded."""
    p1 = H.shape[1]
    for i in range(p1):
        for j in range(p1):
            H[t, i, j] += out[i, j]
    for k in range(idx.size):
        Dh[idx[k], t] = D[idx[k], t]
