"""Run the bad-input matrix through the real ``kernlearn`` command; write RELIABILITY.md.

Usage: ``.venv/bin/python scripts/reliability.py`` (a few minutes on 2 cores).
Every case of ``tests/reliability_cases.py`` is run as a subprocess; the
exit status, the stderr line count and whether a traceback appeared are
recorded; a case of the "same" group must also print exactly what its
reference command prints.  A case running past its timeout counts as a hang.
``tests/test_reliability.py`` re-runs the same cases in process
and checks that this file lists every one of them with the outcome it
observes.
"""

import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import reliability_cases as rc  # noqa: E402

GROUPS = {
    "usage": "Bad command lines, estimators, parameters and config files (exit 2)",
    "data": "Bad, unreadable or unusable data (exit 3)",
    "fit": "Data the estimator cannot fit (exit 6)",
    "output": "Output paths that cannot be written, checked before any fit (exit 7)",
    "model": "Files that are not model files (exit 4)",
    "mismatch": "Data that does not match the model (exit 5)",
    "tampered": "Tampered model files, read by `kernlearn predict` (exit 4)",
    "same": "The same data in another layout: exit 0 and the reference's exact output",
}
TIMEOUT = 120  # seconds; every case takes a few


def run(case, w):
    import subprocess

    try:
        code, err, out = rc.run_subprocess(case, w, timeout=TIMEOUT, with_stdout=True)
    except subprocess.TimeoutExpired:
        return -1, f"hang: no exit within {TIMEOUT}s", False
    if case.group == "same":
        ref = rc.run_subprocess(
            case, w, timeout=TIMEOUT, argv=case.reference, with_stdout=True
        )
        ok = code == ref[0] == 0 and out == ref[2] and out.strip() != ""
        note = "same output as `kernlearn " + " ".join(case.reference).replace(
            "{w}/", "W/"
        ) + "`"
        return code, (err.strip() or note) if ok else err.strip() + " (differs)", ok
    ok = (
        code == case.code
        and case.message in err
        and len(err.strip().splitlines()) == 1
        and "Traceback" not in err
    )
    return code, err.strip(), ok


def main():
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as w:
        rc.make_workspace(w)
        cases = rc.cases()
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda c: run(c, w), cases))
    n_cli = sum(c.group not in ("tampered", "same") for c in cases)
    n_tamper = sum(c.group == "tampered" for c in cases)
    n_same = len(cases) - n_cli - n_tamper
    n_ok = sum(r[2] for r in results)
    n_tb = sum("Traceback" in r[1] or "internal error" in r[1] for r in results)
    n_hang = sum(r[0] == -1 for r in results)
    n_wrong = sum(
        not r[2] and (r[0] == 0 or c.group == "same") for c, r in zip(cases, results)
    )
    lines = [
        "# RELIABILITY: the bad-input matrix",
        "",
        "Written by `scripts/reliability.py`, which runs each case below as a real",
        "`python -m kernlearn ...` subprocess on small files it generates "
        "(`tests/reliability_cases.py`).",
        "`tests/test_reliability.py` runs the same cases in process on every `make test` "
        "and fails if",
        "an outcome differs from this file.  `W/` is the generated work folder.",
        "",
        f"**{n_cli} command-line cases, {n_tamper} tampered-file cases and {n_same} "
        f"same-answer cases; {n_ok} of {len(cases)} end as expected; {n_tb} "
        f"tracebacks or internal errors; {n_hang} hangs; {n_wrong} silent wrong "
        "answers** (a refusal case passes when it ends with its exit status and a "
        "one-line message naming the problem; a same-answer case when it prints "
        "exactly what its reference prints).",
        "",
        "Exit statuses (`kernlearn --help`): "
        + "; ".join(
            f"{k} {v}" for k, v in __import__("kernlearn.cli").cli.EXIT_CODES.items()
        )
        + ".",
        "",
    ]
    for group, title in GROUPS.items():
        lines += [
            f"## {title}",
            "",
            "| id | case | command | exit | outcome | message |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for case, (code, err, ok) in zip(cases, results):
            if case.group != group:
                continue
            cmd = "kernlearn " + " ".join(case.argv).replace("{w}/", "W/")
            msg = err.replace("|", "\\|").replace(w, "W") if err else ""
            lines.append(
                f"| {case.id} | {case.what} | `{cmd}` | {code} | "
                f"{'ok' if ok else 'FAIL'} | {msg} |"
            )
        lines.append("")
    (ROOT / "RELIABILITY.md").write_text("\n".join(lines))
    print(
        f"{len(cases)} cases, {n_ok} ok, {n_tb} tracebacks, {n_hang} hangs, "
        f"{n_wrong} silent wrong, "
        f"{time.perf_counter() - t0:.0f}s; wrote RELIABILITY.md"
    )
    return 0 if n_ok == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
