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


def test_methods_added_in_later_cells_are_folded_into_their_class(tmp_path):
    path = _notebook(
        tmp_path, "#@save\nfrom seqlab.lessons import add_to_class\n\n\nclass Model:\n"
        "    def __init__(self):\n        self.n = 2", "model = Model()",
        "#@save\n@add_to_class(Model)\ndef double(self, x):\n    return self.n * x",
        "#@save\ndef helper():\n    return Model().double(3)")
    namespace = {}
    for source in lessons.saved_cells(path):  # as the notebook runs: the decorator patches
        exec(source, namespace)
    assert namespace["helper"]() == 6
    text = lessons.module_text(path)
    assert "add_to_class" not in text  # neither the decorator nor its import
    module = {}
    exec(compile(text, "nb99", "exec"), module)
    assert "double" in vars(module["Model"]) and "double" not in module  # a method, in the class
    assert module["helper"]() == 6
    with pytest.raises(lessons.ExportError, match="before any #@save cell defines class Other"):
        lessons.module_text(_notebook(tmp_path, "#@save\n@add_to_class(Other)\ndef f(self):\n"
                                      "    return 1"))


@pytest.mark.parametrize("notebook", lessons.notebooks(), ids=lambda p: p.name[:2])
def test_no_lesson_module_patches_a_class_after_defining_it(notebook):
    import ast

    text = lessons.module_text(notebook)
    patches = [ast.unparse(node) for node in ast.parse(text).body
               if isinstance(node, ast.Assign)
               and any(isinstance(target, (ast.Attribute, ast.Tuple)) and any(
                   isinstance(part, ast.Attribute) for part in ast.walk(target))
                       for target in node.targets)]
    assert not patches, f"{lessons.module_path(notebook).name} patches a class: {patches}"


@pytest.mark.parametrize("notebook", lessons.notebooks(), ids=lambda p: p.name[:2])
def test_lesson_classes_show_init_and_call_not_serialization_code(notebook):
    import ast

    text = lessons.module_text(notebook)
    boilerplate = [f"{node.name}.{method.name}" for node in ast.parse(text).body
                   if isinstance(node, ast.ClassDef) for method in node.body
                   if isinstance(method, ast.FunctionDef)
                   and method.name in ("get_config", "from_config")]
    assert not boilerplate, (f"{boilerplate}: inherit seqlab.lessons.ConfigFromArguments "
                             "instead")
