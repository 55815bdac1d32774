"""The kernlearn command on real files for every estimator, formats, model metadata."""

import json
import subprocess
import sys

import numpy as np
import pytest

from kernlearn.cli import ESTIMATORS, main
from kernlearn.io import load_model

from conftest import run_cli as _run, real_data

SHARED_FILES = {
    # estimator -> (training data argument(s), parameters kept small for speed)
    "fgm": (["wine"], ["B=2", "max_iter=3"]),
    "fgm-regressor": (["{data}/housing/housing_scale.bz2"], ["B=3"]),
    "infinite-classifier": (
        ["wine"],
        ["max_features=5", "n_candidates=20", "random_state=0"],
    ),
    "infinite-regressor": (
        ["{data}/housing/housing_scale.bz2"],
        ["max_features=5", "n_candidates=20", "random_state=0"],
    ),
    "pnorm-mkl": (
        ["{data}/wine/wine.data", "--format", "csv", "--no-header", "--label", "0"],
        [
            "max_iter=5",
            "random_state=0",
            'kernels=["linear", ["rbf", {"gamma": "mean"}]]',
        ],
    ),
    "lowrank-regressor": (
        ["{data}/housing/housing_scale.bz2"],
        ["n_columns=64", "random_state=0"],
    ),
    "lowrank-classifier": (["wine"], ["n_columns=40", "random_state=0"]),
}


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", sorted(SHARED_FILES))
def test_every_estimator_fit_predict_evaluate_select(name, tmp_path, capsys):
    from kernlearn.datasets import data_home

    real_data("wine")
    real_data("housing")
    data, params = SHARED_FILES[name]
    data = [d.replace("{data}", str(data_home())) for d in data]
    model = tmp_path / "m.npz"
    argv = ["fit", *data, "-e", name, "-m", model, "-q"]
    for p in params:
        argv += ["-p", p]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    assert f"fitted {name}" in out and "model saved" in out
    est, meta = load_model(model, return_metadata=True)
    assert type(est).__name__ == ESTIMATORS[name][0]
    assert meta["n_features"] == 13 and meta["cli_estimator"] == name
    code, out, err = _run(["evaluate", *data, "-m", model, "--json"], capsys)
    assert code == 0, err
    metrics = json.loads(out)
    key = "accuracy" if ESTIMATORS[name][1] == "classification" else "r2"
    assert metrics[key] == pytest.approx(meta["train_score"])  # same data as the fit
    # a working model beats the constant predictor (majority class / mean: R^2 = 0)
    assert metrics[key] > (0.41 if key == "accuracy" else 0.3), metrics
    code, out, err = _run(
        ["predict", *data, "-m", model, "-o", tmp_path / "p.txt"], capsys
    )
    assert code == 0, err
    assert len((tmp_path / "p.txt").read_text().splitlines()) == metrics["n_samples"]
    code, out, err = _run(["select", model, "--format", "json"], capsys)
    assert code == 0, err
    assert len(json.loads(out)) >= 1


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    import reliability_cases as rc

    w = tmp_path_factory.mktemp("cli")
    rc.make_workspace(w)
    return w


@pytest.mark.parametrize(
    "name",
    [
        "train.svm",
        "train.svm.bz2",
        "train.svm.gz",
        "train.svm.xz",
        "train.csv",
        "train.npy",
        "train.npz",
    ],
)
def test_all_formats_give_the_same_model(name, files, capsys):
    code, out, err = _run(
        [
            "fit",
            files / name,
            "-e",
            "fgm",
            "-p",
            "B=2",
            "-q",
            "-m",
            files / f"{name}.model",
        ],
        capsys,
    )
    assert code == 0, err
    ref = load_model(files / "model.npz")  # fitted on train.svm (sparse)
    est, meta = load_model(files / f"{name}.model", return_metadata=True)
    if name.startswith("train.svm"):
        np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-10)
    else:
        # Tables are dense: FGM standardises dense columns by their standard
        # deviation and sparse ones by their largest value (doc/fgm.md), so
        # the dense formats agree with each other and, without standardising,
        # with the sparse file.
        dense = load_model(files / "model_csv.npz") if (files / "model_csv.npz").exists() \
            else None
        if dense is None:
            assert _run(["fit", files / "train.csv", "-e", "fgm", "-p", "B=2", "-q",
                         "-m", files / "model_csv.npz"], capsys)[0] == 0
            dense = load_model(files / "model_csv.npz")
        np.testing.assert_allclose(est.coef_, dense.coef_, rtol=1e-10)
        raw = []
        for src in (files / name, files / "train.svm"):
            out = files / f"raw_{src.name}.npz"
            assert _run(["fit", src, "-e", "fgm", "-p", "B=2", "-p", "standardize=false",
                         "-q", "-m", out], capsys)[0] == 0
            raw.append(load_model(out).coef_)
        np.testing.assert_allclose(raw[0], raw[1], rtol=1e-10)
    assert meta["n_features"] == 8
    assert meta["format"] == {
        "svm": "libsvm",
        "bz2": "libsvm",
        "gz": "libsvm",
        "xz": "libsvm",
    }.get(name.rsplit(".", 1)[1], name.rsplit(".", 1)[1])


def test_index_base_and_width_are_stored_and_enforced(files, capsys):
    meta = load_model(files / "model.npz", return_metadata=True)[1]
    assert meta["zero_based"] is False and meta["n_features"] == 8
    code, out, err = _run(
        [
            "fit",
            files / "zero.svm",
            "-e",
            "fgm",
            "-p",
            "B=2",
            "-q",
            "-m",
            files / "zero.npz",
        ],
        capsys,
    )
    assert code == 0
    zmeta = load_model(files / "zero.npz", return_metadata=True)[1]
    # same data written 0-based: same width, same model
    assert zmeta["zero_based"] is True and zmeta["n_features"] == 8
    np.testing.assert_allclose(
        load_model(files / "zero.npz").coef_, load_model(files / "model.npz").coef_
    )
    # a 1-based test file on the 0-based model reads as 1-based columns shifted by one:
    # refused rather than silently misaligned when it uses an index past the width
    code, out, err = _run(
        ["predict", files / "wide.svm", "-m", files / "zero.npz"], capsys
    )
    assert code == 5 and "beyond the model's 8 features" in err
    code, out, err = _run(
        ["predict", files / "train.svm", "-m", files / "model.npz"], capsys
    )
    assert code == 0 and len(out.splitlines()) == 60


def test_unlabelled_table_predicts_and_labelled_one_is_split(files, capsys):
    code, out1, err = _run(
        ["predict", files / "unlabelled.csv", "--no-header", "-m", files / "csv.npz"],
        capsys,
    )
    assert code == 0, err
    code, out2, err = _run(
        ["predict", files / "train.csv", "-m", files / "csv.npz"], capsys
    )
    assert code == 0 and out1 == out2


def test_output_path_checked_before_the_fit(files, capsys):
    code, out, err = _run(
        ["fit", files / "train.svm", "-e", "fgm", "-m", files / "missing" / "m.npz"],
        capsys,
    )
    assert code == 7 and out == ""  # no progress line: the fit never started


def test_config_file_and_param_override(files, capsys):
    code, out, err = _run(
        [
            "fit",
            files / "train.svm",
            "--config",
            files / "good.toml",
            "-p",
            "C=2.5",
            "-q",
            "-m",
            files / "cfg.npz",
        ],
        capsys,
    )
    assert code == 0, err
    est = load_model(files / "cfg.npz")
    assert est.B == 2 and est.C == 2.5


def test_progress_lines_and_warnings_are_one_liners(files, capsys, monkeypatch):
    monkeypatch.setenv("KERNLEARN_PROGRESS", "lines")
    code, out, err = _run(
        [
            "fit",
            files / "train.svm",
            "-e",
            "fgm",
            "-p",
            "B=1",
            "-p",
            "max_iter=1",
            "-p",
            "tol=1e-9",
            "-m",
            files / "p.npz",
        ],
        capsys,
    )
    assert code == 0
    assert "[FGM] iter   1" in out and "stop:" in out


def test_estimators_and_version(capsys):
    code, out, err = _run(["estimators", "--params"], capsys)
    assert code == 0 and all(name in out for name in ESTIMATORS)
    assert "max_features" in out
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("kernlearn ")


def test_subprocess_fit_on_a_shared_file(tmp_path, capsys):
    """The entry point, as a user runs it, on a compressed LIBSVM file (one
    subprocess: each costs seconds of imports; the rest runs in process)."""
    from kernlearn.datasets import data_home

    real_data("housing")
    path = data_home() / "housing" / "housing_scale.bz2"
    model = tmp_path / "m.npz"
    fit = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernlearn",
            "fit",
            str(path),
            "-e",
            "fgm-regressor",
            "-m",
            str(model),
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert fit.returncode == 0 and fit.stderr == "", fit.stderr
    assert fit.stdout.startswith("fitted fgm-regressor (FGMRegressor) on 506 x 13")
    code, out, err = _run(["evaluate", path, "-m", model], capsys)
    assert code == 0 and out.startswith("n_samples 506")


def test_demo_runs(tmp_path, capsys):
    code, out, err = _run(
        ["demo", "--quick", "-q", "--out", tmp_path / "plots"], capsys
    )
    assert code == 0, err
    assert "FGM - best l1" in out and "FGM with max_features=" in out
    assert "max_features=5:" in out
    # one feature is one feature; "..." only where names are left out (at most 6 shown)
    assert "max_features=1: 1 feature (" in out
    assert not any(line.startswith("max_features=") and "...)" in line
                   for line in out.splitlines())
    assert (tmp_path / "plots" / "fgm_synthetic_convergence.png").stat().st_size > 1000


def test_task_column_for_multitask_estimators(files, capsys):
    """GrFL with task_index from a CSV column; the model remembers the column."""
    est, meta = load_model(files / "tasks.npz", return_metadata=True)
    assert meta["multitask"] and meta["task_column"] == "task"
    assert list(est.tasks_) == ["t0", "t1", "t2"] and meta["n_features"] == 8
    code, out, err = _run(["evaluate", files / "tasks.csv", "-m", files / "tasks.npz",
                           "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["r2"] == pytest.approx(meta["train_score"])
