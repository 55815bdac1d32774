r"""The per-task SVM / SVR duals of a bucket of tasks, in one compiled loop.

Each task's dual is libsvm's problem

.. math:: \min_\alpha \tfrac12\alpha^\top Q\alpha + p^\top\alpha
          \quad\text{s.t.}\quad s^\top\alpha = 0,\; 0 \le \alpha_i \le C_i,

with :math:`Q_{ij} = s_is_jK_{ij}`: for the SVM :math:`s = y`, :math:`p = -1`;
for the SVR the :math:`2m` variables :math:`(\alpha, \alpha^*)` with
:math:`s = (1, -1)`, :math:`p = (\epsilon - y, \epsilon + y)` and the kernel
of row :math:`i \bmod m`.  It is solved by libsvm's SMO: the working pair of
Fan, Chen and Lin (2005) (maximal violation, second-order choice of the
partner), the same pair update and clipping, the same stopping rule
(maximal KKT violation below ``tol``), the same bias rule (mean over the
free variables, else the middle of the feasible interval), libsvm's
shrinking (bounded variables that stay bounded leave the active set; their
gradients are rebuilt before the stop is accepted) and the kernel in
single precision, as libsvm's cache holds it.

Between pair updates, a Newton step on the face of the free variables
(:func:`_face_step`): SMO alone converges linearly, and on the overlapping
classes of the multitask breadth sets (C = 10, 500-1,200 rows per task, a
kernel of rank about 100, many repeated rows) it took up to 2.8 million pair
updates on one task of 533 rows (8.6 CPU s for its bucket of three) to meet
``tol``; the face step solves the free variables'
problem exactly once the bounded ones are right, and costs as much as the
pair updates made since the previous one, so at most doubles the work.  A
face step cut by the box (a free dual reached its bound) is followed at once
by the step on the smaller face, as in an active-set method, while the face
steps cost at most ``_CHAIN_RATIO`` times the pair updates: without these
chains the pair updates between two cut steps mostly undid and redid the
free duals' part, and the same verbagg tasks took up to 870,000 pair updates
(then about 40,000; a plain ``MultitaskMKLClassifier()`` fit 1.3 -> 0.45 CPU s).
Rows that repeat another (the same row of every base kernel, the same label
or target: :func:`repeated_rows`, found once per MK-MTFL fit) share one dual
variable whose bound is the sum of theirs: the same problem (each row's dual
is the variable's share in proportion to its bound, so its KKT conditions
are the variable's) without the degenerate directions along which the
duals of equal rows moved (verbagg: 667 rows, 320-369 variables; the fit
0.45 -> 0.17 CPU s).
Both change only the path: the stop is libsvm's rule on the same ``tol``.
The multitask solvers called scikit-learn's ``SVC`` / ``SVR`` once per task
and per outer iteration: with hundreds of tasks of a few rows, the input
validation of those calls was over 90 % of a fit (400 tasks of 6 rows:
146 s).  Here one
call solves every task of a bucket, and a task can start from the duals of
the previous outer iteration (feasible for the new kernel: the constraints
do not depend on it), which ends in a few pair updates once the kernel
weights settle.
"""

import numpy as np

from ...utils._numba_cache import njit_cached

__all__ = ["libsvm_buckets", "repeated_rows", "smo_buckets"]

# libsvm's TAU: the curvature used when a pair's is not positive
_TAU = 1e-12
# a face step's eigenpairs cost about _FACE_FLOPS nf^3 in units of a pair
# update's cost per variable (4 flops of an indexed scalar loop)
_FACE_FLOPS = 9.0
# chained face steps (a step cut by the box, then the smaller face's) may cost
# at most this many times the pair updates made so far
_CHAIN_RATIO = 16.0
# the maximal violator found by the pass of the previous pair update's gradient
# update (False: by a pass of its own; the same variable either way)
_FUSED_SCAN = True


@njit_cached
def _packed_entry(W, Gp, mp, a, b):
    """Entry ``(a, b)``, ``a <= b``, of ``sum_j W_j K_j`` from packed upper triangles
    (:func:`~kernlearn.methods.mtmkl.mtfl._task_major`'s layout, ``mp`` rows):
    the sum of :func:`~kernlearn.methods.mtmkl.mtfl._unpack_effective`, in its order."""
    q = a * mp - (a * (a - 1)) // 2 - a + b
    v = 0.0
    for j in range(W.shape[0]):
        v += W[j] * Gp[j, q]
    return v


@njit_cached
def _row(K, have, W, Gp, mp, m, i, kr):
    """Make row ``i`` (its first ``m`` entries) of ``K`` present.

    ``kr``: the row of the packed kernels behind each of the ``m``
    variables (repeated rows merged: :func:`repeated_rows`).

    With packed base kernels (``W`` not empty) ``K`` is filled a row at a
    time, when the solver first reads the row, in single precision as the
    assembled kernel is rounded: the warm-started duals of an outer
    iteration read the rows of their support vectors and of the few pairs
    they update, not all of them.  With an assembled ``K`` (``W`` empty)
    every row is present.
    """
    if W.shape[0] == 0 or have[i]:
        return
    ki = kr[i]
    for b in range(m):
        kb = kr[b]
        K[i, b] = np.float32(_packed_entry(W, Gp, mp, min(ki, kb), max(ki, kb)))
    have[i] = True


@njit_cached
def _square_row(K, have, W, Gs, m, i, kr, acc):
    """:func:`_row` from unpacked base kernels ``Gs (k, mp, mp)``: the same
    entries, summed in the same order (so the same row, bit for bit), read
    along rows of ``Gs``.

    In the packed upper triangles the part of row ``i`` left of the diagonal
    is a column, one cache line per entry and kernel: on Turnout's task of
    957 rows a packed row cost 17 us, an unpacked one 3 us (``acc``: a
    float64 row of at least ``m`` entries, the partial sums).
    """
    if have[i]:
        return
    ki = kr[i]
    for b in range(m):
        acc[b] = 0.0
    for j in range(W.shape[0]):
        w, g = W[j], Gs[j, ki]
        for b in range(m):
            acc[b] += w * g[kr[b]]
    for b in range(m):
        K[i, b] = np.float32(acc[b])
    have[i] = True


@njit_cached
def _fill(K, lazy, m, i):
    """Make row ``i`` of ``K`` present: :func:`_square_row` when the lazy
    state ``(have, W, Gp, mp, kr, Gs, acc)`` holds unpacked kernels (``Gs``
    with kernels), else :func:`_row`."""
    have, W, Gp, mp, kr, Gs, acc = lazy
    if W.shape[0] and Gs.shape[0]:
        _square_row(K, have, W, Gs, m, i, kr, acc)
    else:
        _row(K, have, W, Gp, mp, m, i, kr)


@njit_cached
def _gradient(K, s, alpha, G, m, nvar, rows, lazy, p=None):
    r"""Add :math:`(Q\alpha)_t` to ``G[t]`` for ``t`` in ``rows`` (after
    ``G[rows] = p[rows]`` when ``p`` is given: a rebuilt gradient).

    ``lazy``: ``(have, W, Gp, mp, kr, Gs, acc)`` of :func:`_fill`.
    """
    if p is not None:
        for q in range(rows.shape[0]):
            G[rows[q]] = p[rows[q]]
    for j in range(nvar):
        if alpha[j] != 0.0:
            jj = j if j < m else j - m
            _fill(K, lazy, m, jj)
            w = s[j] * alpha[j]
            for q in range(rows.shape[0]):
                t = rows[q]
                G[t] += s[t] * w * K[jj, t if t < m else t - m]


@njit_cached
def _shrink(K, s, p, C, alpha, G, m, nvar, tol, active, n_act, unshrunk, lazy):
    """libsvm's ``do_shrinking``: returns the new ``(n_act, unshrunk)``.

    ``active[:n_act]`` are the active variables (reordered in place: the
    shrunk ones move past ``n_act``).  Once the active violation is under
    ``10 tol`` the gradients of all variables are rebuilt and all are
    active again, once (libsvm's unshrinking), before shrinking anew.
    """
    Gmax1, Gmax2 = -np.inf, -np.inf
    for q in range(n_act):
        t = active[q]
        if s[t] > 0.0:
            if alpha[t] < C[t]:
                Gmax1 = max(Gmax1, -G[t])
            if alpha[t] > 0.0:
                Gmax2 = max(Gmax2, G[t])
        else:
            if alpha[t] > 0.0:
                Gmax1 = max(Gmax1, G[t])
            if alpha[t] < C[t]:
                Gmax2 = max(Gmax2, -G[t])
    if not unshrunk and Gmax1 + Gmax2 <= 10.0 * tol:
        unshrunk = True
        _gradient(K, s, alpha, G, m, nvar, active[n_act:nvar], lazy, p)
        n_act = nvar
    q = 0
    while q < n_act:
        t = active[q]
        shrunk = False
        if alpha[t] >= C[t]:
            shrunk = -G[t] > Gmax1 if s[t] > 0.0 else -G[t] > Gmax2
        elif alpha[t] <= 0.0:
            shrunk = G[t] > Gmax2 if s[t] > 0.0 else G[t] > Gmax1
        if shrunk:
            n_act -= 1
            active[q], active[n_act] = active[n_act], active[q]
        else:
            q += 1
    return n_act, unshrunk


@njit_cached
def _face_step(K, s, C, alpha, G, m, free, tol, active, lazy):
    r"""One step on the face of the free duals ``free``.

    Returns 0 if it did not move, 1 if it reached the line minimum, 2 if a
    dual reached its bound first (the step was cut: the face shrank).

    With the bounded duals fixed, the dual restricted to the free ones is a
    quadratic in the signed changes :math:`u` (:math:`d = s_F\circ u`) on
    :math:`1^\top u = 0`, with gradient :math:`-r`, :math:`r = -s_F\circ G_F`,
    and Hessian :math:`K_{FF}`.  With :math:`P = I - 11^\top/|F|` and the
    eigenpairs of :math:`PK_{FF}P`: where the projected gradient
    :math:`Pr` has a part (above ``tol``) in the null space (eigenvalues
    under :math:`10^{-10}` of the largest; kernels of low rank, repeated
    rows), the objective falls linearly along it, which is the step;
    otherwise the step is Newton's on the range, the exact minimum of the
    face.  Along it the exact line minimum, cut where the first dual reaches
    its bound (set to the bound): the objective never increases.  ``lazy``:
    ``(have, W, Gp, mp, kr, Gs, acc)`` of :func:`_fill`.  (A
    bordered solve with a small ridge sent its rounding, amplified by the
    inverse ridge, into the null space: steps cut at once by the box, and
    300,000 pair updates on a task of 533 rows.)
    """
    W = lazy[1]
    nf = free.shape[0]
    M = np.empty((nf, nf))
    r = np.empty(nf)
    for a in range(nf):
        ta = free[a]
        ia = ta if ta < m else ta - m
        _fill(K, lazy, m, ia)
        for b in range(nf):
            tb = free[b]
            M[a, b] = K[ia, tb if tb < m else tb - m]
        r[a] = -s[ta] * G[ta]
    # P M P and P r
    rm = r.mean()
    for a in range(nf):
        r[a] -= rm
    cm = np.empty(nf)
    for b in range(nf):
        cm[b] = M[:, b].mean()
    tot = cm.mean()
    for a in range(nf):
        ra = 0.0
        for b in range(nf):
            ra += M[a, b]
        ra /= nf
        for b in range(nf):
            M[a, b] += tot - ra - cm[b]
    lam, V = np.linalg.eigh(M)
    thr = 1e-10 * max(lam[nf - 1], 1e-300)
    coef = V.T @ r
    u = np.zeros(nf)
    null = r.copy()
    for k in range(nf):
        if lam[k] > thr:
            for a in range(nf):
                null[a] -= coef[k] * V[a, k]
    # (the constant vector, eigenvalue 0 of P M P, carries no part of P r)
    if np.abs(null).max() > tol:
        u[:] = null
    else:
        for k in range(nf):
            if lam[k] > thr:
                w = coef[k] / lam[k]
                for a in range(nf):
                    u[a] += w * V[a, k]
    # exact 1'u = 0 (the projections leave rounding)
    um = u.mean()
    slope, curv = 0.0, 0.0
    for a in range(nf):
        u[a] -= um
    for a in range(nf):
        ta = free[a]
        slope += G[ta] * s[ta] * u[a]
        ia = ta if ta < m else ta - m
        row = 0.0
        for b in range(nf):
            tb = free[b]
            row += K[ia, tb if tb < m else tb - m] * u[b]
        curv += u[a] * row
    if not slope < 0.0:
        return 0
    step = -slope / curv if curv > 0.0 else np.inf
    block = -1
    for a in range(nf):
        ta = free[a]
        d = s[ta] * u[a]
        if d > 0.0:
            lim = (C[ta] - alpha[ta]) / d
        elif d < 0.0:
            lim = alpha[ta] / -d
        else:
            continue
        if lim < step:
            step, block = lim, a
    if not (step > 0.0) or step == np.inf:
        return 0
    delta = np.empty(nf)
    for a in range(nf):
        ta = free[a]
        old = alpha[ta]
        new = old + step * s[ta] * u[a]
        if a == block:
            new = C[ta] if s[ta] * u[a] > 0.0 else 0.0
        alpha[ta] = min(max(new, 0.0), C[ta])
        delta[a] = s[ta] * (alpha[ta] - old)  # change of the signed dual
    n_act = active.shape[0]
    if W.shape[0]:
        # a kernel filled by rows is symmetric: read along the present rows ia
        # (each G[t]'s sum over a in the same order as by columns, so the same
        # bits; by columns, one cache line per entry: a seventh of a face step)
        acc = np.zeros(n_act)
        for a in range(nf):
            ta = free[a]
            row, d = K[ta if ta < m else ta - m], delta[a]
            for q in range(n_act):
                t = active[q]
                acc[q] += row[t if t < m else t - m] * d
        for q in range(n_act):
            G[active[q]] += s[active[q]] * acc[q]
        return 1 if block < 0 else 2
    for q in range(n_act):
        t = active[q]
        tt = t if t < m else t - m
        acc_t = 0.0
        for a in range(nf):
            ta = free[a]
            acc_t += K[tt, ta if ta < m else ta - m] * delta[a]
        G[t] += s[t] * acc_t
    return 1 if block < 0 else 2


@njit_cached
def _smo_task(K, s, p, C, alpha, m, nvar, tol, max_iter, lazy, face):
    """libsvm's SMO on one task; ``alpha`` (length ``nvar``) is updated in place.

    Variable ``i`` uses kernel row ``i`` (SVM, ``nvar == m``) or ``i mod m``
    (SVR, ``nvar == 2m``).  Returns ``(rho, n_iter, converged, n_face)``
    (``n_iter``: pair updates; ``n_face``: face steps taken); the task's
    decision function is :math:`\\sum_i s_i\\alpha_iK(x_i, x) - \\rho`.
    ``lazy``: ``(have, W, Gp, mp, kr, Gs, acc)`` of :func:`_fill` (the rows of ``K`` the
    loop reads are filled first); ``face``: ``(flops, chain, fused)``, the cost of
    a face step's eigenpairs per ``nf ** 3`` in units of a pair update's
    per-variable cost, the bound on the chained face steps' cost in
    multiples of the pair updates' (0: no chains; see the loop), and whether
    the maximal violator comes from the previous gradient update's pass
    (:data:`_FUSED_SCAN`).
    """
    W, Gp, mp, kr = lazy[1:5]
    face_flops, chain_ratio, fused = face
    G = p[:nvar].copy()
    _gradient(K, s, alpha, G, m, nvar, np.arange(nvar), lazy)
    QD = np.empty(nvar)
    for t in range(nvar):
        tt = t if t < m else t - m
        if W.shape[0]:
            QD[t] = np.float32(_packed_entry(W, Gp, mp, kr[tt], kr[tt]))
        else:
            QD[t] = K[tt, tt]
    it, since, n_face = 0, 0, 0
    chained, face_work = False, 0.0
    converged = False
    free = np.empty(nvar, np.int64)
    # libsvm's shrinking: every min(nvar, 1000) pair updates the duals at a
    # bound that the current violations say will stay there leave the active
    # set (pair choice and gradient updates run over the active ones); their
    # gradients are rebuilt once the active problem meets 10 tol, and when
    # it meets tol, which is then checked on all variables
    active = np.arange(nvar)
    n_act, counter, unshrunk = nvar, min(nvar, 1000), False
    # the maximal violator is also found by the pass of a pair update's
    # gradient update (over the same variables in the same order, so the same
    # one): ``pre`` while nothing has changed since (no shrinking, face step
    # or rebuilt gradient), which saves one of a pair update's three passes
    pre, Gmax_pre, i_pre = False, -np.inf, -1
    while it < max_iter:
        counter -= 1
        if counter == 0:
            counter = min(nvar, 1000)
            n_act, unshrunk = _shrink(K, s, p, C, alpha, G, m, nvar, tol, active,
                                      n_act, unshrunk, lazy)
            pre = False
        # i: the maximal violator; j: the partner of largest second-order decrease
        Gmax, Gmax2, i_sel, j_sel = -np.inf, -np.inf, -1, -1
        if pre and fused:
            Gmax, i_sel = Gmax_pre, i_pre
        else:
            for q in range(n_act):
                t = active[q]
                if s[t] > 0.0:
                    if alpha[t] < C[t] and -G[t] >= Gmax:
                        Gmax, i_sel = -G[t], t
                elif alpha[t] > 0.0 and G[t] >= Gmax:
                    Gmax, i_sel = G[t], t
        pre = False
        obj_min = np.inf
        if i_sel >= 0:
            ii = i_sel if i_sel < m else i_sel - m
            _fill(K, lazy, m, ii)
            Kii = QD[i_sel]
            for q in range(n_act):
                t = active[q]
                tt = t if t < m else t - m
                if s[t] > 0.0:
                    if alpha[t] > 0.0:
                        gd = Gmax + G[t]
                        Gmax2 = max(Gmax2, G[t])
                        if gd > 0.0:
                            quad = Kii + QD[t] - 2.0 * K[ii, tt]
                            od = -(gd * gd) / (quad if quad > 0.0 else _TAU)
                            if od <= obj_min:
                                obj_min, j_sel = od, t
                elif alpha[t] < C[t]:
                    gd = Gmax - G[t]
                    Gmax2 = max(Gmax2, -G[t])
                    if gd > 0.0:
                        quad = Kii + QD[t] - 2.0 * K[ii, tt]
                        od = -(gd * gd) / (quad if quad > 0.0 else _TAU)
                        if od <= obj_min:
                            obj_min, j_sel = od, t
        if Gmax + Gmax2 < tol or j_sel < 0:
            if n_act == nvar:
                converged = True
                break
            # the active problem is solved: all variables back, checked again
            # (shrinking again after one more pair update, as libsvm)
            _gradient(K, s, alpha, G, m, nvar, active[n_act:nvar], lazy, p)
            n_act, counter = nvar, 2
            continue
        if since >= 10 or chained:
            nf = 0
            for q in range(n_act):
                t = active[q]
                if 0.0 < alpha[t] < C[t]:
                    free[nf] = t
                    nf += 1
            # a face step costs about face_flops nf^3 (the eigenpairs) + 2 nf
            # n_act, a pair update about 4 n_act: taken once the pair updates
            # since the last one cost as much as the step would over all
            # variables.  A step cut by the box (a dual reached its bound) is
            # followed at once by the step on the smaller face, as an
            # active-set method drops a constraint: the pair updates between
            # two cut steps mostly undo and redo the free duals' part (on the
            # verbagg tasks 5-30 cut steps in a row end at the face's minimum,
            # where the pair updates took up to 870,000 updates to get there);
            # a chained step is taken while all the face steps together cost
            # at most chain_ratio times the pair updates made so far (a bound
            # for large faces, nf^3 flops a step; on those tasks it does not bind)
            cost = face_flops * nf ** 3 + 2.0 * nf * nvar
            take = 4.0 * since * nvar >= cost or (
                chained and face_work + cost <= chain_ratio * 4.0 * it * nvar)
            chained = False
            if nf >= 2 and take:
                since = 0
                face_work += cost
                moved = _face_step(K, s, C, alpha, G, m, free[:nf], tol, active[:n_act],
                                   lazy)
                if moved:
                    n_face += 1
                    chained = moved == 2
                    continue
        it += 1
        since += 1
        i, j = i_sel, j_sel
        ii = i if i < m else i - m
        jj = j if j < m else j - m
        _fill(K, lazy, m, jj)
        Qij = s[i] * s[j] * K[ii, jj]
        Ci, Cj = C[i], C[j]
        ai, aj = alpha[i], alpha[j]
        if s[i] != s[j]:
            quad = QD[i] + QD[j] + 2.0 * Qij
            if quad <= 0.0:
                quad = _TAU
            delta = (-G[i] - G[j]) / quad
            diff = alpha[i] - alpha[j]
            alpha[i] += delta
            alpha[j] += delta
            if diff > 0.0:
                if alpha[j] < 0.0:
                    alpha[j], alpha[i] = 0.0, diff
            elif alpha[i] < 0.0:
                alpha[i], alpha[j] = 0.0, -diff
            if diff > Ci - Cj:
                if alpha[i] > Ci:
                    alpha[i], alpha[j] = Ci, Ci - diff
            elif alpha[j] > Cj:
                alpha[j], alpha[i] = Cj, Cj + diff
        else:
            quad = QD[i] + QD[j] - 2.0 * Qij
            if quad <= 0.0:
                quad = _TAU
            delta = (G[i] - G[j]) / quad
            total = alpha[i] + alpha[j]
            alpha[i] -= delta
            alpha[j] += delta
            if total > Ci:
                if alpha[i] > Ci:
                    alpha[i], alpha[j] = Ci, total - Ci
            elif alpha[j] < 0.0:
                alpha[j], alpha[i] = 0.0, total
            if total > Cj:
                if alpha[j] > Cj:
                    alpha[j], alpha[i] = Cj, total - Cj
            elif alpha[i] < 0.0:
                alpha[i], alpha[j] = 0.0, total
        di, dj = alpha[i] - ai, alpha[j] - aj
        Gmax_pre, i_pre = -np.inf, -1
        for q in range(n_act):
            t = active[q]
            tt = t if t < m else t - m
            g = G[t] + s[t] * (s[i] * K[ii, tt] * di + s[j] * K[jj, tt] * dj)
            G[t] = g
            if s[t] > 0.0:
                if alpha[t] < C[t] and -g >= Gmax_pre:
                    Gmax_pre, i_pre = -g, t
            elif alpha[t] > 0.0 and g >= Gmax_pre:
                Gmax_pre, i_pre = g, t
        pre = True
    if n_act < nvar:  # (stopped at the cap: the bias needs every gradient)
        _gradient(K, s, alpha, G, m, nvar, active[n_act:nvar], lazy, p)
    # libsvm's bias: the mean of s_i G_i over the free variables, else the
    # middle of the interval the bounded ones leave.  A variable within
    # rounding (1e-12 C_i) of a bound counts as bounded: the pair updates
    # leave some at 1e-17 where they should be 0, and such a variable pinned
    # the bias to its end of the interval (any bias in it is optimal), so
    # that two optimal duals, from a warm and a cold start, had biases 0.02
    # apart in a degenerate SVR task
    ub, lb, total, n_free = np.inf, -np.inf, 0.0, 0
    for t in range(nvar):
        yG = s[t] * G[t]
        near = 1e-12 * C[t]
        if alpha[t] >= C[t] - near:
            if s[t] < 0.0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif alpha[t] <= near:
            if s[t] > 0.0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            n_free += 1
            total += yG
    rho = total / n_free if n_free > 0 else 0.5 * (ub + lb)
    return rho, it, converged, n_face


@njit_cached
def _share(av, cv, ci):
    """Row's part of a merged dual ``av`` (bound ``cv``) in proportion to its
    bound ``ci``: exactly ``ci`` at the bound and 0 at 0 (a start scaled from
    these duals, as the cross-validation's along its C grid, must stay at the
    bound: a share rounded 1 ulp past ``ci`` made it infeasible, a cold start)."""
    if av <= 0.0 or cv <= 0.0:
        return 0.0
    if av >= cv:
        return ci
    return min(av * ci / cv, ci)


@njit_cached
def _smo_bucket(K, y, C, sizes, beta0, regression, epsilon, tol, beta, rho, n_iter,
                converged, n_face, W, Gp, face, first, Gs):
    """:func:`_smo_task` on every task of a bucket; outputs written in place.

    ``beta0`` (signed duals, zero on padding) is each task's start when it is
    feasible (:math:`|\\beta_i| \\le C_i`, the right signs for the SVM,
    :math:`\\sum_i\\beta_i = 0`); otherwise the task starts at 0.  With packed
    base kernels (``W (T, k)``, ``Gp (T, k, P)``, ``k > 0``) ``K`` is one
    ``(1, m, m)`` buffer that each task fills by rows (:func:`_row`); then
    ``first (T, m)`` (or ``(T, 0)``: none) may merge repeated rows
    (:func:`repeated_rows`): row ``i`` joins the variable of row
    ``first[a, i]``, whose bound is the sum of theirs, and its dual is that
    variable's share in proportion to its :math:`C_i`.  ``Gs (T, k, m, m)``
    (or ``(T, 0, 1, 1)``: none): the same base kernels unpacked, which the
    rows are then read from (:func:`_square_row`).
    """
    T, mpad = y.shape
    have = np.zeros(mpad if W.shape[1] else 0, np.bool_)
    acc = np.empty(mpad if Gs.shape[1] else 0)
    nmax = 2 * mpad if regression else mpad
    s = np.empty(nmax)
    p = np.empty(nmax)
    Cv = np.empty(nmax)
    alpha = np.empty(nmax)
    kr = np.arange(mpad)  # the row behind each variable
    grp = np.arange(mpad)  # the variable of each row
    count = np.ones(mpad, np.int64)
    for a in range(T):
        m = sizes[a]
        if first.shape[1]:
            count[:] = 0
            nv = 0
            for i in range(m):
                if first[a, i] == i:
                    grp[i], kr[nv] = nv, i
                    nv += 1
                else:
                    grp[i] = grp[first[a, i]]
                count[grp[i]] += 1
            m = nv
        nvar = 2 * m if regression else m
        feasible, total, scale = True, 0.0, 0.0
        for i in range(sizes[a]):
            b = beta0[a, i]
            total += b
            scale += abs(b)
            if abs(b) > C[a, i] or (not regression and b * y[a, i] < 0.0):
                feasible = False
        if abs(total) > 1e-12 * max(scale, 1.0):
            feasible = False
        for i in range(m):
            b = beta0[a, kr[i]] if feasible else 0.0
            yi = y[a, kr[i]]
            if regression:
                s[i], s[m + i] = 1.0, -1.0
                p[i], p[m + i] = epsilon - yi, epsilon + yi
                Cv[i], Cv[m + i] = C[a, kr[i]], C[a, kr[i]]
                alpha[i], alpha[m + i] = max(b, 0.0), max(-b, 0.0)
            else:
                s[i], p[i], Cv[i] = yi, -1.0, C[a, kr[i]]
                alpha[i] = b * yi
        for i in range(sizes[a]):  # the other rows of merged variables
            v = grp[i]
            if kr[v] == i:
                continue
            b = beta0[a, i] if feasible else 0.0
            Cv[v] += C[a, i]
            if regression:
                Cv[m + v] += C[a, i]
                alpha[v] += max(b, 0.0)
                alpha[m + v] += max(-b, 0.0)
            else:
                alpha[v] += b * y[a, i]
        # libsvm's iteration cap
        cap = max(10000000, 100 * nvar)
        have[:] = False
        r, it, ok, nf = _smo_task(K[0] if W.shape[1] else K[a], s, p, Cv, alpha, m, nvar,
                                  tol, cap, (have, W[a], Gp[a], mpad, kr, Gs[a], acc), face)
        rho[a], n_iter[a], converged[a], n_face[a] = r, it, ok, nf
        for i in range(mpad):
            if i >= sizes[a]:
                beta[a, i] = 0.0
                continue
            v = grp[i]
            if count[v] == 1:
                bv = alpha[v] - alpha[m + v] if regression else y[a, i] * alpha[v]
            else:  # (a merged variable: each row's share, exactly C_i at the bound)
                bv = _share(alpha[v], Cv[v], C[a, i])
                bv = bv - _share(alpha[m + v], Cv[v], C[a, i]) if regression else y[a, i] * bv
            beta[a, i] = bv


def repeated_rows(Gp, y, sizes):
    """The first row that each row of a task repeats, from packed base kernels.

    Row ``i`` repeats row ``r < i`` when its row of every base kernel (as the
    solver reads them from the packed upper triangles) and its label or
    target equal row ``r``'s exactly; the dual of such rows is one variable
    (:func:`smo_buckets`' ``packed``).  Candidates share the label, each
    kernel's diagonal entry and four of its columns; only they are compared
    whole, so the search costs a few passes over the rows, not the kernels.

    Parameters
    ----------
    Gp : ndarray of shape (T_b, k, m (m + 1) / 2)
        Packed base kernels (:func:`~kernlearn.methods.mtmkl.mtfl._task_major`).
    y : ndarray of shape (T_b, m)
        Labels or targets, zero on padding.
    sizes : ndarray of int of shape (T_b,)

    Returns
    -------
    first : ndarray of int of shape (T_b, m)
        ``first[a, i]``: the smallest row of task ``a`` that row ``i`` repeats
        (``i`` itself if none; ``i`` on padding).
    """
    T, m = y.shape
    first = np.empty((T, m), np.int64)
    _repeated_rows(np.ascontiguousarray(Gp, dtype=np.float64),
                   np.ascontiguousarray(y, dtype=np.float64),
                   np.asarray(sizes, dtype=np.int64), first)
    return first


@njit_cached
def _same_row(Gp, y, mp, m, i, r):
    """Whether rows ``i`` and ``r`` of a task's packed kernels and targets are equal."""
    if y[i] != y[r]:
        return False
    for j in range(Gp.shape[0]):
        for b in range(m):
            qi = min(i, b) * mp - (min(i, b) * (min(i, b) - 1)) // 2 - min(i, b) + max(i, b)
            qr = min(r, b) * mp - (min(r, b) * (min(r, b) - 1)) // 2 - min(r, b) + max(r, b)
            if Gp[j, qi] != Gp[j, qr]:
                return False
    return True


@njit_cached
def _repeated_rows(Gp, y, sizes, first):
    """:func:`repeated_rows` into ``first``."""
    T, k, _ = Gp.shape
    mp = y.shape[1]
    for a in range(T):
        m = sizes[a]
        for i in range(mp):
            first[a, i] = i
        if m < 2:
            continue
        # a key of each row: its label, each kernel's diagonal and four columns
        # (the same for repeated rows, bit for bit: the same sums of the same
        # entries); equal keys are candidates, compared whole
        cols = np.array([0, m // 3, (2 * m) // 3, m - 1])
        key = np.empty(m)
        for i in range(m):
            h = y[a, i]
            for j in range(k):
                for c in range(5):
                    b = i if c == 4 else cols[c]
                    lo, hi = min(i, b), max(i, b)
                    v = Gp[a, j, lo * mp - (lo * (lo - 1)) // 2 - lo + hi]
                    h = h * 1.000001 + v * (1.0 + 0.1 * (c + 5 * j))
            key[i] = h
        order = np.argsort(key, kind="mergesort")  # (stable: rows ascending)
        start = 0
        while start < m:
            end = start + 1
            while end < m and key[order[end]] == key[order[start]]:
                end += 1
            for q in range(start + 1, end):
                i = order[q]
                for q2 in range(start, q):
                    r = order[q2]
                    if first[a, r] == r and _same_row(Gp[a], y[a], mp, m, i, r):
                        first[a, i] = r
                        break
            start = end


def smo_buckets(K, y, sizes, C, regression=False, epsilon=0.1, tol=1e-5, beta0=None,
                return_face_steps=False, packed=None, face_chain=True):
    r"""SVM or SVR duals of every task of a bucket (libsvm's SMO, compiled).

    Parameters
    ----------
    K : ndarray of shape (T_b, m, m) or None
        Effective kernels; task ``a`` uses its leading ``sizes[a]`` rows
        (None with ``packed``).
    y : ndarray of shape (T_b, m)
        Labels in {-1, +1} (SVM) or targets (SVR), zero on padding.
    sizes : ndarray of int of shape (T_b,)
        Rows of each task.
    C : float or ndarray of shape (T_b, m)
        Upper bounds :math:`C_i` of the duals (per-sample loss weights).
    regression : bool, default=False
        SVR (epsilon-insensitive loss) instead of the SVM (hinge).
    epsilon : float, default=0.1
        SVR tube width.
    tol : float, default=1e-5
        Largest KKT violation left (libsvm's ``eps``; scikit-learn's ``tol``).
    beta0 : ndarray of shape (T_b, m), optional
        Signed duals to start from (the previous outer iteration's); a task
        whose start is infeasible starts at 0.
    return_face_steps : bool, default=False
        Also return the Newton steps on the face of the free duals of each
        task (see the module docstring).
    packed : tuple of ndarray, optional
        ``(W (T_b, k), Gp (T_b, k, m (m + 1) / 2))``, or with a third entry
        ``first (T_b, m)`` of :func:`repeated_rows`: the effective kernels as
        ``sum_j W[a, j] K_j`` of the packed upper triangles of the base
        kernels (:func:`~kernlearn.methods.mtmkl.mtfl._task_major`), instead
        of ``K``.  Only the rows the solver reads are computed, each as the
        assembled kernel's (:func:`~kernlearn.methods.mtmkl.mtfl._unpack_effective`,
        then rounded to single precision), so the result is the same, bit
        for bit, as with ``K`` assembled: with warm starts an outer
        iteration reads the rows of the support vectors, not all.  With
        ``first``, the rows that repeat another (the same row of every base
        kernel, the same label or target) share its dual variable, with the
        sum of their bounds: the same problem (its KKT conditions are theirs,
        each row's dual the variable's share in proportion to its
        :math:`C_i`) on fewer, not degenerate, variables.  A fourth entry
        ``Gs (T_b, k, m, m)``
        (:func:`~kernlearn.methods.mtmkl.mtfl.square_blocks`), the same base
        kernels unpacked, is where the rows are read from: the same rows, bit for
        bit, faster than from the packed triangles, whose part of a row left
        of the diagonal is a column.
    face_chain : bool, default=True
        Follow a face step that a bound cut by the step on the smaller face
        at once (see :func:`_smo_task`); False: only the face steps the pair
        updates pay for (the rule before).  The same stopping rule either way.

    Returns
    -------
    beta : ndarray of shape (T_b, m)
        Signed duals :math:`\beta = s\alpha` (SVM) or :math:`\alpha - \alpha^*`
        (SVR), zero on padding.
    b : ndarray of shape (T_b,)
        Biases: :math:`f_t(x) = \sum_i\beta_{ti}K(x_{ti}, x) + b_t`.
    n_iter : ndarray of int of shape (T_b,)
        Pair updates of each task.
    converged : ndarray of bool of shape (T_b,)
        Whether each task met ``tol`` within libsvm's iteration cap.
    face_steps : ndarray of int of shape (T_b,)
        Only with ``return_face_steps``: the face steps each task took.
    """
    T, m = y.shape
    # the kernel in single precision, as libsvm's kernel cache holds it: a
    # pair choice then does not hinge on the last bits of the kernel, so that
    # kernels equal up to rounding (a rescaled one, another summation order)
    # give the same duals, not two points 1e-5 apart in the tolerance
    # (kept in single precision: half the memory the pair updates stream;
    # each entry is widened exactly where it is used)
    first = np.zeros((T, 0), np.int64)
    Gs = np.zeros((T, 0, 1, 1))
    if packed is None:
        K = np.ascontiguousarray(K, dtype=np.float32)
        W, Gp = np.zeros((T, 0)), np.zeros((T, 0, 1))
    else:
        K = np.empty((1, m, m), np.float32)  # (one task's rows at a time)
        W, Gp = (np.ascontiguousarray(a, dtype=np.float64) for a in packed[:2])
        if len(packed) > 2 and packed[2] is not None:
            first = np.ascontiguousarray(packed[2], dtype=np.int64)
        if len(packed) > 3 and packed[3] is not None:
            Gs = np.ascontiguousarray(packed[3], dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    Cm = np.ascontiguousarray(np.broadcast_to(np.asarray(C, dtype=np.float64), (T, m)))
    b0 = (np.zeros((T, m)) if beta0 is None
          else np.ascontiguousarray(beta0, dtype=np.float64))
    beta, rho = np.zeros((T, m)), np.zeros(T)
    n_iter, converged = np.zeros(T, np.int64), np.zeros(T, np.bool_)
    n_face = np.zeros(T, np.int64)
    _smo_bucket(K, y, Cm, np.asarray(sizes, dtype=np.int64), b0, bool(regression),
                float(epsilon), float(tol), beta, rho, n_iter, converged, n_face, W, Gp,
                (float(_FACE_FLOPS), float(_CHAIN_RATIO) if face_chain else 0.0,
                 bool(_FUSED_SCAN)), first, Gs)
    if return_face_steps:
        return beta, -rho, n_iter, converged, n_face
    return beta, -rho, n_iter, converged


def libsvm_buckets(K, y, sizes, C, regression=False, epsilon=0.1, tol=1e-5, beta0=None,
                   packed=None):
    """:func:`smo_buckets` by one scikit-learn ``SVC`` / ``SVR`` per task.

    What the multitask solvers did before (``beta0`` is not used: libsvm
    starts at zero); kept as the reference the compiled loop is checked and
    timed against.  Same parameters and returns as :func:`smo_buckets`
    (``n_iter`` is 0 and ``converged`` true: libsvm does not report them;
    ``packed`` is assembled).
    """
    from sklearn.svm import SVC, SVR

    T, m = y.shape
    if packed is not None:  # (assembled, as the solvers did before; unmerged rows)
        W, Gp = packed[:2]
        K, upper = np.empty((T, m, m)), np.triu_indices(m)
        for a in range(T):
            Ka = np.zeros(Gp.shape[2])
            for j in range(W.shape[1]):
                Ka += W[a, j] * Gp[a, j]
            K[a][upper] = Ka
            K[a].T[upper] = Ka
    Cm = np.ascontiguousarray(np.broadcast_to(np.asarray(C, dtype=np.float64), (T, m)))
    beta, b = np.zeros((T, m)), np.zeros(T)
    for a, mt in enumerate(np.asarray(sizes)):
        Ka, ya, sw = K[a, :mt, :mt], y[a, :mt], Cm[a, :mt]
        # per-sample C_i: libsvm's C = 1 times sample_weight
        est = (SVR(kernel="precomputed", C=1.0, epsilon=epsilon, tol=tol) if regression
               else SVC(kernel="precomputed", C=1.0, tol=tol))
        est.fit(Ka, ya, sample_weight=sw)
        # (scikit-learn drops the rows of weight zero before libsvm: support_
        # counts the rows kept; read as rows of the task, the duals of a task
        # with some C_i = 0 landed on the wrong rows)
        kept = np.flatnonzero(sw > 0) if np.any(sw <= 0) else np.arange(mt)
        beta[a, kept[est.support_]] = est.dual_coef_[0]
        b[a] = est.intercept_[0]
    return beta, b, np.zeros(T, np.int64), np.ones(T, bool)
