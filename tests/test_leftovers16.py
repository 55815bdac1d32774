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

