"""Compile kernlearn's numba code ahead of the first fit.

``python -m kernlearn._precompile`` (run by ``make install``, ``make demo`` and
``make test``) fits every estimator that uses compiled code once on tiny data,
in each input form that reaches a different compiled signature (dense input,
float32 included, CSR, binary and multiclass, the polynomial family), then
compiles the int64-index variant of every signature taking int32 index arrays
(large sparse data).  Every compiled function (``@njit_cached`` of
:mod:`kernlearn.utils._numba_cache`: numba's ``cache=True``) is thereby compiled
and written to numba's on-disk cache, so that the first fit after an install
only loads it.  The run ends by checking that every compiled function
of the package was reached; it names the ones that were not (a new function
that needs a workload here) and, with ``--strict``, exits with status 1.
``--clear`` deletes the compiled code cached in the package's folder instead
(``pip uninstall`` leaves it behind).

Compiling from scratch takes a minute or two of CPU on a two-core machine
(45-106 s in BENCHMARKS.md's runs; it was about 15 s when the package had
fewer compiled functions); when the cache is already current the step only
loads it (about 2 s with imports).
"""

import importlib
import pkgutil
import sys
import time
import warnings

import numpy as np

__all__ = ["clear_cache", "compiled_dispatchers", "is_cached", "precompile", "workloads"]

# Modules that need an optional dependency (or start a program) and hold no
# compiled code; importing them to look for dispatchers would fail or be slow.
_SKIP_MODULES = ("kernlearn.__main__", "kernlearn.distributed", "kernlearn.plotting",
                 "kernlearn.report", "kernlearn.demo", "kernlearn.cli")


def compiled_dispatchers():
    """Every numba dispatcher defined in kernlearn, by qualified name.

    Imports every module of the package (except the few in ``_SKIP_MODULES``,
    which need optional dependencies) and keeps the module attributes that are
    numba dispatchers whose Python function was defined in that module.

    Returns
    -------
    dispatchers : dict of str to numba dispatcher
        ``"module.name" -> dispatcher``, sorted by name.
    """
    from numba.core.dispatcher import Dispatcher

    import kernlearn

    found = {}
    for info in pkgutil.walk_packages(kernlearn.__path__, "kernlearn."):
        if info.name.startswith(_SKIP_MODULES):
            continue
        module = importlib.import_module(info.name)
        for attr, value in vars(module).items():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == info.name:
                found[f"{info.name}.{attr}"] = value
    return dict(sorted(found.items()))


def _data(n=40, m=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, m))
    y_bin = (X[:, 0] + 0.5 * rng.standard_normal(n) > 0).astype(int)
    y_multi = np.digitize(X[:, 1], [-0.5, 0.5])
    y_reg = X[:, 0] - X[:, 1] + 0.1 * rng.standard_normal(n)
    return X, y_bin, y_multi, y_reg


def _fgm_multiclass_predict(est, X):
    """Compiled scores and labels of a multiclass FGM: float64 and float32 rows, read-only
    ones (a file mapped for reading) and, for row blocks read as they are, F order."""
    from .partitioned import selected_linear_scores

    for Z in (X, X.astype(np.float32)):
        est.predict(Z)
        selected_linear_scores(np.asfortranarray(Z), est.coef_, est.intercept_)
        Z = Z.copy()
        Z.setflags(write=False)
        est.predict(Z)


def _csr(X):
    import scipy.sparse as sp

    # sparse enough (about 23% non-zeros) that FGM keeps the active block sparse
    return sp.csr_matrix(np.where(np.abs(X) > 1.2, X, 0.0))


def workloads():
    """The tiny fits that reach every compiled signature used in practice.

    Returns
    -------
    workloads : list of (str, callable)
        A label and a function of no arguments that runs the fit.
    """
    from .estimators.fgm import FGMClassifier, FGMRegressor
    from .estimators.infinite import InfiniteFeatureClassifier, InfiniteFeatureRegressor
    from .estimators.lowrank import LowRankKernelClassifier, LowRankKernelRegressor
    from .estimators.mtmkl import MultitaskMKLClassifier, MultitaskMKLRegressor
    from .estimators.mtmkl_cv import MultitaskMKLRegressorCV
    from .estimators.pnorm_mkl import PNormMKLClassifier
    from .families import PolynomialPool
    from .families.fourier import scaled_normals
    from .kernels import hik_kernel
    from .solvers._dirty import top_eigenvalue_bound
    from .solvers.prox_newton import block_minimiser

    X, y_bin, y_multi, y_reg = _data()
    X32 = X.astype(np.float32)
    small = dict(max_features=4, B=2)
    jobs = [
        ("FGMClassifier dense float64", lambda: FGMClassifier(**small).fit(X, y_bin)),
        ("FGMClassifier dense float32", lambda: FGMClassifier(**small).fit(X32, y_bin)),
        ("FGMClassifier multiclass", lambda: FGMClassifier(**small).fit(X, y_multi)),
        ("FGMClassifier multiclass predict",
         lambda: _fgm_multiclass_predict(FGMClassifier(**small).fit(X, y_multi), X)),
        ("FGMRegressor dense", lambda: FGMRegressor(**small).fit(X, y_reg)),
    ]
    A = _csr(X)
    jobs += [
        ("FGMClassifier CSR", lambda: FGMClassifier(**small).fit(A, y_bin)),
        ("FGMRegressor CSR", lambda: FGMRegressor(**small).fit(A, y_reg)),
        ("FGMClassifier PolynomialPool CSR",
         lambda: FGMClassifier(family=PolynomialPool(), **small).fit(A, y_bin)),
    ]
    jobs += [
        ("block_minimiser", lambda: block_minimiser(np.eye(2)[None], np.ones((1, 2)), 1.0, 0.5)),
        ("PNormMKLClassifier binary", lambda: PNormMKLClassifier().fit(X, y_bin)),
        ("PNormMKLClassifier multiclass", lambda: PNormMKLClassifier().fit(X, y_multi)),
        ("LowRankKernelClassifier", lambda: LowRankKernelClassifier().fit(X, y_bin)),
        ("LowRankKernelClassifier multiclass",
         lambda: LowRankKernelClassifier().fit(X, y_multi)),
        ("LowRankKernelRegressor", lambda: LowRankKernelRegressor().fit(X, y_reg)),
        # the per-task SVM / SVR duals (one compiled signature for both)
        ("MultitaskMKLClassifier", lambda: MultitaskMKLClassifier(max_iter=2).fit(
            X, y_bin, task_index=np.arange(len(X)) % 2)),
        # the square loss's effective kernels, assembled whole (the SVM reads rows)
        ("MultitaskMKLRegressor", lambda: MultitaskMKLRegressor(max_iter=2).fit(
            X, y_reg, task_index=np.arange(len(X)) % 2)),
        # the leave-one-out search's evaluation (criterion, gradient, residuals)
        ("MultitaskMKLRegressorCV", lambda: MultitaskMKLRegressorCV().fit(
            X, y_reg, task_index=np.arange(len(X)) % 2)),
    ]
    # GrFL's Newton master: one compiled block prox per penalty kind
    grfl = dict(max_features=3, n_candidates=5, random_state=0)
    jobs += [
        ("InfiniteFeatureClassifier", lambda: InfiniteFeatureClassifier(**grfl).fit(X, y_bin)),
        ("InfiniteFeatureClassifier multiclass l1_linf",
         lambda: InfiniteFeatureClassifier(penalty="l1_linf", **grfl).fit(X, y_multi)),
        ("InfiniteFeatureRegressor", lambda: InfiniteFeatureRegressor(**grfl).fit(X, y_reg)),
        # sparse input prices in float32 (the dense path sums exactly in float64)
        ("InfiniteFeatureClassifier CSR", lambda: InfiniteFeatureClassifier(**grfl).fit(A, y_bin)),
        # wide sparse input is priced in its rows' span, features completed when
        # first read (features_)
        ("InfiniteFeatureClassifier wide CSR", lambda: InfiniteFeatureClassifier(**grfl).fit(
            _csr(_data(m=100, seed=1)[0]), y_bin).features_),
        # the compiled normal numbers of wide draws (tiny fits draw few, in NumPy):
        # rows of a C array (a completed feature's) and a strided block (candidates),
        # from PCG64 (NumPy's default: stepped inline) and from another bit generator
        # (the path's RandomState's MT19937 prices)
        ("scaled_normals", lambda: [scaled_normals(g, out, np.ones(2))
                                    for g in (np.random.default_rng(0),
                                              np.random.Generator(np.random.MT19937(0)))
                                    for out in (np.empty((2, 4096)),
                                                np.empty((2, 4097))[:, :-1])]),
        # the histogram kernels of sparse rows (one signature: int64 indices, float64)
        ("hik_kernel CSR", lambda: hik_kernel(A, A)),
        # (its Lipschitz bound iterates from 16 columns on; these masters have fewer)
        ("top_eigenvalue_bound", lambda: top_eigenvalue_bound(np.eye(20) + 1.0)),
    ]
    return jobs


def precompile(verbose=False):
    """Run :func:`workloads` so that every compiled function is in numba's cache.

    Parameters
    ----------
    verbose : bool, default=False
        Print each workload with its time.

    Returns
    -------
    missing : list of str
        Qualified names of the package's compiled functions that no workload
        reached (empty when the cache now covers the package).
    """
    for label, run in workloads():
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            # tiny data: convergence and similar warnings are expected and irrelevant
            warnings.simplefilter("ignore")
            run()
        if verbose:
            print(f"  {label}: {time.perf_counter() - t0:.2f} s", flush=True)
    t0 = time.perf_counter()
    n_wide = _compile_wide_indices()
    if verbose:
        print(f"  {n_wide} int64-index variants: {time.perf_counter() - t0:.2f} s", flush=True)
    return [name for name, d in compiled_dispatchers().items() if not is_cached(d)]


def _compile_wide_indices():
    """Compile each signature with int32 index arrays again with int64 ones.

    scipy gives sparse matrices int32 indices unless they hold more than
    ``2**31 - 1`` entries, so tiny workloads never reach the int64 variant
    that large data (or a matrix built with int64 indices) needs.  Returns
    the number of variants compiled or loaded.
    """
    from numba.core import types

    def widen(t):
        if isinstance(t, types.Array) and t.dtype == types.int32:
            return t.copy(dtype=types.int64)
        return t

    count = 0
    for d in compiled_dispatchers().values():
        for sig in list(d.signatures):
            wide = tuple(widen(t) for t in sig)
            if wide != tuple(sig):
                d.compile(wide)
                count += 1
    return count


def is_cached(dispatcher):
    """Whether a dispatcher has compiled code in this process or in its disk cache.

    A function that is only called from other compiled functions is compiled
    into its callers; when those are loaded from the cache it is never loaded
    itself, so its own cache index is what shows that it was compiled.

    Parameters
    ----------
    dispatcher : numba dispatcher

    Returns
    -------
    bool
    """
    if dispatcher.signatures:
        return True
    cache = getattr(dispatcher, "_cache", None)
    # (and the package's precompiled entries, read where numba could not write them:
    # their callers loaded from there never compile them here)
    files = (getattr(cache, "_cache_file", None), getattr(cache, "_shipped", None))
    # numba's index loader returns {} when the source changed since it was written
    return any(f is not None and f._load_index() for f in files)


def clear_cache():
    """Delete the compiled code numba cached in kernlearn's own folder.

    numba writes its cache files (``*.nbi`` indexes, ``*.nbc`` code) into the
    ``__pycache__`` folders of the package when they are writable, and ``pip
    uninstall`` removes only the files it installed: without this, tens of
    megabytes of compiled code stay in ``site-packages/kernlearn`` after an
    uninstall.  Run ``python -m kernlearn._precompile --clear`` before it.

    Returns
    -------
    removed : list of pathlib.Path
        The files deleted.
    """
    from pathlib import Path

    import kernlearn

    removed = []
    for root in kernlearn.__path__:
        for path in sorted(Path(root).rglob("__pycache__/*")):
            # numba's file names only: ``.pyc`` files are pip's to remove
            if path.suffix in (".nbi", ".nbc") and path.is_file():
                path.unlink()
                removed.append(path)
    return removed


def _parser():
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m kernlearn._precompile",
        description="Compile kernlearn's numba code into numba's on-disk cache, so "
                    "that no fit compiles (a minute or two of CPU once).")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print each workload with its time")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 when a compiled function was not reached")
    parser.add_argument("--clear", action="store_true",
                        help="delete the compiled code cached in the package's folder "
                             "instead (run it before `pip uninstall kernlearn`)")
    return parser


def main(argv=None):
    """Command-line entry: ``python -m kernlearn._precompile [-v] [--strict] [--clear]``.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    status : int
        0, or 1 with ``--strict`` when a compiled function was not reached.
        An unknown argument stops with a usage line and status 2 (argparse's)
        before anything is compiled.
    """
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.clear:
        removed = clear_cache()
        print(f"kernlearn: {len(removed)} cached numba files deleted")
        return 0
    t0 = time.perf_counter()
    print("kernlearn: compiling numba code ahead of the first fit ...", flush=True)
    missing = precompile(verbose=args.verbose)
    n = len(compiled_dispatchers())
    if missing:
        print(f"kernlearn: {len(missing)} of {n} compiled functions not reached: "
              + ", ".join(missing) + " (add a workload to kernlearn._precompile)",
              file=sys.stderr)
        return 1 if args.strict else 0
    print(f"kernlearn: {n} compiled functions cached in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
