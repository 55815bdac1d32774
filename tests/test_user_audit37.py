"""A thirty-seventh audit: three loose ends of the parallel and Dask passes.

A data scientist fitted with ``probability=True`` in threads, converted and
predicted Dask DataFrames there, predicted FGM on a Dask array holding rows
too large for float64, and read the prediction methods' help.  Platt's
folds, the Dask DataFrame conversion and the Dask prediction's row blocks
still hid a warning with ``warnings.catch_warnings``, whose filters are the
whole process's: two threads overlapping in it could leave its ignore
filter for good.  FGM's
lazy Dask prediction (and its prediction by row blocks with
``memory_budget``) returned ``inf`` decision values, and labels from them,
where the in-memory prediction refuses the row in words.  The help of
``predict`` and its kin did not say that they take Dask input.  Each test
here failed before its fix.
"""

import threading
import warnings

import numpy as np
import pytest
from test_user_audit35 import _in_thread  # (same folder: a target run in a thread)


def _machinery():
    return list(warnings.filters), warnings.showwarning, warnings._showwarnmsg_impl


def _overlapping_in(monkeypatch, owner, name, work_a, work_b):
    """``work_a`` and ``work_b`` in two threads, overlapping in ``owner.name``.

    A thread's first call of it waits: A's until B has entered it, B's until
    A has finished all its work.  A ``warnings.catch_warnings`` block around
    the call is then left by A first: B, leaving last, restored the filters
    as A's block had made them.
    """
    original = getattr(owner, name)
    a_in, b_in, a_done = threading.Event(), threading.Event(), threading.Event()
    roles = {}

    def hooked(*args, **kwargs):
        role = roles.pop(threading.get_ident(), None)
        if role == "a":
            a_in.set()
            b_in.wait(30)
        elif role == "b":
            b_in.set()
            a_done.wait(30)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, hooked)

    def first():
        roles[threading.get_ident()] = "a"
        try:
            work_a()
        finally:
            a_done.set()

    def second():
        assert a_in.wait(30)
        roles[threading.get_ident()] = "b"
        work_b()

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        before = _machinery()
        joins = [_in_thread(first), _in_thread(second)]
        for join in joins:
            join()
        left = _machinery()
    assert a_in.is_set() and b_in.is_set()  # (they did overlap there)
    return left == before, [str(w.message) for w in seen]


# ------------------------------------------- fits in threads and warnings
def test_platt_folds_of_two_threads_leave_the_warnings_filters_as_found(monkeypatch):
    # the folds' split hid scikit-learn's "The least populated class" in a
    # warnings.catch_warnings block: two probability=True fits overlapping
    # in it left its ignore filter in the process for good
    from sklearn.model_selection import StratifiedKFold

    from kernlearn import FGMClassifier

    def fit(seed):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(40, 3))
        FGMClassifier(probability=True).fit(X, (X[:, 0] > 0).astype(int))

    FGMClassifier()  # (the modules a fit imports add their filters first)
    fit(0)
    unchanged, said = _overlapping_in(monkeypatch, StratifiedKFold, "split",
                                      lambda: fit(1), lambda: fit(2))
    assert unchanged
    assert not [m for m in said if "least populated" in m], said


def test_dask_frame_conversions_of_two_threads_leave_the_filters_as_found(monkeypatch):
    # the conversion of a Dask DataFrame or Series hid Dask's note on pandas'
    # string columns ("Dask currently has limited support ...") the same way;
    # the labels are now made object arrays first, as Dask makes them
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    from kernlearn import FGMClassifier
    from kernlearn.estimators._large_inputs import partitioned_fit_inputs

    frame = dd.from_pandas(pd.DataFrame({"a": np.arange(8.0), "b": np.ones(8)}),
                           npartitions=2)
    labels = dd.from_pandas(pd.Series(list("xyxyxyxy"), dtype="string"), npartitions=2)
    out = {}

    def convert(key):
        out[key] = partitioned_fit_inputs(FGMClassifier(), frame, labels, True)

    convert("alone")
    unchanged, said = _overlapping_in(monkeypatch, type(labels), "to_dask_array",
                                      lambda: convert("a"), lambda: convert("b"))
    assert unchanged
    assert not [m for m in said if "limited support" in m], said
    y = out["b"][1]
    assert y.dtype == object and list(y.compute()) == list("xyxyxyxy")


def _fgm_and_a_row_too_large(**params):
    from kernlearn import FGMClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    est = FGMClassifier(**params).fit(X, (X[:, 0] + X[:, 1] > 0).astype(int))
    Z = X[:10].copy()
    Z[6] = 1.7e308  # (finite, but its dot product with the weights overflows)
    return est, Z


# ------------------------------------------- FGM's outputs by row blocks
@pytest.mark.parametrize("method", ["decision_function", "predict", "predict_proba"])
@pytest.mark.parametrize("chunks", [4, "unknown"])
def test_fgm_dask_prediction_refuses_overflowing_rows_as_in_memory(method, chunks):
    # the lazy Dask prediction gave inf decision values, and labels from them,
    # under NumPy's overflow warning only; in memory the row is refused
    da = pytest.importorskip("dask.array")
    est, Z = _fgm_and_a_row_too_large(
        **({"loss": "logistic"} if method == "predict_proba" else {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError) as in_memory:
            getattr(est, method)(Z)
        lazy = da.from_array(Z, chunks=(4, 4))
        if chunks == "unknown":  # (the row is then named within its block)
            lazy = lazy[lazy[:, 0] == lazy[:, 0]]
        with pytest.raises(ValueError) as by_blocks:
            getattr(est, method)(lazy).compute()
    expected = str(in_memory.value)
    if chunks == "unknown":
        expected = expected.replace("row 6 of X", "row 2 of row block 1 of X")
    assert str(by_blocks.value) == expected
    assert "row 6 of X" in str(in_memory.value) and "too large" in expected


@pytest.mark.parametrize("method", ["decision_function", "predict"])
def test_fgm_prediction_by_row_blocks_of_a_memory_budget_refuses_them_too(method):
    # with memory_budget the blocks' labels came from inf decision values
    est, Z = _fgm_and_a_row_too_large()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError) as in_memory:
            getattr(est, method)(Z)
        with pytest.raises(ValueError) as by_blocks:
            getattr(est.set_params(memory_budget=1), method)(Z)
    # (the column is named in memory only: the blocks are not kept)
    assert str(by_blocks.value) == str(in_memory.value).replace(
        " (largest in column 0)", "")



def test_dask_predictions_of_two_threads_leave_the_filters_as_found(monkeypatch):
    # each row block of a Dask prediction of a model fitted with column names
    # was predicted in a block hiding scikit-learn's "X does not have valid
    # feature names" (said once, of X's columns): the same leak; the blocks
    # are now given the names (the predictions are the same)
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    from kernlearn import LowRankKernelClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"])
    est = LowRankKernelClassifier(random_state=0).fit(X, (X["a"] > 0).astype(int))
    Z = dd.from_pandas(X, npartitions=3)
    expected, out = est.decision_function(X), {}

    def predict(key):
        out[key] = est.decision_function(Z)

    unchanged, said = _overlapping_in(monkeypatch, LowRankKernelClassifier, "_decision_function",
                                      lambda: predict("a"), lambda: predict("b"))
    assert unchanged
    assert not [m for m in said if "feature names" in m], said
    assert np.array_equal(out["a"], expected) and np.array_equal(out["b"], expected)

# ------------------------------------------------------------------ help
def test_every_prediction_method_says_it_takes_dask_input():
    # only doc/fgm.md said so: help(est.predict) spoke of in-memory X alone
    import importlib
    import inspect

    import kernlearn

    seen = 0
    for name, module in kernlearn._ESTIMATORS.items():
        cls = getattr(importlib.import_module(module), name)
        for method in ("predict", "decision_function", "predict_proba"):
            if not hasattr(cls, method):
                continue
            doc = inspect.getdoc(getattr(cls, method))
            lazy = True  # (computed on the workers, every estimator)
            assert "Dask DataFrame ``X`` is read by row blocks" in doc, (name, method)
            assert ("lazy Dask array" in doc) == lazy, (name, method)
            # (once, before the parameters, as numpydoc has it)
            assert doc.count("Predicting a Dask array") == 1, (name, method)
            assert doc.index("Dask DataFrame") < doc.index("Parameters\n---"), (name, method)
            seen += 1
    assert seen >= 20, seen


# ------------------------------------------- the metrics of the report and the CLI
def test_metrics_of_two_threads_leave_the_warnings_filters_as_found(monkeypatch):
    # evaluate_metrics (the CLI's scores, the HTML report's table) hid
    # scikit-learn's warnings on a test set of one class in a
    # warnings.catch_warnings block: two overlapping calls left its ignore
    # filter in the process; the undefined cases are now computed without it
    from sklearn import metrics

    from kernlearn import FGMClassifier
    from kernlearn.summary import evaluate_metrics

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    est = FGMClassifier().fit(X, (X[:, 0] > 0).astype(int))
    one_class = X[X[:, 0] > 0.3][:8]
    y = np.ones(len(one_class), int)
    pred = np.where(np.arange(len(y)) % 3 == 0, 0, 1)  # (a class absent from y)
    out = {}

    def score(key):
        out[key] = evaluate_metrics(est, one_class, y, "classification", pred=pred)

    score("alone")
    unchanged, said = _overlapping_in(monkeypatch, metrics, "accuracy_score",
                                      lambda: score("a"), lambda: score("b"))
    assert unchanged
    assert not [m for m in said if "not in y_true" in m], said
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = metrics.balanced_accuracy_score(y, pred)
    assert out["a"]["balanced_accuracy"] == out["b"]["balanced_accuracy"] == expected


def test_r2_of_one_row_is_nan_without_a_warning():
    from kernlearn.summary import r2

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(r2(np.array([1.0]), np.array([2.0])))
        assert r2(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 2.0])) == 0.5
