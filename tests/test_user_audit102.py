"""Audit 102: a review of audits 93 and 96.

Audit 93 gave ``hik``'s negative-columns warning its own category, which the
estimators' inner fits drop; users could filter it only by its message (the
class lived in a private module).  Audit 96 drew names from the data as plain
text and capped the report's log panel at 1e200; the plot functions' own
titles and axis labels were still read as mathtext (``"$^$"`` failed the save)
and the objective panels overflowed near the float maximum or wrote 50-digit
tick labels.
"""

import warnings

import numpy as np
import pytest

import kernlearn as K

pytest.importorskip("matplotlib")

from kernlearn.plotting import (plot_accuracy_vs_features, plot_convergence,  # noqa: E402
                                plot_kernel_weights)
from kernlearn.report import build_report  # noqa: E402

rng = np.random.RandomState(102)
X = rng.randn(60, 4)
Y = (X[:, 0] + X[:, 1] > 0).astype(int)


def _png(path):
    from PIL import Image

    with Image.open(path) as im:
        im.load()
        return im.size


# ------------------------------------------------ hik's warning: filtered by name
def test_negative_features_warning_is_public_and_filterable_by_name():
    """``kernlearn.NegativeFeaturesWarning`` is the category the fit gives;
    a filter on it (not on the message) turns it into an error."""
    from kernlearn._histogram_kernels import NegativeFeaturesWarning

    assert K.NegativeFeaturesWarning is NegativeFeaturesWarning
    assert "NegativeFeaturesWarning" in dir(K)
    est = K.LowRankKernelClassifier(kernel="hik", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", category=K.NegativeFeaturesWarning)
        with pytest.raises(K.NegativeFeaturesWarning, match="hik sees have negative"):
            est.fit(X, Y)


@pytest.mark.filterwarnings("error::kernlearn.NegativeFeaturesWarning")
def test_a_pytest_filter_names_the_warning():
    """pytest's ``-W`` / ``filterwarnings`` syntax resolves the name (it
    failed on an unknown attribute of ``kernlearn``)."""
    with pytest.raises(K.NegativeFeaturesWarning):
        K.PNormMKLClassifier(kernels=["hik"], max_iter=3).fit(X, Y)


# ------------------------------------------------ titles as written
@pytest.mark.parametrize("plot", [
    lambda p, t: plot_convergence({"objective": [3.0, 1.0]}, p, title=t),
    lambda p, t: plot_kernel_weights([0.4, 0.6], p, title=t),
    lambda p, t: plot_accuracy_vs_features({"a": ([1, 2], [0.5, 0.6])}, p, title=t),
    lambda p, t: plot_accuracy_vs_features({"a": ([1, 2], [0.5, 0.6])}, p, metric=t),
], ids=["convergence", "weights", "curves-title", "curves-metric"])
def test_titles_and_labels_are_shown_as_written(plot, tmp_path, monkeypatch):
    """A title or metric with ``$`` is plain text: ``"$^$"`` (not valid
    mathtext) failed the save with a ParseSyntaxException, ``"$x$"`` drew an
    italic x."""
    import matplotlib.figure

    texts = []
    real = matplotlib.figure.Figure.savefig

    def seen(fig, *args, **kwargs):
        texts.extend(t.get_text() for ax in fig.axes
                     for t in (ax.title, ax.yaxis.label))
        return real(fig, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", seen)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plot(tmp_path / "a.png", "$^$ in $")
    assert _png(tmp_path / "a.png")
    assert r"\$^\$ in \$" in texts


# ------------------------------------------------ objectives of any finite size
@pytest.mark.parametrize("objective", [[1.7e308, 1.0], [-1.7e308, 1.7e308], [1.7e308] * 2])
def test_plot_convergence_draws_objectives_near_the_float_maximum(objective, tmp_path):
    """The limits' span overflowed: "arange: cannot compute length", "Axis
    limits cannot be NaN or Inf", an overflow warning from the autoscale."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plot_convergence({"objective": objective, "lower_bound": [-1.0, 0.5]},
                         tmp_path / "c.png")
    assert _png(tmp_path / "c.png")


@pytest.fixture(scope="module")
def fitted():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return K.FGMClassifier(B=1, max_iter=4, tol=1e-12).fit(X, Y)


@pytest.mark.parametrize("top", [1e50, 1e300, 1.7e308])
def test_the_report_draws_large_objectives_without_a_warning(fitted, top):
    """The report's objective panels wrote plain tick labels: an objective of
    1e50 had 50-digit labels ("Tight layout not applied"); near the float
    maximum building the report failed ("arange: cannot compute length")."""
    import copy

    est = copy.deepcopy(fitted)
    n = len(est.history_["objective"])
    assert n >= 2
    est.history_["objective"] = np.resize([top, -top / 2], n)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        html = build_report(est)
    assert html.count("data:image/png;base64,") >= 1
