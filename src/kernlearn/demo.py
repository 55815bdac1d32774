"""FGM against l1-regularised linear models at equal numbers of features.

FGM's claim (paper 002) is about accuracy *at a given number of selected
features*.  An l1 model reaches a number of features only through its ``C``;
this module reads the l1 models' accuracy "at k" off a ``C`` path, the way
issue 21 states the comparison: ``C`` starts at the value that first selects
a feature (:func:`sklearn.svm.l1_min_c`) and grows by a factor 1.25 per step
until more than the largest ``k`` features are selected; the accuracy at
``k`` is interpolated linearly in :math:`\\log k` between the two path points
around it, and the time to get there is the time of the path up to the first
point with at least ``k`` features.  FGM is run once per ``k`` with
``max_features=k`` and its other parameters at their defaults.

:func:`demo_table` runs this on the library's synthetic data (no download);
``kernlearn demo`` prints it.
"""

import time
import warnings

import numpy as np

__all__ = ["compare_at_equal_k", "demo_table", "format_table", "l1_path", "l1_paths",
           "run_demo"]

from pathlib import Path


def _l1_models(multiclass=False):
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    def lr(C):
        model = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=C, max_iter=2000)
        # LIBLINEAR's l1-LR is binary; LinearSVC runs one-vs-rest itself
        return OneVsRestClassifier(model) if multiclass else model

    return {
        "l1-SVM": ("squared_hinge", lambda C: LinearSVC(
            penalty="l1", loss="squared_hinge", dual=False, C=C, max_iter=2000)),
        "l1-LR": ("log", lr),
    }


def _coef(model):
    """``(n_outputs, n_features)`` coefficients, also of a one-vs-rest wrapper."""
    if hasattr(model, "estimators_"):
        return np.vstack([np.atleast_2d(e.coef_) for e in model.estimators_])
    return np.atleast_2d(model.coef_)


def l1_path(make, loss, X, y, X_test, y_test, k_max, step=1.25, max_steps=120):
    """Test accuracy, feature count and fit time along an l1 model's ``C`` path.

    Parameters
    ----------
    make : callable
        ``make(C)`` returns an unfitted l1 model with ``coef_`` after fit.
    loss : {"squared_hinge", "log"}
        The model's loss, for :func:`sklearn.svm.l1_min_c`.
    X, y : array-like or sparse matrix, array-like
        Training data.
    X_test, y_test : array-like or sparse matrix, array-like
        Test data.
    k_max : int
        Stop after the first ``C`` selecting more than ``k_max`` features (or
        every column, when ``k_max`` is at least the number of columns).
    step : float, default=1.25
        Factor between consecutive values of ``C``.
    max_steps : int, default=120
        Longest path.

    Returns
    -------
    path : list of dict
        One row per ``C``: ``C``, ``n_features``, ``accuracy``, ``time``
        (seconds of that fit).
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import l1_min_c

    C = float(l1_min_c(X, y, loss=loss))
    rows = []
    for _ in range(max_steps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t0 = time.perf_counter()
            model = make(C).fit(X, y)
            elapsed = time.perf_counter() - t0
        nnz = int(np.count_nonzero(np.any(np.abs(_coef(model)) > 0, axis=0)))
        rows.append({"C": C, "n_features": nnz,
                     "accuracy": float(model.score(X_test, y_test)), "time": elapsed})
        if nnz > k_max or nnz >= X.shape[1]:
            break
        C *= step
    return rows


def _at_k(path, k):
    """Accuracy interpolated in log k, and the path's time to reach ``k`` features."""
    pts = {}
    for r in path:
        if r["n_features"] > 0:
            pts.setdefault(r["n_features"], []).append(r["accuracy"])
    ks = np.array(sorted(pts), dtype=float)
    if ks.size == 0 or k < ks[0] or k > ks[-1]:
        return np.nan, np.nan
    acc = np.array([np.mean(pts[int(v)]) for v in ks])
    reach = next(i for i, r in enumerate(path) if r["n_features"] >= k)
    return (float(np.interp(np.log(k), np.log(ks), acc)),
            float(sum(r["time"] for r in path[:reach + 1])))


def l1_paths(X, y, X_test, y_test, k_max, scale_l1=False):
    """The C paths of LIBLINEAR's l1-SVM and l1-LR up to ``k_max`` features.

    Parameters
    ----------
    X, y : array-like or sparse matrix, array-like
        Training data (two or more classes; one-vs-rest for more).
    X_test, y_test : array-like or sparse matrix, array-like
        Test data.
    k_max : int
        Largest number of features read off the paths.
    scale_l1 : bool, default=False
        Give the l1 models standardised dense columns (a ``StandardScaler``
        fitted on the training rows, as a user would).

    Returns
    -------
    paths : dict
        ``{"l1-SVM": path, "l1-LR": path}``, each as :func:`l1_path`.
    """
    if scale_l1:
        from sklearn.preprocessing import StandardScaler

        scaler = StandardScaler().fit(X)
        X, X_test = scaler.transform(X), scaler.transform(X_test)
    multiclass = np.unique(y).size > 2
    return {name: l1_path(make, loss, X, y, X_test, y_test, k_max)
            for name, (loss, make) in _l1_models(multiclass).items()}


def compare_at_equal_k(X, y, X_test, y_test, ks=(10, 30, 100, 300), fgm_params=None,
                       scale_l1=False, paths=None):
    """FGM(``max_features=k``) and the l1 models' paths read at the same ``k``.

    Parameters
    ----------
    X, y : array-like or sparse matrix, array-like
        Training data.
    X_test, y_test : array-like or sparse matrix, array-like
        Test data.
    ks : sequence of int, default=(10, 30, 100, 300)
        Numbers of features compared.
    fgm_params : dict, optional
        Extra :class:`~kernlearn.FGMClassifier` parameters (default: none).
    scale_l1 : bool, default=False
        Give the l1 models standardised dense columns, while FGM gets the raw
        values and standardises them itself (see :func:`l1_paths`).
    paths : dict, optional
        The l1 paths of :func:`l1_paths` on the same data, if already run.

    Returns
    -------
    rows : list of dict
        One row per ``k``: ``k``, ``FGM`` accuracy, ``FGM time``, ``FGM
        features`` (selected), and for each l1 model its interpolated
        accuracy and path time (NaN when its path does not reach ``k``),
        plus ``best l1`` and ``FGM - best l1``.
    """
    from .estimators.fgm import FGMClassifier

    if paths is None:
        paths = l1_paths(X, y, X_test, y_test, max(ks), scale_l1)
    rows = []
    for k in ks:
        t0 = time.perf_counter()
        fgm = FGMClassifier(max_features=int(k), **(fgm_params or {})).fit(X, y)
        row = {"k": int(k), "FGM": float(fgm.score(X_test, y_test)),
               "FGM time": time.perf_counter() - t0,
               "FGM features": int(len(fgm.selected_features_))}
        for name, path in paths.items():
            row[name], row[f"{name} time"] = _at_k(path, k)
        best = np.nanmax([row[name] for name in paths]) if any(
            np.isfinite(row[name]) for name in paths) else np.nan
        row["best l1"], row["FGM - best l1"] = best, row["FGM"] - best
        rows.append(row)
    return rows


def demo_table(n_samples=1000, n_features=2000, n_informative=100, ks=(10, 20, 50, 100),
               random_state=0):
    """The demo's comparison on FGM's synthetic data (paper 002, sec. 6.2.1).

    Parameters
    ----------
    n_samples : int, default=1000
        Training points (as many test points are drawn).
    n_features : int, default=2000
        Features.
    n_informative : int, default=100
        Features carrying the signal.
    ks : sequence of int, default=(10, 20, 50, 100)
        Numbers of features compared.
    random_state : int, default=0
        Seed of the data.

    Returns
    -------
    rows : list of dict
        As :func:`compare_at_equal_k`.
    """
    from .datasets import make_fgm_synthetic

    X, y, Xt, yt, _ = make_fgm_synthetic(n_samples, n_features, n_informative,
                                         n_test=n_samples, random_state=random_state)
    return compare_at_equal_k(X, y, Xt, yt, ks)


def format_table(rows):
    """A plain-text table of :func:`compare_at_equal_k` rows.

    Parameters
    ----------
    rows : list of dict
        Rows with the same keys.

    Returns
    -------
    text : str
    """
    if not rows:
        return ""
    keys = list(rows[0])

    def cell(v):
        if isinstance(v, float):
            return "nan" if not np.isfinite(v) else f"{v:.4f}" if abs(v) < 1 else f"{v:.2f}"
        return str(v)

    body = [[cell(r[k]) for k in keys] for r in rows]
    width = [max(len(k), *(len(b[i]) for b in body)) for i, k in enumerate(keys)]
    lines = ["  ".join(k.rjust(w) for k, w in zip(keys, width))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(b, width)) for b in body]
    return "\n".join(lines)


#: (rows, features, informative features, B) of the synthetic data: full, ``--quick``.
DEMO_SIZES = {False: (1000, 2000, 100, 10), True: (200, 512, 40, 4)}


def quick_help():
    """The ``--quick`` help text, from :data:`DEMO_SIZES`."""
    (n, d, *_), (nq, dq, *_) = DEMO_SIZES[False], DEMO_SIZES[True]
    return f"smaller synthetic data ({nq} x {dq} instead of {n} x {d})"


def run_demo(out, quick=False, verbose=0):
    """FGM against l1 models at equal k, then FGM on scikit-learn's breast cancer data.

    Parameters
    ----------
    out : str or path-like
        Existing folder for the plots.
    quick : bool, default=False
        The same steps on smaller synthetic data (:data:`DEMO_SIZES`).
    verbose : int, default=0
        Progress level of the FGM fit.

    Returns
    -------
    status : int
        0.
    """
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    from .datasets import make_fgm_synthetic
    from .estimators.fgm import FGMClassifier

    out = Path(out)
    # --quick: the same steps on smaller data (used by the tests)
    n, d, k, B = DEMO_SIZES[bool(quick)]
    # FGM's case is made at equal numbers of features: l1 models read off a C path
    print(f"== FGM and l1 models at equal numbers of features (FGM paper's synthetic "
          f"data, Type I, {n} x {d}, {k} informative) ==")
    ks = (10, 20, 40) if quick else (10, 20, 50, 100)
    print(format_table(demo_table(n, d, k, ks=ks)))
    X, y, Xt, yt, w = make_fgm_synthetic(n, d, k, n_test=n, random_state=0)
    t0 = time.perf_counter()
    clf = FGMClassifier(max_features=k, B=B, loss="logistic", verbose=verbose).fit(X, y)
    sel = clf.selected_features_
    hits = int(np.isin(sel, np.flatnonzero(w)).sum())
    # (the table's FGM is the squared hinge at its default B: this fit's loss and B are
    # named, as its accuracy at the same k differs from the table's)
    print(f"\nFGM with max_features={k}, loss='logistic', B={B}: {len(sel)} features "
          f"selected ({hits} informative) in {time.perf_counter() - t0:.2f}s, test accuracy "
          f"{clf.score(Xt, yt):.4f}")
    try:
        from .plotting import plot_convergence

        png = plot_convergence(
            clf.history_, out / "fgm_synthetic_convergence.png", "FGM on synthetic data"
        )
        print(f"convergence plot: {png}")
    except ImportError as exc:
        print(f"(no plot: {exc})")

    print("\n== FGM on scikit-learn's breast cancer data (569 x 30) ==")
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(
        Xb, yb, test_size=0.3, random_state=0, stratify=yb
    )
    for k in (1, 3, 5):
        clf = FGMClassifier(max_features=k, loss="logistic").fit(Xtr, ytr)
        chosen = load_breast_cancer().feature_names[clf.selected_features_]
        # the first six names, and "..." only when some are left out
        names = ", ".join(chosen[:6]) + (", ..." if len(chosen) > 6 else "")
        count = f"{len(chosen)} feature" + ("s" if len(chosen) != 1 else "")
        print(f"max_features={k}: {count} ({names}), "
              f"test accuracy {clf.score(Xte, yte):.4f}")
    return 0
