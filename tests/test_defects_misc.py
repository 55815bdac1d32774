"""Regression tests for defects of issue 23 fixed outside the method modules."""

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import (FGMRegressor, LowRankKernelClassifier, MultitaskMKLRegressor,
                       PNormMKLClassifier)


def _duplicated(X):
    """The same matrix as CSR with every stored entry split into two halves."""
    coo = sp.coo_matrix(X)
    rows = np.concatenate([coo.row, coo.row])
    cols = np.concatenate([coo.col, coo.col])
    vals = np.concatenate([coo.data / 2, coo.data / 2])
    A = sp.csr_matrix((vals, (rows, cols)), shape=X.shape)
    A = sp.csr_matrix((A.data, A.indices, A.indptr), shape=X.shape)
    if A.has_canonical_format:  # scipy summed them: build the raw arrays by hand
        order = np.lexsort((cols, rows))
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=X.shape[0]))])
        A = sp.csr_matrix((vals[order], cols[order], indptr), shape=X.shape)
    return A


def test_unsummed_duplicate_entries_give_the_canonical_model():
    rng = np.random.default_rng(0)
    X = sp.random(80, 12, density=0.4, random_state=1, format="csr")
    y = X @ rng.standard_normal(12) + 0.1 * rng.standard_normal(80)
    D = _duplicated(X)
    assert not D.has_canonical_format and D.nnz == 2 * X.nnz
    a = FGMRegressor(B=3).fit(X, y).predict(X)
    b = FGMRegressor(B=3).fit(D, y).predict(D)
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    labels = (y > np.median(y)).astype(int)
    c = LowRankKernelClassifier(n_columns=20, random_state=0).fit(X, labels)
    d = LowRankKernelClassifier(n_columns=20, random_state=0).fit(D, labels)
    np.testing.assert_allclose(c.decision_function(X), d.decision_function(D), rtol=1e-8)
    assert D.nnz == 2 * X.nnz  # the caller's matrix is not changed


def test_multitask_grams_of_different_sizes_are_named():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    K = X @ X.T
    # (the training matrices' check is PNormMKLClassifier's: same message)
    with pytest.raises(ValueError, match=r"mismatched sizes: X\[0\] is 40 x 40, X\[1\] "
                       r"is 30 x 30"):
        MultitaskMKLRegressor(kernels="precomputed").fit([K, K[:30, :30]], X[:, 0],
                                                        task_index=np.repeat([0, 1], 20))


def test_unseen_text_task_ids_are_listed_plainly():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    tasks = np.array(["a"] * 20 + ["b"] * 20)
    m = MultitaskMKLRegressor(kernels=["linear"]).fit(X, X[:, 0], task_index=tasks)
    with pytest.raises(ValueError, match=r"unseen in fit: \['zz'\]\.$"):
        m.predict(X[:2], task_index=np.array(["a", "zz"]))


def test_fgm_refit_uses_its_own_C():
    # paper 002 sec. 6.2.2 de-biases with C = 20: refit_C is that C (20 by default
    # for the classifier), None reuses FGM's C
    from sklearn.datasets import make_classification

    from kernlearn import FGMClassifier

    X, y = make_classification(200, 30, n_informative=5, random_state=0)
    assert FGMClassifier().refit_C == 20.0
    same = FGMClassifier(B=3, C=0.05, refit=True, refit_C=None).fit(X, y)
    explicit = FGMClassifier(B=3, C=0.05, refit=True, refit_C=0.05).fit(X, y)
    paper = FGMClassifier(B=3, C=0.05, refit=True).fit(X, y)
    np.testing.assert_array_equal(same.selected_features_, paper.selected_features_)
    np.testing.assert_allclose(same.coef_, explicit.coef_)
    assert not np.allclose(same.coef_, paper.coef_, rtol=1e-3)



@pytest.mark.parametrize("Est", [PNormMKLClassifier, MultitaskMKLRegressor])
def test_negative_kernel_column_index_is_refused(Est):
    # issue 23 item 12: ("linear", {}, [-1]) took the last column without a word
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    y = (X[:, 0] > 0).astype(int)
    kw = {"task_index": np.arange(30) % 2} if Est is MultitaskMKLRegressor else {}
    with pytest.raises(ValueError, match=r"kernels\[1\]: column index -1 is negative"):
        Est(kernels=[("rbf", {}, [0, 1]), ("linear", {}, [2, -1])]).fit(X, y, **kw)


@pytest.mark.parametrize("sparse", [False, True])
def test_columns_near_1e_300_keep_their_spread(sparse):
    # the squares of values near 1e-300 underflow: such columns (and targets)
    # passed for constant and every estimator silently dropped them
    from kernlearn.preprocessing import fit_standardization, fit_target_standardization

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 3))
    X[:, 2] = 3.0  # a constant column stays constant at any scale
    ref = fit_standardization(sp.csr_matrix(X) if sparse else X)
    for s in (1e-300, 1e-200, 1e-160):
        tiny = fit_standardization(sp.csr_matrix(X * s) if sparse else X * s)
        np.testing.assert_allclose(tiny.scale[:2] / s, ref.scale[:2], rtol=1e-12)
        assert tiny.scale[2] == np.inf  # constant: ignored
        np.testing.assert_allclose(fit_target_standardization(X[:, 0] * s).scale / s,
                                   fit_target_standardization(X[:, 0]).scale, rtol=1e-12)


def test_an_estimator_on_tiny_inputs_and_targets_gives_the_same_model():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 4))
    y = X[:, 0] - X[:, 2]
    ref = FGMRegressor(B=2).fit(X, y).predict(X)
    np.testing.assert_allclose(FGMRegressor(B=2).fit(X * 1e-300, y).predict(X * 1e-300),
                               ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(FGMRegressor(B=2).fit(X, y * 1e-300).predict(X) / 1e-300,
                               ref, rtol=1e-8, atol=1e-10)


def test_multitask_refuses_overflowing_inputs_and_targets_and_reads_tiny_ones():
    # X * 1e300 gave a wrong model and y * 1e300 all-zero predictions, each
    # with numpy overflow warnings only; X * 1e-300 a wrong model silently
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = X[:, 0] - X[:, 2]
    t = np.arange(60) % 2
    with pytest.raises(ValueError, match="X column.*too large to standardise"):
        MultitaskMKLRegressor(kernels=["linear", "rbf"]).fit(X * 1e300, y, task_index=t)
    with pytest.raises(ValueError, match="y is too large to standardise"):
        MultitaskMKLRegressor(kernels=["linear"]).fit(X, y * 1e300, task_index=t)
    ref = MultitaskMKLRegressor(kernels=["linear", "rbf"]).fit(X, y, task_index=t)
    tiny = MultitaskMKLRegressor(kernels=["linear", "rbf"]).fit(X * 1e-300, y, task_index=t)
    np.testing.assert_allclose(tiny.predict(X * 1e-300, task_index=t),
                               ref.predict(X, task_index=t), rtol=1e-6, atol=1e-8)


def test_grfl_max_features_far_above_the_path_is_not_a_memory_error():
    # issue 23 item 11: max_features=10**9 preallocated an n x 10**9 buffer
    # (MemoryError naming no parameter); it is an iteration cap, so the path
    # stops when no candidate violates, with the model of a small budget
    from kernlearn import InfiniteFeatureClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    kw = {"n_candidates": 5, "random_state": 0}
    big = InfiniteFeatureClassifier(max_features=10**9, **kw).fit(X, y)
    assert big.stop_reason_ == "no_violation"
    ref = InfiniteFeatureClassifier(max_features=1000, **kw).fit(X, y)
    assert ref.stop_reason_ == "no_violation"
    np.testing.assert_array_equal(big.decision_function(X), ref.decision_function(X))


@pytest.mark.parametrize("weight", [-1.0, float("nan"), float("inf"), "2"])
def test_class_weight_must_be_non_negative_and_finite(weight):
    # {1: -1} was fitted: a chance-level model with a solver warning only
    from kernlearn import FGMClassifier, InfiniteFeatureClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    for est in (FGMClassifier(class_weight={1: weight}),
                InfiniteFeatureClassifier(class_weight={1: weight}, max_features=2),
                PNormMKLClassifier(class_weight={1: weight}),
                LowRankKernelClassifier(class_weight={1: weight})):
        with pytest.raises(ValueError, match="class 1 has"):
            est.fit(X, y)


@pytest.mark.parametrize("s", [1e300, 1e-300])
def test_multitask_precomputed_grams_on_any_scale_give_the_same_model(s):
    # issue 23 item 12: Grams scaled by 1e300 gave chance level
    from kernlearn import MultitaskMKLClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    t = np.arange(60) % 2
    grams = [X @ X.T, np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 3)]
    scaled = [s * K for K in grams]

    def scores(G):
        est = MultitaskMKLClassifier(kernels="precomputed").fit(G, y, task_index=t)
        return est.decision_function(G, task_index=t)

    ref = scores(grams)
    assert np.mean((ref > 0) == y) > 0.9
    np.testing.assert_allclose(scores(scaled), ref, atol=1e-10)


@pytest.mark.parametrize("sw, match", [(np.ones(3), "inconsistent|shape"),
                                       (-np.ones(40), "(?i)negative")])
def test_multitask_cv_checks_sample_weight_before_the_folds(sw, match):
    # a weight vector of the wrong length was an IndexError from the folds
    from kernlearn import MultitaskMKLRegressorCV

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    with pytest.raises(ValueError, match=match):
        MultitaskMKLRegressorCV().fit(X, X[:, 0], task_index=np.arange(40) % 2,
                                      sample_weight=sw)


def test_out_of_core_standardisation_refuses_columns_it_cannot_measure():
    # block moments of values near 1e-300 underflow: the out-of-core fit took
    # such columns for constant (in memory their spread is recomputed)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 20))
    y = X[:, 2] - X[:, 7]
    with pytest.raises(ValueError, match=r"X column\(s\) \[0, 1, 2, 3, 4\] have values "
                                         "too small to standardise block by block"):
        FGMRegressor(B=2, memory_budget="2KB").fit(X * 1e-300, y)
    a = FGMRegressor(B=2, memory_budget="2KB", C=1.0).fit(X, y).predict(X)
    np.testing.assert_allclose(FGMRegressor(B=2, C=1.0).fit(X, y).predict(X), a, rtol=1e-6,
                               atol=1e-8)
