"""Safe model files: round trips for every estimator, schema and tamper checks."""

import importlib
import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier

import kernlearn
from kernlearn import (
    FGMClassifier,
    FGMRegressor,
    InfiniteFeatureClassifier,
    InfiniteFeatureRegressor,
    LowRankKernelRegressor,
    PNormMKLClassifier,
)
from kernlearn.datasets import make_fgm_synthetic
from kernlearn.families import (
    AdditiveKernelExpansion,
    GaborFeatures,
    PolynomialPool,
    RandomFourierFeatures,
)
from kernlearn.io import FORMAT_VERSION, load_model, read_metadata, save_model


def _conformance():
    out = []
    for module in sorted(set(kernlearn._ESTIMATORS.values())):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError:
            continue
        out += [est for est, _ in mod._conformance_instances()]
    return out


EXTRA = [
    FGMClassifier(B=2, family=PolynomialPool(), max_outer_iter=2),
    FGMClassifier(B=2, family=AdditiveKernelExpansion(), max_outer_iter=2),
    FGMClassifier(B=2, groups=[[0, 1], [2, 3, 4], [5]], max_outer_iter=2),
    FGMRegressor(B=2, refit=True, max_outer_iter=2),
    InfiniteFeatureRegressor(
        family=RandomFourierFeatures(bandwidth=[1.0, 3.0]),
        max_features=3,
        n_candidates=5,
        random_state=0,
    ),
    PNormMKLClassifier(
        kernels=[
            ("rbf", {"gamma": 0.5}, [0, 1, 2]),
            ("poly", {"degree": 2}),
            ("linear", {}, slice(2, 6)),
        ],
        max_iter=3,
        random_state=0,
    ),
    LowRankKernelRegressor(n_columns=12, precompute=False, random_state=0),
]


def _data(n_classes, sparse):
    X, y, w = make_fgm_synthetic(70, 6, 3, random_state=0)
    y = {2: y, 3: np.digitize(X @ w, [-0.7, 0.7]), 0: X @ w}[n_classes]
    return (sp.csr_matrix(X) if sparse else X), y


ALL = _conformance() + EXTRA


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize(
    "i", range(len(ALL)), ids=[f"{i}-{type(e).__name__}" for i, e in enumerate(ALL)]
)
def test_round_trip_gives_identical_predictions(i, tmp_path):
    """Every estimator, binary and 3-class (classifiers), dense and CSR input."""
    est = ALL[i]
    tags = est.__sklearn_tags__()
    settings = [
        (n, s)
        for n in (((2, 3) if tags.classifier_tags.multi_class else (2,))
                  if is_classifier(est) else (0,))
        for s in ((False, True) if tags.input_tags.sparse else (False,))
    ]
    for n_classes, sparse in settings:
        X, y = _data(n_classes, sparse)
        fitted = clone(est).fit(X, y)
        save_model(
            fitted, tmp_path / "m.npz", metadata={"note": "x", "arr": np.arange(3)}
        )
        again, meta = load_model(tmp_path / "m.npz", return_metadata=True)
        assert type(again) is type(fitted)
        np.testing.assert_array_equal(again.predict(X), fitted.predict(X))
        if hasattr(fitted, "decision_function"):
            np.testing.assert_array_equal(
                again.decision_function(X), fitted.decision_function(X)
            )
        assert repr(again.get_params()) == repr(fitted.get_params())
        assert meta["note"] == "x" and np.array_equal(meta["arr"], np.arange(3))


def test_round_trip_gabor_family_and_string_labels(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((40, 36))
    y = np.where(X[:, :18].sum(1) > X[:, 18:].sum(1), "left", "right")
    est = InfiniteFeatureClassifier(
        family=GaborFeatures(image_shape=(6, 6), filter_size=3),
        max_features=2,
        n_candidates=4,
        random_state=0,
    ).fit(X, y)
    save_model(est, tmp_path / "g.npz")
    again = load_model(tmp_path / "g.npz")
    assert again.classes_.dtype.kind == "U"
    np.testing.assert_array_equal(again.predict(X), est.predict(X))


def test_saved_fitted_state_is_complete(tmp_path):
    """Private fitted state (SLKL's output shape) survives: the bug of format 1."""
    X, y = _data(0, False)
    est = LowRankKernelRegressor(n_columns=10, random_state=0).fit(X, y)
    save_model(est, tmp_path / "m.npz")
    again = load_model(tmp_path / "m.npz")
    assert again.predict(X).shape == (70,) and again._y_ndim == 1


def test_save_refuses_what_the_schema_cannot_hold(tmp_path):
    from sklearn.linear_model import Ridge

    X, y = _data(2, False)
    with pytest.raises(TypeError, match="not a kernlearn estimator"):
        save_model(Ridge().fit(X, y), tmp_path / "r.npz")
    est = PNormMKLClassifier(
        kernels=[lambda A, B: A @ B.T], max_iter=2, random_state=0
    ).fit(X, y)
    with pytest.raises(TypeError, match="function"):
        save_model(est, tmp_path / "c.npz")
    est = FGMClassifier(B=2).fit(X, y)
    est.coef_ = est.coef_ * np.nan
    with pytest.raises(ValueError, match="coef_: it contains NaN"):
        save_model(est, tmp_path / "n.npz")
    assert not list(tmp_path.iterdir())  # nothing half-written is left behind


def test_file_is_json_plus_arrays_and_versioned(tmp_path):
    import zipfile

    X, y = _data(2, False)
    save_model(FGMClassifier(B=2).fit(X, y), tmp_path / "m.npz", metadata={"k": 1})
    with zipfile.ZipFile(tmp_path / "m.npz") as z:
        names = z.namelist()
    assert "__meta__.npy" in names and all(n.endswith(".npy") for n in names)
    with np.load(tmp_path / "m.npz", allow_pickle=False) as d:
        meta = json.loads(bytes(d["__meta__"]).decode())
    assert meta["version"] == FORMAT_VERSION and meta["class"] == "FGMClassifier"
    coef = meta["state"]["$dict"]["coef_"]
    assert coef["dtype"] == "<f8" and coef["finite"] and len(coef["sha256"]) == 64
    assert read_metadata(tmp_path / "m.npz") == {"k": 1}


def test_tampered_files_raise_value_errors(tmp_path):
    """Each tampering of reliability_cases gives a ValueError naming the problem."""
    import reliability_cases as rc

    X, y = _data(2, False)
    save_model(FGMClassifier(B=2).fit(X, y), tmp_path / "model.npz")
    rc.make_tampered(tmp_path)
    expected = {
        c.argv[-1].split("/")[-1]: c.message
        for c in rc.cases()
        if c.group == "tampered"
    }
    assert len(expected) >= 10
    for name, message in expected.items():
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            load_model(tmp_path / name)


def test_missing_model_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="model file not found"):
        load_model(tmp_path / "none.npz")


def test_state_may_not_shadow_methods_but_may_override_plain_defaults(tmp_path):
    """``predict`` (a method) is refused; a class-level number is a plain default."""
    import reliability_cases as rc

    X, y = _data(2, False)
    est = FGMClassifier(B=2).fit(X, y)
    save_model(est, tmp_path / "m.npz")
    meta, arrays = rc._read_npz(tmp_path / "m.npz")
    for name in ("predict", "fit", "_validate_params", "__class__", "score"):
        meta["state"]["$dict"][name] = 1
        rc._write_npz(tmp_path / "t.npz", meta, arrays)
        with pytest.raises(ValueError, match=f"attribute name '{name}' is not allowed"):
            load_model(tmp_path / "t.npz")
        del meta["state"]["$dict"][name]
    FGMClassifier._example_default_ = 0  # a plain class attribute
    try:
        meta["state"]["$dict"]["_example_default_"] = 3
        rc._write_npz(tmp_path / "t.npz", meta, arrays)
        assert load_model(tmp_path / "t.npz")._example_default_ == 3
    finally:
        del FGMClassifier._example_default_
