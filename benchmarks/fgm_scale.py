"""FGM at scale (issue 16): the three parts of the scale benchmark in one run.

* **(a)** degree-2 FGM on usps 3-vs-8 and a9a against
  ``PolynomialFeatures(2) + l1 LinearSVC``, and on sparse data whose implicit
  expansion exceeds 10^10 features (:mod:`fgm_scale_expand`, parts ``a`` and
  ``a_budget``);
* **(b)** group FGM against skglm's group lasso at equal numbers of groups on
  the grouped synthetic data of paper 002, sec. 7.2 (:mod:`fgm_scale_expand`,
  part ``b``);
* **(c)** a 1,000,000 x 100,000 sparse set fitted in memory, out of core
  (chunked) and on a 2-worker Dask ``LocalCluster`` (:mod:`fgm_scale_dask`).

Each part runs in its own process (so that peak-memory readings are its own)
and prints its table; the numbers recorded in BENCHMARKS.md come from these
scripts.  Options after ``--`` go to every part's script.

Usage::

    python benchmarks/fgm_scale.py [--part a b c] [-- --repeats 3]
"""

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent

# part -> (script, its own arguments)
PARTS = {
    "a": ("fgm_scale_expand.py", ["--part", "a", "a_budget"]),
    "b": ("fgm_scale_expand.py", ["--part", "b"]),
    "c": ("fgm_scale_dask.py", []),
}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    extra = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", nargs="+", choices=sorted(PARTS), default=sorted(PARTS))
    args = ap.parse_args(argv)
    status = 0
    for part in args.part:
        script, own = PARTS[part]
        print(f"\n## part ({part}): {script} {' '.join(own + extra)}", flush=True)
        status |= subprocess.call([sys.executable, str(HERE / script), *own, *extra])
    return status


if __name__ == "__main__":
    sys.exit(main())
