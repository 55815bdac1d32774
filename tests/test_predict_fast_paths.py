"""Predict-time fast paths give the general paths' numbers and errors.

Plain float arrays skip scikit-learn's ``validate_data`` at predict time
(``plain_predict_data``), the RBF blocks of the low-rank models skip
``rbf_kernel``'s checks (``_rbf_float64``) and ``KernelList.cross``
slices instead of indexing all training rows.  Each must change nothing but
the time: the same bits as the path it short-cuts, and the same errors and
warnings on input that path would refuse.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import kernlearn
from kernlearn.families.nystrom import _rbf_float64, kernel_block
from kernlearn.kernels import KernelList, rbf_kernel

ESTIMATORS = [
    ("FGMClassifier", {}),
    ("FGMRegressor", {"C": 1.0}),
    ("PNormMKLClassifier", {"random_state": 0}),
    ("InfiniteFeatureRegressor", {"random_state": 0, "n_paths": 1}),
    ("LowRankKernelClassifier", {"random_state": 0}),
    ("LowRankKernelRegressor", {"random_state": 0}),
]


def _data(classifier, n=80, d=5):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int) if classifier else X @ rng.normal(size=d)
    return X, y


def _fitted(name, params):
    est = getattr(kernlearn, name)(**params)
    X, y = _data("Classifier" in name)
    return est.fit(X, y), X


@pytest.mark.parametrize("name,params", ESTIMATORS)
def test_plain_arrays_predict_as_other_containers(name, params):
    est, X = _fitted(name, params)
    Xt = np.random.default_rng(1).normal(size=(9, X.shape[1]))
    methods = [m for m in ("predict", "decision_function") if hasattr(est, m)]
    for m in methods:
        fast = getattr(est, m)(Xt)
        # a list and a Fortran-ordered copy go through validate_data
        np.testing.assert_array_equal(fast, getattr(est, m)(Xt.tolist()))
        np.testing.assert_array_equal(fast, getattr(est, m)(np.asfortranarray(Xt)))


@pytest.mark.parametrize("name,params", ESTIMATORS)
def test_plain_arrays_keep_the_errors_of_validation(name, params):
    est, X = _fitted(name, params)
    bad = X[:3].copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="row 1"):
        est.predict(bad)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:3, :-1])


@pytest.mark.parametrize("name,params", ESTIMATORS[:2] + ESTIMATORS[-1:])
def test_model_fitted_on_a_dataframe_still_warns_on_an_array(name, params):
    est = getattr(kernlearn, name)(**params)
    X, y = _data("Classifier" in name)
    est.fit(pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])]), y)
    with pytest.warns(UserWarning, match="feature names"):
        est.predict(X[:2])


def test_rbf_fast_block_is_rbf_kernel_bit_for_bit():
    rng = np.random.default_rng(2)
    for n, m in [(1, 40), (13, 7), (300, 50)]:
        A, B = rng.normal(size=(n, 6)), rng.normal(size=(m, 6)) * 3
        for gamma in (0.01, 0.2, 2.0):
            np.testing.assert_array_equal(_rbf_float64(A, B, gamma), rbf_kernel(A, B, gamma))
            Af = np.asfortranarray(A)
            np.testing.assert_array_equal(kernel_block(Af, B, "rbf", {"gamma": gamma}),
                                          rbf_kernel(Af, B, gamma))
    # what the fast path does not cover still reaches rbf_kernel's checks
    with pytest.raises(ValueError, match="gamma must be positive"):
        kernel_block(A, B, "rbf", {"gamma": -1.0})


def test_cross_without_support_is_cross_on_all_rows():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 4))
    kl = KernelList(["rbf", "linear", "poly"]).fit(X)
    T = rng.normal(size=(5, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(kl.cross(T), kl.cross(T, support=np.arange(30)))
    np.testing.assert_array_equal(kl.cross(T, support=[3, 1])[:, :, 0],
                                  kl.cross(T)[:, :, 3])


def test_multitask_plain_arrays_predict_as_lists_and_keep_errors():
    X, y = _data(False, n=60)
    tasks = np.arange(60) % 2
    est = kernlearn.MultitaskMKLRegressor().fit(X, y, task_index=tasks)
    Xt = np.random.default_rng(5).normal(size=(6, X.shape[1]))
    np.testing.assert_array_equal(est.predict(Xt, task_index=tasks[:6]),
                                  est.predict(Xt.tolist(), task_index=tasks[:6]))
    bad = Xt.copy()
    bad[2, 0] = np.inf
    with pytest.raises(ValueError, match="row 2"):
        est.predict(bad, task_index=tasks[:6])


def test_first_argmax_is_argmax_on_scores_stored_by_output():
    # FGM's scores are stored one output after another (Fortran-ordered):
    # the labels read them by column; ties, infinities and NaN as argmax
    from kernlearn.estimators._decisions import first_argmax

    rng = np.random.default_rng(0)
    for K in (2, 3, 5, 9):
        D = rng.integers(-2, 3, size=(K, 12_000)).astype(float).T  # (many ties)
        D[rng.random(D.shape) < 0.02] = np.inf
        D[rng.random(D.shape) < 0.02] = -np.inf
        assert not D.flags.c_contiguous and D.T.flags.c_contiguous
        np.testing.assert_array_equal(first_argmax(D), np.argmax(D, axis=1))
        D[rng.random(D.shape) < 0.01] = np.nan
        np.testing.assert_array_equal(first_argmax(D), np.argmax(D, axis=1))
        C = np.ascontiguousarray(D)
        np.testing.assert_array_equal(first_argmax(C), np.argmax(C, axis=1))


def _sums_in_column_order(X, coef, intercept):
    # each output's products added one weighted column after another, then its
    # intercept (NumPy's elementwise products and sums: no fused multiply-add)
    acc = np.zeros((X.shape[0], coef.shape[0]))
    for j in np.flatnonzero(coef.any(axis=0)):
        acc = acc + X[:, j:j + 1].astype(float) * coef[:, j]
    return acc + intercept


def test_fgm_multiclass_scores_as_one_product_per_output():
    # the compiled multiclass scores are the sums in column order bit for bit,
    # within the last bits of the einsum dot products they replaced (one call per
    # output), the labels those of argmax, and decision_function stays C-ordered
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 12)) * 10 ** rng.uniform(-2, 2, 12)
    y = rng.integers(0, 5, 300)
    est = kernlearn.FGMClassifier(C=10.0, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    Xt = rng.normal(size=(1000, 12)) * 10 ** rng.uniform(-2, 2, 12)
    scores = est.decision_function(Xt)
    assert scores.shape == (1000, 5) and scores.flags.c_contiguous
    np.testing.assert_array_equal(scores, _sums_in_column_order(Xt, est.coef_, est.intercept_))
    sel = np.flatnonzero(est.coef_.any(axis=0))
    whole = 2 * sel.size >= X.shape[1]
    cols = Xt if whole else np.ascontiguousarray(Xt[:, sel])
    per_output = np.stack([np.einsum("ij,j->i", cols, w)
                           for w in (est.coef_ if whole else est.coef_[:, sel])], axis=1)
    # (relative 1e-12, or 1e-12 of the row's largest product where the sum cancels)
    scale = np.abs(Xt) @ np.abs(est.coef_).T
    assert np.all(np.abs(scores - per_output - est.intercept_) <= 1e-12 * scale)
    np.testing.assert_array_equal(est.predict(Xt), est.classes_[np.argmax(scores, axis=1)])


@pytest.mark.parametrize("weights", [[0.5, 0.2, 0.3], [0.0, 0.7, 0.3]])
def test_kernel_expansion_scores_as_one_product_per_kernel(weights):
    # one batched product over the kernels (all, or the weighted ones) sums
    # the bits of one product per kernel, in the kernels' order
    from kernlearn.methods._decisions import decision_values

    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 4))
    kl = KernelList(["rbf", ("rbf", {"gamma": 2.0}), "linear"]).fit(X)
    w, dual = np.array(weights), rng.normal(size=(3, 40))
    for n in (1, 7, 300):
        T = rng.normal(size=(n, 4))
        K = kl.cross(T, which=np.flatnonzero(w > 0))
        ref = np.zeros((n, 3))
        for j in np.flatnonzero(w > 0):
            ref += w[j] * (K[j] @ dual.T)
        np.testing.assert_array_equal(decision_values(kl, w, dual, np.arange(40), T), ref)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F", "strided"])
def test_fgm_multiclass_scores_of_a_row_are_its_own(dtype, order):
    # every row predicted alone gives the bits it gets in a batch of any size
    # (blocks of the compiled kernel, its vectorised and remaining rows), in
    # every layout and input type; some columns unweighted, one weighted by
    # one class only
    from kernlearn.partitioned import selected_linear_scores

    rng = np.random.default_rng(7)
    coef = rng.normal(size=(4, 9)) * 10 ** rng.uniform(-3, 3, 9)
    coef[:, [1, 5]] = 0.0
    coef[1:, 7] = 0.0
    b = rng.normal(size=4)
    X = (rng.normal(size=(1001, 18)) * 10 ** rng.uniform(-3, 3, 18)).astype(dtype)
    X = X[:, ::2] if order == "strided" else np.asarray(X[:, :9], order=order)
    full = selected_linear_scores(X, coef, b)
    np.testing.assert_array_equal(full, _sums_in_column_order(X, coef, b))
    for n in (1, 3, 63, 65, 129, 1001):
        for i0 in (0, 1001 - n):
            block = selected_linear_scores(np.asarray(X[i0:i0 + n], order="K"), coef, b)
            np.testing.assert_array_equal(block, full[i0:i0 + n])
    for i in rng.choice(1001, 25, replace=False):
        np.testing.assert_array_equal(selected_linear_scores(X[i:i + 1], coef, b),
                                      full[i:i + 1])


def test_first_argmax_is_argmax_on_few_rows():
    # compiled for every number of rows (blocks of 64 rows: fewer, one more, several)
    from kernlearn.estimators._decisions import first_argmax

    rng = np.random.default_rng(3)
    for n in (1, 2, 63, 64, 65, 200):
        for K in (2, 5):
            D = np.asfortranarray(rng.integers(-1, 2, size=(n, K)).astype(float))
            np.testing.assert_array_equal(first_argmax(D), np.argmax(D, axis=1))
            D[n // 2, K - 1] = np.nan
            np.testing.assert_array_equal(first_argmax(D), np.argmax(D, axis=1))
