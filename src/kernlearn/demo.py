"""``kernlearn demo``: FGM on embedded data, printed as it goes."""

import time
from pathlib import Path

import numpy as np

__all__ = ["run_demo"]


def run_demo(out, quick=False, verbose=0):
    """FGM on the paper's synthetic data and on scikit-learn's breast cancer data.

    Parameters
    ----------
    out : str or path-like
        Existing folder for the plots.
    quick : bool, default=False
        The same steps on a tenth of the data.
    verbose : int, default=0
        Progress level of the FGM fit.

    Returns
    -------
    status : int
        0.
    """
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    from .datasets import make_fgm_synthetic
    from .estimators.fgm import FGMClassifier

    out = Path(out)
    # --quick: the same steps on a tenth of the data (used by the tests)
    n, d, k, B = (200, 512, 40, 4) if quick else (2000, 4096, 400, 40)
    print(
        f"== FGM on the FGM paper's synthetic data (Type I, {n} x {d}, "
        f"{k} informative features) =="
    )
    X, y, Xt, yt, w = make_fgm_synthetic(n, d, k, n_test=n, random_state=0)
    t0 = time.perf_counter()
    # A budget of as many features as the data has informative ones; the
    # logistic loss, to compare like with like against l1-logistic below.
    clf = FGMClassifier(max_features=k, B=B, loss="logistic", verbose=verbose).fit(X, y)
    t_fgm = time.perf_counter() - t0
    sel = clf.selected_features_
    hits = int(np.isin(sel, np.flatnonzero(w)).sum())
    print(
        f"FGM: {len(sel)} features selected ({hits} informative) in {t_fgm:.2f}s, "
        f"test accuracy {clf.score(Xt, yt):.4f}"
    )
    # The l1-logistic anchor at a comparable number of features.
    for C in (0.02, 0.05, 0.1):
        t0 = time.perf_counter()
        l1 = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=C).fit(X, y)
        nnz = np.count_nonzero(l1.coef_)
        print(
            f"l1-logistic (C={C}): {nnz} features in {time.perf_counter() - t0:.2f}s, "
            f"test accuracy {l1.score(Xt, yt):.4f}"
        )
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
        names = ", ".join(
            load_breast_cancer().feature_names[clf.selected_features_][:6]
        )
        print(
            f"max_features={k}: {len(clf.selected_features_)} features ({names}...), "
            f"test accuracy {clf.score(Xte, yte):.4f}"
        )
    return 0
