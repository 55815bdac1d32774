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

from conftest import one_error as _one_error
from conftest import run_cli as _run


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


# ------------------------------------------- CSV by name, faulty files (issues 23, 27)
@pytest.fixture(scope="module")
def w(tmp_path_factory):
    import reliability_cases as rc

    w = tmp_path_factory.mktemp("cli_io")
    rc.make_workspace(w)
    return w


def test_csv_columns_are_matched_by_name_not_position(w, capsys):
    """Reordered columns (label first): the same 60 predictions as the original."""
    code, ref, err = _run(["predict", w / "train.csv", "-m", w / "csv.npz"], capsys)
    assert code == 0, err
    code, out, err = _run(["predict", w / "reordered.csv", "-m", w / "csv.npz"], capsys)
    assert code == 0, err
    assert out == ref and len(out.splitlines()) == 60
    code, out, err = _run(["evaluate", w / "reordered.csv", "-m", w / "csv.npz"],
                          capsys)
    assert code == 0 and "n_samples 60" in out  # the label found by its name


def test_csv_renamed_column_is_a_one_line_error(w, capsys):
    code, out, err = _run(["predict", w / "renamed.csv", "-m", w / "csv.npz"], capsys)
    assert code == 5 and _one_error(err) and "has no column 'f3'" in err and out == ""


def test_numeric_header_is_never_a_training_row(w, capsys):
    code, out, err = _run(["fit", w / "numheader.csv", "-e", "fgm", "-q", "-m",
                           w / "nh.npz"], capsys)
    assert code == 3 and _one_error(err) and "--header" in err
    code, out, err = _run(["fit", w / "numheader.csv", "--header", "-e", "fgm", "-q",
                           "-m", w / "nh.npz"], capsys)
    assert code == 0, err
    from kernlearn.io import load_model

    est, meta = load_model(w / "nh.npz", return_metadata=True)
    assert meta["n_samples"] == 60 and list(est.classes_) == [-1, 1]
    assert meta["feature_names"] == [str(j) for j in range(8)]
    # a headerless file whose rows end in a text label: its first row is data
    (w / "iris_like.csv").write_text("5.1,3.5,setosa\n4.9,3.0,setosa\n6.3,2.9,virg\n")
    code, out, err = _run(["fit", w / "iris_like.csv", "-e", "fgm", "-q", "-m",
                           w / "nh.npz"], capsys)
    assert code == 3 and "--no-header" in err and "'5.1'" in err


def test_question_mark_label_is_refused_with_its_row(w, capsys):
    code, out, err = _run(["fit", w / "qlabel.csv", "-e", "fgm", "-q", "-m",
                           w / "q.npz"], capsys)
    assert code == 3 and _one_error(err)
    assert "row 6, column target: missing value" in err


def test_semicolon_separator_sniffed_or_given(w, capsys):
    code, ref, err = _run(["predict", w / "train.csv", "-m", w / "csv.npz"], capsys)
    for extra in ([], ["--sep", ";"]):
        code, out, err = _run(["predict", w / "semicolon.csv", *extra, "-m",
                               w / "csv.npz"], capsys)
        assert code == 0 and out == ref, err


def test_csv_labels_keep_their_type(tmp_path):
    from kernlearn.datafiles import load_data_file

    (tmp_path / "a.csv").write_text("x,y,label\n1,2,3\n4,5,10\n7,8,3\n")
    X, y, info = load_data_file(tmp_path / "a.csv")
    assert y.dtype.kind == "i" and list(y) == [3, 10, 3]
    assert info["feature_names"] == ["x", "y"] and info["label_name"] == "label"
    (tmp_path / "b.csv").write_text("x,y,label\n1,2,cat\n4,5,dog\n")
    X, y, _ = load_data_file(tmp_path / "b.csv")
    assert list(y) == ["cat", "dog"] and X.dtype == np.float64


@pytest.mark.parametrize(
    "argv, victim",
    [
        (["fit", "{w}/victim.svm", "-e", "fgm", "-q", "-m", "{w}/victim.svm"], "data"),
        (["predict", "{w}/victim.svm", "-m", "{w}/model.npz", "-o", "{w}/victim.svm"],
         "data"),
        (["predict", "{w}/train.svm", "-m", "{w}/victim.npz", "-o", "{w}/victim.npz"],
         "model"),
        (["evaluate", "{w}/victim.svm", "-m", "{w}/model.npz", "-o",
          "{w}/victim.svm"], "data"),
        (["report", "{w}/victim.npz", "-o", "{w}/victim.npz"], "model"),
    ],
)
def test_outputs_never_overwrite_their_inputs(w, capsys, argv, victim):
    import shutil

    shutil.copy(w / "train.svm", w / "victim.svm")
    shutil.copy(w / "model.npz", w / "victim.npz")
    before = {p: (w / p).read_bytes() for p in ("victim.svm", "victim.npz")}
    code, out, err = _run([a.replace("{w}", str(w)) for a in argv], capsys)
    assert code == 7 and _one_error(err) and f"is the {victim} file" in err
    assert {p: (w / p).read_bytes() for p in before} == before


def test_outputs_are_written_atomically(w, capsys, monkeypatch):
    """A disk that fills up half-way leaves the old output and no temporary file."""
    import errno
    import os
    import pathlib

    (w / "out").mkdir(exist_ok=True)
    target = w / "out" / "p.txt"
    target.write_text("old\n")
    real = pathlib.Path.write_text

    def full_disk(self, text, *a, **k):
        real(self, text[: len(text) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    code, out, err = _run(["predict", w / "train.svm", "-m", w / "model.npz", "-o",
                           w / "out" / "fresh.txt"], capsys)
    umask = os.umask(0)
    os.umask(umask)
    mode = (w / "out" / "fresh.txt").stat().st_mode & 0o777
    assert code == 0 and mode == 0o666 & ~umask  # not mkstemp's private 0600
    (w / "out" / "fresh.txt").unlink()
    monkeypatch.setattr(pathlib.Path, "write_text", full_disk)
    for cmd in (["predict"], ["evaluate", "--json"]):
        code, out, err = _run([cmd[0], w / "train.svm", "-m", w / "model.npz",
                               *cmd[1:], "-o", target], capsys)
        assert code == 7 and "No space left" in err and _one_error(err)
        assert target.read_text() == "old\n"
        assert sorted(p.name for p in (w / "out").iterdir()) == ["p.txt"]


def test_closed_pipe_exits_quietly(w):
    """`kernlearn predict ... | head -1`: the reader is gone before the output is
    written; no BrokenPipeError, nothing on stderr, exit 141."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "kernlearn", "predict", str(w / "train.svm"), "-m",
         str(w / "model.npz")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader leaves at once
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and err == "", err


def test_model_file_does_not_store_the_training_folder(w, capsys):
    import json as _json

    from kernlearn.io import read_metadata

    meta = read_metadata(w / "model.npz")
    assert meta["source"] == "train.svm"
    assert str(w) not in _json.dumps(meta, default=str)


@pytest.mark.parametrize("flag, value", [("--B", "3"), ("--C", "2"), ("--loss", "x")])
def test_old_flags_point_to_param(w, capsys, flag, value):
    code, out, err = _run(["fit", w / "train.svm", "-e", "fgm", "-m", w / "o.npz",
                           flag, value], capsys)
    assert code == 2 and _one_error(err)
    assert f"-p {flag[2:]}={value}" in err


def test_kernel_spec_errors_exit_2_before_the_data_is_read(w, capsys):
    code, out, err = _run(["fit", "/dev/zero", "-e", "pnorm-mkl", "-m", w / "o.npz",
                           "-p", 'kernels=["linear", ["rbf", {"gamma": 0}]]'], capsys)
    assert code == 2 and _one_error(err) and "kernels[1]: gamma must be" in err


def test_huge_libsvm_index_is_refused_without_allocating(w, capsys):
    import tracemalloc

    tracemalloc.start()
    code, out, err = _run(["fit", w / "hugeindex.svm", "-e", "fgm", "-q", "-m",
                           w / "o.npz"], capsys)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert code == 3 and "index 2000000000" in err and _one_error(err)
    assert peak < 50 * 2**20  # not by the index (16 GB of float64)


def test_dev_zero_as_data_is_a_bounded_read(w, capsys):
    import time

    t0 = time.perf_counter()
    for fmt in ([], ["--format", "csv"]):
        code, out, err = _run(["fit", "/dev/zero", *fmt, "-e", "fgm", "-q", "-m",
                               w / "o.npz"], capsys)
        assert code == 3 and "binary data" in err and _one_error(err)
    assert time.perf_counter() - t0 < 10


def test_libsvm_read_in_blocks_gives_the_whole_file(w, monkeypatch):
    """Blocks of 100 bytes (lines cut across blocks) give sklearn's matrix."""
    from sklearn.datasets import load_svmlight_file

    from kernlearn import datafiles

    monkeypatch.setattr(datafiles, "_BLOCK", 100)
    X, y, info = datafiles.load_data_file(w / "train.svm")
    Xs, ys = load_svmlight_file(str(w / "train.svm"))
    np.testing.assert_array_equal(X.toarray(), Xs.toarray())
    np.testing.assert_array_equal(y, ys)
    assert info["zero_based"] is False and X.shape == (60, 8)


def test_clear_messages_for_libsvm_and_csv_confusions(w, capsys):
    code, out, err = _run(["fit", w / "table", "-e", "fgm", "-q", "-m", w / "o.npz"],
                          capsys)
    assert code == 3 and "looks like a CSV table" in err and "--format csv" in err
    code, out, err = _run(["fit", w / "nocolon.svm", "-e", "fgm", "-q", "-m",
                           w / "o.npz"], capsys)
    assert code == 3 and "line 2: token 'abc' is not index:value" in err


def test_class_weight_text_keys_match_libsvm_labels(w, capsys):
    from kernlearn.io import load_model

    est = load_model(w / "cw.npz")
    assert est.class_weight == {1.0: 5}
    ref = load_model(w / "cw_ref.npz")
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    code, out, err = _run(["fit", w / "train.svm", "-e", "fgm", "-q", "-m",
                           w / "o.npz", "-p", 'class_weight={"2": 5}'], capsys)
    assert code == 2 and "class_weight names class '2'" in err


def test_messages_show_numbers_not_numpy_reprs():
    from kernlearn.cli import _one_line

    assert _one_line("task np.int64(99) and np.float64(1.5), np.str_('a')") == (
        "task 99 and 1.5, 'a'"
    )


def test_every_bit_flip_of_a_model_exits_4(w, capsys):
    data = (w / "model.npz").read_bytes()
    rng = np.random.default_rng(1)
    for bit in rng.choice(len(data) * 8, 60, replace=False):
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        (w / "flip.npz").write_bytes(bytes(flipped))
        code, out, err = _run(["predict", w / "train.svm", "-m", w / "flip.npz"],
                              capsys)
        assert code == 4 and _one_error(err), (bit, err)


_UNDER_A_FILE_SIZE_LIMIT = r"""
import contextlib, io, resource, sys
from pathlib import Path
from kernlearn.cli import main
from kernlearn.plotting import plot_convergence
from kernlearn.report import write_report
from kernlearn.io import load_model
w, out = Path(sys.argv[1]), Path(sys.argv[2])
est, meta = load_model(w / "model.npz", return_metadata=True)
# no file may grow beyond 200 bytes: every write below fails half-way
# (the Python interpreter ignores SIGXFSZ, so the write raises EFBIG)
resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))
for argv in (["fit", w / "train.svm", "-e", "fgm", "-q", "-m", out / "m.npz"],
             ["predict", w / "wide150.svm", "-m", w / "wide.npz", "-o", out / "p.txt"],
             ["select", w / "wide.npz", "-o", out / "s.csv"],
             ["report", w / "model.npz", "-o", out / "r.html"],
             ["demo", "--quick", "-q", "--out", out / "demo"]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    print(argv[0], code, err.getvalue().strip())
for name, call in (("plot", lambda: plot_convergence(est.history_, out / "c.png")),
                   ("write_report", lambda: write_report(est, meta, out / "r2.html"))):
    try:
        call()
        print(name, "written")
    except OSError as exc:
        print(name, "OSError", exc.strerror)
"""


def test_failed_writes_leave_no_partial_file_and_no_tmp(w, tmp_path):
    """A write that fails half-way (here a real EFBIG from RLIMIT_FSIZE, as a
    full disk gives ENOSPC) leaves neither a partial output nor a ``.tmp``
    file, from every command and from the library's plot and report writers;
    the command exits 7 with one line."""
    import subprocess
    import sys

    pytest.importorskip("resource")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 150))
    y = np.sign(X[:, :40] @ rng.standard_normal(40))
    from sklearn.datasets import dump_svmlight_file

    dump_svmlight_file(X, y, str(w / "wide150.svm"))
    assert main(["fit", str(w / "wide150.svm"), "-e", "fgm", "-q", "-m",
                 str(w / "wide.npz")]) == 0
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run([sys.executable, "-c", _UNDER_A_FILE_SIZE_LIMIT, str(w), str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    for cmd in ("fit", "predict", "select", "report", "demo"):
        code, msg = lines[cmd].split(" ", 1)
        assert code == "7" and msg.startswith("kernlearn: error: cannot write"), lines[cmd]
        assert "File too large" in msg and "\n" not in msg
    assert lines["plot"] == lines["write_report"] == "OSError File too large"
    left = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    assert left == ["demo"], left  # the folder the demo was asked for, empty


def test_fit_stopped_by_its_iteration_cap_says_so(w, capsys):
    # issue 23 item 7: FGM stopped by max_iter reported success in silence
    code, out, err = _run(["fit", w / "train.svm", "-e", "fgm", "-q", "-p", "B=1", "-p",
                           "max_iter=1", "-p", "tol=1e-12", "-m", w / "capped.npz"], capsys)
    assert code == 0 and out.startswith("fitted fgm")
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "kernlearn: warning: FGM stopped after 1 outer iterations (max_iter)"), err
    code, out, err = _run(["fit", w / "train.svm", "-e", "fgm", "-q", "-p", "B=2", "-m",
                           w / "free.npz"], capsys)
    assert code == 0 and err == ""


def test_a_long_message_keeps_its_end():
    """A long path in front used to push the remedy at a message's end past
    the 400-character cut ("raise the budget (--max-table-siz...")."""
    from kernlearn.cli import _one_line

    msg = "/tmp/" + "d" * 500 + "/x.csv.gz: too big; raise the budget (--max-table-size SIZE)"
    line = _one_line(msg)
    assert len(line) == 400 and "\n" not in line
    assert line.startswith("/tmp/ddd") and " ... " in line
    assert line.endswith("raise the budget (--max-table-size SIZE)")
    assert _one_line("short") == "short"
