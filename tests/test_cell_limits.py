"""Lesson cells fit a projector (issue 38): after the parameters and setup cells, one cell of
imports and this size's settings of at most 15 non-blank lines; every other code cell at most 20
non-blank lines, or 30 where it defines a class (every notebook and student copy), and no code
line wider than 100 characters (the notebooks)."""

import ast

import nbformat
import pytest

from seqlab import config
from seqlab_instructor.lessons import MARK

LINE_WIDTH = 100  # ruff's line-length (pyproject.toml): a projector shows a whole line
FIRST_CELL_LIMIT = 15
CELL_LIMIT = 20
CLASS_CELL_LIMIT = 30
NOTEBOOKS = sorted((config.REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) + sorted(
    (config.REPO_ROOT / "assignments").glob("[0-9][0-9]_*.ipynb"))


def non_blank_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip())  # the #@save mark shows too


def defines_a_class(source: str) -> bool:
    try:
        tree = ast.parse("\n".join("#" + line if line.lstrip().startswith("%") else line
                                   for line in source.splitlines()))  # magics are not Python
    except SyntaxError:
        return False
    return any(isinstance(node, ast.ClassDef) for node in tree.body)


def too_long(notebook) -> list[str]:
    cells = [c for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code"]
    lesson = [c for c in cells if not {"parameters", "setup"} & set(c.metadata.get("tags", []))]
    # The imports-and-settings cell: the first one that is not exported (a #@save cell of the
    # lesson module's own imports may stand before it).
    imports = next(i for i, c in enumerate(lesson) if not c.source.startswith(MARK))
    problems = []
    for index, cell in enumerate(lesson):
        limit = (FIRST_CELL_LIMIT if index == imports else
                 CLASS_CELL_LIMIT if defines_a_class(cell.source) else CELL_LIMIT)
        if (lines := non_blank_lines(cell.source)) > limit:
            problems.append(f"code cell {index + 1} after setup: {lines} lines > {limit}: "
                            f"{cell.source.splitlines()[0]!r}")
    return problems


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name[:2]}")
def test_lesson_cells_fit_the_limits(notebook):
    assert not too_long(notebook)


def too_wide(notebook) -> list[str]:
    cells = [c for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code"]
    return [f"{line[:40]!r}…: {len(line)} characters" for cell in cells
            if not {"parameters", "setup"} & set(cell.metadata.get("tags", []))
            for line in cell.source.splitlines() if len(line) > LINE_WIDTH]


@pytest.mark.parametrize("notebook", [p for p in NOTEBOOKS if p.parent.name == "notebooks"],
                         ids=lambda p: p.name[:2])
def test_lesson_lines_fit_a_projector(notebook):
    """Student copies are left out: their generated placeholders name the exercise in full."""
    assert not too_wide(notebook)


def test_the_width_limit_catches_a_long_line(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1\n" + "y = '" + "a" * 100 + "'")]
    nbformat.write(nb, tmp_path / "99.ipynb")
    assert len(too_wide(tmp_path / "99.ipynb")) == 1


def test_the_limits_catch_a_long_cell(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("FAST = None", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("RUN = 1", metadata={"tags": ["setup"]}),
                nbformat.v4.new_code_cell(f"{MARK}\nimport math"),
                nbformat.v4.new_code_cell("\n".join(f"a{i} = {i}" for i in range(16))),
                nbformat.v4.new_code_cell("class A:\n" + "    x = 1\n" * 25),
                nbformat.v4.new_code_cell("\n".join(f"b{i} = {i}" for i in range(21)))]
    path = tmp_path / "99.ipynb"
    nbformat.write(nb, path)
    problems = too_long(path)
    assert [p.split(":")[0] for p in problems] == ["code cell 2 after setup", "code cell 4 after setup"]
