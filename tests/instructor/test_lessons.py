"""seqlab_instructor.lessons: the lesson modules are the notebooks' #@save cells, nothing else."""

import importlib
import json

import pytest

from seqlab_instructor import lessons


def test_every_lesson_module_equals_its_notebooks_saved_cells():
    stale = lessons.stale_modules()
    assert not stale, (f"{[p.name for p in stale]} differ from their notebooks' #@save cells: "
                       "run python -m seqlab_instructor.lessons")


@pytest.mark.parametrize("notebook", lessons.notebooks(), ids=lambda p: p.name[:2])
def test_lesson_module_imports_on_its_own(notebook):
    if lessons.module_text(notebook):
        importlib.import_module(f"seqlab.lessons.{lessons.module_path(notebook).stem}")


def _notebook(tmp_path, *sources):
    cells = [{"cell_type": "code", "source": s, "metadata": {}, "outputs": [],
              "execution_count": None} for s in sources]
    path = tmp_path / "99_test.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}))
    return path


def test_only_marked_cells_are_exported_in_order_without_the_mark(tmp_path):
    path = _notebook(tmp_path, "#@save\nimport math", "x = 1\nprint(x)",
                     "#@save\ndef area(r):\n    return math.pi * r * r")
    text = lessons.module_text(path)
    body = text.split('"""', 2)[2]  # after the generated header
    assert "#@save" not in body and "print(x)" not in body
    assert text.index("import math") < text.index("def area")
    namespace = {}
    exec(compile(text, "nb99", "exec"), namespace)
    assert namespace["area"](1.0) == pytest.approx(3.14159, abs=1e-5)


def test_a_saved_cell_that_runs_the_lesson_is_refused(tmp_path):
    path = _notebook(tmp_path, "#@save\nmodel = 1\nprint(model)")
    with pytest.raises(lessons.ExportError, match="only imports, definitions and constants"):
        lessons.module_text(path)


def test_a_notebook_without_saved_cells_has_no_module(tmp_path):
    assert lessons.module_text(_notebook(tmp_path, "print(1)")) == ""
