"""The shape of the code the developers' guide asks for (issue 22).

* Estimators are thin adapters: a public ``fit`` plus the private ``_fit*``
  helpers of its class hierarchy (validate, preprocess, call the method, map
  back) stay about 60 lines of code; the algorithm lives in
  ``kernlearn/methods``.
* No module of the package is over 1,000 lines.
* Solvers never import the estimators, the command line or the methods
  (the driver depends on them, not the other way round).
"""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "kernlearn"
FIT_LINES = 60  # "each estimator's fit at most 60 code lines (helpers included)"


def _code_lines(fn):
    """Lines of a function's body without its docstring."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return 0 if not body else body[-1].end_lineno - body[0].lineno + 1


def _classes():
    """Every class of the estimator modules, by name: (module, node)."""
    out = {}
    for path in sorted((SRC / "estimators").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                out[node.name] = (path.name, node)
    return out


def _fit_path_lines(name, classes):
    """``fit`` plus the ``_fit*`` methods of the class and its private bases.

    Each method name counts once (the most derived definition, the one that
    runs); public estimator bases (the ``*CV`` estimators' model) are the
    method being called, not part of the adapter.
    """
    total, seen, names, todo = 0, set(), set(), [name]
    while todo:
        cls = todo.pop(0)
        if cls in seen or cls not in classes:
            continue
        seen.add(cls)
        node = classes[cls][1]
        for fn in node.body:
            if (isinstance(fn, ast.FunctionDef) and fn.name not in names
                    and (fn.name == "fit" or fn.name.startswith("_fit"))
                    and fn.name != "_fit_platt"):  # calibration, shared by all
                names.add(fn.name)
                total += _code_lines(fn)
        todo.extend(b.id for b in node.bases
                    if isinstance(b, ast.Name) and b.id.startswith("_"))
    return total


ESTIMATORS = ["FGMClassifier", "FGMRegressor", "InfiniteFeatureClassifier",
              "InfiniteFeatureRegressor", "LowRankKernelClassifier",
              "LowRankKernelRegressor", "PNormMKLClassifier", "MultitaskMKLRegressor",
              "MultitaskMKLClassifier", "MultitaskMKLRegressorCV",
              "MultitaskMKLClassifierCV"]


@pytest.mark.parametrize("name", ESTIMATORS)
def test_estimator_fit_is_a_thin_adapter(name):
    classes = _classes()
    assert name in classes, f"{name} is not defined in kernlearn/estimators"
    n = _fit_path_lines(name, classes)
    assert 0 < n <= FIT_LINES, f"{name}.fit and its _fit* helpers: {n} lines of code"


def test_the_counter_sees_a_long_fit():
    # the check above must fail on a fat estimator
    tree = ast.parse("class A:\n    def fit(self):\n" + "        x = 1\n" * 80)
    classes = {"A": ("x.py", tree.body[0])}
    assert _fit_path_lines("A", classes) == 80


def test_no_module_over_1000_lines():
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 1000}
    assert not long, long


def test_solvers_do_not_import_the_driver():
    bad = []
    for path in (SRC / "solvers").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                mod = node.module
                if node.level >= 2 and mod.split(".")[0] in ("estimators", "cli", "methods"):
                    bad.append(f"{path.name}: from {'.' * node.level}{mod}")
                if mod.startswith("kernlearn.") and mod.split(".")[1] in (
                        "estimators", "cli", "methods"):
                    bad.append(f"{path.name}: from {mod}")
    assert not bad, bad


def _module_of(path):
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph():
    """Module -> modules of the package it imports (anywhere in the file)."""
    files = {_module_of(p): p for p in SRC.rglob("*.py")}
    graph = {}
    for mod, path in files.items():
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        out = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = pkg
                for _ in range(max(node.level - 1, 0)):
                    base = base.rpartition(".")[0]
                target = (f"{base}.{node.module}" if node.module else base) if node.level \
                    else (node.module or "")
                names = [f"{target}.{a.name}" for a in node.names]
                hits = [n for n in names if n in files] or ([target] if target in files else [])
                out.update(hits)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name in files)
        out.discard(mod)
        graph[mod] = out
    return graph


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return comps


def test_no_import_circle():
    # package faces (__init__ files that only hand names on) are left out:
    # importing a sibling through the face is not a loop of the code
    graph = _import_graph()
    faces = {m for m in graph if (SRC.parent / m.replace(".", "/") / "__init__.py").exists()}
    graph = {m: {t for t in ts if t not in faces} for m, ts in graph.items() if m not in faces}
    assert not _cycles(graph), _cycles(graph)


def test_the_circle_finder_sees_a_loop():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
