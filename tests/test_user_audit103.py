"""Audit 103: a review of audit 98 (the CV estimators' folds with rows of zero weight).

Each test pins a case audit 98's changes left out and that now holds.
"""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import BaseCrossValidator
from test_user_audit98 import _multitask  # (same folder: the multitask data)


class _FirstThirty(BaseCrossValidator):
    """A user's splitter of fixed folds: three folds of the caller's first 30 rows
    (it ignores X, as PredefinedSplit does, but numbers fewer rows than it is given)."""

    def get_n_splits(self, X=None, y=None, groups=None):
        return 3

    def _iter_test_indices(self, X=None, y=None, groups=None):
        for k in range(3):
            yield np.arange(10 * k, 10 * k + 10)

    def split(self, X, y=None, groups=None):
        for te in self._iter_test_indices():
            yield np.setdiff1d(np.arange(30), te), te


@pytest.mark.parametrize("name", ["MultitaskMKLRegressorCV", "MultitaskMKLClassifierCV"])
def test_cv_fixed_folds_number_the_callers_rows_with_zero_weights(name):
    """A splitter whose folds ignore X numbers the caller's rows.  With rows of zero
    weight it was run on the kept rows and its folds read as positions among them
    unless an index passed their count (PredefinedSplit's always does): a user's
    folds of the first 30 of 60 rows were silently other rows, and the scores were
    not those of the same folds passed as a list.  They are now."""
    import kernlearn

    X, task, yr, yc = _multitask()
    y = yr if "Regressor" in name else yc
    sw = np.where(np.arange(len(X)) % 7 == 3, 0.0, 1.0)
    cv = _FirstThirty()
    cls = getattr(kernlearn, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = cls(cv=cv, Cs=[0.1, 1.0]).fit(X, y, task_index=task, sample_weight=sw)
        b = cls(cv=list(cv.split(X)), Cs=[0.1, 1.0]).fit(X, y, task_index=task,
                                                        sample_weight=sw)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])


@pytest.mark.parametrize("name", ["MultitaskMKLRegressorCV", "MultitaskMKLClassifierCV"])
def test_cv_fold_message_counts_a_tasks_rows_of_positive_weight(name):
    """"cross-validation fold 0 leaves 1 training row(s) of task 1 (30 in all; a fit
    needs 2 of every task)" counted the task's rows of zero weight, which no fit
    sees: 11 of its 30 rows weigh more than zero."""
    import kernlearn

    X, task, yr, yc = _multitask()
    rows = np.arange(len(X))
    folds = [(rows[rows >= 20], rows[rows < 20]), (rows[rows < 40], rows[rows >= 40])]
    sw = np.where((rows >= 22) & (task == 1), 0.0, 1.0)
    with pytest.raises(ValueError, match=r"task 1 \(11 of positive weight in all;"):
        getattr(kernlearn, name)(cv=folds, Cs=[1.0]).fit(
            X, yr if "Regressor" in name else yc, task_index=task, sample_weight=sw)


@pytest.mark.parametrize("command, name", [("pnorm-mkl", "PNormMKLClassifier"),
                                           ("mtmkl-regressor", "MultitaskMKLRegressor")])
def test_cli_refuses_a_kernel_lists_mean_width_beside_poly_before_reading_data(
        command, name, tmp_path, monkeypatch, capsys):
    """doc/cli.md: kernel lists are checked before any data is read (exit 2).
    ``gamma="mean"`` beside ``poly`` (the mean width is ``rbf``'s only) was let
    through and refused by the fit after reading the data (exit 6; exit 3 for a
    missing file), from ``-p`` or a config file alike.  The message is the fit's."""
    import kernlearn
    from kernlearn.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.toml").write_text(
        f'estimator = "{command}"\n[params]\nkernels = [["poly", {{gamma = "mean"}}], "rbf"]\n')
    for args in (["-e", command, "-p", 'kernels=[["poly", {"gamma": "mean"}], "rbf"]'],
                 ["--config", "c.toml"]):
        code = main(["fit", "no_such_file.csv", *args, "-m", "m.npz", "-q"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1, err
        X, task, yr, yc = _multitask(20)
        with pytest.raises(ValueError) as fit_error:
            getattr(kernlearn, name)(kernels=[("poly", {"gamma": "mean"}), "rbf"]).fit(
                X, yr if "Regressor" in name else yc,
                **({"task_index": task} if "Multitask" in name else {}))
        assert str(fit_error.value) in err


def test_cv_a_splitter_that_reads_x_splits_the_kept_rows():
    """The other side of the rule above, as the ``cv`` docstring says: a splitter
    whose folds depend on X (``TimeSeriesSplit``) splits the rows of positive
    weight as if the others were removed, its folds those it makes of the kept rows
    (not its folds of the caller's rows less those of zero weight)."""
    from sklearn.model_selection import TimeSeriesSplit

    import kernlearn

    X, task, yr, _ = _multitask()
    sw = np.where(np.arange(len(X)) % 7 == 3, 0.0, 1.0)
    keep = np.flatnonzero(sw > 0)
    kept = [(keep[tr], keep[te]) for tr, te in TimeSeriesSplit(3).split(keep)]
    cls = kernlearn.MultitaskMKLRegressorCV
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = cls(cv=TimeSeriesSplit(3), Cs=[0.1, 1.0]).fit(X, yr, task_index=task,
                                                         sample_weight=sw)
        b = cls(cv=kept, Cs=[0.1, 1.0]).fit(X, yr, task_index=task, sample_weight=sw)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])
