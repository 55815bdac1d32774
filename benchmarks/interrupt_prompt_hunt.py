"""Hunt for fits stopped by a Ctrl-C at an interactive prompt (no code interrupted).

A watched loop (``interrupts_watched`` + ``check_abandoned`` after 2 ms of
Python work an iteration, as a fit started by the user in a thread of their
own) runs in a thread of an interactive session on a pseudo-terminal; a half
line is typed and discarded with Ctrl-C ``--presses`` times per session, at
seeded random pauses, then the loop's state is printed.  Counted: the
sessions whose loop stopped (``Interrupted``).  Only the module
``kernlearn/utils/_threads.py`` is loaded (joblib stubbed), so that any
Python on the machine can run the session, NumPy or not.

Prompts: ``repl`` (``python -i``: CPython's C prompt up to 3.12, the Python
one from 3.13), ``code.interact`` and ``pdb`` (prompts written in Python,
which catch the Ctrl-C in an ``except``).

Usage::

    python benchmarks/interrupt_prompt_hunt.py [--python PY ...] [--prompt repl ...]
        [--sessions 10] [--presses 20] [--seed 0] [--module src/kernlearn/utils/_threads.py]
"""

import argparse
import os
import random
import re
import select
import signal
import sys
import time
from pathlib import Path

MODULE = Path(__file__).resolve().parents[1] / "src" / "kernlearn" / "utils" / "_threads.py"

CHILD = r'''
import code, importlib.util, sys, threading, time, types
sys.modules["joblib"] = types.SimpleNamespace(Parallel=None, delayed=None)
spec = importlib.util.spec_from_file_location("_threads", {module!r})
T = importlib.util.module_from_spec(spec)
spec.loader.exec_module(T)
ends = []

def busy():
    with T.interrupts_watched():
        try:
            for _ in range(100_000):
                stop = time.perf_counter() + 0.002
                while time.perf_counter() < stop:  # (Python work: holds the GIL)
                    pass
                T.check_abandoned()
            ends.append("ran to its end")
        except BaseException as error:
            ends.append(type(error).__name__)

threading.Thread(target=busy, daemon=True).start()
'''

STARTS = {"repl": ("-i", ""),
          "code.interact": ("", "code.interact(banner='', exitmsg='', local=globals())\n"),
          "pdb": ("", "import pdb; pdb.Pdb().set_trace()\n")}


def session(python, prompt, module, presses, rng):
    """One interactive session; the loop's state at its end (``"END [...]"``)."""
    import pty

    flag, start = STARTS[prompt]
    pid, fd = pty.fork()
    if pid == 0:  # (SIGINT at its default and unblocked: exec keeps both)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.environ["TERM"] = "xterm"
        os.execv(python, [python, "-q", *([flag] if flag else []), "-c",
                          CHILD.format(module=str(module)) + start])
    out = b""

    def read_until(pattern, timeout=20):
        nonlocal out
        begin, deadline = len(out), time.monotonic() + timeout
        while not re.search(pattern, out[begin:], re.S):
            if time.monotonic() > deadline:
                raise TimeoutError(out[-200:])
            if select.select([fd], [], [], 0.02)[0]:
                out += os.read(fd, 4096)

    shown = rb"\(Pdb\) " if prompt == "pdb" else rb">>> "
    try:
        read_until(shown)
        for _ in range(presses):
            time.sleep(rng.uniform(0.005, 0.03))
            os.write(fd, b"x\x03")
            read_until(rb"KeyboardInterrupt.*" + shown)
        os.write(fd, b"p ('END', ends)\n" if prompt == "pdb" else b"print('END', ends)\n")
        read_until(rb"END'?,? \[[^\]]*\]")
        return re.findall(r"END'?,? \[[^\]]*\]", out.decode(errors="replace"))[-1]
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", nargs="*", default=[sys.executable])
    parser.add_argument("--prompt", nargs="*", default=list(STARTS), choices=list(STARTS))
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--presses", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--module", type=Path, default=MODULE)
    args = parser.parse_args()
    for python in args.python:
        for prompt in args.prompt:
            rng, stopped, failed = random.Random(args.seed), 0, 0
            for _ in range(args.sessions):
                try:
                    stopped += "Interrupted" in session(python, prompt, args.module.resolve(),
                                                        args.presses, rng)
                except (TimeoutError, OSError):  # (a session that lost its prompt)
                    failed += 1
            version = os.popen(f"{python} -c 'import sys; print(sys.version.split()[0])'").read()
            print(f"Python {version.strip()} {prompt}: {stopped} of {args.sessions} sessions "
                  f"stopped their loop ({args.presses} Ctrl-C at the prompt each; "
                  f"{failed} sessions failed), seed {args.seed}", flush=True)


if __name__ == "__main__":
    main()
