"""Rerun the code blocks of README.md and doc/*.md; rewrite outputs that changed.

Usage: ``.venv/bin/python scripts/refresh_doc_outputs.py [FILE ...]``.  After a
change to an algorithm, the ``text`` block under an example may no longer be
what the example prints (``tests/test_docs.py`` then fails).  This script runs
the blocks exactly as that test does and replaces each stale output block by
the new output; blocks holding ``...`` placeholders (timings) are reported for
a hand edit instead of being overwritten.
"""

import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_docs import DOCS, FENCE, _matches, _run_bash  # noqa: E402


def refresh(path):
    text = path.read_text()
    namespace = {"__name__": "__doc__"}
    last, edits, manual = None, [], []
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            for m in FENCE.finditer(text):
                lang, code = m.group(1), m.group(2)
                if lang == "python":
                    out = io.StringIO()
                    with contextlib.redirect_stdout(out):
                        exec(compile(code, path.name, "exec"), namespace)
                    last = out.getvalue()
                elif lang in ("bash", "sh", "console"):
                    last = _run_bash(code)
                elif lang == "text" and last is not None:
                    if not _matches(code, last):
                        if "..." in code:
                            manual.append(code.splitlines()[0])
                        else:
                            edits.append((m.start(2), m.end(2), last))
                    last = None
        finally:
            os.chdir(cwd)
    for start, end, new in reversed(edits):
        text = text[:start] + new.rstrip("\n") + "\n" + text[end:]
    if edits:
        path.write_text(text)
    return len(edits), manual


def main(argv):
    paths = [Path(a) for a in argv[1:]] or DOCS
    for path in paths:
        n, manual = refresh(path)
        print(f"{path.name}: {n} output block(s) rewritten")
        for first in manual:
            print(f"  edit by hand (has '...'): block starting {first!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
