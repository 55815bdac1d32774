"""Defects a data scientist met in a ninth user-level audit of the command
line and its files; each test names what went wrong."""

import numpy as np
from conftest import one_error as _one_error
from conftest import run_cli as _run


def _ok(capsys, *argv):
    """``kernlearn *argv``'s standard output; the command must succeed (exit 0)."""
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    return out


def _table(path, X, y, names=None):
    names = names or [f"x{j}" for j in range(X.shape[1])]
    rows = [",".join(names + ["target"])]
    rows += [",".join(f"{v:.6f}" for v in row) + f",{float(t)!r}" for row, t in zip(X, y)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _regression(n=60, scale=1.0, offset=0.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = offset + scale * (X @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=n))
    return X, y


def test_predictions_are_written_with_every_digit(tmp_path, capsys):
    # predictions were printed with 10 significant digits: a target near 1.7e12
    # (a time stamp in ms, a price in small units) came out rounded by up to 500,
    # an error of the size of the model's own
    from kernlearn.io import load_model

    X, y = _regression(scale=1000.0, offset=1.7e12)
    data = _table(tmp_path / "big.csv", X, np.round(y))
    model = tmp_path / "m.klm"
    _ok(capsys, "fit", "-e", "fgm-regressor", "-m", model, "-q", "-p", "C=1", data)
    out = _ok(capsys, "predict", "-m", model, data)
    written = np.array([float(v) for v in out.split()])
    expected = load_model(model).predict(np.loadtxt(data, delimiter=",", skiprows=1)[:, :3])
    np.testing.assert_array_equal(written, expected)
    # whole numbers keep their short spelling (a LIBSVM class -1 is "-1")
    from kernlearn._cli_common import _number_text

    assert [_number_text(v) for v in (-1.0, 2.0, 0.1, 1e20)] == ["-1", "2", "0.1", "1e+20"]


def test_evaluate_does_not_print_small_metrics_as_zero(tmp_path, capsys):
    # a target in micro-units: "rmse 0.0000" and "mae 0.0000" (the report, with
    # six significant digits, said 3.3e-07: the two disagreed)
    X, y = _regression(scale=1e-6)
    data = _table(tmp_path / "tiny.csv", X, y)
    model = tmp_path / "m.klm"
    _ok(capsys, "fit", "-e", "fgm-regressor", "-m", model, "-q", "-p", "C=1", data)
    text = dict(line.split() for line in _ok(capsys, "evaluate", "-m", model,
                                             data).splitlines())
    import json
    exact = json.loads(_ok(capsys, "evaluate", "-m", model, data, "--json"))
    for key in ("rmse", "mae"):
        assert float(text[key]) > 0
        np.testing.assert_allclose(float(text[key]), exact[key], rtol=1e-3)
    # metrics between 0.1 and 1 keep their four decimals
    assert text["r2"] == f"{exact['r2']:.4f}"


def test_model_flag_of_select_and_report_is_named_as_the_first_argument(tmp_path, capsys):
    # `-m MODEL`, as fit, predict and evaluate take it, was answered with
    # "estimator parameters are set with -p key=value (e.g. -p m=VALUE)"
    X, y = _regression()
    data = _table(tmp_path / "d.csv", X, y)
    model = tmp_path / "m.klm"
    _ok(capsys, "fit", "-e", "fgm-regressor", "-m", model, "-q", "-p", "C=1", data)
    for argv in (["select", "-m", model], ["report", "--model", model]):
        code, out, err = _run(argv, capsys)
        assert code == 2 and _one_error(err), err
        assert f"kernlearn {argv[0]} MODEL" in err and "-p m" not in err, err
        assert "-p model" not in err, err


def test_non_finite_labels_are_data_errors_named_by_row(tmp_path, capsys):
    # evaluate (and report) on a label "nan", "inf" or "1e400" was an internal
    # error ("Input contains NaN ... please report it", exit 1); fit said
    # "cannot fit" (exit 6) at a 0-based row, and a CSV file's features and
    # labels were counted differently
    X, y = _regression()
    data = _table(tmp_path / "d.csv", X, y)
    model = tmp_path / "m.klm"
    _ok(capsys, "fit", "-e", "fgm-regressor", "-m", model, "-q", "-p", "C=1", data)
    lines = data.read_text().splitlines()
    for bad in ("inf", "1e400", "-inf"):
        lines[2] = lines[2].rsplit(",", 1)[0] + "," + bad
        broken = tmp_path / "broken.csv"
        broken.write_text("\n".join(lines) + "\n")
        for argv in (["evaluate", "-m", model, broken],
                     ["report", model, "--data", broken, "-o", tmp_path / "r.html"],
                     ["fit", "-e", "fgm-regressor", "-m", tmp_path / "n.klm", broken]):
            code, out, err = _run(argv, capsys)
            assert code == 3 and _one_error(err), (argv[0], err)
            assert "row 3, column target" in err, err
        # predict does not read the labels
        assert len(_ok(capsys, "predict", "-m", model, broken).split()) == len(y)
    svm = tmp_path / "d.svm"
    for bad in ("nan", "inf", "1e400"):
        svm.write_text("1.5 1:0.5 2:0.1 3:0.2\n" + bad + " 1:0.1 2:0.3 3:0.2\n")
        for argv in (["evaluate", "-m", tmp_path / "s.klm", svm],
                     ["fit", "-e", "fgm-regressor", "-m", tmp_path / "n.klm", svm]):
            if argv[0] == "evaluate":
                ok = tmp_path / "ok.svm"
                ok.write_text("1.5 1:0.5 2:0.1 3:0.2\n2.5 1:0.1 2:0.3 3:0.2\n"
                              "0.5 1:0.2 2:0.1 3:0.4\n")
                _ok(capsys, "fit", "-e", "fgm-regressor", "-m", argv[2], "-q",
                    "-p", "C=1", ok)
            code, out, err = _run(argv + ["--allow-out-of-range"] * (argv[0] == "evaluate"),
                                  capsys)
            assert code == 3 and _one_error(err), (argv[0], err)
            assert "sample 2" in err and "labels" in err, err


def _text_labels(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    labels = np.where(X[:, 0] > 0, "été", "hiver")
    rows = ["a,b,saison"] + [f"{a:.5f},{b:.5f},{t}" for (a, b), t in zip(X, labels)]
    data = tmp_path / "saisons.csv"
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return data, labels


def test_outputs_are_utf8_whatever_the_locale(tmp_path, capsys):
    # under an ASCII (or Latin-1, or Windows) locale `predict -o` wrote with
    # the locale's encoding: a label "été" was an internal error (exit 1),
    # or bytes that kernlearn's own readers (UTF-8 only) refuse
    import os
    import subprocess
    import sys
    from pathlib import Path

    data, labels = _text_labels(tmp_path)
    model = tmp_path / "m.klm"
    _ok(capsys, "fit", "-e", "fgm", "-m", model, "-q", "-p", "C=1", data)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0",
           "PYTHONUTF8": "0", "PYTHONPATH": src, "OMP_NUM_THREADS": "1"}
    out = tmp_path / "pred.txt"
    proc = subprocess.run([sys.executable, "-m", "kernlearn", "predict", "-m", str(model),
                           str(data), "-o", str(out)], env=env, capture_output=True,
                          text=True, errors="replace")
    assert proc.returncode == 0, proc.stderr
    written = out.read_bytes().decode("utf-8").split()
    assert sorted(set(written)) == ["hiver", "été"]


def test_a_label_the_terminal_cannot_show_is_a_one_line_error(tmp_path, capsys,
                                                             monkeypatch):
    # standard output in ASCII: "internal error: UnicodeEncodeError ... please
    # report it" (exit 1), nothing said of --out
    import io
    import sys

    data, labels = _text_labels(tmp_path)
    model = tmp_path / "m.klm"
    _ok(capsys, "fit", "-e", "fgm", "-m", model, "-q", "-p", "C=1", data)
    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", ascii_out)
    from kernlearn.cli import main

    code = main(["predict", "-m", str(model), str(data)])
    err = capsys.readouterr().err
    assert code == 7 and _one_error(err), err
    assert "--out" in err and "ascii" in err, err


def test_rows_are_named_by_file_line_across_blank_lines_and_quoted_breaks(tmp_path,
                                                                          capsys):
    # blank lines (skipped when reading) and a header name holding a quoted
    # line break shifted every row number after them: 'x' on line 8 was
    # "row 6", a line holding good numbers
    cases = {
        "blank.csv": ("a,b,target\n1,2,0\n3,4,1\n\n\n5,6,0\n7,x,1\n", 7),
        "quoted.csv": ('a,"b\nc",target\n1,2,0\n3,4,1\n7,x,1\n', 5),
        "missing.csv": ("a,b,target\n1,2,0\n\n3,4,1\n7,,1\n", 5),
        "label.csv": ("a,b,target\n1,2,0\n\n3,4,1\n7,8,inf\n", 5),
    }
    for name, (text, line) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        assert text.splitlines()[line - 1].startswith("7,")
        code, out, err = _run(["fit", "-e", "fgm", "-m", tmp_path / "m.klm", path],
                              capsys)
        assert code == 3 and _one_error(err), err
        assert f"row {line}," in err, (name, err)
    headless = tmp_path / "headless.csv"
    headless.write_text("\n1,2,0\n3,4,1\n\n7,x,1\n")
    code, out, err = _run(["fit", "-e", "fgm", "-m", tmp_path / "m.klm", "--no-header",
                           headless], capsys)
    assert code == 3 and "row 5," in err, err


def test_a_file_with_old_mac_line_endings_is_read(tmp_path, capsys):
    # lines ending in a lone carriage return (classic Mac OS, some Excel
    # exports): "internal error: new-line character seen in unquoted field"
    rows = ["a,b,target", "1,2,0", "3,1,1", "5,6,0", "7,3,1", "2,2,0", "6,1,1"]
    unix, mac = tmp_path / "unix.csv", tmp_path / "mac.csv"
    unix.write_text("\n".join(rows) + "\n")
    mac.write_bytes(("\r".join(rows) + "\r").encode())
    for path in (unix, mac):
        _ok(capsys, "fit", "-e", "fgm", "-m", tmp_path / f"{path.stem}.klm", "-q",
            "-p", "C=1", path)
    assert (_ok(capsys, "predict", "-m", tmp_path / "mac.klm", mac)
            == _ok(capsys, "predict", "-m", tmp_path / "unix.klm", unix))
    assert len(_ok(capsys, "predict", "-m", tmp_path / "unix.klm", mac).split()) == 6


def test_a_model_file_cut_short_says_so(tmp_path, capsys):
    # a model file cut short (an interrupted copy or download) and an empty one
    # were "not a readable kernlearn model file (File is not a zip file)": as
    # if the user had given some other file
    X, y = _regression()
    data = _table(tmp_path / "d.csv", X, y)
    model = tmp_path / "m.klm"
    _ok(capsys, "fit", "-e", "fgm-regressor", "-m", model, "-q", "-p", "C=1", data)
    raw = model.read_bytes()
    cut = tmp_path / "cut.klm"
    cut.write_bytes(raw[: len(raw) // 2])
    code, out, err = _run(["predict", "-m", cut, data], capsys)
    assert code == 4 and _one_error(err), err
    assert "truncated" in err, err
    empty = tmp_path / "empty.klm"
    empty.write_bytes(b"")
    code, out, err = _run(["select", empty], capsys)
    assert code == 4 and _one_error(err) and "empty" in err, err
    # another kind of file is still named as such
    code, out, err = _run(["predict", "-m", data, data], capsys)
    assert code == 4 and "truncated" not in err and "not a readable" in err, err


def test_column_names_match_whatever_their_unicode_form(tmp_path, capsys):
    # a file saved on macOS spells "é" as "e" + a combining accent: the same
    # name on screen; predicting refused it ("has no column 'température' ...
    # the model does not know 'température'": two names that look alike)
    import unicodedata

    X, y = _regression()
    names = ["température", "débit", "x2"]
    nfc = _table(tmp_path / "nfc.csv", X, y, names)
    text = nfc.read_text(encoding="utf-8")
    head, rest = text.split("\n", 1)
    nfd = tmp_path / "nfd.csv"
    nfd.write_text(unicodedata.normalize("NFD", head) + "\n" + rest, encoding="utf-8")
    assert nfd.read_bytes() != nfc.read_bytes()
    expected = None
    for train, test in ((nfc, nfd), (nfd, nfc)):
        model = tmp_path / f"{train.stem}.klm"
        _ok(capsys, "fit", "-e", "fgm-regressor", "-m", model, "-q", "-p", "C=1", train)
        out = _ok(capsys, "predict", "-m", model, test)
        assert out == _ok(capsys, "predict", "-m", model, train)
        expected = expected or out
        assert out == expected
    # a label or task column named on the command line in the other form
    _ok(capsys, "fit", "-e", "fgm-regressor", "-m", tmp_path / "l.klm", "-q", "-p", "C=1",
        "--label", unicodedata.normalize("NFD", "température"), nfc)


def test_label_of_an_npz_holding_y_is_not_passed_over(tmp_path, capsys):
    # `fit --label 0 data.npz` fitted on the array y without a word: the user
    # asked for column 0 as the label and got another model
    X, y = _regression()
    data = tmp_path / "d.npz"
    np.savez(data, X=X, y=y)
    code, out, err = _run(["fit", "-e", "fgm-regressor", "-m", tmp_path / "m.klm",
                           "--label", "0", data], capsys)
    assert code == 3 and _one_error(err), err
    assert "--label" in err and "'y'" in err, err
    assert not (tmp_path / "m.klm").exists()
    # without y, an .npz is a table whose label --label picks, as before
    table = tmp_path / "t.npz"
    np.savez(table, X=np.column_stack([y, X]))
    out = _ok(capsys, "fit", "-e", "fgm-regressor", "-m", tmp_path / "t.klm", "-q",
              "-p", "C=1", "--label", "0", table)
    assert "on 60 x 3" in out


def test_evaluate_on_overflowing_values_warns_in_one_line_and_prints_short_numbers(
        tmp_path, capsys):
    # one value of 1e308 (within --allow-out-of-range): NumPy's overflow
    # warning came as Python's two lines with a source line of scikit-learn,
    # and "mae" was printed with its 300 digits
    X, y = _regression()
    data = _table(tmp_path / "d.csv", X, y)
    model = tmp_path / "m.klm"
    _ok(capsys, "fit", "-e", "fgm-regressor", "-m", model, "-q", "-p", "C=1", data)
    lines = data.read_text().splitlines()
    lines[2] = "1e308," + lines[2].split(",", 1)[1]
    huge = tmp_path / "huge.csv"
    huge.write_text("\n".join(lines) + "\n")
    code, out, err = _run(["evaluate", "-m", model, huge, "--allow-out-of-range"], capsys)
    assert code == 0, err
    assert err and all(line.startswith("kernlearn: warning: ") for line in
                       err.splitlines()), err
    assert max(len(line) for line in out.splitlines()) < 40, out


def test_fit_summary_counts_one_feature_in_the_singular(tmp_path, capsys):
    # "1 features selected" (kernels were already counted in the singular)
    X, y = _regression()
    data = _table(tmp_path / "d.csv", X, y)
    out = _ok(capsys, "fit", "-e", "fgm-regressor", "-m", tmp_path / "m.klm", "-q",
              "-p", "C=1", "-p", "B=1", "-p", "max_iter=1", data)
    assert "; 1 feature selected;" in out, out


def test_output_names_that_cannot_be_files_are_named(tmp_path, capsys):
    # `-o ""` was "output path . is a directory" (report wrote MODEL.html
    # without a word); a file used as a folder was "folder ... does not exist"
    X, y = _regression()
    data = _table(tmp_path / "d.csv", X, y)
    model = tmp_path / "m.klm"
    _ok(capsys, "fit", "-e", "fgm-regressor", "-m", model, "-q", "-p", "C=1", data)
    for argv in (["predict", "-m", model, data, "-o", ""],
                 ["report", model, "-o", ""],
                 ["fit", "-e", "fgm-regressor", "-m", "", data]):
        code, out, err = _run(argv, capsys)
        assert code == 7 and _one_error(err) and "name is empty" in err, (argv, err)
    assert not (tmp_path / "m.html").exists()
    code, out, err = _run(["predict", "-m", model, data, "-o", f"{data}/p.txt"], capsys)
    assert code == 7 and _one_error(err) and "is a file, not a folder" in err, err


def test_a_header_line_read_as_data_is_named_as_such(tmp_path, capsys):
    # a model fitted on a file without a header reads its test files without
    # one: a test file with a header was "7 columns hold text, not numbers: 0
    # (row 1: 'x0'), 1 (row 1: 'x1'), ...; encode them as numbers"
    X, y = _regression()
    data = _table(tmp_path / "d.csv", X, y)
    bare = tmp_path / "bare.csv"
    bare.write_text(data.read_text().split("\n", 1)[1])
    model = tmp_path / "m.klm"
    _ok(capsys, "fit", "-e", "fgm-regressor", "-m", model, "-q", "-p", "C=1",
        "--no-header", bare)
    code, out, err = _run(["predict", "-m", model, data], capsys)
    assert code == 3 and _one_error(err), err
    assert "line 1 (x0, x1, x2, target) names the columns" in err and "--header" in err
    assert (_ok(capsys, "predict", "-m", model, data, "--header")
            == _ok(capsys, "predict", "-m", model, bare))


def test_a_few_far_out_values_are_predicted_with_a_warning_naming_them(tmp_path, capsys):
    # a few rows with a missing-value code (-999) where training never went
    # below -3: too few to refuse the file (that takes 5 % of the values), so
    # their extrapolated predictions were written without a word
    X, y = _regression(n=80)
    data = _table(tmp_path / "d.csv", X, y)
    model = tmp_path / "m.klm"
    _ok(capsys, "fit", "-e", "fgm-regressor", "-m", model, "-q", "-p", "C=1", data)
    code, out, err = _run(["predict", "-m", model, data], capsys)
    assert code == 0 and "far outside" not in err, err
    lines = data.read_text().splitlines()
    for r in (5, 9):  # data rows 5 and 9 (file lines 6 and 10)
        parts = lines[r].split(",")
        parts[1] = "-999"
        lines[r] = ",".join(parts)
    coded = tmp_path / "coded.csv"
    coded.write_text("\n".join(lines) + "\n")
    code, out, err = _run(["predict", "-m", model, coded], capsys)
    assert code == 0, err
    assert len(out.split()) == 80  # every prediction is still written
    (line,) = [w for w in err.splitlines() if "far outside" in w]
    assert line.startswith("kernlearn: warning: 2 samples of ")
    assert "first: sample 5, feature 'x1' = -999" in line, line
    # sparse input: the same rows
    import scipy.sparse as sp

    from kernlearn.summary import far_outside_rows, feature_profile

    Xc = np.loadtxt(coded, delimiter=",", skiprows=1)[:, :3]
    prof = feature_profile(X)
    for M in (Xc, sp.csc_matrix(Xc)):
        rows, first = far_outside_rows(M, prof)
        np.testing.assert_array_equal(rows, [4, 8])
        assert first == (4, 1, -999.0)
