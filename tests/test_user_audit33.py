"""A thirty-third audit: loose ends earlier audits left.

A model fitted in float64 predicted float32 input up to 2e-7 away from the
same numbers given as float64 (the standardisation rounded them back to
float32; scikit-learn's float64 models compute float32 input in float64).
The OBSCURE and SLKL solvers of the method layer declared no parameter
constraints (``max_iter=-1`` ran as 0, SLKL's ``max_iter=0`` failed with
``KeyError: 'objective'``); ``PerTaskL1Lq`` named ``L1Lq`` in its errors; a
``cv=RepeatedKFold(...)`` could not be saved in a model file; the additive
and intersection families scaled their blocks unweighted (a weighted FGM fit
was 0.25 from the fit on repeated rows); and GrFL pooled one target scale
over the tasks of ``task_index``, so a task in other units was fitted badly
(all zero with the per-task penalty).  Each test here failed before its fix
unless it says it pins a documented behaviour.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn import (
    FGMClassifier,
    FGMRegressor,
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelClassifier,
    LowRankKernelRegressor,
    PNormMKLClassifier,
)

_KERN = ["linear", ("rbf", {"gamma": 0.5})]


def _data(n=60, d=4):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    return X, X[:, 0] + np.sin(X[:, 1])


def _outputs(est, X):
    f = getattr(est, "decision_function", est.predict)
    return f(X)


# --------------------------------------------- float32 input, float64 model
_MAKERS = {
    "pnorm": (lambda: PNormMKLClassifier(kernels=_KERN, max_iter=5), True),
    "infinite-clf": (lambda: InfiniteFeatureClassifier(max_iter=3, random_state=0), True),
    "infinite-reg": (lambda: InfiniteFeatureRegressor(max_iter=3, random_state=0), False),
    "lowrank-clf": (lambda: LowRankKernelClassifier(random_state=0), True),
    "lowrank-reg": (lambda: LowRankKernelRegressor(random_state=0), False),
    "fgm-clf": (lambda: FGMClassifier(B=2, max_iter=3), True),
    "fgm-reg": (lambda: FGMRegressor(B=2, max_iter=3), False),
}


@pytest.mark.parametrize("name", sorted(_MAKERS))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_float64_model_predicts_float32_input_as_float64(name, sparse):
    # PNormMKL, GrFL and SLKL: 4e-8..1e-7 apart (the standardised float32
    # input was rounded back to float32); FGM 2e-15 (NumPy's mixed-type product)
    make, classifier = _MAKERS[name]
    X, t = _data()
    if sparse:
        X = np.where(X > 0.3, X, 0.0)
    y = (t > 0).astype(int) if classifier else t
    conv = sp.csr_matrix if sparse else np.asarray
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make().fit(conv(X), y)
    X32 = conv(X.astype(np.float32))
    np.testing.assert_array_equal(_outputs(est, X32), _outputs(est, X32.astype(np.float64)))


def test_float32_model_keeps_computing_in_float32():
    # pins the other half of the convention: a model fitted on float32 maps
    # float32 input as it mapped its training rows (the fit's precision)
    from kernlearn.estimators._base import input_standardization

    X, t = _data()
    est = PNormMKLClassifier(kernels=_KERN, max_iter=5).fit(X.astype(np.float32), t > 0)
    assert input_standardization(est).transform(X.astype(np.float32)).dtype == np.float32
    assert input_standardization(est).transform(X).dtype == np.float64


# ----------------------------------------------- PNormMKL's n_iter_ (a pin)
def test_pnorm_n_iter_counts_the_epochs_of_both_stages_as_documented():
    # pins the documented meaning (the docstring, doc/obscure.md, the README:
    # one per history_ entry, which the progress line also counts): max_iter
    # caps stage 2 only, and each stage's count is in history_["stage"]
    X, t = _data(80)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = PNormMKLClassifier(max_iter=5, tol=None, random_state=0).fit(X, t > 0)
    stage = est.history_["stage"]
    assert est.n_iter_ == len(stage) == 7
    assert (stage == 1).sum() == est.max_iter_online and (stage == 2).sum() == est.max_iter
    assert "max_iter`` caps stage 2's only" in PNormMKLClassifier.__doc__


# --------------------------------- the OBSCURE and SLKL solvers' parameters
def _obscure(**kw):
    from kernlearn.methods.obscure import fit_obscure, kernel_list

    X, t = _data(40, 3)
    return fit_obscure(kernel_list(X, ["linear"]), (t > 0).astype(int), **kw)


def _slkl(**kw):
    from kernlearn.methods.slkl import fit_slkl

    X, t = _data(40, 3)
    return fit_slkl(X, t[:, None], **kw)


@pytest.mark.parametrize("fit, name, value", [
    # before: ran as max_iter=0 / all epochs / an all-zero model, without a word
    (_obscure, "max_iter", -1),
    (_obscure, "max_iter_online", -2),
    (_obscure, "tol", -1.0),
    (_obscure, "max_steps", -3),
    (_obscure, "max_iter", 2.5),
    # before: TypeError "'>' not supported between instances of 'str' and 'int'"
    (_obscure, "eta", "x"),
    # before: KeyError 'objective'
    (_slkl, "max_iter", 0),
    # before: "'float' object cannot be interpreted as an integer"
    (_slkl, "max_iter", 2.5),
    (_slkl, "tol", -1.0),
])
def test_method_solvers_refuse_bad_parameters_by_name(fit, name, value):
    from sklearn.utils._param_validation import InvalidParameterError

    solver = "OnlineBatch" if fit is _obscure else "CoordinateNewton"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidParameterError,
                           match=rf"The '{name}' parameter of {solver} must be"):
            fit(**{name: value})


def test_method_solvers_declare_every_parameter():
    from kernlearn.methods.obscure import OnlineBatch
    from kernlearn.methods.slkl import CoordinateNewton

    for cls in (OnlineBatch, CoordinateNewton):
        assert set(cls._constraints()) == set(cls._param_names()), cls


# ------------------------------------------- PerTaskL1Lq's messages name it
def test_per_task_penalty_names_itself_in_its_errors():
    # "The 'q' parameter of L1Lq must be ..." (the class it reuses per block),
    # also from InfiniteFeatureRegressor(penalty=PerTaskL1Lq(q=0.5))
    from sklearn.utils._param_validation import InvalidParameterError

    from kernlearn.penalties import PerTaskL1Lq

    X, y = _data(40, 3)
    task = np.arange(40) % 2
    with pytest.raises(InvalidParameterError, match="'q' parameter of PerTaskL1Lq must"):
        InfiniteFeatureRegressor(penalty=PerTaskL1Lq(q=0.5), inner_max_iter=2).fit(
            X, y, task_index=task)
    for call in (lambda pen: pen.matrix_value(np.ones((3, 2)), np.arange(4)),
                 lambda pen: pen.prox(np.ones(3), 0.1),
                 lambda pen: pen.dual_norm(np.ones(3))):
        with pytest.raises(InvalidParameterError, match="'alpha' parameter of PerTaskL1Lq"):
            call(PerTaskL1Lq(alpha=-1.0))


# ----------------------------------------------- model files with cv splitters
def _cv_fit(cv, classifier=False):
    from kernlearn import MultitaskMKLClassifierCV, MultitaskMKLRegressorCV

    X, y = _data(60, 3)
    task = np.arange(60) % 2
    if classifier:
        return MultitaskMKLClassifierCV(["linear", "rbf"], Cs=[1.0], cv=cv).fit(
            X, (y > 0).astype(int), task_index=task), X, task
    return MultitaskMKLRegressorCV(["linear", "rbf"], Cs=[1.0], cv=cv).fit(
        X, y, task_index=task), X, task


def _splitters():
    from sklearn import model_selection as ms

    return {
        "int": (3, False), "KFold": (ms.KFold(3, shuffle=True, random_state=0), False),
        "StratifiedKFold": (ms.StratifiedKFold(3), True),
        "ShuffleSplit": (ms.ShuffleSplit(3, random_state=0), False),
        # before: "values of type RepeatedKFold are outside the model-file schema"
        "RepeatedKFold": (ms.RepeatedKFold(n_splits=3, n_repeats=2, random_state=0), False),
        "RepeatedKFold-RandomState": (
            ms.RepeatedKFold(n_splits=3, n_repeats=2,
                             random_state=np.random.RandomState(3)), False),
        "RepeatedStratifiedKFold": (
            ms.RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=0), True),
    }


@pytest.mark.parametrize("name", sorted(_splitters()))
def test_model_file_round_trips_scikit_learn_splitters(name, tmp_path):
    from sklearn.base import clone

    from kernlearn.io import load_model, save_model

    cv, classifier = _splitters()[name]
    est, X, task = _cv_fit(cv, classifier)
    save_model(est, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert type(loaded.cv) is type(est.cv) and (not isinstance(cv, int) or loaded.cv == cv)
    np.testing.assert_array_equal(loaded.predict(X, task_index=task),
                                  est.predict(X, task_index=task))
    if not isinstance(cv, int):
        # the loaded splitter splits as the saved one did (a refit chooses alike)
        Xy = (X, (X[:, 0] > 0).astype(int))
        for a, b in zip(loaded.cv.split(*Xy), clone(est).cv.split(*Xy)):
            np.testing.assert_array_equal(a[1], b[1])


def test_model_file_names_splits_it_cannot_store(tmp_path):
    # "values of type generator are outside the model-file schema (arrays,
    # numbers, strings, lists, dicts and kernlearn components only)"
    from sklearn.model_selection import KFold

    from kernlearn.io import save_model

    class MyFolds(KFold):
        pass

    X, _ = _data(60, 3)
    for cv, words in [(KFold(3).split(X), "a generator of splits is used up by the fit"),
                      (MyFolds(3), "MyFolds is a cross-validation splitter defined "
                                   "outside scikit-learn")]:
        est = _cv_fit(cv)[0]
        with pytest.raises(TypeError, match="cannot save params.cv: " + words) as info:
            save_model(est, tmp_path / "m.npz")
        assert "list of (train, test) index pairs" in str(info.value)


def test_model_file_refuses_a_class_that_is_no_splitter(tmp_path):
    # the "$class" node names scikit-learn's splitter classes only
    from sklearn.model_selection import RepeatedKFold

    import reliability_cases as rc
    from kernlearn.io import load_model, save_model

    est = _cv_fit(RepeatedKFold(n_splits=3, n_repeats=2, random_state=0))[0]
    save_model(est, tmp_path / "m.npz")
    meta, arrays = rc._read_npz(tmp_path / "m.npz")
    node = meta["params"]["$dict"]["cv"]["state"]["$dict"]
    assert node["cv"] == {"$class": "sklearn/KFold"}
    node["cv"] = {"$class": "family/random_fourier"}
    rc._write_npz(tmp_path / "t.npz", meta, arrays)
    with pytest.raises(ValueError, match="splitter class 'family/random_fourier' is "
                                         "not in the allow-list"):
        load_model(tmp_path / "t.npz")


def test_command_line_reads_a_model_with_repeated_folds(tmp_path, capsys):
    # (the file could not be written at all before)
    from sklearn.model_selection import RepeatedKFold

    from conftest import run_cli
    from kernlearn.io import save_model

    est = _cv_fit(RepeatedKFold(n_splits=3, n_repeats=2, random_state=0))[0]
    save_model(est, tmp_path / "m.npz")
    code, out, err = run_cli(["report", tmp_path / "m.npz", "-o", tmp_path / "r.html"], capsys)
    assert code == 0, err
    assert "RepeatedKFold" in (tmp_path / "r.html").read_text()


# ------------------------------ the additive families' scales and weights
def _weighted_rows():
    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(50, 5)))
    X[X < 0.4] = 0.0
    y = X[:, 0] ** 2 + np.sin(3 * X[:, 1]) + 0.1 * rng.normal(size=50)
    w = rng.integers(1, 4, size=50)
    return X, y, w, np.repeat(X, w, axis=0), np.repeat(y, w)


def _families():
    from kernlearn.families import AdditiveKernelExpansion, IntersectionKernelFeatures

    return {"hik": AdditiveKernelExpansion(),
            "chi2": AdditiveKernelExpansion(kernel="additive_chi2"),
            "gauss-scale": AdditiveKernelExpansion(kernel="additive_gaussian", gamma="scale"),
            "gauss": AdditiveKernelExpansion(kernel="additive_gaussian"),
            "intersection": IntersectionKernelFeatures()}


@pytest.mark.parametrize("name", sorted(_families()))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_additive_families_weigh_rows_as_repeated_rows(name, sparse):
    # the block scales (and the Gaussian's widths) were unweighted
    from sklearn.base import clone

    X, _, w, Xr, _ = _weighted_rows()
    conv = sp.csr_matrix if sparse else np.asarray
    fam = _families()[name]
    a = clone(fam).fit(conv(X), sample_weight=w.astype(float))
    b = clone(fam).fit(conv(Xr))
    np.testing.assert_allclose(a.scale_, b.scale_, rtol=1e-12)
    for attr in ("gamma_", "interval_"):
        if hasattr(b, attr):
            np.testing.assert_allclose(getattr(a, attr), getattr(b, attr), rtol=1e-12)
    if name == "hik":
        np.testing.assert_array_equal(a.levels_, b.levels_)


@pytest.mark.parametrize("name", sorted(_families()))
def test_fgm_on_an_additive_family_weighs_rows_as_repeated_rows(name):
    # 0.18-0.27 apart on targets of spread 1 (PolynomialPool's fits agree to
    # 1e-15); hik and the intersection kernel's exact map (one level per
    # training row: more levels on repeated rows) agree to the master's tol
    X, y, w, Xr, yr = _weighted_rows()
    kw = dict(B=2, C=1.0, max_iter=20, inner_tol=1e-10, family=_families()[name])
    a = FGMRegressor(**kw).fit(X, y, sample_weight=w.astype(float))
    b = FGMRegressor(**kw).fit(Xr, yr)
    np.testing.assert_array_equal(np.unique(a.selected_features_ // a.family_.width_),
                                  np.unique(b.selected_features_ // b.family_.width_))
    exact = name in ("chi2", "gauss", "gauss-scale")
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-12 if exact else 1e-5)


# ------------------------------------ GrFL's tasks in units of their own
def _tasks(n=150):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 4))
    task = np.arange(n) % 3
    y = np.sin(2 * X[:, 0]) + X[:, 1] * (1 + task) + 0.1 * rng.normal(size=n)
    return X, y, task


def test_grfl_tasks_are_standardised_each_in_its_own_units():
    # one scale was pooled over the tasks: a task given in a hundredth of the
    # units changed every task's model (the docs promise a model that does
    # not depend on the units of y, as a 2-D y's outputs get one scale each)
    X, y, task = _tasks()
    units = np.array([1.0, 0.01, 250.0])[task]
    kw = dict(max_features=6, n_paths=1, lambda_p=0.05, random_state=0)
    a = InfiniteFeatureRegressor(**kw).fit(X, y, task_index=task)
    b = InfiniteFeatureRegressor(**kw).fit(X, y * units, task_index=task)
    assert a.y_scale_.shape == (3,)
    np.testing.assert_allclose(b.y_scale_, a.y_scale_ * [1.0, 0.01, 250.0], rtol=1e-12)
    np.testing.assert_allclose(b.predict(X, task_index=task) / units,
                               a.predict(X, task_index=task), rtol=1e-8, atol=1e-10)
    assert b.shared_coef_.shape == (3, b.task_coef_.shape[1])


def test_grfl_per_task_penalty_keeps_a_task_in_small_units():
    # measured on the school set (20 largest tasks, half of them given a
    # hundredth of their units, penalty="per_task_l1_lq"): those tasks' test
    # R^2 was -0.02 (all weights zero: their spread was 1/100 of the pooled
    # one), 0.26 with each task's own scale
    X, y, task = _tasks(300)
    units = np.where(task == 1, 0.01, 1.0)
    est = InfiniteFeatureRegressor(penalty="per_task_l1_lq", random_state=0).fit(
        X, y * units, task_index=task)
    small = task == 1
    assert np.count_nonzero(est.task_coef_[1]) > 0
    resid = (y * units - est.predict(X, task_index=task))[small]
    assert 1 - resid.var() / (y * units)[small].var() > 0.9
