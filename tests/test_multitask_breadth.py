"""benchmarks/multitask_breadth.py: grouping rule, split, baselines and one run."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from bench_scripts import load_script


@pytest.fixture(scope="module")
def mb():
    yield from load_script("multitask_breadth")


def frame(rng, sizes, task="reg"):
    """Rows in groups of ``sizes`` (group "g<i>"), a text and a numeric column."""
    groups = np.repeat([f"g{i}" for i in range(len(sizes))], sizes)
    n = len(groups)
    df = pd.DataFrame({"num": rng.normal(size=n),
                       "colour": rng.choice([" red", "blue "], size=n),
                       "grp": groups, "id": np.arange(n)})
    df["y"] = (np.where(df["num"] > 0, "yes", "no") if task == "clf"
               else df["num"] * 2 + rng.normal(size=n))
    return df


def test_grouping_rule_takes_the_task_column_out_and_drops_small_tasks(mb):
    rng = np.random.default_rng(0)
    df = frame(rng, [30, 14, 40])
    df.loc[3, "num"] = np.nan  # a row with a missing value is dropped
    X, y, tasks, dropped = mb.grouped(df, "reg", "y", ("id",), "grp")
    assert dropped == ["g1"]  # 14 < 15 rows
    assert sorted(set(tasks)) == ["g0", "g2"]
    assert len(y) == len(tasks) == X.shape[0] == 30 - 1 + 40
    # num + one-hot colour (spaces stripped: two levels); no task nor id column
    assert X.shape[1] == 3
    kept = df.drop(index=3)
    kept = kept[kept["grp"] != "g1"]
    np.testing.assert_array_equal(X[:, 0], kept["num"].to_numpy())
    np.testing.assert_array_equal(y, kept["y"].to_numpy(float))
    np.testing.assert_array_equal(tasks, kept["grp"].to_numpy())


def test_grouping_rule_for_classification(mb):
    rng = np.random.default_rng(1)
    df = frame(rng, [60, 60], task="clf")
    # in g1 only 3 rows of "no": fewer than 10 rows of a class
    g1 = np.flatnonzero(df["grp"] == "g1")
    df.loc[g1, "y"] = "yes"
    df.loc[g1[:3], "y"] = "no"
    df = pd.concat([df, frame(rng, [40], task="clf").assign(grp="g2")], ignore_index=True)
    _, y, tasks, dropped = mb.grouped(df, "clf", "y", ("id",), "grp")
    assert dropped == ["g1"]
    assert sorted(set(tasks)) == ["g0", "g2"]
    assert y.dtype.kind == "U" and set(y) == {"no", "yes"}
    df.loc[0, "y"] = "maybe"
    with pytest.raises(ValueError, match="3 classes"):
        mb.grouped(df, "clf", "y", ("id",), "grp")


def test_grouping_rule_refuses_too_few_or_too_many_tasks(mb):
    rng = np.random.default_rng(2)
    with pytest.raises(ValueError, match="1 tasks"):
        mb.grouped(frame(rng, [30, 5]), "reg", "y", ("id",), "grp")
    many = frame(rng, [15] * 4)
    with pytest.raises(ValueError, match="4 tasks"):
        mb.grouped(many, "reg", "y", ("id",), "grp", max_tasks=3)
    assert len(set(mb.grouped(many, "reg", "y", ("id",), "grp", max_tasks=None)[2])) == 4


def test_split_is_stratified_within_tasks_and_capped(mb):
    rng = np.random.default_rng(3)
    X, y, tasks, _ = mb.grouped(frame(rng, [20, 100, 45], task="clf"), "clf", "y",
                                ("id",), "grp")
    for max_rows in (None, 60):
        (Xtr, ytr, ttr), (_, yte, tte) = mb.split(X, y, tasks, "clf", max_rows, 0)
        # scikit-learn's test size rounds up
        assert len(ytr) == (60 if max_rows else len(y) - int(np.ceil(0.3 * len(y))))
        for part_y, part_t in ((ytr, ttr), (yte, tte)):
            pairs = set(zip(part_t, part_y))
            assert pairs == set(zip(tasks, y))  # every task and class in both parts
        # each task's share of the training rows is its share of the set
        share = {t: np.mean(tasks == t) for t in set(tasks)}
        for t, s in share.items():
            assert abs(np.mean(ttr == t) - s) < 0.05
        # rows stay whole: X, y and the task of a row travel together
        rows = {tuple(r) for r in np.column_stack([X, np.searchsorted(np.unique(tasks),
                                                                       tasks)])}
        assert {tuple(r) for r in np.column_stack(
            [Xtr, np.searchsorted(np.unique(tasks), ttr)])} <= rows
    a = mb.split(X, y, tasks, "clf", None, 1)[0][1]
    assert not np.array_equal(a, mb.split(X, y, tasks, "clf", None, 0)[0][1])


def test_baselines_see_the_tasks(mb):
    """Per task: one model per task (opposite slopes both learned); pooled: one
    model with one-hot task columns (task intercepts learned)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 1))
    t = np.repeat(["a", "b"], 100)
    sign = np.where(t == "a", 1.0, -1.0)
    levels = np.unique(t)
    Xt = mb.with_tasks(X, t, levels)
    np.testing.assert_array_equal(Xt[:, -1], (t == "b").astype(float))
    y = sign * 3 * X[:, 0]
    per_task = mb.make_baseline("reg", "per task", 2).fit(Xt, y)
    assert np.mean((per_task.predict(Xt) - y) ** 2) < 1e-2
    y = X[:, 0] + 10 * sign
    pooled = mb.make_baseline("reg", "pooled", 2).fit(Xt, y)
    assert np.mean((pooled.predict(Xt) - y) ** 2) < 1e-2
    labels = np.where(sign * X[:, 0] > 0, "p", "n")
    pred = mb.make_baseline("clf", "per task", 2).fit(Xt, labels).predict(Xt)
    assert pred.dtype.kind == "U" and np.mean(pred == labels) > 0.95


def test_one_run_on_a_synthetic_set(mb, monkeypatch):
    rng = np.random.default_rng(5)
    df = frame(rng, [40, 40, 40])
    df["y"] += np.repeat([0.0, 5.0, -5.0], 40)
    monkeypatch.setitem(mb.SETS, "synthetic", ("reg", lambda: df, "y", ("id",), "grp"))
    logged = []
    mean, summary, by_seed = mb.run(["synthetic"], [0, 1], max_rows=None,
                                    log=lambda *a, **k: logged.append(a))
    assert sorted(by_seed) == [0, 1] and len(logged) == 2
    keys = {r["estimator"] for r in mean}
    assert keys == {"MultitaskMKLRegressor [pooled]", "MultitaskMKLRegressor [per task]",
                    "MultitaskMKLRegressorCV [pooled]", "MultitaskMKLRegressorCV [per task]"}
    for r in mean:
        assert r["error"] is None
        assert r["n_train"] == 84 and r["d"] == 3
        assert r["gap"] == pytest.approx(r["score_ours"] / r["score_base"])
        assert r["time_ratio"] > 0
    assert {s["estimator"] for s in summary} == keys
    assert all(s["pairs"] == 1 for s in summary)
    # a set that cannot be read becomes error rows, not a crash
    monkeypatch.setitem(mb.SETS, "broken", ("clf", lambda: df, "y", ("id",), "grp"))
    rows = mb.run_set("broken", 0, None, {}, 60.0)
    # (the CV classifier has a third baseline: GridSearchCV)
    assert len(rows) == 5 and all(r["error"].startswith("data: ValueError") for r in rows)
    assert {r["estimator"] for r in rows} >= {"MultitaskMKLClassifierCV [grid]"}


def test_grid_baseline_has_our_cvs_grid_and_folds(mb):
    """``GridSearchCV(SVC())`` is given the C grid and the folds of
    ``MultitaskMKLClassifierCV()``: its fold of each row is our estimator's."""
    from kernlearn import MultitaskMKLClassifierCV
    from kernlearn.estimators import mtmkl_cv

    rng = np.random.default_rng(6)
    X = rng.normal(size=(90, 2))
    t = np.repeat(["a", "b", "c"], 30)
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=90) > 0, "p", "n")
    Xt = mb.with_tasks(X, t, np.unique(t))
    base = mb.make_baseline("clf", "grid", 3).fit(Xt, y)
    ours = MultitaskMKLClassifierCV(max_iter=3)
    seen = []
    real = mtmkl_cv._SelectionMixin._splits

    def splits(self, *args, **kwargs):
        seen.append(real(self, *args, **kwargs))
        return seen[-1]

    mtmkl_cv._SelectionMixin._splits = splits
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (3 iterations: not converged)
            ours.fit(X, y, task_index=t)
    finally:
        mtmkl_cv._SelectionMixin._splits = real
    assert [list(map(list, f)) for f in base.model.cv] == \
        [list(map(list, f)) for f in seen[0]]
    assert list(base.model.param_grid["svc__C"]) == list(ours.Cs)
    assert base.model.best_params_["svc__C"] in ours.Cs
    # with another grid through --param, the baseline's grid follows
    params = {"MultitaskMKLClassifierCV": {"Cs": (0.5, 2.0), "cv": 3}}
    other = mb.make_baseline("clf", "grid", 3, params).fit(Xt, y)
    assert list(other.model.param_grid["svc__C"]) == [0.5, 2.0]
    assert len(other.model.cv) == 3


def test_docstring_lists_every_set_with_its_task_column(mb):
    rows = [re.split(r"\s{2,}", line.strip()) for line in mb.__doc__.splitlines()
            if re.match(r"^\w+\s+(reg|clf)\s", line)]
    table = {row[0]: (row[1], row[4].split()[0]) for row in rows}
    assert table == {name: (spec[0], spec[4]) for name, spec in mb.SETS.items()}
    assert list(mb.SETS) == NAMES  # each set's loading is tested below


def documented_tasks(module):
    """``{name: number of tasks}`` from the docstring table's last column."""
    rows = [re.split(r"\s{2,}", line.strip()) for line in module.__doc__.splitlines()
            if re.match(r"^\w+\s+(reg|clf)\s", line)]
    return {row[0]: int(row[5].split()[0]) for row in rows}


NAMES = ["school", "carseats", "wage", "star", "grunfeld", "gasoline", "cigar", "autompg",
         "penguins", "oj", "default", "caravan", "turnout", "cowles", "verbagg"]


@pytest.mark.parametrize("name", NAMES)
def test_every_set_loads_with_its_documented_tasks(mb, name):
    from kernlearn.datasets import DatasetNotFoundError

    try:
        X, y, tasks, task, _ = mb.load(name)
    except (mb.unseen_sets.MissingPackageError, DatasetNotFoundError) as exc:
        pytest.skip(f"{name}: {exc}")
    assert task == mb.SETS[name][0]
    assert np.unique(tasks).size == documented_tasks(mb)[name]
    assert X.shape[0] == len(y) == len(tasks) and np.isfinite(X).all()
    if task == "clf":
        assert np.unique(y).size == 2
