"""Each notebook imports from a handful of seqlab modules, and only from the package faces
(issue 20: "goal: <= 6 distinct seqlab modules per notebook, never deep modules").

Counted as the issue measured it: the module an import statement names, so
``from seqlab import plotting, sizes`` and ``from seqlab import config`` count once, as
``seqlab``, and ``from seqlab.layers import MultiHeadAttention`` counts as ``seqlab.layers``;
the course tools' ``from seqlab.course import checks`` is not counted (every notebook imports it
alike). The
cell tagged ``setup`` is left out: it is the same in every notebook, written by the notebook
tool, and imports only ``seqlab.course.notebook`` (tests/test_notebook.py checks it). Every name
imported from a face must be in that face's ``__all__``, so a notebook uses the declared API.
The instructor's tools (``seqlab_instructor``) are no face: a notebook never imports them.
"""

from __future__ import annotations

import ast
import importlib

import nbformat
import pytest

from seqlab import config

NOTEBOOKS = sorted((config.REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
MAX_MODULES = 6
#: The package faces a notebook may import from (``from seqlab import x`` imports face
#: ``seqlab.x``, ``from seqlab.course import x`` face ``seqlab.course.x``).
FACES = {
    "seqlab", "seqlab.config", "seqlab.data", "seqlab.decoding", "seqlab.distribute",
    "seqlab.evaluation", "seqlab.export", "seqlab.layers", "seqlab.models", "seqlab.plotting",
    "seqlab.results", "seqlab.sampling", "seqlab.sizes", "seqlab.training",
    "seqlab.course", "seqlab.course.checks", "seqlab.course.notebook", "seqlab.lessons",
}
#: The lesson modules generated from the notebooks' ``#@save`` cells are faces too.
LESSONS = "seqlab.lessons."
#: Packages whose names are faces: ``from seqlab import x`` and ``from seqlab.course import x``.
PACKAGES = ("seqlab", "seqlab.course")
#: Our top-level packages: the student-facing one and the instructor's tools.
OURS = ("seqlab", "seqlab_instructor")


def code_without_setup(path) -> list[str]:
    """The code cells' sources, IPython lines (``!pip``, ``%time``) blanked, setup cell left out."""
    notebook = nbformat.read(path, as_version=4)
    sources = []
    for cell in notebook.cells:
        if cell.cell_type != "code" or "setup" in cell.metadata.get("tags", []):
            continue
        sources.append("\n".join("" if line.lstrip().startswith(("!", "%")) else line
                                 for line in cell.source.splitlines()))
    return sources


def seqlab_imports(sources: list[str]) -> list[tuple[str, list[str]]]:
    """``(module, imported names)`` for every import of ``seqlab`` or ``seqlab_instructor``."""
    found = []
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                found += [(alias.name, []) for alias in node.names
                          if alias.name.split(".")[0] in OURS]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in OURS:
                found.append((node.module, [alias.name for alias in node.names]))
    return found


def import_problems(sources: list[str]) -> list[str]:
    """What breaks the rules: a deep import, a name not in its face's ``__all__``, too many modules."""
    problems = []
    imports = seqlab_imports(sources)
    for module, names in imports:
        if module not in FACES and not module.startswith(LESSONS):
            problems.append(f"deep import: {module} (import from a package face instead)")
            continue
        if module in PACKAGES:
            problems += [f"deep import: {module}.{name}" for name in names
                         if f"{module}.{name}" not in FACES]
            continue
        public = getattr(importlib.import_module(module), "__all__", None)
        if public is not None:
            problems += [f"{module} does not export {name} (not in its __all__)"
                         for name in names if name not in public]
    # The handful is of library modules; the course tools' one face a notebook needs, its
    # checks (``from seqlab.course import checks``), is imported by every notebook alike.
    # ``seqlab.lessons`` gives #@save cells their class helpers (ConfigFromArguments,
    # add_to_class), plumbing of the lesson modules like ``seqlab.course`` of the checks; its
    # ``nbNN`` modules are earlier lessons' models, which a later lesson builds on (d2l's way).
    modules = sorted({module for module, _ in imports if module != "seqlab.lessons"
                      and not module.startswith(LESSONS)
                      and module != "seqlab.course" and not module.startswith("seqlab.course.")})
    if len(modules) > MAX_MODULES:
        problems.append(f"{len(modules)} seqlab modules (at most {MAX_MODULES}): {modules}")
    return problems


def test_every_notebook_is_found():
    assert len(NOTEBOOKS) >= 7


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_imports_from_a_handful_of_faces(path):
    sources = code_without_setup(path)
    assert seqlab_imports(sources), f"{path.name} imports nothing from seqlab: wrong cells read?"
    assert import_problems(sources) == []


def test_the_check_catches_deep_imports_unknown_names_and_too_many_modules():
    deep = ["from seqlab.models.word2vec import SkipGram\n"
            "from seqlab.course import checks, runner\nfrom seqlab import checks\n"
            "from seqlab_instructor import runner\nimport seqlab_instructor.homework"]
    assert import_problems(deep) == ["deep import: seqlab.models.word2vec (import from a package "
                                     "face instead)", "deep import: seqlab.course.runner",
                                     "deep import: seqlab.checks",
                                     "deep import: seqlab_instructor (import from a package face "
                                     "instead)",
                                     "deep import: seqlab_instructor.homework (import from a "
                                     "package face instead)"]
    assert import_problems(["from seqlab.layers import dense_2d"]) == [
        "seqlab.layers does not export dense_2d (not in its __all__)"]
    many = ["from seqlab import plotting", "from seqlab.data import load_imdb",
            "from seqlab.layers import LSTMCell", "from seqlab.models import perplexity",
            "from seqlab.training import TimeBudget", "from seqlab.evaluation import bleu",
            "import seqlab.sampling"]
    assert import_problems(many[:6]) == []
    assert import_problems([*many[:6], "from seqlab.course import checks"]) == []
    (problem,) = import_problems(many)
    assert problem.startswith("7 seqlab modules (at most 6)")
