"""A model file's fitted state is checked against its class's declaration on load.

A file rewritten consistently and resealed (anyone can recompute the seal) is
written here by ``save_model`` of an estimator whose fitted attributes were
edited: the file is then sealed and every array matches its metadata, as after
a deliberate edit.  ``load_model`` must refuse it naming the attribute.
"""

import warnings

import numpy as np
import pytest
from conftest import one_error, run_cli

from kernlearn import FGMClassifier, FGMRegressor, LowRankKernelClassifier, PNormMKLClassifier
from kernlearn._model_state import COMPONENT_STATE, FITTED_STATE
from kernlearn.io import load_model, save_model


def _data(n=60, d=4, classes=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], np.quantile(X[:, 0], np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


@pytest.fixture(scope="module")
def fgm():
    X, y = _data()
    return FGMClassifier(max_iter=3).fit(X, y), X


def _refused(est, tmp_path, match):
    path = tmp_path / "edited.npz"
    save_model(est, path)
    with pytest.raises(ValueError, match=match) as info:
        load_model(path)
    assert str(path) in str(info.value)
    return info.value


def _copy(est):
    import copy

    return copy.deepcopy(est)


def test_missing_attribute_is_refused(fgm, tmp_path):
    est = _copy(fgm[0])
    del est.x_scale_
    _refused(est, tmp_path, r"lacks the fitted attribute\(s\) \['x_scale_'\]")


def test_unknown_attribute_is_refused(fgm, tmp_path):
    est = _copy(fgm[0])
    est.weights_ = np.ones(3)
    _refused(est, tmp_path, r"unknown fitted attribute\(s\) \['weights_'\]")


def test_wrong_shape_is_refused(fgm, tmp_path):
    est = _copy(fgm[0])
    est.coef_ = est.coef_[:, :-1]  # one feature fewer than n_features_in_
    _refused(est, tmp_path, r"state\.coef_: axis 1 has length 3, expected 4")
    est = _copy(fgm[0])
    est.x_scale_ = np.ones((1, 4))
    _refused(est, tmp_path, r"state\.x_scale_ has 2 dimension\(s\), expected 1")
    est = _copy(fgm[0])
    est.n_features_in_ = 5  # the arrays say 4
    _refused(est, tmp_path, r"state\.\w+: axis \d has length 4, expected 5")


def test_wrong_dtype_and_kind_are_refused(fgm, tmp_path):
    est = _copy(fgm[0])
    est.coef_ = est.coef_.astype(np.int64)
    _refused(est, tmp_path, r"state\.coef_ is an array of dtype int64 .*expected array of "
             r"dtype kind f")
    est = _copy(fgm[0])
    est.selected_features_ = est.selected_features_.astype(float)
    _refused(est, tmp_path, r"state\.selected_features_ is an array of dtype float64")
    est = _copy(fgm[0])
    est.n_features_in_ = "4"
    _refused(est, tmp_path, r"state\.n_features_in_ is of type str; expected integer")
    est = _copy(fgm[0])
    est.intercept_ = None
    _refused(est, tmp_path, r"state\.intercept_ is None")
    est = _copy(fgm[0])
    est._proba_source = "magic"
    _refused(est, tmp_path, r"state\._proba_source = 'magic' is not one of")


def test_inconsistent_class_count_is_refused(fgm, tmp_path):
    est = _copy(fgm[0])
    est.classes_ = np.array([0, 1, 2])  # three classes, one output
    _refused(est, tmp_path, r"3 classes need 3 output\(s\), the coefficients have 1")
    est = _copy(fgm[0])
    est.classes_ = np.array([1, 1])
    _refused(est, tmp_path, r"classes_ holds a class twice")


def test_non_finite_where_finite_is_needed_is_refused(tmp_path):
    X, y = _data()
    est = FGMRegressor(max_iter=2).fit(X, X[:, 0])
    est.intercept_ = float("nan")
    _refused(est, tmp_path, r"state\.intercept_ = nan is not finite")
    est = PNormMKLClassifier(max_iter=2, random_state=0).fit(X, y)
    est.n_features_in_ = -1
    _refused(est, tmp_path, r"state\.n_features_in_ = -1 is below 1")


def test_component_state_is_checked(tmp_path):
    # a nested component checked with the estimator's sizes
    from kernlearn import MultitaskMKLRegressor

    X, _ = _data(n=40)
    task = np.repeat([0, 1], 20)
    est = MultitaskMKLRegressor(max_iter=2).fit(X, X[:, 0], task_index=task)
    est._model.intercept = np.zeros(3)  # two tasks
    _refused(est, tmp_path, r"state\._model\.intercept: axis 0 has length 3, expected 2")
    est = MultitaskMKLRegressor(max_iter=2).fit(X, X[:, 0], task_index=task)
    est._model = None
    _refused(est, tmp_path, r"state\._model is None")
    est = MultitaskMKLRegressor(max_iter=2).fit(X, X[:, 0], task_index=task)
    tasks, idx, mask = est._blocks.buckets[0]
    est._blocks.buckets[0] = (tasks, idx.astype(float), mask)  # row indices as floats
    _refused(est, tmp_path, r"state\._blocks\.buckets\[0\]\[1\] is an array of dtype float64")
    est = MultitaskMKLRegressor(max_iter=2).fit(X, X[:, 0], task_index=task)
    est._model.coef = ("1",) + tuple(est._model.coef[1:])
    _refused(est, tmp_path, r"state\._model\.coef\[0\] = '1' is not one of \['blocks'\]")
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = PNormMKLClassifier(max_iter=2, random_state=0).fit(X, y)
    est.kernel_list_.specs = 1
    _refused(est, tmp_path, r"state\.kernel_list_\.specs is of type int; expected list")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = PNormMKLClassifier(max_iter=2, random_state=0).fit(X, y)
    est.kernel_list_.diag_ = est.kernel_list_.diag_[:, :-1]
    _refused(est, tmp_path, r"state\.kernel_list_\.\w+: axis 1 has length \d+, expected \d+")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = PNormMKLClassifier(kernels=["linear", "rbf"], max_iter=2, random_state=0).fit(X, y)
    est.kernel_list_._shift_ = [1.0, None]
    _refused(est, tmp_path, r"kernel_list_: _shift_\[0\] is set for a 'linear' kernel")
    est.kernel_list_._shift_ = [None, None]
    est.kernel_list_.params_[1] = {"gamma": "x"}
    _refused(est, tmp_path, r"kernel_list_\.params_\[1\]\['gamma'\] is of type str")


def test_relations_between_attributes_are_checked(tmp_path):
    X, y = _data()
    est = LowRankKernelClassifier(max_iter=2, random_state=0).fit(X, y)
    est._kernel = "precomputed"  # the centres are rows, not row numbers
    _refused(est, tmp_path, r"state\.centers_ of a 'precomputed' kernel must be row numbers")
    est._kernel = "nope"
    _refused(est, tmp_path, r"state\._kernel = 'nope' is not a kernel's name")


def test_index_below_zero_is_refused(tmp_path):
    X, y = _data()
    est = LowRankKernelClassifier(max_iter=2, random_state=0).fit(X, y)
    est.center_indices_ = est.center_indices_ - 10**6
    _refused(est, tmp_path, r"state\.center_indices_ holds values below 0")


@pytest.fixture(scope="module")
def fuzz_options():
    from bench_scripts import load_script

    yield from load_script("fuzz_options")


# Three random option routes of each estimator (dense/sparse, weights,
# precomputed kernels, tasks, multiclass: the settings of the option fuzzers).
@pytest.mark.parametrize("route", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(FITTED_STATE))
def test_valid_models_load_and_predict_as_saved(name, route, fuzz_options, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in range(10 * route, 10 * route + 10):
            _, _, _, est, X, y, task, fit_kw = fuzz_options.draw_case(name, case)
            try:
                est.fit(X, y, **fit_kw)
                break
            except ValueError:  # (settings the estimator refuses: the next case)
                continue
        path = tmp_path / "m.npz"
        save_model(est, path)
        back = load_model(path)
        kw = {"task_index": task} if task is not None else {}
        np.testing.assert_array_equal(back.predict(X, **kw), est.predict(X, **kw))


def test_every_estimator_is_declared():
    import kernlearn

    assert set(FITTED_STATE) == set(kernlearn._ESTIMATORS)
    assert {"MultitaskModel", "TaskBuckets"} <= set(COMPONENT_STATE)


def test_cli_refuses_an_edited_model_in_one_line(tmp_path, capsys):
    X, y = _data(n=40, d=3)
    csv = tmp_path / "train.csv"
    rows = ["a,b,c,label"] + [",".join([*(f"{v:.4f}" for v in x), str(t)]) for x, t in zip(X, y)]
    csv.write_text("\n".join(rows) + "\n")
    model = tmp_path / "m.npz"
    code, _, err = run_cli(["fit", csv, "--model", model, "--quiet", "-e", "fgm"],
                           capsys)
    assert code == 0, err
    est, meta = load_model(model, return_metadata=True)
    del est.d_
    save_model(est, model, metadata=meta)
    code, out, err = run_cli(["predict", csv, "--model", model], capsys)
    assert code == 4
    assert one_error(err), err
    assert "lacks the fitted attribute(s) ['d_']" in err and str(model) in err
