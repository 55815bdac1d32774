"""FGM's cutting-plane feature generation (paper 002, Algorithm 1) on one task.

The estimator-independent core of :class:`~kernlearn.FGMClassifier` and
:class:`~kernlearn.FGMRegressor`.  Each outer iteration

1. recovers the dual variables from the margins (Theorem 4),
2. runs the exact worst-case analysis: the ``B`` features (or groups) with the
   largest scores :math:`c_j = \\lambda_j^2 (f_j' \\alpha\\odot y)^2` form a
   new constraint :math:`d_T` (Algorithm 2),
3. re-solves the primal of the restricted MKL problem

   .. math:: \\min_{w, b}\\ \\tfrac12\\Big(\\sum_{t=1}^T \\|w_t\\|\\Big)^2
             + C\\sum_i \\ell\\Big(\\sum_t w_t' x_{i, d_t} + b,\\ y_i\\Big)

   by APG warm-started from the previous solution (Algorithm 4).

Both bounds of Theorem 2 are tracked: the restricted objective is an upper
bound of the optimum of the full problem, and the Fenchel dual value at the
recovered dual point,
:math:`D(u) = -C\\sum_i \\ell^*(\\ell'(m_i)) - \\tfrac12\\sum_{j\\in\\mathrm{top}B}c_j`,
is a lower bound.  The loop stops when the worst-case constraint is already
in the active set (Theorem 3), on relative objective change, or after
``max_iter`` constraints.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize_scalar

from .colgen import ColumnGeneration
from .penalties import SquaredGroupL1
from .solvers import APG

__all__ = ["FGMResult", "fit_fgm"]


@dataclass
class FGMResult:
    """Solution of one FGM problem.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        Linear coefficients on the original (unscaled) features (zeros when
        the pool's features are virtual, e.g. polynomial).
    intercept : float
    selected : ndarray of int
        Features (virtual ids for expansions) with a non-zero coefficient, in
        order of inclusion.
    coef_selected : ndarray
        Coefficients of ``selected`` on the unscaled features.
    d : ndarray
        Feature scaling :math:`d_j = \\sum_t \\mu_t [j \\in d_t]` of ``selected``
        with :math:`\\mu_t = \\|w_t\\| / \\sum_s \\|w_s\\|`.
    groups : list of ndarray
        Candidate ids added at each outer iteration (the constraints ``d_t``).
    history : dict of ndarray
        Per outer iteration: objective (upper bound), lower_bound, gap,
        violation, n_active, apg_iter, time.
    n_iter : int
    converged : bool
    stop_reason : str
    """

    coef: np.ndarray
    intercept: float
    selected: np.ndarray
    coef_selected: np.ndarray
    d: np.ndarray
    groups: list
    history: dict
    n_iter: int
    converged: bool
    stop_reason: str


def _intercept_only(loss, y, C):
    """Optimal intercept of the empty model (so the first dual point is feasible)."""
    res = minimize_scalar(lambda b: C * loss.value(np.full(y.shape, b), y).sum())
    return float(res.x)


def fit_fgm(
    X,
    y,
    pool,
    loss,
    B=10,
    C=1.0,
    max_iter=15,
    tol=1e-2,
    apg_tol=1e-4,
    apg_max_iter=1000,
    fit_intercept=True,
    verbose=0,
    callback=None,
    name="FGM",
    warm_new_group=True,
):
    """Run FGM on one binary (or regression) task.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Training data; CSC is best for sparse input.
    y : ndarray of shape (n_samples,)
        Targets (``-1/+1`` for classification losses).
    pool : FeaturePool
        Fitted pool of candidate features or groups.
    loss : BaseLoss
        Squared hinge, logistic or square loss.
    B : int, default=10
        Features (or groups) added per outer iteration.
    C : float, default=1.0
        Loss weight.
    max_iter : int, default=15
        Outer iterations ``T``.
    tol : float or None, default=1e-2
        Relative objective change stopping the outer loop.
    apg_tol : float, default=1e-4
        APG tolerance.
    apg_max_iter : int, default=1000
        APG iteration cap per master solve.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept.
    verbose : int, default=0
        Progress lines per outer iteration.
    callback : callable, optional
        Passed to :class:`~kernlearn.colgen.ColumnGeneration`.
    name : str
        Progress prefix.
    warm_new_group : bool, default=True
        Start each new group at the best point of its steepest-descent ray
        instead of zero (the paper's choice); APG then needs fewer iterations.

    Returns
    -------
    result : FGMResult

    References
    ----------
    Tan, Tsang, Wang (2014), "Towards ultrahigh dimensional feature selection
    for big data", JMLR 15, Algorithms 1, 2 and 4; Theorems 2-4.
    """
    n, n_features = X.shape
    y = np.asarray(y, dtype=float)
    penalty = SquaredGroupL1(1.0)
    apg = APG(tol=apg_tol, max_iter=apg_max_iter)
    b0 = _intercept_only(loss, y, C) if fit_intercept else 0.0
    st = {
        "w": np.zeros(0), "b": b0, "m": np.full(n, b0), "tau": 0.1 * n * C,
        "blocks": [], "indptr": [0], "feats": [], "weights": [], "groups": [],
        "seen": set(), "lower": -np.inf,
    }

    def price():
        grad = C * loss.grad_margin(st["m"], y)
        cand = pool.price(grad, B, X=X)
        # Fenchel dual at the recovered point: a lower bound (Theorem 2).
        dual = -C * float(loss.conjugate_at_grad(st["m"], y).sum())
        dual -= penalty.conjugate(cand.extra["sum_sq"])
        st["lower"] = max(st["lower"], dual)
        key = frozenset(np.asarray(cand.params).tolist())
        if cand.scores.max() <= 0:
            return None
        if key in st["seen"]:
            return "active_set"  # Theorem 3: the worst-case constraint is already active
        st["seen"].add(key)
        return cand

    def master(cand):
        feats, weights = pool.column_indices(cand)
        st["blocks"].append(pool.columns(cand, X))
        st["feats"].append(feats)
        st["weights"].append(weights)
        st["groups"].append(np.asarray(cand.params))
        st["indptr"].append(st["indptr"][-1] + len(feats))
        A = (sp.hstack(st["blocks"], format="csc") if sp.issparse(st["blocks"][0])
             else np.asfortranarray(np.hstack(st["blocks"])))
        w0 = np.concatenate([st["w"], _enter_new_group(
            st["blocks"][-1], y, loss, C, st["m"], st["w"], np.asarray(st["indptr"][:-2]),
        ) if warm_new_group else np.zeros(len(feats))])
        res = apg.solve(
            A, y, loss, penalty, C=C, indptr=np.asarray(st["indptr"]), coef0=w0,
            intercept0=st["b"], fit_intercept=fit_intercept, lipschitz0=st["tau"],
        )
        st.update(w=res.coef, b=res.intercept, m=res.state["margin"], tau=res.state["tau"])
        obj = res.state["objective"]
        return obj, {"lower_bound": st["lower"], "gap": obj - st["lower"],
                     "apg_iter": res.n_iter}

    driver = ColumnGeneration(max_iter, tol=tol, verbose=verbose, callback=callback,
                              name=name, warn=False)
    out = driver.run(price, master, n_active=lambda: len(set(np.concatenate(st["feats"]))))
    history = out.history.as_dict()
    history["final_lower_bound"] = np.array([st["lower"]])

    selected, coef_sel, d = _collect(st)
    coef = np.zeros(n_features)
    if getattr(pool, "n_virtual_", n_features) == n_features:
        coef[selected] = coef_sel
    return FGMResult(coef, float(st["b"]), selected, coef_sel, d, st["groups"], history,
                     out.n_iter, out.converged, out.stop_reason)


def _enter_new_group(block, y, loss, C, m, w_old, indptr_old):
    """Start the new group on its steepest-descent ray at the best step.

    Paper 002 starts the new group at zero; APG then spends many iterations
    growing it.  Minimising the objective exactly along
    :math:`w_T = s\\,X_T'u` (one scalar search on cached margins) gives a
    start that is never worse than zero.
    """
    u = -C * loss.grad_margin(m, y)
    g = np.asarray(block.T @ u).ravel()
    gn = np.linalg.norm(g)
    if gn == 0:
        return np.zeros_like(g)
    dm = np.asarray(block @ g).ravel()
    old = (np.sqrt(np.add.reduceat(w_old**2, indptr_old)).sum()
           if len(w_old) else 0.0)
    F = lambda s: C * loss.value(m + s * dm, y).sum() + 0.5 * (old + s * gn) ** 2
    hi = 1.0
    while F(2 * hi) < F(hi) and hi < 1e12:
        hi *= 2
    res = minimize_scalar(F, bounds=(0.0, 2 * hi), method="bounded",
                          options={"xatol": 1e-8 * hi})
    s = res.x if res.fun < F(0.0) else 0.0
    return s * g


def _collect(st):
    """Map the super-group weights back to (possibly virtual) features.

    A feature in several constraints ``d_t`` gets the sum of its weights; its
    scaling is :math:`d_j = \\sum_t \\mu_t [j \\in d_t]` with
    :math:`\\mu_t = \\|w_t\\| / \\sum_s \\|w_s\\|` (the MKL weights of eq. 29).
    """
    if not st["feats"]:
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
    feats_all = np.concatenate(st["feats"]).astype(np.int64)
    weights_all = np.concatenate(st["weights"])
    order = np.array(list(dict.fromkeys(feats_all.tolist())), dtype=np.int64)
    pos = {j: i for i, j in enumerate(order.tolist())}
    idx = np.array([pos[j] for j in feats_all.tolist()])
    coef = np.zeros(len(order))
    np.add.at(coef, idx, weights_all * st["w"])
    indptr = np.asarray(st["indptr"])
    norms = np.sqrt(np.add.reduceat(st["w"] ** 2, indptr[:-1]))
    mu = norms / norms.sum() if norms.sum() > 0 else norms
    d = np.zeros(len(order))
    for t, f in enumerate(st["feats"]):
        d[np.unique([pos[j] for j in f.tolist()])] += mu[t]
    keep = coef != 0
    return order[keep], coef[keep], d[keep]
