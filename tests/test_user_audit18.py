"""An eighteenth user's audit: what the user sees while and after fitting.

Progress lines, convergence warnings, the HTML report and its figures, on
awkward names (markup, ``$``, very long), all-zero models and the ``nu``
path of the low-rank estimators.
"""

import re
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

pytest.importorskip("matplotlib")


def _data(n=90, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)


def test_report_shows_dollar_signs_in_names_and_labels_as_written():
    # matplotlib read "$...$" as mathtext: a column or class named "$^$" made
    # the report fail (ValueError: ParseSyntaxException) and "$x$" drew an
    # italic x where the data said "$x$"
    import pandas as pd

    from kernlearn import FGMClassifier, LowRankKernelClassifier
    from kernlearn.report import _figures, build_report

    X, t = _data()
    df = pd.DataFrame(X, columns=["$^$", "$x$", "b", "c"])
    y = np.where(t > 0, "$^$", "plain")
    fgm = FGMClassifier(B=4).fit(df, y)
    assert "$^$" in build_report(fgm, {}, (df, y, "train"))
    sel = dict((t, f) for t, f, _ in _figures(fgm, {}, None))["Selection"]
    ticks = [lab.get_text() for lab in sel.axes[0].get_xticklabels()]
    assert r"\$x\$" in ticks and r"\$^\$" in ticks
    y3 = np.array(["$^$", "b", "c"])[np.digitize(t, [-0.5, 0.5])]
    slkl = LowRankKernelClassifier(n_columns=20, multiclass="ovr", random_state=0)
    build_report(slkl.fit(X, y3), {}, (X, y3, "train"))  # a legend of the classes


def test_long_feature_name_is_cut_in_the_figure_not_the_axes():
    # a 300-character column name as a tick label took the whole figure:
    # "Tight layout not applied" (a UserWarning from build_report) and bars
    # squeezed into a strip
    import pandas as pd

    from kernlearn import FGMClassifier
    from kernlearn.report import _figures, build_report

    X, t = _data()
    name = "a_very_long_feature_name_" * 12
    df = pd.DataFrame(X, columns=[name, "b", "c", "d"])
    est = FGMClassifier(B=4).fit(df, t > 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = build_report(est, {}, (df, t > 0, "train"))
    assert f"<td>{name}</td>" in text  # the table keeps the whole name
    sel = dict((t, f) for t, f, _ in _figures(est, {}, None))["Selection"]
    ticks = [lab.get_text() for lab in sel.axes[0].get_xticklabels()]
    assert max(len(s) for s in ticks) <= 30 and any(s.endswith("\u2026") for s in ticks)


def test_a_failed_report_leaves_no_figure_open(monkeypatch):
    # figures drawn before a failure stayed open: reports in a loop that
    # fail kept every figure in memory
    import matplotlib.figure
    import matplotlib.pyplot as plt

    from kernlearn import FGMRegressor
    from kernlearn.report import build_report

    X, y = _data()
    est = FGMRegressor(B=2).fit(X, y)

    def broken(self, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", broken)
    before = set(plt.get_fignums())
    for _ in range(3):
        with pytest.raises(OSError, match="disk full"):
            build_report(est, {}, (X, y, "train"))
    assert set(plt.get_fignums()) == before


def test_lowrank_history_time_never_runs_backwards_along_the_nu_path():
    # each nu of the "auto" path restarted the clock at 0: the report's
    # objective-against-time panel zigzagged backwards at every value
    from kernlearn import LowRankKernelRegressor

    X, y = _data(150)
    est = LowRankKernelRegressor(n_columns=30, random_state=0).fit(X, y)
    h = est.history_
    assert np.unique(h["nu"]).size > 2
    assert np.all(np.diff(h["time"]) >= 0), h["time"]


def test_lowrank_progress_stop_lines_name_the_nu_of_each_solve(capsys, monkeypatch):
    # verbose=1 printed one "[slkl] stop: tol (tol=0.0001) after 12
    # iterations" per value of the nu path, all alike: six stop lines for one
    # fit, none saying which solve it was
    from kernlearn import LowRankKernelRegressor

    monkeypatch.setenv("KERNLEARN_PROGRESS", "lines")
    X, y = _data(150)
    LowRankKernelRegressor(n_columns=30, random_state=0, verbose=1).fit(X, y)
    stops = [s for s in capsys.readouterr().out.splitlines() if " stop: " in s]
    assert len(stops) > 2
    labels = [re.search(r"nu=([0-9.e+-]+)\)", s) for s in stops]
    assert all(labels), stops
    assert len({m.group(1) for m in labels}) == len(stops), stops


def test_all_zero_lowrank_model_has_no_empty_figure_and_says_it_kept_nothing():
    # mu all zero drew an empty log axis (x ticks at -0.045 ... 0.045) and
    # the page never said the model predicts a constant
    import matplotlib.pyplot as plt

    from kernlearn import LowRankKernelRegressor
    from kernlearn.report import _figures, build_report

    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(100, 1)), rng.normal(size=100)
    est = LowRankKernelRegressor(nu=1e6, random_state=0).fit(X, y)
    assert not np.any(est.mu_)
    figures = _figures(est, {}, (X, y, "train"))
    assert "Selection" not in [t for t, _, _ in figures]
    for _, fig, _ in figures:
        plt.close(fig)
    assert "The model kept nothing" in build_report(est, {}, (X, y, "train"))


def test_lowrank_fixed_nu_convergence_warning_names_what_to_raise():
    # "slkl stopped after max_iter=1 outer iterations without meeting
    # tol=0.0001." was the one convergence warning that named no remedy
    from kernlearn import LowRankKernelRegressor

    X, y = _data(120)
    with pytest.warns(ConvergenceWarning, match="increase max_iter"):
        LowRankKernelRegressor(nu=0.01, max_iter=1, random_state=0).fit(X, y)


@pytest.mark.parametrize("name", ["FGMClassifier", "PNormMKLClassifier",
                                  "InfiniteFeatureClassifier", "InfiniteFeatureRegressor",
                                  "LowRankKernelRegressor", "MultitaskMKLRegressor"])
def test_verbose_docs_say_what_level_one_shows_off_a_terminal(name):
    # "Print one line per epoch": verbose=1 prints nothing in a pipe or a log
    # file (a bar on a terminal); one line per iteration is verbose=2
    import kernlearn

    doc = getattr(kernlearn, name).__doc__
    entry = re.search(r"verbose : int, default=0\n(.*?)\n    \w+ : ", doc, re.S).group(1)
    entry = " ".join(entry.split())
    assert "Print one line per" not in entry, entry
    assert "terminal" in entry and "nothing in a pipe" in entry and "2 prints" in entry


def test_report_says_in_words_when_the_fit_did_not_converge():
    # a row "converged_ False" among the fit summary's was all the page said
    from kernlearn import FGMRegressor, PNormMKLClassifier
    from kernlearn.report import build_report

    X, y = _data()
    with pytest.warns(ConvergenceWarning):
        short = PNormMKLClassifier(max_iter=1, random_state=0).fit(X, y > 0)
    text = build_report(short, {})
    assert re.search(r'<p class="warning">The fit stopped before meeting its '
                     r"convergence test \(converged_ is False\): the iteration cap", text)
    done = FGMRegressor(B=4).fit(X, y)
    assert done.converged_ and 'class="warning"' not in build_report(done, {})


def test_plot_convergence_of_a_per_class_history_says_it_is_a_list(tmp_path):
    # a one-vs-rest history_ (a list, one per class) was refused with
    # "history has no 'objective' column to plot"
    from kernlearn import LowRankKernelClassifier
    from kernlearn.plotting import plot_convergence

    X, t = _data()
    y = np.digitize(t, [-0.5, 0.5])
    est = LowRankKernelClassifier(n_columns=20, multiclass="ovr", random_state=0).fit(X, y)
    assert isinstance(est.history_, list)
    with pytest.raises(ValueError, match=r"list of 3 histories.*history_\[0\]"):
        plot_convergence(est.history_, tmp_path / "c.png")
    plot_convergence(est.history_[0], tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 0


def test_plots_whose_drawing_fails_leave_no_figure_open(tmp_path):
    # the figure of a plot that raised while drawing stayed open in pyplot
    import matplotlib.pyplot as plt

    from kernlearn.plotting import plot_convergence, plot_kernel_weights

    before = set(plt.get_fignums())
    with pytest.raises(ValueError):  # columns of unequal lengths
        plot_convergence({"objective": [3.0, 2.0, 1.0], "n_active": [1, 2]},
                         tmp_path / "c.png")
    # a format matplotlib cannot write: the figure is drawn, saving fails (a
    # label "$^$", not valid mathtext, failed here until audit 96 drew names
    # as plain text)
    with pytest.raises(ValueError, match="not supported"):
        plot_kernel_weights([0.5, 0.5], tmp_path / "k.xyz", names=["$^$", "b"])
    assert set(plt.get_fignums()) == before
    assert not list(tmp_path.iterdir())


def test_convergence_figure_says_when_it_draws_only_some_classes():
    # a one-vs-rest model of 100 classes drew its first 10 histories, with a
    # legend of those 10 and nothing said of the other 90
    import matplotlib.pyplot as plt

    from kernlearn import LowRankKernelClassifier
    from kernlearn.report import _convergence_figure

    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 2))
    y = np.digitize(X[:, 0], np.quantile(X[:, 0], np.linspace(0, 1, 13)[1:-1]))
    est = LowRankKernelClassifier(n_columns=20, multiclass="ovr", random_state=0)
    est.fit(X, y)
    assert len(est.history_) == 12
    fig = _convergence_figure(est)
    assert "first 10 of 12 classes" in fig._suptitle.get_text()
    plt.close(fig)


def test_report_says_when_it_shows_only_part_of_a_long_selection():
    # 300 selected features: 60 bars titled "Selected features in order of
    # inclusion" and a table cut at 200 rows, neither saying so
    import matplotlib.pyplot as plt

    from kernlearn import FGMRegressor
    from kernlearn.report import _selection_figure, build_report

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 230))
    y = X @ rng.normal(size=230) + 0.1 * rng.normal(size=300)
    est = FGMRegressor(B=70, max_features=210).fit(X, y)
    n = len(est.selected_features_)
    assert n > 200
    fig = _selection_figure(est, {})
    assert fig.axes[0].get_title().endswith(f"the first 60 of {n}")
    plt.close(fig)
    assert f"The first 200 of {n} rows" in build_report(est, {})


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_multitask_cv_verbose_one_reports_the_refit_not_every_validation_fit(
        kind, capsys, monkeypatch):
    # verbose=1 drew a bar and a "[MK-MTFL] stop" line for every fold and C
    # (26 alike lines with the classifier's defaults), none saying which
    from kernlearn import MultitaskMKLClassifierCV, MultitaskMKLRegressorCV

    monkeypatch.setenv("KERNLEARN_PROGRESS", "lines")
    X, y = _data(120, 3)
    t = np.arange(120) % 3
    if kind == "regressor":
        est = MultitaskMKLRegressorCV(kernel_selection="objective", Cs=(0.1, 1.0), cv=3,
                                      verbose=1)
    else:
        est, y = MultitaskMKLClassifierCV(Cs=(0.1, 1.0), cv=3, verbose=1), y > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y, task_index=t)
    out = capsys.readouterr().out
    assert sum(" stop: " in s for s in out.splitlines()) == 1, out
    est.set_params(verbose=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y, task_index=t)
    assert sum(" stop: " in s for s in capsys.readouterr().out.splitlines()) == 7


def test_platt_folds_do_not_print_progress_after_the_models_own_at_verbose_one(
        capsys, monkeypatch):
    # probability=True at verbose=1: five more "[OBSCURE] stop" lines came
    # from Platt's cross-validation fits after the model's own, so the last
    # stop line the user read was a fold's
    from kernlearn import PNormMKLClassifier

    monkeypatch.setenv("KERNLEARN_PROGRESS", "lines")
    X, t = _data(120)
    est = PNormMKLClassifier(probability=True, random_state=0, verbose=1).fit(X, t > 0)
    stops = [s for s in capsys.readouterr().out.splitlines() if " stop: " in s]
    assert len(stops) == 1, stops
    assert f"after {est.n_iter_} iterations" in stops[0]


def test_grfl_verbose_one_reports_the_paths_on_all_rows_with_their_budget(
        capsys, monkeypatch):
    # a default InfiniteFeatureRegressor on 200 rows printed 34 stop lines at
    # verbose=1 (every held-out part at every level), among them
    # "stop: max_features (max_features=0) after 0 iterations"
    from kernlearn import InfiniteFeatureRegressor

    monkeypatch.setenv("KERNLEARN_PROGRESS", "lines")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=200)
    est = InfiniteFeatureRegressor(random_state=0, verbose=1).fit(X, y)
    stops = [s for s in capsys.readouterr().out.splitlines() if " stop: " in s]
    assert 1 <= len(stops) <= est.n_paths_, stops
    # a warm start extended to a larger budget names that budget, not the
    # number of features it still had to add
    est.set_params(n_paths=1, max_features=6, warm_start=True).fit(X, y)
    capsys.readouterr()
    est.set_params(max_features=9).fit(X, y)
    stops = [s for s in capsys.readouterr().out.splitlines() if " stop: " in s]
    assert stops and all("max_features=9)" in s for s in stops), stops


def test_lowrank_nu_path_draws_one_bar_and_one_stop_line_at_verbose_one(
        capsys, monkeypatch):
    # on a terminal verbose=1 drew a bar and a stop line per value of the nu
    # path: six for one regressor, 130 for 26 one-vs-rest classes
    from kernlearn import LowRankKernelRegressor

    monkeypatch.setenv("KERNLEARN_PROGRESS", "bar")
    X, y = _data(150)
    est = LowRankKernelRegressor(n_columns=30, random_state=0, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    stops = [s for s in err.splitlines() if " stop: " in s]
    assert len(stops) == 1, stops
    kept = est.history_["nu"][-1]
    assert f"stop: nu_path (kept nu={kept:.3g})" in stops[0], stops


def test_report_on_one_test_row_does_not_repeat_sklearns_r2_warning():
    # the metrics table shows R^2 nan quietly; the score-vs-features curve
    # warned "R^2 score is not well-defined with less than two samples" once
    # per point (`kernlearn report`: "(5 times)")
    from kernlearn import FGMRegressor
    from kernlearn.report import build_report

    X, y = _data()
    est = FGMRegressor(B=2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = build_report(est, {}, (X[:1], y[:1], "one row"))
    assert "<tr><td>r2</td><td>nan</td></tr>" in text
