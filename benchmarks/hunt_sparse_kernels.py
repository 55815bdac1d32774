"""Randomised hunt: the histogram kernels (``hik``, ``additive_chi2``) of sparse rows
against the same numbers dense, directly and inside the estimators.

Kernel cases draw a matrix (one row or many, one column or many, wide, empty
rows and columns, negative values, huge and tiny magnitudes, a NaN now and
then), a dtype (float64, float32, int8, int64, bool), a sparse encoding
(CSR, CSC, COO, ``csr_array``, unsorted indices, duplicate entries, explicit
zeros, int64 indices, read-only arrays as a memory map hands them) and a
``beta``, and compare ``hik_kernel``, ``additive_chi2_kernel``,
``pairwise_kernel`` and ``kernel_diag`` of the sparse matrix (against a
sparse or a dense other side; ``beta`` zero now and then, ``block`` a small
or a NumPy integer) with those of ``X.toarray()``: equal to
1e-10 relative, NaN where the dense kernel has NaN, the same error where the
dense kernel raises one, and no compilation at run time (the compiled
function's signatures counted).  Estimator cases fit the multitask,
p-norm MKL and low-rank estimators with a histogram kernel on sparse rows
and on the same rows dense (sample weights with zeros, task orders) and
compare their predictions on sparse and dense new rows.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/hunt_sparse_kernels.py --cases 400 --fits 40 --seed 0
"""

import argparse
import collections
import traceback
import warnings

import numpy as np
import scipy.sparse as sp

from kernlearn import (LowRankKernelRegressor, MultitaskMKLClassifier, MultitaskMKLRegressor,
                       PNormMKLClassifier)
from kernlearn._sparse_histogram import _csr_histogram_rows
from kernlearn.kernels import additive_chi2_kernel, hik_kernel, kernel_diag, pairwise_kernel

RTOL = 1e-10
FIT_TOL = 1e-6


def _matrix(rng):
    """A dense matrix with the shapes and values a user may hold."""
    shape = str(rng.choice(["small", "one_row", "one_col", "wide"]))
    n = 1 if shape == "one_row" else int(rng.integers(2, 25))
    d = 1 if shape == "one_col" else int(rng.integers(200, 600)) if shape == "wide" \
        else int(rng.integers(2, 40))
    D = np.where(rng.random((n, d)) < rng.uniform(0.05, 0.6), rng.poisson(3.0, (n, d)) + 1.0,
                 0.0)
    D *= rng.uniform(0.1, 3.0, d)
    mag = str(rng.choice(["plain", "huge", "tiny", "negative", "nan"], p=[.5, .12, .12, .16, .1]))
    if mag == "huge":
        D *= 1e150
    elif mag == "tiny":
        D *= 1e-300
    elif mag == "negative":
        D *= np.where(rng.random(D.shape) < 0.3, -1.0, 1.0)
    elif mag == "nan" and D.size:
        D[rng.integers(n), rng.integers(d)] = np.nan
    if n > 2:
        D[rng.integers(n)] = 0.0  # an empty row
    if d > 2:
        D[:, rng.integers(d)] = 0.0  # an empty column
    return D, f"{shape}/{mag}"


def _dtype(rng, D):
    kind = str(rng.choice(["float64", "float32", "int8", "int64", "bool"],
                          p=[.5, .2, .1, .1, .1]))
    if kind == "bool":
        return (D != 0) & ~np.isnan(D), kind
    if kind.startswith("int"):
        D = np.nan_to_num(D, nan=0.0)
        lim = 120 if kind == "int8" else 1e15
        with np.errstate(over="ignore", invalid="ignore"):
            return np.clip(np.round(D / max(1.0, np.abs(D).max()) * lim), -128, lim).astype(kind), kind
    with np.errstate(over="ignore"):  # (huge values: infinite in float32)
        return D.astype(kind), kind


def _encode(rng, D):
    """The numbers of ``D`` in a sparse encoding, and its name."""
    kind = str(rng.choice(["csr", "csc", "coo", "csr_array", "unsorted", "duplicates",
                           "explicit_zeros", "int64", "readonly"]))
    X = sp.csr_matrix(D)
    if kind == "csc":
        return X.tocsc(), kind
    if kind == "coo":
        return X.tocoo(), kind
    if kind == "csr_array":
        return sp.csr_array(X), kind
    if kind == "int64":
        X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
        return X, kind
    if kind == "readonly":  # (a memory-mapped matrix, as joblib's workers get it)
        X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
        for a in (X.data, X.indices, X.indptr):
            a.flags.writeable = False
        return X, kind
    r, c = np.nonzero(D)
    v = D[r, c]
    if kind == "duplicates" and D.dtype.kind == "f":
        # each entry split in two halves, rows grouped, columns unsorted
        r, c, v = np.r_[r, r], np.r_[c, c], np.r_[v / 4, v - v / 4].astype(D.dtype)
    elif kind == "explicit_zeros":
        zr, zc = np.nonzero(D == 0)
        pick = rng.random(len(zr)) < 0.3
        r, c = np.r_[r, zr[pick]], np.r_[c, zc[pick]]
        v = np.r_[v, np.zeros(pick.sum(), D.dtype)]
    order = rng.permutation(len(r))  # unsorted within rows
    r, c, v = r[order], c[order], v[order]
    by_row = np.argsort(r, kind="stable")
    indptr = np.r_[0, np.cumsum(np.bincount(r, minlength=D.shape[0]))]
    return sp.csr_matrix((v[by_row], c[by_row], indptr), shape=D.shape), kind


def _compare(got, want):
    """Violation text, or None: equal to RTOL of the kernel's scale, NaN where dense is."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    if not np.array_equal(nan_g, nan_w):
        return f"NaN at {nan_g.sum()} entries, dense {nan_w.sum()}"
    g, w = got[~nan_w], want[~nan_w]
    inf = np.isinf(w)
    if not np.array_equal(g[inf], w[inf]):
        return "infinities differ"
    g, w = g[~inf], w[~inf]
    if not w.size:
        return None
    scale = np.abs(w).max()
    err = np.abs(g - w).max() / scale if scale > 0 else np.abs(g).max()
    return None if err <= RTOL else f"rel err {err:.2e}"


def _outcome(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f(), None
        except Exception as exc:  # noqa: BLE001  (the same error dense and sparse)
            return None, type(exc).__name__


def kernel_case(rng):
    """Violations (list of text) of one kernel case, and its description."""
    D, shape = _matrix(rng)
    D, dtype = _dtype(rng, D)
    X, enc = _encode(rng, D)
    E, _ = _matrix(rng)
    E = np.abs(np.nan_to_num(E, nan=1.0))[:, :D.shape[1]] if E.shape[1] >= D.shape[1] \
        else np.abs(np.nan_to_num(_pad(E, D.shape[1]), nan=1.0))
    other = str(rng.choice(["self", "sparse", "dense"]))
    beta = float(rng.choice([1.0, 0.5, 2.0, 1.7, 0.0], p=[.3, .25, .2, .2, .05]))
    # (a NumPy integer, as a parameter grid hands it, or a small block)
    block = [256, 3, np.int32(7), np.int64(2)][int(rng.integers(4))]
    Xd = D.astype(np.float64) if dtype != "int8" else D.astype(np.float64)
    Y, Yd = {"self": (X, Xd), "sparse": (sp.csr_matrix(E), E), "dense": (E, E)}[other]
    bad = []
    n_sig = len(_csr_histogram_rows.signatures)
    checks = [
        ("hik", lambda A, B: hik_kernel(A, B, beta=beta, block=block)),
        ("chi2", lambda A, B: additive_chi2_kernel(A, B, block=block)),
        ("pairwise hik", lambda A, B: pairwise_kernel(A, B, "hik", beta=beta)),
        ("pairwise chi2", lambda A, B: pairwise_kernel(A, B, "additive_chi2")),
        ("diag hik", lambda A, B: kernel_diag(A, "hik", beta=beta)),
        ("diag chi2", lambda A, B: kernel_diag(A, "additive_chi2")),
    ]
    for name, f in checks:
        want, w_exc = _outcome(lambda: f(Xd, Yd))
        got, g_exc = _outcome(lambda: f(X, Y))
        if w_exc or g_exc:
            if w_exc != g_exc:
                bad.append(f"{name}: dense {w_exc or 'ok'}, sparse {g_exc or 'ok'}")
            continue
        why = _compare(got, want)
        if why:
            bad.append(f"{name}: {why}")
    if len(_csr_histogram_rows.signatures) > n_sig:
        bad.append(f"compiled at run time: {_csr_histogram_rows.signatures[n_sig:]}")
    return bad, f"{shape} {dtype} {enc} Y={other} beta={beta} block={block!r}"


def _pad(E, d):
    return np.hstack([E, np.zeros((E.shape[0], d - E.shape[1]))])


def _fit_data(rng, n, d):
    D = np.where(rng.random((n, d)) < rng.uniform(0.1, 0.4), rng.poisson(3.0, (n, d)) + 1.0,
                 0.0) * rng.uniform(0.5, 5.0, d)
    D[rng.integers(n)] = 0.0
    D[:, rng.integers(d)] = 0.0
    return D


def fit_case(rng):
    """Relative prediction difference (sparse fit vs dense fit) of one estimator case."""
    n, d = int(rng.integers(40, 70)), int(rng.integers(5, 30))
    D = _fit_data(rng, n + 15, d)
    Dtr, Dte = D[:n], D[n:]
    kernel = [("hik", {"beta": float(rng.choice([1.0, 0.5]))}), "additive_chi2"][
        int(rng.integers(2))]
    y = Dtr[:, 0] - Dtr[:, 1] + rng.normal(size=n)
    sw = None
    if rng.random() < 0.4:
        sw = rng.uniform(0.2, 2.0, n)
        sw[rng.integers(0, n, 3)] = 0.0
    which = str(rng.choice(["mt_reg", "mt_clf", "pnorm", "lowrank"]))
    extra, extra_te = {}, {}
    if which.startswith("mt"):
        T = int(rng.integers(1, 4))
        t = rng.permutation(np.arange(n) % T)  # (tasks in any order)
        extra, extra_te = {"task_index": t}, {"task_index": np.arange(15) % T}
        Est = MultitaskMKLRegressor if which == "mt_reg" else MultitaskMKLClassifier
        kw = {"kernels": [kernel, "linear"], "standardize": False,
              "formulation": str(rng.choice(["mtfl", "mtsfl", "mkl", "independent"])),
              "max_iter": 300, "tol": 1e-7}
    elif which == "pnorm":
        Est, kw = PNormMKLClassifier, {"kernels": [kernel, "linear"], "standardize": False,
                                       "random_state": 0}
    else:
        name, params = (kernel, {}) if isinstance(kernel, str) else kernel
        Est, kw = LowRankKernelRegressor, {"kernel": name, "kernel_params": params or None,
                                           "standardize": False, "random_state": 0}
    target = y if which in ("mt_reg", "lowrank") else (y > np.median(y)).astype(int)
    X, enc = _encode(rng, Dtr)
    f = "predict" if which in ("mt_reg", "lowrank") else "decision_function"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_kw = dict(extra)
        if sw is not None:
            fit_kw["sample_weight"] = sw
        try:
            dense = Est(**kw).fit(Dtr, target, **fit_kw)
        except (TypeError, ValueError) as exc:
            return None, f"{which}: dense refused: {exc}"
        sparse = Est(**kw).fit(X, target, **fit_kw)
        ref = getattr(dense, f)(Dte, **extra_te)
        scale = max(1.0, np.abs(ref).max())
        errs = []
        for model, Z in ((sparse, sp.csr_matrix(Dte)), (sparse, Dte), (dense, sp.csr_matrix(Dte))):
            got = getattr(model, f)(Z, **extra_te)
            errs.append(np.abs(got - ref).max() / scale)
        floor = 0.0
        if max(errs) > FIT_TOL:
            # the fit's own sensitivity: the dense fit of X times 1 + 1e-13 noise
            # (a solver stopped at its tolerance or iteration cap amplifies rounding)
            Dp = Dtr * (1.0 + 1e-13 * rng.standard_normal(Dtr.shape))
            other = Est(**kw).fit(Dp, target, **fit_kw)
            floor = np.abs(getattr(other, f)(Dte, **extra_te) - ref).max() / scale
    return (max(errs), floor), f"{which} {kernel} {enc} sw={sw is not None} " \
        f"{kw.get('formulation', '')}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--fits", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    counts = collections.Counter()
    kinds = collections.Counter()
    # (the compiled code loaded, or compiled once: signatures counted after it)
    hik_kernel(sp.csr_matrix(np.eye(3)), sp.csr_matrix(np.eye(3)))
    for i in range(args.cases):
        try:
            bad, what = kernel_case(np.random.default_rng([args.seed, i]))
        except Exception as exc:  # noqa: BLE001  (a crash is a finding)
            counts["kernel error"] += 1
            print(f"kernel case {i}: ERROR {type(exc).__name__}: {exc}")
            traceback.print_exc(limit=3)
            continue
        counts["kernel cases"] += 1
        if bad:
            counts["kernel violations"] += 1
            for b in bad:
                kinds[b.split(":")[0]] += 1
            print(f"kernel case {i}: {what}: {'; '.join(bad)}")
    for i in range(args.fits):
        try:
            err, what = fit_case(np.random.default_rng([args.seed, 10_000 + i]))
        except Exception as exc:  # noqa: BLE001
            counts["fit error"] += 1
            print(f"fit case {i}: ERROR {type(exc).__name__}: {exc}")
            traceback.print_exc(limit=3)
            continue
        counts["fit cases"] += 1
        if err is None:
            counts["fit refused"] += 1
            print(f"fit case {i}: {what}")
            continue
        err, floor = err
        if err > FIT_TOL:
            # (within 100 times the dense fit's own sensitivity: rounding)
            kind = "fit within noise" if err < 100 * floor else "fit violations"
            counts[kind] += 1
            print(f"fit case {i}: {kind}: rel err {err:.2e}, noise {floor:.2e}: {what}")
    print("violations by check:", dict(kinds))
    print(dict(counts))


if __name__ == "__main__":
    main()
