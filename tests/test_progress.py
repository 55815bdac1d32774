"""Progress output: a bar with ETA on terminals, lines otherwise, honest stop reasons."""

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


def test_bar_on_a_terminal_lines_elsewhere():
    rows = [
        dict(iter=i, objective=10.0 / i, violation=1.0 / i, n_active=i, time=0.1 * i)
        for i in (1, 2)
    ]
    tty, log = _Terminal(), io.StringIO()
    for stream in (tty, log):
        p = Progress("X", total=4, stream=stream)
        for r in rows:
            p.update(r)
        p.close("tol", 2, "tol=0.01")
    out = tty.getvalue()
    assert (
        out.count("\r") == 2
        and "[##########..........] 2/4" in out
        and "ETA <= " in out
    )
    assert out.endswith(
        f"stop: tol (tol=0.01) after 2 iterations, {out.split(', ')[-1]}"
    )
    lines = log.getvalue().splitlines()
    assert len(lines) == 3 and "\r" not in log.getvalue()
    assert (
        lines[0].startswith("[X] iter   1  objective=10") and "n_active=1" in lines[0]
    )
    assert STOP_REASONS["tol"] in lines[-1]


def test_fgm_reports_an_active_constraint_not_no_violation(capsys):
    X, y, _ = make_fgm_synthetic(100, 6, 3, random_state=0)
    # B = all features: the second pricing returns the same set (Theorem 3)
    clf = FGMClassifier(B=6, tol=None, max_outer_iter=5, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert "stop: active_set after 1 iterations" in out, out
    assert "no_violation" not in out and clf.converged_


def test_grfl_reports_its_feature_budget(capsys):
    X, y, _ = make_fgm_synthetic(60, 4, 2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = InfiniteFeatureRegressor(
            max_features=2, n_candidates=5, eps=0.0, random_state=0, verbose=1
        ).fit(X, X[:, 0] ** 2)
    out = capsys.readouterr().out
    assert est.stop_reason_ == "max_features"
    assert "stop: max_features (max_features=2) after 2 iterations" in out


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_slkl_never_prints_an_infinite_violation(capsys):
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (80, 1))
    LowRankKernelRegressor(n_columns=20, max_iter=3, random_state=0, verbose=1).fit(
        X, np.sin(X[:, 0])
    )
    out = capsys.readouterr().out
    assert "[slkl] iter   1" in out and "violation=inf" not in out
    assert "violation=n/a" in out


def test_obscure_reports_epochs_and_its_stop_reason(capsys):
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
