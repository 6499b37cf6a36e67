"""Student copies of the notebooks, generated from the instructor notebooks in ``notebooks/``.

    python -m seqlab_instructor.homework build     # notebooks/*.ipynb -> assignments/*.ipynb
    python -m seqlab_instructor.homework check     # exit 1 (saying what to run) if assignments/ is stale

One source of truth: instructors edit ``notebooks/`` only. The build runs nbgrader's own
preprocessors through nbconvert, so an instructor who uses nbgrader gets the same result:

- ``ClearSolutions`` replaces every ``### BEGIN SOLUTION`` / ``### END SOLUTION`` region by a
  placeholder raising ``NotImplementedError("Exercise N: …")`` (the exercise name comes from
  the cell's ``metadata.seqlab.exercise``), and the model answer and rubric of every written
  question (a markdown cell tagged ``written``) by :data:`WRITTEN_PLACEHOLDER`;
- ``ClearHiddenTests`` removes ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS`` regions;
- ``ClearOutput`` strips outputs.

Then exercise and check cells get the ``raises-exception`` tag, so a student's notebook runs
top to bottom even before the exercises are solved (each check prints what is missing), the
title cell says it is the student copy, the Colab badge points at the copy, and the notebook's
``metadata.seqlab`` names the assignment and the instructor notebook's version, which is how
the grader recognises a submission whatever its file name, and the seqlab commit its setup cell
fetches on Colab (the notebook's pin, :mod:`seqlab_instructor.notebook_files`).

A copy that would still show an exercise's answer (its solution's lines, or the source of a
function its ``metadata.seqlab.same_as`` names; :mod:`seqlab_instructor.homework.giveaways`) is refused.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import nbformat
from nbgrader.preprocessors import ClearHiddenTests, ClearOutput, ClearSolutions

from seqlab import config
from seqlab_instructor.cells import (
    ALLOWED_ERROR_TAG,
    CHECK_TAG,
    EXERCISE_TAG,
    METADATA_KEY,
    SETUP_TAG,
    WRITTEN_TAG,
    add_tag,
    exercise_name,
    has_tag,
    question_name,
)
from seqlab_instructor.homework.giveaways import answers_shown
from seqlab_instructor.notebook_files import (
    BADGE_IMAGE,
    colab_badge,
    notebook_paths,
    pinned_commit,
)

STUDENT_NOTE = (
    "> **Student copy.** Generated from `{source}` by `python -m seqlab_instructor.homework build`; "
    "edit the instructor notebook, not this file. Solve each exercise where it says "
    "`NotImplementedError`, then run the check cell below it."
)
ASSIGNMENTS_DIR = config.REPO_ROOT / "assignments"
#: What a student finds in a written-answer cell: they replace it with their answer.
WRITTEN_PLACEHOLDER = ("*Your answer, in words (double-click this cell to edit it). "
                       "Your instructor grades it by hand.*")


def source_version(text: str) -> str:
    """Short content hash of an instructor notebook, recorded in each student copy."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


class ClearExerciseSolutions(ClearSolutions):
    """nbgrader's ``ClearSolutions`` with a placeholder that names the exercise.

    Solution regions may sit in cells that nbgrader's database does not know about
    (``enforce_metadata=False``): we use nbgrader's "assign" step only.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        name = exercise_name(cell) or "This exercise"
        stub = f'raise NotImplementedError("{name}: replace this line with your solution.")'
        self.code_stub = {**self.code_stub, "python": stub}
        return super().preprocess_cell(cell, resources, cell_index)


def _check_written_cell(cell, index: int, source: str) -> None:
    """A written-answer cell is markdown with a label, points and a model-answer region."""
    where = f"{source}: cell {index} (tagged '{WRITTEN_TAG}')"
    if cell.cell_type != "markdown":
        raise ValueError(f"{where} must be a markdown cell.")
    if not question_name(cell):
        raise ValueError(f"{where} needs metadata.seqlab.question, e.g. \"Question 1: …\".")
    if "### BEGIN SOLUTION" not in cell.source or "### END SOLUTION" not in cell.source:
        raise ValueError(f"{where} must hold its model answer and rubric between "
                         "'### BEGIN SOLUTION' and '### END SOLUTION'.")


def make_student_copy(notebook, source_relative: str, target_relative: str,
                      version: str | None = None):
    """Return the student version of an instructor notebook (an ``nbformat`` node).

    ``version`` (:func:`source_version` of the instructor notebook) is recorded with the
    assignment's name in ``metadata.seqlab``, so the grader can match a submission to it.
    """
    resources: dict = {}
    for index, cell in enumerate(notebook.cells):
        if has_tag(cell, WRITTEN_TAG):
            _check_written_cell(cell, index, source_relative)
    clear_solutions = ClearExerciseSolutions(enforce_metadata=False,
                                             text_stub=WRITTEN_PLACEHOLDER)
    clear_hidden = ClearHiddenTests(enforce_metadata=False)
    clear_output = ClearOutput()
    for preprocessor in (clear_solutions, clear_hidden, clear_output):
        notebook, resources = preprocessor.preprocess(notebook, resources)

    exercises = 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        if has_tag(cell, EXERCISE_TAG):
            exercises += 1
        if has_tag(cell, EXERCISE_TAG) or has_tag(cell, CHECK_TAG):
            add_tag(cell, ALLOWED_ERROR_TAG)
    if exercises == 0:
        raise ValueError(f"{source_relative} has no cell tagged '{EXERCISE_TAG}'; "
                         "every notebook ends with exercises.")

    title = notebook.cells[0]
    lines = title.source.splitlines()
    badge = colab_badge(target_relative)
    lines = [badge if BADGE_IMAGE in line else line for line in lines]
    note = STUDENT_NOTE.format(source=source_relative)
    if note not in lines:
        lines.insert(min(2, len(lines)), note)
    title.source = "\n".join(lines)
    setup = [c.source for c in notebook.cells if c.cell_type == "code" and has_tag(c, SETUP_TAG)]
    notebook.metadata[METADATA_KEY] = {"assignment": Path(source_relative).stem,
                                       "version": version or "",
                                       "commit": pinned_commit(setup[0]) if setup else None}
    return notebook


def build(source_dir: Path | None = None, target_dir: Path | None = None,
          root: Path | None = None) -> dict[Path, str]:
    """Student copies of every notebook in ``source_dir``, as ``{target path: JSON text}``."""
    root = Path(root or config.REPO_ROOT)
    source_dir = Path(source_dir or root / "notebooks")
    target_dir = Path(target_dir or root / "assignments")
    copies: dict[Path, str] = {}
    for path in notebook_paths(source_dir):
        text = path.read_text(encoding="utf-8")
        notebook = nbformat.reads(text, as_version=4)
        target = target_dir / path.name
        student = make_student_copy(
            notebook,
            path.resolve().relative_to(root.resolve()).as_posix(),
            target.resolve().relative_to(root.resolve()).as_posix(),
            version=source_version(text),
        )
        shown = answers_shown(nbformat.reads(text, as_version=4), student)
        if shown:
            raise ValueError(f"the student copy of {path.name} would show exercise answers:\n  "
                             + "\n  ".join(shown))
        copies[target] = nbformat.writes(student) + "\n"
    return copies


def stale_copies(copies: dict[Path, str], target_dir: Path) -> list[str]:
    """Paths whose committed text differs from a fresh build, plus copies with no source."""
    stale = [str(p) for p, text in copies.items()
             if not p.is_file() or p.read_text(encoding="utf-8") != text]
    expected = {p.name for p in copies}
    stale += [str(p) for p in sorted(target_dir.glob("*.ipynb")) if p.name not in expected]
    return stale
