"""FGM's master chosen by cost: ``solver="auto"`` against ``"apg"`` and ``"newton"``.

Data follow the design of skglm's sparse-recovery example (re-implemented, no
code taken): Gaussian columns with Toeplitz correlation ``rho^|i - j|``
(``rho = 0.5``), a true coefficient vector of ones on a random support, noise
at signal-to-noise ratio 5, columns scaled to norm ``sqrt(n)``, half of the
rows for training.  ``FGMRegressor`` then grows an active set wider than the
training rows (``B`` columns per outer iteration), where proximal Newton's
Hessian is singular and each of its sweeps costs more than an APG iteration.

Every fit is at ``C=1`` (``FGMRegressor``'s default when the table in
BENCHMARKS.md was measured; the default is now ``C="auto"``, whose
cross-validation would time a dozen fits per call and report the masters of
the refit alone), so the times are those of one solve per master rule.

``"newton"`` reproduces the previous fixed rule (Newton whenever the Hessian
fits in memory), which chose it on both problems below.  Printed: median fit
times over ``--runs`` runs (after one warm-up fit; process CPU seconds, or
wall seconds with ``--clock wall``), their ratios to
``solver="apg"``, test R^2, and the masters ``"auto"`` used with their reasons
(from ``history_``).

With ``--grid`` it instead times every master call (process CPU) of fits
forced to ``solver="newton"`` and to ``solver="apg"`` over a grid of shapes
(dense Gaussian n = 100-2000; Reuters and a9a when their files are present;
square, squared hinge and logistic losses) and prints, per master, the rule's
inputs, both times and ``"auto"``'s choice: the data the wide cost model of
:mod:`kernlearn.solvers.choice` was fitted on.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/fgm_master_choice.py [--runs 3] [--quick]
        [--clock cpu|wall] [--grid]
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import scipy.sparse as sp  # noqa: E402

import kernlearn.methods.fgm as fgm_method  # noqa: E402
from kernlearn import FGMClassifier, FGMRegressor  # noqa: E402
from kernlearn.datafiles import DatasetNotFoundError  # noqa: E402
from kernlearn.losses import get_loss  # noqa: E402
from kernlearn.methods._fgm_rows import sparse_work  # noqa: E402
from kernlearn.solvers import MASTER_REASONS, choose_master  # noqa: E402


def correlated_data(n_samples, n_features, density, rho=0.5, snr=5.0, seed=0):
    """Toeplitz-correlated design, sparse ones, noise at the given SNR."""
    rng = np.random.default_rng(seed)
    X = np.empty((n_samples, n_features))
    X[:, 0] = rng.standard_normal(n_samples)
    # AR(1) across columns: corr(x_i, x_j) = rho^|i - j|
    for j in range(1, n_features):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho**2) * rng.standard_normal(n_samples)
    w = np.zeros(n_features)
    w[rng.choice(n_features, size=max(1, int(density * n_features)), replace=False)] = 1.0
    signal = X @ w
    y = signal + rng.standard_normal(n_samples) * np.linalg.norm(signal) / (
        np.sqrt(n_samples) * snr)
    X /= np.linalg.norm(X, axis=0) / np.sqrt(n_samples)
    half = n_samples // 2
    return X[:half], y[:half], X[half:], y[half:]


# process CPU time by default (one thread): on a shared machine wall time also
# counts other people's work
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def timed_fit(X, y, clock=time.process_time, **params):
    """Seconds of one ``FGMRegressor(**params)`` fit on ``clock``, and the estimator."""
    t0 = clock()
    est = FGMRegressor(**params).fit(X, y)
    return clock() - t0, est


def problems(scale=1.0):
    """``(name, data keywords, FGMRegressor keywords)`` of the two problems.

    ``C=1`` is fixed (not the ``C="auto"`` default): one solve per fit, the
    setting of the recorded table.
    """
    return [
        # skglm's example: 1000 rows (500 to train), 1000 columns, 10 % support
        ("skglm example n=500 p=1000", dict(n_samples=1000, n_features=int(1000 * scale),
                                            density=0.1), dict(B=50, C=1.0, max_iter=15)),
        # wider: 100 training rows, 10,000 columns, 1 % support
        ("wide n=100 p=10000", dict(n_samples=200, n_features=int(10_000 * scale),
                                    density=0.01), dict(B=20, C=1.0, max_iter=15)),
    ]


def master_times(est, X, y, solver):
    """``(n, p, nnz or None, hessian flops or None, CPU seconds)`` per master of one fit."""
    calls, solve = [], fgm_method._solve_master

    def timed(kind, A, *args, **kwargs):
        t0 = time.process_time()
        out = solve(kind, A, *args, **kwargs)
        flops, nnz = sparse_work([A]) if sp.issparse(A) else (None, None)
        calls.append((A.shape[0], A.shape[1], nnz, flops, time.process_time() - t0))
        return out

    est.set_params(solver=solver).fit(X, y)  # warm-up (compiled code)
    fgm_method._solve_master = timed
    try:
        est.fit(X, y)
    finally:
        fgm_method._solve_master = solve
    return calls


def grid_problems():
    """``(name, estimator, X, y)`` of the measured grid."""
    for n_samples, p, B, density in [(200, 10_000, 20, 0.01), (1000, 1000, 50, 0.1),
                                      (200, 2000, 20, 0.02), (1000, 3000, 50, 0.03),
                                      (4000, 2000, 60, 0.05), (400, 3000, 40, 0.02)]:
        X, y, _, _ = correlated_data(n_samples, p, density)
        yield f"square n={len(y)}", FGMRegressor(B=B, C=1.0, max_iter=15, tol=None), X, y
        for loss in ("squared_hinge", "logistic"):
            yield (f"{loss} n={len(y)}", FGMClassifier(B=B, C=1.0, loss=loss, max_iter=15,
                                                        tol=None), X, (y > np.median(y)) * 1)
    try:
        from _common import reuters_split

        X, y, _, _ = reuters_split()
        for n in (500, 2000):
            for loss in ("squared_hinge", "logistic"):
                yield (f"Reuters {loss} n={n}", FGMClassifier(B=50, C=1.0, loss=loss,
                       max_iter=12, tol=None), X[:n], (y[:n] == y.min()) * 1)
    except DatasetNotFoundError as err:
        print(f"Reuters skipped: {err}")


def grid():
    print("| problem | n | p | nnz / np | newton ms | apg ms | auto | reason |")
    print("|---|---|---|---|---|---|---|---|")
    for name, est, X, y in grid_problems():
        newton, apg = (master_times(est, X, y, s) for s in ("newton", "apg"))
        loss = get_loss(getattr(est, "loss", "square"))
        for (n, p, nnz, flops, tn), (_, _, _, _, ta) in zip(newton, apg):
            c = choose_master(n, p, 1, loss, "auto", flops, nnz)
            print(f"| {name} | {n} | {p} | {1 if nnz is None else nnz / (n * p):.3f} | "
                  f"{tn * 1e3:.1f} | {ta * 1e3:.1f} | {c.name} | {c.code} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smaller problems")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    parser.add_argument("--grid", action="store_true",
                        help="time every master of forced Newton and APG fits on a grid")
    args = parser.parse_args(argv)
    if args.grid:
        return grid()
    clock = CLOCKS[args.clock]
    scale = 0.5 if args.quick else 1.0
    print("| problem | auto s | apg s | newton s | auto/apg | newton/apg | R^2 auto | "
          "R^2 apg | auto's masters |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, data, params in problems(scale):
        Xtr, ytr, Xte, yte = correlated_data(**data)
        times, ests = {}, {}
        for solver in ("auto", "apg", "newton"):
            timed_fit(Xtr, ytr, clock, solver=solver, **params)  # warm-up (compiled code)
            runs = [timed_fit(Xtr, ytr, clock, solver=solver, **params)
                    for _ in range(args.runs)]
            times[solver] = statistics.median(t for t, _ in runs)
            ests[solver] = runs[-1][1]
        h = ests["auto"].history_
        pairs = list(zip(h["newton_master"].tolist(), h["master_reason"].tolist()))
        masters = "; ".join(f"{'newton' if nm else 'apg'} x{pairs.count((nm, c))} "
                            f"({MASTER_REASONS[int(c)]})" for nm, c in sorted(set(pairs)))
        r2 = {s: ests[s].score(Xte, yte) for s in ("auto", "apg")}
        print(f"| {name} | {times['auto']:.2f} | {times['apg']:.2f} | {times['newton']:.2f} | "
              f"{times['auto'] / times['apg']:.2f} | {times['newton'] / times['apg']:.2f} | "
              f"{r2['auto']:.3f} | {r2['apg']:.3f} | {masters} |", flush=True)


if __name__ == "__main__":
    main()
