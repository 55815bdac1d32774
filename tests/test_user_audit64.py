"""A sixty-fourth user's audit: the package as shipped (wheel, sdist, pip install).

A user who runs ``pip install kernlearn`` from a wheel built a wheel and an
sdist, installed the wheel into a fresh venv (Python 3.10 and 3.11, and one
with every core dependency at its declared floor), ran the command line, the
demo and the precompile step outside the source tree, on a read-only
``site-packages`` and after ``pip uninstall``.  What was wrong (each test below
failed before its fix):

- The project is declared BSD-3-Clause, whose second clause asks binary
  redistributions to reproduce the notice, yet no license text existed, in the
  repository or in the wheel; ``project.license`` was a TOML table, which
  setuptools deprecates (builds stop working with setuptools from 2027-02-18).
  LICENSE now exists, ships in the wheel's ``licenses/`` and the sdist, and
  ``license`` is the SPDX expression.
- The sdist held the test files but not ``tests/conftest.py``, the tests'
  sub-packages, ``doc/``, ``examples/``, ``benchmarks/`` or ``scripts/`` that
  they read, so its tests could not run; it now holds the project (MANIFEST.in),
  and never what a checkout accumulates (``__pycache__``, numba's ``.nbi/.nbc``).
- Declared floors that do not work (found by installing every floor together):
  ``numpy>=1.24`` while the feature families give scikit-learn's ``RandomState``
  to ``np.random.default_rng``, which accepts one from NumPy 2.2 (every GrFL fit
  raised ``TypeError: SeedSequence expects int ...`` on 1.24-2.1); the floors
  NumPy 2.2 needs follow (numba 0.61.2, llvmlite 0.44, SciPy 1.13, pandas
  2.2.2).  ``scipy>=1.10`` while saving a pipeline holding a sparse matrix uses
  ``scipy.sparse.sparray`` (public from 1.11), and ``skops>=0.10``, which cannot
  even be imported with the declared ``scikit-learn>=1.6``.  ``llvmlite`` was
  imported but not declared.
- ``python -m kernlearn._precompile --help`` (or any typo) started minutes of
  compiling: unknown arguments were ignored.  It now has a usage line, and
  refuses an unknown argument before compiling anything.
- ``pip uninstall kernlearn`` left the compiled code numba cached in the
  package's folder behind (177 files, ~19 MB after ``_precompile``): pip removes
  only the files it installed.  ``python -m kernlearn._precompile --clear``
  deletes them (the README says to run it before uninstalling).
- ``SvmlightChunks.to_dask()`` without Dask raised a bare ``No module named
  'dask'``; it now names the extra.  The messages naming an extra quote it
  (``pip install "kernlearn[plot]"``: unquoted, zsh refuses the brackets).

Checked clean: every module of ``src/kernlearn`` is in the wheel and nothing
else (no tests, caches or notes); a wheel built from the sdist holds the same
files; ``kernlearn --help``, ``python -m kernlearn --help``, ``kernlearn
--version`` and ``kernlearn.__version__`` agree with pyproject's version; the
console script; the demo on the embedded data with and without matplotlib; a
read-only ``site-packages``: one clear warning when no folder is writable,
cached code read from the package when ``HOME`` is writable.
"""

import ast
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import kernlearn

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "kernlearn"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]

# import name -> distribution name, where they differ
DISTRIBUTION = {"sklearn": "scikit-learn", "PIL": "pillow", "tomli": "tomli",
                "distributed": "dask"}


def _requirement_name(req):
    return re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0].lower().replace("_", "-")


def _floor(req):
    m = re.search(r">=\s*([0-9][0-9.]*)", req)
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def _declared():
    """{distribution: floor} of the core dependencies, and of each extra."""
    core = {_requirement_name(r): _floor(r) for r in PROJECT["dependencies"]}
    extras = {name: {_requirement_name(r) for r in reqs}
              for name, reqs in PROJECT["optional-dependencies"].items()}
    return core, extras


def _third_party_imports():
    """{top-level module: [files]} of every import under src/kernlearn (top-level
    and inside functions: the lazy imports of optional dependencies)."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "kernlearn":
                    found.setdefault(top, []).append(path.relative_to(SRC).as_posix())
    return found


# --- static checks: pyproject against the code -------------------------------------

def test_every_third_party_import_is_declared():
    core, extras = _declared()
    runtime_extras = {"plot", "dask", "image"}
    undeclared = []
    for module, files in _third_party_imports().items():
        dist = DISTRIBUTION.get(module, module).lower()
        if dist in core or any(dist in extras[e] for e in runtime_extras):
            continue
        undeclared.append(f"{module} ({files[0]})")
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"


def test_extras_that_features_name_exist():
    """Each ``pip install "kernlearn[x]"`` a message or docstring names is a
    declared extra, quoted (zsh refuses ``kernlearn[x]`` unquoted)."""
    _, extras = _declared()
    named = []
    for path in sorted(SRC.rglob("*.py")):
        for m in re.finditer(r"pip install (\S*kernlearn\[(\w+)\]\S*)", path.read_text()):
            named.append((path.name, m.group(1), m.group(2)))
    assert named, "no message names an extra any more: update this test"
    for name, spelled, extra in named:
        assert extra in extras, f"{name}: names undeclared extra {extra!r}"
        assert spelled.startswith('"kernlearn['), f"{name}: unquoted {spelled}"


def test_dependency_floors_cover_what_the_code_uses():
    """Each floor was installed together with the others (Python 3.11) and
    ``benchmarks/small_fits.py --check-predictions`` ran on it; these are the
    constraints that made the old floors fail."""
    core, _ = _declared()
    code = "\n".join(p.read_text() for p in SRC.rglob("*.py"))
    # The feature families pass scikit-learn's RandomState (check_random_state) to
    # np.random.default_rng, which accepts one from NumPy 2.2: every GrFL fit
    # raised "SeedSequence expects int ..." on NumPy 1.24-2.1.
    if re.search(r"default_rng\(rng\)", code):
        assert core["numpy"] >= (2, 2), core["numpy"]
    # what NumPy 2.2 needs of the compiled dependencies: numba 0.61.2 (0.61.0
    # refuses NumPy 2.2) with its llvmlite, SciPy and pandas built for NumPy 2
    assert core["numba"] >= (0, 61, 2) and core["llvmlite"] >= (0, 44)
    assert core["scipy"] >= (1, 13) and core["pandas"] >= (2, 2, 2)
    # scipy.sparse.sparray is public from SciPy 1.11 (io._is_sparse_class uses it)
    if re.search(r"\bsp(arse)?\.sparray\b", code):
        assert core["scipy"] >= (1, 11), core["scipy"]
    # skops 0.10 fails to import with scikit-learn 1.6 (sklearn's _sgd_fast.Huber
    # is gone); 0.11 is the first release that supports it
    if core["scikit-learn"] >= (1, 6):
        assert core["skops"] >= (0, 11), core["skops"]


def test_license_is_an_spdx_expression_with_its_text():
    assert PROJECT["license"] == "BSD-3-Clause"
    files = PROJECT["license-files"]
    assert files and all((ROOT / f).is_file() for f in files)
    text = (ROOT / "LICENSE").read_text()
    assert "BSD 3-Clause" in text and "Redistributions in binary form" in text
    # license-files and an SPDX license need setuptools 77
    (req,) = [r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    assert _floor(req) >= (77,)


def test_requires_python_and_the_console_script():
    assert PROJECT["requires-python"] == ">=3.10"
    assert PROJECT["scripts"] == {"kernlearn": "kernlearn._cli_entry:main"}
    assert PROJECT["version"] == kernlearn.__version__


# --- the precompile step ------------------------------------------------------------

def test_precompile_help_and_a_typo_compile_nothing(monkeypatch, capsys):
    from kernlearn import _precompile

    def refuse(*args, **kwargs):
        raise AssertionError("compiled although only --help was asked")

    monkeypatch.setattr(_precompile, "precompile", refuse)
    with pytest.raises(SystemExit) as info:
        _precompile.main(["--help"])
    assert info.value.code == 0
    assert "--clear" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        _precompile.main(["--strcit"])
    assert info.value.code == 2
    assert "unrecognized arguments: --strcit" in capsys.readouterr().err


def test_precompile_clear_deletes_numba_files_only(tmp_path):
    """The cache files numba wrote into the package's folder go; sources and
    ``.pyc`` (pip's to remove) stay.  Run on a copy of the package."""
    pkg = tmp_path / "kernlearn"
    shutil.copytree(SRC, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    planted = []
    for sub in ("", "solvers"):
        cache = pkg / sub / "__pycache__"
        cache.mkdir(parents=True, exist_ok=True)
        for name in ("lazylink-m._f-1.py311.nbi", "lazylink-m._f-1.py311.1.nbc"):
            (cache / name).write_bytes(b"x")
            planted.append(cache / name)
    pyc = pkg / "__pycache__" / "cli.cpython-311.pyc"
    pyc.write_bytes(b"x")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    code = ("from kernlearn._precompile import clear_cache, main; "
            "import sys; sys.exit(main(['--clear']))")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, check=False,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "4 cached numba files deleted" in out.stdout
    assert not any(p.exists() for p in planted)
    assert pyc.exists() and (pkg / "cli.py").exists()


def test_to_dask_without_dask_names_the_extra(tmp_path, monkeypatch):
    from kernlearn.datasets import SvmlightChunks

    path = tmp_path / "d.svm"
    path.write_text("1 1:0.5 2:1\n-1 1:1.5\n")
    chunks = SvmlightChunks(path)
    monkeypatch.setitem(sys.modules, "dask", None)  # import dask -> ImportError
    with pytest.raises(ImportError, match=r'pip install "kernlearn\[dask\]"'):
        chunks.to_dask()


# --- the wheel and the sdist, built once -------------------------------------------

def _project_copy(dest):
    """The files of the checkout a build sees (tracked and new, not ignored), copied,
    plus what a used checkout accumulates: it must not ship."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, text=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"needs a git checkout to copy the project: {exc}")
    files = [f for f in listed.splitlines() if (ROOT / f).is_file()]
    for f in files:
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, dest / f)
    junk = ["src/kernlearn/__pycache__/lazylink-m._f-1.py311.nbi",
            "src/kernlearn/__pycache__/cli.cpython-311.pyc",
            "tests/__pycache__/conftest.cpython-311.pyc",
            "benchmarks/out/result.json"]
    for f in junk:
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        (dest / f).write_bytes(b"x")
    return files


def _build(kind, source, outdir):
    """setuptools' PEP 517 hook in a subprocess, without build isolation (offline)."""
    code = ("import sys; from setuptools import build_meta as b; "
            f"print(b.build_{kind}(sys.argv[1]))")
    out = subprocess.run([sys.executable, "-c", code, str(outdir)], cwd=source, check=False,
                         capture_output=True, text=True, timeout=300)
    if out.returncode:
        pytest.fail(f"building the {kind} failed:\n{out.stderr[-3000:]}")
    return outdir / out.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("setuptools is not installed: cannot build")
    if tuple(int(p) for p in re.findall(r"\d+", version)[:1]) < (77,):
        pytest.skip(f"building needs setuptools>=77 (pyproject), found {version}")
    base = tmp_path_factory.mktemp("ship")
    tree = base / "tree"
    tree.mkdir()
    files = _project_copy(tree)
    wheel = _build("wheel", tree, base)
    sdist = _build("sdist", tree, base)
    with tarfile.open(sdist) as tar:
        top = f"{sdist.name[:-len('.tar.gz')]}/"
        sdist_files = {m.name[len(top):] for m in tar.getmembers() if m.isfile()}
        tar.extractall(base / "unpacked", filter="data")
    from_sdist = _build("wheel", base / "unpacked" / top.rstrip("/"), base / "again")
    return {"files": files, "wheel": wheel, "sdist_files": sdist_files,
            "from_sdist": from_sdist}


def test_the_wheel_holds_every_module_and_the_license_only(shipped):
    names = set(zipfile.ZipFile(shipped["wheel"]).namelist())
    modules = {f"kernlearn/{p.relative_to(SRC).as_posix()}" for p in SRC.rglob("*.py")}
    dist_info = f"kernlearn-{kernlearn.__version__}.dist-info/"
    assert modules <= names, sorted(modules - names)
    others = sorted(n for n in names - modules if not n.startswith(dist_info))
    assert not others, f"the wheel ships more than the package: {others}"
    assert f"{dist_info}licenses/LICENSE" in names
    meta = zipfile.ZipFile(shipped["wheel"]).read(f"{dist_info}METADATA").decode()
    assert "License-Expression: BSD-3-Clause" in meta
    assert f"Version: {kernlearn.__version__}" in meta
    assert "Requires-Python: >=3.10" in meta
    points = zipfile.ZipFile(shipped["wheel"]).read(f"{dist_info}entry_points.txt").decode()
    assert "kernlearn = kernlearn._cli_entry:main" in points


def test_the_sdist_holds_the_project_and_its_tests(shipped):
    have = shipped["sdist_files"]
    wanted = {f for f in shipped["files"]
              if f.split("/")[0] in ("src", "tests", "doc", "examples", "scripts",
                                     "benchmarks")
              or f in ("LICENSE", "README.md", "pyproject.toml", "MANIFEST.in")}
    assert "tests/conftest.py" in wanted
    assert not wanted - have, sorted(wanted - have)[:20]
    junk = sorted(f for f in have if f.endswith((".pyc", ".nbi", ".nbc"))
                  or f.startswith("benchmarks/out/"))
    assert not junk, junk


def test_a_wheel_built_from_the_sdist_is_the_same(shipped):
    a = sorted(zipfile.ZipFile(shipped["wheel"]).namelist())
    b = sorted(zipfile.ZipFile(shipped["from_sdist"]).namelist())
    assert a == b
