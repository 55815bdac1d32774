r"""FGM, the Feature Generating Machine (paper 002): cutting planes over feature groups.

The estimator-independent algorithm behind :class:`~kernlearn.FGMClassifier`
and :class:`~kernlearn.FGMRegressor`.  Each outer iteration

1. recovers the dual variables from the margins (Theorem 4), after an exact
   re-centring of the intercepts so that :math:`\sum_i \alpha_i y_i = 0`
   holds and the dual point is feasible;
2. runs the exact worst-case analysis: the ``B`` features (or groups) with the
   largest scores :math:`c_j = \lambda_j^2 \|f_j' U\|^2` form a new constraint
   :math:`d_T` (Algorithm 2);
3. re-solves the primal of the restricted MKL problem

   .. math:: \min_{W, b}\ \tfrac12\Big(\sum_{t=1}^T \|W_t\|_F\Big)^2
             + C\sum_{k}\sum_i \ell\Big(\sum_t W_{t,k}' x_{i, d_t} + b_k,\ y_{ik}\Big)

   warm-started from the previous solution: by proximal Newton on the small
   active set (:class:`~kernlearn.solvers.ProxNewton`), or by the paper's APG
   (Algorithm 4) when the active block is too large for a Hessian.

With one output (``K = 1``) this is the paper's problem; with ``K > 1`` the
one-vs-rest outputs of a multiclass problem share the selected features (a
group's norm runs over the classes, so a feature's score is the norm of its
correlations with every class's dual vector).

Both bounds of Theorem 2 are tracked: the restricted objective is an upper
bound of the optimum of the full problem, and the Fenchel dual value at the
recovered dual point,
:math:`D(U) = -C\sum \ell^*(\ell'(m)) - \tfrac12\sum_{j\in\mathrm{top}B}c_j`,
is a lower bound.  The loop stops when the worst-case constraint is already
in the active set (Theorem 3), on relative objective change, or after
``max_iter`` constraints.  With a feature budget ``max_features=k`` it instead
adds the best new features until exactly ``k`` carry weight.
"""

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from sklearn.exceptions import ConvergenceWarning

from ..colgen import ColumnGeneration
from ..families import Candidates
from ..losses import weighted
from ..partitioned import peak_rss_mb
from ..penalties import SquaredGroupL1
from ..solvers import APG, APGState, Problem, ProxNewtonState, choose_master
from ..solvers.prox_newton import ProxNewton, group_norms_2d

__all__ = ["FGMResult", "fit_fgm"]

# A sparse active block with more than this fraction of non-zeros, and at most
# _DENSE_MAX_ENTRIES entries, is solved on dense storage (below it, sparse
# Hessians cost sum_i nnz_i^2 against n p^2 dense).
_DENSE_ABOVE = 0.3
_DENSE_MAX_ENTRIES = 50_000_000


@dataclass
class FGMResult:
    """Solution of one FGM problem.

    Attributes
    ----------
    coef : ndarray of shape (n_features,) or (n_features, K)
        Linear coefficients on the original (unscaled) features (zeros when
        the pool's features are virtual, e.g. polynomial).
    intercept : float or ndarray of shape (K,)
    selected : ndarray of int
        Features (virtual ids for expansions) with a non-zero coefficient, in
        order of inclusion.
    coef_selected : ndarray of shape (n_selected,) or (n_selected, K)
        Coefficients of ``selected`` on the unscaled features.
    d : ndarray
        Feature scaling :math:`d_j = \\sum_t \\mu_t [j \\in d_t]` of ``selected``
        with :math:`\\mu_t = \\|W_t\\| / \\sum_s \\|W_s\\|`.
    groups : list of ndarray
        Candidate ids of the constraints ``d_t`` still active at the end.
    history : dict of ndarray
        Per outer iteration: objective (upper bound), lower_bound, gap,
        violation, n_active, master_iter, time, peak_rss_mb (this process's
        resident-memory high-water mark so far).
    n_iter : int
    converged : bool
    stop_reason : str
    """

    coef: np.ndarray
    intercept: object
    selected: np.ndarray
    coef_selected: np.ndarray
    d: np.ndarray
    groups: list
    history: dict
    n_iter: int
    converged: bool
    stop_reason: str


def _intercept_only(loss, y, C):
    """Optimal intercepts of the empty model, one per output."""
    Y = y.reshape(len(y), -1)
    return np.array([
        minimize_scalar(lambda b, yk=yk: C * loss.value(np.full(yk.shape, b), yk).sum()).x
        for yk in Y.T
    ])


def _centre_intercepts(loss, M, Y, C, n_newton=30):
    r"""Shifts ``delta_k`` with :math:`\sum_i \ell'(m_{ik} + \delta_k) = 0`.

    With an intercept, the FGM dual requires :math:`\sum_i \alpha_i y_i = 0`;
    a master solved to a tolerance meets it only approximately, so the dual
    point (and with it the lower bound of Theorem 2) is taken at the exactly
    re-centred margins.  Safeguarded Newton on a monotone scalar equation.
    """
    delta = np.zeros(M.shape[1])
    for _ in range(n_newton):
        g = loss.grad_margin(M + delta, Y).sum(0)
        h = loss.hess_margin(M + delta, Y).sum(0)
        step = np.where(h > 0, -g / np.maximum(h, 1e-300), 0.0)
        delta += step
        if np.all(np.abs(step) <= 1e-12 * (1.0 + np.abs(delta))):
            break
    return delta


def fit_fgm(
    X,
    y,
    pool,
    loss,
    B=10,
    C=1.0,
    max_iter=15,
    tol=1e-2,
    max_features=None,
    solver="auto",
    master_tol=None,
    master_max_iter=None,
    fit_intercept=True,
    verbose=0,
    callback=None,
    name="FGM",
    warm_new_group=True,
):
    """Run FGM on one task, or on ``K`` outputs sharing their features.

    Parameters
    ----------
    X : ndarray, sparse matrix or RowPartitioned of shape (n_samples, n_features)
        Training data; CSC is best for sparse input.  A
        :class:`~kernlearn.partitioned.RowPartitioned` (row chunks out of core,
        a Dask array's partitions) is read only by ``pool``, through map-reduce.
    y : ndarray of shape (n_samples,) or (n_samples, K)
        Targets (``-1/+1`` for classification losses), one column per output.
    pool : FeaturePool
        Fitted pool of candidate features or groups.
    loss : BaseLoss
        Squared hinge, logistic or square loss.
    B : int, default=10
        Features (or groups) added per outer iteration.
    C : float, default=1.0
        Loss weight.
    max_iter : int, default=15
        Outer iterations ``T`` (with ``max_features``: extra iterations
        allowed beyond ``ceil(max_features / B)``).
    tol : float or None, default=1e-2
        Relative objective change stopping the outer loop (ignored with
        ``max_features``).
    max_features : int, optional
        Budget: add the best new features until exactly this many carry
        weight (or no candidate is left).
    solver : {"auto", "newton", "apg"}, default="auto"
        Master solver: proximal Newton on the active set, or the paper's APG.
    master_tol : float, optional
        Tolerance of the master (default: the solver's own).
    master_max_iter : int, optional
        Iteration cap of one master solve (default: the solver's own).
    fit_intercept : bool, default=True
        Fit unpenalised intercepts.
    verbose : int, default=0
        Progress lines per outer iteration.
    callback : callable, optional
        Passed to :class:`~kernlearn.colgen.ColumnGeneration`.
    name : str
        Progress prefix.
    warm_new_group : bool, default=True
        With the APG master, start each new group at the best point of its
        steepest-descent ray instead of zero (the paper's choice); APG then
        needs fewer iterations.  Newton masters start new groups at zero.

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
    vector = y.ndim == 1
    Y = y.reshape(n, -1)
    K = Y.shape[1]
    penalty = SquaredGroupL1(1.0)
    budget = max_features is not None
    b0 = _intercept_only(loss, Y, C) if fit_intercept else np.zeros(K)
    st = {
        "W": np.zeros((0, K)), "b": b0, "M": np.tile(b0, (n, 1)), "tau": 0.1 * n * C,
        "blocks": [], "feats": [], "weights": [], "groups": [],
        "seen": set(), "excluded": set(), "lower": -np.inf, "unconverged": 0,
    }

    def price():
        M = st["M"]
        if fit_intercept:
            M = M + _centre_intercepts(loss, M, Y, C)
        grad = C * loss.grad_margin(M, Y)
        g = grad[:, 0] if K == 1 else grad
        if budget:
            taken = _active_ids(st) | st["excluded"]
            want = min(B, max_features - len(_active_ids(st)))
            if want <= 0:
                return "max_features"
            cand = pool.price(g, B + len(taken), X=X)
            keep = [i for i, c in enumerate(np.asarray(cand.params).tolist())
                    if c not in taken and cand.scores[i] > 0][:want]
            lower_sq = float((np.asarray(cand.scores[:B]) ** 2).sum())
            cand = Candidates(np.asarray(cand.params)[keep], np.asarray(cand.scores)[keep],
                              extra={"sum_sq": lower_sq})
        else:
            cand = pool.price(g, B, X=X)
            lower_sq = cand.extra["sum_sq"]
        # Fenchel dual at the recovered (feasible) point: a lower bound (Theorem 2).
        dual = -C * float(loss.conjugate_at_grad(M, Y).sum()) - penalty.conjugate(lower_sq)
        st["lower"] = max(st["lower"], dual)
        if len(cand) == 0 or np.max(cand.scores) <= 0:
            return None
        key = frozenset(np.asarray(cand.params).tolist())
        if key in st["seen"]:
            return "active_set"  # Theorem 3: the worst-case constraint is already active
        st["seen"].add(key)
        return cand

    def master(cand):
        feats, weights = pool.column_indices(cand)
        block = pool.columns(cand, X)
        choice = choose_master(n, sum(b.shape[1] for b in st["blocks"]) + block.shape[1],
                               K, loss, solver)
        kind = choice.name
        # Newton needs no help from a good start; APG does (paper 002 starts at 0).
        W_new = (_enter_new_group(block, Y, loss, C, st["M"], st["W"], _indptr(st))
                 if warm_new_group and kind == "apg" else np.zeros((len(feats), K)))
        st["blocks"].append(block)
        st["feats"].append(np.asarray(feats))
        st["weights"].append(np.asarray(weights))
        st["groups"].append(np.asarray(cand.params))
        A = _active_block(st["blocks"])
        indptr = _indptr(st)
        W0 = np.vstack([st["W"], W_new])
        if kind == "newton":
            opts = {k: v for k, v in (("tol", master_tol), ("max_iter", master_max_iter))
                    if v is not None}
            res = ProxNewton(**opts).solve(
                Problem(A, Y, weighted(loss, C=C), penalty, indptr, fit_intercept),
                ProxNewtonState(W0, st["b"]))
            W, b, M = res.coef, np.atleast_1d(res.intercept), res.state["margin"]
        else:
            if K > 1:
                raise ValueError("solver='apg' handles one output; use solver='newton' "
                                 "for a shared multiclass selection.")
            res = APG(tol=master_tol or 1e-6, max_iter=master_max_iter or 5000).solve(
                Problem(A, Y[:, 0], weighted(loss, C=C), penalty, indptr, fit_intercept),
                APGState(W0[:, 0], st["b"][0], tau=st["tau"]))
            st["tau"] = res.state["tau"]
            W, b = res.coef[:, None], np.array([res.intercept])
            M = res.state["margin"][:, None]
        st["unconverged"] += not res.converged
        st.update(W=W, b=b, M=M)
        if budget:
            _drop_zero_groups(st)
        obj = res.state["objective"]
        return obj, {"lower_bound": st["lower"], "gap": obj - st["lower"],
                     "master_iter": res.n_iter, "newton_master": float(kind == "newton"),
                     "master_reason": float(choice.code),
                     "peak_rss_mb": peak_rss_mb()}

    if budget:
        n_outer = -(-max_features // B) + max_iter
        driver = ColumnGeneration(n_outer, tol=None, verbose=verbose, callback=callback,
                                  name=name, warn=False)
    else:
        driver = ColumnGeneration(max_iter, tol=tol, verbose=verbose, callback=callback,
                                  name=name, warn=False)
    out = driver.run(price, master, n_active=lambda: len(_active_ids(st)))
    stop_reason = out.stop_reason
    if budget and len(_active_ids(st)) >= max_features:
        stop_reason = "max_features"
    if st["unconverged"]:
        warnings.warn(
            f"{name}: {st['unconverged']} of {out.n_iter} master solves stopped at their "
            "iteration cap before meeting their tolerance; increase master_max_iter.",
            ConvergenceWarning,
        )
    history = out.history.as_dict()
    history["final_lower_bound"] = np.array([st["lower"]])

    selected, coef_sel, d = _collect(st)
    coef = np.zeros((n_features, K))
    if getattr(pool, "n_virtual_", n_features) == n_features and selected.size:
        coef[selected] = coef_sel
    b = st["b"]
    if vector:
        coef, coef_sel, b = coef[:, 0], coef_sel[:, 0], float(b[0])
    return FGMResult(coef, b, selected, coef_sel, d, st["groups"], history,
                     out.n_iter, out.converged or stop_reason == "max_features",
                     stop_reason)


def _active_block(blocks):
    """The active columns side by side; dense when sparse storage does not pay.

    Sparse products cost several times a dense one per stored entry, so an
    active block denser than ``_DENSE_ABOVE`` is densified (it is small:
    ``n x |active|``).
    """
    if not sp.issparse(blocks[0]):
        return np.asfortranarray(np.hstack(blocks))
    A = sp.hstack(blocks, format="csc")
    n, p = A.shape
    if A.nnz > _DENSE_ABOVE * n * p and n * p <= _DENSE_MAX_ENTRIES:
        return A.toarray(order="F")
    return A


def _indptr(st):
    return np.concatenate([[0], np.cumsum([len(f) for f in st["feats"]])]).astype(np.int64)


def _drop_zero_groups(st):
    """Budget mode: constraints whose weights vanished leave the active set.

    Their features stop counting against the budget and are not priced again
    (they were offered and the restricted optimum declined them).
    """
    indptr = _indptr(st)
    keep = group_norms_2d(st["W"], indptr) > 0
    if keep.all():
        return
    for t in np.flatnonzero(~keep):
        st["excluded"].update(st["feats"][t].tolist())
    rows = np.repeat(keep, np.diff(indptr))
    for key in ("blocks", "feats", "weights", "groups"):
        st[key] = [v for v, k in zip(st[key], keep) if k]
    st["W"] = st["W"][rows]
    st["excluded"] -= _active_ids(st)


def _active_ids(st):
    """Feature ids in the active constraints."""
    return set(np.concatenate(st["feats"]).tolist()) if st["feats"] else set()


def _enter_new_group(block, Y, loss, C, M, W_old, indptr_old):
    """Start the new group on its steepest-descent ray at the best step.

    Paper 002 starts the new group at zero; the master then spends iterations
    growing it.  Minimising the objective exactly along
    :math:`W_T = s\\,X_T'U` (one scalar search on cached margins) gives a
    start that is never worse than zero.
    """
    U = -C * loss.grad_margin(M, Y)
    G = np.asarray(block.T @ U).reshape(block.shape[1], -1)
    gn = np.linalg.norm(G)
    if gn == 0:
        return np.zeros_like(G)
    dM = np.asarray(block @ G).reshape(M.shape)
    old = float(group_norms_2d(W_old, indptr_old).sum()) if len(W_old) else 0.0
    F = lambda s: C * loss.value(M + s * dM, Y).sum() + 0.5 * (old + s * gn) ** 2
    hi = 1.0
    while F(2 * hi) < F(hi) and hi < 1e12:
        hi *= 2
    res = minimize_scalar(F, bounds=(0.0, 2 * hi), method="bounded",
                          options={"xatol": 1e-8 * hi})
    s = res.x if res.fun < F(0.0) else 0.0
    return s * G


def _collect(st):
    """Map the super-group weights back to (possibly virtual) features.

    A feature in several constraints ``d_t`` gets the sum of its weights; its
    scaling is :math:`d_j = \\sum_t \\mu_t [j \\in d_t]` with
    :math:`\\mu_t = \\|W_t\\| / \\sum_s \\|W_s\\|` (the MKL weights of eq. 29).
    """
    K = st["W"].shape[1]
    if not st["feats"]:
        return np.zeros(0, dtype=np.int64), np.zeros((0, K)), np.zeros(0)
    feats_all = np.concatenate(st["feats"]).astype(np.int64)
    weights_all = np.concatenate(st["weights"])
    order = np.array(list(dict.fromkeys(feats_all.tolist())), dtype=np.int64)
    pos = {j: i for i, j in enumerate(order.tolist())}
    idx = np.array([pos[j] for j in feats_all.tolist()])
    coef = np.zeros((len(order), K))
    np.add.at(coef, idx, weights_all[:, None] * st["W"])
    norms = group_norms_2d(st["W"], _indptr(st))
    mu = norms / norms.sum() if norms.sum() > 0 else norms
    d = np.zeros(len(order))
    for t, f in enumerate(st["feats"]):
        d[np.unique([pos[j] for j in f.tolist()])] += mu[t]
    keep = np.any(coef != 0, axis=1)
    return order[keep], coef[keep], d[keep]
