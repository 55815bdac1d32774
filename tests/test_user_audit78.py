"""Audit 78: the command line, randomised (``benchmarks/fuzz_cli.py``).

A model saved in Python with metadata of its author's
(``save_model(est, path, metadata={...})``, documented as free-form) was read
by the commands as if ``kernlearn fit`` had written it: ``{"task":
"clustering"}``, ``{"n_features": "abc"}``, ``{"feature_min": [...]}`` alone
or ``{"class_text": ["a"]}`` ended in an internal error (exit 1), and
``{"feature_names": "abc"}`` had its letters taken as column names.  Such a
model file is now refused with exit 4 naming the key.
"""

import numpy as np
import pandas as pd
import pytest

from kernlearn import FGMClassifier
from kernlearn.cli import main
from kernlearn.io import save_model

X = np.array([[1.0, 2.0], [2.0, 3.0], [3.0, 1.0], [4.0, 4.0], [5.0, 0.0], [0.0, 1.0]])
Y = np.array(["x", "y", "x", "y", "x", "y"])


@pytest.fixture(scope="module")
def fitted():
    return FGMClassifier().fit(X, Y)


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "d.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "target": Y}).to_csv(path, index=False)
    return path


# (each was exit 1 on the command given, or read letters as columns)
BAD = [
    ({"task": "clustering"}, "evaluate"),
    ({"task": 5}, "report"),
    ({"n_features": "abc"}, "predict"),
    ({"feature_names": "abc"}, "predict"),
    ({"feature_names": {"a": 1}}, "select"),
    ({"feature_min": np.zeros(2)}, "predict"),
    ({"feature_min": "x", "feature_max": "y"}, "evaluate"),
    ({"class_text": ["a"]}, "predict"),
    ({"class_text": 5}, "predict"),
    ({"task_column": 3}, "predict"),
]


@pytest.mark.parametrize("metadata, command", BAD, ids=lambda v: str(v)[:30])
def test_foreign_metadata_is_a_model_file_error(fitted, data, tmp_path, capsys,
                                                metadata, command):
    model = tmp_path / "m.model"
    save_model(fitted, model, metadata=metadata)
    argv = {"predict": ["predict", "-m", str(model), str(data)],
            "evaluate": ["evaluate", "-m", str(model), str(data)],
            "select": ["select", str(model)],
            "report": ["report", str(model), "--data", str(data), "-o",
                       str(tmp_path / "r.html")]}[command]
    assert main(argv) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kernlearn: error: ")
    assert any(repr(key) in err[0] for key in metadata)  # names the key
    assert not (tmp_path / "r.html").exists()


def test_own_metadata_of_other_keys_still_works(fitted, data, tmp_path, capsys):
    """Keys the commands do not read, and right values of those they do, pass."""
    model = tmp_path / "m.model"
    save_model(fitted, model, metadata={"experiment": "run 7", "task": "classification",
                                        "feature_names": ["a", "b"], "n_features": 2})
    assert main(["predict", "-m", str(model), str(data)]) == 0
    out = capsys.readouterr().out.split()
    assert out == list(fitted.predict(X))


@pytest.mark.parametrize("value", ['["fgm"]', "{ name = \"fgm\" }", "5"])
def test_config_estimator_not_a_name_is_a_usage_error(data, tmp_path, capsys, value):
    """``estimator = ["fgm"]`` in a config file was "unhashable type" (exit 1)."""
    config = tmp_path / "c.toml"
    config.write_text(f"estimator = {value}\n")
    model = tmp_path / "m.model"
    assert main(["fit", str(data), "-m", str(model), "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'estimator' must be a name" in err[0]
    assert not model.exists()
