"""The ``kernlearn`` command: fit, predict, demo, datasets."""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

_METHODS = {
    "fgm": ("kernlearn.estimators.fgm", "FGMClassifier"),
    "fgm-regressor": ("kernlearn.estimators.fgm", "FGMRegressor"),
}


class CLIError(Exception):
    """A user error: printed without a traceback, exit status 2."""


def _load_xy(path, n_features=None):
    from .datasets import DatasetNotFoundError, load_svmlight

    try:
        return load_svmlight(path, n_features=n_features)
    except DatasetNotFoundError as exc:
        raise CLIError(str(exc)) from exc
    except ValueError as exc:
        raise CLIError(str(exc)) from exc


def _build(args):
    import importlib

    module, name = _METHODS[args.method]
    cls = getattr(importlib.import_module(module), name)
    params = {"B": args.B, "C": args.C, "max_outer_iter": args.max_outer_iter,
              "tol": args.tol, "verbose": 0 if args.quiet else 1}
    if args.method == "fgm":
        params["loss"] = args.loss
    elif args.loss != "squared_hinge":
        raise CLIError("--loss applies to classification; fgm-regressor uses the square loss.")
    return cls(**params)


def _cmd_fit(args):
    """Fit a model on an svmlight file and save it."""
    from .io import save_model

    X, y = _load_xy(args.data)
    est = _build(args)
    t0 = time.perf_counter()
    try:
        est.fit(X, y)
    except ValueError as exc:
        raise CLIError(f"cannot fit {args.data}: {exc}") from exc
    elapsed = time.perf_counter() - t0
    save_model(est, args.model)
    print(f"fitted {type(est).__name__} on {X.shape[0]} x {X.shape[1]} in {elapsed:.2f}s; "
          f"{len(est.selected_features_)} features selected; training score "
          f"{est.score(X, y):.4f}; model saved to {args.model}")
    return 0


def _cmd_predict(args):
    """Predict with a saved model; report the score when labels are present."""
    from .io import load_model

    try:
        est = load_model(args.model)
    except (FileNotFoundError, ValueError) as exc:
        raise CLIError(str(exc)) from exc
    X, y = _load_xy(args.data, n_features=est.n_features_in_)
    pred = est.predict(X)
    if args.out:
        np.savetxt(args.out, pred, fmt="%.10g")
        print(f"wrote {len(pred)} predictions to {args.out}")
    print(f"score on {args.data}: {est.score(X, y):.4f}")
    return 0


def _cmd_datasets(args):
    """List the real data sets found in the data folder."""
    from .datasets import available_datasets, data_home

    print(f"data folder: {data_home()} (set KERNLEARN_DATA to change)")
    names = available_datasets()
    print("available: " + (", ".join(names) if names else "none"))
    return 0


def _cmd_demo(args):
    """FGM on the paper's synthetic data and on scikit-learn's breast cancer data."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    from .datasets import make_fgm_synthetic
    from .estimators.fgm import FGMClassifier

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    verbose = 0 if args.quiet else 1
    print("== FGM on the FGM paper's synthetic data (Type I, 2000 x 4096, "
          "400 informative features) ==")
    X, y, Xt, yt, w = make_fgm_synthetic(2000, 4096, 400, n_test=2000, random_state=0)
    t0 = time.perf_counter()
    clf = FGMClassifier(B=40, C=10.0, verbose=verbose).fit(X, y)
    t_fgm = time.perf_counter() - t0
    sel = clf.selected_features_
    hits = int(np.isin(sel, np.flatnonzero(w)).sum())
    print(f"FGM: {len(sel)} features selected ({hits} informative) in {t_fgm:.2f}s, "
          f"test accuracy {clf.score(Xt, yt):.4f}")
    # The l1-logistic anchor at a comparable number of features.
    for C in (0.02, 0.05, 0.1):
        t0 = time.perf_counter()
        l1 = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=C).fit(X, y)
        nnz = np.count_nonzero(l1.coef_)
        print(f"l1-logistic (C={C}): {nnz} features in {time.perf_counter() - t0:.2f}s, "
              f"test accuracy {l1.score(Xt, yt):.4f}")
    try:
        from .plotting import plot_convergence

        png = plot_convergence(clf.history_, out / "fgm_synthetic_convergence.png",
                               "FGM on synthetic data")
        print(f"convergence plot: {png}")
    except ImportError as exc:
        print(f"(no plot: {exc})")

    print("\n== FGM on scikit-learn's breast cancer data (569 x 30) ==")
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(Xb, yb, test_size=0.3, random_state=0, stratify=yb)
    for B in (1, 3, 5):
        clf = FGMClassifier(B=B, C=10.0, loss="logistic", max_outer_iter=3).fit(Xtr, ytr)
        names = ", ".join(load_breast_cancer().feature_names[clf.selected_features_][:6])
        print(f"B={B}: {len(clf.selected_features_)} features ({names}...), "
              f"test accuracy {clf.score(Xte, yte):.4f}")
    return 0


def build_parser():
    """The argument parser of the ``kernlearn`` command."""
    parser = argparse.ArgumentParser(
        prog="kernlearn",
        description="Learn which features and kernels a predictor should use.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    fit = sub.add_parser("fit", help="fit a model on an svmlight/LIBSVM file")
    fit.add_argument("data", help="training file (svmlight, optionally .bz2/.gz/.xz)")
    fit.add_argument("--model", required=True, help="where to save the model (.npz)")
    fit.add_argument("--method", choices=sorted(_METHODS), default="fgm")
    fit.add_argument("--B", type=int, default=10, help="features added per iteration")
    fit.add_argument("--C", type=float, default=10.0, help="loss weight")
    fit.add_argument("--loss", choices=["squared_hinge", "logistic"], default="squared_hinge")
    fit.add_argument("--max-outer-iter", type=int, default=15)
    fit.add_argument("--tol", type=float, default=1e-2)
    fit.add_argument("--quiet", action="store_true", help="no progress lines")
    fit.set_defaults(func=_cmd_fit)

    pred = sub.add_parser("predict", help="predict with a saved model")
    pred.add_argument("data", help="file to predict (svmlight)")
    pred.add_argument("--model", required=True)
    pred.add_argument("--out", help="write predictions here, one per line")
    pred.set_defaults(func=_cmd_predict)

    demo = sub.add_parser("demo", help="run FGM on embedded data")
    demo.add_argument("--out", default="kernlearn-out", help="folder for plots")
    demo.add_argument("--quiet", action="store_true")
    demo.set_defaults(func=_cmd_demo)

    ds = sub.add_parser("datasets", help="list the data sets in the data folder")
    ds.set_defaults(func=_cmd_datasets)
    return parser


def main(argv=None):
    """Entry point of the ``kernlearn`` command.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    status : int
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except CLIError as exc:
        print(f"kernlearn: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
