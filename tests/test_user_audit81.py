"""Audit 81: a review of three merges of the thirty-first pass.

The unused-setting warnings (``UnusedParameterWarning``) claim a setting is
not read: each claim is checked here against the model, which must then be
bit for bit the one fitted without the setting, and a setting that changes
the model must never be named (randomised over kernels, parameters and
formulations).  The defects, each failing on the merged code:

- ``LowRankKernel*(kernel="linear", gamma=None)``: ``None`` is the unset
  width (``"scale"``, the default), yet it was named as a width set beside a
  kernel without one;
- ``MultitaskMKL*(formulation="independent", tol=...)``: ``tol`` stops the
  kernel weights' iterations as ``max_iter`` caps them, and changed nothing,
  without a word (``max_iter`` alone was named);
- ``PNormMKLClassifier(max_iter=0, tol=...)``: ``max_iter=0`` returns the
  stage-1 solution, ``online_only=True``'s model, but ``tol`` (named there)
  was not named;
- a kernel added to ``KERNELS`` taking ``**kwargs`` had every parameter
  refused ("unknown parameter(s) ['width'] ...; it takes ['kw']").
"""

import functools
import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import kernlearn as kl
from kernlearn.estimators._renamed import UnusedParameterWarning

_RNG = np.random.default_rng(81)
_X = np.abs(_RNG.normal(size=(50, 3)))
_YR = _X[:, 0] + np.sin(_X[:, 1]) + 0.1 * _RNG.normal(size=50)
_YC = np.where(_YR > np.median(_YR), 1, -1)
_T = np.repeat([0, 1], 25)


def _linear(A, B):
    return A @ B.T


def _rbf_gamma(A, B, gamma=1.0):
    return np.exp(-gamma * ((A[:, None] - B[None]) ** 2).sum(-1))


def _any_kw(A, B, **kw):
    return A @ B.T


def _fit(est, X, y, **kw):
    """The fitted model's outputs and the unused-setting warnings of its fit."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(X, y, **kw)
    said = [str(r.message) for r in record if r.category is UnusedParameterWarning]
    if "task_index" in kw:
        out = (est.decision_function(X, task_index=kw["task_index"])
               if hasattr(est, "decision_function") else est.predict(X, task_index=kw["task_index"]))
    else:
        out = est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)
    return out, said


# -- low-rank kernel learning: gamma / degree / coef0 beside each kernel ----------------------
_LR_KERNELS = ["rbf", "linear", "poly", "hik", "constant", "precomputed", _linear,
               _rbf_gamma, _any_kw]
# (values off each kernel's own default: poly's degree=2 and coef0=1 change nothing)
_LR_VALUES = {"gamma": [None, 0.3, 2.0], "degree": [3, 4], "coef0": [0.5, 2.0]}


def _kernel_id(kernel):
    return kernel if isinstance(kernel, str) else kernel.__name__


def _lowrank_draws(n, seed=81):
    """``n`` random (kernel, parameter, value) draws."""
    rng = np.random.RandomState(seed)
    out = []
    for _ in range(n):
        name = ["gamma", "degree", "coef0"][rng.randint(3)]
        vals = _LR_VALUES[name]
        out.append((_kernel_id(_LR_KERNELS[rng.randint(len(_LR_KERNELS))]), name,
                    vals[rng.randint(len(vals))]))
    return out


# (and the cases each claim is about, whatever the draws)
_LR_CASES = sorted(set(_lowrank_draws(24)) | {
    ("linear", "gamma", None), ("constant", "gamma", None), ("precomputed", "gamma", None),
    ("_linear", "gamma", None), ("poly", "degree", 3), ("rbf", "degree", 3),
    ("linear", "gamma", 0.3), ("_any_kw", "gamma", 0.3), ("rbf", "gamma", 0.3),
    ("_rbf_gamma", "gamma", 0.3)}, key=repr)
_BY_NAME = {_kernel_id(k): k for k in _LR_KERNELS}


@pytest.mark.parametrize("kernel, name, value", _LR_CASES, ids=repr)
def test_lowrank_named_exactly_when_unread(kernel, name, value):
    # named <=> the model is bit for bit the one fitted without the setting;
    # None is the unset value (gamma=None is the default "scale"): never named
    kernel = _BY_NAME[kernel]
    X = _X @ _X.T if isinstance(kernel, str) and kernel == "precomputed" else _X
    kw = dict(kernel=kernel, n_columns=12, random_state=0)
    with threadpool_limits(1):
        plain, _ = _fit(kl.LowRankKernelRegressor(**kw), X, _YR)
        out, said = _fit(kl.LowRankKernelRegressor(**kw, **{name: value}), X, _YR)
    named = any(f"{name}={value!r} not used" in s for s in said)
    unchanged = np.array_equal(out, plain)
    if value is None:
        assert not said and unchanged
    else:
        assert named == unchanged, (said, unchanged)


def test_lowrank_partial_bound_width_is_read():
    # a width bound by a functools.partial kernel is read: gamma set to that
    # same value is not named (the model is the bound width's)
    from kernlearn.kernels import rbf_kernel

    kernel = functools.partial(rbf_kernel, gamma=0.3)
    _, said = _fit(kl.LowRankKernelRegressor(kernel=kernel, gamma=0.3, n_columns=12,
                                             random_state=0), _X, _YR)
    assert not said


# -- multitask MKL: the iteration caps and tol beside each formulation ------------------------
_MT_SETTINGS = [("max_iter", 2), ("inner_max_iter", 1), ("tol", 0.3)]
_MT_FORMS = [dict(formulation="mtfl"), dict(formulation="mtfl", p=3.0),
             dict(formulation="mkl"), dict(formulation="mtsfl"),
             dict(formulation="independent"), dict(formulation="mtfl", shared=True, p=3.0)]
# (claimed unread: every one of these must be named)
_MT_UNREAD = {("independent", "max_iter"), ("independent", "tol"),
              ("independent", "inner_max_iter"), ("mkl", "inner_max_iter"),
              ("mtsfl", "inner_max_iter"), ("mtfl-p2", "inner_max_iter")}


def _mt_key(form):
    f = form["formulation"]
    return f + "-p2" if f == "mtfl" and form.get("p", 2.0) == 2.0 else f


_DRAW = np.random.RandomState(81)
_MT_CASES = sorted({(int(_DRAW.randint(len(_MT_FORMS))), int(_DRAW.randint(3)))
                    for _ in range(10)} | {(4, 2), (4, 0), (0, 1), (1, 1), (3, 0), (5, 1)})


@pytest.mark.parametrize("form, setting", _MT_CASES,
                         ids=lambda v: str(v))
@pytest.mark.parametrize("cls, y", [(kl.MultitaskMKLRegressor, _YR),
                                    (kl.MultitaskMKLClassifier, _YC)],
                         ids=["regressor", "classifier"])
def test_multitask_named_only_when_unread(cls, y, form, setting):
    form = _MT_FORMS[form]
    name, value = _MT_SETTINGS[setting]
    kernels = ["rbf", "linear", ("rbf", {"gamma": 3.0})]
    with threadpool_limits(1):
        plain, _ = _fit(cls(kernels=kernels, **form), _X, y, task_index=_T)
        out, said = _fit(cls(kernels=kernels, **form, **{name: value}), _X, y, task_index=_T)
    named = any(f"{name}={value!r} not used" in s for s in said)
    if named:  # a claim that it is unread: proven by the model
        np.testing.assert_array_equal(out, plain)
    assert named == ((_mt_key(form), name) in _MT_UNREAD), said


def test_multitask_independent_tol_is_named():
    # tol stopped nothing there (one kernel weight: a duality gap of 0)
    with threadpool_limits(1):
        plain, _ = _fit(kl.MultitaskMKLRegressor(kernels=["rbf", "linear"],
                                                 formulation="independent"), _X, _YR,
                        task_index=_T)
        out, said = _fit(kl.MultitaskMKLRegressor(kernels=["rbf", "linear"], tol=1e-8,
                                                  formulation="independent"), _X, _YR,
                         task_index=_T)
    assert len(said) == 1 and "tol=1e-08 not used with formulation='independent'" in said[0]
    np.testing.assert_array_equal(out, plain)


# -- p-norm MKL: max_iter=0 runs stage 1 only -------------------------------------------------
def test_pnorm_max_iter_zero_names_tol():
    X, y = _X, (_YC > 0).astype(int)
    with threadpool_limits(1):
        stage1, _ = _fit(kl.PNormMKLClassifier(online_only=True, random_state=0), X, y)
        quiet, said = _fit(kl.PNormMKLClassifier(max_iter=0, random_state=0), X, y)
        assert not said
        out, said = _fit(kl.PNormMKLClassifier(max_iter=0, tol=0.5, random_state=0), X, y)
    # stage 2 does not run: the model is online_only's, whatever tol
    np.testing.assert_array_equal(quiet, stage1)
    np.testing.assert_array_equal(out, stage1)
    assert len(said) == 1 and "tol=0.5 not used with max_iter=0" in said[0]


# -- a kernel added to KERNELS ----------------------------------------------------------------
def test_registered_kwargs_kernel_takes_its_parameters(monkeypatch):
    from kernlearn.kernels import KERNELS, rbf_kernel

    def widths(X, Y, **kw):
        return rbf_kernel(X, Y, gamma=kw.get("width", 1.0))

    monkeypatch.setitem(KERNELS, "widths", widths)
    y = (_YC > 0).astype(int)
    outs = []
    with threadpool_limits(1):
        for width in (0.1, 5.0):
            clf = kl.PNormMKLClassifier(kernels=[("widths", {"width": width})],
                                        random_state=0, max_iter=20)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outs.append(clf.fit(_X, y).decision_function(_X))
    assert not np.array_equal(*outs)  # (the parameter is read)
    # a kernel of named parameters still has an unknown one refused
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['width'\] for kernel "
                                         r"'rbf'; it takes \['gamma'\]"):
        kl.PNormMKLClassifier(kernels=[("rbf", {"width": 1.0})]).fit(_X, y)


@pytest.mark.parametrize("kernel, params", [("poly", {"degree": None}),
                                            ("poly", {"coef0": "1"}),
                                            ("hik", {"beta": "a"})], ids=repr)
def test_lowrank_kernel_params_value_not_a_number(kernel, params):
    # audit 79 named a kernel_params name the kernel does not take; a value that
    # is not a number still reached the kernel's arithmetic: a bare TypeError
    (name, value), = params.items()
    est = kl.LowRankKernelRegressor(kernel=kernel, kernel_params=params, n_columns=8,
                                    random_state=0)
    with pytest.raises(ValueError, match=rf"kernel_params\['{name}'\] must be a number "
                                         rf"for kernel '{kernel}', got {value!r}"):
        est.fit(_X, _YR)


def test_cli_metadata_feature_count_not_the_models(tmp_path, capsys):
    # audit 78 refused a metadata n_features that is not a count; another count
    # than the model's was read as the model's: "the model expects 7 features"
    # (exit 5, the data file blamed for the model file's fault)
    import pandas as pd

    from kernlearn.cli import main
    from kernlearn.io import save_model

    X = np.array([[1.0, 2.0], [2.0, 3.0], [3.0, 1.0], [4.0, 4.0], [5.0, 0.0], [0.0, 1.0]])
    y = np.array(["x", "y", "x", "y", "x", "y"])
    data = tmp_path / "d.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "target": y}).to_csv(data, index=False)
    est = kl.FGMClassifier().fit(X, y)
    model = tmp_path / "m.model"
    save_model(est, model, metadata={"n_features": 7})
    assert main(["predict", "-m", str(model), str(data)]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'n_features' is 7, not the model's count of features, 2" in err[0]
    save_model(est, model, metadata={"n_features": 2})  # (its own count: used)
    assert main(["predict", "-m", str(model), str(data)]) == 0
    assert capsys.readouterr().out.split() == list(est.predict(X))
