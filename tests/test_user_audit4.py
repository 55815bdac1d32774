"""A fourth user's audit: a data scientist's own raw files (CSV and DataFrames).

The CSV files are small slices of tables that ship inside installed packages
(ISLP's data folder), copied at test time; a test skips, saying why, when the
package is absent.  Other cases are tiny inline tables with the same feature.
"""

import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import one_error as _one_error
from conftest import run_cli as _run

pd = pytest.importorskip("pandas")


def _package_csv(package, name, rows=None):
    """The text of ``package``'s data file ``name`` (its first ``rows`` data rows)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        pytest.skip(f"{package} is not installed: its data file {name} is the test's input")
    path = Path(spec.origin).parent / "data" / name
    if not path.exists():
        pytest.skip(f"{path} is absent from the installed {package}")
    lines = path.read_text().splitlines()
    return "\n".join(lines if rows is None else lines[:rows + 1]) + "\n"


# --------------------------------------------------------------------- CLI
def test_every_text_column_is_named_with_what_to_do(tmp_path, capsys):
    # Carseats: Sales is the target, ShelveLoc, Urban and US are text; the user
    # was told of ShelveLoc, then (after encoding it) of Urban, then of US
    data = tmp_path / "Carseats.csv"
    data.write_text(_package_csv("ISLP", "Carseats.csv", rows=60))
    code, out, err = _run(["fit", data, "-e", "fgm-regressor", "--label", "Sales",
                           "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 3 and _one_error(err), err
    for name in ("ShelveLoc", "Urban", "US"):
        assert name in err, err
    assert "encode" in err and "'Bad'" in err, err
    assert not (tmp_path / "m.npz").exists()


def test_a_typo_among_numbers_is_still_named_by_row(tmp_path, capsys):
    data = tmp_path / "t.csv"
    data.write_text("a,b,y\n1,2,0\n2,x3,1\n3,4,0\n4,5,1\n")
    code, out, err = _run(["fit", data, "-e", "fgm", "-m", tmp_path / "m.npz"], capsys)
    assert code == 3 and _one_error(err), err
    assert "row 3, column b: 'x3' is not a number" in err, err


def test_a_row_index_column_is_not_silently_a_feature(tmp_path, capsys):
    # pandas' to_csv (and R's write.csv) write the row index as a first column
    # without a name: it was fitted on as a feature called "Unnamed: 0"
    frame = pd.read_csv(_as_file(tmp_path, "Smarket.csv", 80))
    frame = frame[["Lag1", "Lag2", "Volume", "Direction"]]
    # a shuffled training part (its index is no longer 0, 1, 2...)
    frame.iloc[:60].sample(frac=1, random_state=0).to_csv(tmp_path / "indexed.csv")
    code, out, err = _run(["fit", tmp_path / "indexed.csv", "-e", "fgm",
                           "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 3 and _one_error(err), err
    assert "column 1 has no name in the header line and holds distinct row numbers" in err
    assert "index=False" in err and "Unnamed" not in err and not (tmp_path / "m.npz").exists()
    # without it the fit works; the held-out part written with its index
    # (60, 61...) was refused for a column 'Unnamed: 0' the file never names
    frame.iloc[:60].to_csv(tmp_path / "train.csv", index=False)
    code, out, err = _run(["fit", tmp_path / "train.csv", "-e", "fgm",
                           "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 0 and "on 60 x 3" in out, err
    frame.iloc[60:].to_csv(tmp_path / "test.csv")
    code, out, err = _run(["predict", tmp_path / "test.csv", "-m", tmp_path / "m.npz"],
                          capsys)
    assert code == 3 and _one_error(err) and "holds distinct row numbers" in err, err
    # read and written again without index=False: the index is named "Unnamed: 0"
    pd.read_csv(tmp_path / "indexed.csv").to_csv(tmp_path / "again.csv", index=False)
    assert (tmp_path / "again.csv").read_text().startswith("Unnamed: 0,")
    code, out, err = _run(["fit", tmp_path / "again.csv", "-e", "fgm",
                           "-m", tmp_path / "m2.npz", "-q"], capsys)
    assert code == 3 and _one_error(err) and "holds distinct row numbers" in err, err


def _as_file(tmp_path, name, rows):
    path = tmp_path / name
    path.write_text(_package_csv("ISLP", name, rows=rows))
    return path


# --------------------------------------------------------------- Python API
def _default_frame(n=200):
    text = _package_csv("ISLP", "Default.csv", rows=n)
    import io

    return pd.read_csv(io.StringIO(text))


@pytest.mark.parametrize("dtype", ["boolean", "category", "object"])
def test_bool_labels_keep_their_type(dtype):
    from kernlearn import FGMClassifier

    frame = _default_frame()
    X = frame[["balance", "income"]]
    y = (frame["default"] == "Yes") | (frame["balance"] > 1200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = FGMClassifier(max_iter=3).fit(X, y.astype(dtype))
    # were 0.0 and 1.0 (nullable booleans, categories) or refused as "Unknown
    # label type: unknown" (Python bools in an object column)
    assert clf.classes_.dtype == bool and list(clf.classes_) == [False, True]
    pred = clf.predict(X)
    assert pred.dtype == bool
    ref = FGMClassifier(max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref.fit(X, y.to_numpy())
    np.testing.assert_array_equal(pred, ref.predict(X))


def test_nullable_integer_labels_keep_their_type():
    from kernlearn import FGMClassifier

    frame = _default_frame()
    X = frame[["balance", "income"]]
    y = pd.Series((frame["balance"] > 800).astype(int) * 2 + 1, dtype="Int64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = FGMClassifier(max_iter=3).fit(X, y)
    assert clf.classes_.dtype.kind == "i" and list(clf.classes_) == [1, 3]
    assert clf.predict(X).dtype.kind == "i"


@pytest.mark.parametrize("kind", ["string", "object-None", "boolean"])
def test_a_missing_label_is_named_by_row(kind):
    from kernlearn import FGMClassifier

    frame = _default_frame()
    X = frame[["balance", "income"]]
    if kind == "boolean":
        y = (frame["default"] == "Yes").astype("boolean")
        y.iloc[7] = pd.NA
    else:
        y = frame["default"].astype("string" if kind == "string" else object)
        y.iloc[7] = pd.NA if kind == "string" else None
    # was "boolean value of NA is ambiguous" or "Input contains NaN"
    with pytest.raises(ValueError, match=r"y has a missing value .*row 7"):
        FGMClassifier(max_iter=3).fit(X, y)


@pytest.mark.parametrize("dtype", ["float64", "Float64", "Int64", "boolean"])
def test_a_missing_feature_value_is_named_by_row_and_column(dtype):
    from kernlearn import FGMClassifier

    frame = _default_frame()
    X = frame[["balance", "income"]].copy()
    X["student"] = (frame["student"] == "Yes")
    X = X.astype({"student": dtype if dtype != "float64" else "float64",
                  "income": "float64"})
    if dtype == "Int64":
        X["balance"] = X["balance"].round().astype("Int64")
    X.loc[11, "student" if dtype in ("boolean", "Float64") else "balance"] = (
        np.nan if dtype == "float64" else pd.NA)
    column = "student" if dtype in ("boolean", "Float64") else "balance"
    with pytest.raises(ValueError, match=rf"X has a missing value .*row 11, column '{column}'"):
        FGMClassifier(max_iter=3).fit(X, frame["default"])
    # and at predict time, on rows of a held-out part (its index is named too)
    y = np.where(frame["balance"] > 900, "Yes", "No")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = FGMClassifier(max_iter=3).fit(X.drop(index=11), np.delete(y, 11))
    with pytest.raises(ValueError, match=rf"row 1 \(index 11\), column '{column}'"):
        clf.predict(X.iloc[10:20])


def test_a_regressor_on_text_targets_says_so():
    from kernlearn import FGMRegressor

    frame = _default_frame()
    # was NumPy's "could not convert string to float: 'No'"
    with pytest.raises(ValueError, match="y holds text .*'No'.* needs numbers"):
        FGMRegressor(max_iter=3).fit(frame[["balance", "income"]], frame["default"])


def test_missing_values_are_counted_with_their_columns(tmp_path, capsys):
    # palmerpenguins-like: NA in several columns of a few rows; the first cell
    # alone did not say whether to drop 2 rows or half the file
    text = ("species,bill_length_mm,body_mass_g,year\n"
            "Adelie,39.1,3750,2007\nAdelie,NA,NA,NA\nGentoo,46.1,4500,2008\n"
            "Gentoo,47.3,,NA\nAdelie,38.6,3800,2007\nGentoo,45.2,4400,2009\n")
    (tmp_path / "p.csv").write_text(text)
    code, out, err = _run(["fit", tmp_path / "p.csv", "--label", "species", "-e", "fgm",
                           "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 3 and _one_error(err), err
    assert "row 3, column bill_length_mm: missing value" in err, err
    assert "5 missing values in 2 of 6 rows; columns bill_length_mm, body_mass_g, year" in err


def test_a_row_index_after_a_byte_order_mark_is_refused_too(tmp_path, capsys):
    # Excel's "CSV UTF-8" starts with a byte-order mark: the empty first name
    # was "\ufeff", so the index column was fitted on as a feature
    rows = [",a,b,y"] + [f"{i},{i % 5},{(3 * i) % 7},{i % 2}" for i in range(20)]
    (tmp_path / "t.csv").write_bytes(b"\xef\xbb\xbf" + ("\n".join(rows) + "\n").encode())
    code, out, err = _run(["fit", tmp_path / "t.csv", "-e", "fgm", "-m", tmp_path / "m.npz",
                           "-q"], capsys)
    assert code == 3 and _one_error(err) and "holds distinct row numbers" in err, err
    # and with a name, the marked file's first column is matched by its name
    (tmp_path / "n.csv").write_bytes(b"\xef\xbb\xbfidx" + ("\n".join(rows) + "\n").encode())
    code, out, err = _run(["fit", tmp_path / "n.csv", "-e", "fgm", "--label", "y",
                           "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 0, err
    (tmp_path / "p.csv").write_text("b,a,idx\n1,2,3\n")
    code, out, err = _run(["predict", tmp_path / "p.csv", "-m", tmp_path / "m.npz"], capsys)
    assert code == 0, err


def test_decimal_commas_are_named_as_such(tmp_path, capsys):
    # a European export: ';' separated, '1,5' numbers, were "text to encode"
    (tmp_path / "eu.csv").write_text("a;b;y\n1,5;2,25;0\n2,5;3,1;1\n3,5;1,2;0\n4;1,1;1\n")
    code, out, err = _run(["fit", tmp_path / "eu.csv", "-e", "fgm", "-m", tmp_path / "m.npz",
                           "-q"], capsys)
    assert code == 3 and _one_error(err), err
    assert "row 2, column a: '1,5' is written with a decimal comma" in err, err
    # in a ',' file, a quoted "1,234" is a thousands separator: no such guess
    (tmp_path / "th.csv").write_text('a,b,y\n"1,234",2,0\n"2,345",3,1\n"3,456",1,0\n')
    code, out, err = _run(["fit", tmp_path / "th.csv", "-e", "fgm", "-m", tmp_path / "m.npz",
                           "-q"], capsys)
    assert code == 3 and _one_error(err) and "decimal comma" not in err, err
    assert "'1,234' is not a number" in err, err


def test_text_columns_beside_a_numeric_last_column_suggest_the_label(tmp_path, capsys):
    # OJ: the label (Purchase) is the first column, Store7 is Yes/No and the
    # last column (STORE) holds numbers: both text columns are named, and --label
    data = _as_file(tmp_path, "OJ.csv", 40)
    code, out, err = _run(["fit", data, "-e", "fgm", "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 3 and _one_error(err), err
    assert "2 columns hold text, not numbers: Purchase ('CH'...), Store7 ('No'...)" in err
    assert "pass --label NAME" in err and "encode them" in err, err


def test_a_model_fitted_on_a_dataframe_matches_csv_columns_by_name(tmp_path, capsys):
    # fitted in Python, saved, used by the command line on a CSV file whose
    # columns are in another order: they were taken by position (other
    # predictions, and scikit-learn's "X does not have valid feature names")
    from kernlearn import FGMRegressor
    from kernlearn.io import save_model

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.uniform(20, 60, 80), "income": rng.uniform(1, 9, 80),
                      "score": rng.uniform(0, 1, 80)})
    y = 0.5 * X["age"] - 3.0 * X["income"] + rng.normal(0, 0.1, 80)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = FGMRegressor().fit(X, y)
    save_model(reg, tmp_path / "m.npz")
    X[["score", "income", "age"]].to_csv(tmp_path / "test.csv", index=False)
    code, out, err = _run(["predict", tmp_path / "test.csv", "-m", tmp_path / "m.npz"],
                          capsys)
    assert code == 0 and err == "", err
    np.testing.assert_allclose(np.array(out.split(), dtype=float), reg.predict(X),
                               rtol=1e-8)
    # a column of another name is refused as for a model of `kernlearn fit`
    X.rename(columns={"age": "Age"}).to_csv(tmp_path / "renamed.csv", index=False)
    code, out, err = _run(["predict", tmp_path / "renamed.csv", "-m", tmp_path / "m.npz"],
                          capsys)
    assert code == 5 and _one_error(err) and "no column 'age' of the model" in err, err


def test_held_out_files_reordered_missing_extra_and_renamed_columns(tmp_path, capsys):
    # Smarket: fit a regressor on one part, predict the other with its columns
    # in another order (same numbers: names, not positions), one missing, one
    # extra and one renamed (each one line naming the column and what to do)
    frame = pd.read_csv(_as_file(tmp_path, "Smarket.csv", 120))
    cols = ["Lag1", "Lag2", "Volume", "Today"]
    frame.iloc[:80][cols].to_csv(tmp_path / "train.csv", index=False)
    test = frame.iloc[80:][cols]
    test.to_csv(tmp_path / "test.csv", index=False)
    model = tmp_path / "m.npz"
    code, out, err = _run(["fit", tmp_path / "train.csv", "-e", "fgm-regressor",
                           "--label", "Today", "-m", model, "-q"], capsys)
    assert code == 0, err
    code, base, err = _run(["predict", tmp_path / "test.csv", "-m", model], capsys)
    assert code == 0 and len(base.split()) == 40, err
    test[["Today", "Volume", "Lag2", "Lag1"]].to_csv(tmp_path / "reord.csv", index=False)
    code, out, err = _run(["predict", tmp_path / "reord.csv", "-m", model], capsys)
    assert code == 0 and out == base, err
    assert len(set(base.split())) > 1  # (a constant model would hide a mix-up)
    cases = {
        "missing": (test.drop(columns="Lag2"), "has no column 'Lag2' of the model"),
        "extra": (test.assign(Year=2001), "column 'Year' is not a feature of the model "
                  "nor its label 'Today'; drop it"),
        "renamed": (test.rename(columns={"Volume": "volume"}),
                    "renamed? the model does not know 'volume'"),
    }
    for name, (table, message) in cases.items():
        table.to_csv(tmp_path / f"{name}.csv", index=False)
        code, out, err = _run(["predict", tmp_path / f"{name}.csv", "-m", model], capsys)
        assert code == 5 and _one_error(err) and message in err, (name, err)
        assert out == ""


def test_files_not_in_utf8_say_how_to_convert(tmp_path, capsys):
    # a Windows-1252 export (an accented header) and Excel's "Unicode text"
    # (UTF-16, called "binary data (NUL bytes)")
    text = "Größe,b,y\n1,2,ja\n2,3,nein\n3,1,ja\n4,4,nein\n"
    (tmp_path / "l1.csv").write_bytes(text.encode("cp1252"))
    (tmp_path / "u16.csv").write_bytes(text.encode("utf-16"))
    code, out, err = _run(["fit", tmp_path / "l1.csv", "-e", "fgm", "-m", tmp_path / "m.npz",
                           "-q"], capsys)
    assert code == 3 and _one_error(err), err
    assert "not a UTF-8 text (CSV) file: byte 0xf6 on line 1; save it as UTF-8" in err, err
    code, out, err = _run(["fit", tmp_path / "u16.csv", "-e", "fgm", "-m", tmp_path / "m.npz",
                           "-q"], capsys)
    assert code == 3 and _one_error(err), err
    assert "u16.csv is UTF-16 text; save it as UTF-8" in err, err


def test_a_classifier_on_a_fractional_target_says_use_a_regressor(tmp_path, capsys):
    # Auto's mpg (127 distinct values in 392 rows, fewer than half): it was
    # "cannot fit fgm ...: Unknown label type: continuous", exit 6
    text = _package_csv("ISLP", "Auto.csv", rows=200)  # (the first rows are whole)
    rows = [",".join(line.split(",")[:8]) for line in text.splitlines()]
    (tmp_path / "auto.csv").write_text("\n".join(rows) + "\n")
    code, out, err = _run(["fit", tmp_path / "auto.csv", "--label", "mpg", "-e", "fgm",
                           "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 3 and _one_error(err), err
    assert "distinct continuous targets; use a regressor (e.g. fgm-regressor)" in err, err
    code, out, err = _run(["fit", tmp_path / "auto.csv", "--label", "mpg", "-e",
                           "fgm-regressor", "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 0, err


def test_text_columns_are_named_before_the_missing_values_they_hold(tmp_path, capsys):
    # palmerpenguins' raw table: a mostly empty "Comments" column (and text
    # ones) made the first error "missing value ... fill or drop it", and
    # dropping those rows lost most of the file; text columns come first now
    import importlib.util

    spec = importlib.util.find_spec("palmerpenguins")
    if spec is None or spec.origin is None:
        pytest.skip("palmerpenguins is not installed: its penguins-raw.csv is the input")
    raw = Path(spec.origin).parent / "data" / "penguins-raw.csv"
    if not raw.exists():
        pytest.skip(f"{raw} is absent")
    lines = raw.read_text().splitlines()[:41]
    (tmp_path / "raw.csv").write_text("\n".join(lines) + "\n")
    code, out, err = _run(["fit", tmp_path / "raw.csv", "--label", "Species", "-e", "fgm",
                           "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 3 and _one_error(err), err
    assert "columns hold text, not numbers: studyName ('PAL0708'...)" in err, err
    assert "Comments" in err and "missing value" not in err, err
    # the numbers alone, with their gaps: now the missing values, counted
    frame = pd.read_csv(tmp_path / "raw.csv")
    numbers = frame.select_dtypes("number").assign(Species=frame["Species"])
    numbers.to_csv(tmp_path / "num.csv", index=False)
    code, out, err = _run(["fit", tmp_path / "num.csv", "--label", "Species", "-e", "fgm",
                           "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 3 and _one_error(err) and "missing value" in err, err


def test_rows_without_a_label_can_be_predicted(tmp_path, capsys):
    # Hitters: the players without a salary are the ones to predict; a label
    # column with blanks was refused ("missing value ... fill or drop it")
    frame = pd.read_csv(_as_file(tmp_path, "Hitters.csv", 120))
    frame = frame.drop(columns=["League", "Division", "NewLeague"])
    assert frame["Salary"].isna().any()  # (the slice holds unlabelled rows)
    frame.dropna().to_csv(tmp_path / "train.csv", index=False)
    frame.to_csv(tmp_path / "all.csv", index=False)
    model = tmp_path / "m.npz"
    code, out, err = _run(["fit", tmp_path / "train.csv", "--label", "Salary", "-e",
                           "fgm-regressor", "-m", model, "-q"], capsys)
    assert code == 0, err
    code, out, err = _run(["predict", tmp_path / "all.csv", "-m", model], capsys)
    assert code == 0 and len(out.split()) == len(frame), err
    # the same predictions as without the label column
    frame.drop(columns="Salary").to_csv(tmp_path / "features.csv", index=False)
    code, alone, err = _run(["predict", tmp_path / "features.csv", "-m", model], capsys)
    assert code == 0 and alone == out, err
    # evaluate needs the labels: still refused, counted
    code, out, err = _run(["evaluate", tmp_path / "all.csv", "-m", model], capsys)
    assert code == 3 and _one_error(err) and "column Salary: missing value" in err, err
    # and a missing feature value is refused at predict time as before
    frame.iloc[0, 0] = np.nan
    frame.to_csv(tmp_path / "gap.csv", index=False)
    code, out, err = _run(["predict", tmp_path / "gap.csv", "-m", model], capsys)
    assert code == 3 and _one_error(err) and "column AtBat: missing value" in err, err


def test_a_comment_line_above_the_table_is_named(tmp_path, capsys):
    (tmp_path / "c.csv").write_text("# exported 2024-01-01\na,b,y\n1,2,No\n2,3,Yes\n")
    code, out, err = _run(["fit", tmp_path / "c.csv", "-e", "fgm", "-m", tmp_path / "m.npz",
                           "-q"], capsys)
    assert code == 3 and _one_error(err), err
    assert "line 1 is a comment (it starts with '#'): remove it." in err, err


def test_class_weight_of_true_false_labels(tmp_path, capsys):
    # a label column of True/False: class_weight {"True": 5} was refused as
    # "not a label of the file (labels: False, True)"
    from kernlearn import FGMClassifier
    from kernlearn.io import load_model

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = X[:, 0] + 0.8 * rng.normal(size=80) > 0.6
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y}).to_csv(tmp_path / "t.csv",
                                                             index=False)
    assert "True" in (tmp_path / "t.csv").read_text()
    code, out, err = _run(["fit", tmp_path / "t.csv", "-e", "fgm", "-p",
                           'class_weight={"True": 5}', "-m", tmp_path / "m.npz", "-q"],
                          capsys)
    assert code == 0, err
    clf = load_model(tmp_path / "m.npz")
    assert clf.class_weight == {True: 5}
    # the weight reached the fit: the model is the Python one with it
    ref = FGMClassifier(class_weight={True: 5}, verbose=0).fit(X, y)
    plain = FGMClassifier(verbose=0).fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(X),
                               rtol=1e-6, atol=1e-9)
    assert not np.allclose(plain.decision_function(X), ref.decision_function(X))
    code, out, err = _run(["fit", tmp_path / "t.csv", "-e", "fgm", "-p",
                           'class_weight={"maybe": 5}', "-m", tmp_path / "m.npz", "-q"],
                          capsys)
    assert code == 2 and "class_weight names class 'maybe'" in err, err


def test_a_named_row_id_column_is_warned_of(tmp_path, capsys):
    # ISLP's Credit: "ID" numbers the rows 1..n; it was fitted on as a feature
    # without a word (it stays one: it is named, so it may be meant)
    frame = pd.read_csv(_as_file(tmp_path, "Credit.csv", 60))
    numbers = frame.select_dtypes("number")
    assert list(numbers.columns[:1]) == ["ID"]
    numbers.to_csv(tmp_path / "credit.csv", index=False)
    code, out, err = _run(["fit", tmp_path / "credit.csv", "--label", "Balance", "-e",
                           "fgm-regressor", "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 0 and "on 60 x 7" in out, err
    assert err == ("kernlearn: warning: feature 'ID' holds the row numbers 1, 2, ..., 60 "
                   "(a row id?); it is fitted on as a feature: drop it if it only numbers "
                   "the rows\n"), err
    # without it: no warning (no other column is taken for one)
    numbers.drop(columns="ID").to_csv(tmp_path / "noid.csv", index=False)
    code, out, err = _run(["fit", tmp_path / "noid.csv", "--label", "Balance", "-e",
                           "fgm-regressor", "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 0 and err == "", err
