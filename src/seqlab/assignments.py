"""Student copies of the notebooks, generated from the instructor notebooks in ``notebooks/``.

    python -m seqlab.assignments build     # notebooks/*.ipynb -> assignments/*.ipynb
    python -m seqlab.assignments check     # exit 1 (saying what to run) if assignments/ is stale
    python -m seqlab.assignments grade SUBMISSIONS_DIR [--notebook 04] [--out grades/]
                                           # run and score submitted copies (seqlab.grading)

One source of truth: instructors edit ``notebooks/`` only. The build runs nbgrader's own
preprocessors through nbconvert, so an instructor who uses nbgrader gets the same result:

- ``ClearSolutions`` replaces every ``### BEGIN SOLUTION`` / ``### END SOLUTION`` region by a
  placeholder raising ``NotImplementedError("Exercise N: …")`` (the exercise name comes from
  the cell's ``metadata.seqlab.exercise``);
- ``ClearHiddenTests`` removes ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS`` regions;
- ``ClearOutput`` strips outputs.

Then exercise and check cells get the ``raises-exception`` tag, so a student's notebook runs
top to bottom even before the exercises are solved (each check prints what is missing), the
title cell says it is the student copy, the Colab badge points at the copy, and the notebook's
``metadata.seqlab`` names the assignment and the instructor notebook's version, which is how
the grader recognises a submission whatever its file name.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import nbformat
from nbgrader.preprocessors import ClearHiddenTests, ClearOutput, ClearSolutions

from seqlab import config
from seqlab.notebook_files import BADGE_IMAGE, colab_badge, notebook_paths

EXERCISE_TAG = "exercise"
CHECK_TAG = "check"
ALLOWED_ERROR_TAG = "raises-exception"
STUDENT_NOTE = (
    "> **Student copy.** Generated from `{source}` by `python -m seqlab.assignments build`; "
    "edit the instructor notebook, not this file. Solve each exercise where it says "
    "`NotImplementedError`, then run the check cell below it."
)
ASSIGNMENTS_DIR = config.REPO_ROOT / "assignments"
#: Notebook-level metadata key of a student copy: ``{"assignment": name, "version": hash}``.
METADATA_KEY = "seqlab"


def source_version(text: str) -> str:
    """Short content hash of an instructor notebook, recorded in each student copy."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


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


def make_student_copy(notebook, source_relative: str, target_relative: str,
                      version: str | None = None):
    """Return the student version of an instructor notebook (an ``nbformat`` node).

    ``version`` (:func:`source_version` of the instructor notebook) is recorded with the
    assignment's name in ``metadata.seqlab``, so the grader can match a submission to it.
    """
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
    notebook.metadata[METADATA_KEY] = {"assignment": Path(source_relative).stem,
                                       "version": version or ""}
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
        copies[target] = nbformat.writes(student) + "\n"
    return copies


def stale_copies(copies: dict[Path, str], target_dir: Path) -> list[str]:
    """Paths whose committed text differs from a fresh build, plus copies with no source."""
    stale = [str(p) for p, text in copies.items()
             if not p.is_file() or p.read_text(encoding="utf-8") != text]
    expected = {p.name for p in copies}
    stale += [str(p) for p in sorted(target_dir.glob("*.ipynb")) if p.name not in expected]
    return stale


def _grade_command(args) -> int:
    from seqlab import grading
    from seqlab.runner import parse_parameters

    try:
        grading.grade(args.submissions, args.out, notebook=args.notebook,
                      time_limit=args.timeout, check_timeout=args.check_timeout,
                      memory_limit_gb=args.memory_limit, jobs=args.jobs,
                      parameters=parse_parameters(args.parameter))
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    from seqlab import grading

    parser = argparse.ArgumentParser(prog="python -m seqlab.assignments", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("build", help="write assignments/ from notebooks/")
    commands.add_parser("check", help="exit 1 if assignments/ is out of date")
    grade = commands.add_parser(
        "grade", help="execute and score submitted notebooks", description=grading.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    grade.add_argument("submissions", type=Path, metavar="SUBMISSIONS_DIR")
    grade.add_argument("--notebook", help="grade only this assignment, e.g. 04")
    grade.add_argument("--out", type=Path, default=Path("grades"),
                       help="output folder (default: grades/)")
    grade.add_argument("--timeout", type=float, default=grading.DEFAULT_TIME_LIMIT,
                       help="seconds per submission (default: %(default)s, five times the "
                            "one-minute FAST budget)")
    grade.add_argument("--check-timeout", type=int, default=grading.DEFAULT_CHECK_TIMEOUT,
                       help="seconds per instructor check after the notebook (default: "
                            "%(default)s)")
    grade.add_argument("--memory-limit", type=float, default=grading.DEFAULT_MEMORY_LIMIT_GB,
                       metavar="GB", help="address space per kernel (default: %(default)s; "
                                          "0: no limit)")
    grade.add_argument("--jobs", type=int, default=grading.DEFAULT_JOBS,
                       help="submissions run at once, each in its own kernel (default: "
                            "%(default)s)")
    grade.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"),
                       help="override a parameters-cell variable in every submission")
    args = parser.parse_args(argv)
    if args.command == "grade":
        return _grade_command(args)
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
