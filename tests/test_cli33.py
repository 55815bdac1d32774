"""The command line's last rough edges (issue 21): a Ctrl-C from the start of
``kernlearn ...`` is one line and exit 130."""

import os
import signal
import subprocess
import sys
import textwrap
import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")


def _default_sigint():
    # (a background `make test &` ignores SIGINT, and an ignored signal stays
    # ignored across exec: Python would then install no handler at all)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _console_script(tmp_path):
    """The console script as pip writes it, for pyproject's entry point."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        entry = tomllib.load(f)["project"]["scripts"]["kernlearn"]
    module, func = entry.split(":")
    script = tmp_path / "kernlearn"
    script.write_text(textwrap.dedent(f"""\
        import sys
        from {module} import {func}
        if __name__ == '__main__':
            sys.argv[0] = sys.argv[0].removesuffix('.exe')
            sys.exit({func}())
        """))
    return [sys.executable, str(script)]


def _data(tmp_path):
    path = tmp_path / "d.csv"
    rows = [f"{i % 7},{(i * 3) % 5},{1 if i % 2 else -1}" for i in range(40)]
    path.write_text("a,b,y\n" + "\n".join(rows) + "\n")
    return path


def _started(tmp_path):
    """A ``sitecustomize`` saying "ready" once Python itself has started.

    Python's own start (its ``site``, ``runpy``) runs before any of the
    package: a signal there is Python's (killed silently, or its traceback of
    ``site``), and it can last much longer on a loaded machine than the 20-30
    ms it takes on a quiet one, so delays count from the end of it.
    """
    site = tmp_path / "started"
    site.mkdir()
    (site / "sitecustomize.py").write_text("print('ready', flush=True)\n")
    return [str(site)]


def _interrupt(cmd, tmp_path, delay=0.0, pythonpath=()):
    """Run ``cmd``; once the child writes "ready" on stdout, send SIGINT after
    ``delay`` s; return (exit status, stderr)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*pythonpath, str(SRC)]))
    env.pop("KERNLEARN_DEBUG", None)
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=_default_sigint, text=True)
    try:
        assert proc.stdout.readline() == "ready\n", proc.communicate()
        time.sleep(delay)
        assert proc.poll() is None, "the command ended before the signal"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    return proc.returncode, err


def _fit(tmp_path):
    # a named pipe: the command waits on it for ever, until interrupted
    fifo = tmp_path / "wait.csv"
    os.mkfifo(fifo)
    return ["fit", str(fifo), "-e", "fgm", "-m", str(tmp_path / "m.model")]


@pytest.mark.parametrize("delay", [0.05, 0.1, 0.2, 0.4])
def test_ctrl_c_while_the_console_script_starts(tmp_path, delay):
    # 0.05-0.1 s after Python's start: during the import of kernlearn.cli
    # (NumPy, about 0.15 s); 0.4 s: the command
    code, err = _interrupt(_console_script(tmp_path) + _fit(tmp_path), tmp_path, delay,
                           _started(tmp_path))
    assert (code, err) == (130, "kernlearn: interrupted\n")


@pytest.mark.parametrize("delay", [0.05, 0.1])
def test_ctrl_c_while_python_m_kernlearn_starts(tmp_path, delay):
    cmd = [sys.executable, "-m", "kernlearn"] + _fit(tmp_path)
    code, err = _interrupt(cmd, tmp_path, delay, _started(tmp_path))
    assert (code, err) == (130, "kernlearn: interrupted\n")


def _blocking_import(tmp_path, module, wait):
    """A ``sitecustomize`` making the import of ``module`` run ``wait`` (a
    line that says "ready" and waits: the signal must land inside it)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent(f"""\
        import sys, time

        def ready_and_wait():
            print("ready", flush=True)
            time.sleep(60)

        class Wait:
            def find_spec(self, name, path=None, target=None):
                if name == {module!r}:
                    sys.meta_path.remove(self)
                    {wait}
                return None

        sys.meta_path.insert(0, Wait())
        """))
    return [str(site)]


@pytest.mark.parametrize("python_m", [False, True], ids=["script", "python-m"])
def test_ctrl_c_in_a_c_extension_import_is_not_an_import_error(tmp_path, python_m):
    # NumPy's C import code turns a KeyboardInterrupt into an ImportError
    # ("Importing the numpy C-extensions failed"), which no `except
    # KeyboardInterrupt` sees: the same here, in a deterministic place
    wait = ("try: ready_and_wait()\n"
            "                    except KeyboardInterrupt as e: "
            "raise ImportError('C-extensions failed') from e")
    site = _blocking_import(tmp_path, "numpy", wait)
    cmd = ([sys.executable, "-m", "kernlearn"] if python_m
           else _console_script(tmp_path)) + ["--version"]
    code, err = _interrupt(cmd, tmp_path, pythonpath=site)
    assert (code, err) == (130, "kernlearn: interrupted\n")


def test_python_m_exits_130_after_an_interrupt_in_exec_code(tmp_path):
    # a KeyboardInterrupt leaving code run by exec(<string>) (as a
    # dataclass's generated __init__) set CPython's flag that made `python
    # -m` kill itself with SIGINT at exit (-2) after the one-line message
    site = _blocking_import(tmp_path, "sklearn", "exec('ready_and_wait()')")
    cmd = [sys.executable, "-m", "kernlearn", "fit", str(_data(tmp_path)),
           "-e", "fgm", "-m", str(tmp_path / "m.model")]
    code, err = _interrupt(cmd, tmp_path, pythonpath=site)
    assert (code, err) == (130, "kernlearn: interrupted\n")


# --- --task-column on the last column without --label ------------------------------


def _tasks_last(tmp_path):
    """A CSV whose last column holds the tasks: a, b, y, task."""
    path = tmp_path / "tasks_last.csv"
    rows = [f"{i % 5},{(i * 7) % 11},{1 if (i // 2) % 2 else -1},{i % 2}" for i in range(24)]
    path.write_text("a,b,y,task\n" + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("task_column", ["task", "3", "-1", "name:task"])
def test_task_column_in_the_label_place_without_label_is_refused(tmp_path, capsys,
                                                                 task_column):
    # the label was the column before it (y here, b had it been the last feature)
    from kernlearn import cli

    model = tmp_path / "m.model"
    code = cli.main(["fit", str(_tasks_last(tmp_path)), "-e", "mtmkl-classifier",
                     "--task-column", task_column, "-m", str(model)])
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1, err
    assert f"--task-column {task_column} is the last column" in err and "--label" in err
    assert not model.exists()


def test_task_column_last_with_label_fits(tmp_path, capsys):
    from kernlearn import cli

    model = tmp_path / "m.model"
    code = cli.main(["fit", str(_tasks_last(tmp_path)), "-e", "mtmkl-classifier",
                     "--task-column", "task", "--label", "y", "-m", str(model), "-q"])
    assert code == 0, capsys.readouterr().err
    # (evaluate reads the label the model was fitted with, y)
    code = cli.main(["evaluate", str(_tasks_last(tmp_path)), "-m", str(model)])
    out = capsys.readouterr()
    assert code == 0, out.err


def test_load_data_file_refuses_the_task_column_in_the_label_place(tmp_path):
    from kernlearn.datasets import load_data_file

    path = _tasks_last(tmp_path)
    with pytest.raises(ValueError, match="--task-column task is the last column"):
        load_data_file(path, task_column="task")
    # a label named, or no label read (predict's width): nothing to refuse
    X, y, *_ = load_data_file(path, task_column="task", label="y")
    assert X.shape == (24, 2) and set(y) == {-1, 1}


# --- SIGTERM and SIGHUP while the command starts --------------------------------------


@pytest.mark.parametrize("signum, code, word", [
    (signal.SIGTERM, 143, "terminated"), (signal.SIGHUP, 129, "hung up")])
def test_sigterm_and_sighup_while_importing_say_their_line(tmp_path, signum, code, word):
    # their default killed Python silently (-15, -1) before kernlearn.cli was
    # imported, and said the line with 143 / 129 after
    site = _blocking_import(tmp_path, "numpy", "ready_and_wait()")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*site, str(SRC)]))
    proc = subprocess.Popen(_console_script(tmp_path) + ["--version"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signum, signal.SIG_DFL))
    try:
        assert proc.stdout.readline() == "ready\n", proc.communicate()
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert (proc.returncode, err) == (code, f"kernlearn: {word}\n")


def test_ignored_signals_stay_ignored_while_importing(tmp_path):
    # a background job's SIGINT, nohup's SIGHUP: ignored, the command runs on
    site = _blocking_import(tmp_path, "numpy", "print('ready', flush=True); time.sleep(1)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*site, str(SRC)]))

    def ignore():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    proc = subprocess.Popen(_console_script(tmp_path) + ["--version"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ignore)
    try:
        assert proc.stdout.readline() == "ready\n", proc.communicate()
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGHUP)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    from kernlearn import __version__

    assert (proc.returncode, out, err) == (0, f"kernlearn {__version__}\n", "")


@pytest.mark.parametrize("args", [["--version"], ["estimators"]],
                         ids=["SystemExit", "returned"])
def test_ctrl_c_while_python_exits_keeps_the_commands_status(tmp_path, args):
    # the command done (its output written), Python's exit tears its modules
    # down; a Ctrl-C then killed it silently (-2) next to a complete output,
    # or, in an exit handler, printed "Exception ignored" and a traceback
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent("""\
        import atexit, time

        @atexit.register
        def exiting():
            print("ready", flush=True)
            time.sleep(0.5)
        """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(SRC)]))
    proc = subprocess.Popen(_console_script(tmp_path) + args, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)
    try:
        out = []
        while (line := proc.stdout.readline()) not in ("ready\n", ""):
            out.append(line)
        assert line == "ready\n" and out, proc.communicate()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert (proc.returncode, err) == (0, "")
    assert ("kernlearn" if args == ["--version"] else "fgm") in "".join(out)


def test_an_interrupt_escaping_the_command_is_the_one_line(monkeypatch, capsys):
    """A ``KeyboardInterrupt`` outside ``cli.main``'s own ``try`` (its first or
    last lines) is still the one line and exit 130, not a traceback."""
    from kernlearn import _cli_entry

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(_cli_entry, "_import_run", lambda startup: interrupted)
    assert _cli_entry.main(["estimators"]) == 130
    assert capsys.readouterr().err == "kernlearn: interrupted\n"
