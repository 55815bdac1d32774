"""benchmarks/suite_noise_floor.py: counts, gaps and perturbations on two tiny sets."""

import json

import numpy as np
import pandas as pd
import pytest
from bench_scripts import load_script, write_set
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC


@pytest.fixture(scope="module")
def noise():
    yield from load_script("suite_noise_floor")


@pytest.fixture
def data(tmp_path, monkeypatch):
    """suite/ with a 3-class set (150 rows, string labels) and a 60-row regression set."""
    rng = np.random.default_rng(1)
    folder = tmp_path / "suite"
    folder.mkdir()
    X = rng.normal(size=(150, 4)) * [1.0, 100.0, 0.1, 10.0]
    labels = np.array(["low", "mid", "high"])[
        np.digitize(X[:, 0] + X[:, 3] / 10 + 0.3 * rng.normal(size=150), [-0.6, 0.6])
    ]
    write_set(folder, "tiny-clf", pd.DataFrame(X).add_prefix("f").assign(target=labels))
    Z = rng.normal(size=(60, 3))
    y = Z @ [1.0, -2.0, 0.5] + 0.3 * rng.normal(size=60)
    write_set(folder, "tiny-reg", pd.DataFrame(Z).add_prefix("x").assign(target=y))
    (folder / "MANIFEST.md").write_text(
        "| name | task | n |\n|---|---|---:|\n"
        "| tiny-clf | classification | 150 |\n| tiny-reg | regression | 60 |\n"
    )
    monkeypatch.setenv("KERNLEARN_DATA", str(tmp_path))
    return folder


def _main(noise, tmp_path, *args):
    out, md = tmp_path / "noise.json", tmp_path / "noise.md"
    result = noise.main(
        ["--sets", "tiny-clf,tiny-reg", "--jobs", "1", *args]
        + ["--out", str(out), "--md", str(md)]
    )
    assert json.loads(out.read_text())["summary_lines"] == result["summary_lines"]
    return result, md.read_text()


def _svc_main(noise, tmp_path, perturbations, seeds):
    """The SVC() baseline (PNormMKLClassifier's) against the given copies."""
    return _main(noise, tmp_path, "--estimators", "PNormMKLClassifier",
                 "--perturbations", perturbations, "--seeds", seeds)


def test_baseline_against_itself_is_all_within_at_gap_zero(noise, data, tmp_path):
    result, md = _main(noise, tmp_path, "--perturbations", "same", "--seeds", "0,1")
    summary = result["summary"]
    # the seven estimators share seven distinct baselines, each run once
    assert len(summary) == len(noise.baselines(noise.PAIRS)) == 7
    for s in summary:
        assert s["pairs"] == s["within"] == 1 and s["bad"] == 0 and s["errors"] == 0
        assert s["worst_gap"] == (0.0 if s["task"] == "clf" else 1.0)
        assert [p["within"] for p in s["per_seed_summary"].values()] == [1, 1]
    rows = result["rows"]
    assert len(rows) == 7 * 2  # baseline x seed, each on the one set of its task
    for r in rows:
        assert r["score_ours"] == r["score_base"] and r["within"] and not r["bad"]
    assert "pairs not within (0):" in md
    for seed in (0, 1):
        line = f"seed {seed}, first perturbation of each baseline pooled: All: 7/7"
        assert line in md
    assert md.count("1/1 (100.0 %)") == 7 * 3  # two seeds and their mean


def test_scores_and_counts_match_an_independent_fit(noise, data, tmp_path):
    result, md = _svc_main(noise, tmp_path, "C*1.5,C/1.5", "0,3")
    raw = pd.read_csv(data / "tiny-clf.csv.xz", dtype={"target": str})
    X, y = raw.drop(columns="target").to_numpy(float), raw["target"].to_numpy(str)
    for seed in (0, 3):
        Xtr, Xte, ytr, yte = train_test_split(
            X, y, test_size=0.3, random_state=seed, stratify=y
        )

        def acc(C, seed=seed, split=(Xtr, Xte, ytr, yte)):
            Xtr, Xte, ytr, yte = split
            model = make_pipeline(StandardScaler(), SVC(C=C, random_state=seed))
            return accuracy_score(yte, model.fit(Xtr, ytr).predict(Xte))

        for key, C in (("C*1.5", 1.5), ("C/1.5", 1 / 1.5)):
            (row,) = [
                r
                for r in result["rows"]
                if r["seed"] == seed and r["perturbation"] == key
            ]
            assert row["score_base"] == pytest.approx(acc(1.0))
            assert row["score_ours"] == pytest.approx(acc(C))
            gap = 100 * (acc(C) - acc(1.0))
            assert row["gap"] == pytest.approx(gap)
            assert row["within"] == (gap >= -1) and row["bad"] == (gap < -3)
    for s in result["summary"]:
        mine = [r for r in result["rows"] if r["perturbation"] == s["perturbation"]]
        for seed, p in s["per_seed_summary"].items():
            within = sum(r["within"] for r in mine if r["seed"] == seed)
            assert (p["within"], p["pairs"]) == (within, 1)
            assert f"{within}/1 ({100 * within:.1f} %)" in md
    misses = sum(not r["within"] for r in result["rows"])
    assert f"pairs not within ({misses}):" in md


def test_a_worse_twin_is_counted_missed_and_bad(noise, data, tmp_path, monkeypatch):
    # C far below the default leaves an SVC near a constant prediction: a twin
    # that must be caught, or the counts above could hide a broken comparison
    worse = ("C*1e-4", "C x 1e-4", noise._scale_C(1e-4))
    monkeypatch.setitem(noise.STEP_PERTURBATIONS, "svc", [worse])
    result, md = _svc_main(noise, tmp_path, "C*1e-4", "0")
    (s,) = result["summary"]
    assert (s["within"], s["bad"], s["pairs"]) == (0, 1, 1)
    assert s["worst_gap"] < -3
    assert "| 0 | tiny-clf | 45 | SVC() | C x 1e-4 |" in md


def test_perturbations_change_only_the_named_parameter(noise):
    seed = 2
    expect = {
        "FGMClassifier": {
            "C*1.5": ("linearsvc__C", 1.5),
            "C/1.5": ("linearsvc__C", 1 / 1.5),
        },
        "FGMRegressor": {"cv=3": ("lassocv__cv", 3)},
        "InfiniteFeatureClassifier": {
            "nystroem-seed": ("nystroem__random_state", seed + 10000)
        },
        "LowRankKernelClassifier": {"cv=5": ("ridgeclassifiercv__cv", 5)},
        "LowRankKernelRegressor": {"cv=5": ("ridgecv__cv", 5)},
    }
    for name, cases in expect.items():
        base = noise.make_baseline(name, seed).get_params()
        for key, (param, value) in cases.items():
            got = noise.make_perturbed(name, key, seed).get_params()
            changed = {k for k in base if k.count("__") == 1 and base[k] != got[k]}
            assert changed == {param} and got[param] == pytest.approx(value)
    fold = noise.make_perturbed("FGMRegressor", "cv=5-shuffled", seed).get_params()
    assert fold["lassocv__cv"].n_splits == 5 and fold["lassocv__cv"].shuffle
    assert [k for k, _ in noise.perturbations("InfiniteFeatureClassifier")] == [
        "nystroem-seed",
        "C*1.5",
        "C/1.5",
    ]
    with pytest.raises(ValueError, match="does not apply"):
        noise.make_perturbed("FGMRegressor", "C*1.5", seed)
