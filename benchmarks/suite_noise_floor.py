"""Noise floor of the breadth criterion: each baseline against an equally good twin.

``benchmarks/suite.py`` counts a pair *within* when an estimator is at most
one accuracy point below its scikit-learn baseline (regression: MSE at most
1.05 x the baseline's) and *bad* below three points (above 1.15 x).  On a set
with 45-160 test rows one test row is 0.6-2.2 points, so even a model as good as
the baseline misses that mark on a few sets.  This script measures how often:
for every baseline of ``suite.PAIRS`` it fits the baseline and a perturbation
of it that is no worse in principle, on exactly the suite's splits (same sets,
seeds, row cap, scaling, scores and within / bad rules: the functions are
imported from ``suite.py``), and counts the perturbation as "ours".

Perturbations (chosen from the baseline's steps; ``--perturbations`` picks):

=================  ============================================================
key                change to the baseline
=================  ============================================================
``nystroem-seed``  the Nystroem step's ``random_state`` = seed + 10000
                   (another draw of its landmark rows)
``C*1.5``          ``C`` x 1.5 of ``SVC`` / ``LinearSVC``
``C/1.5``          ``C`` / 1.5 of ``SVC`` / ``LinearSVC``
``cv=5-shuffled``  ``LassoCV`` on 5 shuffled folds (``KFold(5, shuffle=True,
                   random_state=seed)``): the same number of folds, another split
``cv=3``           ``LassoCV(cv=3)`` instead of its 5 folds
``cv=5``           ``RidgeCV`` / ``RidgeClassifierCV`` on 5 folds instead of
                   their efficient leave-one-out
``same``           nothing (a second fit of the baseline itself: a check that
                   must give every pair within, gap 0 / ratio 1; not run unless
                   named)
=================  ============================================================

The first perturbation of a baseline in the order of its steps and of this
table (its Nystroem seed, else ``C*1.5`` or ``cv=5-shuffled``) is the mildest
change; the report also pools those, one twin per estimator, as the suite
pools its pairs.

A share within below 100 % here is the criterion's own noise: an estimator as
good as its baseline would be expected to score about that share.

Output: per baseline and perturbation, per seed, the pairs within / pairs and
the bad pairs, then one summary line (:func:`suite.seeds_line`: scores averaged
over the seeds, then each seed's share); per seed one line pooling every
baseline and perturbation; the pairs that missed.  ``--md`` writes it as
markdown tables, ``--out`` every row as JSON.

Usage::

    python benchmarks/suite_noise_floor.py [--sets a,b,named:usps]
        [--estimators FGMClassifier,...] [--perturbations C*1.5,nystroem-seed]
        [--seeds 0,1,2] [--jobs 1] [--max-rows 20000]
        [--md noise.md] [--out noise.json]
"""

import os

# One thread per process, before numpy loads its BLAS (as suite.py does).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import multiprocessing  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

from sklearn.model_selection import KFold  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _common import markdown_table  # noqa: E402
from suite import (  # noqa: E402
    NAMED,
    NO_DATA,
    PAIRS,
    _cached_split,
    _cpu_seconds,
    _git_commit,
    _Timeout,
    compare,
    load_set,
    make_baseline,
    overall_line,
    parse_seeds,
    score,
    seeds_line,
    seeds_summary,
    select_sets,
    suite_dir,
    write_outputs,
    summary_line,
    timed_fit,
    warm_up,
)

NYSTROEM_OFFSET = 10000  # another landmark draw, never one of the split seeds


def _scale_C(factor):
    def apply(step, seed):
        step.set_params(C=step.C * factor)

    return apply


# pipeline step name -> [(key, label, apply(step, seed))]: what each step allows
STEP_PERTURBATIONS = {
    "nystroem": [
        (
            "nystroem-seed",
            f"Nystroem random_state=seed+{NYSTROEM_OFFSET}",
            lambda step, seed: step.set_params(random_state=seed + NYSTROEM_OFFSET),
        )
    ],
    "svc": [
        ("C*1.5", "C x 1.5", _scale_C(1.5)),
        ("C/1.5", "C / 1.5", _scale_C(1 / 1.5)),
    ],
    "linearsvc": [
        ("C*1.5", "C x 1.5", _scale_C(1.5)),
        ("C/1.5", "C / 1.5", _scale_C(1 / 1.5)),
    ],
    "lassocv": [
        (
            "cv=5-shuffled",
            "cv=KFold(5, shuffle=True)",
            lambda step, seed: step.set_params(
                cv=KFold(5, shuffle=True, random_state=seed)
            ),
        ),
        ("cv=3", "cv=3 (default 5)", lambda step, seed: step.set_params(cv=3)),
    ],
    "ridgecv": [
        ("cv=5", "cv=5 (default leave-one-out)", lambda s, seed: s.set_params(cv=5))
    ],
    "ridgeclassifiercv": [
        ("cv=5", "cv=5 (default leave-one-out)", lambda s, seed: s.set_params(cv=5))
    ],
}
SAME = ("same", "none (the baseline itself)")


def baselines(estimators):
    """``{baseline label: first estimator of estimators with that baseline}``."""
    out = {}
    for name in estimators:
        out.setdefault(PAIRS[name][1], name)
    return out


def perturbations(name):
    """``[(key, label)]`` of the perturbations of ``name``'s baseline, in step order."""
    steps = make_baseline(name, 0).named_steps
    return [
        (key, label)
        for step in steps
        for key, label, _ in STEP_PERTURBATIONS.get(step, [])
    ]


def make_perturbed(name, key, seed):
    """``suite.make_baseline(name, seed)`` with the perturbation ``key`` applied.

    Raises
    ------
    ValueError
        If ``key`` is not a perturbation of that baseline.
    """
    model = make_baseline(name, seed)
    if key == SAME[0]:
        return model
    for step_name, step in model.named_steps.items():
        for k, _, apply in STEP_PERTURBATIONS.get(step_name, []):
            if k == key:
                apply(step, seed)
                return model
    raise ValueError(
        f"perturbation {key!r} does not apply to {PAIRS[name][1]}; choose from "
        f"{[k for k, _ in perturbations(name)] + [SAME[0]]}"
    )


def run_job(job):
    """Rows of one ``(set, baseline, seed)``: the baseline once, each perturbation.

    Each row has the fields of a ``suite.run_pair`` row ("ours" is the
    perturbed baseline) plus ``perturbation`` and ``perturbation_label``;
    errors are stored, not raised.
    """
    spec, task, name, keys, max_rows, seed, timeout, clock = job
    labels = dict(perturbations(name) + [SAME])
    rows = [
        {
            "set": spec,
            "estimator": name,
            "baseline": PAIRS[name][1],
            "perturbation": key,
            "perturbation_label": labels[key],
            "params": {},
            "error": None,
        }
        for key in keys
    ]

    def fail(msg, todo=rows):
        for row in todo:
            row["error"] = msg
        return rows

    try:
        (Xtr, ytr, Xte, yte), task, n = _cached_split(spec, task, max_rows, seed)
    except Exception as exc:
        for row in rows:
            row["task"] = task
        return fail(f"data: {type(exc).__name__}: {exc}")
    for row in rows:
        row.update(task=task, n=n, n_train=Xtr.shape[0], n_test=Xte.shape[0])
        row["d"] = Xtr.shape[1]
    if task != PAIRS[name][0]:
        return fail(f"{PAIRS[name][1]} is for {PAIRS[name][0]}, the set is {task}")

    def fit_score(model):
        cpu, wall, warned = timed_fit(model, Xtr, ytr, timeout)
        return score(task, yte, model.predict(Xte)), cpu, wall, warned

    def error_text(side, exc):
        if isinstance(exc, _Timeout):
            return f"{side}: fit longer than --timeout {timeout} s"
        return f"{side}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"

    try:
        base = fit_score(make_baseline(name, seed))
    except (Exception, _Timeout) as exc:
        return fail(error_text("base", exc))
    for row in rows:
        try:
            ours = fit_score(make_perturbed(name, row["perturbation"], seed))
        except (Exception, _Timeout) as exc:
            fail(error_text("ours", exc), [row])
            continue
        for side, (sc, cpu, wall, warned) in (("ours", ours), ("base", base)):
            row.update({f"score_{side}": sc, f"cpu_{side}": cpu, f"wall_{side}": wall})
            row[f"warn_{side}"] = warned
        gap, within, bad = compare(task, row["score_ours"], row["score_base"])
        t_ours, t_base = row[f"{clock}_ours"], row[f"{clock}_base"]
        row.update(
            gap=gap,
            within=bool(within),
            bad=bool(bad),
            time_ratio=t_ours / t_base if t_base > 0 else math.inf,
        )
    return rows


def run_noise(
    sets, plan, seeds, max_rows=20000, jobs=1, timeout=600.0, clock="cpu", log=print
):
    """Every baseline and its perturbations on every set of its task and seed.

    Parameters
    ----------
    sets : dict
        ``{spec: task or None}`` as for ``suite.run``.
    plan : dict
        ``{estimator: [perturbation keys]}``; the estimator names its baseline.
    seeds : list of int
        Seeds of the splits and of every ``random_state``.
    max_rows, jobs, timeout, clock, log
        As for ``suite.run``.

    Returns
    -------
    rows : dict
        ``{seed: rows}``, in set, baseline, perturbation order.
    """
    tasks = {}
    for spec, task in sets.items():
        if task is None:  # no manifest entry: read the target once
            try:
                task = load_set(spec)[2]
            except Exception:
                task = None  # load error recorded by each row
        tasks[spec] = task
    job_list = [
        (spec, tasks[spec], name, keys, max_rows, seed, timeout, clock)
        for spec in sets
        for seed in seeds
        for name, keys in plan.items()
        if tasks[spec] is None or PAIRS[name][0] == tasks[spec]
    ]
    out = {seed: [] for seed in seeds}

    def done(i, job, rows):
        out[job[5]].extend(rows)
        what = "; ".join(
            f"{r['perturbation']}: " + (r["error"] or f"gap {r['gap']:.3g}")
            for r in rows
        )
        log(f"[{i}/{len(job_list)}] {job[0]} {PAIRS[job[2]][1]} seed {job[5]}: {what}")

    names = list(plan)
    if jobs <= 1:
        warm_up(names, {}, seeds[0])
        for i, job in enumerate(job_list, 1):
            done(i, job, run_job(job))
    else:
        with ProcessPoolExecutor(
            jobs,
            mp_context=multiprocessing.get_context("fork"),
            initializer=warm_up,
            initargs=(names, {}, seeds[0]),
        ) as pool:
            for i, (job, rows) in enumerate(
                zip(job_list, pool.map(run_job, job_list, chunksize=1)), 1
            ):
                done(i, job, rows)
    return out


def summaries(by_seed, plan, clock="cpu"):
    """One entry per (baseline, perturbation): ``suite.seeds_summary`` of its rows.

    Each entry is the mean-over-seeds summary dict (``estimator`` holds the
    perturbation in brackets, so ``suite.summary_line`` reads "[C x 1.5] vs
    SVC(): ...") with ``perturbation`` and ``per_seed_summary`` ({seed:
    summary dict}) added.
    """
    out = []
    for name, keys in plan.items():
        for key in keys:
            mine = {
                seed: [
                    r
                    for r in rows
                    if r["estimator"] == name and r["perturbation"] == key
                ]
                for seed, rows in by_seed.items()
            }
            if not any(mine.values()):
                continue
            _, summary, per_seed = seeds_summary(mine, [name], clock)
            label = next(
                r["perturbation_label"] for rows in mine.values() for r in rows
            )
            tag = f"[{label}]"
            entry = dict(summary[0], estimator=tag, perturbation=key)
            entry["per_seed_summary"] = {
                seed: dict(s[0], estimator=tag, perturbation=key)
                for seed, s in per_seed.items()
            }
            out.append(entry)
    return out


def _worst(s):
    if s["worst_gap"] is None:
        return ""
    fmt = "{:+.1f}" if s["task"] == "clf" else "{:.3f}"
    return fmt.format(s["worst_gap"]) + f" ({s['worst_set']})"


def report(by_seed, summary, seeds):
    """Markdown: the per-seed counts table, the summary lines, the missed pairs."""
    header = ["baseline", "perturbation"]
    for seed in seeds:
        header += [f"seed {seed} within", f"seed {seed} bad", f"seed {seed} worst"]
    header += ["mean of seeds within", "min share"]
    body = []
    for s in summary:
        row = [s["baseline"], s["estimator"][1:-1]]
        for seed in seeds:
            p = s["per_seed_summary"][seed]
            row += [
                f"{p['within']}/{p['pairs']} ({100 * p['share_within']:.1f} %)",
                str(p["bad"]),
                _worst(p),
            ]
        row += [
            f"{s['within']}/{s['pairs']} ({100 * s['share_within']:.1f} %)",
            f"{100 * min(s['per_seed_share']):.1f} %",
        ]
        body.append(row)
    lines = []
    for seed in seeds:
        lines.append(
            f"seed {seed}, every baseline and perturbation pooled: "
            + overall_line([s["per_seed_summary"][seed] for s in summary])
        )
    # the first perturbation of each baseline (the mildest: another seed or a
    # larger C) stands in for its estimator: the suite's pairs, one twin each
    first = [
        s
        for i, s in enumerate(summary)
        if s["baseline"] not in {t["baseline"] for t in summary[:i]}
    ]
    for seed in seeds:
        lines.append(
            f"seed {seed}, first perturbation of each baseline pooled: "
            + overall_line([s["per_seed_summary"][seed] for s in first])
        )
    lines += [seeds_line(s) for s in summary]
    lines.append("mean of seeds, pooled: " + overall_line(summary))
    lines.append("mean of seeds, first perturbations pooled: " + overall_line(first))
    misses = [
        [
            seed,
            r["set"],
            r.get("n_test", ""),
            r["baseline"],
            r["perturbation_label"],
            r["error"]
            or (f"{r['gap']:+.1f}" if r["task"] == "clf" else f"{r['gap']:.3f}"),
        ]
        for seed in seeds
        for r in by_seed[seed]
        if not r.get("within")
    ]
    miss_table = markdown_table(
        [
            "seed",
            "set",
            "test rows",
            "baseline",
            "perturbation",
            "gap (pts) / MSE ratio",
        ],
        misses,
    )
    return "\n".join(
        [
            markdown_table(header, body),
            "",
            *[f"- {line}" for line in lines],
            "",
            f"pairs not within ({len(misses)}):",
            "",
            miss_table,
        ]
    )


def main(argv=None):
    """Command line: run, print the counts and summary lines, write JSON/markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=None, help="as for suite.py (default: all)")
    parser.add_argument("--named", default=",".join(NAMED), help="as for suite.py")
    parser.add_argument(
        "--estimators",
        default=",".join(PAIRS),
        help="whose baselines to perturb (each baseline once)",
    )
    parser.add_argument(
        "--perturbations",
        default=None,
        help="comma list of keys (default: every one that applies; 'same' = none)",
    )
    parser.add_argument("--max-rows", type=int, default=20000, help="training-row cap")
    parser.add_argument("--seeds", default="0", help="comma list, e.g. 0,1,2")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0, help="per fit, seconds")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--out", default="benchmarks/out/suite_noise_floor.json")
    parser.add_argument("--md", default=None, help="also write the report here")
    args = parser.parse_args(argv)

    estimators = [e.strip() for e in args.estimators.split(",") if e.strip()]
    unknown = [e for e in estimators if e not in PAIRS]
    if unknown:
        parser.error(f"unknown estimator(s) {unknown}; choose from {list(PAIRS)}")
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError as exc:
        parser.error(str(exc))
    wanted = (
        None
        if args.perturbations is None
        else [k.strip() for k in args.perturbations.split(",") if k.strip()]
    )
    plan = {}
    for name in baselines(estimators).values():
        keys = [k for k, _ in perturbations(name)] + [SAME[0]]
        plan[name] = keys[:-1] if wanted is None else [k for k in wanted if k in keys]
    plan = {name: keys for name, keys in plan.items() if keys}
    known = {k for keys in STEP_PERTURBATIONS.values() for k, _, _ in keys} | {SAME[0]}
    if wanted and set(wanted) - known:
        parser.error(
            f"unknown perturbation(s) {sorted(set(wanted) - known)}; "
            f"choose from {sorted(known)}"
        )
    if not plan:
        parser.error("no perturbation applies to the chosen baselines")

    sets, skipped = select_sets(args.sets, args.named)
    if sets is None:
        print(NO_DATA.format(folder=suite_dir()))
        return None
    t0, cpu0 = time.perf_counter(), _cpu_seconds()
    by_seed = run_noise(
        sets,
        plan,
        seeds,
        max_rows=args.max_rows,
        jobs=args.jobs,
        timeout=args.timeout,
        clock=args.clock,
        log=lambda s: print(s, file=sys.stderr, flush=True),
    )
    total, total_cpu = time.perf_counter() - t0, _cpu_seconds() - cpu0
    summary = summaries(by_seed, plan, args.clock)
    head = (
        f"suite noise floor: {len(sets)} sets, max {args.max_rows} train rows, "
        f"seeds {','.join(map(str, seeds))}; each baseline (after StandardScaler, "
        f"as in suite.py) against a perturbation of itself; total {total:.0f} s "
        f"wall, {total_cpu:.0f} s CPU"
    )
    md = "\n".join(
        [
            head,
            "",
            report(by_seed, summary, seeds),
            "",
            *[f"skipped {s}" for s in skipped],
            "",
        ]
    )
    print(md)
    result = {
        "meta": {
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "commit": _git_commit(),
            "data": str(suite_dir()),
            "sets": list(sets),
            "plan": plan,
            "seeds": seeds,
            "max_rows": args.max_rows,
            "jobs": args.jobs,
            "skipped": skipped,
            "total_seconds": total,
            "total_cpu_seconds": total_cpu,
        },
        "rows": [dict(r, seed=s) for s, rows in by_seed.items() for r in rows],
        "summary": summary,
        "summary_lines": [summary_line(s) for s in summary],
    }
    write_outputs(result, args.out, md, args.md)
    return result


if __name__ == "__main__":
    main()
