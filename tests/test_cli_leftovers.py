"""Defects a user met at the command line, left over from the ninth audit; each test names
what went wrong."""

import csv
import io

import numpy as np

from conftest import one_error as _one_error, run_cli as _run


def _classification_csv(path, n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X @ [2.0, -1.0, 0.5] > 0, "yes", "no")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["a", "b", "c", "label"])
    w.writerows([[f"{v:.6f}" for v in row] + [t] for row, t in zip(X, y)])
    path.write_text(buf.getvalue())
    return path


def test_probabilities_are_written_with_every_digit(tmp_path, capsys):
    # --proba printed six significant digits: 0.9999999 came out as 1 and
    # 0.123456789 as 0.123457 (the predictions already kept every digit)
    from kernlearn.io import load_model

    data = _classification_csv(tmp_path / "t.csv")
    model = tmp_path / "m.klm"
    code, _, err = _run(["fit", "-e", "fgm", "-p", "loss=logistic", "-p", "C=100", "-q",
                         "-m", model, data], capsys)
    assert code == 0, err
    code, out, err = _run(["predict", "-m", model, "--proba", data], capsys)
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    written = np.array(rows[1:], dtype=float)
    X = np.loadtxt(data, delimiter=",", skiprows=1, usecols=(0, 1, 2))
    expected = load_model(model).predict_proba(X)
    assert np.any(np.abs(expected - np.round(expected, 6)) > 0)  # (six digits would lose some)
    np.testing.assert_array_equal(written, expected)


def _numbered_csv(path):
    # a header naming a column like a number: "2" is column 0, column 2 is "b"
    # (a first line with a number in it is read as a header with --header)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    rows = ["2,a,b"] + [f"{t},{u:.4f},{v:.4f}" for t, (u, v) in zip(y, X)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_a_label_that_names_one_column_and_numbers_another_is_refused(tmp_path, capsys):
    # `--label 2` took the column named "2" (column 0) without a word, although
    # column number 2 is "b"
    from kernlearn.io import load_model

    data = _numbered_csv(tmp_path / "n.csv")
    model = tmp_path / "m.klm"
    fit = ["fit", "-e", "fgm-regressor", "-p", "C=1", "-q", "--header", "-m", model]
    code, _, err = _run(fit + ["--label", "2", data], capsys)
    assert code == 3 and _one_error(err), err
    assert ("--label 2 is ambiguous" in err and "column named '2' (number 0)" in err
            and "column number 2 ('b')" in err
            and "--label name:2 or --label index:2" in err), err
    # each spelling picks its reading
    for choice, label, features in (("name:2", "2", ["a", "b"]), ("index:2", "b", ["2", "a"])):
        code, _, err = _run(fit + ["--label", choice, data], capsys)
        assert code == 0, err
        meta = load_model(model, return_metadata=True)[1]
        assert meta["label_name"] == label and list(meta["feature_names"]) == features
        # the model keeps its label by name: evaluate reads it back, with or
        # without the same --label
        for again in ([], ["--label", choice]):
            code, out, err = _run(["evaluate", "--header", "-m", model, *again, data], capsys)
            assert code == 0 and "n_samples 40" in out, (again, err)
    # a number that names that very column, or a name out of range as a number
    (tmp_path / "s.csv").write_text("a,1,2\n" + "".join(
        f"{i % 3},{i % 2},{(i * 7) % 5}\n" for i in range(30)))
    code, _, err = _run(fit + ["--label", "2", tmp_path / "s.csv"], capsys)
    assert code == 0, err
    assert load_model(model, return_metadata=True)[1]["label_name"] == "2"
    code, _, err = _run(fit + ["--label", "name:zz", data], capsys)
    assert code == 3 and _one_error(err) and "no such column" in err, err


def test_a_task_column_named_like_a_number_is_found_by_name_later(tmp_path, capsys):
    # the model stored --task-column as typed ("2"); a later file with the
    # columns in another order (matched by name) read it again as a name or a
    # position: now ambiguous, it is stored by name
    from kernlearn.io import load_model

    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))
    t = np.repeat([0, 1], 30)
    y = X[:, 0] + t + 0.1 * rng.normal(size=60)
    rows = [f"{u:.4f},{v:.4f},{k},{w:.4f}" for (u, v), k, w in zip(X, t, y)]
    (tmp_path / "fit.csv").write_text("\n".join(["a,b,2,y"] + rows) + "\n")
    moved = [",".join(r.split(",")[i] for i in (2, 0, 1, 3)) for r in rows]
    (tmp_path / "moved.csv").write_text("\n".join(["2,a,b,y"] + moved) + "\n")
    model = tmp_path / "m.klm"
    code, _, err = _run(["fit", "-e", "infinite-regressor", "-p", "max_features=3", "-q",
                         "--header", "--task-column", "2", "-m", model,
                         tmp_path / "fit.csv"], capsys)
    assert code == 0, err
    meta = load_model(model, return_metadata=True)[1]
    assert meta["task_column"] == "2" and meta["task_column_name"] == "2"
    code, ref, err = _run(["evaluate", "--header", "-m", model, tmp_path / "fit.csv"], capsys)
    assert code == 0, err
    code, out, err = _run(["evaluate", "--header", "-m", model, tmp_path / "moved.csv"],
                          capsys)
    assert code == 0 and out == ref, err


def test_sparse_counts_above_their_training_maximum_draw_no_far_out_warning(tmp_path, capsys):
    # reuters' own test file drew "1021 samples ... far outside its feature's
    # training range ... a missing-value code such as -999?": in sparse counts a
    # word seen more often than in training, or never seen (a training range of
    # 0 to 0), is ordinary.  A code far below the range still warns.
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(0)
    counts = rng.poisson(0.3, size=(80, 30)).astype(float)
    counts[:, 12] = 0  # a word never seen in training
    counts[0, 29] = 1.0  # (the last word seen once: the model knows 30 features)
    y = np.where(counts[:, :5].sum(axis=1) > counts[:, 5:10].sum(axis=1), 1, -1)
    train = tmp_path / "train.svm"
    dump_svmlight_file(counts, y, str(train))
    model = tmp_path / "m.klm"
    code, _, err = _run(["fit", "-e", "fgm", "-m", model, "-q", train], capsys)
    assert code == 0, err
    test = counts[:40].copy()
    test[3, 0] = 50.0  # far above the training maximum of its word
    test[7, 12] = 2.0  # the unseen word
    new = tmp_path / "test.svm"
    dump_svmlight_file(test, y[:40], str(new))
    code, out, err = _run(["predict", "-m", model, new], capsys)
    assert code == 0, err
    assert len(out.split()) == 40 and "far outside" not in err, err
    test[5, 2] = -999.0  # a missing-value code
    dump_svmlight_file(test, y[:40], str(new))
    code, out, err = _run(["predict", "-m", model, new], capsys)
    assert code == 0, err
    (line,) = [w for w in err.splitlines() if "far outside" in w]
    assert "1 sample of" in line and "= -999" in line, line
