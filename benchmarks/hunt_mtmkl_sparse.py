"""Randomised hunt: multitask MKL fitted on sparse ``X`` against the fit of ``X.toarray()``.

Each case draws a kernel list (linear, RBF and polynomial widths given or
resolved on the data, several widths, column views, the constant kernel, the
histogram kernels without ``standardize``), a formulation and its options,
sample weights with zeros, and a sparse encoding of the same numbers (float32,
explicit zeros, unsorted indices, duplicate entries, int64 indices, empty rows,
all-zero columns, CSC, COO, ``csr_array``).  It compares the predictions on new
rows (sparse and dense) of the sparse fit with those of the dense fit, and
prints the counts of agreements, mismatches and errors per kind.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/hunt_mtmkl_sparse.py --cases 60 --seed 0
"""

import argparse
import collections
import traceback
import warnings

import numpy as np
import scipy.sparse as sp

from kernlearn import MultitaskMKLClassifier, MultitaskMKLRegressor


class pytest_raises:
    """Assert that the block raises ``kind`` (an error of the dense fit)."""

    def __init__(self, kind):
        self.kind = kind

    def __enter__(self):
        return self

    def __exit__(self, typ, exc, tb):
        if typ is None:
            raise AssertionError(f"the sparse fit took what the dense fit refused ({self.kind})")
        return issubclass(typ, self.kind)


def _kernels(rng, standardize):
    pool = ["linear", ("rbf", {"gamma": "mean"}), ("rbf", {"gamma": "scale"}),
            ("rbf", {"gamma": float(rng.uniform(0.01, 0.5))}), "rbf",
            ("poly", {"degree": int(rng.integers(1, 4)), "gamma": "scale",
                      "coef0": float(rng.uniform(0, 2))}),
            ("poly", {"degree": 2, "gamma": float(rng.uniform(0.01, 0.2))}),
            ("linear", {}, list(range(0, 10))), ("rbf", {"gamma": "mean"}, slice(5, 20)),
            "constant"]
    if not standardize:
        # (gamma="scale" of columns not standardised: dense, the variance of all
        # entries; sparse, the mean of the columns' variances, by design in
        # every estimator, widths.scale_gamma: not the same width)
        pool = [k for k in pool if k != "rbf" and "scale" not in str(k)]
        pool += ["hik", ("hik", {"beta": 0.5}), "additive_chi2"]
    k = int(rng.integers(1, 4))
    picks = rng.choice(len(pool), size=k, replace=False)
    ks = [pool[i] for i in picks]
    if ks == ["constant"]:
        ks.append("linear")
    return ks


def _encode(rng, X):
    """The numbers of CSR ``X`` in another sparse encoding, and its name."""
    kind = str(rng.choice(["csr", "float32", "explicit_zeros", "unsorted", "duplicates",
                           "int64", "csc", "coo", "csr_array"]))
    if kind == "float32":
        return sp.csr_matrix(X, dtype=np.float32), kind
    if kind == "csc":
        return X.tocsc(), kind
    if kind == "coo":
        return X.tocoo(), kind
    if kind == "csr_array":
        return sp.csr_array(X), kind
    if kind == "int64":
        Y = X.copy()
        Y.indices, Y.indptr = Y.indices.astype(np.int64), Y.indptr.astype(np.int64)
        return Y, kind
    coo = X.tocoo()
    r, c, v = coo.row, coo.col, coo.data
    if kind == "explicit_zeros":
        zr, zc = rng.integers(0, X.shape[0], 30), rng.integers(0, X.shape[1], 30)
        Y = sp.csr_matrix((np.r_[v, np.zeros(30)], (np.r_[r, zr], np.r_[c, zc])), X.shape)
        Y.sum_duplicates()  # (sums, keeping the explicit zeros)
        return Y, kind
    if kind == "duplicates":
        half = v / 2.0
        Y = sp.coo_matrix((np.r_[half, v - half], (np.r_[r, r], np.r_[c, c])), X.shape)
        return _raw_csr(Y), kind
    # unsorted: each row's entries reversed
    Y = X.copy()
    for i in range(Y.shape[0]):
        s, e = Y.indptr[i], Y.indptr[i + 1]
        Y.indices[s:e] = Y.indices[s:e][::-1]
        Y.data[s:e] = Y.data[s:e][::-1]
    Y.has_sorted_indices = False
    return Y, kind


def _raw_csr(coo):
    """CSR of ``coo`` keeping its duplicate entries (scipy's tocsr sums them)."""
    order = np.lexsort((coo.col, coo.row))
    row, col, data = coo.row[order], coo.col[order], coo.data[order]
    indptr = np.r_[0, np.cumsum(np.bincount(row, minlength=coo.shape[0]))]
    Y = sp.csr_matrix((data, col, indptr), shape=coo.shape)
    assert not Y.has_canonical_format
    return Y


def _data(rng, n, d):
    X = sp.random(n, d, density=rng.uniform(0.1, 0.5), random_state=int(rng.integers(1 << 30)),
                  format="csr", data_rvs=lambda k: rng.poisson(3.0, k) + 1.0)
    X = sp.csr_matrix(X @ sp.diags(rng.uniform(0.5, 10.0, d)))
    X = X.tolil()
    X[int(rng.integers(n)), :] = 0  # an empty row
    X[:, int(rng.integers(d))] = 0  # an all-zero column
    X = X.tocsr()
    X.eliminate_zeros()
    return X


TOL = 1e-6


def case(rng):
    n, d = int(rng.integers(45, 80)), 25
    X = _data(rng, n + 20, d)
    Xtr, Xte = X[:n], X[n:]
    T = int(rng.integers(1, 4))
    t, tte = np.arange(n) % T, np.arange(20) % T
    Xd = Xtr.toarray()
    y = Xd[:, 0] - Xd[:, 3] + (t - 1) * Xd[:, 2] + rng.normal(size=n)
    standardize = bool(rng.random() < 0.7)
    reg = bool(rng.random() < 0.5)
    kw = {"kernels": _kernels(rng, standardize), "standardize": standardize,
          "normalize": bool(rng.random() < 0.8), "max_iter": 300, "tol": 1e-7,
          "formulation": str(rng.choice(["mtfl", "mtsfl", "mkl", "independent"])),
          # (a rank below the linear views' and n / 2: factors truncated)
          "max_rank": int(rng.choice([300, 5]))}
    if kw["formulation"] in ("mtfl", "mtsfl") and rng.random() < 0.3:
        kw["shared"] = True
    if reg:
        if rng.random() < 0.3:
            kw["loss"] = "epsilon_insensitive"
        if rng.random() < 0.2 and kw["formulation"] == "mtfl" and "loss" not in kw:
            kw["C"] = "auto"
        Est, target = MultitaskMKLRegressor, y
    else:
        Est, target = MultitaskMKLClassifier, (y > np.median(y)).astype(int)
        if rng.random() < 0.2:
            kw["probability"] = True
    sw = None
    if rng.random() < 0.3:
        sw = rng.uniform(0.2, 2.0, n)
        sw[rng.integers(0, n, 3)] = 0.0
    Xs, enc = _encode(rng, Xtr)
    Xte_s, enc_te = _encode(rng, Xte)
    # (the reference: the same numbers dense, float32's rounding included)
    Xd, Xte = sp.csr_matrix(Xs).toarray().astype(np.float64), sp.csr_matrix(Xte_s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            dense = Est(**kw).fit(Xd, target, task_index=t, sample_weight=sw)
        except ValueError as exc:  # (a setting refused: sparse must refuse it alike)
            with pytest_raises(type(exc)):
                Est(**kw).fit(Xs, target, task_index=t, sample_weight=sw)
            return None
        sparse = Est(**kw).fit(Xs, target, task_index=t, sample_weight=sw)
        f = "predict" if reg else ("predict_proba" if kw.get("probability")
                                   else "decision_function")
        ref = getattr(dense, f)(Xte.toarray(), task_index=tte)
        got_s = getattr(sparse, f)(Xte_s, task_index=tte)
        got_d = getattr(sparse, f)(Xte.toarray(), task_index=tte)
    scale = max(1.0, np.abs(ref).max())
    err = max(np.abs(got_s - ref).max(), np.abs(got_d - ref).max()) / scale
    w_err = np.abs(np.asarray(sparse.kernel_weights_) - np.asarray(dense.kernel_weights_)).max()
    floor = 0.0
    if max(err, w_err) >= TOL:
        # the fit's own sensitivity: the dense fit of X times 1 + 1e-13 noise
        # (solvers stopped at their tolerance, or unconverged, amplify rounding)
        Xp = Xd * (1.0 + 1e-13 * rng.standard_normal(Xd.shape))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            other = Est(**kw).fit(Xp, target, task_index=t, sample_weight=sw)
            floor = np.abs(getattr(other, f)(Xte.toarray(), task_index=tte) - ref).max() / scale
            floor = max(floor, np.abs(np.asarray(other.kernel_weights_)
                                      - np.asarray(dense.kernel_weights_)).max())
    return err, w_err, floor, f"{enc}/{enc_te}", kw, sw is not None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    counts = collections.Counter()
    for i in range(args.cases):
        try:  # (case i alone: np.random.default_rng([seed, i]))
            res = case(np.random.default_rng([args.seed, i]))
            if res is None:
                counts["refused alike"] += 1
                continue
            err, w_err, floor, enc, kw, weighted = res
        except Exception as exc:  # noqa: BLE001  (a crash is a finding)
            counts["error"] += 1
            print(f"case {i}: ERROR {type(exc).__name__}: {exc}")
            traceback.print_exc(limit=3)
            continue
        ok = err < TOL and w_err < TOL
        # (differences within 100 times the fit's own sensitivity are rounding)
        kind = "equal" if ok else "within noise" if max(err, w_err) < 100 * floor else "differ"
        counts[kind] += 1
        if not ok:
            print(f"case {i}: {kind}: pred rel err {err:.2e}, weights err {w_err:.2e}, "
                  f"noise {floor:.2e}, {enc}, "
                  f"weights={weighted}, {kw}")
    print(dict(counts))


if __name__ == "__main__":
    main()
