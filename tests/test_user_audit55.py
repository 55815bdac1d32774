"""A fifty-fifth user's audit: hyperparameters at the ends of a grid search's range.

A data scientist ran grid and randomised searches over wide ranges, so every
public estimator was fitted at the ends of each parameter's documented range,
one parameter at a time: ``C`` from 1e-6 to 1e6, kernel widths from 1e-8 to
1e8 (alone and in lists), p-norm ``p`` near 1 and at 2, multitask ``p`` at
1000, ``q`` at 1 and 2, ``B`` above the number of columns, ``max_features`` at
1, at the number of columns and above it, ``tol`` at 1e-12, 0 and 0.5,
``max_iter`` and ``inner_max_iter`` at 1, ``n_columns`` at 1 and above the
rows, ``nu`` and ``lambda_p`` at 1e-12 and 1e6, ``epsilon`` wider than the
targets, ``time_budget`` at 1e-6, ``max_rank`` at 1, single-start ``Cs`` at
1e-6 and 1e6, and the families' widths, levels and filter sizes at their
ends; on scikit-learn's embedded sets (breast cancer, wine, diabetes,
digits), and timed on 1,000 rows of the suite's phoneme and airfoil.  She
read the time, the warnings, ``converged_`` / ``n_iter_``, NaNs, the training
score, ``predict_proba`` against ``predict``, the ``*CV`` estimators against
the plain ones at the same ``C``, and the command line at such values.

What was wrong (each test below failed before its fix):

- ``MultitaskMKLRegressorCV`` and ``MultitaskMKLRegressor(C="auto")``: the
  leave-one-out search's tie-break penalty counts the weights in units of its
  start, so from a start far below the optimum it was no tie-break:
  ``Cs=(1e-4,)`` stopped at ``C_`` 0.031 (R^2 0.45) where the starts from 0.1
  to 1e6 reach 0.25 (R^2 0.53), and ``Cs=(1e-6,)``, where the criterion's
  slope is below the penalty's, fell to zero weights and returned its start:
  the per-task means (R^2 0), ``converged_`` True, no warning.  The search
  is now restarted in the units of its result when it climbs more than ten
  times from its start, and ten times higher when it falls to zero; a grid
  that brackets the optimum (the defaults) runs once, as before (the default
  models of seven suite sets are unchanged).
- ``FGMRegressor`` / ``FGMClassifier`` with ``max_iter=1`` (or any cap) on a
  path whose next pricing would have stopped it (every column in one round:
  ``B`` at least the columns) warned "stopped after 1 outer iterations
  (max_iter)" with ``converged_`` False, where ``max_iter=15`` returned the same
  model converged after one iteration.  The capped path now prices once more
  (no master) and reports the stop the pricing gives.
- ``InfiniteFeatureClassifier`` with a tiny ``time_budget`` gave two
  ``ConvergenceWarning`` s from one fit when its averaged paths stopped after
  different numbers of outer iterations (audit 53 summed up only identical
  ones); they are now one warning naming the range and the paths.
- ``AdditiveKernelExpansion`` (HIK) and ``IntersectionKernelFeatures`` with a
  ``beta`` whose powers overflow (100 on raw columns in the thousands, 1e8 on
  any value above 1) gave FGM the intercept-only model with NumPy's "overflow
  encountered in power" only; such a ``beta`` is now refused naming it.  The
  chi2 map at a long ``sample_interval`` warned of an overflow in ``cosh``
  whose limit (a zero term) was right; it no longer warns.
- ``LowRankKernel*`` took ``nu=[]``, ``nu=[0.1, 0]`` and ``gamma_factors=[]``
  and refused them only in ``fit``, after the data: the command line said
  "cannot fit ... on data.csv" (exit 6, a data error) for a bad parameter.
  They are now checked with the other parameters (exit 2, before any data is
  read).

Checked and clean (a few pinned below): ``C`` to 1e-6 gives the weighted
majority class (the regressors the mean; OBSCURE, bias-free, its Parzen-like
limit); ``C`` at 1e6 separates the training rows; RBF widths at 1e-8 give the
constant model (majority) and at 1e8 the interpolating one; every extreme gave
finite outputs and probabilities summing to one (``predict`` follows the
decision values, as documented, where Platt's sigmoid flattens); every
capped or too-tight fit warned with ``converged_`` False; the multitask
``*CV`` estimators with one ``C`` (``kernel_selection="objective"``) give the
plain estimator's model at 1e-6, 0.01 and 1e6 for all four formulations;
documented limits are refused naming the parameter (``p`` outside (1, 2] and
below 2, ``q`` outside [1, 2], zero or negative widths, ``C``, ``tol``,
``max_features`` larger than the candidates) and the command line gives one
line and exit 2 or 6 for each.
Measured, not changed: on 1,000 phoneme rows ``MultitaskMKLClassifier(C=1e6)``
took 15 CPU s against 0.1 s at the default (the SVM on non-separable data, as
``SVC``), ``InfiniteFeature*`` at ``lambda_p=1e-8`` 2-3 s against 0.05-0.1 s
(warned where the masters were capped); ``AdditiveKernelExpansion(n_bins=1e4)``
took 166 CPU s and 2 GB on 200 x 30 rows (cost linear in the block width;
1e5 needed more than 10 GB: the dense expansion of a chunk of features is not
bounded by memory as the sparse one is).
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.exceptions import ConvergenceWarning

import kernlearn as K


def _record(fit):
    """``fit()``'s result and every warning it gave."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = fit()
    return out, rec


def _stopped(rec):
    return [w for w in rec if issubclass(w.category, ConvergenceWarning)]


def _diabetes(n=200):
    X, y = load_diabetes(return_X_y=True)
    return X[:n], y[:n]


def _cancer(n=200):
    X, y = load_breast_cancer(return_X_y=True)
    rows = np.random.RandomState(0).permutation(len(y))[:n]
    return X[rows], y[rows]


def _r2(y, p):
    return 1.0 - np.mean((y - p) ** 2) / np.var(y)


# -- the leave-one-out search from a start far below its optimum ------------------------

@pytest.mark.parametrize("start", [1e-6, 1e-4])
def test_loo_search_from_a_tiny_start_reaches_the_optimum_of_other_starts(start):
    X, y = _diabetes()
    tasks = np.arange(len(y)) % 2
    far, near = (K.MultitaskMKLRegressorCV(Cs=(C,)).fit(X, y, task_index=tasks)
                 for C in (start, 1.0))
    # the old search: C_ 1e-6 (the per-task means, R^2 0) and 0.031 (R^2 0.45)
    assert far.C_ == pytest.approx(near.C_, rel=0.2)
    assert _r2(y, far.predict(X, task_index=tasks)) > _r2(
        y, near.predict(X, task_index=tasks)) - 0.005


def test_loo_search_from_a_grid_bracketing_the_optimum_runs_once():
    from kernlearn.methods.mtmkl import selection

    calls = []
    real = selection.minimize

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    X, y = _diabetes()
    tasks = np.arange(len(y)) % 2
    try:
        selection.minimize = spy
        K.MultitaskMKLRegressorCV().fit(X, y, task_index=tasks)
    finally:
        selection.minimize = real
    assert len(calls) == 1  # the default grid: the model of the one search, as before


def test_loo_search_on_targets_no_kernel_predicts_keeps_its_start():
    rng = np.random.RandomState(3)
    X, y = rng.randn(30, 4), 10.0 + 3.0 * rng.randn(30)
    tasks = np.arange(30) % 3
    est = K.MultitaskMKLRegressorCV(Cs=(0.01, 0.1, 1.0)).fit(X, y, task_index=tasks)
    # every restart falls to zero weights too: the best start's model, as before
    # (a run ending at weights of 1e-16 of the start's is no model to keep)
    assert est.C_ == pytest.approx(0.01, rel=0.01)


# -- FGM: a cap reached by a path that had finished ---------------------------------------

def test_fgm_capped_path_that_had_finished_is_converged_without_a_warning():
    X, y = _diabetes()  # 10 columns, B=10: every column enters in the first round
    capped, rec = _record(lambda: K.FGMRegressor(C=1.0, max_iter=1).fit(X, y))
    free = K.FGMRegressor(C=1.0).fit(X, y)
    assert free.n_iter_ == 1 and free.converged_
    # the old code: "FGM stopped after 1 outer iterations (max_iter) ...", False
    assert not _stopped(rec) and capped.converged_
    np.testing.assert_array_equal(capped.predict(X), free.predict(X))


def test_fgm_classifier_capped_with_every_column_in_one_round_is_converged():
    X, y = _cancer()
    est, rec = _record(lambda: K.FGMClassifier(B=30, max_iter=1).fit(X, y))
    assert not _stopped(rec) and est.converged_ and est.n_iter_ == 1


def test_fgm_capped_path_with_violators_left_still_warns():
    X, y = _cancer()
    est, rec = _record(lambda: K.FGMClassifier(max_iter=1).fit(X, y))
    assert len(_stopped(rec)) == 1 and "max_iter" in str(_stopped(rec)[0].message)
    assert not est.converged_


# -- GrFL: one warning for one time budget ------------------------------------------------

def test_grfl_paths_stopped_on_time_after_different_counts_give_one_warning():
    from kernlearn.methods._grfl_master import one_master_warning
    from kernlearn.utils._warnings import warn

    def paths():  # as the averaged paths warn, each through colgen
        for it in (0, 1, 0):
            warn(f"InfiniteFeatureClassifier stopped on time_budget=1e-06 s after {it} "
                 "outer iterations, before its pricing found no violation; the model "
                 "is the one reached so far.", ConvergenceWarning)

    _, rec = _record(one_master_warning(paths))
    # the old code: two warnings (the "after 0" one and the "after 1" one)
    assert len(rec) == 1 and issubclass(rec[0].category, ConvergenceWarning)
    message = str(rec[0].message)
    assert "time_budget=1e-06 s after 0 to 1 outer iterations (in 3 paths)" in message
    assert message.endswith("the model is the one reached so far.")


def test_grfl_fit_on_a_tiny_time_budget_warns_once():
    X, y = _cancer(120)
    est, rec = _record(lambda: K.InfiniteFeatureClassifier(
        time_budget=1e-6, n_candidates=20, random_state=0).fit(X, y))
    assert est.n_paths_ == 3 and not est.converged_
    assert len(_stopped(rec)) == 1 and "time_budget" in str(_stopped(rec)[0].message)


# -- LowRank: a bad sequence is a parameter error -----------------------------------------

@pytest.mark.parametrize("param", ["nu=[]", "nu=[0.1, 0]", "gamma_factors=[]"])
def test_cli_refuses_a_bad_low_rank_sequence_as_a_parameter(tmp_path, capsys, param):
    from kernlearn.cli import main

    X, y = _diabetes(60)
    path = tmp_path / "d.csv"
    np.savetxt(path, np.c_[X, y], delimiter=",")
    code = main(["fit", str(path), "-e", "lowrank-regressor", "-q", "--no-header",
                 "-m", str(tmp_path / "m.npz"), "-p", param])
    err = capsys.readouterr().err
    # the old code: "cannot fit lowrank-regressor on d.csv: ...", exit 6
    assert code == 2 and err.count("\n") == 1 and "invalid parameter" in err
    assert not (tmp_path / "m.npz").exists()


def test_low_rank_checks_its_sequences_before_the_data():
    with pytest.raises(ValueError, match="nu is an empty sequence"):
        K.LowRankKernelClassifier(nu=())._validate_params()
    with pytest.raises(ValueError, match="0 in gamma_factors"):
        K.LowRankKernelRegressor(gamma_factors=(1.0, 0))._validate_params()
    K.LowRankKernelRegressor(nu=(0.1, 1e-3), gamma_factors=[0.5, 2])._validate_params()


# -- the intersection kernels' exponent -----------------------------------------------------

@pytest.mark.parametrize("family", ["AdditiveKernelExpansion", "IntersectionKernelFeatures"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_an_exponent_whose_powers_overflow_is_refused_naming_beta(family, sparse):
    import scipy.sparse as sp

    from kernlearn import families

    X, y = _cancer(80)  # raw columns up to about 2,500: 2500 ** 100 is no float
    X = sp.csr_matrix(X) if sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # (the old fit: overflow in power)
        with pytest.raises(ValueError, match=r"beta=100 overflows: \|x\| \*\* beta"):
            K.FGMClassifier(family=getattr(families, family)(beta=100.0)).fit(X, y)


def test_a_long_chi2_period_fits_without_overflow_warnings():
    from kernlearn.families import AdditiveKernelExpansion

    X, y = _cancer(80)
    fam = AdditiveKernelExpansion(kernel="additive_chi2", sample_interval=1e8)
    est, rec = _record(lambda: K.FGMClassifier(family=fam).fit(X, y))
    # the old fit: "overflow encountered in cosh" (the terms' limit, 0, was right)
    assert not [w for w in rec if issubclass(w.category, RuntimeWarning)]
    assert np.all(np.isfinite(est.decision_function(X)))


# -- checked clean ----------------------------------------------------------------------

def test_tiny_C_gives_the_majority_class_and_the_mean():
    X, y = _cancer()
    majority = np.bincount(y).argmax()
    for est in (K.FGMClassifier(C=1e-6), K.FGMClassifier(C=1e-6, loss="logistic")):
        assert np.all(est.fit(X, y).predict(X) == majority)
    tasks = np.arange(len(y)) % 2
    assert np.all(K.MultitaskMKLClassifier(C=1e-6).fit(X, y, task_index=tasks)
                  .predict(X, task_index=tasks) == majority)
    Xr, yr = _diabetes()
    assert abs(_r2(yr, K.FGMRegressor(C=1e-6).fit(Xr, yr).predict(Xr))) < 0.01


@pytest.mark.parametrize("make", [
    lambda: K.LowRankKernelClassifier(gamma=1e-8),
    lambda: K.PNormMKLClassifier(kernels=[("rbf", {"gamma": 1e-8})], fit_intercept=True),
], ids=["lowrank", "pnorm_mkl"])
def test_an_rbf_width_of_1e_minus_8_gives_the_constant_model(make):
    X, y = _cancer()
    assert np.all(make().fit(X, y).predict(X) == np.bincount(y).argmax())


def test_huge_C_and_a_narrow_kernel_fit_the_training_rows():
    X, y = _cancer()
    fgm, _ = _record(lambda: K.FGMClassifier(C=1e6).fit(X, y))  # (masters capped: warned)
    assert np.mean(fgm.predict(X) == y) == 1.0
    assert np.mean(K.PNormMKLClassifier(kernels=[("rbf", {"gamma": 1e8})])
                   .fit(X, y).predict(X) == y) == 1.0


def test_multitask_search_with_one_C_is_the_plain_estimator_at_the_ends():
    X, y = _diabetes(120)
    tasks = np.arange(len(y)) % 2
    for C in (1e-6, 1e6):
        plain = K.MultitaskMKLRegressor(C=C).fit(X, y, task_index=tasks)
        search = K.MultitaskMKLRegressorCV(Cs=(C,), kernel_selection="objective", cv=3,
                                           shared=False).fit(X, y, task_index=tasks)
        np.testing.assert_array_equal(search.predict(X, task_index=tasks),
                                      plain.predict(X, task_index=tasks))


@pytest.mark.parametrize("make, message", [
    (lambda: K.PNormMKLClassifier(p=1.0), "'p' parameter"),
    (lambda: K.MultitaskMKLClassifier(p=1.5), "'p' parameter"),
    (lambda: K.FGMClassifier(tol=-1.0), "'tol' parameter"),
    (lambda: K.LowRankKernelRegressor(gamma=0.0), "'gamma' parameter"),
    (lambda: K.PNormMKLClassifier(kernels=[("rbf", {"gamma": 0})]), "gamma must be a positive number"),
], ids=["pnorm_p1", "mtmkl_p", "fgm_tol", "lowrank_gamma", "kernel_gamma"])
def test_values_the_docs_exclude_are_refused_naming_the_parameter(make, message):
    X, y = _cancer(60)
    kw = {"task_index": np.arange(60) % 2} if isinstance(make(), K.MultitaskMKLClassifier) else {}
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        make().fit(X, y, **kw)


def test_an_epsilon_wider_than_the_targets_gives_libsvms_constant():
    from sklearn.svm import SVR

    X, y = _diabetes(120)
    tasks = np.zeros(len(y), dtype=int)
    est = K.MultitaskMKLRegressor(loss="epsilon_insensitive", epsilon=1e3)
    pred = est.fit(X, y, task_index=tasks).predict(X, task_index=tasks)
    # every residual inside the tube: no weight, libsvm's bias (the midrange)
    np.testing.assert_allclose(pred, SVR(epsilon=1e5).fit(X, y).predict(X), rtol=1e-9)
    assert np.ptp(pred) == 0.0
