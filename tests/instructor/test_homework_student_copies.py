"""Student copies: generated with nbgrader's preprocessors, in sync with notebooks/."""

import nbformat
import pytest

from seqlab import config
from seqlab_instructor.homework import student_copies
from seqlab_instructor.notebook_files import BADGE_IMAGE, colab_badge, setup_cell_source

SOLVED = '''def causal_mask(length):
    """Exercise body."""
    ### BEGIN SOLUTION
    return "the answer"
    ### END SOLUTION'''

CHECK = '''seqlab.course.checks.check_something(causal_mask)
### BEGIN HIDDEN TESTS
assert causal_mask(3) == "the answer"
### END HIDDEN TESTS'''


def _instructor_notebook(folder):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    exercise = nbformat.v4.new_code_cell(
        SOLVED, metadata={"tags": ["exercise"], "seqlab": {"exercise": "Exercise 2: the causal mask"}})
    exercise.outputs = [nbformat.v4.new_output("stream", text="old output")]
    exercise.execution_count = 3
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# 99 · Test\n[![Open In Colab]({BADGE_IMAGE})](x)\nIntro."),
        nbformat.v4.new_code_cell("FAST = True\nSIZE = None",
                                  metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(setup_cell_source("99", "0" * 40), metadata={"tags": ["setup"]}),
        nbformat.v4.new_markdown_cell("## Exercises"),
        exercise,
        nbformat.v4.new_code_cell(CHECK, metadata={"tags": ["check"]}),
    ]
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / "99_test.ipynb")


@pytest.fixture
def student_copy(tmp_path):
    _instructor_notebook(tmp_path / "notebooks")
    copies = student_copies.build(tmp_path / "notebooks", tmp_path / "assignments", root=tmp_path)
    (path, text), = copies.items()
    return path, nbformat.reads(text, as_version=4)


def test_solution_region_becomes_a_named_placeholder(student_copy):
    _, nb = student_copy
    source = nb.cells[4].source
    assert "the answer" not in source
    assert ('    raise NotImplementedError("Exercise 2: the causal mask: replace this line with '
            'your solution.")') in source
    assert source.startswith('def causal_mask(length):\n    """Exercise body."""')


def test_hidden_tests_are_removed_and_the_visible_check_kept(student_copy):
    _, nb = student_copy
    assert nb.cells[5].source.strip() == "seqlab.course.checks.check_something(causal_mask)"


def test_outputs_cleared_and_exercise_cells_allowed_to_fail(student_copy):
    _, nb = student_copy
    assert nb.cells[4].outputs == [] and nb.cells[4].execution_count is None
    assert "raises-exception" in nb.cells[4].metadata.tags
    assert "raises-exception" in nb.cells[5].metadata.tags
    assert "raises-exception" not in nb.cells[2].metadata.tags


def test_everything_else_is_identical_and_the_badge_points_at_the_copy(student_copy, tmp_path):
    path, nb = student_copy
    assert path == tmp_path / "assignments" / "99_test.ipynb"
    original = nbformat.read(tmp_path / "notebooks" / "99_test.ipynb", as_version=4)
    for index in (1, 2, 3):
        assert nb.cells[index].source == original.cells[index].source
    title = nb.cells[0].source
    assert colab_badge("assignments/99_test.ipynb") in title
    assert "Student copy" in title and "notebooks/99_test.ipynb" in title


def test_a_notebook_without_exercises_is_refused(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# t " + BADGE_IMAGE)]
    nbformat.write(nb, folder / "98_empty.ipynb")
    with pytest.raises(ValueError, match="no cell tagged 'exercise'"):
        student_copies.build(folder, tmp_path / "assignments", root=tmp_path)


def test_stale_copies_are_detected(tmp_path, student_copy):
    path, _ = student_copy
    copies = {path: "fresh"}
    assert student_copies.stale_copies(copies, path.parent) == [str(path)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("fresh")
    (path.parent / "00_orphan.ipynb").write_text("{}")
    assert student_copies.stale_copies(copies, path.parent) == [str(path.parent / "00_orphan.ipynb")]


def test_committed_student_copies_are_in_sync_with_the_notebooks():
    stale = student_copies.stale_copies(student_copies.build(), config.REPO_ROOT / "assignments")
    assert stale == [], (
        f"assignments/ is stale ({stale}): run `python -m seqlab_instructor.homework build` and commit."
    )


# ------------------------------------------------------------------ written questions

WRITTEN = """### BEGIN SOLUTION
**Model answer.** Because the mask hides the future.

**Rubric.** 1 point: names the mask; 1 point: says why.
### END SOLUTION"""


def _with_written_question(folder, written_source=WRITTEN, cell_type="markdown", label=True):
    _instructor_notebook(folder)
    path = folder / "99_test.ipynb"
    nb = nbformat.read(path, as_version=4)
    metadata = {"tags": ["written"],
                "seqlab": {"question": "Question 1: why the mask", "points": 2} if label else {}}
    make = nbformat.v4.new_markdown_cell if cell_type == "markdown" else nbformat.v4.new_code_cell
    nb.cells += [nbformat.v4.new_markdown_cell("**Question 1.** Why does the mask matter?"),
                 make(written_source, metadata=metadata)]
    nbformat.write(nb, path)


def test_a_written_question_keeps_its_prompt_and_loses_its_model_answer(tmp_path):
    _with_written_question(tmp_path / "notebooks")
    (_, text), = student_copies.build(tmp_path / "notebooks", tmp_path / "assignments",
                                      root=tmp_path).items()
    nb = nbformat.reads(text, as_version=4)
    prompt, answer = nb.cells[-2], nb.cells[-1]
    assert "Why does the mask matter?" in prompt.source
    assert answer.source.strip() == student_copies.WRITTEN_PLACEHOLDER
    assert "Model answer" not in text and "Rubric" not in text and "hides the future" not in text
    assert answer.metadata["tags"] == ["written"]  # the grader finds the student's answer by it
    assert answer.metadata["seqlab"]["question"] == "Question 1: why the mask"


@pytest.mark.parametrize("change, message", [
    ({"written_source": "**Model answer.** out in the open"}, "BEGIN SOLUTION"),
    ({"cell_type": "code"}, "must be a markdown cell"),
    ({"label": False}, "metadata.seqlab.question"),
])
def test_a_written_question_without_label_region_or_markdown_is_refused(tmp_path, change, message):
    _with_written_question(tmp_path / "notebooks", **change)
    with pytest.raises(ValueError, match=message):
        student_copies.build(tmp_path / "notebooks", tmp_path / "assignments", root=tmp_path)


# ------------------------------------------------------------------ giveaways

#: A package function that computes what the exercise asks (any importable function will do).
TWIN = "seqlab_instructor.homework.giveaways.normalise"
LESSON_SHOWS_TWIN = "import inspect\nfrom seqlab_instructor.homework import giveaways\nprint(inspect.getsource(giveaways.normalise))"
LESSON_SHOWS_OTHER = "import inspect\nfrom seqlab_instructor.homework import giveaways\nprint(inspect.getsource(giveaways.source_of))"
LESSON_WRITES_SOLUTION = 'def helper(length):\n    return "the answer"  # the lesson wrote it out'
LONG_SOLUTION = '''def causal_mask(length):
    """Exercise body."""
    ### BEGIN SOLUTION
    return "the answer"
    ### END SOLUTION'''


def _notebook_with_lesson_cell(folder, lesson_source, same_as=()):
    _instructor_notebook(folder)
    path = folder / "99_test.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[4].metadata["seqlab"]["same_as"] = list(same_as)
    nb.cells[4].source = LONG_SOLUTION.replace('"the answer"', '"the answer" * length')
    nb.cells.insert(3, nbformat.v4.new_code_cell(lesson_source))
    nbformat.write(nb, path)


@pytest.mark.parametrize("lesson, same_as, shown", [
    (LESSON_SHOWS_TWIN, [TWIN], "displays the source of giveaways.normalise"),
    (LESSON_WRITES_SOLUTION.replace('"the answer"', '"the answer" * length'), [],
     "holds the solution's lines"),
    ("from seqlab_instructor.homework.giveaways import normalise", [TWIN],
     "imports normalise, which computes the answer"),
    ("from seqlab_instructor.homework.giveaways import normalise as tidy", [TWIN],
     "imports normalise as tidy, which computes the answer"),
    ("from seqlab_instructor.homework.giveaways import source_of", [TWIN], None),
    (LESSON_SHOWS_OTHER, [TWIN], None),
    (LESSON_SHOWS_TWIN, [], None),
])
def test_the_build_refuses_a_copy_that_shows_an_answer(tmp_path, lesson, same_as, shown):
    _notebook_with_lesson_cell(tmp_path / "notebooks", lesson, same_as)
    if shown is None:
        student_copies.build(tmp_path / "notebooks", tmp_path / "assignments", root=tmp_path)
        return
    with pytest.raises(ValueError, match="would show exercise answers") as refused:
        student_copies.build(tmp_path / "notebooks", tmp_path / "assignments", root=tmp_path)
    assert shown in str(refused.value) and "Exercise 2: the causal mask" in str(refused.value)


def test_an_executed_copy_that_prints_a_same_as_source_is_caught(tmp_path):
    from seqlab_instructor.homework import giveaways

    _notebook_with_lesson_cell(tmp_path / "notebooks", "print(text)", [TWIN])
    instructor = nbformat.read(tmp_path / "notebooks" / "99_test.ipynb", as_version=4)
    (_, text), = student_copies.build(tmp_path / "notebooks", tmp_path / "assignments",
                                      root=tmp_path).items()
    executed = nbformat.reads(text, as_version=4)
    assert giveaways.answers_shown(instructor, executed, executed) == []
    executed.cells[3].outputs = [nbformat.v4.new_output(
        "display_data", data={"text/html": "<pre>" + "</span>\n".join(
            giveaways.source_of(giveaways.normalise).splitlines()) + "</pre>"})]
    assert giveaways.answers_shown(instructor, executed, executed) == [
        f"Exercise 2: the causal mask: cell 3 prints the source of {TWIN}"]


def test_a_same_as_name_that_does_not_exist_is_an_error(tmp_path):
    _notebook_with_lesson_cell(tmp_path / "notebooks", "x = 1", ["seqlab.no_such_module.f"])
    with pytest.raises(ImportError, match="seqlab.no_such_module.f"):
        student_copies.build(tmp_path / "notebooks", tmp_path / "assignments", root=tmp_path)


@pytest.mark.parametrize("lines, text, expected", [
    (["return ops.einsum('btq,qv,biv->bti', h, W, y)"], "x = 1\nreturn ops.einsum('btq,qv,biv->bti',  h, W, y)  # c", True),
    (["first significant line", "second significant line"], "first significant line", True),
    (["first significant line", "second significant line", "third significant line"],
     "first significant line", False),
    ([], "anything", False),
])
def test_gives_away_needs_half_the_answers_lines(lines, text, expected):
    from seqlab_instructor.homework.giveaways import gives_away

    assert gives_away(lines, text) is expected
