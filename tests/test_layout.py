"""The package's layout: every documented import path works, the public submodules are
attributes of ``cumgain`` imported on first use, and no module of cumgain imports
another that imports it back (imports inside functions counted too). The direction of
imports between the layers is checked by ``lint-imports`` (pyproject.toml's
``[tool.importlinter]``, run in .ci/run)."""
import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import cumgain

PACKAGE = Path(cumgain.__file__).parent
DOCS = PACKAGE.parent / "docs"

# The import paths the documentation and the README show users.
DOCUMENTED = ["cumgain.stats", "cumgain.curves", "cumgain.plot", "cumgain.report",
              "cumgain.dask", "cumgain.stream", "cumgain.convert", "cumgain.trec_io",
              "cumgain.vectors", "cumgain.gains", "cumgain.measures", "cumgain.datasets",
              "cumgain.exceptions", "cumgain.types", "cumgain.compat.pytrec_eval",
              "cumgain.compat.sklearn"]


@pytest.mark.parametrize("path", DOCUMENTED)
def test_every_documented_module_imports(path):
    if path == "cumgain.dask":
        pytest.importorskip("dask.dataframe")
    if path == "cumgain.plot":
        pytest.importorskip("matplotlib")
    module = importlib.import_module(path)
    parent, _, name = path.rpartition(".")
    assert getattr(importlib.import_module(parent), name) is module


def test_submodules_are_attributes_imported_on_first_use():
    """After ``import cumgain`` alone the submodules are not loaded (the import stays
    fast) but each is reached as an attribute, and ``dir`` lists it."""
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("matplotlib")
    code = """
import sys
import cumgain
lazy = ["stats", "curves", "plot", "report", "dask", "stream", "convert", "datasets"]
assert not [n for n in lazy if "cumgain." + n in sys.modules], "imported eagerly"
assert "scipy.stats" not in sys.modules and "matplotlib" not in sys.modules
for name in cumgain.SUBMODULES:
    assert name in dir(cumgain), name
    assert getattr(cumgain, name).__name__ == "cumgain." + name
assert cumgain.compat.pytrec_eval.RelevanceEvaluator
assert "sklearn" in dir(cumgain.compat) and cumgain.compat.sklearn.ndcg_score
assert cumgain.stats.compare and cumgain.curves.compute and cumgain.report.significance_table
try:
    cumgain.no_such_module
except AttributeError as error:
    assert "no_such_module" in str(error)
else:
    raise AssertionError("no AttributeError")
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=PACKAGE.parent.parent)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def _api_targets() -> list:
    names = []
    for page in sorted((DOCS / "api").glob("*.rst")):
        module = "cumgain"
        for line in page.read_text().splitlines():
            found = re.match(r"\.\. (auto\w+|currentmodule|module)::\s*(\S+)", line)
            if not found:
                continue
            kind, target = found.groups()
            if kind in ("currentmodule", "module", "automodule"):
                module = target
                if kind == "automodule":
                    names.append(target)
            else:
                names.append(target if target.startswith("cumgain.") else f"{module}.{target}")
    return names


def test_every_name_of_the_api_reference_resolves():
    """Each module, function and class the API pages document is where they say."""
    if not (DOCS / "api").is_dir():
        pytest.skip("not a source tree (no docs/)")
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("matplotlib")
    targets = _api_targets()
    assert len(targets) > 40
    for target in targets:
        parts = target.split(".")
        for split in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:split]))
            except ImportError:
                continue
            for attribute in parts[split:]:
                obj = getattr(obj, attribute)
            break
        else:
            raise AssertionError(f"{target} does not import")


def _import_graph() -> dict:
    """{module: the cumgain modules it imports}, every import statement counted
    (inside functions and TYPE_CHECKING blocks too)."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path

    def known(name):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(known(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    targets.add(known(full) if full in modules else known(base))
        graph[name] = {t for t in targets if t and t != name and t.startswith("cumgain")}
    return graph


def test_no_module_imports_one_that_imports_it_back():
    graph = _import_graph()
    assert len(graph) > 60
    state, cycles = {}, []

    def visit(module, trail):        # depth-first: a module met again on the trail closes a circle
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                cycles.append(trail[trail.index(target):] + [target])
            elif target not in state:
                visit(target, trail + [target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_at_most_fifteen_modules_at_the_top():
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top) <= 15, top
