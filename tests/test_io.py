"""Safe model files: round trips for every estimator, schema and tamper checks."""

import importlib
import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, clone, is_classifier
from sklearn.pipeline import make_pipeline

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
    FGMClassifier(B=2, family=PolynomialPool(), max_iter=2),
    FGMClassifier(B=2, family=AdditiveKernelExpansion(), max_iter=2),
    FGMClassifier(B=2, groups=[[0, 1], [2, 3, 4], [5]], max_iter=2),
    FGMRegressor(B=2, refit=True, max_iter=2),
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


class _UserTransformer(TransformerMixin, BaseEstimator):
    """A class of the user's: no safe file may be trusted to rebuild it."""

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return X


def test_save_refuses_what_the_schema_cannot_hold(tmp_path):
    X, y = _data(2, False)
    with pytest.raises(TypeError, match="neither a kernlearn estimator nor"):
        save_model({"coef": 1}, tmp_path / "r.npz")
    pipe = make_pipeline(_UserTransformer(), FGMClassifier(B=2)).fit(X, y)
    with pytest.raises(TypeError, match="_UserTransformer, neither a scikit-learn"):
        save_model(pipe, tmp_path / "p.skops")
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


# ------------------------------------------------- composites, seal, versions
def _pipeline_case(name):
    """A pipeline ending in kernlearn estimator ``name``, its data and fit kwargs."""
    from sklearn.preprocessing import StandardScaler

    X, y, w = make_fgm_synthetic(60, 5, 3, random_state=1)
    est = getattr(kernlearn, name)()
    small = {
        "max_iter": 3, "max_features": 3, "n_candidates": 5, "n_columns": 8,
        "random_state": 0,
    }
    params = est.get_params()  # deprecated aliases (default "deprecated") left alone
    est.set_params(**{k: v for k, v in small.items() if k in params
                      and not (isinstance(params[k], str) and params[k] == "deprecated")})
    target = X @ w if "Regressor" in name else y
    pipe = make_pipeline(StandardScaler(), est)
    kw = {}
    if "Multitask" in name:
        kw = {f"{pipe.steps[-1][0]}__task_index": np.arange(60) % 2}
    return pipe, X, target, kw


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", sorted(kernlearn._ESTIMATORS))
def test_pipeline_with_each_estimator_round_trips(name, tmp_path):
    """save_model/load_model, and plain skops.io with trusted_types(): the same
    predictions."""
    import skops.io as sio

    from kernlearn.io import trusted_types

    pipe, X, y, kw = _pipeline_case(name)
    pipe.fit(X, y, **kw)
    pred_kw = {"task_index": np.arange(60) % 2} if "Multitask" in name else {}
    expected = pipe.predict(X, **pred_kw)
    save_model(pipe, tmp_path / "p.skops")
    again = load_model(tmp_path / "p.skops")
    np.testing.assert_array_equal(again.predict(X, **pred_kw), expected)
    sio.dump(pipe, tmp_path / "plain.skops")
    plain = sio.load(tmp_path / "plain.skops", trusted=trusted_types())
    np.testing.assert_array_equal(plain.predict(X, **pred_kw), expected)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_grid_search_and_column_transformer_round_trip(tmp_path):
    from sklearn.compose import ColumnTransformer
    from sklearn.model_selection import GridSearchCV
    from sklearn.preprocessing import StandardScaler

    X, y = _data(2, False)
    search = GridSearchCV(FGMClassifier(max_iter=2), {"B": [1, 3]}, cv=2)
    search.fit(X, y)
    save_model(search, tmp_path / "s.skops")
    again = load_model(tmp_path / "s.skops")
    assert again.best_params_ == search.best_params_
    np.testing.assert_array_equal(again.predict(X), search.predict(X))
    ct = make_pipeline(
        ColumnTransformer(
            [("s", StandardScaler(), [0, 1, 2])], remainder="passthrough"
        ),
        PNormMKLClassifier(max_iter=3, random_state=0),
    ).fit(X, y)
    save_model(ct, tmp_path / "c.skops")
    np.testing.assert_array_equal(
        load_model(tmp_path / "c.skops").decision_function(X), ct.decision_function(X)
    )


def test_tampered_composite_is_refused(tmp_path):
    """A changed byte breaks the seal; a resealed file naming an untrusted type
    (os.system) is refused by skops' trust check."""
    import io as _io
    import zipfile

    from kernlearn.io import _seal

    X, y = _data(2, False)
    save_model(make_pipeline(FGMClassifier(B=2)).fit(X, y), tmp_path / "p.skops")
    data = bytearray((tmp_path / "p.skops").read_bytes())
    data[len(data) // 2] ^= 4
    (tmp_path / "flip.skops").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="checksum mismatch"):
        load_model(tmp_path / "flip.skops")
    with zipfile.ZipFile(tmp_path / "p.skops") as z:
        members = {n: z.read(n) for n in z.namelist()}
    members["schema.json"] = members["schema.json"].replace(
        b'"kernlearn.estimators.fgm"', b'"os"'
    ).replace(b'"FGMClassifier"', b'"system"')
    buf = _io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, b in members.items():
            z.writestr(n, b)
    (tmp_path / "evil.skops").write_bytes(_seal(buf.getvalue()))
    with pytest.raises(ValueError, match="cannot rebuild|Untrusted|untrusted"):
        load_model(tmp_path / "evil.skops")


def test_dataframe_fitted_model_keeps_column_names(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = _data(2, False)
    df = pd.DataFrame(X, columns=[f"col {j}" for j in range(X.shape[1])])
    est = FGMClassifier(B=2).fit(df, y)
    save_model(est, tmp_path / "m.npz")
    again = load_model(tmp_path / "m.npz")
    assert again.feature_names_in_.dtype == object
    assert list(again.feature_names_in_) == list(df.columns)
    np.testing.assert_array_equal(again.predict(df), est.predict(df))
    with pytest.raises(ValueError, match="feature names"):
        again.predict(df.rename(columns={"col 0": "other"}))


def test_every_single_bit_flip_is_refused(tmp_path):
    """The seal covers every byte: 300 random single-bit flips, all refused."""
    X, y = _data(2, False)
    save_model(FGMClassifier(B=2).fit(X, y), tmp_path / "m.npz")
    data = (tmp_path / "m.npz").read_bytes()
    rng = np.random.default_rng(0)
    bits = rng.choice(len(data) * 8, 300, replace=False)
    bits[:2] = [0, len(data) * 8 - 1]  # the first and the last bit too
    for bit in bits:
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        (tmp_path / "f.npz").write_bytes(bytes(flipped))
        with pytest.raises(ValueError):
            load_model(tmp_path / "f.npz")


def test_declared_array_sizes_are_capped(tmp_path, monkeypatch):
    """A small file may not make the reader allocate what its headers declare."""
    import io as _io
    import zipfile

    import reliability_cases as rc
    from kernlearn import io as kio

    X, y = _data(2, False)
    save_model(FGMClassifier(B=2).fit(X, y), tmp_path / "m.npz")
    meta, arrays = rc._read_npz(tmp_path / "m.npz")
    # a header declaring 10**12 floats over a few bytes of data
    buf = _io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)}
    )
    rc._write_npz(tmp_path / "h.npz", meta, arrays)
    with zipfile.ZipFile(tmp_path / "h.npz", "a") as z:
        z.writestr("liar.npy", buf.getvalue() + b"\0" * 16)
    (tmp_path / "h.npz").write_bytes(kio._seal(_strip_comment(tmp_path / "h.npz")))
    with pytest.raises(ValueError, match="declares 8000000000000 bytes"):
        load_model(tmp_path / "h.npz")
    # a compressed run of zeros: 8 MB of arrays in a file of a few kB, over the
    # cap; its members hold what they declare (a genuine file: refused only for
    # the array the metadata does not describe), while one whose archive entry
    # declares 8 MB over a few bytes is refused before anything is allocated
    from kernlearn.utils import _npy_header
    from test_loose_ends34 import lying_member

    monkeypatch.setattr(_npy_header, "_MIN_CAP", 2**20)
    arrays["state.pad#99"] = np.zeros(2**20)
    buf = _io.BytesIO()
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez_compressed(buf, **arrays)
    (tmp_path / "z.npz").write_bytes(kio._seal(buf.getvalue()))
    with pytest.raises(ValueError, match="unexpected arrays"):
        load_model(tmp_path / "z.npz")
    (tmp_path / "z.npz").write_bytes(kio._seal(lying_member(
        _strip_comment(tmp_path / "z.npz"), "state.pad#99.npy", 2**23)))
    with pytest.raises(ValueError, match="more than the .* bytes a model file"):
        load_model(tmp_path / "z.npz")


def _strip_comment(path):
    import zipfile

    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    import io as _io

    buf = _io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, b in members.items():
            z.writestr(n, b)
    return buf.getvalue()


def test_file_of_another_version_names_both_versions(tmp_path, monkeypatch):
    import reliability_cases as rc
    from kernlearn import io as kio

    X, y = _data(2, False)
    save_model(FGMClassifier(B=2).fit(X, y), tmp_path / "m.npz")
    meta, arrays = rc._read_npz(tmp_path / "m.npz")
    meta["version"] = 7
    monkeypatch.setattr(kernlearn, "__version__", "9.9.0")
    rc._write_npz(tmp_path / "future.npz", meta, arrays)  # sealed by "9.9.0"
    monkeypatch.setattr(kernlearn, "__version__", "0.1.0")
    with pytest.raises(ValueError, match=r"saved by kernlearn 9\.9\.0 .*refit"):
        load_model(tmp_path / "future.npz")
    # a composite naming a class this version does not have
    save_model(make_pipeline(FGMClassifier(B=2)).fit(X, y), tmp_path / "p.skops")
    body = _strip_comment(tmp_path / "p.skops").replace(
        b"FGMClassifier", b"FGMClassifieX"
    )
    (tmp_path / "old.skops").write_bytes(kio._seal(body, version="0.0.5"))
    with pytest.raises(ValueError, match=r"saved by kernlearn 0\.0\.5 .*0\.0\.5"):
        load_model(tmp_path / "old.skops")


def test_unsealed_format_2_files_are_still_read(tmp_path):
    import reliability_cases as rc

    X, y = _data(2, False)
    est = FGMClassifier(B=2).fit(X, y)
    save_model(est, tmp_path / "m.npz")
    meta, arrays = rc._read_npz(tmp_path / "m.npz")
    meta["version"] = 2
    rc._write_npz(tmp_path / "v2.npz", meta, arrays, seal=False)
    np.testing.assert_array_equal(
        load_model(tmp_path / "v2.npz").predict(X), est.predict(X)
    )
    meta["version"] = 3
    rc._write_npz(tmp_path / "v3.npz", meta, arrays, seal=False)
    with pytest.raises(ValueError, match="seal is missing"):
        load_model(tmp_path / "v3.npz")


def test_model_file_gets_the_mode_a_plain_open_gives(tmp_path):
    # saved through a temporary file: not mkstemp's private 0600, so a model
    # can be shared like any file the user writes; nothing else is left behind
    import os

    from kernlearn import FGMClassifier
    from kernlearn.io import save_model

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    est = FGMClassifier(B=1).fit(X, np.sign(X[:, 0]))
    umask = os.umask(0o022)
    try:
        save_model(est, tmp_path / "m.npz")
    finally:
        os.umask(umask)
    assert (tmp_path / "m.npz").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]


def test_atomic_writes_go_into_pipes_and_through_links(tmp_path):
    # a rename replaced whatever the path named: `-o /dev/stdout`, a FIFO, or
    # (for root) /dev/null itself became a regular file; a symbolic link was
    # replaced by a file instead of updating the file it names
    import os
    import threading
    from pathlib import Path

    from kernlearn.io import write_atomically

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()), daemon=True)
    reader.start()
    write_atomically(fifo, lambda p: Path(p).write_text("through the pipe\n"))
    reader.join(timeout=30)
    assert got == ["through the pipe\n"]
    assert fifo.is_fifo()
    target, link = tmp_path / "target.txt", tmp_path / "link.txt"
    target.write_text("old\n")
    link.symlink_to(target)
    write_atomically(link, lambda p: Path(p).write_text("new\n"))
    assert link.is_symlink() and target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "pipe", "target.txt"]
