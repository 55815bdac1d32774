"""Leftover items of the fifteenth pass: each test failed before its fix."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import kernlearn

# ------------------------------------------------- predictions by blocks of rows
_PREDICT_PEAK = """
import tracemalloc, warnings
import numpy as np
import kernlearn
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.normal(size=(600, 5))
y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2
Xt = rng.normal(size=(30000, 5))
for name in ("LowRankKernelRegressor", "LowRankKernelClassifier",
             "InfiniteFeatureRegressor", "InfiniteFeatureClassifier"):
    target = (y > np.median(y)).astype(int) if name.endswith("Classifier") else y
    est = getattr(kernlearn, name)(random_state=0).fit(X, target)
    est.predict(Xt[:10])
    tracemalloc.start()
    est.predict(Xt)
    print(name, tracemalloc.get_traced_memory()[1] / 1e6)
    tracemalloc.stop()
"""


def test_lowrank_and_infinite_predict_by_blocks_of_rows():
    # predicting 30,000 rows built the whole (new rows x landmarks) kernel
    # block (SLKL) or (new rows x learned columns) feature block (GrFL) at
    # once, several copies of it: 27-92 MB here, 0.23-1 GB for 200,000 rows
    # (benchmarks/predict_memory.py); now by blocks of rows as multitask MKL
    out = subprocess.run([sys.executable, "-c", _PREDICT_PEAK], capture_output=True,
                         text=True, check=True)
    peaks = {name: float(mb) for name, mb in (line.split() for line in out.stdout.splitlines())}
    assert len(peaks) == 4 and all(mb < 15 for mb in peaks.values()), peaks


@pytest.mark.parametrize("name", ["LowRankKernelClassifier", "InfiniteFeatureRegressor"])
def test_predictions_by_blocks_are_those_at_once(monkeypatch, name):
    from kernlearn.utils import _row_blocks

    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 4))
    y = X[:, 0] - X[:, 1] ** 2
    t = np.arange(200) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "LowRankKernelClassifier":
            est, kw = kernlearn.LowRankKernelClassifier(random_state=0).fit(
                X, np.digitize(y, [-1, 0])), {}
        else:  # tasks: each row's score is its own task's column
            est = kernlearn.InfiniteFeatureRegressor(random_state=0).fit(X, y, task_index=t)
            kw = {"task_index": np.arange(50) % 2}
    Xt = rng.normal(size=(50, 4))
    f = getattr(est, "decision_function", est.predict)
    at_once = f(Xt, **kw)
    monkeypatch.setattr(_row_blocks, "PREDICT_ROWS", 7)
    np.testing.assert_allclose(f(Xt, **kw), at_once, rtol=1e-12, atol=1e-14)


# ----------------------------------------- a CLI model's feature names in Python
def test_cli_model_loaded_in_python_checks_column_names(tmp_path, capsys):
    # `kernlearn fit` on a CSV with a header kept the column names in the
    # model's metadata only: loaded in Python, the model predicted a DataFrame
    # of reordered columns by position (other predictions, under a warning
    # that it was fitted without feature names); a model fitted on a
    # DataFrame of those columns refuses them
    import pandas as pd

    from kernlearn.cli import main
    from kernlearn.io import load_model

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(60, 3)), columns=["age", "height", "weight"])
    y = (df["age"] - df["weight"] > 0).astype(int)
    df.assign(label=y).to_csv(tmp_path / "train.csv", index=False)
    assert main(["fit", "-e", "fgm", "-q", "-m", str(tmp_path / "m.kl"),
                 str(tmp_path / "train.csv")]) == 0
    est = load_model(tmp_path / "m.kl")
    in_python = kernlearn.FGMClassifier().fit(df, y)
    assert list(est.feature_names_in_) == list(in_python.feature_names_in_)
    assert est.feature_names_in_.dtype == in_python.feature_names_in_.dtype
    np.testing.assert_array_equal(est.predict(df), in_python.predict(df))
    for bad in (df[["weight", "age", "height"]], df.rename(columns={"age": "years"})):
        for model in (est, in_python):
            with pytest.raises(ValueError, match="feature names"):
                model.predict(bad)
    # the commands still match a file's columns by name (reordered: same predictions)
    df[["weight", "height", "age"]].to_csv(tmp_path / "new.csv", index=False)
    capsys.readouterr()
    assert main(["predict", "-m", str(tmp_path / "m.kl"), str(tmp_path / "new.csv")]) == 0
    printed = capsys.readouterr().out.split()
    assert [int(v) for v in printed[-60:]] == list(in_python.predict(df))


# ---------------------------------------------- GrFL with uniformly large weights
def test_grfl_uniform_weights_are_the_documented_level():
    # all weights c (here 16: a power of two, so no rounding differs) fit the
    # model of unit weights at lambda_p / sqrt(c), the "auto" level and the
    # budget counting the weights' sum as rows; weights 1e4 on 1,000 rows were
    # 100x slower than unit weights (7.7 s) because that is a level of 1.4e-4
    # on 200 features (its unit-weight twin takes as long, 7.5 s), not a step
    # size or tolerance left on the weights' scale
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    c = 16.0
    # (one path: below 300 rows the defaults average several, a given budget one)
    weighted = kernlearn.InfiniteFeatureClassifier(random_state=0, n_paths=1).fit(
        X, y, sample_weight=np.full(200, c))
    unit = kernlearn.InfiniteFeatureClassifier(random_state=0, n_paths=1).fit(
        X, y, sample_weight=np.ones(200))
    assert weighted.lambda_p_ == np.sqrt(2000 / (200 * c)) < unit.lambda_p_ == 1.0
    twin = kernlearn.InfiniteFeatureClassifier(
        random_state=0, n_paths=1, lambda_p=weighted.lambda_p_ / np.sqrt(c),
        max_features=200,  # the budget of 3,200 rows (that of 200 rows is 100)
    ).fit(X, y, sample_weight=np.ones(200))
    np.testing.assert_array_equal(weighted.features_, twin.features_)
    np.testing.assert_array_equal(weighted.decision_function(X), twin.decision_function(X))
