"""A seventh user's audit: multitask estimators, invariances, model files, kernels.

A demanding user fitted the multitask MKL estimators with task ids of other
types and orders, checked every estimator's predictions against relabelled,
reordered and reweighted copies of the same data, saved and reloaded models,
and handed the precomputed-kernel estimators matrices that are not kernels.
Each test here failed before its fix.
"""

import numpy as np
import pytest

from kernlearn import (
    MultitaskMKLClassifier,
    MultitaskMKLRegressor,
    MultitaskMKLRegressorCV,
)
from kernlearn.kernels import linear_kernel, rbf_kernel


def _tasks_data(n=60, seed=1):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, 4))
    t = rng.randint(0, 3, n)
    y = X[:, 0] + 0.5 * t + 0.1 * rng.standard_normal(n)
    return X, y, t


@pytest.mark.parametrize("Est, formulation", [
    (Est, f) for Est in (MultitaskMKLRegressor, MultitaskMKLClassifier)
    for f in ("mtfl", "mkl", "independent")] + [(MultitaskMKLRegressorCV, "mtfl")])
def test_multitask_precomputed_indefinite_kernel_is_refused(Est, formulation):
    # 2 I - K has a unit diagonal but eigenvalues down to about -15: not a
    # kernel.  MK-MTSFL's eigendecomposition refused it; the other
    # formulations checked the diagonal only and fitted it without a word,
    # while PNormMKLClassifier and the low-rank estimators refuse it.
    X, y, t = _tasks_data()
    K = rbf_kernel(X, X, gamma=0.3)
    bad = 2 * np.eye(len(X)) - K
    if Est is MultitaskMKLClassifier:
        y = (y > np.median(y)).astype(int)
    with pytest.raises(ValueError, match=r"X\[0\] is not positive semi-definite"):
        Est(kernels="precomputed", formulation=formulation).fit([bad, linear_kernel(X, X)], y, t)


def test_multitask_cv_regressor_takes_a_generator_of_splits():
    # scikit-learn's cv takes "an iterable yielding (train, test) splits";
    # kernel_selection="objective" built the folds again for every C, so a
    # generator was spent by the first C and the fit stopped on NumPy's
    # "inhomogeneous shape"
    from sklearn.model_selection import StratifiedKFold

    X, y, t = _tasks_data(90, seed=0)
    folds = list(StratifiedKFold(3).split(X, t))
    kw = {"kernel_selection": "objective", "Cs": [0.1, 1.0, 10.0]}
    a = MultitaskMKLRegressorCV(cv=folds, **kw).fit(X, y, t)
    b = MultitaskMKLRegressorCV(cv=(f for f in folds), **kw).fit(X, y, t)
    assert b.C_ == a.C_
    np.testing.assert_array_equal(b.cv_results_["mean_test_score"],
                                  a.cv_results_["mean_test_score"])


@pytest.mark.parametrize("kernel_selection", ["objective", "loo"])
def test_multitask_cv_fold_leaving_a_task_one_row_names_the_fold_and_task(
        kernel_selection):
    # a task of two rows, 5 stratified folds: a training fold keeps one of
    # them, and the fold's fit said "task(s) [np.int64(7)] have one" about
    # data where task 7 has two
    X, y, t = _tasks_data(90, seed=0)
    t[:2] = 7
    est = MultitaskMKLRegressorCV(kernel_selection=kernel_selection, cv=5)
    with pytest.raises(ValueError, match=r"fold \d leaves 1 training row\(s\) of task "
                       r"7 \(2 in all"):
        est.fit(X, y, t)


def test_a_task_of_one_row_is_named_as_written():
    X, y, t = _tasks_data()
    t[0] = 7
    with pytest.raises(ValueError, match=r"task\(s\) \[7\] have one"):
        MultitaskMKLRegressor().fit(X, y, t)


@pytest.mark.parametrize("fit_ids, new_ids", [(str, int), (int, str)])
def test_task_ids_of_the_other_kind_say_so(fit_ids, new_ids):
    # fitted on task ids '0', '1', '2' (read from a text column), asked to
    # predict tasks 0, 1, 2: the message listed them as unseen, though they
    # look exactly like the fitted ones
    X, y, t = _tasks_data()
    est = MultitaskMKLRegressor(kernels=["linear"]).fit(X, y, t.astype(fit_ids))
    kind = "text" if fit_ids is str else "numbers"
    with pytest.raises(ValueError, match=rf"unseen in fit: .*task ids are {kind}"):
        est.predict(X, t.astype(new_ids))


@pytest.mark.parametrize("name", ["LowRankKernelRegressor", "LowRankKernelClassifier"])
def test_low_rank_precomputed_test_kernel_of_the_wrong_shape_names_the_training_samples(
        name):
    # "X has 7 features, but LowRankKernelRegressor is expecting 60 features"
    # for a transposed K(X_new, X_train): the columns are training samples
    import kernlearn

    X, y, _ = _tasks_data()
    X_new = X[:7] + 0.1
    est = getattr(kernlearn, name)(kernel="precomputed", random_state=0)
    est.fit(rbf_kernel(X, X, gamma=0.3), (y > np.median(y)).astype(int))
    K_new = rbf_kernel(X_new, X, gamma=0.3)
    assert est.predict(K_new).shape == (7,)
    for bad in (K_new.T, K_new[:, :-1]):
        with pytest.raises(ValueError, match=r"K\(X_new, X_train\) of shape \(n_new, 60\)"
                           r": one column per training sample; got shape"):
            est.predict(bad)


def _indefinite(A, B):
    """``1 - |x - y| / 2``: a unit diagonal, but no kernel (eigenvalues < 0)."""
    d2 = (A ** 2).sum(1)[:, None] + (B ** 2).sum(1)[None, :] - 2 * A @ B.T
    return 1.0 - 0.5 * np.sqrt(np.maximum(d2, 0.0))


@pytest.mark.parametrize("make", [
    lambda: MultitaskMKLRegressor([_indefinite, "linear"]),
    lambda: MultitaskMKLRegressor([_indefinite, "linear"], formulation="mkl"),
    lambda: MultitaskMKLRegressor([_indefinite, "linear"], formulation="independent"),
    lambda: MultitaskMKLClassifier([_indefinite, "linear"]),
], ids=["mtfl", "mkl", "independent", "classifier"])
def test_multitask_indefinite_kernel_callable_is_refused(make):
    # PNormMKLClassifier refuses it; the multitask estimators checked its
    # diagonal only and learned a weight of 0.89 for it (MK-MTSFL's
    # eigendecomposition refused it, with no kernel named)
    X, y, t = _tasks_data()
    est = make()
    if isinstance(est, MultitaskMKLClassifier):
        y = (y > np.median(y)).astype(int)
    with pytest.raises(ValueError, match=r"kernel callable kernels\[0\] is not positive "
                       "semi-definite"):
        est.fit(X, y, t)


@pytest.mark.parametrize("name", ["LowRankKernelRegressor", "LowRankKernelClassifier"])
def test_low_rank_indefinite_kernel_callable_is_refused(name):
    # the same matrix given as kernel="precomputed" is refused; as a callable
    # its positive diagonal passed and a model was fitted
    import kernlearn

    X, y, _ = _tasks_data()
    est = getattr(kernlearn, name)(kernel=_indefinite, random_state=0)
    with pytest.raises(ValueError, match="kernel callable _indefinite is not positive "
                       "semi-definite"):
        est.fit(X, (y > np.median(y)).astype(int))
    with pytest.raises(ValueError, match="not positive semi-definite"):
        getattr(kernlearn, name)(kernel="precomputed").fit(
            _indefinite(X, X), (y > np.median(y)).astype(int))


@pytest.mark.parametrize("ids", [[3, 10, 42], [0.5, 1.5, 2.5], [True, False, True]],
                         ids=["int", "float", "bool"])
def test_model_file_of_task_ids_from_an_object_column(ids, tmp_path):
    # task ids of a pandas object column holding numbers: fit and predict
    # worked, save_model refused "state.tasks_: arrays of dtype object are
    # not allowed" (object arrays of strings were already stored)
    from kernlearn.io import load_model, save_model

    X, y, t = _tasks_data()
    t = np.array([ids[v] for v in t], dtype=object)
    est = MultitaskMKLRegressor(kernels=["linear"]).fit(X, y, t)
    save_model(est, tmp_path / "m.klm")
    back = load_model(tmp_path / "m.klm")
    assert back.tasks_.dtype == object
    assert [type(v) for v in back.tasks_] == [type(v) for v in est.tasks_]
    np.testing.assert_array_equal(back.predict(X, t), est.predict(X, t))


@pytest.mark.parametrize("name", ["PNormMKLClassifier", "MultitaskMKLRegressor"])
def test_a_kernel_view_listing_a_column_twice_is_refused(name):
    # ("rbf", {"gamma": 0.5}, [0, 0]) silently counted column 0 twice (an
    # RBF of doubled width on it); FGM's groups refuse a repeated feature
    import kernlearn

    X, y, t = _tasks_data()
    est = getattr(kernlearn, name)(kernels=[("rbf", {"gamma": 0.5}, [0, 2, 0]), "linear"])
    kw = {"task_index": t} if name.startswith("Multitask") else {}
    with pytest.raises(ValueError, match=r"kernels\[0\]: column index 0 is listed twice"):
        est.fit(X, (y > np.median(y)).astype(int), **kw)


def test_one_kernel_spec_not_in_a_list_says_how_to_write_it():
    # kernels=("rbf", {"gamma": 0.5}) is a list of two specs, the second a
    # dict: the message named kernels[1] and not the missing brackets
    X, y, t = _tasks_data()
    with pytest.raises(TypeError, match=r"One kernel is a list of one spec: "
                       r"kernels=\[\(kernel, params\)\]"):
        MultitaskMKLRegressor(kernels=("rbf", {"gamma": 0.5})).fit(X, y, t)


def test_a_task_left_one_row_of_positive_weight_says_so():
    # task 7 has three rows, two of zero weight: "task(s) [7] have one" named
    # a count the caller's data does not show
    X, y, t = _tasks_data()
    t[:3] = 7
    sw = np.ones(len(y))
    sw[:2] = 0.0
    with pytest.raises(ValueError, match=r"at least 2 samples of positive weight; "
                       r"task\(s\) \[7\] have one"):
        MultitaskMKLRegressor(kernels=["linear"]).fit(X, y, t, sample_weight=sw)


def test_mean_width_leaves_out_rows_of_zero_weight():
    # rows of zero weight are removed rows everywhere else; gamma="mean" (the
    # inverse mean squared distance) still counted them, so two outlying
    # rows given zero weight moved the width and the model (0.28 in the
    # decision values) against the fit without them
    from kernlearn import PNormMKLClassifier

    X, y, _ = _tasks_data(80, seed=3)
    X[[3, 10]] *= 50
    yb = (y > np.median(y)).astype(int)
    sw = np.ones(len(y))
    sw[[3, 10]] = 0.0
    keep = sw > 0
    kw = {"kernels": [("rbf", {"gamma": "mean"}), "linear"], "random_state": 0}
    a = PNormMKLClassifier(**kw).fit(X, yb, sample_weight=sw)
    b = PNormMKLClassifier(**kw).fit(X[keep], yb[keep])
    assert a.kernel_params_[0]["gamma"] == pytest.approx(b.kernel_params_[0]["gamma"],
                                                         rel=1e-12)
    X_new = X[keep][:9] + 0.1
    np.testing.assert_allclose(a.decision_function(X_new), b.decision_function(X_new),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["PNormMKLClassifier", "MultitaskMKLRegressor"])
def test_a_kernel_callable_returning_a_sparse_matrix_is_named(name):
    # np.asarray of a sparse matrix is a 0-d object array: the message said
    # the callable "returned shape ()"
    import scipy.sparse as sp

    import kernlearn

    X, y, t = _tasks_data()
    est = getattr(kernlearn, name)(kernels=[lambda A, B: sp.csr_matrix(A @ B.T)])
    kw = {"task_index": t} if name.startswith("Multitask") else {}
    with pytest.raises(ValueError, match="returned a sparse matrix .* must return a dense "
                       "array"):
        est.fit(X, (y > np.median(y)).astype(int), **kw)


def test_precomputed_inside_a_kernel_list_says_how_to_write_it():
    X, y, t = _tasks_data()
    with pytest.raises(ValueError, match="precomputed kernels are kernels='precomputed', "
                       "not in a list"):
        MultitaskMKLRegressor(kernels=["precomputed"]).fit(X, y, t)
