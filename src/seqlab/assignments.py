"""Student copies of the notebooks, generated from the instructor notebooks in ``notebooks/``.

    python -m seqlab.assignments build     # notebooks/*.ipynb -> assignments/*.ipynb
    python -m seqlab.assignments check     # exit 1 (saying what to run) if assignments/ is stale

One source of truth: instructors edit ``notebooks/`` only. The build runs nbgrader's own
preprocessors through nbconvert, so an instructor who uses nbgrader gets the same result:

- ``ClearSolutions`` replaces every ``### BEGIN SOLUTION`` / ``### END SOLUTION`` region by a
  placeholder raising ``NotImplementedError("Exercise N: …")`` (the exercise name comes from
  the cell's ``metadata.seqlab.exercise``);
- ``ClearHiddenTests`` removes ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS`` regions;
- ``ClearOutput`` strips outputs.

Then exercise and check cells get the ``raises-exception`` tag, so a student's notebook runs
top to bottom even before the exercises are solved (each check prints what is missing), the
title cell says it is the student copy, and the Colab badge points at the copy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbgrader.preprocessors import ClearHiddenTests, ClearOutput, ClearSolutions

from seqlab import config
from seqlab.notebook import BADGE_IMAGE, colab_badge, notebook_paths

EXERCISE_TAG = "exercise"
CHECK_TAG = "check"
ALLOWED_ERROR_TAG = "raises-exception"
STUDENT_NOTE = (
    "> **Student copy.** Generated from `{source}` by `python -m seqlab.assignments build`; "
    "edit the instructor notebook, not this file. Solve each exercise where it says "
    "`NotImplementedError`, then run the check cell below it."
)
ASSIGNMENTS_DIR = config.REPO_ROOT / "assignments"


def exercise_name(cell) -> str | None:
    """The ``metadata.seqlab.exercise`` label of an exercise cell (e.g. "Exercise 2: …")."""
    return cell.get("metadata", {}).get("seqlab", {}).get("exercise")


def _tags(cell) -> list[str]:
    return cell.setdefault("metadata", {}).setdefault("tags", [])


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


def make_student_copy(notebook, source_relative: str, target_relative: str):
    """Return the student version of an instructor notebook (an ``nbformat`` node)."""
    resources: dict = {}
    clear_solutions = ClearExerciseSolutions(enforce_metadata=False)
    clear_hidden = ClearHiddenTests(enforce_metadata=False)
    clear_output = ClearOutput()
    for preprocessor in (clear_solutions, clear_hidden, clear_output):
        notebook, resources = preprocessor.preprocess(notebook, resources)

    exercises = 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        tags = _tags(cell)
        if EXERCISE_TAG in tags:
            exercises += 1
        if (EXERCISE_TAG in tags or CHECK_TAG in tags) and ALLOWED_ERROR_TAG not in tags:
            tags.append(ALLOWED_ERROR_TAG)
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
    return notebook


def build(source_dir: Path | None = None, target_dir: Path | None = None,
          root: Path | None = None) -> dict[Path, str]:
    """Student copies of every notebook in ``source_dir``, as ``{target path: JSON text}``."""
    root = Path(root or config.REPO_ROOT)
    source_dir = Path(source_dir or root / "notebooks")
    target_dir = Path(target_dir or root / "assignments")
    copies: dict[Path, str] = {}
    for path in notebook_paths(source_dir):
        notebook = nbformat.read(path, as_version=4)
        target = target_dir / path.name
        student = make_student_copy(
            notebook,
            path.resolve().relative_to(root.resolve()).as_posix(),
            target.resolve().relative_to(root.resolve()).as_posix(),
        )
        copies[target] = nbformat.writes(student) + "\n"
    return copies


def stale_copies(copies: dict[Path, str], target_dir: Path) -> list[str]:
    """Paths whose committed text differs from a fresh build, plus copies with no source."""
    stale = [str(p) for p, text in copies.items()
             if not p.is_file() or p.read_text(encoding="utf-8") != text]
    expected = {p.name for p in copies}
    stale += [str(p) for p in sorted(target_dir.glob("*.ipynb")) if p.name not in expected]
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m seqlab.assignments", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["build", "check"])
    args = parser.parse_args(argv)
    copies = build()
    if args.command == "check":
        stale = stale_copies(copies, ASSIGNMENTS_DIR)
        if stale:
            print("assignments/ is out of date with notebooks/: " + ", ".join(stale)
                  + "\nRun `python -m seqlab.assignments build` and commit the result.",
                  file=sys.stderr)
            return 1
        print(f"assignments/ is in sync ({len(copies)} student copies).")
        return 0
    ASSIGNMENTS_DIR.mkdir(exist_ok=True)
    for stale in sorted(set(ASSIGNMENTS_DIR.glob("*.ipynb")) - set(copies)):
        stale.unlink()
    for path, text in copies.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(config.REPO_ROOT)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
