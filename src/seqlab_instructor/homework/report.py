"""Reporting grades: ``grades.csv``, one feedback file per student, a summary table, and per
assignment one sheet of the written answers for the instructor (``written/<assignment>.md``
and ``.csv``: each question with its model answer and rubric, then every student's answer)."""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from seqlab_instructor.homework.collect import Submission, safe_name
from seqlab_instructor.homework.written import (  # noqa: F401 - public names kept here
    WRITTEN_COLUMNS,
    write_written_sheets,
)

OK = "ok"
ERROR = "error"
TIMEOUT = "timeout"
KERNEL_DIED = "kernel died"


@dataclass
class ExerciseResult:
    name: str
    points: float
    max_points: float
    passed: bool
    message: str


@dataclass
class Grade:
    """One row of ``grades.csv`` and one feedback file."""

    student: str
    file: str
    assignment: str | None
    results: list[ExerciseResult]
    status: str
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    feedback: Path | None = None
    executed: Path | None = None
    #: ``{question label: answer}`` for the written questions ("" if unanswered).
    written: dict[str, str] = field(default_factory=dict)
    #: ``{question label: the instructor's points}`` read back from the written sheet; None:
    #: not scored yet, not a valid number, or the answer changed since (see ``written.py``).
    written_points: dict[str, float | None] = field(default_factory=dict)
    #: The written questions' points together (0 without written questions).
    written_max: float = 0.0

    @property
    def total(self) -> float:
        return sum(result.points for result in self.results)

    @property
    def max_points(self) -> float:
        return sum(result.max_points for result in self.results)

    @property
    def written_total(self) -> float:
        return sum(points for points in self.written_points.values() if points is not None)

    @property
    def written_ungraded(self) -> int:
        return sum(points is None for points in self.written_points.values())


def _blockquote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.splitlines())


def points_text(value: float) -> str:
    return f"{value:g}"


def write_feedback(grade: Grade, out_dir: Path) -> Path:
    """``feedback/<student>.md``: points, status and each exercise's check message."""
    folder = Path(out_dir) / "feedback"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"# {grade.assignment or 'Unknown assignment'}: feedback for {grade.student}", "",
             f"- File: `{grade.file}`",
             f"- Points: **{points_text(grade.total)} / {points_text(grade.max_points)}**",
             f"- Status: {grade.status}" + (f" ({grade.reason})" if grade.reason else "")]
    lines += [f"- Note: {note}" for note in grade.notes]
    page = f"{safe_name(grade.student)}.html"
    lines.append(f"- As a web page, with your notebook and each verdict under its exercise: "
                 f"[{page}]({page})")
    if grade.executed is not None:
        lines.append(f"- Your notebook as it ran: [executed/{grade.executed.name}]"
                     f"(../executed/{grade.executed.name})")
    for result in grade.results:
        lines += ["", f"## {result.name}: {points_text(result.points)} / {points_text(result.max_points)}",
                  "", _blockquote(result.message)]
    for question, answer in grade.written.items():
        lines += ["", f"## {question}: graded by your instructor", "",
                  _blockquote(answer) if answer else "> (no answer)"]
    path = folder / f"{safe_name(grade.student)}.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_csv(grades: list[Grade], path: Path) -> Path:
    """One row per student: each exercise's points, the written points the instructor
    entered (``written``) and how many written answers have none yet (``written ungraded``),
    ``total`` and ``max`` (exercises and written questions together), status and reason."""
    exercises: list[str] = []
    for grade in grades:
        exercises += [r.name for r in grade.results if r.name not in exercises]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "file", "assignment", *exercises, "written",
                         "written ungraded", "total", "max", "status", "reason"])
        for grade in grades:
            points = {r.name: points_text(r.points) for r in grade.results}
            writer.writerow([grade.student, grade.file, grade.assignment or "",
                             *[points.get(name, "") for name in exercises],
                             points_text(grade.written_total), grade.written_ungraded,
                             points_text(grade.total + grade.written_total),
                             points_text(grade.max_points + grade.written_max)
                             if grade.results or grade.written_max else "",
                             grade.status, grade.reason])
    return path


def summary(grades: list[Grade], skipped: list[Submission] = ()) -> str:
    """A table per student, the mean points per exercise and the failures by reason."""
    exercises: list[tuple[str, float]] = []
    for grade in grades:
        exercises += [(r.name, r.max_points) for r in grade.results
                      if r.name not in [name for name, _ in exercises]]
    short = [name.split(":")[0] for name, _ in exercises]
    width = max([len("student"), *(len(g.student) for g in grades)]) + 2
    header = f"{'student':<{width}}" + "".join(f"{s:>13}" for s in short) + \
        f"{'total':>9}  status"
    rows = [header, "-" * len(header)]
    for grade in grades:
        points = {r.name: r.points for r in grade.results}
        cells = "".join(f"{points_text(points[name]) if name in points else '-':>13}"
                        for name, _ in exercises)
        rows.append(f"{grade.student:<{width}}{cells}{points_text(grade.total):>9}  {grade.status}"
                    + (f": {grade.reason}" if grade.reason else ""))
    means = []
    for name, max_points in exercises:
        earned = [r.points for g in grades for r in g.results if r.name == name]
        means.append(f"{sum(earned) / len(earned):.2f}/{points_text(max_points)}" if earned else "-")
    rows.append("-" * len(header))
    rows.append(f"{'mean':<{width}}" + "".join(f"{m:>13}" for m in means))
    rows.append("")
    rows.append(f"{len(grades)} students; exercises: "
                + "; ".join(f"{s} = {name}" for s, (name, _) in zip(short, exercises, strict=True)))
    failures = Counter(g.status for g in grades if g.status != OK)
    ranked = sorted(failures.items(), key=lambda item: (-item[1], item[0]))
    rows.append("failures by reason: " + (", ".join(f"{status} {count}" for status, count in ranked)
                                          or "none"))
    for submission in skipped:
        rows.append(f"skipped {submission.path}: {submission.problem}")
    return "\n".join(rows)
