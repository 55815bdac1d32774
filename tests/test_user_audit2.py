"""Defects a new user met in a second user-level audit of the Python API and
the CLI; each test names what went wrong."""

import numpy as np
import pytest
from conftest import one_error as _one_error
from conftest import run_cli as _run


def _ok(capsys, *argv):
    """``kernlearn *argv``'s standard output; the command must succeed (exit 0)."""
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    return out


@pytest.mark.parametrize("name", ["LowRankKernelRegressor", "LowRankKernelClassifier"])
def test_slkl_with_fewer_columns_than_width_factors(name):
    # n_columns=1 (valid) with the two default width factors, or a regressor
    # on one row, failed with "n_columns=0 must be between 1 and n_samples"
    import kernlearn

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=60)
    if name.endswith("Classifier"):
        y = y > 0
    est = getattr(kernlearn, name)(n_columns=1, random_state=0).fit(X, y)
    # the one column is at the first factor, 1.0 (column j has factor j % 2)
    assert est.center_factors_.tolist() in ([], [1.0])
    two = getattr(kernlearn, name)(n_columns=2, random_state=0).fit(X, y)
    assert two.center_factors_.tolist() in ([], [1.0], [0.1], [1.0, 0.1])
    # n_columns=True passes the constraints as 1 (as in scikit-learn) and
    # crashed NumPy's sampling ("expected ... a single integer, got 'True'")
    est_true = getattr(kernlearn, name)(n_columns=True, random_state=0).fit(X, y)
    np.testing.assert_array_equal(est_true.predict(X), est.predict(X))
    if name.endswith("Regressor"):
        one = kernlearn.LowRankKernelRegressor(random_state=0).fit([[1.0, 2.0]], [3.0])
        # one row: its target is the intercept, whatever the input
        assert one.predict([[0.0, 0.0], [5.0, -1.0]]).tolist() == [3.0, 3.0]


def test_saving_an_unfitted_estimator_is_refused(tmp_path):
    # the file was written and every later load failed ("the model holds no
    # fitted attributes"): the user learned it only when using the model
    from sklearn.exceptions import NotFittedError

    from kernlearn import FGMClassifier
    from kernlearn.io import save_model

    with pytest.raises(NotFittedError):
        save_model(FGMClassifier(), tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


def _mt_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    t = np.arange(80) % 2
    return X, X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=80), t


def _kernels():
    from kernlearn.kernels import linear_kernel, rbf_kernel

    return [linear_kernel, (rbf_kernel, {"gamma": 0.5})]


@pytest.mark.parametrize("kw", [{}, {"C": "auto"}, {"formulation": "mtsfl"}])
def test_multitask_square_loss_on_extreme_target_scales(kw):
    # a constant target of 1e200 overflowed the dual and the model predicted
    # 0 (MK-MTSFL crashed with a KeyError); targets near 1e-300 got other
    # kernel weights: both without a word.  Now refused, and the square loss
    # is scale-equivariant wherever float64 holds the squares.
    from kernlearn import MultitaskMKLRegressor

    X, y, t = _mt_data()

    def fit(target):
        return MultitaskMKLRegressor(kernels=_kernels(), max_iter=5, **kw).fit(
            X, target, task_index=t)

    ref = fit(y)
    for s in (1e-140, 1e140):
        est = fit(y * s)
        # (C="auto" stops L-BFGS-B at a relative tolerance: 1e-7 apart)
        np.testing.assert_allclose(est.kernel_weights_, ref.kernel_weights_, atol=1e-6)
        np.testing.assert_allclose(est.predict(X, task_index=t) / s,
                                   ref.predict(X, task_index=t), rtol=1e-6, atol=1e-9)
    with pytest.raises(ValueError, match="too large for the square loss"):
        fit(np.full(80, 1e200))
    with pytest.raises(ValueError, match="varies too little for the square loss"):
        fit(y * 1e-300)
    # a constant target needs no squares of its spread: any scale
    np.testing.assert_allclose(fit(np.full(80, 1e-300)).predict(X[:2], task_index=t[:2]),
                               1e-300, rtol=1e-12)


def test_report_with_text_labels_for_a_regressor_is_a_mismatch(tmp_path, capsys):
    # evaluate said "has text labels; the model is a regressor" (exit 5),
    # report on the same file was an internal error (exit 1)
    rows = ["a,b,target"] + [f"{i % 7},{i % 3},{(i % 7) - 0.5 * (i % 3)}" for i in range(30)]
    (tmp_path / "reg.csv").write_text("\n".join(rows) + "\n")
    text = ["a,b,target"] + [f"{i % 7},{i % 3},{'yes' if i % 2 else 'no'}" for i in range(30)]
    (tmp_path / "text.csv").write_text("\n".join(text) + "\n")
    _ok(capsys, "fit", tmp_path / "reg.csv", "-e", "fgm-regressor", "-p", "C=1", "-q", "-m",
        tmp_path / "r.npz")
    for argv in (["evaluate", tmp_path / "text.csv", "-m", tmp_path / "r.npz"],
                 ["report", tmp_path / "r.npz", "--data", tmp_path / "text.csv",
                  "-o", tmp_path / "r.html"]):
        code, _, err = _run(argv, capsys)
        assert code == 5 and _one_error(err), err
        assert "text.csv has text labels; the model is a regressor" in err
    assert not (tmp_path / "r.html").exists()


def _damaged(tmp_path, name, data):
    """``data`` compressed as ``name`` says (an .npz: a table of its own), then
    truncated and bit-flipped."""
    import bz2
    import gzip
    import lzma

    ext = name.rsplit(".", 1)[1]
    if ext == "npz":
        np.savez(tmp_path / name, X=np.arange(600.0).reshape(300, 2), y=np.arange(300) % 2)
        raw = (tmp_path / name).read_bytes()
    else:
        raw = {"gz": gzip, "bz2": bz2, "xz": lzma}[ext].compress(data.encode())
    flipped = bytearray(raw)
    flipped[len(raw) // 2] ^= 0xFF
    return {"truncated": raw[: len(raw) // 2], "flipped": bytes(flipped)}


@pytest.mark.parametrize("name", ["d.svm.gz", "d.svm.xz", "d.npz"])
def test_damaged_data_files_are_data_errors(name, tmp_path, capsys):
    # a bit flipped in a gzip stream (zlib.error), a damaged or truncated .npz
    # (BadZipFile), and any damaged file read by `fit --out-of-core` (EOFError,
    # LZMAError) were internal errors: exit 1 and "please report it"
    X = np.random.default_rng(0).normal(size=(300, 3))
    text = "".join(f"{1 if x[0] > 0 else -1} 1:{x[0]:.5f} 2:{x[1]:.5f} 3:{x[2]:.5f}\n"
                   for x in X)
    for kind, raw in _damaged(tmp_path, name, text).items():
        path = tmp_path / f"{kind}-{name}"
        path.write_bytes(raw)
        runs = [["fit", path, "-e", "fgm", "-q", "-m", tmp_path / "m.npz"]]
        if ".svm" in name:
            runs.append(runs[0] + ["--out-of-core"])
        for argv in runs:
            code, _, err = _run(argv, capsys)
            assert code == 3 and _one_error(err), (kind, argv[-1], err)
            assert path.name in err and "internal error" not in err


@pytest.mark.parametrize("name", ["pnorm-mkl", "mtmkl-regressor"])
def test_precomputed_kernels_are_a_usage_error_before_reading(name, tmp_path, capsys):
    # refused only inside the fit, after reading the data (exit 6)
    code, _, err = _run(["fit", tmp_path / "absent.csv", "-e", name, "-p",
                         "kernels=precomputed", "-q", "-m", tmp_path / "m.npz"], capsys)
    assert code == 2 and _one_error(err), err
    assert "kernels='precomputed' takes a list of Gram matrices" in err


def test_non_finite_values_are_named_where_they_are(tmp_path, capsys):
    # "contains NaN or infinite feature values" named no row nor column
    # (missing values did); with --out-of-core neither the block
    rows = ["a,b,target"] + [f"{i % 7},{i % 3},{'yes' if i % 2 else 'no'}" for i in range(30)]
    rows[12] = "1e400,1,yes"  # (parsed as infinity)
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    code, _, err = _run(["fit", tmp_path / "t.csv", "-e", "fgm", "-q", "-m",
                         tmp_path / "m.npz"], capsys)
    assert code == 3 and _one_error(err), err
    assert "t.csv: row 13, column a: inf is not a finite number." in err
    lines = [f"{1 if i % 2 else -1} 1:{i % 7} 3:{i % 3 + 1}" for i in range(3000)]
    lines[2345] = "1 1:0.5 2:nan"
    (tmp_path / "t.svm").write_text("\n".join(lines) + "\n")
    for extra in ([], ["--out-of-core", "--chunk-memory", "8KB"]):
        code, _, err = _run(["fit", tmp_path / "t.svm", "-e", "fgm", "-q", "-m",
                             tmp_path / "m.npz", *extra], capsys)
        assert code == 3 and _one_error(err), err
        assert "(first: sample 2346, feature 2 of 3)" in err, (extra, err)
    (tmp_path / "ok.svm").write_text("\n".join(lines[:2000]) + "\n")
    _ok(capsys, "fit", tmp_path / "ok.svm", "-e", "fgm", "-q", "-m", tmp_path / "m.npz")
    code, _, err = _run(["evaluate", tmp_path / "t.svm", "-m", tmp_path / "m.npz",
                         "--out-of-core", "--chunk-memory", "8KB"], capsys)
    assert code == 3 and "(first: sample 2346, feature 2 of 3)" in err, err


def _fit_csv(tmp_path, name, lines, model, capsys, *options):
    """Write ``lines`` to ``name`` and ``kernlearn fit`` them (FGM unless ``-e``) into ``model``."""
    (tmp_path / name).write_text("\n".join(lines) + "\n")
    estimator = [] if "-e" in options else ["-e", "fgm"]
    return _ok(capsys, "fit", tmp_path / name, *estimator, "-q", "-m", tmp_path / model,
               *options)


def test_label_codes_with_leading_zeros_keep_their_text(tmp_path, capsys):
    # pandas read "007" as 7: predictions said 7, and the codes "01" and "1"
    # became one class (fit refused "a single class (1)"), both silently
    rows = ["a,b,code"] + [f"{i % 7},{i % 3},{'007' if i % 7 > 2 else '012'}"
                           for i in range(40)]
    _fit_csv(tmp_path, "z.csv", rows, "m.npz", capsys, "-p", 'class_weight={"007": 2}')
    out = _ok(capsys, "predict", tmp_path / "z.csv", "-m", tmp_path / "m.npz")
    assert set(out.split()) == {"007", "012"}, out
    out = _ok(capsys, "evaluate", tmp_path / "z.csv", "-m", tmp_path / "m.npz")
    assert "accuracy 1.0000" in out, out
    two = ["a,b,code"] + [f"{i % 7},{i % 3},{'01' if i % 7 > 2 else '1'}" for i in range(40)]
    _fit_csv(tmp_path, "two.csv", two, "m2.npz", capsys)
    out = _ok(capsys, "predict", tmp_path / "two.csv", "-m", tmp_path / "m2.npz")
    assert set(out.split()) == {"01", "1"}, out
    # tasks too ("01" and "1" were one task); targets stay numbers for a
    # regressor, and a model of numeric classes reads "007" as 7
    reg = ["a,task,t"] + [f"{i % 7},{'01' if i % 2 else '1'},{i % 7:03d}" for i in range(40)]
    (tmp_path / "reg.csv").write_text("\n".join(reg) + "\n")
    from kernlearn.datafiles import load_data_file

    _, y, info = load_data_file(tmp_path / "reg.csv", task_column="task")
    assert sorted(set(info["tasks"])) == ["01", "1"] and y[:3].tolist() == ["000", "001", "002"]
    out = _ok(capsys, "fit", tmp_path / "reg.csv", "-e", "fgm-regressor", "-p", "C=1", "-q", "-m",
              tmp_path / "r.npz")
    assert "training R^2 0.99" in out, out  # (t = a, as 000...006)
    out = _ok(capsys, "evaluate", tmp_path / "reg.csv", "-m", tmp_path / "r.npz")
    assert "r2 0.99" in out, out
    plain = ["a,b,code"] + [f"{i % 7},{i % 3},{7 if i % 7 > 2 else 12}" for i in range(40)]
    _fit_csv(tmp_path, "plain.csv", plain, "p.npz", capsys)
    out = _ok(capsys, "evaluate", tmp_path / "z.csv", "-m", tmp_path / "p.npz")
    assert "accuracy 1.0000" in out, out


def test_interrupted_synthetic_file_leaves_no_partial_file(tmp_path, monkeypatch):
    # the generator wrote in place: an interrupt after some chunks left a
    # shorter, well-formed data file under the final name
    import sklearn.datasets

    from kernlearn.datasets import write_fgm_synthetic_svmlight

    path = tmp_path / "s.svm"
    w = write_fgm_synthetic_svmlight(path, 60, 20, 5, chunk_rows=10, density=0.5,
                                     random_state=0)
    before = path.read_bytes()
    real, calls = sklearn.datasets.dump_svmlight_file, []

    def interrupted(*args, **kw):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(sklearn.datasets, "dump_svmlight_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_fgm_synthetic_svmlight(path, 60, w=w, chunk_rows=10, density=0.5,
                                     random_state=1)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["s.svm"]


def test_evaluate_out_help_says_what_it_does(tmp_path, capsys):
    # the help said "write here instead of stdout"; evaluate prints the
    # metrics and also writes them to --out
    from kernlearn.cli import build_parser

    rows = ["a,b,target"] + [f"{i % 7},{i % 3},{'yes' if i % 7 > 2 else 'no'}" for i in range(40)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    _ok(capsys, "fit", tmp_path / "t.csv", "-e", "fgm", "-q", "-m", tmp_path / "m.npz")
    out = _ok(capsys, "evaluate", tmp_path / "t.csv", "-m", tmp_path / "m.npz", "-o",
              tmp_path / "e.txt")
    assert out.startswith("n_samples 40") and (tmp_path / "e.txt").read_text() == out
    action = next(a for a in build_parser()._subparsers._group_actions[0].choices["evaluate"]
                  ._actions if "--out" in a.option_strings)
    assert "instead of stdout" not in action.help and "also write" in action.help


@pytest.mark.parametrize("name", ["MultitaskMKLRegressor", "InfiniteFeatureRegressor"])
def test_task_ids_that_cannot_be_ordered_are_named(name):
    # a missing task id (None among strings) or ids of two kinds failed with
    # NumPy's "'<' not supported between instances of 'NoneType' and 'str'"
    import kernlearn

    X = np.random.default_rng(0).normal(size=(60, 3))
    t = np.array(["a", "b"] * 30, dtype=object)
    est = getattr(kernlearn, name)(**({"kernels": ["linear"]} if "MKL" in name
                                      else {"max_features": 3, "random_state": 0}))
    bad = t.copy()
    bad[5] = None
    # (a missing id is named by its row since audit 52; was "mixes ... NoneType, str")
    with pytest.raises(ValueError, match="task_index has a missing value at row 5"):
        est.fit(X, X[:, 0], task_index=bad)
    with pytest.raises(TypeError, match="of types int, str"):
        est.fit(X, X[:, 0], task_index=np.array(["a", 1] * 30, dtype=object))
    est.fit(X, X[:, 0], task_index=t)
    with pytest.raises(ValueError, match=r"task_index has a missing value at row 1"):
        est.predict(X[:2], task_index=np.array(["a", None], dtype=object))
    np.testing.assert_array_equal(est.predict(X[:2], task_index=np.array(["b", "a"])),
                                  est.predict(X[:2], task_index=t[[1, 0]]))


@pytest.mark.parametrize("name", ["FGMClassifier", "LowRankKernelClassifier",
                                  "MultitaskMKLClassifier"])
def test_labels_that_cannot_be_ordered_are_named(name):
    # as task ids: a None among string labels was NumPy's "'<' not supported"
    import kernlearn

    X = np.random.default_rng(0).normal(size=(60, 3))
    y = np.array(["a", "b"] * 30, dtype=object)
    est = getattr(kernlearn, name)(**({"kernels": ["linear"]} if "MKL" in name else {}))
    with pytest.raises(TypeError, match="y mixes labels of types int, str"):
        est.fit(X, np.where(np.arange(60) == 3, 1, y).astype(object))
    # a missing label (None) is named as such, with its row (test_user_audit4)
    y[3] = None
    with pytest.raises(ValueError, match="y has a missing value at row 3"):
        est.fit(X, y)


def test_predict_on_an_unlabelled_csv_file(tmp_path, capsys):
    # a file of the model's feature columns only (new data, no label) was
    # refused: "--label 'target': no such column" (the model's label name
    # was looked up as a --label), though the docs read it as unlabelled
    rows = ["a,b,target"] + [f"{i % 7},{i % 3},{'yes' if i % 7 > 2 else 'no'}" for i in range(40)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    new = ["b,a"] + [f"{i % 3},{i % 7}" for i in range(40)]  # (reordered too)
    (tmp_path / "new.csv").write_text("\n".join(new) + "\n")
    _ok(capsys, "fit", tmp_path / "t.csv", "-e", "fgm", "-q", "-m", tmp_path / "m.npz")
    ref = _ok(capsys, "predict", tmp_path / "t.csv", "-m", tmp_path / "m.npz")
    out = _ok(capsys, "predict", tmp_path / "new.csv", "-m", tmp_path / "m.npz")
    assert out == ref, out
    code, _, err = _run(["evaluate", tmp_path / "new.csv", "-m", tmp_path / "m.npz"], capsys)
    assert code == 3 and _one_error(err) and "has no labels to evaluate against" in err
    # a label column under another name is still refused, by name
    other = ["a,b,y"] + [f"{i % 7},{i % 3},yes" for i in range(5)]
    (tmp_path / "other.csv").write_text("\n".join(other) + "\n")
    code, _, err = _run(["predict", tmp_path / "other.csv", "-m", tmp_path / "m.npz"], capsys)
    assert code == 5 and "column 'y' is not a feature of the model nor its label 'target'" in err


def test_dash_outputs_of_report_fit_and_demo(tmp_path, capsys, monkeypatch):
    # `report -o -` wrote a file named "-" ("report written to -"), as did
    # `fit -m -` (a model) and `demo --out -` (a folder)
    w = tmp_path
    rows = ["target,a,b"] + [f"{'yes' if i % 7 > 2 else 'no'},{i % 7},{i % 3}" for i in range(40)]
    (w / "t.csv").write_text("\n".join(rows) + "\n")
    _ok(capsys, "fit", w / "t.csv", "--label", "0", "-e", "fgm", "-q", "-m", w / "m.npz")
    monkeypatch.chdir(w)
    code, out, err = _run(["report", w / "m.npz", "-o", "-"], capsys)
    assert code == 0 and err == "" and out.startswith("<!DOCTYPE html>"), err
    assert out.rstrip().endswith("</html>")
    code, _, err = _run(["fit", w / "t.csv", "--label", "0", "-e", "fgm", "-q", "-m", "-"],
                        capsys)
    assert code == 2 and _one_error(err) and "--model -" in err
    code, _, err = _run(["demo", "--quick", "-q", "--out", "-"], capsys)
    assert code == 2 and _one_error(err) and "--out -" in err
    assert not (w / "-").exists()


def test_proba_of_a_regressor_says_it_is_one(tmp_path, capsys):
    # "FGMRegressor with these parameters has no predict_proba": no
    # parameter gives a regressor class probabilities
    rows = ["a,b,target"] + [f"{i % 7},{i % 3},{(i % 7) - 0.5 * (i % 3)}" for i in range(30)]
    (tmp_path / "reg.csv").write_text("\n".join(rows) + "\n")
    _ok(capsys, "fit", tmp_path / "reg.csv", "-e", "fgm-regressor", "-p", "C=1", "-q", "-m",
        tmp_path / "r.npz")
    code, _, err = _run(["predict", tmp_path / "reg.csv", "-m", tmp_path / "r.npz",
                         "--proba"], capsys)
    assert code == 2 and _one_error(err), err
    assert "--proba gives class probabilities; FGMRegressor is a regressor" in err


def test_task_ids_with_leading_zeros_match_a_model_of_numeric_tasks(tmp_path, capsys):
    # read as text ("01"), the ids of a test file must still find the tasks
    # 0 and 1 of a model fitted on a file that wrote them plainly
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    t = np.arange(60) % 2
    y = np.where(t == 0, X[:, 0], -X[:, 0]) + 0.1 * X[:, 1]
    for name, fmt in (("plain.csv", "{}"), ("zeros.csv", "0{}")):
        lines = ["a,b,task,y"] + [f"{a:.4f},{b:.4f},{fmt.format(k)},{v:.4f}"
                                  for (a, b), k, v in zip(X, t, y)]
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    _ok(capsys, "fit", tmp_path / "plain.csv", "-e", "mtmkl-regressor", "--task-column", "task",
        "-q", "-m", tmp_path / "m.npz")
    ref = _ok(capsys, "evaluate", tmp_path / "plain.csv", "-m", tmp_path / "m.npz")
    out = _ok(capsys, "evaluate", tmp_path / "zeros.csv", "-m", tmp_path / "m.npz")
    assert out == ref, out
    # (a model fitted without tasks has tasks_ None: still exit 5, not 1)
    lines = ["a,b,y"] + [f"{a:.4f},{b:.4f},{v:.4f}" for (a, b), v in zip(X, y)]
    (tmp_path / "notask.csv").write_text("\n".join(lines) + "\n")
    _ok(capsys, "fit", tmp_path / "notask.csv", "-e", "infinite-regressor", "-p", "max_features=3",
        "-q", "-m", tmp_path / "i.npz")
    code, _, err = _run(["predict", tmp_path / "zeros.csv", "-m", tmp_path / "i.npz",
                         "--task-column", "task"], capsys)
    assert code == 5 and _one_error(err) and "fitted without it" in err, err


def test_task_column_for_a_model_without_tasks_is_a_usage_error(tmp_path, capsys):
    # fit refuses --task-column for an estimator without task_index (exit 2);
    # predict passed the tasks on: "predict() got an unexpected keyword
    # argument 'task_index'", an internal error (exit 1)
    rows = ["a,b,task,target"] + [f"{i % 7},{i % 3},{i % 2},{'yes' if i % 7 > 2 else 'no'}"
                                  for i in range(40)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    plain = ["a,b,target"] + [f"{i % 7},{i % 3},{'yes' if i % 7 > 2 else 'no'}"
                              for i in range(40)]
    (tmp_path / "f.csv").write_text("\n".join(plain) + "\n")
    _ok(capsys, "fit", tmp_path / "f.csv", "-e", "fgm", "-q", "-m", tmp_path / "m.npz")
    for cmd in (["predict", tmp_path / "t.csv", "-m", tmp_path / "m.npz"],
                ["evaluate", tmp_path / "t.csv", "-m", tmp_path / "m.npz"],
                ["report", tmp_path / "m.npz", "--data", tmp_path / "t.csv", "-o",
                 tmp_path / "r.html"]):
        code, _, err = _run(cmd + ["--task-column", "task"], capsys)
        assert code == 2 and _one_error(err), err
        assert "FGMClassifier does not take tasks (task_index); drop --task-column" in err
