"""Start-up of the ``kernlearn`` command, and a Ctrl-C in its first moments.

Two measurements, each on the console script as pip writes it:

* ``kernlearn --version`` and ``--help``: wall and CPU time (the child's
  user + system time) through the light entry point (``kernlearn._cli_entry``,
  the console script's) and through ``kernlearn.cli:main`` directly (the
  anchor: the entry point before it), runs alternated, medians printed with
  the ratio;
* ``--interrupts``: SIGINT sent 0 ms to 400 ms after the start of ``kernlearn
  fit`` (on a named pipe, so the command waits until interrupted), counting
  each outcome: the one line with exit 130, a traceback, Python killed by
  the signal before its handler (-2, nothing printed), or the signal lost in
  Python's own start-up (the command runs on).

Run::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/cli_startup.py [--runs 11] [--interrupts]
"""

import argparse
import collections
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
ENTRIES = {"anchor (kernlearn.cli:main)": "kernlearn.cli",
           "ours (kernlearn._cli_entry:main)": "kernlearn._cli_entry"}


def _script(folder, module):
    path = Path(folder) / f"{module.replace('.', '_')}.py"
    path.write_text(f"import sys\nfrom {module} import main\n"
                    "if __name__ == '__main__':\n    sys.exit(main())\n")
    return [sys.executable, str(path)]


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(SRC), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))


def _time(cmd):
    """(wall s, child CPU s) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0, cmd
    return wall, usage.ru_utime + usage.ru_stime


def startup(folder, runs):
    scripts = {name: _script(folder, module) for name, module in ENTRIES.items()}
    for flag in ("--version", "--help"):
        times = collections.defaultdict(list)
        for _ in range(runs):  # alternated, so that a busy moment hits both
            for name, cmd in scripts.items():
                times[name].append(_time(cmd + [flag]))
        medians = {}
        for name, values in times.items():
            wall, cpu = (statistics.median(v) for v in zip(*values))
            medians[name] = cpu
            print(f"kernlearn {flag:9s} {name:34s} wall {wall * 1e3:6.1f} ms  "
                  f"CPU {cpu * 1e3:6.1f} ms  (median of {runs})")
        anchor, ours = medians.values()
        print(f"kernlearn {flag:9s} CPU ratio ours / anchor: {ours / anchor:.3f}")


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupts(folder, runs):
    fifo = Path(folder) / "wait.csv"
    os.mkfifo(fifo)
    args = ["fit", str(fifo), "-e", "fgm", "-m", str(Path(folder) / "m.model")]
    cmds = {name: _script(folder, module) + args for name, module in ENTRIES.items()}
    cmds["python -m kernlearn"] = [sys.executable, "-m", "kernlearn"] + args
    for name, cmd in cmds.items():
        for delay in (0, 0.01, 0.02, 0.03, 0.05, 0.1, 0.15, 0.2, 0.4):
            seen = collections.Counter()
            for _ in range(runs):
                proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True,
                                        preexec_fn=_default_sigint)
                time.sleep(delay)
                proc.send_signal(signal.SIGINT)
                try:
                    _, err = proc.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    # CPython's start-up can print and drop a KeyboardInterrupt
                    # ("Failed checking if argv[0] is an import path entry"):
                    # the command then runs on, here waiting for ever
                    proc.kill()
                    proc.communicate()
                    seen["lost by Python's start-up"] += 1
                    continue
                if (proc.returncode, err) == (130, "kernlearn: interrupted\n"):
                    seen["one line, 130"] += 1
                elif "Traceback" in err:
                    seen[f"traceback, {proc.returncode}"] += 1
                else:
                    seen[f"{proc.returncode}, {err.strip()[:40]!r}"] += 1
            print(f"{name:34s} SIGINT at {delay * 1e3:5.0f} ms: {dict(seen)}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--interrupts", action="store_true",
                        help="also count the outcomes of an early SIGINT")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        startup(folder, args.runs)
        if args.interrupts:
            interrupts(folder, max(1, args.runs // 2))


if __name__ == "__main__":
    main()
