"""OBSCURE's per-sample steps: the compiled loop of Algorithms 1-2, its NumPy
transcription, the cache of Gram rows and the epoch's sampling.

Private to :mod:`kernlearn.methods.obscure` (which documents the storage:
``A``, ``G = K A``, ``N = ||theta^j||^2`` and the lazy scale).
"""

import numpy as np

from ..kernels import KernelList
from ..penalties.squared import conj_mirror_scales, lp_norm
from ..utils._numba_cache import njit_cached
from ._obscure_dual import _CLIP_SCALES, _EXACT_BUDGET


@njit_cached
def _step(stage, t, s, lam, q, scale, nq, zq, R, eta1, A, G, N):  # pragma: no cover
    """The step size of one update and the lazy scale after its shrinkage.

    Stage 1 (Algorithm 1): the fixed step ``eta1``.  Stage 2 (Algorithm 2,
    lines 6-9): the adaptive :math:`s_t` and step :math:`\\eta_t`, and the
    shrinkage of :math:`\\theta` folded into the lazy ``scale``; a shrinkage
    to zero clears the storage ``A``, ``G``, ``N`` in place (``scale`` back to
    1).  Shared by the compiled loop and its NumPy transcription.  Returns
    ``(t, s, eta, scale)``, ``t`` incremented in stage 2.
    """
    if stage != 2:
        return t, s, eta1, scale
    t += 1.0
    Lt = lam / q * scale * nq + zq
    d = lam * t + s
    s = s + 0.5 * (np.sqrt(d * d + q * Lt * Lt / (R * R)) - d)
    eta = q / (lam * t + s)
    shrink = 1.0 - lam * eta / q
    if shrink <= 0.0:
        A[:] = 0.0
        G[:] = 0.0
        N[:] = 0.0
        return t, s, eta, 1.0
    return t, s, eta, scale * shrink


@njit_cached
def _hinge(G, alpha, scale, i, yi, multiclass, m):  # pragma: no cover
    """Margins ``m`` of sample ``i`` (lazy ``scale`` included) and its hinge loss.

    Returns ``(loss, yh)``: ``1 - y_i m_0`` for two classes, else
    ``1 - m_{y_i} + max_{c != y_i} m_c`` with ``yh`` that best other class
    (``-1`` for two classes).  Shared by :func:`_block_loop` and
    :func:`_incurs_loss`.
    """
    M, F = G.shape[0], G.shape[1]
    for c in range(M):
        acc = 0.0
        for j in range(F):
            acc += alpha[j] * G[c, j, i]
        m[c] = scale * acc
    yh = -1
    if multiclass:
        best = -np.inf
        for c in range(M):
            if c != yi and m[c] > best:
                best = m[c]
                yh = c
        return 1.0 - m[yi] + best, yh
    return 1.0 - yi * m[0], yh


@njit_cached
def _mirror(N, q, alpha):  # pragma: no cover
    r"""Mirror-map scales :math:`a_j` of Lemma 1 into ``alpha``; returns ``||theta||_{2,q}``.

    Scale invariant: computed on the unscaled ``N`` (``||theta^j||^2``).
    With :math:`r_j = N_j / \max N`, :math:`u_j = r_j^{q/2}`, :math:`S =
    \sum_j u_j`: :math:`\|\theta\|_{2,q} = \sqrt{\max N}\,S^{1/q}` and
    :math:`a_j = (u_j / r_j)\,S^{2/q - 1} / q`: five powers for four kernels
    instead of nine, and square and cube roots instead for :math:`q = 3`
    (the default :math:`p = 1.5`).  It runs after every update, where the
    nine powers took about a sixth of the update's time (550 ns; now 160).
    """
    F = N.shape[0]
    mx = 0.0
    for j in range(F):
        if N[j] > mx:
            mx = N[j]
    if mx <= 0.0:
        for j in range(F):
            alpha[j] = 0.0
        return 0.0
    S = 0.0
    for j in range(F):
        r = N[j] / mx if N[j] > 0.0 else 0.0
        # q = 3 (the default p = 1.5): r^{3/2} without a power
        u = r * np.sqrt(r) if q == 3.0 else r ** (0.5 * q)
        alpha[j] = u  # u_j, turned into a_j below
        S += u
    s1 = np.cbrt(S) if q == 3.0 else S ** (1.0 / q)
    c = s1 * s1 / S / q
    # r^{(q-2)/2} = u / r; at r = 0 it is 0 for q > 2 and 1 for q = 2
    zero = 1.0 if q == 2.0 else 0.0
    for j in range(F):
        alpha[j] = c * (alpha[j] / (N[j] / mx) if N[j] > 0.0 else zero)
    return np.sqrt(mx) * s1


@njit_cached
def _add_row(g, g2, krow, cf, e, pair):  # pragma: no cover
    """``g += cf * k`` (and ``g2 -= cf * k`` when ``pair``), ``k = krow ** (2 ** e)``.

    A derived kernel's row is its stored base row squared ``e`` times
    (:func:`_derived_kernels`), in double precision; one branch per common
    ``e`` keeps each loop vectorisable.
    """
    n = g.shape[0]
    if e == 0:
        for l in range(n):
            v = cf * np.float64(krow[l])
            g[l] += v
            if pair:
                g2[l] -= v
    elif e == 1:
        for l in range(n):
            k = np.float64(krow[l])
            v = cf * (k * k)
            g[l] += v
            if pair:
                g2[l] -= v
    elif e == 2:
        for l in range(n):
            k = np.float64(krow[l])
            k = k * k
            v = cf * (k * k)
            g[l] += v
            if pair:
                g2[l] -= v
    elif e == 3:
        for l in range(n):
            k = np.float64(krow[l])
            k = k * k
            k = k * k
            v = cf * (k * k)
            g[l] += v
            if pair:
                g2[l] -= v
    else:
        for l in range(n):
            k = np.float64(krow[l])
            for _ in range(e):
                k = k * k
            v = cf * k
            g[l] += v
            if pair:
                g2[l] -= v


def _block_loop(
    ids,
    slot,
    Krows,
    stamp,
    kdiag,
    yint,
    A,
    G,
    N,
    st,
    lam,
    q,
    R,
    eta1,
    stage,
    multiclass,
    alpha,
    m,
    start,
    zqs,
    src,
    nsq,
):
    """Algorithms 1 (``stage == 1``) and 2 (``stage == 2``) over ``ids[start:]``.

    Plain loops, compiled by numba; :func:`_block_numpy` is the same iteration
    written with NumPy.  ``st = [scale, s, t, n_updates, online_loss, clock]``
    is updated in place.

    Gram rows live in a row cache: ``Krows[:, slot[i], :]`` is the row of
    sample ``i`` when ``slot[i] >= 0`` (with cached Gram matrices ``slot`` is
    the identity and every row is present).  The loop returns the position
    ``k`` of the first sample that needs an additive update but whose row is
    not cached, before touching the state for that sample; the caller
    computes that row, evicting the row needed last (``stamp`` holds the
    last use of each slot; ``_RowCache._eviction_key``), and resumes at
    ``k``.  Rows are thus computed only for updates, at most once while they
    stay cached.  Returns ``-1`` when done.  ``zqs`` holds the (2,q) norm
    of each sample's sub-gradient (:func:`_sample_zq`).  Kernel ``j``'s row
    is stored row ``src[j]`` squared ``nsq[j]`` times (:func:`_derived_kernels`).
    """
    F = N.shape[0]
    scale = st[0]
    s = st[1]
    t = st[2]
    n_upd = 0.0
    loss_sum = 0.0
    # the mirror scales and ||theta||_{2,q} change only when N does (an
    # update, or a shrinkage to zero), not at every sample: most samples of
    # an epoch only read their margin
    nq = _mirror(N, q, alpha)
    for k in range(start, ids.shape[0]):
        i = ids[k]
        r = slot[i]
        yi = yint[i]
        loss, yh = _hinge(G, alpha, scale, i, yi, multiclass, m)
        active = loss > 0.0
        if active and r < 0:
            st[0] = scale
            st[1] = s
            st[2] = t
            st[3] += n_upd
            st[4] += loss_sum
            return k
        if active:
            st[5] += 1.0
            stamp[r] = st[5]
        zq = 0.0
        if active:
            loss_sum += loss
            zq = zqs[i]
        t, s, eta, scale = _step(stage, t, s, lam, q, scale, nq, zq, R, eta1, A, G, N)
        changed = active or (stage == 2 and 1.0 - lam * eta / q <= 0.0)
        if active:
            n_upd += 1.0
            cf = eta / scale
            if multiclass:
                for j in range(F):
                    N[j] += (
                        2.0 * cf * (G[yi, j, i] - G[yh, j, i])
                        + 2.0 * cf * cf * kdiag[j, i]
                    )
                A[i, yi] += cf
                A[i, yh] -= cf
                for j in range(F):
                    _add_row(G[yi, j], G[yh, j], Krows[src[j], r], cf, nsq[j], True)
            else:
                cy = cf * yi
                for j in range(F):
                    N[j] += 2.0 * cy * G[0, j, i] + cf * cf * kdiag[j, i]
                A[i, 0] += cy
                for j in range(F):
                    _add_row(G[0, j], G[0, j], Krows[src[j], r], cy, nsq[j], False)
        if changed:
            nq = _mirror(N, q, alpha)
        if stage == 2 and nq > 0.0:
            # Algorithm 2, line 10: projection on ||theta||_{2,q} <= q R (a scaling)
            nrm = scale * nq
            if nrm > q * R:
                scale *= q * R / nrm
    st[0] = scale
    st[1] = s
    st[2] = t
    st[3] += n_upd
    st[4] += loss_sum
    return -1


_block_loop_jit = njit_cached(fastmath=False)(_block_loop)


@njit_cached
def _sample_zq(kdiag, q, multiclass):  # pragma: no cover
    r""":math:`\|z\|_{2,q}` of each sample's hinge sub-gradient, for Algorithm 2's :math:`s_t`.

    :math:`z = \pm\phi_j(x_i)` per kernel (two classes) or
    :math:`\phi_j(x_i, y_i) - \phi_j(x_i, \hat y)` (its squared norm twice the
    kernel diagonal), so :math:`\|z\|_{2,q} = \sqrt{f}\,\|(\sqrt{K_j(x_i,
    x_i)})_j\|_q` with :math:`f = 1` or 2: a property of the sample, computed
    once per fit instead of at every update (``F + 1`` powers each).
    """
    F, n = kdiag.shape
    zfac = 2.0 if multiclass else 1.0
    out = np.zeros(n)
    for i in range(n):
        zmx = 0.0
        for j in range(F):
            if kdiag[j, i] > zmx:
                zmx = kdiag[j, i]
        if zmx > 0.0:
            S = 0.0
            for j in range(F):
                S += (kdiag[j, i] / zmx) ** (0.5 * q)
            out[i] = np.sqrt(zfac * zmx) * S ** (1.0 / q)
    return out


@njit_cached
def _incurs_loss(ids, G, N, q, scale, yint, multiclass, alpha):  # pragma: no cover
    """Whether each sample of ``ids`` incurs a hinge loss under the current iterate.

    The margins of :func:`_block_loop` (lazy ``scale`` included) without
    gathering ``G[:, :, ids]``: one pass over the samples.
    """
    _mirror(N, q, alpha)
    M = G.shape[0]
    out = np.empty(ids.shape[0], dtype=np.bool_)
    m = np.empty(M)
    for k in range(ids.shape[0]):
        i = ids[k]
        out[k] = _hinge(G, alpha, scale, i, yint[i], multiclass, m)[0] > 0.0
    return out


@njit_cached
def _lazy_objective(G, N, scale, q, yint, multiclass, sw, alpha, lam, marg):  # pragma: no cover
    """Objective (5) of the current iterate, lazy ``scale`` included.

    The margins in contiguous passes over ``G`` into the ``(M, n)`` buffer
    ``marg`` (as :func:`_end_epoch`; a sample's own scores are ``M x F``
    entries ``n`` apart, which read one by one cost about a tenth of an
    epoch) and the norm from ``N``.  ``sw`` of length 0 means unit weights.
    """
    nq = _mirror(N, q, alpha)
    M, F, n = G.shape
    marg[:] = 0.0
    for c in range(M):
        for j in range(F):
            a = alpha[j] * scale
            for i in range(n):
                marg[c, i] += a * G[c, j, i]
    wsum = 0.0
    lsum = 0.0
    for i in range(n):
        yi = yint[i]
        if multiclass:
            other = -np.inf
            for c in range(M):
                if c != yi and marg[c, i] > other:
                    other = marg[c, i]
            loss = 1.0 - marg[yi, i] + other
        else:
            loss = 1.0 - yi * marg[0, i]
        w = sw[i] if sw.shape[0] else 1.0
        wsum += w
        lsum += w * max(loss, 0.0)
    wn = scale * nq / q
    return 0.5 * lam * wn * wn + lsum / wsum


@njit_cached
def _coef_norms(A, G, N, scale):  # pragma: no cover
    """``A *= scale``; ``N[j] = sum_ic A[i, c] G[c, j, i]``; returns the rows of ``A`` not zero.

    Row by row over the non-zero coefficients only (a multiclass row has a
    few), instead of every class of every sample with ``A`` read n apart.
    """
    n, M = A.shape
    F = N.shape[0]
    N[:] = 0.0
    nsup = 0
    for i in range(n):
        nz = False
        for c in range(M):
            a = A[i, c] * scale
            A[i, c] = a
            if a != 0.0:
                nz = True
                for j in range(F):
                    N[j] += a * G[c, j, i]
        if nz:
            nsup += 1
    return nsup


@njit_cached
def _end_epoch(A, G, N, scale, q, yint, multiclass, sw, alpha, awaited):  # pragma: no cover
    r"""An epoch's bookkeeping in one compiled pass over the storage.

    Folds the lazy ``scale`` into ``A`` and ``G``, recomputes
    :math:`\|\theta^j\|^2` exactly into ``N``, writes into ``awaited``
    whether each sample incurs a hinge loss (the row cache's eviction order
    for the next epoch: :func:`_incurs_loss` of the new iterate) and returns
    the weighted mean hinge loss, the weighted training error,
    :math:`\|\bar\theta\|_{2,q}` and the number of samples with a non-zero
    coefficient: what ``obscure._objective`` and the history's support count
    compute in a few dozen NumPy calls, which on sets of a few hundred rows
    cost more than the epoch's steps.  ``sw`` of length 0 means unit weights.
    """
    n, M = A.shape
    F = N.shape[0]
    if scale != 1.0:
        for c in range(M):
            for j in range(F):
                for i in range(n):
                    G[c, j, i] *= scale
    nsup = _coef_norms(A, G, N, scale)
    nq = _mirror(N, q, alpha)
    # the margins in contiguous passes over G (a sample's own scores are M x F
    # entries n apart)
    marg = np.zeros((M, n))
    for c in range(M):
        for j in range(F):
            a = alpha[j]
            for i in range(n):
                marg[c, i] += a * G[c, j, i]
    wsum = 0.0
    lsum = 0.0
    esum = 0.0
    for i in range(n):
        yi = yint[i]
        if multiclass:
            best = 0
            other = -np.inf
            for c in range(M):
                if marg[c, i] > marg[best, i]:
                    best = c
                if c != yi and marg[c, i] > other:
                    other = marg[c, i]
            loss = 1.0 - marg[yi, i] + other
            wrong = best != yi
        else:
            loss = 1.0 - yi * marg[0, i]
            wrong = (1 if marg[0, i] > 0.0 else -1) != yi
        awaited[i] = loss > 0.0
        w = sw[i] if sw.shape[0] else 1.0
        wsum += w
        lsum += w * max(loss, 0.0)
        esum += w * (1.0 if wrong else 0.0)
    return lsum / wsum, esum / wsum, nq, nsup


# (reassociation lets the block's dot products vectorise; the bound's value
# moves in the last digits only)
@njit_cached(fastmath={"reassoc", "contract"})
def _dual_bound_cached(A, N, yint, multiclass, sw, lam, q, G, kdiag, rows, slot,
                       cap, max_rows, scales, src, nsq):  # pragma: no cover
    r"""``_obscure_dual.dual_bound`` with the row cache's kernel values, compiled.

    The same bound, term for term (see :func:`~kernlearn.methods._obscure_dual.
    dual_bound`): the best scaled candidate, then the clipped candidates at
    ``scales``, whose last term is exact among the first ``cap`` clipped
    samples with a cached row (at most ``max_rows`` of them, as
    ``_RowCache.gram_block``) and bounded by Cauchy-Schwarz for the others.
    The NumPy version makes a few dozen calls, about 0.1 ms on any set, which
    on sets of a few hundred rows was a third of a fit.  ``sw`` of length 0
    means unit weights.  Returns ``(dual, h, ops)`` with ``h`` the number
    of samples in the exact block and ``ops`` the multiply-adds done (the
    certificate's cost for ``_DualCadence``, in the units of the steps'
    work, over the rows of positive weight; the exact block skips the zero
    coefficients, most of a multiclass row).
    """
    n, M = A.shape
    F = N.shape[0]
    s = np.empty(n)
    W = 0.0
    S = 0.0
    for i in range(n):
        s[i] = A[i, yint[i]] if multiclass else yint[i] * A[i, 0]
        W += sw[i] if sw.shape[0] else 1.0
        S += s[i]
    mx = 0.0
    for j in range(F):
        v = np.sqrt(max(N[j], 0.0))
        if v > mx:
            mx = v
    T = 0.0
    if mx > 0.0:
        acc = 0.0
        for j in range(F):
            acc += (np.sqrt(max(N[j], 0.0)) / mx) ** q
        T = (mx * acc ** (1.0 / q)) ** 2
    kappa = lam * W / q
    c = np.inf
    npos = 0
    a = np.zeros(n)
    amax = max(scales.max(), 0.0)
    nclip = 0
    for i in range(n):
        if s[i] > 0.0:
            npos += 1
            w = sw[i] if sw.shape[0] else 1.0
            c = min(c, w / (kappa * s[i]))
            a[i] = kappa * s[i] / w
            if a[i] * amax > 1.0:
                nclip += 1
    nw = n if not sw.shape[0] else np.count_nonzero(sw > 0)  # (zero weight: no row)
    if S <= 0.0 or T <= 0.0 or npos == 0:
        return 0.0, 0, 2 * nw
    c = min(q * S / T, c)
    best = c * lam / q * S - c * c * lam / (2.0 * q * q) * T
    clip = np.empty(nclip, dtype=np.int64)
    k = 0
    for i in range(n):
        if a[i] * amax > 1.0:
            clip[k] = i
            k += 1
    ns = scales.shape[0]
    rho = np.empty((ns, nclip))
    for t in range(ns):
        for k in range(nclip):
            rho[t, k] = scales[t] - min(scales[t], 1.0 / a[clip[k]])
    Q = np.empty((ns, F))
    for j in range(F):
        for t in range(ns):
            Q[t, j] = scales[t] * scales[t] * N[j]
        for k in range(nclip):
            i = clip[k]
            P = 0.0
            for m in range(M):
                P += A[i, m] * G[m, j, i]
            for t in range(ns):
                Q[t, j] -= 2.0 * scales[t] * rho[t, k] * P
    # the exact block: the first cap clipped samples whose rows are cached
    exact = np.zeros(nclip, dtype=np.bool_)
    have = np.empty(min(nclip, cap, max_rows), dtype=np.int64)
    h = 0
    for k in range(min(nclip, cap)):
        if h < have.shape[0] and slot[clip[k]] >= 0:
            have[h] = k
            exact[k] = True
            h += 1
    # the exact part: quadratic forms of B[t, m] = rho[t] * A[:, m] (on the
    # block) with each kernel's block, one gathered kernel row at a time
    cols = np.empty(h, dtype=np.int64)
    B = np.empty((ns * M, h))
    for x in range(h):
        cols[x] = clip[have[x]]
        for t in range(ns):
            for m in range(M):
                B[t * M + m, x] = rho[t, have[x]] * A[cols[x], m]
    krow = np.empty(h)
    e = np.zeros((ns, F))
    sqd = np.empty(nclip)
    accm = np.empty(M)
    absA = np.empty((nclip, M))
    for k in range(nclip):
        for m in range(M):
            absA[k, m] = abs(A[clip[k], m])
    ops = 4 * nw + F * nclip * (M + ns) * (ns + 2)
    for j in range(F):
        quad = np.zeros(ns)
        for x in range(h):
            rx = slot[cols[x]]
            for z in range(h):
                kv = np.float64(rows[src[j], rx, cols[z]])
                for _ in range(nsq[j]):
                    kv = kv * kv
                krow[z] = kv
            ops += h
            for u in range(ns * M):
                bx = B[u, x]
                if bx == 0.0:
                    continue
                ops += h
                acc = 0.0
                for z in range(h):
                    acc += krow[z] * B[u, z]
                quad[u // M] += bx * acc
        # Cauchy-Schwarz over the others: one root per sample and kernel,
        # not per sample, kernel, scaling and class
        for k in range(nclip):
            sqd[k] = 0.0 if exact[k] else np.sqrt(max(kdiag[j, clip[k]], 0.0))
        for t in range(ns):
            e[t, j] = np.sqrt(max(quad[t], 0.0))
            accm[:] = 0.0
            for k in range(nclip):
                w = sqd[k] * rho[t, k]
                if w != 0.0:
                    for m in range(M):
                        accm[m] += w * absA[k, m]
            rest = 0.0
            for m in range(M):
                rest += accm[m] * accm[m]
            e[t, j] += np.sqrt(rest)
    out = best
    for t in range(ns):
        Tc = 0.0
        for j in range(F):
            Tc += max(Q[t, j] + e[t, j] * e[t, j], 0.0) ** (q / 2.0)
        Tc = Tc ** (2.0 / q)
        rs = 0.0
        for k in range(nclip):
            rs += rho[t, k] * s[clip[k]]
        D = lam / q * (scales[t] * S - rs - Tc / (2.0 * q))
        if D > out:
            out = D
    return out, h, ops


def _block_numpy(
    ids, local, Krows, kdiag, Y, A, G, N, st, lam, q, R, eta1, stage, loss
):
    """The iteration of :func:`_block_loop` for any margin loss, with NumPy."""
    scale, s, t = st[0], st[1], st[2]
    multiclass = G.shape[0] > 1
    for k, i in enumerate(ids):
        r = local[k]
        tn = np.sqrt(np.maximum(N, 0.0))
        a = conj_mirror_scales(tn, q)
        nq = lp_norm(tn, q)
        m = scale * (G[:, :, i] @ a)
        if multiclass:
            g = loss.grad_margin(m[None], Y[i : i + 1])[0]
            lv = float(loss.value(m[None], Y[i : i + 1])[0])
        else:
            g = np.asarray(loss.grad_margin(m, Y[i : i + 1]), dtype=float)
            lv = float(loss.value(m, Y[i : i + 1])[0])
        gn = float(np.sqrt(g @ g))
        active = gn > 0.0
        zq = gn * lp_norm(np.sqrt(kdiag[:, i]), q) if active else 0.0
        if active:
            st[4] += lv
        t, s, eta, scale = _step(stage, t, s, lam, q, scale, nq, zq, R, eta1, A, G, N)
        if active:
            st[3] += 1
            cf = eta / scale
            # theta <- theta - eta z with z = sum_c g_c phi(x_i, c)
            N += -2.0 * cf * (g @ G[:, :, i]) + cf * cf * gn * gn * kdiag[:, i]
            A[i] -= cf * g
            for c in np.flatnonzero(g):
                G[c] -= (cf * g[c]) * Krows[:, r, :]
        if stage == 2:
            nrm = scale * lp_norm(np.sqrt(np.maximum(N, 0.0)), q)
            if nrm > q * R:
                scale *= q * R / nrm
    st[0], st[1], st[2] = scale, s, t


@njit_cached
def _rbf_exponent_rows(D, sq_a, sq_b, gamma, out, slots):  # pragma: no cover
    """``out[slots[a]] = -gamma * max(|x_a|^2 + |x_l|^2 - 2 D[a, l], 0)`` (float32)."""
    for a in range(D.shape[0]):
        r = slots[a]
        for l in range(D.shape[1]):
            d2 = sq_a[a] + sq_b[l] - 2.0 * D[a, l]
            out[r, l] = -gamma * max(d2, 0.0)


@njit_cached
def _scaled_rows(D, s_a, s_b, out, slots):  # pragma: no cover
    """``out[slots[a]] = s_a[a] * D[a, l] * s_b[l]`` (float32)."""
    for a in range(D.shape[0]):
        r = slots[a]
        for l in range(D.shape[1]):
            out[r, l] = s_a[a] * D[a, l] * s_b[l]


def _row_plan(kernels):
    r"""How :class:`_RowCache` computes rows itself, or ``None`` (the list's rows).

    Available for a :class:`~kernlearn.kernels.KernelList` whose kernels are
    all named ``"rbf"``, ``"linear"`` or ``"constant"``: the kernels on one
    view of the inputs share its inner products, from which each row is one
    compiled pass (the list's own ``rows`` make about ten NumPy passes in
    double precision per kernel, then a conversion; on the sets over 10,000
    rows that was most of a fit).  The formulas are the list's: RBF
    :math:`\exp(-\gamma\max(\|x\|^2 + \|x'\|^2 - 2x\cdot x', 0))` (unit
    diagonal), linear :math:`x\cdot x'` times :math:`1/\sqrt{K(x,x)K(x',x')}`
    when normalised, constant 1.

    Returns
    -------
    plan : list of (view, squared norms, [(kernel index, kind, parameter)]) or None
    """
    if not isinstance(kernels, KernelList) or getattr(kernels, "X_", None) is None or any(
            s is not None for s in getattr(kernels, "_shift_", ())):  # (shifted: the list's)
        return None
    views = {}
    for j, (kernel, _, cols) in enumerate(kernels.specs):
        if not (isinstance(kernel, str) and kernel in ("rbf", "linear", "constant")):
            return None
        if kernel == "rbf":
            par = float(kernels.params_[j]["gamma"])
        elif kernel == "linear":
            par = (kernels._isd_[j] if kernels.normalize
                   else np.ones(kernels.n_samples))
        else:
            par = None
        key = id(cols)
        if key not in views:
            views[key] = (kernels._view(kernels.X_, j), kernels._sqn_[j], [])
        views[key][2].append((j, kernel, par))
    return list(views.values())


#: Most squarings a derived kernel's row may take (a width ratio up to 2**4).
_MAX_SQUARINGS = 4


def _derived_kernels(plan, F):
    r"""Which kernels' rows are stored and which are derived by squaring.

    On one view, RBF kernels whose widths are :math:`2^e` times the smallest
    one's (the default list: 0.25, 1 and 2 times "scale") are powers of it,
    :math:`\exp(-2^e\gamma d^2) = \exp(-\gamma d^2)^{2^e}`, so only the widest
    kernel's row is stored and the others are squared from it ``e`` times
    when read (in double precision: a relative error of about
    :math:`2^e\cdot 6\cdot 10^{-8}` from the stored single-precision value,
    and no underflow the direct value would not have).  The update loop
    reads every kernel's row of each updating sample, which is memory bound
    once the cached rows exceed the processor's caches: storing two rows
    instead of four halves those reads and doubles the rows the cache holds.

    Returns
    -------
    src, nsq : ndarray of int64 of shape (F,)
        Stored row of each kernel and the squarings applied to it.
    """
    nsq = np.zeros(F, dtype=np.int64)
    base = np.arange(F, dtype=np.int64)
    for _, _, members in plan:
        rbf = [(par, j) for j, kind, par in members if kind == "rbf" and par > 0]
        if len(rbf) < 2:
            continue
        g0, j0 = min(rbf)
        for g, j in rbf:
            e = round(float(np.log2(g / g0)))
            if 1 <= e <= _MAX_SQUARINGS and abs(g - g0 * 2.0**e) <= 1e-12 * g:
                base[j], nsq[j] = j0, e
    stored = np.flatnonzero(nsq == 0)
    index = np.full(F, -1, dtype=np.int64)
    index[stored] = np.arange(len(stored))
    return index[base], nsq


# Rows computed together on a cache miss (one BLAS-shaped block).  Each miss
# costs a few dozen Python calls besides its rows: 128 rather than 32 took
# 5-15 % less time on sets of 500-2,000 rows (vehicle, diabetes, wdbc,
# phoneme, cardiotocography), the same epochs and rows to within a few.
_FETCH_BLOCK = 128
# Up to this many samples the first miss computes every row: each miss pays
# a fixed kernel set-up that a small problem's rows do not amortise, and a
# small problem's support vectors are most of its samples anyway.
_ALL_ROWS_UPTO = 256
# Largest block of kernel values the duality-gap check reads from the cache.
_EXACT_DUAL_ROWS = 1000


class _RowCache:
    """Gram rows of the training samples for the compiled loop, evicted by next use.

    With cached Gram matrices every row is present (``slot`` is the
    identity).  Otherwise ``rows`` holds as many ``(F, n)`` single-precision
    rows as the kernel list's ``cache_size`` allows (as libsvm's kernel cache
    does), and
    :meth:`fill` computes a missing row together with those of the next
    samples the current model would update, evicting the rows whose next use
    is farthest (:meth:`_eviction_key`), so a support vector's row is
    computed once while it stays in the cache instead of at every update.
    Up to ``_ALL_ROWS_UPTO`` samples the first miss computes all rows at
    once.

    Parameters
    ----------
    kernels : KernelList or PrecomputedKernelList
        Fitted kernel list.
    """

    def __init__(self, kernels):
        n, F = kernels.n_samples, kernels.n_kernels
        self.kernels = kernels
        self.n_computed = 0
        self.last_block = 0  # size of the last gram_block
        self.last_ops = 0  # multiply-adds of the last compiled certificate
        self.epoch_start = 0.0  # update count at the epoch's start (new_epoch)
        self.awaited = np.zeros(n, dtype=bool)
        gram = getattr(kernels, "gram_", None)
        # kernel j's row is stored row src[j] squared nsq[j] times
        self.src, self.nsq = np.arange(F, dtype=np.int64), np.zeros(F, dtype=np.int64)
        if gram is not None:
            self.rows = gram
            self.capacity, self.all_at_once = n, True  # every row present
            self.slot = np.arange(n, dtype=np.int64)
            self.stamp = np.zeros(n)
            return
        self.plan = _row_plan(kernels)
        if self.plan is not None:
            self.src, self.nsq = _derived_kernels(self.plan, F)
        n_stored = int(self.src.max()) + 1 if F else 0
        cap = int(kernels.cache_size * 2**20 // (4.0 * max(n_stored, 1) * max(n, 1)))
        self.capacity = max(1, min(n, cap))
        # np.empty reserves address space only: memory is committed as rows are
        # written, so it follows the number of distinct rows used.  Single
        # precision: each update reads a row of every kernel and each new row
        # commits fresh pages, both memory bound, so half the bytes is about
        # half the time; the sums stay in double precision (7 digits of a
        # kernel value move the objective by about 1e-7 relative)
        self.rows = np.empty((n_stored, self.capacity, n), dtype=np.float32)
        self.slot = np.full(n, -1, dtype=np.int64)
        self.owner = np.full(self.capacity, -1, dtype=np.int64)
        self.stamp = np.full(self.capacity, -1.0)  # last use (clock); -1: free
        # slots are handed out in order until the cache is full (a slot is
        # never freed again), so the free ones are always slots n_used...
        self.n_used = 0
        # prefetch only into a cache large enough to keep what it prefetches
        self.block = max(1, min(_FETCH_BLOCK, self.capacity // 8))
        self.all_at_once = self.capacity == n <= _ALL_ROWS_UPTO
        self._dots = None  # inner products of a block of rows (_compute)

    def _compute(self, ids, free):
        """Write the Gram rows of ``ids`` into the slots ``free``.

        With a plan (:func:`_row_plan`) each view's inner products are one
        BLAS product, turned into every kernel's single-precision row in one
        compiled pass (RBF: the exponent, then NumPy's vectorised ``exp`` in
        place); otherwise the kernel list's own rows, converted.
        """
        if self.plan is None:
            self.rows[:, free, :] = self.kernels.rows(ids)
            return
        for Xv, sq, members in self.plan:
            if isinstance(Xv, np.ndarray):
                # into a buffer kept across calls: a fresh block each call
                # commits fresh memory, which costs more than the product
                if self._dots is None or self._dots.shape[0] < len(ids):
                    self._dots = np.empty((max(len(ids), self.block), Xv.shape[0]))
                D = self._dots[: len(ids)]
                np.dot(Xv[ids], Xv.T, out=D)
            else:  # (sparse: centred as the list's kernels are)
                D = self.kernels._train_dots(Xv, ids, members[0][0])
            # consecutive slots (a cache still filling): one exp call per kernel
            run = (slice(free[0], free[-1] + 1)
                   if free[-1] - free[0] + 1 == len(free) and np.all(np.diff(free) > 0)
                   else None)
            for j, kind, par in members:
                if self.nsq[j]:
                    continue  # derived from a stored row
                out = self.rows[self.src[j]]
                if kind == "rbf":
                    _rbf_exponent_rows(D, sq[ids], sq, par, out, free)
                    if run is not None:
                        np.exp(out[run], out=out[run])
                    else:
                        for f in free:
                            np.exp(out[f], out=out[f])
                elif kind == "linear":
                    _scaled_rows(D, par[ids], par, out, free)
                else:  # constant
                    out[free] = 1.0

    def fill(self, order, k, clock, margins_of):
        """Cache the row of ``order[k]`` and of the next likely updates.

        The extra rows are those of the next uncached samples in ``order``
        that incur a loss under the current model (``margins_of``), i.e.
        will need an update unless the model changes before their turn; all
        are computed in one block (one product with the training inputs
        instead of one per row, which is memory bound for wide inputs).

        Parameters
        ----------
        order : ndarray of int
            Visiting order of the epoch.
        k : int
            Position of the sample whose row is missing.
        clock : float
            Current update count (the recency stamp of the new rows).
        margins_of : callable
            ``margins_of(ids) -> bool array``: whether each sample currently
            incurs a loss.
        """
        if self.all_at_once:  # small problem (see _ALL_ROWS_UPTO)
            extra = np.setdiff1d(np.flatnonzero(self.slot < 0), order[k : k + 1])
        else:
            window = order[k + 1 : k + 1 + 4 * self.block]
            window = window[self.slot[window] < 0]
            extra = (window[margins_of(window)][: self.block - 1] if window.size
                     else window)
        ids = np.concatenate([order[k : k + 1], extra]).astype(np.int64)
        if self.n_used + len(ids) <= self.capacity:  # free slots, in order
            free = np.arange(self.n_used, self.n_used + len(ids))
            self.n_used += len(ids)
        else:
            self.n_used = self.capacity
            free = np.argpartition(self._eviction_key(clock), len(ids) - 1)[: len(ids)]
        old = self.owner[free]
        self.slot[old[old >= 0]] = -1
        self._compute(ids, free)
        self.slot[ids] = free
        self.owner[free] = ids
        self.stamp[free] = clock
        # a prefetched row is for a visit still ahead in this epoch
        self.stamp[free[1:]] = self.epoch_start - 0.5
        self.awaited[ids[1:]] = True
        self.n_computed += len(ids)

    def new_epoch(self, clock, awaited):
        """Mark the start of an epoch.

        Parameters
        ----------
        clock : float
            Update count at the start of the epoch.
        awaited : ndarray of bool of shape (n,) or None
            Samples that incur a loss under the current model (the likely
            updates of this epoch); ``None`` when the cache holds every row
            (nothing is evicted).
        """
        self.epoch_start = float(clock)
        if awaited is not None:
            self.awaited = awaited

    def _eviction_key(self, clock):
        """Eviction order of the slots (lowest first).

        An epoch visits every sample once in a random order, so a row used
        earlier in this epoch is next needed in the next epoch, while the row
        of a sample that incurred a loss at the start of the epoch and is
        not visited yet is likely needed before the epoch ends (the rows
        farthest from their next use go first, as in Belady's rule).  Free
        slots go first, then rows of samples with no loss that were not used
        this epoch, then rows used this epoch, then rows awaiting their visit
        (least recently used first within each group).  Plain LRU evicts the
        awaited rows first: when the samples that update outnumber the slots,
        about half its lookups miss.
        """
        s = self.stamp
        own = np.maximum(self.owner, 0)
        group = np.where(s >= self.epoch_start, 2.0,
                         np.where(self.awaited[own], 3.0, 1.0))
        group[self.owner < 0] = 0.0
        return group * (clock + 2.0) + s

    def dual_bound(self, A, N, yint, multiclass, sw, lam, q, G, kdiag, exact_budget):
        """``_obscure_dual.dual_bound`` with ``gram_block=self.gram_block``, compiled.

        Parameters
        ----------
        A, N, G, kdiag, lam, q, exact_budget
            As in :func:`~kernlearn.methods._obscure_dual.dual_bound`.
        yint : ndarray of int64 of shape (n,)
            ``-1/+1`` labels or class indices.
        multiclass : bool
        sw : ndarray of shape (n,) or (0,)
            Sample weights (length 0: unit weights).

        Returns
        -------
        dual : float
        """
        budget = min(exact_budget, _EXACT_BUDGET)
        scales = np.asarray(_CLIP_SCALES)
        cap = int(np.sqrt(budget / (scales.size * N.size * A.shape[1])))
        dual, self.last_block, self.last_ops = _dual_bound_cached(
            A, N, yint, multiclass, sw, lam, q, G, kdiag, self.rows, self.slot,
            cap, _EXACT_DUAL_ROWS, scales, self.src, self.nsq)
        return dual

    def gram_block(self, ids, cap=_EXACT_DUAL_ROWS):
        """Kernel values among the samples of ``ids`` whose rows are cached.

        Parameters
        ----------
        ids : ndarray of int
        cap : int
            At most this many samples (those first in ``ids``).

        Returns
        -------
        have : ndarray of int
            The samples of ``ids`` with a cached row.
        K : ndarray of shape (F, len(have), len(have))
        """
        have = ids[self.slot[ids] >= 0][:cap]
        self.last_block = len(have)
        return have, self.values(self.slot[have], have)

    def values(self, slots, cols):
        """Every kernel's values in the cached rows ``slots`` at columns ``cols``.

        Parameters
        ----------
        slots : ndarray of int
            Slots of the rows (``slot[i]`` of their samples).
        cols : ndarray of int
            Training samples (columns).

        Returns
        -------
        K : ndarray of shape (F, len(slots), len(cols))
            In double precision, derived kernels squared from their stored row.
        """
        K = self.rows[self.src][:, slots][:, :, cols].astype(float)
        for j in np.flatnonzero(self.nsq):
            for _ in range(self.nsq[j]):
                K[j] *= K[j]
        return K
