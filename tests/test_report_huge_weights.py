"""The report's bar charts of weights near the float maximum (issue 24).

Weights of 1e308 overflowed matplotlib's ticks and bar geometry (bare NumPy
RuntimeWarnings, an axis of +-1e-12 with the bars off it, infinite GrFL
norms, an OverflowError on the Nystrom log axis); they are drawn divided by
a power of ten, as ``plot_kernel_weights`` draws them, the axis naming it.
"""

import warnings

import numpy as np
import pytest
from test_report import _fit

from kernlearn.report import _selection_figure, build_report


def _huge_fgm(est):
    coef = np.array(est.coef_, dtype=float)
    view, sel = np.atleast_2d(coef), np.asarray(est.selected_features_)
    view[:, sel] = 1e308
    view[:, sel[0]] = -1e308
    est.coef_ = coef
    return np.full(len(sel), 1.0)  # max |coef| per feature, / 1e308


def _huge_kernels(est):
    w = np.full(len(est.kernel_weights_), 1e308)
    w[0] = -1e308
    est.kernel_weights_ = w
    if hasattr(est, "shared_kernel_weights_"):
        est.shared_kernel_weights_ = np.full(len(w), 5e307)
        return np.r_[w, est.shared_kernel_weights_] / 1e308
    return w / 1e308


def _huge_features(est):
    est.column_coef_ = np.full(np.shape(est.column_coef_), 1e308)
    # each feature's cosine and sine of 1e308: a norm of sqrt(2) e308
    return np.full(len(est.features_), np.sqrt(2.0))


def _huge_mu(est):
    est.mu_ = np.full(np.shape(est.mu_), 1e308)
    return None  # a log axis: its points are lines, not bars


CASES = [("fgm-clf", _huge_fgm, "max |coef|"), ("pnorm-mkl", _huge_kernels, "weight"),
         ("mtmkl-reg", _huge_kernels, "weight"), ("grfl-reg", _huge_features, "weight norm"),
         ("lowrank-reg", _huge_mu, "mu (log)")]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("kind, make_huge, label", CASES, ids=[c[0] for c in CASES])
def test_huge_weights_drawn_scaled_without_warnings(kind, make_huge, label):
    import matplotlib.pyplot as plt

    est, _ = _fit(kind)
    heights = make_huge(est)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        fig = _selection_figure(est, {})
        fig.canvas.draw()  # ticks and bar geometry are computed here
        ax = fig.axes[0]
        assert ax.get_ylabel() == f"{label} (\u00d7 1e308)"
        if heights is not None:
            np.testing.assert_allclose([p.get_height() for p in ax.patches], heights,
                                       rtol=1e-12)
            lo, hi = ax.get_ylim()  # every bar on the axis
            assert lo <= min(0, heights.min()) and hi >= heights.max()
        plt.close(fig)
        # the whole page, without data (predictions of such a model overflow,
        # refused with a clear error by the predictors)
        assert "data:image/png;base64," in build_report(est, {})
    plt.close("all")
