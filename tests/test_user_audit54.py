"""A fifty-fourth user's audit: what the twenty-second pass merged (audit 51's
weights, audit 52's pandas 3 and Arrow data, audit 53's warnings and
``converged_``), looked at for silent wrong results.

What was wrong (each test below failed before its fix):

- A missing task id in a ``task_index`` given as a list or tuple (``[0, 1,
  None, ...]``) stopped fit and predict on "'builtin_function_or_method' object
  is not subscriptable": the new row-naming refusal took a list's ``index``
  method for pandas' index labels.
- A NaN among text task ids in a list (``["north", float("nan"), ...]``) was
  a task called "nan" (NumPy reads it as that text): fitted as one when it had
  two rows, and "tasks unseen in fit: ['nan']" at predict time.  It is named by
  row as a missing task id.
- A precomputed Gram matrix given as an ``xarray.DataArray`` (an array-like
  that NumPy reads) stopped on "DataArray.to_numpy() got an unexpected keyword
  argument 'dtype'": the conversion meant for pandas' ``pd.NA`` was applied to
  anything with a ``to_numpy``.
- ``MultitaskMKLClassifierCV`` with a ``class_weight`` weighing a third class
  out (``{0: 1, 1: 1, 2: 0}``) was refused as "got 3 classes", which the plain
  ``MultitaskMKLClassifier`` fits (and the search did before): its new class
  count looked at ``sample_weight`` alone, not at the rows the fits keep.
- ``MultitaskMKLClassifierCV`` given a binary fit whose rows of positive weight
  hold one class said "Only binary classification is supported ...; got 1
  classes" (the new count came before the weighted check; found on main too
  while this audit ran): the weighted check comes first again, with
  ``class_weight``'s zero weights as well.
- FGM's one-vs-rest problems run on a process backend (the user's
  ``joblib.parallel_config(backend="loky")`` or Dask's over the threads asked
  for) lost their convergence warnings: the new summing collected them into
  a pickled copy of the list, which nobody read.  There they pass as they
  come again, as before.

Checked and clean: no estimator predicts a class weighted out of a multiclass
fit (FGM, low-rank); a binary fit weighed to one class is refused by the CLI
in one line; FGM's one-vs-rest threads (``n_jobs=2``) sum the warnings of
every thread in one; FGM's ``transform`` gives CSR for CSC input, the same
numbers for a memory-mapped array, and pandas output keeps the caller's index;
GrFL's ``converged_`` and its one warning agree on a Dask array and in memory
and for fits run at once in threads (each warns once, for its own masters),
and its pricing subsample of an unweighted and a unit-weighted fit are the
same rows; pyarrow and categorical text labels give object classes; a low-rank
model's Platt probabilities do not change with a common factor of the weights or
with its rows of weight zero removed; FGM with zero weights and an active set
wider than the rows of positive weight gives the model of the rows removed, in
memory and by row blocks.

Left as they are: ``FGMClassifier(multiclass="ovr", refit=True)`` gives its
de-biasing refits' warning once per class (the same text: Python's default
filter shows it once); a Dask ``y`` is not checked for a class of positive
weight (documented: not computed there); ``kernlearn predict`` of an
``InfiniteFeature*`` model fitted in Python on a single task id, without
``--task-column``, gives the Python words (the multitask MKL models predict
one task without ids); a warm refit of a GrFL model whose master stopped at
its cap, with nothing to add, reads ``converged_`` False without a new warning.
"""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

import kernlearn
from kernlearn.utils._warnings import carried, collected, warn


def _data(n=40, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    return X, X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.randn(n)


def _three_classes(n=60):
    rng = np.random.RandomState(0)
    y = np.repeat([0, 1, 2], n // 3)
    X = rng.randn(n, 3)
    X[:, 0] += y
    return X, y


# -- a missing task id in a list --------------------------------------------------------

@pytest.mark.parametrize("container", [list, tuple])
@pytest.mark.parametrize("missing", [None, np.nan])
def test_a_missing_task_id_in_a_list_is_named_by_row(container, missing):
    X, y = _data()
    ids = [int(i) for i in np.arange(len(y)) % 2]
    bad = list(ids)
    bad[6] = missing
    est = kernlearn.MultitaskMKLRegressor()
    # (the old code: "'builtin_function_or_method' object is not subscriptable")
    with pytest.raises(ValueError, match=r"task_index has a missing value( \(NaN\))? "
                                         r"at row 6 \(1 row"):
        est.fit(X, y, task_index=container(bad))
    est.fit(X, y, task_index=container(ids))
    with pytest.raises(ValueError, match=r"task_index has a missing value.* at row 6 \("):
        est.predict(X, task_index=container(bad))


@pytest.mark.parametrize("name", ["MultitaskMKLRegressor", "InfiniteFeatureRegressor"])
def test_a_nan_among_text_task_ids_in_a_list_is_missing_not_a_task_called_nan(name):
    X, y = _data()
    ids = ["north", "south"] * (len(y) // 2)
    bad = list(ids)
    bad[6] = bad[9] = float("nan")
    est = getattr(kernlearn, name)()
    if name.startswith("Infinite"):
        est.set_params(max_features=3, random_state=0)
    # (the old code fitted a task "nan": NumPy reads a NaN among text as that text)
    with pytest.raises(ValueError, match=r"task_index has a missing value at row 6 \(2 rows"):
        est.fit(X, y, task_index=bad)
    est.fit(X, y, task_index=ids)
    # (the old code: "task_index has tasks unseen in fit: ['nan']")
    with pytest.raises(ValueError, match=r"task_index has a missing value at row 6 \("):
        est.predict(X, task_index=bad)


# -- a Gram matrix NumPy reads, not pandas ----------------------------------------------

def test_an_xarray_gram_matrix_is_read_as_numpy_reads_it():
    xr = pytest.importorskip("xarray")
    X, y = _data()
    grams = [X @ X.T, np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))]
    est = kernlearn.PNormMKLClassifier(kernels="precomputed", random_state=0)
    labels = np.where(y > 0, "b", "a")
    want = est.fit(grams, labels).decision_function(grams)
    # (the old code: "DataArray.to_numpy() got an unexpected keyword argument 'dtype'")
    arrays = [xr.DataArray(g) for g in grams]
    np.testing.assert_array_equal(est.fit(arrays, labels).decision_function(arrays), want)
    # a pandas frame's pd.NA is still a missing value (audit 52)
    frame = pd.DataFrame(grams[0]).astype("Float64")
    frame.iloc[2, 2] = pd.NA
    with pytest.raises(ValueError, match=r"X\[0\] contains NaN or infinite values"):
        est.fit([frame, grams[1]], labels)


# -- MultitaskMKLClassifierCV: a class weighed out by class_weight -----------------------

def test_multitask_search_fits_a_third_class_weighed_out_as_the_plain_classifier():
    X, y = _three_classes()
    tasks = np.arange(len(y)) % 2
    cw = {0: 1, 1: 1, 2: 0}
    plain = kernlearn.MultitaskMKLClassifier(class_weight=cw).fit(X, y, task_index=tasks)
    # (the old code: "Only binary classification is supported ...; got 3 classes")
    search = kernlearn.MultitaskMKLClassifierCV(class_weight=cw).fit(X, y, task_index=tasks)
    np.testing.assert_array_equal(search.classes_, plain.classes_)
    assert set(search.predict(X, task_index=tasks)) <= {0, 1}
    # its model is the plain classifier's at the C it chose (the same optimum, each
    # within its duality gap: the refit starts from the folds' fits)
    plain.set_params(C=search.C_).fit(X, y, task_index=tasks)
    assert search.converged_ and plain.converged_
    assert abs(search.objective_ - plain.objective_) <= max(search.gap_, plain.gap_)
    # three classes of positive weight are refused
    with pytest.raises(ValueError, match="got 3 classes"):
        kernlearn.MultitaskMKLClassifierCV(class_weight={0: 1, 1: 1, 2: 0.5}).fit(
            X, y, task_index=tasks)


@pytest.mark.parametrize("by", ["sample_weight", "class_weight"])
def test_multitask_search_names_a_binary_fit_weighed_to_one_class(by):
    X, y = _three_classes()
    y, tasks = (y > 0).astype(int), np.arange(len(y)) % 2
    params, kw = (({"class_weight": {0: 0, 1: 1}}, {}) if by == "class_weight"
                  else ({}, {"sample_weight": (y == 1).astype(float)}))
    # (the old code: "Only binary classification is supported ...; got 1 classes",
    # and with class_weight the folds' fit's words)
    with pytest.raises(ValueError, match=r"single class of positive weight \(1\)"):
        kernlearn.MultitaskMKLClassifierCV(**params).fit(X, y, task_index=tasks, **kw)


# -- warnings of functions carried to another process -----------------------------------

def _warns():
    warn("from a worker", UserWarning)
    return 1


def test_a_carried_function_pickled_to_another_process_warns_there_not_into_a_copy():
    # joblib's process backends (loky, Dask) pickle the function: its warnings went
    # into a copy of the collecting list and were lost
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with collected() as log:
            assert pickle.loads(pickle.dumps(carried(_warns)))() == 1
            carried(_warns)()  # (a thread of this process: collected, as before)
    assert [str(w.message) for w in seen] == ["from a worker"]
    assert log == [("from a worker", UserWarning)]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_one_vs_rest_threads_sum_every_problems_warning_in_one(n_jobs):
    X, y = _three_classes()
    X = np.c_[X, X[:, :2] ** 2]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        # (B=1: with B=10 every column enters in one round, and that path converged)
        est = kernlearn.FGMClassifier(multiclass="ovr", n_jobs=n_jobs, max_iter=1,
                                      B=1).fit(X, y)
    stops = [str(w.message) for w in seen if issubclass(w.category, ConvergenceWarning)]
    assert len(stops) == 1 and stops[0].startswith(
        "3 convergence warning(s) in the 3 one-vs-rest problems"), stops
    assert seen[0].filename == __file__ and est.converged_ is False


# -- checked clean: weights ---------------------------------------------------------------

@pytest.mark.parametrize("est", [kernlearn.FGMClassifier(),
                                 kernlearn.FGMClassifier(multiclass="ovr"),
                                 kernlearn.LowRankKernelClassifier(random_state=0)])
def test_a_class_weighed_out_of_a_multiclass_fit_is_never_predicted(est):
    X, y = _three_classes()
    for kw, params in (({"sample_weight": (y != 2).astype(float)}, {}),
                       ({}, {"class_weight": {0: 1, 1: 1, 2: 0}})):
        est.set_params(**{"class_weight": None, **params}).fit(X, y, **kw)
        np.testing.assert_array_equal(est.classes_, [0, 1, 2])
        assert not np.any(est.predict(X) == 2)


def test_cli_refuses_a_binary_fit_weighed_to_one_class_in_one_line(tmp_path, capsys):
    from kernlearn.cli import main

    X, y = _data()
    path = tmp_path / "d.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": (y > 0).astype(int)}).to_csv(
        path, index=False)
    code = main(["fit", str(path), "-e", "fgm", "-q", "-m", str(tmp_path / "m.npz"),
                 "-p", 'class_weight={"0": 0, "1": 1}'])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "single class of positive weight (1)" in err
    assert not (tmp_path / "m.npz").exists()


# -- checked clean: FGM transform ---------------------------------------------------------

def test_fgm_transform_keeps_sparse_memmaps_and_the_callers_index(tmp_path):
    X, y = _data(60)
    est = kernlearn.FGMRegressor().fit(X, y)
    dense = est.transform(X)
    csr = est.transform(sp.csc_matrix(X))
    assert sp.isspmatrix_csr(csr) or isinstance(csr, sp.csr_array)
    np.testing.assert_allclose(csr.toarray(), dense)
    np.save(tmp_path / "X.npy", X)
    mm = np.load(tmp_path / "X.npy", mmap_mode="r")
    np.testing.assert_array_equal(est.transform(mm), dense)
    frame = pd.DataFrame(X, columns=["a", "b", "c"], index=np.arange(60) + 100)
    est.fit(frame, y).set_output(transform="pandas")
    out = est.transform(frame)
    assert list(out.index) == list(frame.index)
    assert list(out.columns) == list(est.get_feature_names_out())
    np.testing.assert_array_equal(out.to_numpy(), dense)


# -- checked clean: GrFL on Dask and the pricing rows ------------------------------------

def test_grfl_converged_and_its_warning_agree_on_dask_and_in_memory():
    da = pytest.importorskip("dask.array")
    import dask

    rng = np.random.RandomState(0)
    X = rng.randn(150, 4)
    y = ((np.sin(X[:, 0]) + 0.1 * rng.randn(150)) > 0).astype(int)
    seen = {}
    with dask.config.set(scheduler="synchronous"):
        for name, (Xf, yf) in {"memory": (X, y), "dask": (da.from_array(X, chunks=75),
                                                          da.from_array(y, chunks=75))}.items():
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                est = kernlearn.InfiniteFeatureClassifier(max_features=5, inner_max_iter=1,
                                                         random_state=0)
                est.fit(Xf, yf)
            seen[name] = (est.converged_, est.stop_reason_,
                          [str(x.message)[:41] for x in w
                           if issubclass(x.category, ConvergenceWarning)])
    assert seen["memory"] == seen["dask"] == (
        False, "max_features", ["GrFL's master stopped after max_iter=1 wi"])


def test_grfl_pricing_rows_of_unit_weights_are_the_unweighted_ones():
    from kernlearn.losses import get_loss
    from kernlearn.methods.grfl import fit_grfl
    from kernlearn.penalties import get_penalty

    X, y = _data(120)
    kw = {"loss": get_loss("square"), "penalty": get_penalty("group_l1_l2"),
          "max_features": 4, "pricing_subsample": 50, "random_state": 0}
    a = fit_grfl(X, y[:, None], **kw)
    b = fit_grfl(X, y[:, None], sample_weight=np.ones(len(y)), **kw)
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-8)
    np.testing.assert_allclose(a.features, b.features)


# -- checked clean: Arrow labels ----------------------------------------------------------

def test_arrow_and_categorical_text_labels_give_object_classes():
    pa = pytest.importorskip("pyarrow")
    X, y = _data()
    text = np.where(y > 0, "yes", "no")
    for labels in (pd.Series(text, dtype=pd.ArrowDtype(pa.large_string())),
                   pd.Series(text).astype("category"),
                   pd.Series(text.tolist(), dtype=pd.ArrowDtype(pa.dictionary(pa.int32(),
                                                                     pa.string())))):
        est = kernlearn.FGMClassifier().fit(X, labels)
        assert est.classes_.dtype == object and est.predict(X[:2]).dtype == object


def test_low_rank_platt_probabilities_ignore_a_common_factor_and_zero_weight_rows():
    # Platt's pseudo-counts at the weights' scale: weights of sum one, a thousand
    # times larger, and the rows of weight zero removed give the same probabilities
    rng = np.random.RandomState(0)
    X = rng.randn(80, 3)
    y = (X[:, 0] + 0.5 * rng.randn(80) > 0).astype(int)
    w = rng.uniform(0.5, 2, 80)
    w[:5] = 0

    def proba(X_, y_, w_):
        est = kernlearn.LowRankKernelClassifier(probability=True, random_state=0)
        return est.fit(X_, y_, sample_weight=w_).predict_proba(X)

    want = proba(X, y, w)
    for got in (proba(X, y, w / w.sum()), proba(X, y, 1000 * w),
                proba(X[5:], y[5:], w[5:])):
        np.testing.assert_allclose(got, want, atol=1e-10)
    assert np.ptp(want[:, 1]) > 0.8  # (not all within 0.4-0.6)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_fgm_zero_weights_past_the_rows_of_positive_weight_in_memory_and_out_of_core():
    # the master's choice counts the rows of positive weight: an active set wider
    # than them gives the model of the rows removed, in memory and by row blocks
    rng = np.random.RandomState(0)
    X = rng.randn(60, 40)
    y = X[:, :12] @ rng.randn(12) + 0.1 * rng.randn(60)
    w = np.ones(60)
    w[:40] = 0
    kw = {"B": 6, "max_iter": 6, "C": 10.0}
    want = kernlearn.FGMRegressor(**kw).fit(X[40:], y[40:])
    assert len(want.selected_features_) > 20  # (past the 20 rows of positive weight)
    for est in (kernlearn.FGMRegressor(**kw), kernlearn.FGMRegressor(**kw, memory_budget="1MB")):
        est.fit(X, y, sample_weight=w)
        np.testing.assert_allclose(est.predict(X), want.predict(X), atol=1e-10)


def test_grfl_fits_in_threads_each_warn_once_for_their_own_masters():
    # one_master_warning collects per thread (contextvars): fits run at once warn
    # once each, as their converged_ says, none absorbing another's warning
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.RandomState(0)
    X = rng.randn(150, 4)
    y = ((np.sin(X[:, 0]) + 0.1 * rng.randn(150)) > 0).astype(int)

    def fit(seed):
        est = kernlearn.InfiniteFeatureClassifier(max_features=5, inner_max_iter=1,
                                                  random_state=seed)
        return est.fit(X, y).converged_

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with ThreadPoolExecutor(2) as pool:
            converged = list(pool.map(fit, range(4)))
    stops = [str(w.message) for w in seen if issubclass(w.category, ConvergenceWarning)]
    assert len(stops) == converged.count(False) > 0
    assert all(s.startswith("GrFL's master stopped after max_iter=1") and " solves" not in s
               for s in stops)
