"""HTML feedback: each exercise's verdict under its cell, banners, and nothing of the student's runs.

The fast tests render executed copies built here (the student copy of notebook 01 with
outputs added) and the grades the grader would give them; the end-to-end test (marked
``notebook``) grades three real submissions of notebook 01 and reads the pages it writes.
"""

from __future__ import annotations

from html.parser import HTMLParser

import nbformat
import pytest

from seqlab import config
from seqlab_instructor.cells import EXERCISE_TAG, exercise_name, has_tag
from seqlab_instructor.homework import feedback_html
from seqlab_instructor.homework.report import ERROR, OK, TIMEOUT, ExerciseResult, Grade

NOTEBOOK = "01_imdb_pretrained_embedding"
EXERCISE_1 = "Exercise 1: shuffled words into the frozen classifier"
EXERCISE_2 = "Exercise 2: accuracy from predicted probabilities"
PASSED = ["\u2713 Exercise 1: shuffled words into the frozen classifier passed.",
          "\u2713 Exercise 2: accuracy from predicted probabilities passed."]
HOSTILE_MARKDOWN = ('Nice <script>alert("markdown")</script> <img src=x onerror="alert(1)"> '
                    '[link](javascript:alert(2)) <div class="seqlab-box seqlab-pass">\u2713 fake'
                    '</div> <iframe src="https://example.com"></iframe> <svg onload=alert(3)>')


class _Elements(HTMLParser):
    """Every start tag of a page with its attributes (what a browser would build)."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _elements(page: str) -> list[tuple[str, dict]]:
    parser = _Elements()
    parser.feed(page)
    return parser.tags


def _student_copy():
    return nbformat.read(config.REPO_ROOT / "assignments" / f"{NOTEBOOK}.ipynb", as_version=4)


def _exercise_cells(notebook) -> dict[str, int]:
    return {exercise_name(c): i for i, c in enumerate(notebook.cells)
            if has_tag(c, EXERCISE_TAG)}


def _grade(tmp_path, name, notebook, results, status=OK, reason=""):
    path = tmp_path / "executed" / f"{name}.ipynb"
    path.parent.mkdir(exist_ok=True)
    if notebook is not None:
        nbformat.write(notebook, path)
    return Grade(name, f"{name}.ipynb", NOTEBOOK, results, status, reason,
                 executed=path if notebook is not None else None)


def _page(tmp_path, grade) -> str:
    return feedback_html.write_feedback_html(grade, tmp_path).read_text(encoding="utf-8")


def _box_after_its_cell(page: str, function: str, exercise: str, points: str):
    """The exercise's box comes after its cell's code and before the next cell's code."""
    notebook = page.index("Your notebook as it ran")
    code = page.index(f"{function}</span>", notebook)
    box = page.index(f"{exercise}: {points} points", notebook)
    next_cell = page.index("<div class=\"cell", page.index("</div>", code))
    assert code < box, f"the box of {exercise} comes before its cell"
    assert box < page.index("<div class=\"cell", next_cell + 1), "the box is not under its cell"
    return box


def test_a_solved_submission_shows_each_verdict_under_its_exercise(tmp_path):
    grade = _grade(tmp_path, "solved", _student_copy(), [
        ExerciseResult(EXERCISE_1, 2.0, 2.0, True, PASSED[0]),
        ExerciseResult(EXERCISE_2, 1.0, 1.0, True, PASSED[1])])
    page = _page(tmp_path, grade)
    first = _box_after_its_cell(page, "accuracy_with_shuffled_words", EXERCISE_1, "2 / 2")
    second = _box_after_its_cell(page, "accuracy_from_probabilities", EXERCISE_2, "1 / 1")
    assert first < second and "seqlab-banner" not in page.split("</style>")[1]
    assert PASSED[0] in page and PASSED[1] in page and "<strong>3 / 3</strong>" in page
    assert page.count("class='seqlab-box seqlab-pass'") == 2


def test_an_unsolved_submission_shows_each_checks_message_and_zero_points(tmp_path):
    message = ("\u2717 Exercise 2: accuracy from predicted probabilities not passed yet: "
               "the solution is still the placeholder <NotImplementedError>.")
    grade = _grade(tmp_path, "unsolved", _student_copy(), [
        ExerciseResult(EXERCISE_1, 0.0, 2.0, False, "\u2717 Exercise 1 not passed yet: x"),
        ExerciseResult(EXERCISE_2, 0.0, 1.0, False, message)])
    page = _page(tmp_path, grade)
    box = _box_after_its_cell(page, "accuracy_from_probabilities", EXERCISE_2, "0 / 1")
    assert "&lt;NotImplementedError&gt;" in page[box:] and "<NotImplementedError>" not in page
    assert page.count("class='seqlab-box seqlab-fail'") == 2


def test_a_timed_out_submission_gets_a_banner_and_a_box_where_it_stopped(tmp_path):
    notebook = _student_copy()
    cells = _exercise_cells(notebook)
    stop = cells[EXERCISE_2]
    reason = f"time limit of 90 s reached in cell {stop}"
    grade = _grade(tmp_path, "loops", notebook, [
        ExerciseResult(EXERCISE_1, 2.0, 2.0, True, PASSED[0]),
        ExerciseResult(EXERCISE_2, 0.0, 1.0, False, "\u2717 Exercise 2 not passed yet: "
                       "the grader could not find your solution")], TIMEOUT, reason)
    page = _page(tmp_path, grade)
    body = page.split("</style>")[1]
    assert "class='seqlab-banner'" in body and "reached the time limit" in body
    assert body.index("seqlab-banner") < body.index("Your notebook as it ran")
    stopped = body.index("Here: Your notebook did not finish: it reached the time limit")
    code = body.index("accuracy_from_probabilities</span>")
    assert code < stopped < body.index("could not find your solution", code)


def test_a_cell_that_raised_and_a_stop_before_a_cell_are_marked_there(tmp_path):
    notebook = _student_copy()
    stop = _exercise_cells(notebook)[EXERCISE_1]
    for status, reason, words in [
            (ERROR, f"cell {stop} raised ValueError: bad", "Here: A cell raised an error"),
            (TIMEOUT, f"time limit of 90 s reached before cell {stop}",
             "The run stopped before this cell")]:
        grade = _grade(tmp_path, "stopped", notebook, [
            ExerciseResult(EXERCISE_1, 0.0, 2.0, False, "\u2717 no")], status, reason)
        body = _page(tmp_path, grade).split("</style>")[1]
        code = body.index("accuracy_with_shuffled_words</span>")
        assert (body.index(words) < code) == (status == TIMEOUT), status


def test_an_unreadable_file_gets_a_page_without_a_notebook(tmp_path):
    grade = _grade(tmp_path, "broken", None, [
        ExerciseResult(EXERCISE_1, 0.0, 2.0, False, "\u2717 not graded: not valid JSON"),
        ExerciseResult(EXERCISE_2, 0.0, 1.0, False, "\u2717 not graded: not valid JSON")],
        "invalid", "not valid JSON (Expecting value)")
    page = _page(tmp_path, grade)
    assert "could not be read as a notebook" in page and "No executed copy" in page
    assert page.count("not graded: not valid JSON") == 2 and "0 / 2" in page


def test_a_deleted_exercise_cell_is_listed_apart(tmp_path):
    notebook = _student_copy()
    del notebook.cells[_exercise_cells(notebook)[EXERCISE_2]]
    grade = _grade(tmp_path, "deleted", notebook, [
        ExerciseResult(EXERCISE_2, 0.0, 1.0, False, "\u2717 could not find your solution")])
    page = _page(tmp_path, grade)
    assert page.index("Exercises not found in your notebook") < page.index(
        f"\u2717 {EXERCISE_2}: 0 / 1 points") < page.index("Your notebook as it ran")


def test_nothing_a_hostile_submission_wrote_can_run_in_its_page(tmp_path):
    notebook = _student_copy()
    notebook.cells.insert(1, nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN))
    shown = nbformat.v4.new_code_cell('display(HTML("<script>alert(4)</script>"))')
    shown.outputs = [
        nbformat.v4.new_output("display_data", data={
            "text/html": "<script>alert(4)</script><img src=x onerror=alert(5)>",
            "application/javascript": "alert(6)", "image/svg+xml": "<svg onload=alert(7)/>",
            "text/plain": "<IPython.core.display.HTML object>"}),
        nbformat.v4.new_output("stream", text="<script>alert(8)</script>\n"),
        nbformat.v4.new_output("error", ename="ValueError", evalue="<img src=x onerror=alert(9)>",
                               traceback=["<script>alert(10)</script>"])]
    notebook.cells.insert(2, shown)
    notebook.cells.insert(3, nbformat.v4.new_raw_cell(
        "<script>alert(11)</script>", metadata={"raw_mimetype": "text/html"}))
    notebook.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"x": 1}}
    grade = _grade(tmp_path, "hostile", notebook, [
        ExerciseResult(EXERCISE_2, 0.0, 1.0, False, "\u2717 the check raised ValueError: "
                       "<script>alert(12)</script>")])
    grade.student = '<img src=x onerror=alert(13)>'
    grade.notes = ["<script>alert(14)</script>"]
    page = _page(tmp_path, grade)
    elements = _elements(page)
    names = {tag for tag, _ in elements}
    assert not names & {"script", "iframe", "svg", "object", "embed", "form", "base", "link"}
    for tag, attributes in elements:
        assert not [a for a in attributes if a.startswith("on") or a == "style"], (tag, attributes)
        for name in ("href", "src"):
            value = (attributes.get(name) or "").strip().lower()
            assert not value.startswith(("javascript:", "data:text", "vbscript:")), value
            if tag == "img" and value:
                assert value.startswith("data:image/"), value
    policy = [a["content"] for t, a in elements if a.get("http-equiv") == "Content-Security-Policy"]
    assert policy == [feedback_html.CSP] and "script-src" not in policy[0]
    assert "default-src 'none'" in policy[0]
    # What the student wrote is still there for them to read, as text.
    assert "&lt;script&gt;alert(8)&lt;/script&gt;" in page and "alert(5)" not in page
    assert "[output of type application/javascript, image/svg+xml, text/html not shown]" not in page
    assert "&lt;IPython.core.display.HTML object&gt;" in page
    # The student cannot forge the grader's boxes.
    boxes = [a for t, a in elements if "seqlab" in a.get("class", "")]
    assert [a["class"] for a in boxes] == ["seqlab-box seqlab-fail"]
    _box_after_its_cell(page, "accuracy_from_probabilities", EXERCISE_2, "0 / 1")


def test_outputs_keep_only_text_and_bitmaps():
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": "<b>x</b>"})]
    notebook.cells = [cell]
    feedback_html._safe_outputs(notebook)
    assert cell.outputs[0]["data"] == {"text/plain": "[output of type text/html not shown]"}


@pytest.mark.notebook
def test_the_grader_writes_a_page_per_submission(tmp_path):
    from seqlab_instructor.homework import grade as grading

    folder = tmp_path / "submissions"
    folder.mkdir()
    copy = _student_copy()
    copy.cells.insert(1, nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN))
    nbformat.write(copy, folder / "hostile.ipynb")
    out = tmp_path / "grades"
    grades = grading.grade(folder, out, notebook="01", time_limit=120, check_timeout=60,
                           jobs=1, sandbox="none", log=lambda *_: None)
    page = (out / "feedback" / "hostile.html").read_text(encoding="utf-8")
    assert grades[0].status == OK and "script" not in {t for t, _ in _elements(page)}
    assert "the solution is still the placeholder" in page
    second = next(r for r in grades[0].results if r.name == EXERCISE_2)
    _box_after_its_cell(page, "accuracy_from_probabilities", EXERCISE_2,
                        f"0 / {second.max_points:g}")
