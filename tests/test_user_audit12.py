"""Defects a user met at the command line (fourteenth pass); each test names
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
