"""Each warning a user's call gives is located at that call, in the user's file.

A fixed ``stacklevel`` counts frames from the line that warns, and what sits
between it and the user differs with the estimator, with scikit-learn's fit
decorator and with a pipeline or a search around the estimator: the counts
named ``sklearn/base.py``, ``sklearn/pipeline.py`` or kernlearn's own files, and
a search's fits ``joblib/parallel.py``.  Every warning now takes the first frame
outside kernlearn, scikit-learn and joblib (``stacklevel="user"``,
``user_stacklevel()``).  Each case below failed before.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import pairwise
from sklearn.pipeline import make_pipeline

import kernlearn


def _said(call, words):
    """The warnings whose message holds ``words`` that ``call()`` gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    said = [w for w in caught if words in str(w.message)]
    assert said, [str(w.message) for w in caught]
    return said


def _check(make, X, y, words, fit_kw=None, pipeline=True):
    """Fit ``make()`` (and, with ``pipeline``, it in a Pipeline) and check where
    each warning holding ``words`` is located: this file."""
    fit_kw = fit_kw or {}
    said = _said(lambda: make().fit(X, y, **fit_kw), words)
    if pipeline:
        step = type(make()).__name__.lower()
        said += _said(lambda: make_pipeline(make()).fit(
            X, y, **{f"{step}__{k}": v for k, v in fit_kw.items()}), words)
    # (the old code: sklearn/base.py, sklearn/pipeline.py or kernlearn's own files)
    assert {w.filename for w in said} == {__file__}, [(w.filename, w.lineno) for w in said]


def _binary(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


def _regression(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.standard_normal(n)


# ------------------------------------------------ renamed and unused parameters
def test_renamed_parameter_warning():
    # estimators/_renamed.py (stacklevel=3)
    X, y = _binary()
    _check(lambda: kernlearn.FGMClassifier(max_outer_iter=3), X, y,
           "'max_outer_iter' was renamed 'max_iter'")


@pytest.mark.parametrize("kw, words", [
    ({"tol": 1e-2}, "is the outer loop's tolerance since 0.2"),
    ({"eps": 1e-2, "tol": 0.05}, "with the deprecated 'eps'"),
])
def test_infinite_tol_and_eps_warnings(kw, words):
    # estimators/infinite.py (stacklevel=4, twice)
    X, y = _binary()
    _check(lambda: kernlearn.InfiniteFeatureClassifier(n_candidates=10, random_state=0,
                                                       **kw), X, y, words)


def test_unused_parameter_warning():
    # estimators/_renamed.py (stacklevel=3)
    X, y = _regression()
    t = np.arange(60) % 2
    _check(lambda: kernlearn.MultitaskMKLRegressor(p=4.0, max_iter=1, tol=0.5, C="auto"),
           X, y, "not used with", fit_kw={"task_index": t})


# --------------------------------------------------------- convergence warnings
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("kw, words", [
    ({}, "outer iterations"),
    # the inner fits' summary (estimators/_renamed.py: 3)
    ({"probability": True}, "convergence warning(s) in the 5 "),
])
def test_fgm_outer_loop_and_platt_summary(kw, words):
    # methods/fgm.py (default 1: fgm.py itself)
    X, y = _binary()
    _check(lambda: kernlearn.FGMClassifier(B=1, max_iter=1, **kw), X, y, words)


def test_obscure_max_iter_warning():
    # methods/obscure.py (default 1)
    X, y = _binary()
    _check(lambda: kernlearn.PNormMKLClassifier(max_iter=1, tol=1e-12), X, y,
           "OBSCURE ran max_iter=1")


def test_fgm_refit_master_warning():
    # methods/_fgm_refit.py (stacklevel=4)
    X, y = _binary()
    _check(lambda: kernlearn.FGMClassifier(refit=True, inner_max_iter=1), X, y,
           "de-biasing refit's master stopped")


def test_lowrank_max_iter_warning():
    # methods/slkl.py (stacklevel=3)
    X, y = _regression()
    _check(lambda: kernlearn.LowRankKernelRegressor(max_iter=1, random_state=0), X, y,
           "stopped after max_iter=1")


def test_grfl_master_warning():
    # methods/_grfl_master.py (default 1)
    X, y = _binary()
    _check(lambda: kernlearn.InfiniteFeatureClassifier(inner_max_iter=1, n_candidates=10,
                                                       random_state=0),
           X, y, "GrFL's master stopped")


def test_multitask_max_iter_warning():
    # methods/mtmkl/fit.py (default 1)
    X, y = _regression()
    t = np.arange(60) % 2
    _check(lambda: kernlearn.MultitaskMKLRegressor(max_iter=1, tol=0), X, y,
           "stopped after max_iter=1", fit_kw={"task_index": t})


# --------------------------------------------------------------- data warnings
def test_lowrank_n_columns_clamp_warning():
    # methods/slkl.py (no stacklevel: slkl.py itself)
    X, y = _regression(30)
    _check(lambda: kernlearn.LowRankKernelRegressor(n_columns=40, random_state=0), X, y,
           "n_columns=40 > n_samples=30")


@pytest.mark.parametrize("column, words", [
    (lambda c: c + 1.6e9, "columns' means differ"),
    (lambda c: c * 1e3, "of the variance"),
])
def test_width_warnings(column, words):
    # widths.py (stacklevel=3, twice)
    X, y = _regression(80)
    X[:, 2] = column(X[:, 2])
    _check(lambda: kernlearn.LowRankKernelRegressor(standardize=False, random_state=0),
           X, y, words)


def test_hik_negative_values_warning():
    # kernels.py (stacklevel=2)
    rng = np.random.default_rng(1)
    X = rng.poisson(3.0, size=(60, 4)).astype(float) - 3.0  # (hik: scaled, not centred)
    y = (X[:, 0] > X[:, 1]).astype(int)
    _check(lambda: kernlearn.PNormMKLClassifier(kernels=["linear", "hik"]), X, y,
           "hik compares their absolute values")


def test_uncentred_callable_kernel_warning():
    # _callable_kernels.py (stacklevel=3)
    X, y = _regression()
    X[:, 0] += 3.0
    _check(lambda: kernlearn.LowRankKernelRegressor(kernel=pairwise.polynomial_kernel,
                                                    random_state=0),
           sp.csr_matrix(X), y, "kernel callable sees the sparse X's columns")


def test_features_in_no_group_warning():
    # families/pool.py (stacklevel=2)
    X, y = _binary(40, 5)
    _check(lambda: kernlearn.FGMClassifier(groups=[[0, 1], [2]]), X, y,
           "2 of 5 features are in no group")


def test_fgm_auto_c_out_of_core_warning():
    # estimators/fgm.py (stacklevel=3)
    X, y = _regression()
    _check(lambda: kernlearn.FGMRegressor(C="auto", memory_budget="64MB"), X, y,
           'C="auto" (cross-validation) runs in memory only')


def test_grfl_single_model_warning():
    # methods/_grfl_average.py (stacklevel=3); 350 rows: the held-out choice
    from sklearn.datasets import make_regression

    X, y = make_regression(350, n_features=4, noise=5.0, random_state=3)
    _check(lambda: kernlearn.InfiniteFeatureRegressor(n_candidates=20, random_state=0,
                                                      n_paths=2),
           X, y + 0.02 * y ** 2, "n_paths=2 was not used", pipeline=False)


def test_grfl_small_task_warning():
    # methods/_grfl_select.py (stacklevel=4)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    t = np.arange(200) % 2
    y = np.sin(2 * X[:, 0]) * (1 + t / 2) + 0.2 * rng.standard_normal(200)
    t[:4] = 2
    _check(lambda: kernlearn.InfiniteFeatureRegressor(random_state=0), X, y,
           "a task of 4 rows cannot give 5 folds", fit_kw={"task_index": t},
           pipeline=False)


def test_lowrank_auto_nu_path_breakdown_warning(monkeypatch):
    # methods/slkl.py (stacklevel=3): the Woodbury updates breaking down along
    # nu="auto"'s path (made to, at its third value, as test_slkl_auto_nu does)
    import kernlearn.methods.slkl as slkl
    from kernlearn.methods._slkl_state import SLKLBreakdown

    original, calls = slkl.slkl_problem, []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) % 3 == 0:
            raise SLKLBreakdown("SLKL's coordinate updates broke down (test): nu is too small")
        return original(*args, **kwargs)

    monkeypatch.setattr(slkl, "slkl_problem", failing)
    X, y = _regression()
    _check(lambda: kernlearn.LowRankKernelRegressor(nu="auto", random_state=0), X, y,
           "nu='auto': the path stopped")


@pytest.mark.parametrize("make, words", [
    # warn(): estimators/_renamed.py
    (lambda: kernlearn.FGMClassifier(max_outer_iter=3), "'max_outer_iter' was renamed"),
    # warnings.warn: families/pool.py
    (lambda: kernlearn.FGMClassifier(groups=[[0, 1], [2]]), "2 of 5 features are in no group"),
])
def test_warnings_of_a_searchs_fits(make, words):
    # a search fits under joblib's Parallel: the first frame outside kernlearn
    # and scikit-learn was joblib/parallel.py's (the search's refit alone, on
    # all rows, named the user's file)
    from sklearn.model_selection import GridSearchCV

    X, y = _binary(40, 5)
    said = _said(lambda: GridSearchCV(make(), {"C": [1.0]}, cv=2).fit(X, y), words)
    assert len(said) == 3  # two folds and the refit
    assert {w.filename for w in said} == {__file__}, [(w.filename, w.lineno) for w in said]
