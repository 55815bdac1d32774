"""A twenty-fourth user's audit: one parameter vocabulary.

A user held the library to issue 21's promise: one vocabulary (scikit-learn's
``max_iter`` / ``tol``, ``standardize`` for ``feature_scaling``), old names
kept with a warning, and a changelog saying what changed.  She gave every
renamed parameter under its old name (constructor, ``set_params``, a grid
search, clones, pickles, model files, the command line and its config file),
capped iterations, gave invalid values to the estimators and the feature
families, and read the warnings, the docstrings and the errors.  Most of it
held (each old name warns, naming the new one, and gives the new name's
model; clones, pickles and model files keep it; documented parameters and
defaults match the signatures, documented attributes the fitted ones;
invalid estimator values are refused at ``fit`` naming the parameter and
what it accepts); each test here failed before its fix, but for the guard
that Platt's folds still fit with an old name's value.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from conftest import one_error, run_cli


def _binary(n=90):
    X, y = make_classification(n, n_features=5, n_informative=3, random_state=0)
    return X, y, np.arange(n) % 2


def _caught(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return caught


# ------------------------------------------ Platt's folds and the model's own fit
def _probability_cases():
    from kernlearn import FGMClassifier, InfiniteFeatureClassifier, MultitaskMKLClassifier

    grfl = dict(max_features=4, n_candidates=10, random_state=0)
    return [
        (FGMClassifier, dict(B=2, feature_scaling=False), "'feature_scaling' was renamed"),
        (FGMClassifier, dict(B=2, max_outer_iter=3), "'max_outer_iter' was renamed"),
        (InfiniteFeatureClassifier, dict(grfl, max_iter=3), "'max_iter' was renamed"),
        (InfiniteFeatureClassifier, dict(grfl, tol=0.5), "outer loop's tolerance since 0.2"),
        (MultitaskMKLClassifier, dict(kernels=["linear", "rbf"], max_inner=2),
         "'max_inner' was renamed"),
    ]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("case", range(5))
def test_probability_says_a_renamed_parameter_once(case):
    # probability=True: Platt's five cross-validation fits repeated the
    # model's own FutureWarning, six in all for one setting (the command line
    # printed "... use standardize=False. (6 times)")
    Est, kw, words = _probability_cases()[case]
    X, y, t = _binary()
    fit_kw = {"task_index": t} if "Multitask" in Est.__name__ else {}
    est = Est(probability=True, **kw)
    caught = _caught(lambda: est.fit(X, y, **fit_kw))
    said = [str(w.message) for w in caught if issubclass(w.category, FutureWarning)]
    assert len(said) == 1 and words in said[0], said
    assert est.predict_proba(X, **fit_kw).shape == (len(y), 2)


@pytest.mark.parametrize("name", ["FGMClassifier", "LowRankKernelClassifier",
                                  "PNormMKLClassifier", "MultitaskMKLClassifier"])
def test_probability_sums_up_its_folds_convergence_warnings(name):
    # a fit stopped by max_iter=1 with probability=True gave six alike
    # ConvergenceWarnings (the model's and one per Platt fold), as the
    # multitask searches' validation fits did before they were summed up
    import kernlearn

    X, y, t = _binary()
    Est = getattr(kernlearn, name)
    kw = {"kernels": ["linear", "rbf"]} if "Multitask" in name else {}
    if name == "FGMClassifier":  # (B=10 took all 5 columns in one round: converged)
        kw = {"B": 1}
    fit_kw = {"task_index": t} if "Multitask" in name else {}
    est = Est(max_iter=1, probability=True, **kw)
    caught = _caught(lambda: est.fit(X, y, **fit_kw))
    msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(msgs) == 2, msgs
    assert "max_iter" in msgs[0]
    assert msgs[1].startswith("5 convergence warning(s) in the 5 cross-validation fits of "
                              "the Platt sigmoids (first: ")
    assert msgs[1].endswith("raise max_iter or tol.")


def test_probability_with_a_renamed_parameter_gives_the_new_names_probabilities():
    # (the folds still fit with the old name's value: dropping their warning
    # changed no number)
    from kernlearn import FGMClassifier

    X, y, _ = _binary()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = FGMClassifier(B=2, max_outer_iter=2, probability=True).fit(X, y)
        new = FGMClassifier(B=2, max_iter=2, probability=True).fit(X, y)
    np.testing.assert_array_equal(old.platt_, new.platt_)
    np.testing.assert_array_equal(old.predict_proba(X), new.predict_proba(X))


# ------------------------------------------------- both names on the command line
@pytest.fixture
def table(tmp_path):
    X, y, _ = _binary(60)
    rows = ["a,b,c,d,e,y"] + [",".join(f"{v:.4f}" for v in x) + f",{t}" for x, t in zip(X, y)]
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    return tmp_path


@pytest.mark.parametrize("estimator, old, new", [
    ("fgm", "feature_scaling=false", "standardize=true"),
    ("fgm-regressor", "master_max_iter=3", "inner_max_iter=null"),
    ("mtmkl-classifier", "max_inner=2", "inner_max_iter=5"),
    ("infinite-classifier", "max_iter=3", "inner_max_iter=500"),
    ("fgm", "feature_scaling=false", "standardize=false"),  # (refused at fit: exit 6)
])
def test_cli_refuses_a_parameter_given_under_both_names(
        table, capsys, estimator, old, new):
    # `-p feature_scaling=false -p standardize=true` fitted standardize=False
    # with a warning "use standardize=False": the new name the user wrote was
    # dropped, as Python cannot tell standardize=True from its default; the
    # command line knows which names were given
    code, out, err = run_cli(["fit", table / "d.csv", "-e", estimator, "-q", "-p", old,
                              "-p", new, "-m", table / "m.npz"], capsys)
    new_name, old_name = new.partition("=")[0], old.partition("=")[0]
    assert code == 2 and one_error(err), err
    assert f"set '{new_name}' or its old name '{old_name}', not both" in err
    assert not (table / "m.npz").exists()


def test_cli_refuses_both_names_before_reading_the_data(table, capsys):
    # two values for one parameter were refused only by the fit, after the
    # data was read, as "the estimator could not fit this data" (exit 6)
    code, _, err = run_cli(["fit", table / "d.csv", "-e", "fgm", "-q", "-p",
                            "max_outer_iter=2", "-p", "max_iter=3", "-m", table / "m.npz"],
                           capsys)
    assert code == 2 and one_error(err) and "invalid parameter for fgm" in err, err
    code, _, err = run_cli(["fit", table / "missing.csv", "-e", "fgm", "-q", "-p",
                            "master_tol=0.01", "-p", "inner_tol=0.001", "-m",
                            table / "m.npz"], capsys)
    assert code == 2 and "not both" in err, err  # not 3: the file was not looked for


@pytest.mark.parametrize("config, given, kept", [
    ("max_outer_iter = 3", "max_iter=4", {"max_iter": 4, "max_outer_iter": "deprecated"}),
    ("max_iter = 4", "max_outer_iter=3", {"max_iter": 100, "max_outer_iter": 3}),
])
def test_cli_param_overrides_the_other_name_in_the_config(table, config, given, kept):
    # -p overrides the config file: under the other name of a parameter, the
    # two were refused by the fit (exit 6), or, with -p at the new name's
    # default, the config's old name won
    from kernlearn.cli import build_estimator

    (table / "c.toml").write_text(f'estimator = "fgm"\n[params]\n{config}\n')
    _, est = build_estimator(None, [given], config=str(table / "c.toml"))
    assert {k: est.get_params()[k] for k in kept} == kept


# ------------------------------------- multitask C="auto": the settings it does not use
@pytest.mark.parametrize("name, kw", [
    ("MultitaskMKLRegressorCV", {}),
    ("MultitaskMKLRegressorCV", {"cv": 3}),
    ("MultitaskMKLRegressor", {"C": "auto"}),
])
def test_leave_one_out_search_names_the_settings_it_does_not_use(name, kw):
    # p=4, max_iter=1, tol=0.5 gave the default model bit for bit without a
    # word (n_iter_ 10 > max_iter=1, converged_ True): the leave-one-out
    # search is L-BFGS-B with its own cap, not the mirror descent they set
    import kernlearn

    Est = getattr(kernlearn, name)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y, t = X[:, 0] + 0.1 * rng.normal(size=60), np.arange(60) % 2
    default = Est(**kw).fit(X, y, task_index=t)
    est = Est(p=4.0, max_iter=1, tol=0.5, **kw)
    with pytest.warns(UserWarning, match=r"p=4\.0, max_iter=1, tol=0\.5 not used with "
                      r"(C=\"auto\"|kernel_selection=\"loo\"); the leave-one-out search"):
        est.fit(X, y, task_index=t)
    np.testing.assert_array_equal(est.predict(X, task_index=t),
                                  default.predict(X, task_index=t))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # the defaults: no word
        Est(**kw).fit(X, y, task_index=t)


# ----------------------------------------------------------- invalid values at fit
@pytest.mark.parametrize("nu", [[], (), ["a"], [0.1, -1.0], [float("nan")], [True]])
@pytest.mark.parametrize("name", ["LowRankKernelRegressor", "LowRankKernelClassifier"])
def test_low_rank_refuses_a_nu_path_that_is_no_path(name, nu):
    # nu=[] passed the parameter check (a list) and failed in the path's loop
    # with "TypeError: 'NoneType' object is not subscriptable" (the command
    # line: "cannot fit ... on d.csv", exit 6); ["a"] with "can't multiply
    # sequence by non-int of type 'float'"
    import kernlearn

    X, y, _ = _binary(40)
    with pytest.raises(ValueError, match=r"nu (is an empty sequence; it )?must be a "
                                         r"positive number, 'auto' or a sequence of "
                                         r"positive numbers"):
        getattr(kernlearn, name)(nu=nu).fit(X, y)


@pytest.mark.parametrize("budget", ["bogus", "0MB"])
def test_fgm_memory_budget_text_is_checked_with_the_parameters(table, capsys, budget):
    # "memory size 'bogus' is not a number of bytes" came when the data was
    # read, naming no parameter; the command line said "cannot fit" (exit 6)
    from kernlearn import FGMClassifier

    X, y, _ = _binary(40)
    with pytest.raises(ValueError, match="The 'memory_budget' parameter of FGMClassifier: "
                                         "memory size"):
        FGMClassifier(memory_budget=budget).fit(X, y)
    code, _, err = run_cli(["fit", table / "missing.csv", "-e", "fgm", "-q", "-p",
                            f"memory_budget={budget}", "-m", table / "m.npz"], capsys)
    assert code == 2 and one_error(err) and "'memory_budget' parameter" in err, err


# ------------------------------------------- families check their parameters too
@pytest.mark.parametrize("name, kw, param", [
    ("PolynomialPool", {"feature_scaling": "false"}, "feature_scaling"),
    ("PolynomialPool", {"include_linear": "no"}, "include_linear"),
    ("AdditiveKernelExpansion", {"beta": -1.0}, "beta"),
    ("AdditiveKernelExpansion", {"gamma": "bogus"}, "gamma"),
    ("AdditiveKernelExpansion", {"sample_interval": "x"}, "sample_interval"),
    ("AdditiveKernelExpansion", {"chunk_size": -1}, "chunk_size"),
    ("IntersectionKernelFeatures", {"feature_scaling": "no"}, "feature_scaling"),
    ("FeaturePool", {"tree": "yes"}, "tree"),
    ("FeaturePool", {"screening": "no"}, "screening"),
    ("NystromColumns", {"precompute": "no"}, "precompute"),
])
def test_family_refuses_an_invalid_value_at_fit_naming_it(name, kw, param):
    # families took any value: feature_scaling="false" (text from a config
    # file) scaled the columns, as any non-empty string is true;
    # AdditiveKernelExpansion(beta=-1) fitted where its subclass
    # IntersectionKernelFeatures refused beta=-1; gamma="bogus" with the
    # default hik kernel, sample_interval="x", chunk_size=-1 went unread
    from sklearn.utils._param_validation import InvalidParameterError

    from kernlearn import families

    X = np.abs(_binary(30)[0])
    with pytest.raises(InvalidParameterError, match=f"The '{param}' parameter of {name} "
                                                    "must be"):
        getattr(families, name)(**kw).fit(X)


def test_cli_refuses_an_invalid_family_value_before_reading_the_data(table, capsys):
    # the PolynomialPool below fitted with its columns scaled (feature_scaling
    # "false" is a true string)
    code, _, err = run_cli(["fit", table / "missing.csv", "-e", "fgm", "-q", "-p",
                            'family={"name": "poly2", "feature_scaling": "false"}', "-m",
                            table / "m.npz"], capsys)
    assert code == 2 and one_error(err), err
    assert "The 'feature_scaling' parameter of PolynomialPool must be" in err


# ------------------------------------------------- an old name's invalid value
@pytest.mark.parametrize("name, old, value", [
    ("FGMClassifier", "max_outer_iter", 0),
    ("FGMRegressor", "master_tol", -1.0),
    ("FGMClassifier", "feature_scaling", "no"),
    ("InfiniteFeatureClassifier", "eps", -1.0),
    ("InfiniteFeatureRegressor", "max_iter", 0),
    ("MultitaskMKLRegressor", "max_inner", 0),
])
def test_an_old_names_error_lists_only_values_to_pass(name, old, value):
    # "must be an int in the range [1, inf) or a str among {'deprecated'}":
    # the sentinel default was offered as a value to pass
    import kernlearn

    X, y, t = _binary(30)
    fit_kw = {"task_index": t} if "Multitask" in name else {}
    with pytest.raises(ValueError, match=f"The '{old}' parameter of {name} must be") as err:
        getattr(kernlearn, name)(**{old: value}).fit(X, y, **fit_kw)
    assert "deprecated" not in str(err.value)


# ---------------------------------------------- GrFL: a solver object's own stopping
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_grfl_names_the_inner_settings_a_solver_object_does_not_read():
    # solver=ADMM() with inner_max_iter=1, inner_tol=0.5 gave ADMM()'s own
    # model bit for bit without a word (solver="admm" with the same settings
    # stops its masters after one iteration); once with probability=True
    from kernlearn import InfiniteFeatureClassifier
    from kernlearn.solvers import ADMM

    X, y, _ = _binary(80)
    kw = dict(max_features=6, n_candidates=10, random_state=0)
    plain = InfiniteFeatureClassifier(solver=ADMM(), **kw)
    caught = _caught(lambda: plain.fit(X, y))
    assert not [w for w in caught if issubclass(w.category, UserWarning)]
    est = InfiniteFeatureClassifier(solver=ADMM(), inner_max_iter=1, inner_tol=0.5,
                                    probability=True, **kw)
    caught = _caught(lambda: est.fit(X, y))
    said = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert said == ["InfiniteFeatureClassifier: inner_tol=0.5, inner_max_iter=1 not used "
                    "with a solver object; its own tol and max_iter apply."], said
    np.testing.assert_array_equal(
        est.decision_function(X),
        InfiniteFeatureClassifier(solver=ADMM(), probability=True, **kw).fit(X, y)
        .decision_function(X))


# --------------------------------------------- OBSCURE: the stage a setting belongs to
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("stage, kw, words", [
    ({"online_only": True}, {"max_iter": 3, "tol": 0.5},
     "max_iter=3, tol=0.5 not used with online_only=True; stage 2, which reads them, "
     "does not run."),
    ({"pegasos": True}, {"eta": 0.5, "max_iter_online": 7},
     "eta=0.5, max_iter_online=7 not used with pegasos=True; stage 1, which reads them, "
     "does not run (Pegasos-MKL)."),
])
def test_obscure_names_the_settings_of_a_stage_that_does_not_run(stage, kw, words):
    # online_only=True with max_iter=3, tol=0.5 (or pegasos=True with eta and
    # max_iter_online) gave the model without them bit for bit, without a word
    from kernlearn import PNormMKLClassifier

    X, y, _ = _binary(80)
    est = PNormMKLClassifier(random_state=0, **stage, **kw)
    caught = _caught(lambda: est.fit(X, y))
    said = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert said == [f"PNormMKLClassifier: {words}"], said
    plain = PNormMKLClassifier(random_state=0, **stage)
    caught = _caught(lambda: plain.fit(X, y))
    assert not [w for w in caught if issubclass(w.category, UserWarning)]
    np.testing.assert_array_equal(est.decision_function(X), plain.decision_function(X))


def test_obscure_refuses_no_stage_at_all():
    # online_only=True with pegasos=True ran no epoch (n_iter_ 0) and
    # returned an all-zero model without a word
    from kernlearn import PNormMKLClassifier

    X, y, _ = _binary(40)
    with pytest.raises(ValueError, match="online_only=True returns the stage-1 .online. "
                                         "solution, but pegasos=True has no stage 1"):
        PNormMKLClassifier(online_only=True, pegasos=True).fit(X, y)
