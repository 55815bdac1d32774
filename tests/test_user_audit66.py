"""A sixty-sixth audit: resource hygiene in long-running use.

A user ran kernlearn inside a long-lived service and a notebook: hundreds of
fits and predictions in one process, many estimators alive at once, plots and
reports drawn between them.  The plots and the report switched the process's
matplotlib backend to Agg (``matplotlib.use("Agg")``): a notebook's inline
figures, or a desktop session's windows, stopped showing after the first
plot, and matplotlib's backend fallback was turned off for good.

Each test here failed before its fix.
"""

import numpy as np
import pytest


def _data(n=60, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)


def test_plots_and_reports_leave_the_users_matplotlib_backend_and_figures_alone(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from kernlearn import FGMRegressor
    from kernlearn.plotting import (
        plot_accuracy_vs_features,
        plot_convergence,
        plot_kernel_weights,
    )
    from kernlearn.report import build_report

    X, y = _data()
    est = FGMRegressor(B=2).fit(X, y)
    old = matplotlib.get_backend()
    # a backend of the user's that is not Agg (svg: no display needed)
    plt.switch_backend("svg")
    fallback = matplotlib.rcParams["backend_fallback"]
    try:
        mine = plt.figure()
        plot_convergence(est.history_, tmp_path / "c.png")
        plot_kernel_weights([0.2, 0.8], tmp_path / "w.png")
        plot_accuracy_vs_features({"fgm": ([1, 2], [0.5, 0.7])}, tmp_path / "a.png")
        build_report(est, {}, (X, y, "train"))
        assert matplotlib.get_backend() == "svg"
        assert matplotlib.rcParams["backend_fallback"] == fallback
        # the user's figure is still open; no figure of ours is
        assert plt.get_fignums() == [mine.number]
        assert all((tmp_path / f).stat().st_size > 0 for f in ("c.png", "w.png", "a.png"))
    finally:
        plt.close("all")
        plt.switch_backend(old)
