"""A fifth user's audit: the estimators as a demanding data scientist uses them.

Silent wrong results and unhelpful errors found by probing the estimators with
scikit-learn's meta-estimators, unusual containers and dtypes, and awkward
numbers, each fixed and pinned here (every test failed before its fix, but for
the regressor case of the zero-weight folds test: a guard of the shared path).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression

from kernlearn import FGMClassifier, FGMRegressor


def _classification(n=120, p=6, seed=0):
    return make_classification(n, p, n_informative=3, n_redundant=0,
                               n_clusters_per_class=1, random_state=seed)


# ------------------------------------------------- sparse storage, same numbers
@pytest.mark.parametrize("Est", [FGMClassifier, FGMRegressor])
def test_explicitly_stored_zeros_do_not_change_the_model(Est):
    # FGM scales a sparse column by its largest |x| unless it holds a value in
    # 90 % of the rows (a measurement).  The count was of *stored* entries, so
    # the same matrix with its zeros stored (built from triplets, or values
    # zeroed in place) made column 0 a measurement and fitted another model.
    if Est is FGMClassifier:
        X, y = _classification()
    else:
        X, y = make_regression(120, 6, n_informative=3, noise=1.0, random_state=0)
    X = X.copy()
    X[:, 0] = np.where(np.arange(len(X)) % 2 == 0, X[:, 0] + 10.0, 0.0)  # half zeros
    X[:, 1:] = np.where(np.abs(X[:, 1:]) > 0.8, X[:, 1:], 0.0)
    plain = sp.csr_matrix(X)
    stored = sp.csr_matrix(np.where(X == 0, 1.0, X))
    stored.data[stored.data == 1.0] = 0.0  # every entry stored, the same numbers
    assert stored.nnz == X.size and plain.nnz < X.size
    np.testing.assert_array_equal(stored.toarray(), X)
    out = "decision_function" if Est is FGMClassifier else "predict"
    a = getattr(Est(B=3).fit(stored, y), out)(plain)
    b = getattr(Est(B=3).fit(plain, y), out)(plain)
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_column_nonzeros_counts_values_not_storage():
    from kernlearn.methods._fgm_rows import block_stored
    from kernlearn.preprocessing import column_nonzeros

    # duplicates summing to zero, an explicit zero, a duplicate pair summing to 3
    X = sp.csr_matrix((np.array([1.0, -1.0, 0.0, 1.0, 2.0, 4.0]), np.array([0, 0, 1, 2, 2, 1]),
                       np.array([0, 2, 3, 5, 6])), shape=(4, 3))
    assert not X.has_canonical_format
    np.testing.assert_array_equal(column_nonzeros(X), [0, 1, 1])
    assert X.nnz == 6 and not X.has_canonical_format  # the caller's matrix is untouched
    # the out-of-core / cluster pass counts the same way (weights drop row 3)
    np.testing.assert_array_equal(block_stored(X, np.array([1.0, 1.0, 1.0, 0.0])),
                                  [[0, 0, 1, 3]])


# ------------------------------------------- a Unix-time column beside others
# (APG at its default inner_tol ends its last master 0.07 % above the optimum on
# either data, decision values 0.3 % apart since the longer paths of FGM's
# thirty-fifth-pass stopping rule: solved tightly here, the offset is what differs)
@pytest.mark.parametrize("kw", [{}, {"solver": "apg", "inner_tol": 1e-10}, {"solver": "simplemkl"},
                                {"refit": True}, {"multiclass": "ovr"}],
                         ids=["newton", "apg", "simplemkl", "refit", "ovr"])
def test_fgm_with_a_unix_time_column_fits_the_model_of_the_offset_free_data(kw):
    # FGM centres implicitly, through the intercept, so its master saw a column
    # of ~1.7e9 varying by ~1: the Newton master met NaN (LinAlgError "Array
    # must not contain infs or NaNs"), other settings returned a model far from
    # the one of the same data without the offset (accuracy down to chance).
    k = 3 if kw.get("multiclass") else 2
    X, y = make_classification(150, 6, n_informative=3, n_redundant=0, n_classes=k,
                               n_clusters_per_class=1, random_state=0)
    Xt = X.copy()
    Xt[:, 0] += 1.7e9  # a timestamp in seconds
    ref = FGMClassifier(B=3, **kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (convergence warnings of the reference alike)
        est = FGMClassifier(B=3, **kw).fit(Xt, y)
    np.testing.assert_array_equal(est.selected_features_, ref.selected_features_)
    if kw.get("refit"):
        # (LinearSVC penalises the intercept, so the origin of a column moves
        # the refitted model a little: the offset-free data's is not the target)
        assert est.score(Xt, y) >= ref.score(X, y) - 0.02
        return
    # the offset costs ~1e-7 of column 0's precision, no more
    np.testing.assert_allclose(est.decision_function(Xt), ref.decision_function(X),
                               atol=1e-3 * np.abs(ref.decision_function(X)).max())


def test_fgm_regressor_with_a_unix_time_column():
    X, y = make_regression(150, 6, n_informative=3, noise=1.0, random_state=0)
    Xt = X.copy()
    Xt[:, 0] += 1.7e9
    ref = FGMRegressor(B=3, C=1.0).fit(X, y)
    est = FGMRegressor(B=3, C=1.0).fit(Xt, y)
    np.testing.assert_allclose(est.predict(Xt), ref.predict(X), rtol=1e-4, atol=1e-3)
    assert est.score(Xt, y) > 0.99


def test_offset_shift_is_an_exact_reparametrisation():
    from kernlearn.methods._fgm_rows import offset_shift

    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, 3))
    assert offset_shift(A) is None  # ordinary columns: untouched (same bits as before)
    assert offset_shift(sp.csc_matrix(A)) is None
    A[:, 1] += 1e9
    A[:, 2] = 5.0  # a constant column is all offset
    shift = offset_shift(A)
    assert shift[0] == 0.0 and shift[2] == 5.0
    assert shift[1] == pytest.approx(1e9, rel=1e-8)
    W, b = rng.standard_normal(3), 0.7
    np.testing.assert_allclose((A - shift) @ W + (b + shift @ W), A @ W + b, rtol=1e-12)


# ------------------------------------------------------------ constant targets
@pytest.mark.parametrize("kw", [{}, {"kernel_selection": "objective"}],
                         ids=["loo", "objective-loo"])
def test_multitask_cv_regressor_on_a_constant_target_predicts_it(kw):
    # the leave-one-out R^2 divided by a zero total sum of squares: -inf, and
    # the fit stopped with "a validation score is not finite: [-inf ...]"
    # (every other regressor, and the K-fold scores, predict the constant)
    from kernlearn import MultitaskMKLRegressorCV

    X, _ = make_regression(60, 4, random_state=0)
    y = np.full(60, 7.5)
    est = MultitaskMKLRegressorCV(**kw).fit(X, y)
    np.testing.assert_allclose(est.predict(X), 7.5, rtol=1e-9)
    assert np.isfinite(est.best_score_)
    assert np.all(np.isfinite(est.cv_results_["mean_test_score"]))


def test_pooled_r2_is_scikit_learns_r2_score():
    from sklearn.metrics import r2_score

    from kernlearn.estimators.mtmkl_cv import _pooled_r2

    rng = np.random.default_rng(0)
    y, pred, w = rng.normal(size=20), rng.normal(size=20), rng.uniform(0.5, 2, 20)
    assert _pooled_r2(np.sum(w * (y - pred) ** 2), y, w) == pytest.approx(
        r2_score(y, pred, sample_weight=w))
    c = np.full(5, 3.0)
    for pred in (c, c + 0.1):  # constant targets: 1 when exact, else 0 (force_finite)
        assert _pooled_r2(np.sum((c - pred) ** 2), c, np.ones(5)) == r2_score(c, pred)


# ------------------------------------------ precomputed kernels, samples first
@pytest.mark.parametrize("name", ["PNormMKLClassifier", "MultitaskMKLClassifier"])
def test_platt_probabilities_take_precomputed_kernels_samples_first(name):
    # PrecomputedKernels exists so that scikit-learn can split samples; with
    # probability=True the internal Platt folds iterated it as a list of
    # matrices, found none, and fit stopped on "need at least one array to stack"
    from sklearn.datasets import load_iris

    import kernlearn
    from kernlearn.kernels import pairwise_kernel

    X, y = load_iris(return_X_y=True)
    if name == "MultitaskMKLClassifier":
        y = (y == 1).astype(int)
    grams = [pairwise_kernel(X, X, "linear"), pairwise_kernel(X, X, "rbf", gamma=0.5)]
    est = getattr(kernlearn, name)(kernels="precomputed", probability=True)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    P_list = est.fit(grams, y).predict_proba(grams)
    K = kernlearn.PrecomputedKernels(grams)
    P = est.fit(K, y).predict_proba(K)
    np.testing.assert_allclose(P, P_list, rtol=1e-10, atol=1e-12)
    assert np.mean(est.classes_[P.argmax(1)] == y) > 0.9


# ------------------------------------------------------ NaN targets, by row
@pytest.mark.parametrize("form", ["array", "2-D array", "DataFrame"])
def test_a_nan_target_in_an_array_is_named_by_row(form):
    # a pandas Series named the row of a missing label; the same floats as a
    # NumPy array (or a DataFrame of targets) gave "Input y contains NaN"
    from kernlearn import LowRankKernelRegressor

    X, y = make_regression(40, 3, random_state=0)
    labels = (y > 0).astype(float)
    y[[6, 9]] = labels[[6, 9]] = np.nan
    if form != "array":
        y = np.column_stack([np.where(np.isnan(y), 1.0, y), y])
    if form == "DataFrame":
        pd = pytest.importorskip("pandas")
        y = pd.DataFrame(y, index=np.arange(40) + 100)
    match = r"y has a missing value at row 6 " + (r"\(index 106\) " if form == "DataFrame" else "")
    with pytest.raises(ValueError, match=match + r"\(2 rows with one in all\)"):
        LowRankKernelRegressor().fit(X, y)
    if form == "array":  # float class labels alike
        with pytest.raises(ValueError, match=r"y has a missing value at row 6"):
            FGMClassifier().fit(X, labels)


@pytest.mark.parametrize("label, shown", [("yes", "'yes'"), (4, "4"), (True, "True")])
def test_a_single_class_is_named_as_written(label, shown):
    # NumPy 2 printed the label's scalar type: "(np.str_('yes'))", "(np.int64(4))"
    X = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ValueError, match=rf"y contains a single class \({shown}\);"):
        FGMClassifier().fit(X, np.array([label] * 6))


def test_a_task_of_one_class_is_named_as_written():
    from kernlearn import MultitaskMKLClassifier

    X = np.arange(16.0).reshape(8, 2)
    y = np.array([0, 1, 0, 1, 1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"task 2 has samples of one class"):
        MultitaskMKLClassifier().fit(X, y, task_index=np.repeat([1, 2], 4))


# ------------------------------------------- zero weights in the *CV folds
@pytest.mark.parametrize("name", ["MultitaskMKLClassifierCV", "MultitaskMKLRegressorCV"])
def test_multitask_cv_folds_leave_zero_weight_rows_out(name):
    # zero weights are documented as removed rows; the folds were drawn over
    # every row, so the validation scores (and possibly C) differed from the
    # fit without those rows, and a training fold holding only zero-weight
    # rows stopped on "Sample weights must contain at least one non-zero number"
    import kernlearn

    if name == "MultitaskMKLClassifierCV":
        X, y = _classification()
        kw = {}
    else:  # (already right before the fix: a guard of the fold code both share)
        X, y = make_regression(120, 6, n_informative=3, noise=1.0, random_state=0)
        kw = {"cv": 3}
    w = np.ones(len(y))
    w[::4] = 0.0
    Est = getattr(kernlearn, name)
    a = Est(**kw).fit(X, y, sample_weight=w)
    b = Est(**kw).fit(X[w > 0], y[w > 0])
    np.testing.assert_allclose(a.cv_results_["mean_test_score"],
                               b.cv_results_["mean_test_score"], rtol=1e-7)
    if name == "MultitaskMKLClassifierCV":
        # the positive rows are the first of each class: the first stratified
        # training fold held none of them
        w = np.zeros(len(y))
        w[np.r_[np.flatnonzero(y == 0)[:6], np.flatnonzero(y == 1)[:6]]] = 1.0
        c = Est().fit(X, y, sample_weight=w)
        d = Est().fit(X[w > 0], y[w > 0])
        np.testing.assert_allclose(c.cv_results_["mean_test_score"],
                                   d.cv_results_["mean_test_score"], rtol=1e-7)


@pytest.mark.parametrize("name", ["FGMClassifier", "PNormMKLClassifier", "InfiniteFeatureClassifier",
                                  "LowRankKernelClassifier", "MultitaskMKLClassifier"])
def test_platt_probabilities_leave_zero_weight_rows_out(name):
    # Platt's internal folds were drawn over every row: zero-weighted rows
    # moved the other rows between folds, and the probabilities differed from
    # the fit without them by up to 0.08
    import kernlearn

    X, y = _classification()
    w = np.ones(len(y))
    w[::4] = 0.0
    est = getattr(kernlearn, name)(probability=True)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    a = est.fit(X, y, sample_weight=w).predict_proba(X)
    b = est.fit(X[w > 0], y[w > 0]).predict_proba(X)
    np.testing.assert_allclose(a, b, atol=1e-9)


def test_platt_folds_keep_both_classes_in_every_task():
    # the internal folds were stratified by class only: a task's two samples
    # of a class could both leave a training fold, and the multitask
    # classifier stopped on "task 1 has samples of one class only; every task
    # needs both classes" (the data had both); one sample is named plainly
    from kernlearn import InfiniteFeatureClassifier, MultitaskMKLClassifier

    X, y = _classification(150)
    ones = np.flatnonzero(y == 1)
    t = np.zeros(150, dtype=int)
    t[np.r_[np.flatnonzero(y == 0)[:8], ones[:2]]] = 1  # task 1: 8 of class 0, 2 of class 1
    P = MultitaskMKLClassifier(probability=True).fit(X, y, task_index=t).predict_proba(
        X, task_index=t)
    assert np.allclose(P.sum(axis=1), 1.0) and np.mean(P.argmax(1) == y) > 0.9
    t[ones[1]] = 0  # task 1 now has one sample of class 1
    with pytest.raises(ValueError, match=r"every class in every task (holding it )?\(task 1 has one of "
                                         r"class 1\)"):
        MultitaskMKLClassifier(probability=True).fit(X, y, task_index=t)
    # the infinite-feature classifier refuses a task of one class too, so its folds
    # keep each task's classes and name a lone sample alike (tests/test_loose_ends36.py)
    with pytest.raises(ValueError, match=r"every class in every task (holding it )?\(task 1 has one of "
                                         r"class 1\)"):
        InfiniteFeatureClassifier(max_features=4, random_state=0, probability=True).fit(
            X, y, task_index=t)


# ------------------------------------------------------------ constant inputs
@pytest.mark.parametrize("cv", ["loo", 3])
def test_multitask_cv_regressor_on_constant_inputs_predicts_the_mean(cv):
    # the shared linear component of constant columns has an empty factor; the
    # leave-one-out gradient then read an unset variable: "UnboundLocalError:
    # cannot access local variable 'U'" (every other estimator predicts the mean)
    from kernlearn import MultitaskMKLRegressorCV

    _, y = make_regression(60, 3, random_state=0)
    X = np.tile([1.0, 2.0, -3.0], (60, 1))
    est = MultitaskMKLRegressorCV(cv=cv).fit(X, y)
    np.testing.assert_allclose(est.predict(X), y.mean(), rtol=1e-6)


def test_multitask_cv_classifier_names_a_tasks_lone_sample_of_a_class():
    # the plain classifier fits such data; the *CV one stopped inside a fold on
    # "task 1 has samples of one class only; every task needs both classes"
    from kernlearn import MultitaskMKLClassifier, MultitaskMKLClassifierCV

    X, y = _classification(150)
    t = np.zeros(150, dtype=int)
    t[np.r_[np.flatnonzero(y == 0)[:4], np.flatnonzero(y == 1)[:1]]] = 1
    MultitaskMKLClassifier().fit(X, y, task_index=t)
    with pytest.raises(ValueError, match=r"task 1 has one sample of class 1; "
                                         r"cross-validation needs two of each class"):
        MultitaskMKLClassifierCV().fit(X, y, task_index=t)
