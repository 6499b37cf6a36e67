"""Canvas and Moodle gradebook files from hand-made grades: no notebook runs, fast.

Each export is read back the way its LMS reads it (the rules quoted in
``seqlab_instructor.homework.gradebook``): Canvas's header and Points Possible row, Moodle's
identifier columns; unknown and duplicate students are reported, never dropped silently.
"""

from __future__ import annotations

import csv

import pytest

from seqlab_instructor.homework import gradebook
from seqlab_instructor.homework.report import ExerciseResult, Grade

A1 = "01_imdb_pretrained_embedding"
A4 = "04_neural_machine_translation"


def _grade(student, points, assignment=A1, file=None, maximum=3.0, notes=()):
    return Grade(student, file or f"{student}.ipynb", assignment,
                 [ExerciseResult("Exercise 1: x", points, maximum, points == maximum, "")], "ok",
                 notes=list(notes))


def _rows(path):
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _roster(tmp_path, text):
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    return path


ROSTER = """student,name,email,sis_id,canvas_id,section,username
ada,"Lovelace, Ada",ada@uni.edu,S001,340934,A,alovelace
bo,"Bo, Bo",bo@uni.edu,S002,340935,B,bbo
cy,"Cy, Cy",cy@uni.edu,S003,340936,A,ccy
"""


def test_without_a_roster_each_student_id_is_a_row_in_both_formats(tmp_path):
    grades = [_grade("ada", 3), _grade("bo", 1), _grade("ada", 2, A4, maximum=2)]
    paths, book = gradebook.write_gradebooks(grades, tmp_path)
    assert [p.name for p in paths] == ["canvas.csv", "moodle.csv", "roster_problems.csv"]
    canvas = _rows(tmp_path / "canvas.csv")
    # Canvas's importer: "Student" then "ID" first, SIS User ID then SIS Login ID, "Section"
    # last among the student columns; the Points Possible row right after the header.
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", A1, A4]
    assert canvas[1][0].strip() == "Points Possible" and canvas[1][5:] == ["3", "2"]
    assert canvas[2:] == [["ada", "", "ada", "ada", "", "3", "2"],
                          ["bo", "", "bo", "bo", "", "1", ""]]
    moodle = _rows(tmp_path / "moodle.csv")
    assert moodle[0] == ["Full name", "ID number", "Email address", "Username", A1, A4]
    assert moodle[1:] == [["ada", "ada", "", "ada", "3", "2"], ["bo", "bo", "", "bo", "1", ""]]
    assert book.problems == [] and _rows(tmp_path / "roster_problems.csv") == [
        gradebook.PROBLEM_COLUMNS]


def test_a_roster_gives_the_lms_identifiers_and_reports_the_absent(tmp_path):
    grades = [_grade("ada", 3), _grade("S002", 1), _grade("zed", 3)]  # bo by SIS id; zed unknown
    _, book = gradebook.write_gradebooks(grades, tmp_path, _roster(tmp_path, ROSTER))
    assert _rows(tmp_path / "canvas.csv")[2:] == [
        ["Lovelace, Ada", "340934", "S001", "alovelace", "A", "3"],
        ["Bo, Bo", "340935", "S002", "bbo", "B", "1"],
        ["Cy, Cy", "340936", "S003", "ccy", "A", ""]]  # no submission: an empty cell
    assert _rows(tmp_path / "moodle.csv")[1:] == [
        ["Lovelace, Ada", "S001", "ada@uni.edu", "alovelace", "3"],
        ["Bo, Bo", "S002", "bo@uni.edu", "bbo", "1"],
        ["Cy, Cy", "S003", "cy@uni.edu", "ccy", ""]]
    problems = {(p["problem"], p["student"]) for p in csv.DictReader(
        (tmp_path / "roster_problems.csv").open(encoding="utf-8"))}
    assert problems == {("unknown student", "zed"), ("no submission", "cy")}
    assert "zed" not in (tmp_path / "canvas.csv").read_text() + (tmp_path / "moodle.csv").read_text()
    assert any("unknown student: zed, zed.ipynb" in str(p) for p in book.problems)


def test_no_submission_can_be_exported_as_zero(tmp_path):
    gradebook.write_gradebooks([_grade("ada", 3)], tmp_path, _roster(tmp_path, ROSTER),
                               no_submission=0.0)
    assert [row[-1] for row in _rows(tmp_path / "canvas.csv")[2:]] == ["3", "0", "0"]


def test_canvas_download_names_match_the_roster_by_canvas_user_id(tmp_path):
    grades = [_grade("lovelaceada_340934_208490284_hw1", 3,
                     file="lovelaceada_340934_208490284_hw1.ipynb"),
              _grade("bobo_late_340935_208490285_01_imdb", 2,
                     file="bobo_late_340935_208490285_01_imdb.ipynb")]
    _, book = gradebook.write_gradebooks(grades, tmp_path, _roster(tmp_path, ROSTER))
    assert [row[:2] + row[5:] for row in _rows(tmp_path / "canvas.csv")[2:]] == [
        ["Lovelace, Ada", "340934", "3"], ["Bo, Bo", "340935", "2"], ["Cy, Cy", "340936", ""]]
    # Without a roster, the download name still gives Canvas its user id.
    gradebook.write_gradebooks(grades[:1], tmp_path / "bare")
    assert _rows(tmp_path / "bare" / "canvas.csv")[2] == ["lovelaceada", "340934", "", "", "", "3"]
    moodle = _rows(tmp_path / "bare" / "moodle.csv")
    assert len(moodle) == 1  # no Moodle identifier: reported, not written as an empty-id row
    assert "not in moodle.csv" in (tmp_path / "bare" / "roster_problems.csv").read_text()


def test_two_submissions_of_one_student_are_reported_and_the_higher_exported(tmp_path):
    second = _grade("ada-2", 1, file="b.ipynb",
                    notes=["another file already had student id 'ada'; this one is ada-2"])
    grades = [_grade("ada", 3, file="a.ipynb"), second]
    for roster in (None, _roster(tmp_path, ROSTER)):
        out = tmp_path / ("roster" if roster else "bare")
        _, book = gradebook.write_gradebooks(grades, out, roster)
        (duplicate,) = [p for p in book.problems if p.problem == "duplicate submission"]
        assert "a.ipynb (3), b.ipynb (1); exported the higher, a.ipynb" in duplicate.detail
        assert _rows(out / "canvas.csv")[2][-1] == "3"


def test_repeated_roster_ids_and_ambiguous_matches_are_reported(tmp_path):
    roster = _roster(tmp_path, ROSTER + "ada2,Ada Again,ada@uni.edu,S009,1,A,x\n"
                                        "dee,Dee,dee@uni.edu,S004,2,A,ada\n")
    grades = [_grade("ada", 3)]  # ada is one student's id and another's username
    _, book = gradebook.write_gradebooks(grades, tmp_path, roster)
    kinds = [(p.problem, p.detail.split(";")[0]) for p in book.problems]
    assert ("duplicate roster row", "line 5 repeats email 'ada@uni.edu' of line 2") in kinds
    assert ("ambiguous student", "matches roster lines 2, 6") in kinds
    assert [row[0] for row in _rows(tmp_path / "canvas.csv")[2:]] == [
        "Lovelace, Ada", "Bo, Bo", "Cy, Cy", "Dee"]  # the repeated row is not exported


def test_a_canvas_or_moodle_export_serves_as_the_roster(tmp_path):
    canvas = _roster(tmp_path, "Student,ID,SIS User ID,SIS Login ID,Section,Homework 1 (77)\n"
                               "    Points Possible,,,,,10\n"
                               '"Lovelace, Ada",340934,S001,alovelace,A,\n')
    students, problems = gradebook.read_roster(canvas)
    assert problems == [] and [(s.name, s.canvas_id, s.sis_id, s.username) for s in students] == [
        ("Lovelace, Ada", "340934", "S001", "alovelace")]
    moodle = tmp_path / "moodle-export.csv"
    moodle.write_text("\ufeffFirst name,Last name,ID number,Institution,Department,Email address\n"
                      "Ada,Lovelace,S001,,,ada@uni.edu\n", encoding="utf-8")
    (student,), _ = gradebook.read_roster(moodle)
    assert (student.name, student.sis_id, student.email) == ("Ada Lovelace", "S001", "ada@uni.edu")
    book = gradebook.build([_grade("ada@uni.edu", 3)], [student])
    assert book.rows[0][1] == {A1: 3.0} and book.problems == []


def test_a_roster_without_an_id_column_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no id column"):
        gradebook.read_roster(_roster(tmp_path, "first,last\nAda,Lovelace\n"))


def test_written_points_entered_by_the_instructor_are_in_the_exports(tmp_path):
    grade = _grade("ada", 2)
    grade.written_points, grade.written_max = {"Question 1": 2.5, "Question 2": None}, 5.0
    gradebook.write_gradebooks([grade], tmp_path)
    canvas = _rows(tmp_path / "canvas.csv")
    assert canvas[1][-1] == "8" and canvas[2][-1] == "4.5"  # 3 + 5 possible; 2 + 2.5 earned


def test_a_file_of_no_assignment_is_reported_not_exported(tmp_path):
    stray = Grade("notes", "notes.ipynb", None, [], "unmatched", "not a student copy")
    _, book = gradebook.write_gradebooks([_grade("ada", 3), stray], tmp_path)
    assert [p.problem for p in book.problems] == ["no assignment"]
    assert [row[0] for row in _rows(tmp_path / "canvas.csv")[2:]] == ["ada"]
