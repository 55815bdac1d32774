"""Compiled coordinate steps of SLKL (paper 003, sec. 3.2): the hot loops of
:class:`kernlearn.methods._slkl_state.SLKLState` in Gram mode.

Compiled once and cached on disk (``cache=True``), so a new process loads
them instead of compiling them again.
"""

import numpy as np

from ..utils._numba_cache import njit_cached

# Reassociation lets the compiler vectorise the reductions (dot products with
# G and P, O(m0^2) each): without it every sum is one dependent add after
# another, latency-bound, and those sums were most of a fit's time (10-class
# digits, m0 ~ 120: 14 us a step).  Results change at round-off level only;
# no "nnan"/"ninf", so NaN and infinity keep their meaning.
_FAST = {"reassoc", "contract", "nsz", "arcp"}
#: fast-math without reassociation: a sum kept in the order it is written.  (A
#: function without flags of its own inherits its caller's: ``_FAST``.)
_IN_ORDER = _FAST - {"reassoc"}


@njit_cached(fastmath=_FAST)
def _rank1(A, alpha, x, y):  # pragma: no cover - compiled
    """``A += alpha * outer(x, y)`` in place, without the temporary outer product.

    The Woodbury updates (24)-(27) are rank-one changes of ``G`` (m0 x m0);
    in Gram mode they are the whole cost of a step, and NumPy's ``outer``
    allocates and streams an m0 x m0 temporary each time.
    """
    if A.shape[1] == 1:  # (V of one output: no inner loop to set up per row)
        _axpy_in_order(A, alpha, x, y[0])
        return
    for i in range(A.shape[0]):
        ax = alpha * x[i]
        for k in range(A.shape[1]):
            A[i, k] += ax * y[k]


@njit_cached(fastmath=_IN_ORDER)
def _axpy_in_order(A, alpha, x, y0):  # pragma: no cover - compiled
    """``A[:, 0] += (alpha * x) * y0``, each product as :func:`_rank1` forms it
    (``alpha * x_i`` first: reassociated, ``alpha * y0`` would be taken out of
    the loop and the rounding would change)."""
    for i in range(A.shape[0]):
        A[i, 0] += (alpha * x[i]) * y0


@njit_cached(fastmath=_FAST)
def _rank1_lower(A, m, alpha, x):  # pragma: no cover - compiled
    """``A += alpha * outer(x, x)`` on the lower triangle of ``A[:m, :m]`` only.

    Gram mode keeps the symmetric ``G`` in its lower triangle (the upper one
    is stale): its rank-one updates, most of a fit's time, then touch half
    the entries.
    """
    for i in range(m):
        ax = alpha * x[i]
        for k in range(i + 1):
            A[i, k] += ax * x[k]


@njit_cached(fastmath=_FAST)
def _symv(A, m, x, out):  # pragma: no cover - compiled
    """``out = A[:m, :m] @ x`` for a symmetric ``A`` held in its lower triangle."""
    for i in range(m):
        out[i] = 0.0
    for i in range(m):
        xi = x[i]
        acc = 0.0
        for l in range(i):  # row i left of the diagonal is column i above it
            acc += A[i, l] * x[l]
            out[l] += A[i, l] * xi
        out[i] += acc + A[i, i] * xi


@njit_cached(fastmath=_IN_ORDER)
def _corr_one(P, Q, V, idx, m, j, inv_lam):  # pragma: no cover - compiled
    """``Q[j, 0] - P[j, A] @ V[:m, 0] / lam`` of one output, a sum in a register.

    Every step (an inactive coordinate's whole cost) computes it.  The loop over
    the outputs inside the one over the slots kept the running sum in memory, a
    store and a load between consecutive terms (at one output, m0 ~ 140: 1.4 us
    a step, three quarters of it).  The same operations in the same order as the
    fast-math loop of :func:`_gram_steps` compiles to, ``(P_ji V_i) (1 / lam)``
    subtracted one term after another, compiled without reassociation
    (``_IN_ORDER``) so that the sum is not vectorised: the same value to the last
    bit.
    """
    acc = Q[j, 0]
    for i in range(m):
        acc -= (P[j, idx[i]] * V[i, 0]) * inv_lam
    return acc


@njit_cached(fastmath=_IN_ORDER)
def _dot_in_order(u, V, m):  # pragma: no cover - compiled
    """``u[:m] @ V[:m, 0]`` term after term (as :func:`_corr_one`, for case 4's
    ``v'Q_A``: the output loop's sum in memory, in the same order)."""
    acc = 0.0
    for i in range(m):
        acc += u[i] * V[i, 0]
    return acc


@njit_cached(fastmath=_FAST)
def _step_rule(mu_old, a2, b, one, lam, nu, exact):  # pragma: no cover - compiled
    r"""New weight of one coordinate: eq. (19), or the exact minimiser.

    ``one`` is :math:`1 - \mu_j b` (see
    :meth:`~kernlearn.methods._slkl_state.SLKLState.step`).  Returns ``(new, change,
    fallback)``: the new weight, the exact change of F and
    whether the Newton step was replaced by the exact minimiser.
    """
    fallback = False
    if a2 > 0.0 and b > 0.0:  # d2 = 2 lam a2 b > 0
        d1 = -lam * a2 + nu
        new = max(0.0, mu_old - d1 / (2.0 * lam * a2 * b))
        t = new - mu_old
        if exact or -lam * a2 * t / (one + (mu_old + t) * b) + nu * t > 0.0:
            fallback = not exact
            new = max(0.0, mu_old + (np.sqrt(lam * a2 / nu) - 1.0) / b)
    else:
        new = 0.0
    t = new - mu_old
    change = -lam * a2 * t / (one + (mu_old + t) * b) + nu * t if t != 0.0 else 0.0
    return new, change, fallback


@njit_cached(fastmath=_FAST)
def _gram_residual(G, V, PA, Q, mu, idx, m, lam, r, rho):  # pragma: no cover
    r"""Round-off of Gram mode's state, on random probes (compiled, O(m0^2 + m0 T)).

    ``G`` is read from its lower triangle.

    The larger of the relative errors of :math:`G(D^{-1} + P_{AA}/\lambda) r = r`
    (``r`` of length ``m0``; ``PA`` is :math:`P_{AA}` in slot order) and of :math:`V \rho = G Q_A \rho` (``rho`` of
    length ``T``): both identities hold exactly for the true ``G`` and ``V``.
    """
    T = Q.shape[1]
    Mr = np.empty(m)
    GM = np.empty(m)
    GQ = np.empty(m)
    Vp = np.empty(m)
    Qp = np.empty(m)
    for i in range(m):
        acc = 0.0
        for l in range(m):
            acc += PA[i, l] * r[l]
        Mr[i] = r[i] / mu[idx[i]] + acc / lam
        vp = 0.0
        qp = 0.0
        for t in range(T):
            vp += V[i, t] * rho[t]
            qp += Q[idx[i], t] * rho[t]
        Vp[i] = vp
        Qp[i] = qp
    _symv(G, m, Mr, GM)
    _symv(G, m, Qp, GQ)
    e1 = 0.0
    rr = 0.0
    e2 = 0.0
    gq2 = 0.0
    for i in range(m):
        gm = GM[i]
        gq = GQ[i]
        e1 += (gm - r[i]) ** 2
        rr += r[i] ** 2
        e2 += (Vp[i] - gq) ** 2
        gq2 += gq * gq
    return max(np.sqrt(e1 / max(rr, 1e-300)), np.sqrt(e2 / max(gq2, 1e-300)))


@njit_cached(fastmath=_FAST)
def _gram_steps(coords, start, forced, exact, P, Q, V, G, PA, idx, slot, mu, kkt,
                case_counts, scal, lam, nu, check_every, probes, threshold):  # pragma: no cover
    """Coordinate steps of Gram mode, compiled: the whole of a sweep's work.

    Runs the steps of :meth:`~kernlearn.methods._slkl_state.SLKLState.step` (or,
    when ``forced >= 0``, of
    :meth:`~kernlearn.methods._slkl_state.SLKLState.set_weight` with that value)
    on ``coords[start:]``,
    updating ``G`` (its lower triangle), ``V``, ``mu``, ``PA`` (:math:`P_{AA}` in slot order, kept
    contiguous so that the O(m0^2) products stream it instead of gathering
    ``P[idx[i], idx[l]]``) and the active set in place by the cases (24)-(27).  ``scal = [m0, objective, n_fallback, n_updates]`` carries the
    scalars.  It returns early, with the position of the next coordinate,
    with ``(position, 1)`` when the next coordinate would enter a full active
    set (the caller grows the arrays), with ``(position, 2)`` when the
    round-off check after every ``check_every``-th weight change
    (:func:`_gram_residual` on the next row of ``probes``, whose first ``T``
    entries are ``rho`` and the rest ``r``) exceeds ``threshold`` (the caller
    refreshes), and otherwise with ``(len(coords), 0)``.
    """
    T = Q.shape[1]
    a = np.empty(T)
    # work vectors allocated once per call, not once per step
    cap = G.shape[0]
    Gu = np.empty(cap)
    u = np.empty(cap)
    res = np.empty(cap)
    g = np.empty(cap)
    Vs = np.empty(T)
    vQ = np.empty(T)
    w = np.empty(T)
    for k in range(start, len(coords)):
        m = int(scal[0])
        j = coords[k]
        if m == G.shape[0] and slot[j] < 0:
            return k, 1
        mu_old = mu[j]
        # a = Z'c_j = (Q_j - P_jA V / lam) / lam
        if T == 1:
            a[0] = _corr_one(P, Q, V, idx, m, j, 1.0 / lam)
        else:
            for r in range(T):
                a[r] = Q[j, r]
            for i in range(m):
                p = P[j, idx[i]] / lam
                for r in range(T):
                    a[r] -= p * V[i, r]
        a2 = 0.0
        for r in range(T):
            a[r] /= lam
            a2 += a[r] * a[r]
        d1 = -lam * a2 + nu
        if forced < 0.0 and mu_old == 0.0 and d1 >= 0.0:
            kkt[j] = 0.0
            case_counts[0] += 1
            continue
        s = slot[j]
        if s >= 0:
            gss = G[s, s]
            b = max((mu_old - gss) / mu_old**2, 0.0)
            one = gss / mu_old
        else:
            for l in range(m):  # u = C_A'c_j, gathered once (contiguous inner loops)
                u[l] = P[j, idx[l]]
            _symv(G, m, u, Gu)
            # b = (c'c - u'Gu/lam)/lam cancels when c_j is nearly in the span of
            # the active columns, which magnifies the round-off of G in b and
            # in the new row of G (case 4); one step of iterative refinement of
            # Gu = (D^-1 + P_AA/lam)^-1 u squares that round-off, for O(m0^2)
            for i in range(m):
                acc = 0.0
                for l in range(m):
                    acc += PA[i, l] * Gu[l]
                res[i] = u[i] - Gu[i] / mu[idx[i]] - acc / lam
            _symv(G, m, res, g)  # g: free until case 2/3 below
            uGu = 0.0
            for i in range(m):
                Gu[i] += g[i]
                uGu += u[i] * Gu[i]
            b = max((P[j, j] - uGu / lam) / lam, 0.0)
            one = 1.0
        if forced < 0.0:
            kkt[j] = abs(d1) if mu_old > 0 else max(-d1, 0.0)
            new, change, fallback = _step_rule(mu_old, a2, b, one, lam, nu, exact)
            if fallback:
                scal[2] += 1
        else:
            new = forced
            t = new - mu_old
            change = -lam * a2 * t / (1.0 + t * b) + nu * t if t != 0.0 else 0.0
        if new == mu_old:
            case_counts[0] += 1
            continue
        scal[1] += change
        mu[j] = new
        if s >= 0:
            gm = g[:m]
            # column s of the lower triangle: row s left of the diagonal, then
            # column s from it down (two plain copies, no test per entry)
            for i in range(s):
                gm[i] = G[s, i]
            for i in range(s, m):
                gm[i] = G[i, s]
            for r in range(T):
                Vs[r] = V[s, r]
            if new > 0.0:  # case 2, eq. (25)
                delta = 1.0 / new - 1.0 / mu_old
                # 1 + delta g_ss = g_ss/new + (mu_old - g_ss)/mu_old: terms >= 0
                kappa = delta / (gm[s] / new + (mu_old - gm[s]) / mu_old)
                _rank1(V[:m], -kappa, gm, Vs)
                _rank1_lower(G, m, -kappa, gm)
                case_counts[1] += 1
            else:  # case 3, eq. (26): limit Delta -> inf, then drop slot s
                _rank1(V[:m], -1.0 / gm[s], gm, Vs)
                _rank1_lower(G, m, -1.0 / gm[s], gm)
                last = m - 1
                if s != last:
                    V[s] = V[last]
                    for i in range(last):  # lower triangle: G[last, i], i < last
                        if i < s:
                            G[s, i] = G[last, i]
                        elif i > s:
                            G[i, s] = G[last, i]
                    for i in range(m):
                        PA[s, i] = PA[last, i]
                    for i in range(m):
                        PA[i, s] = PA[i, last]
                    G[s, s] = G[last, last]
                    PA[s, s] = PA[last, last]
                    idx[s] = idx[last]
                    slot[idx[s]] = s
                slot[j] = -1
                scal[0] = last
                case_counts[2] += 1
        else:  # case 4, eq. (27): block inverse with the new column appended
            sc = 1.0 / (1.0 / new + b)
            # V_new = G_new [Q_A; Q_j], with v'Q_A = -(sc/lam) u'G Q_A = -(sc/lam) u'V
            if T == 1:
                vQ[0] = _dot_in_order(u, V, m)
            else:
                for r in range(T):
                    vQ[r] = 0.0
                for i in range(m):
                    p = u[i]  # P[j, idx[i]]
                    for r in range(T):
                        vQ[r] += p * V[i, r]
            for r in range(T):
                vQ[r] *= -sc / lam
                V[m, r] = vQ[r] + sc * Q[j, r]
                w[r] = vQ[r] / sc + Q[j, r]
            v = Gu[:m]  # v = -(sc/lam) Gu, in place
            for i in range(m):
                v[i] *= -(sc / lam)
            _rank1(V[:m], 1.0, v, w)
            _rank1_lower(G, m, 1.0 / sc, v)
            for i in range(m):
                G[m, i] = v[i]
                PA[i, m] = u[i]
                PA[m, i] = u[i]
            G[m, m] = sc
            PA[m, m] = P[j, j]
            idx[m] = j
            slot[j] = m
            scal[0] = m + 1
            case_counts[3] += 1
        scal[3] += 1
        if check_every > 0 and int(scal[3]) % check_every == 0 and scal[0] > 0:
            row = probes[(int(scal[3]) // check_every) % probes.shape[0]]
            if _gram_residual(G, V, PA, Q, mu, idx, int(scal[0]), lam, row[T:],
                              row[:T]) > threshold:
                return k + 1, 2
    return len(coords), 0


@njit_cached()
def _gram_sweeps(rng, phase, pos, done, prev, coords, max_iter, refresh, tol, exact, P, Q,
                 V, G, PA, idx, slot, mu, kkt, case_counts, scal, lam, nu, check_every,
                 probes, threshold, hist):  # pragma: no cover - compiled
    """Sweeps of Algorithm 2 in Gram mode, compiled: a ``nu`` value's solve in a few calls.

    The loop of :class:`~kernlearn.colgen.ColumnGeneration` over the pricing
    and master closures of :meth:`~kernlearn.methods.slkl.CoordinateNewton.solve`,
    in their order: each sweep draws ``M = len(coords)`` coordinates from
    ``rng`` (``rng.integers(0, M, size=M)``, NumPy's stream: the caller's
    generator advances as the closures' draws advanced it), records the
    largest KKT violation of the drawn coordinates at their last visit (as
    Python's ``max``), runs them (:func:`_gram_steps`), then records the
    sweep's history row (objective, violation, ``m0``, ``max(kkt)``) in
    ``hist`` and stops when ``|prev - F| <= tol max(|prev|, 1e-300)`` (the
    driver's test, compiled without fast-math: the same comparisons).

    It returns to the caller, which resumes it with the ``phase``, ``pos``,
    ``done`` and ``prev`` it returned, for what needs Python or LAPACK:
    ``why`` 1 (grow the arrays) and 2 (the round-off check failed: refresh)
    in the middle of a sweep (``phase`` 1, the next coordinate at ``pos``), 3
    after every ``refresh``-th sweep (refresh; ``phase`` 2: its history row
    and the stopping test, on the refreshed objective, are still to come), 4
    when the test stopped the solve and 0 after ``max_iter`` sweeps.
    ``done`` counts the sweeps run, ``prev`` is the last row's objective (NaN
    before the first: the test then fails, as with none).

    Returns
    -------
    why, phase, pos, done, prev : int, int, int, int, float
    """
    M = len(coords)
    while True:
        if phase == 0:  # pricing: a new sweep's coordinates
            if done == max_iter:
                return 0, 0, pos, done, prev
            drawn = rng.integers(0, M, size=M)
            v = kkt[drawn[0]]
            for k in range(M):
                coords[k] = drawn[k]
                if kkt[drawn[k]] > v:  # Python's max: the first of equals, NaN kept first
                    v = kkt[drawn[k]]
            hist[done, 1] = v
            pos, phase = 0, 1
        if phase == 1:  # the master: the sweep's steps
            pos, why = _gram_steps(coords, pos, -1.0, exact, P, Q, V, G, PA, idx, slot, mu,
                                   kkt, case_counts, scal, lam, nu, check_every, probes,
                                   threshold)
            if why != 0:
                return why, 1, pos, done, prev
            done += 1
            phase = 2
            if refresh > 0 and done % refresh == 0:
                return 3, 2, pos, done, prev
        obj = scal[1]  # phase 2: the sweep's history row, then the stopping test
        top = kkt[0]
        for k in range(1, len(kkt)):  # NumPy's max: a NaN is the maximum
            if top != top:
                break
            if kkt[k] > top or kkt[k] != kkt[k]:
                top = kkt[k]
        hist[done - 1, 0] = obj
        hist[done - 1, 2] = scal[0]
        hist[done - 1, 3] = top
        phase = 0
        if tol >= 0.0 and abs(prev - obj) <= tol * max(abs(prev), 1e-300):
            return 4, 0, pos, done, prev
        prev = obj
