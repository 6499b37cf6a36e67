"""The package's import graph is one-directional, stated by folder: the library (DESIGN: data ->
layers -> models -> training -> decoding/evaluation -> plotting) and, on top of it, the course
tools in ``seqlab.course`` (what runs, builds and grades the course). A module never imports one
from a higher level, not even inside a function; no library module imports ``seqlab.course``;
inside ``seqlab.course`` the modules are ordered too. Read from the source with ``ast``, so a lazy
import counts too."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from seqlab import config

PACKAGE = config.REPO_ROOT / "src" / "seqlab"

#: The library: level of each part; a module may import its own level and lower ones only.
LIBRARY = {
    "seqlab": 0,
    "seqlab.config": 0,
    "seqlab.results": 0,
    "seqlab.sizes": 0,
    "seqlab.recorded_minutes": 0,  # generated from the record by seqlab_instructor.record
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
    "seqlab.lessons": 7,  # generated from the notebooks' #@save cells; may import the library
}
#: The course tools, on top of the library, lowest first: each may import the library and the
#: course modules before it in this list, never one after it.
COURSE_ORDER = (
    "seqlab.course",                      # the package's docstring: imports nothing
    "seqlab.course.cells",                # tag and metadata names
    "seqlab.course.tensorflow_startup",   # TensorFlow's start-up lines held back
    "seqlab.course.gpu_choices",          # dtype policy and XLA for the devices
    "seqlab.course.notebook_files",       # the generated setup cell, badges: sync/check
    "seqlab.course.notebook",             # setup() in the kernel, the Colab check
    "seqlab.course.checks",               # the exercises' checks
    "seqlab.course.runner",               # notebooks executed headless
    "seqlab.course.homework",             # student copies, grading
    "seqlab.course.site",                 # the course book
)
COURSE = max(LIBRARY.values()) + 1
LEVELS = {**LIBRARY, **{name: COURSE + i for i, name in enumerate(COURSE_ORDER)}}


class UnplacedModule(LookupError):
    """A module of the package that no level names: give its folder a level here."""


def level(module: str) -> int:
    """The level of ``seqlab.x.y``: that of its longest listed prefix.

    Raises:
        UnplacedModule: for a module that no listed prefix covers (a new top-level module
            must be placed in the library or in ``seqlab.course``).
    """
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in LEVELS and (end > 1 or len(parts) == 1):
            return LEVELS[prefix]
    raise UnplacedModule(f"{module} has no level: add its folder to LIBRARY or COURSE_ORDER")


def module_name(path: Path, root: Path = PACKAGE) -> str:
    relative = path.relative_to(root.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


#: Packages whose ``from P import x`` always names a submodule ``P.x``.
SUBMODULE_PACKAGES = ("seqlab", "seqlab.course")


def _is_module(name: str, root: Path) -> bool:
    """True when ``seqlab.a.b`` is a module or package file under ``root`` (the ``seqlab`` folder)."""
    path = root.joinpath(*name.split(".")[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


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
            # `from seqlab import config` imports the submodule seqlab.config, and
            # `from seqlab.course import site` seqlab.course.site (neither package's __init__
            # defines names); `from seqlab.course.homework import grade`, a module too.
            found += [(node.lineno, f"{target}.{alias.name}"
                       if target in SUBMODULE_PACKAGES or _is_module(f"{target}.{alias.name}", root)
                       else target)
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


def test_every_module_has_a_level():
    modules = [module_name(path) for path in sorted(PACKAGE.rglob("*.py"))]
    unplaced = []
    for module in modules:
        try:
            level(module)
        except UnplacedModule as error:
            unplaced.append(str(error))
    assert unplaced == []
    assert {m.split(".")[1] for m in modules if m.count(".")} >= {"course", "layers", "models"}


def test_lower_modules_never_import_higher_ones():
    assert upward_imports() == []


def test_no_library_module_imports_the_course_tools():
    problems = [f"{path.relative_to(PACKAGE.parent)}:{line}: imports {imported}"
                for path in sorted(PACKAGE.rglob("*.py"))
                if not module_name(path).startswith("seqlab.course")
                for line, imported in seqlab_imports(path)
                if imported == "seqlab.course" or imported.startswith("seqlab.course.")]
    assert problems == []


def _fake_package(tmp_path, files: dict[str, str]) -> Path:
    fake = tmp_path / "seqlab"
    for relative, text in files.items():
        (fake / relative).parent.mkdir(parents=True, exist_ok=True)
        (fake / relative).write_text(text)
    return fake


def test_the_check_catches_an_upward_import(tmp_path):
    fake = _fake_package(tmp_path, {
        "layers/__init__.py": "",
        "layers/bad.py": "def f():\n    from seqlab.models import build_sentiment_classifier\n",
        "data.py": "from . import layers\n",
    })
    problems = upward_imports(fake)
    assert len(problems) == 2, problems
    assert "seqlab.layers.bad (level 2) imports seqlab.models (level 3)" in problems[1]
    assert "seqlab.data (level 1) imports seqlab.layers (level 2)" in problems[0]


def test_the_check_catches_the_library_importing_the_course_tools(tmp_path):
    fake = _fake_package(tmp_path, {
        "training/__init__.py": "",
        "training/callbacks.py": "def f():\n    from seqlab.course.checks import passed\n",
        "plotting.py": "from seqlab.course import cells\n",
    })
    problems = upward_imports(fake)
    assert len(problems) == 2, problems
    assert "seqlab.plotting (level 6) imports seqlab.course.cells" in problems[0]
    assert "seqlab.training.callbacks (level 4) imports seqlab.course.checks" in problems[1]


@pytest.mark.parametrize("importer, source", [
    # The upward import issue 29 removed: the tag names lived in the homework package.
    ("course/notebook_files.py", "from seqlab.course.homework.tags import has_tag\n"),
    ("course/cells.py", "def f():\n    from seqlab.course import site\n"),
    ("course/checks/core.py", "from seqlab.course.runner import run_notebook\n"),
    ("course/homework/grade.py", "from ..site import build_site\n"),
])
def test_the_check_catches_an_upward_import_inside_the_course_tools(tmp_path, importer, source):
    fake = _fake_package(tmp_path, {"course/__init__.py": "", "course/checks/__init__.py": "",
                                    "course/homework/__init__.py": "", importer: source})
    (problem,) = upward_imports(fake)
    assert f"seqlab/{importer}:" in problem


def test_the_check_refuses_a_module_without_a_level(tmp_path):
    fake = _fake_package(tmp_path, {"grading.py": "from seqlab import config\n"})
    with pytest.raises(UnplacedModule, match="seqlab.grading has no level"):
        upward_imports(fake)


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
    assert "seqlab.course.homework.grade" in graph and "seqlab.course.cells" in graph
    assert len(graph) == len(list(PACKAGE.rglob("*.py")))
    assert import_circles() == []


def test_the_check_catches_a_circle_even_through_a_lazy_import(tmp_path):
    fake = _fake_package(tmp_path, {
        "__init__.py": "",
        "course/__init__.py": "",
        "course/homework/__init__.py": "",
        "course/homework/a.py": "from seqlab.course.homework import b\n",
        "course/homework/b.py": "def f():\n    from seqlab.course.homework.c import g\n",
        "course/homework/c.py": "from . import a\n",
        "course/homework/d.py": "from seqlab.course.homework import a\n",
    })
    assert import_circles(fake) == [["seqlab.course.homework.a", "seqlab.course.homework.b",
                                     "seqlab.course.homework.c"]]
