"""Every script of examples/ runs to completion (scikit-learn examples with our estimators)."""

import runpy
import warnings
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))
# a line each script must print: the part of the example our estimator drives
EXPECT = {
    "plot_feature_selection_pipeline.py": "selected: [",
    "plot_select_from_model_diabetes.py": "Features selected by forward sequential selection",
    "plot_kernel_approximation.py": "learned features:",
    "plot_classifier_comparison.py": "dataset 2 MKL (multitask, one task)",
    "plot_grid_search_digits.py": "kernel weights:",
}


def test_every_example_is_checked():
    assert {p.name for p in EXAMPLES} == set(EXPECT)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs(path, tmp_path, monkeypatch, capsys):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        # plt.show() on the Agg backend warns; estimators may warn on toy data
        warnings.simplefilter("ignore")
        runpy.run_path(str(path), run_name="__main__")
    plt.close("all")
    assert EXPECT[path.name] in capsys.readouterr().out
