"""Audit 98: a review of audit 97 (the command line's early kernel check, the CV
estimators' zero-weight folds).

Each test pins a case audit 97's changes left out and that now holds.
"""

import warnings

import numpy as np
import pytest


def _cli(args, capsys):
    from kernlearn.cli import main

    code = main(["fit", *args, "-m", "model.npz", "-q"])
    return code, capsys.readouterr().err


# settings with a width computed from the data ("scale", "mean") or a string in its
# place: the early check dropped every string gamma of kernel_params, so the fit
# refused these after reading the data (exit 6; exit 3 for a missing file)
_STRING_GAMMAS = [
    ({"gamma": 0.2, "kernel_params": {"gamma": "mean"}}, "give it once"),
    ({"gamma": 0.2, "kernel_params": {"gamma": "scale"}}, "give it once"),
    ({"kernel_params": {"gamma": "Scale"}}, "must be a positive number"),
    ({"kernel": "linear", "kernel_params": {"gamma": "mean"}}, "unknown parameter(s) ['gamma']"),
    ({"kernel": "poly", "kernel_params": {"gamma": "mean"}}, "is only defined for 'rbf'"),
]


def _p(settings):
    import json

    return [a for k, v in settings.items() for a in ("-p", f"{k}={json.dumps(v)}"
                                                      if not isinstance(v, str) else f"{k}={v}")]


@pytest.mark.parametrize("settings, named", _STRING_GAMMAS)
def test_cli_refuses_string_widths_before_reading_data_as_the_fit(
        settings, named, tmp_path, monkeypatch, capsys):
    """doc/cli.md: a low-rank estimator's kernel settings are refused before any
    data is read (exit 2).  A ``kernel_params`` width given as a string was left
    out of audit 97's check: a conflict with ``gamma``, a misspelt ``"Scale"``, a
    width beside ``linear`` (which takes none) or ``"mean"`` beside ``poly`` were
    refused by the fit, exit 6.  The message is the fit's own."""
    from kernlearn import LowRankKernelRegressor

    monkeypatch.chdir(tmp_path)
    code, err = _cli(["no_such_file.npy", "-e", "lowrank-regressor", *_p(settings)], capsys)
    assert code == 2 and named in err and err.count("\n") == 1, err
    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(30, 3)))
    with pytest.raises(ValueError) as fit_error:
        LowRankKernelRegressor(**settings).fit(X, X[:, 0])
    assert str(fit_error.value) in err


@pytest.mark.parametrize("settings", [
    {"kernel": "poly", "kernel_params": {"gamma": "scale", "degree": 3}},
    {"gamma": "scale", "kernel_params": {"gamma": "mean"}},
    {"kernel": "hik", "kernel_params": {"beta": 1.5}},
])
def test_cli_early_check_takes_what_the_fit_takes(settings, tmp_path, monkeypatch, capsys):
    """The check reads no data, and refuses no width the fit computes from it."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(40, 3)))
    np.save("train.npy", np.c_[X, X[:, 0]])
    code, err = _cli(["train.npy", "-e", "lowrank-regressor", *_p(settings)], capsys)
    assert code == 0, err


def _multitask(n=60, tasks=2):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    task = np.arange(n) % tasks
    yc = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, 0)
    return X, task, X[:, 0] + task, yc


@pytest.mark.parametrize("name", ["MultitaskMKLRegressorCV", "MultitaskMKLClassifierCV"])
def test_cv_names_a_training_fold_of_zero_weight(name):
    """A list of folds whose training rows all weigh zero stopped, in both CV
    estimators, on scikit-learn's "Sample weights must contain at least one non-zero
    number" (naming neither the fold nor that the data has positive weights)."""
    import kernlearn

    X, task, yr, yc = _multitask()
    rows = np.arange(len(X))
    folds = [(rows[20:40], rows[:20]), (rows[:40], rows[40:])]
    sw = np.where((rows >= 20) & (rows < 40), 0.0, 1.0)
    est = getattr(kernlearn, name)(cv=folds, Cs=[1.0])
    with pytest.raises(ValueError, match="training rows of split 0 all have zero sample"):
        est.fit(X, yr if "Regressor" in name else yc, task_index=task, sample_weight=sw)


@pytest.mark.parametrize("name", ["MultitaskMKLRegressorCV", "MultitaskMKLClassifierCV"])
def test_cv_counts_positive_training_rows_of_a_task(name):
    """A training fold holding one row of positive weight of a task (and others of
    zero weight) passed the fold check, which counted every row, and the fold's fit
    stopped on "every task needs at least 2 samples of positive weight", about data
    with ten such rows.  The fold is named."""
    import kernlearn

    X, task, yr, yc = _multitask()
    rows = np.arange(len(X))
    folds = [(rows[rows >= 20], rows[rows < 20]), (rows[rows < 40], rows[rows >= 40])]
    sw = np.where((rows >= 22) & (task == 1), 0.0, 1.0)  # fold 0 trains on row 21 of task 1
    with pytest.raises(ValueError, match="fold 0 leaves 1 training row"):
        getattr(kernlearn, name)(cv=folds, Cs=[1.0]).fit(
            X, yr if "Regressor" in name else yc, task_index=task, sample_weight=sw)


@pytest.mark.parametrize("name", ["MultitaskMKLRegressorCV", "MultitaskMKLClassifierCV"])
def test_cv_predefined_split_with_zero_weights(name):
    """``cv=PredefinedSplit(test_fold)`` with rows of zero weight stopped on an
    IndexError ("index 40 is out of bounds for axis 0 with size 40"): the splitter
    was run on the kept rows, but its folds number the caller's.  Its folds, less
    the rows of zero weight, are used (the scores of that list of folds)."""
    from sklearn.model_selection import PredefinedSplit

    import kernlearn

    X, task, yr, yc = _multitask()
    y = yr if "Regressor" in name else yc
    rows = np.arange(len(X))
    sw = np.where(rows % 7 == 3, 0.0, 1.0)
    cv = PredefinedSplit(rows // 20)
    pairs = [(tr[sw[tr] > 0], te[sw[te] > 0]) for tr, te in cv.split()]
    cls = getattr(kernlearn, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = cls(cv=cv, Cs=[0.1, 1.0]).fit(X, y, task_index=task, sample_weight=sw)
        b = cls(cv=pairs, Cs=[0.1, 1.0]).fit(X, y, task_index=task, sample_weight=sw)
    assert a.n_splits_ == 3
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])


def test_unused_parameter_warning_listed_filtered_by_name_and_pickled(tmp_path):
    """Audit 97 made ``kernlearn.UnusedParameterWarning`` public (the README names
    it); the API reference did not list it.  It is filtered by its public name
    (``filterwarnings(category=...)``, pytest's ``-W error::kernlearn.UnusedParameterWarning``;
    Python's own ``-W`` reads filters before site-packages can be imported) and
    pickles as itself."""
    import pickle
    import subprocess
    import sys
    from pathlib import Path

    from kernlearn import UnusedParameterWarning

    root = Path(__file__).resolve().parents[1]
    assert "### `kernlearn.UnusedParameterWarning(" in (root / "doc" / "api.md").read_text()
    w = pickle.loads(pickle.dumps(UnusedParameterWarning("gamma=0.5 not used")))
    assert type(w) is UnusedParameterWarning and str(w) == "gamma=0.5 not used"
    code = ("import warnings\nimport numpy as np\nimport kernlearn\n"
            "warnings.filterwarnings('error', category=kernlearn.UnusedParameterWarning)\n"
            "kernlearn.LowRankKernelRegressor(kernel='linear', gamma=0.5)"
            ".fit(np.eye(20, 2), np.arange(20.0))")
    env = {**__import__("os").environ, "PYTHONPATH": str(root / "src")}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=tmp_path)
    assert run.returncode == 1 and "UnusedParameterWarning: " in run.stderr, run.stderr


def test_weights_of_ones_lowrank_regressor_on_all_of_airfoil():
    """doc/reproducibility.md (audit 97) said ``LowRankKernelRegressor`` agrees with
    weights of ones within 2.3e-6 on airfoil's first 300 rows and all 1,503; that
    was measured on 300 rows only: on all 1,503 the predictions are 2e-4 apart."""
    from pathlib import Path

    from threadpoolctl import threadpool_limits

    from kernlearn import LowRankKernelRegressor
    from kernlearn.datasets import data_home

    text = (Path(__file__).resolve().parents[1] / "doc" / "reproducibility.md").read_text()
    assert "`LowRankKernelRegressor` within 2.3e-6\n(300 rows) and 2e-4 (1,503 rows" in text
    path = data_home() / "suite" / "airfoil.csv.xz"
    if not path.exists():
        pytest.skip(f"the suite's airfoil table is absent ({path}; set KERNLEARN_DATA)")
    import pandas as pd

    df = pd.read_csv(path)
    X, y = df.iloc[:, :-1].to_numpy(float), df.iloc[:, -1].to_numpy(float)
    with threadpool_limits(1):
        a = LowRankKernelRegressor(random_state=0).fit(X, y).predict(X)
        b = LowRankKernelRegressor(random_state=0).fit(X, y, sample_weight=np.ones(len(y)))
        gap = np.max(np.abs(a - b.predict(X)))
    assert gap < 2.5e-4, gap  # (2e-4 as written; 2.3e-6, the old bound, is not met)
