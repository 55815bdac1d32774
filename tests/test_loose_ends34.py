"""Model files: files labelled 0.1.0, one finiteness rule, index bounds, the size rule.

Files of kernlearn 0.1.0 (the development version before 0.2.0.dev0) are
written here by a minimal recipe: a model fitted by this code, the attributes
0.1.0 did not have deleted, saved under the label 0.1.0 (``kernlearn.__version__``
patched while saving).  Real 0.1.0 files, built from that code at its first
model format (2026-11-24) and its last commit (11-26), were checked by hand:
the low-rank and p-norm MKL ones predict here bit for bit as that code did,
FGM's and GrFL's decision values differ by 2e-16 to 9e-16 (refused).
"""

import struct
import warnings
import zipfile
from io import BytesIO

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import one_error, run_cli
from threadpoolctl import threadpool_limits

import kernlearn
import kernlearn.io as kio
from kernlearn import (FGMClassifier, FGMRegressor, InfiniteFeatureClassifier,
                       LowRankKernelClassifier, LowRankKernelRegressor,
                       MultitaskMKLRegressor, PNormMKLClassifier)
from kernlearn._model_state import OLDER_FILES
from kernlearn.io import load_model, save_model

rng = np.random.RandomState(0)
X = rng.randn(60, 4)
Y3 = np.digitize(X[:, 0], [-0.5, 0.5])
YR = X[:, 0] + 0.1 * rng.randn(60)
TASK = np.repeat([0, 1], 30)


def _fit(est, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **kw)


def _save_as(est, path, version, drop=()):
    """``est`` saved as a file of kernlearn ``version`` lacking ``drop``."""
    for name in drop:
        if name in vars(est):
            delattr(est, name)
    real = kernlearn.__version__
    kernlearn.__version__ = version
    try:
        save_model(est, path)
    finally:
        kernlearn.__version__ = real
    return path


# ------------------------------------------------------------ 1. 0.1.0 files
# (standardize=False and one width: what 0.1.0's files without x_mean_ /
# x_scale_ / center_factors_ meant, so the recipe's model is the same model)
OLD_CASES = {
    "LowRankKernelClassifier": (lambda: LowRankKernelClassifier(standardize=False), Y3),
    "LowRankKernelRegressor": (lambda: LowRankKernelRegressor(standardize=False), YR),
    "PNormMKLClassifier": (lambda: PNormMKLClassifier(standardize=False), Y3),
}


@pytest.mark.parametrize("name", sorted(OLD_CASES))
def test_a_0_1_0_file_that_predicts_as_saved_loads(name, tmp_path):
    make, y = OLD_CASES[name]
    with threadpool_limits(1):
        est = _fit(make(), y)
        if hasattr(est, "center_factors_"):
            est.center_factors_ = np.ones_like(est.center_factors_)
        expected = est.decision_function(X) if hasattr(est, "classes_") else est.predict(X)
        path = _save_as(est, tmp_path / "old.npz", "0.1.0", OLDER_FILES["0.1.0"][name])
        back = load_model(path)
        got = back.decision_function(X) if hasattr(est, "classes_") else back.predict(X)
    np.testing.assert_array_equal(got, expected)
    # the same file labelled with this version is refused: the reading is the label's
    with pytest.raises(ValueError, match=r"lacks the fitted attribute\(s\)"):
        load_model(_save_as(back, tmp_path / "new.npz", kernlearn.__version__,
                            OLDER_FILES["0.1.0"][name]))


@pytest.mark.parametrize("make, y", [
    (lambda: FGMClassifier(max_iter=3), Y3), (lambda: FGMRegressor(max_iter=3), YR),
    (lambda: InfiniteFeatureClassifier(max_iter=3), (Y3 > 0).astype(int))])
def test_a_0_1_0_file_of_fgm_or_grfl_is_refused_naming_the_version(make, y, tmp_path):
    # (FGM's 0.1.0 files held every attribute this version requires: only the
    # label tells them apart, and this code would round their decisions otherwise)
    est = _fit(make(), y)
    path = _save_as(est, tmp_path / "old.npz", "0.1.0")
    with pytest.raises(ValueError, match=r"saved by kernlearn 0\.1\.0 .*not read: its "
                       r"decision values would differ.*refit and save it again"):
        load_model(path)
    load_model(_save_as(est, tmp_path / "new.npz", kernlearn.__version__))


def test_cli_refuses_a_0_1_0_fgm_file_in_one_line(tmp_path, capsys):
    csv = tmp_path / "train.csv"
    rows = ["a,b,c,d,label"] + [",".join([*(f"{v:.4f}" for v in x), str(t)])
                                for x, t in zip(X, Y3)]
    csv.write_text("\n".join(rows) + "\n")
    model = tmp_path / "m.npz"
    code, _, err = run_cli(["fit", csv, "--model", model, "--quiet", "-e", "fgm"], capsys)
    assert code == 0, err
    _save_as(load_model(model), model, "0.1.0")
    code, out, err = run_cli(["predict", csv, "--model", model], capsys)
    assert code == 4 and one_error(err), err
    assert "kernlearn 0.1.0" in err and "refit" in err and str(model) in err


# ------------------------------------------------------- 2. one finiteness rule
@pytest.fixture(scope="module")
def fgm():
    return _fit(FGMClassifier(max_iter=3), Y3)


def _refused_on_load(est, tmp_path, match, monkeypatch):
    # (written past the save's own refusal, which reads the same rule)
    with monkeypatch.context() as m:
        m.setattr(kio, "nonfinite_allowed", lambda where, value: True)
        save_model(est, tmp_path / "m.npz")
    with pytest.raises(ValueError, match=match):
        load_model(tmp_path / "m.npz")


@pytest.mark.parametrize("attr, value, allowed", [
    ("x_scale_", np.inf, True), ("x_scale_", np.nan, False), ("x_scale_", -np.inf, False),
    ("coef_", np.inf, False), ("intercept_", np.nan, False), ("d_", np.inf, False)])
def test_one_finiteness_rule_on_save_and_load(fgm, tmp_path, monkeypatch, attr, value,
                                              allowed):
    import copy

    est = copy.deepcopy(fgm)
    arr = getattr(est, attr).astype(float)
    arr.flat[0] = value
    setattr(est, attr, arr)
    if allowed:
        save_model(est, tmp_path / "m.npz")
        assert np.isposinf(getattr(load_model(tmp_path / "m.npz"), attr).flat[0])
        return
    with pytest.raises(ValueError, match=f"refusing to save state.{attr}"):
        save_model(est, tmp_path / "m.npz")
    _refused_on_load(est, tmp_path, rf"state\.{attr}.* NaN or infinity", monkeypatch)


def test_nan_in_the_history_and_a_diagnostic_load(fgm, tmp_path):
    import copy

    est = copy.deepcopy(fgm)
    est.history_ = {"loss": np.array([1.0, np.nan])}
    save_model(est, tmp_path / "m.npz")
    assert np.isnan(load_model(tmp_path / "m.npz").history_["loss"][1])
    lr = _fit(LowRankKernelRegressor(), YR)
    lr.objective_ = float("nan")
    save_model(lr, tmp_path / "l.npz")
    assert np.isnan(load_model(tmp_path / "l.npz").objective_)


def test_io_reads_the_declarations_rule():
    # (no rule of its own: the names come from the declaration)
    assert not hasattr(kio, "_nonfinite_allowed") and not hasattr(kio, "_SCALE_NAMES")
    assert kio.nonfinite_allowed is kernlearn._model_state.nonfinite_allowed


# ---------------------------------------------------------- 3. index bounds
def _mtmkl():
    return _fit(MultitaskMKLRegressor(), YR, task_index=TASK)


def _past(est, name, value):
    setattr(est, name, value)
    return est


def _bucket_task(est):
    ids, rows, mask = est._blocks.buckets[0]
    est._blocks.buckets[0] = (ids + est._blocks.n_tasks, rows, mask)
    return est


def _bucket_row(est):
    ids, rows, mask = est._blocks.buckets[0]
    est._blocks.buckets[0] = (ids, rows + est._blocks.n_samples, mask)
    return est


def _task_row(est):
    est._blocks.task_rows[1] = est._blocks.task_rows[1] + 60
    return est


INDEX_CASES = {
    "FGMClassifier.selected_features_": (
        lambda: _past(_fit(FGMClassifier(max_iter=3), Y3), "selected_features_",
                      np.array([0, 2, 1, 4])), r"selected_features_ holds feature 4, past"),
    "FGMRegressor.selected_features_": (
        lambda: _past(est := _fit(FGMRegressor(max_iter=3), YR), "selected_features_",
                      np.r_[est.selected_features_[:-1], 7]),
        r"selected_features_ holds feature 7, past the 4 features"),
    "PNormMKLClassifier._absent_classes": (
        lambda: _past(_fit(PNormMKLClassifier(), Y3), "_absent_classes", np.array([3])),
        r"state\._absent_classes holds index 3, past its range \(below c = 3"),
    "LowRankKernelClassifier._absent_classes": (
        lambda: _past(_fit(LowRankKernelClassifier(), Y3), "_absent_classes",
                      np.array([5])), r"state\._absent_classes holds index 5, past"),
    "InfiniteFeatureClassifier._absent_classes": (
        lambda: _past(_fit(InfiniteFeatureClassifier(max_iter=3), Y3), "_absent_classes",
                      np.array([3])), r"state\._absent_classes holds index 3, past"),
    "MultitaskMKLRegressor._blocks task ids": (
        lambda: _bucket_task(_mtmkl()), r"_blocks\.buckets\[0\]\[0\] holds index \d+, past "
                                        r"its range \(below t = 2"),
    "MultitaskMKLRegressor._blocks rows": (
        lambda: _bucket_row(_mtmkl()), r"_blocks\.buckets\[0\]\[1\] holds index \d+, past "
                                       r"its range \(below K = 60"),
    "MultitaskMKLRegressor._blocks task_rows": (
        lambda: _task_row(_mtmkl()), r"_blocks\.task_rows\[1\] holds index \d+, past"),
    "PNormMKLClassifier kernel columns": (
        lambda: _fit(PNormMKLClassifier(kernels=[("rbf", {"gamma": 1.0}, [0, 1])]), Y3),
        None),
}


@pytest.mark.parametrize("case", sorted(INDEX_CASES))
def test_an_index_past_its_range_is_refused_on_load(case, tmp_path):
    make, match = INDEX_CASES[case]
    est = make()
    if match is None:  # (the kernel list's columns: past the 4 features)
        est.kernel_list_.specs[0] = ("rbf", est.kernel_list_.specs[0][1], [0, 4])
        match = r"kernel_list_\.specs\[0\]\[2\]\S* holds index 4, past its range \(below d"
    save_model(est, tmp_path / "m.npz")
    with pytest.raises(ValueError, match=match):
        load_model(tmp_path / "m.npz")


# ------------------------------------------------------------ 5. the size rule
def lying_member(body, name, declared):
    """The zip archive ``body`` with member ``name`` replaced by an ``.npy``
    header declaring ``declared`` bytes of float64 over 16 bytes, its archive
    entry declaring them too (sizes patched in both headers)."""
    head = BytesIO()
    np.lib.format.write_array_header_1_0(
        head, {"descr": "<f8", "fortran_order": False, "shape": (declared // 8,)})
    head = head.getvalue()
    src = zipfile.ZipFile(BytesIO(body))
    out = BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for n in src.namelist():
            z.writestr(n, head + b"\0" * 16 if n == name else src.read(n))
    data = bytearray(out.getvalue())
    size = struct.pack("<I", len(head) + declared)
    key = name.encode()
    for sig, at, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        i = data.find(sig)
        while i >= 0:
            if data[i + name_at:i + name_at + len(key)] == key:
                data[i + at:i + at + 4] = size
            i = data.find(sig, i + 4)
    return bytes(data)


def test_a_genuine_model_of_mostly_zeros_loads_past_the_floor(tmp_path, monkeypatch):
    """A wide sparse FGM: coef_ (3, 60000) dense, mostly zeros, packs over 100:1.
    The floor lowered to 64 kB stands for 256 MB (a real model over it: 3 classes
    of 11 million features, or 40 of 840,000)."""
    from kernlearn.utils import _npy_header

    r = np.random.RandomState(1)
    Xs = sp.random(80, 60000, density=1e-4, random_state=r, format="lil")
    Xs[:, :3] = r.randn(80, 3)
    Xs = Xs.tocsr()
    y = np.digitize(Xs[:, 0].toarray().ravel(), [-0.5, 0.5])
    est = FGMClassifier(max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(Xs, y)
    path = tmp_path / "wide.npz"
    save_model(est, path)
    monkeypatch.setattr(_npy_header, "_MIN_CAP", 2**16)
    declared = sum(v.nbytes for v in vars(est).values() if isinstance(v, np.ndarray))
    assert declared > 100 * path.stat().st_size > 2**16  # (the old rule refused it)
    np.testing.assert_array_equal(load_model(path).decision_function(Xs),
                                  est.decision_function(Xs))
    # the same archive with one member declaring 8 MB over 16 bytes: refused
    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.startswith("state.coef_"))
    body = lying_member(_without_comment(path), name, 2**23)
    path.write_bytes(kio._seal(body))
    with pytest.raises(ValueError, match=r"declare \d+ bytes, more than the \d+ bytes a "
                       r"model file .*holds fewer than it declares"):
        load_model(path)


def _without_comment(path):
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    buf = BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in members.items():
            z.writestr(n, b)
    return buf.getvalue()
