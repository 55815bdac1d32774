"""FGM's restricted master alone: SimpleMKL (MKL-FGM) against APG and proximal Newton.

Paper 002 (sec. 5.2, Fig. 5) replaced the SimpleMKL master of the first FGM
(Tan et al., 2010) by APG in the primal and reports FGM up to 1000 times
faster.  This benchmark times the master alone on FGM's synthetic data
(:func:`kernlearn.datasets.make_fgm_synthetic`, Type I): an active set of
``p`` columns -- the ``0.8 p`` informative features of data generated with
that many, and ``0.2 p`` others (FGM's worst-case analysis also adds groups
that end at zero weight), in random order -- split into kernels of ``B = 10`` columns
(one per constraint ``d_t``), squared hinge with ``C = 1``, the squared
group-l1 penalty with ``alpha = 1``, an intercept, all solvers cold-started
(SimpleMKL from uniform kernel weights).

Solvers: SimpleMKL at a loose duality-gap tolerance (1e-2, the value in
SimpleMKL's example scripts) and at 1e-6; APG at FGM's master tolerance
(1e-6); proximal Newton at its default (1e-8).  Printed: median times over
``--runs`` runs (after one warm-up solve), objectives relative to the best one
found, SimpleMKL's SVM trainings and reduced-gradient iterations, and its time
over APG's.

A second table fits whole FGM classifiers (``B = 10``, default settings,
1000 training and 1000 test rows, 2000 features, 100 informative) with each
master: MKL-FGM against PROX-FGM, the comparison of the paper's Fig. 5 (rows
of masters FGM does not offer are skipped).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/fgm_simplemkl.py [--runs 3] [--quick]
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from kernlearn import FGMClassifier  # noqa: E402
from kernlearn.datasets import make_fgm_synthetic  # noqa: E402
from kernlearn.losses import get_loss, weighted  # noqa: E402
from kernlearn.penalties import SquaredGroupL1  # noqa: E402
from kernlearn.solvers import APG, Problem, ProxNewton  # noqa: E402
from kernlearn.solvers.simplemkl import SimpleMKL  # noqa: E402

B = 10


def master_problem(n_samples, p_active, seed=0):
    """FGM's restricted master on synthetic data: ``p_active`` columns in kernels of ``B``."""
    k = int(0.8 * p_active)
    X, y, w = make_fgm_synthetic(n_samples=n_samples, n_features=2000, n_informative=k,
                                 random_state=seed)
    rng = np.random.default_rng(seed)
    noise = rng.permutation(np.flatnonzero(w == 0))
    cols = rng.permutation(np.concatenate([np.flatnonzero(w), noise[:p_active - k]]))
    indptr = np.arange(0, p_active + 1, B)
    loss = weighted(get_loss("squared_hinge"), C=1.0)
    return Problem(np.asfortranarray(X[:, cols]), y, loss, SquaredGroupL1(1.0), indptr, True)


SOLVERS = {
    "SimpleMKL tol=1e-2": lambda: SimpleMKL(tol=1e-2, max_iter=2000),
    "SimpleMKL tol=1e-6": lambda: SimpleMKL(tol=1e-6, max_iter=2000),
    "APG tol=1e-6": lambda: APG(tol=1e-6, max_iter=5000),
    "ProxNewton": lambda: ProxNewton(),
}


def timed(make, problem):
    t0 = time.perf_counter()
    res = make().solve(problem)
    return time.perf_counter() - t0, res


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="n = 500, p = 50 only")
    args = parser.parse_args(argv)
    sizes = ([(500, 50)] if args.quick
             else [(1000, 50), (1000, 100), (1000, 200), (4096, 200)])
    print("| n | p (kernels) | solver | time s | objective | rel. to best | converged | "
          "SVM trainings (iterations) | time / APG |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, p in sizes:
        problem = master_problem(n, p)
        rows = {}
        for name, make in SOLVERS.items():
            make().solve(problem)  # warm-up (compiled code, caches)
            runs = [timed(make, problem) for _ in range(args.runs)]
            rows[name] = (statistics.median(t for t, _ in runs), runs[-1][1])
        best = min(res.state.objective for _, res in rows.values())
        apg_time = rows["APG tol=1e-6"][0]
        for name, (t, res) in rows.items():
            extra = (f"{res.history.last('svm_trainings'):.0f} ({res.n_iter})"
                     if name.startswith("SimpleMKL") else f"- ({res.n_iter})")
            print(f"| {n} | {p} ({p // B}) | {name} | {t:.3f} | {res.state.objective:.6f} | "
                  f"{(res.state.objective - best) / best:.1e} | {res.converged} | {extra} | "
                  f"{t / apg_time:.1f} |", flush=True)
    if not args.quick:
        with warnings.catch_warnings():
            # FGM's max_outer_iter warning at default settings is not the point here
            warnings.simplefilter("ignore")
            fgm_table(args.runs)


def fgm_table(runs):
    """Whole FGM fits with each master (median times)."""
    X, y, Xt, yt, _ = make_fgm_synthetic(n_samples=1000, n_features=2000, n_informative=100,
                                         n_test=1000, random_state=0)
    print("\n| FGM master | fit time s | selected | final objective | test accuracy |")
    print("|---|---|---|---|---|")
    for solver in ("apg", "newton", "simplemkl"):
        try:
            FGMClassifier(solver=solver, B=10).fit(X, y)  # warm-up
        except ValueError as exc:  # a master FGM does not offer (yet)
            print(f"| {solver} | skipped: {str(exc).splitlines()[0][:60]} | | | |")
            continue
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            est = FGMClassifier(solver=solver, B=10).fit(X, y)
            times.append(time.perf_counter() - t0)
        print(f"| {solver} | {statistics.median(times):.2f} | {np.count_nonzero(est.coef_)} | "
              f"{est.history_['objective'][-1]:.4f} | {est.score(Xt, yt):.3f} |", flush=True)


if __name__ == "__main__":
    main()
