"""Randomised hunt: OBSCURE's duality-gap certificate with unequal sample weights (audit 116).

Each draw is a small problem (3 linear views of 2 columns each, rows of unit
norm per view, noisy labels; 2 classes or 3-4) with weights of one kind:
``spread`` (``10**U(-6, 6)``), ``zeros`` (a third of the rows weigh 0, the
rest ``U(0.1, 2)``), ``heavy`` (one row ``1e6``, the rest 1), ``classes``
(one weight per class, ``10**U(-3, 3)``), ``fractional`` (``U(0.05, 3)``) or
``integer`` (1..5).  OBSCURE (:class:`kernlearn.methods.obscure.OnlineBatch`,
its defaults but ``tol``) is compared with the optimum of the same weighted
objective (eq. 5 with the weighted mean loss) found by cvxpy:

- ``dual above optimum``: a dual bound of the run's history above the optimum
  (weak duality broken: the certificate is not a lower bound);
- ``converged but not within tol``: the run stopped on the gap but its
  objective is above ``optimum / (1 - tol)``;
- ``unconverged``: the run reached ``max_iter`` (not a defect by itself).

The decision values on the training rows must lie within the strong-convexity
bound of the objective's excess (``decision values beyond the bound``).
Integer weights are also compared with the same rows repeated (an unweighted
fit): the objectives of the two fits, each certified, must be within ``tol``
of each other.  Prints counts per kind; exit status 1 on a defect::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/hunt_obscure_weights.py \
        [--draws 120] [--seed 0] [--tol 0.05]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import warnings  # noqa: E402
import sys  # noqa: E402
from collections import Counter  # noqa: E402

import numpy as np  # noqa: E402

from kernlearn.kernels import KernelList  # noqa: E402
from kernlearn.losses import Hinge, MulticlassHinge  # noqa: E402
from kernlearn.methods.obscure import KernelProblem, OnlineBatch  # noqa: E402
from kernlearn.penalties import SquaredGroupNorm2p  # noqa: E402

KINDS = ("spread", "zeros", "heavy", "classes", "fractional", "integer")
VIEWS = [[0, 1], [2, 3], [4, 5]]


def draw(rng, kind):
    """Inputs, labels (class indices), number of classes and weights of one draw."""
    n = int(rng.integers(20, 45))
    M = int(rng.choice([3, 4])) if kind == "classes" or rng.random() < 0.3 else 2
    X = rng.normal(size=(n, 6))
    score = X[:, 0] + X[:, 1] + 0.7 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, M + 1)[1:-1]))
    if kind == "spread":
        w = 10.0 ** rng.uniform(-6, 6, size=n)
    elif kind == "zeros":
        w = rng.uniform(0.1, 2.0, size=n)
        w[rng.permutation(n)[: n // 3]] = 0.0
    elif kind == "heavy":
        w = np.ones(n)
        w[rng.integers(n)] = 1e6
    elif kind == "classes":
        w = (10.0 ** rng.uniform(-3, 3, size=M))[y]
    elif kind == "fractional":
        w = rng.uniform(0.05, 3.0, size=n)
    else:
        w = rng.integers(1, 6, size=n).astype(float)
    return X, y, M, w


def problem(X, y, M, w, p, lam):
    kl = KernelList([("linear", {}, v) for v in VIEWS]).fit(X)
    target = np.where(y == 1, 1.0, -1.0) if M == 2 else y
    loss = Hinge() if M == 2 else MulticlassHinge()
    return kl, KernelProblem(kl, target, loss, SquaredGroupNorm2p(alpha=lam, p=p),
                             sample_weight=w, n_classes=None if M == 2 else M)


def objective(prob, kl, coef):
    G = np.einsum("jnm,mc->cjn", kl.gram(), coef)
    N = np.einsum("nc,cjn->j", coef, G)
    return OnlineBatch.objective(prob, G, N)[0]


def optimum(X, y, M, w, p, lam):
    """Optimum of the weighted eq. (5) by cvxpy and its decision values (linear features)."""
    import cvxpy as cp

    n = len(y)
    Phis = [X[:, v] for v in VIEWS]
    if M == 2:
        W = [cp.Variable(2) for _ in Phis]
        f = sum(P @ Wj for P, Wj in zip(Phis, W))
        losses = cp.pos(1 - cp.multiply(np.where(y == 1, 1.0, -1.0), f))
        norms = cp.hstack([cp.norm(Wj) for Wj in W])
    else:
        W = [cp.Variable((2, M)) for _ in Phis]
        marg = sum(P @ Wj for P, Wj in zip(Phis, W))
        Y = np.eye(M)[y]
        my = cp.sum(cp.multiply(marg, Y), axis=1)
        losses = cp.pos(cp.max(marg + 1 - Y - cp.reshape(my, (n, 1), order="C")
                               @ np.ones((1, M)), axis=1))
        norms = cp.hstack([cp.norm(Wj, "fro") for Wj in W])
    # the weighted mean, with weights normalised to sum 1 (the solver's conditioning)
    obj = lam / 2 * cp.square(cp.pnorm(norms, p)) + (w / w.sum()) @ losses
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL")
    dec = (f if M == 2 else marg).value
    return prob.value, np.reshape(dec, (n, -1))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=120)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tol", type=float, default=0.05)
    args = ap.parse_args(argv)
    try:
        import cvxpy  # noqa: F401
    except ImportError:
        print("skip: cvxpy is not installed")
        return 0
    # cvxpy's notes on approximating p-norms by cones
    warnings.filterwarnings("ignore", category=UserWarning, module="cvxpy")
    rng = np.random.default_rng(args.seed)
    counts = {k: Counter() for k in KINDS}
    worst = Counter()
    for i in range(args.draws):
        kind = KINDS[i % len(KINDS)]
        X, y, M, w = draw(rng, kind)
        p = float(rng.choice([1.3, 2.0]))
        lam = 1.0 / (float(rng.choice([1.0, 10.0])) * len(y))
        X = X / np.repeat([np.linalg.norm(X[:, v], axis=1) for v in VIEWS], 2, 0).T
        f_star, dec_star = optimum(X, y, M, w, p, lam)
        kl, prob = problem(X, y, M, w, p, lam)
        res = OnlineBatch(tol=args.tol, random_state=i).solve(prob)
        f = objective(prob, kl, res.coef)
        dual = res.history.as_dict()["dual"].max()
        c = counts[kind]
        c["draws"] += 1
        slack = 1e-6 * max(1.0, abs(f_star))  # cvxpy's accuracy
        if dual > f_star + slack:
            c["dual above optimum"] += 1
            print(f"draw {i} ({kind}): dual {dual:.6g} > optimum {f_star:.6g}")
        if res.converged:
            c["converged"] += 1
            if f > f_star / (1 - args.tol) + slack:
                c["converged but not within tol"] += 1
                print(f"draw {i} ({kind}): converged at {f:.6g}, optimum {f_star:.6g}")
        else:
            c["unconverged"] += 1
        worst[kind] = max(worst[kind], (f - f_star) / f_star)
        # decision values: lam/2 ||w||_{2,p}^2 is (p - 1) lam-strongly convex in
        # ||.||_{2,p}, so |f(x) - f*(x)| <= sqrt(2 (F - F*) / ((p - 1) lam))
        # ||phi(x)||_{2,q} (each view's rows of unit norm: 3^(1/q))
        dec = np.einsum("j,jnm,mc->nc", res.state.kernel_coef, kl.gram(), res.coef)
        if M > 2:  # Crammer-Singer outputs are defined up to a common shift
            dec, ds = dec - dec.mean(1, keepdims=True), dec_star - dec_star.mean(1, keepdims=True)
        else:
            ds = dec_star
        q = p / (p - 1)
        bound = np.sqrt(2 * max(f - f_star, 0) / ((p - 1) * lam)) * 3 ** (1 / q)
        dev = np.abs(dec - ds).max()
        if dev > 2 * bound + 1e-3:  # (x2 for the centring of the multiclass outputs)
            c["decision values beyond the bound"] += 1
            print(f"draw {i} ({kind}): decision values differ by {dev:.3g}, bound {bound:.3g}")
        c["dev"] = max(c["dev"], dev / max(np.abs(ds).max(), 1e-12))
        if kind == "integer":
            # the same problem as repeated rows, unweighted
            reps = w.astype(int)
            kl2, prob2 = problem(np.repeat(X, reps, 0), np.repeat(y, reps), M, None,
                                 p, lam)
            res2 = OnlineBatch(tol=args.tol, random_state=i).solve(prob2)
            f2 = objective(prob2, kl2, res2.coef)
            if res.converged and res2.converged and abs(f - f2) > args.tol * f_star + slack:
                c["repeated rows differ beyond tol"] += 1
                print(f"draw {i}: weighted {f:.6g}, repeated rows {f2:.6g}")
    bad = 0
    for kind in KINDS:
        c = counts[kind]
        bad += c["dual above optimum"] + c["converged but not within tol"]
        bad += c["repeated rows differ beyond tol"] + c["decision values beyond the bound"]
        print(f"{kind:>10}: {c['draws']} draws, {c['converged']} converged, "
              f"{c['unconverged']} unconverged, {c['dual above optimum']} dual above "
              f"optimum, {c['converged but not within tol']} converged but not within "
              f"tol, {c['repeated rows differ beyond tol']} repeated rows differ, "
              f"{c['decision values beyond the bound']} decision values beyond the "
              f"strong-convexity bound (largest relative deviation {c['dev']:.3f}); "
              f"worst (f - f*)/f* {worst[kind]:.4f}")
    print(f"defects: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
