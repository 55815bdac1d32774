"""A twenty-eighth user's audit: the kernel estimators' less-travelled options.

A user went through the options of ``PNormMKLClassifier`` (OBSCURE) and of
``LowRankKernelClassifier`` / ``LowRankKernelRegressor`` (SLKL) that the
default fits never touch, and through their combinations.  Most of it held:
``p`` -> 1 gives sparser kernel weights and ``p = 2`` equal ones,
``normalize`` puts the kernels on one scale, ``online_only`` stops after
stage 1, ``max_iter_online`` stops after an epoch without updates,
``class_weight`` equals the same ``sample_weight`` in every multiclass mode,
``precompute=False`` gives the ``precompute=True`` model, probabilities sum
to one and agree with ``predict``, zero weights are never visited in any
OBSCURE mode, and capped fits warn.  What did not: settings that leave
nothing to fit (``online_only`` with no stage-1 epoch, an empty kernel list
with ``fit_intercept``) returned a constant model without a word, and a step
budget that cut ``online_only``'s stage 1 short went unreported; SLKL read
a ``nu`` path in the order given although its rule assumes the largest
value first, checked the path's entries (and ``gamma_factors``') only once
it reached them, dropped an argument given again in ``kernel_params``,
passed a width named there (``"scale"``) to the kernel as a string, and its
capped path's warning named a ``nu`` not on the path; OBSCURE's raw-unit
widths missed scikit-learn's ``rbf_kernel`` and partials.  Each test here
failed before its fix.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris

from kernlearn import PNormMKLClassifier


# ------------------------------------------------ OBSCURE: a stage-1 model with no stage 1
@pytest.mark.parametrize("kw", [{"pegasos": True}, {"max_iter_online": 0}],
                         ids=["pegasos", "no-online-epoch"])
def test_online_only_without_a_stage_one_epoch_is_refused(kw):
    # online_only=True returns stage 1's solution; pegasos=True has no stage
    # 1 and max_iter_online=0 runs none: the fit returned the all-zero
    # model (0 epochs, uniform kernel weights, every prediction one class:
    # training accuracy 0.33 on iris) without a word
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="online_only=True .* all zeros"):
        PNormMKLClassifier(online_only=True, random_state=0, **kw).fit(X, y)
    # each option alone still fits
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = PNormMKLClassifier(random_state=0, **kw).fit(X, y)
    assert alone.score(X, y) > 0.9


# ------------------------------------------------------- SLKL: nu given as a path
def _sinc(n=300):
    from kernlearn.datasets import make_sinc

    X, y, _, _ = make_sinc(n, 10, random_state=0)
    return X, y


def test_low_rank_nu_path_in_any_order_is_chosen_by_the_documented_rule():
    # the rule (stop after rises, keep the largest nu within a quarter of a
    # standard error of the smallest error) reads the path from the largest
    # value down; [1e-3, 0.01, 0.1, 1.0] kept 1e-3 (it stopped before 1.0 and
    # looked for the "sparsest" value among the smallest ones) where the same
    # values from the largest down keep 0.01
    from kernlearn import LowRankKernelRegressor

    X, y = _sinc()
    # (random_state=3: a sample where the rule keeps 0.01, not the smallest
    # value; since the twenty-sixth pass's content-keyed sample seed 0 keeps 1e-3)
    fits = [LowRankKernelRegressor(nu=nu, n_columns=60, random_state=3).fit(X, y)
            for nu in ([1.0, 0.1, 0.01, 1e-3], [1e-3, 0.01, 0.1, 1.0],
                       (0.1, 1.0, 1e-3, 0.01))]
    for f in fits:
        assert f.history_["nu"][-1] == 0.01
        np.testing.assert_array_equal(f.nu_path_["nu"], [1.0, 0.1, 0.01, 1e-3])
        np.testing.assert_array_equal(f.predict(X), fits[0].predict(X))


@pytest.mark.parametrize("nu, entry", [
    ([1.0, 0.1, -1.0], "-1.0"), ([1.0, 0.0], "0.0"), ([1.0, float("nan")], "nan"),
    (["auto"], "'auto'"), ([[1.0, 0.1]], r"\[1.0, 0.1\]"), ([], None),
])
def test_low_rank_nu_path_with_a_bad_entry_is_refused_naming_it(nu, entry):
    # a negative entry failed only after the values before it were solved,
    # named multiplied by the targets' mean square ("got -0.99..." for -1.0);
    # "auto" inside a list gave "can't multiply sequence by non-int of type
    # 'float'", an empty list "'NoneType' object is not subscriptable"
    from kernlearn import LowRankKernelClassifier

    X, y = _sinc(80)
    match = "empty sequence" if entry is None else f"{entry} in nu=.* not a positive"
    with pytest.raises(ValueError, match=match):
        LowRankKernelClassifier(nu=nu, random_state=0).fit(X, y > 0)


# ------------------------------------------ SLKL: a kernel parameter given twice
@pytest.mark.parametrize("kw, name", [
    ({"gamma": 0.5, "kernel_params": {"gamma": 0.01}}, "gamma"),
    ({"kernel": "poly", "degree": 3, "kernel_params": {"degree": 2}}, "degree"),
    ({"kernel": "partial", "gamma": 0.5}, "gamma"),
], ids=["gamma-kernel_params", "degree-kernel_params", "gamma-partial"])
def test_low_rank_kernel_parameter_given_twice_is_refused(kw, name):
    # gamma=0.5 with kernel_params={"gamma": 0.01} fitted at 0.01 and
    # dropped the argument without a word (kernel_params_ {"gamma": 0.01});
    # so did degree=3 against kernel_params' 2 and gamma=0.5 against the
    # 0.03 a functools.partial kernel binds
    import functools

    from sklearn.metrics.pairwise import rbf_kernel

    from kernlearn import LowRankKernelClassifier

    if kw.get("kernel") == "partial":
        kw = dict(kw, kernel=functools.partial(rbf_kernel, gamma=0.03))
    X, y = _sinc(60)
    with pytest.raises(ValueError, match=f"{name}=.* both set the kernel's {name}"):
        LowRankKernelClassifier(random_state=0, **kw).fit(X, y > 0)
    # the same value twice, or the default argument, is no conflict
    same = dict(kw, **{name: (kw.get("kernel_params") or {}).get(name, 0.03)})
    a = LowRankKernelClassifier(random_state=0, **same).fit(X, y > 0)
    assert a.kernel_params_[name] == same[name]


@pytest.mark.parametrize("factors, entry", [
    (("a",), "'a'"), ([[1.0, 0.1]], r"\[1.0, 0.1\]"), ((True, 0.1), "True"),
])
def test_low_rank_gamma_factors_with_a_bad_entry_is_refused_naming_it(factors, entry):
    # a string entry failed with "could not convert string to float: 'a'", a
    # nested list with a TypeError from float(); (True,) was fitted as (1.0,)
    from kernlearn import LowRankKernelRegressor

    X, y = _sinc(60)
    with pytest.raises(ValueError, match=f"{entry} in gamma_factors=.* not a positive"):
        LowRankKernelRegressor(gamma_factors=factors, random_state=0).fit(X, y)


def test_an_empty_kernel_list_with_an_intercept_is_refused():
    # kernels=[] is refused ("at least one kernel"), but with
    # fit_intercept=True the appended constant kernel made the list non-empty
    # and the fit returned the bias-only model (training accuracy 0.33 on
    # iris: every prediction one class) without a word
    X, y = load_iris(return_X_y=True)
    for fit_intercept in (False, True):
        with pytest.raises(ValueError, match="at least one kernel"):
            PNormMKLClassifier(kernels=[], fit_intercept=fit_intercept).fit(X, y)


def test_low_rank_width_named_in_kernel_params_is_computed():
    # kernel_params={"gamma": "scale"} reached the kernel as the string:
    # "can't multiply sequence by non-int of type 'float'" (the Nystroem
    # family and OBSCURE's kernel specs take the names)
    from kernlearn import LowRankKernelClassifier
    from kernlearn.widths import mean_pairwise_sq_distance

    X, y = _sinc(60)
    X = np.column_stack([X, np.cos(3 * X[:, 0])])
    named = LowRankKernelClassifier(kernel_params={"gamma": "scale"}, random_state=0)
    named.fit(X, y > 0)
    ref = LowRankKernelClassifier(random_state=0).fit(X, y > 0)
    assert named.kernel_params_ == ref.kernel_params_
    np.testing.assert_array_equal(named.decision_function(X), ref.decision_function(X))
    mean = LowRankKernelClassifier(kernel_params={"gamma": "mean"}, random_state=0)
    Xs = (X - X.mean(0)) / X.std(0)
    assert mean.fit(X, y > 0).kernel_params_["gamma"] == pytest.approx(
        1.0 / mean_pairwise_sq_distance(Xs))


def test_low_rank_capped_nu_path_warning_names_the_kept_value_of_the_path():
    # the warning named the absolute nu_ (nu times the codes' mean square):
    # "up to the kept nu=8.78e-05" for the path value 1e-4 that history_
    # and the progress line call the kept one
    from sklearn.exceptions import ConvergenceWarning

    from kernlearn import LowRankKernelClassifier

    X, y = _sinc(80)
    with pytest.warns(ConvergenceWarning, match="nu path") as record:
        clf = LowRankKernelClassifier(nu=[0.1, 0.01, 1e-3], max_iter=1, random_state=0)
        clf.fit(X, y > 0.2)
    kept = clf.history_["nu"][-1]
    assert clf.nu_ != pytest.approx(kept)
    assert any(f"kept nu={kept:.3g};" in str(w.message) for w in record)


# ------------------------------------------ OBSCURE: raw-unit widths of callables
def test_rbf_widths_in_raw_units_of_scikit_learns_rbf_kernel_and_partials():
    # rbf_gamma_raw_ is documented per RBF kernel; scikit-learn's rbf_kernel
    # (the pairwise function a user brings) and a functools.partial of it
    # or of the library's own gave None, as for a linear kernel
    import functools

    from sklearn.metrics import pairwise

    from kernlearn.kernels import rbf_kernel

    X, y = load_iris(return_X_y=True)

    def raw(kernel):
        clf = PNormMKLClassifier(kernels=[kernel, "linear"], max_iter=3, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return clf.fit(X, y).rbf_gamma_raw_

    ref = raw(("rbf", {"gamma": 0.3}))
    for kernel in [(pairwise.rbf_kernel, {"gamma": 0.3}),
                   functools.partial(pairwise.rbf_kernel, gamma=0.3),
                   functools.partial(rbf_kernel, gamma=0.3)]:
        got = raw(kernel)
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-12)
        assert got[1] is None
    # scikit-learn's default width is 1 / n_features of the kernel's view
    np.testing.assert_allclose(raw((pairwise.rbf_kernel, {}, [0, 1]))[0],
                               raw(("rbf", {"gamma": 0.5}, [0, 1]))[0], rtol=1e-12)


def test_online_only_cut_short_by_the_step_budget_says_so():
    # online_only=True with max_steps=50 visited 50 of iris's 150 rows in
    # one of its two stage-1 epochs, and stop_reason_ said "online_only" as
    # for the two full epochs: the budget is documented as a stop reason
    X, y = load_iris(return_X_y=True)
    cut = PNormMKLClassifier(online_only=True, max_steps=50, random_state=0).fit(X, y)
    assert cut.stop_reason_ == "max_steps" and cut.history_["steps"].tolist() == [50]
    for max_steps in (None, 300):  # both epochs run in full
        full = PNormMKLClassifier(online_only=True, max_steps=max_steps,
                                  random_state=0).fit(X, y)
        assert full.stop_reason_ == "online_only" and full.n_iter_ == 2
