"""A fifty-second user's audit: pandas 3 and Arrow-backed data, end to end.

A data scientist on pandas 3 (text of dtype ``str`` by default, copy-on-write,
pyarrow installed) gave every estimator DataFrames of pyarrow dtypes
(``int64[pyarrow]``, ``double[pyarrow]``, ``bool[pyarrow]``, ``decimal128``,
``dictionary``, ``timestamp``, ``date32``), nullable dtypes (``Int64``,
``Float64``, ``boolean``) with and without ``pd.NA``, ``str`` columns of
numbers and of text, categorical, datetime, timedelta, period, interval and
sparse columns; targets, weights and task ids in the same dtypes; frames with
columns moved, renamed, missing, extra, duplicated, of non-string names;
``set_output(transform="pandas")``; read-only arrays (``np.asarray`` of a frame
is a read-only view under copy-on-write); model files; and the CLI on CSV
files that pandas 3 reads differently.

What was wrong (each test below failed before its fix):

- ``FGMClassifier``/``FGMRegressor.transform`` with ``set_output(transform=
  "pandas")`` handed a DataFrame back unchecked (scikit-learn's selector keeps
  the frame as it is for pandas output): NaN, ``pd.NA``, infinity, text and
  dates in the selected columns came out as if they were features, where the
  default output refused the NaN by row and column; with the default output a
  text column came back as an object array of text and numbers written as
  text as text.  ``transform`` now reads ``X`` as ``predict`` does (the same
  refusals, the numbers the model reads; CSR for sparse input as before).
- Class labels of pyarrow text (``pd.ArrowDtype(pa.string())``, as
  ``read_csv(dtype_backend="pyarrow")`` gives, and ``large_string``) became a
  fixed-width ``"<U"`` ``classes_`` and predictions; pandas' own text (``str``,
  ``string``) and scikit-learn's ``LogisticRegression`` give dtype object.
- ``LowRankKernelRegressor`` refused a DataFrame of targets with a ``pd.NA``
  (a ``Float64`` column beside another dtype) as "y holds strings; for class
  labels use LowRankKernelClassifier"; the missing value is named by row, as
  the other regressors name it.
- A missing task id (``pd.NA`` of ``Int64``, NaN of pandas' ``str``, ``None``)
  was "task_index contains NaN or infinity" (no row), "tasks unseen in fit:
  [nan]" at predict time, or "mixes task ids of types float, str"; it is named
  by row (and index label), as a missing label is.

- A precomputed Gram matrix given as a nullable or pyarrow DataFrame holding a
  ``pd.NA`` (``PNormMKLClassifier``, ``MultitaskMKL*`` with
  ``kernels="precomputed"``) failed with NumPy's "float() argument must be a
  string or a real number, not 'NAType'"; it is "X[0] contains NaN or
  infinite values", as a NumPy matrix's NaN is.

- ``kernlearn predict`` of a multitask model fitted and saved in Python, on a
  file read without ``--task-column``, stopped with the Python words "pass
  task_index ... turn scikit-learn's metadata routing on": its file's metadata
  has no "multitask" (the CLI's fits write it); the model's ``tasks_`` now
  say so too, and the error names ``--task-column``.

Checked and clean (the parts not pinned elsewhere are pinned below): every
estimator gives the float64 array's predictions (bit for bit) on frames of
``double[pyarrow]``, ``Float64``, ``int64[pyarrow]``, ``Int64``,
``bool[pyarrow]``, ``boolean``, ``uint8[pyarrow]``, ``decimal128``, numeric
``dictionary`` and categorical columns and ``str`` columns of numbers; refuses
text, category-of-text, datetime, timestamp/date32, timedelta, period and
interval columns by name and ``pd.NA``/None in any of them by row and
column.  Labels of ``str``, ``string``, ``string[pyarrow]``, categorical
(unused or reordered categories) and pyarrow dictionary dtype give
``LogisticRegression``'s ``classes_`` and prediction dtype; nullable and
pyarrow integers and booleans keep their type (fourth audit's choice, unlike
``LogisticRegression``'s floats).  Weights of every such dtype give the
NumPy weights' model; ``pd.NA`` weights and targets are named by row.
Feature names: moved columns, renamed, missing, extra ones refused,
duplicated names refused (scikit-learn's "Expected unique column names"),
NumPy after a frame and a frame after NumPy warn as scikit-learn does,
pyarrow-string and object column indexes are the same names; ``transform``
with pandas output keeps the index and names.  Nothing fitted or predicted
changes the caller's frames, Series or arrays (pickled bytes before and
after), and read-only views are read.  Model files of models fitted on
pyarrow frames keep ``feature_names_in_``, ``classes_`` (dtype and order)
and refuse moved columns.  The CLI on quoted numbers, a BOM, quoted headers,
spaces after commas, True/False columns, NA markers (named), thousands
separators (named), a trailing empty column (named), dates (named) and text
labels called "NA" (named as missing) gives one line and exit code 3, or the
plain file's model; ``predict`` matches columns by name (moved, BOM, quoted).

Left as scikit-learn has it: a frame whose column names are all integers
(``pd.DataFrame(array)``) records no feature names, so the same columns in
another order are predicted without a word.
"""

import pickle
import warnings

import numpy as np
import pytest

import kernlearn

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

_ALL = sorted(kernlearn._ESTIMATORS)
_CLASSIFIERS = [n for n in _ALL if "Classifier" in n]
_MULTITASK = [n for n in _ALL if n.startswith("Multitask")]


def _data(n=40, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    y = X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.randn(n)
    return X, y


def _est(name):
    Est = getattr(kernlearn, name)
    return Est(random_state=0) if "random_state" in Est().get_params() else Est()


def _tasks(name, n):
    return {"task_index": np.arange(n) % 2} if name in _MULTITASK else {}


def _fit(name, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (convergence on tiny data: not the point here)
        return _est(name).fit(X, y, **_tasks(name, len(y)), **kw)


def _predict(est, name, X):
    return est.predict(X, **_tasks(name, len(X)))


# -- FGM's transform with pandas output ------------------------------------------------

def _fgm_frame():
    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    return frame, kernlearn.FGMRegressor().fit(frame, y)


@pytest.mark.parametrize("output", ["default", "pandas"])
@pytest.mark.parametrize("case", ["pd.NA", "NaN", "inf"])
def test_fgm_transform_refuses_a_missing_cell_with_pandas_output_too(output, case):
    frame, est = _fgm_frame()
    est.set_output(transform=output)
    holed = frame.astype("Float64") if case == "pd.NA" else frame.copy()
    holed.iloc[3, 1] = {"pd.NA": pd.NA, "NaN": np.nan, "inf": np.inf}[case]
    # (the old code, pandas output: the frame back, the hole in it, no error)
    word = "an infinite value" if case == "inf" else "a missing value"
    with pytest.raises(ValueError, match=rf"X has {word} .* at row 3, column 'b'"):
        est.transform(holed)


@pytest.mark.parametrize("output", ["default", "pandas"])
def test_fgm_transform_refuses_text_and_dates_and_reads_numbers_written_as_text(output):
    frame, est = _fgm_frame()
    est.set_output(transform=output)
    for bad, dtype in (("x", "str"), (pd.Timestamp("2020-01-01"), "datetime64")):
        # (the old code: an object array of text, or the frame with its dates)
        with pytest.raises(ValueError, match=rf"non-numeric column\(s\) 'a' \({dtype}"):
            est.transform(frame.assign(a=bad))
    got = est.transform(frame.astype("str"))  # numbers written as text: pandas 3's str
    want = est.transform(frame)
    assert np.asarray(got).dtype == np.float64  # (was text)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    if output == "pandas":
        assert list(got.columns) == list(est.get_feature_names_out())
        assert got.index.equals(frame.index)


def test_fgm_transform_accepts_what_it_did():
    # the same columns for the same rows, in the containers it took before
    import scipy.sparse as sp

    X, y = _data()
    est = kernlearn.FGMRegressor(B=2).fit(X, y)
    want = X[:, np.sort(est.selected_features_)]
    np.testing.assert_array_equal(est.transform(X), want)
    np.testing.assert_array_equal(est.transform(X.astype(np.float32)),
                                  want.astype(np.float32))
    for make in (sp.csr_matrix, sp.csc_matrix):
        out = est.transform(make(X))
        assert out.format == "csr"
        np.testing.assert_array_equal(out.toarray(), want)
    frame = pd.DataFrame(X, columns=["a", "b", "c"], index=np.arange(100, 140))
    named = kernlearn.FGMRegressor(B=2).fit(frame, y).set_output(transform="pandas")
    out = named.transform(frame.astype("double[pyarrow]"))
    assert list(out.columns) == list(named.get_feature_names_out())
    assert out.index.equals(frame.index)
    np.testing.assert_array_equal(out.to_numpy(), want)


# -- labels of pyarrow text -------------------------------------------------------------

@pytest.mark.parametrize("arrow", ["string", "large_string"])
@pytest.mark.parametrize("name", ["FGMClassifier", "LowRankKernelClassifier",
                                  "PNormMKLClassifier", "MultitaskMKLClassifier"])
def test_pyarrow_text_labels_have_dtype_object_as_in_logistic_regression(name, arrow):
    from sklearn.linear_model import LogisticRegression

    X, y = _data()
    text = np.where(y > 0, "yes", "no")
    labels = pd.Series(text).astype(pd.ArrowDtype(getattr(pa, arrow)()))
    reference = LogisticRegression().fit(X, labels)
    est = _fit(name, X, labels)
    # (the old code: classes_ and predictions of dtype '<U3')
    assert est.classes_.dtype == reference.classes_.dtype == object
    assert est.classes_.tolist() == reference.classes_.tolist() == ["no", "yes"]
    pred = _predict(est, name, X)
    assert pred.dtype == reference.predict(X).dtype == object
    plain = _fit(name, X, text.astype(object))
    np.testing.assert_array_equal(pred, _predict(plain, name, X))


@pytest.mark.parametrize("dtype", ["str", "string", "string[pyarrow]", "category",
                                   "reversed categories", "dictionary"])
def test_pandas_text_labels_match_logistic_regression(dtype):
    from sklearn.linear_model import LogisticRegression

    X, y = _data()
    text = np.where(y > 0.5, "c", np.where(y > -0.5, "b", "a"))
    if dtype == "reversed categories":
        labels = pd.Series(pd.Categorical(text, categories=["z", "c", "b", "a"]))
    elif dtype == "dictionary":
        codes = pa.dictionary(pa.int32(), pa.string())
        labels = pd.Series(text).astype(pd.ArrowDtype(codes))
    else:
        labels = pd.Series(text, dtype=dtype)
    reference = LogisticRegression().fit(X, labels)
    for name in ("FGMClassifier", "InfiniteFeatureClassifier"):
        est = _fit(name, X, labels)
        assert est.classes_.dtype == reference.classes_.dtype
        assert est.classes_.tolist() == reference.classes_.tolist() == ["a", "b", "c"]
        assert est.predict(X).dtype == reference.predict(X).dtype


# -- LowRankKernelRegressor: a missing value in a DataFrame of targets -------------------

def test_low_rank_regressor_names_a_missing_target_in_a_frame_not_strings():
    X, y = _data()
    Y = pd.DataFrame({"u": pd.Series(y, dtype="Float64"),
                      "v": pd.Series(-y, dtype="double[pyarrow]")})
    Y.iloc[3, 0] = pd.NA
    # (the old code: "needs numeric targets, but y holds strings")
    with pytest.raises(ValueError, match=r"y has a missing value at row 3"):
        kernlearn.LowRankKernelRegressor(random_state=0).fit(X, Y)
    full = Y.fillna(0.5)
    with pytest.raises(ValueError, match="y holds strings"):  # (text still is text)
        kernlearn.LowRankKernelRegressor(random_state=0).fit(X, full.assign(v="x"))
    est = kernlearn.LowRankKernelRegressor(random_state=0)
    a = est.fit(X, full).predict(X)
    b = est.fit(X, full.to_numpy(float)).predict(X)
    np.testing.assert_array_equal(a, b)


# -- a missing task id ------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["Int64", "str", "object-None", "arrow"])
def test_a_missing_task_id_is_named_by_row(kind):
    X, y = _data()
    ids = np.arange(len(y)) % 2
    if kind == "Int64":
        t = pd.Series(ids, dtype="Int64", index=np.arange(len(y)) + 100)
        t.iloc[6] = pd.NA
    elif kind == "arrow":
        t = pd.Series(np.where(ids, "north", "south")).astype(pd.ArrowDtype(pa.string()))
        t.iloc[6] = None
    else:
        t = pd.Series(np.where(ids, "north", "south"),
                      dtype="str" if kind == "str" else object)
        t.iloc[6] = np.nan if kind == "str" else None
    est = kernlearn.MultitaskMKLRegressor()
    where = r"task_index has a missing value( \(NaN\))? at row 6" + (
        r" \(index 106\)" if kind == "Int64" else "")
    # (the old code: "contains NaN or infinity", "mixes task ids of types float, str")
    with pytest.raises(ValueError, match=where):
        est.fit(X, y, task_index=t)
    clean = t.where(t.notna(), t.iloc[0])
    est.fit(X, y, task_index=clean)
    # (the old code: "task_index has tasks unseen in fit: [nan]")
    with pytest.raises(ValueError, match=where):
        est.predict(X, task_index=t)
    np.testing.assert_array_equal(est.predict(X, task_index=clean),
                                  est.predict(X, task_index=clean.to_numpy(dtype=object)))


# -- precomputed Gram matrices as DataFrames --------------------------------------------

@pytest.mark.parametrize("name", ["PNormMKLClassifier", "MultitaskMKLRegressor"])
def test_a_missing_value_of_a_gram_frame_is_named_as_such(name):
    X, y = _data()
    K = X @ X.T
    G = pd.DataFrame(K).astype("Float64")
    G.iloc[3, 3] = pd.NA
    target = np.where(y > 0, "b", "a") if "Classifier" in name else y
    est = _est(name).set_params(kernels="precomputed")
    # (the old code: NumPy's "float() argument must be ... not 'NAType'")
    with pytest.raises(ValueError, match=r"X\[0\] contains NaN or infinite values"):
        est.fit([G, pd.DataFrame(K)], target, **_tasks(name, len(y)))
    # pyarrow and nullable frames of the same numbers: the arrays' model
    grams = [K, np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))]
    tasks = _tasks(name, len(y))
    want = est.fit(grams, target, **tasks).predict(grams, **tasks)
    for dtype in ("double[pyarrow]", "Float64"):
        frames = [pd.DataFrame(g).astype(dtype) for g in grams]
        est.fit(frames, target, **_tasks(name, len(y)))
        np.testing.assert_array_equal(est.predict(frames, **_tasks(name, len(y))), want)


# -- checked clean ---------------------------------------------------------------------

def _frames(X):
    plain = pd.DataFrame(X, columns=["a", "b", "c"])
    whole = pd.DataFrame(np.round(X * 3), columns=["a", "b", "c"])
    flag = X[:, 2] > 0
    with_flag = plain.assign(c=flag.astype(float))
    return {
        "double[pyarrow]": (plain, plain.astype("double[pyarrow]")),
        "Float64": (plain, plain.astype("Float64")),
        "int64[pyarrow]": (whole, whole.astype("int64[pyarrow]")),
        "Int64": (whole, whole.astype("Int64")),
        "bool[pyarrow]": (with_flag, plain.assign(c=pd.array(flag, dtype="bool[pyarrow]"))),
        "boolean": (with_flag, plain.assign(c=pd.array(flag, dtype="boolean"))),
        "str numbers": (with_flag, plain.assign(
            c=pd.Series(flag.astype(int).astype(str), dtype="str"))),
        "category": (with_flag, plain.assign(
            c=pd.Series(flag.astype(int), dtype="category"))),
        "decimal": (whole, whole.astype(pd.ArrowDtype(pa.decimal128(10, 0)))),
    }


@pytest.mark.parametrize("name", _ALL)
def test_arrow_and_nullable_frames_give_the_float_arrays_model(name):
    X, y = _data()
    target = np.where(y > 0, "b", "a") if name in _CLASSIFIERS else y
    for kind, (reference, frame) in _frames(X).items():
        want = _predict(_fit(name, reference.to_numpy(float), target), name,
                        reference.to_numpy(float))
        est = _fit(name, frame, target)
        assert list(est.feature_names_in_) == ["a", "b", "c"], kind
        np.testing.assert_array_equal(_predict(est, name, frame), want, err_msg=kind)


@pytest.mark.parametrize("column, words", [
    (pd.Series(["x"] * 40, dtype="str"), r"'c' \(str\)"),
    (pd.Series(["x"] * 40, dtype="category"), r"'c' \(category\)"),
    (pd.Series(pd.date_range("2020", periods=40)).astype(pd.ArrowDtype(pa.timestamp("s"))),
     r"'c' \(timestamp\[s\]\[pyarrow\]\)"),
    (pd.period_range("2020-01", periods=40, freq="M"), r"'c' \(period\[M\]\)"),
])
def test_non_numeric_arrow_and_pandas_columns_are_named(column, words):
    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(c=column)
    with pytest.raises(ValueError, match="non-numeric column\\(s\\) " + words):
        kernlearn.FGMRegressor().fit(frame, y)


@pytest.mark.parametrize("dtype", ["int64[pyarrow]", "bool[pyarrow]", "double[pyarrow]",
                                   "str", "boolean"])
def test_a_missing_cell_of_an_arrow_or_nullable_column_is_named(dtype):
    X, y = _data()
    values = [1, 0] * 20 if dtype != "str" else ["1", "0"] * 20
    if "bool" in dtype:
        values = [True, False] * 20
    frame = pd.DataFrame(X[:, :2], columns=["a", "b"]).assign(
        c=pd.array(values[:-1] + [None], dtype=dtype))
    with pytest.raises(ValueError, match=r"X has a missing value .* row 39, column 'c'"):
        kernlearn.LowRankKernelRegressor(random_state=0).fit(frame, y)


@pytest.mark.parametrize("name", _ALL)
def test_feature_names_of_pyarrow_frames_are_checked(name):
    X, y = _data()
    target = np.where(y > 0, "b", "a") if name in _CLASSIFIERS else y
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).astype("double[pyarrow]")
    est = _fit(name, frame, target)
    want = _predict(est, name, frame)
    for other, words in ((frame[["c", "a", "b"]], "another order"),
                         (frame.rename(columns={"a": "A"}), "unseen at fit time"),
                         (frame[["a", "b"]], "now missing"),
                         (frame.assign(d=1.0), "unseen at fit time"),
                         (frame[["a", "a", "c"]], "unique column names")):
        with pytest.raises(ValueError, match=words):
            _predict(est, name, other)
    # the same names in another kind of column index are the same names
    for index in (pd.Index(["a", "b", "c"], dtype=object),
                  pd.Index(["a", "b", "c"], dtype="string[pyarrow]")):
        np.testing.assert_array_equal(_predict(est, name, frame.set_axis(index, axis=1)),
                                      want)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(_predict(est, name, X), want)


def _contents(value):
    """The bytes of ``value``'s values, dtypes, names and index (pandas caches a NumPy
    copy inside an Arrow-backed Series once read: its pickle changes, not its data)."""
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.flags.writeable, value.tobytes()
    frame = value.to_frame() if isinstance(value, pd.Series) else value
    return (pickle.dumps([str(d) for d in frame.dtypes]), list(frame.columns),
            frame.index.to_numpy().tobytes(),
            [pickle.dumps(frame.iloc[:, j].to_numpy(dtype=object))
             for j in range(frame.shape[1])])


def test_nothing_changes_the_callers_data_and_read_only_views_are_read():
    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    view = np.asarray(frame)  # (copy-on-write: a read-only view of the frame)
    assert not view.flags.writeable
    weights = pd.Series(np.linspace(0.5, 1.5, len(y)), dtype="double[pyarrow]")
    for name in _ALL:
        target = pd.Series(np.where(y > 0, "b", "a") if name in _CLASSIFIERS else y)
        for data in (frame.astype("double[pyarrow]"), frame, view):
            before = [_contents(v) for v in (data, target, weights)]
            kw = {} if name.endswith("CV") else {"sample_weight": weights}
            est = _fit(name, data, target, **kw)
            _predict(est, name, data)
            est.score(data, target, **_tasks(name, len(y)))
            if hasattr(est, "transform") and name not in _MULTITASK:
                est.transform(data)
            assert [_contents(v) for v in (data, target, weights)] == before, name


@pytest.mark.parametrize("name", ["FGMClassifier", "LowRankKernelClassifier",
                                  "MultitaskMKLClassifier", "InfiniteFeatureRegressor"])
def test_model_files_of_arrow_frames_keep_names_and_labels(tmp_path, name):
    from kernlearn.io import load_model, save_model

    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).astype("double[pyarrow]")
    target = (pd.Series(np.where(y > 0, "yes", "no"), dtype="str") if name in _CLASSIFIERS
              else pd.Series(y, dtype="double[pyarrow]"))
    est = _fit(name, frame, target)
    save_model(est, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert list(back.feature_names_in_) == ["a", "b", "c"]
    if name in _CLASSIFIERS:
        assert back.classes_.dtype == est.classes_.dtype == object
        assert back.classes_.tolist() == ["no", "yes"]
    np.testing.assert_array_equal(_predict(back, name, frame), _predict(est, name, frame))
    with pytest.raises(ValueError, match="another order"):
        _predict(back, name, frame[["b", "a", "c"]])


_ROWS = [(0.942, -0.5), (-0.68, 1.2), (1.5, 0.3), (-1.1, -0.2), (0.25, -0.9),
         (-0.3, 0.8), (2.0, -1.4), (-1.7, 0.6), (0.6, 0.1), (-0.05, -0.6)] * 3


def _csv(tmp_path, name, header, row, bom=False):
    lines = [header] + [row(i, a, b, int(a + b > 0)) for i, (a, b) in enumerate(_ROWS)]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8-sig" if bom else "utf-8")
    return path


def _cli(args, capsys):
    from kernlearn.cli import main

    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("case, header, row, words", [
    ("thousands", "a,b,y", lambda i, a, b, c: f'"{a * 1000:,.1f}",{b},{c}',
     "thousands separators"),
    ("na-marker", "a,b,y", lambda i, a, b, c: f"{'N/A' if i == 3 else a},{b},{c}",
     "row 5, column a: missing value"),
    ("trailing", "a,b,y,", lambda i, a, b, c: f"{a},{b},{c},", "column 4 has no name"),
    ("date", "a,b,d,y", lambda i, a, b, c: f"{a},{b},2020-01-{i % 28 + 1:02d},{c}",
     "column d: '2020-01-01' is not a number"),
    ("label called NA", "a,b,y", lambda i, a, b, c: f"{a},{b},{'NA' if c else 'EU'}",
     "column y: missing value"),
])
def test_csv_files_pandas_reads_differently_get_one_line(tmp_path, capsys, case, header,
                                                         row, words):
    path = _csv(tmp_path, "d.csv", header, row)
    code, _, err = _cli(["fit", path, "-e", "fgm", "-m", tmp_path / "m.npz", "-q"],
                          capsys)
    assert code == 3 and len(err.strip().splitlines()) == 1 and words in err, err
    assert not (tmp_path / "m.npz").exists()


def test_csv_files_of_the_same_numbers_give_the_same_model(tmp_path, capsys):
    plain = _csv(tmp_path, "plain.csv", "a,b,y", lambda i, a, b, c: f"{a},{b},{c}")
    assert _cli(["fit", plain, "-e", "fgm", "-m", tmp_path / "m.npz", "-q"], capsys)[0] == 0
    assert _cli(["predict", "-m", tmp_path / "m.npz", plain, "-o", tmp_path / "want.txt"],
                capsys)[0] == 0
    want = (tmp_path / "want.txt").read_text()
    others = {
        "quoted": ("a,b,y", lambda i, a, b, c: f'"{a}","{b}",{c}', False),
        "bom": ("a,b,y", lambda i, a, b, c: f"{a},{b},{c}", True),
        "quoted header": ('"a","b","y"', lambda i, a, b, c: f"{a},{b},{c}", False),
        "spaces": ("a, b, y", lambda i, a, b, c: f"{a}, {b}, {c}", False),
        "moved, BOM": ("b,a,y", lambda i, a, b, c: f"{b},{a},{c}", True),
        "moved, quoted, no label": ('"b","a"', lambda i, a, b, c: f'"{b}","{a}"', False),
    }
    for case, (header, row, bom) in others.items():
        path = _csv(tmp_path, "other.csv", header, row, bom)
        code, _, err = _cli(["predict", "-m", tmp_path / "m.npz", path,
                             "-o", tmp_path / "got.txt"], capsys)
        assert code == 0, (case, err)
        assert (tmp_path / "got.txt").read_text() == want, case


def test_cli_asks_a_python_models_tasks_by_its_option(tmp_path, capsys):
    # a multitask model fitted and saved in Python (no "multitask" in its file's
    # metadata) stopped `kernlearn predict` with the Python words "pass task_index
    # ... turn scikit-learn's metadata routing on"; the CLI's option is named
    from kernlearn.io import save_model

    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).astype("double[pyarrow]")
    tasks = pd.Series(np.where(np.arange(len(y)) % 2, "north", "south"), dtype="str")
    labels = pd.Series(np.where(y > 0, "yes", "no"), dtype="str")
    est = kernlearn.MultitaskMKLClassifier().fit(frame, labels, task_index=tasks)
    save_model(est, tmp_path / "m.npz")
    frame.assign(task=tasks).to_csv(tmp_path / "d.csv", index=False)
    code, _, err = _cli(["predict", "-m", tmp_path / "m.npz", tmp_path / "d.csv",
                         "-o", tmp_path / "p.txt"], capsys)
    assert code == 5 and "has no task column (--task-column)" in err, err
    code, _, err = _cli(["predict", "-m", tmp_path / "m.npz", tmp_path / "d.csv",
                         "--task-column", "task", "-o", tmp_path / "p.txt"], capsys)
    assert code == 0, err
    got = (tmp_path / "p.txt").read_text().split()
    assert got == est.predict(frame, task_index=tasks).tolist()
