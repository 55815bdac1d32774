"""Loose ends of the thirty-fifth pass (issues 21, 24).

GrFL's tasks of one class, the bound on compressed text data files, and items left
open by the last passes' CHANGELOG sections.
"""

import gzip
import lzma

import numpy as np
import pytest
from conftest import one_error as _one_error
from conftest import run_cli as _run
from threadpoolctl import threadpool_limits

from kernlearn import InfiniteFeatureClassifier, MultitaskMKLClassifier
from kernlearn.datafiles import data_home, load_data_file
from kernlearn.utils import _npy_header, _packed_text

KW = dict(max_features=5, n_candidates=10, lambda_p=0.1, n_paths=1, random_state=0)


# ------------------------------------------------------- GrFL: a task of one class
def _tasks(n=90, seed=0, classes=("a", "b")):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 4)
    t = np.repeat([0, 1, 2], n // 3)
    y = np.asarray(classes)[np.digitize(X[:, 0], np.linspace(-0.5, 0.5, len(classes) - 1))]
    return X, t, y


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_a_grfl_task_of_one_class_is_refused_naming_it(loss):
    # A task whose rows are all of one class has no finite intercept: the logistic
    # fit ran its bias off (-4.2 at these settings, about -1,300 at others) without
    # a word.  The multitask MKL classifier and scikit-learn's refuse one class: so
    # does GrFL now, naming the task.
    X, t, y = _tasks()
    y[t == 2] = "a"
    msg = "task 2 has samples of one class only; every task needs both classes"
    with pytest.raises(ValueError, match=msg):
        InfiniteFeatureClassifier(loss=loss, **KW).fit(X, y, task_index=t)
    with pytest.raises(ValueError, match=msg):  # (the consistent refusal)
        MultitaskMKLClassifier().fit(X, y, task_index=t)


def test_a_grfl_task_left_of_one_class_by_its_weights_says_so():
    X, t, y = _tasks(seed=1)
    w = np.ones(len(y))
    w[(t == 1) & (y == "b")] = 0.0  # (task 1 holds both classes; one weighs nothing)
    with pytest.raises(ValueError, match="task 1 has samples of one class only among its "
                                         "rows of positive weight"):
        InfiniteFeatureClassifier(**KW).fit(X, y, task_index=t, sample_weight=w)
    # a task whose rows all weigh zero leaves tasks_ (as before), it is not refused
    w = np.where(t == 1, 0.0, 1.0)
    with threadpool_limits(1):
        est = InfiniteFeatureClassifier(**KW).fit(X, y, task_index=t, sample_weight=w)
    assert list(est.tasks_) == [0, 2]
    assert np.isfinite(est.intercept_).all() and np.abs(est.intercept_).max() < 10


def test_a_multiclass_grfl_task_needs_two_classes_not_every_class():
    X, t, y = _tasks(seed=2, classes=("p", "q", "r"))
    y[t == 1] = np.where(y[t == 1] == "r", "q", y[t == 1])  # task 1: p and q only
    with threadpool_limits(1):
        est = InfiniteFeatureClassifier(**KW).fit(X, y, task_index=t)  # (fitted)
    assert np.isfinite(est.intercept_).all() and np.abs(est.intercept_).max() < 10
    y[t == 0] = "r"  # task 0: one class
    with pytest.raises(ValueError, match="task 0 has samples of one class only; every "
                                         "task needs two classes or more"):
        InfiniteFeatureClassifier(**KW).fit(X, y, task_index=t)


def test_platt_with_a_task_of_two_rows_per_class_is_fitted_not_refused_in_a_fold():
    # Platt's folds were stratified by class only: task 3's two rows of class "b"
    # could both fall in one test fold, leaving that fold's training rows of task 3
    # of one class, which the fold's fit now refuses.  They are stratified by
    # (task, class): every training fold holds each task's classes.
    X, t, y = _tasks(n=93, seed=3)
    t[-5:] = 3
    y[-5:] = ["a", "a", "a", "b", "b"]
    with threadpool_limits(1):
        est = InfiniteFeatureClassifier(probability=True, **KW).fit(X, y, task_index=t)
    P = est.predict_proba(X, task_index=t)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    y[-1] = "a"  # (one "b" in task 3: two folds need two rows of it)
    with pytest.raises(ValueError, match=r"2 samples of every class in every task holding "
                                         r"it \(task 3 has one of class 'b'\)"):
        InfiniteFeatureClassifier(probability=True, **KW).fit(X, y, task_index=t)


# ------------------------------------------------ compressed text: the bound on it
@pytest.fixture
def text_floor_1mb(monkeypatch):
    """The floors lowered to 1 MiB (64 MiB of text and 256 MiB in use), and the
    default budget of the parsed table to 64 MiB: small files."""
    monkeypatch.setattr(_npy_header, "_MIN_CAP", 2**20)
    monkeypatch.setattr(_packed_text, "_TEXT_FLOOR", 2**20, raising=False)
    monkeypatch.setattr(_packed_text, "default_budget", lambda kind: 2**26)


@pytest.mark.parametrize("suffix", [".gz", ".xz"])
def test_compressed_zero_rows_past_the_budget_are_refused(suffix, tmp_path, capsys,
                                                          text_floor_1mb):
    # The text was bounded by 1100 bytes per byte of file (the most deflate packs
    # into an archive): gzip never reached it (1032:1 at most), so a 1 MB .csv.gz
    # of 250 MB of zero rows read (23 s CPU, 3.6 GB) and a 4 MB one would have
    # filled 24 GB.  The table it would parse into is counted now, against the
    # budget (by default half the available memory; 64 MiB here).
    rows = b"a,b,c,d,y\n" + b"0,0,0,0,1\n" * (2**23 // 10)  # 8 MiB, some 900:1 by gzip
    opener = {".gz": gzip.open, ".xz": lzma.open}[suffix]
    path = tmp_path / f"zeros.csv{suffix}"
    with opener(path, "wb") as fh:
        fh.write(rows)
    assert 100 * path.stat().st_size < len(rows)
    with pytest.raises(ValueError, match=r"reading it would take more than .* over the "
                                         r"budget of 64\.0 MiB .*: a decompression bomb, or "
                                         r"a table larger than the budget"):
        load_data_file(path)
    code, _, err = _run(["fit", "-e", "fgm", "-m", tmp_path / "m.npz", "-q", path], capsys)
    assert code == 3 and _one_error(err) and "decompression bomb" in err, err
    # (the same table, within a budget raised for it, reads: it is a table)
    X, y, _ = load_data_file(path, max_table_size="512MB")
    assert X.shape == (2**23 // 10, 4) and not X.any() and (y == 1).all()


def test_genuine_compressed_tables_read(tmp_path, text_floor_1mb):
    # a table of small integers, packed some 5:1, well over the lowered floor: read
    rng = np.random.default_rng(0)
    table = rng.integers(0, 3, (2**17, 5))
    text = b"a,b,c,d,y\n" + "".join(",".join(map(str, r)) + "\n" for r in table).encode()
    path = tmp_path / "small_ints.csv.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(text)
    assert len(text) > 2**20 and len(text) < 10 * path.stat().st_size
    X, y, _ = load_data_file(path)
    np.testing.assert_array_equal(np.column_stack([X, y]), table)


@pytest.mark.parametrize("name", ["solar", "semeion", "keggdirected"])
def test_the_suites_most_packed_tables_read_without_a_floor(name, monkeypatch):
    # (the suite's highest ratios: 24.5, 21.6 and 12.9 to 1; no floor: the ratio alone)
    monkeypatch.setattr(_packed_text, "_TEXT_FLOOR", 0)
    monkeypatch.setattr(_npy_header, "_MIN_CAP", 0)
    path = data_home() / "suite" / f"{name}.csv.xz"
    if not path.exists():
        pytest.skip(f"the suite's {path.name} is not in {data_home()} (KERNLEARN_DATA)")
    X, y, _ = load_data_file(path)
    assert X.shape[0] > 100


# -------------------------------------------- FGM: SimpleMKL on three or more classes
def test_simplemkl_refuses_a_shared_selection_and_auto_runs_one_vs_rest():
    # SimpleMKL's master solves one output: multiclass="shared" on three classes is
    # refused at once, naming the remedies; "auto" (the default) runs one-vs-rest
    # with it, the model of multiclass="ovr"
    from kernlearn import FGMClassifier

    rng = np.random.RandomState(0)
    X = rng.randn(120, 6)
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.4, 0.4])
    with pytest.raises(ValueError, match=r"solver='simplemkl' handles one output; use "
                                         r"solver='newton' for a shared multiclass "
                                         r"selection, or multiclass='ovr'\."):
        FGMClassifier(solver="simplemkl", multiclass="shared").fit(X, y)
    with threadpool_limits(1):
        auto = FGMClassifier(solver="simplemkl").fit(X, y)
        ovr = FGMClassifier(solver="simplemkl", multiclass="ovr").fit(X, y)
    assert len(auto.history_) == 3  # (one problem per class)
    np.testing.assert_array_equal(auto.decision_function(X), ovr.decision_function(X))
    assert auto.score(X, y) > 0.9


# ---------------------------------------------------------- blank lines (PEP 8)
def test_src_has_pep8_blank_lines_between_definitions():
    # two blank lines around top-level definitions, at most two in a row (E301-E305):
    # 17 places in src/ did otherwise (widths.py's centred_row_stats among them)
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed beside this Python nor on PATH")
    src = Path(__file__).resolve().parents[1] / "src"
    run = subprocess.run([ruff, "check", "--preview", "--select", "E301,E302,E303,E305",
                          "--output-format", "concise", "--no-cache", str(src)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
