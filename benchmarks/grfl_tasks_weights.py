"""GrFL with ``task_index``: the cost of weighted task losses and of one-vs-rest within tasks.

Issue 21, thirty-fourth pass.  A synthetic problem of ``--tasks`` tasks (``n`` rows of ``d``
N(0, 1) inputs, each task's decision ``sin(2 x0 + shift_t) + x1 x2``), fitted with
``task_index`` by

* ``InfiniteFeatureClassifier`` on binary labels, unweighted against weighted
  (``sample_weight`` uniform in [0.5, 1.5], every row kept);
* ``InfiniteFeatureRegressor``, unweighted against weighted (the same weights);
* ``InfiniteFeatureClassifier`` on three classes (one-vs-rest within tasks, one problem
  per task and class) against the binary fit of the same rows (one problem per task).

Fixed settings (``max_features``, ``lambda_p=0.05``, ``n_paths=1``, ``random_state=0``) so
that each pair runs paths of the same length: the ratio is the cost per feature of the
weighted loss (its layout weights, the weighted norms and curvatures), not of a different
model size.  CPU seconds (``time.process_time``), ``OMP_NUM_THREADS=1``, the two fits of a
pair alternated, medians of ``--repeats``.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/grfl_tasks_weights.py [--n 4000] [--d 10]
        [--tasks 4] [--max-features 40] [--repeats 5]
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def data(n, d, tasks, seed=0):
    """Inputs, task ids, binary and three-class labels, targets and weights."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    t = rng.randint(0, tasks, n)
    f = np.sin(2 * X[:, 0] + 0.5 * t) + X[:, 1] * X[:, 2] + 0.3 * rng.randn(n)
    yb = (f > 0.2).astype(int)
    y3 = np.digitize(f, np.quantile(f, [1 / 3, 2 / 3]))
    w = rng.uniform(0.5, 1.5, n)
    return X, t, yb, y3, f, w


def cpu(fn):
    """CPU seconds of one call."""
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def pair(fit_a, fit_b, repeats):
    """Medians of alternated runs of two fits, and their ratio."""
    a, b = [], []
    for _ in range(repeats):
        a.append(cpu(fit_a))
        b.append(cpu(fit_b))
    ma, mb = statistics.median(a), statistics.median(b)
    return ma, mb, mb / ma


def main(argv=None):
    from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=4000)
    p.add_argument("--d", type=int, default=10)
    p.add_argument("--tasks", type=int, default=4)
    p.add_argument("--max-features", type=int, default=40)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    X, t, yb, y3, f, w = data(args.n, args.d, args.tasks)
    kw = dict(max_features=args.max_features, lambda_p=0.05, n_paths=1, random_state=0)
    rows = [
        ("classifier, binary", "unweighted", "weighted", pair(
            lambda: InfiniteFeatureClassifier(**kw).fit(X, yb, task_index=t),
            lambda: InfiniteFeatureClassifier(**kw).fit(X, yb, task_index=t,
                                                        sample_weight=w), args.repeats)),
        ("regressor", "unweighted", "weighted", pair(
            lambda: InfiniteFeatureRegressor(**kw).fit(X, f, task_index=t),
            lambda: InfiniteFeatureRegressor(**kw).fit(X, f, task_index=t,
                                                       sample_weight=w), args.repeats)),
        ("classifier, 3 classes", "binary", "one-vs-rest", pair(
            lambda: InfiniteFeatureClassifier(**kw).fit(X, yb, task_index=t),
            lambda: InfiniteFeatureClassifier(**kw).fit(X, y3, task_index=t),
            args.repeats)),
    ]
    print(f"n={args.n} d={args.d} tasks={args.tasks} max_features={args.max_features} "
          f"repeats={args.repeats} OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}")
    print("| fit | A | B | A CPU s | B CPU s | B / A |")
    print("|---|---|---|---:|---:|---:|")
    for name, a, b, (ta, tb, r) in rows:
        print(f"| {name} | {a} | {b} | {ta:.3f} | {tb:.3f} | {r:.2f} |")


if __name__ == "__main__":
    main()
