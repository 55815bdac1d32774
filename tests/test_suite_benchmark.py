"""benchmarks/suite.py: split, scores, gaps and summary on two tiny suite-style sets."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from bench_scripts import load_script, write_set
from sklearn.metrics import accuracy_score, mean_squared_error


@pytest.fixture(scope="module")
def suite():
    yield from load_script("suite")


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
    write_set(folder, "tiny-clf", clf)
    Z = rng.normal(size=(60, 3))
    reg = pd.DataFrame(Z, columns=["x0", "x1", "x2"]).assign(
        target=Z @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=60)
    )
    write_set(folder, "tiny-reg", reg)
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
            "--cold-start",
            "0",
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


def test_mean_over_seeds_compares_mean_scores(suite):
    def row(seed, ours, base, error=None):
        r = {
            "set": "s",
            "estimator": "LowRankKernelClassifier",
            "baseline": "b",
            "params": {},
            "task": "clf",
            "error": error,
        }
        if error is None:
            gap, within, bad = suite.compare("clf", ours, base)
            r.update(
                score_ours=ours,
                score_base=base,
                cpu_ours=2.0 * (seed + 1),
                cpu_base=1.0,
                wall_ours=1.0,
                wall_base=1.0,
                warn_ours=seed == 1,
                warn_base=False,
                gap=gap,
                within=within,
                bad=bad,
                time_ratio=2.0 * (seed + 1),
            )
        return r

    # seed 0 misses by 2 points, seed 1 wins by 1.5: the mean (-0.25) is within
    by_seed = {0: [row(0, 0.80, 0.82)], 1: [row(1, 0.86, 0.845)]}
    (m,) = suite.mean_rows(by_seed)
    assert m["score_ours"] == pytest.approx(0.83)
    assert m["score_base"] == pytest.approx(0.8325)
    assert m["gap"] == pytest.approx(-0.25) and m["within"] and not m["bad"]
    assert m["seed_gaps"] == pytest.approx([-2.0, 1.5])
    assert m["time_ratio"] == pytest.approx(3.0)  # mean 3 s ours / mean 1 s base
    assert m["warn_ours"] and not m["warn_base"]
    mean, (s,), per_seed = suite.seeds_summary(by_seed, ["LowRankKernelClassifier"])
    assert (s["within"], s["pairs"], s["per_seed_within"]) == (1, 1, [0, 1])
    assert [p[0]["within"] for p in per_seed.values()] == [0, 1]
    line = suite.seeds_line(s)
    assert line.startswith(suite.summary_line(s))
    assert line.endswith("; per seed (0,1): 0/1 (0 %), 1/1 (100 %)")
    # an error in any seed makes the pair an error: not within, named by its seed
    by_seed[1] = [row(1, None, None, error="ours: ValueError: boom")]
    (m,) = suite.mean_rows(by_seed)
    assert m["error"] == "seed 1: ours: ValueError: boom" and "within" not in m
    (s,) = suite.seeds_summary(by_seed, ["LowRankKernelClassifier"])[1]
    assert (s["within"], s["errors"], s["per_seed_within"]) == (0, 1, [0, 0])


def test_seeds_option_runs_every_seed_and_averages(suite, data, tmp_path, capsys):
    args = ["--estimators", "FGMClassifier,FGMRegressor", "--max-rows", "50",
            "--cold-start", "0"]
    out, md = tmp_path / "multi.json", tmp_path / "multi.md"
    result = suite.main([*args, "--seeds", "0,2", "--out", str(out), "--md", str(md)])
    printed = capsys.readouterr().out
    stored = json.loads(out.read_text())
    assert stored["meta"]["seeds"] == [0, 2] and "seed" not in stored["meta"]
    assert [(r["seed"], r["set"]) for r in stored["rows"]] == [
        (0, "tiny-clf"),
        (0, "tiny-reg"),
        (2, "tiny-clf"),
        (2, "tiny-reg"),
    ]
    # each seed is exactly the single-seed run: same split, same scores
    for seed in (0, 2):
        single = suite.main([*args, "--seed", str(seed), "--out", str(tmp_path / "1")])
        capsys.readouterr()
        mine = [r for r in stored["rows"] if r["seed"] == seed]
        assert [r["score_ours"] for r in mine] == [
            r["score_ours"] for r in single["rows"]
        ]
        assert [r["score_base"] for r in mine] == [
            r["score_base"] for r in single["rows"]
        ]
        (entry,) = [p for p in stored["per_seed"] if p["seed"] == seed]
        assert [s["within"] for s in entry["summary"]] == [
            s["within"] for s in single["summary"]
        ]
        assert f"seed {seed}:" in printed
    for m in stored["mean_rows"]:
        mine = [r for r in stored["rows"] if r["set"] == m["set"]]
        ours = np.mean([r["score_ours"] for r in mine])
        base = np.mean([r["score_base"] for r in mine])
        assert m["score_ours"] == pytest.approx(ours)
        assert m["gap"] == pytest.approx(suite.compare(m["task"], ours, base)[0])
        assert m["seed_gaps"] == pytest.approx([r["gap"] for r in mine])
    for s in stored["summary"]:
        assert s["per_seed_within"] == [
            next(x for x in p["summary"] if x["estimator"] == s["estimator"])["within"]
            for p in stored["per_seed"]
        ]
    assert "per seed (0,2): " in stored["summary_lines"][0]
    assert "mean over seeds 0,2" in printed and "seeds 0,2, " in printed
    assert md.read_text() == printed.rstrip("\n") + "\n"
    assert result["summary_lines"] == stored["summary_lines"]
    with pytest.raises(SystemExit):  # one of --seed and --seeds
        suite.main([*args, "--seed", "1", "--seeds", "0,1"])
    with pytest.raises(SystemExit):
        suite.main([*args, "--seeds", "0,0"])


def test_cold_start_column_is_the_median_first_minus_warm(suite, data, tmp_path, monkeypatch):
    # the new processes themselves are fgm_cold_start.py's (tested there); here the
    # column: which estimators are measured, how often, and which clock is read
    calls = []

    def fake(names, runs, cache_dir=None):
        calls.append((list(names), runs))
        # per process: [wall, cpu] of the first fit and of the warm fits
        firsts = {"FGMClassifier": [0.30, 0.50, 0.20], "FGMRegressor": [0.10, 0.10, 0.10]}
        return {
            n: {"new proc": [{"first": [9.0, f], "warm": [0.0, 0.05]} for f in firsts[n]]}
            for n in names
        }, [1.0]

    monkeypatch.setattr(suite.fgm_cold_start, "measure_new_process", fake)
    result = suite.main(["--estimators", "FGMClassifier,FGMRegressor", "--max-rows", "50",
                         "--cold-start", "3", "--out", str(tmp_path / "c.json")])
    assert calls == [(["FGMClassifier", "FGMRegressor"], 3)]
    cold = {s["estimator"]: s["cold_start_seconds"] for s in result["summary"]}
    assert cold == pytest.approx({"FGMClassifier": 0.25, "FGMRegressor": 0.05})
    assert "cold start +0.25 s" in result["summary_lines"][0]
    assert result["meta"]["cold_start_runs"] == 3
    stored = json.loads((tmp_path / "c.json").read_text())
    assert stored["summary"][1]["cold_start_seconds"] == pytest.approx(0.05)
    # --cold-start 0: nothing measured, no figure
    calls.clear()
    result = suite.main(["--estimators", "FGMRegressor", "--max-rows", "50",
                         "--cold-start", "0", "--out", str(tmp_path / "d.json")])
    assert calls == [] and "cold start" not in result["summary_lines"][0]
