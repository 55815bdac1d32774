"""Data loading, the datasets command and plots (CLI: test_cli.py; io: test_io.py)."""

import numpy as np
import pytest

from kernlearn import FGMClassifier
from kernlearn.cli import main
from kernlearn.datasets import (
    DatasetNotFoundError,
    available_datasets,
    load_dataset,
    load_svmlight,
    make_fgm_synthetic,
    make_sinc,
)
from kernlearn.plotting import plot_accuracy_vs_features, plot_convergence


def test_datasets_command(capsys):
    assert main(["datasets"]) == 0
    assert "data folder" in capsys.readouterr().out


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
    assert np.count_nonzero(w) == 7 and np.all((w >= 0) & (w <= 1))
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

    a9a = real_data("a9a")
    Xtr, Xte = a9a.data, a9a.data_test
    assert Xtr.shape == (32561, 123) and Xte.shape == (16281, 123)
    assert a9a.target.shape == (32561,) and a9a.target_test.shape == (16281,)
    assert Xtr.indices.dtype == np.int32
    assert "a9a" in a9a.DESCR
    mfeat = real_data("mfeat")
    views = mfeat.views
    assert len(views) == 6 and all(v.shape[0] == 2000 for v in views.values())
    assert mfeat.data.shape == (2000, sum(v.shape[1] for v in views.values()))
    assert len(mfeat.feature_names) == mfeat.data.shape[1]
    np.testing.assert_array_equal(mfeat.data[:, :views[mfeat.view_names[0]].shape[1]],
                                  views[mfeat.view_names[0]])
    school = real_data("school")
    assert np.unique(school.task_index).size == 139 and school.data.shape[1] == 28
    assert school.target.shape == school.task_index.shape == (school.data.shape[0],)
