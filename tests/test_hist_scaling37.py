"""Histogram kernels under ``standardize=True``: columns scaled, never centred,
on dense and sparse input alike (issue 21, thirty-sixth pass).

Before, dense columns were centred and sparse ones only scaled, so ``hik``
and ``additive_chi2`` saw other numbers on the two sides: on non-negative
dense data ``hik`` warned (``NegativeFeaturesWarning``) and
``additive_chi2`` refused, while the same matrix as CSR fitted silently
another model.
"""

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kernlearn import (LowRankKernelClassifier, LowRankKernelRegressor, MultitaskMKLClassifier,
                       MultitaskMKLRegressor, NegativeFeaturesWarning, PNormMKLClassifier)
from kernlearn.estimators.mtmkl_cv import MultitaskMKLRegressorCV
from kernlearn.io import load_model
from kernlearn.kernels import KernelList, pairwise_kernel
from kernlearn.preprocessing import fit_standardization

OLD_FILES = Path(__file__).parent / "data" / "hist_centred36"
HISTOGRAM = ("hik", "additive_chi2")
TASKS = np.arange(60) % 2


def _counts(n=60, d=5, seed=0):
    """Non-negative counts (zeros included) and targets of three kinds."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(2.0, (n, d)).astype(float)
    y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n)
    return X, y, (y > np.median(y)).astype(int)


# (PNormMKL with a fixed number of epochs, tol=None: its stopping epoch is a duality
# gap crossing 0.05, which round-off of 1e-16 in the kernels can move by one epoch)
ESTIMATORS = {
    "pnorm": (lambda k: PNormMKLClassifier(kernels=[k], tol=None, max_iter=20,
                                           random_state=0), "c", False),
    "lowrank-reg": (lambda k: LowRankKernelRegressor(kernel=k, n_columns=30,
                                                     random_state=0), "y", False),
    "lowrank-clf": (lambda k: LowRankKernelClassifier(kernel=k, n_columns=30,
                                                      random_state=0), "c", False),
    "mtmkl-reg": (lambda k: MultitaskMKLRegressor(kernels=[k], max_iter=10), "y", True),
    "mtmkl-clf": (lambda k: MultitaskMKLClassifier(kernels=[k], max_iter=10), "c", True),
    "mtmkl-cv": (lambda k: MultitaskMKLRegressorCV(kernels=[k]), "y", True),  # (the refit too)
}
# (the leave-one-out search's L-BFGS-B carries round-off of 1e-16 to 1e-8, for every
# kernel: the tolerance of the multitask page's sparse-vs-dense claim)
RTOL = {"mtmkl-cv": 1e-7}


def _fit_out(name, kernel, X, Xnew):
    make, target, tasks = ESTIMATORS[name]
    _, y, c = _counts()
    kw = {"task_index": TASKS} if tasks else {}
    est = make(kernel).fit(X, y if target == "y" else c, **kw)
    kw = {"task_index": TASKS[: Xnew.shape[0]]} if tasks else {}
    return (est.predict(Xnew, **kw) if target == "y" else est.decision_function(Xnew, **kw))


def _close(a, b, rtol=1e-10):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * np.max(np.abs(b)))


@pytest.mark.parametrize("kernel", HISTOGRAM)
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_dense_csr_and_csc_give_the_same_model_without_a_word(name, kernel):
    X, _, _ = _counts()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("error")  # (no NegativeFeaturesWarning, no refusal)
        dense = _fit_out(name, kernel, X, X)
        for fmt in (sp.csr_matrix, sp.csc_matrix):
            _close(_fit_out(name, kernel, fmt(X), fmt(X)), dense, RTOL.get(name, 1e-10))


@pytest.mark.parametrize("kernel", HISTOGRAM)
@pytest.mark.parametrize("name", ["pnorm", "lowrank-reg", "mtmkl-clf"])
def test_positive_column_scales_do_not_change_the_model(name, kernel):
    # the histogram kernels see x / s: a * x / (a * s) for a > 0 per column
    X, _, _ = _counts()
    a = np.geomspace(1e-3, 1e4, X.shape[1])
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("error")
        _close(_fit_out(name, kernel, a * X, a * X), _fit_out(name, kernel, X, X))


def test_a_mixed_list_centres_for_the_other_kernels_only():
    # ["linear", "hik"] on dense columns: the linear kernel sees the centred
    # columns (as it does, implicitly, on sparse ones), hik the scaled ones
    X, _, _ = _counts()
    st = fit_standardization(X)
    Xt, Xs = st.transform(X), X / st.scale
    klist = KernelList(["linear", "hik"], normalize=False).fit(
        Xt, hist_shift=st.mean / st.scale)
    K = klist.rows(np.arange(len(X)))
    Xc = X - X.mean(axis=0)
    _close(K[0], (Xc / st.scale) @ (Xc / st.scale).T, 1e-12)
    _close(K[1], pairwise_kernel(Xs, Xs, "hik"), 1e-12)
    # the model: the same on dense and sparse input, without a warning
    _, _, c = _counts()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("error")
        fits = [PNormMKLClassifier(kernels=["rbf", "linear", "hik"], tol=None, max_iter=20,
                                   random_state=0).fit(Z, c) for Z in (X, sp.csr_matrix(X))]
        assert fits[0].x_mean_ is not None  # (dense: centred for rbf and linear)
        _close(fits[1].decision_function(sp.csr_matrix(X)), fits[0].decision_function(X))


@pytest.mark.parametrize("name", ["pnorm", "lowrank-reg", "mtmkl-reg"])
def test_negative_values_of_the_data_are_still_named(name):
    X, _, _ = _counts()
    X[:, 3] -= 1.0  # (the data's own negative values, column 3)
    with pytest.warns(NegativeFeaturesWarning, match=r"hik sees have negative values \(column 3"):
        _fit_out(name, "hik", X, X)
    with pytest.raises(ValueError, match=r"additive_chi2 sees have negative values \(column 3"):
        _fit_out(name, "additive_chi2", X, X)
    with pytest.raises(ValueError, match=r"additive_chi2 sees have negative values \(column 3"):
        _fit_out(name, "additive_chi2", sp.csr_matrix(X), X)


def test_sparse_rows_predicted_by_a_dense_low_rank_histogram_model():
    # the dense fit no longer centres: sparse rows are mapped as dense ones
    X, y, _ = _counts()
    m = LowRankKernelRegressor(kernel="hik", n_columns=30, random_state=0).fit(X, y)
    assert m.x_mean_ is None
    _close(m.predict(sp.csr_matrix(X)), m.predict(X))


@pytest.mark.parametrize("name", ["pnorm_rbf_hik", "lowrank_hik", "lowrank_clf_hik",
                                  "mtmkl_rbf_hik"])
def test_model_files_of_the_former_code_predict_as_saved(name):
    # files written by the code before this change (tests/data/hist_centred36/make_files.py
    # run on commit 004aa125): their dense columns were centred before hik
    saved = np.load(OLD_FILES / "predictions.npz")
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = load_model(OLD_FILES / f"{name}.npz")
        Xn = saved["Xnew"]
        out = (m.predict(Xn, task_index=np.arange(len(Xn)) % 2) if name.startswith("mtmkl")
               else m.predict(Xn) if name == "lowrank_hik" else m.decision_function(Xn))
    np.testing.assert_array_equal(out, saved[name])
