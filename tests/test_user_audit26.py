"""A twenty-sixth user's audit: the rows a model meets after fitting.

A user predicted, with every estimator, on rows unlike the training rows:
far out in one column (10 to 1e8 standard deviations), a column constant in
training that varies, rows of zeros, values near float64's limits; in other
shapes, containers and dtypes (no rows, one row, lists, DataFrames with
columns moved, renamed, extra or missing, integers, booleans, float32,
Fortran order, strided, read-only and memory-mapped arrays), by rows, by
chunks and at once, from model files in a fresh process, with task ids
unseen or of another dtype, and through ``kernlearn predict`` on files with
columns moved, missing or extra.  Most of it held: far-out rows give finite
numbers (the low-rank models tend to their intercept, linear terms
extrapolate as a linear model's do), probabilities stay in [0, 1] and sum to
one, the dtypes, layouts and chunks give the same predictions (float32
within float32's precision), unseen task ids and moved columns are named.
Rows whose finite values overflow float64 in the model did not, nor FGM's
``transform``'s words, ``--proba`` on such rows, a model without column
names reading a file's header, and "wrote 1 predictions": each test here
failed before its fix, but for the guards on real data and on the README's
words.
"""

import re
import warnings

import numpy as np
import pytest

import kernlearn
from conftest import one_error as _one_error
from conftest import run_cli as _run


def _data(n=90, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X[:, 0] - 2.0 * X[:, 1] + 0.5 * X[:, 2] ** 2 + 0.1 * rng.standard_normal(n)
    return X, y


_ESTIMATORS = {
    "FGMRegressor": ({}, "predict"),
    "FGMClassifier": ({}, "decision_function"),
    "PNormMKLClassifier": ({}, "decision_function"),
    "InfiniteFeatureRegressor": ({"random_state": 0}, "predict"),
    "InfiniteFeatureClassifier": ({"random_state": 0, "probability": True},
                                  "predict_proba"),
    "LowRankKernelRegressor": ({"random_state": 0}, "predict"),
    "LowRankKernelClassifier": ({"random_state": 0, "probability": True},
                                "predict_proba"),
    "MultitaskMKLRegressor": ({}, "predict"),
    "MultitaskMKLClassifier": ({"probability": True}, "predict_proba"),
}


#: Regressors that predict on inputs clipped to the training range (x_range_)
CLIPPED = ("InfiniteFeatureRegressor", "LowRankKernelRegressor")


def _fitted(name, X, y):
    params, method = _ESTIMATORS[name]
    est = getattr(kernlearn, name)(**params)
    if name.endswith("Classifier"):
        y = (y > np.median(y)).astype(int)
    kw = {"task_index": np.zeros(len(X), int)} if name.startswith("Multitask") else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y, **kw)
    return est, method


# --------------------------------------------- rows at float64's limits
@pytest.mark.parametrize("name", sorted(_ESTIMATORS))
@pytest.mark.parametrize("where", ["one column", "every column"])
def test_a_row_too_large_for_float64_is_named_not_predicted_nan(name, where):
    # finite values near 1e308 overflow in the model's arithmetic: the
    # low-rank and random-feature models predicted NaN (probabilities NaN,
    # rows not summing to one), FGM -inf, under NumPy's overflow warnings
    # only; the others refused in words naming no cause ("Input X contains
    # infinity" of values the user never gave, "kernels[0] produced NaN or
    # infinite values")
    X, y = _data()
    est, method = _fitted(name, X, y)
    Z = X[:3].copy()
    if where == "one column":
        Z[1, 0] = 1e308
    else:
        Z[1] = 1.7e308
    kw = {"task_index": np.zeros(3, int)} if name.startswith("Multitask") else {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out = getattr(est, method)(Z, **kw)
    except ValueError as exc:
        assert re.search("too large (to standardise|for float64)", str(exc)), exc
    else:
        # (FGM's linear model of one column of 1e308: a finite extrapolation;
        # the kernel regressors clip the row to the training range)
        assert np.all(np.isfinite(out)), out
        # ... and only there
        assert where == "one column" and (name.startswith("FGM") or name in CLIPPED)


def test_the_refusal_names_the_row_and_the_column_by_its_name():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    # (the classifier: the regressor clips the row to the training range)
    est = kernlearn.LowRankKernelClassifier(random_state=0).fit(frame, y > np.median(y))
    Z = frame.iloc[:4].copy()
    Z.iloc[2, 3] = 1e308
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match=r"row 2 of X .*column 'd'.*rescale X"):
            est.predict(Z)


def _line(row):
    return ",".join(repr(float(v)) for v in row)


def test_command_line_predict_of_such_a_row_is_one_line_and_writes_nothing(tmp_path,
                                                                           capsys):
    # `kernlearn predict` said "the model produced NaN or infinite
    # predictions; the model file is unusable" (exit 4) of a sound model
    X, y = _data()
    names = ["a", "b", "c", "d"]
    rows = [",".join(names + ["target"])]
    # (classes: the regressor clips the row to the training range)
    rows += [_line(r) + f",{int(t > np.median(y))}" for r, t in zip(X[:60], y[:60])]
    (tmp_path / "train.csv").write_text("\n".join(rows) + "\n")
    test = X[60:].copy()
    test[4, 1] = 1e308
    (tmp_path / "test.csv").write_text(
        ",".join(names) + "\n" + "\n".join(_line(r) for r in test) + "\n")
    model, out = tmp_path / "m.npz", tmp_path / "pred.csv"
    code, _, err = _run(["fit", tmp_path / "train.csv", "-e", "lowrank-classifier",
                         "--label", "target", "-m", model, "-q"], capsys)
    assert code == 0, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        code, text, err = _run(["predict", tmp_path / "test.csv", "-m", model,
                                "--allow-out-of-range", "-o", out], capsys)
    assert code == 5 and _one_error(err) and "too large" in err, err
    assert "unusable" not in err
    assert not out.exists()


def test_command_line_probabilities_of_such_a_row_are_refused_not_nan(tmp_path, capsys):
    # `kernlearn predict --proba` wrote "nan,nan" for the row (exit 0), and
    # once the model refused it, an "internal error" (exit 1)
    X, y = _data()
    labels = np.where(y > np.median(y), "pos", "neg")
    rows = ["a,b,c,d,target"]
    rows += [_line(r) + f",{t}" for r, t in zip(X[:60], labels[:60])]
    (tmp_path / "train.csv").write_text("\n".join(rows) + "\n")
    test = X[60:].copy()
    test[4] = 1.7e308
    (tmp_path / "test.csv").write_text(
        "a,b,c,d\n" + "\n".join(_line(r) for r in test) + "\n")
    model, out = tmp_path / "m.npz", tmp_path / "proba.csv"
    code, _, err = _run(["fit", tmp_path / "train.csv", "-e", "lowrank-classifier",
                         "-p", "probability=true", "--label", "target", "-m", model,
                         "-q"], capsys)
    assert code == 0, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        code, text, err = _run(["predict", tmp_path / "test.csv", "-m", model,
                                "--proba", "--allow-out-of-range", "-o", out], capsys)
    assert code == 5 and _one_error(err) and "too large" in err, err
    assert not out.exists()


# ------------------------------------------------ FGM's transform's words
def test_fgm_transform_names_the_moved_column_and_the_missing_cell():
    # predict named them; transform (scikit-learn's selector) said "Feature
    # names must be in the same order as they were in fit" and "Input X
    # contains NaN" with neither the column nor the cell
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    est = kernlearn.FGMRegressor().fit(frame, y)
    with pytest.raises(ValueError, match=r"another order \(column 0 is 'd', was 'a'"):
        est.transform(frame[["d", "c", "b", "a"]])
    holed = frame.copy()
    holed.iloc[5, 2] = np.nan
    with pytest.raises(ValueError, match=r"NaN\) at row 5, column 'c'"):
        est.transform(holed)
    # what it accepts it still gives as before
    np.testing.assert_array_equal(est.transform(frame), X[:, est.get_support()])


# --------------------------------------- far out on real data (a guard)
@pytest.mark.parametrize("name", sorted(_ESTIMATORS))
def test_far_out_rows_of_a_real_table_give_finite_outputs(name):
    # airfoil's columns, a test row moved 10 to 1e8 standard deviations out in
    # each column in turn: finite predictions and probabilities that stay in
    # [0, 1] and sum to one; the low-rank (RBF) models go to their intercept
    pd = pytest.importorskip("pandas")
    from kernlearn.datasets import data_home

    path = data_home() / "suite" / "airfoil.csv.xz"
    if not path.exists():
        pytest.skip(f"no suite data at {path.parent} (the shared data sets are absent)")
    table = pd.read_csv(path).iloc[:150]
    X, y = table.drop(columns="target").to_numpy(float), table["target"].to_numpy(float)
    est, method = _fitted(name, X, y)
    sd, base = X.std(axis=0), X[150 - 1]
    rows = []
    for j in range(X.shape[1]):
        for k in (10.0, 1e3, 1e8):
            r = base.copy()
            r[j] = X[:, j].mean() + k * sd[j]
            rows.append(r)
    Z = np.array(rows)
    kw = {"task_index": np.zeros(len(Z), int)} if name.startswith("Multitask") else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = getattr(est, method)(Z, **kw)
    assert np.all(np.isfinite(out))
    if method == "predict_proba":
        assert np.all((out >= 0) & (out <= 1))
        np.testing.assert_allclose(out.sum(axis=1), 1.0)
    if name in CLIPPED:  # the rows 1e8 deviations out: the value at the range's edge
        far = Z[2::3]
        np.testing.assert_allclose(est.predict(far),
                                   est.predict(np.clip(far, X.min(axis=0), X.max(axis=0))),
                                   rtol=1e-12)


def test_the_readmes_words_on_rows_unlike_the_training_rows():
    # README, "Reading a fit": FGM extrapolates linearly, the kernel regressors
    # keep their value at the training range's edge, the low-rank classifier goes
    # to its intercept, far_outside_rows(X_new, feature_profile(X_train))
    # finds the rows first
    from kernlearn.summary import far_outside_rows, feature_profile

    X, y = _data()
    Z = np.repeat(X[:1], 4, axis=0)
    Z[1:, 0] = [1e3, 2e3, 3e3]
    rows, first = far_outside_rows(Z, feature_profile(X))
    assert rows.tolist() == [1, 2, 3] and first[:2] == (1, 0)
    p = kernlearn.FGMRegressor().fit(X, y).predict(Z)
    np.testing.assert_allclose(np.diff(p[1:]), p[2] - p[1], rtol=1e-9)
    assert abs(p[2] - p[1]) > 100
    low = kernlearn.LowRankKernelRegressor(random_state=0).fit(X, y)
    edge = Z[:1].copy()
    edge[0, 0] = X[:, 0].max()
    np.testing.assert_allclose(low.predict(Z[1:]), low.predict(edge)[0], rtol=1e-12)
    clf = kernlearn.LowRankKernelClassifier(random_state=0).fit(X, y > np.median(y))
    intercept = np.ravel(clf.intercept_)[0]
    np.testing.assert_allclose(clf.decision_function(Z[1:]), intercept, rtol=1e-9)


@pytest.mark.parametrize("chunked", [[], ["--out-of-core"]],
                         ids=["in-memory", "chunked"])
def test_a_file_of_one_row_is_one_prediction(chunked, tmp_path, capsys):
    # "wrote 1 predictions to ..."
    from sklearn.datasets import dump_svmlight_file

    X, y = _data()
    dump_svmlight_file(X, y, str(tmp_path / "train.svm"))
    dump_svmlight_file(X[:1], y[:1], str(tmp_path / "one.svm"))
    model, out = tmp_path / "m.npz", tmp_path / "p.txt"
    code, _, err = _run(["fit", tmp_path / "train.svm", "-e", "fgm-regressor", "-m",
                         model, "-q"], capsys)
    assert code == 0, err
    code, said, err = _run(["predict", tmp_path / "one.svm", "-m", model, "-o", out]
                           + chunked, capsys)
    assert code == 0 and said == f"wrote 1 prediction to {out}\n", err
    assert len(out.read_text().split()) == 1


@pytest.mark.parametrize("which", ["FGMRegressor(family=PolynomialPool())",
                                   "InfiniteFeatureRegressor"])
def test_features_of_a_row_too_large_for_float64_are_refused_not_infinite(which):
    # transform gave the row's generated features as inf (FGM's monomials of
    # 1e160) or NaN (random features of 1e308) without a word
    from kernlearn.families import PolynomialPool

    X, y = _data()
    X = X[:, :2]
    if which.startswith("FGM"):
        est = kernlearn.FGMRegressor(family=PolynomialPool()).fit(X, X[:, 0] * X[:, 1])
        big = 1e160
    else:
        # (the classifier: the regressor clips the row to the training range)
        est = kernlearn.InfiniteFeatureClassifier(random_state=0).fit(X, y > np.median(y))
        big = 1e308
    Z = X[:3].copy()
    Z[1] = big
    assert np.all(np.isfinite(est.transform(X[:3])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match=r"features for row 1 of X are NaN or inf"):
            est.transform(Z)


def test_a_model_without_column_names_says_it_reads_a_headers_columns_by_position(
        tmp_path, capsys):
    # fitted in Python on an array, saved, used by `kernlearn predict` on a CSV
    # file whose header has the columns in another order: predicted by
    # position (other numbers) without a word
    from kernlearn.io import save_model

    X, y = _data()
    save_model(kernlearn.FGMRegressor().fit(X, y), tmp_path / "m.npz")
    (tmp_path / "t.csv").write_text(
        "d,c,b,a\n" + "\n".join(_line(r[::-1]) for r in X[:5]) + "\n")
    code, out, err = _run(["predict", tmp_path / "t.csv", "-m", tmp_path / "m.npz"],
                          capsys)
    assert code == 0 and len(out.split()) == 5
    assert err.startswith("kernlearn: warning: the model has no column names to match")
    assert "taken by position (d, c, b, a)" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("name", ["MultitaskMKLRegressor", "MultitaskMKLClassifier"])
def test_multitask_rbf_of_a_row_past_float64s_squares_is_zero_without_a_warning(name):
    # a row 1e300 out: its squared norm overflows, the RBF kernel value is its
    # limit 0 and the prediction finite (the linear kernel's), but NumPy's
    # "overflow encountered in multiply" came with it
    X, y = _data()
    est, method = _fitted(name, X, y)
    Z = X[:3].copy()
    Z[1, 0] = 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = getattr(est, method)(Z, task_index=np.zeros(3, int))
    assert np.all(np.isfinite(out))
