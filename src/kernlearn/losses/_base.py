"""The loss contract: datafits that work on margins, never on features.

A loss sees the margins ``m = f(x)`` of the current model and the targets
``y``.  Pricing multiplies ``grad_margin`` by candidate columns, so a new
loss is usable by every family without knowing about features.

Required methods
----------------
value(m, y) -> ndarray of per-sample losses
grad_margin(m, y) -> ndarray, derivative of each loss with respect to its margin

Optional methods
----------------
dual_from_margin(m, y, C) -> ndarray
    The non-negative dual variables ``alpha`` of the FGM dual (paper 002,
    Theorem 4), recovered from the training errors.
prox(z, y, step) -> ndarray
    ``argmin_m step * loss(m, y) + 0.5 * (m - z)**2`` elementwise (ADMM masters).
hess_margin(m, y) -> ndarray
    Second derivative of each loss in its margin (a generalised one where the
    loss is only once differentiable, as the squared hinge); the proximal
    Newton master builds its Hessian from it.

Attributes
----------
lipschitz : float
    Bound on the second derivative of the loss in the margin (smoothness).
"""

import numpy as np

from .._component import ComponentMixin


class BaseLoss(ComponentMixin):
    """Base class of all losses; see the module docstring for the contract."""

    lipschitz = np.inf
    is_classification = True

    def value(self, m, y):  # pragma: no cover - contract
        """Per-sample loss values.

        Parameters
        ----------
        m : ndarray of shape (n_samples,)
            Margins.
        y : ndarray of shape (n_samples,)
            Targets (``-1``/``+1`` for binary losses).

        Returns
        -------
        values : ndarray of shape (n_samples,)
        """
        raise NotImplementedError

    def grad_margin(self, m, y):  # pragma: no cover - contract
        """Derivative of each loss with respect to its margin.

        Parameters
        ----------
        m : ndarray of shape (n_samples,)
            Margins.
        y : ndarray of shape (n_samples,)
            Targets.

        Returns
        -------
        grad : ndarray of shape (n_samples,)
        """
        raise NotImplementedError

    def conjugate_at_grad(self, m, y):
        """Fenchel conjugate ``loss*(loss'(m))`` evaluated at the margins.

        By the Fenchel-Young equality ``loss*(loss'(m)) = m loss'(m) - loss(m)``,
        which is what duality gaps need when the dual point is recovered from
        the margins.

        Parameters
        ----------
        m : ndarray of shape (n_samples,)
            Margins.
        y : ndarray of shape (n_samples,)
            Targets.

        Returns
        -------
        conj : ndarray of shape (n_samples,)
        """
        return m * self.grad_margin(m, y) - self.value(m, y)


class WeightedLoss(BaseLoss):
    r"""A loss with one non-negative factor per sample: :math:`w_i\,\ell(m_i, y_i)`.

    Sample weights (and class weights, turned into sample weights) enter every
    method through this wrapper, so solvers, pricing and duality gaps need no
    change: the gradient, generalised Hessian, dual variables and prox of the
    weighted loss are those of :math:`w_i \ell`.  Integer weights are exactly
    repeated rows; a zero weight removes the row from the objective.

    The Fenchel conjugate of :math:`w\ell` is :math:`w\,\ell^*(s/w)`, and at
    :math:`s = w\ell'(m)` it equals :math:`w\,\ell^*(\ell'(m))`, so the
    Fenchel-Young form of :meth:`conjugate_at_grad` stays exact and FGM's dual
    bound (paper 002, Theorem 2) remains a valid lower bound with weights.

    Parameters
    ----------
    loss : BaseLoss
        The unweighted loss.
    sample_weight : ndarray of shape (n_samples,) or float
        Non-negative weights, one per row of the margins, or one factor for
        every row (the loss weight ``C`` of the restricted masters).
    """

    def __init__(self, loss, sample_weight):
        self.loss = loss
        self.sample_weight = np.asarray(sample_weight, dtype=float)
        self.is_classification = loss.is_classification
        # the curvature bound of w * loss is max(w) times that of the loss
        wmax = float(self.sample_weight.max(initial=0.0))
        self.lipschitz = loss.lipschitz * wmax if wmax > 0 else loss.lipschitz
        if hasattr(loss, "n_outputs"):
            self.n_outputs = loss.n_outputs
        sw = self.sample_weight
        self._zero = np.flatnonzero(sw == 0) if sw.ndim and not sw.all() else None

    def _times(self, f, *args):
        """``w * f(*args)``, exactly 0 on the rows of zero weight.

        A removed row's loss may overflow (its margin is that of a row far
        out: a zero-weight row at 1e200), and ``0 * inf`` is NaN, which
        poisoned the objective of the rows kept; repaired only then, so that
        finite values keep their bits.  NumPy's overflow and invalid-value
        warnings are those of removed rows there, not given (the fit without
        the rows gives none); those of a row kept are given.
        """
        zero = getattr(self, "_zero", None)  # (None: a model pickled before it)
        if zero is None:
            v = f(*args)
            return self._w(v) * v
        with np.errstate(over="ignore", invalid="ignore"):
            v = f(*args)
            out = self._w(v) * v
        if not np.isfinite(out).all():
            out[zero] = 0.0
            if not np.isfinite(out).all():
                # a row kept overflowed too: NumPy's warnings are the fit's
                # without the removed rows, given by those rows alone (the
                # margins and targets are per row; a factor after them is not)
                keep = np.flatnonzero(self.sample_weight > 0)
                self.rows(keep)._times(f, *(np.asarray(a)[keep] for a in args[:2]),
                                       *args[2:])
        return out

    def _w(self, like):
        """Weights shaped to broadcast against per-sample arrays ``like``."""
        like = np.asarray(like)
        return self.sample_weight.reshape((-1,) + (1,) * max(like.ndim - 1, 0))

    def rows(self, index):
        """The same loss restricted to some rows (tasks, batches).

        Parameters
        ----------
        index : array-like of int or slice
            Rows to keep.

        Returns
        -------
        loss : WeightedLoss
        """
        if self.sample_weight.ndim == 0:  # one factor for every row
            return WeightedLoss(self.loss, self.sample_weight)
        return WeightedLoss(self.loss, self.sample_weight[index])

    def value(self, m, y):
        return self._times(self.loss.value, m, y)

    def grad_margin(self, m, y):
        return self._times(self.loss.grad_margin, m, y)

    def conjugate_at_grad(self, m, y):
        return self._times(self.loss.conjugate_at_grad, m, y)

    def __getattr__(self, name):
        # optional methods exist on the wrapper exactly when the loss has them,
        # so solvers' capability checks (check_compatible) still see the truth
        if name in ("loss", "sample_weight", "_zero"):
            raise AttributeError(name)
        if name == "hess_margin" and callable(getattr(self.loss, name, None)):
            def hess_margin(m, y):
                return self._times(self.loss.hess_margin, m, y)
            return hess_margin
        if name == "dual_from_margin" and callable(getattr(self.loss, name, None)):
            def dual_from_margin(m, y, C):
                return self._times(self.loss.dual_from_margin, m, y, C)
            return dual_from_margin
        if name == "prox" and callable(getattr(self.loss, name, None)):
            def prox(z, y, step):
                # argmin step * w * loss + (m - z)^2 / 2: the prox at step * w
                return self.loss.prox(z, y, np.asarray(step) * self._w(z))
            return prox
        return getattr(self.loss, name)


def weighted(loss, sample_weight=None, C=1.0):
    r"""``loss`` weighted per sample and by ``C``: :math:`C\,w_i\,\ell(m_i, y_i)`.

    The restricted masters minimise ``sum(loss) + penalty``: the loss weight
    ``C`` and the sample weights are folded into the loss here, once, and no
    solver multiplies them in.

    Parameters
    ----------
    loss : BaseLoss
        The loss.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Non-negative weights (``None``: unweighted).
    C : float, default=1.0
        Weight of the whole loss.

    Returns
    -------
    loss : BaseLoss
        ``loss`` itself when there is nothing to weight.
    """
    if sample_weight is not None:
        loss = WeightedLoss(loss, sample_weight)
    if C != 1.0:
        loss = WeightedLoss(loss, float(C))
    return loss
