"""Audit 93: a review of audits 91 and 92 and the lead's mends.

Audit 91 let a model file lack the attributes added during 0.2.0's development
(``_model_state.MAY_LACK``).  Three routes it left open: a multitask regressor's
file of 2026-11-27 (10:23-14:08) holds one pooled ``y_mean_`` / ``y_scale_``
entry for all tasks, which ``predict`` broadcasts but the check refused; a file
lacking one of the pair (a real file lacks both or neither) loaded and then
failed in ``predict`` with a bare ``AttributeError``; and a low-rank file
without ``_kernel`` skipped the kernel-against-centres relation, though
``predict`` reads the ``kernel`` parameter in its place (a resealed file with
centres of the wrong kind loaded, then failed on a broadcast error).
"""

import warnings

import numpy as np
import pytest

import kernlearn as K
from kernlearn.io import load_model, save_model

rng = np.random.RandomState(93)
X = rng.randn(60, 4)
Y_BIN = (X[:, 0] > 0).astype(int)
Y_REG = X[:, 0] + 0.1 * rng.randn(60)
TASK = np.repeat([0, 1], 30)


def _fit(est, Xf, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(Xf, y, **kw)


def _resaved(est, tmp_path, drop=(), **values):
    """``est`` saved with ``drop`` deleted and ``values`` set (a file written
    so, consistently: save_model seals it), then loaded."""
    for name in drop:
        delattr(est, name)
    for name, value in values.items():
        setattr(est, name, value)
    path = tmp_path / "m.npz"
    save_model(est, path)
    return load_model(path)


@pytest.mark.parametrize("cls, loss", [(K.MultitaskMKLRegressor, "square"),
                                       (K.MultitaskMKLRegressor, "epsilon_insensitive"),
                                       (K.MultitaskMKLRegressorCV, "square")])
def test_a_pooled_target_map_of_2026_11_27_loads(cls, loss, tmp_path):
    """Between the target map's arrival and per-task targets, a multitask
    regressor kept one pooled mean and scale for every task ("state.y_mean_
    has 1 entries for 2 tasks" refused such files; predict broadcasts them).
    Written here by giving a fitted model one entry of each."""
    est = _fit(cls(loss=loss), X, Y_REG, task_index=TASK)
    # (one entry: the first task's; in memory predict broadcasts it to every task)
    est.y_mean_, est.y_scale_ = est.y_mean_[:1].copy(), est.y_scale_[:1].copy()
    expected = est.predict(X, task_index=TASK)
    loaded = _resaved(est, tmp_path)
    np.testing.assert_array_equal(loaded.predict(X, task_index=TASK), expected)


@pytest.mark.parametrize("cls", [K.MultitaskMKLRegressor, K.MultitaskMKLRegressorCV])
@pytest.mark.parametrize("drop", ["y_mean_", "y_scale_"])
def test_the_target_map_is_absent_whole_or_not_at_all(cls, drop, tmp_path):
    """A file older than the target map lacks both attributes; one without
    only y_mean_ loaded and predict stopped on AttributeError, one without
    only y_scale_ predicted through the older route (another model)."""
    est = _fit(cls(), X, Y_REG, task_index=TASK)
    with pytest.raises(ValueError, match=r"y_mean_ and y_scale_.*both or neither"):
        _resaved(est, tmp_path, drop=[drop])


def test_a_file_without_both_target_attributes_still_loads(tmp_path):
    """The older file itself (no target map at all) loads, as audit 91 had it."""
    est = _fit(K.MultitaskMKLRegressor(), X, Y_REG, task_index=TASK)
    loaded = _resaved(est, tmp_path, drop=["y_mean_", "y_scale_"])
    assert not hasattr(loaded, "y_mean_") and loaded.predict(X, task_index=TASK).shape == (60,)


@pytest.mark.parametrize("kernel", ["rbf", "precomputed"])
def test_a_lowrank_file_without_kernel_checks_the_parameter_against_its_centres(
        kernel, tmp_path):
    """Without ``_kernel`` predict reads the ``kernel`` parameter: a Gram
    model's centres are row numbers, a named kernel's rows.  The relation was
    skipped for such a file, which then loaded and failed in predict
    ("operands could not be broadcast together")."""
    Xf = X @ X.T if kernel == "precomputed" else X
    est = _fit(K.LowRankKernelClassifier(kernel=kernel, random_state=0), Xf, Y_BIN)
    wrong = (Xf[est.center_indices_] if kernel == "precomputed"
             else est.center_indices_.copy())
    with pytest.raises(ValueError, match="centers_ of a '%s' kernel must be" % kernel):
        _resaved(est, tmp_path, drop=["_kernel"], centers_=wrong)


def test_a_lowrank_file_without_kernel_and_right_centres_loads(tmp_path):
    """The relation on the parameter refuses nothing a real older file holds."""
    est = _fit(K.LowRankKernelRegressor(random_state=0), X, Y_REG)
    expected = est.predict(X)
    loaded = _resaved(est, tmp_path, drop=["_kernel"])
    np.testing.assert_array_equal(loaded.predict(X), expected)


# ------------------------------------------------ hik's negative columns: said once
def _hik_warnings(fit):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fit()
    return [w for w in seen if "hik sees have negative values" in str(w.message)]


@pytest.mark.parametrize("make", [
    lambda: K.LowRankKernelClassifier(kernel="hik", probability=True, random_state=0),
    lambda: K.PNormMKLClassifier(kernels=["hik"], probability=True, random_state=0),
    lambda: K.MultitaskMKLClassifier(kernels=["hik", "rbf"], probability=True),
    lambda: K.MultitaskMKLClassifierCV(kernels=["hik", "rbf"]),
], ids=["lowrank", "pnorm", "multitask", "multitask-cv"])
def test_hik_on_negative_columns_is_said_once(make):
    """The fit warns that hik sees negative (centred) columns; its Platt folds
    and validation fits, on subsets of the same columns, said it again (six
    times in all for the low-rank and multitask classifiers)."""
    seen = _hik_warnings(lambda: make().fit(X, Y_BIN, task_index=TASK)
                         if "Multitask" in type(make()).__name__ else make().fit(X, Y_BIN))
    assert len(seen) == 1, [str(w.message) for w in seen]
    assert issubclass(seen[0].category, UserWarning) and seen[0].filename == __file__
