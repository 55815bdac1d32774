"""Audit 97: the documentation against the code of the last three passes.

Each test pins a statement of the user documentation that was false (or an
example that misbehaved) and is now true.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _fit(args, capsys):
    from kernlearn.cli import main

    code = main(["fit", *args, "-m", "model.npz", "-q"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("params, named", [
    (["-p", "kernel=poly", "-p", "degree=2.5"], "degree must be a non-negative integer"),
    (["-p", "kernel=poly", "-p", "coef0=-1"], "coef0 must be a finite non-negative"),
    (["-p", 'kernel_params={"width": 1}'], "unknown parameter(s) ['width']"),
    (["-p", "kernel=hik", "-p", 'kernel_params={"beta": 0}'], "kernel_params['beta']"),
    (["-p", "gamma=0.2", "-p", 'kernel_params={"gamma": 0.3}'], "give it once"),
])
@pytest.mark.parametrize("estimator", ["lowrank-regressor", "lowrank-classifier"])
def test_cli_refuses_lowrank_kernel_settings_before_reading_data(
        estimator, params, named, tmp_path, monkeypatch, capsys):
    """doc/cli.md: invalid values are refused before any data is read (exit 2), as
    the kernel lists are; the low-rank estimators' degree, coef0 and kernel_params
    were refused by the fit (exit 6, or exit 3 naming a missing file)."""
    monkeypatch.chdir(tmp_path)
    code, err = _fit(["no_such_file.npy", "-e", estimator, *params], capsys)
    assert code == 2, err
    assert named in err and err.count("\n") == 1, err


@pytest.mark.parametrize("params", [
    ["-p", 'kernel_params={"gamma": "mean"}'],
    ["-p", 'kernel_params={"gamma": 0.3}'],
    ["-p", "kernel=poly", "-p", "degree=0", "-p", "coef0=0"],
    ["-p", "kernel=hik", "-p", 'kernel_params={"beta": 0.5}'],
])
def test_cli_early_kernel_check_takes_valid_settings(params, tmp_path, monkeypatch, capsys):
    """The early check reads no data: a width computed from the data ("mean", or
    the default "scale" beside a kernel_params width) must not be refused there."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(40, 3)))
    np.save("train.npy", np.c_[X, X[:, 0] + 0.1 * rng.normal(size=40)])
    code, err = _fit(["train.npy", "-e", "lowrank-regressor", "-p", "standardize=false",
                      *params], capsys)
    assert code == 0, err


def test_unused_parameter_warning_is_public_and_named_in_the_readme():
    """README: a setting the fit does not read is named by a
    ``kernlearn.UnusedParameterWarning`` (a ``UserWarning``), once per fit, and the
    model is the one without it.  The class was importable only from a private
    module, and no user document named the warning."""
    import kernlearn
    from kernlearn import LowRankKernelRegressor, UnusedParameterWarning

    assert "UnusedParameterWarning" in dir(kernlearn)
    assert issubclass(UnusedParameterWarning, UserWarning)
    assert "`kernlearn.UnusedParameterWarning`" in (ROOT / "README.md").read_text()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = X[:, 0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        named = LowRankKernelRegressor(kernel="linear", gamma=0.5, random_state=0).fit(X, y)
    assert [w.category for w in caught] == [UnusedParameterWarning]
    plain = LowRankKernelRegressor(kernel="linear", random_state=0).fit(X, y)
    np.testing.assert_array_equal(named.predict(X), plain.predict(X))


def test_obscure_guide_kloft_example_sets_nothing_unread():
    """doc/obscure.md's Kloft example passed ``normalize=False`` beside
    ``kernels="precomputed"``, a setting the fit does not read: every reader who ran
    it saw an UnusedParameterWarning (the only warning of the docs' code blocks)."""
    from kernlearn import UnusedParameterWarning

    blocks = re.findall(r"^```python\n(.*?)^```", (ROOT / "doc" / "obscure.md").read_text(),
                        re.S | re.M)
    target = next(i for i, b in enumerate(blocks) if "Kloft's p" in b)
    namespace = {"__name__": "__doc__"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedParameterWarning)
        exec(blocks[0], namespace)  # (the data: iris)
        exec(blocks[target].replace("print(", "(lambda *a, **k: None)("), namespace)
    assert namespace["clf"].normalize is True


def test_mtmkl_guide_short_task_validation_folds():
    """doc/mtmkl.md said `cv=5` puts every task in every validation fold; a task of
    3 rows is in 3 of them (the docstring's rule), and in every training fold."""
    from sklearn.model_selection import StratifiedKFold

    from kernlearn import MultitaskMKLRegressorCV

    text = (ROOT / "doc" / "mtmkl.md").read_text()
    assert "every task in every training and\nvalidation fold" not in text
    assert "a task of 3 rows in 3 of them" in text
    rng = np.random.default_rng(0)
    task = np.r_[np.zeros(30, int), np.ones(30, int), [2, 2, 2]]
    X = rng.normal(size=(63, 3))
    y = X[:, 0] + task
    with warnings.catch_warnings(record=True) as caught:  # (no "least populated class")
        warnings.simplefilter("always")
        cv = MultitaskMKLRegressorCV(kernels=["linear"], Cs=[1.0], kernel_selection="objective",
                                     cv=5).fit(X, y, task_index=task)
    assert cv.n_splits_ == 5 and not caught, [str(w.message) for w in caught]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        folds = list(StratifiedKFold(5).split(X, task))  # (the folds an int cv takes)
    assert sum(int((task[te] == 2).any()) for _, te in folds) == 3
    assert all((task[tr] == 2).any() for tr, _ in folds)


def _airfoil(rows):
    from kernlearn.datasets import data_home

    path = data_home() / "suite" / "airfoil.csv.xz"
    if not path.exists():
        pytest.skip(f"the suite's airfoil table is absent ({path}; set KERNLEARN_DATA)")
    import pandas as pd

    df = pd.read_csv(path)
    return df.iloc[:rows, :-1].to_numpy(float), df.iloc[:rows, -1].to_numpy(float)


def test_weights_of_ones_as_reproducibility_guide_says():
    """doc/reproducibility.md: weights of ones give FGM's and the multitask
    estimators' model bit for bit, GrFL's classifier within 1e-14 (it said GrFL's
    classifier bit for bit, and the GrFL and SLKL regressors 6e-4 and 1e-6 apart:
    on airfoil's first 300 rows GrFL's classifier is 2e-15 apart, not equal)."""
    from threadpoolctl import threadpool_limits

    import kernlearn

    text = (ROOT / "doc" / "reproducibility.md").read_text()
    assert "FGM and the multitask estimators give the same\nmodel bit for bit" in text
    X, y = _airfoil(300)
    yc = (y > np.median(y)).astype(int)
    task = np.arange(len(y)) % 3
    ones = np.ones(len(y))
    with threadpool_limits(1):
        for name, target, fit_kw in [("FGMClassifier", yc, {}), ("FGMRegressor", y, {}),
                                     ("MultitaskMKLRegressor", y, {"task_index": task})]:
            est = getattr(kernlearn, name)
            a = est().fit(X, target, **fit_kw)
            b = est().fit(X, target, sample_weight=ones, **fit_kw)
            np.testing.assert_array_equal(a.predict(X, **fit_kw), b.predict(X, **fit_kw))
        a = kernlearn.InfiniteFeatureClassifier(random_state=0).fit(X, yc)
        b = kernlearn.InfiniteFeatureClassifier(random_state=0).fit(X, yc, sample_weight=ones)
        np.testing.assert_allclose(a.decision_function(X), b.decision_function(X),
                                   rtol=0, atol=1e-14)


def test_slkl_guide_outputs_of_a_class_weighed_out():
    """doc/slkl.md said ``mu_`` has a row per class with ``multiclass="ovr"``; a
    class whose rows all weigh zero gets none (weights-and-probabilities.md)."""
    from kernlearn import LowRankKernelClassifier

    assert "a class\nwhose rows all weigh zero gets no output" in (
        ROOT / "doc" / "slkl.md").read_text()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = np.arange(120) % 4
    clf = LowRankKernelClassifier(multiclass="ovr", class_weight={3: 0}, n_columns=40,
                                  random_state=0).fit(X, y)
    assert clf.mu_.shape == (3, 40) and np.shape(clf.nu_) == (3,)
    assert clf.dual_coef_.shape[1] == 4 and not (clf.predict(X) == 3).any()


@pytest.mark.parametrize("selection", ["objective", "loo"])
def test_regressor_cv_names_a_validation_fold_of_zero_weight(selection):
    """The thirtieth pass's CHANGELOG: a validation fold whose rows all weigh zero
    is refused naming it.  The classifier did; ``MultitaskMKLRegressorCV`` with a
    list of folds stopped on scikit-learn's "Sample weights must contain at least
    one non-zero number", naming neither the fold nor the weights."""
    from kernlearn import MultitaskMKLRegressorCV

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    task = np.arange(60) % 2
    rows = np.arange(60)
    folds = [(rows[rows >= 20], rows[rows < 20]),
             (rows[(rows < 20) | (rows >= 40)], rows[(rows >= 20) & (rows < 40)])]
    sw = np.where((rows >= 20) & (rows < 40), 0.0, 1.0)
    with pytest.raises(ValueError, match="validation rows of split 1 all have zero sample"):
        MultitaskMKLRegressorCV(kernel_selection=selection, cv=folds).fit(
            X, X[:, 0] + task, task_index=task, sample_weight=sw)
