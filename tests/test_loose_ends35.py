"""Loose ends of the thirty-third pass (issues 21, 24).

* The interrupt tests' slow estimator was written twice (``test_interrupts34``
  and ``test_user_audit100``, each in a string run by a child Python): it is
  ``tests/interrupt_fits.py``, which the children import.
* ``plot_kernel_weights([1e308, 1e308])`` warned "overflow encountered in
  multiply" (matplotlib's tick steps) twenty times; such weights are now drawn
  divided by a power of ten, named on the axis.
* The command line refused a histogram kernel's ``block`` that is not a
  positive integer (``kernel='hik'`` with ``kernel_params={"block": 0}``) only
  when the fit computed the first Gram matrix, after reading the data (exit 6);
  it is now refused with the other kernel settings, before (exit 2, one line).
* A library call leaves the process as it found it: the user's warning
  filters (the plots' glyph filter is scoped to the drawing), NumPy's error
  handling, signal handlers, the environment, matplotlib's backend and
  settings, the recursion limit, the root logger, the BLAS thread counts.
"""

import logging
import os
import re
import signal
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import kernlearn as kl

TESTS = Path(__file__).resolve().parent

_RNG = np.random.default_rng(35)
_X = np.abs(_RNG.normal(size=(40, 3)))
_Y = (_X[:, 0] > np.median(_X[:, 0])).astype(int)


# ------------------------------------------------------- one slow fit for the interrupt tests
def test_the_interrupt_tests_slow_fit_is_written_once():
    """``class Slow`` stood in two test files' child code, 40 lines each."""
    found = sorted(p.name for p in TESTS.glob("*.py")
                   if re.search(r"^\s*class Slow\(", p.read_text(encoding="utf-8"), re.M))
    assert found == ["interrupt_fits.py"], found


@pytest.fixture
def fuzzer():
    from bench_scripts import load_script

    yield from load_script("fuzz_ecosystem")


@pytest.mark.parametrize("name", ["FGMClassifier", "FGMRegressor"])
def test_fuzz_ensembles_of_ours_and_a_linear_model_run(fuzzer, name):
    """Stacking and voting build their two members by one helper now."""
    for comp in ("stacking", "voting"):
        assert fuzzer.run_case(name, comp, 3)[0] == "ok", comp
    est = kl.FGMClassifier() if name == "FGMClassifier" else kl.FGMRegressor()
    from sklearn.ensemble import VotingClassifier, VotingRegressor

    model = fuzzer._ours_and_linear(est, VotingClassifier, VotingRegressor)
    assert type(model) is (VotingClassifier if name == "FGMClassifier" else VotingRegressor)
    assert model.estimators[0][0] == "ours" and model.estimators[0][1] is not est


# ---------------------------------------------------------------- kernel weights near 1e308
@pytest.fixture
def drawn(monkeypatch):
    """The axes :func:`plot_kernel_weights` draws on (a list, filled by the call)."""
    pytest.importorskip("matplotlib")
    from kernlearn import plotting

    axes, subplots = [], plotting._subplots

    def keep(*args, **kwargs):
        fig, ax = subplots(*args, **kwargs)
        axes.append(ax)
        return fig, ax

    monkeypatch.setattr(plotting, "_subplots", keep)
    return axes


@pytest.mark.parametrize("weights, heights, label", [
    ([1e308, 1e308], [1.0, 1.0], "weight (\u00d7 1e308)"),
    ([-1e308, 5e307], [-1.0, 0.5], "weight (\u00d7 1e308)"),
    ([np.finfo(float).max, 0.0], [1.7976931348623157, 0.0], "weight (\u00d7 1e308)"),
    ([2e301, 1.0], [2.0, 1e-301], "weight (\u00d7 1e301)"),
    ([0.25, 0.75], [0.25, 0.75], ""),  # (as before: no label, the weights as given)
])
def test_kernel_weights_near_the_float_maximum_are_drawn_without_a_warning(
        tmp_path, drawn, weights, heights, label):
    from kernlearn.plotting import plot_kernel_weights

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = plot_kernel_weights(weights, tmp_path / "w.png")
    assert Path(out).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (ax,) = drawn
    np.testing.assert_allclose([p.get_height() for p in ax.patches], heights, rtol=1e-12)
    assert ax.get_ylabel() == label


@pytest.mark.parametrize("weights", [[10**400, 1], np.array([1e308], np.longdouble) * 100])
def test_kernel_weights_beyond_the_float_range_are_refused(tmp_path, weights):
    pytest.importorskip("matplotlib")
    from kernlearn.plotting import plot_kernel_weights

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="weights must be .*finite numbers"):
            plot_kernel_weights(weights, tmp_path / "w.png")
    assert not list(tmp_path.iterdir())


# --------------------------------------------------- a histogram kernel's block, checked early
_BLOCK_SETTINGS = {
    "lowrank-classifier": (["-p", "kernel=hik", "-p", 'kernel_params={"block": %s}'],
                           lambda b: kl.LowRankKernelClassifier(kernel="hik",
                                                                kernel_params={"block": b})),
    "pnorm-mkl": (["-p", 'kernels=[["hik", {"block": %s}]]'],
                  lambda b: kl.PNormMKLClassifier(kernels=[("hik", {"block": b})])),
    "mtmkl-classifier": (["-p", 'kernels=[["additive_chi2", {"block": %s}]]'],
                         lambda b: kl.MultitaskMKLClassifier(
                             kernels=[("additive_chi2", {"block": b})])),
}


@pytest.mark.parametrize("command", sorted(_BLOCK_SETTINGS))
@pytest.mark.parametrize("block", ["0", "2.5", "-3"])
def test_cli_refuses_a_histogram_kernels_block_before_reading_data(
        command, block, tmp_path, monkeypatch, capsys):
    """A missing file: exit 2 and the fit's message, where it was exit 3 (and
    exit 6 on a real file: "cannot fit ...: block must be a positive integer")."""
    from kernlearn.cli import main

    monkeypatch.chdir(tmp_path)
    args, make = _BLOCK_SETTINGS[command]
    args = [a % block if "%s" in a else a for a in args]
    code = main(["fit", "no_such_file.csv", "-e", command, *args, "-m", "m.npz", "-q"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, (code, err)
    assert "must be a positive integer (rows of X at a time)" in err
    with pytest.raises(ValueError) as fit_error:
        make(float(block) if "." in block else int(block)).fit(
            _X, _Y, **({"task_index": np.arange(40) % 2} if command.startswith("mtmkl") else {}))
    assert str(fit_error.value) in err


def test_cli_a_positive_block_passes_the_early_check(tmp_path, monkeypatch, capsys):
    """(The other side: the data is then read, and found missing: exit 3.)"""
    from kernlearn.cli import main

    monkeypatch.chdir(tmp_path)
    code = main(["fit", "no_such_file.csv", "-e", "lowrank-classifier", "-p", "kernel=hik",
                 "-p", 'kernel_params={"block": 64}', "-m", "m.npz", "-q"])
    assert code == 3 and "not found" in capsys.readouterr().err


# --------------------------------------------------------- process state a library call keeps
def _glyph_name():
    # (a script the default font lacks: matplotlib warns per glyph when drawing it)
    return "\u65e5\u672c\u8a9e"


def test_plots_and_reports_keep_the_users_warning_filters(tmp_path):
    """The plots silence matplotlib's "Glyph ... missing from font" inside the
    drawing only: after the call the user's filters are as they were, and the
    user's own warning of that text is shown."""
    pytest.importorskip("matplotlib")
    from kernlearn.plotting import plot_kernel_weights
    from kernlearn.report import build_report

    est = kl.FGMClassifier().fit(_X, _Y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", message="a user's filter", category=FutureWarning)
        before = list(warnings.filters)
        plot_kernel_weights([0.3, 0.7], tmp_path / "w.png", names=[_glyph_name(), "b"])
        build_report(est, meta={"feature_names": [_glyph_name(), "b", "c"]})
        assert warnings.filters == before
        assert not [w for w in caught if "Glyph" in str(w.message)], caught
        warnings.warn("Glyph 26085 missing from font(s) DejaVu Sans.", UserWarning)
    assert [str(w.message) for w in caught] == [
        "Glyph 26085 missing from font(s) DejaVu Sans."]


def _process_state():
    """What a library call must leave as it found it (the process's settings)."""
    import sklearn
    from threadpoolctl import threadpool_info

    state = dict(
        filters=list(warnings.filters), showwarning=warnings.showwarning,
        numpy_errors=np.geterr(), numpy_print=np.get_printoptions(),
        signals={s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM,
                                                  getattr(signal, "SIGHUP", None)) if s},
        environ=dict(os.environ), recursion=sys.getrecursionlimit(),
        root_logger=(logging.root.level, list(logging.root.handlers), logging.root.disabled,
                     logging.root.manager.disable),
        hooks=(sys.excepthook, threading.excepthook, sys.gettrace(), sys.getprofile()),
        streams=(sys.stdout, sys.stderr, sys.stdin), cwd=os.getcwd(),
        sklearn=sklearn.get_config(),
        # (by library file: a library loaded by the call is new, not changed)
        blas={i["filepath"]: i["num_threads"] for i in threadpool_info()},
    )
    if "matplotlib" in sys.modules:
        import matplotlib

        # (read as stored: rcParams["backend"] resolves an automatic backend)
        state["matplotlib"] = dict(dict.items(matplotlib.rcParams))
    return state


def test_library_calls_leave_the_process_as_they_found_it(tmp_path, monkeypatch, capsys):
    """Fits of three families, a plot, a report and ``cli.main([...])``."""
    pytest.importorskip("matplotlib")
    import matplotlib  # noqa: F401  (its settings are compared)

    from kernlearn.cli import main
    from kernlearn.plotting import plot_kernel_weights
    from kernlearn.report import build_report

    monkeypatch.chdir(tmp_path)
    np.savetxt("d.csv", np.column_stack([_X, _Y]), delimiter=",", fmt="%.6g")
    calls = {
        "FGMClassifier": lambda: kl.FGMClassifier().fit(_X, _Y),
        "PNormMKLClassifier": lambda: kl.PNormMKLClassifier(kernels=["rbf", "linear"]).fit(
            _X, _Y),
        "LowRankKernelRegressor": lambda: kl.LowRankKernelRegressor(
            kernel="hik", standardize=False, random_state=0).fit(_X, _X[:, 0]),
        "plot_kernel_weights": lambda: plot_kernel_weights(
            [1e308, 0.5e308], "w.png", names=[_glyph_name(), "b"]),
        "build_report": lambda: build_report(kl.FGMClassifier().fit(_X, _Y)),
        "cli.main": lambda: main(["fit", "d.csv", "--no-header", "-e", "fgm", "-m", "m.npz",
                                  "-q"]),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, call in calls.items():
            before = _process_state()
            result = call()
            after = _process_state()
            assert name != "cli.main" or result == 0, capsys.readouterr().err
            changed = sorted(k for k in before if before[k] != after.get(k))
            assert not changed, (name, changed)
    capsys.readouterr()
