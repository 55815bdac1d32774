"""``LowRankKernelRegressor`` against its anchor on small data, and two source trees paired.

Issue 24: the regressor's fit on ``benchmarks/small_fits.py``'s data costs
2.5-7x ``Nystroem(100) + Ridge()``; the goal is 3x.  For each ``--sizes``
entry this script fits the regressor at its defaults (``random_state=0``)
and the anchor in turn, ``--fits`` times each after one warm-up fit, and
prints the median CPU ms of both and their ratio (``time.process_time``, one
thread: ``OMP_NUM_THREADS=1`` and friends set before numpy loads).

``--ab OLD_SRC NEW_SRC`` compares two source trees (``src`` folders, e.g.
one exported from the commit before a change) in one run: ``--rounds``
rounds, each running one new process per tree, in turn (the first tree
first in odd rounds, second in even ones, so that a change of load on a
shared machine hits both alike); each process reports its medians as above,
and the table gives, per tree and size, the median over the rounds of the
regressor's ms, the anchor's ms and their ratio, then the new tree's time
over the old one's (a per-round ratio, median over rounds).  A process
imports ``kernlearn`` from the tree it is given (``PYTHONPATH``), this
script's data from ``small_fits.py`` next to it.

Usage::

    python benchmarks/slkl_regressor_cost.py [--sizes 100x10,400x8,1000x20] [--fits 7]
    python benchmarks/slkl_regressor_cost.py --ab OLD/src NEW/src [--rounds 5] [--fits 5]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import markdown_table  # noqa: E402
from small_fits import PAIRS, make_data, median_fits, ours, parse_sizes  # noqa: E402

NAME = "LowRankKernelRegressor"
#: issue 24's goal: the regressor's fit at most this many times the anchor's
GOAL = 3.0


def measure(sizes, fits):
    """``{size: (ours ms, anchor ms)}``: medians of ``fits`` fits each, in turn."""
    task, _, anchor = PAIRS[NAME]
    out = {}
    warnings.simplefilter("ignore")
    for n, d in sizes:
        X, y, _ = make_data(task, n, d)
        (t_ours, t_anchor), _ = median_fits([lambda: ours(NAME), anchor], X, y, fits)
        out[f"{n}x{d}"] = (1e3 * t_ours, 1e3 * t_anchor)
    return out


def run_tree(src, sizes_text, fits):
    """:func:`measure` in a new process importing ``kernlearn`` from ``src``."""
    env = dict(os.environ, PYTHONPATH=str(Path(src).resolve()))
    cmd = [sys.executable, __file__, "--worker", "--sizes", sizes_text, "--fits", str(fits)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def paired(trees, sizes_text, rounds, fits):
    """Rows of the A/B table: per tree and size, medians over ``rounds`` rounds."""
    runs = {src: [] for src in trees}
    for r in range(rounds):
        for src in (trees if r % 2 == 0 else trees[::-1]):
            runs[src].append(run_tree(src, sizes_text, fits))
            print(f"round {r + 1}, {src}: {runs[src][-1]}", file=sys.stderr, flush=True)
    rows = []
    for size in runs[trees[0]][0]:
        for k, src in enumerate(trees):
            mine = [run[size] for run in runs[src]]
            ratio = statistics.median(o / a for o, a in mine)
            speed = "" if k == 0 else statistics.median(
                new[size][0] / old[size][0] for new, old in zip(runs[src], runs[trees[0]]))
            rows.append([size, src, statistics.median(o for o, _ in mine),
                         statistics.median(a for _, a in mine), ratio,
                         "yes" if ratio <= GOAL else "no", speed])
    return rows


def main(argv=None):
    """Run the benchmark; return the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100x10,400x8,1000x20")
    parser.add_argument("--fits", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ab", nargs=2, metavar=("OLD_SRC", "NEW_SRC"))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.fits < 1 or args.rounds < 1:
        parser.error("--fits and --rounds must be at least 1")
    sizes = parse_sizes(parser, args.sizes)
    if args.worker:
        print(json.dumps(measure(sizes, args.fits)))
        return 0
    label = f"{PAIRS[NAME][1]} ms"
    if args.ab:
        missing = [src for src in args.ab if not (Path(src) / "kernlearn").is_dir()]
        if missing:
            parser.error(f"--ab: no kernlearn package under {missing}")
        rows = paired(args.ab, args.sizes, args.rounds, args.fits)
        print(markdown_table(["data", "tree", "ours ms", label, "ratio",
                              f"<= {GOAL:g}x", "new / old"], rows))
        return 0
    rows = [[size, o, a, o / a, "yes" if o / a <= GOAL else "no"]
            for size, (o, a) in measure(sizes, args.fits).items()]
    print(markdown_table(["data", "ours ms", label, "ratio", f"<= {GOAL:g}x"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
