"""The written-answer sheet's round trip, on hand-made grades (no notebook runs).

The instructor fills points in ``written/<assignment>.csv``; grading again keeps every entry
(matched by student and question), flags an answer that changed since it was scored, reports
invalid points by their cell, backs the previous sheet up, and adds the points to the totals.
"""

from __future__ import annotations

import csv

from seqlab_instructor.homework import gradebook, written
from seqlab_instructor.homework.collect import Assignment, WrittenQuestion
from seqlab_instructor.homework.report import ExerciseResult, Grade, write_csv

NAME = "99_test"
Q1, Q2 = "Question 1: why the mask", "Question 2: why the heads"
ASSIGNMENT = Assignment(NAME, None, "v", [], [
    WrittenQuestion(Q1, 2.0, "Why the mask?", "**Model answer.** It hides the future."),
    WrittenQuestion(Q2, 3.0, "Why heads?", "**Model answer.** Several patterns at once.")])


def _grades(ada_q1="It hides the future.", bo_q1="No idea."):
    return [Grade(student, f"{student}.ipynb", NAME,
                  [ExerciseResult("Exercise 1: x", 1.0, 1.0, True, "")], "ok",
                  written={Q1: q1, Q2: f"{student} on heads."})
            for student, q1 in (("bo", bo_q1), ("ada", ada_q1))]


def _run(out, grades):
    return written.update_written_sheets(grades, {NAME: ASSIGNMENT}, out)


def _sheet(out):
    with (out / "written" / f"{NAME}.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _fill(out, entries, *, delimiter=",", encoding="utf-8"):
    """Type into the sheet as an instructor would: {(student, question): (points, comment)}.
    Rows are shuffled first: matching must not rely on row order."""
    rows = _sheet(out)[::-1]
    for row in rows:
        if (row["student"], row["question"]) in entries:
            row["points"], row["comment"] = entries[(row["student"], row["question"])]
    with (out / "written" / f"{NAME}.csv").open("w", newline="", encoding=encoding) as handle:
        writer = csv.DictWriter(handle, written.WRITTEN_COLUMNS, delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)


def _by_key(rows):
    return {(r["student"], r["question"]): r for r in rows}


def test_the_sheet_has_answer_model_answer_max_and_empty_points_per_question_and_student(tmp_path):
    grades = _grades()
    report = _run(tmp_path, grades)
    rows = _sheet(tmp_path)
    assert [(r["question"], r["student"]) for r in rows] == [(Q1, "ada"), (Q1, "bo"),
                                                            (Q2, "ada"), (Q2, "bo")]
    ada = rows[0]
    assert (ada["answer"], ada["max"], ada["points"], ada["comment"], ada["check"]) == (
        "It hides the future.", "2", "", "", "")
    assert ada["model answer and rubric"] == "**Model answer.** It hides the future."
    assert report.ungraded == 4 and report.problems == [] and report.backups == []
    assert grades[1].written_points == {Q1: None, Q2: None} and grades[1].written_max == 5
    markdown = (tmp_path / "written" / f"{NAME}.md").read_text(encoding="utf-8")
    assert "**ada** (`ada.ipynb`): points ___ / 2" in markdown and "It hides the future." in markdown


def test_points_typed_by_the_instructor_survive_a_rerun_and_reach_the_totals(tmp_path):
    _run(tmp_path, _grades())
    _fill(tmp_path, {("ada", Q1): ("2", "Exactly."), ("ada", Q2): ("1,5", ""),
                     ("bo", Q1): ("0", "See the slide on masks.")})
    before = (tmp_path / "written" / f"{NAME}.csv").read_bytes()
    grades = _grades()
    report = _run(tmp_path, grades)
    rows = _by_key(_sheet(tmp_path))
    assert (rows[("ada", Q1)]["points"], rows[("ada", Q1)]["comment"]) == ("2", "Exactly.")
    assert rows[("ada", Q2)]["points"] == "1,5"  # kept as typed, read as 1.5
    assert rows[("bo", Q1)]["comment"] == "See the slide on masks."
    ada, bo = grades[1], grades[0]
    assert ada.written_points == {Q1: 2.0, Q2: 1.5} and bo.written_points == {Q1: 0.0, Q2: None}
    assert report.ungraded == 1 and report.problems == []
    # The sheet as the instructor left it is backed up before the new one is written.
    (backup,) = [p for p in report.backups if p.suffix == ".csv"]
    assert backup.parent.name == "backup" and backup.read_bytes() == before
    # grades.csv: the written points, the ungraded count, and totals including them.
    write_csv(grades, tmp_path / "grades.csv")
    with (tmp_path / "grades.csv").open(encoding="utf-8") as handle:
        table = {r["student"]: r for r in csv.DictReader(handle)}
    assert [table["ada"][k] for k in ("written", "written ungraded", "total", "max")] == [
        "3.5", "0", "4.5", "6"]
    assert [table["bo"][k] for k in ("written", "written ungraded", "total", "max")] == [
        "0", "1", "1", "6"]
    book = gradebook.build(grades)
    assert {s.student: p[NAME] for s, p in book.rows} == {"bo": 1.0, "ada": 4.5}
    # A third run with nothing new changes nothing and needs no backup.
    again = _run(tmp_path, _grades())
    assert again.backups == [] and _by_key(_sheet(tmp_path)) == rows


def test_an_answer_edited_after_scoring_is_flagged_not_rescored(tmp_path):
    _run(tmp_path, _grades())
    _fill(tmp_path, {("ada", Q1): ("2", "Exactly.")})
    grades = _grades(ada_q1="Something else entirely.")
    report = _run(tmp_path, grades)
    row = _by_key(_sheet(tmp_path))[("ada", Q1)]
    assert row["points"] == "2" and row["comment"] == "Exactly."
    assert row["check"] == written.CHANGED and row["scored answer"] == "It hides the future."
    assert grades[1].written_points[Q1] is None  # not counted until the instructor confirms
    assert any("row 2, column points (ada, " in p and "changed" in p for p in report.problems)
    # Still flagged on the next run while the instructor has not looked ...
    _run(tmp_path, _grades(ada_q1="Something else entirely."))
    assert _by_key(_sheet(tmp_path))[("ada", Q1)]["check"] == written.CHANGED
    # ... and counted once they empty the check cell (keeping or changing the points).
    rows = _sheet(tmp_path)
    for r in rows:
        if (r["student"], r["question"]) == ("ada", Q1):
            r["check"], r["points"] = "", "1"
    with (tmp_path / "written" / f"{NAME}.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, written.WRITTEN_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    grades = _grades(ada_q1="Something else entirely.")
    _run(tmp_path, grades)
    assert grades[1].written_points[Q1] == 1.0
    assert _by_key(_sheet(tmp_path))[("ada", Q1)]["check"] == ""


def test_invalid_points_are_kept_flagged_and_reported_by_cell_never_a_silent_zero(tmp_path):
    _run(tmp_path, _grades())
    _fill(tmp_path, {("ada", Q1): ("two", ""), ("bo", Q1): ("-1", ""), ("ada", Q2): ("4", ""),
                     ("bo", Q2): ("nan", "")})
    grades = _grades()
    report = _run(tmp_path, grades)
    rows = _by_key(_sheet(tmp_path))
    assert [rows[k]["points"] for k in (("ada", Q1), ("bo", Q1), ("ada", Q2), ("bo", Q2))] == [
        "two", "-1", "4", "nan"]
    assert "is not a number from 0 to 2: fix this cell" in rows[("ada", Q1)]["check"]
    assert "is negative" in rows[("bo", Q1)]["check"]
    assert "over this question's maximum of 3" in rows[("ada", Q2)]["check"]
    assert all(p is None for g in grades for p in g.written_points.values())
    assert report.problems[0] == ("written/99_test.csv, row 2, column points (ada, "
                                  f"{Q1}): points 'two' is not a number from 0 to 2; not counted")
    assert len(report.problems) == 4 and report.ungraded == 4


def test_entries_for_students_absent_from_this_run_are_kept_not_lost(tmp_path):
    _run(tmp_path, _grades())
    _fill(tmp_path, {("bo", Q1): ("1", "ok")})
    report = _run(tmp_path, _grades()[1:])  # only ada graded this time
    kept = [r for r in _sheet(tmp_path) if r["student"] == "bo"]
    assert [(r["points"], r["comment"], r["check"]) for r in kept] == [("1", "ok", written.ORPHAN)]
    assert any("kept from the previous sheet" in p for p in report.problems)
    grades = _grades()  # bo is back: the kept entry is matched again
    _run(tmp_path, grades)
    assert grades[0].written_points[Q1] == 1.0


def test_a_sheet_saved_by_a_spreadsheet_is_read(tmp_path):
    _run(tmp_path, _grades())
    _fill(tmp_path, {("ada", Q1): ("2", "très bien")}, delimiter=";", encoding="utf-8-sig")
    grades = _grades()
    _run(tmp_path, grades)
    assert grades[1].written_points[Q1] == 2.0
    assert _by_key(_sheet(tmp_path))[("ada", Q1)]["comment"] == "très bien"


def test_parse_points():
    assert written.parse_points("", 2) == (None, None)
    assert written.parse_points(" 1.5 ", 2) == (1.5, None)
    assert written.parse_points("0,5", 2) == (0.5, None)
    assert written.parse_points("inf", 2)[1] == "points 'inf' is not a number from 0 to 2"


def test_columns_the_instructor_adds_are_carried_over(tmp_path):
    _run(tmp_path, _grades())
    rows = _sheet(tmp_path)
    for row in rows:
        row["second reader"] = "1" if row["student"] == "ada" else ""
    with (tmp_path / "written" / f"{NAME}.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, [*written.WRITTEN_COLUMNS, "second reader"])
        writer.writeheader()
        writer.writerows(rows)
    _run(tmp_path, _grades())
    assert {(r["student"], r["second reader"]) for r in _sheet(tmp_path)} == {("ada", "1"),
                                                                              ("bo", "")}


def test_grading_again_keeps_the_sheets_and_a_bad_roster_stops_before_grading(tmp_path, capsys):
    from seqlab_instructor.homework import __main__ as cli
    from seqlab_instructor.homework import grade

    sheet = tmp_path / "out" / "written" / "01_imdb_pretrained_embedding.csv"
    sheet.parent.mkdir(parents=True)
    sheet.write_text("assignment,question,student,points\nx,Question 1,ada,2\n", encoding="utf-8")
    (tmp_path / "submissions").mkdir()
    grade.grade(tmp_path / "submissions", tmp_path / "out", notebook="01", sandbox="none",
                log=lambda *_: None)
    assert sheet.read_text(encoding="utf-8").endswith("ada,2\n")  # not deleted by the new run
    assert (tmp_path / "out" / "canvas.csv").is_file()
    assert cli.main(["grade", str(tmp_path / "submissions"), "--out", str(tmp_path / "out"),
                     "--sandbox", "none", "--roster", str(tmp_path / "nowhere.csv")]) == 2
    assert "nowhere.csv" in capsys.readouterr().err
