"""Student copies: generated with nbgrader's preprocessors, in sync with notebooks/."""

import nbformat
import pytest

from seqlab import config
from seqlab.homework import student_copies
from seqlab.notebook_files import BADGE_IMAGE, colab_badge, setup_cell_source

SOLVED = '''def causal_mask(length):
    """Exercise body."""
    ### BEGIN SOLUTION
    return "the answer"
    ### END SOLUTION'''

CHECK = '''seqlab.checks.check_something(causal_mask)
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
        nbformat.v4.new_code_cell(setup_cell_source(), metadata={"tags": ["setup"]}),
        nbformat.v4.new_code_cell("FAST = True", metadata={"tags": ["parameters"]}),
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
    assert nb.cells[5].source.strip() == "seqlab.checks.check_something(causal_mask)"


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
        f"assignments/ is stale ({stale}): run `python -m seqlab.homework build` and commit."
    )
