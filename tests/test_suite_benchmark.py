"""benchmarks/suite.py: split, scores, gaps and summary on two tiny suite-style sets."""

import importlib.util
import json
import lzma
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, mean_squared_error

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "suite.py"


@pytest.fixture(scope="module")
def suite():
    spec = importlib.util.spec_from_file_location("kernlearn_bench_suite", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    # registered, so that pool workers (forked) can unpickle its functions
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def _write(folder, name, df):
    with lzma.open(folder / f"{name}.csv.xz", "wt") as fh:
        df.to_csv(fh, index=False, lineterminator="\n")


@pytest.fixture
def data(tmp_path, monkeypatch):
    """A data folder with suite/: a 3-class set (string labels, 120 rows, columns on
    very different scales), a 60-row regression set and a manifest naming the tasks."""
    rng = np.random.default_rng(0)
    folder = tmp_path / "suite"
    folder.mkdir()
    X = rng.normal(size=(120, 4)) * [1.0, 1e3, 1e-2, 10.0] + [0.0, 5e3, 1.0, -3.0]
    labels = np.array(["low", "mid", "high"])[
        np.digitize(X[:, 0] + X[:, 3] / 10, [-0.5, 0.5])
    ]
    clf = pd.DataFrame(X, columns=[f"f{j}" for j in range(4)]).assign(target=labels)
    _write(folder, "tiny-clf", clf)
    Z = rng.normal(size=(60, 3))
    reg = pd.DataFrame(Z, columns=["x0", "x1", "x2"]).assign(
        target=Z @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=60)
    )
    _write(folder, "tiny-reg", reg)
    (folder / "MANIFEST.md").write_text(
        "| name | task | n |\n|---|---|---:|\n"
        "| tiny-clf | classification | 120 |\n| tiny-reg | regression | 60 |\n"
    )
    monkeypatch.setenv("KERNLEARN_DATA", str(tmp_path))
    return folder


def test_compare_gap_thresholds(suite):
    gap, within, bad = suite.compare("clf", 0.800, 0.815)
    assert gap == pytest.approx(-1.5) and not within and not bad
    assert suite.compare("clf", 0.800, 0.805)[1:] == (True, False)
    assert suite.compare("clf", 0.700, 0.750)[1:] == (False, True)
    assert suite.compare("clf", 0.900, 0.850)[0] == pytest.approx(5.0)
    gap, within, bad = suite.compare("reg", 1.2, 1.0)
    assert gap == pytest.approx(1.2) and not within and bad
    assert suite.compare("reg", 1.04, 1.0)[1:] == (True, False)
    assert suite.compare("reg", 1.10, 1.0)[1:] == (False, False)
    assert suite.compare("reg", 0.0, 0.0)[0] == 1.0
    assert math.isinf(suite.compare("reg", 0.5, 0.0)[0])


def test_summary_counts_errors_as_not_within(suite):
    def row(set_, gap, ratio, error=None):
        within, bad = (gap >= -1, gap < -3) if gap is not None else (None, None)
        return {
            "set": set_,
            "estimator": "FGMClassifier",
            "gap": gap,
            "within": within,
            "bad": bad,
            "time_ratio": ratio,
            "error": error,
        }

    rows = [
        row("a", 0.5, 2.0),
        row("b", -2.0, 4.0),
        row("c", -7.5, 1.0),
        row("d", None, None, error="ours: ValueError: boom"),
    ]
    (s,) = suite.summarize(rows, ["FGMClassifier"])
    assert (s["pairs"], s["errors"], s["within"], s["bad"]) == (4, 1, 1, 1)
    assert s["share_within"] == 0.25
    assert (s["worst_gap"], s["worst_set"]) == (-7.5, "c")
    assert s["time_ratio_median"] == 2.0
    assert (s["time_ratio_max"], s["slowest_set"]) == (4.0, "b")
    line = suite.summary_line(s)
    assert (
        "1/4 pairs (25 %) within 1 point" in line
        and "worst gap -7.5 points (c)" in line
    )
    assert "1 errors" in line


def test_manifest_tasks_and_capped_stratified_split(suite, data):
    assert suite.suite_sets(data) == {"tiny-clf": "clf", "tiny-reg": "reg"}
    X, y, task = suite.load_set("tiny-clf")
    assert task == "clf" and X.shape == (120, 4) and set(y) == {"low", "mid", "high"}
    _, ytr, _, yte = suite.split_capped(X, y, task, max_rows=50, seed=0)
    assert (len(ytr), len(yte)) == (50, 21)  # cap 50, test 3/7 of it
    for label in set(y):  # stratified: class shares kept within one row
        assert abs(np.sum(ytr == label) - 50 * np.mean(y == label)) <= 1
    X, y, task = suite.load_set("tiny-reg")
    _, ytr, _, yte = suite.split_capped(X, y, task, max_rows=50, seed=0)
    assert (len(ytr), len(yte)) == (42, 18)  # under the cap: plain 70/30


def test_run_writes_table_and_correct_gaps(suite, data, tmp_path, capsys):
    out, md = tmp_path / "out.json", tmp_path / "out.md"
    result = suite.main(
        [
            "--estimators",
            "FGMClassifier,FGMRegressor,LowRankKernelClassifier",
            "--max-rows",
            "50",
            "--out",
            str(out),
            "--md",
            str(md),
        ]
    )
    stored = json.loads(out.read_text())
    rows = stored["rows"]
    assert [(r["set"], r["estimator"]) for r in rows] == [
        ("tiny-clf", "FGMClassifier"),
        ("tiny-clf", "LowRankKernelClassifier"),
        ("tiny-reg", "FGMRegressor"),
    ]
    for r in rows:
        assert r["error"] is None, r["error"]
        # the baseline's score, recomputed here from the same split
        X, y, task = suite.load_set(r["set"])
        Xtr, ytr, Xte, yte = suite.split_capped(X, y, task, 50, 0)
        with warnings.catch_warnings():  # Nystroem(100) on 50 rows says so
            warnings.simplefilter("ignore", UserWarning)
            pred = suite.make_baseline(r["estimator"], 0).fit(Xtr, ytr).predict(Xte)
        if task == "clf":
            assert r["score_base"] == pytest.approx(accuracy_score(yte, pred))
            assert r["gap"] == pytest.approx(100 * (r["score_ours"] - r["score_base"]))
            assert r["within"] == (r["gap"] >= -1)
        else:
            assert r["score_base"] == pytest.approx(mean_squared_error(yte, pred))
            assert r["gap"] == pytest.approx(r["score_ours"] / r["score_base"])
            assert r["within"] == (r["gap"] <= 1.05)
        assert r["time_ratio"] == pytest.approx(r["cpu_ours"] / r["cpu_base"])
    printed = capsys.readouterr().out
    table = [line for line in printed.splitlines() if line.startswith("| tiny-")]
    assert len(table) == 3
    assert "FGMRegressor vs LassoCV(): " in printed and "All: " in printed
    assert "skipped named:a9a: no folder" in printed  # named sets absent here
    assert md.read_text() == printed.rstrip("\n") + "\n"
    assert result["summary_lines"] == stored["summary_lines"]
    assert [s["pairs"] for s in stored["summary"]] == [1, 1, 1]


def test_errors_and_timeouts_become_rows(suite, data, tmp_path):
    params = suite.parse_params(["FGMClassifier.C=-1.0"], ["FGMClassifier"])
    assert params == {"FGMClassifier": {"C": -1.0}}
    rows = suite.run(
        {"tiny-clf": "clf", "tiny-reg": "reg"},
        ["FGMClassifier", "LowRankKernelRegressor"],
        params,
        max_rows=50,
        log=lambda s: None,
    )
    assert len(rows) == 2
    assert rows[0]["error"].startswith("ours: ") and "C" in rows[0]["error"]
    assert rows[1]["error"] is None
    (slow,) = suite.run(
        {"tiny-reg": "reg"},
        ["LowRankKernelRegressor"],
        {},
        max_rows=50,
        timeout=1e-5,
        log=lambda s: None,
    )
    assert "longer than --timeout" in slow["error"]
    missing = suite.run_pair(("nope", "clf", "FGMClassifier", {}, 50, 0, None, "cpu"))
    assert missing["error"].startswith("data: DatasetNotFoundError")


def test_param_overrides_are_checked(suite):
    names = ["FGMClassifier", "PNormMKLClassifier"]
    with pytest.raises(ValueError, match="has no parameter 'no_such'"):
        suite.parse_params(["FGMClassifier.no_such=1"], names)
    with pytest.raises(ValueError, match="not among the estimators"):
        suite.parse_params(["LowRankKernelRegressor.nu=1"], names)
    with pytest.raises(ValueError, match="expected Est.key=value"):
        suite.parse_params(["C=1"], names)
    # '*' sets a parameter only where it exists: random_state is PNormMKL's, not FGM's
    assert suite.parse_params(["*.random_state=3", "*.C='x'"], names) == {
        "FGMClassifier": {"C": "x"},
        "PNormMKLClassifier": {"random_state": 3, "C": "x"},
    }
    est = suite.make_ours("PNormMKLClassifier", {"C": 2.0}, seed=7)
    assert (est.C, est.random_state) == (2.0, 7)


def test_missing_suite_folder_skips(suite, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KERNLEARN_DATA", str(tmp_path / "empty"))
    assert suite.main(["--out", str(tmp_path / "x.json")]) is None
    assert "skip: no suite data in" in capsys.readouterr().out
    assert not (tmp_path / "x.json").exists()
