"""The import graph of ``src/`` is one-directional, stated by folder: the student-facing package
``seqlab`` (the library, DESIGN: data -> layers -> models and the lessons' models -> training -> decoding/evaluation ->
plotting, and on top of it ``seqlab.course``: the setup call and the exercises' checks) and, above
it all, the instructor's tools, ``seqlab_instructor`` (what builds, runs and grades the course). A
module never imports one from a higher level, not even inside a function; no library module
imports ``seqlab.course``; no ``seqlab`` module imports ``seqlab_instructor``; inside each the
modules are ordered too. Read from the source with ``ast``, so a lazy import counts too."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from seqlab import config

SRC = config.REPO_ROOT / "src"
#: The two packages under src/: the student-facing one and the instructor's tools.
PACKAGES = ("seqlab", "seqlab_instructor")

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
    # generated from the notebooks' #@save cells: the models the lessons teach, beside the
    # package's; the decoders, the export and the checks above run them
    "seqlab.lessons": 3,
    "seqlab.training": 4,
    "seqlab.decoding": 5,
    "seqlab.evaluation": 5,
    "seqlab.sampling": 5,
    "seqlab.export": 6,
    "seqlab.plotting": 6,
}
#: On top of the library, lowest first: the rest of the student-facing package, then the
#: instructor's tools. Each may import the library and the modules before it in this list, never
#: one after it; so no ``seqlab`` module imports ``seqlab_instructor``.
COURSE_ORDER = (
    "seqlab.course",                      # the package's docstring: imports nothing
    "seqlab.course.tensorflow_startup",   # TensorFlow's start-up lines held back
    "seqlab.course.notebook",             # setup() in the kernel, the Colab check
    "seqlab.course.checks",               # the exercises' checks
    # the instructor's tools
    "seqlab_instructor",                  # the package's docstring: imports nothing
    "seqlab_instructor.imdb_sample",      # data/imdb_sample written from seqlab.data
    "seqlab_instructor.cells",            # tag and metadata names
    "seqlab_instructor.notebook_files",   # the generated setup cell, badges: sync/check
    "seqlab_instructor.lessons",          # lesson modules exported from #@save cells
    "seqlab_instructor.record",           # the record's minutes into seqlab.recorded_minutes
    "seqlab_instructor.runner",           # notebooks executed headless
    "seqlab_instructor.homework",         # student copies, grading
    "seqlab_instructor.site",             # the course book
    "seqlab_instructor.release",          # releases: runs the tools above as commands
)
COURSE = max(LIBRARY.values()) + 1
LEVELS = {**LIBRARY, **{name: COURSE + i for i, name in enumerate(COURSE_ORDER)}}


class UnplacedModule(LookupError):
    """A module of the package that no level names: give its folder a level here."""


def level(module: str) -> int:
    """The level of ``seqlab.x.y`` (or ``seqlab_instructor.x``): that of its longest listed prefix.

    Raises:
        UnplacedModule: for a module that no listed prefix covers (a new top-level module
            must be placed in the library, in ``seqlab.course`` or in ``seqlab_instructor``).
    """
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in LEVELS and (end > 1 or len(parts) == 1):
            return LEVELS[prefix]
    raise UnplacedModule(f"{module} has no level: add its folder to LIBRARY or COURSE_ORDER")


def module_name(path: Path, root: Path = SRC) -> str:
    relative = path.relative_to(root).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


#: Packages whose ``from P import x`` always names a submodule ``P.x``.
SUBMODULE_PACKAGES = ("seqlab", "seqlab.course", "seqlab_instructor")


def source_files(root: Path = SRC) -> list[Path]:
    """Every module file of both packages under ``root`` (the ``src`` folder)."""
    return sorted(path for package in PACKAGES for path in (root / package).rglob("*.py"))


def _is_module(name: str, root: Path) -> bool:
    """True when ``seqlab.a.b`` is a module or package file under ``root`` (the ``src`` folder)."""
    path = root.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _ours(name: str) -> bool:
    return any(name == package or name.startswith(package + ".") for package in PACKAGES)


def seqlab_imports(path: Path, root: Path = SRC) -> list[tuple[int, str]]:
    """``(line, imported module)`` for every import of either package in the file, at any depth."""
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
            # `from seqlab_instructor import site` seqlab_instructor.site (no package's
            # __init__ defines names); `from seqlab_instructor.homework import grade`, a module
            # too.
            found += [(node.lineno, f"{target}.{alias.name}"
                       if target in SUBMODULE_PACKAGES or _is_module(f"{target}.{alias.name}", root)
                       else target)
                      for alias in node.names]
    return [(line, name) for line, name in found if _ours(name)]


def upward_imports(root: Path = SRC) -> list[str]:
    problems = []
    for path in source_files(root):
        importer = module_name(path, root)
        for line, imported in seqlab_imports(path, root):
            if level(imported) > level(importer):
                problems.append(f"{path.relative_to(root)}:{line}: {importer} "
                                f"(level {level(importer)}) imports {imported} "
                                f"(level {level(imported)})")
    return problems


def instructor_imports(root: Path = SRC) -> list[str]:
    """Every import of ``seqlab_instructor`` by a module of ``seqlab``, lazy ones included."""
    return [f"{path.relative_to(root)}:{line}: imports {imported}"
            for path in sorted((root / "seqlab").rglob("*.py"))
            for line, imported in seqlab_imports(path, root)
            if imported.split(".")[0] == "seqlab_instructor"]


def test_every_module_has_a_level():
    modules = [module_name(path) for path in source_files()]
    unplaced = []
    for module in modules:
        try:
            level(module)
        except UnplacedModule as error:
            unplaced.append(str(error))
    assert unplaced == []
    assert {m.split(".")[1] for m in modules if m.count(".")} >= {"course", "layers", "models",
                                                                  "homework", "runner"}


def test_lower_modules_never_import_higher_ones():
    assert upward_imports() == []


def test_no_seqlab_module_imports_the_instructor_tools():
    assert instructor_imports() == []


def test_no_library_module_imports_the_course_tools():
    problems = [f"{path.relative_to(SRC)}:{line}: imports {imported}"
                for path in sorted((SRC / "seqlab").rglob("*.py"))
                if not module_name(path).startswith("seqlab.course")
                for line, imported in seqlab_imports(path)
                if imported == "seqlab.course" or imported.startswith("seqlab.course.")]
    assert problems == []


def _requirement_names(requirements: list[str]) -> set[str]:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    return {canonicalize_name(Requirement(line).name) for line in requirements}


def undeclared_imports(package: Path, declared: set[str]) -> list[str]:
    """Third-party modules imported under ``package`` (a folder) whose distribution, by this
    environment's ``packages_distributions()``, is not in ``declared`` (canonical names)."""
    import importlib.metadata

    from packaging.utils import canonicalize_name

    distributions = importlib.metadata.packages_distributions()
    problems = set()
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and not node.level else [])
            for top in {name.split(".")[0] for name in names}:
                if top in sys.stdlib_module_names or top in PACKAGES:
                    continue
                found = {canonicalize_name(d) for d in distributions.get(top, [top])}
                if not found & declared:
                    where = path.relative_to(package.parent)
                    problems.add(f"{where}: {top} ({', '.join(sorted(found))})")
    return sorted(problems)


def test_a_student_installs_nothing_of_the_instructor_tools():
    """Colab's setup installs seqlab's [project] dependencies only (prepare_colab); what
    ``seqlab`` imports is among them, and the instructor's extra adds to them, never overlaps."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((config.REPO_ROOT / "pyproject.toml").read_text())["project"]
    runtime = _requirement_names(project["dependencies"])
    instructor = _requirement_names(project["optional-dependencies"]["instructor"])
    assert {"nbgrader", "papermill", "copydetect", "sphinx"} <= instructor
    assert not runtime & instructor
    assert undeclared_imports(SRC / "seqlab", runtime) == []


def test_the_instructor_extra_covers_what_the_tools_import():
    import importlib.metadata

    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((config.REPO_ROOT / "pyproject.toml").read_text())["project"]
    extra = project["optional-dependencies"]["instructor"]
    # a tool may import what an instructor package pulls in itself (IPython, jupyter_client)
    pulled = [requirement for name in _requirement_names(extra)
              for requirement in importlib.metadata.requires(name) or []
              if "extra ==" not in requirement]
    declared = _requirement_names([*project["dependencies"], *extra, *pulled])
    assert undeclared_imports(SRC / "seqlab_instructor", declared) == []
    # requirements.txt (CI, local use) installs everything, the instructor's tools included
    lines = (config.REPO_ROOT / "requirements.txt").read_text().splitlines()
    everything = _requirement_names([line for line in lines
                                     if line.strip() and not line.startswith(("#", "-"))])
    assert _requirement_names(extra) <= everything


def test_the_dependency_check_catches_an_undeclared_import(tmp_path):
    fake = _fake_package(tmp_path, {"plotting.py": "import numpy\n",
                                    "layers.py": "def f():\n    import papermill.iorw\n"})
    assert undeclared_imports(fake / "seqlab", {"numpy"}) == [
        "seqlab/layers.py: papermill (papermill)"]


def _fake_package(tmp_path, files: dict[str, str],
                  instructor: dict[str, str] | None = None) -> Path:
    """A fake ``src`` folder: ``files`` under ``seqlab/``, ``instructor`` under
    ``seqlab_instructor/``."""
    for package, tree in (("seqlab", files), ("seqlab_instructor", instructor or {})):
        (tmp_path / package).mkdir(exist_ok=True)
        for relative, text in tree.items():
            (tmp_path / package / relative).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / package / relative).write_text(text)
    return tmp_path


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
        "plotting.py": "from seqlab.course import checks\n",
    })
    problems = upward_imports(fake)
    assert len(problems) == 2, problems
    assert "seqlab.plotting (level 6) imports seqlab.course.checks" in problems[0]
    assert "seqlab.training.callbacks (level 4) imports seqlab.course.checks" in problems[1]


@pytest.mark.parametrize("importer, source", [
    # The import this split removed: `python -m seqlab.course.notebook sync` ran the files' tool.
    ("seqlab/course/notebook.py",
     "def f():\n    from seqlab_instructor.notebook_files import main\n"),
    ("seqlab/sizes.py", "import seqlab_instructor.runner\n"),
    ("seqlab/course/checks/core.py", "from seqlab_instructor import cells\n"),
])
def test_the_check_catches_seqlab_importing_the_instructor_tools(tmp_path, importer, source):
    fake = _fake_package(tmp_path, {"course/__init__.py": "", "course/checks/__init__.py": ""},
                         {"__init__.py": "", "cells.py": "", "runner.py": "",
                          "notebook_files.py": ""})
    (tmp_path / importer).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / importer).write_text(source)
    (problem,) = instructor_imports(fake)
    assert problem.startswith(f"{importer}:") and "imports seqlab_instructor" in problem
    (upward,) = upward_imports(fake)
    assert upward.startswith(f"{importer}:")


@pytest.mark.parametrize("importer, source", [
    # The upward import issue 29 removed: the tag names lived in the homework package.
    ("seqlab_instructor/notebook_files.py",
     "from seqlab_instructor.homework.tags import has_tag\n"),
    ("seqlab_instructor/cells.py", "def f():\n    from seqlab_instructor import site\n"),
    ("seqlab/course/notebook.py", "from seqlab.course.checks import passed\n"),
    ("seqlab_instructor/homework/grade.py", "from ..site import build_site\n"),
])
def test_the_check_catches_an_upward_import_inside_the_course_tools(tmp_path, importer, source):
    fake = _fake_package(tmp_path, {"course/__init__.py": "", "course/checks/__init__.py": ""},
                         {"homework/__init__.py": ""})
    (tmp_path / importer).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / importer).write_text(source)
    (problem,) = upward_imports(fake)
    assert problem.startswith(f"{importer}:")


def test_the_check_refuses_a_module_without_a_level(tmp_path):
    fake = _fake_package(tmp_path, {"grading.py": "from seqlab import config\n"})
    with pytest.raises(UnplacedModule, match="seqlab.grading has no level"):
        upward_imports(fake)


@pytest.mark.parametrize("package, not_loaded", [
    ("seqlab.layers", "seqlab.data"),
    ("seqlab.data", "seqlab.layers"),
    ("seqlab.course.notebook", "seqlab_instructor"),  # what the setup cell imports
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


def module_graph(root: Path = SRC) -> dict[str, set[str]]:
    """``{module: modules it imports}`` for every module under ``root``, lazy imports included.

    ``from seqlab.x import y`` counts as importing ``seqlab.x.y`` when that is a module, else
    ``seqlab.x``; the implicit import of a module's parent packages is not an edge (a package's
    ``__init__`` re-exporting its own modules is not a circle).
    """
    paths = {module_name(path, root): path for path in source_files(root)}
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


def import_circles(root: Path = SRC) -> list[list[str]]:
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
    assert "seqlab_instructor.homework.grade" in graph and "seqlab.course.checks.core" in graph
    assert len(graph) == len(source_files())
    assert import_circles() == []


def test_the_check_catches_a_circle_even_through_a_lazy_import(tmp_path):
    fake = _fake_package(tmp_path, {
        "__init__.py": "",
    }, {
        "__init__.py": "",
        "homework/__init__.py": "",
        "homework/a.py": "from seqlab_instructor.homework import b\n",
        "homework/b.py": "def f():\n    from seqlab_instructor.homework.c import g\n",
        "homework/c.py": "from . import a\n",
        "homework/d.py": "from seqlab_instructor.homework import a\n",
    })
    assert import_circles(fake) == [["seqlab_instructor.homework.a", "seqlab_instructor.homework.b",
                                     "seqlab_instructor.homework.c"]]
