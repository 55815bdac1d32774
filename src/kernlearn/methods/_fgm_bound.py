r"""FGM's lower bound of Theorem 2 at the best scaling of the dual point.

The Fenchel dual value of FGM's convex problem at a dual point :math:`U`
(the recovered :math:`C\ell'(m)` at re-centred margins) is

.. math:: D(U) = -C\sum_i \ell^*(u_i / C) - \tfrac12 \sum_{j\in\mathrm{top}B} c_j(U),

a lower bound of the optimum for every feasible :math:`U`.  Every multiple
:math:`\theta U`, :math:`\theta \ge 0`, is feasible too (the intercepts'
constraint :math:`\sum_i u_{ik} = 0` is linear; the loss's dual domain is a
half-line or, for the logistic loss, :math:`\theta a_i \le 1`), and the top-``B``
set of the scores does not depend on :math:`\theta` while each score scales
by :math:`\theta^2`.  So :math:`\max_\theta D(\theta U)` is a lower bound as
valid as :math:`D(U)` and never below it: the "dual scaling" of the gap safe
rules of the Lasso (Ndiaye, Fercoq, Gramfort, Salmon, 2017).  It matters far
from the optimum, where the recovered point is too long (a large top-``B``
sum, :math:`\theta^* < 1`) and :math:`D(U)` is hugely negative.

For the square loss and the squared hinge (labels :math:`\pm 1`),
:math:`\ell^*(\theta g) = \theta g y + \theta^2 g^2 / 2` at :math:`g = \ell'(m)`,
so :math:`D(\theta U)` is a concave quadratic and :math:`\theta^*` closed-form;
the logistic loss is searched on :math:`[0, 1/\max_i a_i]`.  Other losses keep
:math:`\theta = 1`.
"""

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import xlogy

from ..losses._base import WeightedLoss
from ..losses.binary import Logistic, SquaredHinge
from ..losses.regression import Square

__all__ = ["scaled_dual"]


def scaled_dual(loss, M, Y, C, pen):
    r"""Best dual value :math:`\max_{\theta \ge 0} D(\theta U)` along the dual point's ray.

    Parameters
    ----------
    loss : BaseLoss
        FGM's loss, possibly a :class:`~kernlearn.losses._base.WeightedLoss`.
    M : ndarray of shape (n_samples, K)
        Re-centred margins (the dual point is :math:`C\ell'(M)`).
    Y : ndarray of shape (n_samples, K)
        Targets.
    C : float
        Loss weight.
    pen : float
        The penalty's conjugate at :math:`\theta = 1` (half the top-``B``
        sum of the scores); it scales by :math:`\theta^2`.

    Returns
    -------
    float
        The best value along the ray, ``-inf`` for a loss without a
        conjugate here (the caller keeps :math:`D(U)`).
    """
    base, w = (loss.loss, loss._w(M)) if isinstance(loss, WeightedLoss) else (loss, 1.0)
    w = np.broadcast_to(w, np.shape(M))
    keep = w > 0  # a removed row's margin may be anything (even inf): out of every sum
    g = np.where(keep, base.grad_margin(np.where(keep, M, 0.0), Y), 0.0)
    if type(base) in (Square, SquaredHinge) and (type(base) is Square or np.all(
            np.abs(Y[keep]) == 1)):
        # -C sum w l*(theta g) - theta^2 pen = -theta a1 - theta^2 (a2 / 2 + pen)
        a1 = C * float(np.sum(w * g * Y))
        a2 = C * float(np.sum(w * g * g))
        den = a2 + 2.0 * pen
        if not (np.isfinite(a1) and np.isfinite(den)) or den <= 0:
            return -np.inf
        theta = max(-a1 / den, 0.0)
        return -theta * a1 - 0.5 * theta * theta * den
    if type(base) is Logistic and np.all(np.abs(Y[keep]) == 1):
        a = -g * Y  # in [0, 1): sigma(-y m)
        top = float(a.max(initial=0.0))
        if top <= 0:
            return -np.inf

        def negative_dual(theta):
            t = theta * a
            # l*(-y t) = t log t + (1 - t) log(1 - t), zero at t = 0 and t = 1
            return C * float(np.sum(w * (xlogy(t, t) + xlogy(1.0 - t, 1.0 - t)))) \
                + theta * theta * pen

        res = minimize_scalar(negative_dual, bounds=(0.0, 1.0 / top), method="bounded",
                              options={"xatol": 1e-10 / top})
        return -min(float(res.fun), negative_dual(1.0))
    return -np.inf
