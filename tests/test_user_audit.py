"""Defects a new user met (a user-level audit of the CLI and the Python API);
each test names what went wrong."""

import numpy as np
import pytest

from kernlearn.cli import main

from conftest import run_cli as _run, one_error as _one_error


@pytest.fixture
def label_first(tmp_path):
    """A CSV whose label is its first column, and a model fitted with --label 0."""
    rows = ["target,a,b"] + [f"{'yes' if (i * 7) % 10 > 3 else 'no'},{(i * 7) % 10},{i % 3}"
                             for i in range(40)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    assert main(["fit", str(tmp_path / "t.csv"), "--label", "0", "-e", "fgm", "-q",
                 "-m", str(tmp_path / "m.npz")]) == 0
    return tmp_path


def test_label_number_at_evaluate_is_the_column_it_was_at_fit(label_first, capsys):
    # `--label 0` at fit is column 0; the same flag at evaluate was read as a
    # column *named* "0" and refused the file ("column 'target' is not a
    # feature of the model nor its label '0'")
    w = label_first
    code, ref, err = _run(["evaluate", w / "t.csv", "-m", w / "m.npz"], capsys)
    assert code == 0 and "n_samples 40" in ref, err
    for label in ("0", "-3", "target"):
        code, out, err = _run(["evaluate", w / "t.csv", "-m", w / "m.npz", "--label", label],
                              capsys)
        assert code == 0 and out == ref, (label, err)
    code, out, err = _run(["evaluate", w / "t.csv", "-m", w / "m.npz", "--label", "7"], capsys)
    assert code == 3 and _one_error(err) and "out of range for 3 columns" in err
    code, out, err = _run(["evaluate", w / "t.csv", "-m", w / "m.npz", "--label", "a"], capsys)
    assert code == 5 and _one_error(err) and "column 'target' is not a feature" in err


def test_grfl_master_warning_names_the_estimators_parameters():
    # the warning said "max_iter=1 ... tol=1e-12", the names of the master
    # solver, while the estimator's max_iter is a deprecated alias of
    # inner_max_iter: a user could not tell what to change
    from sklearn.exceptions import ConvergenceWarning

    from kernlearn import InfiniteFeatureRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = np.sin(2 * X[:, 0]) * X[:, 1] + 0.1 * rng.normal(size=120)
    est = InfiniteFeatureRegressor(lambda_p=0.05, max_features=12, n_candidates=30,
                                   inner_max_iter=1, inner_tol=1e-12, random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"max_iter=1 without meeting tol=1e-12 "
                      r"\(the estimator's inner_max_iter and inner_tol\); increase "
                      r"inner_max_iter\."):
        est.fit(X, y)


@pytest.fixture
def three_classes(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 3))
    y = np.array(["a", "b", "c"])[np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.5, 0.5])]
    rows = ["x0,x1,x2,target"] + [f"{a:.4f},{b:.4f},{c:.4f},{t}" for (a, b, c), t in zip(X, y)]
    (tmp_path / "c3.csv").write_text("\n".join(rows) + "\n")
    return tmp_path / "c3.csv"


def test_fit_prints_each_distinct_warning_once(three_classes, tmp_path, capsys):
    # the CLI records every warning ("always"), so a warning raised by each
    # of several inner fits was printed once per fit, word for word
    # (the one-vs-rest fits at one nu each warn the same words; Platt's folds
    # did too, before they summed up their warnings in one)
    code, out, err = _run(["fit", three_classes, "-e", "lowrank-classifier", "-q", "-p",
                           "max_iter=1", "-p", "nu=0.1", "-p", "multiclass=ovr", "-p",
                           "random_state=0", "-m", tmp_path / "m.npz"], capsys)
    assert code == 0 and out.startswith("fitted lowrank-classifier"), err
    lines = err.splitlines()
    assert lines and all(ln.startswith("kernlearn: warning: ") for ln in lines), err
    assert len(set(lines)) == len(lines), err
    # (since audit 53 the one-vs-rest fits sum theirs up in one: a repeated
    # warning's count is checked on the printer itself)
    assert any("3 one-vs-rest problems" in ln for ln in lines), err
    import warnings

    from kernlearn.cli import _print_warnings

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for _ in range(2):
            warnings.warn("the same words", UserWarning)
    _print_warnings(rec)
    assert capsys.readouterr().err == "kernlearn: warning: the same words (2 times)\n"


@pytest.mark.filterwarnings("error::UserWarning")  # (pytest would hide a printed one)
def test_evaluate_on_one_class_or_one_row_prints_metrics_only(three_classes, tmp_path, capsys):
    # a test file holding one class (or one row) printed scikit-learn's
    # two-line UserWarning about its own `labels` argument, with its path
    import json

    code, _, err = _run(["fit", three_classes, "-e", "fgm", "-q", "-m", tmp_path / "c.npz"],
                         capsys)
    assert code == 0, err
    lines = three_classes.read_text().splitlines()
    one = tmp_path / "one.csv"
    one.write_text("\n".join([lines[0]] + [ln for ln in lines[1:] if ln.endswith(",b")]) + "\n")
    code, out, err = _run(["evaluate", one, "-m", tmp_path / "c.npz"], capsys)
    assert code == 0 and err == "" and "balanced_accuracy" in out, err
    code, out, err = _run(["report", tmp_path / "c.npz", "--data", one, "-o",
                           tmp_path / "r.html"], capsys)
    assert code == 0 and err == "", err
    # one row of a regression: R^2 is undefined, nan in text and null in JSON
    # (JSON has no NaN: `NaN` broke every strict parser)
    reg = tmp_path / "reg.csv"
    reg.write_text("a,b,target\n" + "".join(f"{i % 7},{i % 3},{(i % 7) - 0.5 * (i % 3)}\n"
                                              for i in range(30)))
    row = tmp_path / "row.csv"
    row.write_text("a,b,target\n3,1,2.5\n")
    code, _, err = _run(["fit", reg, "-e", "fgm-regressor", "-q", "-m", tmp_path / "r.npz"],
                         capsys)
    assert code == 0, err
    code, out, err = _run(["evaluate", row, "-m", tmp_path / "r.npz"], capsys)
    assert code == 0 and err == "" and "r2 nan" in out, err
    code, out, err = _run(["evaluate", row, "-m", tmp_path / "r.npz", "--json"], capsys)
    assert code == 0 and err == "", err
    res = json.loads(out, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))
    assert res["r2"] is None and res["n_samples"] == 1 and res["mae"] >= 0


def test_proba_header_is_a_csv_row_when_labels_hold_commas(tmp_path, capsys):
    # the header was the labels joined by commas: "big, red" made it one
    # column wider than the rows
    import csv
    import io

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    labels = np.where(X.sum(1) > 0, "big, red", 'small "blue"')
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["x", "y", "target"])
    w.writerows([[f"{a:.3f}", f"{b:.3f}", t] for (a, b), t in zip(X, labels)])
    (tmp_path / "l.csv").write_text(buf.getvalue())
    code, _, err = _run(["fit", tmp_path / "l.csv", "-e", "fgm", "-p", "loss=logistic", "-q",
                         "-m", tmp_path / "m.npz"], capsys)
    assert code == 0, err
    code, out, err = _run(["predict", tmp_path / "l.csv", "-m", tmp_path / "m.npz", "--proba"],
                          capsys)
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["big, red", 'small "blue"'] and len(rows) == 61
    assert {len(r) for r in rows} == {2}


def test_trailing_separator_column_is_named_as_such(tmp_path, capsys):
    # a file whose every line ends with "," (a common export) was refused for
    # a "missing value" in a column "Unnamed: 3" that the file never names
    rows = ["a,b,target,"] + [f"{i % 5},{i % 3},{'yes' if i % 5 > 1 else 'no'}," for i in range(30)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    code, out, err = _run(["fit", tmp_path / "t.csv", "-e", "fgm", "-q", "-m",
                           tmp_path / "m.npz"], capsys)
    assert code == 3 and _one_error(err) and "Unnamed" not in err, err
    assert "column 4 has no name and no values (does every line end with ','?)" in err
    # a column without a name but with values is still a feature (as before)
    rows = ["a,,target"] + [f"{i % 5},{i % 3},{'yes' if i % 5 > 1 else 'no'}" for i in range(30)]
    (tmp_path / "u.csv").write_text("\n".join(rows) + "\n")
    code, out, err = _run(["fit", tmp_path / "u.csv", "-e", "fgm", "-q", "-m",
                           tmp_path / "m.npz"], capsys)
    assert code == 0 and "on 30 x 2" in out, err


def test_text_column_with_a_numeric_last_column_suggests_label(tmp_path, capsys):
    # a label that is not the last column read as a feature: the error named
    # the text cell only, not the --label the user had to give
    rows = ["target,a,b"] + [f"{'yes' if i % 5 > 1 else 'no'},{i % 5},{i % 3}" for i in range(30)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    code, _, err = _run(["fit", tmp_path / "t.csv", "-e", "fgm", "-q", "-m",
                         tmp_path / "m.npz"], capsys)
    assert code == 3 and _one_error(err), err
    assert "column target: 'no' is not a number. If it is the label, pass --label target" in err
    code, _, err = _run(["fit", tmp_path / "t.csv", "-e", "fgm", "-q", "--label", "target",
                         "-m", tmp_path / "m.npz"], capsys)
    assert code == 0, err
    # a typo among numbers, or a text feature beside a text label: no such guess
    (tmp_path / "typo.csv").write_text("\n".join(["a,b,c"] + [f"{i},{i % 3},{i % 2}"
                                                              for i in range(20)]
                                                   + ["-x.5,1,1"]) + "\n")
    code, _, err = _run(["fit", tmp_path / "typo.csv", "-e", "fgm", "-q", "-m",
                         tmp_path / "m.npz"], capsys)
    assert code == 3 and _one_error(err) and "'-x.5' is not a number." in err, err
    assert "--label" not in err
    rows = ["c,a,target"] + [f"{'red' if i % 2 else 'blue'},{i % 5},{'yes' if i % 5 > 1 else 'no'}"
                             for i in range(30)]
    (tmp_path / "c.csv").write_text("\n".join(rows) + "\n")
    code, _, err = _run(["fit", tmp_path / "c.csv", "-e", "fgm", "-q", "-m",
                         tmp_path / "m.npz"], capsys)
    assert code == 3 and _one_error(err) and "--label" not in err, err


@pytest.mark.parametrize("family", ["fourier", "nystrom"])
def test_sampled_family_for_fgm_is_a_usage_error_before_reading(family, tmp_path, capsys):
    # it was refused only inside the fit: exit 6 ("could not fit this data")
    # after reading the data, where the documented status is 2, before it
    code, _, err = _run(["fit", tmp_path / "absent.csv", "-e", "fgm", "-p",
                         f"family={family}", "-q", "-m", tmp_path / "m.npz"], capsys)
    assert code == 2 and _one_error(err) and "cannot be used by FGM" in err, err
    assert "InfiniteFeatureClassifier" in err


def test_out_dash_is_standard_output(label_first, capsys, monkeypatch):
    # `-o -` wrote a file named "-" in the working folder and printed nothing
    w = label_first
    monkeypatch.chdir(w)
    for argv in (["predict", w / "t.csv", "-m", w / "m.npz"],
                 ["evaluate", w / "t.csv", "-m", w / "m.npz"],
                 ["select", w / "m.npz"]):
        code, ref, err = _run(argv, capsys)
        assert code == 0 and ref, err
        code, out, err = _run(argv + ["-o", "-"], capsys)
        assert code == 0 and out == ref and err == "", err
    assert not (w / "-").exists()


@pytest.mark.parametrize("name", ["MultitaskMKLRegressorCV", "MultitaskMKLClassifierCV"])
def test_multitask_cv_estimators_keep_dataframe_column_names(name):
    # the refit on the validated array dropped feature_names_in_, so columns
    # given in another order at predict time were used silently
    import pandas as pd

    import kernlearn

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    t = np.arange(60) % 2
    y = X[:, 0] + np.where(t == 0, 1, -1) * X[:, 1]
    if name.endswith("ClassifierCV"):
        y = np.where(y > 0, "p", "q")
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    cls = getattr(kernlearn, name)
    est = cls(Cs=(0.1, 1.0), cv=3).fit(df, y, task_index=t)
    assert list(est.feature_names_in_) == ["a", "b", "c"] and est.n_features_in_ == 3
    ref = cls(Cs=(0.1, 1.0), cv=3).fit(X, y, task_index=t)
    a, b = est.predict(df, task_index=t), ref.predict(X, task_index=t)
    if a.dtype.kind == "f":  # (a frame's column-major copy rounds differently)
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    else:
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="feature names"):
        est.predict(df[["c", "b", "a"]], task_index=t)


def test_grfl_score_takes_the_tasks_the_model_was_fitted_with():
    # fitted with task_index, score() needs the samples' tasks, as predict() does
    from kernlearn import InfiniteFeatureClassifier, InfiniteFeatureRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(160, 3))
    tasks = np.repeat([0, 1], 80)
    f = np.where(tasks == 0, X[:, 0], -X[:, 1])
    y_reg, y_clf = f + 0.1 * rng.normal(size=160), (f > 0).astype(int)
    w = rng.uniform(0.5, 2.0, size=160)
    kw = dict(max_features=10, n_candidates=20, random_state=0)
    for est, y in ((InfiniteFeatureClassifier(**kw), y_clf),
                   (InfiniteFeatureRegressor(lambda_p=0.5, **kw), y_reg)):
        est.fit(X, y, task_index=tasks)
        pred = est.predict(X, task_index=tasks)
        if y is y_clf:
            want = np.average(pred == y, weights=w)
        else:
            want = 1 - np.sum(w * (y - pred) ** 2) / np.sum(w * (y - np.average(y, weights=w)) ** 2)
        assert est.score(X, y, task_index=tasks, sample_weight=w) == pytest.approx(want, rel=1e-12)
        assert est.score(X, y, tasks) == est.score(X, y, task_index=tasks)
        with pytest.raises(ValueError, match="task_index"):
            est.score(X, y)


def test_fit_summary_counts_kernels_in_the_singular():
    from types import SimpleNamespace

    from kernlearn.cli import _selection_summary

    assert _selection_summary(SimpleNamespace(kernel_weights_=np.array([0.0, 0.7, 0.0]))) \
        == "1 kernel weighted; "
    assert _selection_summary(SimpleNamespace(kernel_weights_=np.array([0.2, 0.7]))) \
        == "2 kernels weighted; "
