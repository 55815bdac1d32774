"""An eighth user's audit: what the fitted models report, and when they warn.

A user reads the numbers a fitted model reports (its attributes, the report's
figures and tables) and trusts that a fit stopped on an iteration cap says so
with a ``ConvergenceWarning``.  Each test here failed before its fix.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from kernlearn import FGMClassifier, FGMRegressor, InfiniteFeatureClassifier


def _convergence_warnings(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = fit()
    return est, [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def _xor_like(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    return X, (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(int)


# --------------------------------------------------------------- convergence
@pytest.mark.parametrize("solver", ["newton", "admm", "fista"])
def test_grfl_masters_solved_by_the_uncapped_solver_warn_when_they_stop_unconverged(solver):
    # path_iter=None solves every master with the full solver: one stopped by
    # inner_max_iter far from inner_tol is the returned model's master, and
    # it said nothing (the capped path masters' finishing solve did warn)
    X, y = _xor_like()
    est, caught = _convergence_warnings(lambda: InfiniteFeatureClassifier(
        max_features=8, n_paths=1, random_state=0, solver=solver, inner_max_iter=1,
        inner_tol=1e-10, path_iter=None).fit(X, y))
    assert est.history_["kkt"][-1] > 1e-10  # the last master did stop unconverged
    assert caught, "an unconverged final master raised no ConvergenceWarning"


def test_grfl_converged_fit_with_uncapped_masters_does_not_warn():
    X, y = _xor_like()
    _, caught = _convergence_warnings(lambda: InfiniteFeatureClassifier(
        max_features=8, n_paths=1, random_state=0, path_iter=None).fit(X, y))
    assert not caught


# ----------------------------------------------------------------- the report
def _figure(est, title, data=None):
    from kernlearn.report import _figures

    figs = {t: fig for t, fig, _ in _figures(est, {}, data)}
    return figs[title]


def _curve(fig):
    """The first panel's first line: (x, y)."""
    line = fig.axes[0].get_lines()[0]
    return np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata())


@pytest.mark.parametrize("Est", [FGMClassifier, FGMRegressor])
def test_report_score_vs_features_does_not_depend_on_a_column_offset(Est):
    # the curve zeroes the coefficients of the features left out, but FGM's
    # coef_ is on the raw columns and its intercept holds -coef * mean: a
    # column near 1,000 left the curve at R^2 -96,919 (accuracy 0.53, chance)
    # where the same data without the offset gave 0.90 (0.87)
    pytest.importorskip("matplotlib")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 6))
    y = 3 * X[:, 0] + X[:, 1] + 0.3 * rng.standard_normal(400)
    y = (y > 0).astype(int) if Est is FGMClassifier else y
    shifted = X.copy()
    shifted[:, 1] += 1000.0
    kw = {"B": 1, "max_iter": 5} | ({} if Est is FGMClassifier else {"C": 1.0})
    curves = []
    for data in (X, shifted):
        est = Est(**kw).fit(data, y)
        assert est.selected_features_[0] == 0  # feature 1 comes after: left out at k=1
        curves.append(_curve(_figure(est, "Test score vs number of features",
                                     (data, y, "test"))))
    np.testing.assert_array_equal(curves[1][0], curves[0][0])
    np.testing.assert_allclose(curves[1][1], curves[0][1], rtol=1e-6)
    # the full model's point is the model's own score
    assert curves[1][1][-1] == pytest.approx(est.score(shifted, y))


@pytest.mark.parametrize("n_paths", [1, 3])
def test_report_learned_feature_bars_equal_the_selection_tables_weight_norms(n_paths):
    # the bars summed the norms of each feature's cos and sin columns, the
    # table took the norm of both (the group penalty's): 11.5 against 8.3
    pytest.importorskip("matplotlib")
    from kernlearn.summary import selection_table

    X, _ = _xor_like()
    y3 = np.digitize(X[:, 0] * X[:, 1] + X[:, 2], [-0.5, 0.5])
    est = InfiniteFeatureClassifier(max_features=6, n_paths=n_paths,
                                    random_state=0).fit(X, y3)
    bars = [p.get_height() for p in _figure(est, "Selection").axes[0].patches]
    cols, rows = selection_table(est)
    table = [r[cols.index("weight_norm")] for r in rows]
    # and both are the norms of each feature's block of column_coef_ (cos, sin per class)
    coef = est.column_coef_.reshape(3, len(est.features_), 2)
    np.testing.assert_allclose(table, np.linalg.norm(coef, axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(bars, table, rtol=1e-12)


def test_report_labels_the_constant_kernel_appended_to_a_users_kernel_list():
    # fit_intercept=True appends a constant kernel (the last weight): with the
    # default list it was "constant", with the user's own list it had no label
    # ("" in the selection table, its position "2" under the bar)
    pytest.importorskip("matplotlib")
    from kernlearn import PNormMKLClassifier
    from kernlearn.summary import selection_table

    X, y = _xor_like(120)
    est = PNormMKLClassifier(kernels=["linear", ("rbf", {"gamma": 0.5})],
                             fit_intercept=True, max_iter=20, random_state=0).fit(X, y)
    assert len(est.kernel_weights_) == 3
    _, rows = selection_table(est)
    assert [r[1] for r in rows] == ["linear", "rbf(gamma=0.5)", "constant"]
    ax = _figure(est, "Selection").axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [r[1] for r in rows]
    np.testing.assert_array_equal([p.get_height() for p in ax.patches],
                                  est.kernel_weights_)


# ------------------------------------------------------ tol=None, FGM's meaning
@pytest.mark.parametrize("Est", [FGMClassifier, FGMRegressor])
def test_fgm_tol_none_runs_max_iter_without_a_convergence_warning(Est):
    # tol=None disables FGM's stopping rules: running max_iter outer
    # iterations is what was asked, and it warned "before the relative
    # objective change met tol=None" (scikit-learn's estimators, OBSCURE and
    # the column-generation driver itself stay silent with tol=None)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 30))
    y = X[:, 0] - X[:, 3] + 0.5 * X[:, 7] + 0.3 * rng.standard_normal(200)
    y = (y > 0).astype(int) if Est is FGMClassifier else y
    kw = {} if Est is FGMClassifier else {"C": 1.0}
    est, caught = _convergence_warnings(
        lambda: Est(B=2, max_iter=2, tol=None, **kw).fit(X, y))
    assert est.n_iter_ == 2
    assert not caught, [str(w.message) for w in caught]
    # a tolerance that is set and not met still warns
    _, caught = _convergence_warnings(
        lambda: Est(B=2, max_iter=2, tol=1e-12, **kw).fit(X, y))
    assert caught


# ------------------------------------------- multitask MKL's leave-one-out search
def test_multitask_auto_C_reports_its_search_iterations_and_convergence(monkeypatch):
    # C="auto" learns C and the kernel weights by L-BFGS-B: the model said
    # n_iter_=1 and converged_=True whatever the search did, also next to
    # the ConvergenceWarning of a search that ran out of iterations
    import functools

    from kernlearn import MultitaskMKLRegressor
    from kernlearn.methods.mtmkl import fit as mt_fit

    rng = np.random.default_rng(0)
    X, t = rng.standard_normal((120, 4)), rng.integers(0, 3, 120)
    y = X[:, 0] * (1 + t) + np.sin(X[:, 1]) + 0.1 * rng.standard_normal(120)
    est = MultitaskMKLRegressor(C="auto").fit(X, y, task_index=t)
    assert est.converged_ and est.n_iter_ > 1  # the search's own count
    capped = functools.partial(mt_fit.learn_loo_weights, max_iter=2)
    monkeypatch.setattr(mt_fit, "learn_loo_weights", capped)
    est, caught = _convergence_warnings(
        lambda: MultitaskMKLRegressor(C="auto").fit(X, y, task_index=t))
    assert caught  # the search says it ran out ...
    assert not est.converged_ and est.n_iter_ == 2  # ... and so does the model


@pytest.mark.parametrize("solver", ["newton", "apg", "simplemkl"])
def test_fgm_converged_is_false_when_the_returned_models_master_stopped_unconverged(solver):
    # every master stopped at inner_max_iter=1 and a ConvergenceWarning said
    # so, but converged_ (shown in the report's fit summary) stayed True
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 30))
    y = (X[:, 0] - X[:, 3] + 0.5 * X[:, 7] + 0.3 * rng.standard_normal(200) > 0)
    est, caught = _convergence_warnings(lambda: FGMClassifier(
        B=2, solver=solver, inner_max_iter=1, inner_tol=1e-14).fit(X, y))
    assert any("master solves" in str(w.message) for w in caught)
    assert not est.converged_
    # converged masters and outer loop: converged_, and no warning
    # (SimpleMKL, the slow reference master, needs more than its default 500
    # iterations at 2 of the 21 masters this path takes since the thirty-fifth pass)
    more = {"inner_max_iter": 5000} if solver == "simplemkl" else {}
    est, caught = _convergence_warnings(
        lambda: FGMClassifier(B=2, solver=solver, **more).fit(X, y))
    assert est.converged_ and not caught


def test_pnorm_mkl_step_budget_spent_unconverged_warns():
    # max_steps could end the fit inside stage 1 (stage 2 never ran) or early in
    # stage 2 without a word, while max_iter running out warned
    from sklearn.datasets import make_classification

    from kernlearn import PNormMKLClassifier

    X, y = make_classification(200, 6, random_state=0)
    for steps in (50, 500):
        with pytest.warns(ConvergenceWarning, match=f"max_steps={steps} steps"):
            est = PNormMKLClassifier(max_steps=steps).fit(X, y)
        assert est.stop_reason_ == "max_steps"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        PNormMKLClassifier(max_steps=10**7).fit(X, y)  # converges first: silent


def test_grfl_time_budget_spent_warns():
    # a fit stopped by time_budget returned the model reached so far without a word
    from sklearn.datasets import make_classification

    X, y = make_classification(200, 6, random_state=0)
    with pytest.warns(ConvergenceWarning, match="time_budget=1e-09 s"):
        est = InfiniteFeatureClassifier(time_budget=1e-9, n_paths=1,
                                        random_state=0).fit(X, y)
    assert est.stop_reason_ == "time_budget"


def test_fgm_groups_give_the_same_model_on_standardised_data_without_standardize():
    # standardize=False also dropped the groups' 1/sqrt(|G|) weights, which are
    # not about units: on standardised data it fitted another model (objective
    # 128 against 153, coefficients some 25 % apart) than standardize=True on raw
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 12)) * np.arange(1, 13) + 3
    y = (X[:, 0] - X[:, 5] / 6 + rng.normal(size=150) > 0).astype(int)
    groups = [[0, 1, 2], [3], [4, 5, 6, 7, 8], [9, 10, 11]]
    raw = FGMClassifier(groups=groups, B=1, max_iter=2).fit(X, y)
    Z = (X - X.mean(0)) / X.std(0)
    std = FGMClassifier(groups=groups, B=1, max_iter=2, standardize=False).fit(Z, y)
    np.testing.assert_array_equal(raw.selected_features_, std.selected_features_)
    np.testing.assert_allclose(raw.coef_ * X.std(0), std.coef_, rtol=1e-8, atol=1e-10)


def test_slkl_nu_path_warns_once_not_once_per_value():
    # with nu="auto" every value of the path warned on its own: six identical
    # "slkl stopped after max_iter=1" warnings for one fit
    from sklearn.datasets import make_regression

    from kernlearn import LowRankKernelRegressor

    X, y = make_regression(200, 5, noise=5.0, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = LowRankKernelRegressor(max_iter=1, random_state=0).fit(X, y)
    conv = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(conv) == 1 and "of the nu path" in str(conv[0].message)
    assert not est.converged_
