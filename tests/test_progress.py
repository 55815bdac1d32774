"""Progress output: a bar on terminals, a widget in notebooks, silence elsewhere;
lines on request; honest stop reasons."""

import io
import warnings

import numpy as np
import pytest

from kernlearn import FGMClassifier, InfiniteFeatureRegressor, LowRankKernelRegressor
from kernlearn.datasets import make_fgm_synthetic
from kernlearn.progress import STOP_REASONS, Progress


class _Terminal(io.StringIO):
    def isatty(self):
        return True


ROWS = [
    dict(iter=i, objective=10.0 / i, violation=1.0 / i, n_active=i, time=0.1 * i)
    for i in (1, 2)
]


@pytest.fixture
def lines(monkeypatch):
    """One line per iteration (what a log wants), whatever the stream."""
    monkeypatch.setenv("KERNLEARN_PROGRESS", "lines")


def _report(stream, **kw):
    p = Progress("X", total=4, stream=stream, **kw)
    for r in ROWS:
        p.update(r)
    p.close("tol", 2, "tol=0.01")
    return p


def test_bar_on_a_terminal(monkeypatch):
    monkeypatch.delenv("KERNLEARN_PROGRESS", raising=False)
    tty = _Terminal()
    assert _report(tty).mode == "bar"
    out = tty.getvalue()
    assert "[X]" in out and "2/4" in out and "objective=5" in out and "\r" in out
    last = out.splitlines()[-1]
    assert last.startswith("[X] stop: tol (tol=0.01) after 2 iterations, ")
    assert last.endswith(STOP_REASONS["tol"])


def test_lines_when_asked_for(monkeypatch):
    monkeypatch.delenv("KERNLEARN_PROGRESS", raising=False)
    for kw, env in (({"bar": False}, None), ({"level": 2}, None), ({}, "lines")):
        if env:
            monkeypatch.setenv("KERNLEARN_PROGRESS", env)
        log = io.StringIO()
        assert _report(log, **kw).mode == "lines"
        out = log.getvalue().splitlines()
        assert len(out) == 3 and "\r" not in log.getvalue()
        assert out[0].startswith("[X] iter   1  objective=10")
        assert "n_active=1" in out[0]
        assert STOP_REASONS["tol"] in out[-1]


def test_silent_when_not_interactive(monkeypatch, capsys):
    """A pipe, a log file, a test: verbose=1 prints nothing at all."""
    monkeypatch.delenv("KERNLEARN_PROGRESS", raising=False)
    log = io.StringIO()
    assert _report(log).mode == "off" and log.getvalue() == ""
    assert _report(None).mode == "off"
    X, y, _ = make_fgm_synthetic(100, 6, 3, random_state=0)
    FGMClassifier(B=2, max_iter=3, verbose=1).fit(X, y)
    out, err = capsys.readouterr()
    assert out == "" and err == ""
    monkeypatch.setenv("KERNLEARN_PROGRESS", "off")
    assert _report(_Terminal()).mode == "off"


def test_silent_in_a_non_interactive_subprocess():
    """The real thing: a fit with verbose=1 whose output goes to pipes."""
    import os
    import subprocess
    import sys

    code = (
        "import warnings\n"
        "warnings.simplefilter('ignore')  # warnings are not progress output\n"
        "from kernlearn import FGMClassifier\n"
        "from kernlearn.datasets import make_fgm_synthetic\n"
        "X, y, _ = make_fgm_synthetic(100, 6, 3, random_state=0)\n"
        "FGMClassifier(B=2, max_iter=3, verbose=1).fit(X, y)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KERNLEARN_PROGRESS"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""


def test_widget_in_a_notebook(monkeypatch):
    """In a Jupyter kernel the bar is tqdm.auto's (a widget with ipywidgets)."""
    import sys
    import types

    from kernlearn import progress

    class Shell:
        config = {"IPKernelApp": {}}

    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: Shell()
    monkeypatch.setitem(sys.modules, "IPython", fake)
    monkeypatch.delenv("KERNLEARN_PROGRESS", raising=False)
    assert progress._in_notebook()
    assert progress._mode(None, None, None) == "widget"
    monkeypatch.setattr(fake, "get_ipython", lambda: None)
    assert not progress._in_notebook()


def test_fgm_reports_an_active_constraint_not_no_violation(capsys, lines):
    X, y, _ = make_fgm_synthetic(100, 6, 3, random_state=0)
    # B = all features: the second pricing returns the same set (Theorem 3)
    clf = FGMClassifier(B=6, tol=None, max_iter=5, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert "stop: active_set after 1 iterations" in out, out
    assert "no_violation" not in out and clf.converged_


def test_fgm_gap_stop_is_explained_as_a_gap(capsys, lines):
    X, y, _ = make_fgm_synthetic(100, 6, 3, random_state=0)
    # B = all features: after one master the Theorem-2 gap is below tol, so the
    # fit stops on tol without a second objective to compare; the explanation
    # must not claim an objective change was measured
    clf = FGMClassifier(B=6, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert clf.n_iter_ == 1 and "stop: tol (tol=0.01) after 1 iterations" in out, out
    assert "duality gap" in out, out


def test_grfl_reports_its_feature_budget(capsys, lines):
    X, y, _ = make_fgm_synthetic(60, 4, 2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = InfiniteFeatureRegressor(
            max_features=2, n_candidates=5, tol=0.0, random_state=0, verbose=1
        ).fit(X, X[:, 0] ** 2)
    out = capsys.readouterr().out
    assert est.stop_reason_ == "max_features"
    assert "stop: max_features (max_features=2) after 2 iterations" in out


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_slkl_never_prints_an_infinite_violation(capsys, lines):
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (80, 1))
    LowRankKernelRegressor(n_columns=20, max_iter=3, random_state=0, verbose=1).fit(
        X, np.sin(X[:, 0])
    )
    out = capsys.readouterr().out
    assert "[slkl] iter   1" in out and "violation=inf" not in out
    assert "violation=n/a" in out


def test_obscure_reports_epochs_and_its_stop_reason(capsys, lines):
    from sklearn.datasets import load_iris

    from kernlearn import PNormMKLClassifier

    X, y = load_iris(return_X_y=True)
    PNormMKLClassifier(
        max_iter=3, max_iter_online=2, tol=None, random_state=0, verbose=1
    ).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("[OBSCURE] iter   1  stage=1  objective=")
    assert "stage=2" in lines[-2] and "train_error=" in lines[-2]
    assert lines[-1].startswith("[OBSCURE] stop: max_iter after ")


def test_obscure_gap_stop_line_says_what_the_gap_did(capsys, lines):
    # the stop reason "duality gap" was missing from STOP_REASONS, so the line
    # ended by repeating it: "stop: duality gap after 9 iterations, 0.01s:
    # duality gap"
    from kernlearn import PNormMKLClassifier

    X, y, _ = make_fgm_synthetic(80, 4, 2, random_state=0)
    clf = PNormMKLClassifier(random_state=0, verbose=1).fit(X, y)
    out = [w for w in capsys.readouterr().out.splitlines() if " stop: " in w]
    assert clf.stop_reason_ == "duality gap", clf.stop_reason_
    assert out and out[-1].endswith(STOP_REASONS["duality gap"]), out
    assert not out[-1].endswith(": duality gap"), out
