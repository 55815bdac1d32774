"""Defects a new user met (session 8 audit): each test names what went wrong."""

import numpy as np
import pytest

from kernlearn.cli import main


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_error(err):
    return err.count("\n") == 1 and err.startswith("kernlearn: error: ")


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
    code, out, err = _run(["fit", three_classes, "-e", "lowrank-classifier", "-q", "-p",
                           "max_iter=1", "-p", "random_state=0", "-m", tmp_path / "m.npz"],
                          capsys)
    assert code == 0 and out.startswith("fitted lowrank-classifier"), err
    lines = err.splitlines()
    assert lines and all(ln.startswith("kernlearn: warning: ") for ln in lines), err
    assert len(set(lines)) == len(lines), err
    assert any(ln.endswith(" times)") for ln in lines), err
