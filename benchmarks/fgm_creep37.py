"""FGM's slow creep near the optimum: the stop at a flat objective with a loose gap (issue 21).

For the cases of ``fgm_stop36.py`` (audits 8 and 53, the README's example,
the probabilities guide's ``B=3`` fit, ``make_regression``), runs the
estimator at defaults with last pass's rule (the objective-change stop below
``tol / 10`` at any duality gap) and this pass's (that stop only with the gap
within ``10 tol``), alternating, in one process, and prints each fit's
distance above a tight reference (``tol=1e-9``, ``max_iter=500``,
``inner_tol=1e-12``, at the same ``C``), its relative duality gap, rounds,
warnings and CPU time (median of ``--repeats``).  ``--trace`` prints the
audit-53 regressors' paths round by round (objective, change, gap, the
features priced and their scores relative to the best)::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fgm_creep37.py [--repeats 5] [--trace]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fgm_stop36 import CASES, _fit, _wide  # noqa: E402

import kernlearn as K  # noqa: E402
from kernlearn.families import FeaturePool  # noqa: E402
from kernlearn.methods import fgm  # noqa: E402

RULES = (("36", np.inf), ("37", fgm._LOOSE))


def _run(make, X, y, loose, repeats, **kw):
    saved, fgm._LOOSE = fgm._LOOSE, loose
    try:
        return _fit(make, X, y, repeats, **kw)
    finally:
        fgm._LOOSE = saved


def compare(repeats):
    print("| fit | rule | C | above optimum | gap | n_iter | warned | cpu s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (data, make) in CASES.items():
        X, y = data()
        times = {rule: [] for rule, _ in RULES}
        fits = {}
        for _ in range(repeats):  # alternate the rules (A/B), one fit per turn
            for rule, loose in RULES:
                est, warned, t = _run(make, X, y, loose, 1)
                times[rule].append(t)
                fits[rule] = (est, warned)
        refs = {}
        for rule, _ in RULES:
            est, warned = fits[rule]
            C = getattr(est, "C_", est.C)  # (C="auto": each rule's folds choose theirs)
            if C not in refs:
                refs[C] = _fit(make, X, y, tol=1e-9, max_iter=500, inner_tol=1e-12,
                               C=C)[0].history_["objective"].min()
            h = est.history_
            obj = h["objective"][-1]
            gap = (obj - h["final_lower_bound"][0]) / obj
            print(f"| {name} | {rule} | {C:.3g} | {100 * (obj / min(refs[C], obj) - 1):.2f} % "
                  f"| {100 * gap:.1f} % | {est.n_iter_} | {'yes' if warned else 'no'} "
                  f"| {np.median(times[rule]):.3f} |")
        print(f"|  | 37 / 36 time | | {np.median(times['37']) / np.median(times['36']):.2f}x "
              "|  |  |  |  |")


def trace():
    priced = []
    price = FeaturePool.price

    def spy(self, g, B, **kw):
        cand = price(self, g, B, **kw)
        sc = np.asarray(cand.scores, dtype=float)
        priced.append((np.asarray(cand.params).ravel().tolist(), np.round(sc / sc.max(), 3)))
        return cand

    FeaturePool.price = spy
    try:
        for B, C in ((2, 10.0), (5, 10 ** 0.5)):
            X, y = _wide()
            for rule, loose in RULES:
                priced.clear()
                est = _run(lambda **k: K.FGMRegressor(B=B, C=C, **k), X, y, loose, 1)[0]
                h = est.history_
                print(f"\nFGMRegressor(B={B}, C={C:.3g}), rule {rule}: round, objective, "
                      "change, gap, features priced next (scores / best)")
                for i, obj in enumerate(h["objective"]):
                    change = abs(h["objective"][i - 1] - obj) / h["objective"][i - 1] if i else np.nan
                    gap = h["gap"][i] / obj
                    nxt = priced[i + 1] if i + 1 < len(priced) else ("-", "")
                    print(f"{i:3d} {obj:10.6f} {100 * change:7.3f} % {100 * gap:6.1f} % "
                          f"{nxt[0]} {nxt[1]}")
    finally:
        FeaturePool.price = price


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--trace", action="store_true")
    args = ap.parse_args()
    if args.trace:
        trace()
    else:
        compare(args.repeats)


if __name__ == "__main__":
    main()
