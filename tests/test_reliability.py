"""The bad-input matrix (tests/reliability_cases.py) and RELIABILITY.md."""

import re
from pathlib import Path

import pytest

import reliability_cases as rc

ROOT = Path(__file__).resolve().parents[1]
CASES = rc.cases()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    w = tmp_path_factory.mktemp("reliability")
    rc.make_workspace(w)
    return w


def _needs_data(case):
    names = {"wine"}
    return any(a.partition(":")[0] in names for a in case.argv)


REFUSALS = [c for c in CASES if c.group != "same"]
SAME = [c for c in CASES if c.group == "same"]


@pytest.mark.parametrize("case", SAME, ids=lambda c: f"{c.id}-{c.what}")
def test_case_gives_the_same_answer(case, workspace):
    """Another layout of the same data: exit 0 and exactly the reference's output."""
    code, err, out = rc.run_in_process(case, workspace, with_stdout=True)
    ref_code, ref_err, ref_out = rc.run_in_process(
        case, workspace, argv=case.reference, with_stdout=True
    )
    assert code == ref_code == 0, err + ref_err
    assert out == ref_out and len(out.splitlines()) == 60


@pytest.mark.parametrize("case", REFUSALS, ids=lambda c: f"{c.id}-{c.what}")
def test_case_fails_cleanly(case, workspace):
    """Expected exit status, exactly one stderr line naming the problem, no traceback."""
    if _needs_data(case):
        from conftest import real_data

        real_data("wine")
    code, err = rc.run_in_process(case, workspace)
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("kernlearn: error: "), err
    assert case.message in err, err
    assert code == case.code, err


def test_matrix_size():
    assert sum(c.group not in ("tampered", "same") for c in CASES) >= 60
    assert sum(c.group == "tampered" for c in CASES) >= 10
    assert len(SAME) >= 5
    assert len({c.id for c in CASES}) == len(CASES)


def test_reliability_md_lists_every_case_with_its_outcome():
    """RELIABILITY.md was produced by scripts/reliability.py from the current cases."""
    text = (ROOT / "RELIABILITY.md").read_text()
    rows = {
        m.group(1): m
        for m in re.finditer(
            r"^\| ([CST]\d{2,}) \| [^|]+ \| `kernlearn ([^`]*)` \| (\d+) \| (\w+) \|",
            text,
            re.M,
        )
    }
    for case in CASES:
        assert case.id in rows, f"{case.id} missing: rerun scripts/reliability.py"
        row = rows[case.id]
        assert row.group(2) == " ".join(case.argv).replace("{w}/", "W/"), case.id
        assert int(row.group(3)) == case.code and row.group(4) == "ok", case.id
    assert len(rows) == len(CASES)


def test_real_subprocess_has_no_traceback(workspace):
    """One case through ``python -m kernlearn``, as a user runs it (a subprocess
    costs seconds, so the matrix itself runs in process above and in full
    through subprocesses in scripts/reliability.py)."""
    case = next(c for c in CASES if c.what == "fit on truncated.svm.bz2")
    code, err = rc.run_subprocess(case, workspace, timeout=120)
    assert code == case.code, err
    assert len(err.strip().splitlines()) == 1 and case.message in err


def test_docs_quote_the_matrix_size():
    n_cli = sum(c.group not in ("tampered", "same") for c in CASES)
    n_tampered = sum(c.group == "tampered" for c in CASES)
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"({n_cli} command lines, {n_tampered} tampered model files)" in readme
    cli = " ".join((ROOT / "doc" / "cli.md").read_text().split())
    assert f"lists {n_cli} bad command lines and {n_tampered} tampered" in cli
