"""Multitask MKL (paper 004) on School: the paper's protocol, baselines, scaling.

One run fits, on the same random splits of School (139 tasks; ``--n-train``
training points per task, or ``--fraction`` of each task; the rest is test):

* MK-MTFL (p = 2, 6, 8.67) and MK-MTSFL (q = 1.01, 1.5, 1.99) on one linear
  and six Gaussian kernels (``--sigma2``: parameters read as sigma^2, i.e.
  gamma = 1/(2 sigma^2); otherwise as gamma);
* the baselines of the paper: one kernel ridge per task (the kernel and C
  chosen on validation data), one l1-MKL per task, MTSFL (linear kernel) and
  MTSFL on the average kernel;
* scikit-learn's nearest applicable one-liner: ``MultiTaskElasticNet`` needs
  every task observed on the same rows, which School's tasks are not, so the
  anchor is ``ElasticNetCV`` on the pooled data with one-hot task intercepts;
* optionally (``--featurewise``) MK-MTFL with the 7 kernels on every input
  feature (Table 2);
* our extension ``shared=True`` (``--shared-p``, ``--shared-q``): MK-MTFL /
  MK-MTSFL / MTSFL with a component common to all tasks, in the same mixed
  norm (not in the paper).

C is chosen from ``--C`` by 3-fold CV within each task (``--folds 3``, the
paper's protocol; ``--folds 1``: one validation third), on folds drawn once
per split and shared by all methods, by the held-out mean squared error
(``--cv-score``), then refitted on the whole training set with the kernel
factors of the CV forgotten (cold fit times).  The metric is the mean over
tasks of 1 - MSE/Var(y_test) (``r2_score`` per task, the paper's), in percent,
averaged over ``--splits`` splits; the pooled 1 - MSE/Var over all test
points is printed next to it.  ``--json`` keeps per-split results (runs
over disjoint ``--first-split`` ranges can go in parallel; ``--summarise``
merges them).  ``--scaling`` times MK-MTFL / MK-MTSFL fits against the
number of tasks and kernels (Fig. 1) and compares mirror descent with the
alternating minimisation of MTSFL for one kernel.  ``--defaults`` fits the
estimator at its defaults, untuned, next to the anchor.  ``--many-tasks 50 100
400`` times the multitask classifiers on that many small binary tasks cut from
School, with the per-task SVM duals compiled and as before (one ``SVC`` per
task), next to ``SVC()`` per task and pooled.  ``--sizes`` compares
MTSFL, per-task ridge and the pooled elastic net at several training sizes.
"""

import argparse
import json
import re
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import ElasticNetCV
from sklearn.metrics import r2_score
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402

from kernlearn import MultitaskMKLRegressor  # noqa: E402
from kernlearn.datasets import DatasetNotFoundError, load_dataset  # noqa: E402
from kernlearn.kernels import linear_kernel, rbf_kernel  # noqa: E402

PAPER = {  # Table 1 / Table 2 of the paper (School), for reference
    "MK-MTSFL (best, Table 1)": 14.02,
    "MK-MTFL p=8.67 feature-wise (Table 2)": 14.35,
    "MK-MTFL p=6 feature-wise (Table 2)": 13.68,
    "MK-MTFL p=2 feature-wise (Table 2)": 10.95,
}


def split(Xs, ys, rng, n_train=None, fraction=None):
    Xtr, ytr, ttr, Xte, yte, tte = [], [], [], [], [], []
    for t, (X, y) in enumerate(zip(Xs, ys)):
        perm = rng.permutation(len(y))
        n = n_train if n_train else max(2, int(round(fraction * len(y))))
        tr, te = perm[:n], perm[n:]
        Xtr.append(X[tr]), ytr.append(y[tr]), ttr.append(np.full(len(tr), t))
        Xte.append(X[te]), yte.append(y[te]), tte.append(np.full(len(te), t))
    cat = np.concatenate
    return np.vstack(Xtr), cat(ytr), cat(ttr), np.vstack(Xte), cat(yte), cat(tte)


def explained_variance(y, pred, tasks):
    """Mean over tasks of 1 - MSE/Var (percent): the paper's metric."""
    return 100 * np.mean([r2_score(y[tasks == t], pred[tasks == t])
                          for t in np.unique(tasks)])


def pooled_explained_variance(y, pred):
    """1 - MSE/Var over all test points pooled (percent).

    The metric of Argyriou et al. (2008) and Bakker & Heskes: the variance
    includes the between-school spread of the means, so it is larger than
    the per-task average of ``explained_variance`` for the same predictions.
    """
    return 100 * r2_score(y, pred)


def gaussians(params, sigma2, cols=None):
    out = []
    for g in params:
        gamma = 0.5 / g if sigma2 else g
        out.append(("rbf", {"gamma": gamma}) if cols is None
                   else ("rbf", {"gamma": gamma}, cols))
    return out


class AverageKernel:
    """Picklable callable: the average of one linear and several Gaussian kernels."""

    def __init__(self, gammas):
        self.gammas = gammas

    def __call__(self, X, Y):
        K = linear_kernel(X, Y) / max(X.shape[1], 1)  # unit mean diagonal-ish
        for g in self.gammas:
            K = K + rbf_kernel(X, Y, gamma=g)
        return K / (1 + len(self.gammas))


def cv_folds(t, rng):
    """Fold (0..2) of every training row: each task split in thirds.

    Drawn once per split so that every method is tuned on the same folds.
    """
    fold = np.empty(len(t), dtype=int)
    for task in np.unique(t):
        idx = np.flatnonzero(t == task)
        fold[idx] = rng.permutation(len(idx)) % 3
    return fold


def select_C(make, Cs, X, y, t, folds, fold, score="mse"):
    """Choose C by validation (hold-out third, or 3-fold per task); (C, score).

    ``score="mse"`` ranks C by the mean squared error over all held-out rows
    (as ``ElasticNetCV`` does for the anchor); ``"r2"`` by the mean per-task
    R^2 of each fold, which with 5 held-out points per task is dominated by
    the tasks whose few validation targets happen to have a small variance.
    """
    scores = []
    for C in Cs:
        sse, r2 = 0.0, []
        for f in range(max(folds, 1)):
            tr, va = fold != f, fold == f
            est = make(C).fit(X[tr], y[tr], task_index=t[tr])
            pred = est.predict(X[va], task_index=t[va])
            sse += float(((y[va] - pred) ** 2).sum())
            r2.append(explained_variance(y[va], pred, t[va]))
        scores.append(-sse if score == "mse" else np.mean(r2))
    return Cs[int(np.argmax(scores))], max(scores)


def anchor_elasticnet(Xtr, ytr, ttr, Xte, tte, T):
    def design(X, t):
        onehot = np.zeros((len(t), T))
        onehot[np.arange(len(t)), t] = 1.0
        return np.hstack([X, onehot])

    mu, sd = Xtr.mean(0), Xtr.std(0)
    sd[sd == 0] = 1
    est = ElasticNetCV(l1_ratio=[0.1, 0.5, 0.9, 1.0], cv=3, n_jobs=1, max_iter=5000)
    est.fit(design((Xtr - mu) / sd, ttr), ytr)
    return est.predict(design((Xte - mu) / sd, tte))


def protocol_methods(args, Xs):
    """The methods of one protocol run: name -> estimator keyword arguments."""
    kernels = [("linear", {})] + gaussians(args.gauss, args.sigma2)
    gammas = [0.5 / g if args.sigma2 else g for g in args.gauss]
    d = Xs[0].shape[1]
    methods = {}
    for p in args.p:
        methods[f"MK-MTFL p={p:g}"] = dict(kernels=kernels, formulation="mtfl", p=p,
                                           shared=False)
    for q in args.q:
        methods[f"MK-MTSFL q={q:g}"] = dict(kernels=kernels, formulation="mtsfl", q=q,
                                            max_rank=args.max_rank, shared=False)
    for p in args.shared_p:
        methods[f"MK-MTFL p={p:g} shared"] = dict(kernels=kernels, formulation="mtfl", p=p,
                                                  max_rank=args.max_rank, shared=True)
    for q in args.shared_q:
        methods[f"MK-MTSFL q={q:g} shared"] = dict(kernels=kernels, formulation="mtsfl",
                                                   q=q, max_rank=args.max_rank, shared=True)
    if args.shared_q:
        methods["MTSFL (linear) shared"] = dict(kernels=["linear"], formulation="mtsfl",
                                                shared=True)
    methods["per-task MKL"] = dict(kernels=kernels, formulation="mkl")
    methods["MTSFL (linear)"] = dict(kernels=["linear"], formulation="mtsfl", shared=False)
    methods["MTSFL avg kernel"] = dict(kernels=[AverageKernel(gammas)],
                                       formulation="mtsfl", max_rank=args.max_rank,
                                       shared=False)
    if args.featurewise:
        fw = [spec for f in range(d) if np.ptp(np.vstack(Xs)[:, f]) > 0
              for spec in [("linear", {}, [f])] + gaussians(args.gauss, args.sigma2, [f])]
        for p in args.p:
            methods[f"MK-MTFL p={p:g} feature-wise"] = dict(kernels=fw, formulation="mtfl",
                                                          p=p, shared=False)
    if args.only:
        methods = {k: v for k, v in methods.items() if re.search(args.only, k)}
    return kernels, methods


def run_split(args, Xs, ys, s, kernels, methods):
    """One random split: tune every method by CV, refit, score; a dict of records."""
    rng = np.random.default_rng(s)
    Xtr, ytr, ttr, Xte, yte, tte = split(Xs, ys, rng, args.n_train, args.fraction)
    fold = cv_folds(ttr, rng)
    out = {}

    def record(name, est_or_pred, C, t_fit, t_cv, extra=""):
        pred = (est_or_pred if isinstance(est_or_pred, np.ndarray)
                else est_or_pred.predict(Xte, task_index=tte))
        out[name] = dict(ev=explained_variance(yte, pred, tte),
                         pooled=pooled_explained_variance(yte, pred),
                         fit=t_fit, cv=t_cv, C=C)
        print(f"split {s} {name}: C={C} EV={out[name]['ev']:.2f} "
              f"pooled={out[name]['pooled']:.2f} fit={t_fit:.2f}s cv={t_cv:.1f}s {extra}",
              flush=True)

    for name, kw in methods.items():
        def make(C, kw=kw):
            return MultitaskMKLRegressor(C=C, max_iter=args.max_iter, **kw)
        t0 = time.perf_counter()
        C, _ = select_C(make, args.C, Xtr, ytr, ttr, args.folds, fold, args.cv_score)
        t_cv = time.perf_counter() - t0
        # a cold fit: every fit owns its kernel factors (nothing left from the CV)
        t0 = time.perf_counter()
        est = make(C).fit(Xtr, ytr, task_index=ttr)
        record(name, est, C, time.perf_counter() - t0, t_cv, f"iter={est.n_iter_}")
    # per-task KRR: kernel and C chosen together on validation data
    name = "per-task KRR (kernel by validation)"
    if not args.only or re.search(args.only, name):
        best, t0 = (-np.inf, None), time.perf_counter()
        for spec in kernels:
            def make(C, spec=spec):
                return MultitaskMKLRegressor(kernels=[spec], formulation="independent",
                                             C=C)
            C, val = select_C(make, args.C, Xtr, ytr, ttr, args.folds, fold,
                              args.cv_score)
            if val > best[0]:
                best = (val, (spec, C))
        spec, C = best[1]
        t_cv = time.perf_counter() - t0
        t0 = time.perf_counter()
        est = MultitaskMKLRegressor(kernels=[spec], formulation="independent", C=C)
        est.fit(Xtr, ytr, task_index=ttr)
        record(name, est, C, time.perf_counter() - t0, t_cv, f"kernel={spec}")
    name = ANCHOR
    t0 = time.perf_counter()
    pred = anchor_elasticnet(Xtr, ytr, ttr, Xte, tte, len(Xs))
    record(name, pred, None, time.perf_counter() - t0, 0.0)
    return out


ANCHOR = "ElasticNetCV pooled + task intercepts (sklearn)"


def summarise(per_split):
    """Markdown table over splits from ``{split: {method: record}}``.

    Next to each method's mean, its paired difference from the elastic-net
    anchor on the same splits (mean ± sd of the per-split differences, and
    on how many splits the method is ahead): the split-to-split spread of
    School is larger than the differences between methods.
    """
    splits = sorted(per_split, key=int)
    names = list(dict.fromkeys(n for s in splits for n in per_split[s]))
    rows = []
    for name in names:
        have = [s for s in splits if name in per_split[s]]
        recs = [per_split[s][name] for s in have]
        ev = np.array([r["ev"] for r in recs])
        pooled = np.array([r["pooled"] for r in recs])
        paired = [(per_split[s][name]["ev"] - per_split[s][ANCHOR]["ev"])
                  for s in have if ANCHOR in per_split[s]]
        diff = (f"{np.mean(paired):+.2f} ± {np.std(paired):.2f} "
                f"({sum(d > 0 for d in paired)}/{len(paired)})"
                if paired and name != ANCHOR else "-")
        rows.append([name, len(recs), f"{ev.mean():.2f} ± {ev.std():.2f}", diff,
                     f"{pooled.mean():.2f} ± {pooled.std():.2f}",
                     f"{statistics.median(r['fit'] for r in recs):.2f}",
                     f"{statistics.median(r['cv'] for r in recs):.0f}",
                     ",".join(f"{r['C']:g}" for r in recs if r["C"] is not None) or "-"])
    return markdown_table(
        ["method", "splits", "EV % per task (paper's metric), mean ± sd",
         "minus the elastic net, paired (splits ahead)", "EV % pooled",
         "fit s (median, cold)", "CV s (median)", "C chosen per split"],
        rows)


def run_protocol(args, Xs, ys):
    kernels, methods = protocol_methods(args, Xs)
    per_split = {}
    if args.json and Path(args.json).exists():
        per_split = json.loads(Path(args.json).read_text())
    for s in range(args.first_split, args.first_split + args.splits):
        if str(s) in per_split:
            continue
        t0 = time.perf_counter()
        per_split[str(s)] = run_split(args, Xs, ys, s, kernels, methods)
        print(f"split {s} done in {time.perf_counter() - t0:.0f}s", flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(per_split, indent=1))
    print()
    print(summarise(per_split))
    print()
    print(markdown_table(["paper (School)", "explained variance %"],
                         [[k, v] for k, v in PAPER.items()]))


def run_sizes(args, Xs, ys):
    """MTSFL (linear), per-task ridge and the pooled elastic net vs training size.

    Why the pooled elastic net wins at 15 points per school: it fits one
    predictor for all schools (plus an intercept each), while MTSFL shares
    only a subspace and still fits every school's coefficients from its own
    15 points.  With more points per school the gap should close.
    """
    rows = []
    for size in args.sizes:
        frac = size.startswith("f")
        res = {}
        for s in range(args.first_split, args.first_split + args.splits):
            rng = np.random.default_rng(s)
            Xtr, ytr, ttr, Xte, yte, tte = split(
                Xs, ys, rng, None if frac else int(size), float(size[1:]) if frac else None)
            fold = cv_folds(ttr, rng)
            for name, kw in [("MTSFL (linear)", dict(kernels=["linear"], formulation="mtsfl",
                                                      max_iter=args.max_iter, shared=False)),
                             ("per-task linear ridge", dict(kernels=["linear"],
                                                            formulation="independent"))]:
                def make(C, kw=kw):
                    return MultitaskMKLRegressor(C=C, **kw)
                C, _ = select_C(make, args.C, Xtr, ytr, ttr, args.folds, fold, args.cv_score)
                pred = make(C).fit(Xtr, ytr, task_index=ttr).predict(Xte, task_index=tte)
                res.setdefault(name, []).append(
                    (explained_variance(yte, pred, tte), pooled_explained_variance(yte, pred)))
            pred = anchor_elasticnet(Xtr, ytr, ttr, Xte, tte, len(Xs))
            res.setdefault("ElasticNetCV pooled", []).append(
                (explained_variance(yte, pred, tte), pooled_explained_variance(yte, pred)))
        for name, v in res.items():
            v = np.array(v)
            rows.append([f"{float(size[1:]):.0%} of each task" if frac else f"{size} per task",
                         len(Xtr), name, f"{v[:, 0].mean():.2f} ± {v[:, 0].std():.2f}",
                         f"{v[:, 1].mean():.2f} ± {v[:, 1].std():.2f}"])
            print(rows[-1], flush=True)
    print()
    print(markdown_table(["training set", "n", "method", "EV % per task", "EV % pooled"],
                         rows))


def run_defaults(args, Xs, ys):
    """``MultitaskMKLRegressor`` at its defaults against the elastic-net anchor.

    No tuning at all on our side (the anchor cross-validates its own alpha
    and l1 ratio): what a user gets from one line, on raw School features,
    the default (the paper's model, ``shared=False``) next to ``shared=True``.
    """
    configs = {"MultitaskMKLRegressor() (shared=False)": {},
               "MultitaskMKLRegressor(shared=True)": dict(shared=True),
               "MultitaskMKLRegressor(formulation='mtsfl')": dict(formulation="mtsfl"),
               "MultitaskMKLRegressor(formulation='mtsfl', shared=True)":
                   dict(formulation="mtsfl", shared=True)}
    res = {}
    for s in range(args.first_split, args.first_split + args.splits):
        rng = np.random.default_rng(s)
        Xtr, ytr, ttr, Xte, yte, tte = split(Xs, ys, rng, args.n_train, args.fraction)
        t0 = time.perf_counter()
        ref = anchor_elasticnet(Xtr, ytr, ttr, Xte, tte, len(Xs))
        t_ref = time.perf_counter() - t0
        ev_ref = explained_variance(yte, ref, tte)
        res.setdefault(ANCHOR, []).append((ev_ref, 0.0, t_ref, 1.0))
        for name, kw in configs.items():
            t0 = time.perf_counter()
            est = MultitaskMKLRegressor(**kw).fit(Xtr, ytr, task_index=ttr)
            t = time.perf_counter() - t0
            ev = explained_variance(yte, est.predict(Xte, task_index=tte), tte)
            res.setdefault(name, []).append((ev, ev - ev_ref, t, t / t_ref))
            print(f"split {s} {name}: EV={ev:.2f} fit={t:.2f}s ({t / t_ref:.1f}x)",
                  flush=True)
    rows = []
    for name, v in res.items():
        v = np.array(v)
        rows.append([name, len(v), f"{v[:, 0].mean():.2f} ± {v[:, 0].std():.2f}",
                     "-" if name == ANCHOR else
                     f"{v[:, 1].mean():+.2f} ({int((v[:, 1] > 0).sum())}/{len(v)})",
                     f"{np.median(v[:, 2]):.2f}",
                     "-" if name == ANCHOR else f"{np.median(v[:, 3]):.1f}"])
    print()
    print(markdown_table(["model (no tuning)", "splits", "EV % per task, mean ± sd",
                          "minus the elastic net, paired (splits ahead)",
                          "fit s (median)", "time / elastic net (median)"], rows))


def synthetic_tasks(related, seed, T=40, m=28, d=5):
    """Synthetic multitask regression: ``m`` training and ``m`` test rows per task.

    ``related``: one nonlinear function common to all tasks plus a small
    task-specific linear part and a level per task; otherwise every task its
    own random function (unrelated tasks).  Noise sd 0.3.
    """
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(T), 2 * m)
    X = rng.normal(size=(len(task), d))
    if related:
        w, a = rng.normal(size=d), rng.normal(size=d)
        f = X @ w / np.sqrt(d) + np.sin(X @ a / np.sqrt(d) * 2)
        f += (X * (0.3 * rng.normal(size=(T, d)))[task]).sum(1) + rng.normal(size=T)[task]
    else:
        W, A = rng.normal(size=(T, d)), rng.normal(size=(T, d))
        f = ((X * W[task]).sum(1) / np.sqrt(d) + np.sin((X * A[task]).sum(1) * 2 / np.sqrt(d))
             + rng.normal(size=T)[task])
    y = f + 0.3 * rng.normal(size=len(task))
    train = np.tile(np.r_[np.ones(m, bool), np.zeros(m, bool)], T)
    return X[train], y[train], task[train], X[~train], y[~train], task[~train]


def per_task_krr(Xtr, ytr, ttr, Xte, tte, gammas):
    """Kernel ridge (RBF) per task, alpha and gamma by ``GridSearchCV`` (3 folds)."""
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV
    from sklearn.preprocessing import StandardScaler

    mu, sd = Xtr.mean(0), Xtr.std(0)
    sd[sd == 0] = 1
    pred = np.zeros(len(tte))
    grid = {"regressor__alpha": list(np.logspace(-3, 1, 5)), "regressor__gamma": gammas}
    for t in np.unique(ttr):
        tr, te = ttr == t, tte == t
        krr = TransformedTargetRegressor(KernelRidge(kernel="rbf"),
                                         transformer=StandardScaler())  # free level
        search = GridSearchCV(krr, grid, cv=3).fit((Xtr[tr] - mu) / sd, ytr[tr])
        pred[te] = search.predict((Xte[te] - mu) / sd)
    return pred


def pooled_krr(Xtr, ytr, ttr, Xte, tte, gammas):
    """One kernel ridge (RBF) on the pooled rows plus one-hot task columns."""
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV
    from sklearn.preprocessing import StandardScaler

    T = int(max(ttr.max(), tte.max())) + 1
    mu, sd = Xtr.mean(0), Xtr.std(0)
    sd[sd == 0] = 1

    def design(X, t):
        return np.hstack([(X - mu) / sd, np.eye(T)[t]])

    grid = {"regressor__alpha": list(np.logspace(-3, 1, 5)), "regressor__gamma": gammas}
    krr = TransformedTargetRegressor(KernelRidge(kernel="rbf"), transformer=StandardScaler())
    return GridSearchCV(krr, grid, cv=3).fit(design(Xtr, ttr), ytr).predict(design(Xte, tte))


def run_selection(args, Xs, ys):
    """Model selection (issue: multitask MKL that pays off, inside model selection).

    On School (the paper's 15 training points per school, ``--splits``
    splits) and on synthetic related / unrelated tasks (40 tasks of 28
    training rows, ``--splits`` seeds): ``MultitaskMKLRegressorCV(kernels)``
    at its defaults (kernel weights, C and a shared linear component learned
    by the closed-form leave-one-out error), ``MultitaskMKLRegressor`` at its
    defaults and with ``C="auto"`` (leave-one-out weights, no shared part),
    the CV estimator with the paper's weights (``kernel_selection=
    "objective"``: 3 folds, ``cv="loo"``; MK-MTSFL; shared components),
    against per-task kernel ridge with ``GridSearchCV`` over alpha and gamma,
    a pooled kernel ridge with task one-hot columns and the pooled elastic
    net.  Metric: mean per-task R^2 on the test rows (School: the paper's
    explained variance).
    """
    from kernlearn import MultitaskMKLRegressorCV

    sets = ["related", "unrelated"] + (["School"] if Xs is not None else [])
    if args.only_set:
        sets = [n for n in sets if re.search(args.only_set, n)]
    rows = []
    for name in sets:
        res = {}
        for s in range(args.first_split, args.first_split + args.splits):
            if name == "School":
                data = split(Xs, ys, np.random.default_rng(s), args.n_train, args.fraction)
            else:
                data = synthetic_tasks(name == "related", s)
            Xtr, ytr, ttr, Xte, yte, tte = data
            d = Xtr.shape[1]
            gammas = [g / d for g in (0.03, 0.1, 0.3, 1.0, 3.0, 10.0)]
            kernels = ["linear"] + [("rbf", {"gamma": g}) for g in gammas]
            Cs = [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]
            methods = {
                "per-task KRR, GridSearchCV(alpha, gamma)":
                    lambda: per_task_krr(Xtr, ytr, ttr, Xte, tte, gammas),
                "pooled KRR + task one-hot, GridSearchCV":
                    lambda: pooled_krr(Xtr, ytr, ttr, Xte, tte, gammas),
                "pooled ElasticNetCV + task intercepts":
                    lambda: anchor_elasticnet(Xtr, ytr, ttr, Xte, tte, int(ttr.max()) + 1),
                "MultitaskMKLRegressor(kernels) (defaults)":
                    MultitaskMKLRegressor(kernels),
                "MultitaskMKLRegressorCV(kernels) (defaults: LOO weights and C)":
                    MultitaskMKLRegressorCV(kernels),
                "MultitaskMKLRegressor(kernels, C='auto')":
                    MultitaskMKLRegressor(kernels, C="auto"),
                "MultitaskMKLRegressorCV(kernels, kernel_selection='objective'), 3 folds":
                    MultitaskMKLRegressorCV(kernels, Cs=Cs, cv=3,
                                            kernel_selection="objective"),
                "MultitaskMKLRegressorCV(kernels, kernel_selection='objective', cv='loo')":
                    MultitaskMKLRegressorCV(kernels, Cs=Cs, cv="loo",
                                            kernel_selection="objective"),
                "MultitaskMKLRegressorCV(kernels, formulation='mtsfl')":
                    MultitaskMKLRegressorCV(kernels, Cs=Cs, cv=3, formulation="mtsfl",
                                            kernel_selection="objective"),
                "MultitaskMKLRegressorCV(kernels, shared=True)":
                    MultitaskMKLRegressorCV(kernels, Cs=Cs, cv=3, shared=True,
                                            kernel_selection="objective"),
            }
            if args.only:
                methods = {k: v for k, v in methods.items() if re.search(args.only, k)}
            for method, est in methods.items():
                t0 = time.perf_counter()
                if callable(est) and not hasattr(est, "fit"):
                    pred = est()
                else:
                    pred = est.fit(Xtr, ytr, task_index=ttr).predict(Xte, task_index=tte)
                t = time.perf_counter() - t0
                r2 = explained_variance(yte, pred, tte)
                C = getattr(est, "C_", None)
                res.setdefault(method, []).append((r2, t))
                kw = getattr(est, "kernel_weights_", None)
                print(f"{name} split {s} {method}: R2 per task {r2:.2f} "
                      f"({t:.1f}s){'' if C is None else f' C_={C:g}'}"
                      f"{'' if kw is None else f' weights={np.round(kw, 2).tolist()}'}",
                      flush=True)
        base = np.array([v[0] for v in res.get("per-task KRR, GridSearchCV(alpha, gamma)",
                                               [])])
        for method, v in res.items():
            v = np.array(v)
            diff = (f"{(v[:, 0] - base).mean():+.2f} ({int((v[:, 0] > base).sum())}/"
                    f"{len(v)})" if len(base) == len(v) else "-")
            rows.append([name, method, len(v), f"{v[:, 0].mean():.2f} ± {v[:, 0].std():.2f}",
                         diff, f"{np.median(v[:, 1]):.1f}"])
    print()
    print(markdown_table(["data", "model", "splits", "R^2 % per task, mean ± sd",
                          "minus per-task KRR, paired (splits ahead)",
                          "fit + selection s (median)"], rows))


def run_scaling(args, Xs, ys):
    rng = np.random.default_rng(0)
    Xtr, ytr, ttr, *_ = split(Xs, ys, rng, args.n_train, args.fraction)
    kernels = [("linear", {})] + gaussians(args.gauss, args.sigma2)
    rows = []
    for T in (10, 20, 40, 80, 139):
        keep = ttr < T
        for name, kw in [("MK-MTFL p=2", dict(formulation="mtfl", p=2.0, shared=False)),
                         ("MK-MTFL p=6", dict(formulation="mtfl", p=6.0, shared=False)),
                         ("MK-MTSFL q=1.5", dict(formulation="mtsfl", q=1.5,
                                                 max_rank=args.max_rank, shared=False)),
                         ("MK-MTFL p=2 shared", dict(formulation="mtfl", p=2.0,
                                                     max_rank=args.max_rank, shared=True)),
                         ("MK-MTSFL q=1.5 shared", dict(formulation="mtsfl", q=1.5,
                                                        max_rank=args.max_rank,
                                                        shared=True))]:
            if args.only and not re.search(args.only, name):
                continue
            ts = []
            for _ in range(args.repeats):
                est = MultitaskMKLRegressor(kernels=kernels, C=1.0,
                                            max_iter=args.max_iter, **kw)
                t0 = time.perf_counter()
                est.fit(Xtr[keep], ytr[keep], task_index=ttr[keep])
                ts.append(time.perf_counter() - t0)
            rows.append([name, T, "7", f"{statistics.median(ts):.2f}",
                         f"{statistics.median(ts) / T * 1000:.1f}", est.n_iter_])
            print(rows[-1], flush=True)
    d = Xs[0].shape[1]
    for n_feat in (4, 8, 16, 27) if not args.only else ():
        fw = [spec for f in range(n_feat)
              for spec in [("linear", {}, [f])] + gaussians(args.gauss, args.sigma2, [f])]
        ts = []
        for _ in range(args.repeats):
            est = MultitaskMKLRegressor(kernels=fw, C=1.0, p=6.0, max_iter=args.max_iter,
                                        shared=False)
            t0 = time.perf_counter()
            est.fit(Xtr, ytr, task_index=ttr)
            ts.append(time.perf_counter() - t0)
        rows.append(["MK-MTFL p=6 feature-wise", 139, len(fw),
                     f"{statistics.median(ts):.2f}", "-", est.n_iter_])
        print(rows[-1], flush=True)
    del d
    print()
    print(markdown_table(["method", "tasks", "kernels", "fit s (median)",
                          "ms per task", "MD iterations"], rows))
    # mirror descent vs alternating minimisation for one kernel (Fig. 1, right)
    from kernlearn.methods import mtmkl as M
    for T in (20, 139) if not args.only else ():
        keep = ttr < T
        rows_t = [np.flatnonzero(ttr[keep] == t) for t in range(T)]
        kern = M.TaskKernels(["linear"]).fit(Xtr[keep])
        blocks = M.TaskBuckets(rows_t)
        A = M.kernel_factor(kern.full(0))
        y_b = blocks.gather(ytr[keep])
        # (the paper's step rule, as in its Fig. 1 and the recorded table; the
        # default step="adaptive" gets there in fewer iterations)
        md = M.solve_mtsfl(blocks, [A], y_b, "square", 1.0, q=2 - 1e-9, max_iter=25,
                           tol=0, step="nemirovski")
        alt = M.solve_mtsfl_altmin(blocks, A, y_b, "square", 1.0, max_iter=25, tol=0)
        hm = md["history"].as_dict()["best"]
        ha = alt["history"].as_dict()["objective"]
        print(f"\nMTSFL (linear kernel, T={T}), objective after l iterations:")
        print(markdown_table(["l", "mirror descent (best)", "alternating minimisation"],
                             [[l, f"{hm[l - 1]:.6g}", f"{ha[l - 1]:.6g}"]
                              for l in (1, 2, 5, 10, 15, 25) if l <= min(len(hm), len(ha))]))


def many_school_tasks(Xs, ys, T, m, rng):
    """``T`` binary tasks of ``m`` training and ``m`` test rows cut from School.

    Each task is a disjoint chunk of ``2m`` rows of one school (first half
    training, second half test), the schools taken in turn; its label is
    whether a pupil's score is above the school's median.  Chunks whose
    training half has one class are skipped.
    """
    perms = [rng.permutation(len(y)) for y in ys]
    meds = [np.median(y) for y in ys]
    offset = [0] * len(ys)
    parts, k = {"tr": [], "te": []}, 0
    while k < T:
        grew = False
        for s in rng.permutation(len(ys)):
            while offset[s] + 2 * m <= len(ys[s]) and k < T:
                chunk = perms[s][offset[s]:offset[s] + 2 * m]
                offset[s] += 2 * m
                tr, te = chunk[:m], chunk[m:]
                if len(np.unique(ys[s][tr] > meds[s])) < 2:
                    continue
                for key, r in (("tr", tr), ("te", te)):
                    parts[key].append((Xs[s][r], (ys[s][r] > meds[s]).astype(int),
                                       ys[s][r], np.full(m, k)))
                k, grew = k + 1, True
                break
        if not grew:
            raise ValueError(f"School has too few rows for {T} tasks of {2 * m} rows")
    return [tuple(np.concatenate(c) if c[0].ndim == 1 else np.vstack(c)
                  for c in zip(*parts[key])) for key in ("tr", "te")]


def run_many_tasks(args, Xs, ys):
    """Fit times with many small tasks: the compiled per-task SVM duals vs before.

    ``before``: the same fit with every bucket's SVM duals solved by one
    scikit-learn ``SVC`` per task, as the solvers did until the seventeenth
    pass (:func:`kernlearn.methods.mtmkl._smo.libsvm_buckets`).
    """
    from unittest import mock

    from sklearn.svm import SVC

    from kernlearn import MultitaskMKLClassifier
    from kernlearn.methods.mtmkl import _smo

    def timed(fit):
        walls, cpus = [], []
        for _ in range(args.repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            out = fit()
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        return out, statistics.median(walls), statistics.median(cpus)

    rows = []
    for T in args.many_tasks:
        rng = np.random.default_rng(0)
        (Xtr, ctr, ytr, ttr), (Xte, cte, _, tte) = many_school_tasks(
            Xs, ys, T, args.rows_per_task, rng)

        def per_task_svc():
            pred = np.zeros(len(cte), int)
            for t in range(T):
                est = SVC().fit(Xtr[ttr == t], ctr[ttr == t])
                pred[tte == t] = est.predict(Xte[tte == t])
            return pred

        for name, kw in [("MK-MTSFL classifier", dict(formulation="mtsfl")),
                         ("MK-MTFL classifier (default)", {})]:
            fits = {}
            for when in ("after", "before"):
                def fit(kw=kw, when=when):
                    est = MultitaskMKLClassifier(max_iter=args.max_iter, **kw)
                    if when == "after":
                        return est.fit(Xtr, ctr, task_index=ttr)
                    with mock.patch.object(_smo, "smo_buckets", _smo.libsvm_buckets):
                        return est.fit(Xtr, ctr, task_index=ttr)
                est, wall, cpu = timed(fit)
                fits[when] = est
                acc = 100 * np.mean(est.predict(Xte, task_index=tte) == cte)
                rows.append([f"{name}, {when}", T, f"{wall:.2f}", f"{cpu:.2f}",
                             f"{acc:.2f}", est.n_iter_])
                print(rows[-1], flush=True)
            a, b = fits["after"], fits["before"]
            f_a = a.decision_function(Xte, task_index=tte)
            f_b = b.decision_function(Xte, task_index=tte)
            scale = abs(b.objective_)
            rows[-2].append(f"{abs(a.objective_ - b.objective_) / scale:.1e} / "
                            f"{abs(a.gap_ - b.gap_) / scale:.1e} / "
                            f"{np.abs(f_a - f_b).max():.1e}")
            rows[-1].append("")
        pred, wall, cpu = timed(per_task_svc)
        rows.append(["SVC() per task (anchor)", T, f"{wall:.2f}", f"{cpu:.2f}",
                     f"{100 * np.mean(pred == cte):.2f}", "-", ""])
        pooled, wall, cpu = timed(lambda: SVC().fit(Xtr, ctr))
        rows.append(["SVC() pooled, tasks ignored (anchor)", T, f"{wall:.2f}",
                     f"{cpu:.2f}", f"{100 * np.mean(pooled.predict(Xte) == cte):.2f}",
                     "-", ""])
        reg, wall, cpu = timed(lambda: MultitaskMKLRegressor(
            formulation="mtsfl", max_iter=args.max_iter).fit(Xtr, ytr, task_index=ttr))
        rows.append(["MK-MTSFL regressor (square loss, not changed)", T, f"{wall:.2f}",
                     f"{cpu:.2f}", "-", reg.n_iter_, ""])
        for r in rows[-3:]:
            print(r, flush=True)
    print()
    print(markdown_table(["method", "tasks", "fit s (median)", "CPU s (median)",
                          "test accuracy %", "MD iterations",
                          "after vs before: objective / gap / max |decision| diff"],
                         rows))


def run_mtsfl_steps(args, Xs, ys):
    """MK-MTSFL's adaptive step against the paper's on many small School tasks.

    The classifier on the binary tasks of ``--many-tasks`` and the regressor
    on their scores, at their defaults, with ``step="adaptive"`` (the default)
    and ``step="nemirovski"`` (the paper's :math:`1/\\sqrt l` schedule, as
    before the eighteenth pass): median wall and CPU seconds of
    ``--repeats`` fits, iterations, objective and duality gap (relative), test
    accuracy or mean per-task R^2.
    """
    import functools
    from unittest import mock

    from kernlearn import MultitaskMKLClassifier
    from kernlearn.methods.mtmkl import fit as fit_module

    rows = []
    for T in args.many_tasks:
        rng = np.random.default_rng(0)
        (Xtr, ctr, ytr, ttr), (Xte, cte, yte, tte) = many_school_tasks(
            Xs, ys, T, args.rows_per_task, rng)
        for name, make, target, score in [
                ("MK-MTSFL classifier", MultitaskMKLClassifier, ctr,
                 lambda e: f"{100 * np.mean(e.predict(Xte, task_index=tte) == cte):.2f}"),
                ("MK-MTSFL regressor", MultitaskMKLRegressor, ytr,
                 lambda e: f"{explained_variance(yte, e.predict(Xte, task_index=tte), tte):.2f}")]:
            for step in ("adaptive", "nemirovski"):
                solver = functools.partial(fit_module.solve_mtsfl, step=step)
                walls, cpus = [], []
                for _ in range(args.repeats):
                    t0, c0 = time.perf_counter(), time.process_time()
                    with mock.patch.object(fit_module, "solve_mtsfl", solver):
                        est = make(formulation="mtsfl", max_iter=args.max_iter).fit(
                            Xtr, target, task_index=ttr)
                    walls.append(time.perf_counter() - t0)
                    cpus.append(time.process_time() - c0)
                rows.append([f"{name}, {step}", T, f"{statistics.median(walls):.2f}",
                             f"{statistics.median(cpus):.2f}", score(est), est.n_iter_,
                             f"{est.objective_:.8g}",
                             f"{est.gap_ / abs(est.objective_):.1e}"])
                print(rows[-1], flush=True)
    print()
    print(markdown_table(["method, step", "tasks", "fit s (median)", "CPU s (median)",
                          "test accuracy % / mean R^2 %", "MD iterations", "objective",
                          "relative gap"], rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--n-train", type=int, default=15)
    ap.add_argument("--fraction", type=float, default=None,
                    help="training fraction per task instead of --n-train")
    ap.add_argument("--C", type=float, nargs="+",
                    default=[5e-4, 5e-3, 5e-2, 5e-1, 5, 50, 500])
    ap.add_argument("--folds", type=int, default=3,
                    help="3: 3-fold CV (paper); 1: one hold-out third")
    ap.add_argument("--gauss", type=float, nargs="+",
                    default=[1e-2, 1e-1, 1, 10, 100, 1000])
    ap.add_argument("--sigma2", action="store_true",
                    help="Gaussian parameters are sigma^2 (gamma = 1/(2 sigma^2))")
    ap.add_argument("--p", type=float, nargs="+", default=[2, 6, 8.67])
    ap.add_argument("--q", type=float, nargs="*", default=[1.01, 1.5, 1.99],
                    help="MK-MTSFL exponents (none: skip MK-MTSFL)")
    ap.add_argument("--max-rank", type=int, default=300)
    ap.add_argument("--max-iter", type=int, default=100)
    ap.add_argument("--shared-q", type=float, nargs="*", default=[1.01, 1.5],
                    help="MK-MTSFL with shared components (shared=True, an extension "
                         "of the paper) at these q, plus MTSFL (linear) shared")
    ap.add_argument("--shared-p", type=float, nargs="*", default=[2.0],
                    help="MK-MTFL with shared components (shared=True) at these p")
    ap.add_argument("--only", default=None, metavar="REGEX",
                    help="run only the methods whose name matches (the elastic-net "
                         "anchor always runs: it shows the splits are the same)")
    ap.add_argument("--featurewise", action="store_true")
    ap.add_argument("--scaling", action="store_true")
    ap.add_argument("--defaults", action="store_true",
                    help="only fit MultitaskMKLRegressor at its defaults (and with "
                         "shared=False) against the elastic-net anchor")
    ap.add_argument("--sizes", nargs="+", default=None, metavar="SIZE",
                    help="only compare MTSFL, per-task ridge and the pooled elastic net "
                         "at these training sizes (15: points per task; f0.75: fraction)")
    ap.add_argument("--first-split", type=int, default=0,
                    help="seed of the first split (runs in parallel take disjoint ranges)")
    ap.add_argument("--json", default=None,
                    help="per-split results, written after every split; a rerun "
                         "skips the splits already there")
    ap.add_argument("--summarise", nargs="+", default=None, metavar="JSON",
                    help="only print the table of these per-split result files")
    ap.add_argument("--cv-score", choices=("mse", "r2"), default="mse",
                    help="CV criterion: held-out MSE (default) or mean per-task R^2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--selection", action="store_true",
                    help="model selection: defaults and MultitaskMKLRegressorCV against "
                         "per-task kernel ridge with GridSearchCV, on School and "
                         "synthetic related / unrelated tasks")
    ap.add_argument("--many-tasks", type=int, nargs="*", default=None, metavar="T",
                    help="only time the multitask classifiers on T binary tasks of "
                         "--rows-per-task School rows each (e.g. 50 100 400), with the "
                         "per-task SVM duals compiled (after) and by one SVC per task "
                         "(before), against SVC() per task and pooled")
    ap.add_argument("--rows-per-task", type=int, default=8)
    ap.add_argument("--mtsfl-steps", action="store_true",
                    help="with --many-tasks: MK-MTSFL classifier and regressor with "
                         "the adaptive mirror-descent step against the paper's")
    ap.add_argument("--mtsfl-step", choices=("adaptive", "nemirovski"),
                    default="adaptive",
                    help="MK-MTSFL's step-size rule in the other modes (nemirovski: "
                         "the paper's, as before the eighteenth pass)")
    ap.add_argument("--only-set", default=None, metavar="REGEX",
                    help="with --selection: only the data sets matching "
                         "(related, unrelated, School)")
    args = ap.parse_args()
    if args.fraction:
        args.n_train = None
    if args.summarise:
        per_split = {}
        for f in args.summarise:  # files may hold other methods of the same splits
            for split_id, recs in json.loads(Path(f).read_text()).items():
                per_split.setdefault(split_id, {}).update(recs)
        print(summarise(per_split))
        return
    try:
        school = load_dataset("school")
        rows = [np.flatnonzero(school.task_index == t) for t in np.unique(school.task_index)]
        Xs = [school.data[r] for r in rows]
        ys = [school.target[r] for r in rows]
    except DatasetNotFoundError as exc:
        print(f"school not available: {exc}")
        if not args.selection:
            return
        Xs = ys = None
    warnings.simplefilter("ignore", ConvergenceWarning)
    if args.mtsfl_step != "adaptive":
        import functools

        from kernlearn.methods.mtmkl import fit as fit_module
        fit_module.solve_mtsfl = functools.partial(fit_module.solve_mtsfl,
                                                   step=args.mtsfl_step)
    with threadpool_limits(limits=1, user_api="blas"):
        if args.many_tasks and args.mtsfl_steps:
            run_mtsfl_steps(args, Xs, ys)
        elif args.many_tasks:
            run_many_tasks(args, Xs, ys)
        elif args.selection:
            run_selection(args, Xs, ys)
        elif args.scaling:
            run_scaling(args, Xs, ys)
        elif args.defaults:
            run_defaults(args, Xs, ys)
        elif args.sizes:
            run_sizes(args, Xs, ys)
        else:
            run_protocol(args, Xs, ys)


if __name__ == "__main__":
    main()
