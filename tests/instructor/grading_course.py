"""The instructor course the grading tests grade against (tests/instructor/test_homework_grade.py and
tests/instructor/test_homework_gradescope.py): notebook 01 (the cheapest in FAST mode) with two additions
an instructor may make, 2 points on Exercise 1 and a hidden test on Exercise 2, written into a
temporary repository with its student copy built there."""

from __future__ import annotations

from pathlib import Path

import nbformat

from seqlab import config
from seqlab_instructor.cells import EXERCISE_TAG, exercise_name
from seqlab_instructor.homework import student_copies

NOTEBOOK = "01_imdb_pretrained_embedding"
EXERCISE_1 = "Exercise 1: shuffled words into the frozen classifier"
EXERCISE_2 = "Exercise 2: accuracy from predicted probabilities"
HIDDEN_TEST_LINE = ('assert accuracy_from_probabilities([0.9, 0.2], [True, True]) == 0.5, '
                    '"lists and booleans"')


def hidden_test(*comments: str) -> str:
    """Exercise 2's hidden test, with optional comment lines (e.g. a marker to search for)."""
    lines = [f"# {comment}" for comment in comments]
    return "\n".join(["", "### BEGIN HIDDEN TESTS", *lines, HIDDEN_TEST_LINE,
                      "### END HIDDEN TESTS"])


def exercise_cells(notebook) -> dict[str, tuple[int, int]]:
    """{exercise label: (index of the exercise cell, index of its check cell)}."""
    found = {}
    for index, cell in enumerate(notebook.cells):
        label = exercise_name(cell)
        if label and EXERCISE_TAG in cell.metadata.get("tags", []):
            check = next(i for i in range(index + 1, len(notebook.cells))
                         if notebook.cells[i].cell_type == "code")
            found[label] = (index, check)
    return found


def write_course(root: Path, hidden: str) -> tuple[nbformat.NotebookNode, Path, str]:
    """Write the instructor notebook under ``root/notebooks`` and build its student copy under
    ``root/assignments`` (not written); returns (instructor notebook, copy's path, copy's text)."""
    (root / "notebooks").mkdir()
    instructor = nbformat.read(config.REPO_ROOT / "notebooks" / f"{NOTEBOOK}.ipynb", as_version=4)
    cells = exercise_cells(instructor)
    instructor.cells[cells[EXERCISE_1][0]].metadata["seqlab"]["points"] = 2
    instructor.cells[cells[EXERCISE_2][0]].metadata["seqlab"]["points"] = 1
    instructor.cells[cells[EXERCISE_2][1]].source += hidden
    nbformat.write(instructor, root / "notebooks" / f"{NOTEBOOK}.ipynb")
    (path, text), = student_copies.build(root / "notebooks", root / "assignments", root=root).items()
    return instructor, path, text
