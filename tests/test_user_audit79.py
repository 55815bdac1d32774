"""Audit 79: the options, randomised (``benchmarks/fuzz_options.py``).

Each test is the minimal reproduction of a defect the option fuzzer found on
main; it fails without its fix.
"""

import numpy as np
import pytest

from kernlearn import PNormMKLClassifier


def _binary(n=60, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    return X, (X[:, 0] + 0.3 * rng.randn(n) > 0).astype(int)


@pytest.mark.parametrize("settings", [dict(pegasos=True), dict(max_iter_online=0)],
                         ids=["pegasos", "no-online-epochs"])
def test_pnorm_no_epoch_of_either_stage_is_refused(settings):
    # max_iter=0 returns stage 1's solution; with no stage 1 either the fit
    # visited no sample and returned an all-zero model (one class predicted)
    # without a word, where online_only=True with the same settings is refused
    X, y = _binary()
    with pytest.raises(ValueError, match=r"max_iter=0 .* no epoch of either stage"):
        PNormMKLClassifier(max_iter=0, random_state=0, **settings).fit(X, y)


def test_pnorm_max_iter_zero_still_returns_stage_one():
    # the documented use of max_iter=0 (stage 1 only) is kept: a model with weight
    X, y = _binary()
    clf = PNormMKLClassifier(max_iter=0, random_state=0).fit(X, y)
    assert np.abs(clf.dual_coef_).sum() > 0
    assert clf.score(X, y) > 0.7


@pytest.mark.parametrize("kernel,params", [("linear", {"gamma": 1.0}),
                                           ("rbf", {"degree": 2})])
def test_lowrank_kernel_params_unknown_to_the_kernel_named(kernel, params):
    # a parameter the named kernel does not take reached the kernel function:
    # a bare TypeError naming it ("linear_kernel() got an unexpected keyword
    # argument 'gamma'"), where the MKL estimators' kernels= say which names it takes
    from kernlearn import LowRankKernelClassifier, LowRankKernelRegressor

    X, y = _binary()
    for est in (LowRankKernelRegressor(kernel=kernel, kernel_params=params),
                LowRankKernelClassifier(kernel=kernel, kernel_params=params)):
        with pytest.raises(ValueError, match=r"kernel_params: unknown parameter\(s\) "
                                             rf"\['{next(iter(params))}'\] for kernel '{kernel}'"):
            est.fit(X, y)


@pytest.fixture
def fuzzer():
    from bench_scripts import load_script

    yield from load_script("fuzz_options")


def test_fuzzer_runs_and_flags_planted_defects(fuzzer, monkeypatch, tmp_path):
    # the script's checks can fail: a bare IndexError out of fit is a crash, a
    # message naming a private name a bad error, a non-finite prediction a defect
    from kernlearn import LowRankKernelRegressor

    assert fuzzer.main(["--cases", "2", "--estimators", "LowRankKernelRegressor"]) == 0
    status, _, _ = fuzzer.run_case("LowRankKernelRegressor", 11, str(tmp_path))
    assert status == "ok"

    def raise_index(self, X, y, sample_weight=None):
        raise IndexError("index 3 is out of bounds")

    monkeypatch.setattr(LowRankKernelRegressor, "fit", raise_index)
    assert fuzzer.run_case("LowRankKernelRegressor", 11, str(tmp_path))[0] == "crash"

    def raise_private(self, X, y, sample_weight=None):
        raise ValueError("_fit_slkl got a bad shape")

    monkeypatch.setattr(LowRankKernelRegressor, "fit", raise_private)
    assert fuzzer.run_case("LowRankKernelRegressor", 11, str(tmp_path))[0] == "bad-error"
    monkeypatch.undo()

    fit = LowRankKernelRegressor.predict
    monkeypatch.setattr(LowRankKernelRegressor, "predict",
                        lambda self, X: np.full_like(fit(self, X), np.nan))
    status, detail, _ = fuzzer.run_case("LowRankKernelRegressor", 11, str(tmp_path))
    assert status == "defect" and "predict not finite" in detail


def test_mtmkl_loo_search_warning_names_what_to_change():
    # C="auto" stopped at the search's fixed cap with a warning naming
    # "max_iter=200": the estimator's max_iter does not set it (raising it only
    # gave an unused-parameter warning), and no remedy was named
    from sklearn.exceptions import ConvergenceWarning

    from kernlearn import MultitaskMKLRegressor

    rng = np.random.RandomState(4)
    X = rng.randn(60, 6)
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * rng.randn(60)
    kernels = ([("rbf", {"gamma": g}) for g in (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)]
               + ["linear"] + [("rbf", {"gamma": 1.0}, [j]) for j in range(6)]
               + [("linear", {}, [j]) for j in range(6)])
    with pytest.warns(ConvergenceWarning) as record:
        reg = MultitaskMKLRegressor(C="auto", kernels=kernels).fit(X, y, np.arange(60) % 3)
    assert not reg.converged_
    text = " ".join(str(w.message) for w in record if w.category is ConvergenceWarning)
    assert "max_iter and tol do not apply" in text
    assert "fewer kernels" in text and "numeric C" in text


def test_mtmkl_smo_cap_warning_names_what_to_change():
    # an unnormalised poly kernel on columns of size 100: the SMO of a task ran
    # into libsvm's iteration cap and the warning named no remedy (a smaller C
    # does not help there; normalize / standardize, the defaults, do)
    from sklearn.exceptions import ConvergenceWarning

    from kernlearn import MultitaskMKLClassifier

    rng = np.random.RandomState(3)
    X = 100 * rng.randn(80, 3)
    y = (X[:, 0] + 50 * rng.randn(80) > 0).astype(int)
    task = np.arange(80) % 2
    clf = MultitaskMKLClassifier(kernels=[("poly", {"degree": 3})], C=1e4,
                                 normalize=False, standardize=False)
    with pytest.warns(ConvergenceWarning, match=r"libsvm's iteration cap") as record:
        clf.fit(X, y, task)
    text = " ".join(str(w.message) for w in record)
    assert "normalize=True" in text and "standardize=True" in text
