"""The kernlearn command, safe model files, plots and data loading."""

import bz2

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from kernlearn import FGMClassifier, FGMRegressor
from kernlearn.cli import main
from kernlearn.datasets import (
    DatasetNotFoundError,
    available_datasets,
    load_dataset,
    load_svmlight,
    make_fgm_synthetic,
    make_sinc,
)
from kernlearn.io import load_model, save_model
from kernlearn.plotting import plot_accuracy_vs_features, plot_convergence


@pytest.fixture
def svm_files(tmp_path):
    X, y, w = make_fgm_synthetic(150, 40, 5, random_state=0)
    train = tmp_path / "train.svm.bz2"
    raw = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(raw))
    train.write_bytes(bz2.compress(raw.read_bytes()))
    return train, X, y


def test_fit_then_predict_roundtrip(svm_files, tmp_path, capsys):
    train, X, y = svm_files
    model = tmp_path / "m.npz"
    assert main(["fit", str(train), "--model", str(model), "--B", "3"]) == 0
    out = capsys.readouterr().out
    assert "[FGM] iter   1" in out and "model saved" in out
    preds = tmp_path / "p.txt"
    assert main(["predict", str(train), "--model", str(model), "--out", str(preds)]) == 0
    assert len(np.loadtxt(preds)) == len(y)
    assert "score on" in capsys.readouterr().out


def test_cli_errors_are_clear(tmp_path, capsys):
    assert main(["fit", str(tmp_path / "missing.svm"), "--model", "m.npz"]) == 2
    assert "data file not found" in capsys.readouterr().err
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:abc\n")
    assert main(["fit", str(bad), "--model", "m.npz"]) == 2
    assert "corrupt svmlight file" in capsys.readouterr().err
    notmodel = tmp_path / "x.npz"
    notmodel.write_bytes(b"garbage")
    assert main(["predict", str(bad), "--model", str(notmodel)]) == 2
    assert "not a readable kernlearn model" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["fit", str(bad), "--model", "m.npz", "--loss", "nope"])


def test_datasets_command(capsys):
    assert main(["datasets"]) == 0
    assert "data folder" in capsys.readouterr().out


@pytest.mark.parametrize("est", [FGMClassifier(B=3, loss="logistic"), FGMRegressor(B=3)])
def test_save_load_preserves_predictions(est, tmp_path):
    X, y, w = make_fgm_synthetic(120, 30, 5, random_state=1)
    target = y if isinstance(est, FGMClassifier) else X @ w
    est.fit(X, target)
    save_model(est, tmp_path / "m.npz")
    again = load_model(tmp_path / "m.npz")
    np.testing.assert_allclose(again.predict(X), est.predict(X))
    assert again.get_params() == est.get_params()
    np.testing.assert_array_equal(again.selected_features_, est.selected_features_)


def test_save_rejects_foreign_objects(tmp_path):
    from sklearn.linear_model import Ridge

    with pytest.raises(TypeError, match="not a kernlearn estimator"):
        save_model(Ridge(), tmp_path / "r.npz")


def test_plots_are_written(tmp_path):
    X, y, w = make_fgm_synthetic(120, 30, 5, random_state=1)
    clf = FGMClassifier(B=3).fit(X, y)
    png = plot_convergence(clf.history_, tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 1000 and png.endswith("c.png")
    plot_accuracy_vs_features({"FGM": ([3, 6], [0.8, 0.9])}, tmp_path / "a.png")
    assert (tmp_path / "a.png").exists()
    with pytest.raises(ValueError, match="objective"):
        plot_convergence({}, tmp_path / "x.png")


def test_data_folder_override(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNLEARN_DATA", str(tmp_path))
    assert available_datasets() == []
    with pytest.raises(DatasetNotFoundError, match="not found"):
        load_dataset("a9a")
    with pytest.raises(ValueError, match="Unknown dataset"):
        load_dataset("mnist")


def test_empty_svmlight_file(tmp_path):
    p = tmp_path / "empty.svm"
    p.write_text("")
    with pytest.raises(ValueError, match="empty"):
        load_svmlight(p)


def test_generators():
    X, y, Xt, yt, w = make_fgm_synthetic(50, 80, 7, n_test=20, weight_type="III",
                                         random_state=0)
    assert X.shape == (50, 80) and Xt.shape == (20, 80)
    assert np.count_nonzero(w) == 7 and set(np.abs(w[w != 0])) == {1.0}
    np.testing.assert_array_equal(y, np.sign(X @ w))
    Xs, ys, _ = make_fgm_synthetic(40, 1000, 10, density=0.01, random_state=0)
    assert Xs.format == "csr" and Xs.nnz < 1000
    with pytest.raises(ValueError, match="weight_type"):
        make_fgm_synthetic(10, 10, 2, weight_type="IV")
    X, y, Xt, yt = make_sinc(200, 100, snr_db=10, random_state=0)
    f = np.sinc(np.linalg.norm(X, axis=1) / np.pi)  # sin(|x|)/|x|, paper 003
    snr = 10 * np.log10(np.mean(f**2) / (y - f).var())
    assert 8 < snr < 12
    np.testing.assert_allclose(yt, np.sinc(np.linalg.norm(Xt, axis=1) / np.pi))


def test_real_data_loaders():
    from conftest import real_data

    Xtr, ytr, Xte, yte = real_data("a9a")
    assert Xtr.shape == (32561, 123) and Xte.shape == (16281, 123)
    assert Xtr.indices.dtype == np.int32
    views, y = real_data("mfeat")
    assert len(views) == 6 and all(v.shape[0] == 2000 for v in views.values())
    Xs, ys = real_data("school")
    assert len(Xs) == 139 and Xs[0].shape[1] == 28
