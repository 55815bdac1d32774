"""Every code block of README.md and doc/*.md runs, and prints what the docs show.

Python blocks of one file run in order in one namespace; ``bash`` blocks run
each ``kernlearn ...`` line through the command's entry point (a trailing
``# exit N`` states an expected failure).  A ``text`` block right after a
code block is the output that block must print (``...`` matches anything,
e.g. a timing).  All blocks of a file share a fresh working folder.
"""

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "doc").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.S | re.M)
# Commands a test cannot run: they (re)build the environment or run this suite.
NOT_RUN = {
    "make demo": "installs packages and runs the demo (`kernlearn demo --quick` "
    "is tested in test_cli.py)",
    "make test": "runs this test suite",
}


def _blocks(path):
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(path.read_text())]


def _matches(expected, actual):
    pattern = ".*?".join(re.escape(part) for part in expected.strip().split("..."))
    return re.fullmatch(pattern, actual.strip(), re.S) is not None


def _run_bash(code):
    from kernlearn.cli import main

    out = io.StringIO()
    for raw in code.splitlines():
        line, _, comment = raw.partition("#")
        line = line.strip()
        if not line:
            continue
        if line in NOT_RUN:
            continue
        assert line.startswith("kernlearn "), f"docs hold an unrunnable line: {raw!r}"
        m = re.search(r"exit (\d+)", comment)
        expected = int(m.group(1)) if m else 0
        err = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code_ = main(shlex.split(line)[1:])
        assert code_ == expected, f"{line!r} exited {code_}: {err.getvalue()}"
    return out.getvalue()


@pytest.fixture
def clean_registries():
    """Docs may register example components; undo that after the file."""
    from kernlearn.families import FAMILIES
    from kernlearn.losses import LOSSES
    from kernlearn.penalties import PENALTIES
    from kernlearn.solvers import SOLVERS

    saved = [(r, dict(r._classes)) for r in (FAMILIES, LOSSES, PENALTIES, SOLVERS)]
    yield
    for reg, classes in saved:
        reg._classes.clear()
        reg._classes.update(classes)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
# (a setting an example passes and the fit does not read is a mistake a reader copies:
# obscure.md's normalize=False beside precomputed kernels warned in every run)
@pytest.mark.filterwarnings("error::kernlearn.UnusedParameterWarning")
@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_code_blocks_run(path, tmp_path, monkeypatch, clean_registries):
    from kernlearn.datasets import available_datasets

    blocks = _blocks(path)
    text = path.read_text()
    for name in ("a9a", "wine", "housing"):
        if (
            re.search(rf"\b{name}(:test)?\b", text)
            and "kernlearn " in text
            and name not in available_datasets()
        ):
            pytest.skip(f"{path.name} uses the data set {name}, absent here")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__doc__"}
    last_output = None
    n_run = 0
    for lang, code in blocks:
        if lang == "python":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"{path.name}", "exec"), namespace)
            last_output, n_run = out.getvalue(), n_run + 1
        elif lang in ("bash", "sh", "console"):
            last_output, n_run = _run_bash(code), n_run + 1
        elif lang == "text":
            assert last_output is not None, f"{path.name}: output block without code"
            assert _matches(code, last_output), (
                f"{path.name}: printed\n{last_output}\nbut the docs show\n{code}"
            )
            last_output = None
        else:
            pytest.fail(f"{path.name}: code block of unknown language {lang!r}")
    assert n_run > 0 or not blocks


def test_every_doc_file_is_collected():
    assert (ROOT / "doc" / "fgm.md") in DOCS and len(DOCS) >= 6


def test_exit_code_table_matches_the_command():
    from kernlearn.cli import EXIT_CODES

    text = (ROOT / "doc" / "cli.md").read_text()
    rows = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", text, re.M))
    assert {int(k): v for k, v in rows.items()} == EXIT_CODES


def test_api_reference_generator_covers_every_estimator(tmp_path):
    import importlib.util

    import kernlearn

    spec = importlib.util.spec_from_file_location(
        "api_reference", ROOT / "scripts" / "api_reference.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = mod.build()
    for name in kernlearn._ESTIMATORS:
        assert f"### `kernlearn.{name}" in text
    assert "Parameters\n    ----------" in text and "save_model" in text
    assert (ROOT / "doc" / "api.md").read_text().startswith("# API reference")
