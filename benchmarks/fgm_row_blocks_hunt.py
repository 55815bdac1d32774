"""FGM by row blocks (``memory_budget``) against the same fit in memory, randomised.

Each seeded case draws dense or CSR data with extreme columns (constant, spread
1e-9 about 1, 1e9 from zero, scaled by 1e150 or 1e-150, heavy-tailed), sample
weights with zeros (the removed rows sometimes holding +-1e300 or 1e-300),
groups or none, ``C`` from 1e-2 to 1e2, the de-biasing refit or not; then fits
``FGMClassifier`` / ``FGMRegressor`` in memory and with ``memory_budget="4KB"``
(row chunks) and checks the documented equality: the same selected features,
coefficients and intercepts within 1e-6 of the largest coefficient, the same
``converged_`` and the same warnings.  Prints the failing cases and the counts.
(Dask partitions: ``benchmarks/fuzz_dask.py``.)

``--wide`` draws, on top, the inputs the first hunt did not: no intercept,
class weights, ``multiclass`` shared or one-vs-rest, several columns at
``1e9 + z`` with ``z`` of 1e-3 to 1e-6, a block of rows all of weight 0, a
last block of one row, weights summing below 1e-300 or above 1e300, float32
input and ``max_features``; the blocks' size is then drawn too.  ``--dask``
also fits on Dask partitions of the same rows (a ``LocalCluster`` of two
one-thread workers in this process), compared with the in-memory fit alike.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fgm_row_blocks_hunt.py --seed 0 --cases 150
    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fgm_row_blocks_hunt.py --wide --dask
"""

import argparse
import warnings

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kernlearn import FGMClassifier, FGMRegressor

COLUMNS = [(0.1, "const"), (0.2, "spread1e-9"), (0.3, "offset1e9"), (0.35, "1e150"),
           (0.4, "1e-150"), (0.5, "heavy")]


def draw(rng):
    """One random case: data, target, weights, estimator options."""
    n, p = int(rng.integers(30, 120)), int(rng.integers(3, 10))
    X = rng.standard_normal((n, p))
    notes = []
    for j in range(p):
        r = rng.random()
        kind = next((k for edge, k in COLUMNS if r < edge), None)
        if kind == "const":
            X[:, j] = 7.0
        elif kind == "spread1e-9":
            X[:, j] = X[:, j] * 1e-9 + 1.0
        elif kind == "offset1e9":
            X[:, j] += 1e9
        elif kind == "1e150":
            X[:, j] *= 1e150
        elif kind == "1e-150":
            X[:, j] *= 1e-150
        elif kind == "heavy":
            X[:, j] = rng.standard_t(1.5, n)
        if kind:
            notes.append(kind)
    sw = None
    if rng.random() < 0.7:
        sw = rng.uniform(0.2, 3, n)
        sw[rng.random(n) < 0.25] = 0.0
        sw[:5] = 1.0
        if rng.random() < 0.5:
            X[sw == 0, int(rng.integers(p))] = float(rng.choice([1e300, -1e300, 1e-300]))
            notes.append("far_removed")
    kept = slice(None) if sw is None else sw > 0
    t = rng.standard_normal(n)
    for j in [j for j in range(p) if np.std(X[kept, j]) > 0][:3]:
        z = X[:, j] - X[kept, j].mean()
        t = t + z / X[kept, j].std()
    reg = rng.random() < 0.5
    if reg:
        y = t
    elif rng.random() < 0.5:
        y = np.digitize(t, np.quantile(t, [0.33, 0.66]))
    else:
        y = (t > np.median(t)).astype(int)
    kw = dict(B=int(rng.integers(1, 4)), max_iter=int(rng.integers(2, 8)),
              C=float(10.0 ** rng.integers(-2, 3)))
    if rng.random() < 0.4:
        perm = rng.permutation(p)
        kw["groups"] = [g.tolist() for g in np.array_split(perm, max(2, p // 2))]
    if rng.random() < 0.3:
        kw["refit"] = True
    return X, y, sw, reg, kw, rng.random() < 0.3, notes


def widen(rng, X, y, sw, reg, kw, notes):
    """The ``--wide`` draws on one case; returns ``X, sw, kw, chunk_rows``."""
    n, p = X.shape
    if rng.random() < 0.3:
        kw["fit_intercept"] = False
        notes.append("no_intercept")
    if rng.random() < 0.3:
        # several columns at 1e9 + z, z tiny: the recheck's own ground
        z = 10.0 ** -int(rng.integers(3, 7))
        for j in rng.choice(p, size=min(p, int(rng.integers(2, 4))), replace=False):
            X[:, j] = 1e9 + z * rng.standard_normal(n)
        notes.append(f"offsets+{z:g}z")
    if not reg and rng.random() < 0.4:
        kw["class_weight"] = "balanced" if rng.random() < 0.5 else {
            c: float(rng.uniform(0.1, 5)) for c in np.unique(y)}
        notes.append("class_weight")
    if not reg and len(np.unique(y)) > 2:
        kw["multiclass"] = str(rng.choice(["shared", "ovr"]))
    if rng.random() < 0.25:
        kw["max_features"] = int(rng.integers(1, p + 1))
    chunk = int(rng.integers(3, 20))
    if rng.random() < 0.3:  # a last block of one row
        X, y = X[: (n - 1) // chunk * chunk + 1], y[: (n - 1) // chunk * chunk + 1]
        sw = None if sw is None else sw[: X.shape[0]]
        notes.append("one_row_block")
    if sw is not None and rng.random() < 0.3 and X.shape[0] > 2 * chunk + 5:
        sw[chunk : 2 * chunk] = 0.0  # a whole block of weight 0
        notes.append("zero_block")
    if sw is not None and rng.random() < 0.3:
        sw = sw * float(rng.choice([1e-305, 1e-303, 1e303, 1e305]))
        notes.append(f"sw_sum={sw.sum():.1e}")
    if rng.random() < 0.2 and np.abs(X).max() < 1e30:  # (float32 holds every value)
        X = X.astype(np.float32)
        notes.append("float32")
    return X, y, sw, kw, chunk


def fit(make, X, y, sw, **kw):
    """The fitted model (None on an error) and its warnings (or the error)."""
    with warnings.catch_warnings(record=True) as seen, threadpool_limits(1):
        warnings.simplefilter("always")
        try:
            m = make(**kw).fit(X, y, sample_weight=sw)
        except Exception as e:  # noqa: BLE001 - compared with the other route's
            return None, f"{type(e).__name__}: {e}"
    return m, sorted({str(w.message)[:90] for w in seen})


def compare(ref, got, said_ref, said):
    """The documented equality's failed claims."""
    bad = []
    if not np.array_equal(np.sort(ref.selected_features_), np.sort(got.selected_features_)):
        return [f"selected {ref.selected_features_} vs {got.selected_features_}"]
    c0, c1 = np.atleast_2d(ref.coef_), np.atleast_2d(got.coef_)
    scale = np.abs(c0).max() if c0.size else 0.0
    if not np.allclose(c0, c1, rtol=0, atol=1e-6 * scale + 1e-300):
        bad.append(f"coef max diff {np.abs(c0 - c1).max():.3g} of {scale:.3g}")
    if not np.allclose(ref.intercept_, got.intercept_, rtol=1e-6,
                       atol=1e-6 * (np.abs(ref.intercept_).max() + scale)):
        bad.append(f"intercept {ref.intercept_} vs {got.intercept_}")
    if ref.converged_ != got.converged_:
        bad.append(f"converged {ref.converged_} vs {got.converged_}")
    if said != said_ref:
        bad.append(f"warnings {said_ref} vs {said}")
    return bad


def main():
    """Run the cases; print the failures and the counts."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=150)
    ap.add_argument("--wide", action="store_true", help="draw the wider inputs too")
    ap.add_argument("--dask", action="store_true", help="also fit on Dask partitions")
    a = ap.parse_args()
    if a.dask:
        import distributed

        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            client.wait_for_workers(2, timeout=30)
            run(a)
    else:
        run(a)


def run(a):
    """The cases of ``a`` (parsed arguments); prints the failures and the counts."""
    counts = {"cases": a.cases, "compared": 0, "refused_both": 0, "failed": 0}
    for i in range(a.cases):
        rng = np.random.default_rng([a.seed, i])
        X, y, sw, reg, kw, csr, notes = draw(rng)
        budget = "4KB"
        if a.wide:
            X, y, sw, kw, chunk = widen(rng, X, y, sw, reg, kw, notes)
            Xc = sp.csr_matrix(X) if csr else X
            row = ((Xc.data.nbytes + Xc.indices.nbytes) / X.shape[0] if csr
                   else X.shape[1] * X.dtype.itemsize)
            budget = int(2 * chunk * row) + 1  # (blocks of ``chunk`` rows)
        est = FGMRegressor if reg else FGMClassifier
        Xi = sp.csr_matrix(X) if csr else X
        ref, said_ref = fit(lambda **k: est(**kw, **k), Xi, y, sw)
        routes = [("budget", dict(memory_budget=budget), Xi)]
        if a.dask:
            import dask.array as da

            step = max(3, X.shape[0] // int(rng.integers(2, 5)))
            Xd = (da.from_array(Xi, chunks=(step, X.shape[1]), asarray=False) if csr
                  else da.from_array(Xi, chunks=(step, X.shape[1])))
            routes.append(("dask", {}, Xd))
        for route, extra, Xr in routes:
            got, said = fit(lambda **k: est(**kw, **k), Xr, y, sw, **extra)
            desc = f"case {i} [{route}]: {est.__name__} csr={csr} {kw} notes={notes}"
            if ref is None or got is None:
                if (ref is None) != (got is None) or said != said_ref:
                    counts["failed"] += 1
                    print(desc, "\n    refusal differs:", said_ref, "|", said)
                else:
                    counts["refused_both"] += 1
                continue
            counts["compared"] += 1
            bad = compare(ref, got, said_ref, said)
            if bad:
                counts["failed"] += 1
                print(desc)
                for b in bad:
                    print("   ", b)
    print(" ".join(f"{k}={v}" for k, v in counts.items()), flush=True)


if __name__ == "__main__":
    main()
