"""The class's grades as files a learning management system imports: Canvas and Moodle.

``grades/canvas.csv`` and ``grades/moodle.csv``: one row per student, the identifier columns
each LMS matches students by, then one column per assignment graded (its points: exercises
plus the written answers the instructor has scored). Students who match no roster row,
students with two submissions of one assignment and roster rows that repeat an id are listed in
``grades/roster_problems.csv`` and in the summary; none is dropped silently.

What the formats rest on (read 2026-11):

- **Canvas** (Gradebook > Import): the header is ``Student, ID, SIS User ID, SIS Login ID,
  Section`` then one column per assignment; an optional second row whose first cell says
  ``Points Possible`` gives each new assignment's points. Canvas finds a student by ``ID``
  (its user id), else ``SIS User ID``, else ``SIS Login ID``, else the name in ``Student``; an
  assignment by a header ``Title (assignment id)``, else by its exact title, else it creates a
  new assignment with that title; a blank cell is "no score". Source: Canvas's
  ``GradebookImporter`` (instructure/canvas-lms, ``app/models/gradebook_importer.rb``:
  ``row_has_student_headers?``, ``update_column_count``, ``process_student``,
  ``parse_assignments``, ``check_for_non_student_row``; ``Assignment.title_and_id`` in
  ``app/models/assignment.rb`` reads ``Title (id)`` as ``\\A(.*)\\s\\((\\d+)\\)\\z``), and
  Ohio State's instructor page "Import CSV File for Carmen Grades"
  (teaching.resources.osu.edu), which summarises Canvas's guide "How do I import grades in the
  Gradebook?" (community.canvaslms.com, Instructor Guide, ta-p/807; not read here).
- **Moodle** (Grades > Import > CSV file): the instructor maps one column ("Map from") to a
  user field ("Map to": ``userid``, ``username``, ``useridnumber``, ``useremail``) and each
  grade column to a grade item or a new one; a row whose user is not found aborts the whole
  import, an empty cell or ``-`` is "no grade". Sources: docs.moodle.org/311/en/Grade_import
  (CSV import, mapping tips) and Moodle's ``gradeimport_csv_load_data``
  (moodle/moodle, ``grade/import/csv/classes/load_data.php``: ``map_user_data_with_value``,
  ``prepare_import_grade_data``, ``update_grade_item``). So ``moodle.csv`` holds only students
  with an identifier, and unknown students never reach it.
- **Canvas download names**: "Download Submissions" names each file
  ``<name>[_late]_<user id>_<submission id>_<original name>`` (e.g.
  ``smithbob_340934_208490284_BobsWork.zip`` in mikewesthad/canvas-unzipper's README; the
  optional late field and the renaming are described in TimHanneman/Canvas_submission_sort's
  README). Canvas's own documentation does not state the pattern: :data:`CANVAS_DOWNLOAD` is
  this module's rule, taken from those examples.

The roster (``--roster roster.csv``) is documented in ``docs/gradebooks.md``.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

#: Columns of a roster written for seqlab (all optional but one id column).
ROSTER_COLUMNS = ("student", "name", "email", "sis_id", "canvas_id", "section", "username")
#: Columns matched against the grader's student id, in this order.
ID_FIELDS = ("student", "sis_id", "username", "email", "canvas_id")
#: A Canvas gradebook export used as the roster: its header -> our column.
CANVAS_HEADERS = {"student": "name", "id": "canvas_id", "sis user id": "sis_id",
                  "sis login id": "username", "section": "section"}
#: A Moodle grade export used as the roster (first and last name are joined).
MOODLE_HEADERS = {"id number": "sis_id", "email address": "email", "username": "username"}
#: ``lastfirst[_late]_<canvas user id>_<submission id>_<original file name>``.
CANVAS_DOWNLOAD = re.compile(r"^(?P<name>[^_]+?)(?:_late)?_(?P<user>\d+)_(?P<submission>\d+)_.+",
                             re.IGNORECASE)
DUPLICATE_NOTE = re.compile(r"already had student id (['\"])(?P<id>.+?)\1")

CANVAS_ID_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_ID_COLUMNS = ["Full name", "ID number", "Email address", "Username"]
PROBLEM_COLUMNS = ["problem", "student", "file", "assignment", "detail"]


@dataclass
class Student:
    """One roster row (or, without a roster, one student id the grader found)."""

    student: str = ""
    name: str = ""
    email: str = ""
    sis_id: str = ""
    canvas_id: str = ""
    section: str = ""
    username: str = ""
    line: int = 0  # the roster line, 0 without a roster


@dataclass
class Problem:
    problem: str
    student: str = ""
    file: str = ""
    assignment: str = ""
    detail: str = ""

    def __str__(self) -> str:
        where = ", ".join(part for part in (self.student, self.file, self.assignment) if part)
        return f"{self.problem}: {where}" + (f" ({self.detail})" if self.detail else "")


@dataclass
class Gradebook:
    """Rows of students with their points per assignment, and what could not be placed."""

    assignments: dict[str, float]  # name -> points possible (exercises + written questions)
    rows: list[tuple[Student, dict[str, float | None]]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def _norm(value: str) -> str:
    return value.strip().casefold()


def _letters(value: str) -> str:
    return re.sub(r"[^a-z]", "", value.casefold())


def read_roster(path: Path) -> tuple[list[Student], list[Problem]]:
    """Students from a roster CSV: seqlab's columns, or a Canvas or Moodle grade export.

    Raises:
        ValueError: if the file has none of the id columns.
    """
    path = Path(path)
    with path.open(newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        raise ValueError(f"{path}: the roster is empty.")
    header = [_norm(cell) for cell in rows[0]]
    if {"sis user id", "sis login id"} & set(header):
        names = {i: CANVAS_HEADERS.get(h) for i, h in enumerate(header)}
    elif {"id number", "email address"} & set(header):
        names = {i: MOODLE_HEADERS.get(h) for i, h in enumerate(header)}
    else:
        names = {i: h if h in ROSTER_COLUMNS else None for i, h in enumerate(header)}
    if not set(names.values()) & set(ID_FIELDS):
        raise ValueError(f"{path}: no id column; expected some of {', '.join(ROSTER_COLUMNS)} "
                         "(or a Canvas or Moodle grade export).")
    students, problems = [], []
    first = header.index("first name") if "first name" in header else None
    last = header.index("last name") if "last name" in header else None
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row) or "points possible" in _norm(row[0] if row else ""):
            continue  # blank lines, and the Points Possible row of a Canvas export
        entry = Student(line=number)
        for index, cell in enumerate(row):
            if names.get(index):
                setattr(entry, names[index], cell.strip())
        if first is not None or last is not None:
            entry.name = " ".join(row[i].strip() for i in (first, last)
                                  if i is not None and i < len(row)).strip()
        keys = [(key, getattr(entry, key)) for key in ID_FIELDS if getattr(entry, key)]
        if not keys:
            problems.append(Problem("roster row without an id", entry.name, detail=f"line {number}"))
            continue
        clash = next(((key, value, other) for other in students for key, value in keys
                      if _norm(getattr(other, key)) == _norm(value)), None)
        if clash:
            key, value, other = clash
            problems.append(Problem("duplicate roster row", value, detail=(
                f"line {number} repeats {key} {value!r} of line {other.line}; line {number} "
                "is left out of the exports")))
            continue
        students.append(entry)
    return students, problems


def _base_id(grade) -> str:
    """The student id the grader read, before ``collect`` added ``-2`` to a repeated one."""
    for note in grade.notes:
        match = DUPLICATE_NOTE.search(note)
        if match and grade.student.startswith(match.group("id")):
            return match.group("id")
    return grade.student


def _match(grade, roster: list[Student]) -> list[Student]:
    """The roster rows a graded submission belongs to (by id, then by its Canvas file name)."""
    student = _norm(_base_id(grade))
    found = [s for s in roster if any(_norm(getattr(s, key)) == student
                                      for key in ID_FIELDS if getattr(s, key))]
    download = CANVAS_DOWNLOAD.match(grade.file)
    if download:
        found += [s for s in roster if s.canvas_id and s.canvas_id == download.group("user")
                  and s not in found]
        if not found:
            found = [s for s in roster if s.name and _letters(s.name) == _letters(
                download.group("name"))]
    return found


def _from_file(grade) -> Student:
    """Without a roster: the grader's id, or the name and user id of a Canvas download."""
    download = CANVAS_DOWNLOAD.match(grade.file)
    student = _base_id(grade)
    if download and student == Path(grade.file).stem:
        return Student(student, name=download.group("name"), canvas_id=download.group("user"))
    return Student(student, name=student, sis_id=student, username=student,
                   email=student if "@" in student else "")


def points_of(grade) -> float:
    """What a grade exports: the exercises' points plus the written points scored so far."""
    written = getattr(grade, "written_points", {}) or {}
    return grade.total + sum(points for points in written.values() if points is not None)


def possible_of(grade) -> float:
    return grade.max_points + getattr(grade, "written_max", 0.0)


def build(grades, roster: list[Student] | None = None,
          roster_problems: list[Problem] = (), no_submission: float | None = None) -> Gradebook:
    """Place each grade on its student's row; list everything that could not be placed.

    Args:
        grades: the :class:`~seqlab_instructor.homework.report.Grade` objects of a grading run.
        roster: the class (:func:`read_roster`); None: one row per student id graded.
        roster_problems: problems :func:`read_roster` found, reported with the others.
        no_submission: what a roster student without a submission gets (None: an empty cell).
    """
    book = Gradebook({}, problems=list(roster_problems))
    for grade in grades:
        if grade.assignment:
            book.assignments[grade.assignment] = max(book.assignments.get(grade.assignment, 0.0),
                                                     possible_of(grade))
    placed: dict[int, list] = {}  # id(Student) -> grades
    students: list[Student] = list(roster) if roster is not None else []
    for grade in grades:
        if not grade.assignment:
            book.problems.append(Problem("no assignment", grade.student, grade.file, "",
                                         "matches no assignment; in grades.csv only"))
            continue
        if roster is None:
            key = _base_id(grade)
            student = next((s for s in students if s.student == key), None)
            if student is None:
                student = _from_file(grade)
                students.append(student)
            placed.setdefault(id(student), []).append(grade)
            continue
        found = _match(grade, roster)
        if len(found) == 1:
            placed.setdefault(id(found[0]), []).append(grade)
        elif not found:
            book.problems.append(Problem("unknown student", grade.student, grade.file,
                                         grade.assignment or "", "matches no roster row; "
                                         "in grades.csv only"))
        else:
            lines = ", ".join(str(s.line) for s in found)
            book.problems.append(Problem("ambiguous student", grade.student, grade.file,
                                         grade.assignment or "",
                                         f"matches roster lines {lines}; in grades.csv only"))
    for student in students:
        mine = placed.get(id(student), [])
        points: dict[str, float | None] = {}
        for assignment in book.assignments:
            graded = [g for g in mine if g.assignment == assignment]
            if len(graded) > 1:
                best = max(graded, key=points_of)
                book.problems.append(Problem(
                    "duplicate submission", student.student or student.name, best.file, assignment,
                    f"{len(graded)} files: " + ", ".join(f"{g.file} ({points_of(g):g})"
                                                         for g in graded)
                    + f"; exported the higher, {best.file}"))
                graded = [best]
            if graded:
                points[assignment] = points_of(graded[0])
            else:
                points[assignment] = no_submission
                if roster is not None:
                    book.problems.append(Problem(
                        "no submission", student.student or student.name, "", assignment,
                        f"exported as {'an empty cell' if no_submission is None else no_submission}"))
        book.rows.append((student, points))
    return book


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def write_canvas(book: Gradebook, path: Path) -> Path:
    """``canvas.csv``: Canvas's import header, a Points Possible row, one row per student."""
    with Path(path).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CANVAS_ID_COLUMNS + list(book.assignments))
        writer.writerow(["    Points Possible", "", "", "", ""]
                        + [_cell(points) for points in book.assignments.values()])
        for student, points in book.rows:
            writer.writerow([student.name or student.student, student.canvas_id, student.sis_id,
                             student.username, student.section]
                            + [_cell(points[name]) for name in book.assignments])
    return Path(path)


def write_moodle(book: Gradebook, path: Path) -> Path:
    """``moodle.csv``: the identifier columns to map from, one grade column per assignment.

    A row without any identifier would make Moodle's import fail (or, with an empty cell, land
    on the previous row's student), so such a student is reported instead of written.
    """
    with Path(path).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(MOODLE_ID_COLUMNS + list(book.assignments))
        for student, points in book.rows:
            if not (student.sis_id or student.email or student.username):
                book.problems.append(Problem(
                    "not in moodle.csv", student.student or student.name,
                    detail="no ID number, email address or username to match in Moodle"))
                continue
            writer.writerow([student.name or student.student, student.sis_id, student.email,
                             student.username]
                            + [_cell(points[name]) for name in book.assignments])
    return Path(path)


def write_problems(book: Gradebook, path: Path) -> Path:
    with Path(path).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(PROBLEM_COLUMNS)
        writer.writerows([p.problem, p.student, p.file, p.assignment, p.detail]
                         for p in book.problems)
    return Path(path)


def write_gradebooks(grades, out_dir: Path, roster_path: Path | None = None,
                     no_submission: float | None = None) -> tuple[list[Path], Gradebook]:
    """``canvas.csv``, ``moodle.csv`` and ``roster_problems.csv`` under ``out_dir``.

    Raises:
        ValueError: for a roster without an id column; FileNotFoundError for a missing one.
    """
    roster, roster_problems = (read_roster(roster_path) if roster_path is not None
                               else (None, []))
    book = build(grades, roster, roster_problems, no_submission)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [write_canvas(book, out_dir / "canvas.csv"), write_moodle(book, out_dir / "moodle.csv")]
    paths.append(write_problems(book, out_dir / "roster_problems.csv"))
    return paths, book


def summary_lines(book: Gradebook, shown: int = 10) -> list[str]:
    """The problems for the grading summary: counts by kind, then the first few of them."""
    if not book.problems:
        return ["roster: every submission placed"]
    counts: dict[str, int] = {}
    for problem in book.problems:
        counts[problem.problem] = counts.get(problem.problem, 0) + 1
    lines = ["roster problems (see roster_problems.csv): "
             + ", ".join(f"{kind} {n}" for kind, n in counts.items())]
    lines += [f"  {problem}" for problem in book.problems[:shown]]
    if len(book.problems) > shown:
        lines.append(f"  ... and {len(book.problems) - shown} more in roster_problems.csv")
    return lines
