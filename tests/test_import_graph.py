"""The package's import graph is one-directional (DESIGN: data -> layers -> models -> training ->
decoding/evaluation -> plotting): a module never imports one from a higher level, not even
inside a function. Read from the source with ``ast``, so a lazy import counts too."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from seqlab import config

PACKAGE = config.REPO_ROOT / "src" / "seqlab"

#: Level of each part of the package; a module may import its own level and lower ones only.
#: Parts not listed (notebook, checks, runner, homework, site, ...) are tools on top: they
#: may import anything, and no listed part may import them.
LEVELS = {
    "seqlab": 0,
    "seqlab.config": 0,
    "seqlab.results": 0,
    "seqlab.sizes": 0,
    "seqlab.distribute": 0,
    "seqlab.data": 1,
    "seqlab.layers": 2,
    "seqlab.models": 3,
    "seqlab.training": 4,
    "seqlab.decoding": 5,
    "seqlab.evaluation": 5,
    "seqlab.sampling": 5,
    "seqlab.export": 6,
    "seqlab.plotting": 6,
}
TOOLS = max(LEVELS.values()) + 1


def level(module: str) -> int:
    """The level of ``seqlab.x.y``: that of its longest listed prefix (tools if none)."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in LEVELS and (end > 1 or len(parts) == 1):
            return LEVELS[prefix]
    return TOOLS


def module_name(path: Path, root: Path = PACKAGE) -> str:
    relative = path.relative_to(root.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def seqlab_imports(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    """``(line, imported module)`` for every ``seqlab`` import in the file, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against this module's package
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            # `from seqlab import config` imports the submodule seqlab.config
            found += [(node.lineno, f"{target}.{alias.name}" if target == "seqlab" else target)
                      for alias in node.names]
    return [(line, name) for line, name in found if name == "seqlab" or name.startswith("seqlab.")]


def upward_imports(root: Path = PACKAGE) -> list[str]:
    problems = []
    for path in sorted(root.rglob("*.py")):
        importer = module_name(path, root)
        for line, imported in seqlab_imports(path, root):
            if level(imported) > level(importer):
                problems.append(f"{path.relative_to(root.parent)}:{line}: {importer} "
                                f"(level {level(importer)}) imports {imported} "
                                f"(level {level(imported)})")
    return problems


def test_lower_modules_never_import_higher_ones():
    assert upward_imports() == []


def test_the_check_catches_an_upward_import(tmp_path):
    fake = tmp_path / "seqlab"
    (fake / "layers").mkdir(parents=True)
    (fake / "layers" / "__init__.py").write_text("")
    (fake / "layers" / "bad.py").write_text(
        "def f():\n    from seqlab.models import build_sentiment_classifier\n")
    (fake / "data.py").write_text("from . import layers\n")
    problems = upward_imports(fake)
    assert len(problems) == 2, problems
    assert "seqlab.layers.bad (level 2) imports seqlab.models (level 3)" in problems[1]
    assert "seqlab.data (level 1) imports seqlab.layers (level 2)" in problems[0]


@pytest.mark.parametrize("package, not_loaded", [
    ("seqlab.layers", "seqlab.data"),
    ("seqlab.data", "seqlab.layers"),
])
def test_importing_a_level_loads_nothing_it_does_not_need(package, not_loaded):
    code = (f"import sys, {package}\n"
            f"loaded = sorted(m for m in sys.modules if m == {not_loaded!r} "
            f"or m.startswith({not_loaded + '.'!r}))\n"
            "print(loaded)\n"
            "sys.exit(1 if loaded else 0)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, (f"importing {package} loaded {result.stdout.strip()}"
                                    f"\n{result.stderr[-2000:]}")


# ------------------------------------------------------------------ no circle, anywhere


def module_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """``{module: modules it imports}`` for every module under ``root``, lazy imports included.

    ``from seqlab.x import y`` counts as importing ``seqlab.x.y`` when that is a module, else
    ``seqlab.x``; the implicit import of a module's parent packages is not an edge (a package's
    ``__init__`` re-exporting its own modules is not a circle).
    """
    paths = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for importer, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in paths
                           else module for alias in node.names]
            for target in targets:
                while target and target not in paths:
                    target = target.rpartition(".")[0]
                if target and target != importer:
                    graph[importer].add(target)
    return graph


def import_circles(root: Path = PACKAGE) -> list[list[str]]:
    """Every import circle (strongly connected set of two or more modules), Tarjan's way."""
    graph = module_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_no_import_circle_anywhere_in_the_package():
    graph = module_graph()
    # Every module is in the graph, the homework package's included: no exemptions.
    assert "seqlab.homework.grade" in graph and "seqlab.homework.tags" in graph
    assert len(graph) == len(list(PACKAGE.rglob("*.py")))
    assert import_circles() == []


def test_the_check_catches_a_circle_even_through_a_lazy_import(tmp_path):
    fake = tmp_path / "seqlab"
    (fake / "homework").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "homework" / "__init__.py").write_text("")
    (fake / "homework" / "a.py").write_text("from seqlab.homework import b\n")
    (fake / "homework" / "b.py").write_text("def f():\n    from seqlab.homework.c import g\n")
    (fake / "homework" / "c.py").write_text("from . import a\n")
    (fake / "homework" / "d.py").write_text("from seqlab.homework import a\n")
    assert import_circles(fake) == [["seqlab.homework.a", "seqlab.homework.b",
                                     "seqlab.homework.c"]]
