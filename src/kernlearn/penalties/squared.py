"""Squared group norms: FGM's squared group-l1 (and OBSCURE's (2,p) norm)."""

from numbers import Real

import numpy as np
from scipy.optimize import brentq

from ._base import BasePenalty
from ._prox import expand, group_norms, squared_group_l1_scales


class SquaredGroupL1(BasePenalty):
    r"""FGM's regulariser :math:`\tfrac{\alpha}{2}\big(\sum_t \|w_t\|_2\big)^2`.

    Its prox is the Moreau projection of Algorithm 3 (paper 002), which only
    rescales each group, so the APG line search can reuse cached products
    (eq. 42).  The dual norm is :math:`\max_t \|s_t\|_2` and the Fenchel
    conjugate is :math:`\tfrac{1}{2\alpha}\max_t\|s_t\|_2^2`.

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength (FGM uses 1 and puts ``C`` on the loss).

    References
    ----------
    Tan, Tsang, Wang (2014), JMLR 15, eq. (31) and Algorithm 3.
    """

    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def value(self, w, indptr=None):
        s = group_norms(w, self._indptr(w, indptr)).sum()
        return 0.5 * self.alpha * float(s) ** 2

    def prox_scales(self, norms, step):
        return squared_group_l1_scales(norms, step * self.alpha)

    def dual_norm(self, scores, indptr=None):
        return group_norms(np.asarray(scores), self._indptr(scores, indptr))

    def conjugate(self, dual_norm_sq):
        """Conjugate value ``dual_norm_sq / (2 alpha)`` from the squared dual norm."""
        return 0.5 * dual_norm_sq / self.alpha


def lp_norm(v, p):
    r"""Numerically stable :math:`\|v\|_p` for large ``p`` (no overflow of ``|v|^p``).

    Parameters
    ----------
    v : ndarray
        Vector (e.g. group norms).
    p : float
        Exponent, ``p >= 1`` (``np.inf`` allowed).

    Returns
    -------
    norm : float
    """
    v = np.abs(np.asarray(v, dtype=float))
    mx = float(v.max()) if v.size else 0.0
    if mx == 0.0:
        return 0.0
    if np.isinf(p):
        return mx
    return mx * float(np.sum((v / mx) ** p)) ** (1.0 / p)


def conj_mirror_scales(theta_norms, q):
    r"""Per-group scales of the mirror map :math:`\nabla h^*` (Lemma 1, property 2).

    For :math:`h(\bar w) = \tfrac q2\|\bar w\|_{2,p}^2` the dual map acts on each
    group by a scaling, :math:`w^j = a_j\theta^j` with

    .. math:: a_j = \frac1q\Big(\frac{\|\theta^j\|_2}{\|\bar\theta\|_{2,q}}\Big)^{q-2}.

    In OBSCURE these are (up to normalisation) the kernel combination weights:
    the predictor is :math:`\sum_i c_i \sum_j a_j K_j(x_i, \cdot)`.

    Parameters
    ----------
    theta_norms : ndarray of shape (F,)
        Group norms :math:`\|\theta^j\|_2`.
    q : float
        Dual exponent, :math:`1/p + 1/q = 1`, ``q >= 2``.

    Returns
    -------
    a : ndarray of shape (F,)

    References
    ----------
    Orabona, Jie, Caputo (2012), JMLR 13, Lemma 1 and Algorithm 1 line 7.
    """
    t = np.asarray(theta_norms, dtype=float)
    nq = lp_norm(t, q)
    if nq == 0.0:
        return np.zeros_like(t)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (t / nq) ** (q - 2.0) / q


class SquaredGroupNorm2p(BasePenalty):
    r"""OBSCURE's squared (2,p) group norm :math:`\tfrac{\alpha}{2}\|\bar w\|_{2,p}^2`.

    .. math:: \|\bar w\|_{2,p} = \Big(\sum_j \|w^j\|_2^p\Big)^{1/p}, \qquad 1 < p \le 2,

    the regulariser of eq. (5) (with :math:`\alpha = \lambda`).  It is
    :math:`\alpha/q`-strongly convex, :math:`1/p + 1/q = 1`; :math:`p \to 1`
    favours few active groups (kernels), :math:`p = 2` gives the plain sum of
    kernels.  Its dual norm is the (2,q) group norm, and :meth:`mirror_grad` /
    :meth:`mirror_grad_conj` are the maps :math:`\nabla h`, :math:`\nabla h^*`
    of Lemma 1 for :math:`h = \tfrac q2\|\cdot\|_{2,p}^2`.

    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation strength.
    p : float, default=1.5
        Exponent in ``(1, 2]``.

    References
    ----------
    Orabona, Jie, Caputo (2012), "Multi kernel learning with online-batch
    optimization", JMLR 13, eq. (5) and Lemma 1.
    """

    def __init__(self, alpha=1.0, p=1.5):
        self.alpha = alpha
        self.p = p

    @staticmethod
    def _constraints():
        from sklearn.utils._param_validation import Interval

        return dict(BasePenalty._constraints(),
                    p=[Interval(Real, 1, 2, closed="right")])

    def _q(self):
        self._validate_params()
        return self.p / (self.p - 1.0)

    def value(self, w, indptr=None):
        self._q()
        norms = group_norms(np.asarray(w, dtype=float), self._indptr(w, indptr))
        return 0.5 * self.alpha * lp_norm(norms, self.p) ** 2

    def dual_norm(self, scores, indptr=None):
        """Per-group 2-norms of ``scores``; their q-norm is the (2,q) dual norm."""
        return group_norms(np.asarray(scores, dtype=float), self._indptr(scores, indptr))

    def prox_scales(self, norms, step):
        r"""Scales of the prox of :math:`\tfrac{\kappa}{2}\|\cdot\|_{2,p}^2`, :math:`\kappa=` step alpha.

        The prox keeps each group's direction; its norms ``u`` solve
        :math:`u_j + \kappa\rho^{2-p}u_j^{p-1} = v_j` with :math:`\rho=\|u\|_p`.
        For fixed :math:`\rho` each :math:`u_j` is found by bisection, and
        :math:`\rho` by Brent's method on the decreasing map
        :math:`\rho \mapsto \|u(\rho)\|_p - \rho`.
        """
        v = np.asarray(norms, dtype=float)
        kappa = step * self.alpha
        p = self.p
        self._q()
        if kappa <= 0 or not v.any():
            return np.ones_like(v) if kappa <= 0 else np.zeros_like(v)
        if p == 2.0:
            return np.full_like(v, 1.0 / (1.0 + kappa))

        def u_of(rho):
            c = kappa * rho ** (2.0 - p)
            lo, hi = np.zeros_like(v), v.copy()
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                big = mid + c * mid ** (p - 1.0) > v
                hi = np.where(big, mid, hi)
                lo = np.where(big, lo, mid)
            return 0.5 * (lo + hi)

        hi = lp_norm(v, p)
        # phi(rho) = ||u(rho)||_p - rho is positive at 0+ and at most 0 at ||v||_p
        rho = brentq(lambda r: lp_norm(u_of(r), p) - r, 0.0, hi, xtol=1e-15 * hi,
                     rtol=1e-15) if lp_norm(u_of(hi), p) < hi else hi
        u = u_of(rho)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(v > 0, u / np.where(v > 0, v, 1.0), 0.0)

    def mirror_grad(self, w, indptr=None):
        r""":math:`\nabla h(\bar w)` for :math:`h = \tfrac q2\|\bar w\|_{2,p}^2` (Lemma 1.1).

        .. math:: \nabla h(\bar w)^j = q\Big(\frac{\|w^j\|_2}{\|\bar w\|_{2,p}}\Big)^{p-2} w^j .

        Parameters
        ----------
        w : ndarray of shape (d,)
        indptr : ndarray of shape (F + 1,), optional

        Returns
        -------
        theta : ndarray of shape (d,)
        """
        q = self._q()
        w = np.asarray(w, dtype=float)
        ip = self._indptr(w, indptr)
        norms = group_norms(w, ip)
        npn = lp_norm(norms, self.p)
        if npn == 0.0:
            return np.zeros_like(w)
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(norms > 0, q * (norms / npn) ** (self.p - 2.0), 0.0)
        return w * expand(s, ip)

    def mirror_grad_conj(self, theta, indptr=None, radius=np.inf):
        r""":math:`\nabla h^*(\bar\theta)`, projected on the ball of radius ``radius`` (Lemma 1.2).

        .. math:: \nabla h^*(\bar\theta) = \mathrm{Proj}\Big(\Big[\frac1q
                  \Big(\frac{\|\theta^j\|_2}{\|\bar\theta\|_{2,q}}\Big)^{q-2}\theta^j\Big]_j, B\Big),

        with :math:`\mathrm{Proj}(\bar w, B) = \min(1, B/\|\bar w\|_{2,p})\,\bar w`.

        Parameters
        ----------
        theta : ndarray of shape (d,)
        indptr : ndarray of shape (F + 1,), optional
        radius : float, default=inf

        Returns
        -------
        w : ndarray of shape (d,)
        """
        q = self._q()
        theta = np.asarray(theta, dtype=float)
        ip = self._indptr(theta, indptr)
        w = theta * expand(conj_mirror_scales(group_norms(theta, ip), q), ip)
        nw = lp_norm(group_norms(w, ip), self.p)
        if np.isfinite(radius) and nw > radius:
            w = w * (radius / nw)
        return w
