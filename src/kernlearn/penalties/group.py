"""Group penalties (sums of per-group norms)."""

from numbers import Real

import numpy as np

from ._base import BasePenalty
from ._prox import block_soft_scales, group_norms


class GroupL1L2(BasePenalty):
    r"""Group lasso :math:`\alpha \sum_t \|w_t\|_2`.

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength.
    """

    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def value(self, w, indptr=None):
        return self.alpha * float(group_norms(w, self._indptr(w, indptr)).sum())

    def prox_scales(self, norms, step):
        return block_soft_scales(norms, step * self.alpha)

    def dual_norm(self, scores, indptr=None):
        return group_norms(np.asarray(scores), self._indptr(scores, indptr))


def _group_ids(indptr):
    """Group index of every coordinate for contiguous groups ``indptr``."""
    return np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))


def _group_l1_norms(w, indptr):
    """l1 norm of each contiguous group."""
    out = np.zeros(len(indptr) - 1)
    np.add.at(out, _group_ids(indptr), np.abs(w))
    return out


def _group_max_abs(w, indptr):
    """l-infinity norm of each contiguous group."""
    out = np.zeros(len(indptr) - 1)
    np.maximum.at(out, _group_ids(indptr), np.abs(w))
    return out


def _project_groups_l1_ball(v, radius, indptr):
    r"""Project every group of ``v`` onto the l1 ball of radius ``radius``.

    Vectorised sort-based projection (Duchi et al., 2008): inside the groups
    whose l1 norm exceeds the radius, :math:`x = \mathrm{sign}(v)(|v| - \theta)_+`
    with the threshold :math:`\theta` found from the sorted magnitudes.
    """
    indptr = np.asarray(indptr)
    sizes = np.diff(indptr)
    n_groups = len(sizes)
    out = np.array(v, dtype=float, copy=True)
    if n_groups == 0 or len(v) == 0:
        return out
    gid = _group_ids(indptr)
    a = np.abs(out)
    over = _group_l1_norms(out, indptr) > radius
    if not over.any():
        return out
    # sort magnitudes decreasingly within each group (lexsort: group, then -|v|)
    order = np.lexsort((-a, gid))
    u = a[order]
    csum = np.cumsum(u)
    start_sum = np.concatenate([[0.0], csum[indptr[1:-1] - 1]])
    csum = csum - np.repeat(start_sum, sizes)
    rank = np.arange(len(u)) - np.repeat(indptr[:-1], sizes) + 1
    cond = u - (csum - radius) / rank > 0
    # rho = largest rank satisfying cond within each group
    rho = np.zeros(n_groups, dtype=int)
    np.maximum.at(rho, gid, np.where(cond, rank, 0))
    rho = np.maximum(rho, 1)
    theta = (csum[indptr[:-1] + rho - 1] - radius) / rho
    theta = np.where(over, np.maximum(theta, 0.0), 0.0)
    return np.sign(out) * np.maximum(a - theta[gid], 0.0)


class L1Linf(BasePenalty):
    r"""Mixed norm :math:`\alpha \sum_g \|w_g\|_\infty` (l1-l-infinity).

    Its prox follows from the Moreau decomposition
    :math:`\mathrm{prox}_{s\alpha\|\cdot\|_\infty}(v) = v - P_{\{\|x\|_1 \le s\alpha\}}(v)`,
    and its dual norm is the group l1 norm, which pricing compares with
    :math:`\alpha` (paper 000, condition (7) with :math:`q' = 1`).

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength.

    References
    ----------
    Rakotomamonjy, Flamary, Yger (2013), Mach. Learn. 91, sec. 3.1, Table 1,
    sec. 5.2 (l1-linf for approximate infinite kernel learning).
    """

    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def value(self, w, indptr=None):
        w = np.asarray(w, dtype=float)
        return self.alpha * float(_group_max_abs(w, self._indptr(w, indptr)).sum())

    def prox(self, w, step, indptr=None):
        w = np.asarray(w, dtype=float)
        ip = self._indptr(w, indptr)
        return w - _project_groups_l1_ball(w, step * self.alpha, ip)

    def dual_norm(self, scores, indptr=None):
        scores = np.asarray(scores, dtype=float)
        return _group_l1_norms(scores, self._indptr(scores, indptr))


class L1Lq(BasePenalty):
    r"""Mixed norm :math:`\alpha \sum_g \|w_g\|_q`, :math:`1 \le q \le \infty`.

    ``q = 1`` is the lasso, ``q = 2`` the group lasso and ``q = inf``
    :class:`L1Linf`; those use closed-form proxes.  For other ``q`` the prox of
    each group solves, with :math:`a = |v|` and :math:`r = \|x\|_q`,

    .. math:: x_i + \lambda\, r^{1-q} x_i^{q-1} = a_i, \qquad r = \|x\|_q,

    by regula falsi on :math:`r` (outer) and Newton on each :math:`x_i`
    (inner, monotone from a point above the root); the
    group is zeroed when :math:`\|v\|_{q'} \le \lambda`.  The dual norm is the
    group :math:`\ell_{q'}` norm, :math:`1/q + 1/q' = 1` (paper 000, eq. (7)).

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength.
    q : float, default=2.0
        Inner norm, ``1 <= q <= inf``.

    References
    ----------
    Rakotomamonjy, Flamary, Yger (2013), Mach. Learn. 91, sec. 3.2 and Table 1.
    """

    def __init__(self, alpha=1.0, q=2.0):
        self.alpha = alpha
        self.q = q

    @staticmethod
    def _constraints():
        from sklearn.utils._param_validation import Interval, Options

        # (an open end excludes inf: the max-norm named apart)
        return dict(BasePenalty._constraints(),
                    q=[Interval(Real, 1, None, closed="left"), Options(Real, {np.inf})])

    def _q(self):
        self._validate_params()
        return float(self.q)

    @property
    def q_dual(self):
        """Conjugate exponent :math:`q'` with :math:`1/q + 1/q' = 1`."""
        q = self._q()
        if q == 1.0:
            return np.inf
        if np.isinf(q):
            return 1.0
        return q / (q - 1.0)

    @staticmethod
    def _norms(w, indptr, q):
        a = np.abs(np.asarray(w, dtype=float))
        if q == 1.0:
            return _group_l1_norms(a, indptr)
        if np.isinf(q):
            return _group_max_abs(a, indptr)
        if q == 2.0:
            return group_norms(a, indptr)
        s = np.zeros(len(indptr) - 1)
        scale = np.maximum(_group_max_abs(a, indptr), 1e-300)
        gid = _group_ids(indptr)
        np.add.at(s, gid, (a / scale[gid]) ** q)
        return scale * s ** (1.0 / q)

    def value(self, w, indptr=None):
        w = np.asarray(w, dtype=float)
        norms = self._norms(w, self._indptr(w, indptr), self._q())
        return self.alpha * float(norms.sum())

    def dual_norm(self, scores, indptr=None):
        scores = np.asarray(scores, dtype=float)
        return self._norms(scores, self._indptr(scores, indptr), self.q_dual)

    def prox(self, w, step, indptr=None, n_bisect=60):
        w = np.asarray(w, dtype=float)
        ip = self._indptr(w, indptr)
        q, lam = self._q(), step * self.alpha
        if q == 1.0:
            return np.sign(w) * np.maximum(np.abs(w) - lam, 0.0)
        if np.isinf(q):
            return w - _project_groups_l1_ball(w, lam, ip)
        if q == 2.0:
            scales = block_soft_scales(group_norms(w, ip), lam)
            return w * np.repeat(scales, np.diff(ip))
        gid = _group_ids(ip)
        a = np.abs(w)
        active = self._norms(a, ip, self.q_dual) > lam
        out = np.zeros_like(w)
        if not active.any():
            return out

        def x_of(r):
            # x solves x + c x^(q-1) = a with c = lam r^(1-q): Newton on a convex
            # increasing function from a point where it is >= 0 (monotone).
            c = (lam * np.maximum(r, 1e-300) ** (1.0 - q))[gid]
            if q > 2.0:
                x = a.copy()
                for _ in range(100):
                    f = x + c * x ** (q - 1.0) - a
                    df = 1.0 + (q - 1.0) * c * x ** (q - 2.0)
                    x_new = np.maximum(x - f / df, 0.0)
                    if np.max(np.abs(x_new - x), initial=0.0) <= 1e-14 * (1 + a.max()):
                        return x_new
                    x = x_new
                return x
            # 1 < q < 2: in t = x^(q-1), g(t) = t^(1/(q-1)) + c t - a is convex
            e = 1.0 / (q - 1.0)
            t = np.minimum(a / np.maximum(c, 1e-300), a ** (q - 1.0))
            for _ in range(100):
                g = t**e + c * t - a
                t_new = np.maximum(t - g / (e * t ** (e - 1.0) + c), 0.0)
                if np.max(np.abs(t_new - t), initial=0.0) <= 1e-14 * (1 + t.max()):
                    t = t_new
                    break
                t = t_new
            return t**e

        # phi(r) = ||x(r)||_q - r is > 0 near 0 and <= 0 at ||a||_q: regula
        # falsi with the Illinois modification, vectorised over the groups.
        r_hi = np.maximum(self._norms(a, ip, q), 1e-300)
        r_lo = 1e-9 * r_hi
        f_lo = self._norms(x_of(r_lo), ip, q) - r_lo
        f_hi = self._norms(x_of(r_hi), ip, q) - r_hi
        side = np.zeros(len(r_lo), dtype=int)
        r = r_hi
        for _ in range(n_bisect * 2):
            denom = np.where(f_lo - f_hi > 0, f_lo - f_hi, 1.0)
            r = np.where(f_lo - f_hi > 0, r_hi + f_hi * (r_hi - r_lo) / denom, r_hi)
            r = np.clip(r, r_lo, r_hi)
            f = self._norms(x_of(r), ip, q) - r
            pos = f > 0
            r_lo, f_lo = np.where(pos, r, r_lo), np.where(pos, f, f_lo)
            r_hi, f_hi = np.where(pos, r_hi, r), np.where(pos, f_hi, f)
            # Illinois: halve the stale end's value when the same side moves twice
            f_hi = np.where(pos & (side == 1), 0.5 * f_hi, f_hi)
            f_lo = np.where(~pos & (side == -1), 0.5 * f_lo, f_lo)
            side = np.where(pos, 1, -1)
            if np.max(np.abs(f)[active], initial=0.0) <= 1e-13 * (1 + r.max()):
                break
        x = x_of(r)
        out = np.sign(w) * x
        out[~active[gid]] = 0.0
        return out


class PerTaskL1Lq(BasePenalty):
    r"""Per-task mixed norm :math:`\alpha \sum_t \sum_g \|W_{g,t}\|_q` (paper 000, Table 1).

    Where :class:`L1Lq` couples the tasks (one norm over the block of a
    feature's rows across *all* tasks, so a feature is used by every task or
    by none), this penalty applies the feature-group norm to every task's
    weights separately, :math:`\Omega_p(W) = \sum_t \Omega(w_t)`: each task
    selects its own features among the shared pool.  ``q = 2`` gives
    :math:`\sum_t \sum_g \|W_{g,t}\|_2` (per-task group lasso, the row
    :math:`\sum_t \|w_t\|_2` of Table 1 with the norm taken per feature
    group; with singleton groups ``q`` is irrelevant and it is
    :math:`\sum_t \|w_t\|_1`, row 1).

    The prox is the :class:`L1Lq` prox of each (feature group, task) block.
    Pricing (paper 000, eq. (7) for this penalty): a feature whose weights
    are zero is optimal iff :math:`\|h_{g,t}\|_{q'} \le \alpha` for
    *every* task, so the dual norm of a feature's correlations is
    :math:`\max_t \|h_{g,t}\|_{q'}` (the dual of a sum of norms over
    disjoint blocks is the largest block dual norm).

    On a single weight vector (one task) it is :class:`L1Lq`.

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength.
    q : float, default=2.0
        Norm within each (feature group, task) block, ``1 <= q <= inf``.

    Notes
    -----
    Table 1's :math:`\sum_t \|w_t\|_2` with one group spanning *all*
    features of a task is not offered: it does not select features (an active
    task has non-zero weight on every feature with a non-zero gradient), so
    column generation over an infinite family would never stop.

    References
    ----------
    Rakotomamonjy, Flamary, Yger (2013), Mach. Learn. 91, eqs. (3), (7), Table 1.
    """

    def __init__(self, alpha=1.0, q=2.0):
        self.alpha = alpha
        self.q = q

    _constraints = staticmethod(L1Lq._constraints)

    def _block(self):
        # checked here, so that a bad value is named as this penalty's (the
        # block's own check named L1Lq, a class the user never made)
        self._validate_params()
        return L1Lq(self.alpha, q=self.q)

    def value(self, w, indptr=None):
        return self._block().value(w, indptr)

    def prox(self, w, step, indptr=None):
        return self._block().prox(w, step, indptr)

    def dual_norm(self, scores, indptr=None):
        return self._block().dual_norm(scores, indptr)

    @staticmethod
    def _task_indptr(indptr, p, T):
        """Groups of ``W.T.ravel()``: every feature group of every task."""
        indptr = np.asarray(indptr)
        return np.concatenate([indptr[:-1] + t * p for t in range(T)] + [[T * p]])

    def matrix_value(self, W, indptr):
        p, T = W.shape
        return self.value(W.T.ravel(), self._task_indptr(indptr, p, T))

    def matrix_prox(self, W, step, indptr):
        p, T = W.shape
        X = self.prox(W.T.ravel(), step, self._task_indptr(indptr, p, T))
        return X.reshape(T, p).T

    def matrix_dual_norm(self, H, indptr):
        p, T = H.shape
        norms = self.dual_norm(H.T.ravel(), self._task_indptr(indptr, p, T))
        return norms.reshape(T, -1).max(axis=0)
