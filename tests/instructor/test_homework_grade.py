"""Homework grading: submissions run in their own kernels; the instructor's checks score them.

The end-to-end test builds the student copy of notebook 01 (the cheapest in FAST mode), writes
the submissions the issue lists and grades them in one run. The instructor notebook used there
is notebook 01 with two additions an instructor may make: 2 points on Exercise 1 and a hidden
test on Exercise 2.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
from grading_course import (
    EXERCISE_1,
    EXERCISE_2,
    NOTEBOOK,
    exercise_cells,
    hidden_test,
    write_course,
)

from seqlab import config
from seqlab.course import checks
from seqlab.course.checks import CheckFailed
from seqlab_instructor import notebook_files
from seqlab_instructor.cells import exercise_name
from seqlab_instructor.homework import __main__ as cli
from seqlab_instructor.homework import collect, grade, student_copies, verdicts

HIDDEN_TEST = hidden_test()
WRONG_ACCURACY = '''def accuracy_from_probabilities(probabilities, labels):
    predicted = np.asarray(probabilities).reshape(-1) >= 0.5
    return float(np.mean(predicted == np.asarray(labels).reshape(-1).astype(bool)))
'''
# The check cells a student might "fix" so that they always print success.
ALWAYS_PASSES = 'print("\\u2713 {} passed.")'
TIME_LIMIT = 90


# ------------------------------------------------------------------ building submissions


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """Instructor notebook (with points and a hidden test) and its student copy, in a tmp repo."""
    root = tmp_path_factory.mktemp("course")
    instructor, path, text = write_course(root, HIDDEN_TEST)
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    return root, instructor, nbformat.reads(text, as_version=4)


#: A student's answer to the notebook's first written question.
WRITTEN_ANSWER = "The embedding sums the words' vectors,\nso their order cannot matter."


def _submission(student_copy, folder, name, *, solve=(), student_id=None,
                delete_checks=False, exercise_2_first=False, written=None):
    notebook = nbformat.from_dict(json.loads(json.dumps(student_copy)))
    cells = exercise_cells(notebook)
    for label, source in solve:
        notebook.cells[cells[label][0]].source = source
    if written is not None:
        next(c for c in notebook.cells if "written" in c.metadata.get("tags", [])).source = written
    if student_id:
        notebook.cells[cells[EXERCISE_1][0]].source += f'\n\nSTUDENT_ID = "{student_id}"'
    if delete_checks:
        for index in sorted((check for _, check in cells.values()), reverse=True):
            del notebook.cells[index]
    if exercise_2_first:
        exercise_1 = next(i for i, c in enumerate(notebook.cells)
                          if exercise_name(c) == EXERCISE_1)
        exercise_2 = next(i for i, c in enumerate(notebook.cells)
                          if exercise_name(c) == EXERCISE_2)
        notebook.cells.insert(exercise_1, notebook.cells.pop(exercise_2))
    nbformat.write(notebook, folder / f"{name}.ipynb")


@pytest.fixture(scope="module")
def graded(course):
    root, instructor, student_copy = course
    folder = root / "submissions"
    folder.mkdir()
    cells = exercise_cells(instructor)
    solution = {label: "\n".join(line for line in instructor.cells[exercise].source.splitlines()
                                 if "### BEGIN SOLUTION" not in line
                                 and "### END SOLUTION" not in line)
                for label, (exercise, _) in cells.items()}
    checks_of = {label: check for label, (_, check) in cells.items()}
    both = list(solution.items())
    _submission(student_copy, folder, "perfect", solve=both, written=WRITTEN_ANSWER)
    shutil.copy(root / "assignments" / f"{NOTEBOOK}.ipynb", folder / "untouched.ipynb")
    _submission(student_copy, folder, "one_solved", solve=[(EXERCISE_2, solution[EXERCISE_2])],
                student_id="s1234")
    _submission(student_copy, folder, "wrong", solve=[(EXERCISE_1, solution[EXERCISE_1]),
                                                      (EXERCISE_2, WRONG_ACCURACY)])
    # Solves both, deletes both check cells and moves Exercise 2 above Exercise 1.
    _submission(student_copy, folder, "no_checks", solve=both, delete_checks=True,
                exercise_2_first=True)
    never_fails = nbformat.from_dict(json.loads(json.dumps(student_copy)))
    for label, check in checks_of.items():
        never_fails.cells[check].source = ALWAYS_PASSES.format(label)
    nbformat.write(never_fails, folder / "always_passes.ipynb")
    # A loop that sleeps: as endless as `while True: pass` (which tests/instructor/test_runner.py
    # interrupts), without taking a core from the submissions graded beside it.
    _submission(student_copy, folder, "loops", solve=[
        (EXERCISE_1, solution[EXERCISE_1]),
        (EXERCISE_2, "import time\nwhile True:\n    time.sleep(0.1)")])
    (folder / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")

    out = root / "grades"
    lines = []
    # Three at once: the sleeping loop waits out its time limit while two others share the
    # two cores of CI.
    grades = grade.grade(folder, out, notebook="01", notebooks_dir=root / "notebooks",
                           time_limit=TIME_LIMIT, check_timeout=60, jobs=3, sandbox="none",
                           log=lambda *parts: lines.append(" ".join(map(str, parts))))
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    return out, grades, rows, "\n".join(lines)


def _feedback(out, student):
    return (out / "feedback" / f"{student}.md").read_text(encoding="utf-8")


def _expected_failure(check, function):
    """What the student saw in Colab when running ``check(function)``: the rendered CheckFailed."""
    with pytest.raises(CheckFailed) as failure:
        check(function)
    return "\n".join(failure.value._render_traceback_())


# -------------------------------------------------------------------------- end to end


def _points(row):
    """Exercise 1, Exercise 2, total, max, status; max includes Question 1's 3 points, which
    count once the instructor scores them in written/ (tests/instructor/test_homework_written.py)."""
    return row[EXERCISE_1], row[EXERCISE_2], row["total"], row["max"], row["status"]


@pytest.mark.notebook
def test_one_row_per_student_and_a_summary(graded):
    out, grades, rows, log = graded
    print(log)
    assert sorted(rows) == sorted(["perfect", "untouched", "s1234", "wrong", "no_checks",
                                   "always_passes", "loops", "broken"])
    assert "failures by reason: invalid 1, timeout 1" in log
    assert "mean" in log and "8 students" in log


@pytest.mark.notebook
def test_the_instructor_solution_gets_full_marks(graded):
    out, _, rows, _ = graded
    assert _points(rows["perfect"]) == ("2", "1", "3", "6", "ok")
    feedback = _feedback(out, "perfect")
    assert f"\u2713 {EXERCISE_1} passed." in feedback and f"\u2713 {EXERCISE_2} passed." in feedback


@pytest.mark.notebook
def test_the_untouched_copy_gets_zero_and_is_told_the_placeholder_is_still_there(graded):
    out, _, rows, _ = graded
    assert _points(rows["untouched"]) == ("0", "0", "0", "6", "ok")
    feedback = _feedback(out, "untouched")
    assert feedback.count("the solution is still the placeholder") == 2


@pytest.mark.notebook
def test_one_solved_exercise_earns_its_points_and_student_id_comes_from_the_notebook(graded):
    _, _, rows, _ = graded
    assert _points(rows["s1234"]) == ("0", "1", "1", "6", "ok")
    assert rows["s1234"]["file"] == "one_solved.ipynb"


@pytest.mark.notebook
def test_a_wrong_answer_gets_the_checks_own_message(graded):
    out, _, rows, _ = graded
    assert _points(rows["wrong"]) == ("2", "0", "2", "6", "ok")
    namespace = {"np": np}
    exec(WRONG_ACCURACY, namespace)
    message = _expected_failure(checks.check_accuracy_function,
                                namespace["accuracy_from_probabilities"])
    assert "differs" in message
    assert f"> {message}" in _feedback(out, "wrong")


@pytest.mark.notebook
def test_deleted_and_moved_check_cells_change_nothing_but_are_noted(graded):
    out, _, rows, _ = graded
    assert _points(rows["no_checks"]) == ("2", "1", "3", "6", "ok")
    feedback = _feedback(out, "no_checks")
    assert "deleted: a check cell (x2)" in feedback and "reordered" in feedback


@pytest.mark.notebook
def test_a_check_edited_to_always_pass_has_no_effect(graded):
    out, _, rows, _ = graded
    assert _points(rows["always_passes"]) == ("0", "0", "0", "6", "ok")
    executed = (out / "executed" / "always_passes.ipynb").read_text(encoding="utf-8")
    assert f"\u2713 {EXERCISE_1} passed." in executed  # what the student's edit printed
    assert "check cells edited: 2" in _feedback(out, "always_passes")


@pytest.mark.notebook
def test_an_infinite_loop_hits_the_time_limit_and_keeps_what_ran_before(graded):
    out, grades, rows, _ = graded
    assert _points(rows["loops"]) == ("2", "0", "2", "6", "timeout")
    assert f"time limit of {TIME_LIMIT} s" in rows["loops"]["reason"]
    assert "could not find your solution" in _feedback(out, "loops")
    assert max(g.seconds for g in grades) < TIME_LIMIT + 2 * 60


@pytest.mark.notebook
def test_an_invalid_file_gets_zero_and_a_reason(graded):
    out, _, rows, _ = graded
    assert _points(rows["broken"]) == ("0", "0", "0", "6", "invalid")
    assert "not valid JSON" in rows["broken"]["reason"]
    assert "not valid JSON" in _feedback(out, "broken")


@pytest.mark.notebook
def test_executed_copies_keep_the_students_cells_and_never_the_hidden_tests(graded):
    out, _, rows, _ = graded
    executed = sorted(p.stem for p in (out / "executed").glob("*.ipynb"))
    assert executed == sorted(set(rows) - {"broken"})
    for path in (out / "executed").glob("*.ipynb"):
        text = path.read_text(encoding="utf-8")
        assert "HIDDEN TESTS" not in text and "_seqlab_record_values" not in text


@pytest.mark.notebook
def test_written_answers_are_collected_for_the_instructor_with_the_model_answer(graded, course):
    out, _, _, log = graded
    _, _, student_copy = course
    sheet = (out / "written" / f"{NOTEBOOK}.md").read_text(encoding="utf-8")
    question = collect.load_assignment(config.REPO_ROOT / "notebooks" / f"{NOTEBOOK}.ipynb").questions[0]
    assert question.model_answer.splitlines()[0] in sheet and question.name in sheet
    quoted = "\n".join("> " + line for line in WRITTEN_ANSWER.splitlines())
    assert "**perfect** (`perfect.ipynb`)" in sheet and quoted in sheet
    assert "> (no answer)" in sheet  # the others left the placeholder
    assert "Model answer" not in _feedback(out, "perfect") and quoted in _feedback(out, "perfect")
    assert "Model answer" not in nbformat.writes(student_copy)
    assert "written answers to grade by hand" in log


@pytest.mark.notebook
def test_the_class_goes_to_canvas_and_moodle_files_with_the_same_points(graded):
    out, _, rows, log = graded
    with (out / "canvas.csv").open(newline="", encoding="utf-8") as handle:
        canvas = list(csv.reader(handle))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", NOTEBOOK]
    assert canvas[1][0].strip() == "Points Possible" and canvas[1][5] == "6"
    assert {row[2]: row[5] for row in canvas[2:]} == {s: r["total"] for s, r in rows.items()}
    assert all(r["written"] == "0" and r["written ungraded"] == "1" for r in rows.values())
    with (out / "moodle.csv").open(newline="", encoding="utf-8") as handle:
        assert len(list(csv.reader(handle))) == 1 + len(rows)
    assert "roster: every submission placed" in log and "canvas.csv, moodle.csv" in log


# --------------------------------------------------------------------- without a kernel


def test_the_build_records_the_assignment_in_the_copys_metadata(course):
    root, _, student_copy = course
    entry = student_copy.metadata["seqlab"]
    source = (root / "notebooks" / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8")
    assert entry == {"assignment": NOTEBOOK, "version": student_copies.source_version(source),
                     "commit": notebook_files.pinned_commit(next(
                         c.source for c in nbformat.reads(source, as_version=4).cells
                         if "setup" in c.metadata.get("tags", [])))}
    assert re.fullmatch("[0-9a-f]{40}", entry["commit"])


def test_points_and_checks_come_from_the_instructor_notebook(course):
    root, _, _ = course
    assignment = collect.load_assignment(root / "notebooks" / f"{NOTEBOOK}.ipynb")
    assert [(e.name, e.points) for e in assignment.exercises] == [(EXERCISE_1, 2.0),
                                                                  (EXERCISE_2, 1.0)]
    assert "### BEGIN HIDDEN TESTS" in assignment.exercises[1].check
    assert assignment.max_points == 3


def test_bad_points_are_refused(course, tmp_path):
    root, instructor, _ = course
    notebook = nbformat.from_dict(json.loads(json.dumps(instructor)))
    notebook.cells[exercise_cells(notebook)[EXERCISE_1][0]].metadata["seqlab"]["points"] = "two"
    nbformat.write(notebook, tmp_path / "bad.ipynb")
    with pytest.raises(ValueError, match="points = 'two'; expected a positive number"):
        collect.load_assignment(tmp_path / "bad.ipynb")


def test_submissions_are_matched_by_metadata_then_title_never_by_file_name(course, tmp_path):
    root, instructor, student_copy = course
    assignment = collect.load_assignment(root / "notebooks" / f"{NOTEBOOK}.ipynb")
    known = {NOTEBOOK: assignment}
    renamed = tmp_path / "homework (3).ipynb"
    nbformat.write(student_copy, renamed)
    assert collect.read_submission(renamed, known).assignment == NOTEBOOK

    lost_metadata = nbformat.from_dict(json.loads(json.dumps(student_copy)))
    del lost_metadata.metadata["seqlab"]
    nbformat.write(lost_metadata, tmp_path / "b.ipynb")
    submission = collect.read_submission(tmp_path / "b.ipynb", known)
    assert submission.assignment == NOTEBOOK and "title cell" in submission.notes[0]

    nbformat.write(instructor, tmp_path / f"{NOTEBOOK}.ipynb")  # right name, not a copy
    submission = collect.read_submission(tmp_path / f"{NOTEBOOK}.ipynb", known)
    assert submission.assignment is None and submission.status == collect.UNMATCHED


def test_an_older_copy_is_noted(course, tmp_path, monkeypatch):
    root, _, student_copy = course
    old = nbformat.from_dict(json.loads(json.dumps(student_copy)))
    old.metadata["seqlab"]["version"] = "000000000000"
    nbformat.write(old, tmp_path / "old.ipynb")
    known = {NOTEBOOK: collect.load_assignment(root / "notebooks" / f"{NOTEBOOK}.ipynb")}
    asked = []
    monkeypatch.setattr(collect, "library_changes", lambda commit, root: asked.append(commit) or [])
    assert collect.read_submission(tmp_path / "old.ipynb", known).notes == [
        "built from another version of the instructor notebook (000000000000; now "
        f"{known[NOTEBOOK].version}): cells may differ"]  # its commit's library grades it
    assert asked == [student_copy.metadata["seqlab"]["commit"]]
    monkeypatch.undo()
    old.metadata["seqlab"]["commit"] = "0" * 40  # a commit this checkout does not hold
    nbformat.write(old, tmp_path / "old.ipynb")
    note = collect.read_submission(tmp_path / "old.ipynb", known).notes[0]
    assert f"built with seqlab's commit {'0' * 40}, whose library differs" in note
    assert f"`git checkout {'0' * 40}` and grade again" in note


def _verdict(exercise, source, namespace, tmp_path):
    """Record the values in ``namespace`` (as the kernel does), then judge them (as the grader)."""
    path = tmp_path / f"values-{len(list(tmp_path.iterdir()))}.json"
    calls = verdicts.plan_calls(verdicts.hidden_part(source), verdicts.student_names(source))
    verdicts.record_values(exercise, verdicts.visible_part(source),
                           verdicts.student_names(source), calls, str(path), namespace=namespace)
    return verdicts.judge(exercise, source, verdicts.parse_values(path.read_text()))


ACCURACY_CHECK = "checks.check_accuracy_function(accuracy)\n" + (
    "### BEGIN HIDDEN TESTS\nassert accuracy([0.9], [1]) == 1.0, 'one review'\n"
    "### END HIDDEN TESTS")
ACCURACY_EXERCISE = "Exercise 5: accuracy"


def _accuracy(probabilities, labels, *, threshold_included=False):
    probabilities = np.asarray(probabilities).reshape(-1)
    positive = probabilities >= 0.5 if threshold_included else probabilities > 0.5
    return float(np.mean(positive == np.asarray(labels)))


def test_the_instructor_check_judges_the_values_recorded_from_the_students_code(tmp_path):
    right = {"accuracy": _accuracy, "checks": "a student's own checks"}
    verdict = _verdict(ACCURACY_EXERCISE, ACCURACY_CHECK, right, tmp_path)
    assert verdict["passed"] and verdict["message"].startswith("\u2713")
    assert right["checks"] == "a student's own checks"  # the namespace is not modified

    wrong = {"accuracy": lambda p, labels: _accuracy(p, labels, threshold_included=True)}
    verdict = _verdict(ACCURACY_EXERCISE, ACCURACY_CHECK, wrong, tmp_path)
    expected = _expected_failure(checks.check_accuracy_function, wrong["accuracy"])
    assert verdict == {"passed": False, "message": expected}

    verdict = _verdict(ACCURACY_EXERCISE, ACCURACY_CHECK, {}, tmp_path)
    assert not verdict["passed"] and "could not find your solution" in verdict["message"]


def test_hidden_tests_never_enter_the_kernel_only_their_calls_do():
    cell = verdicts.record_cell(ACCURACY_EXERCISE, ACCURACY_CHECK, "/tmp/v.json")
    assert "HIDDEN" not in cell and "one review" not in cell and "== 1.0" not in cell
    assert "['accuracy', [[0.9], [1]], {'__dict__': []}]" in cell  # the call, its arguments as data


def test_a_failing_hidden_test_is_reported_without_showing_it(tmp_path):
    source = "x = 1\n### BEGIN HIDDEN TESTS\nassert answer() == 42, 'the answer'\n### END HIDDEN TESTS"
    verdict = _verdict("Exercise 9: x", source, {"answer": lambda: 41}, tmp_path)
    assert verdict == {"passed": False,
                       "message": "\u2717 Exercise 9: x not passed yet: a hidden test failed: the answer"}
    assert _verdict("Exercise 9: x", source, {"answer": lambda: 42}, tmp_path)["passed"]


def test_a_kernel_that_forges_its_checks_records_values_not_verdicts(tmp_path):
    """Replacing seqlab.course.checks in the kernel changes what runs there; the grader judges anyway."""
    from seqlab.course.checks import imdb

    original = imdb.check_accuracy_function
    imdb.check_accuracy_function = lambda *_: print("\u2713 passed")  # what a submission may do
    try:
        import seqlab.course.checks as kernel_checks

        kernel_checks.check_accuracy_function = imdb.check_accuracy_function
        path = tmp_path / "v.json"
        verdicts.record_values(ACCURACY_EXERCISE, "checks.check_accuracy_function(accuracy)",
                               ["accuracy"], [], str(path),
                               namespace={"accuracy": lambda probabilities, labels: 0.5})
    finally:
        imdb.check_accuracy_function = original
        kernel_checks.check_accuracy_function = original
    values = verdicts.parse_values(path.read_text())
    verdict = verdicts.judge(ACCURACY_EXERCISE, ACCURACY_CHECK, values)
    assert not verdict["passed"] and "no result of your code" in verdict["message"]


def test_the_command_line_reports_a_missing_folder_or_notebook(tmp_path, capsys):
    assert cli.main(["grade", str(tmp_path / "nowhere")]) == 2
    assert "No submissions folder" in capsys.readouterr().err
    assert cli.main(["grade", str(tmp_path), "--notebook", "99"]) == 2
    assert "matches no notebook" in capsys.readouterr().err


def test_structure_notes_name_deleted_moved_and_edited_cells(course):
    _, _, student_copy = course
    submission = nbformat.from_dict(json.loads(json.dumps(student_copy)))
    cells = exercise_cells(submission)
    submission.cells[cells[EXERCISE_2][1]].source = "print('passed')"
    del submission.cells[cells[EXERCISE_1][1]]
    assert collect.structure_notes(submission, student_copy) == [
        "deleted: a check cell",
        "check cells edited: 1 (grading ran the instructor's checks, not these)"]
    submission.cells.insert(1, submission.cells.pop(cells[EXERCISE_1][0]))
    assert "code cells were reordered" in collect.structure_notes(submission, student_copy)
    assert collect.structure_notes(student_copy, student_copy) == []


def test_collect_skips_its_own_output_and_keeps_students_with_the_same_id_apart(course, tmp_path):
    root, _, student_copy = course
    known = {NOTEBOOK: collect.load_assignment(root / "notebooks" / f"{NOTEBOOK}.ipynb")}
    named = nbformat.from_dict(json.loads(json.dumps(student_copy)))
    named.cells[exercise_cells(named)[EXERCISE_1][0]].source += '\nSTUDENT_ID = "ada"'
    for name in ("a.ipynb", "b.ipynb", "grades/executed/ada.ipynb"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(named, tmp_path / name)
    graded, skipped = collect.collect(tmp_path, known, NOTEBOOK,
                                      exclude=(tmp_path / "grades").resolve())
    assert [(s.path.name, s.student) for s in graded] == [("a.ipynb", "ada"), ("b.ipynb", "ada-2")]
    assert skipped == [] and "already had student id 'ada'" in graded[1].notes[0]


def test_what_the_submission_wrote_is_read_as_untrusted_data(tmp_path):
    from seqlab.course.checks.transcript import decode
    from seqlab_instructor.homework.run import read_untrusted

    work, host = tmp_path / "work", tmp_path / "host"
    work.mkdir()
    host.mkdir()
    (host / "0.json").write_text("instructor's secret")
    (work / "values").symlink_to(host)  # a folder link planted by the submission
    with pytest.raises(ValueError, match="through a link"):
        read_untrusted(work / "values" / "0.json", root=work)
    (work / "direct.json").symlink_to(host / "0.json")
    with pytest.raises(ValueError, match="through a link"):
        read_untrusted(work / "direct.json", root=work)
    with pytest.raises(ValueError, match="not written"):
        read_untrusted(work / "direct.json")  # without a root, a link is still refused
    (work / "big.json").write_text("x" * 2000)
    with pytest.raises(ValueError, match="larger than"):
        read_untrusted(work / "big.json", 1000, work)
    with pytest.raises(ValueError, match="not allowed"):
        decode({"__ndarray__": ["a"], "dtype": "<U100000000", "shape": [1]})
    with pytest.raises(ValueError, match="not JSON|names and entries"):
        verdicts.parse_values('{"names": []}')


# ------------------------------------------------------------------ written answers

QUESTION = "Question 1: why the mask"
MODEL_ANSWER = "**Model answer.** The mask hides the future.\n\n**Rubric.** 1 point: the mask."


def _written_cell(text):
    return nbformat.v4.new_markdown_cell(text, metadata={
        "tags": ["written"], "seqlab": {"question": QUESTION, "points": 2}})


def test_written_questions_come_from_the_instructor_notebook(tmp_path):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("**Question 1.** Why the mask?"),
                      _written_cell(f"### BEGIN SOLUTION\n{MODEL_ANSWER}\n### END SOLUTION")]
    nbformat.write(notebook, tmp_path / "99_test.ipynb")
    (question,) = collect.load_assignment(tmp_path / "99_test.ipynb").questions
    assert question == collect.WrittenQuestion(QUESTION, 2.0, "**Question 1.** Why the mask?",
                                               MODEL_ANSWER)


def test_written_answers_reach_the_instructors_sheet_and_the_students_feedback(tmp_path):
    from seqlab_instructor.homework import report

    question = collect.WrittenQuestion(QUESTION, 2.0, "**Question 1.** Why the mask?",
                                       MODEL_ANSWER)
    assignment = collect.Assignment("99_test", tmp_path / "99_test.ipynb", "v", [], [question])
    answered, untouched = nbformat.v4.new_notebook(), nbformat.v4.new_notebook()
    answered.cells = [_written_cell("It stops the decoder\nfrom peeking.")]
    untouched.cells = [_written_cell(student_copies.WRITTEN_PLACEHOLDER)]
    assert collect.written_answers(answered, assignment) == {
        QUESTION: "It stops the decoder\nfrom peeking."}
    assert collect.written_answers(untouched, assignment) == {QUESTION: ""}
    assert collect.written_answers(nbformat.v4.new_notebook(), assignment) == {QUESTION: ""}

    grades = [report.Grade("ana", "ana.ipynb", "99_test", [], "ok",
                           written=collect.written_answers(answered, assignment)),
              report.Grade("bo", "bo.ipynb", "99_test", [], "ok",
                           written=collect.written_answers(untouched, assignment))]
    markdown, table = report.write_written_sheets(grades, {"99_test": assignment}, tmp_path)
    sheet = markdown.read_text(encoding="utf-8")
    assert MODEL_ANSWER in sheet and "Why the mask?" in sheet
    assert sheet.index("**ana**") < sheet.index("**bo**")
    assert "> It stops the decoder\n> from peeking." in sheet and "> (no answer)" in sheet
    with table.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["student"], r["answer"], r["max"], r["points"]) for r in rows] == [
        ("ana", "It stops the decoder\nfrom peeking.", "2", ""), ("bo", "", "2", "")]
    feedback = report.write_feedback(grades[0], tmp_path).read_text(encoding="utf-8")
    assert "It stops the decoder" in feedback and "graded by your instructor" in feedback
    assert "Model answer" not in feedback


# ------------------------------------------------------------------ resuming a stopped run


def _descendants(pid: int) -> set[int]:
    parents = {}
    for status in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = status.read_text().rsplit(")", 1)[1].split()
            parents[int(status.parent.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _outputs(out: Path) -> dict[str, str]:
    """Every output file's text; executed copies as their cells' sources and the HTML as its
    text with numbers and temporary folder masked (both hold the run's own timings, folder and
    chunks of output); kept grades without their seconds and key."""
    found = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            text = json.dumps([(c["cell_type"], c["source"]) for c in json.loads(text)["cells"]])
        elif path.suffix == ".html":  # its text; a run's output comes in chunks of any size
            text = re.sub(r"seqlab-grade-[\w.-]+", "seqlab-grade-", re.sub(r"<[^>]*>", "", text))
            text = re.sub(r"\d+", "0", "".join(text.split()))
        elif path.parent.name == grade.PROGRESS_DIR:
            kept = json.loads(text)["grade"]  # not its key: the third run changes a file
            kept.pop("seconds")
            text = json.dumps(kept, sort_keys=True)
        found[str(path.relative_to(out))] = text
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
def test_a_grading_run_stopped_by_ctrl_c_resumes_and_ends_as_an_uninterrupted_one(
        course, graded, tmp_path):
    root, _, _ = course
    folder = tmp_path / "submissions"
    folder.mkdir()
    for name in ("broken", "one_solved", "perfect", "wrong"):
        shutil.copy(root / "submissions" / f"{name}.ipynb", folder)
    options = ["--notebook", "01", "--notebooks", str(root / "notebooks"), "--sandbox", "none",
               "--timeout", str(TIME_LIMIT), "--check-timeout", "60", "--jobs", "2"]
    reference = tmp_path / "uninterrupted"
    assert cli.main(["grade", str(folder), "--out", str(reference), *options]) == 0

    out = tmp_path / "resumed"
    command = [sys.executable, "-m", "seqlab_instructor.homework", "grade", str(folder),
               "--out", str(out), *options]
    # As a terminal's Ctrl-C: SIGINT to the grader's whole process group, once one
    # submission is kept and another one's kernel is running. A terminal's foreground command
    # handles SIGINT, but this test may run under a process that ignores it (a job a shell
    # without job control started in the background), which a child inherits: the grader gets
    # the default back.
    grader = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 600
    while not list((out / grade.PROGRESS_DIR).glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.5)
    running = _descendants(grader.pid)
    assert running, "a submission's run should still be going"
    os.killpg(grader.pid, signal.SIGINT)
    stdout, stderr = grader.communicate(timeout=120)
    assert grader.returncode == 130, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr  # one line, no traceback
    line = lines[0]
    assert re.fullmatch(r"interrupted: [23] of 4 submissions graded and kept in .*; run the "
                        r"same command again to grade the other [12]", line), line
    deadline = time.monotonic() + 15  # a kernel notices its parent is gone within a second
    while [pid for pid in running if _alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not [pid for pid in running if _alive(pid)], "a process outlived the grader"

    again = subprocess.run(command, capture_output=True, text=True, timeout=900, check=True)
    kept = [line for line in again.stdout.splitlines() if "kept from an earlier run" in line]
    assert 1 <= len(kept) <= 2, again.stdout
    assert _outputs(out) == _outputs(reference)

    # A changed submission is graded again; the unchanged ones keep their verdicts.
    with (folder / "wrong.ipynb").open("a", encoding="utf-8") as handle:
        handle.write("\n")
    third = subprocess.run(command, capture_output=True, text=True, timeout=900, check=True)
    kept = {line.split(":")[0].strip() for line in third.stdout.splitlines()
            if "kept from an earlier run" in line}
    assert kept == {"s1234", "perfect"}, third.stdout  # one_solved names its student
    assert _outputs(out) == _outputs(reference)
