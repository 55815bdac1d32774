"""A sixty-sixth audit: resource hygiene in long-running use.

A user ran kernlearn inside a long-lived service and a notebook: hundreds of
fits and predictions in one process, many estimators alive at once, plots and
reports drawn between them.  The plots and the report switched the process's
matplotlib backend to Agg (``matplotlib.use("Agg")``): a notebook's inline
figures, or a desktop session's windows, stopped showing after the first
plot, and matplotlib's backend fallback was turned off for good.

What held (measured, no fix needed): 20 -> 100 fits of every estimator on
60-row data (fresh or the same data each time) grew Python's traced memory by
8-40 KiB, more slowly as the fits went on (InfiniteFeatureRegressor: +25 KiB
over fits 10-40, +15 KiB over fits 40-100), all of it in interpreter, NumPy and
threadpoolctl objects (floats, scalars, symbol names), none in a kernlearn cache: the module-level memos are bounded
(``_remembered_permutation``: 8 entries; the infinite families' checked
arrays: weak references, 16 per family, dropped with the family; LowRank's
mapped centres: keyed weakly by the estimator; the named-data-set cache: one
entry per known set).  A fitted estimator does not keep the training ``X``
object (it is freed once the user drops it) and ``del est`` frees the model.
Fit and predict left NumPy's error state and print options, the global
``np.random`` state, ``warnings.filters``, ``os.environ``, the recursion
limit, numba's config, the working directory, BLAS thread limits, logging
handlers and levels and the running threads as they were (the first fit adds
only numba's own idle loggers; ``random_state=None`` draws from the global
``np.random`` state, as scikit-learn's estimators do).  Warnings of fits that
stopped early are attributed to the user's code: no kernlearn module's
``__warningregistry__`` grows with their varying texts.  Four threads fitting one class on different
data gave the serial models exactly.  400 save/load cycles left the open file
descriptors and the temporary folder as they were (also after failed saves);
``SvmlightChunks(cache=True)`` removes its folder, also when the file is
rejected; the CLI's fit, predict, evaluate and report leave nothing behind.

The test marked as a guard passed before; the other failed before its fix.
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


@pytest.mark.parametrize("name", ["FGMClassifier", "LowRankKernelRegressor"])
def test_guard_a_fit_and_predict_leave_the_process_state_as_found(name):
    # guard: a fit in a long-lived process changes nothing that is the process's
    import os
    import sys
    import threading
    import warnings
    from functools import partial

    import kernlearn

    X, y = _data()
    y = y > 0 if name.endswith("Classifier") else y
    # (random_state=None draws from np.random's global state, as scikit-learn's
    # estimators do: a seed keeps it untouched)
    cls = getattr(kernlearn, name)
    if "random_state" in cls().get_params():
        cls = partial(cls, random_state=0)
    cls().fit(X, y)  # (the first fit loads compiled code)

    def state():
        return (np.geterr(), np.get_printoptions(), str(np.random.get_state()),
                list(warnings.filters), dict(os.environ), sys.getrecursionlimit(),
                os.getcwd(), {t.ident for t in threading.enumerate()})

    before = state()
    cls().fit(X, y).predict(X)
    assert state() == before
