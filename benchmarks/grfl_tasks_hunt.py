"""Randomised hunt of GrFL with tasks, weights and classes (audit 110, issue 21).

Seeded random problems (2-4 classes, 1-5 tasks of odd ids, some tasks of one class or
one row, integer or zero weights, ``class_weight``), each fitted a few ways; prints how
many problems broke each invariant:

* ``argmax``: ``predict`` is the arg max of ``decision_function`` (and of
  ``predict_proba`` for the logistic loss), probabilities sum to one, and a class with
  no row in a row's task has probability 0 there;
* ``zero_rows``: rows of zero weight removed give the same model bit for bit;
* ``repeats``: integer weights give the model of repeated rows (masters to 1e-10);
* ``task_ids``: the tasks renamed (strings, floats, negative ids in another order)
  give the same model (to 1e-6);
* ``labels``: the classes renamed in another order (strings, -1/1, bools) give the
  same model, its columns permuted (to 1e-6);
* ``kkt``: the fitted model is a minimiser of the weighted objective on its features
  (each active feature's loss gradient over all (task, class) problems is
  anti-parallel to its weights, of one norm, the intercepts' gradients zero);
* ``platt``: ``probability=True`` (the squared hinge's problems) fails, but for a
  class of too few rows, which it refuses by name, or its probabilities break the above;
* ``error``: a fit or prediction that raised.

Run: ``OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/grfl_tasks_hunt.py [n_problems]``.
"""

import sys
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from kernlearn import InfiniteFeatureClassifier
from kernlearn.estimators._multitask import task_sample_weight
from kernlearn.losses import get_loss

# (every master solved to 1e-10: the path's intermediate masters, capped at path_iter
# sweeps, stop at points that depend on how the rows are written, weights or repeats,
# and their pricing may then pick other features: the same problem, another path)
KW = dict(max_features=6, n_candidates=15, lambda_p=0.1, n_paths=1, random_state=0,
          inner_tol=1e-10, path_iter=None)


def problem(rng):
    """Random data: rows, tasks, labels (codes 0..K-1), weights, class weights."""
    n, K, T = rng.randint(30, 90), rng.randint(2, 5), rng.randint(1, 6)
    X = rng.randn(n, 3)
    t = rng.randint(0, T, n)
    y = np.digitize(X[:, 0] + 0.3 * t + 0.5 * rng.randn(n), np.linspace(-1, 1, K - 1))
    if T > 1 and rng.rand() < 0.5:  # a task of one class
        y[t == 0] = y[t == 0].max()
    if rng.rand() < 0.3:  # a task of one row
        t[0] = T
    if len(np.unique(y)) < 2:
        y[:2] = [0, 1]
    w = rng.randint(0, 3, n).astype(float) if rng.rand() < 0.6 else None
    if w is not None and not np.any(w > 0):
        w[0] = 1.0
    cw = [None, "balanced", {0: 2.0}][rng.randint(3)]
    loss = ["squared_hinge", "logistic"][rng.randint(2)]
    return X, t, y, w, cw, loss


def decisions(est, X, t, classes=None):
    """Decision values, one column per class of ``classes`` (default ``est``'s):
    a binary model's ``f`` is ``-f, f`` (one-vs-rest codes of two classes)."""
    D = est.decision_function(X, task_index=t)
    D = D[:, None] if D.ndim == 1 else D
    if classes is None or len(classes) == len(est.classes_):
        return D
    if len(est.classes_) == 2:
        D = np.column_stack([-D[:, 0], D[:, 0]])
    out = np.full((len(D), len(classes)), np.nan)
    out[:, np.searchsorted(classes, est.classes_)] = D
    return out


def same(D, E, exact=False):
    """Whether ``E`` (NaN: a class the other fit has not) gives ``D``'s values."""
    m = ~np.isnan(E)
    if D.shape != E.shape:
        return False
    return np.array_equal(D[m], E[m]) if exact else np.allclose(D[m], E[m], rtol=1e-6,
                                                                  atol=1e-6)


def kkt_gap(est, X, t, y, w, cw, loss):
    """Largest violation of the stationarity conditions on the active features."""
    LF = est._decision_function()
    C = LF.columns(LF._inputs(X))
    coef, b = est._coef_tasks, est._intercept_tasks
    M = C @ coef.T + b
    yi = np.searchsorted(est.classes_, y)
    rows = [np.flatnonzero(t == k) for k in np.unique(t)]
    sw = task_sample_weight(w, len(y), yi, cw if cw != {0: 2.0} else
                            {est.classes_[0]: 2.0}, rows)
    tpos = np.searchsorted(est.tasks_, t)
    fitted = est._task_classes
    K = len(est.classes_)
    f = get_loss(loss)
    G, gb = np.zeros_like(coef), np.zeros(len(b))
    for p in range(len(b)):
        if fitted is None:  # (binary: one problem per task, the second class's codes)
            r, target = np.flatnonzero(tpos == p), np.where(yi == 1, 1.0, -1.0)
        else:
            k, c = divmod(p, K)
            if not fitted[k, c]:
                continue
            r, target = np.flatnonzero(tpos == k), np.where(yi == c, 1.0, -1.0)
        if sw is not None:
            r = r[sw[r] > 0]
        g = f.grad_margin(M[r, p], target[r]) * (1.0 if sw is None else sw[r])
        G[p], gb[p] = C[r].T @ g, g.sum()
    gs = C.shape[1] // max(1, len(est.features_))
    norms, worst = [], 0.0
    for j in range(len(est.features_)):
        Wj, Gj = coef[:, j * gs:(j + 1) * gs].ravel(), G[:, j * gs:(j + 1) * gs].ravel()
        if np.linalg.norm(Wj) > 0:
            norms.append(np.linalg.norm(Gj))
            worst = max(worst, 1 - (Wj @ -Gj) / np.linalg.norm(Wj) / np.linalg.norm(Gj))
    if not norms:
        return 0.0
    return max(worst, 1 - min(norms) / max(norms), np.abs(gb).max() / max(norms))


def hunt(seed, counts):
    rng = np.random.RandomState(seed)
    X, t, y, w, cw, loss = problem(rng)
    est = InfiniteFeatureClassifier(loss=loss, class_weight=cw, **KW)
    fit = {} if w is None else {"sample_weight": w}
    a = est.fit(X, y, task_index=t, **fit)
    keep = np.ones(len(y), dtype=bool) if w is None else w > 0
    kt = np.isin(t, a.tasks_)
    D = decisions(a, X[kt], t[kt])
    p = a.predict(X[kt], task_index=t[kt])
    bad = D.shape[1] > 1 and np.any(a.classes_[np.argmax(D, axis=1)] != p)
    if loss == "logistic":
        P = a.predict_proba(X[kt], task_index=t[kt])
        bad |= not np.allclose(P.sum(axis=1), 1) or np.any(a.classes_[np.argmax(P, axis=1)] != p)
        if a._task_classes is not None:
            bad |= np.any(P[~a._task_classes[np.searchsorted(a.tasks_, t[kt])]] != 0)
    counts["argmax"] += bool(bad)
    if loss != "logistic":  # Platt's sigmoids on cross-validated scores
        try:
            P = clone_fit(est.set_params(probability=True), X, y, t, w).predict_proba(
                X[kt], task_index=t[kt])
            ok = np.allclose(P.sum(axis=1), 1)
            if a._task_classes is not None:
                ok &= not np.any(P[~a._task_classes[np.searchsorted(a.tasks_, t[kt])]])
        except ValueError as exc:
            ok = "2 samples" in str(exc)  # (refused by name: a class of one row)
            if not ok:
                print(f"seed {seed}: probability=True: {exc}")
        est.set_params(probability=False)
        counts["platt"] += not ok
    counts["kkt"] += kkt_gap(a, X, t, y, w, cw, loss) > 1e-6
    if w is not None:
        b = clone_fit(est, X[keep], y[keep], t[keep], w[keep])
        if not same(D, decisions(b, X[kt], t[kt], a.classes_), exact=True):
            counts["zero_rows"] += 1
            print(f"seed {seed}: rows of zero weight removed: another model")
        if cw is None:
            rep = np.repeat(np.arange(len(y)), w.astype(int))
            c = clone_fit(est, X[rep], y[rep], t[rep], None)
            if not same(D, decisions(c, X[kt], t[kt], a.classes_)):
                counts["repeats"] += 1
                print(f"seed {seed}: integer weights and repeated rows: another model")
    # tasks renamed, in another order
    names = {k: v for k, v in zip(np.unique(t), rng.permutation(len(np.unique(t))))}
    for ids in (np.array([f"task{names[k]}" for k in t]),
                np.array([-1.5 * names[k] for k in t])):
        b = clone_fit(est, X, y, ids, w)
        if not same(D, decisions(b, X[kt], ids[kt])):
            counts["task_ids"] += 1
            print(f"seed {seed}: tasks renamed {ids[:2]}...: another model")
    # classes renamed, in another order
    K = len(np.unique(y))
    perm = rng.permutation(K)
    for labels in ((np.array([f"c{k}" for k in perm])), (perm * 2 - 1)):
        if K == 2 and rng.rand() < 0.5:
            labels = perm.astype(bool)
        ycls = labels[np.searchsorted(np.unique(y), y)]
        cw2 = cw if not isinstance(cw, dict) else {labels[0]: 2.0}
        b = clone_fit(est.set_params(class_weight=cw2), X, ycls, t, w)
        est.set_params(class_weight=cw)
        # column of class c of a is column of labels[c] of b
        Db = decisions(b, X[kt], t[kt])
        if K > 2:
            Db = Db[:, np.searchsorted(b.classes_, labels)]
        else:  # (binary: the decision is of the second class)
            Db = Db if labels[1] > labels[0] else -Db
        # (a task of one class has no single minimiser: under the logistic loss its
        # intercept stops wherever the line search does, in either sign's direction,
        # under the squared hinge anywhere beyond the margin: compared on the others)
        both = [k for k in np.unique(t) if len(np.unique(y[(t == k) & keep])) > 1]
        m = np.isin(t[kt], both)
        if not np.allclose(D[m], Db[m], rtol=1e-6, atol=1e-6):
            counts["labels"] += 1
            print(f"seed {seed}: classes {list(labels)} in another order: decision values "
                  f"{np.abs(D - Db)[m].max():.3g} apart")


def clone_fit(est, X, y, t, w):
    from sklearn.base import clone

    return clone(est).fit(X, y, task_index=t, **({} if w is None else {"sample_weight": w}))


def main(n_problems=40):
    counts = dict.fromkeys(("argmax", "platt", "zero_rows", "repeats", "task_ids", "labels",
                            "kkt", "error"), 0)
    warnings.simplefilter("ignore")
    with threadpool_limits(1):
        for seed in range(n_problems):
            try:
                hunt(seed, counts)
            except Exception as exc:  # (counted, and named)
                counts["error"] += 1
                print(f"seed {seed}: {type(exc).__name__}: {exc}")
    print(f"{n_problems} problems; problems breaking each invariant:")
    for k, v in counts.items():
        print(f"  {k:10s} {v}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
