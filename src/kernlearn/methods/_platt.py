"""Platt's sigmoid, the calibration of decision values into probabilities.

The classifiers' ``probability=True`` fits it to cross-validated decision
values (:class:`~kernlearn.estimators._platt.ProbabilityMixin`); here is the
fit alone, which reads arrays only.
"""

import numpy as np

__all__ = ["platt_sigmoid"]


def platt_sigmoid(f, t, sample_weight=None):
    r"""Platt's sigmoid :math:`P(y=1|f) = 1/(1 + \exp(Af + B))` fitted to scores.

    Maximum (weighted) likelihood with Platt's regularised targets
    :math:`t_+ = (N_+ + 1)/(N_+ + 2)`, :math:`t_- = 1/(N_- + 2)`, which keep
    the fit finite on separable scores.  With weights, :math:`N_\pm` are the
    classes' weights at the weights' scale (as if they had mean 1 over the
    rows of positive weight): a common factor of the weights changes nothing,
    as for scikit-learn's sigmoid calibration (which counts rows), and unit
    weights count rows.

    Parameters
    ----------
    f : ndarray of shape (n,)
        Decision values (cross-validated, so not over-confident).
    t : ndarray of bool of shape (n,)
        Whether each sample belongs to the positive class.
    sample_weight : ndarray of shape (n,), optional
        Weights of the samples in the likelihood.

    Returns
    -------
    A, B : float

    References
    ----------
    J. Platt (1999), Probabilistic outputs for support vector machines.
    H.-T. Lin, C.-J. Lin, R. Weng (2007), A note on Platt's probabilistic
    outputs for support vector machines, Mach. Learn. 68.
    """
    from scipy.optimize import minimize
    from scipy.special import expit

    f = np.asarray(f, dtype=float)
    w = np.ones_like(f) if sample_weight is None else np.asarray(sample_weight, float)
    # the pseudo-counts' weight is one row's: at the weights' own sum, weights
    # of sum 1 (w / w.sum(), common for survey or importance weights) made the
    # targets 0.6 and 0.4, and every probability fell within about 0.4-0.6
    w = w * (np.count_nonzero(w) / w.sum())
    n_pos, n_neg = w[t].sum(), w[~t].sum()
    target = np.where(t, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    scale = max(float(np.std(f)), 1e-12)  # conditions the 2-parameter problem

    def nll(ab):
        z = -(ab[0] * f / scale + ab[1])  # log-odds of the positive class
        p = expit(z)
        val = np.sum(w * (np.logaddexp(0.0, z) - target * z))
        g = w * (p - target)
        return val, np.array([-np.sum(g * f) / scale, -np.sum(g)])

    prior = np.log((n_neg + 1.0) / (n_pos + 1.0))
    res = minimize(nll, np.array([0.0, prior]), jac=True, method="L-BFGS-B")
    return float(res.x[0] / scale), float(res.x[1])
