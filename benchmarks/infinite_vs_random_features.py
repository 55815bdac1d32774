"""GrFL / GrFL-M against random-feature and Nystroem anchors (paper 000, sec. 6).

In one run:

1. ``ijcnn1`` and ``a9a`` (official train/test splits): GrFL (one Gaussian
   width) and GrFL-M (widths sampled from a list) with 10, 50, 100 (and 500 on
   a9a) learned Fourier features, against scikit-learn ``RBFSampler`` +
   ``LinearSVC`` and ``Nystroem`` + ``LinearSVC`` with the same number of
   columns (a GrFL feature is a cos/sin pair, i.e. two columns, so the anchors
   get ``2 k`` components), and an exact RBF ``SVC`` trained on a subsample;
   test accuracy, training time and ratios;
2. the restricted master alone, ADMM (Algorithm 2) against FISTA and the
   proximal Newton master at the same approximate-KKT tolerance and
   iteration cap (3000), on ``wine`` and
   ``mfeat`` (one-vs-all tasks, l1 penalty on the original standardised
   features, 95 % of the data, as in Table 3);
3. if the Brodatz images are present, the texture experiment of sec. 6.2:
   16x16 patches of D2, D29, D92 (left half for training, right half for
   testing; ``kernlearn.datasets.make_brodatz_patches``), Gabor GrFL against
   the same master on a fixed bank of 81 Gabor filters.

With ``--protocol paper`` part 1 follows Table 4 of the paper instead: the
official train and test files are joined, and GrFL (and GrFL-M with
``--methods GrFL,GrFL-M``) is trained on ``--splits`` random 70 % / 30 %
splits (seeds 0, 1, ...); test accuracy at 10 / 50 / 100 features is reported
as mean, std and median over the splits next to the paper's numbers.  No new
split starts after ``--budget`` seconds (the run says how many were done).

Usage::

    python benchmarks/infinite_vs_random_features.py [--repeats 1] [--quick]
        [--parts rf,master,brodatz]
    python benchmarks/infinite_vs_random_features.py --parts rf --protocol paper
        [--splits 10] [--first-split 0] [--budget 3600] [--datasets ijcnn1]
        [--methods GrFL]

Timings are wall-clock on a shared 2-core machine: noisy.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC, LinearSVC
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table, timed  # noqa: E402

from kernlearn import InfiniteFeatureClassifier  # noqa: E402
from kernlearn.datasets import (  # noqa: E402
    DatasetNotFoundError,
    load_dataset,
    make_brodatz_patches,
)
from kernlearn.families import GaborFeatures, RandomFourierFeatures  # noqa: E402
from kernlearn.losses import SquaredHinge  # noqa: E402
from kernlearn.penalties import L1, GroupL1L2  # noqa: E402
from kernlearn.solvers import ADMM, GrFLFISTA  # noqa: E402
from kernlearn.solvers.grfl_newton import GrFLNewton  # noqa: E402
from kernlearn.solvers._dirty import DirtyProblem  # noqa: E402

warnings.filterwarnings("ignore", category=ConvergenceWarning)

# Gaussian widths sigma in exp(-||x - x'||^2 / (2 sigma^2)), and lambda_p.
SETTINGS = {
    "ijcnn1": dict(sigma=1.0, sigmas=[0.7, 1.0, 1.5, 2.0], lam=0.1,
                   features=[10, 50, 100], svc_n=10000, svc_C=10.0),
    "a9a": dict(sigma=3.0, sigmas=[2.0, 3.0, 4.0, 6.0], lam=0.1,
                features=[10, 50, 100, 500], svc_n=10000, svc_C=1.0),
}
# Paper 000, Table 4 (mean test accuracy in % over 10 random 70/30 splits).
PAPER_TABLE4 = {
    "ijcnn1": {"GrFL": {10: 92.06, 50: 97.05, 100: 97.97},
               "GrFL-M": {10: 91.96, 50: 96.97, 100: 98.02}},
    "a9a": {"GrFL": {10: 83.82, 50: 84.76, 100: 84.98, 500: 85.24},
            "GrFL-M": {10: 83.77, 50: 84.86, 100: 85.00, 500: 85.30}},
}
# Seconds allowed to any single GrFL path step (the 100 -> 500 step on a9a).
STEP_BUDGET = 420.0


def _dense(X):
    return X.toarray() if hasattr(X, "toarray") else np.asarray(X)


def _datasets(args):
    """``(name, settings, (Xtr, ytr, Xte, yte))`` of the requested sets that are present."""
    for name, cfg in SETTINGS.items():
        if name not in args.datasets.split(","):
            continue
        try:
            d = load_dataset(name)
            yield name, cfg, (d.data, d.target, d.data_test, d.target_test)
        except DatasetNotFoundError as exc:
            print(f"skip {name}: {exc}")


def _grfl_models(cfg, args):
    """GrFL (one width) and GrFL-M (widths sampled from a list), warm-startable.

    On the inputs as the files hold them (``standardize=False``), as the paper:
    the widths of ``SETTINGS`` are in those units (with the estimators' default
    ``standardize=True`` the same widths are far too narrow: ijcnn1 at 100
    features fell from 0.977 to 0.932).
    """
    common = dict(lambda_p=cfg["lam"], tol=0.0, warm_start=True, time_budget=STEP_BUDGET,
                  pricing_subsample=args.pricing_subsample, standardize=False,
                  random_state=0)
    return {
        "GrFL": InfiniteFeatureClassifier(
            RandomFourierFeatures(bandwidth=cfg["sigma"]), n_candidates=50, **common),
        "GrFL-M": InfiniteFeatureClassifier(
            RandomFourierFeatures(bandwidth=cfg["sigmas"]), n_candidates=200, **common),
    }


def run_paper_protocol(args):
    """Table 4 of paper 000: random 70/30 splits of train + test joined."""
    import scipy.sparse as sp

    rows = []
    methods = args.methods.split(",")
    for name, cfg, (Xa, ya, Xb, yb) in _datasets(args):
        X = _dense(sp.vstack([Xa, Xb]))  # same n_features in both files
        y = np.concatenate([ya, yb])
        feats = [k for k in cfg["features"] if k <= 100]
        acc = {m: {k: [] for k in feats} for m in methods}
        secs = {m: [] for m in methods}
        t_start = time.perf_counter()
        n_done = 0
        for seed in range(args.first_split, args.first_split + args.splits):
            if time.perf_counter() - t_start > args.budget:
                break
            perm = np.random.default_rng(seed).permutation(len(y))
            n_tr = int(0.7 * len(y))
            tr, te = perm[:n_tr], perm[n_tr:]
            for mname in methods:
                est = _grfl_models(cfg, args)[mname]
                t0 = time.perf_counter()
                for k in feats:  # one warm-started path 10 -> 50 -> 100
                    est.set_params(max_features=k).fit(X[tr], y[tr])
                    acc[mname][k].append(100.0 * est.score(X[te], y[te]))
                    print(f"{name} split {seed} {mname} k={k}: acc {acc[mname][k][-1]:.2f} "
                          f"({time.perf_counter() - t0:.0f}s)", flush=True)
                secs[mname].append(time.perf_counter() - t0)
            n_done += 1
        for mname in methods:
            for k in feats:
                a = np.array(acc[mname][k])
                if not len(a):
                    continue
                rows.append((name, f"{len(tr)} / {len(te)}", mname, k, len(a),
                             f"{a.mean():.2f} ± {a.std():.2f}", f"{np.median(a):.2f}",
                             PAPER_TABLE4[name][mname][k], f"{np.median(secs[mname]):.0f}"))
        print(f"{name}: {n_done} of {args.splits} splits done within the {args.budget:.0f} s "
              "budget", flush=True)
    return markdown_table(
        ["data", "train / test", "method", "k", "splits", "acc % mean ± std",
         "median", "paper (mean of 10)", "path s (median)"], rows)


def run_random_features(args):
    rows = []
    for name, cfg, (Xtr, ytr, Xte, yte) in _datasets(args):
        Xtr, Xte = _dense(Xtr), _dense(Xte)
        feats = cfg["features"][:2] if args.quick else cfg["features"]
        if args.max_features is not None:
            feats = [k for k in feats if k <= args.max_features]
        gamma = 1.0 / (2 * cfg["sigma"] ** 2)
        # exact RBF SVC on a subsample: the reference
        rng = np.random.default_rng(0)
        sub = rng.choice(len(ytr), min(cfg["svc_n"], len(ytr)), replace=False)
        svc, t_svc = timed(lambda: SVC(C=cfg["svc_C"], gamma=gamma).fit(Xtr[sub], ytr[sub]), 1)
        acc_svc = svc.score(Xte, yte)
        print(f"{name}: RBF SVC on {len(sub)} rows: acc {acc_svc:.4f} in {t_svc:.1f}s",
              flush=True)
        rows.append((name, "-", f"RBF SVC ({len(sub)} rows)", f"{svc.n_support_.sum()} SVs",
                     acc_svc, t_svc, "-", "-"))
        grfl = _grfl_models(cfg, args)
        t_path = {m: 0.0 for m in grfl}
        for k in feats:
            res = {}
            for mname, est in grfl.items():
                if mname == "GrFL-M" and k > 100:
                    continue  # one 500-feature path (GrFL) is enough for the budget
                t0 = time.perf_counter()
                est.set_params(max_features=k).fit(Xtr, ytr)
                t_path[mname] += time.perf_counter() - t0
                acc = est.score(Xte, yte)
                res[mname] = (acc, t_path[mname], est.n_iter_, len(est.features_))
                print(f"{name} k={k} {mname}: acc {acc:.4f} path time {t_path[mname]:.1f}s "
                      f"added {est.n_iter_} kept {len(est.features_)} ({est.stop_reason_})",
                      flush=True)
            anchors = {
                "RBFSampler+LinearSVC": lambda: make_pipeline(
                    RBFSampler(gamma=gamma, n_components=2 * k, random_state=0),
                    LinearSVC(C=1.0)),
                "Nystroem+LinearSVC": lambda: make_pipeline(
                    Nystroem(gamma=gamma, n_components=2 * k, random_state=0),
                    LinearSVC(C=1.0)),
            }
            for mname, make in anchors.items():
                est, t = timed(lambda: make().fit(Xtr, ytr), args.repeats)
                acc = est.score(Xte, yte)
                res[mname] = (acc, t, 2 * k, 2 * k)
                print(f"{name} k={k} {mname}: acc {acc:.4f} time {t:.1f}s", flush=True)
            for mname, (acc, t, added, kept) in res.items():
                r_rbf = acc / res["RBFSampler+LinearSVC"][0]
                r_nys = acc / res["Nystroem+LinearSVC"][0]
                cols = f"{kept} feats ({2 * kept} cols)" if mname.startswith("GrFL") \
                    else f"{kept} cols"
                rows.append((name, k, mname, cols, acc, t, r_rbf, r_nys))
    return markdown_table(
        ["data", "k", "method", "model size", "test acc", "train s",
         "acc / RBFSampler", "acc / Nystroem"], rows)


def _table3_problem(X, y, lam):
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    rng = np.random.default_rng(0)
    tr = rng.permutation(len(y))[: int(0.95 * len(y))]
    Phi = X[tr] / np.where(np.linalg.norm(X[tr], axis=0) > 0,
                           np.linalg.norm(X[tr], axis=0), 1.0)
    classes = np.unique(y)
    Y = np.where(y[tr][:, None] == classes, 1.0, -1.0)
    return DirtyProblem(Phi, Y, SquaredHinge(), L1(lam), None)


def run_master(args):
    rows = []
    sets = []
    try:
        wine = load_dataset("wine")
        Xw, yw = wine.data, wine.target
        sets += [("wine", Xw, yw, lam) for lam in (5.0, 0.1)]
    except DatasetNotFoundError as exc:
        print(f"skip wine: {exc}")
    try:
        mfeat = load_dataset("mfeat")
        Xm, ym = mfeat.data, mfeat.target
        sets += [("mfeat", Xm, ym, lam) for lam in (5.0, 1.0)]
    except DatasetNotFoundError as exc:
        print(f"skip mfeat: {exc}")
    for name, X, y, lam in sets:
        P = _table3_problem(X, y, lam)
        out = {}
        for sname, solver in [("FISTA", GrFLFISTA(tol=1e-3, max_iter=3000)),
                              ("ADMM", ADMM(tol=1e-3, max_iter=3000)),
                              ("Newton", GrFLNewton(tol=1e-3, max_iter=3000))]:
            with threadpool_limits(limits=1, user_api="blas"):
                # medians of --repeats runs on wine; one run on the slower mfeat
                reps = args.repeats if name == "wine" else 1
                r, t = timed(lambda: solver.solve(P), reps)
            out[sname] = (t, r.state["objective"], r.n_iter, r.converged)
            print(f"{name} lambda={lam} {sname}: {t:.2f}s obj {r.state['objective']:.4f} "
                  f"iters {r.n_iter} converged {r.converged}", flush=True)
        (tf, of, itf, cf), (ta, oa, ita, ca) = out["FISTA"], out["ADMM"]
        tn, on, itn, cn = out["Newton"]
        rows.append((name, f"{P.n}x{P.p}, T={P.T}", lam, tf, of, itf, cf, ta, oa, ita, ca,
                     tn, on, itn, cn, tf / ta, tn / ta))
    return markdown_table(
        ["data", "shape", "lambda", "FISTA s", "FISTA obj", "FISTA it", "FISTA conv",
         "ADMM s", "ADMM obj", "ADMM it", "ADMM conv", "Newton s", "Newton obj",
         "Newton it", "Newton conv", "time FISTA/ADMM", "time Newton/ADMM"], rows)


def _gabor_model(family, lam):
    """Gabor GrFL of sec. 6.2: k_r = 500, at most 60 features, on the raw patches.

    ``standardize=False``: the paper filters the patches as they are (and so
    does the fixed bank below); standardising each pixel separately distorts
    them (doc/grfl.md).
    """
    return InfiniteFeatureClassifier(family, max_features=60, n_candidates=500,
                                     lambda_p=lam, penalty="group_l1_l2",
                                     standardize=False, random_state=0)


def run_brodatz(args):
    try:
        imgs = load_dataset("brodatz").images
    except (DatasetNotFoundError, ImportError) as exc:
        print(f"skip brodatz: {exc}")
        return None
    rows = []
    n_test = 1000 if args.quick else 5000
    for n_train in ([100] if args.quick else [100, 300, 1000]):
        Xtr, ytr, Xte, yte = make_brodatz_patches(n_train, n_test, images=imgs,
                                                  random_state=0)
        fam = GaborFeatures(image_shape=(16, 16), filter_size=7, stride=2)
        for lam in (1.0, 5.0):
            t0 = time.perf_counter()
            clf = _gabor_model(fam, lam).fit(Xtr, ytr)
            t_g = time.perf_counter() - t0
            acc_g = clf.score(Xte, yte)
            # fixed bank of 81 filters, same loss, penalty and master
            t0 = time.perf_counter()
            f = fam.fit(Xtr)
            bank = f.grid(3)
            Z = f.columns(bank, Xtr)
            nrm = np.where(np.linalg.norm(Z, axis=0) > 0, np.linalg.norm(Z, axis=0), 1.0)
            Y = np.where(ytr[:, None] == np.arange(3), 1.0, -1.0)
            P = DirtyProblem(Z / nrm, Y, SquaredHinge(), GroupL1L2(lam), None)
            with threadpool_limits(limits=1, user_api="blas"):
                r = ADMM(tol=1e-3, max_iter=3000).solve(P)
            t_f = time.perf_counter() - t0
            U, _ = r.coef
            D = (f.columns(bank, Xte) / nrm) @ U + r.intercept
            acc_f = float(np.mean(np.argmax(D, axis=1) == yte))
            n_f = int(np.sum(np.abs(U).max(axis=1) > 0))
            print(f"brodatz n/class={n_train} lambda={lam}: Gabor GrFL acc {acc_g:.4f} "
                  f"({len(clf.features_)} feats, {t_g:.1f}s) | fixed 81 acc {acc_f:.4f} "
                  f"({n_f} feats, {t_f:.1f}s)", flush=True)
            rows.append((n_train, lam, acc_g, len(clf.features_), t_g, acc_f, n_f, t_f,
                         acc_g / acc_f))
    return markdown_table(
        ["train/class", "lambda", "GrFL acc", "GrFL feats", "GrFL s", "fixed-81 acc",
         "fixed feats", "fixed s", "acc ratio"], rows)


def _parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--parts", default="rf,master,brodatz")
    # (all rows by default, as the paper prices; "auto" or a row count to speed up)
    ap.add_argument("--pricing-subsample", default=None,
                    type=lambda v: {"auto": "auto", "None": None}.get(v) or int(v))
    ap.add_argument("--max-features", type=int, default=None)
    ap.add_argument("--datasets", default="ijcnn1,a9a")
    ap.add_argument("--protocol", choices=["official", "paper"], default="official",
                    help="official train/test split, or the paper's 70/30 random splits")
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--first-split", type=int, default=0,
                    help="seed of the first split (to spread the splits over runs)")
    ap.add_argument("--budget", type=float, default=np.inf,
                    help="seconds after which no new split starts (--protocol paper)")
    ap.add_argument("--methods", default="GrFL", help="GrFL and/or GrFL-M (--protocol paper)")
    return ap


def main():
    args = _parser().parse_args()
    parts = args.parts.split(",")
    if "master" in parts:
        print("\n## ADMM vs FISTA on the restricted master (Table 3)\n")
        print(run_master(args), flush=True)
    if "brodatz" in parts:
        table = run_brodatz(args)
        if table:
            print("\n## Brodatz textures, Gabor GrFL vs fixed bank (sec. 6.2)\n")
            print(table, flush=True)
    if "rf" in parts and args.protocol == "paper":
        print("\n## Paper 000 Table 4 protocol (random 70/30 splits)\n")
        print(run_paper_protocol(args), flush=True)
    elif "rf" in parts:
        print("\n## GrFL vs random features\n")
        print(run_random_features(args), flush=True)


if __name__ == "__main__":
    main()
