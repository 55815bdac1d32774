"""A thirty-second audit: messages that named the wrong thing.

A ``class_weight`` naming a label that is not a class was refused with
scikit-learn's "The classes, [2], are not in class_weight" (class 2 may be
left out; the key 3 was the mistake); the command line passed estimator
messages on with Python's 0-based "row 5 of X" beside its own "sample 6";
and LowRankKernel with a fixed ``nu`` warned of "outer iterations" where its
``max_iter`` counts sweeps.  Each test here failed before its fix.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from conftest import one_error as _one_error
from conftest import run_cli as _run
from kernlearn import (
    FGMClassifier,
    InfiniteFeatureClassifier,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
    MultitaskMKLClassifier,
    PNormMKLClassifier,
)

_KERN = ["linear", ("rbf", {"gamma": 0.5})]


def _classes(n=40):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    return X, np.where(X[:, 0] > 0, 2, 1)


# ------------------------------------------- class_weight naming no class
@pytest.mark.parametrize("make", [
    lambda cw: FGMClassifier(B=2, max_iter=3, class_weight=cw),
    lambda cw: PNormMKLClassifier(kernels=_KERN, max_iter=5, class_weight=cw),
    lambda cw: InfiniteFeatureClassifier(max_features=3, n_candidates=5,
                                         random_state=0, class_weight=cw),
    lambda cw: LowRankKernelClassifier(random_state=0, class_weight=cw),
    lambda cw: MultitaskMKLClassifier(kernels=_KERN, max_iter=3, class_weight=cw),
], ids=["fgm", "pnorm", "infinite", "lowrank", "mtmkl"])
@pytest.mark.parametrize("cw", [{1: 2.0, 3: 1.0}, {3: 1.0}])
def test_class_weight_naming_no_class_says_which_label(make, cw):
    # "The classes, [2], are not in class_weight" (of {1: 2.0, 3: 1.0}): it
    # named the class left out, which may be (it weighs 1), and not the key 3
    X, y = _classes()
    with pytest.raises(ValueError) as info:
        make(cw).fit(X, y)
    msg = str(info.value)
    assert "class_weight names 3, which is not a class of y" in msg, msg
    assert "classes seen in y: 1, 2" in msg and "are not in class_weight" not in msg


def test_class_weight_keeps_scikit_learns_semantics():
    # a class left out weighs 1; keys beyond classes that all have one are
    # accepted, as scikit-learn's LogisticRegression accepts them
    X, y = _classes()
    ref = FGMClassifier(B=2, max_iter=3, class_weight={1: 2.0, 2: 1.0}).fit(X, y)
    for cw in ({1: 2.0}, {1: 2.0, 2: 1.0, 3: 5.0}):
        est = FGMClassifier(B=2, max_iter=3, class_weight=cw).fit(X, y)
        np.testing.assert_array_equal(est.decision_function(X), ref.decision_function(X))
    with pytest.raises(ValueError, match=r"names 'c', which is not a class of y "
                                         r"\(the classes seen in y: 'a', 'b'\)"):
        FGMClassifier(B=2, max_iter=3, class_weight={"c": 2.0}).fit(
            X, np.where(y == 1, "a", "b"))


# ------------------------------------- the command line's numbering of rows
def _line(row):
    return ",".join(repr(float(v)) for v in row)


def _regression(n=80):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 4))
    return X, X[:, 0] + 0.1 * rng.normal(size=n)


def test_command_line_names_a_refused_row_as_its_sample(tmp_path, capsys):
    # "cannot predict test.csv: ...'s decision values for row 5 of X are NaN
    # or infinite: its values (largest in column 1)...", after the warning
    # of the same run "(first: sample 6, feature 'b' = 1e+308, ...)"
    X, y = _regression()
    y = (y > 0).astype(int)  # (the regressor clips the row to the training range)
    (tmp_path / "train.csv").write_text("a,b,c,d,target\n" + "\n".join(
        _line(r) + f",{t}" for r, t in zip(X[:60], y[:60])) + "\n")
    test = X[60:].copy()
    test[5, 1] = 1e308
    (tmp_path / "test.csv").write_text(
        "a,b,c,d\n" + "\n".join(_line(r) for r in test) + "\n")
    model = tmp_path / "m.npz"
    code, _, err = _run(["fit", tmp_path / "train.csv", "-e", "lowrank-classifier",
                         "--label", "target", "-m", model, "-q"], capsys)
    assert code == 0, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        code, _, err = _run(["predict", tmp_path / "test.csv", "-m", model,
                             "--allow-out-of-range", "-o", tmp_path / "p.csv"], capsys)
    assert code == 5 and _one_error(err), err
    assert "sample 6 are NaN or infinite" in err and "(largest in feature 2)" in err, err
    assert "row 5" not in err and "column 1" not in err


def test_command_line_out_of_core_counts_samples_over_the_blocks(tmp_path, capsys):
    # block by block, a row was counted from its block's first row (the
    # first block is 64 KiB of text, about 600 rows here)
    X, y = _regression(1000)
    y = (y > 0).astype(int)  # (the regressor clips the row to the training range)
    rows = [f"{t!r} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(r))
            for r, t in zip(X.tolist(), y.tolist())]
    (tmp_path / "train.svm").write_text("\n".join(rows[:200]) + "\n")
    rows[900] = rows[900].split(" ", 1)[0] + " 1:1e308 2:1 3:1 4:1"
    (tmp_path / "test.svm").write_text("\n".join(rows) + "\n")
    model = tmp_path / "m.npz"
    code, _, err = _run(["fit", tmp_path / "train.svm", "-e", "lowrank-classifier",
                         "-m", model, "-q"], capsys)
    assert code == 0, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        code, _, err = _run(["predict", tmp_path / "test.svm", "-m", model,
                             "--allow-out-of-range", "--out-of-core", "--chunk-memory",
                             "20KB"], capsys)
    assert code == 5 and _one_error(err), err
    assert "sample 901 are NaN or infinite" in err, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        code, _, err = _run(["evaluate", tmp_path / "test.svm", "-m", model,
                             "--allow-out-of-range", "--out-of-core", "--chunk-memory",
                             "20KB"], capsys)
    assert code == 5 and "sample 901 are NaN or infinite" in err, err


def test_command_line_fit_names_an_unscalable_column_as_its_feature(tmp_path, capsys):
    # "X column(s) [2] have values too large to standardise" of the third
    # feature, 0-based among the command line's 1-based features
    X, y = _regression(60)
    X[5, 2] = 1.7e308
    (tmp_path / "train.csv").write_text("\n".join(
        _line(r) + f",{float(t)!r}" for r, t in zip(X, y)) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        code, _, err = _run(["fit", tmp_path / "train.csv", "-e", "lowrank-regressor",
                             "--label", "4", "--no-header", "-m", tmp_path / "m.npz",
                             "-q"], capsys)
    assert code == 6 and _one_error(err), err
    assert "feature(s) 3 have values too large" in err and "[2]" not in err, err


# ------------------------------------------------ LowRankKernel's fixed nu
@pytest.mark.parametrize("make", [LowRankKernelRegressor, LowRankKernelClassifier])
def test_lowrank_fixed_nu_cap_warning_counts_sweeps(make):
    # "slkl stopped after max_iter=1 outer iterations": max_iter's docs (and
    # the nu path's warning) count sweeps of M coordinate steps
    X, y = _regression(60)
    y = y if make is LowRankKernelRegressor else (y > 0).astype(int)
    with pytest.warns(ConvergenceWarning) as caught:
        make(nu=0.1, max_iter=1, random_state=0).fit(X, y)
    msgs = [str(w.message) for w in caught if w.category is ConvergenceWarning]
    assert any("after max_iter=1 sweeps without meeting tol" in m for m in msgs), msgs
    assert not any("outer iterations" in m for m in msgs), msgs
