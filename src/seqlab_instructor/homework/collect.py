"""Collecting homework: the instructor's assignments and the submitted files.

- :func:`load_assignments` reads every instructor notebook's exercises, points and check cells
  (hidden tests included: they stay in the grader's process), and its written questions with
  their model answers and rubrics;
- :func:`collect` reads every ``*.ipynb`` under a submissions folder (any file name), takes the
  student id from the file name or a ``STUDENT_ID = "…"`` line, and matches the file to its
  assignment by the ``metadata.seqlab.assignment`` entry every student copy carries (falling
  back to the "Generated from `notebooks/….ipynb`" note of the copy's title cell);
- :func:`structure_notes` says which cells a submission deleted, moved or edited;
- :func:`written_answers` reads a submission's answers to the written questions.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from seqlab import config
from seqlab_instructor.cells import (
    CHECK_TAG,
    EXERCISE_TAG,
    METADATA_KEY,
    WRITTEN_TAG,
    exercise_name,
    has_tag,
    question_name,
    seqlab_metadata,
)
from seqlab_instructor.homework.student_copies import WRITTEN_PLACEHOLDER, source_version
from seqlab_instructor.notebook_files import library_changes, notebook_paths

STUDENT_ID_LINE = re.compile(r"""^\s*STUDENT_ID\s*=\s*["']([^"'\n]+)["']""", re.MULTILINE)
GENERATED_FROM = re.compile(r"Generated from `notebooks/([^`/]+)\.ipynb`")

INVALID = "invalid"
UNMATCHED = "unmatched"


@dataclass(frozen=True)
class Exercise:
    """One graded exercise: its label, its points and the instructor's check cell source."""

    name: str
    points: float
    check: str


@dataclass(frozen=True)
class WrittenQuestion:
    """A question answered in words: its label, points, the question and the model answer.

    ``model_answer`` (the model answer and the rubric) comes from the instructor's notebook
    only; the student copy holds a placeholder in its place.
    """

    name: str
    points: float
    prompt: str
    model_answer: str


@dataclass
class Assignment:
    """An instructor notebook as the grader sees it."""

    name: str
    path: Path
    version: str
    exercises: list[Exercise]
    questions: list[WrittenQuestion] = field(default_factory=list)

    @property
    def max_points(self) -> float:
        return sum(exercise.points for exercise in self.exercises)


def load_assignment(path: Path) -> Assignment:
    """Read an instructor notebook's exercises, points and check cells.

    Raises:
        ValueError: if an exercise has no check cell after it, or its points are not a
            positive number.
    """
    import nbformat

    path = Path(path)
    text = path.read_text(encoding="utf-8")
    notebook = nbformat.reads(text, as_version=4)
    exercises = []
    cells = notebook.cells
    for index, cell in enumerate(cells):
        if cell.cell_type != "code" or not has_tag(cell, EXERCISE_TAG):
            continue
        name = exercise_name(cell) or f"Exercise in cell {index}"
        points = _points(path, index, name, cell)
        check = next((c for c in cells[index + 1:] if c.cell_type == "code"), None)
        if check is None or not has_tag(check, CHECK_TAG):
            raise ValueError(f"{path.name}: exercise cell {index} ({name}) is not followed by a "
                             f"code cell tagged '{CHECK_TAG}'.")
        exercises.append(Exercise(name, float(points), check.source))
    return Assignment(path.stem, path, source_version(text), exercises,
                      _written_questions(path, cells))


def _points(path: Path, index: int, name: str, cell) -> float:
    points = seqlab_metadata(cell).get("points", 1)
    if isinstance(points, bool) or not isinstance(points, (int, float)) or points <= 0:
        raise ValueError(f"{path.name}: cell {index} ({name}) has metadata.seqlab.points = "
                         f"{points!r}; expected a positive number.")
    return float(points)


def _written_questions(path: Path, cells) -> list[WrittenQuestion]:
    """The written questions of an instructor notebook, each with the markdown cell above it."""
    questions = []
    for index, cell in enumerate(cells):
        if not has_tag(cell, WRITTEN_TAG):
            continue
        name = question_name(cell) or f"Question in cell {index}"
        prompt = cells[index - 1].source if index and cells[index - 1].cell_type == "markdown" \
            else ""
        region = re.search(r"### BEGIN SOLUTION\n?(.*?)### END SOLUTION", cell.source, re.DOTALL)
        questions.append(WrittenQuestion(name, _points(path, index, name, cell), prompt.strip(),
                                         (region.group(1) if region else "").strip()))
    return questions


def written_answers(notebook, assignment: Assignment) -> dict[str, str]:
    """``{question label: the student's answer}`` from a submitted notebook.

    The answer is the text of the cell tagged ``written`` with the question's label (the cell the
    student copy left for it); a placeholder left as it was, or a missing cell, reads as "".
    """
    found = {question.name: "" for question in assignment.questions}
    for cell in notebook.cells if notebook is not None else []:
        name = question_name(cell) if has_tag(cell, WRITTEN_TAG) else None
        if name in found and not found[name]:
            text = cell.source.replace(WRITTEN_PLACEHOLDER, "").strip()
            found[name] = text
    return found


def load_assignments(notebooks_dir: Path | None = None) -> dict[str, Assignment]:
    """Every instructor notebook with exercises, by name (``"04_neural_machine_translation"``)."""
    found = {}
    for path in notebook_paths(Path(notebooks_dir or config.REPO_ROOT / "notebooks")):
        assignment = load_assignment(path)
        if assignment.exercises:
            found[assignment.name] = assignment
    return found


@dataclass
class Submission:
    """A collected file: who, which assignment, and why it cannot be run (if so)."""

    path: Path
    student: str
    assignment: str | None = None
    notebook: object | None = None
    problem: str | None = None
    status: str | None = None
    notes: list[str] = field(default_factory=list)


def _student_id(notebook, path: Path) -> str:
    for cell in notebook.cells if notebook is not None else []:
        if cell.cell_type == "code":
            match = STUDENT_ID_LINE.search(cell.source)
            if match and match.group(1).strip():
                return match.group(1).strip()
    return path.stem


def _match(notebook, assignments: dict[str, Assignment]) -> tuple[str | None, str | None]:
    """``(assignment name, note)`` from the copy's metadata, else from its title cell."""
    entry = notebook.metadata.get(METADATA_KEY, {}) or {}
    name = entry.get("assignment") if isinstance(entry, dict) else None
    if name in assignments:
        notes = []
        version = entry.get("version")
        if version and version != assignments[name].version:
            notes.append(f"built from another version of the instructor notebook ({version}; "
                         f"now {assignments[name].version}): cells may differ")
        commit = entry.get("commit")
        if not commit or library_changes(commit, config.REPO_ROOT):
            notes.append(f"the copy was built with seqlab's commit {commit or '(none named)'}, "
                         "whose library differs from the one grading it: to grade it with its "
                         f"own, `git checkout {commit or 'its commit'}` and grade again")
        return name, "; ".join(notes) or None
    for cell in notebook.cells[:3]:
        if cell.cell_type == "markdown":
            match = GENERATED_FROM.search(cell.source)
            if match and match.group(1) in assignments:
                return match.group(1), ("matched by its title cell: the notebook lost the "
                                        "metadata.seqlab entry of the student copy")
    return None, None


def read_submission(path: Path, assignments: dict[str, Assignment]) -> Submission:
    """Parse, validate and match one submitted file; never raises for a bad file."""
    import nbformat

    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return Submission(path, path.stem, problem=f"not valid JSON ({error})", status=INVALID)
    try:
        notebook = nbformat.reads(json.dumps(raw), as_version=4)
        # Outputs are the student's, never trusted or needed: drop them before validating.
        for cell in notebook.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        nbformat.validate(notebook)
    except Exception as error:  # noqa: BLE001 - any malformed notebook is reported, not fatal
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return Submission(path, path.stem, problem=f"not a valid notebook ({message})",
                          status=INVALID)
    submission = Submission(path, _student_id(notebook, path), notebook=notebook)
    submission.assignment, note = _match(notebook, assignments)
    if note:
        submission.notes.append(note)
    if submission.assignment is None:
        submission.problem = ("not a student copy of any assignment (no metadata.seqlab."
                              "assignment, no 'Generated from' title)")
        submission.status = UNMATCHED
    return submission


def safe_name(student: str) -> str:
    return re.sub(r"[^\w.@-]+", "_", student).strip("._") or "student"


def collect(submissions_dir: Path, assignments: dict[str, Assignment],
            only: str | None = None,
            exclude: Path | None = None) -> tuple[list[Submission], list[Submission]]:
    """``(to grade, skipped)``: every ``*.ipynb`` under the folder, read and matched.

    With ``only`` (an assignment name), invalid and unmatched files are graded as that
    assignment (zero points, with the reason) and files of other assignments are skipped.
    Files under ``exclude`` (the grader's own output folder, if inside) are not collected.
    """
    submissions_dir = Path(submissions_dir)
    if not submissions_dir.is_dir():
        raise FileNotFoundError(f"No submissions folder at {submissions_dir}")
    paths = sorted(p for p in submissions_dir.rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts
                   and not (exclude is not None and p.resolve().is_relative_to(exclude)))
    graded, skipped = [], []
    seen: Counter = Counter()
    for path in paths:
        submission = read_submission(path, assignments)
        if only is not None:
            if submission.assignment not in (None, only):
                submission.problem = f"a copy of {submission.assignment}, not {only}"
                skipped.append(submission)
                continue
            submission.assignment = only
        seen[submission.student] += 1
        if seen[submission.student] > 1:
            submission.notes.append(f"another file already had student id "
                                    f"{submission.student!r}; this one is "
                                    f"{submission.student}-{seen[submission.student]}")
            submission.student = f"{submission.student}-{seen[submission.student]}"
        graded.append(submission)
    return graded, skipped


def structure_notes(submission_notebook, template_notebook) -> list[str]:
    """Which of the student copy's code cells the submission deleted, reordered or (checks) edited.

    Cells are matched by cell id, else by identical source, else (edited exercise cells) by
    their first line. The notes explain a grade; they never change it.
    """
    def first_line(source: str) -> str:
        return next((line.strip() for line in source.splitlines() if line.strip()), "")

    cells = [c for c in submission_notebook.cells if c.cell_type == "code"]
    by_id = {c.get("id"): i for i, c in enumerate(cells) if c.get("id")}
    by_source = {c.source: i for i, c in enumerate(cells)}
    by_first = {first_line(c.source): i for i, c in enumerate(cells) if c.source.strip()}
    positions, missing, edited_checks = [], [], 0
    for cell in (c for c in template_notebook.cells if c.cell_type == "code"):
        index = by_id.get(cell.get("id"), by_source.get(cell.source,
                                                        by_first.get(first_line(cell.source))))
        if index is None:
            label = exercise_name(cell)
            if label:
                missing.append(f"the cell of {label}")
            elif has_tag(cell, CHECK_TAG):
                missing.append("a check cell")
            else:
                missing.append("a code cell")
        else:
            positions.append(index)
            if has_tag(cell, CHECK_TAG) and cells[index].source.strip() != cell.source.strip():
                edited_checks += 1
    notes = []
    if missing:
        counts = Counter(missing)
        notes.append("deleted: " + ", ".join(f"{label}" + (f" (x{n})" if n > 1 else "")
                                             for label, n in counts.items()))
    if positions != sorted(positions):
        notes.append("code cells were reordered")
    if edited_checks:
        notes.append(f"check cells edited: {edited_checks} (grading ran the instructor's checks, "
                     "not these)")
    return notes
