"""OBSCURE's duality-gap certificate: the dual bound, its cadence, the best iterate.

Private to :mod:`kernlearn.methods.obscure` (which documents the storage:
``A``, ``G = K A``, ``N = ||theta^j||^2``); :func:`dual_bound` is re-exported
there.
"""

import numpy as np

from ..penalties.squared import lp_norm
from ..utils._numba_cache import njit_cached


def dual_bound(A, N, y, lam, q, sample_weight=None, G=None, kdiag=None,
               gram_block=None, exact_budget=None):
    r"""Lower bound on the optimum of (5) from an iterate's coefficients (hinge losses).

    At the optimum, :math:`\frac{\lambda}{q}\bar\theta = \frac1W\sum_i w_i
    \alpha_i y_i \phi(x_i)` with dual variables :math:`\alpha_i \in [0, 1]`,
    so the coefficients ``A`` of :math:`\bar\theta` give the dual candidate
    :math:`\alpha_i = c\,\lambda W s_i / (q w_i)` (:math:`s_i = y_i A_i`, or
    :math:`A_{i y_i}` for the multiclass hinge, whose other entries give the
    Crammer-Singer dual's off-class weights, scaled alike).  Its dual value
    is the concave quadratic

    .. math:: D(c) = c\,\frac{\lambda}{q}\sum_i s_i
              - c^2\frac{\lambda}{2q^2}\|\bar\theta\|_{2,q}^2,

    maximised in closed form over the scalings :math:`c` that keep every
    :math:`\alpha_i \le 1`.  By weak duality :math:`D \le` the optimum, so
    ``objective - D`` bounds the iterate's suboptimality.

    With the scores ``G`` and the kernel diagonals ``kdiag`` the candidate is
    also *clipped* instead of scaled: :math:`\alpha_i = \min(c a_i, 1)`
    (:math:`a_i = \lambda W s_i/(q w_i)`) for a few :math:`c` near 1, which is
    the optimum's own form (the stochastic iterates overshoot :math:`\alpha_i
    = 1` on a few samples, and scaling every sample down for them loosens the
    bound most).  With :math:`\rho_i = c - \min(c, 1/a_i)` the squared group
    norms of the clipped candidate are

    .. math:: c^2\|\theta^j\|^2 - 2c\sum_{i,m}\rho_i A_{im}G_{mji}
              + \Big\|\sum_i \rho_i A_{im}\phi_j(x_i)\Big\|^2,

    the last term computed from the kernel values among the clipped samples
    whose Gram rows are cached (``gram_block``) and bounded above for the
    others by :math:`\sum_i \rho_i |A_{im}| \sqrt{K_j(x_i, x_i)}`
    (Cauchy-Schwarz, triangle inequality), so the value stays a valid lower
    bound.

    Parameters
    ----------
    A : ndarray of shape (n, M)
        Coefficients of :math:`\bar\theta` (lazy scale folded in).
    N : ndarray of shape (F,)
        :math:`\|\theta^j\|^2`.
    y : ndarray of shape (n,)
        ``-1/+1`` labels (``M == 1``) or class indices.
    lam, q : float
        :math:`\lambda` and the conjugate exponent :math:`q = p/(p-1)`.
    sample_weight : ndarray of shape (n,), optional
    G : ndarray of shape (M, F, n), optional
        Scores ``K_j A`` (enables the clipped candidates).
    kdiag : ndarray of shape (F, n), optional
        Kernel diagonals (required with ``G``).
    gram_block : callable, optional
        ``gram_block(ids) -> (have, K)``: the samples of ``ids`` whose Gram
        rows are at hand and the ``(F, len(have), len(have))`` kernel values
        among them, which make the last term exact on those samples.
    exact_budget : float, optional
        Multiply-adds allowed to that exact part (at most ``_EXACT_BUDGET``);
        it sets how many of the clipped samples it covers.

    Returns
    -------
    dual : float
        The best dual objective value found (``0`` for the zero candidate).
    """
    n = A.shape[0]
    if A.shape[1] == 1:
        s = y * A[:, 0]
    else:
        s = A[np.arange(n), np.asarray(y, dtype=np.int64)]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    T = lp_norm(np.sqrt(np.maximum(N, 0.0)), q) ** 2
    S = float(s.sum())
    pos = s > 0
    if S <= 0 or T <= 0 or not pos.any():
        return 0.0
    kappa = lam * float(w.sum()) / q
    c = min(q * S / T, float(np.min(w[pos] / (kappa * s[pos]))))
    best = c * lam / q * S - c * c * lam / (2.0 * q * q) * T
    if G is None:
        return best
    a = np.zeros(n)
    a[pos] = kappa * s[pos] / w[pos]
    # only samples clipped at the largest scaling (a superset of every other
    # scaling's) have rho > 0; all scalings at once, restricted to them
    clip = np.flatnonzero(a * max(_CLIP_SCALES) > 1.0)
    cs = np.asarray(_CLIP_SCALES)[:, None]
    rho = cs - np.minimum(cs, 1.0 / a[clip])  # (scalings, clipped)
    Ac = A[clip]
    Q = cs**2 * N - 2.0 * cs * (rho @ np.einsum("im,mji->ij", Ac, G[:, :, clip]))
    V = rho[:, :, None] * Ac  # (scalings, clipped, M)
    # ||sum_i rho_i A_im phi_j(x_i)||: exact among the clipped samples whose
    # rows are at hand (gram_block), by Cauchy-Schwarz over the others, the
    # two added by the triangle inequality
    rest = np.ones(clip.size, dtype=bool)
    e_have = 0.0
    if gram_block is not None and clip.size:
        # the exact term costs (scalings x F x M) h^2: fewer rows for many classes
        budget = _EXACT_BUDGET if exact_budget is None else min(exact_budget,
                                                                 _EXACT_BUDGET)
        cap = int(np.sqrt(budget / (cs.size * N.size * A.shape[1])))
        have, Kc = gram_block(clip[:cap])
        hv = np.searchsorted(clip, have)
        rest[hv] = False
        Vh = V[:, hv]
        KV = np.matmul(Kc[None], Vh[:, None])  # (scalings, F, have, M)
        e_have = np.sqrt(np.maximum(np.einsum("shm,sjhm->sj", Vh, KV), 0.0))
    sqd = np.sqrt(np.maximum(kdiag[:, clip[rest]], 0.0))
    e_rest = np.sqrt(np.sum(np.einsum("jk,skm->sjm", sqd, np.abs(V[:, rest])) ** 2,
                            axis=2))
    Q += (e_have + e_rest) ** 2
    Tc = np.sum(np.maximum(Q, 0.0) ** (q / 2.0), axis=1) ** (2.0 / q)
    D = lam / q * (cs[:, 0] * S - rho @ s[clip] - Tc / (2.0 * q))
    return max(best, float(D.max()))


def smooth_dual_bound(A, N, y, lam, q, loss, sample_weight=None):
    r"""Lower bound on the optimum of (5) for the squared hinge and logistic losses.

    :func:`dual_bound`'s value :math:`\frac1W\sum_i w_i\alpha_i - \dots` is
    the hinge's: its conjugate gives :math:`-\ell^*(-\alpha) = \alpha` on
    :math:`[0, 1]`.  Another loss has another conjugate, and the hinge's value
    is larger than the squared hinge's :math:`\alpha - \alpha^2/2` and the
    logistic's entropy :math:`-\alpha\log\alpha - (1-\alpha)\log(1-\alpha)`:
    with those losses the hinge's bound was no lower bound, and fits were
    certified at up to twice the optimum.  The candidate is the same,
    :math:`\alpha_i = c\,a_i` with :math:`a_i = \lambda W s_i/(q w_i)`, and

    .. math:: D(c) = \frac1W\sum_i w_i\,g(c\,a_i)
              - c^2\frac{\lambda}{2q^2}\|\bar\theta\|_{2,q}^2

    (:math:`g = -\ell^*(-\cdot)`) is concave in :math:`c`: maximised in
    closed form (squared hinge) or by golden-section search over the
    :math:`c` that keep :math:`\alpha_i \le 1` (logistic).

    Parameters
    ----------
    A : ndarray of shape (n, M)
        Coefficients of :math:`\bar\theta` (lazy scale folded in).
    N : ndarray of shape (F,)
        :math:`\|\theta^j\|^2`.
    y : ndarray of shape (n,)
        ``-1/+1`` labels.
    lam, q : float
        :math:`\lambda` and the conjugate exponent :math:`q = p/(p-1)`.
    loss : BaseLoss
        The problem's loss.
    sample_weight : ndarray of shape (n,), optional

    Returns
    -------
    dual : float
        The dual value found; ``0`` (the zero candidate's, valid for any
        non-negative loss) for a loss other than these two, several outputs,
        or a candidate outside the conjugate's domain.
    """
    from ..losses.binary import Logistic, SquaredHinge

    kind = type(loss)
    if A.shape[1] != 1 or kind not in (SquaredHinge, Logistic):
        return 0.0
    n = A.shape[0]
    s = np.asarray(y, dtype=float) * A[:, 0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    T = lp_norm(np.sqrt(np.maximum(N, 0.0)), q) ** 2
    pos = s > 0
    # alpha_i >= 0, and a row of zero weight cannot carry a coefficient
    if T <= 0 or not pos.any() or np.any(s < 0) or np.any(pos & (w <= 0)):
        return 0.0
    W = float(w.sum())
    a = np.zeros(n)
    a[pos] = lam * W / q * s[pos] / w[pos]
    quad = lam * T / (2.0 * q * q)
    if kind is SquaredHinge:
        lin, sq = float(w @ a) / W, float(w @ (a * a)) / (2.0 * W)
        c = lin / (2.0 * (quad + sq))
        return max(0.0, c * lin - c * c * (quad + sq))

    def value(c):
        al = np.clip(c * a[pos], 0.0, 1.0)
        ent = -(al * np.log(np.where(al > 0, al, 1.0))
                + (1.0 - al) * np.log(np.where(al < 1, 1.0 - al, 1.0)))
        return float(w[pos] @ ent) / W - c * c * quad

    lo, hi = 0.0, 1.0 / float(a[pos].max())
    g = (np.sqrt(5.0) - 1.0) / 2.0
    for _ in range(60):
        c1, c2 = hi - g * (hi - lo), lo + g * (hi - lo)
        if value(c1) < value(c2):
            lo = c1
        else:
            hi = c2
    return max(0.0, value(0.5 * (lo + hi)))


#: Multiply-adds allowed to the exact part of the certificate's last term.
_EXACT_BUDGET = 4e7

#: Scalings :math:`c` of the clipped dual candidates (:func:`dual_bound`).
_CLIP_SCALES = (1.2, 1.1, 1.05, 1.0, 0.9)

#: The recent updates' candidate is used when its squared norms keep at least
#: this share of their terms' magnitude (:func:`_suffix_point`): below it the
#: difference ``A - rho A0`` is rounding and its ``N`` no norm.
_SUFFIX_KEPT = 1e-10


class _BestIterate:
    r"""The best stage-2 iterate and OBSCURE's stopping rule.

    The rule is the scale-free duality-gap certificate on the best objective
    :math:`P` seen and the best dual bound :math:`D` (:func:`dual_bound`):
    stop when :math:`P - D \le \mathrm{tol}\,P`, which proves
    :math:`P \le P^*/(1 - \mathrm{tol})`.  (A rule on the objective's
    decrease alone stopped on the plateaus of the stochastic steps, at 1.2-2.5
    times the optimum.)
    """

    def __init__(self):
        self.objective, self.dual, self.trace = np.inf, -np.inf, []
        self.state = None

    @property
    def gap(self):
        """Relative duality gap of the best iterate."""
        return (self.objective - self.dual) / max(abs(self.objective), 1e-300)

    def offer(self, obj, dual, A, G, N, copy=True):
        """Record an objective and a dual bound; keep the iterate if best (``copy=False``: as is)."""
        self.dual = max(self.dual, dual)
        if obj < self.objective:
            self.objective = obj
            self.state = (A.copy(), G.copy(), N.copy()) if copy else (A, G, N)
        self.trace.append(self.objective)

    def stop(self, tol):
        """The stop reason (``""``: go on) for relative tolerance ``tol``."""
        if tol is None:
            return ""
        if self.gap <= tol:
            return "duality gap"
        return ""

    def restore(self, A, G, N):
        """Write the best iterate into the solver's arrays."""
        if self.state is not None:
            A[:], G[:], N[:] = self.state


class _DualCadence:
    """When to compute the duality-gap certificate: within a share of the work.

    The certificate (:func:`dual_bound` with clipped candidates) costs about
    a few epochs' margins plus a kernel block among the clipped samples; it
    is computed at an epoch's end once the stochastic steps since the last
    one have done ``1 / share - 1`` times its cost (counted in multiply-adds,
    so the stopping epoch does not depend on the machine's load).
    """

    share = 0.25

    def __init__(self):
        self.work, self.cost = 0.0, 0.0

    def add(self, ops):
        """Count an epoch's work."""
        self.work += ops

    def due(self):
        """Whether the certificate is due."""
        return self.work * self.share >= (1.0 - self.share) * self.cost

    def done(self, cost):
        """Record a computed certificate and its cost."""
        self.work, self.cost = 0.0, float(cost)


class _RecentUpdates:
    r"""The dual candidate of the recent updates only (a suffix of the iterates).

    The coefficients ``A`` of the iterate weigh each sample by the steps of
    *all* its updates since the start, decayed by the shrinkages since: the
    dual candidate :func:`dual_bound` reads from them is, per sample, about
    the share of all epochs in which it incurred a loss, early epochs
    included, so it converges like a plain average, slowly.  The updates made
    since a snapshot :math:`A_0` taken ``k`` epochs ago,
    :math:`(A - \rho A_0) / (1 - \rho)` with :math:`\rho` the product of the
    shrinkages and projections since (the scores ``G`` alike, the map being
    linear), are the same candidate over the recent epochs only, as suffix
    averaging does for stochastic gradient steps.  A snapshot is taken
    after 1, 2, 4, 8, ... epochs and the one before it is kept: the
    candidate reads the newer snapshot once its suffix is at least half as
    long as the older one's, the older one until then, so the suffix is
    always the last third to two thirds of the epochs (the newer one alone
    gives a suffix of a single epoch right after each snapshot, whose noisy
    candidate stalls the bound for as many epochs again: 4% more epochs
    over 18 fits of six sets, up to 16% on one).  Any coefficients give a
    valid bound, so the best of both is kept; once the recent updates have
    given the higher one (``ahead``), the solver stops evaluating the other,
    halving the certificate's cost.
    """

    def __init__(self):
        # snapshots: [(A0, G0), rho since it, epoch taken], older first
        self.snapshots, self.epochs, self.next_reset = [], 0, 1
        self.ahead = False
        self._buf = None  # (A, G, N) of the candidate

    def _snapshot(self):
        """The snapshot the candidate reads: the newer once its suffix is half the older's."""
        if not self.snapshots:
            return None
        new = self.snapshots[-1]
        if len(self.snapshots) == 1 or 2 * (self.epochs - new[2]) >= (
                self.epochs - self.snapshots[0][2]):
            return new
        return self.snapshots[0]

    def decay(self, factor):
        """Fold an epoch's product of shrinkages and projections into :math:`\\rho`."""
        for snap in self.snapshots:
            snap[1] *= factor

    def candidate(self, A, G):
        """The recent updates' ``(A, G, N)``, or ``None`` before the first snapshot.

        Written into buffers kept across calls (valid until the next call).
        """
        snap = self._snapshot()
        if snap is None or not 0.0 <= snap[1] < 1.0:
            return None
        (A0, G0), rho = snap[0], snap[1]
        if self._buf is None or self._buf[1].shape != G.shape:
            self._buf = (np.empty_like(A), np.empty_like(G), np.empty(G.shape[1]))
        kept = _suffix_point(A, A0, G, G0, rho, *self._buf)
        # the difference cancelled (no update since the snapshot: A = rho A0 up
        # to rounding): its N is rounding noise, not ||K dA||, and gave a "dual
        # bound" above the optimum (audit 116)
        return self._buf if kept >= _SUFFIX_KEPT else None

    def end_epoch(self, A, G):
        """Count an epoch; take a snapshot after 1, 2, 4, ... epochs (keep the one before)."""
        self.epochs += 1
        if self.epochs >= self.next_reset:
            self.snapshots = self.snapshots[-1:] + [[(A.copy(), G.copy()), 1.0,
                                                     self.epochs]]
            self.next_reset *= 2


@njit_cached
def _suffix_point(A, A0, G, G0, rho, dA, dG, N):  # pragma: no cover
    r"""``dA = (A - rho A0) / (1 - rho)``, ``dG`` alike, ``N[j] = sum dA dG_j``, in one pass.

    (NumPy made five passes over the scores and a slow contraction for
    ``N``: a tenth of a 10-class fit's time.)

    Returns
    -------
    kept : float
        The smallest share of its terms' magnitude that an ``N[j]`` keeps,
        :math:`|N_j| / \sum_{i,c} |dA_{ic}| (|G_{cji}| + \rho|G0_{cji}|)
        / (1 - \rho)` over the kernels with a nonzero term (1 if none): the scores ``G`` are
        sums of many steps, accurate to their rounding only, so a small share
        means ``N`` is that rounding rather than the candidate's norm.
    """
    f = 1.0 / (1.0 - rho)
    n, M = A.shape
    F = N.shape[0]
    for i in range(n):
        for c in range(M):
            dA[i, c] = f * (A[i, c] - rho * A0[i, c])
    mag = np.zeros(F)
    for j in range(F):
        N[j] = 0.0
    for c in range(M):
        for j in range(F):
            acc, size = 0.0, 0.0
            for i in range(n):
                g = f * (G[c, j, i] - rho * G0[c, j, i])
                dG[c, j, i] = g
                acc += dA[i, c] * g
                size += abs(dA[i, c]) * f * (abs(G[c, j, i]) + rho * abs(G0[c, j, i]))
            N[j] += acc
            mag[j] += size
    kept = 1.0
    for j in range(F):
        if mag[j] > 0.0:
            kept = min(kept, abs(N[j]) / mag[j])
    return kept
