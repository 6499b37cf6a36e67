"""The written answers' round trip: a sheet the instructor scores, read back at the next run.

Per assignment with written questions, ``written/<assignment>.csv`` has one row per question and
student: the answer, the question's points (``max``), the instructor's ``points`` and
``comment`` (empty at first), a ``check`` column the grader fills when a row needs a look, and
the model answer and rubric. ``written/<assignment>.md`` shows the same as a page to read.

When grading runs again into the same output folder, :func:`update_written_sheets` first reads
the sheet as the instructor left it and carries every ``points`` and ``comment`` cell into the
new sheet, matched by student and question (never by row number). Then:

- an answer that differs from the one the points were given to keeps its points and comment
  but is flagged in ``check`` (the answer then scored goes to ``scored answer``) and counts as
  ungraded until the instructor empties that ``check`` cell;
- points that are not a number from 0 to the question's points are kept as typed, flagged in
  ``check`` and reported with their row; they count as ungraded, never as 0;
- a row with points or a comment whose student or question is not in this run is kept at the
  end of the sheet, flagged;
- columns the instructor adds (initials, a second reader's points) are carried over too; the
  ``check`` column is the grader's, rewritten at every run;
- the previous sheet (CSV and Markdown) is copied to ``written/backup/`` before anything is
  written, so nothing the instructor typed is lost even if they typed in the Markdown view.

The points that count are set on each grade (``written_points``, ``written_max``), and reach
``grades.csv`` and the Canvas and Moodle files.
"""

from __future__ import annotations

import csv
import io
import math
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

#: Columns of ``written/<assignment>.csv``; the instructor fills ``points`` and ``comment``.
WRITTEN_COLUMNS = ["assignment", "question", "student", "file", "answer", "max", "points",
                   "comment", "check", "scored answer", "model answer and rubric"]
CHANGED = "ANSWER CHANGED since it was scored (see 'scored answer'): check the points, then " \
          "empty this cell"
ORPHAN = "KEPT: no submission of this student for this question in this grading run; not counted"


@dataclass
class WrittenReport:
    """What :func:`update_written_sheets` wrote and found."""

    paths: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    ungraded: int = 0
    backups: list[Path] = field(default_factory=list)


def _text(value: float) -> str:
    return f"{value:g}"


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.splitlines())


def _same(first: str, second: str) -> bool:
    return " ".join(first.split()) == " ".join(second.split())


def parse_points(text: str, maximum: float) -> tuple[float | None, str | None]:
    """``(points, None)``, ``(None, None)`` for an empty cell, or ``(None, what is wrong)``."""
    typed = (text or "").strip()
    if not typed:
        return None, None
    number = typed.replace(",", ".") if re.fullmatch(r"-?\d+,\d+", typed) else typed
    try:
        value = float(number)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        return None, f"points {typed!r} is not a number from 0 to {_text(maximum)}"
    if value < 0:
        return None, f"points {typed!r} is negative (0 to {_text(maximum)})"
    if value > maximum:
        return None, f"points {typed!r} is over this question's maximum of {_text(maximum)}"
    return value, None


def read_sheet(path: Path) -> list[dict[str, str]]:
    """The rows of a sheet as the instructor saved it (UTF-8 with or without BOM, ``,`` or ``;``
    as a spreadsheet may write it); ``[]`` if there is none."""
    path = Path(path)
    if not path.is_file():
        return []
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", errors="replace")  # a spreadsheet's "CSV" on Windows
    first = text.split("\n", 1)[0]
    delimiter = ";" if first.count(";") > first.count(",") else ","
    reader = csv.DictReader(text.splitlines(keepends=True), delimiter=delimiter)
    return [{key.strip(): (value or "") for key, value in row.items() if key}
            for row in reader]


def _extra(rows: list[dict[str, str]]) -> list[str]:
    """Columns the instructor added to the sheet (kept, in their order, after ours)."""
    return list(dict.fromkeys(key for row in rows for key in row if key not in WRITTEN_COLUMNS))


def _has_input(row: dict[str, str]) -> bool:
    typed = ["points", "comment", *(key for key in row if key not in WRITTEN_COLUMNS)]
    return any(row.get(key, "").strip() for key in typed)


def _backup(paths: list[Path], folder: Path) -> list[Path]:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    copies = []
    for path in paths:
        if path.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            target, n = folder / f"{path.stem}.{stamp}{path.suffix}", 1
            while target.exists():
                n += 1
                target = folder / f"{path.stem}.{stamp}-{n}{path.suffix}"
            shutil.copy2(path, target)
            copies.append(target)
    return copies


def merge(assignment, graded, old_rows: list[dict[str, str]], sheet: str = "sheet"):
    """New rows for one assignment, the instructor's entries carried over; sets grade fields.

    Returns:
        ``(rows, problems)``: the sheet's rows (dicts over :data:`WRITTEN_COLUMNS`) and one
        line per cell that needs the instructor.
    """
    previous: dict[tuple[str, str], dict[str, str]] = {}
    leftover, extra = [], _extra(old_rows)
    for row in old_rows:
        key = (row.get("question", ""), row.get("student", ""))
        if key in previous or not _has_input(row):
            if _has_input(row):
                leftover.append(row)
            continue
        previous[key] = row
    rows, problems = [], []
    for grade in graded:
        grade.written_points = {}
        grade.written_max = sum(q.points for q in assignment.questions)
    for question in assignment.questions:
        for grade in sorted(graded, key=lambda g: g.student):
            answer = grade.written.get(question.name, "")
            row = dict.fromkeys(WRITTEN_COLUMNS + extra, "")
            row.update(assignment=assignment.name, question=question.name, student=grade.student,
                       file=grade.file, answer=answer, max=_text(question.points),
                       **{"model answer and rubric": question.model_answer})
            checks = []
            old = previous.pop((question.name, grade.student), None)
            if old is not None:
                row["points"], row["comment"] = old.get("points", ""), old.get("comment", "")
                row.update({key: old.get(key, "") for key in extra})
                pending = old.get("check", "").strip() and old.get("scored answer", "").strip()
                scored = old["scored answer"] if pending else old.get("answer", "")
                if not _same(scored, answer):
                    row["scored answer"] = scored
                    checks.append(CHANGED)
            value, wrong = parse_points(row["points"], question.points)
            where = (f"{sheet}, row {len(rows) + 2}, column points ({grade.student}, "
                     f"{question.name})")
            if wrong:
                checks.append(wrong + ": fix this cell")
                problems.append(f"{where}: {wrong}; not counted")
            elif checks:
                problems.append(f"{where}: the answer changed since it was scored; not counted "
                                "until you empty the check cell")
            row["check"] = "; ".join(checks)
            grade.written_points[question.name] = value if not checks else None
            rows.append(row)
    for row in list(previous.values()) + leftover:
        kept = {key: row.get(key, "") for key in WRITTEN_COLUMNS + extra}
        kept["check"] = ORPHAN
        problems.append(f"{sheet}, row {len(rows) + 2}: {row.get('student', '')}, "
                        f"{row.get('question', '')}: kept from the previous sheet, not counted "
                        "(no such submission or question in this run, or a repeated row)")
        rows.append(kept)
    return rows, problems


def _markdown(assignment, graded, rows) -> str:
    by_key = {(r["question"], r["student"]): r for r in rows if r["check"] != ORPHAN}
    lines = [f"# {assignment.name}: written answers", "",
             f"{len(graded)} submissions. Model answers and rubrics are the instructor's: "
             "do not share this file with students.", "",
             f"Enter points and comments in `{assignment.name}.csv` (this page is rewritten at "
             "every grading run; earlier copies are in `backup/`)."]
    for question in assignment.questions:
        lines += ["", f"## {question.name} ({_text(question.points)} points)", "",
                  _quote(question.prompt), "", "### Model answer and rubric", "",
                  question.model_answer, "", "### Answers"]
        for grade in sorted(graded, key=lambda g: g.student):
            row = by_key[(question.name, grade.student)]
            points = row["points"].strip() or "___"
            lines += ["", f"**{grade.student}** (`{grade.file}`): points {points} / "
                          f"{_text(question.points)}", "",
                      _quote(row["answer"]) if row["answer"] else "> (no answer)"]
            if row["comment"].strip():
                lines += ["", f"Comment: {row['comment'].strip()}"]
            if row["check"]:
                lines += ["", f"**Check:** {row['check']}"]
    return "\n".join(lines) + "\n"


def update_written_sheets(grades, assignments, out_dir: Path) -> WrittenReport:
    """Read each graded assignment's sheet, carry the instructor's entries over, write it anew.

    Sheets of assignments not graded in this run are left as they are.
    """
    folder = Path(out_dir) / "written"
    report = WrittenReport()
    for name, assignment in sorted(assignments.items()):
        graded = [g for g in grades if g.assignment == name]
        if not assignment.questions or not graded:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        table, markdown = folder / f"{name}.csv", folder / f"{name}.md"
        rows, problems = merge(assignment, graded, read_sheet(table), f"written/{table.name}")
        buffer = io.StringIO(newline="")
        writer = csv.DictWriter(buffer, WRITTEN_COLUMNS + _extra(rows))
        writer.writeheader()
        writer.writerows(rows)
        texts = {table: buffer.getvalue(), markdown: _markdown(assignment, graded, rows)}
        changed = [path for path, text in texts.items()
                   if path.is_file() and path.read_bytes() != text.encode("utf-8")]
        report.backups += _backup(changed, folder / "backup")
        for path, text in texts.items():
            with path.open("w", newline="", encoding="utf-8") as handle:
                handle.write(text)
        report.paths += [markdown, table]
        report.problems += problems
        report.ungraded += sum(points is None for g in graded for points in g.written_points.values())
    return report


def write_written_sheets(grades, assignments, out_dir: Path) -> list[Path]:
    """The sheets' paths (Markdown, CSV per assignment); see :func:`update_written_sheets`."""
    return update_written_sheets(grades, assignments, out_dir).paths
