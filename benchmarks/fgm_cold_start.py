"""Cold start: FGM's first fit in a new process against a warm fit in the same process.

The compiled master (numba, ``cache=True``) is loaded from its on-disk cache in
a new process; this measures what that costs.  Each of ``--runs`` fresh Python
processes imports kernlearn, fits ``FGMClassifier()`` on scikit-learn's digits
twice and reports import time, first-fit time and second-fit time; the medians
and the first-minus-warm difference are printed.  The first process also warms
the cache when it is empty (run the script twice on a fresh checkout).

Usage::

    python benchmarks/fgm_cold_start.py [--runs 5]
"""

import argparse
import statistics
import subprocess
import sys

CODE = r"""
import time
t0 = time.perf_counter()
from kernlearn import FGMClassifier
from sklearn.datasets import load_digits
X, y = load_digits(return_X_y=True)
t1 = time.perf_counter(); FGMClassifier().fit(X, y); t2 = time.perf_counter()
FGMClassifier().fit(X, y); t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    rows = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                             check=True).stdout
        rows.append([float(v) for v in out.split()])
    imp, first, warm = (statistics.median(col) for col in zip(*rows))
    print(f"median of {args.runs} processes: import {imp:.3f} s, first fit {first:.3f} s, "
          f"warm fit {warm:.3f} s, first - warm {first - warm:.3f} s")


if __name__ == "__main__":
    main()
