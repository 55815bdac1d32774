"""FGM's shared multiclass selection: the multi-output APG master against Newton.

``FGMClassifier(multiclass="shared")`` on ``K >= 3`` classes solves one
restricted problem with ``K`` outputs sharing the selected features.  Every
master call of fits forced to ``solver="newton"`` and to ``solver="apg"`` is
timed (process CPU, after one warm-up fit; the grid idea of
``fgm_master_choice.py --grid``), on

* scikit-learn's digits (1797 x 64, 10 classes), USPS (256 columns, 10
  classes) and mfeat (649 columns, 10 classes) from the data folder, at
  several numbers of rows (narrow and, with few rows, wide active sets);
* Reuters (sparse; the stored set is binary, so one output: a reference);
* Gaussian ``K``-class data with ``p`` up to ``3 n`` (wide active sets).

Printed: one row per problem with the median over its masters of Newton's
and APG's times, their ratio (``newton / apg``, below 1: Newton faster), the
share of masters where APG was faster, whole-fit times, the training
accuracies and final objectives of both fits (the same optimum: APG stops at
``inner_tol=1e-6``, Newton at ``1e-8``), and the master ``solver="auto"``
chooses for the last active set.  Medians of ``--runs`` runs.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/fgm_apg_multi.py [--runs 3] [--quick]
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from fgm_master_choice import master_times  # noqa: E402
from kernlearn import FGMClassifier  # noqa: E402
from kernlearn.datafiles import DatasetNotFoundError  # noqa: E402
from kernlearn.datasets import load_dataset  # noqa: E402
from kernlearn.losses import get_loss  # noqa: E402
from kernlearn.solvers import choose_master  # noqa: E402


def gaussian_classes(n, p, K, seed=0):
    """``K`` Gaussian classes whose means differ on 10 % of ``p`` columns."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    means = np.zeros((K, p))
    support = rng.choice(p, size=max(K, p // 10), replace=False)
    means[:, support] = rng.standard_normal((K, len(support)))
    return rng.standard_normal((n, p)) + means[y], y


def problems(quick=False):
    """``(name, X, y, FGMClassifier keywords)`` of the measured problems."""
    from sklearn.datasets import load_digits

    d = load_digits()
    # (the sets' files are sorted by class: rows in a fixed random order)
    rng = np.random.default_rng(0)
    rows = (300,) if quick else (150, 600, 1797)
    for n in rows:
        yield f"digits n={n}", d.data[:n], d.target[:n], dict(B=10)
    for name, n in (("usps", 1000), ("mfeat", 400)):
        try:
            data = load_dataset(name)
        except DatasetNotFoundError as err:
            print(f"{name} skipped: {err}")
            continue
        order = rng.permutation(len(data.target))
        for m in ((n,) if quick else (n // 4, n)):
            yield f"{name} n={m}", data.data[order[:m]], data.target[order[:m]], dict(B=20)
    try:
        from _common import reuters_split

        X, y, _, _ = reuters_split()
        labels, counts = np.unique(y, return_counts=True)
        keep = np.flatnonzero(np.isin(y, labels[np.argsort(counts)[::-1][:5]]))[:1000]
        yield "Reuters 5 topics n=1000", X[keep], y[keep], dict(B=20)
    except DatasetNotFoundError as err:
        print(f"Reuters skipped: {err}")
    for n, p, K in ((100, 300, 3),) if quick else ((100, 300, 3), (200, 600, 5), (100, 300, 10)):
        X, y = gaussian_classes(n, p, K)
        yield f"Gaussian n={n} p={p} K={K}", X, y, dict(B=20)


def past_cap(n=1000, p=900, K=10):
    """CPU seconds, iterations and objective of APG and Newton on one cold master."""
    from kernlearn.losses import weighted
    from kernlearn.penalties import SquaredGroupL1
    from kernlearn.solvers import APG, Problem, ProxNewton

    X, y = gaussian_classes(n, p, K)
    Y = np.where(y[:, None] == np.arange(K), 1.0, -1.0)
    pr = Problem(X, Y, weighted(get_loss("squared_hinge"), C=1.0), SquaredGroupL1(1.0),
                 np.arange(p + 1), True)
    for name, solver in (("apg", APG(tol=1e-6, max_iter=5000)), ("newton", ProxNewton())):
        t0 = time.process_time()
        res = solver.solve(pr)
        print(f"{name}: {time.process_time() - t0:.2f} s, {res.n_iter} iterations, "
              f"objective {res.state.objective:.8g}", flush=True)


def timed_fit(est, X, y):
    t0 = time.process_time()
    est.fit(X, y)
    return time.process_time() - t0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="fewer, smaller problems")
    parser.add_argument("--only", default="", help="problems whose name contains this")
    parser.add_argument("--past-cap", action="store_true",
                        help="one cold master past the one-output Hessian cap")
    args = parser.parse_args(argv)
    if args.past_cap:
        return past_cap()
    print("| problem | K | masters | p range | newton ms | apg ms | newton/apg | apg faster | "
          "fit newton s | fit apg s | acc newton | acc apg | objective apg/newton - 1 | auto |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, X, y, kw in problems(args.quick):
        if args.only not in name:
            continue
        K = len(np.unique(y))
        est = FGMClassifier(C=1.0, multiclass="shared", max_iter=15, tol=None, **kw)
        per = {"newton": [], "apg": []}
        fits = {"newton": [], "apg": []}
        for _ in range(args.runs):
            for solver in ("newton", "apg"):  # alternated A/B
                per[solver].append(master_times(est, X, y, solver))
                fits[solver].append(timed_fit(est.set_params(solver=solver), X, y))
        # the same optimum: training accuracy and the final objective
        fitted = {s: FGMClassifier(**est.get_params()).set_params(solver=s).fit(X, y)
                  for s in per}
        acc = {s: f.score(X, y) for s, f in fitted.items()}
        gap = (fitted["apg"].history_["objective"][-1]
               / fitted["newton"].history_["objective"][-1] - 1.0)
        # per master: the median over runs of each solver's time
        tn = [statistics.median(r[i][4] for r in per["newton"])
              for i in range(len(per["newton"][0]))]
        ta = [statistics.median(r[i][4] for r in per["apg"])
              for i in range(min(len(per["apg"][0]), len(tn)))]
        tn = tn[:len(ta)]
        shapes = per["newton"][0][:len(ta)]
        ratio = statistics.median(a / b for a, b in zip(tn, ta))
        faster = sum(b < a for a, b in zip(tn, ta))
        n, p, nnz, flops = shapes[-1][:4]
        c = choose_master(n, p, K, get_loss("squared_hinge"), "auto", flops, nnz)
        print(f"| {name} | {K} | {len(ta)} | {shapes[0][1]}-{p} (n={n}) | "
              f"{statistics.median(tn) * 1e3:.1f} | {statistics.median(ta) * 1e3:.1f} | "
              f"{ratio:.2f} | {faster}/{len(ta)} | {statistics.median(fits['newton']):.2f} | "
              f"{statistics.median(fits['apg']):.2f} | {acc['newton']:.4f} | "
              f"{acc['apg']:.4f} | {gap:.1e} | {c.name} ({c.code}) |", flush=True)


if __name__ == "__main__":
    main()
