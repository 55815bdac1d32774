"""LIBSVM files that are not held whole: the reader's peak memory and ``--out-of-core``."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn.datafiles import iter_libsvm, load_data_file
from kernlearn.datasets import write_fgm_synthetic_svmlight
from kernlearn.io import load_model

from test_cli_io import _one_error, _run  # the CLI test helpers (same folder)


@pytest.fixture(scope="module")
def w(tmp_path_factory):
    w = tmp_path_factory.mktemp("cli_stream")
    write_fgm_synthetic_svmlight(w / "train.svm", 1500, 200, 10, density=0.05,
                                 random_state=0)
    write_fgm_synthetic_svmlight(w / "test.svm", 700, 200, 10, density=0.05,
                                 random_state=1)
    return w


_PEAK = textwrap.dedent("""
    import sys, tracemalloc
    import numpy as np
    import sklearn.datasets, scipy.sparse  # imported before measuring
    from kernlearn import datafiles
    path, block = sys.argv[1], int(sys.argv[2])
    datafiles._LIBSVM_BLOCK = block
    tracemalloc.start()
    X, y, info = datafiles.load_data_file(path)
    peak = tracemalloc.get_traced_memory()[1]
    final = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes + y.nbytes
    print(final, peak, X.nnz, X.shape[0], X.indices.dtype)
""")


def test_libsvm_reader_peak_is_the_matrix_plus_one_block(tmp_path):
    """5 MB of text in 256 KB blocks: the peak is the CSR matrix and one block's
    parsing, not a list of blocks plus their concatenation (2x the matrix)."""
    rng = np.random.default_rng(0)
    path = tmp_path / "big.svm"
    with open(path, "w") as fh:
        for i in range(40000):
            idx = np.sort(rng.choice(500, 12, replace=False)) + 1
            fh.write(("1" if i % 2 else "-1") + " " + " ".join(
                f"{j}:{v:.4f}" for j, v in zip(idx, rng.random(12))) + "\n")
    block = 2**18
    out = subprocess.run([sys.executable, "-c", _PEAK, str(path), str(block)],
                         capture_output=True, text=True, check=True).stdout.split()
    final, peak, nnz, n = map(int, out[:4])
    assert (nnz, n, out[4]) == (480000, 40000, "int32")
    # parsing a block takes about 5 times its text in temporaries
    assert peak < 1.2 * final + 8 * block, (peak / final, final)


def test_iter_libsvm_blocks_stack_to_the_whole_file(w):
    X, y, info = load_data_file(w / "train.svm")
    blocks = list(iter_libsvm(w / "train.svm", X.shape[1], info["zero_based"],
                              block=20000))
    assert len(blocks) > 5
    assert (sp.vstack([b for b, _ in blocks]) != X).nnz == 0
    np.testing.assert_array_equal(np.concatenate([t for _, t in blocks]), y)


@pytest.mark.parametrize("estimator", ["fgm", "fgm-regressor"])
def test_out_of_core_fit_equals_in_memory_fit(w, tmp_path, capsys, estimator):
    mem, ooc = tmp_path / "mem.joblib", tmp_path / "ooc.joblib"
    # C pinned: the regressor's default C="auto" is chosen by cross-validation
    # in memory only (out of core it is C=1, as documented)
    args = ["fit", w / "train.svm", "-e", estimator, "-q", "-p", "B=5", "-p", "C=1"]
    assert _run(args + ["-m", mem], capsys)[0] == 0
    code, out, err = _run(args + ["-m", ooc, "--out-of-core", "--chunk-memory",
                                  "40KB"], capsys)
    assert code == 0, err
    a, ma = load_model(mem, return_metadata=True)
    b, mb = load_model(ooc, return_metadata=True)
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-9, atol=1e-12)
    for key in ("n_samples", "n_features", "zero_based", "format"):
        assert ma[key] == mb[key], key
    for key in ("feature_min", "feature_max", "feature_integral"):
        np.testing.assert_array_equal(ma[key], mb[key])  # gathered chunk by chunk
    assert mb["train_score"] == pytest.approx(ma["train_score"])


def test_chunked_predict_and_evaluate_equal_in_memory(w, tmp_path, capsys):
    model = tmp_path / "m.joblib"
    assert _run(["fit", w / "train.svm", "-e", "fgm", "-q", "-p", "B=5", "-p",
                 "loss=logistic", "-m", model], capsys)[0] == 0
    chunked = ["--out-of-core", "--chunk-memory", "20KB"]  # about 5 KB of text a block
    for extra in ([], ["--proba"]):
        code, mem, _ = _run(["predict", w / "test.svm", "-m", model] + extra, capsys)
        code2, ooc, err = _run(["predict", w / "test.svm", "-m", model] + extra + chunked,
                               capsys)
        assert code == code2 == 0, err
        assert ooc == mem and len(mem.splitlines()) == 700 + bool(extra)
    code, mem, _ = _run(["evaluate", w / "test.svm", "-m", model, "--json"], capsys)
    code2, ooc, _ = _run(["evaluate", w / "test.svm", "-m", model, "--json"] + chunked,
                         capsys)
    assert code == code2 == 0 and ooc == mem and "roc_auc" in mem


def test_chunked_predict_file_equals_stdout(w, tmp_path, capsys):
    model, out = tmp_path / "m.joblib", tmp_path / "p.txt"
    assert _run(["fit", w / "train.svm", "-e", "fgm", "-q", "-m", model], capsys)[0] == 0
    chunked = ["--out-of-core", "--chunk-memory", "20KB"]
    _, printed, _ = _run(["predict", w / "test.svm", "-m", model] + chunked, capsys)
    code, said, _ = _run(["predict", w / "test.svm", "-m", model, "-o", out] + chunked,
                         capsys)
    assert code == 0 and said == f"wrote 700 predictions to {out}\n"
    assert out.read_text() == printed


def test_out_of_core_misuse_is_one_line(w, tmp_path, capsys):
    model = tmp_path / "m.joblib"
    (tmp_path / "t.csv").write_text("a,b,y\n1,2,1\n3,4,-1\n")
    (tmp_path / "wide.svm").write_text("1 0:1 300:2\n")
    (tmp_path / "far.svm").write_text("1 0:1 3:200000\n")
    assert _run(["fit", w / "train.svm", "-e", "fgm", "-q", "-m", model], capsys)[0] == 0
    ooc = ["--out-of-core"]
    cases = [
        (["fit", w / "train.svm", "-e", "pnorm-mkl", "-m", tmp_path / "x"] + ooc, 2,
         "trains fgm and fgm-regressor only"),
        (["fit", tmp_path / "t.csv", "-e", "fgm", "-m", tmp_path / "x"] + ooc, 2,
         "reads LIBSVM files"),
        (["fit", w / "train.svm", "-e", "fgm", "--label", "0", "-m", tmp_path / "x"]
         + ooc, 2, "--label applies to CSV files"),
        (["fit", tmp_path / "none.svm", "-e", "fgm", "-m", tmp_path / "x"] + ooc, 3,
         "not found"),
        (["fit", w / "train.svm", "-e", "fgm", "-m", tmp_path / "x", "--chunk-memory",
          "lots"] + ooc, 2, "--chunk-memory"),
        (["fit", w / "train.svm", "-e", "fgm", "-m", tmp_path / "x", "--chunk-memory",
          "1MB"], 2, "add --out-of-core"),
        (["predict", tmp_path / "t.csv", "-m", model] + ooc, 2, "reads LIBSVM files"),
        (["predict", tmp_path / "wide.svm", "-m", model] + ooc, 5, "beyond the model"),
        (["predict", tmp_path / "far.svm", "-m", model] + ooc, 5, "unlike the training"),
        (["predict", w / "test.svm", "-m", model, "--proba"] + ooc, 2, "predict_proba"),
    ]
    for argv, status, words in cases:
        code, out, err = _run(argv, capsys)
        assert (code, out) == (status, ""), (argv, code, err)
        assert _one_error(err) and words in err, err
    assert not (tmp_path / "x").exists()
