"""Data-kind stress benchmark: the breadth pairs on real sets made awkward on purpose.

``benchmarks/suite.py`` runs every estimator at defaults next to its one-line
scikit-learn baseline on the raw values of real sets.  This script takes some
of those sets and rewrites their raw columns the way real data come in, then
runs the same pairs (``suite.run_seeds``: the same estimators and baselines,
splits, seeds, row cap, scores and within / bad rules) on the rewritten sets:

==========  ===================================================================
kind        rewrite of the raw ``X`` (the target is never changed)
==========  ===================================================================
``none``    nothing: the reference every other kind is compared with
``dup``     every column duplicated once (exactly collinear copies)
``const``   5 constant columns, and 5 columns that are 0 except at one
            training row (1 there)
``heavy``   each column mapped to ``exp(2 z)`` of its standardised value
            ``z`` (log-normal tails; this changes what the columns say, so
            only ours against the baseline on the same data is the criterion)
``offset``  each column shifted by 1e6 x its spread, the first one by 1e9 x
``mixed``   column ``j`` multiplied by ``10**k_j``, ``k_j`` evenly over -6..6
``binary``  5 random binary noise columns and 5 integer-coded categorical
            noise columns (0..9) added
``onehot``  the column with the most distinct values replaced by the one-hot
            block of its deciles
``outlier`` 1 % of the training rows (at least one) get one nonzero cell
            multiplied by 1e3
``noise``   as many standard Gaussian noise columns as real ones added
==========  ===================================================================

Protocol: each kind is applied to the whole raw ``X`` of a set before the
split (``const`` and ``outlier`` pick their special rows among that seed's
training rows); its random draws are seeded by the seed and the set and kind
names.  The split is ``suite.split_capped`` of the row indices, so every kind
of a set shares the rows of the untransformed set; by default at most 2,000
training rows.  A pair's *gap* is as in ``suite.py`` (points ours - baseline;
regression: MSE ratio ours / baseline).  Per kind and estimator the report
counts, over the (set, seed) rows, the pairs within and bad, and compares each
row with the same set and seed untransformed: *newly bad* rows (bad here, not
bad untransformed), the median change of the gap (points; regression: the
ratio of the ratios), the rows whose gap moved by more than the within margin
(1 point, 5 %) either way, and the median change of the baseline's own score
(how much the rewrite costs the baseline).  A failure caused by the rewrite thus
shows as newly bad rows and a negative gap change across sets, apart from the
set's own noise, which the untransformed rows carry too.  Then per kind the
summary of the scores averaged over the seeds (``suite.seeds_summary``).

Cost: the 12 default sets, 10 kinds, seeds 0,1,2 and all seven estimators
(1,320 pairs) took 230-250 CPU seconds, 2.5-3.6 minutes of wall time with
``--jobs 2`` on a shared machine.

Usage::

    python benchmarks/data_kinds.py [--sets diabetes,autompg]
        [--kinds dup,offset] [--estimators FGMClassifier,...]
        [--seeds 0,1,2] [--max-rows 2000] [--jobs 2]
        [--param InfiniteFeatureClassifier.n_paths=3]
        [--out data_kinds.json] [--md data_kinds.md]
"""

import os

# One thread per process, before numpy loads its BLAS (as suite.py does).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import statistics
import sys
import time
import zlib
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import suite
from _common import markdown_table, parse_seeds

# small and mid-size sets: binary, multiclass (up to 100 classes), regression
SETS = (
    "diabetes,ionosphere,wdbc,kc1,vehicle,yeast,cardiotocography,"
    "one-hundred-plants-shape,autompg,housing,airfoil,skillcraft"
)
N_EXTRA = 5  # columns added by const and binary, per sort
OUTLIER_SHARE, OUTLIER_FACTOR = 0.01, 1e3
OFFSET, FAR_OFFSET = 1e6, 1e9  # in units of the column's spread


def _spread(X):
    sd = X.std(axis=0)
    return np.where(sd > 0, sd, 1.0)


def kind_none(X, train, rng):
    """The set as it is."""
    return X


def kind_dup(X, train, rng):
    """Every column duplicated once: ``[X, X]``."""
    return np.hstack([X, X])


def kind_const(X, train, rng):
    """``N_EXTRA`` constant columns and ``N_EXTRA`` one-hot-of-a-training-row columns."""
    n = X.shape[0]
    const = np.tile(rng.normal(scale=10.0, size=N_EXTRA), (n, 1))
    single = np.zeros((n, N_EXTRA))
    rows = rng.choice(train, size=N_EXTRA, replace=False)
    single[rows, np.arange(N_EXTRA)] = 1.0
    return np.hstack([X, const, single])


def kind_heavy(X, train, rng):
    """``exp(2 z)`` of each column's standardised value (constant columns: 1)."""
    Z = (X - X.mean(axis=0)) / _spread(X)
    return np.exp(2.0 * Z)


def kind_offset(X, train, rng):
    """Columns shifted by ``OFFSET`` x their spread, the first by ``FAR_OFFSET`` x."""
    shift = OFFSET * _spread(X)
    shift[0] = FAR_OFFSET * _spread(X[:, :1])[0]
    return X + shift


def mixed_exponents(d):
    """``k_j`` of ``kind_mixed``: ``d`` integers evenly from -6 to 6."""
    return np.rint(np.linspace(-6, 6, d)) if d > 1 else np.zeros(1)


def kind_mixed(X, train, rng):
    """Column ``j`` times ``10**k_j`` (:func:`mixed_exponents`)."""
    return X * 10.0 ** mixed_exponents(X.shape[1])


def kind_binary(X, train, rng):
    """``N_EXTRA`` binary and ``N_EXTRA`` categorical (0..9) noise columns added."""
    n = X.shape[0]
    binary = (rng.random((n, N_EXTRA)) < rng.uniform(0.1, 0.5, N_EXTRA)).astype(float)
    codes = rng.integers(0, 10, size=(n, N_EXTRA)).astype(float)
    return np.hstack([X, binary, codes])


def onehot_column(X):
    """The column ``kind_onehot`` replaces: the one with the most distinct values."""
    return int(np.argmax([np.unique(c).size for c in X.T]))


def kind_onehot(X, train, rng):
    """Column :func:`onehot_column` replaced by a one-hot block of its deciles."""
    j = onehot_column(X)
    edges = np.unique(np.quantile(X[:, j], np.linspace(0.1, 0.9, 9)))
    bins = np.searchsorted(edges, X[:, j], side="right")
    block = (bins[:, None] == np.unique(bins)[None, :]).astype(float)
    return np.hstack([np.delete(X, j, axis=1), block])


def kind_outlier(X, train, rng):
    """``OUTLIER_SHARE`` of the training rows: one nonzero cell x ``OUTLIER_FACTOR``."""
    X = X.copy()
    for i in rng.choice(train, max(1, round(OUTLIER_SHARE * len(train))), replace=False):
        cols = np.flatnonzero(X[i])
        if cols.size:
            X[i, rng.choice(cols)] *= OUTLIER_FACTOR
    return X


def kind_noise(X, train, rng):
    """As many standard Gaussian noise columns as ``X`` has, added."""
    return np.hstack([X, rng.normal(size=X.shape)])


KINDS = {name[5:]: fn for name, fn in list(globals().items()) if name.startswith("kind_")}


def transform(kind, X, train, rng):
    """The whole set's raw ``X`` rewritten as ``kind`` (a key of :data:`KINDS`).

    ``train``: indices of the training rows (``const`` and ``outlier`` pick
    theirs there); ``rng``: a ``numpy.random.Generator``.  Returns float64.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose from {list(KINDS)}")
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    return np.asarray(KINDS[kind](X, np.asarray(train), rng), dtype=np.float64)


@lru_cache(maxsize=2)
def _raw(name, task):
    return suite.load_set(name, task)


@lru_cache(maxsize=4)
def kind_split(spec, task, max_rows, seed):
    """``suite._cached_split`` of ``"<set>@<kind>"``: the set's split, ``X`` rewritten.

    The rows are those ``suite.split_capped`` draws for the untransformed set
    (it splits the row indices with the same seed and stratification).
    """
    name, kind = spec.rsplit("@", 1)
    X, y, task = _raw(name, task)
    n = X.shape[0]
    itr, ytr, ite, yte = suite.split_capped(np.arange(n)[:, None], y, task, max_rows, seed)
    itr, ite = itr.ravel(), ite.ravel()
    rng = np.random.default_rng([seed, zlib.crc32(spec.encode())])
    Xk = transform(kind, X, itr, rng)
    return (Xk[itr], ytr, Xk[ite], yte), task, n


@contextmanager
def kinds_installed():
    """Make ``suite.run_pair`` read its splits through :func:`kind_split`.

    (``run_pair`` looks ``_cached_split`` up in its module when it runs; pool
    workers are forked inside ``suite.run_seeds``, so they see the swap.)
    """
    old = suite._cached_split
    suite._cached_split = kind_split
    try:
        yield
    finally:
        suite._cached_split = old


def run_kinds(sets, kinds, estimators, seeds, max_rows=2000, jobs=1, timeout=600.0,
              log=print, params=None):
    """``suite.run_seeds`` on every ``"<set>@<kind>"``; return ``{seed: rows}``."""
    specs = {f"{name}@{kind}": task for name, task in sets.items() for kind in kinds}
    with kinds_installed():
        return suite.run_seeds(specs, estimators, params or {}, seeds, max_rows, jobs,
                               timeout, "cpu", log)


def _change(task, new, old):
    """Change of a gap: points (clf) or ratio of MSE ratios (reg)."""
    return new - old if task == "clf" else new / old


def kind_summary(by_seed, kinds, estimators):
    """One dict per (kind, estimator): counts, changes against ``none``, mean-of-seeds.

    Keys: ``kind, estimator, task, rows, within, bad, errors, newly_bad
    (list of "set seed gap"), d_within`` (share within minus that of ``none``
    on the same rows), ``gap_change, base_change`` (medians over rows with both
    sides scored), ``worse_better`` (rows whose gap moved by more than the
    within margin, 1 point or 5 %, down and up), ``mean_summary``
    (``suite.seeds_summary`` of that kind).
    """
    ref = {(r["set"].rsplit("@", 1)[0], r["estimator"], s): r
           for s, rows in by_seed.items() for r in rows
           if r["set"].endswith("@none")}
    out = []
    for kind in kinds:
        mine = {s: [r for r in rows if r["set"].rsplit("@", 1)[1] == kind]
                for s, rows in by_seed.items()}
        _, mean_summary, _ = suite.seeds_summary(mine, estimators)
        for name in estimators:
            rows = [(s, r) for s, rs in mine.items() for r in rs if r["estimator"] == name]
            if not rows:
                continue
            task = suite.PAIRS[name][0]
            ok = [(s, r) for s, r in rows if r["error"] is None]
            pairs = [(s, r, ref.get((r["set"].rsplit("@", 1)[0], name, s))) for s, r in ok]
            pairs = [(s, r, o) for s, r, o in pairs if o is not None and o["error"] is None]
            ref_rows = [o for _, _, o in pairs]
            changes = [_change(task, r["gap"], o["gap"]) for _, r, o in pairs]
            newly = [f"{r['set'].rsplit('@', 1)[0]} s{s} {_fmt(task, r['gap'])}"
                     f" (none {_fmt(task, o['gap'])})"
                     for s, r, o in pairs if r["bad"] and not o["bad"]]
            out.append({
                "kind": kind, "estimator": name, "task": task, "rows": len(rows),
                "within": sum(r["within"] for _, r in ok),
                "bad": sum(r["bad"] for _, r in ok),
                "errors": len(rows) - len(ok),
                "newly_bad": newly,
                "d_within": (sum(r["within"] for _, r, _ in pairs)
                             - sum(o["within"] for o in ref_rows)) / max(len(pairs), 1),
                "gap_change": _median(changes),
                "worse_better": _worse_better(task, changes),
                "base_change": _median([
                    _change(task, *(100 * x["score_base"] if task == "clf"
                                    else x["score_base"] for x in (r, o)))
                    for _, r, o in pairs if task == "clf" or o["score_base"] > 0]),
                "mean_summary": next(
                    (m for m in mean_summary if m["estimator"] == name), None),
            })
    return out


def _worse_better(task, changes):
    """Rows whose gap moved by more than the within margin: ``(worse, better)``."""
    if task == "clf":
        return (sum(c < suite.WITHIN["clf"] for c in changes),
                sum(c > -suite.WITHIN["clf"] for c in changes))
    return (sum(c > suite.WITHIN["reg"] for c in changes),
            sum(c < 1 / suite.WITHIN["reg"] for c in changes))


def _median(values):
    return statistics.median(values) if values else None


def _fmt(task, v):
    if v is None:
        return ""
    if task == "clf":
        return f"{v:+.1f}"
    return f"{v:.3f}" if v < 1e3 else f"{v:.3g}"


def report(summary):
    """Markdown: the kind x estimator table, then the newly bad rows."""
    header = ["kind", "estimator", "within (set x seed)", "change vs none", "bad",
              "newly bad", "median gap change", "gap worse / better",
              "baseline change", "within (mean of seeds)", "errors"]
    body = []
    for s in summary:
        m = s["mean_summary"]
        body.append([
            s["kind"], s["estimator"],
            f"{s['within']}/{s['rows']} ({100 * s['within'] / s['rows']:.0f} %)",
            "" if s["kind"] == "none" else f"{100 * s['d_within']:+.0f} %",
            s["bad"], "" if s["kind"] == "none" else len(s["newly_bad"]),
            "" if s["kind"] == "none" else _fmt(s["task"], s["gap_change"]),
            "" if s["kind"] == "none" else "{} / {}".format(*s["worse_better"]),
            "" if s["kind"] == "none" else _fmt(s["task"], s["base_change"]),
            f"{m['within']}/{m['pairs']}" if m else "", s["errors"],
        ])
    lines = [f"- {s['kind']} / {s['estimator']}: " + "; ".join(s["newly_bad"])
             for s in summary if s["newly_bad"]]
    errors = [f"- {s['kind']} / {s['estimator']}: {s['errors']} error row(s)"
              for s in summary if s["errors"]]
    return "\n".join([
        markdown_table(header, body), "",
        ("Gap changes: points (classification) or the ratio of MSE ratios "
         "(regression), median over the (set, seed) rows, against the same rows "
         "untransformed; baseline change: the baseline's own score (points of "
         "accuracy, or MSE ratio)."), "",
        "Newly bad rows (bad here, not bad untransformed; set, seed, gap):", "",
        *(lines or ["- none"]), *errors, ""])


def main(argv=None):
    """Command line: run, print the report, write JSON/markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=SETS, help="comma list of suite names")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help="comma list (none, the reference, is always run)")
    parser.add_argument("--estimators", default=",".join(suite.PAIRS))
    parser.add_argument("--seeds", default="0,1,2", help="comma list")
    parser.add_argument("--max-rows", type=int, default=2000, help="training-row cap")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0, help="per fit, seconds")
    parser.add_argument("--param", action="append", default=[],
                        help="Est.key=value or *.key=value, as for suite.py")
    parser.add_argument("--out", default="benchmarks/out/data_kinds.json")
    parser.add_argument("--md", default=None, help="also write the report here")
    args = parser.parse_args(argv)

    estimators = [e.strip() for e in args.estimators.split(",") if e.strip()]
    unknown = [e for e in estimators if e not in suite.PAIRS]
    if unknown:
        parser.error(f"unknown estimator(s) {unknown}; choose from {list(suite.PAIRS)}")
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if set(kinds) - set(KINDS):
        parser.error(f"unknown kind(s) {sorted(set(kinds) - set(KINDS))}; "
                     f"choose from {list(KINDS)}")
    kinds = ["none"] + [k for k in kinds if k != "none"]
    try:
        params = suite.parse_params(args.param, estimators)
        seeds = parse_seeds(args.seeds)
    except ValueError as exc:
        parser.error(str(exc))
    if not suite.suite_dir().is_dir():
        print(suite.NO_DATA.format(folder=suite.suite_dir()))
        return None
    available = suite.suite_sets(suite.suite_dir())
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    missing = [s for s in names if s not in available]
    if missing:
        parser.error(f"not in {suite.suite_dir()}: {missing}")
    sets = {name: available[name] for name in names}

    t0, cpu0 = time.perf_counter(), suite._cpu_seconds()
    by_seed = run_kinds(sets, kinds, estimators, seeds, args.max_rows, args.jobs,
                        args.timeout, log=lambda s: print(s, file=sys.stderr, flush=True),
                        params=params)
    total, total_cpu = time.perf_counter() - t0, suite._cpu_seconds() - cpu0
    summary = kind_summary(by_seed, kinds, estimators)
    head = (f"data-kind benchmark: {len(sets)} sets x {len(kinds)} kinds, max "
            f"{args.max_rows} train rows, seeds {args.seeds}, {args.jobs} job(s); "
            f"total {total:.0f} s wall, {total_cpu:.0f} s CPU")
    md = "\n".join([head, "", report(summary)])
    print(md)
    result = {
        "meta": {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "commit": suite._git_commit(), "data": str(suite.suite_dir()),
                 "sets": list(sets), "kinds": kinds, "estimators": estimators,
                 "seeds": seeds, "params": params, "max_rows": args.max_rows,
                 "jobs": args.jobs, "total_seconds": total, "total_cpu_seconds": total_cpu},
        "rows": [dict(r, seed=s) for s, rows in by_seed.items() for r in rows],
        "summary": summary,
    }
    suite.write_outputs(result, args.out, md, args.md)
    return result


if __name__ == "__main__":
    main()
