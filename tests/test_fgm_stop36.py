"""FGM's stopping rule at defaults (issues 21, 24; thirty-fifth pass).

A. Theorem 2's lower bound is taken at the best multiple of the recovered
   dual point (dual scaling, :mod:`kernlearn.methods._fgm_bound`): still a
   lower bound of the full problem (checked against cvxpy), and far tighter
   far from the optimum (at the intercept-only model the unscaled value is
   hugely negative).
B. The paper's relative-objective-change stop with the duality gap above
   ``tol`` is taken only once the change is below ``tol / 10``, and
   ``max_iter`` is 100: the default fits that stopped "converged" 3-15 %
   above their optimum (audits 8 and 53) or warned at ``max_iter=15`` on good
   fits (ten-class image sets) now end within ``tol`` of it, silent.
"""

import lzma
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from kernlearn import FGMClassifier
from kernlearn.datafiles import data_home
from kernlearn.families import FeaturePool
from kernlearn.losses import get_loss, weighted
from kernlearn.methods.fgm import FGMSettings, fit_fgm
from test_fgm_audit109 import _ksupport_sq  # the B-support norm (same folder)


def _fit(model, X, y):
    with warnings.catch_warnings(record=True) as seen, threadpool_limits(1):
        warnings.simplefilter("always")
        model.fit(X, y)
    return model, [str(w.message) for w in seen if issubclass(w.category, ConvergenceWarning)]


@pytest.mark.parametrize("seed", range(6))
def test_the_scaled_dual_bound_lies_below_cvxpys_optimum_and_is_tight_far_from_it(seed):
    # (checked failing: with the penalty's theta^2 term a quarter short, seed 0's
    # bound lies above cvxpy's point; without the scaling every seed's first bound
    # is below 2 % of the optimum)
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(seed)
    n, p = 30, 6
    X = rng.standard_normal((n, p))
    f = X[:, :3] @ rng.standard_normal(3)
    name = ["square", "logistic", "squared_hinge", "ovr3"][seed % 4]
    K = 3 if name == "ovr3" else 1
    if name == "square":
        y, n_classes, Ys = f + 0.1 * rng.standard_normal(n), None, None
    elif name == "ovr3":
        y = np.argsort(np.argsort(f)) * 3 // n
        n_classes, name = 3, "squared_hinge"
    else:
        y, n_classes = (f > 0).astype(int), 2
    Ys = (y[:, None] if n_classes is None else np.where(y == 1, 1.0, -1.0)[:, None]
          if K == 1 else np.stack([np.where(y == k, 1.0, -1.0) for k in range(K)], 1))
    w = rng.uniform(0.5, 2.0, n) if seed >= 3 else np.ones(n)
    B, C = 1 + seed % 2, [1.0, 10.0, 100.0][seed % 3]
    s = FGMSettings(B=B, C=C, tol=1e-2, max_iter=3, solver="newton")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = fit_fgm(X, y, FeaturePool(), weighted(get_loss(name), w), s,
                      sample_weight=w, n_classes=n_classes, multiclass="shared")
    A = X * res.pool.scale_
    A = A - A.mean(0)
    V, th, b = cp.Variable((p, K)), cp.Variable(p), cp.Variable(K)
    M = A @ V + np.ones((n, 1)) @ cp.reshape(b, (1, K), order="C")
    loss = {"square": lambda: 0.5 * cp.square(M - Ys),
            "logistic": lambda: cp.logistic(-cp.multiply(Ys, M)),
            "squared_hinge": lambda: 0.5 * cp.square(cp.pos(1 - cp.multiply(Ys, M)))}[name]()
    unit = res.history["objective"][0]
    pen = sum(cp.quad_over_lin(V[j], th[j]) for j in range(p))
    prob = cp.Problem(cp.Minimize((0.5 * pen + C * cp.sum(w @ loss)) / unit),
                      [th >= 0, th <= 1, cp.sum(th) <= B])
    prob.solve(solver="CLARABEL")
    margins = A @ V.value + b.value
    at = 0.5 * _ksupport_sq(np.linalg.norm(V.value, axis=1), B) + C * float(
        w @ get_loss(name).value(margins, Ys).sum(1))
    lows = np.append(res.history["lower_bound"], res.history["final_lower_bound"])
    assert np.max(lows) <= at * (1 + 1e-9)  # weak duality: below a feasible value
    # the first pricing, at the intercept-only model: a useful bound
    assert res.history["lower_bound"][0] >= 0.02 * at


@pytest.mark.parametrize("name", ["square", "squared_hinge", "logistic"])
def test_the_scaled_dual_is_the_best_value_along_the_ray(name):
    # D(theta U) from the conjugate's definition, l*(v) = sup_m v m - l(m), on a
    # grid of theta: scaled_dual is its maximum (checked failing, all three, with
    # the penalty's theta^2 term a quarter short)
    from scipy.optimize import minimize_scalar

    from kernlearn.methods._fgm_bound import scaled_dual

    rng = np.random.default_rng(1)
    n, C, pen = 12, 3.0, 7.0
    M = rng.standard_normal((n, 1))
    Y = rng.standard_normal((n, 1)) if name == "square" else np.sign(rng.standard_normal((n, 1)))
    w = rng.uniform(0.0, 2.0, n)
    base = get_loss(name)
    g = base.grad_margin(M, Y)

    def conj(v, yi):
        res = minimize_scalar(lambda m: base.value(np.array([m]), np.array([yi]))[0] - v * m,
                              bounds=(-60, 60), method="bounded", options={"xatol": 1e-12})
        return -res.fun

    top = 1.0 / np.max(-g * Y) if name == "logistic" else 3.0
    grid = np.linspace(0.0, top * (1 - 1e-9), 101)
    values = [-C * sum(w[i] * conj(t * g[i, 0], Y[i, 0]) for i in range(n)) - t * t * pen
              for t in grid]
    got = scaled_dual(weighted(base, w), M, Y, C, pen)
    assert max(values) - 1e-6 * abs(max(values)) <= got <= max(values) + 1e-3 * abs(max(values))


def _a8():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 30))
    return X, X[:, 0] - X[:, 3] + 0.5 * X[:, 7] + 0.3 * rng.standard_normal(200) > 0


def _a53():
    rng = np.random.RandomState(0)
    X = rng.randn(60, 30)
    return X, (X[:, :6] @ rng.randn(6) + 0.1 * rng.randn(60) > 0).astype(int)


@pytest.mark.parametrize("data, B", [(lambda: load_breast_cancer(return_X_y=True), 10),
                                     (_a8, 2), (_a53, 2)],
                         ids=["readme", "audit8-B2", "audit53-B2"])
def test_default_fits_are_silent_converged_and_within_tol_of_their_optimum(data, B):
    # (before: audit 8's fit stopped converged 4.8 % above, audit 53's 21 %;
    # at max_iter=15 with the new rule both warned)
    X, y = data()
    est, said = _fit(FGMClassifier(B=B), X, y)
    assert said == [] and est.converged_
    ref, _ = _fit(FGMClassifier(B=B, tol=1e-5, max_iter=300), X, y)
    best = min(ref.history_["objective"].min(), est.history_["objective"][-1])
    assert est.history_["objective"][-1] <= best * (1 + est.tol)


def test_a_ten_class_image_set_fits_silently_at_defaults():
    # issue 1: FGMClassifier() warned "stopped after 15 outer iterations
    # (max_iter)" on mfeat-factors (accuracy 0.973); it needs 30 rounds
    path = data_home() / "suite" / "mfeat-factors.csv.xz"
    if not path.exists():
        pytest.skip(f"suite data absent: {path} (set KERNLEARN_DATA)")
    with lzma.open(path, "rt") as fh:
        df = pd.read_csv(fh, dtype={"target": str})
    X, y = df.drop(columns="target").to_numpy(float), df["target"].to_numpy()
    est, said = _fit(FGMClassifier(), X[::3], y[::3])
    assert said == [] and est.converged_ and est.n_iter_ > 15
