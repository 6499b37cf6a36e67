"""The similarity report: renamed copies found, independent solutions left alone, safe output.

The solutions are the benchmark's (``benchmarks/similarity_solutions/``: independent solutions
written by hand; copies derived by renaming, new comments, spacing and reordered functions).
"""

from __future__ import annotations

import csv
import sys

import nbformat
import pytest

from seqlab import config
from seqlab_instructor.homework import similarity

pytest.importorskip("copydetect")
sys.path.insert(0, str(config.REPO_ROOT))  # benchmarks/ is a package at the repository root
from benchmarks import similarity as benchmark  # noqa: E402
from seqlab_instructor.homework.student_copies import make_student_copy  # noqa: E402

NOTEBOOK = "08_pretrained_transformers"
EXERCISE = "Exercise 1: the 80/10/10 masking rule"


def test_cleaning_drops_magics_imports_and_the_student_id_not_the_code():
    source = ('%time\nimport numpy as np\nfrom keras import ops  # ops\nSTUDENT_ID = "ada"\n\n'
              'def f(x):\n    """Doc."""\n    return np.sum( x ,axis=0)  # sum\n')
    assert similarity.clean(source).strip() == (
        'def f(x):\n    """Doc."""\n    return np.sum( x ,axis=0)  # sum')
    assert similarity.normalise(source, rename=False) == "def f(x):\n    return np.sum(x, axis=0)"
    assert similarity.normalise(source) == "def v(v):\n{return np.sum(v,axis=0)\n}"
    assert similarity.normalise("def broken(:\n  x = 1  # c") == "def broken(:\nx = 1"


@pytest.mark.parametrize("key", ["03_ex1", "08_ex1"])
def test_renamed_and_reordered_copies_are_flagged_and_independent_solutions_are_not(key):
    """03 Ex. 1 and 08 Ex. 1 are the benchmark's closest independent solutions."""
    scored = benchmark.scored_pairs(key)
    copies = [pair for pair, is_copy in scored if is_copy]
    independent = [pair for pair, is_copy in scored if not is_copy]
    assert len(copies) == 24 and len(independent) == 96
    assert all(pair.similarity >= similarity.THRESHOLD for pair in copies)
    assert max(pair.similarity for pair in independent) < similarity.THRESHOLD
    hits, false, missed, precision, recall = benchmark.precision_recall(scored, similarity.THRESHOLD)
    assert (hits, false, missed, precision, recall) == (24, 0, 0, 1.0, 1.0)


def test_a_derived_copy_differs_in_names_comments_and_order():
    original = (benchmark.SOLUTIONS / "08_ex1" / "d_band_helper.txt").read_text(encoding="utf-8")
    copy = benchmark.derive_copy(original, {"apply_masking", "self"}, 1, reorder=True)
    assert "_band" not in copy and "replaced" not in copy and "apply_masking" in copy
    assert copy.index("def apply_masking") < copy.rindex("def ")  # the helper moved below
    assert copy.count("#") == original.count("#") + 1  # comments rewritten, one added


def test_starter_code_alone_is_not_similar():
    starter = "def f(x):\n    raise NotImplementedError('Exercise 1')\n"
    pairs = similarity.compare({"a": starter, "b": starter}, starter)
    assert [(p.share_a, p.share_b) for p in pairs] == [(0.0, 0.0)]
    assert similarity.compare({"a": starter}, starter) == []


def _submission(copy, folder, name, source, student_id):
    notebook = nbformat.reads(nbformat.writes(copy), as_version=4)
    cell = next(c for c in notebook.cells if similarity.exercise_name(c) == EXERCISE)
    cell.source = source + f'\n\nSTUDENT_ID = "{student_id}"'
    nbformat.write(notebook, folder / f"{name}.ipynb")


def test_the_report_lists_the_copied_pair_escaped_in_csv_and_html(tmp_path):
    instructor = config.REPO_ROOT / "notebooks" / f"{NOTEBOOK}.ipynb"
    copy = make_student_copy(nbformat.read(instructor, as_version=4),
                             f"notebooks/{NOTEBOOK}.ipynb", f"assignments/{NOTEBOOK}.ipynb")
    folder = tmp_path / "submissions"
    folder.mkdir()
    solutions = benchmark.SOLUTIONS / "08_ex1"
    original = (solutions / "a_boolean_index.txt").read_text(encoding="utf-8")
    _submission(copy, folder, "ana", original, "ana")
    _submission(copy, folder, "bo", benchmark.derive_copy(original, {"apply_masking"}, 3),
                "<script>alert(1)</script>")
    _submission(copy, folder, "cy", (solutions / "c_select.txt").read_text(encoding="utf-8"),
                "cy")
    nbformat.write(copy, folder / "untouched.ipynb")  # unsolved: never compared
    lines = []
    csv_path, html_path = similarity.similarity_report(
        folder, tmp_path / "grades", notebook="08", log=lines.append)
    assert csv_path == tmp_path / "grades" / "similarity" / f"{NOTEBOOK}.csv"
    with csv_path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["exercise"], r["student_a"], r["student_b"]) for r in rows] == [
        (EXERCISE, "<script>alert(1)</script>", "ana")]
    assert float(rows[0]["similarity"]) >= similarity.THRESHOLD
    page = html_path.read_text(encoding="utf-8")
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Content-Security-Policy" in page
    assert all("cy" not in (r["student_a"], r["student_b"]) for r in rows)
    assert "4 submissions, 3 pairs compared, 1 flagged" in lines[0]


def test_the_command_line_reports_a_missing_folder_or_notebook(tmp_path, capsys):
    from seqlab_instructor.homework import __main__ as cli

    assert cli.main(["similarity", str(tmp_path / "nowhere")]) == 2
    assert "No submissions folder" in capsys.readouterr().err
    assert cli.main(["similarity", str(tmp_path), "--notebook", "99"]) == 2
    assert "matches no notebook" in capsys.readouterr().err
