"""A twelfth user's audit: the same numbers in other containers and dtypes.

A demanding user handed every estimator the same data as float32, float16,
integers, booleans, object arrays, lists, big-endian, Fortran-ordered,
strided, read-only, memory-mapped and broadcast arrays, pandas frames of
nullable and categorical columns, every SciPy sparse format (matrices and
arrays, int32 and int64 indices, duplicates, unsorted indices, explicit
zeros) and targets and weights in as many forms.  Most gave the model of
the plain float64 array or a clear refusal; these did not.  Each test here
failed before its fix.
"""

import numpy as np
import pytest

from kernlearn import (
    FGMClassifier,
    FGMRegressor,
    InfiniteFeatureRegressor,
    LowRankKernelRegressor,
    MultitaskMKLRegressor,
)


def _data(n=40, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randint(-3, 4, size=(n, 3)).astype(float)
    y = X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.randn(n)
    return X, y


def _fit(Est, X, y, **kw):
    if Est is MultitaskMKLRegressor:
        kw["task_index"] = np.arange(len(y)) % 2
    return Est().fit(X, y, **kw)


@pytest.mark.parametrize("Est", [FGMRegressor, MultitaskMKLRegressor])
def test_masked_cells_are_refused_not_read_as_the_values_under_the_mask(Est):
    # a masked array's masked cells (here a missing-value code -999) were read
    # as measurements: a model of other numbers, without a word
    X, y = _data()
    mask = np.zeros(X.shape, bool)
    mask[2, 1] = mask[5, 2] = True
    Xm = np.ma.MaskedArray(np.where(mask, -999.0, X), mask=mask)
    with pytest.raises(ValueError, match=r"X is a masked array with 2 masked value\(s\) "
                                         r"\(the first at row 2, column 1\)"):
        _fit(Est, Xm, y)
    model = _fit(Est, X, y)
    with pytest.raises(ValueError, match="X is a masked array"):
        model.predict(Xm, **({"task_index": np.arange(40) % 2}
                             if Est is MultitaskMKLRegressor else {}))
    ym = np.ma.MaskedArray(y, mask=np.arange(40) == 7)
    with pytest.raises(ValueError, match=r"y is a masked array .* \(the first at row 7\)"):
        _fit(Est, X, ym)
    wm = np.ma.MaskedArray(np.ones(40), mask=np.arange(40) == 4)
    with pytest.raises(ValueError, match=r"sample_weight is a masked array"):
        _fit(Est, X, y, sample_weight=wm)
    # nothing masked: the numbers it holds, the plain array's model
    same = _fit(Est, np.ma.MaskedArray(X), np.ma.MaskedArray(y))
    kw = {"task_index": np.arange(40) % 2} if Est is MultitaskMKLRegressor else {}
    assert np.array_equal(same.predict(X, **kw), model.predict(X, **kw))


@pytest.mark.parametrize("dtype", ["datetime64[s]", "datetime64[ns]", "timedelta64[D]"])
def test_numpy_dates_and_durations_are_refused_as_in_a_dataframe(dtype):
    # a DataFrame's date column was refused by name; the same dates in a NumPy
    # array were fitted as counts of their unit (seconds and nanoseconds gave
    # two different models of the same dates)
    X, y = _data()
    Xd = X.astype(np.int64).astype(dtype)
    with pytest.raises(ValueError, match=r"X holds dates or durations \(" + dtype.replace(
            "[", r"\[").replace("]", r"\]") + r"\); FGMRegressor needs numbers"):
        FGMRegressor().fit(Xd, y)
    model = FGMRegressor().fit(X, y)
    with pytest.raises(ValueError, match="X holds dates or durations"):
        model.predict(Xd)
    with pytest.raises(ValueError, match="y holds dates or durations"):
        FGMRegressor().fit(X, y.astype(np.int64).astype(dtype))


def test_complex_numbers_are_refused_naming_the_argument():
    # scikit-learn's "Complex data not supported" followed by the whole array,
    # naming neither the argument (X, y or sample_weight) nor what to do
    X, y = _data()
    labels = (y > 0).astype(int)
    cases = [
        ("X", lambda: FGMClassifier().fit(X.astype(complex), labels)),
        ("y", lambda: FGMClassifier().fit(X, labels.astype(complex))),
        ("y", lambda: FGMRegressor().fit(X, y.astype(complex))),
        ("sample_weight", lambda: FGMRegressor().fit(X, y, sample_weight=np.ones(40, complex))),
        ("X", lambda: FGMRegressor().fit(X, y).predict(X.astype(np.complex64))),
    ]
    for name, call in cases:
        with pytest.raises(ValueError, match=rf"^Complex data not supported: {name} holds "
                                             rf"complex numbers \(complex(128|64)\); "
                                             rf"(FGM\w+|the fit) needs real numbers: "
                                             rf"pass {name}\.real"):
            call()


@pytest.mark.parametrize("form", ["object", "str"])
def test_a_value_that_is_not_a_number_in_a_numpy_array_is_named_by_cell(form):
    # NumPy's "could not convert string to float: 'x'" named no row or column
    # (a DataFrame's column was named); complex numbers in an object array were
    # "float() argument must be a string or a real number, not 'complex'"
    X, y = _data()
    Xt = X.astype(object) if form == "object" else X.astype(str)
    Xt[3, 2] = "n/a"
    with pytest.raises(ValueError, match=r"X has a value that is not a number \('n/a' at "
                                         r"row 3, column 2: could not convert .*\); "
                                         r"FGMRegressor needs numbers"):
        FGMRegressor().fit(Xt, y)
    if form == "object":
        Xc = X.astype(object)
        Xc[1, 0] = 2 + 1j
        with pytest.raises(TypeError, match=r"not a number \(\(2\+1j\) at row 1, column 0: "):
            FGMRegressor().fit(Xc, y)
        # None is a missing value, named as such (not as text)
        Xn = X.astype(object)
        Xn[4, 1] = None
        with pytest.raises(ValueError, match=r"missing value \(NaN\) at row 4, column 1"):
            FGMRegressor().fit(Xn, y)


def test_a_structured_array_is_refused_saying_how_to_convert():
    # NumPy's "Cannot cast array data from dtype([('f0', '<f8'), ...]) to
    # dtype('float64') according to the rule 'unsafe'"
    X, y = _data()
    Xs = np.array([tuple(r) for r in X], dtype=[("a", float), ("b", float), ("c", float)])
    with pytest.raises(ValueError, match=r"X is a structured array \(fields a, b, c\); "
                                         r".*structured_to_unstructured"):
        FGMRegressor().fit(Xs, y)


def test_precomputed_gram_matrices_masked_or_complex_are_refused():
    # check_gram_list read a masked matrix's masked cells as the values under
    # the mask, and took the real part of a complex one (with only NumPy's
    # "Casting complex values to real discards the imaginary part")
    from kernlearn import PNormMKLClassifier

    X, y = _data()
    K = X @ X.T
    labels = (y > 0).astype(int)
    mask = np.zeros(K.shape, bool)
    mask[1, 2] = mask[2, 1] = True
    est = PNormMKLClassifier(kernels="precomputed")
    with pytest.raises(ValueError, match=r"X\[1\] is a masked array with 2 masked value\(s\) "
                                         r"\(the first at row 1, column 2\)"):
        est.fit([K, np.ma.MaskedArray(K, mask=mask)], labels)
    with pytest.raises(ValueError, match=r"X\[0\] holds complex numbers"):
        est.fit([K.astype(complex)], labels)


@pytest.mark.parametrize("Est", [InfiniteFeatureRegressor, LowRankKernelRegressor])
def test_targets_of_several_outputs_give_one_model_whatever_their_layout(Est):
    # X was made C-ordered, the targets were not: a DataFrame's (Fortran-ordered)
    # values or np.asfortranarray(Y) gave another model than the C array (the
    # random-feature regressor's predictions 2e-2 apart, the low-rank one's 3e-10)
    import pandas as pd

    rng = np.random.RandomState(0)
    X = rng.randint(-3, 4, size=(60, 4)).astype(float)
    y = X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.randn(60)
    Y = np.column_stack([y, -y + 0.3 * X[:, 2]])
    ref = Est(random_state=0).fit(X, Y).predict(X)
    for Yl in (np.asfortranarray(Y), pd.DataFrame(Y, columns=["u", "v"])):
        got = Est(random_state=0).fit(X, Yl).predict(X)
        assert np.array_equal(got, ref), (type(Yl).__name__, np.abs(got - ref).max())


def test_complex_dataframe_columns_and_series_are_named():
    # scikit-learn's "Complex data not supported" followed by the whole frame
    import pandas as pd

    X, y = _data()
    df = pd.DataFrame(X, columns=["a", "b", "c"]).astype({"b": complex})
    with pytest.raises(ValueError, match=r"^Complex data not supported: X has complex "
                                         r"column\(s\) 'b'; FGMRegressor needs real numbers"):
        FGMRegressor().fit(df, y)
    with pytest.raises(ValueError, match=r"^Complex data not supported: y holds complex "
                                         r"numbers \(complex128\)"):
        FGMRegressor().fit(X, pd.Series(y.astype(complex)))


def test_rows_of_different_lengths_are_named():
    # NumPy's "setting an array element with a sequence. The requested array
    # has an inhomogeneous shape after 1 dimensions ..."
    X, y = _data()
    rows = X.tolist()
    rows[5] = rows[5][:2]
    with pytest.raises(ValueError, match=r"X has rows of different lengths \(row 0 has 3 "
                                         r"values, row 5 has 2\)"):
        FGMRegressor().fit(rows, y)
    with pytest.raises(ValueError, match="row 0 has 3 values, row 1 has 2"):
        FGMRegressor().fit(X, y).predict([X[0], X[1, :2]])


def test_reordered_dataframe_columns_at_predict_are_named():
    # scikit-learn's "Feature names must be in the same order as they were in
    # fit" named no column and did not say how to put them back
    import pandas as pd

    X, y = _data()
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    model = FGMRegressor().fit(df, y)
    with pytest.raises(ValueError, match=r"X has the fit's feature names in another order "
                                         r"\(column 1 is 'c', was 'b' at fit\); .*"
                                         r"X\[model\.feature_names_in_\]"):
        model.predict(df[["a", "c", "b"]])
    # the advice works; renamed columns keep scikit-learn's message naming them
    assert np.array_equal(model.predict(df[["a", "c", "b"]][model.feature_names_in_]),
                          model.predict(df))
    with pytest.raises(ValueError, match="Feature names unseen at fit time:\n- z"):
        model.predict(df.rename(columns={"b": "z"}))


def test_masked_task_ids_are_refused():
    # split_tasks read a masked task id as the id under the mask
    X, y = _data()
    tasks = np.ma.MaskedArray(np.arange(40) % 2, mask=np.arange(40) == 3)
    with pytest.raises(ValueError, match=r"task_index is a masked array with 1 masked "
                                         r"value\(s\) \(the first at row 3\)"):
        MultitaskMKLRegressor().fit(X, y, task_index=tasks)
    model = MultitaskMKLRegressor().fit(X, y, task_index=np.arange(40) % 2)
    with pytest.raises(ValueError, match="task_index is a masked array"):
        model.predict(X, task_index=tasks)


def test_big_endian_float32_is_float32():
    # '>f4' did not match scikit-learn's dtype list [float64, float32] and was
    # made float64: a float32 model of other precision than the same numbers
    # in native float32 (the random-feature regressor's predictions 1e-2 apart)
    rng = np.random.RandomState(0)
    X = rng.randint(-3, 4, size=(60, 4)).astype(np.float32)
    y = X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.randn(60)
    ref = InfiniteFeatureRegressor(random_state=0).fit(X, y)
    big = InfiniteFeatureRegressor(random_state=0).fit(X.astype(">f4"), y)
    assert np.array_equal(big.predict(X), ref.predict(X))
    assert np.array_equal(ref.predict(X.astype(">f4")), ref.predict(X))


@pytest.mark.parametrize("Est", [InfiniteFeatureRegressor, LowRankKernelRegressor])
def test_a_sparse_target_is_refused_as_by_the_other_estimators(Est):
    # with several outputs allowed, scikit-learn let a sparse y through: the
    # random-feature regressor failed inside ("setting an array element with a
    # sequence"), the low-rank one said "y holds strings"
    import scipy.sparse as sp

    X, y = _data()
    for ys in (sp.csr_matrix(y[:, None]), sp.csc_array(np.column_stack([y, y]))):
        with pytest.raises(TypeError, match="Sparse data was passed for y, but dense data "
                                            "is required"):
            Est().fit(X, ys)


def test_a_bad_sample_weight_is_named_by_row():
    # scikit-learn's "Input sample_weight contains NaN", "Negative values in
    # data passed to sample_weight" and NumPy's "could not convert string to
    # float" named no row (a target's missing value is named by row)
    import pandas as pd

    X, y = _data()
    cases = [
        (pd.Series(np.ones(40), dtype="Float64").mask(np.arange(40) == 4),
         r"a missing value \(NaN\) at row 4 \(1 in all\)"),
        (np.where(np.arange(40) == 6, None, 1.0).astype(object),
         r"a missing value \(NaN\) at row 6 \(1 in all\)"),
        (np.r_[1.0, -2.0, np.ones(38)], r"a negative value \(-2\.0\) at row 1 \(1 in all\)"),
        (np.r_[np.ones(39), np.inf], r"an infinite value \(inf\) at row 39 \(1 in all\)"),
        (np.where(np.arange(40) == 3, "x", "1"), r"a value that is not a number \('x' at row 3\)"),
    ]
    for w, where in cases:
        with pytest.raises(ValueError, match=rf"^sample_weight has {where}; weights must be "
                                             r"non-negative finite numbers"):
            FGMRegressor().fit(X, y, sample_weight=w)


def test_a_dataframe_of_sparse_columns_at_predict_is_told_how_to_densify():
    # a DataFrame of sparse columns arrives as a sparse matrix: the advice
    # "pass X.toarray()" named a method a DataFrame does not have
    import pandas as pd

    X, y = _data()
    model = LowRankKernelRegressor(random_state=0).fit(X, y)
    sparse_frame = pd.DataFrame(X).astype(pd.SparseDtype(float, 0.0))
    with pytest.raises(ValueError, match=r"X\.sparse\.to_dense\(\)"):
        model.predict(sparse_frame)
    assert np.array_equal(model.predict(sparse_frame.sparse.to_dense()), model.predict(X))


def test_pd_na_in_an_object_array_is_a_missing_value():
    # pd.NA among numbers in a NumPy object array was named "a value that is
    # not a number" (NumPy: "float() argument must be ... not 'NAType'")
    import pandas as pd

    X, y = _data()
    Xo = X.astype(object)
    Xo[2, 1] = pd.NA
    with pytest.raises(ValueError, match=r"X has a missing value \(NaN\) at row 2, column 1"):
        FGMRegressor().fit(Xo, y)
