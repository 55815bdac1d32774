"""A tenth user's audit: the estimators as a scikit-learn user meets them.

A demanding user fitted the multitask estimators with True/False task ids,
listed a kernel twice in a kernel list, and read ``n_iter_`` of a low-rank
model whose ``nu`` was chosen along a path.  Each test here failed before
its fix.
"""

import numpy as np
import pytest

from kernlearn import (
    FGMClassifier,
    FGMRegressor,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
    MultitaskMKLClassifier,
    MultitaskMKLRegressor,
    PNormMKLClassifier,
)
from kernlearn.families import PolynomialPool
from kernlearn.kernels import rbf_kernel


def _tasks_data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    t = np.arange(n) % 2 == 0
    y = X[:, 0] + 0.5 * t + 0.1 * rng.standard_normal(n)
    return X, y, t


# ------------------------------------------------------- True/False task ids
def test_true_false_task_ids_round_trip_and_are_not_the_numbers_0_and_1():
    # True == 1 in NumPy: a model of tasks False/True predicted task ids 0/1
    # as if they were its own, and one of tasks 0/1 took True/False
    X, y, t = _tasks_data()
    est = MultitaskMKLRegressor(kernels=["linear"]).fit(X, y, task_index=list(t))
    assert est.tasks_.dtype == bool and est.tasks_.tolist() == [False, True]
    np.testing.assert_array_equal(est.predict(X, task_index=t),
                                  est.predict(X, task_index=list(t)))
    with pytest.raises(ValueError, match=r"holds numbers \(\[1, 0\]\) but the model's "
                                         r"task ids are True/False"):
        est.predict(X, task_index=t.astype(int))
    by_number = MultitaskMKLRegressor(kernels=["linear"]).fit(X, y, task_index=t.astype(int))
    with pytest.raises(ValueError, match="holds True/False .* task ids are numbers"):
        by_number.predict(X, task_index=t)
    # the other multitask family reads task ids through the same helpers
    inf = InfiniteFeatureRegressor(max_features=3, random_state=0).fit(
        X, y, task_index=t.astype(int))
    with pytest.raises(ValueError, match="True is not 1"):
        inf.predict(X, task_index=t)


@pytest.mark.parametrize("ids", [
    [True, False, 2, 3] * 10,  # (np.asarray makes this list numbers: 1, 0, 2, 3)
    np.array([0, 1, True, False] * 10, dtype=object),  # True and 1 were one task
])
def test_task_ids_mixing_true_false_with_numbers_are_refused(ids):
    X, y, _ = _tasks_data()
    y = (y > np.median(y)).astype(int)
    with pytest.raises(ValueError, match="mixes True/False with other task ids"):
        MultitaskMKLClassifier(kernels=["linear"]).fit(X, y, task_index=ids)


# -------------------------------------------------------- a kernel listed twice
@pytest.mark.parametrize("Est", [PNormMKLClassifier, MultitaskMKLClassifier,
                                 MultitaskMKLRegressor])
@pytest.mark.parametrize("kernels, first, second", [
    (["linear", ("rbf", {"gamma": 0.5}), ("rbf", {"gamma": 0.5})], 1, 2),
    # equal once resolved: a bare "rbf" is gamma="scale"; the columns are a set
    (["rbf", "linear", ("rbf", {"gamma": "scale"}, slice(None))], 0, 2),
    ([("rbf", {}, [0, 1]), ("rbf", {}, [1, 0])], 0, 1),
    ([rbf_kernel, "linear", rbf_kernel], 0, 2),
])
def test_a_kernel_listed_twice_is_refused(Est, kernels, first, second):
    # the two copies carried up to 2^(1 - 1/p) times one kernel's weight: the
    # repeated kernel was favoured and the model changed without a word
    X, y, _ = _tasks_data()
    y = (y > np.median(y)).astype(int) if Est is not MultitaskMKLRegressor else y
    with pytest.raises(ValueError, match=rf"kernels\[{first}\] .* and kernels\[{second}\] "
                                         r".* are the same kernel"):
        Est(kernels=kernels).fit(X, y)


def test_kernels_on_other_columns_or_widths_are_not_repeats():
    X, y, _ = _tasks_data()
    y = (y > np.median(y)).astype(int)
    kernels = [("linear", {}, [0]), ("linear", {}, [1]), ("rbf", {"gamma": 0.5}),
               ("rbf", {"gamma": 0.25})]
    assert PNormMKLClassifier(kernels=kernels, random_state=0).fit(
        X, y).kernel_weights_.shape == (4,)


def test_the_constant_kernel_twice_names_fit_intercept():
    X, y, _ = _tasks_data()
    y = (y > np.median(y)).astype(int)
    with pytest.raises(ValueError, match="constant kernel that fit_intercept=True appends"):
        PNormMKLClassifier(kernels=["linear", "constant"], fit_intercept=True).fit(X, y)


@pytest.mark.parametrize("Est", [PNormMKLClassifier, MultitaskMKLClassifier])
def test_a_precomputed_gram_matrix_listed_twice_is_refused(Est):
    X, y, _ = _tasks_data()
    y = (y > np.median(y)).astype(int)
    K = X @ X.T
    with pytest.raises(ValueError, match=r"X\[0\] and X\[2\] are the same Gram matrix"):
        Est(kernels="precomputed").fit([K, K + np.eye(len(K)), K.copy()], y)


# ----------------------------------------------------- SLKL's n_iter_ on a nu path
@pytest.mark.parametrize("Est", [LowRankKernelRegressor, LowRankKernelClassifier])
def test_low_rank_n_iter_is_the_final_fits_and_the_path_is_recorded(Est):
    # n_iter_ summed the sweeps of every nu value up to the kept one: 93 where
    # the kept fit ran 20; scikit-learn's n_iter_ is the final fit's
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (80, 2))
    y = np.sin(2 * X[:, 0]) * X[:, 1] + 0.1 * rng.normal(size=80)
    if Est is LowRankKernelClassifier:
        y = (y > 0).astype(int)
    est = Est(random_state=0).fit(X, y)
    path = est.nu_path_
    kept = list(path["nu"]).index(est.history_["nu"][-1])
    assert kept >= 1  # (a path of several values: the case in question)
    assert est.n_iter_ == path["n_iter"][kept]
    assert len(est.history_["objective"]) == path["n_iter"][: kept + 1].sum()
    assert np.sum(est.history_["nu"] == path["nu"][kept]) == est.n_iter_
    assert path["loo"].shape == path["n_iter"].shape == path["converged"].shape
    # one value: no path, n_iter_ as before
    fixed = Est(random_state=0, nu=0.01).fit(X, y)
    assert fixed.nu_path_ is None and fixed.n_iter_ == len(fixed.history_["objective"])


# -------------------------------------------------------- the package's source
def test_every_module_compiles_without_a_warning():
    # "\omega" in a docstring that is not raw: an invalid escape sequence,
    # a SyntaxWarning on import under Python 3.12 wherever no cached bytecode
    # exists (a user's first import after installing)
    import pathlib
    import warnings

    import kernlearn

    root = pathlib.Path(kernlearn.__file__).parent
    for path in sorted(root.rglob("*.py")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            compile(path.read_text(encoding="utf-8"), str(path), "exec")


# ------------------------------------------------- integer labels of dtype object
@pytest.mark.parametrize("Est", [LowRankKernelClassifier, PNormMKLClassifier,
                                 MultitaskMKLClassifier])
def test_integer_labels_in_an_object_array_are_integer_labels(Est):
    # a pandas column of dtype object holding 10/11 was scikit-learn's "Unknown
    # label type: unknown. Maybe you are trying to fit a classifier, which
    # expects discrete classes on a regression target with continuous values"
    pd = pytest.importorskip("pandas")
    X, y, _ = _tasks_data()
    labels = (y > np.median(y)).astype(int) + 10
    est = Est(random_state=0) if "random_state" in Est().get_params() else Est()
    obj = est.fit(X, pd.Series(labels, dtype=object))
    assert obj.classes_.tolist() == [10, 11]
    pred = obj.predict(X)
    assert set(pred.tolist()) <= {10, 11}
    np.testing.assert_array_equal(pred, est.fit(X, labels).predict(X))


# ------------------------------------------------ FGM with a family: zero weights
@pytest.mark.parametrize("Est", [FGMRegressor, FGMClassifier])
def test_fgm_family_zero_weight_rows_are_removed_rows(Est):
    # the family's own column scaling (unweighted) saw the rows of zero weight:
    # the model differed from the one without those rows (0.14 on a 90-row
    # regression's predictions, 0.018 on the logistic probabilities)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((90, 6))
    y = X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.standard_normal(90)
    kw = dict(B=2, family=PolynomialPool())
    if Est is FGMClassifier:
        y, kw = (y > 0).astype(int), dict(kw, loss="logistic")
    w = np.ones(90)
    w[::7] = 0
    keep = w > 0
    a = Est(**kw).fit(X, y, sample_weight=w)
    b = Est(**kw).fit(X[keep], y[keep])
    out = "predict_proba" if Est is FGMClassifier else "predict"
    np.testing.assert_allclose(getattr(a, out)(X), getattr(b, out)(X), rtol=1e-9, atol=1e-12)


# ------------------------------------------- labels in a one-column DataFrame
@pytest.mark.parametrize("dtype, labels", [("boolean", [False, True]), ("Int64", [0, 1]),
                                           ("category", ["a", "b"])])
@pytest.mark.parametrize("Est", [FGMClassifier, LowRankKernelClassifier])
def test_labels_of_a_one_column_dataframe_keep_their_type(Est, dtype, labels):
    # as a Series they did (fourth audit); as a one-column DataFrame, nullable
    # booleans and integers became the classes 0.0 and 1.0
    pd = pytest.importorskip("pandas")
    X, y, _ = _tasks_data()
    codes = (y > np.median(y)).astype(int)
    values = np.asarray(labels, dtype=object)[codes]
    frame = pd.DataFrame({"label": pd.array(values.tolist(), dtype=dtype)})
    est = Est(random_state=0) if "random_state" in Est().get_params() else Est()
    with pytest.warns(Warning, match="column-vector y"):
        est.fit(X, frame)
    # (0.0 == False and 1.0 == 1: the values alone do not tell)
    kind = {"boolean": "b", "Int64": "i"}.get(dtype, "O")
    assert est.classes_.tolist() == labels and est.classes_.dtype.kind in (kind, "U")
    assert est.predict(X).dtype.kind in (kind, "U")
    np.testing.assert_array_equal(est.predict(X), est.fit(X, frame["label"]).predict(X))
